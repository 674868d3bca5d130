"""The reconfigure ledger's decision functions on hand-made figures, both sides of every boundary."""

import pytest

from icml26.common.ledger import INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED, Ledger
from icml26.reconfigure import claims as cl

C = ("Fly-Walk", "Car-Leg", "Wheel-Swim")
FIRST = [0.4] * 3  # first segment's share of the course, per seed
BODIES = ("flyer", "swimmer", "walker", "wheel")


def prog(v):
    return {k: v for k in C}


def seeds(v, n=3):
    return [prog(v) for _ in range(n)]


def test_ids_contract_and_achievable():
    assert cl.CLAIM_IDS == ("C1", "C2", "C3", "C4") and cl.STAND_INS == {}
    assert cl.achievable_gain(prog(0.4)) == pytest.approx(2.5)
    assert cl.mean_gain(prog(0.8), prog(0.4)) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="courses differ"):
        cl.mean_gain({"Fly-Walk": 1.0}, prog(1.0))


def test_c1_direction_decides_when_the_paper_size_is_out_of_reach():
    # baseline at 0.4: achievable 2.5x < 5.95x -> not comparable, decided on direction (rule 6)
    s = cl.decide_c1(seeds(0.8), seeds(0.4), [0.3] * 3, FIRST)
    assert s.status == REPRODUCED and "out of reach" in s.reason
    assert s.figures["fraction of the achievable gain"] == pytest.approx((2.0 - 1) / (2.5 - 1))
    assert cl.decide_c1(seeds(0.36), seeds(0.4), [0.2] * 3, FIRST).status == NOT_REPRODUCED
    mixed = cl.decide_c1([prog(0.8), prog(0.8), prog(0.38)], seeds(0.4), [0.2] * 3, FIRST)
    assert mixed.status == INCONCLUSIVE and mixed.fragile


def test_c1_size_applies_when_the_ceiling_reaches_the_paper():
    # baseline at 0.1: achievable 10x >= 5.95x -> the half-size bar 3.475x applies
    need = 1 + (cl.PAPER_GAIN_FIXED - 1) / 2
    assert cl.decide_c1(seeds(0.1 * need + 1e-6), seeds(0.1), [0.0] * 3, [0.1] * 3).status == REPRODUCED
    s = cl.decide_c1(seeds(0.1 * need - 0.01), seeds(0.1), [0.0] * 3, [0.1] * 3)
    assert s.status == PARTLY_REPRODUCED and "half" in s.reason


def test_c1_c2_competence_bars():
    m = cl.SCHEDULER_MARGIN
    # the scheduler must beat the random scheduler by the margin
    ok = cl.decide_c1(seeds(0.8), seeds(0.4), [0.8 - m] * 3, FIRST)
    assert ok.status == REPRODUCED
    bad = cl.decide_c1(seeds(0.8), seeds(0.4), [0.8 - m + 0.01] * 3, FIRST)
    assert bad.status == INCONCLUSIVE and "rule 2" in bad.reason
    # a baseline must reach BASELINE_FRACTION of the first segment's share
    bar = cl.BASELINE_FRACTION * 0.4
    assert cl.decide_c2(seeds(0.8), seeds(bar), [0.2] * 3, FIRST).status == REPRODUCED
    low = cl.decide_c2(seeds(0.8), seeds(bar - 0.01), [0.2] * 3, FIRST)
    assert low.status == INCONCLUSIVE and "rule 2" in low.reason


def test_gain_claims_need_three_seeds():
    s = cl.decide_c1(seeds(0.8, 2), seeds(0.4, 2), [0.2] * 2, [0.4] * 2)
    assert s.status == INCONCLUSIVE and "rule 1" in s.reason and s.fragile
    with pytest.raises(ValueError):
        cl.decide_c1(seeds(0.8), seeds(0.4, 2), [0.2] * 3, FIRST)


def sub(v):
    return {b: v for b in BODIES}


def test_c3_per_body_over_seeds():
    oracle = [sub(1.0)] * 3
    leak = [0.0] * 3
    assert cl.decide_c3([sub(0.6)] * 3, [sub(0.5)] * 3, oracle, leak).status == REPRODUCED
    mixed = [{"flyer": 0.4, "swimmer": 0.4, "walker": 0.6, "wheel": 0.6}] * 3
    s = cl.decide_c3(mixed, [sub(0.5)] * 3, oracle, leak)
    assert s.status == PARTLY_REPRODUCED and "walker" in s.reason and "flyer" in s.reason
    assert cl.decide_c3([sub(0.4)] * 3, [sub(0.5)] * 3, oracle, leak).status == NOT_REPRODUCED
    # competence: every primitive covers PRIMITIVE_FRACTION of the achievable distance
    f = cl.PRIMITIVE_FRACTION
    assert cl.decide_c3([sub(f + 0.1)] * 3, [sub(f)] * 3, oracle, leak).status == REPRODUCED
    s = cl.decide_c3([sub(f + 0.1)] * 3, [sub(f - 0.01)] * 3, oracle, leak)
    assert s.status == INCONCLUSIVE and "rule 2" in s.reason
    # the sanity check (zero leak, true by construction) never decides; a leak is a bug
    s = cl.decide_c3([sub(0.6)] * 3, [sub(0.5)] * 3, oracle, [0.0, 1e-9, 0.0])
    assert s.status == INCONCLUSIVE and "bug" in s.reason
    assert cl.decide_c3([sub(0.6)] * 2, [sub(0.5)] * 2, oracle[:2], leak[:2]).status == INCONCLUSIVE
    # seeds that disagree on every body: undecided, and the reason names the budget that would decide
    split = [sub(0.6), sub(0.4), sub(0.6)]
    s = cl.decide_c3(split, [sub(0.5)] * 3, oracle, leak)
    assert s.status == INCONCLUSIVE and "no body is helped consistently" in s.reason
    assert "full preset (5 seeds, 200 PPO iterations on 2,048 environments)" in s.reason


def test_c4_against_the_chance_baseline():
    ours, rnd = [0.8] * 3, [0.2] * 3
    assert cl.decide_c4([0.7] * 3, [0.5] * 3, [10] * 3, ours, rnd).status == REPRODUCED
    assert cl.decide_c4([0.5] * 3, [0.5] * 3, [10] * 3, ours, rnd).status == NOT_REPRODUCED
    s = cl.decide_c4([0.7, 0.7, 0.4], [0.5] * 3, [10] * 3, ours, rnd)
    assert s.status == INCONCLUSIVE and s.fragile
    s = cl.decide_c4([0.7] * 3, [0.5] * 3, [10, 0, 10], ours, rnd)
    assert s.status == INCONCLUSIVE and "never switches" in s.reason
    s = cl.decide_c4([0.7] * 3, [0.5] * 3, [10] * 3, [0.2] * 3, rnd)
    assert s.status == INCONCLUSIVE and "rule 2" in s.reason


def test_extensions():
    leg = cl.E1_STEP_MAX / 0.6
    assert cl.decide_e1([leg + 1e-6] * 3).status == REPRODUCED
    assert cl.decide_e1([leg - 0.01] * 3).status == NOT_REPRODUCED
    assert cl.decide_e2([0.8] * 3, [0.1] * 3).status == REPRODUCED
    assert cl.decide_e2([0.1] * 3, [0.1] * 3).status == NOT_REPRODUCED
    assert cl.decide_e2([0.8], [0.1]).status == INCONCLUSIVE


def fake_results(n=3):
    run = {"progress": {"ours": prog(0.8), "fixed": prog(0.4), "codesign": prog(0.45), "no_eps": prog(0.2),
                        "random": prog(0.3)},
           "first_segment_share": prog(0.4), "subtask": {"multi_tail": sub(0.6), "no_stage": sub(0.5)},
           "subtask_oracle": sub(1.0), "tail_leak": {"multi_tail": 0.0, "no_stage": 0.1},
           "switch_timing": {"share": 0.7, "chance_share": 0.5, "switches": 20.0}, "designs": {"walker": 0.9}}
    return {"seeds": list(range(n)), "per_seed": [run] * n}


def test_build_ledger_is_a_pure_function_of_the_results():
    import json

    led = cl.build_ledger(fake_results())
    assert isinstance(led, Ledger)
    assert [led.entries[c].status for c in cl.CLAIM_IDS] == [REPRODUCED] * 4
    again = cl.build_ledger(json.loads(json.dumps(fake_results())))
    assert again.check_lines() == led.check_lines()
    assert cl.build_ledger(fake_results(1)).verdict() == INCONCLUSIVE
