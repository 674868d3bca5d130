import pytest

from icml26.common.ledger import INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED, Ledger
from icml26.dmawm import claims as cl

CONV = {"dmawm": True, "joint": True, "model_free": True}


def items(k, n=100):
    return [1.0] * k + [0.0] * (n - k)


def test_claim_ids_match_claims_md():
    assert cl.CLAIM_IDS == ("C1", "C2", "C3")


def test_c1_boundaries_and_bad_input():
    assert cl.decide_c1(cl.C1_PROBE_CHANCE_MAX, cl.C1_PROBE_JOINT_MIN).status == REPRODUCED
    assert cl.decide_c1(cl.C1_PROBE_CHANCE_MAX + 0.01, 1.0).status == NOT_REPRODUCED
    assert cl.decide_c1(0.5, cl.C1_PROBE_JOINT_MIN - 0.01).status == INCONCLUSIVE
    for bad in (1.2, -0.1, True, None):
        with pytest.raises(ValueError):
            cl.decide_c1(bad, 1.0)


def test_c2_statuses():
    small, big = [0.1] * 50, [0.9] * 50
    learned = {"dmawm": 0.9, "joint": 0.4}
    assert cl.decide_c2(small, big, learned).status == REPRODUCED
    assert cl.decide_c2(big, small, learned).status == NOT_REPRODUCED
    assert cl.decide_c2(small, small, learned).status == NOT_REPRODUCED
    s = cl.decide_c2(small, big, {"dmawm": cl.LEARNED_MIN - 0.01, "joint": 0.5})
    assert s.status == INCONCLUSIVE
    assert cl.decide_c2(small, big, {"dmawm": 0.5, "joint": cl.LEARNED_MIN}).status == REPRODUCED
    with pytest.raises(ValueError):
        cl.decide_c2(small, big[:40], learned)
    with pytest.raises(ValueError):
        cl.decide_c2(small, big, {"dmawm": 2.0, "joint": 0.5})


def test_c3_statuses():
    auc_win = {"dmawm": 0.9, "joint": 0.5, "model_free": 0.6}
    win, lose, mid = items(95), items(40), items(80)
    both = {"dmawm": win, "joint": lose, "model_free": mid}
    assert cl.decide_c3(both, CONV, auc_win, 10).status == REPRODUCED
    # equal to the model-free baseline: only the model-based one is beaten
    s = cl.decide_c3({"dmawm": win, "joint": lose, "model_free": win}, CONV, auc_win, 10)
    assert s.status == PARTLY_REPRODUCED and "joint" in s.reason
    # better at the end but slower than model-free: not "faster"
    s = cl.decide_c3(both, CONV, dict(auc_win, model_free=0.95), 10)
    assert s.status == PARTLY_REPRODUCED
    s = cl.decide_c3({"dmawm": lose, "joint": lose, "model_free": win}, CONV, auc_win, 10)
    assert s.status == NOT_REPRODUCED
    # DMAWM still improving at the cap and behind: undecided
    s = cl.decide_c3({"dmawm": lose, "joint": lose, "model_free": win}, dict(CONV, dmawm=False), auc_win, 10)
    assert s.status == INCONCLUSIVE and "10-round cap" in s.reason
    # nobody learns: undecided whatever the p-values
    just_below = items(int(cl.LEARNED_MIN * 100) - 1)
    s = cl.decide_c3({"dmawm": just_below, "joint": items(10), "model_free": items(10)}, CONV, auc_win, 10)
    assert s.status == INCONCLUSIVE and "no method learns" in s.reason
    at = items(int(cl.LEARNED_MIN * 100))
    assert cl.decide_c3({"dmawm": at, "joint": items(10), "model_free": items(10)}, CONV, auc_win, 10).status == REPRODUCED


def test_c3_bad_input():
    ok = {"dmawm": items(90), "joint": items(40), "model_free": items(40)}
    auc = {"dmawm": 0.9, "joint": 0.5, "model_free": 0.5}
    with pytest.raises(TypeError):
        cl.decide_c3(ok, dict(CONV, joint=1), auc, 10)
    with pytest.raises(ValueError):
        cl.decide_c3(ok, {"dmawm": True}, auc, 10)
    with pytest.raises(ValueError):
        cl.decide_c3(dict(ok, joint=items(40, 50)), CONV, auc, 10)
    with pytest.raises(KeyError):
        cl.decide_c3({"dmawm": items(90)}, CONV, auc, 10)


def test_curve_mean_pads_a_stopped_run():
    assert cl.curve_mean([{"success": 0.0}, {"success": 1.0}], 4) == pytest.approx(0.75)
    with pytest.raises(ValueError):
        cl.curve_mean([{"success": 0.0}] * 5, 4)


def test_ledger_verdict():
    led = Ledger("dmawm", cl.CLAIM_IDS)
    led.extend([cl.decide_c1(0.5, 1.0), cl.decide_c2([0.1] * 40, [0.9] * 40, {"dmawm": 0.3, "joint": 0.3}),
                cl.decide_c3({"dmawm": items(30), "joint": items(30), "model_free": items(30)}, CONV,
                             {"dmawm": 0.3, "joint": 0.3, "model_free": 0.3}, 10)])
    assert led.verdict() == PARTLY_REPRODUCED  # INCONCLUSIVE counts as tested, not reproduced
