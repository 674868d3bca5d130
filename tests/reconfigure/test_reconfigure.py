"""Tests of the reconfigure chapter: env physics, staged advantages, presets, bad input, smoke run."""

import pytest
import torch

from icml26.reconfigure import (
    MultiTailPolicy, ReconfCourse, gae, get_config, make_courses, make_subtask,
    run_experiment, staged_advantages, velocity_and_energy,
)
from icml26.reconfigure.env import FLAT, FLYER, PIT, STAIRS, WALKER, WATER, WHEEL


def test_gae_matches_discounted_return_when_lambda_one(device):
    r = torch.rand(7, 5, device=device)
    v = torch.rand(7, 5, device=device)
    adv = gae(r, v, gamma=0.9, lam=1.0)
    disc = 0.9 ** torch.arange(7.0, device=device)
    ret0 = (disc[:, None] * r).sum(0)
    assert torch.allclose(adv[0] + v[0], ret0, atol=1e-5)


def test_staged_advantages_multi_tail_uses_design_value(device):
    cfg = get_config("smoke")
    r, vc, vd = (torch.rand(6, 4, device=device), torch.rand(6, 4, device=device), torch.rand(4, device=device))
    adv_d, tgt_d, adv_c, _ = staged_advantages(r, vc, vd, cfg, multi_tail=True)
    assert torch.allclose(adv_d, tgt_d - vd)
    # the control advantages do not depend on V_design in the multi-tail form ...
    adv_d2, _, adv_c2, _ = staged_advantages(r, vc, vd + 5.0, cfg, multi_tail=True)
    assert torch.allclose(adv_c, adv_c2) and torch.allclose(adv_d2, adv_d - 5.0)
    # ... and the one-chain ablation gives a different design advantage
    adv_d1, _, _, _ = staged_advantages(r, vc, vd, cfg, multi_tail=False)
    assert not torch.allclose(adv_d1, adv_d)


def test_physics_rules(device):
    n = 4
    t = lambda v: torch.tensor(v, device=device)  # noqa: E731
    cfg = t([WALKER, WALKER, WHEEL, FLYER])
    xi = t([1.0, 0.0, 1.0, 0.5])
    terr = t([STAIRS, STAIRS, WATER, PIT])
    v, e, fail = velocity_and_energy(cfg, xi, terr, torch.full((n,), 0.5, device=device), torch.ones(n, device=device))
    assert v[0] > 0 and v[1] == 0  # long legs climb a 0.5 step, short legs do not
    assert fail.tolist() == [False, False, True, False]  # wheels swamp in water; flyers cross pits
    assert (e > 0).all()
    v2, _, fail2 = velocity_and_energy(t([WHEEL]), t([1.0]), t([FLAT]), t([0.4]), t([1.0]))
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


def test_policy_tails_are_separate(device):
    pol = MultiTailPolicy(16, multi_tail=True).to(device)
    obs = torch.randn(5, pol.trunk[0].in_features, device=device)
    no, yes = torch.zeros(5, dtype=torch.bool, device=device), torch.ones(5, dtype=torch.bool, device=device)
    mu_c, _, v_c = pol(obs, no)
    mu_d, _, v_d = pol(obs, yes)
    assert not torch.allclose(mu_c, mu_d) and not torch.allclose(v_c, v_d)
    single = MultiTailPolicy(16, multi_tail=False).to(device)
    a, _, b = single(obs, no)
    a2, _, b2 = single(obs, yes)
    assert torch.allclose(a, a2) and torch.allclose(b, b2)


def test_config_validation_names_the_field():
    for bad, field in (({"n_envs": 0}, "n_envs"), ({"n_seeds": 0}, "n_seeds"), ({"switch_cost": -1}, "switch_cost"),
                       ({"gamma": 0.0}, "gamma"), ({"lam": 1.5}, "lam"), ({"lr": 0.0}, "lr"),
                       ({"eps_start": 0.01, "eps_end": 0.5}, "eps_end"), ({"ppo_minibatches": 5}, "ppo_minibatches"),
                       ({"horizon": 2.5}, "horizon")):
        with pytest.raises(ValueError, match=field):
            get_config("smoke", **bad)
    assert get_config("smoke", n_seeds=1).n_seeds == 1


def test_bad_inputs():
    with pytest.raises(ValueError, match="unknown course"):
        make_courses(["Moon"], 2, torch.Generator(), torch.device("cpu"))
    with pytest.raises(ValueError, match="unknown terrain"):
        make_subtask("lava", 2, torch.Generator(), torch.device("cpu"))
    with pytest.raises(ValueError, match=r"\[N, K\]"):
        ReconfCourse(torch.zeros(3, dtype=torch.long), torch.ones(3), torch.ones(3))
    with pytest.raises(ValueError, match="obs must be"):
        MultiTailPolicy(8)(torch.zeros(2, 3), torch.zeros(2, dtype=torch.bool))


def test_switch_timing_against_its_chance_baseline():
    from icml26.reconfigure.experiment import switch_timing

    # 3 decisions x 2 courses; the first decision (t = 0) is never a switch
    gaps = torch.tensor([[9.0, 9.0], [0.1, 0.1], [0.5, 0.9]])
    sw = torch.tensor([[False, False], [True, False], [False, True]])
    out = switch_timing({"decision_gaps": gaps, "decision_switches": sw}, 0.25)
    assert out["switches"] == 2 and out["share"] == pytest.approx(0.5)
    # each course: one switch; half of its later decisions lie within the window
    assert out["chance_share"] == pytest.approx(0.5)
    none = switch_timing({"decision_gaps": gaps, "decision_switches": torch.zeros_like(sw)}, 0.25)
    assert none == {"switches": 0.0, "share": 0.0, "chance_share": 0.0}


def test_smoke_run_end_to_end_and_its_ledger():
    import json

    from icml26.evidence import from_plain, to_plain
    from icml26.reconfigure.claims import build_ledger

    cfg = get_config("smoke")
    res = run_experiment(cfg, 0, torch.device("cpu"))
    assert res["seeds"] == [0, 1, 2] and len(res["per_seed"]) == 3
    for arm, per in res["summary"]["progress"].items():
        assert all(0.0 <= v <= 1.0 for v in per.values()), arm
    first = res["per_seed"][0]
    assert first["tail_leak"]["multi_tail"] == 0.0 and first["tail_leak"]["no_stage"] > 0.0
    assert all(first["subtask_oracle"][b] >= first["subtask"]["multi_tail"][b] - 1e-6 for b in first["subtask_oracle"])
    ledger = build_ledger(res)
    plain = from_plain(json.loads(json.dumps(to_plain(res))))
    assert build_ledger(plain).check_lines() == ledger.check_lines()
    assert {c: ledger.entries[c].status for c in ("C1", "C2", "C3", "C4")} == SMOKE_STATUSES


SMOKE_STATUSES = {"C1": "INCONCLUSIVE", "C2": "INCONCLUSIVE", "C3": "INCONCLUSIVE", "C4": "INCONCLUSIVE"}


def test_boundary_gap():
    from icml26.reconfigure.scheduler import boundary_gap
    env = ReconfCourse(torch.zeros(1, 3, dtype=torch.long), torch.tensor([[1.0, 0.5, 1.0]]), torch.zeros(1))
    env.reset()
    for x, want in ((0.0, 1.0), (0.9, 0.1), (1.2, 0.2), (1.45, 0.05), (2.3, 0.8)):
        env.x = torch.tensor([x])
        assert abs(float(boundary_gap(env)[0]) - want) < 1e-6, x
