"""Graded exercises for conformal_mip_stop (chapter exercises 1, 3, 4 and 5). Format: assignments/README.md."""

TITLE = "Conformal early stopping of MIP solves: graded exercises"

SETUP = """
import icml26.numerics; icml26.numerics.pin_cpu_numerics()
import numpy as np
import torch
from icml26.conformal_mip_stop import (TrajectoryBatch, conformal_scores, conformal_threshold, evaluate_stops,
                                       first_index, get_config, record_family, resplit_evaluation, run_family,
                                       stop_on_prediction)
from icml26.conformal_mip_stop.experiment import instance_seed

# The graded variant: smaller CFLP instances (25 customers x 12 facilities), run seed 5 (its own instances and
# its own, smaller predictor: 8 units, 60 epochs), a pool of 40 held-out instances with 20 for calibration and
# 100 re-splits; for exercise 5, small Barabasi-Albert MIS graphs. The chapter prints seed 0 at `reduced`.
SEED = 5
cfg = get_config("reduced", families=("cflp",), cflp_customers=25, cflp_facilities=12, n_train=20, n_heldout=40,
                 n_cal=20, hidden=8, epochs=60, n_live=0, workers=1)
r = run_family("cflp", cfg, torch.device("cpu"), SEED)  # r.heldout (40 solves), r.pred (B, T), r.eps = 7
RESPLITS = 100
"""

QUESTIONS = [
    dict(name="certified_level", exercise=1, points=1,
         prompt="""
**Exercise 1 (easy).** With $n=45$ calibration instances, give $k=\\lfloor\\alpha(n+1)\\rfloor$ and the certified
error rate $k/(n+1)$ for $\\alpha\\in\\{0.02, 0.05, 0.1, 0.3\\}$, and write `min_calibration(alpha)`: the smallest
number of calibration instances for which `conformal_threshold` returns a finite threshold.

*Deliverable:* `k_values` (dict from each $\\alpha$ to an int), `certified` (dict from each $\\alpha$ to a float)
and `min_calibration(alpha: float) -> int`.
""",
         solution="""
# BEGIN SOLUTION
n = 45
alphas = (0.02, 0.05, 0.1, 0.3)
k_values = {a: int(np.floor(a * (n + 1))) for a in alphas}
certified = {a: k_values[a] / (n + 1) for a in alphas}

def min_calibration(alpha):
    m = 1
    while not np.isfinite(conformal_threshold(np.zeros(m), alpha)):
        m += 1
    return m
# END SOLUTION
""",
         public=["assert isinstance(k_values, dict) and set(k_values) == {0.02, 0.05, 0.1, 0.3}",
                 "assert isinstance(certified, dict) and all(0.0 <= certified[a] <= a for a in (0.02, 0.05, 0.1, 0.3)), "
                 "'the certified rate never exceeds alpha'",
                 "assert callable(min_calibration) and min_calibration(0.5) == 1"],
         hidden=["assert isinstance(k_values, dict) and [int(k_values[a]) for a in (0.02, 0.05, 0.1, 0.3)] == [0, 2, 4, 13]",
                 "assert isinstance(certified, dict) and all(abs(certified[a] - v) < 1e-6 for a, v in "
                 "{0.02: 0.0, 0.05: 2 / 46, 0.1: 4 / 46, 0.3: 13 / 46}.items())",
                 "assert callable(min_calibration) and [min_calibration(a) for a in (0.03, 0.05, 0.07, 0.15, 0.25)] "
                 "== [33, 19, 14, 6, 3]"],
         wrong=("k_values = {0.02: 0, 0.05: 2, 0.1: 4, 0.3: 13}\n"
                "certified = {0.02: 0.02, 0.05: 0.05, 0.1: 0.1, 0.3: 0.3}\n"
                "min_calibration = lambda alpha: int(np.ceil(1 / alpha))")),
    dict(name="midpoint", exercise=3, points=2,
         prompt="""
**Exercise 3 (medium).** The untrained network predicts the midpoint $(U-L)/2$ of its feasible range. Calibrate
the conformal rule on that predictor over `RESPLITS` re-splits of the graded pool `r.heldout`, with
`resplit_evaluation(..., cfg.alpha, cfg.n_cal, RESPLITS, cfg.kth_incumbent, np.random.default_rng(SEED))`.

*Deliverable:* `coverage_mid` and `saved_mid` (floats: the conformal rule's mean coverage and mean work saved over
the re-splits) and `uncal_coverage_mid` (float: the uncalibrated rule's mean coverage), at seed 5.
""",
         solution="""
# BEGIN SOLUTION
mid = (r.heldout.upper - r.heldout.lower) / 2
res = resplit_evaluation(r.heldout, mid, r.eps, cfg.alpha, cfg.n_cal, RESPLITS, cfg.kth_incumbent,
                         np.random.default_rng(SEED))
coverage_mid = float(res["conformal"]["coverage"].mean())
saved_mid = float(res["conformal"]["work_saved"].mean())
uncal_coverage_mid = float(res["uncalibrated"]["coverage"].mean())
# END SOLUTION
""",
         public=["assert isinstance(coverage_mid, float) and isinstance(saved_mid, float) and isinstance(uncal_coverage_mid, float)",
                 "assert isinstance(coverage_mid, float) and 0.0 <= coverage_mid <= 1.0 and 0.0 <= uncal_coverage_mid <= 1.0",
                 "assert isinstance(saved_mid, float) and saved_mid < 1.0"],
         hidden=["assert isinstance(coverage_mid, float) and abs(coverage_mid - 0.8965) < 0.005",
                 "assert isinstance(saved_mid, float) and abs(saved_mid - 0.2315) < 0.01",
                 "assert isinstance(uncal_coverage_mid, float) and abs(uncal_coverage_mid - 1.0) < 1e-9"],
         wrong="coverage_mid = 0.908\nsaved_mid = 0.2146\nuncal_coverage_mid = 0.3955"),
    dict(name="last_score", exercise=4, points=2,
         prompt="""
**Exercise 4 (medium).** Write `last_scores(pred, gap, mask, eps)`: the last prediction before the incumbent
became $\\varepsilon$-good, $\\hat g_i(T_i-1)$, and $+\\infty$ where $T_i$ is the first checkpoint (inputs `(B, T)`,
output `(B,)`, like `conformal_scores`). On the graded pool (`r.pred`, `r.heldout.gap`, `r.heldout.mask`, `r.eps`),
count the instances where it differs from `conformal_scores`, and compute the conformal rule's mean coverage over
`RESPLITS` re-splits when calibrated on each score: draw `perm = rng.permutation(40)` with
`rng = np.random.default_rng(SEED)` (one generator per score), calibrate on `perm[:cfg.n_cal]`, replay
`stop_on_prediction` on the rest and score it with `evaluate_stops(...)["covered"].mean()`.

*Deliverable:* `last_scores` (a function), `n_differ` (int), `coverage_min` and `coverage_last` (floats), at seed 5.
""",
         solution="""
# BEGIN SOLUTION
def last_scores(pred, gap, mask, eps):
    T = first_index(gap <= eps, mask)  # (B,) first eps-good checkpoint
    rows = np.arange(len(pred))
    return np.where(T > 0, pred[rows, np.maximum(T - 1, 0)], np.inf)

def mean_coverage(scores):
    rng, cov = np.random.default_rng(SEED), []
    for _ in range(RESPLITS):
        perm = rng.permutation(len(scores))
        cal, test = perm[:cfg.n_cal], perm[cfg.n_cal:]
        tau = conformal_threshold(scores[cal], cfg.alpha)
        sub = r.heldout.subset(test)
        cov.append(evaluate_stops(sub, stop_on_prediction(sub, r.pred[test], tau, r.eps), r.eps)["covered"].mean())
    return float(np.mean(cov))

s_min = conformal_scores(r.pred, r.heldout.gap, r.heldout.mask, r.eps)
s_last = last_scores(r.pred, r.heldout.gap, r.heldout.mask, r.eps)
n_differ = int((s_last != s_min).sum())
coverage_min, coverage_last = mean_coverage(s_min), mean_coverage(s_last)
# END SOLUTION
""",
         public=["assert callable(last_scores) and isinstance(n_differ, int)",
                 "assert callable(last_scores) and last_scores(r.pred, r.heldout.gap, r.heldout.mask, r.eps).shape == (40,)",
                 "assert callable(last_scores) and bool(np.all(last_scores(r.pred, r.heldout.gap, r.heldout.mask, r.eps) >= "
                 "conformal_scores(r.pred, r.heldout.gap, r.heldout.mask, r.eps))), 'the last prediction is never below the running minimum'",
                 "assert isinstance(coverage_min, float) and isinstance(coverage_last, float) and coverage_last <= coverage_min + 1e-12"],
         hidden=["assert isinstance(n_differ, int) and abs(n_differ - 16) <= 2",
                 "assert isinstance(coverage_min, float) and abs(coverage_min - 0.9080) < 0.005 "
                 "and abs(coverage_last - 0.9045) < 0.005",
                 "assert callable(last_scores) and np.allclose(last_scores(np.array([[5.0, 2.0, 3.0, 1.0]]), "
                 "np.array([[9.0, 9.0, 9.0, 0.0]]), np.ones((1, 4), bool), 1.0), [3.0])"],
         wrong=("def last_scores(pred, gap, mask, eps):\n"
                "    return conformal_scores(pred, gap, mask, eps)\n"
                "n_differ = 0\n"
                "coverage_min = coverage_last = 0.908")),
    dict(name="first_good", exercise=5, points=2,
         prompt="""
**Exercise 5 (hard).** Take 15 Barabási–Albert MIS graphs of 60 to 70 nodes (attachment 6), the instance seeds
`[instance_seed("mis", i, SEED) for i in range(15)]`, once with node weights up to 100 and $\\varepsilon=1$, once
with weights up to 1000 and $\\varepsilon=10$: `get_config("smoke", families=("mis",), mis_nodes=(60, 70),
mis_max_weight=w, workers=1)`. Solve them with `record_family` and measure the share of instances that are
$\\varepsilon$-good at their first checkpoint.

*Deliverable:* `share`, a dict `{100: float, 1000: float}` (keyed by the largest weight), and `informative`, a dict
`{100: bool, 1000: bool}`: does the family pass the ledger's bar of at most 80% $\\varepsilon$-good at once?
""",
         solution="""
# BEGIN SOLUTION
seeds = [instance_seed("mis", i, SEED) for i in range(15)]
share, informative = {}, {}
for w, eps in ((100, 1.0), (1000, 10.0)):
    c = get_config("smoke", families=("mis",), mis_nodes=(60, 70), mis_max_weight=w, workers=1)
    batch = TrajectoryBatch.from_trajectories(record_family("mis", seeds, c))
    share[w] = float(np.mean(first_index(batch.gap <= eps, batch.mask) == 0))
    informative[w] = share[w] <= 0.8
# END SOLUTION
""",
         public=["assert isinstance(share, dict) and set(share) == {100, 1000} and all(0.0 <= v <= 1.0 for v in share.values())",
                 "assert isinstance(informative, dict) and set(informative) == {100, 1000} "
                 "and all(isinstance(v, bool) for v in informative.values())"],
         hidden=["assert isinstance(share, dict) and abs(share[100] - 14 / 15) < 1e-9 and abs(share[1000] - 11 / 15) < 1e-9",
                 "assert isinstance(informative, dict) and informative[100] is False and informative[1000] is True"],
         wrong="share = {100: 1.0, 1000: 1.0}\ninformative = {100: False, 1000: False}"),
]
