"""Decision functions of the discrete_transformer ledger, on hand-made figures, around every
boundary: replication over seeds (rule 1), competence (rule 2), the rule-7 change on C3."""

import pytest

from icml26.common.ledger import (INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTED, PARTLY_REPRODUCED, REPRODUCED, Competence,
                                  Ledger)
from icml26.discrete_transformer import claims as C

OK = [Competence("net", 1.0, C.C1_NET_MIN_EXACT)]
E, A = [1.0] * 3, [1.0] * 3  # exact annealed programs, equal to the network
LOW = [0.6] * 3


def test_contract():
    assert C.CLAIM_IDS == ("C1", "C2", "C3", "C4") and C.STAND_INS == {} and C.SOURCE_BASIS == "full-text summary"
    Ledger("discrete_transformer", C.CLAIM_IDS)


def test_c1_statuses():
    assert C.decide_c1([C.C1_MIN_EXACT] * 3, [C.C1_MIN_AGREE] * 3, LOW, LOW, OK).status == REPRODUCED
    below = C.decide_c1([C.C1_MIN_EXACT - 1e-3] * 3, A, LOW, LOW, OK)
    assert below.status != REPRODUCED and below.reason
    assert C.decide_c1(E, [C.C1_MIN_AGREE - 1e-3] * 3, LOW, LOW, OK).status != REPRODUCED
    # the Gumbel-attention design choice makes the no-anneal program exact: that sub-result fails
    st = C.decide_c1(E, A, LOW, [C.C1_MIN_EXACT] * 3, OK)
    assert st.status == PARTLY_REPRODUCED and "Gumbel" in st.reason
    # seeds disagree on the no-anneal program: INCONCLUSIVE sub-result, fragile
    st = C.decide_c1(E, A, [0.6, 0.6, 1.0], LOW, OK)
    assert st.status == PARTLY_REPRODUCED and st.fragile
    # nothing holds
    assert C.decide_c1([0.5] * 3, A, [0.5] * 3, [0.5] * 3, OK).status == NOT_REPRODUCED


def test_c1_competence():
    bad = [Competence("T1 network (no anneal)", C.C1_NET_MIN_EXACT - 0.01, C.C1_NET_MIN_EXACT)]
    st = C.decide_c1(E, A, LOW, LOW, bad)
    assert st.status == INCONCLUSIVE and "rule 2" in st.reason


def test_c1_bad_input():
    with pytest.raises(ValueError):
        C.decide_c1([1.5] * 3, A, LOW, LOW)
    with pytest.raises(ValueError, match="at least 3"):
        C.decide_c1([1.0] * 2, [1.0] * 2, [0.5] * 2, [0.5] * 2)
    with pytest.raises(ValueError):
        C.decide_c1(E, A, LOW[:2], LOW)


def test_c3_fidelity_and_competence():
    net_ok = [C.C3_NET_MAX_RELMSE] * 3
    st = C.decide_c3([C.C3_MAX_RELMSE] * 3, net_ok)
    assert st.status == REPRODUCED and st.fragile and st.changes  # rule 7: the check was added after a result
    assert C.decide_c3([C.C3_MAX_RELMSE * 1.01] * 3, net_ok).status == NOT_REPRODUCED
    assert C.decide_c3([1e-6, 1e-6, 1e-3], net_ok).status == INCONCLUSIVE
    st = C.decide_c3([1e-8] * 3, [C.C3_NET_MAX_RELMSE * 1.01] * 3)  # a network that never learned T2
    assert st.status == INCONCLUSIVE and "rule 2" in st.reason and st.competence[0].figure > C.C3_NET_MAX_RELMSE
    with pytest.raises(ValueError):
        C.decide_c3([float("nan")] * 3, net_ok)
    with pytest.raises(ValueError):
        C.decide_c3([-1.0] * 3, net_ok)


def test_not_tested_claims_say_why():
    for c in (C.decide_c2(), C.decide_c4()):
        assert c.status == NOT_TESTED and c.reason


def test_e1_boundary():
    assert C.decide_e1([0.35, C.E1_MIN_SHARE]).status == REPRODUCED
    assert C.decide_e1([0.35, C.E1_MIN_SHARE - 1e-6]).status == NOT_REPRODUCED
    with pytest.raises(ValueError):
        C.decide_e1([])
