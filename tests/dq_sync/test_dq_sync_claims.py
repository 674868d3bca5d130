"""Decision functions of the dq_sync ledger, on hand-made figures, on both sides of every boundary."""

import json

import numpy as np
import pytest

from icml26.common.ledger import INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED, Ledger
from icml26.dq_sync import claims as C


def test_contract_names():
    assert C.CLAIM_IDS == ("C1", "C2", "C3", "C4")
    assert C.SOURCE_BASIS == "full-text summary" and C.STAND_INS == {}
    Ledger("dq_sync", C.CLAIM_IDS)


# --- C1: geometric decay by a log-linear fit -------------------------------------------------

def test_geometric_fit_passes_a_linear_rate_and_fails_sublinear_decay():
    k = np.arange(30)
    geo = C.geometric_fit(0.8 ** k)
    assert geo["geometric"] and geo["rate"] == pytest.approx(0.8) and geo["r2"] == pytest.approx(1.0)
    noisy = 0.7 ** k * np.exp(0.1 * np.random.default_rng(0).standard_normal(30))
    assert C.geometric_fit(noisy)["geometric"]
    # 1/k and 1/k^2 converge, but sublinearly: the power law explains them better
    assert not C.geometric_fit(1.0 / (k + 1))["geometric"]
    assert not C.geometric_fit(1.0 / (k + 1) ** 2)["geometric"]
    # the step lengths of a 1/k sequence (~ 1/k^2) fail; those of a geometric one pass
    x = 1.0 / (np.arange(31) + 1)
    assert not C.geometric_fit(x[:-1] - x[1:])["geometric"]
    g = 0.8 ** np.arange(31)
    assert C.geometric_fit(g[:-1] - g[1:])["geometric"]
    # no decay at all: rate >= 1
    assert not C.geometric_fit(np.ones(30) + 1e-3 * k)["geometric"]


def test_geometric_fit_round_off_and_r2_boundary():
    fast = C.geometric_fit([1.0, 1e-3, 1e-7, 1e-12, 1e-15])  # at round-off in 3 steps
    assert fast["geometric"] and fast["points"] < C.C1_MIN_POINTS
    # a geometric curve with a large wiggle: R^2 just below the bar fails
    k = np.arange(20)
    wiggle = 0.9 ** k * np.exp(np.where(k % 2 == 0, 1.0, -1.0) * 0.75)
    fit = C.geometric_fit(wiggle)
    assert fit["r2"] < C.C1_MIN_R2 and not fit["geometric"]
    with pytest.raises(ValueError):
        C.geometric_fit([1.0, float("nan"), 0.5])


def test_c1_boundaries():
    ok = C.decide_c1([True] * 3, [0.99, 0.98, 0.995], [0.5, 0.6, 0.7], [True] * 3, [True] * 3, 3)
    assert ok.status == REPRODUCED and not ok.fragile
    assert C.decide_c1([False] * 3, [0.5] * 3, [0.9] * 3, [True] * 3, [True] * 3, 3).status == NOT_REPRODUCED
    assert C.decide_c1([True] * 3, [0.99] * 3, [0.5] * 3, [False] * 3, [True] * 3, 3).status == NOT_REPRODUCED
    mixed = C.decide_c1([True] * 3, [0.99] * 3, [0.5] * 3, [True] * 3, [True, False, True], 3)
    assert mixed.status == INCONCLUSIVE and mixed.fragile
    two = C.decide_c1([True] * 3, [0.99] * 3, [0.5] * 3, [True] * 3, [True] * 3, C.C1_MIN_LEVELS - 1)
    assert two.status == INCONCLUSIVE and "noise levels" in two.reason
    # R^2 values straddling the bar across instances: fragile
    assert C.decide_c1([True] * 3, [0.91, 0.95, 0.999], [0.5] * 3, [True] * 3, [True] * 3, 3).fragile


def test_c1_bad_input():
    with pytest.raises(TypeError):
        C.decide_c1([1, 1, 1], [0.99] * 3, [0.5] * 3, [True] * 3, [True] * 3, 3)
    with pytest.raises(ValueError):
        C.decide_c1([True] * 3, [0.99] * 3, [0.5] * 3, [True] * 2, [True] * 3, 3)
    with pytest.raises(ValueError):
        C.decide_c1([True] * 2, [0.99] * 2, [0.5] * 2, [True] * 2, [True] * 2, 3)  # fewer than 3 instances
    with pytest.raises(ValueError):
        C.decide_c1([True] * 3, [np.nan] * 3, [0.5] * 3, [True] * 3, [True] * 3, 3)


# --- C2: accuracy with an equivalence band, two regimes ---------------------------------------

def _regime(delta_rot, delta_trans, n=40, seed=0, lower=(True, True)):
    rng = np.random.default_rng(seed)
    eig_r = 5 + rng.random(n)
    eig_t = 0.1 + 0.01 * rng.random(n)
    return {"rot_dq": eig_r * (1 + delta_rot + 0.001 * rng.standard_normal(n)), "rot_eig": eig_r,
            "trans_dq": eig_t * (1 + delta_trans + 0.001 * rng.standard_normal(n)), "trans_eig": eig_t,
            "rot_lower": list(lower), "trans_lower": list(lower)}


OK = {"dqgpm": 5.0, "eig_se3": 5.0}


def test_c2_statuses():
    both = {"no outliers": _regime(-0.2, -0.2), "outliers": _regime(-0.2, -0.2, seed=1)}
    assert C.decide_c2(both, OK).status == REPRODUCED
    part = C.decide_c2({"no outliers": _regime(-0.2, -0.2), "outliers": _regime(+0.2, +0.2, seed=1)}, OK)
    assert part.status == PARTLY_REPRODUCED
    # better overall but not lower at one density: that sub-result is PARTLY
    assert C.decide_c2({"a": _regime(-0.2, -0.2, lower=(True, False))}, OK).status == PARTLY_REPRODUCED
    worse = C.decide_c2({"a": _regime(+0.2, +0.3)}, OK)
    assert worse.status == NOT_REPRODUCED and "worse" in worse.reason


def test_c2_equivalence_band_applies_to_significant_effects():
    # DQ lower in every run by 1%: highly significant, but inside the band: a tie, not "more accurate"
    tie = C.decide_c2({"a": _regime(-0.01, -0.01)}, OK)
    assert tie.figures["a, rotation: p(DQ better)"] < 1e-6
    assert tie.status == NOT_REPRODUCED and "tie" in tie.reason
    # just beyond the band: better
    assert C.decide_c2({"a": _regime(-C.C2_EQUIV - 0.01, -C.C2_EQUIV - 0.01)}, OK).status == REPRODUCED
    # just inside
    assert C.decide_c2({"a": _regime(-C.C2_EQUIV + 0.01, -C.C2_EQUIV + 0.01)}, OK).status == NOT_REPRODUCED


def test_c2_undecided_and_too_few_runs():
    # relative +50% on half the runs, -30% on the other half, with equal absolute differences:
    # |mean rel diff| beyond the band, no significance either way -> INCONCLUSIVE
    up = np.arange(40) % 2 == 0
    base = np.where(up, 1.0, 5.0 / 3.0)
    wild = np.where(up, 1.5, 0.7)
    reg = {"rot_dq": base * wild, "rot_eig": base, "trans_dq": base * wild, "trans_eig": base,
           "rot_lower": [True], "trans_lower": [True]}
    s = C.decide_c2({"a": reg}, OK)
    assert abs(np.mean(wild - 1)) > C.C2_EQUIV and s.status == INCONCLUSIVE
    few = {k: (v[:C.MIN_ITEMS - 1] if not k.endswith("lower") else v) for k, v in _regime(-0.2, -0.2).items()}
    assert C.decide_c2({"a": few}, OK).status == INCONCLUSIVE


def test_c2_competence_gate():
    bar = C.C2_COMPETENT_SHARE * C.CHANCE_ROT_DEG
    assert C.CHANCE_ROT_DEG == pytest.approx(126.5, abs=0.1)
    regs = {"a": _regime(-0.2, -0.2)}
    assert C.decide_c2(regs, {"dqgpm": bar, "eig_se3": 5.0}).status == REPRODUCED  # at the bar: competent
    broken = C.decide_c2(regs, {"dqgpm": 5.0, "eig_se3": bar + 0.1})
    assert broken.status == INCONCLUSIVE and "eig_se3" in broken.reason


def test_c2_bad_input():
    r = _regime(-0.2, -0.2)
    with pytest.raises(ValueError):
        C.decide_c2({"a": {**r, "rot_dq": r["rot_dq"][:-1]}}, OK)
    with pytest.raises(TypeError):
        C.decide_c2({"a": {**r, "rot_lower": ["yes"]}}, OK)
    with pytest.raises(ValueError):
        C.decide_c2({}, OK)


# --- C3: timing at n >= 500 ------------------------------------------------------------------

def test_c3_boundaries():
    n = C.C3_MIN_N
    assert C.decide_c3([1.0, 1.0, 1.0], [2.0, 2.1, 1.9], n).status == REPRODUCED
    assert C.decide_c3([1.0, 1.0, 1.0], [1.0, 1.0, 1.0], n).status == NOT_REPRODUCED  # equal is not faster
    mixed = C.decide_c3([1.0, 1.0, 1.0], [1.1, 0.9, 1.2], n)
    assert mixed.status == INCONCLUSIVE and mixed.fragile
    small = C.decide_c3([1.0, 1.0, 1.0], [2.0, 2.1, 1.9], n - 1)  # a graph below C3_MIN_N decides nothing
    assert small.status == INCONCLUSIVE and str(C.C3_MIN_N) in small.reason
    with pytest.raises(ValueError):
        C.decide_c3([1.0, 1.0], [1.0, 1.0], n)  # fewer than 3 repeats
    with pytest.raises(ValueError):
        C.decide_c3([1.0] * 3, [1.0] * 2, n)
    with pytest.raises(ValueError):
        C.decide_c3([1.0] * 3, [1.0] * 3, 0)


# --- C4, E1 ----------------------------------------------------------------------------------

def test_c4_boundaries():
    assert C.decide_c4([C.C4_MAX_ROT_DEG] * 3, [C.C4_MAX_RMSE] * 3).status == REPRODUCED
    assert C.decide_c4([C.C4_MAX_ROT_DEG + 1e-9] * 3, [0.0] * 3).status == NOT_REPRODUCED
    assert C.decide_c4([0.0] * 3, [C.C4_MAX_RMSE + 1e-9] * 3).status == NOT_REPRODUCED
    one = C.decide_c4([0.5, 0.5, 1.5], [0.01] * 3)
    assert one.status == INCONCLUSIVE and one.fragile
    with pytest.raises(ValueError):
        C.decide_c4([float("nan")] * 3, [0.01] * 3)
    with pytest.raises(ValueError):
        C.decide_c4([-1.0] * 3, [0.01] * 3)
    with pytest.raises(ValueError):
        C.decide_c4([0.5] * 2, [0.01] * 2)  # fewer than 3 scenes


def test_e1_boundaries():
    at = C.decide_e1([True] * 90 + [False] * 10)  # share exactly E1_MIN_IMPROVES = 0.9
    assert at.status == REPRODUCED and at.extension and at.fragile
    assert C.decide_e1([True] * 89 + [False] * 11).status == NOT_REPRODUCED
    clean = C.decide_e1([True] * 100)
    assert clean.status == REPRODUCED and not clean.fragile
    with pytest.raises(TypeError):
        C.decide_e1([1, 0, 1])
    with pytest.raises(ValueError):
        C.decide_e1([])


def test_subspace_block_must_hold_the_eigenspace():
    from scipy.sparse import identity

    from icml26.dq_sync.baselines import subspace_top4

    with pytest.raises(ValueError, match="block"):
        subspace_top4(identity(20, format="csr"), block=3)


# --- the wiring ------------------------------------------------------------------------------

SMOKE_STATUSES = ["REPRODUCED", "INCONCLUSIVE", "INCONCLUSIVE", "REPRODUCED", "NOT REPRODUCED"]


def test_smoke_ledger_and_json_round_trip():
    from icml26.dq_sync import get_config, run_experiment
    from icml26.evidence import from_plain, to_plain

    results = run_experiment(get_config("smoke"), device="cpu")
    ledger = C.build_ledger(results)
    assert [e.status for e in ledger._ordered()] == SMOKE_STATUSES
    plain = from_plain(json.loads(json.dumps(to_plain(results))))
    assert C.build_ledger(plain).check_lines() == ledger.check_lines()
    assert results["seeds"] == [0, 1, 2]
