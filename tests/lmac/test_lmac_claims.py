import pytest

from icml26.common.ledger import INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED
from icml26.lmac import claims
from icml26.lmac.claims import (C1_MAX_SPREAD, C1_MIN_SR, C2_MIN_GAIN, C3_MIN_MARGIN, E1_MAX_MSG_FRAC, decide_c1,
                                decide_c2, decide_c3, decide_e1)

D = "rule-based stand-in"


def test_claim_ids_match_claims_md():
    assert claims.CLAIM_IDS == ("C1", "C2", "C3")


def test_c1_boundaries():
    assert decide_c1([C1_MIN_SR] * 3, [C1_MAX_SPREAD] * 3, D).status == REPRODUCED
    assert decide_c1([C1_MIN_SR - 0.01] * 3, [0.0] * 3, D).status == NOT_REPRODUCED
    assert decide_c1([0.95] * 3, [C1_MAX_SPREAD + 0.01] * 3, D).status == NOT_REPRODUCED
    mixed = decide_c1([0.95, 0.95, 0.85], [0.02] * 3, D)
    assert mixed.status == INCONCLUSIVE and mixed.fragile and mixed.reason
    assert D in decide_c1([0.95] * 3, [0.0] * 3, D).claim


def test_c1_bad_input():
    with pytest.raises(ValueError):
        decide_c1([0.95] * 2, [0.0] * 2, D)  # fewer than 3 seeds
    with pytest.raises(ValueError):
        decide_c1([0.95] * 3, [0.0] * 4, D)
    with pytest.raises(TypeError):
        decide_c1([True, True, True], [0.0] * 3, D)
    with pytest.raises(TypeError):
        decide_c1([0.95] * 3, [0.0] * 3, "")


def test_c2_boundaries():
    a0, g0 = [0.5] * 3, [0.2] * 3
    assert decide_c2(a0, [0.5 + C2_MIN_GAIN] * 3, g0, [0.1] * 3, D).status == REPRODUCED
    part = decide_c2(a0, [0.9] * 3, g0, [0.2] * 3, D)  # gap not narrower
    assert part.status == PARTLY_REPRODUCED and part.reason
    assert decide_c2(a0, [0.5 + C2_MIN_GAIN - 0.01] * 3, g0, [0.1] * 3, D).status == NOT_REPRODUCED
    assert decide_c2(a0, [0.9, 0.9, 0.55], g0, [0.1] * 3, D).status == INCONCLUSIVE
    with pytest.raises(ValueError):
        decide_c2(a0, [0.9] * 3, g0, [0.1] * 2, D)
    with pytest.raises(TypeError):
        decide_c2(a0, "0.9", g0, [0.1] * 3, D)


def test_c3_boundaries():
    base = {"NoComm": [0.1] * 3, "FullComm": [0.5] * 3, "TarMAC": [0.6] * 3}
    assert decide_c3({"LMAC": [0.6 + C3_MIN_MARGIN] * 3, **base}, D).status == REPRODUCED
    part = decide_c3({"LMAC": [0.62] * 3, **base}, D)  # beats NoComm, FullComm; not TarMAC
    assert part.status == PARTLY_REPRODUCED and "TarMAC" in part.reason
    assert decide_c3({"LMAC": [0.1] * 3, **base}, D).status == NOT_REPRODUCED
    inc = decide_c3({"LMAC": [0.12, 0.2, 0.12], **base}, D)  # only seed 2 beats NoComm
    assert inc.status == INCONCLUSIVE and inc.fragile
    with pytest.raises(ValueError, match="lacks"):
        decide_c3({"LMAC": [0.9] * 3, "NoComm": [0.1] * 3}, D)
    with pytest.raises(ValueError):
        decide_c3({"LMAC": [0.9] * 2, **{k: v[:2] for k, v in base.items()}}, D)
    with pytest.raises(ValueError):
        decide_c3({"LMAC": [0.9] * 3, **base, "TarMAC": [0.5] * 4}, D)
    with pytest.raises(TypeError):
        decide_c3([0.9, 0.1], D)


def test_e1_boundaries_and_bad_input():
    assert decide_e1(25, 100).status == REPRODUCED
    assert decide_e1(26, 100).status == NOT_REPRODUCED
    assert E1_MAX_MSG_FRAC == 0.25 and decide_e1(0, 10).claim_id == "E1"
    with pytest.raises(TypeError):
        decide_e1(True, 10)
    with pytest.raises(TypeError):
        decide_e1(2.5, 10)
    with pytest.raises(ValueError):
        decide_e1(1, 0)


def test_checked_lines_fit_the_code_column():
    longest = "C1 PARTLY REPRODUCED (fragile): "
    for entry in (decide_c1([0.95] * 3, [0.0] * 3, D), decide_c2([0.5] * 3, [0.9] * 3, [0.2] * 3, [0.1] * 3, D),
                  decide_c3({"LMAC": [0.9] * 3, "NoComm": [0.1] * 3, "FullComm": [0.1] * 3, "TarMAC": [0.1] * 3}, D)):
        assert len(longest + entry.claim) <= 100, entry.claim
    assert len("E1 (ours) NOT REPRODUCED: " + decide_e1(1, 10).claim) <= 100
