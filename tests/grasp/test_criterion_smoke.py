import torch

from icml26.grasp import get_config, pass_criterion, reproduction_check, run_experiment


def _fig(a12, p12, a24, p24, bb, ba, pb, pa):
    return {"agent acc n=12": a12, "passive acc n=12": p12, "agent acc n=24": a24, "passive acc n=24": p24,
            "blind acc before GRPO": bb, "blind acc after GRPO": ba, "probe-first before": pb, "probe-first after": pa}


def test_criterion_known_answers():
    cfg = get_config("reduced")
    good = pass_criterion(_fig(0.95, 0.5, 0.9, 0.3, 0.4, 0.9, 0.3, 0.9), cfg)
    assert all(good.values())
    bad = pass_criterion(_fig(0.7, 0.5, 0.7, 0.6, 0.9, 0.95, 0.9, 0.95), cfg)
    assert not any(bad.values())
    edge = pass_criterion(_fig(0.8, 0.5, 0.8, 0.5, 0.5, 0.65, 0.5, 0.7), cfg)  # exactly at the thresholds
    assert edge["(a) agent - passive >= 0.30 at small n"] and edge["(a) agent >= 0.8 at large n"]
    assert not edge["(a) passive falls with size"]


def test_smoke_end_to_end():
    torch.set_num_threads(1)
    cfg = get_config("smoke")
    r = run_experiment(cfg, torch.device("cpu"))
    claim, measured, checks = reproduction_check(r)
    assert claim and len(checks) == 5 and all(isinstance(v, bool) for v in checks.values())
    assert all(0.0 <= v <= 1.0 for v in measured.values())
