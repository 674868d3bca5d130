import pytest

from icml26.common.ledger import INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTED, PARTLY_REPRODUCED, REPRODUCED
from icml26.lmac import claims
from icml26.lmac.claims import (C1_MAX_SPREAD, C1_MIN_SR, C2_MIN_GAIN, C3_LEARNER_BAR, C3_MIN_MARGIN, E1_MAX_MSG_FRAC, decide_c1,
                                decide_c2, decide_c3, decide_e1)

D = True  # the rule-based designer wrote the protocol (rule 4)
CH = [0.0] * 3  # chance per seed
STATE = {"State": [0.9] * 3}


def test_claim_ids_match_claims_md():
    assert claims.CLAIM_IDS == ("C1", "C2", "C3")
    assert set(claims.STAND_INS) == {"C1", "C2", "C3"}


def test_c1_boundaries():
    assert decide_c1([C1_MIN_SR] * 3, [C1_MAX_SPREAD] * 3, D).status == REPRODUCED
    assert decide_c1([C1_MIN_SR - 0.01] * 3, [0.0] * 3, D).status == NOT_REPRODUCED
    assert decide_c1([0.95] * 3, [C1_MAX_SPREAD + 0.01] * 3, D).status == NOT_REPRODUCED
    mixed = decide_c1([0.95, 0.95, 0.85], [0.02] * 3, D)
    assert mixed.status == INCONCLUSIVE and mixed.fragile and mixed.reason
    st = decide_c1([0.95] * 3, [0.0] * 3, D)
    assert st.stand_in and "stand-in" in st.reason and st.counted_status == PARTLY_REPRODUCED
    real = decide_c1([0.95] * 3, [0.0] * 3, False)
    assert not real.stand_in and real.counted_status == REPRODUCED
    few = decide_c1([0.95] * 2, [0.0] * 2, D)
    assert few.status == INCONCLUSIVE and "rule 1" in few.reason


def test_c1_bad_input():
    with pytest.raises(ValueError):
        decide_c1([0.95] * 3, [0.0] * 4, D)
    with pytest.raises(TypeError):
        decide_c1([True, True, True], [0.0] * 3, D)


def test_c2_boundaries_with_a_real_designer():
    a0, g0 = [0.5] * 3, [0.2] * 3
    R = False
    assert decide_c2(a0, [0.5 + C2_MIN_GAIN] * 3, g0, [0.1] * 3, R).status == REPRODUCED
    part = decide_c2(a0, [0.9] * 3, g0, [0.2] * 3, R)  # gap not narrower
    assert part.status == PARTLY_REPRODUCED and part.reason
    assert decide_c2(a0, [0.5 + C2_MIN_GAIN - 0.01] * 3, g0, [0.1] * 3, R).status == NOT_REPRODUCED
    assert decide_c2(a0, [0.9, 0.9, 0.55], g0, [0.1] * 3, R).status == INCONCLUSIVE
    with pytest.raises(ValueError):
        decide_c2(a0, [0.9] * 3, g0, [0.1] * 2, R)
    with pytest.raises(TypeError):
        decide_c2(a0, "0.9", g0, [0.1] * 3, R)


def test_c2_is_not_tested_by_construction_with_the_stand_in():
    st = decide_c2([0.5] * 3, [0.9] * 3, [0.2] * 3, [0.1] * 3, D)
    assert st.status == NOT_TESTED and st.by_construction and st.stand_in and "rule 3" in st.reason
    assert "(by construction)" in st.check_line() and "(stand-in)" in st.check_line()


def test_c3_boundaries():
    base = {"NoComm": [0.1] * 3, "FullComm": [0.5] * 3, "TarMAC": [0.6] * 3, **STATE}
    assert decide_c3({"LMAC": [0.6 + C3_MIN_MARGIN] * 3, **base}, CH, D).status == REPRODUCED
    part = decide_c3({"LMAC": [0.62] * 3, **base}, CH, D)  # beats NoComm, FullComm; not TarMAC
    assert part.status == PARTLY_REPRODUCED and "TarMAC" in part.reason
    assert decide_c3({"LMAC": [0.1] * 3, **base}, CH, D).status == NOT_REPRODUCED
    inc = decide_c3({"LMAC": [0.12, 0.2, 0.12], **base}, CH, D)  # only seed 2 beats NoComm
    assert inc.status == INCONCLUSIVE and inc.fragile
    with pytest.raises(ValueError, match="lacks"):
        decide_c3({"LMAC": [0.9] * 3, "NoComm": [0.1] * 3}, CH, D)
    few = decide_c3({"LMAC": [0.9] * 2, **{k: v[:2] for k, v in base.items()}}, CH[:2], D)
    assert few.status == INCONCLUSIVE and "rule 1" in few.reason
    with pytest.raises(ValueError):
        decide_c3({"LMAC": [0.9] * 3, **base, "TarMAC": [0.5] * 4}, CH, D)
    with pytest.raises(TypeError):
        decide_c3([0.9, 0.1], CH, D)


def test_c3_competence_checks():
    base = {"NoComm": [0.1] * 3, "FullComm": [0.5] * 3, "TarMAC": [0.6] * 3}
    lmac = {"LMAC": [0.9] * 3}
    # every compared arm at least at chance
    assert decide_c3({**lmac, **base, **STATE}, [0.1] * 3, D).status == REPRODUCED
    st = decide_c3({**lmac, **base, **STATE}, [0.1 + 1e-6] * 3, D)
    assert st.status == INCONCLUSIVE and "NoComm vs chance" in st.reason
    # the learner on the true state above C3_LEARNER_BAR
    assert decide_c3({**lmac, **base, "State": [C3_LEARNER_BAR] * 3}, CH, D).status == REPRODUCED
    st = decide_c3({**lmac, **base, "State": [C3_LEARNER_BAR - 0.01] * 3}, CH, D)
    assert st.status == INCONCLUSIVE and "State" in st.reason


def fake_results(stand_in=True):
    aw = lambda a, g: {"accuracy": a, "gap": g, "sr": [[a]]}  # noqa: E731
    return {"seeds": [0, 1, 2], "criterion_seeds": [0, 1, 2], "stand_in": stand_in,
            "awareness": {"initial": [aw(0.5, 0.2)] * 3, "final": [aw(0.95, 0.02)] * 3},
            "success": {"LMAC": [0.9] * 3, "NoComm": [0.01] * 3, "FullComm": [0.4] * 3, "TarMAC": [0.4] * 3,
                        "State": [0.9] * 3},
            "random_success": [0.0] * 3, "message_size": {"LMAC": 6, "FullComm": 80}}


def test_build_ledger_marks_the_stand_in():
    import json

    led = claims.build_ledger(fake_results())
    assert [led.entries[c].status for c in claims.CLAIM_IDS] == [REPRODUCED, NOT_TESTED, REPRODUCED]
    assert led.verdict() == PARTLY_REPRODUCED  # stand-ins count as PARTLY at most (rule 4)
    assert claims.build_ledger(json.loads(json.dumps(fake_results()))).check_lines() == led.check_lines()
    real = claims.build_ledger(fake_results(stand_in=False))
    assert real.verdict() == REPRODUCED and not real.entries["C2"].by_construction


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
    from dataclasses import replace

    for entry in (decide_c1([0.95] * 3, [0.0] * 3, D), decide_c2([0.5] * 3, [0.9] * 3, [0.2] * 3, [0.1] * 3, D),
                  decide_c3({"LMAC": [0.9] * 3, "NoComm": [0.1] * 3, "FullComm": [0.1] * 3, "TarMAC": [0.1] * 3},
                            CH, D)):
        worst = replace(entry, fragile=True).check_line()
        if not entry.by_construction:  # a by-construction check stays NOT TESTED with the stand-in
            worst = worst.replace(entry.status, "PARTLY REPRODUCED")
        assert len(worst) <= 100, worst
    assert len("E1 (ours) NOT REPRODUCED: " + decide_e1(1, 10).claim) <= 100
