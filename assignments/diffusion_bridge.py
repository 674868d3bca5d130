"""Graded exercises for diffusion_bridge (chapter exercises 2-5). Format: assignments/README.md."""

TITLE = "Structured Diffusion Bridges: graded exercises"

SETUP = """
import icml26.numerics; icml26.numerics.pin_cpu_numerics()
from dataclasses import replace
import numpy as np
import torch
from icml26.diffusion_bridge import bridge, experiment, get_config, sdb

# The graded variant: the toy and the assignment costs drawn with seed 7, a fully paired bridge
# trained with seed 4, and the preconditioning with correlated endpoints (sigma_0T = 0.25) on a
# 4-step grid (the chapter works with seed 0, sigma_0T = 0 and the 3-step grid; the answers below
# are printed nowhere).
SEED = 7

# Exercise 3: the WTA costs of 12 real targets (rows) against 8 candidate sources (columns); the
# bridge finds sources 0 and 1 easy to denoise from.
cost = np.random.default_rng(SEED).uniform(0.5, 1.5, size=(12, 8))
cost[:, :2] *= 0.4

# Exercise 4: a fully paired bridge (rho = 1) trained for 300 steps, one network, training seed 4
# (the frozen autoencoders are not used by the jointly trained latent space: 1 step is enough).
cfg = get_config("reduced", ae_steps=1, steps=300, device="cpu")
setup = experiment.prepare(cfg, seed=4)
"""

QUESTIONS = [
    dict(name="toy_constraints", exercise=2, points=2,
         prompt="""
**Exercise 2 (coding, medium).** Score maps $s\\mapsto\\hat\\theta(s)$ from the parabola to the
circle the way `experiment.toy_coupling_scores` does: marginal matching is the mean cost of the
capacity-1 WTA assignment of the translated points to independent real targets
(`toy_domains(n, seed + 1)`), the endpoint cycle is the mean $|s_{\\text{back}}(s)-s|$ for the map's
best inverse $s_{\\text{back}}$, and the paired error is the mean squared distance on `n_pairs`
known pairs (`np.random.default_rng(seed + 2).choice(n, n_pairs, replace=False)`). Score three
wrong maps: *rotated* $\\hat\\theta=2\\pi(s+\\tfrac14)$ (inverse: $s$), *half*
$\\hat\\theta=\\pi s$ (inverse: $s$) and *quantised* $\\hat\\theta=2\\pi\\,\\mathrm{round}(8s)/8$ (best
inverse: $\\mathrm{round}(8s)/8$).

*Deliverable:* `toy_scores(theta_hat, s_back, n=200, n_pairs=3, seed=SEED)` (two functions of the
array `s` in, a dict with keys `"marginal matching"`, `"endpoint cycle"`, `"paired error"` out);
`scores`, a dict `{"rotated": ..., "half": ..., "quantised": ...}` of such dicts at seed 7.
""",
         solution="""
# BEGIN SOLUTION
def toy_scores(theta_hat, s_back, n=200, n_pairs=3, seed=SEED):
    _, x, y = experiment.toy_domains(n, seed)
    _, x_real, _ = experiment.toy_domains(n, seed + 1)
    s = (y[:, 0] + 1) / 2
    th = theta_hat(s)
    x_hat = np.stack([np.cos(th), np.sin(th)], 1)
    c = ((x_hat[:, None] - x_real[None]) ** 2).sum(-1)
    pi = sdb.wta_capacity_assignment(c, 1)
    pairs = np.random.default_rng(seed + 2).choice(n, n_pairs, replace=False)
    return {"marginal matching": float(c[np.arange(n), pi].mean()),
            "endpoint cycle": float(np.abs(s_back(s) - s).mean()),
            "paired error": float(((x_hat[pairs] - x[pairs]) ** 2).sum(-1).mean())}


scores = {"rotated": toy_scores(lambda s: 2 * np.pi * (s + 0.25), lambda s: s),
          "half": toy_scores(lambda s: np.pi * s, lambda s: s),
          "quantised": toy_scores(lambda s: 2 * np.pi * np.round(8 * s) / 8, lambda s: np.round(8 * s) / 8)}
# END SOLUTION
""",
         public=["assert callable(toy_scores) and isinstance(scores, dict) and set(scores) == {'rotated', 'half', 'quantised'}",
                 "assert isinstance(scores, dict)\n"
                 "assert all(set(v) == {'marginal matching', 'endpoint cycle', 'paired error'} for v in scores.values())",
                 "assert callable(toy_scores)\n"
                 "ref = experiment.toy_coupling_scores(200, 3, 0)['mirrored']\n"
                 "mine = toy_scores(lambda s: 2 * np.pi * (1 - s), lambda s: s, seed=0)\n"
                 "assert abs(mine['marginal matching'] - ref['marginal matching']) < 1e-9, 'reproduces the chapter at seed 0'\n"
                 "assert abs(mine['paired error'] - ref['paired error (3 pairs)']) < 1e-9"],
         hidden=["assert isinstance(scores, dict)\n"
                 "r, h, q = scores['rotated'], scores['half'], scores['quantised']\n"
                 "assert abs(r['marginal matching'] - 0.021454) < 1e-5 and r['endpoint cycle'] == 0 and abs(r['paired error'] - 2.0) < 1e-6",
                 "assert isinstance(scores, dict)\n"
                 "h = scores['half']\n"
                 "assert abs(h['marginal matching'] - 0.614522) < 1e-5 and abs(h['paired error'] - 3.131138) < 1e-5",
                 "assert isinstance(scores, dict)\n"
                 "q = scores['quantised']\n"
                 "assert abs(q['marginal matching'] - 0.081795) < 1e-5 and abs(q['endpoint cycle'] - 0.030316) < 1e-5\n"
                 "assert abs(q['paired error'] - 0.056621) < 1e-5"],
         wrong="def toy_scores(theta_hat, s_back, n=200, n_pairs=3, seed=SEED):\n"
               "    return experiment.toy_coupling_scores(n, n_pairs, seed)['mirrored']\n"
               "scores = {k: {'marginal matching': 0.05, 'endpoint cycle': 0.0, 'paired error': 2.3}\n"
               "          for k in ('rotated', 'half', 'quantised')}"),
    dict(name="capacity", exercise=3, points=2,
         prompt="""
**Exercise 3 (coding, medium).** Solve the WTA assignment of the 12 targets of `cost` to its 8
candidate sources with `sdb.wta_capacity_assignment(cost, capacity)` for capacities 2, 3 and 12 (12
never binds). For each, count the sources that win at least one target and the most targets one
source wins, and the mean cost of the assignment. What happens with capacity 1?

*Deliverable:* `distinct`, `max_wins` (dicts capacity -> int) and `mean_cost` (dict capacity ->
float), for capacities 2, 3, 12.
""",
         solution="""
# BEGIN SOLUTION
distinct, max_wins, mean_cost = {}, {}, {}
for cap in (2, 3, 12):
    pi = sdb.wta_capacity_assignment(cost, cap)
    wins = np.bincount(pi, minlength=cost.shape[1])
    distinct[cap], max_wins[cap] = int((wins > 0).sum()), int(wins.max())
    mean_cost[cap] = float(cost[np.arange(len(pi)), pi].mean())
# END SOLUTION
""",
         public=["assert isinstance(distinct, dict) and isinstance(max_wins, dict) and isinstance(mean_cost, dict)",
                 "assert isinstance(max_wins, dict) and set(max_wins) == {2, 3, 12} and max_wins[2] <= 2 and max_wins[3] <= 3, "
                 "'no source wins more targets than its capacity'",
                 "assert isinstance(mean_cost, dict) and mean_cost[12] <= mean_cost[3] <= mean_cost[2], "
                 "'a looser capacity can only lower the optimal cost'"],
         hidden=["assert isinstance(distinct, dict) and distinct == {2: 7, 3: 6, 12: 2}",
                 "assert isinstance(max_wins, dict) and max_wins == {2: 2, 3: 3, 12: 6}",
                 "assert isinstance(mean_cost, dict)\n"
                 "assert all(abs(mean_cost[c] - v) < 1e-4 for c, v in {2: 0.4749, 3: 0.4250, 12: 0.3474}.items())"],
         wrong="distinct = {2: 8, 3: 8, 12: 8}\nmax_wins = {2: 2, 3: 3, 12: 12}\nmean_cost = {2: 0.5, 3: 0.5, 12: 0.5}"),
    dict(name="sampler_steps", exercise=4, points=2,
         prompt="""
**Exercise 4 (experimental, medium).** Train the fully paired bridge
(`experiment.train_ensemble(setup, cfg, "paired", [1.0], [4])`), then translate the test set with
1, 3 and 10 sampler steps (`experiment.translate` with `replace(cfg, eval_sampler_steps=k)`) and
evaluate each with `experiment.evaluate_images`.

*Deliverable:* `acc`, `psnr`, `mmd` (dicts keyed by the number of steps 1, 3, 10; floats, the one
network's class accuracy, PSNR and MMD).
""",
         solution="""
ens = experiment.train_ensemble(setup, cfg, "paired", [1.0], [4], show_progress=False)
# BEGIN SOLUTION
acc, psnr, mmd = {}, {}, {}
for k in (1, 3, 10):
    m = experiment.evaluate_images(experiment.translate(ens, setup, replace(cfg, eval_sampler_steps=k)), setup)
    acc[k], psnr[k], mmd[k] = float(m["acc"][0]), float(m["psnr"][0]), float(m["mmd"][0])
# END SOLUTION
""",
         public=["assert isinstance(acc, dict) and isinstance(psnr, dict) and isinstance(mmd, dict)",
                 "assert isinstance(acc, dict) and set(acc) == set(psnr) == set(mmd) == {1, 3, 10}",
                 "assert isinstance(acc, dict) and all(0 <= a <= 1 for a in acc.values()) and all(m >= 0 for m in mmd.values())"],
         hidden=["assert isinstance(acc, dict)\n"
                 "assert all(abs(acc[k] - v) < 0.005 for k, v in {1: 0.8287, 3: 0.8489, 10: 0.8564}.items())",
                 "assert isinstance(psnr, dict)\n"
                 "assert all(abs(psnr[k] - v) < 0.05 for k, v in {1: 16.611, 3: 17.147, 10: 17.295}.items())",
                 "assert isinstance(mmd, dict)\n"
                 "assert all(abs(mmd[k] - v) < 5e-4 for k, v in {1: 0.01160, 3: 0.00825, 10: 0.00657}.items())"],
         wrong="ens = None\nacc = {1: 0.86, 3: 0.86, 10: 0.86}\npsnr = {1: 17.0, 3: 17.0, 10: 17.0}\nmmd = {1: 0.0055, 3: 0.0055, 10: 0.0055}"),
    dict(name="precond_weights", exercise=5, points=2,
         prompt="""
**Exercise 5 (hard).** Take correlated endpoints, $\\sigma_0=\\sigma_T=c=1$ and $\\sigma_{0T}=0.25$
(`bridge.precond(t, sigma0T=0.25)`). Find the largest $c_{\\text{in}}(t)$ on $[0,T]$, the values of
$c_{\\text{skip}}$ and $c_{\\text{out}}$ at $t=T$, and the trajectory-cycle weights
$w(t_i)=1/(\\sigma_{t_i}^2+\\varepsilon)$ with $\\varepsilon=0.05$ on the 4-step training grid
`bridge.time_grid(4, 0.999, 0.001)`.

*Deliverable:* `cin_max` (a float), `skip_T`, `out_T` (floats), `weights` (a list of 4 floats, in
the grid's order).
""",
         solution="""
# BEGIN SOLUTION
t = torch.linspace(0, 1, 100001, dtype=torch.float64)
cin_max = float(bridge.precond(t, sigma0T=0.25)[2].max())  # A = 1 - (1 - 2 s0T) a (1 - a), a = t^2
c_skip, c_out, _ = bridge.precond(torch.tensor([1.0], dtype=torch.float64), sigma0T=0.25)
skip_T, out_T = float(c_skip[0]), float(c_out[0])
grid = bridge.time_grid(4, 0.999, 0.001).double()
weights = (1 / (grid ** 2 * (1 - grid ** 2) + 0.05)).tolist()
# END SOLUTION
""",
         public=["assert isinstance(cin_max, float) and cin_max >= 1, 'c_in is 1 at both ends'",
                 "assert isinstance(skip_T, float) and isinstance(out_T, float) and 0 <= skip_T <= 1",
                 "assert isinstance(weights, list) and len(weights) == 4 and all(0 < w <= 20 for w in weights)"],
         hidden=["assert isinstance(cin_max, float) and abs(cin_max - 1.06904) < 1e-4",
                 "assert isinstance(skip_T, float) and abs(skip_T - 0.25) < 1e-6 and abs(out_T - 0.968246) < 1e-5",
                 "assert isinstance(weights, list)\n"
                 "assert all(abs(a - b) < 1e-3 for a, b in zip(weights, [19.2326, 3.3685, 6.7142, 19.9996]))"],
         wrong="cin_max = 2 / 3 ** 0.5\nskip_T, out_T = 0.0, 1.0\nweights = [9.8044, 2.883, 5.0267, 9.9999]"),
]
