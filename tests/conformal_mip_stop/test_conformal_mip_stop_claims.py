"""The conformal_mip_stop claims' decision functions on hand-made figures: both sides of every
status boundary, and bad input."""

import numpy as np
import pytest

from icml26.common.ledger import INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED
from icml26.conformal_mip_stop import claims as C

ALPHA, POOL = 0.1, 60
BAR = 1 - ALPHA - C.coverage_slack(ALPHA, POOL)  # 0.9 - 0.0775


def test_claim_ids():
    assert C.CLAIM_IDS == ("C1", "C2")


def test_c1_boundaries():
    assert C.decide_c1({"a": [0.95], "b": [BAR]}, ALPHA, POOL).status == REPRODUCED
    st = C.decide_c1({"a": [0.95], "b": [BAR - 1e-6]}, ALPHA, POOL)
    assert st.status == PARTLY_REPRODUCED and "b" in st.reason
    assert C.decide_c1({"a": [0.5], "b": [0.5]}, ALPHA, POOL).status == NOT_REPRODUCED
    assert C.decide_c1({"a": [BAR - 0.05, BAR + 0.05]}, ALPHA, POOL).fragile


def _pairs(ref_minus_stop, n=30):
    ref = np.full(n, 100.0)
    return ref, ref - np.asarray(ref_minus_stop, float)


def test_c2_boundaries():
    fast = _pairs(np.linspace(30, 60, 30))
    none = _pairs(np.zeros(30))
    ok = C.decide_c2({"a": [C.C2_MIN_SAVED], "b": [0.9]}, {"a": fast, "b": fast})
    assert ok.status == REPRODUCED
    st = C.decide_c2({"a": [C.C2_MIN_SAVED - 1e-6], "b": [0.9]}, {"a": fast, "b": fast})
    assert st.status == PARTLY_REPRODUCED and "half" in st.reason
    st = C.decide_c2({"a": [0.5], "b": [0.0]}, {"a": fast, "b": none})
    assert st.status == PARTLY_REPRODUCED and "b" in st.reason
    assert C.decide_c2({"a": [0.0], "b": [0.0]}, {"a": none, "b": none}).status == NOT_REPRODUCED
    # fewer than 30 paired items cannot decide
    assert C.decide_c2({"a": [0.5]}, {"a": _pairs(np.full(29, 40.0), 29)}).status == INCONCLUSIVE


def test_extensions():
    assert C.decide_e1({"a": [0.95], "b": [0.89]}, ALPHA).status == REPRODUCED
    assert C.decide_e1({"a": [0.95], "b": [0.9]}, ALPHA).status == NOT_REPRODUCED
    assert C.decide_e2({"a": [0.0], "b": [0.89]}, ALPHA).status == REPRODUCED
    assert C.decide_e2({"a": [0.0], "b": [0.9]}, ALPHA).status == PARTLY_REPRODUCED
    assert C.decide_e1({"a": [0.95]}, ALPHA).claim_id == "E1"


def test_bad_input():
    with pytest.raises(ValueError, match="alpha"):
        C.decide_c1({"a": [0.9]}, 1.0, POOL)
    with pytest.raises(ValueError, match="family"):
        C.decide_c1({}, ALPHA, POOL)
    with pytest.raises(ValueError, match="finite"):
        C.decide_c1({"a": [float("nan")]}, ALPHA, POOL)
    with pytest.raises(ValueError, match="paired items"):
        C.decide_c2({"a": [0.5]}, {"b": _pairs(np.ones(30))})
    with pytest.raises(ValueError, match="equal lengths"):
        C.decide_c2({"a": [0.5]}, {"a": (np.ones(30), np.ones(31))})
