"""Decision functions of the discrete_transformer ledger, on hand-made figures, around every boundary."""

import numpy as np
import pytest

from icml26.common.ledger import NOT_REPRODUCED, NOT_TESTED, PARTLY_REPRODUCED, REPRODUCED, Ledger
from icml26.discrete_transformer import claims as C

GOOD = np.ones(40)
BAD = np.linspace(0.2, 0.6, 40)


def test_claim_ids():
    assert C.CLAIM_IDS == ("C1", "C2", "C3", "C4")
    Ledger("discrete_transformer", C.CLAIM_IDS)


def test_c1_statuses():
    assert C.decide_c1(C.C1_MIN_EXACT, [True] * 40, GOOD, BAD).status == REPRODUCED
    below = C.decide_c1(C.C1_MIN_EXACT - 1e-3, [True] * 40, GOOD, BAD)
    assert below.status == NOT_REPRODUCED and below.reason
    disagree = C.decide_c1(1.0, [True] * 39 + [False], GOOD, BAD)  # 39/40 < C1_MIN_AGREE
    assert disagree.status == NOT_REPRODUCED
    same = C.decide_c1(1.0, [True] * 40, GOOD, GOOD)  # no-anneal just as good: p = 1
    assert same.status == PARTLY_REPRODUCED


def test_c1_bad_input():
    with pytest.raises(TypeError):
        C.decide_c1(1.0, [1] * 40, GOOD, BAD)
    with pytest.raises(ValueError):
        C.decide_c1(1.5, [True] * 40, GOOD, BAD)
    with pytest.raises(ValueError):
        C.decide_c1(1.0, [True] * 10, GOOD[:10], BAD[:10])  # fewer than 30 paired items
    with pytest.raises(ValueError):
        C.decide_c1(1.0, [True] * 40, GOOD, BAD[:39])


def test_c3_boundary():
    assert C.decide_c3(C.C3_MAX_RELMSE).status == REPRODUCED
    assert C.decide_c3(C.C3_MAX_RELMSE * 1.01).status == NOT_REPRODUCED
    with pytest.raises(ValueError):
        C.decide_c3(float("nan"))


def test_not_tested_claims_say_why():
    for c in (C.decide_c2(), C.decide_c4()):
        assert c.status == NOT_TESTED and c.reason


def test_e1_boundary():
    assert C.decide_e1([0.35, C.E1_MIN_SHARE]).status == REPRODUCED
    assert C.decide_e1([0.35, C.E1_MIN_SHARE - 1e-6]).status == NOT_REPRODUCED
    with pytest.raises(ValueError):
        C.decide_e1([])
