"""Graded exercises for dq_sync (chapter exercises 1-4). Format: assignments/README.md."""

TITLE = "Dual quaternion SE(3) synchronization: graded exercises"

SETUP = """
import icml26.numerics; icml26.numerics.pin_cpu_numerics()
import numpy as np
import torch
from scipy.sparse import csr_matrix
from icml26.dq_sync import algebra, baselines, data, experiment, get_config, sync

# The graded variants (the chapter prints none of these answers):
# exercise 1: another pose, a rotation of 1.2 rad about z and t = (2, -1, 2);
# exercise 2: n = 40 poses, instance seed 4, 25 DQGPM steps;
# exercise 3: a noise-free graph with n = 80, p = 0.15, instance seed 5;
# exercise 4: the `smoke` preset on n = 30 poses, p = 0.3, 20% outliers, benchmark seed 7.
R1 = algebra.quat_to_rotmat(algebra.quat_exp(torch.tensor([[0.0, 0.0, 0.6]], dtype=torch.float64)))  # angle 2 * 0.6
t1 = torch.tensor([[2.0, -1.0, 2.0]], dtype=torch.float64)
q1 = algebra.dq_from_rt(R1, t1)  # (1, 2, 4): [standard; dual]
"""

QUESTIONS = [
    dict(name="euclid_norm", exercise=1, points=1,
         prompt="""
**Exercise 1 (easy).** `q1` is the exact pose with a rotation of 1.2 rad about $z$ and $t=(2,-1,2)$.
Divide its 8 numbers $[q_s;q_d]$ by their Euclidean norm instead of projecting with `project_udq`.
Work the answers out by hand first (use $\\|q_d\\|=\\|t\\|/2$ and $\\langle q_s,q_d\\rangle=0$ for a pose),
then check them with `algebra.dq_to_rt`.

*Deliverable:* `qs_norm` (float: $\\|q_s\\|$ after the Euclidean normalisation), `shrink` (float: the length
of the translation that `algebra.dq_to_rt` reads off the result, divided by $\\|t\\|$) and
`still_orthogonal` (bool: is $|\\langle q_s,q_d\\rangle|<10^{-12}$ after the normalisation?).
""",
         solution="""
# BEGIN SOLUTION
e = q1 / q1.flatten(-2).norm(dim=-1)[..., None, None]  # Euclidean normalisation of the 8-vector
qs_norm = float(e[0, 0].norm())
shrink = float(algebra.dq_to_rt(e)[1][0].norm() / t1[0].norm())
still_orthogonal = bool(abs(float(e[0, 0] @ e[0, 1])) < 1e-12)
# END SOLUTION
""",
         public=["assert isinstance(qs_norm, float) and 0.0 < qs_norm < 1.0, 'the standard part gets shorter than 1'",
                 "assert isinstance(shrink, float) and 0.0 < shrink < 1.0, 'the read-off translation gets shorter'",
                 "assert isinstance(still_orthogonal, bool)"],
         hidden=["assert isinstance(qs_norm, float) and abs(qs_norm - 0.5547) < 1e-3",
                 "assert isinstance(shrink, float) and abs(shrink - 4 / 13) < 1e-3",
                 "assert still_orthogonal is True"],
         wrong="qs_norm = 0.9\nshrink = 0.5547\nstill_orthogonal = False"),
    dict(name="contraction", exercise=2, points=2,
         prompt="""
**Exercise 2 (medium).** For each edge probability $p\\in\\{0.1, 0.3, 1.0\\}$, build
`data.make_synthetic_problem(40, p, 0.1, 0.05, seed=4)`, start DQGPM at the spectral initializer and run
25 steps with `keep_iterates=True`. Measure its rate with `experiment.contraction_rate` applied to the
`"to_limit"` curve of `experiment.contraction_curves`, and the ratio $\\lambda_5/\\lambda_1$ of the fifth-largest
to the largest eigenvalue of the standard part $C_s$ (`sync.measurement_matrix(graph)[0]`).

*Deliverable:* `rates` and `ratios`, two dicts keyed by `0.1`, `0.3`, `1.0` with float values
(n = 40, instance seed 4, 25 steps).
""",
         solution="""
# BEGIN SOLUTION
rates, ratios = {}, {}
for p in (0.1, 0.3, 1.0):
    prob = data.make_synthetic_problem(40, p, 0.1, 0.05, seed=4)
    x0, _ = sync.spectral_initializer(prob.graph)
    g = sync.dqgpm(prob.graph, x0, 25, keep_iterates=True)
    rates[p] = experiment.contraction_rate(experiment.contraction_curves(g, prob.x_true)["to_limit"])
    lam = torch.linalg.eigvalsh(sync.measurement_matrix(prob.graph)[0])  # ascending
    ratios[p] = float(lam[-5] / lam[-1])  # each eigenvalue repeats 4 times
# END SOLUTION
""",
         public=["assert isinstance(rates, dict) and isinstance(ratios, dict) and set(rates) == set(ratios) == {0.1, 0.3, 1.0}",
                 "assert isinstance(rates, dict) and all(isinstance(v, float) and 0.0 <= v < 1.0 for v in rates.values()), 'a contraction has rate in [0, 1)'",
                 "assert isinstance(rates, dict) and rates[0.1] > rates[0.3] > rates[1.0], 'denser graphs contract faster'"],
         hidden=["assert isinstance(rates, dict) and abs(rates[0.1] - 0.7201) < 0.01 and abs(rates[0.3] - 0.4401) < 0.01",
                 "assert isinstance(rates, dict) and rates[1.0] < 0.05",
                 "assert isinstance(ratios, dict) and abs(ratios[0.1] - 0.6941) < 1e-3 and abs(ratios[0.3] - 0.4233) < 1e-3 and abs(ratios[1.0] - 0.0251) < 1e-3"],
         wrong="rates = {0.1: 0.7, 0.3: 0.45, 1.0: 0.02}\nratios = {0.1: 1.0, 0.3: 1.0, 1.0: 1.0}"),
    dict(name="block_size", exercise=3, points=2,
         prompt="""
**Exercise 3 (medium).** `A` below is the noise-free matrix $D^{-1}X$ of EIG-SE(3) for a graph with
$n=80$, $p=0.15$ (instance seed 5). Call `baselines.subspace_top4(A, block=b)` for $b=4, 5, 12$.

*Deliverable:* `certified` (a dict `{4: bool, 5: bool, 12: bool}`, the second value returned) and
`gap12` (float: `info["gap"]` for `block=12`).
""",
         solution="""
prob = data.make_synthetic_problem(80, 0.15, 0.0, 0.0, seed=5)
X, deg = baselines.se3_block_matrix(prob.graph)
A = csr_matrix((X / deg.repeat_interleave(4)[:, None]).numpy())
# BEGIN SOLUTION
certified, infos = {}, {}
for b in (4, 5, 12):
    _, certified[b], infos[b] = baselines.subspace_top4(A, block=b)
certified = {b: bool(c) for b, c in certified.items()}
gap12 = float(infos[12]["gap"])
# END SOLUTION
""",
         public=["assert isinstance(certified, dict) and set(certified) == {4, 5, 12} and all(isinstance(c, bool) for c in certified.values())",
                 "assert isinstance(gap12, float) and 0.0 <= gap12 <= 1.0, 'the gap lies between 0 and the top eigenvalue 1'"],
         hidden=["assert isinstance(certified, dict) and certified == {4: False, 5: True, 12: True}",
                 "assert isinstance(gap12, float) and abs(gap12 - 0.4885) < 0.005"],
         wrong="prob = data.make_synthetic_problem(80, 0.15, 0.0, 0.0, seed=5)\ncertified = {4: True, 5: True, 12: True}\ngap12 = 0.0"),
    dict(name="outliers", exercise=4, points=3,
         prompt="""
**Exercise 4 (hard, experimental).** Run the benchmark with 20% outliers on a small dense graph:
`experiment.run_benchmark(cfg4, seed=7)` with `cfg4` as below (n = 30, p = 0.3, two noise levels, three
instances each). `bench.rot[name][0, b]` holds the rotation errors (degrees) for outlier-rate index `b`
(here `b = 1` is 20%), one per noise level and instance; `bench.trans` the translation errors.

*Deliverable:* the mean over noise levels and instances at 20% outliers of the rotation errors,
`rot_dq` (method `"dqgpm"`) and `rot_eig` (`"eig_se3"`), and of the translation errors, `trans_dq` and
`trans_eig` (floats); and `dq_worse` (bool: is DQGPM's mean rotation error the larger one?).
""",
         solution="""
cfg4 = get_config("smoke", ns=(30,), edge_prob=0.3, outlier_rates=(0.0, 0.2), sigmas=(0.05, 0.1), n_seeds=3)
# BEGIN SOLUTION
bench = experiment.run_benchmark(cfg4, seed=7)
rot_dq, rot_eig = float(bench.rot["dqgpm"][0, 1].mean()), float(bench.rot["eig_se3"][0, 1].mean())
trans_dq, trans_eig = float(bench.trans["dqgpm"][0, 1].mean()), float(bench.trans["eig_se3"][0, 1].mean())
dq_worse = bool(rot_dq > rot_eig)
# END SOLUTION
""",
         public=["assert all(isinstance(v, float) and v > 0 for v in (rot_dq, rot_eig, trans_dq, trans_eig))",
                 "assert isinstance(rot_dq, float) and max(rot_dq, rot_eig) < 126.5, 'both stay below the error of a random rotation'",
                 "assert isinstance(dq_worse, bool) and dq_worse == (rot_dq > rot_eig)"],
         hidden=["assert isinstance(rot_dq, float) and abs(rot_dq - 18.279) < 0.05 and abs(rot_eig - 7.924) < 0.05",
                 "assert isinstance(trans_dq, float) and abs(trans_dq - 0.7167) < 0.002 and abs(trans_eig - 0.5806) < 0.002",
                 "assert dq_worse is True"],
         wrong="rot_dq, rot_eig = 7.9, 18.3\ntrans_dq, trans_eig = 0.58, 0.72\ndq_worse = False"),
]
