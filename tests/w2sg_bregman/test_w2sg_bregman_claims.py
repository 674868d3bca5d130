"""Decision functions of the w2sg_bregman ledger, on hand-made figures, around every boundary."""

import pytest

from icml26.common.ledger import (INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTED, PARTLY_REPRODUCED, REPRODUCED,
                                  Ledger)
from icml26.w2sg_bregman import claims as C


def test_claim_ids():
    assert C.CLAIM_IDS == ("C1", "C2", "C3", "C4", "C5")
    Ledger("w2sg_bregman", C.CLAIM_IDS)


def test_c1_boundary():
    assert C.decide_c1([1e-15, -3e-9]).status == REPRODUCED
    assert C.decide_c1([0.0, C.C1_IDENTITY_TOL]).status == NOT_REPRODUCED
    with pytest.raises(ValueError):
        C.decide_c1([])
    with pytest.raises(ValueError):
        C.decide_c1([float("nan")])


def test_c2_statuses():
    good_r, good_g = {"sq": 0.99, "kl": 0.95}, {"sq": 0.05, "kl": 0.1}
    assert C.decide_c2([True] * 5, good_r, good_g).status == REPRODUCED
    at_r = C.decide_c2([True] * 5, {"sq": 0.99, "kl": C.C2_MIN_CORRELATION}, good_g)  # r must exceed
    assert at_r.status == PARTLY_REPRODUCED and at_r.reason
    at_g = C.decide_c2([True] * 5, good_r, {"sq": 0.05, "kl": C.C2_MAX_RELATIVE_GAP})  # gap may equal
    assert at_g.status == REPRODUCED
    assert C.decide_c2([True, False, True], good_r, good_g).status == PARTLY_REPRODUCED
    assert C.decide_c2([False] * 3, {"sq": 0.1}, {"sq": 0.9}).status == NOT_REPRODUCED


def test_c2_bad_input():
    with pytest.raises(TypeError):
        C.decide_c2([1, 1, 1], {"sq": 0.9}, {"sq": 0.1})
    with pytest.raises(ValueError):
        C.decide_c2([True] * 3, {"sq": 0.9}, {"kl": 0.1})
    with pytest.raises(ValueError):
        C.decide_c2([True] * 2, {"sq": 0.9}, {"sq": 0.1})  # fewer than 3 seeds


def test_c3_not_tested():
    c3 = C.decide_c3()
    assert c3.status == NOT_TESTED and c3.reason


def test_c4_statuses():
    assert C.decide_c4([0.0, 0.01, 0.0], [0.3, 0.3, 0.3], 0.01, 0.02).status == REPRODUCED
    assert C.decide_c4([0.0, 0.01, 0.0], [0.3, 0.3, 0.3], 0.03, 0.02).status == PARTLY_REPRODUCED
    assert C.decide_c4([0.3, 0.3, 0.3], [0.3, 0.3, 0.3], 0.01, 0.02).status == NOT_REPRODUCED  # equal: not less
    mixed = C.decide_c4([0.0, 0.5, 0.0], [0.3, 0.3, 0.3], 0.01, 0.02)
    assert mixed.status == INCONCLUSIVE and mixed.fragile
    with pytest.raises(ValueError):
        C.decide_c4([0.0, 0.0], [0.1, 0.1, 0.1], 0.0, 0.0)


def test_c5_statuses():
    assert C.decide_c5([0.8, 0.8, 0.8], [0.7, 0.7, 0.7]).status == REPRODUCED
    assert C.decide_c5([0.7, 0.7, 0.7], [0.7, 0.7, 0.7]).status == NOT_REPRODUCED
    assert C.decide_c5([0.8, 0.6, 0.8], [0.7, 0.7, 0.7]).status == INCONCLUSIVE
    with pytest.raises(ValueError):
        C.decide_c5([0.8, 0.8], [0.7, 0.7])  # two seeds
    with pytest.raises(ValueError):
        C.decide_c5([0.8] * 3, [0.7] * 4)


def test_e1():
    assert C.decide_e1({"sq": 1.0, "kl": C.E1_MIN_FRACTION}, [True] * 3).status == REPRODUCED
    assert C.decide_e1({"sq": 1.0, "kl": 0.79}, [True] * 3).status == NOT_REPRODUCED
    assert C.decide_e1({"sq": 1.0}, [True, False, True]).status == NOT_REPRODUCED
    with pytest.raises(TypeError):
        C.decide_e1({"sq": 1.0}, ["yes"] * 3)


def test_ledger_statuses_rejects_empty_rows():
    with pytest.raises(ValueError):
        C.ledger_statuses([], [{"loss": "ce"}])
