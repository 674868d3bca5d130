"""The PRISM ledger's decision functions on hand-made figures, on both sides of every boundary."""

import pytest

from icml26.common.ledger import INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED
from icml26.prism import claims as cl

CH = [0.13, 0.13, 0.13]


def c1(**kw):
    base = dict(chance=CH, clean_rms=[0.5] * 3, clean_unit=[0.5] * 3, phase_left_rms=[0.0] * 3,
                phase_left_unit=[0.0] * 3, keep_attenuation=[1.0] * 3, keep_flatten=[0.95] * 3)
    base.update(kw)
    return cl.decide_c1(**base)


def comp(clean=(0.5, 0.5, 0.5), converged=(True, True, True), arm="arm"):
    return cl.arm_competence(arm, CH, list(clean), list(converged))


def test_competence_needs_learning_and_a_plateau_in_every_seed():
    g = cl.C1_MIN_LEARNED_GAIN
    assert all(c.passed for c in comp())
    assert all(c.passed for c in comp(clean=[0.13 + g] * 3))
    assert not comp(clean=[0.13 + g - 0.01, 0.5, 0.5])[0].passed
    assert not comp(converged=[True, False, True])[1].passed
    with pytest.raises(ValueError, match="converged flags"):
        comp(converged=[True, True])


def test_c1_boundaries():
    assert c1().status == REPRODUCED and not c1().fragile
    t = cl.C1_MAGNITUDE_KEEP_MIN
    assert c1(keep_flatten=[t, t, t]).status == REPRODUCED
    low = c1(keep_flatten=[t - 0.01] * 3)
    assert low.status == PARTLY_REPRODUCED and "0 of 3" in low.reason
    mixed = c1(keep_flatten=[t + 0.004, t - 0.014, t + 0.01])
    assert mixed.status == PARTLY_REPRODUCED and mixed.fragile
    # attenuation holds by construction under the RMS norm: shown, never deciding
    assert c1(keep_attenuation=[t - 0.01] * 3).status == REPRODUCED
    p = cl.C1_PHASE_COLLAPSE_MAX
    assert c1(phase_left_rms=[p] * 3).status == REPRODUCED
    assert c1(phase_left_rms=[p + 0.01] * 3).status == NOT_REPRODUCED
    assert c1(phase_left_unit=[0.0, p + 0.1, 0.0]).status == INCONCLUSIVE
    g = cl.C1_MIN_LEARNED_GAIN
    weak = c1(clean_unit=[0.13 + g - 0.01, 0.5, 0.5])
    assert weak.status == INCONCLUSIVE and "rule 2" in weak.reason
    assert c1(clean_unit=[0.13 + g + 1e-9] * 3).status == REPRODUCED
    late = c1(converged_rms=[True, False, True], max_steps=300, full_steps=6000)
    assert late.status == INCONCLUSIVE and "6000 steps" in late.reason


def test_c1_fragile_when_close_to_the_bar():
    t = cl.C1_MAGNITUDE_KEEP_MIN
    st = c1(keep_flatten=[t + 0.004, t + 0.02, t + 0.001])
    assert st.status == REPRODUCED and st.fragile
    assert not c1(keep_flatten=[t + 0.05, t + 0.06, t + 0.055]).fragile


def test_c2_boundaries():
    p = [1000, 1000, 1000]
    arms = comp(arm="hybrid") + comp(arm="Transformer")
    assert cl.decide_c2([0.5] * 3, [0.4] * 3, p, p, arms).status == REPRODUCED
    assert cl.decide_c2([0.4] * 3, [0.4] * 3, p, p, arms).status == NOT_REPRODUCED
    st = cl.decide_c2([0.5, 0.39, 0.5], [0.4] * 3, p, p, arms)
    assert st.status == INCONCLUSIVE and st.fragile  # 2 of 3 seeds, seed test not significant
    # rule 1: 2 of 3 seeds with a significant seed test -> REPRODUCED
    assert cl.decide_c2([0.5, 0.5, 0.5, 0.5, 0.5, 0.39], [0.4] * 6, p * 2, p * 2,
                        cl.arm_competence("h", [0.13] * 6, [0.5] * 6, [True] * 6)).status == REPRODUCED
    tol = cl.C2_MATCH_TOL
    assert cl.decide_c2([0.5] * 3, [0.4] * 3, p, [1000 * (1 + tol)] * 3, arms).status == REPRODUCED
    assert cl.decide_c2([0.5] * 3, [0.4] * 3, p, [1000 * (1 + tol) + 5] * 3, arms).status == INCONCLUSIVE


def test_c2_is_inconclusive_while_an_arm_still_learns():
    p = [1000, 1000, 1000]
    slow = comp(arm="hybrid") + comp(converged=[True, True, False], arm="Transformer")
    st = cl.decide_c2([0.5] * 3, [0.4] * 3, p, p, slow, max_steps=300, full_steps=6000)
    assert st.status == INCONCLUSIVE and "still improving at the budget of 300 steps" in st.reason
    weak = comp(arm="hybrid") + comp(clean=[0.2] * 3, arm="Transformer")
    assert cl.decide_c2([0.5] * 3, [0.2] * 3, p, p, weak).status == INCONCLUSIVE


def test_c3_and_extensions():
    assert cl.decide_c3([0.9] * 3, [0.8] * 3).status == REPRODUCED
    assert cl.decide_c3([0.8] * 3, [0.9] * 3).status == NOT_REPRODUCED
    top = cl.C3_CEILING
    at_ceiling = cl.decide_c3([top + 0.01] * 3, [top] * 3)
    assert at_ceiling.status == INCONCLUSIVE and "ceiling" in at_ceiling.threshold
    assert at_ceiling.fragile and at_ceiling.changes == (cl.C3_CEILING_CHANGE,)  # rule 7
    assert cl.decide_c3([top + 0.01] * 3, [top - 0.01] * 3).status == REPRODUCED
    m = cl.E1_CONTROL_MARGIN
    e1 = cl.decide_e1([0.9] * 3, [0.9 - m] * 3)
    assert e1.status == REPRODUCED and e1.extension
    assert cl.decide_e1([0.9] * 3, [0.9 - m + 0.01] * 3).status == NOT_REPRODUCED
    assert cl.decide_e2([0.3] * 3, [0.1] * 3).status == REPRODUCED
    assert cl.decide_e2([0.1] * 3, [0.1] * 3).status == NOT_REPRODUCED


def test_bad_input():
    with pytest.raises(ValueError, match="at least 3"):
        cl.decide_c3([0.9, 0.9], [0.8, 0.8])
    with pytest.raises(ValueError, match="for 3 seeds"):
        cl.decide_c3([0.9] * 3, [0.8] * 2)
    with pytest.raises(TypeError):
        cl.decide_c3([True, True, True], [0.8] * 3)
    with pytest.raises(TypeError):
        cl.decide_c3("0.9", [0.8] * 3)
    with pytest.raises(ValueError, match="non-finite"):
        cl.decide_c3([float("nan")] * 3, [0.8] * 3)
    with pytest.raises(ValueError, match="for 3 seeds"):
        c1(keep_flatten=[0.95] * 2)
    with pytest.raises(TypeError):
        cl.decide_e2(["a"] * 3, [0.1] * 3)
