"""The DMAWM claims' decision functions on hand-made figures: both sides of every boundary,
competence gates (rule 2), the by-construction mark (rule 3) and bad input."""

import pytest

from icml26.common.ledger import INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED, Competence
from icml26.dmawm import claims as cl

OK = [Competence("reward", 0.9, cl.REWARD_R2_MIN)]
BAD = [Competence("reward", cl.REWARD_R2_MIN - 0.01, cl.REWARD_R2_MIN)]


def test_contract():
    assert cl.CLAIM_IDS == ("C1", "C2", "C3") and cl.STAND_INS == {} and cl.SOURCE_BASIS == "abstract and README"


def test_c1_boundaries_by_construction_and_bad_input():
    st = cl.decide_c1([cl.C1_PROBE_CHANCE_MAX] * 3, [cl.C1_PROBE_JOINT_MIN] * 3)
    assert st.status == REPRODUCED and st.by_construction and st.property_claim
    assert cl.decide_c1([cl.C1_PROBE_CHANCE_MAX + 0.01] * 3, [1.0] * 3).status == NOT_REPRODUCED
    assert cl.decide_c1([0.5] * 3, [cl.C1_PROBE_JOINT_MIN - 0.01] * 3).status == INCONCLUSIVE
    st = cl.decide_c1([0.5, 0.5, 0.5], [1.0, 1.0, 0.8])
    assert st.status == INCONCLUSIVE and st.fragile
    for bad in ([1.2] * 3, [-0.1] * 3):
        with pytest.raises(ValueError):
            cl.decide_c1(bad, [1.0] * 3)
    with pytest.raises(ValueError, match="at least 3"):
        cl.decide_c1([0.5] * 2, [1.0] * 2)


def test_c2_statuses_and_competence():
    assert cl.decide_c2([0.1] * 3, [0.9] * 3, OK).status == REPRODUCED
    assert cl.decide_c2([0.9] * 3, [0.1] * 3, OK).status == NOT_REPRODUCED
    assert cl.decide_c2([0.5] * 3, [0.5] * 3, OK).status == NOT_REPRODUCED  # equal gaps: not smaller
    st = cl.decide_c2([0.1, 0.1, 0.9], [0.2, 0.2, 0.1], OK)
    assert st.status == INCONCLUSIVE and st.fragile
    st = cl.decide_c2([0.1] * 3, [0.9] * 3, BAD)  # a reward head that never learned: decides nothing
    assert st.status == INCONCLUSIVE and "rule 2" in st.reason


def _c3(d, j, mf, auc=None, conv=(True, True, True), comp=OK):
    success = {"dmawm": d, "joint": j, "model_free": mf}
    auc = auc or success
    return cl.decide_c3(success, auc, list(conv), 10, comp)


def test_c3_statuses():
    assert _c3([0.9] * 3, [0.5] * 3, [0.5] * 3).status == REPRODUCED
    st = _c3([0.9] * 3, [0.95] * 3, [0.5] * 3)
    assert st.status == PARTLY_REPRODUCED and "joint" in st.reason
    assert _c3([0.5] * 3, [0.9] * 3, [0.9] * 3).status == NOT_REPRODUCED
    # not reproduced, but DMAWM still improving at the cap in one seed: INCONCLUSIVE
    st = _c3([0.5] * 3, [0.9] * 3, [0.9] * 3, conv=(True, False, True))
    assert st.status == INCONCLUSIVE and "cap" in st.reason
    # better but slower (curve mean lower in every seed): PARTLY per baseline
    st = _c3([0.9] * 3, [0.5] * 3, [0.5] * 3, auc={"dmawm": [0.4] * 3, "joint": [0.5] * 3, "model_free": [0.3] * 3})
    assert st.status == PARTLY_REPRODUCED


def test_c3_competence_gates():
    st = _c3([0.9] * 3, [0.5] * 3, [0.5] * 3, comp=BAD)
    assert st.status == INCONCLUSIVE and "rule 2" in st.reason
    learned = cl.learned_competence({"dmawm": [0.7] * 3, "joint": [0.5] * 3})
    assert not learned.passed and cl.learned_competence({"dmawm": [0.75] * 3}).passed
    assert cl.reward_competence("dmawm", [0.5, 0.5, 0.5]).passed
    assert not cl.reward_competence("dmawm", [0.49, 0.5, 0.5]).passed


def test_curve_mean():
    assert cl.curve_mean([{"success": 0.2}, {"success": 0.4}], 4) == pytest.approx((0.2 + 0.4 * 3) / 4)
    with pytest.raises(ValueError):
        cl.curve_mean([{"success": 0.2}] * 5, 4)
