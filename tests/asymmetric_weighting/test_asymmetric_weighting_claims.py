"""The asymmetric_weighting claims' decision functions on hand-made figures: both sides of every
status boundary, censoring, and bad input."""

import math

import numpy as np
import pytest

from icml26.asymmetric_weighting import claims as C
from icml26.asymmetric_weighting import experiment
from icml26.asymmetric_weighting.lm import RLHistory
from icml26.common.ledger import INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED

INF = math.inf
R = lambda t: (float(t), float(t))  # noqa: E731  reached after t updates
CENS = lambda cap: (float(cap), INF)  # noqa: E731  censored at the cap


def test_claim_ids_and_contract():
    assert C.CLAIM_IDS == ("C1", "C2", "C3") and C.STAND_INS == {} and C.SOURCE_BASIS == "full-text summary"


def test_time_bounds():
    assert C.time_bounds([0.0, 0.3, 0.6], 0.5) == (2.0, 2.0)
    assert C.time_bounds([0.0, 0.3, 0.4], 0.5) == (2.0, INF)
    assert C.time_bounds([0.0, 0.3, 0.6], 0.5, [0.0, 64.0, 128.0]) == (128.0, 128.0)
    with pytest.raises(ValueError):
        C.time_bounds([], 0.5)
    with pytest.raises(ValueError, match="clock"):
        C.time_bounds([0.0, 0.6], 0.5, [0.0])


def test_log_speedup_and_censoring():
    assert C.log_speedup(R(200), R(100)) == pytest.approx(math.log(2))
    assert C.log_speedup(CENS(600), CENS(600)) == 0.0  # both censored: no evidence either way
    assert C.log_speedup(CENS(600), R(300)) == pytest.approx(math.log(2))  # a lower bound on the true speed-up
    assert C.log_speedup(R(100), CENS(600)) < 0


OK = [C.Competence("GRPO", 0.5, C.MIN_LEARNING)]
BAD = [C.Competence("GRPO", C.MIN_LEARNING - 0.01, C.MIN_LEARNING)]


def test_c1_boundaries():
    g = [R(100)] * 3
    assert C.decide_c1(g, {"sqrt": [R(99)] * 3, "linear": [R(99)] * 3}, OK).status == REPRODUCED  # fewer, every seed
    st = C.decide_c1(g, {"sqrt": [R(99)] * 3, "linear": [R(100)] * 3}, OK)  # equal time is not faster
    assert st.status == PARTLY_REPRODUCED and "Linear-R" in st.reason
    assert C.decide_c1(g, {"sqrt": [R(101)] * 3, "linear": [R(120)] * 3}, OK).status == NOT_REPRODUCED
    # 4 of 5 seeds faster: decided by the seed t-test (p < 0.05), fragile since the seeds disagree
    g5 = [R(100)] * 5
    fast = [R(50), R(55), R(45), R(52), R(101)]
    st = C.decide_c1(g5, {"sqrt": fast, "linear": fast}, OK)
    assert st.status == REPRODUCED and st.fragile
    st = C.decide_c1(g, {"sqrt": [R(50), R(50), R(101)], "linear": [R(50), R(50), R(101)]}, OK)
    assert st.status == INCONCLUSIVE and st.fragile  # 2 of 3, but p >= 0.05
    st = C.decide_c1(g, {"sqrt": [R(90), R(95), R(150)], "linear": [R(90), R(95), R(150)]}, OK)
    assert st.status == INCONCLUSIVE and st.fragile


def test_c1_competence_and_fragile():
    g = [R(100)] * 3
    st = C.decide_c1(g, {"sqrt": [R(50)] * 3, "linear": [R(50)] * 3}, BAD)
    assert st.status == INCONCLUSIVE and "rule 2" in st.reason
    # consistent large effect: robust over the seeds, fragile only through the listed grid change (rule 7)
    st = C.decide_c1([R(100), R(110), R(90)], {"sqrt": [R(50), R(55), R(45)], "linear": [R(50), R(55), R(45)]}, OK)
    assert st.status == REPRODUCED and tuple(st.changes) == C.LR_GRID_CHANGE and st.fragile
    effects = [math.log(100 / 50), math.log(110 / 55), math.log(90 / 45) + 1e-3]
    assert not C.is_fragile(effects, 0.0, C.seed_statuses([e > 0 for e in effects]))
    # an effect that sits close to zero in every seed is fragile (its interval crosses 0)
    st = C.decide_c1([R(100), R(100), R(100)], {"sqrt": [R(99), R(60), R(99)], "linear": [R(99), R(60), R(99)]}, OK)
    assert st.fragile


def test_c1_censoring():
    g = [CENS(600)] * 3  # GRPO never reached: T >= 600
    assert C.decide_c1(g, {"sqrt": [R(420)] * 3, "linear": [R(420)] * 3}, OK).status == REPRODUCED
    st = C.decide_c1(g, {"sqrt": [CENS(600)] * 3, "linear": [CENS(600)] * 3}, OK)
    assert st.status == NOT_REPRODUCED  # both censored in every seed: no seed shows a speed-up
    assert C.decide_c1([R(100)] * 3, {"sqrt": [CENS(600)] * 3, "linear": [CENS(600)] * 3}, OK).status == NOT_REPRODUCED


def test_c2_boundaries():
    sg, ss = [R(300)] * 3, [R(100)] * 3  # speed-up 3 from scratch
    comp = OK + [C.Competence("SFT start accuracy", 0.6, C.C2_MIN_SFT_ACC)]
    assert C.decide_c2(sg, ss, [R(20)] * 3, [R(10)] * 3, comp).status == REPRODUCED  # 2 < 3
    assert C.decide_c2(sg, ss, [R(30)] * 3, [R(10)] * 3, comp).status == NOT_REPRODUCED  # 3 is not smaller
    st = C.decide_c2(sg, ss, [R(20), R(40), R(40)], [R(10)] * 3, comp)
    assert st.status == INCONCLUSIVE and st.fragile
    low = OK + [C.Competence("SFT start accuracy", C.C2_MIN_SFT_ACC - 0.01, C.C2_MIN_SFT_ACC)]
    st = C.decide_c2(sg, ss, [R(20)] * 3, [R(10)] * 3, low)
    assert st.status == INCONCLUSIVE and "SFT start" in st.reason


def test_c3_boundaries():
    f = C.C3_MAX_FACTOR
    ok = C.decide_c3(1e-6, 3.0, [1.1] * 3, [1.1 * f * 0.99] * 3, [0.1] * 3, OK)
    assert ok.status == REPRODUCED and ok.by_construction and ok.property_claim
    st = C.decide_c3(1e-6, 3.0, [1.1] * 3, [1.1 * f * 1.01] * 3, [0.1] * 3, OK)  # just outside the factor
    assert st.status == PARTLY_REPRODUCED and "outside" in st.reason
    assert C.decide_c3(1e-6, 3.0, [1.1] * 3, [1.1 / f * 1.01] * 3, competence=OK).status == REPRODUCED
    assert C.decide_c3(2e-3, 3.0, [1.1] * 3, [1.1] * 3, competence=OK).status == PARTLY_REPRODUCED
    assert C.decide_c3(1e-6, 1.9, [1.1] * 3, [3.0] * 3, competence=OK).status == NOT_REPRODUCED
    st = C.decide_c3(1e-6, 3.0, [1.1] * 3, [1.1] * 3, competence=BAD)
    assert st.status == INCONCLUSIVE and "rule 2" in st.reason
    # the simulator's gap is a sanity figure: it never changes the status
    assert C.decide_c3(1e-6, 3.0, [1.1] * 3, [1.1] * 3, [INF] * 3, OK).status == REPRODUCED


def test_bad_input():
    with pytest.raises(ValueError, match="seeds"):
        C.decide_c1([R(1)] * 3, {"sqrt": [R(1)] * 2, "linear": [R(1)] * 3})  # wrong lengths
    with pytest.raises(ValueError, match="at least 3"):
        C.decide_c2([R(1)] * 2, [R(1)] * 2, [R(1)] * 2, [R(1)] * 2)
    with pytest.raises(ValueError, match="need the times"):
        C.decide_c1([R(1)] * 3, {"sqrt": [R(1)] * 3})
    with pytest.raises(ValueError, match="lo"):
        C.decide_c1([(5.0, 1.0)] * 3, {"sqrt": [R(1)] * 3, "linear": [R(1)] * 3})
    with pytest.raises(ValueError):
        C.decide_c3(float("nan"), 3.0, [1.0] * 3, [1.0] * 3)
    with pytest.raises(ValueError, match="positive"):
        C.decide_c3(1e-6, 3.0, [1.0] * 3, [0.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="at least 3"):
        C.decide_c3(1e-6, 3.0, [1.0] * 2, [1.0] * 2)


def test_tuning_rule_is_one_rule_for_every_scheme():
    mk = lambda acc: RLHistory("x", np.array(acc), np.zeros(len(acc) - 1), np.zeros(len(acc)))  # noqa: E731
    runs = {1e-3: mk([0.0, 0.2, 0.6]), 2e-3: mk([0.0, 0.6]), 5e-3: mk([0.0, 0.3, 0.4])}
    best, scores = experiment.tune_learning_rate(lambda lr: runs[lr], (1e-3, 2e-3, 5e-3), 0.5)
    assert best == 2e-3 and scores[1e-3] == 2.0 and scores[5e-3] == pytest.approx(2.6)  # censored: cap + 1 - acc
    # two censored runs: the higher final accuracy wins; every reached run beats every censored one
    runs = {1e-3: mk([0.0, 0.1, 0.2]), 2e-3: mk([0.0, 0.3, 0.4])}
    assert experiment.tune_learning_rate(lambda lr: runs[lr], (1e-3, 2e-3), 0.5)[0] == 2e-3
    with pytest.raises(ValueError, match="empty"):
        experiment.tune_learning_rate(lambda lr: runs[lr], (), 0.5)
    assert experiment.post_sft_target(0.6, 0.5) == pytest.approx(0.8)
