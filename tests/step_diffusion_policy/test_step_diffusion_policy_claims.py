"""The STEP chapter's decision functions on hand-made figures, both sides of every boundary."""

import json

import numpy as np
import pytest

from icml26.common.ledger import (INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED, Competence)
from icml26.step_diffusion_policy import claims

N = 60
OK = (Competence("denoiser", 0.9, 0.5), Competence("predictor", 0.9, 0.5))
BAD = (Competence("denoiser", 0.3, 0.5), Competence("predictor", 0.9, 0.5))


def paired(base_rate, extra, n=N):
    """baseline successes, and the method = baseline + `extra` share of the episodes flipped to success."""
    b = np.zeros(n)
    b[: int(round(base_rate * n))] = 1
    m = b.copy()
    m[int(round(base_rate * n)): int(round((base_rate + extra) * n))] = 1
    return m.tolist(), b.tolist()


def seeds(extras, base=0.3):
    """One (method, baseline) pair of episode lists per seed with the given gains."""
    pairs = [paired(base, e) if e >= 0 else paired(base + e, -e)[::-1] for e in extras]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def test_claim_ids_sizes_and_bars():
    assert claims.CLAIM_IDS == ("C1", "C2", "C3", "C4")
    assert claims.SOURCE_BASIS == "official code and full-text summary" and claims.STAND_INS == {}
    assert claims.C1_MIN_GAIN_DDIM == pytest.approx(0.10) and claims.C1_MIN_GAIN_SPATIAL == pytest.approx(0.06)


def test_trained_comparison_needs_three_seeds():
    m, b = seeds([0.3])
    res = claims.trained_comparison(m, b, 0.1, "x")
    assert res["status"] == INCONCLUSIVE and res["n_seeds"] == 1
    assert res["per_seed"][0]["status"] == REPRODUCED  # the paired test decides that seed only
    m, b = seeds([0.3, 0.3, 0.3])
    assert claims.trained_comparison(m, b, 0.1, "x")["status"] == REPRODUCED


def test_trained_comparison_size_and_direction_boundaries():
    m, b = seeds([0.3, 0.3, 0.05])  # one seed under the size bar: PARTLY
    assert claims.trained_comparison(m, b, 0.1, "x")["status"] == PARTLY_REPRODUCED
    m, b = seeds([0.0, 0.0, 0.0])  # absent in every seed
    assert claims.trained_comparison(m, b, 0.1, "x")["status"] == NOT_REPRODUCED
    m, b = seeds([-0.2, -0.2, -0.2])  # reversed in every seed
    assert claims.trained_comparison(m, b, 0.1, "x")["status"] == NOT_REPRODUCED
    m, b = seeds([0.3, -0.3, 0.3])  # seeds disagree, seed t-test not significant
    res = claims.trained_comparison(m, b, 0.1, "x")
    assert res["status"] == INCONCLUSIVE and res["fragile"]


def test_c1_combines_the_two_comparisons_and_gates_competence():
    sm, sd = seeds([0.4, 0.4, 0.4], base=0.1)
    _, ssp = seeds([0.2, 0.2, 0.2], base=0.3)
    step = sm
    spatial = [(np.array(s) * 0).tolist() for s in ssp]  # spatial-only fails everywhere: STEP wins
    c1 = claims.decide_c1(step, sd, spatial, [0.1, 0.1, 0.1], OK)
    assert c1.status == REPRODUCED and not c1.fragile
    worse = [(np.ones(N)).tolist()] * 3  # spatial-only succeeds everywhere: STEP loses that sub-result
    c1 = claims.decide_c1(step, sd, worse, [0.1, 0.1, 0.1], OK)
    assert c1.status == PARTLY_REPRODUCED and "vs spatial-only: NOT REPRODUCED" in c1.reason
    c1 = claims.decide_c1(step, sd, spatial, [0.1, 0.1, 0.1], BAD)
    assert c1.status == INCONCLUSIVE and "rule 2" in c1.reason
    one = claims.decide_c1(step[:1], sd[:1], spatial[:1], [0.1], OK)
    assert one.status == INCONCLUSIVE and "rule 1 needs 3" in one.reason


def test_c2_boundary_batch_report_and_threshold_change():
    at = claims.C2_MAX_TIME_RATIO
    under = claims.decide_c2([[at * 0.5] * 5] * 3, [[1.0] * 5] * 3, [[0.5] * 5] * 3, [[1.0] * 5] * 3, 50, OK)
    assert under.status == REPRODUCED and under.fragile  # rule 7: the setting changed after a result
    assert under.changes and "batch of 50" in under.reason and "over the bar" in under.reason
    over = claims.decide_c2([[at * 1.5] * 5] * 3, [[1.0] * 5] * 3, [[0.5] * 5] * 3, [[1.0] * 5] * 3, 50, OK)
    assert over.status == NOT_REPRODUCED
    mixed = claims.decide_c2([[at * 0.5] * 5, [at * 1.5] * 5, [at * 0.5] * 5], [[1.0] * 5] * 3,
                             [[0.5] * 5] * 3, [[1.0] * 5] * 3, 50, OK)
    assert mixed.status == INCONCLUSIVE
    one = claims.decide_c2([[0.05, 0.06, 0.05]], [[1.0, 1.1, 1.0]], [[0.1]], [[1.0]], 50, OK)
    assert one.status == REPRODUCED  # a timing claim, not a comparison of trained methods
    assert claims.decide_c2([[0.05]] * 3, [[1.0]] * 3, [[0.1]] * 3, [[1.0]] * 3, 50, BAD).status == INCONCLUSIVE


def contraction(ratios, n=40, seed=0):
    """(n, K+1) errors whose per-step ratios are `ratios` (times a little noise)."""
    rng = np.random.default_rng(seed)
    e = [np.full(n, 1.0)]
    for r in ratios:
        e.append(e[-1] * r * rng.uniform(0.95, 1.05, n))
    return np.stack(e, 1).tolist()


def test_c3_statuses_per_seed_and_over_seeds():
    good = contraction([0.6, 0.5])
    assert claims.decide_c3([good] * 3, OK).status == REPRODUCED
    assert claims.decide_c3([contraction([1.2, 0.5])] * 3, OK).status == PARTLY_REPRODUCED
    assert claims.decide_c3([contraction([1.2, 1.1])] * 3, OK).status == NOT_REPRODUCED
    assert claims.decide_c3([good, good, contraction([1.2, 1.1])], OK).status == INCONCLUSIVE
    assert claims.decide_c3([good], OK).status == REPRODUCED
    assert claims.decide_c3([good] * 3, BAD).status == INCONCLUSIVE
    near = claims.decide_c3([contraction([0.999, 0.5])], OK)  # the worst ratio's interval crosses 1
    assert near.fragile


def test_c4_no_stalls_and_a_real_cut():
    zeros = [[0.0] * N] * 3
    c4 = claims.decide_c4(zeros, zeros, OK)
    assert c4.status == INCONCLUSIVE and "did not produce stalls" in c4.reason
    without, with_ = seeds([0.4, 0.4, 0.4], base=0.0)  # 40 % stall without, none with
    assert claims.decide_c4(with_, without, OK).status == REPRODUCED
    assert claims.decide_c4(without, with_, OK).status == NOT_REPRODUCED


def test_extensions():
    m, b = seeds([0.2, 0.2, 0.2])
    assert claims.decide_extension("E1", m, b, OK).status == REPRODUCED
    assert claims.decide_extension("E2", b, m, OK).status == NOT_REPRODUCED
    with pytest.raises(ValueError, match="E1 and E2"):
        claims.decide_extension("E3", m, b, OK)


def test_bad_input():
    with pytest.raises(ValueError, match="at least 30"):
        claims.trained_comparison([[1.0] * 5], [[0.0] * 5], 0.1, "x")
    with pytest.raises(ValueError, match="one list of episodes per seed"):
        claims.trained_comparison([[1.0] * N], [], 0.1, "x")
    with pytest.raises(ValueError, match="per_state_error"):
        claims.decide_c3([[[1.0]] * 40])
    with pytest.raises(ValueError, match="0/1"):
        claims.decide_c4([[0.5] * N], [[0.0] * N])
    with pytest.raises(ValueError, match="positive"):
        claims._ratio_items([0.0], [1.0])


def fake_results(n_seeds=3):
    roles = {"full": "DDPM-100", "ddim": "DDIM-2", "ddim_trail": "DDIM-2 trailing", "spatial": "Spatial-only-2",
             "pred": "Predictor only", "reuse": "Reuse-2", "step": "STEP-2"}
    rng = np.random.default_rng(0)

    def seed(s):
        succ = {name: (rng.random(N) < p).astype(float).tolist() for name, p in
                zip(roles.values(), (0.9, 0.05, 0.5, 0.6, 0.0, 0.7, 0.55))}
        return {"seed": s, "success": succ, "straight_line_success": 0.0,
                "predictor_r2": {"spatiotemporal": 0.9, "spatial": 0.8},
                "latency_batch1_s": {"STEP-2": [0.002] * 5, "DDPM-100": [0.03] * 5},
                "latency_batch_s": {"STEP-2": [0.02] * 5, "DDPM-100": [0.06] * 5}, "latency_batch_size": 50,
                "contraction": {"per_state_error": contraction([0.6, 0.4], seed=s)},
                "stall": {"with perturbation": {"stalled": [0.0] * N}, "without perturbation": {"stalled": [0.0] * N}}}
    return {"seeds": list(range(n_seeds)), "roles": roles, "methods": list(roles.values()),
            "per_seed": [seed(s) for s in range(n_seeds)]}


def test_build_ledger_wiring_and_json_round_trip():
    results = fake_results()
    ledger = claims.build_ledger(results)
    again = claims.build_ledger(json.loads(json.dumps(results)))
    assert ledger.check_lines() == again.check_lines()
    e = ledger.entries
    assert e["C2"].status == REPRODUCED
    assert e["C2"].changes and e["C2"].fragile
    assert e["C3"].status == REPRODUCED and e["C4"].status == INCONCLUSIVE
    bad = fake_results()
    for s in bad["per_seed"]:
        s["predictor_r2"]["spatial"] = 0.1  # the spatial-only predictor did not learn
    assert claims.build_ledger(bad).entries["C1"].status == INCONCLUSIVE
