"""The claims ledger of the STEP chapter (the ledger rules: CONTRIBUTING.md, section 2).

One decision function per claim; every threshold is a named module constant, fixed before the
run. The comparative claims use the one-sided paired test over evaluation episodes paired by
their start state (:func:`icml26.common.ledger.paired_test_p`, at least ``MIN_ITEMS`` episodes,
p < ``ALPHA``), the robustness rule (CONTRIBUTING.md, section 2) for a single training run.
"""

from __future__ import annotations

import numpy as np

from icml26.common.ledger import combine_sub_results
from icml26.common.ledger import (INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED, ClaimStatus,
                                  is_fragile, paired_test_p)

CLAIM_IDS = ("C1", "C2", "C3", "C4")
ALPHA = 0.05  # one-sided paired test level
MIN_ITEMS = 30  # at least 30 paired episodes (or states)
# C1, the paper's state-based Push-T row at 2 steps: STEP 0.49, DDIM 0.29, BRIDGER 0.37 (size applies:
# at least half the paper's gain)
PAPER_PUSHT = {"DDPM-100": 0.94, "DDIM-2": 0.29, "BRIDGER-2": 0.37, "STEP-2": 0.49}
C1_MIN_GAIN_DDIM = 0.5 * (PAPER_PUSHT["STEP-2"] - PAPER_PUSHT["DDIM-2"])  # 0.10
C1_MIN_GAIN_SPATIAL = 0.5 * (PAPER_PUSHT["STEP-2"] - PAPER_PUSHT["BRIDGER-2"])  # 0.06
C2_MAX_TIME_RATIO = 0.15  # STEP-2's time per decision at most 0.15 of DDPM-100's
C3_MAX_STEP_RATIO = 1.0  # every median per-step error ratio c_k below 1
C4_MIN_STALL_CUT = 0.0  # the perturbation must lower the stall rate (paired, p < ALPHA)

CLAIMS = {
    "C1": "with two steps STEP beats two-step DDIM and a spatial-only start",
    "C2": "the two-step policy keeps the decision time low",
    "C3": "refinement from the predictor's start contracts the action error",
    "C4": "the velocity-aware perturbation prevents execution stalls",
    "E1": "STEP beats two-step DDIM with trailing spacing",
    "E2": "STEP beats warm-starting from the reused previous chunk",
}


def _items(x, what: str) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.ndim != 1:
        raise ValueError(f"{what} must be one value per episode, got shape {a.shape}")
    if a.size < MIN_ITEMS:
        raise ValueError(f"{what}: the paired test needs at least {MIN_ITEMS} items, got {a.size}")
    if not np.isfinite(a).all():
        raise ValueError(f"{what} holds a non-finite value")
    return a


def _groups(n_groups: int, n: int) -> int:
    if not isinstance(n_groups, int) or isinstance(n_groups, bool) or n_groups < 1 or n % n_groups:
        raise ValueError(f"n_groups must be a positive int dividing {n}, got {n_groups!r}")
    return n_groups


def paired_gain(method, baseline, min_gain: float, n_groups: int = 1) -> dict:
    """One sub-result: gain = mean(method) - mean(baseline) over paired episodes, the one-sided
    paired p-value, and its status: p < ALPHA -> REPRODUCED (PARTLY REPRODUCED when the gain is
    under `min_gain`); otherwise gain <= 0 -> NOT REPRODUCED (absent or reversed), else
    INCONCLUSIVE. Every episode equal in both (all at floor or ceiling) -> INCONCLUSIVE.
    `n_groups` evaluation seeds of equal size give the per-seed gains for the fragile flag."""
    m, b = _items(method, "method"), _items(baseline, "baseline")
    if m.size != b.size:
        raise ValueError(f"paired items differ in number: {m.size} and {b.size}")
    g = _groups(n_groups, m.size)
    gain = float(m.mean() - b.mean())
    p = paired_test_p(m, b, MIN_ITEMS)
    floor_or_ceiling = bool(np.all(m == m[0]) and np.all(b == m[0]))
    if floor_or_ceiling:
        status = INCONCLUSIVE
    elif p < ALPHA:
        status = REPRODUCED if gain >= min_gain else PARTLY_REPRODUCED
    elif gain <= 0:
        status = NOT_REPRODUCED
    else:
        status = INCONCLUSIVE
    per_seed = (m.reshape(g, -1).mean(1) - b.reshape(g, -1).mean(1)).tolist()
    fragile = is_fragile(per_seed, min_gain) if (g > 1 and not floor_or_ceiling) else False
    return {"gain": gain, "p": float(p), "status": status, "per_seed_gain": per_seed, "fragile": bool(fragile),
            "floor_or_ceiling": floor_or_ceiling}

def decide_c1(step, ddim, spatial, n_groups: int = 1) -> ClaimStatus:
    """C1: STEP-2 vs DDIM-2 (official configuration) and vs the spatial-only start, per-episode
    success paired by start state; each a sub-result with its size (half the paper's Push-T gain)."""
    vs_ddim = paired_gain(step, ddim, C1_MIN_GAIN_DDIM, n_groups)
    vs_sp = paired_gain(step, spatial, C1_MIN_GAIN_SPATIAL, n_groups)
    status = combine_sub_results([vs_ddim["status"], vs_sp["status"]])
    reason = "" if status == REPRODUCED else (
        f"vs DDIM-2: {vs_ddim['status']} (gain {vs_ddim['gain']:+.2f}, needs {C1_MIN_GAIN_DDIM:.2f}); "
        f"vs spatial-only: {vs_sp['status']} (gain {vs_sp['gain']:+.2f}, needs {C1_MIN_GAIN_SPATIAL:.2f})")
    return ClaimStatus("C1", CLAIMS["C1"], status,
                       {"success STEP-2": round(float(np.mean(step)), 3),
                        "gain vs DDIM-2": round(vs_ddim["gain"], 3), "p vs DDIM-2": round(vs_ddim["p"], 4),
                        "gain vs spatial-only-2": round(vs_sp["gain"], 3), "p vs spatial-only-2": round(vs_sp["p"], 4),
                        "episodes (paired)": int(np.size(step))},
                       f"one-sided paired test p < ALPHA = {ALPHA} over >= {MIN_ITEMS} episodes, and gain >= "
                       f"C1_MIN_GAIN_DDIM = {C1_MIN_GAIN_DDIM:.2f} (vs DDIM-2), >= C1_MIN_GAIN_SPATIAL = "
                       f"{C1_MIN_GAIN_SPATIAL:.2f} (vs spatial-only)", reason,
                       vs_ddim["fragile"] or vs_sp["fragile"])


def decide_c2(step_seconds: float, full_seconds: float, step_seconds_batch: float | None = None,
              full_seconds_batch: float | None = None) -> ClaimStatus:
    """C2: latency, the time of one decision for one robot (batch 1), of STEP-2 <= C2_MAX_TIME_RATIO
    x DDPM-100's. The time per decision over the whole evaluation batch is reported alongside
    (on a CPU it also measures how the predictor scales with the batch)."""
    vals = [(step_seconds, "step_seconds"), (full_seconds, "full_seconds")]
    if step_seconds_batch is not None or full_seconds_batch is not None:
        vals += [(step_seconds_batch, "step_seconds_batch"), (full_seconds_batch, "full_seconds_batch")]
    for v, what in vals:
        if isinstance(v, bool) or not isinstance(v, (int, float, np.floating)) or not np.isfinite(v) or v <= 0:
            raise ValueError(f"{what} must be a positive number, got {v!r}")
    ratio = float(step_seconds) / float(full_seconds)
    ok = ratio <= C2_MAX_TIME_RATIO
    figures = {"latency ratio STEP-2 / DDPM-100 (batch 1)": round(ratio, 3)}
    if step_seconds_batch is not None:
        figures["time ratio over the whole batch (reported)"] = round(float(step_seconds_batch) / float(full_seconds_batch), 3)
    return ClaimStatus("C2", CLAIMS["C2"], REPRODUCED if ok else NOT_REPRODUCED, figures,
                       f"batch-1 latency ratio <= C2_MAX_TIME_RATIO = {C2_MAX_TIME_RATIO}",
                       "" if ok else "STEP-2's decision costs more than the allowed share of DDPM-100's")


def decide_c3(per_state_error) -> ClaimStatus:
    """C3: with the errors e_k = ||A~_k - A*_k|| per held-out state (N, K+1) along the
    refinement, every median per-step ratio e_{k+1}/e_k is below C3_MAX_STEP_RATIO and the final
    error is below the initial one by a one-sided paired test (p < ALPHA)."""
    err = np.asarray(per_state_error, dtype=float)
    if err.ndim != 2 or err.shape[1] < 2:
        raise ValueError(f"per_state_error must be (states, steps+1), got shape {err.shape}")
    if not np.isfinite(err).all() or (err < 0).any():
        raise ValueError("errors must be finite and non-negative")
    ratios = np.median(err[:, 1:] / np.maximum(err[:, :-1], 1e-12), axis=0)
    p = paired_test_p(err[:, 0], err[:, -1], MIN_ITEMS)
    every = bool((ratios < C3_MAX_STEP_RATIO).all())
    if every and p < ALPHA:
        status, reason = REPRODUCED, ""
    elif (ratios < C3_MAX_STEP_RATIO).any() and p < ALPHA:
        status, reason = PARTLY_REPRODUCED, "the error shrinks overall but not at every step"
    else:
        status, reason = NOT_REPRODUCED, "the error does not shrink along the refinement"
    return ClaimStatus("C3", CLAIMS["C3"], status,
                       {"median ratio per step": [round(float(r), 3) for r in ratios],
                        "p (first > last error)": round(float(p), 4), "states": int(err.shape[0])},
                       f"every median ratio < C3_MAX_STEP_RATIO = {C3_MAX_STEP_RATIO} and paired p < ALPHA = {ALPHA}",
                       reason, is_fragile(ratios, C3_MAX_STEP_RATIO))


def decide_c4(stalled_with, stalled_without, n_groups: int = 1) -> ClaimStatus:
    """C4: stall per episode (0/1) with and without the perturbation on the dead-band task,
    paired by start state: the perturbation lowers the stall rate (one-sided p < ALPHA).
    No stall in either run -> INCONCLUSIVE (the task did not produce stalls)."""
    w, wo = _items(stalled_with, "stalled_with"), _items(stalled_without, "stalled_without")
    if w.size != wo.size:
        raise ValueError(f"paired items differ in number: {w.size} and {wo.size}")
    if not set(np.unique(np.concatenate([w, wo]))) <= {0.0, 1.0}:
        raise ValueError("stalls must be 0/1 per episode")
    res = paired_gain(wo, w, C4_MIN_STALL_CUT, n_groups)  # "gain" = stall rate cut by the perturbation
    status = res["status"]
    if status == PARTLY_REPRODUCED:  # no size applies: a significant cut is the claim
        status = REPRODUCED
    if wo.sum() == 0 and w.sum() == 0:
        status = INCONCLUSIVE
        reason = "no episode stalled in either run: the task did not produce stalls"
    elif status == INCONCLUSIVE:
        reason = "the stall rates differ by less than the paired test resolves; more episodes would settle it"
    elif status == NOT_REPRODUCED:
        reason = "the perturbation does not lower the stall rate"
    else:
        reason = ""
    return ClaimStatus("C4", CLAIMS["C4"], status,
                       {"stall rate without": round(float(wo.mean()), 3), "stall rate with": round(float(w.mean()), 3),
                        "p": round(res["p"], 4), "episodes (paired)": int(w.size)},
                       f"one-sided paired test p < ALPHA = {ALPHA} over >= {MIN_ITEMS} episodes", reason,
                       res["fragile"])


def decide_extension(claim_id: str, step, baseline, n_groups: int = 1) -> ClaimStatus:
    """E1 / E2 (ours): STEP-2 beats the named baseline, paired by start state (no size)."""
    if claim_id not in ("E1", "E2"):
        raise ValueError(f"extensions of this chapter are E1 and E2, got {claim_id!r}")
    res = paired_gain(step, baseline, 0.0, n_groups)
    status = REPRODUCED if res["status"] == PARTLY_REPRODUCED else res["status"]
    reason = {REPRODUCED: "", NOT_REPRODUCED: "STEP-2 does not beat this baseline",
              INCONCLUSIVE: "the difference is within what the paired test resolves"}[status]
    return ClaimStatus(claim_id, CLAIMS[claim_id], status,
                       {"gain": round(res["gain"], 3), "p": round(res["p"], 4)},
                       f"one-sided paired test p < ALPHA = {ALPHA}", reason, res["fragile"])
