"""Graded exercises for discrete_transformer (chapter exercises 1, 2 and 4). Format: assignments/README.md."""

TITLE = "Discrete Transformer: graded exercises"

SETUP = """
import icml26.numerics; icml26.numerics.pin_cpu_numerics()
from dataclasses import replace
import torch
from scipy.stats import binomtest
from icml26.discrete_transformer import get_config, experiment, model, train as training

# The graded variant: the `smoke` preset with 300 training steps and 4,000 training sequences, task T1,
# data and training seed 5 (the chapter prints seeds 0-2 at `reduced`; the answers below are printed nowhere).
cfg = get_config("smoke", steps=300, n_train=4000)
SEED = 5
train, test = experiment.make_data(cfg, "t1_sum", SEED)
print(f"{len(train)} training and {len(test)} test sequences of T1; {int(test.mask.sum())} test rows")
"""

QUESTIONS = [
    dict(name="binomial_bar", exercise=1, points=1,
         prompt="""
**Exercise 1 (easy).** A head passes the hypothesis test when its best routing pattern agrees on at least
99.5% of $n$ held-out rows *and* a one-sided binomial test rejects "agreement $\\le 95\\%$" at $p<0.01$.
Write `min_passing_agreement(n)`: the smallest agreement share $k/n$ for which
`binomtest(k, n, 0.95, alternative="greater").pvalue < 0.01` (the 99.5% bar left out).

*Deliverable:* the function `min_passing_agreement(n)` (returns a float), and `bar_10000 =
min_passing_agreement(10_000)` (the T2 test rows of the `reduced` preset: 1,000 sequences of 10 rows).
""",
         solution="""
# BEGIN SOLUTION
def min_passing_agreement(n):
    lo, hi = int(0.95 * n), n  # the p-value falls as k grows: bisect for the smallest k that passes
    while lo < hi:
        mid = (lo + hi) // 2
        if binomtest(mid, n, 0.95, alternative="greater").pvalue < 0.01:
            hi = mid
        else:
            lo = mid + 1
    return lo / n

bar_10000 = min_passing_agreement(10_000)
# END SOLUTION
""",
         public=["assert callable(min_passing_agreement) and isinstance(bar_10000, float)",
                 "assert isinstance(bar_10000, float) and 0.95 < bar_10000 < 0.995, 'the test alone passes rows well below the 99.5% bar'"],
         hidden=["assert isinstance(bar_10000, float) and abs(bar_10000 - 0.9551) < 1e-12",
                 "assert callable(min_passing_agreement) and abs(min_passing_agreement(1536) - 1479 / 1536) < 1e-12",
                 "assert callable(min_passing_agreement) and abs(min_passing_agreement(200) - 197 / 200) < 1e-12"],
         wrong="def min_passing_agreement(n):\n    return 0.95 + 2.33 * (0.95 * 0.05 / n) ** 0.5\n\nbar_10000 = min_passing_agreement(10_000)"),
    dict(name="tau_end", exercise=2, points=2,
         prompt="""
**Exercise 2 (medium, experimental).** How cold must the end of the annealing schedule be for the program
to be exact? Train the annealed model with three end temperatures, `replace(cfg, tau_end=t)` for
$t = 0.01, 0.1, 1.0$, each with `experiment.run_variant(replace(cfg, tau_end=t), train, test, True, SEED)`,
which trains, extracts the program and scores both on `test`.

*Deliverable:* `program_exact` and `network_exact`, dicts `{0.01: float, 0.1: float, 1.0: float}` (the
`"exact"` entry of the variant's `.extracted` and `.network`), and `heads_accepted`, a dict of ints
(`.program.n_heads_accepted`). Graded variant: the setup's `smoke` preset with 300 steps, T1, seed 5.
""",
         solution="""
# BEGIN SOLUTION
variants = {t: experiment.run_variant(replace(cfg, tau_end=t), train, test, True, SEED) for t in (0.01, 0.1, 1.0)}
program_exact = {t: float(v.extracted["exact"]) for t, v in variants.items()}
network_exact = {t: float(v.network["exact"]) for t, v in variants.items()}
heads_accepted = {t: int(v.program.n_heads_accepted) for t, v in variants.items()}
# END SOLUTION
""",
         public=["assert isinstance(program_exact, dict) and set(program_exact) == {0.01, 0.1, 1.0}",
                 "assert isinstance(network_exact, dict) and set(network_exact) == {0.01, 0.1, 1.0}",
                 "assert isinstance(heads_accepted, dict) and all(isinstance(v, int) for v in heads_accepted.values())"],
         hidden=["assert isinstance(program_exact, dict) and all(abs(program_exact[t] - v) < 0.005 for t, v in {0.01: 0.8079, 0.1: 1.0, 1.0: 0.4622}.items())",
                 "assert isinstance(network_exact, dict) and all(abs(network_exact[t] - v) < 0.005 for t, v in {0.01: 0.7773, 0.1: 1.0, 1.0: 1.0}.items())",
                 "assert isinstance(heads_accepted, dict) and heads_accepted == {0.01: 3, 0.1: 4, 1.0: 1}"],
         wrong="program_exact = {0.01: 1.0, 0.1: 0.9, 1.0: 0.5}\nnetwork_exact = {0.01: 1.0, 0.1: 1.0, 1.0: 1.0}\nheads_accepted = {0.01: 4, 0.1: 4, 1.0: 0}"),
    dict(name="offset_log", exercise=4, points=3,
         prompt="""
**Exercise 4 (hard, coding).** Write `train_logged(config, data, seed, every)`: the training loop of
`training.train_discrete_transformer` (annealed, the default options: copy it from the chapter) that, at
every step `s` with `s % every == 0`, appends `(s, tau, offsets)` to a log, where `offsets` lists, for
each layer-1 head, the offset it prefers, `int(head.theta_pos.argmax())`. It returns `(model, log)`, and
its model must equal the library's (same seed, same batches, same noise).

*Deliverable:* `train_logged`, and `switch_steps`: for each of the two layer-1 heads, the first logged
step at which it prefers offset 1 (the previous token), from `train_logged(cfg, train, SEED, 10)`
(graded variant: the setup's `smoke` preset with 300 steps, T1, seed 5).
""",
         solution="""
# BEGIN SOLUTION
def train_logged(config, data, seed, every=25):
    torch.manual_seed(seed)
    net = model.DiscreteTransformer(data.x.shape[1], config.n_layers, config.n_heads, config.mlp_vars_in,
                                    config.mlp_hidden)
    struct = [p for n, p in net.named_parameters() if "logits" in n or "theta" in n]
    rest = [p for n, p in net.named_parameters() if not ("logits" in n or "theta" in n)]
    opt = torch.optim.Adam([{"params": struct, "lr": config.lr_struct}, {"params": rest, "lr": config.lr}])
    gen = torch.Generator().manual_seed(seed + 1)
    log = []
    for step in range(config.steps):
        tau = model.temperature(step, config.steps, config.tau_start, config.tau_end)
        batch = data.batch(torch.randint(0, len(data), (config.batch_size,), generator=gen))
        loss = training.masked_loss(net(batch.x, tau, hard=False, generator=gen), batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % every == 0:
            log.append((step, tau, [int(h.theta_pos.argmax()) for h in net.heads[0]]))
    return net.eval(), log

net, log = train_logged(cfg, train, SEED, 10)
switch_steps = [next(s for s, _, offs in log if offs[h] == 1) for h in range(2)]
# END SOLUTION
""",
         public=["assert callable(train_logged) and isinstance(switch_steps, list) and len(switch_steps) == 2",
                 "assert isinstance(switch_steps, list) and all(isinstance(s, int) and s % 10 == 0 for s in switch_steps), 'logged steps are multiples of 10'"],
         hidden=["""
assert callable(train_logged)
_small = replace(cfg, steps=40)
_net, _log = train_logged(_small, train, 3, 10)
_ref = training.train_discrete_transformer(_small, train, True, 3).model
assert all(torch.equal(a, b) for a, b in zip(_net.state_dict().values(), _ref.state_dict().values())), 'not the library model'
assert [s for s, _, _ in _log] == [0, 10, 20, 30] and all(len(o) == 2 for _, _, o in _log)
""",
                 "assert isinstance(switch_steps, list) and switch_steps == [50, 30]"],
         wrong="""
def train_logged(config, data, seed, every=25):
    return training.train_discrete_transformer(config, data, True, seed).model, []

switch_steps = [0, 0]
"""),
]
