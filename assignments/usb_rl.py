"""Graded exercises for usb_rl (chapter exercises 1, 3 and 4). Format: assignments/README.md."""

TITLE = "USB-RL: graded exercises"

SETUP = """
import icml26.numerics; icml26.numerics.pin_cpu_numerics()
import numpy as np
import torch
import torch.nn.functional as F
from icml26.usb_rl import MonotoneScore, get_config, rank_targets, run_experiment
from icml26.usb_rl.claims import monotonicity_violations

# The graded variant: score seed 3 on outcome batch 103 (the chapter uses 0 and 100), an eight-outcome batch
# with budget d = 2 (the chapter uses the page's four outcomes with d = 1), and the `smoke` preset with one seed,
# seed 7 (the chapter runs seed 0 at `reduced`). The answers below are printed nowhere.
SCORE_SEED, BATCH_SEED = 3, 103
g = torch.Generator().manual_seed(BATCH_SEED)
batch_r = -13 + 9 * torch.rand(256, generator=g)  # returns in [-13, -4]
batch_c = 16 * torch.rand(256, generator=g) ** 2  # costs in [0, 16], most of them small
SEED = 7
cfg = get_config("smoke", n_seeds=1)
"""

QUESTIONS = [
    dict(name="silu_score", exercise=1, points=2,
         prompt="""
**Exercise 1 (easy).** Write `SiLUScore`, a subclass of `MonotoneScore` whose `forward` is the book's with both
`torch.tanh` replaced by `F.silu`. Build the book's score and yours from the same parameters,
`MonotoneScore(16, torch.Generator().manual_seed(SCORE_SEED))` and
`SiLUScore(16, torch.Generator().manual_seed(SCORE_SEED))`, call `set_normaliser(batch_r, batch_c)` on each,
and count their order violations with `monotonicity_violations(score, batch_r, batch_c)`.

*Deliverable:* `silu_argmin` (float: the input at which SiLU is smallest, to two decimals), `violations_tanh`
and `violations_silu` (ints: `"grid"` plus `"pairs"` of each score's counts). Score seed 3, batch seed 103.
""",
         solution="""
# BEGIN SOLUTION
class SiLUScore(MonotoneScore):
    def forward(self, g_r, g_c):
        x = (torch.stack([g_r, g_c], -1) - self.mu) / self.sigma
        h = F.silu(x @ self.first_layer_weight() + self.b1)
        h = F.silu(h @ F.softplus(self.v2) + self.b2)
        return (h @ F.softplus(self.v3) + self.b3)[..., 0]

def violations(cls):
    s = cls(16, torch.Generator().manual_seed(SCORE_SEED))
    s.set_normaliser(batch_r, batch_c)
    v = monotonicity_violations(s, batch_r, batch_c)
    return int(v["grid"] + v["pairs"])

x = torch.linspace(-4.0, 0.0, 40001, dtype=torch.float64)
silu_argmin = float(x[F.silu(x).argmin()])
violations_tanh, violations_silu = violations(MonotoneScore), violations(SiLUScore)
# END SOLUTION
""",
         public=["assert isinstance(silu_argmin, float) and isinstance(violations_tanh, int) and isinstance(violations_silu, int)",
                 "assert isinstance(silu_argmin, float) and -2.0 < silu_argmin < -1.0, 'SiLU has one minimum, between -2 and -1'",
                 "assert isinstance(violations_tanh, int) and violations_tanh == 0, 'the book score is monotone for any parameters'"],
         hidden=["assert isinstance(silu_argmin, float) and abs(silu_argmin + 1.2785) < 0.01",
                 "assert isinstance(violations_silu, int) and abs(violations_silu - 1267) <= 25"],
         wrong="silu_argmin = 0.0\nviolations_tanh = 0\nviolations_silu = 0"),
    dict(name="budget_order", exercise=3, points=2,
         prompt="""
**Exercise 3 (medium).** Write `budget_rank_targets(g_r, g_c, d, tol=0.0)`: the rank targets of
`rank_targets` after every cost is replaced by $\\max(G^c-d, 0)$, so that all outcomes within the budget $d$
tie on safety. Apply it to the batch below with $d=2$.

```python
g_r = torch.tensor([-4.5, -4.9, -5.2, -5.9, -6.5, -9.0, -4.7, -5.5])
g_c = torch.tensor([7.0, 3.0, 1.0, 0.0, 0.5, 3.0, 5.0, 2.0])
```

*Deliverable:* the function; `y_budget` (a list of 8 floats: its targets on this batch, `d = 2`); and
`best_within_budget` (int: the index of the outcome with the largest target).
""",
         solution="""
g_r = torch.tensor([-4.5, -4.9, -5.2, -5.9, -6.5, -9.0, -4.7, -5.5])
g_c = torch.tensor([7.0, 3.0, 1.0, 0.0, 0.5, 3.0, 5.0, 2.0])
# BEGIN SOLUTION
def budget_rank_targets(g_r, g_c, d, tol=0.0):
    return rank_targets(g_r, (g_c - d).clamp_min(0.0), tol)

y_budget = [float(v) for v in budget_rank_targets(g_r, g_c, 2.0)]
best_within_budget = int(np.argmax(y_budget))
# END SOLUTION
""",
         public=["assert callable(budget_rank_targets) and isinstance(y_budget, list) and len(y_budget) == 8",
                 "assert isinstance(y_budget, list) and abs(sum(y_budget)) < 1e-6, 'every win of one outcome is a loss of another'",
                 "assert isinstance(best_within_budget, int) and 0 <= best_within_budget < 8",
                 "assert callable(budget_rank_targets) and torch.allclose(budget_rank_targets(g_r, g_c, 100.0), "
                 "rank_targets(g_r, torch.zeros(8))), 'with a huge budget every outcome ties on safety'"],
         hidden=["assert isinstance(y_budget, list) and np.allclose(y_budget, [0, 0.125, 0.5, 0, -0.25, -0.625, 0, 0.25])",
                 "assert best_within_budget == 2",
                 "assert callable(budget_rank_targets) and torch.allclose(budget_rank_targets(torch.tensor([-5.0, -6.0, -7.0]), "
                 "torch.tensor([4.0, 0.5, 3.0]), 1.0), torch.tensor([0.0, 1 / 3, -1 / 3]))"],
         wrong="def budget_rank_targets(g_r, g_c, d, tol=0.0):\n    return rank_targets(g_r, g_c, tol)\n"
               "y_budget = [float(v) for v in budget_rank_targets(g_r, g_c, 2.0)]\nbest_within_budget = 2"),
    dict(name="real_fraction", exercise=4, points=2,
         prompt="""
**Exercise 4 (hard, experimental).** Run the experiment at seed 7 with the score fit on imagined outcomes only
(`score_real_frac=0.0`) and on mostly real ones (`score_real_frac=0.9`):
`res = run_experiment(replace(cfg, score_real_frac=f), seed=SEED, device="cpu")` (import `replace` from
`dataclasses`). USB-RL is the last agent: `res["returns"][0, -1]`, `res["costs"][0, -1]`; its exchange rate at
each refit is `res["per_seed"][0]["lambda_eff"]`.

*Deliverable:* for `f = 0.0` and `f = 0.9`, `usb_return` and `usb_cost` (dicts `{0.0: ..., 0.9: ...}` of
floats) and `median_lambda` (the same for the median of `lambda_eff`). Seed 7, `smoke` with one seed.
""",
         solution="""
from dataclasses import replace
# BEGIN SOLUTION
usb_return, usb_cost, median_lambda = {}, {}, {}
for f in (0.0, 0.9):
    res = run_experiment(replace(cfg, score_real_frac=f), seed=SEED, device="cpu")
    usb_return[f] = float(res["returns"][0, -1])
    usb_cost[f] = float(res["costs"][0, -1])
    median_lambda[f] = float(np.median(res["per_seed"][0]["lambda_eff"]))
# END SOLUTION
""",
         public=["assert all(isinstance(x, dict) and set(x) == {0.0, 0.9} for x in (usb_return, usb_cost, median_lambda))",
                 "assert isinstance(usb_cost, dict) and all(0.0 <= usb_cost[f] <= 20 for f in usb_cost), "
                 "'at most one hazard step per step of a 20-step episode'",
                 "assert isinstance(median_lambda, dict) and all(v > 0 for v in median_lambda.values())"],
         hidden=["assert isinstance(usb_return, dict) and abs(usb_return[0.0] + 16.618) < 0.05 and abs(usb_cost[0.0] - 0.25) < 0.05",
                 "assert isinstance(usb_return, dict) and abs(usb_return[0.9] + 12.557) < 0.05 and abs(usb_cost[0.9] - 5.625) < 0.05",
                 "assert isinstance(median_lambda, dict) and abs(median_lambda[0.0] - 1.289) < 0.02 "
                 "and abs(median_lambda[0.9] - 1.094) < 0.02"],
         wrong="usb_return = {0.0: -6.0, 0.9: -6.0}\nusb_cost = {0.0: 1.0, 0.9: 1.0}\nmedian_lambda = {0.0: 1.0, 0.9: 1.0}"),
]
