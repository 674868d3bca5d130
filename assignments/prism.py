"""Graded exercises for prism (chapter exercises 1, 3, 4 and 5). Format: assignments/README.md."""

TITLE = "PRISM, language as a wave phenomenon: graded exercises"

SETUP = """
import icml26.numerics; icml26.numerics.pin_cpu_numerics()
import torch
from icml26.prism import experiment, get_config, models
from icml26.prism.interventions import Intervention

# The graded variant: the task of seed 5 (the chapter prints seeds 0 to 2), every model trained for
# 100 steps without the stopping rule (train seed 6); exercise 4 uses half-width models (d = 16).
# The answers below are printed nowhere in the book.
cfg = get_config("reduced", steps=100)
task = experiment.build_task(cfg, 5)
V = task.vocab_size
"""

QUESTIONS = [
    dict(name="phase_deeper", exercise=1, points=2,
         prompt="""
**Exercise 1 (easy, experimental).** Build the chapter's models for seed 5 (`torch.manual_seed(5)`, then
`models.build_models(cfg, V)`), train `"prism_rms"` with `experiment.train_model(m, task, cfg, seed=6)`
and measure `experiment.masked_accuracy` clean and under $\\sigma=1$ phase noise after layer 1 and after
layer 2 (`Intervention("phase_noise", 1.0, (k,))`).

*Deliverable:* `acc_clean`, `acc_site1`, `acc_site2` (floats) and `collapses` (bool: are both noisy
accuracies below `task.chance`, the majority-token level?).
""",
         solution="""
torch.manual_seed(5)
m = models.build_models(cfg, V)["prism_rms"]
experiment.train_model(m, task, cfg, seed=6)
# BEGIN SOLUTION
acc_clean = experiment.masked_accuracy(m, task)
acc_site1 = experiment.masked_accuracy(m, task, Intervention("phase_noise", 1.0, (1,)))
acc_site2 = experiment.masked_accuracy(m, task, Intervention("phase_noise", 1.0, (2,)))
collapses = bool(acc_site1 < task.chance and acc_site2 < task.chance)
# END SOLUTION
""",
         public=["assert all(isinstance(x, float) and 0.0 <= x <= 1.0 for x in (acc_clean, acc_site1, acc_site2))",
                 "assert isinstance(acc_clean, float) and acc_clean > task.chance, 'the trained model beats the majority token'",
                 "assert isinstance(collapses, bool)"],
         hidden=["assert isinstance(acc_clean, float) and abs(acc_clean - 0.4849) < 0.005",
                 "assert isinstance(acc_site1, float) and abs(acc_site1 - 0.0781) < 0.005 and abs(acc_site2 - 0.0797) < 0.005",
                 "assert collapses is True"],
         wrong="acc_clean, acc_site1, acc_site2 = 0.48, 0.40, 0.45\ncollapses = False"),
    dict(name="explicit_filter", exercise=3, points=2,
         prompt="""
**Exercise 3 (medium).** Train PRISM-pure under $|z|=1$ with the explicit filter:
`torch.manual_seed(5)`, `m = models.PrismLM(V, 32, 2, norm="unit", filter_kind="explicit", max_len=64)`,
`experiment.train_model(m, task, cfg, seed=6)`.

*Deliverable:* `acc_explicit` (float: clean masked accuracy) and `acc_explicit_noisy` (float: under
$\\sigma=1$ phase noise at the embedding output, `Intervention("phase_noise", 1.0)`).
""",
         solution="""
torch.manual_seed(5)
m = models.PrismLM(V, 32, 2, norm="unit", filter_kind="explicit", max_len=64)
experiment.train_model(m, task, cfg, seed=6)
# BEGIN SOLUTION
acc_explicit = experiment.masked_accuracy(m, task)
acc_explicit_noisy = experiment.masked_accuracy(m, task, Intervention("phase_noise", 1.0))
# END SOLUTION
""",
         public=["assert isinstance(acc_explicit, float) and isinstance(acc_explicit_noisy, float)",
                 "assert isinstance(acc_explicit, float) and acc_explicit > acc_explicit_noisy, 'phase noise costs accuracy'"],
         hidden=["assert isinstance(acc_explicit, float) and abs(acc_explicit - 0.4145) < 0.005",
                 "assert isinstance(acc_explicit_noisy, float) and abs(acc_explicit_noisy - 0.0786) < 0.005"],
         wrong="acc_explicit, acc_explicit_noisy = 0.45, 0.40"),
    dict(name="budget", exercise=4, points=3,
         prompt="""
**Exercise 4 (medium, experimental).** With half-width models (`small` below) on the same task, rebuild
the models for each budget $k\\in\\{50, 150\\}$ as `experiment.run_chapter` does:
`ck = get_config("reduced", steps=k, **small)`, `val = experiment.validation_set(task, ck, 5)`,
`torch.manual_seed(5)`, `ms = models.build_models(ck, V)`; then train `ms["hybrid"]` and
`ms["transformer"]` with `experiment.train_model(ms[name], task, ck, seed=6, val=val)` (the stopping rule).

*Deliverable:* `acc` (a dict keyed by `(k, name)`, e.g. `(50, "hybrid")`, with the test accuracy
`experiment.masked_accuracy` as a float) and `converged` (a dict with the same keys and the bools
`log["converged"]`).
""",
         solution="""
small = dict(d_model=16, n_heads=2, attn_ffn=32, filter_hidden=16, filter_freqs=4)
# BEGIN SOLUTION
acc, converged = {}, {}
for k in (50, 150):
    ck = get_config("reduced", steps=k, **small)
    val = experiment.validation_set(task, ck, 5)
    torch.manual_seed(5)
    ms = models.build_models(ck, V)
    for name in ("hybrid", "transformer"):
        log = experiment.train_model(ms[name], task, ck, seed=6, val=val)
        acc[(k, name)] = experiment.masked_accuracy(ms[name], task)
        converged[(k, name)] = bool(log["converged"])
# END SOLUTION
""",
         public=["assert isinstance(acc, dict) and set(acc) == {(k, n) for k in (50, 150) for n in ('hybrid', 'transformer')}",
                 "assert isinstance(acc, dict) and all(isinstance(v, float) and 0.0 <= v <= 1.0 for v in acc.values())",
                 "assert isinstance(converged, dict) and set(converged) == set(acc) and all(isinstance(v, bool) for v in converged.values())"],
         hidden=["assert isinstance(acc, dict) and abs(acc[(50, 'hybrid')] - 0.2353) < 0.005 and abs(acc[(50, 'transformer')] - 0.2237) < 0.005",
                 "assert isinstance(acc, dict) and abs(acc[(150, 'hybrid')] - 0.3315) < 0.005 and abs(acc[(150, 'transformer')] - 0.2743) < 0.005",
                 "assert isinstance(converged, dict) and not any(converged.values())"],
         wrong=("acc = {(k, n): 0.3 for k in (50, 150) for n in ('hybrid', 'transformer')}\n"
                "converged = {key: True for key in acc}")),
    dict(name="layer_norm", exercise=5, points=3,
         prompt="""
**Exercise 5 (hard).** Train PRISM-pure with the translation code's `PhasePreservingLayerNorm`:
`torch.manual_seed(5)`, `m = models.PrismLM(V, cfg.d_model, cfg.n_prism_layers, norm="layer",
filter_hidden=cfg.filter_hidden, filter_freqs=cfg.filter_freqs)`, `experiment.train_model(m, task, cfg, seed=6)`.

*Deliverable:* `ln_clean`, `ln_flat` (under `Intervention("flatten")`), `ln_attenuated` (under
`Intervention("attenuate", 0.1)`), all floats, and `kept_flat` (float: `ln_flat / ln_clean`).
""",
         solution="""
torch.manual_seed(5)
m = models.PrismLM(V, cfg.d_model, cfg.n_prism_layers, norm="layer", filter_hidden=cfg.filter_hidden,
                   filter_freqs=cfg.filter_freqs)
experiment.train_model(m, task, cfg, seed=6)
# BEGIN SOLUTION
ln_clean = experiment.masked_accuracy(m, task)
ln_flat = experiment.masked_accuracy(m, task, Intervention("flatten"))
ln_attenuated = experiment.masked_accuracy(m, task, Intervention("attenuate", 0.1))
kept_flat = ln_flat / ln_clean
# END SOLUTION
""",
         public=["assert all(isinstance(x, float) and 0.0 <= x <= 1.0 for x in (ln_clean, ln_flat, ln_attenuated))",
                 "assert isinstance(kept_flat, float) and abs(kept_flat - ln_flat / ln_clean) < 1e-9"],
         hidden=["assert isinstance(ln_clean, float) and abs(ln_clean - 0.3513) < 0.005 and abs(ln_attenuated - 0.3381) < 0.005",
                 "assert isinstance(ln_flat, float) and abs(ln_flat - 0.1369) < 0.005 and abs(kept_flat - 0.3897) < 0.015"],
         wrong="ln_clean, ln_flat, ln_attenuated = 0.35, 0.33, 0.34\nkept_flat = ln_flat / ln_clean"),
]
