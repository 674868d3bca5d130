"""Graded exercises for tam (chapter exercises 2-4). Format: assignments/README.md."""

TITLE = "TAM: graded exercises"

SETUP = """
import icml26.numerics; icml26.numerics.pin_cpu_numerics()
from collections import Counter, defaultdict
import torch
from icml26.evidence import chapter_record
from icml26.tam import TEMPLATES, build_vocab, converged_now, frame_indices, get_config, tokenize, train_inductor

# The graded variant: other budgets than the chapter's tiers (exercise 2), another convergence rule
# than the chapter's and its exercise's (exercise 3), and Inductor seed 9 (the chapter prints seeds 0-2).
cfg = get_config("reduced")
SEED = 9
record = chapter_record("tam")["results"]  # the evidence record: three seeds, each tower's validation curve
vocab = build_vocab()
HELD_OUT = [t for task in ("counting", "temporal") for t in TEMPLATES[task][4:]]  # 2 counting, then 2 temporal
"""

QUESTIONS = [
    dict(name="temporal_ceiling", exercise=2, points=2,
         prompt="""
**Exercise 2 (medium, derivation).** A flash of `flash_len` frames starts at $t_0$, uniform over
$0,\\dots,48-\\texttt{flash\\_len}$, and the answer is the quarter
`min((t0 + flash_len // 2) * 4 // 48, 3)`. A pipeline that samples `frame_indices(48, n_f)` sees, at
best, which of its frames are lit. The best it can do is answer, for each thing it can see, the
quarter that is most frequent among the offsets $t_0$ that produce it. Write
`temporal_ceiling(n_f, n_frames=48, flash_len=3)`, the accuracy of that best reader (a float).

*Deliverable:* `temporal_ceiling`, `ceiling_6 = temporal_ceiling(6)` and
`ceiling_8_len5 = temporal_ceiling(8, flash_len=5)`. Graded variant: 6 frames, and 8 frames with a
5-frame flash.
""",
         solution="""
# BEGIN SOLUTION
def temporal_ceiling(n_f, n_frames=48, flash_len=3):
    idx = frame_indices(n_frames, n_f).tolist()
    seen = defaultdict(Counter)  # what the sampled frames show -> quarters of the offsets behind it
    offsets = range(n_frames - flash_len + 1)
    for t0 in offsets:
        quarter = min((t0 + flash_len // 2) * 4 // n_frames, 3)
        lit = tuple(i for i in idx if t0 <= i < t0 + flash_len)
        seen[lit][quarter] += 1
    return sum(max(c.values()) for c in seen.values()) / len(offsets)


ceiling_6 = temporal_ceiling(6)
ceiling_8_len5 = temporal_ceiling(8, flash_len=5)
# END SOLUTION
""",
         public=["assert isinstance(ceiling_6, float) and isinstance(ceiling_8_len5, float)",
                 "assert callable(temporal_ceiling) and temporal_ceiling(16) == 1.0, "
                 "'16 frames (stride 3) always catch a 3-frame flash'",
                 "assert isinstance(ceiling_6, float) and 0.25 <= ceiling_6 <= 1"],
         hidden=["assert isinstance(ceiling_6, float) and abs(ceiling_6 - 24 / 46) < 1e-9",
                 "assert isinstance(ceiling_8_len5, float) and abs(ceiling_8_len5 - 39 / 44) < 1e-9",
                 "assert callable(temporal_ceiling)\n"
                 "assert abs(temporal_ceiling(4) - 21 / 46) < 1e-9 and abs(temporal_ceiling(16, flash_len=5) - 41 / 44) < 1e-9"],
         wrong="""
def temporal_ceiling(n_f, n_frames=48, flash_len=3):
    caught = min(1.0, flash_len * n_f / n_frames)
    return caught + (1 - caught) / 4

ceiling_6 = temporal_ceiling(6)
ceiling_8_len5 = temporal_ceiling(8, flash_len=5)
"""),
    dict(name="stricter_rule", exercise=3, points=2,
         prompt="""
**Exercise 3 (medium, coding).** Write `stop_step(val_steps, val_acc, patience, min_delta)`: the step
of the first evaluation after which `converged_now(val_acc[:j + 1], patience, min_delta)` holds, or
`None` if the rule never fires on the recorded curve. Apply it to every tower of every seed of the
evidence record (`record["per_seed"][k]["training"][tower]`, with `val_steps` and `val_acc`) under
a stricter rule, patience 3 and `min_delta` 0.02.

*Deliverable:* `stop_step`, `stops` (a dict `{seed: {tower: step or None}}` over `record["seeds"]`)
and `n_converged` (int: how many of the 12 curves the stricter rule stops). Graded variant: patience
3, `min_delta` 0.02.
""",
         solution="""
# BEGIN SOLUTION
def stop_step(val_steps, val_acc, patience, min_delta):
    for j in range(len(val_acc)):
        if converged_now(list(val_acc[: j + 1]), patience, min_delta):
            return val_steps[j]
    return None


stops = {seed: {name: stop_step(t["val_steps"], t["val_acc"], 3, 0.02) for name, t in run["training"].items()}
         for seed, run in zip(record["seeds"], record["per_seed"])}
n_converged = sum(step is not None for per in stops.values() for step in per.values())
# END SOLUTION
""",
         public=["assert isinstance(stops, dict) and sorted(stops) == sorted(record['seeds'])",
                 "assert isinstance(n_converged, int) and 0 <= n_converged <= 12",
                 "assert callable(stop_step)\n"
                 "for run in record['per_seed']:\n"
                 "    for t in run['training'].values():\n"
                 "        if t['converged']:\n"
                 "            assert stop_step(t['val_steps'], t['val_acc'], 4, 0.01) == t['stopped_at'], "
                 "'the rule of the chapter must reproduce the recorded stops'"],
         hidden=["assert isinstance(stops, dict)\n"
                 "key = {0: {'TAM': 350, 'fixed': 350, 'fixed-H': 400, 'fixed-L': 400},\n"
                 "       1: {'TAM': 450, 'fixed': 350, 'fixed-H': 400, 'fixed-L': 400},\n"
                 "       2: {'TAM': 450, 'fixed': 400, 'fixed-H': 300, 'fixed-L': 300}}\n"
                 "assert stops == key",
                 "assert isinstance(n_converged, int) and n_converged == 12"],
         wrong="""
def stop_step(val_steps, val_acc, patience, min_delta):
    return val_steps[-1]

stops = {s: {n: 600 for n in ('TAM', 'fixed', 'fixed-H', 'fixed-L')} for s in record['seeds']}
n_converged = 7
"""),
    dict(name="inductor_seed", exercise=4, points=2,
         prompt="""
**Exercise 4 (hard, experimental).** Train the Inductor at seed `SEED`,
`ind, acc = train_inductor(cfg, vocab, "cpu", SEED)`, and ask it about the four held-out templates
`HELD_OUT` (two counting, then two temporal) without filler words:
`torch.softmax(ind(tokenize(HELD_OUT, vocab)[0]), -1)[:, 0]` is each template's probability of
"counting".

*Deliverable:* `heldout_acc` (float: `acc`), `to_counting` (a list of 4 bools: is each held-out
template routed to counting?) and `passes_c1` (bool: does this seed reach C1's bar of 0.95?). Graded
variant: seed 9, `reduced` preset.
""",
         solution="""
# BEGIN SOLUTION
ind, acc = train_inductor(cfg, vocab, "cpu", SEED)
with torch.no_grad():
    p_counting = torch.softmax(ind(tokenize(HELD_OUT, vocab)[0]), -1)[:, 0]
heldout_acc = float(acc)
to_counting = [bool(p > 0.5) for p in p_counting]
passes_c1 = bool(heldout_acc >= 0.95)
# END SOLUTION
""",
         public=["assert isinstance(heldout_acc, float) and 0 <= heldout_acc <= 1",
                 "assert isinstance(to_counting, list) and len(to_counting) == 4 and all(isinstance(b, bool) for b in to_counting)",
                 "assert isinstance(passes_c1, bool)"],
         hidden=["assert isinstance(heldout_acc, float) and abs(heldout_acc - 0.9075) < 0.01",
                 "assert isinstance(to_counting, list) and to_counting == [True, True, True, False]",
                 "assert passes_c1 is False"],
         wrong="""
heldout_acc = 1.0
to_counting = [True, True, False, False]
passes_c1 = True
"""),
]
