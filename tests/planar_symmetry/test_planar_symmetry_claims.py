"""The planar_symmetry ledger's decision functions on hand-made figures, both sides of every boundary."""

import numpy as np
import pytest

from icml26.common.ledger import NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED
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


def _errs(scale, n=200, seed=0):
    return list(np.random.default_rng(seed).random(n) * scale)


def test_c3_boundaries():
    g = ("p4", "p3")
    small, large = {k: 30.0 for k in g}, {k: 30.0 + cl.C3_MIN_GAIN_DB for k in g}
    es, el = {k: _errs(1.0) for k in g}, {k: _errs(0.1) for k in g}
    assert cl.decide_c3(small, large, es, el).status == REPRODUCED
    st = cl.decide_c3(small, large | {"p3": 30.0 + cl.C3_MIN_GAIN_DB - 0.01}, es, el)
    assert st.status == PARTLY_REPRODUCED and "p3" in st.reason
    # the error does not fall on any group (paired test fails): NOT REPRODUCED
    assert cl.decide_c3(small, large, el, es).status == NOT_REPRODUCED
    # falls on one group only
    assert cl.decide_c3(small, large, es | {"p3": el["p3"]}, el).status == PARTLY_REPRODUCED
    with pytest.raises(ValueError, match="same groups"):
        cl.decide_c3(small, {"p4": 40.0}, es, el)
    with pytest.raises(ValueError, match="at least 30"):
        cl.decide_c3(small, large, {k: _errs(1.0, 10) for k in g}, {k: _errs(0.1, 10) for k in g})


def test_c4_and_e1():
    assert cl.decide_c4(1, 3, 0.5, 4.0).status == REPRODUCED
    st = cl.decide_c4(2, 3, 0.5, 4.0)
    assert st.status == NOT_REPRODUCED and "2 pieces" in st.reason
    assert cl.decide_c4(0, 3, 0.5, 4.0).status == NOT_REPRODUCED
    m = cl.E1_MAX_PSNR_GAP_DB
    assert cl.decide_e1({"p4": 40.0 - m, "p3": 40.0}, {"p4": 40.0, "p3": 40.0}).status == REPRODUCED
    e1 = cl.decide_e1({"p4": 40.0 - m - 0.01, "p3": 40.0}, {"p4": 40.0, "p3": 40.0})
    assert e1.status == PARTLY_REPRODUCED and e1.extension
    assert cl.decide_e1({"p4": 30.0}, {"p4": 40.0}).status == NOT_REPRODUCED


def test_bad_input():
    with pytest.raises(TypeError):
        cl.decide_c4(True, 3, 0.5, 4.0)
    with pytest.raises(TypeError):
        cl.decide_c4(1.0, 3, 0.5, 4.0)
    with pytest.raises(TypeError):
        cl.decide_c1(ALL | {"p3": "small"})
    with pytest.raises(TypeError):
        cl.decide_c1([1e-15] * 17)
    with pytest.raises(ValueError, match="NaN"):
        cl.decide_e1({"p4": float("nan")}, {"p4": 40.0})
    with pytest.raises(TypeError):
        cl.decide_c2({g: True for g in WALLPAPER_GROUPS}, {g: 9.0 for g in WALLPAPER_GROUPS})
