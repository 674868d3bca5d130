"""The diffusion_bridge ledger's decision functions on hand-made figures, both sides of every boundary."""

import pytest

from icml26.common.ledger import INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED
from icml26.diffusion_bridge import claims as cl

BAR = cl.CHANCE + cl.C1_MIN_ACC_OVER_CHANCE


def test_claim_ids_match_claims_md():
    assert cl.CLAIM_IDS == ("C1", "C2")


def test_c1_boundaries():
    ref = [1.0, 1.0, 1.0]
    assert cl.decide_c1([0.5] * 3, [1.0] * 3, ref).status == REPRODUCED
    assert cl.decide_c1([BAR] * 3, [cl.C1_MAX_MMD_RATIO] * 3, ref).status == REPRODUCED
    st = cl.decide_c1([BAR - 0.01] * 3, [1.0] * 3, ref)
    assert st.status == PARTLY_REPRODUCED and "keeping content" in st.reason
    st = cl.decide_c1([0.5] * 3, [cl.C1_MAX_MMD_RATIO + 0.01] * 3, ref)
    assert st.status == PARTLY_REPRODUCED and "landing" in st.reason
    assert cl.decide_c1([0.1] * 3, [3.0] * 3, ref).status == NOT_REPRODUCED
    st = cl.decide_c1([0.5, 0.1, 0.5], [1.0] * 3, ref)
    assert st.status == INCONCLUSIVE and st.fragile


def test_c2_boundaries():
    full = [0.86] * 3
    assert cl.decide_c2([0.85] * 3, [0.80] * 3, full).status == REPRODUCED
    assert cl.decide_c2([0.82] * 3, [0.82] * 3, full).status == PARTLY_REPRODUCED  # close, not above
    g = cl.C2_MAX_GAP_TO_FULL
    assert cl.decide_c2([0.86 - g + 1e-9] * 3, [0.5] * 3, full).status == REPRODUCED
    st = cl.decide_c2([0.86 - g - 0.01] * 3, [0.5] * 3, full)
    assert st.status == PARTLY_REPRODUCED and "nearing" in st.reason
    assert cl.decide_c2([0.5] * 3, [0.6] * 3, full).status == NOT_REPRODUCED
    assert cl.decide_c2([0.85, 0.79, 0.85], [0.80] * 3, full).status == INCONCLUSIVE


def test_extensions():
    assert cl.decide_e1([0.5] * 3).status == REPRODUCED
    e1 = cl.decide_e1([0.1] * 3)
    assert e1.status == NOT_REPRODUCED and e1.extension
    d = cl.E2_MAX_DROP_FULL
    assert cl.decide_e2([0.85 - d + 1e-9] * 3, [0.85] * 3).status == REPRODUCED
    assert cl.decide_e2([0.85 - d - 0.005] * 3, [0.85] * 3).status == NOT_REPRODUCED
    m = cl.E3_MIN_PSNR_GAIN
    assert cl.decide_e3([16.0 + m + 1e-9] * 3, [16.0] * 3).status == REPRODUCED
    assert cl.decide_e3([16.0 + m - 0.01] * 3, [16.0] * 3).status == NOT_REPRODUCED


def test_bad_input():
    with pytest.raises(ValueError, match="at least 3"):
        cl.decide_e1([0.5, 0.5])
    with pytest.raises(ValueError, match="for 3 seeds"):
        cl.decide_c2([0.8] * 3, [0.8] * 2, [0.8] * 3)
    with pytest.raises(TypeError):
        cl.decide_c1([True] * 3, [1.0] * 3, [1.0] * 3)
    with pytest.raises(TypeError):
        cl.decide_e3("16", [16.0] * 3)
    with pytest.raises(ValueError, match="non-finite"):
        cl.decide_c1([0.5] * 3, [float("inf")] * 3, [1.0] * 3)
    with pytest.raises(ValueError, match="positive"):
        cl.decide_c1([0.5] * 3, [1.0] * 3, [0.0] * 3)
