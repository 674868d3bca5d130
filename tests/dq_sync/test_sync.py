"""Synchronization: exact recovery, the Hermitian matrix, the power method, DQGPM,
EIG-SE(3), gauge invariance, the registration pipeline, the smoke run and bad input."""

import numpy as np
import pytest
import torch

from icml26.dq_sync import get_config
from icml26.dq_sync.algebra import dq_conj, dq_mul, dq_to_rt, random_udq
from icml26.dq_sync.baselines import dq_spectral, eig_se3
from icml26.dq_sync.data import PoseGraph, erdos_renyi_edges, make_synthetic_problem
from icml26.dq_sync.experiment import (
    contraction_rate, explore_instance, run_benchmark, run_benchmarks,
    run_registration, run_scale_sweep, run_timing,
)
from icml26.dq_sync.metrics import pose_errors, pose_errors_rt
from icml26.dq_sync.registration import kabsch, make_scans
from icml26.dq_sync.sync import dq_power_method, dqgpm, hermitian_matvec, measurement_matrix, synchronize


def noiseless(n=25, p=0.3, scale=2.0, seed=1):
    return make_synthetic_problem(n, p, 0.0, 0.0, scale, seed=seed)


def test_er_graph_is_connected_and_simple():
    for p in (0.0, 0.05, 0.5):
        e = erdos_renyi_edges(40, p, torch.Generator().manual_seed(3))
        assert bool((e[:, 0] < e[:, 1]).all())
        assert len({tuple(r) for r in e.tolist()}) == e.shape[0]
        assert PoseGraph(40, e, torch.zeros(e.shape[0], 2, 4)).is_connected()


def test_matvec_matches_dense_hermitian_matrix_and_rank_one():
    prob = noiseless(12, 1.0)  # complete graph, no noise: C = x x^*
    Cs, Cd = measurement_matrix(prob.graph)
    assert torch.allclose(Cs, Cs.T) and torch.allclose(Cd, Cd.T)  # Hermitian <=> real symmetric blocks
    v = torch.randn(12, 2, 4, dtype=torch.float64)
    y = hermitian_matvec(prob.graph, v)
    vs, vd = v[:, 0].reshape(-1), v[:, 1].reshape(-1)
    assert torch.allclose(y[:, 0].reshape(-1), Cs @ vs, atol=1e-10)
    assert torch.allclose(y[:, 1].reshape(-1), Cs @ vd + Cd @ vs, atol=1e-10)
    x = prob.x_true
    assert torch.allclose(hermitian_matvec(prob.graph, x), 12 * x, atol=1e-10)  # C x = x (x^* x) = n x
    top = torch.linalg.eigvalsh(Cs)[-5:]
    assert torch.allclose(top[-4:], torch.full((4,), 12.0, dtype=torch.float64), atol=1e-8)  # 4-fold (quaternion)
    assert abs(float(top[0])) < 1e-8


def test_power_method_converges_to_dominant_eigenpair():
    prob = noiseless(12, 1.0)
    res = dq_power_method(prob.graph, iters=200, tol=1e-12, generator=torch.Generator().manual_seed(0))
    assert res.converged and res.iterations < 200
    assert torch.allclose(res.eigenvalue, torch.tensor([12.0, 0.0], dtype=torch.float64), atol=1e-8)
    Cv = hermitian_matvec(prob.graph, res.v)
    assert torch.allclose(Cv, 12 * res.v, atol=1e-8)


@pytest.mark.parametrize("scale", [0.1, 10.0])
def test_exact_recovery_without_noise(scale):
    prob = noiseless(30, 0.2, scale)
    x0, x, gpm = synchronize(prob.graph, x_true=prob.x_true)
    for est in (x0, x):
        e = pose_errors(est, prob.x_true)
        assert e["rot_deg"] < 1e-6 and e["trans"] < 1e-6 * scale
    R, t = eig_se3(prob.graph)
    e = pose_errors_rt(R, t, *dq_to_rt(prob.x_true))
    assert e["rot_deg"] < 1e-6 and e["trans"] < 1e-6 * scale
    assert gpm.rot_err_deg[-1] < 1e-6


def test_eig_se3_sparse_solver_agrees_with_dense():
    prob = make_synthetic_problem(30, 0.3, 0.05, 0.025, seed=4)
    dense, sparse = eig_se3(prob.graph, "dense"), eig_se3(prob.graph, "sparse")
    truth = dq_to_rt(prob.x_true)
    e1, e2 = pose_errors_rt(*dense, *truth), pose_errors_rt(*sparse, *truth)
    assert abs(e1["rot_deg"] - e2["rot_deg"]) < 1e-6 and abs(e1["trans"] - e2["trans"]) < 1e-6


def test_error_metric_is_gauge_invariant():
    prob = make_synthetic_problem(20, 0.5, 0.2, 0.1, seed=2)
    x = dq_spectral(prob.graph)
    g = random_udq(1, 4.0, torch.Generator().manual_seed(9))
    e1, e2 = pose_errors(x, prob.x_true), pose_errors(dq_mul(x, g.expand_as(x)), prob.x_true)
    for k in e1:
        assert abs(e1[k] - e2[k]) < 1e-9
    # and the truth itself times any gauge has zero error
    assert pose_errors(dq_mul(prob.x_true, g.expand_as(x)), prob.x_true)["trans"] < 1e-9


def test_dq_rotation_error_does_not_depend_on_translation_scale():
    # same seed, same rotation noise; translations (and their noise) scaled by s
    errs = []
    for s in (0.5, 50.0):
        prob = make_synthetic_problem(20, 0.4, 0.1, 0.05 * s, s, seed=5)
        _, x, _ = synchronize(prob.graph)
        e = pose_errors(x, prob.x_true)
        errs.append((e["rot_deg"], e["trans"] / s))
    assert abs(errs[0][0] - errs[1][0]) < 1e-9  # rotations come from the standard part only
    assert abs(errs[0][1] - errs[1][1]) < 1e-9  # translations scale exactly


def test_dqgpm_improves_on_spectral_and_contracts():
    prob = make_synthetic_problem(40, 0.4, 0.1, 0.05, seed=0)
    x0, x, gpm = synchronize(prob.graph, x_true=prob.x_true, keep_iterates=True, gpm_iters=20)
    assert gpm.rot_err_deg[-1] <= gpm.rot_err_deg[0]
    assert gpm.iterates.shape == (21, 40, 2, 4)
    to_limit = np.array([pose_errors(z, gpm.iterates[-1])["rot_deg"] for z in gpm.iterates[:-1]])
    assert contraction_rate(to_limit) < 0.9


def test_kabsch_recovers_a_rigid_motion():
    x = random_udq(3, 1.0, torch.Generator().manual_seed(1))
    R, t = dq_to_rt(x)
    Q = torch.randn(3, 10, 3, dtype=torch.float64)
    P = Q @ R.transpose(-1, -2) + t[:, None]
    R2, t2 = kabsch(P, Q)
    assert torch.allclose(R2, R, atol=1e-10) and torch.allclose(t2, t, atol=1e-10)


def test_registration_measurements_are_sign_consistent():
    scans = make_scans(6, 1200, point_noise=0.0, min_overlap=20, seed=0)
    g, e = scans.g_true, scans.graph.edges
    expected = dq_mul(g[e[:, 0]], dq_conj(g[e[:, 1]]))  # x_i x_j^*, up to the sign of each q
    agree = (scans.graph.measurements[:, 0] * expected[:, 0]).sum(-1)  # +-1 per edge
    assert torch.allclose(agree.abs(), torch.ones_like(agree), atol=1e-8)
    _, x, _ = synchronize(scans.graph)  # consistent signs: noiseless Kabsch data is recovered exactly
    e_sync = pose_errors(x, scans.g_true)
    assert e_sync["rot_deg"] < 1e-6 and e_sync["trans"] < 1e-6


def test_smoke_preset_end_to_end():
    cfg = get_config("smoke")
    bench = run_benchmark(cfg)
    assert bench.rot["dqgpm"].shape == (1, 2, 3, 3)  # (n, outlier rate, sigma, seed)
    assert np.isfinite(bench.rot["eig_se3"]).all() and (bench.seconds["dq"] > 0).all()
    assert bench.curves_steps.shape == (3, 3, cfg.gpm_iters)
    assert run_scale_sweep(cfg)["rot_dqgpm"].shape == (2, 1)
    timing = run_timing(cfg)
    assert timing["seconds_eig"].shape == (1,) and timing["seconds_dq_all"].shape == (1, 3)
    # per repeat the fastest exact solver counts
    assert np.allclose(timing["seconds_eig_all"], np.minimum(timing["seconds_dense_all"], timing["seconds_sparse_all"]))
    reg = run_registration(cfg)
    assert reg.rmse["dqgpm"] < 0.1 and reg.merged["dqgpm"].shape == reg.scans.local.shape
    assert explore_instance(0.1, 0.3, n=15, gpm_iters=5)["rot"].shape == (6,)


def test_benchmarks_per_density():
    cfg = get_config("smoke", edge_probs=(0.3, 0.5), n_seeds=1, sigmas=(0.1, 0.2))
    benches = run_benchmarks(cfg)
    assert list(benches) == [0.3, 0.5] and benches[0.3].config.edge_prob == 0.3


def test_reduced_preset_uses_the_papers_synthetic_setup():
    cfg = get_config("reduced")
    assert cfg.edge_probs == (0.05, 0.3) and cfg.outlier_rates[0] == 0.0 and len(cfg.outlier_rates) == 2
    assert np.allclose(np.degrees(cfg.sigmas), (5.0, 10.0, 20.0))  # the paper's two levels and one between
    assert np.allclose([cfg.trans_noise_ratio * s for s in cfg.sigmas], (0.05, 0.10, 0.20))
    assert max(get_config("evidence").timing_ns) >= 500  # C3's graph size


def test_config_validation_names_the_field():
    for field, value in (("outlier_rates", (0.1,)), ("sigmas", (0.2, 0.1)), ("timing_solvers", ("qr",)),
                         ("registration_seeds", 0), ("timing_ns", (2,)), ("n_scans", 2), ("dtype", "int8")):
        with pytest.raises(ValueError, match=field.split("_")[0]):
            get_config("smoke", **{field: value})


def test_bad_inputs_are_rejected():
    with pytest.raises(ValueError, match="unknown config field"):
        get_config("smoke", n_nodes=3)
    with pytest.raises(ValueError, match="edge_prob"):
        get_config("smoke", edge_prob=1.5)
    with pytest.raises(ValueError, match="edge_probs"):
        get_config("smoke", edge_probs=(0.0,))
    with pytest.raises(ValueError, match="edge probability"):
        erdos_renyi_edges(10, -0.1)
    with pytest.raises(ValueError, match="outlier_rate"):
        make_synthetic_problem(10, 0.5, 0.1, 0.1, outlier_rate=1.0)
    e = torch.tensor([[0, 1], [1, 2]])
    with pytest.raises(ValueError, match="shape"):
        PoseGraph(3, e, torch.zeros(3, 2, 4))
    with pytest.raises(ValueError, match="endpoints"):
        PoseGraph(2, e, torch.zeros(2, 2, 4))
    with pytest.raises(ValueError, match="self-loops"):
        PoseGraph(3, torch.tensor([[1, 1]]), torch.zeros(1, 2, 4))
    prob = noiseless(10, 0.5)
    with pytest.raises(ValueError, match=r"\(10, 2, 4\)"):
        dqgpm(prob.graph, torch.zeros(9, 2, 4, dtype=torch.float64))
    with pytest.raises(ValueError, match="iters"):
        dq_power_method(prob.graph, iters=0)
    with pytest.raises(ValueError, match="solver"):
        eig_se3(prob.graph, "qr")
    with pytest.raises(ValueError, match="correspondences"):
        make_scans(6, 500, n_correspondences=2)
