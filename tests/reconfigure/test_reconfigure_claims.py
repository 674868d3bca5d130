import pytest

from icml26.common.ledger import NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED, Ledger
from icml26.reconfigure import claims as cl

C = ("Fly-Walk", "Car-Leg", "Wheel-Swim")


def prog(v):
    return {k: v for k in C}


def test_ids_and_half_size():
    assert cl.CLAIM_IDS == ("C1", "C2", "C3", "C4")
    assert cl.half_size(5.95) == pytest.approx(3.475)
    assert cl.half_size(9.81) == pytest.approx(5.405)


def test_c1_c2_every_boundary():
    hi, lo = [0.9] * 20 + [0.8] * 20, [0.2] * 40
    need = cl.half_size(cl.PAPER_GAIN_FIXED)
    assert cl.decide_c1(hi, lo, prog(need), prog(1.0)).status == REPRODUCED
    s = cl.decide_c1(hi, lo, prog(need - 0.01), prog(1.0))
    assert s.status == PARTLY_REPRODUCED and s.reason
    assert cl.decide_c1(lo, hi, prog(0.2), prog(0.85)).status == NOT_REPRODUCED
    assert cl.decide_c1(lo, lo, prog(1.0), prog(1.0)).status == NOT_REPRODUCED
    need2 = cl.half_size(cl.PAPER_GAIN_CODESIGN)
    assert cl.decide_c2(hi, lo, prog(need2), prog(1.0)).status == REPRODUCED
    assert cl.decide_c2(hi, lo, prog(need2 - 0.01), prog(1.0)).status == PARTLY_REPRODUCED
    with pytest.raises(ValueError):
        cl.decide_c1(hi, lo[:10], prog(1.0), prog(1.0))
    with pytest.raises(ValueError):
        cl.decide_c1(hi, lo, {"Fly-Walk": 1.0}, prog(1.0))


def test_c3():
    a, b = [1.0] * 40, [0.5] * 40
    assert cl.decide_c3(0.0, a, b).status == REPRODUCED
    assert cl.decide_c3(0.0, b, a).status == PARTLY_REPRODUCED
    assert cl.decide_c3(1e-9, a, b).status == NOT_REPRODUCED
    for bad in (True, -1.0, "0"):
        with pytest.raises(ValueError):
            cl.decide_c3(bad, a, b)
    with pytest.raises(ValueError):
        cl.decide_c3(0.0, a, b[:3])


def test_c4_window_and_share():
    w = cl.C4_WINDOW
    n_in = int(cl.C4_MIN_FRACTION * 10)
    assert cl.decide_c4([w] * n_in + [w + 0.1] * (10 - n_in)).status == REPRODUCED
    assert cl.decide_c4([w] * (n_in - 1) + [w + 0.1] * (11 - n_in)).status == NOT_REPRODUCED
    s = cl.decide_c4([])
    assert s.status == NOT_REPRODUCED and "never" in s.reason


def test_extensions_and_ledger():
    assert cl.decide_e1(cl.E1_STEP_MAX / 0.6 + 1e-6).status == REPRODUCED
    assert cl.decide_e1(cl.E1_STEP_MAX / 0.6 - 0.01).status == NOT_REPRODUCED
    assert cl.decide_e2([1.0] * 40, [0.1] * 40).status == REPRODUCED
    assert cl.decide_e2([0.1] * 40, [0.1] * 40).status == NOT_REPRODUCED
    led = Ledger("reconfigure", cl.CLAIM_IDS)
    led.extend([cl.decide_c1([0.9] * 40, [0.2] * 40, prog(2.0), prog(1.0)), cl.decide_c2([0.2] * 40, [0.2] * 40, prog(1.0), prog(1.0)),
                cl.decide_c3(0.0, [1.0] * 40, [0.5] * 40), cl.decide_c4([0.1] * 10), cl.decide_e1(0.1)])
    assert led.verdict() == PARTLY_REPRODUCED
