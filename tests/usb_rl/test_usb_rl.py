"""USB-RL: score monotonicity, environment arithmetic, world-model fit, bad input, smoke run."""

import numpy as np
import pytest
import torch

from icml26.usb_rl import claims

from icml26.usb_rl import (
    HazardNav, MonotoneScore, PolicyPopulation, WorldModel, dominance_matrix, dominance_shares, dual_ascent,
    effective_multiplier,
    fit_score, fit_world_model, get_config, hazard_depth, imagine, pareto_mask, rank_targets, reference_front,
    return_slope, rollout, score_objective,
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


def test_hazard_depth_by_hand():
    p = torch.tensor([[0.5, 0.0], [0.5, 0.5], [0.9, 0.0], [0.5, -0.5], [0.6, 0.3], [0.5, 0.7]])
    # w(y) = 0.35 (0.5 - y) / 0.5: 0.35 on the straight line, 0 at the apex, 0.7 at y = -0.5
    want = torch.tensor([0.35, 0.0, -0.05, 0.7, 0.14 - 0.1, -0.14])
    assert torch.allclose(hazard_depth(p, 0.35, 0.5), want, atol=1e-6)


def test_env_matches_hand_computed_straight_trajectory():
    env = HazardNav(2, horizon=12, step_size=0.1, hazard_half_width=0.35, hazard_apex=0.5, start_jitter=0.0)
    ep = rollout(env, lambda obs, t: torch.tensor([[1.0, 0.0], [0.0, 1.0]]))
    x = 0.1 * torch.arange(1, 13, dtype=torch.float32)
    assert torch.allclose(ep["obs"][1:, 0, 0], x, atol=1e-5)
    assert torch.allclose(ep["rewards"][:, 0], -(x - 1.0).abs(), atol=1e-5)
    inside = ((x - 0.5).abs() < 0.35).float()  # x = 0.2 ... 0.8: seven steps in the hazard
    assert torch.equal(ep["costs"][:, 0], inside) and ep["G_c"][0] == 7
    y = 0.1 * torch.arange(1, 13, dtype=torch.float32).clamp(max=10)  # the second env walks up to the wall y = 1
    assert torch.allclose(ep["rewards"][:, 1], -torch.sqrt(1 + y ** 2), atol=1e-5)
    assert ep["G_c"][1] == 0  # x = 0 lies outside the triangle at every height y >= 0


def test_env_partial_cut_and_apex_detour_by_hand():
    # three plans: go up to height h (h / 0.1 steps), then right (the wall x = 1.5 stops them); T = 16
    env = HazardNav(3, horizon=16, step_size=0.1, start_jitter=0.0)
    ups = torch.tensor([0, 3, 6])

    def act(obs, t):
        return torch.where((t < ups)[:, None], torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.0]))

    ep = rollout(env, act)
    # height 0: x = 0.2 .. 0.8 inside (7 steps); height 0.3: half-width 0.14, x = 0.4, 0.5, 0.6 (3 steps);
    # height 0.6: above the apex, no cost
    assert ep["G_c"].tolist() == [7.0, 3.0, 0.0]
    for k, h in enumerate([0.0, 0.3, 0.6]):
        n_up = int(ups[k])
        pos = [(0.0, 0.1 * (i + 1)) for i in range(n_up)] + [(min(0.1 * (i + 1), 1.5), h) for i in range(16 - n_up)]
        pos = torch.tensor(pos)
        assert torch.allclose(ep["obs"][1:, k], pos, atol=1e-5)
        assert torch.allclose(ep["rewards"][:, k], -(pos - torch.tensor([1.0, 0.0])).norm(dim=-1), atol=1e-5)
    assert ep["G_r"][0] > ep["G_r"][1] > ep["G_r"][2]  # less cost, less return: a real trade-off


def test_score_objective_in_return_units():
    s = MonotoneScore(8, torch.Generator().manual_seed(3))
    g_r, g_c = torch.randn(64, generator=G) * 3, torch.rand(64, generator=G) * 5
    s.set_normaliser(g_r, g_c)
    k = float(return_slope(s, g_r, g_c).mean())
    assert (return_slope(s, g_r, g_c) >= 0).all() and k > 0
    x = g_r.clone().requires_grad_(True)
    j = score_objective(s, x, g_c, k)
    assert torch.allclose(j, s(g_r, g_c).detach() / k)
    (gx,) = torch.autograd.grad(j.sum(), (x,))
    assert gx.mean().item() == pytest.approx(1.0, rel=1e-4)  # unit mean return slope, like G^r - lambda G^c
    assert all(p.requires_grad for p in s.parameters())  # the score is frozen only during the call
    with pytest.raises(ValueError, match="return_slope"):
        score_objective(s, g_r, g_c, 0.0)


def test_score_does_not_depend_on_the_units_of_return_and_cost():
    # G^r -> a G^r + b, G^c -> k G^c (a, k > 0): same labels, same fitted score, lambda_eff in the new units
    g_r, g_c = torch.randn(96, generator=G) * 2 - 6, torch.poisson(torch.full((96,), 2.0), generator=G)
    a, b, k = 10.0, 3.0, 0.25
    for tol in (0.0, 0.1):
        assert torch.equal(dominance_matrix(g_r, g_c, tol), dominance_matrix(a * g_r + b, k * g_c, tol))
    s1, s2 = MonotoneScore(8, torch.Generator().manual_seed(4)), MonotoneScore(8, torch.Generator().manual_seed(4))
    fit_score(s1, g_r, g_c, 60, tol=0.1)
    fit_score(s2, a * g_r + b, k * g_c, 60, tol=0.1)
    with torch.no_grad():
        assert torch.allclose(s1(g_r, g_c), s2(a * g_r + b, k * g_c), atol=1e-4)
    lam1 = effective_multiplier(s1, g_r, g_c)
    lam2 = effective_multiplier(s2, a * g_r + b, k * g_c)
    assert torch.allclose(lam2, lam1 * a / k, rtol=1e-3)  # return per unit cost, in the new units


def test_dominance_shares_by_hand_and_equal_to_the_rank_target_terms():
    br = torch.tensor([-6.0, -6.0, -5.0, -7.0])
    bc = torch.tensor([0.0, 1.0, 2.0, 0.0])
    beats, beaten = dominance_shares(torch.tensor([-5.5, -6.0]), torch.tensor([0.0, 1.0]), br, bc)
    # (-5.5, 0) beats (-6, 0), (-6, 1), (-7, 0); nothing beats it. (-6, 1) beats nothing (tie with (-6, 1))
    # and is beaten by (-6, 0)
    assert beats.tolist() == [0.75, 0.0] and beaten.tolist() == [0.0, 0.25]
    g_r, g_c = torch.randn(40, generator=G), torch.rand(40, generator=G) * 3
    for tol in (0.0, 0.1):
        bt, bn = dominance_shares(g_r, g_c, g_r, g_c, tol)
        assert torch.allclose(bt - bn, rank_targets(g_r, g_c, tol))  # a batch member gets exactly its target
    with pytest.raises(ValueError):
        dominance_shares(torch.zeros(2), torch.zeros(2), torch.zeros(0), torch.zeros(0))
    with pytest.raises(ValueError):
        dominance_shares(torch.zeros(2), torch.zeros(3), br, bc)


def test_score_objective_of_the_mean_outcome():
    s = MonotoneScore(8, torch.Generator().manual_seed(5))
    g_r, g_c = torch.randn(2, 16, generator=G), torch.rand(2, 16, generator=G)
    s.set_normaliser(g_r.flatten(), g_c.flatten())
    j = score_objective(s, g_r, g_c, 2.0, of_mean=True)
    assert j.shape == g_r.shape
    want = s(g_r.mean(1), g_c.mean(1)).detach() / 2.0
    assert torch.allclose(j, want[:, None].expand(2, 16))
    with pytest.raises(ValueError, match="usb_objective"):
        get_config("smoke", usb_objective="median")


def test_pareto_mask_by_hand():
    r = torch.tensor([-4.5, -4.8, -5.0, -6.0, -4.8])
    c = torch.tensor([5.0, 0.0, 0.0, 2.0, 0.0])
    # (-5, 0) and (-6, 2) are dominated by (-4.8, 0); the two copies of (-4.8, 0) do not dominate each other
    assert pareto_mask(r, c).tolist() == [True, True, False, False, True]
    with pytest.raises(ValueError):
        pareto_mask(r, c[:3])


def test_reference_front_recovers_the_hand_computed_straight_path_and_is_graded():
    f = reference_front(lambdas=(0.0, 0.3, 3.0), n_offsets=6, iters=150)
    # lambda = 0: straight at full speed, distances 0.9, 0.8, ..., 0 -> return -4.5, seven hazard steps
    assert f["best_cost"][0] == 7 and f["best_return"][0] == pytest.approx(-4.5, abs=0.05)
    assert f["best_cost"][2] == 0 and f["best_return"][2] < 1.2 * f["best_return"][0]  # safety costs > 20 %
    assert 0 < f["best_cost"][1] < 7  # a middle weight takes a partial cut
    assert f["returns"].shape == (3, 6)
    assert len(f["front_cost"]) >= 3 and (torch.diff(f["front_return"]) > 0).all()  # graded, cost sorted
    with pytest.raises(ValueError):
        reference_front(lambdas=(-1.0,))


def test_reference_front_best_plan_per_lambda_is_taken_over_all_candidates():
    # each lambda's best plan must be the best of ALL candidate plans (those optimised for the
    # other weights too), not only of the plans optimised for that lambda
    f = reference_front()
    lam = f["lambdas"]
    for k in range(lam.numel()):
        best_obj = f["best_return"][k] - lam[k] * f["best_cost"][k]
        all_obj = (f["returns"] - lam[k] * f["costs"]).max()
        assert float(best_obj) >= float(all_obj) - 1e-6, f"lambda {float(lam[k])}"
    # the best objective value can only fall as the weight grows (costs are >= 0)
    objs = f["best_return"] - lam * f["best_cost"]
    assert (torch.diff(objs) <= 1e-6).all()


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


def test_dual_ascent():
    assert dual_ascent(0.0, 0.5, 1.0, 0.1) == 0.0 and dual_ascent(0.0, 3.0, 1.0, 0.1) == pytest.approx(0.2)


def test_bad_input_rejected():
    with pytest.raises(ValueError, match="lambdas"):
        get_config("smoke", lambdas=(-1.0,))
    with pytest.raises(ValueError, match="policy_lr"):
        get_config("smoke", policy_lr=0.0)
    with pytest.raises(ValueError, match="imagined_rollouts"):
        get_config("smoke", imagined_rollouts=0)
    with pytest.raises(ValueError):
        get_config("smoke", horizon=1)
    with pytest.raises(ValueError, match="hazard_apex"):
        get_config("smoke", hazard_apex=1.5)
    with pytest.raises(ValueError, match="hazard_half_width"):
        get_config("smoke", hazard_half_width=0.6)
    # the score's batch must keep imagined outcomes: all-real batches are refused at config time
    for frac in (1.0, 1.5, -0.1):
        with pytest.raises(ValueError, match=r"score_real_frac must lie in \[0, 1\)"):
            get_config("smoke", score_real_frac=frac)
    with pytest.raises(ValueError, match="no imagined outcome"):
        get_config("smoke", score_real_frac=0.999)  # rounds to a batch of real outcomes only
    assert get_config("smoke", score_real_frac=0.0).score_real_frac == 0.0
    assert get_config("smoke", score_real_frac=0.9).score_real_frac == 0.9
    with pytest.raises(ValueError):
        HazardNav(4, hazard_apex=0.0)
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
        dual_ascent(0.0, 1.0, -1.0, 0.1)


def test_reduced_is_the_evidence_pipeline_with_fewer_rollouts_and_seeds():
    """The page's run is the evidence record's pipeline with 3 seeds (rule 1's minimum) and half the
    imagined rollouts per policy step; every other knob is shared."""
    from dataclasses import asdict

    r, e = asdict(get_config("reduced")), asdict(get_config("evidence"))
    assert {k for k in r if r[k] != e[k]} == {"imagined_rollouts", "n_seeds"}
    assert (r["imagined_rollouts"], r["n_seeds"]) == (32, 3) and (e["imagined_rollouts"], e["n_seeds"]) == (64, 10)


def test_smoke_run_end_to_end():
    cfg = get_config("smoke", device="cpu")
    trained = []
    res = ex.run_experiment(cfg, 0, trained=trained)
    assert res["seeds"] == [0, 1, 2] and len(trained) == 3
    tab = ex.outcome_table(res)
    assert tab["returns"].shape == (cfg.n_seeds, len(ex.method_names(cfg)))
    assert np.isfinite(tab["returns"]).all() and (tab["costs"] >= 0).all()
    assert all(m["grid"] == 0 and m["pairs"] == 0 for m in res["monotonicity"])  # monotone by construction
    ledger = claims.build_ledger(res)
    assert [e.status for e in ledger._ordered()] == SMOKE_STATUSES
    assert ex.policy_paths(trained[0], cfg, 2).shape == (len(tab["names"]), 2, cfg.horizon + 1, 2)


SMOKE_STATUSES = ["NOT TESTED", "INCONCLUSIVE", "INCONCLUSIVE"]  # smoke agents are below the competence bar
