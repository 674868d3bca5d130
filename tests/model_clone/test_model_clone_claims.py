"""The model_clone claims' decision functions on hand-made figures: both sides of every
status boundary, and bad input."""

import pytest

from icml26.common.ledger import INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTED, PARTLY_REPRODUCED, REPRODUCED, robust_status
from icml26.model_clone import claims as C


def test_claim_ids_match_claims_md():
    assert C.CLAIM_IDS == ("C1", "C2", "C3", "C4", "C5")
    assert C.SOURCE_BASIS == "abstract only" and C.STAND_INS == {}


def test_c1_boundaries():
    assert C.decide_c1([1.0, 1.0, 1.0], [0.2, 0.2, C.C1_MAX_OTHER_ARCH]).status == REPRODUCED
    assert C.decide_c1([1.0] * 3, [0.2, 0.2, C.C1_MAX_OTHER_ARCH + 1e-6]).status == PARTLY_REPRODUCED
    assert C.decide_c1([1.0, 1.0, 1 - 1e-6], [0.2] * 3).status == PARTLY_REPRODUCED
    assert C.decide_c1([0.9] * 3, [0.9] * 3).status == NOT_REPRODUCED


def test_c2_boundaries():
    ok = C.decide_c2([C.C2_MIN_PERMUTED] * 3, [C.C2_MAX_ALIGNED] * 3)
    assert ok.status == REPRODUCED
    assert not C.decide_c2([1.0] * 3, [0.1] * 3).fragile
    assert C.decide_c2([1.0, 1.0, C.C2_MIN_PERMUTED - 1e-6], [0.1] * 3).status == INCONCLUSIVE
    assert C.decide_c2([1.0] * 3, [C.C2_MAX_ALIGNED + 1e-6] * 3).status == NOT_REPRODUCED
    assert C.decide_c2([1.0, 1.0, 0.5], [0.1] * 3).fragile


OK = [C.Competence("trained bases (min accuracy)", 0.9, C.BASE_MIN_ACC)]
WEAK = [C.Competence("trained bases (min accuracy)", 0.7, C.BASE_MIN_ACC)]


def test_c3_boundaries():
    base = {"B1": [0.8] * 3, "B2": [0.6] * 3, "B3": [0.85] * 3}
    bar = [C.C3_MIN_AUC] * 3
    assert C.decide_c3([C.C3_MIN_AUC] * 3, base, bar, OK).status == REPRODUCED
    assert C.decide_c3([0.85] * 3, base, [0.85] * 3, OK).status == NOT_REPRODUCED  # equal to B3 is not above it
    assert C.decide_c3([0.86] * 3, base, [0.86] * 3, OK).status == PARTLY_REPRODUCED  # above baselines, under the bar
    high = {**base, "B3": [0.99] * 3}
    st = C.decide_c3([0.95] * 3, high, [0.95] * 3, OK)
    assert st.status == PARTLY_REPRODUCED and "baseline" in st.reason
    st = C.decide_c3([0.95, 0.95, 0.8], base, [0.95] * 3, OK)
    assert st.status == INCONCLUSIVE and st.fragile
    # the hard negatives alone (same architecture, other data) must reach the bar too
    st = C.decide_c3([0.95] * 3, base, [C.C3_MIN_AUC - 0.01] * 3, OK)
    assert st.status == PARTLY_REPRODUCED and "under the bar" in st.reason
    # rule 2: incompetent bases make the comparison INCONCLUSIVE
    st = C.decide_c3([0.95] * 3, base, [0.95] * 3, WEAK)
    assert st.status == INCONCLUSIVE and "rule 2" in st.reason


def test_competence_checks():
    checks = C.competence_checks([0.9, C.BASE_MIN_ACC, 0.95], {"B1": [0.6, 0.7, 0.8], "B2": [0.5, 0.6, 0.6]})
    assert [c.passed for c in checks] == [True, True, True]
    checks = C.competence_checks([0.9, C.BASE_MIN_ACC - 0.01, 0.95], {"B2": [0.49, 0.6, 0.6]})
    assert [c.passed for c in checks] == [False, False]


def test_c2_is_a_sanity_check_that_decides_because_the_claim_is_the_property():
    st = C.decide_c2([1.0] * 3, [0.1] * 3)
    assert st.by_construction and st.property_claim and "(by construction)" in st.check_line()


def test_c4_boundaries():
    assert C.decide_c4([C.C4_MAX_RHO] * 3, OK).status == REPRODUCED
    assert C.decide_c4([-1.0, -1.0, -0.8], OK).status == INCONCLUSIVE
    assert C.decide_c4([-0.5] * 3, OK).status == NOT_REPRODUCED
    assert C.decide_c4([-1.0] * 3, WEAK).status == INCONCLUSIVE


def test_c5_not_tested():
    st = C.decide_c5()
    assert st.status == NOT_TESTED and st.reason


def test_e1_boundaries():
    assert C.decide_e1([0.99] * 3, [0.6] * 3, [0.9904] * 3).status == REPRODUCED  # equal after rounding
    assert C.decide_e1([0.97] * 3, [0.6] * 3, [0.99] * 3).status == NOT_REPRODUCED
    st = C.decide_e1([0.97, 0.99, 0.99], [0.6] * 3, [0.99] * 3)
    assert st.status == INCONCLUSIVE and st.fragile


def test_bad_input():
    with pytest.raises(ValueError, match="seeds"):
        C.decide_c2([1.0, 1.0, 1.0], [0.1, 0.1])  # wrong lengths
    with pytest.raises(ValueError, match="at least 3"):
        C.decide_c4([-1.0, -1.0])  # too few seeds for the robustness rule
    with pytest.raises(ValueError, match="baselines"):
        C.decide_c3([0.9] * 3, {"B1": [0.5] * 3}, [0.9] * 3)
    with pytest.raises(ValueError, match="Spearman"):
        C.decide_c4([-1.5] * 3)
    with pytest.raises(ValueError, match="non-finite"):
        C.decide_c1([float("nan")], [0.1])
    with pytest.raises(TypeError):
        robust_status([1, 1, 1])  # a non-bool outcome
    with pytest.raises(ValueError):
        C.build_ledger({"seeds": [], "figures": []})
