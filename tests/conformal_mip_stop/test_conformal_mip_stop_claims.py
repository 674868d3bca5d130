"""The conformal_mip_stop claims' decision functions on hand-made figures: both sides of every
status boundary, and bad input."""

import json

import numpy as np
import pytest

from icml26.common.ledger import INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED, Competence
from icml26.conformal_mip_stop import claims as C

ALPHA, POOL = 0.1, 60
BAR = 1 - ALPHA - C.coverage_slack(ALPHA, POOL)  # 0.9 - 0.0775
INF2 = {"a": True, "b": True}


def test_contract_names():
    assert C.CLAIM_IDS == ("C1", "C2") and C.SOURCE_BASIS == "official code" and C.STAND_INS == {}


def test_informative_boundaries():
    assert C.is_informative(C.INFORMATIVE_MIN_FINITE_TAU, C.INFORMATIVE_MAX_FIRST_GOOD)
    assert not C.is_informative(C.INFORMATIVE_MIN_FINITE_TAU - 0.01, 0.0)
    assert not C.is_informative(1.0, C.INFORMATIVE_MAX_FIRST_GOOD + 0.01)


def test_c1_boundaries():
    assert C.decide_c1({"a": [0.95] * 3, "b": [BAR] * 3}, INF2, ALPHA, POOL).status == REPRODUCED
    st = C.decide_c1({"a": [0.95] * 3, "b": [BAR - 1e-6] * 3}, INF2, ALPHA, POOL)
    assert st.status == PARTLY_REPRODUCED and "b: NOT REPRODUCED" in st.reason
    assert C.decide_c1({"a": [0.5] * 3, "b": [0.5] * 3}, INF2, ALPHA, POOL).status == NOT_REPRODUCED
    mixed = C.decide_c1({"a": [0.95, BAR - 0.05, 0.95]}, {"a": True}, ALPHA, POOL)
    assert mixed.status == INCONCLUSIVE and mixed.fragile


def test_c1_leaves_out_an_uninformative_family():
    st = C.decide_c1({"a": [0.95] * 3, "b": [0.5] * 3}, {"a": True, "b": False}, ALPHA, POOL)
    assert st.status == REPRODUCED and st.figures["uninformative (left out)"] == "b"
    none = C.decide_c1({"a": [0.95] * 3}, {"a": False}, ALPHA, POOL)
    assert none.status == INCONCLUSIVE and "no informative family" in none.reason


def test_c1_needs_three_seeds():
    one = C.decide_c1({"a": [0.95]}, {"a": True}, ALPHA, POOL, items={"a": [0.9, 1.0, 0.95]})
    assert one.status == INCONCLUSIVE and "evidence preset" in one.reason


def _pairs(ref_minus_stop, n=30):
    ref = np.full(n, 100.0)
    return ref, ref - np.asarray(ref_minus_stop, float)


FAST, NONE = _pairs(np.linspace(30, 60, 30)), _pairs(np.zeros(30))
OK = Competence("predictor", 0.5, C.COMPETENCE_MAX_LOSS_RATIO, higher_is_better=False)


def _c2(saved, pairs, oracle=0.9, informative=None, comp=None):
    fams = list(saved)
    return C.decide_c2({f: [saved[f]] * 3 for f in fams}, {f: [0.1] * 3 for f in fams},
                       {f: [pairs[f]] * 3 for f in fams}, {f: [oracle] * 3 for f in fams},
                       informative or {f: True for f in fams}, comp or {f: OK for f in fams})


def test_c2_boundaries():
    assert _c2({"a": C.C2_MIN_SAVED, "b": 0.9}, {"a": FAST, "b": FAST}).status == REPRODUCED
    st = _c2({"a": C.C2_MIN_SAVED - 1e-6, "b": 0.9}, {"a": FAST, "b": FAST})
    assert st.status == PARTLY_REPRODUCED and "a: PARTLY" in st.reason
    st = _c2({"a": 0.5, "b": 0.0}, {"a": FAST, "b": NONE})
    assert st.status == PARTLY_REPRODUCED and "b: NOT REPRODUCED" in st.reason
    assert _c2({"a": 0.0, "b": 0.0}, {"a": NONE, "b": NONE}).status == NOT_REPRODUCED
    # fewer than 30 paired items cannot decide
    assert _c2({"a": 0.5}, {"a": _pairs(np.full(29, 40.0), 29)}).status == INCONCLUSIVE


def test_c2_size_against_the_achievable():
    """Where even the oracle cannot save 60%, a small saving is decided on direction (rule 6)."""
    low = _c2({"a": 0.2}, {"a": FAST}, oracle=0.5)
    assert low.status == REPRODUCED and "not comparable" in low.reason
    assert _c2({"a": 0.2}, {"a": FAST}, oracle=0.6).status == PARTLY_REPRODUCED


def test_c2_competence_and_informative_gates():
    weak = Competence("predictor", 0.95, C.COMPETENCE_MAX_LOSS_RATIO, higher_is_better=False)
    st = _c2({"a": 0.9}, {"a": FAST}, comp={"a": weak})
    assert st.status == INCONCLUSIVE and "FAILS" in st.reason
    st = _c2({"a": 0.9, "b": 0.0}, {"a": FAST, "b": NONE}, informative={"a": True, "b": False})
    assert st.status == REPRODUCED and "uninformative" in st.reason
    one = C.decide_c2({"a": [0.9]}, {"a": [0.1]}, {"a": [FAST]}, {"a": [0.9]}, {"a": True}, {"a": OK})
    assert one.status == INCONCLUSIVE and "rule 1" in one.reason


def test_extensions():
    assert C.decide_e1({"a": [0.95], "b": [0.89]}, ALPHA).status == REPRODUCED
    assert C.decide_e1({"a": [0.95], "b": [0.9]}, ALPHA).status == NOT_REPRODUCED
    assert C.decide_e2({"a": [0.0], "b": [0.89]}, ALPHA).status == REPRODUCED
    assert C.decide_e2({"a": [0.0], "b": [0.9]}, ALPHA).status == PARTLY_REPRODUCED


def test_bad_input():
    with pytest.raises(ValueError, match="alpha"):
        C.decide_c1({"a": [0.9] * 3}, {"a": True}, 1.0, POOL)
    with pytest.raises(ValueError, match="family"):
        C.decide_c1({}, {}, ALPHA, POOL)
    with pytest.raises(ValueError, match="non-finite"):
        C.decide_c1({"a": [float("nan")] * 3}, {"a": True}, ALPHA, POOL)
    with pytest.raises(ValueError, match="informative flags"):
        C.decide_c1({"a": [0.9] * 3}, {"b": True}, ALPHA, POOL)
    with pytest.raises(ValueError, match="one pair"):
        C.decide_c2({"a": [0.5] * 3}, {"a": [0.1] * 3}, {"b": [FAST] * 3}, {"a": [0.9] * 3}, {"a": True}, {"a": OK})
    with pytest.raises(ValueError, match="per_seed"):
        C.build_ledger({"seeds": [0]})


def _family(cov, saved, finite=1.0, first_good=0.2):
    return {"coverage": {"conformal": [cov] * 10, "uncalibrated": [0.95] * 10, "first incumbent": [0.0] * 10},
            "work_saved": [saved] * 10, "wall_saved": [saved / 2] * 10, "finite_tau_share": finite,
            "first_good_share": first_good, "oracle_work_saved": 0.95,
            "fixed_split": {"work_ref": FAST[0].tolist(), "work_stop": FAST[1].tolist()},
            "predictor": {"loss": 0.2, "midpoint_loss": 1.0}}


def test_build_ledger_reports_a_degenerate_family_and_survives_json():
    from icml26.evidence import from_plain, to_plain

    results = {"seeds": [0, 1, 2], "alpha": ALPHA, "n_pool": POOL, "n_cal": 30, "families": ["mis", "cflp"],
               "per_seed": [{"seed": s, "families": {"mis": _family(1.0, 0.99, finite=0.0, first_good=0.98),
                                                     "cflp": _family(0.9, 0.6)}} for s in range(3)]}
    ledger = C.build_ledger(results)
    again = C.build_ledger(from_plain(json.loads(json.dumps(to_plain(results)))))
    assert again.check_lines() == ledger.check_lines()
    c1, c2 = ledger.entries["C1"], ledger.entries["C2"]
    assert c1.status == REPRODUCED and c1.figures["uninformative (left out)"] == "mis"
    assert c2.status == REPRODUCED and [c.arm for c in c2.competence] == ["gap predictor, cflp (loss / untrained)"]
