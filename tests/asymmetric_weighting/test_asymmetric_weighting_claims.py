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


def test_claim_ids():
    assert C.CLAIM_IDS == ("C1", "C2", "C3")


def test_time_bounds():
    assert C.time_bounds([0.0, 0.3, 0.6], 0.5) == (2.0, 2.0)
    assert C.time_bounds([0.0, 0.3, 0.4], 0.5) == (2.0, INF)
    with pytest.raises(ValueError):
        C.time_bounds([], 0.5)


def test_c1_boundaries():
    g = [R(100)] * 3
    assert C.decide_c1(g, {"sqrt": [R(70)] * 3, "linear": [R(70)] * 3}).status == REPRODUCED  # exactly 0.7
    st = C.decide_c1(g, {"sqrt": [R(70)] * 3, "linear": [R(71)] * 3})
    assert st.status == PARTLY_REPRODUCED and "Linear-R" in st.reason
    assert C.decide_c1(g, {"sqrt": [R(90)] * 3, "linear": [R(95)] * 3}).status == NOT_REPRODUCED
    st = C.decide_c1(g, {"sqrt": [R(50), R(50), R(90)], "linear": [R(90)] * 3})
    assert st.status == NOT_REPRODUCED or st.status == INCONCLUSIVE
    assert st.fragile


def test_c1_censoring():
    g = [CENS(600)] * 3  # GRPO never reached: T >= 600
    assert C.decide_c1(g, {"sqrt": [R(420)] * 3, "linear": [R(420)] * 3}).status == REPRODUCED
    assert C.decide_c1(g, {"sqrt": [R(420)] * 3, "linear": [R(421)] * 3}).status == PARTLY_REPRODUCED
    # both censored: undecidable, never a pass
    st = C.decide_c1(g, {"sqrt": [CENS(600)] * 3, "linear": [CENS(600)] * 3})
    assert st.status == INCONCLUSIVE and "cap" in st.reason
    # a censored asymmetric run against a reached GRPO: surely slower
    assert C.decide_c1([R(100)] * 3, {"sqrt": [CENS(600)] * 3, "linear": [CENS(600)] * 3}).status == NOT_REPRODUCED


def test_c2_boundaries():
    sg, ss = [R(300)] * 3, [R(100)] * 3  # speed-up 3 from scratch
    assert C.decide_c2(sg, ss, [R(20)] * 3, [R(10)] * 3).status == REPRODUCED  # 2 < 3
    assert C.decide_c2(sg, ss, [R(30)] * 3, [R(10)] * 3).status == NOT_REPRODUCED  # 3 >= 3
    st = C.decide_c2(sg, ss, [R(20), R(20), R(40)], [R(10)] * 3)
    assert st.status == INCONCLUSIVE and st.fragile
    # censored GRPO from scratch: speed-up >= 6; post-SFT 2 is surely smaller
    assert C.decide_c2([CENS(600)] * 3, ss, [R(20)] * 3, [R(10)] * 3).status == REPRODUCED
    # censored GRPO after SFT: speed-up >= 2 and unbounded above, undecided against 3
    assert C.decide_c2(sg, ss, [CENS(20)] * 3, [R(10)] * 3).status == INCONCLUSIVE
    # ... but >= 10 is surely not smaller than 3
    assert C.decide_c2(sg, ss, [CENS(100)] * 3, [R(10)] * 3).status == NOT_REPRODUCED


def test_c3_boundaries():
    ok = C.decide_c3(1e-6, 3.0, [0.1, 0.1, C.C3_MAX_TIME_GAP])
    assert ok.status == REPRODUCED
    assert C.decide_c3(1e-6, 3.0, [0.3, 0.3, 0.3]).status == PARTLY_REPRODUCED
    assert C.decide_c3(2e-3, 3.0, [0.1] * 3).status == PARTLY_REPRODUCED
    assert C.decide_c3(1e-6, 1.5, [0.3] * 3).status == NOT_REPRODUCED
    assert C.decide_c3(1e-6, 1.5, [0.1, 0.3, 0.1]).status == INCONCLUSIVE
    assert C.decide_c3(1e-6, 3.0, [0.1, INF, 0.1]).fragile


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
        C.decide_c3(float("nan"), 3.0, [0.1] * 3)
    with pytest.raises(ValueError):
        C.decide_c3(1e-6, 3.0, ["a", 0.1, 0.1])
    with pytest.raises(ValueError, match="at least 3"):
        C.decide_c3(1e-6, 3.0, [0.1, 0.1])


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
