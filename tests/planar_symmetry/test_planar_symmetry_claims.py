"""The planar_symmetry ledger's decision functions on hand-made figures, both sides of every boundary."""

import numpy as np
import pytest

from icml26.common.ledger import INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED
from icml26.planar_symmetry import claims as cl
from icml26.planar_symmetry.groups import WALLPAPER_GROUPS

ALL = {g: 1e-15 for g in WALLPAPER_GROUPS}


def test_claim_ids_match_claims_md():
    assert cl.CLAIM_IDS == ("C1", "C2", "C3", "C4")


def test_c1_boundaries():
    assert cl.decide_c1(ALL).status == REPRODUCED
    t = cl.C1_MAX_INVARIANCE_ERROR
    assert cl.decide_c1(ALL | {"p3": t * 0.99}).status == REPRODUCED
    st = cl.decide_c1(ALL | {"p3": t})
    assert st.status == PARTLY_REPRODUCED and "p3" in st.reason
    assert cl.decide_c1({g: 1.0 for g in WALLPAPER_GROUPS}).status == NOT_REPRODUCED
    with pytest.raises(ValueError, match="17 wallpaper"):
        cl.decide_c1({"p1": 0.0})


def test_c2_boundaries():
    eq3 = {g: 1.0 for g in WALLPAPER_GROUPS}
    naive = {g: 9.0 for g in WALLPAPER_GROUPS}
    assert cl.decide_c2(eq3, naive).status == REPRODUCED
    t = cl.C2_MAX_TEAR_CONTINUOUS
    assert cl.decide_c2(eq3 | {"p6": t}, naive).status == REPRODUCED
    assert cl.decide_c2(eq3 | {"p6": t + 0.01}, naive).status == PARTLY_REPRODUCED
    n = cl.C2_MIN_TEAR_NAIVE
    assert cl.decide_c2(eq3, naive | {"pg": n}).status == REPRODUCED
    st = cl.decide_c2(eq3, naive | {"pg": n - 0.01})
    assert st.status == PARTLY_REPRODUCED and "pg" in st.reason
    assert cl.decide_c2({g: 10.0 for g in eq3}, naive).status == NOT_REPRODUCED
    with pytest.raises(ValueError, match="naive"):
        cl.decide_c2(eq3, {"p1": 9.0})


def test_contract_names():
    assert cl.SOURCE_BASIS == "full-text summary" and cl.STAND_INS == {}


def test_c1_is_a_property_claim_by_construction():
    st = cl.decide_c1(ALL)
    assert st.by_construction and st.property_claim and not st.fragile


def test_c3_boundaries():
    g = ("p4", "p3")
    small, large = {k: 30.0 for k in g}, {k: 30.0 + cl.C3_MIN_GAIN_DB + 2 for k in g}
    p_ok, p_no = {k: 1e-6 for k in g}, {k: 0.5 for k in g}
    assert cl.decide_c3(small, large, p_ok).status == REPRODUCED
    at = cl.decide_c3(small, {k: 30.0 + cl.C3_MIN_GAIN_DB for k in g}, p_ok)  # gain exactly at the bar holds
    assert at.status == REPRODUCED and at.fragile  # the interval across groups touches the bar
    st = cl.decide_c3(small, large | {"p3": 30.0 + cl.C3_MIN_GAIN_DB - 0.01}, p_ok)
    assert st.status == PARTLY_REPRODUCED and "p3" in st.reason and st.fragile
    # the error does not fall on any group (paired test fails): NOT REPRODUCED
    assert cl.decide_c3(small, large, p_no).status == NOT_REPRODUCED
    # p exactly at alpha is not significant; falls on one group only: PARTLY
    assert cl.decide_c3(small, large, p_ok | {"p3": cl.C3_ALPHA}).status == PARTLY_REPRODUCED
    assert cl.decide_c3({"p4": 30.0}, {"p4": 40.0}, {"p4": 1e-6}).fragile  # one group: no spread
    with pytest.raises(ValueError, match="same groups"):
        cl.decide_c3(small, {"p4": 40.0}, p_ok)


def test_c4_binarised_designs_over_seeds():
    assert cl.decide_c4([1, 1, 1], [0.01, 0.0, 0.02], [9, 9, 9]).status == REPRODUCED
    st = cl.decide_c4([2, 3, 2], [0.01] * 3, [9, 9, 9])
    assert st.status == NOT_REPRODUCED and "3 of 3" in st.reason
    mixed = cl.decide_c4([1, 2, 1], [0.01] * 3, [9, 9, 9])
    assert mixed.status == INCONCLUSIVE and mixed.fragile
    assert cl.decide_c4([0, 0, 0], [0.0] * 3, [9, 9, 9]).status == NOT_REPRODUCED  # nothing left
    # a grey design decides nothing, whatever its pieces
    grey = cl.decide_c4([1, 1, 1], [0.01, cl.C4_MAX_GREY + 1e-6, 0.0], [9, 9, 9])
    assert grey.status == INCONCLUSIVE and "grey" in grey.reason
    assert cl.decide_c4([1, 1, 1], [cl.C4_MAX_GREY] * 3, [9, 9, 9]).status == REPRODUCED  # at the bar
    with pytest.raises(ValueError):
        cl.decide_c4([1, 1], [0.0] * 2, [9, 9])  # fewer than 3 designs
    with pytest.raises(ValueError):
        cl.decide_c4([1, 1, 1], [0.0] * 2, [9, 9, 9])


def test_e1():
    m = cl.E1_MAX_PSNR_GAP_DB
    assert cl.decide_e1({"p4": 40.0 - m, "p3": 40.0}, {"p4": 40.0, "p3": 40.0}).status == REPRODUCED
    e1 = cl.decide_e1({"p4": 40.0 - m - 0.01, "p3": 40.0}, {"p4": 40.0, "p3": 40.0})
    assert e1.status == PARTLY_REPRODUCED and e1.extension
    assert cl.decide_e1({"p4": 30.0}, {"p4": 40.0}).status == NOT_REPRODUCED


def test_bad_input():
    with pytest.raises(TypeError):
        cl.decide_c4([True, 1, 1], [0.0] * 3, [9, 9, 9])
    with pytest.raises(TypeError):
        cl.decide_c1(ALL | {"p3": "small"})
    with pytest.raises(TypeError):
        cl.decide_c1([1e-15] * 17)
    with pytest.raises(ValueError, match="NaN"):
        cl.decide_e1({"p4": float("nan")}, {"p4": 40.0})
    with pytest.raises(TypeError):
        cl.decide_c2({g: True for g in WALLPAPER_GROUPS}, {g: 9.0 for g in WALLPAPER_GROUPS})
