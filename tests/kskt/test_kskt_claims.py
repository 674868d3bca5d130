import pytest

from icml26.common.ledger import INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED
from icml26.kskt import claims
from icml26.kskt.claims import (C1_MIN_PROBE_GAP, CEILING, E1_MAX_SLOT_DEFICIT, decide_c1, decide_c2, decide_c3,
                                decide_e1)

G = C1_MIN_PROBE_GAP


def test_claim_ids():
    assert claims.CLAIM_IDS == ("C1", "C2", "C3")
    assert claims.SOURCE_BASIS == "official code" and claims.STAND_INS == {} and claims.C1_POOL == "late"


OK = [claims.competence("KSKT", [1.0] * 3, [1.0] * 3), claims.competence("baseline", [1.0] * 3, [1.0] * 3)]
WEAK = [OK[0], claims.competence("baseline", [1.0, 0.3, 1.0], [1.0, 0.3, 1.0])]


def test_competence_bar_both_sides():
    bar = claims.CHANCE_R1_R3 + claims.COMPETENCE_MARGIN
    assert claims.competence("KSKT", [bar] * 3, [bar] * 3).passed
    assert not claims.competence("KSKT", [bar, bar - 0.02, bar], [bar] * 3).passed  # the worst seed decides
    assert WEAK[1].figure == pytest.approx(0.3) and not WEAK[1].passed
    for decided in (decide_c2([0.95] * 3, [0.90] * 3, WEAK), decide_c3([0.0] * 3, [0.05] * 3, [0.0] * 3, [0.9] * 3, WEAK),
                    decide_c1([0.3] * 3, [0.3] * 3, [1.0] * 3, WEAK[1:])):
        assert decided.status == INCONCLUSIVE and "rule 2" in decided.reason


def test_rule_1_seed_test_with_five_seeds():
    # one seed of five goes the other way, but the seed-level t-test is significant: REPRODUCED, fragile
    s = decide_c2([0.95, 0.96, 0.95, 0.97, 0.899], [0.90] * 5, OK)
    assert s.status == REPRODUCED and s.fragile
    s = decide_c3([0.0] * 5, [0.05, 0.06, 0.05, 0.07, 0.01], [0.0] * 5, [0.9] * 5, OK)
    assert s.status == REPRODUCED and not s.fragile
    # r2 beats the baseline by the seed-level test, but in one seed its gain is not the largest
    s = decide_c3([0.0] * 5, [0.05, 0.06, 0.05, 0.07, -0.001], [0.0] * 5, [0.9] * 5, OK)
    assert s.status == PARTLY_REPRODUCED and "largest" in s.reason and s.fragile


def test_c1_boundaries():
    assert decide_c1([G] * 3, [G] * 3, [1.0] * 3).status == REPRODUCED
    no_grad = decide_c1([0.3] * 3, [0.3] * 3, [1.0, 0.0, 1.0])  # the sanity check fails: a bug, not a result
    assert no_grad.status == INCONCLUSIVE and "sanity check" in no_grad.reason
    assert "sanity check" in next(iter(k for k in no_grad.figures if "balance" in k))
    one = decide_c1([0.3] * 3, [G - 0.01] * 3, [1.0] * 3)
    assert one.status == PARTLY_REPRODUCED and "self" in one.reason
    assert decide_c1([0.0] * 3, [0.0] * 3, [1.0] * 3).status == NOT_REPRODUCED
    mixed = decide_c1([0.3, 0.05, 0.3], [0.3, 0.05, 0.3], [1.0] * 3)
    assert mixed.status == INCONCLUSIVE and mixed.fragile


def test_c1_bad_input():
    with pytest.raises(ValueError):
        decide_c1([0.3] * 2, [0.3] * 2, [1.0] * 2)  # fewer than 3 seeds
    with pytest.raises(ValueError):
        decide_c1([0.3] * 3, [0.3] * 3, [1.0] * 2)
    with pytest.raises(TypeError):
        decide_c1([True] * 3, [0.3] * 3, [1.0] * 3)
    with pytest.raises(TypeError):
        decide_c1("0.3", [0.3] * 3, [1.0] * 3)


def test_c2_boundaries():
    assert decide_c2([0.91] * 3, [0.90] * 3).status == REPRODUCED
    assert decide_c2([0.90] * 3, [0.90] * 3).status == NOT_REPRODUCED  # a tie does not beat
    assert decide_c2([0.91, 0.89, 0.91], [0.90] * 3).status == INCONCLUSIVE
    ceil = decide_c2([1.0] * 3, [CEILING] * 3)
    assert ceil.status == INCONCLUSIVE and "ceiling" in ceil.reason
    assert decide_c2([1.0] * 3, [CEILING - 0.01] * 3).status == REPRODUCED
    with pytest.raises(ValueError):
        decide_c2([0.9] * 3, [0.9] * 4)


def test_c3_boundaries():
    zero = [0.0] * 3
    assert decide_c3(zero, [0.05] * 3, zero, [0.9] * 3).status == REPRODUCED
    part = decide_c3([0.06] * 3, [0.05] * 3, zero, [0.9] * 3)
    assert part.status == PARTLY_REPRODUCED and part.reason
    assert decide_c3(zero, [0.0] * 3, zero, [0.9] * 3).status == NOT_REPRODUCED
    assert decide_c3(zero, [0.05, -0.01, 0.05], zero, [0.9] * 3).status == INCONCLUSIVE
    assert decide_c3(zero, [0.01] * 3, zero, [CEILING] * 3).status == INCONCLUSIVE
    with pytest.raises(ValueError):
        decide_c3(zero, [0.05] * 3, zero, [0.9] * 2)
    with pytest.raises(TypeError):
        decide_c3(zero, [0.05, None, 0.05], zero, [0.9] * 3)


def test_e1_boundaries():
    assert decide_e1([0.9] * 3, [0.9 + E1_MAX_SLOT_DEFICIT] * 3).status == REPRODUCED
    assert decide_e1([0.9] * 3, [0.93] * 3).status == NOT_REPRODUCED
    with pytest.raises(ValueError):
        decide_e1([0.9] * 3, [0.9] * 2)


def test_checked_lines_fit_the_code_column():
    entries = (decide_c1([0.3] * 3, [0.3] * 3, [1.0] * 3), decide_c2([0.9] * 3, [0.8] * 3),
               decide_c3([0.0] * 3, [0.1] * 3, [0.0] * 3, [0.8] * 3))
    for entry in entries:
        assert len("C1 PARTLY REPRODUCED (fragile): " + entry.claim) <= 100, entry.claim
    assert len("E1 (ours) NOT REPRODUCED: " + decide_e1([0.9] * 3, [0.9] * 3).claim) <= 100
