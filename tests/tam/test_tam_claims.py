import pytest

from icml26.common.ledger import INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTED, PARTLY_REPRODUCED, REPRODUCED, Ledger
from icml26.tam import claims as cl

CONV = {"TAM": True, "fixed": True, "fixed-H": True, "fixed-L": True}


def items(k_right, n=100):
    return [1] * k_right + [0] * (n - k_right)


def test_claim_ids_match_claims_md():
    assert cl.CLAIM_IDS == ("C1", "C2", "C3", "C4")


def test_c1_boundary_and_bad_input():
    assert cl.decide_c1(cl.C1_MIN_ACC).status == REPRODUCED
    assert cl.decide_c1(cl.C1_MIN_ACC - 0.01).status == NOT_REPRODUCED
    for bad in (1.5, -0.1, True, "0.9"):
        with pytest.raises(ValueError):
            cl.decide_c1(bad)


def test_c2_all_statuses():
    win, lose = items(90), items(60)
    assert cl.decide_c2(win, lose, 64, 72, CONV, 300).status == REPRODUCED
    assert cl.decide_c2(win, win, 64, 72, CONV, 300).status == NOT_REPRODUCED  # no gain
    assert cl.decide_c2(lose, win, 64, 72, CONV, 300).status == NOT_REPRODUCED  # reversed
    s = cl.decide_c2(win, lose, 64, 72, dict(CONV, fixed=False), 300)
    assert s.status == INCONCLUSIVE and "fixed" in s.reason and "300" in s.reason
    # a small gain that the paired test cannot separate from zero is not enough
    assert cl.decide_c2(items(62), items(60), 64, 72, CONV, 300).status == NOT_REPRODUCED


def test_c2_bad_input():
    with pytest.raises(ValueError):
        cl.decide_c2(items(90), items(60, 99), 64, 72, CONV, 300)  # lengths differ
    with pytest.raises(ValueError):
        cl.decide_c2(items(90), items(60), 80, 72, CONV, 300)  # TAM spends more tokens
    with pytest.raises(TypeError):
        cl.decide_c2(items(90), items(60), 64, 72, dict(CONV, TAM=1), 300)  # a non-bool flag
    with pytest.raises(ValueError):
        cl.decide_c2(items(90), items(60), 64, 72, {"TAM": True}, 300)  # missing flag
    with pytest.raises(ValueError):
        cl.decide_c2([0.5] * 100, items(60), 64, 72, CONV, 300)  # not per-item correctness


def test_c3_both_sides_of_every_boundary():
    good, fail = items(95), items(40)
    assert cl.decide_c3(fail, fail, good, good, CONV, 300).status == REPRODUCED
    # fixed-L reaches the mismatch bar on counting: only the time part holds
    at_bar = items(int(cl.C3_MAX_MISMATCH_ACC * 100))
    s = cl.decide_c3(fail, at_bar, good, good, CONV, 300)
    assert s.status == PARTLY_REPRODUCED and "time" in s.reason
    just_below = items(int(cl.C3_MAX_MISMATCH_ACC * 100) - 1)
    assert cl.decide_c3(fail, just_below, good, good, CONV, 300).status == REPRODUCED
    # TAM no better than fixed-H on temporal: only the space part holds
    s = cl.decide_c3(fail, fail, fail, good, CONV, 300)
    assert s.status == PARTLY_REPRODUCED and "space" in s.reason
    assert cl.decide_c3(good, good, good, good, CONV, 300).status == NOT_REPRODUCED
    assert cl.decide_c3(fail, fail, good, good, dict(CONV, **{"fixed-L": False}), 300).status == INCONCLUSIVE
    with pytest.raises(ValueError):
        cl.decide_c3(fail, fail, good[:50], good, CONV, 300)
    with pytest.raises(TypeError):
        cl.decide_c3(fail, fail, good, good, dict(CONV, TAM="yes"), 300)


def test_c4_not_tested_and_extensions():
    assert cl.decide_c4().status == NOT_TESTED
    assert cl.decide_e1(cl.E1_MIN_ACC, 1.0, False, 300).status == REPRODUCED
    assert cl.decide_e1(cl.E1_MIN_ACC - 0.01, 1.0, True, 300).status == NOT_REPRODUCED
    assert cl.decide_e1(cl.E1_MIN_ACC - 0.01, 1.0, False, 300).status == INCONCLUSIVE
    with pytest.raises(TypeError):
        cl.decide_e1(0.9, 0.9, 1, 300)
    assert cl.decide_e2(0.8, 0.8 + cl.E2_MAX_GAP - 0.001).status == REPRODUCED
    assert cl.decide_e2(0.8, 0.8 + cl.E2_MAX_GAP + 0.01).status == NOT_REPRODUCED
    with pytest.raises(ValueError):
        cl.decide_e2(0.8, 2.0)


def test_ledger_verdict_from_decisions():
    win, lose, fail = items(90), items(60), items(40)
    led = Ledger("tam", cl.CLAIM_IDS)
    led.extend([cl.decide_c1(1.0), cl.decide_c2(win, lose, 64, 72, CONV, 300),
                cl.decide_c3(fail, fail, win, win, dict(CONV, TAM=False), 300), cl.decide_c4(),
                cl.decide_e1(0.5, 1.0, False, 300)])
    assert led.verdict() == PARTLY_REPRODUCED
    assert "C4 NOT TESTED" in led.check_lines() and "E1 (ours) INCONCLUSIVE" in led.check_lines()
