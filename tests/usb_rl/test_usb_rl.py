"""USB-RL: score monotonicity, environment arithmetic, world-model fit, bad input, smoke run."""

import numpy as np
import pytest
import torch

from icml26.usb_rl import (
    HazardNav, MonotoneScore, PolicyPopulation, WorldModel, dominance_matrix, dual_ascent, effective_multiplier,
    fit_score, fit_world_model, get_config, imagine, rank_targets, rollout,
)
from icml26.usb_rl import experiment as ex

G = torch.Generator().manual_seed(0)


def test_score_is_monotone_on_random_inputs_for_random_parameters():
    for k in range(5):
        s = MonotoneScore(8, torch.Generator().manual_seed(k))
        with torch.no_grad():
            for p in s.parameters():
                p.add_(torch.randn(p.shape, generator=G) * 2)
        g_r, g_c = torch.randn(500, generator=G) * 5, torch.rand(500, generator=G) * 10
        d = torch.rand(500, generator=G) * 3
        assert (s(g_r + d, g_c) >= s(g_r, g_c) - 1e-6).all()  # more return never lowers the score
        assert (s(g_r, g_c + d) <= s(g_r, g_c) + 1e-6).all()  # more cost never raises it
        assert (effective_multiplier(s, g_r, g_c) >= 0).all()


def test_dominance_and_rank_targets_by_hand():
    g_r = torch.tensor([1.0, 0.0, 1.0, 2.0])
    g_c = torch.tensor([0.0, 1.0, 1.0, 2.0])
    d = dominance_matrix(g_r, g_c)
    expect = torch.tensor([[0, 1, 1, 0], [0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 0]], dtype=torch.float32)
    assert torch.equal(d, expect)
    assert torch.allclose(rank_targets(g_r, g_c), torch.tensor([0.5, -0.5, 0.0, 0.0]))
    assert torch.diagonal(dominance_matrix(g_r, g_c, tol=0.3)).sum() == 0


def test_fitted_score_orders_comparable_pairs():
    g_r, g_c = torch.randn(128, generator=G), torch.rand(128, generator=G) * 4
    s = MonotoneScore(16, torch.Generator().manual_seed(1))
    fit_score(s, g_r, g_c, 200)
    d = dominance_matrix(g_r, g_c)
    with torch.no_grad():
        v = s(g_r, g_c)
    agree = ((v[:, None] >= v[None, :]).float() * d).sum() / d.sum()
    assert agree > 0.99


def test_env_matches_hand_computed_straight_trajectory():
    env = HazardNav(2, horizon=12, step_size=0.1, hazard_radius=0.25, start_jitter=0.0)
    ep = rollout(env, lambda obs, t: torch.tensor([[1.0, 0.0], [0.0, 1.0]]))
    x = 0.1 * torch.arange(1, 13, dtype=torch.float32)
    assert torch.allclose(ep["obs"][1:, 0, 0], x, atol=1e-5)
    assert torch.allclose(ep["rewards"][:, 0], -(x - 1.0).abs(), atol=1e-5)
    inside = ((x - 0.5).abs() < 0.25).float()  # x = 0.3 ... 0.7: five steps in the hazard
    assert torch.equal(ep["costs"][:, 0], inside) and ep["G_c"][0] == 5
    y = 0.1 * torch.arange(1, 13, dtype=torch.float32).clamp(max=10)  # the second env walks up to the wall y = 1
    assert torch.allclose(ep["rewards"][:, 1], -torch.sqrt(1 + y ** 2), atol=1e-5)
    assert ep["G_c"][1] == 0


def test_world_model_fits_a_known_linear_system():
    torch.manual_seed(0)
    A = torch.tensor([[0.9, 0.1], [-0.1, 0.9]])
    B = torch.tensor([[0.5, 0.0], [0.0, 0.3]])
    s, a = torch.randn(2048, 2, generator=G), torch.rand(2048, 2, generator=G) * 2 - 1
    s_next = s @ A.T + a @ B.T
    data = {"s": s, "a": a, "s_next": s_next, "r": s[:, 0] - a[:, 1], "c": (s[:, 1] > 0).float()}
    wm = WorldModel(2, 2, 64, 2, delta_scale=1.0, generator=torch.Generator().manual_seed(0))
    fit_world_model(wm, data, 800, 256, lr=3e-3, generator=torch.Generator().manual_seed(0))
    st, at = torch.randn(256, 2, generator=G) * 0.8, torch.rand(256, 2, generator=G) * 2 - 1
    with torch.no_grad():
        nxt, r, c = wm(st, at)
    assert (nxt - (st @ A.T + at @ B.T)).pow(2).mean() < 5e-3
    assert (r - (st[:, 0] - at[:, 1])).pow(2).mean() < 5e-3


def test_imagination_is_differentiable_and_shaped():
    wm = WorldModel(2, 2, 16, 2, generator=torch.Generator().manual_seed(0))
    pol = PolicyPopulation(3, hidden=8, generator=torch.Generator().manual_seed(0))
    out = imagine(pol, wm, torch.zeros(3, 5, 2), 4, 0.1, G)
    assert out["states"].shape == (5, 3, 5, 2) and out["G_r"].shape == (3, 5)
    out["G_r"].sum().backward()
    assert all(p.grad is not None for p in pol.parameters())


def test_dual_ascent_and_claim_criterion():
    assert dual_ascent(0.0, 0.5, 1.0, 0.1) == 0.0 and dual_ascent(0.0, 3.0, 1.0, 0.1) == pytest.approx(0.2)
    cfg = get_config("smoke")
    names = ["unconstrained", "linear 0.1", "linear 1", "lagrangian", "usb"]
    ret = np.array([[-5.0, -5.5, -7.0, -6.0, -6.0]])
    good = np.array([[5.0, 3.0, 0.0, 0.5, 1.0]])
    _, _, checks = ex.claim_figures(ret, good, names, cfg)
    assert all(checks.values())
    bad = good.copy()
    bad[0, 4] = 3.5  # now "linear 0.1" (-5.5, 3.0) dominates USB (-6, 3.5)
    _, _, checks = ex.claim_figures(ret, bad, names, cfg)
    assert not checks["not dominated by any fixed lambda (seed mean)"]


def test_bad_input_rejected():
    with pytest.raises(ValueError, match="smoke"):
        get_config("huge")
    with pytest.raises(ValueError):
        get_config("smoke", lambdas=(-1.0,))
    with pytest.raises(ValueError):
        get_config("smoke", horizon=1)
    env = HazardNav(4)
    env.reset()
    with pytest.raises(ValueError, match="action"):
        env.step(torch.zeros(3, 2))
    with pytest.raises(ValueError):
        HazardNav(0)
    with pytest.raises(ValueError, match="same shape"):
        MonotoneScore()(torch.zeros(3), torch.zeros(4))
    with pytest.raises(ValueError):
        dominance_matrix(torch.zeros(2, 2), torch.zeros(2, 2))
    with pytest.raises(ValueError):
        WorldModel(2, 2)(torch.zeros(5, 3), torch.zeros(5, 2))
    with pytest.raises(ValueError):
        PolicyPopulation(2)(torch.zeros(3, 4, 2))
    with pytest.raises(ValueError):
        ex.claim_figures(np.zeros((1, 3)), np.zeros((1, 3)), ["a", "b"], get_config("smoke"))
    with pytest.raises(ValueError):
        dual_ascent(0.0, 1.0, -1.0, 0.1)


def test_smoke_run_end_to_end():
    torch.set_num_threads(1)
    cfg = get_config("smoke", device="cpu")
    res = ex.run_experiment(cfg, 0)
    tab = ex.outcome_table(res)
    assert tab["returns"].shape == (1, len(ex.method_names(cfg)))
    assert np.isfinite(tab["returns"]).all() and (tab["costs"] >= 0).all()
    claim, measured, checks = ex.claim_figures(tab["returns"], tab["costs"], list(tab["names"]), cfg)
    assert set(checks) and all(isinstance(v, bool) for v in checks.values())
    assert ex.policy_paths(res[0], cfg, 2).shape == (len(tab["names"]), 2, cfg.horizon + 1, 2)
