"""Tests of the reconfigure chapter: env physics, staged advantages, presets, bad input, smoke run."""

import pytest
import torch

from icml26.reconfigure import (
    MultiTailPolicy, ReconfCourse, gae, get_config, make_courses, make_subtask,
    run_seed, staged_advantages, summarize, velocity_and_energy,
)
from icml26.reconfigure.env import FLAT, FLYER, PIT, STAIRS, WALKER, WATER, WHEEL


def test_gae_matches_discounted_return_when_lambda_one():
    r = torch.rand(7, 5)
    v = torch.rand(7, 5)
    adv = gae(r, v, gamma=0.9, lam=1.0)
    disc = 0.9 ** torch.arange(7.0)
    ret0 = (disc[:, None] * r).sum(0)
    assert torch.allclose(adv[0] + v[0], ret0, atol=1e-5)


def test_staged_advantages_multi_tail_uses_design_value():
    cfg = get_config("smoke")
    r, vc, vd = torch.rand(6, 4), torch.rand(6, 4), torch.rand(4)
    adv_d, tgt_d, adv_c, _ = staged_advantages(r, vc, vd, cfg, multi_tail=True)
    assert torch.allclose(adv_d, tgt_d - vd)
    # the control advantages do not depend on V_design in the multi-tail form ...
    adv_d2, _, adv_c2, _ = staged_advantages(r, vc, vd + 5.0, cfg, multi_tail=True)
    assert torch.allclose(adv_c, adv_c2) and torch.allclose(adv_d2, adv_d - 5.0)
    # ... and the one-chain ablation gives a different design advantage
    adv_d1, _, _, _ = staged_advantages(r, vc, vd, cfg, multi_tail=False)
    assert not torch.allclose(adv_d1, adv_d)


def test_physics_rules():
    n = 4
    cfg = torch.tensor([WALKER, WALKER, WHEEL, FLYER])
    xi = torch.tensor([1.0, 0.0, 1.0, 0.5])
    terr = torch.tensor([STAIRS, STAIRS, WATER, PIT])
    v, e, fail = velocity_and_energy(cfg, xi, terr, torch.full((n,), 0.5), torch.ones(n))
    assert v[0] > 0 and v[1] == 0  # long legs climb a 0.5 step, short legs do not
    assert fail.tolist() == [False, False, True, False]  # wheels swamp in water; flyers cross pits
    assert (e > 0).all()
    v2, _, fail2 = velocity_and_energy(torch.tensor([WHEEL]), torch.tensor([1.0]), torch.tensor([FLAT]),
                                       torch.tensor([0.4]), torch.tensor([1.0]))
    assert v2[0] > v[3] and not fail2[0]


def test_course_progress_and_failure():
    env, ids = make_courses(["Fly-Walk"], 3, torch.Generator().manual_seed(0), torch.device("cpu"))
    c = torch.full((3,), WHEEL)
    for _ in range(200):
        env.step(c, torch.ones(3), torch.ones(3))
    # a wheel stops for good at the pit: progress equals the first segment's share
    assert env.failed.all()
    share = env.lengths[:, 0] / env.total
    assert torch.all((env.progress() - share).abs() < 0.05)


def test_policy_tails_are_separate():
    pol = MultiTailPolicy(16, multi_tail=True)
    obs = torch.randn(5, pol.trunk[0].in_features)
    mu_c, _, v_c = pol(obs, torch.zeros(5, dtype=torch.bool))
    mu_d, _, v_d = pol(obs, torch.ones(5, dtype=torch.bool))
    assert not torch.allclose(mu_c, mu_d) and not torch.allclose(v_c, v_d)
    single = MultiTailPolicy(16, multi_tail=False)
    a, _, b = single(obs, torch.zeros(5, dtype=torch.bool))
    a2, _, b2 = single(obs, torch.ones(5, dtype=torch.bool))
    assert torch.allclose(a, a2) and torch.allclose(b, b2)


def test_bad_inputs():
    with pytest.raises(ValueError, match="smoke"):
        get_config("huge")
    with pytest.raises(ValueError):
        get_config("smoke", n_envs=0)
    with pytest.raises(ValueError, match="unknown course"):
        make_courses(["Moon"], 2, torch.Generator(), torch.device("cpu"))
    with pytest.raises(ValueError, match="unknown terrain"):
        make_subtask("lava", 2, torch.Generator(), torch.device("cpu"))
    with pytest.raises(ValueError, match=r"\[N, K\]"):
        ReconfCourse(torch.zeros(3, dtype=torch.long), torch.ones(3), torch.ones(3))
    with pytest.raises(ValueError, match="obs must be"):
        MultiTailPolicy(8)(torch.zeros(2, 3), torch.zeros(2, dtype=torch.bool))


def test_smoke_run_end_to_end():
    torch.set_num_threads(1)
    cfg = get_config("smoke")
    res = run_seed(cfg, 0, torch.device("cpu"))
    summ = summarize([res])
    for arm, per in summ["progress"].items():
        assert all(0.0 <= v <= 1.0 for v in per.values()), arm
    from icml26.reconfigure.claims import decide_all
    statuses = decide_all(res)
    assert [st.claim_id for st in statuses] == ["C1", "C2", "C3", "C4", "E1", "E2"]
    n = 3 * cfg.n_eval
    assert all(len(res["items"][a]) == n for a in ("ours", "no_eps", "fixed", "codesign"))
    # the per-item baseline is the best body per course: its mean per course matches the summary
    ids = res["course_ids"]
    for i, k in enumerate(("Fly-Walk", "Car-Leg", "Wheel-Swim")):
        assert abs(float(res["items"]["fixed"][ids == i].mean()) - res["progress"]["fixed"][k]) < 1e-6
    assert res["tail_leak"]["multi_tail"] == 0.0 and res["tail_leak"]["no_stage"] > 0.0


def test_boundary_gap():
    from icml26.reconfigure.scheduler import boundary_gap
    env = ReconfCourse(torch.zeros(1, 3, dtype=torch.long), torch.tensor([[1.0, 0.5, 1.0]]), torch.zeros(1))
    env.reset()
    for x, want in ((0.0, 1.0), (0.9, 0.1), (1.2, 0.2), (1.45, 0.05), (2.3, 0.8)):
        env.x = torch.tensor([x])
        assert abs(float(boundary_gap(env)[0]) - want) < 1e-6, x
