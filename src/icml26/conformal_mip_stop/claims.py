"""The claims ledger of the conformal early-stopping chapter (the ledger rules: CONTRIBUTING.md, section 2).

Each decision function maps measured figures to a status; each threshold is a named module
constant, fixed before the run.

C1 validity: on every family the calibrated rule's coverage (mean over calibration/test re-splits)
   is at least 1 - alpha minus a sampling slack of two standard errors on the held-out pool.
C2 savings: on every family the calibrated rule uses less work than solving to eps, by a
   one-sided paired test over the >= 30 test instances of one fixed split (p < C2_MAX_P), and the
   mean work saved reaches half the paper's figure (C2_MIN_SAVED = 0.30 of "over 60%").
E1 (ours) the uncalibrated rule "predicted gap <= eps" covers less than 1 - alpha on at least one family.
E2 (ours) stopping at the first incumbent covers less than 1 - alpha on every family.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from icml26.common.ledger import (INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED, ClaimStatus,
                                  is_fragile, paired_test_p)

CLAIM_IDS = ("C1", "C2")

C1_SLACK_SE = 2.0  # sampling slack: this many standard errors sqrt(alpha (1 - alpha) / n_pool)
C2_PAPER_SAVED = 0.60  # the paper: over 60% of solve time saved
C2_MIN_SAVED = C2_PAPER_SAVED / 2  # "size applies": at least half the paper's effect
C2_MAX_P = 0.05  # one-sided paired test, work to eps > work at the conformal stop
C2_MIN_ITEMS = 30  # paired test items (test instances of one split)


def coverage_slack(alpha: float, n_pool: int) -> float:
    """C1_SLACK_SE standard errors of a coverage measured on a pool of n_pool instances."""
    if not 0.0 < alpha < 1.0 or n_pool < 1:
        raise ValueError(f"need 0 < alpha < 1 and n_pool >= 1, got alpha={alpha}, n_pool={n_pool}")
    return C1_SLACK_SE * math.sqrt(alpha * (1.0 - alpha) / n_pool)


def _per_family(values: Mapping[str, Sequence[float]], what: str) -> dict[str, np.ndarray]:
    if not values:
        raise ValueError(f"{what}: need at least one family")
    out = {}
    for fam, v in values.items():
        a = np.asarray(v, dtype=float).ravel()
        if a.size == 0 or not np.all(np.isfinite(a)):
            raise ValueError(f"{what} of {fam}: need finite values")
        out[fam] = a
    return out


def _split_status(ok: Mapping[str, bool]) -> str:
    if all(ok.values()):
        return REPRODUCED
    return PARTLY_REPRODUCED if any(ok.values()) else NOT_REPRODUCED


def decide_c1(coverage: Mapping[str, Sequence[float]], alpha: float, n_pool: int) -> ClaimStatus:
    """C1: per family, mean coverage over re-splits >= 1 - alpha - coverage_slack(alpha, n_pool).
    Every family: REPRODUCED; some: PARTLY REPRODUCED (names them); none: NOT REPRODUCED."""
    cov = _per_family(coverage, "coverage")
    bar = 1.0 - alpha - coverage_slack(alpha, n_pool)
    ok = {f: bool(c.mean() >= bar) for f, c in cov.items()}
    status = _split_status(ok)
    short = ", ".join(f for f in ok if not ok[f])
    reason = "" if status == REPRODUCED else f"coverage under the bar on {short}"
    figures = {f"coverage {f}": float(c.mean()) for f, c in cov.items()} | {"bar": bar}
    fragile = any(is_fragile(c, bar) for c in cov.values())
    rule = (f"mean coverage >= 1 - alpha - {C1_SLACK_SE:g} sqrt(alpha(1-alpha)/n_pool) "
            "on every family")
    claim = "the calibrated rule keeps coverage at least 1 - alpha on every family"
    return ClaimStatus("C1", claim, status, figures, rule, reason, fragile)


def decide_c2(work_saved: Mapping[str, Sequence[float]], paired: Mapping[str, tuple[Sequence[float], Sequence[float]]]
              ) -> ClaimStatus:
    """C2: per family, (a) work to eps > work at the conformal stop by a one-sided paired test over
    the test instances (p < C2_MAX_P, at least C2_MIN_ITEMS items), and (b) the mean work saved over
    re-splits >= C2_MIN_SAVED. (a) and (b) on every family: REPRODUCED; (a) on every family but
    (b) short somewhere, or (a) on some families only: PARTLY REPRODUCED; (a) nowhere: NOT REPRODUCED."""
    saved = _per_family(work_saved, "work saved")
    if set(paired) != set(saved):
        raise ValueError(f"paired items for {sorted(paired)} but savings for {sorted(saved)}")
    threshold = (f"paired p < C2_MAX_P = {C2_MAX_P} over >= {C2_MIN_ITEMS} test instances and mean work saved "
                 f">= C2_MIN_SAVED = {C2_MIN_SAVED:.2f} (half of the paper's 60%), on every family")
    short = [f for f, (ref, _) in paired.items() if len(ref) < C2_MIN_ITEMS]
    if short:
        return ClaimStatus("C2", "it saves much solve time", INCONCLUSIVE,
                           {f"work saved {f}": float(saved[f].mean()) for f in saved}, threshold,
                           f"fewer than {C2_MIN_ITEMS} test instances on {', '.join(short)}; a held-out pool of "
                           f"n_cal + {C2_MIN_ITEMS} instances would settle it")
    p = {f: paired_test_p(ref, stop, min_items=C2_MIN_ITEMS) for f, (ref, stop) in paired.items()}
    holds = {f: p[f] < C2_MAX_P for f in saved}
    size = {f: bool(saved[f].mean() >= C2_MIN_SAVED) for f in saved}
    if all(holds.values()) and all(size.values()):
        status, reason = REPRODUCED, ""
    elif all(holds.values()):
        status = PARTLY_REPRODUCED
        reason = f"saves work everywhere, but under half the paper's 60% on {', '.join(f for f in size if not size[f])}"
    elif any(holds.values()):
        status = PARTLY_REPRODUCED
        reason = f"no significant saving on {', '.join(f for f in holds if not holds[f])}"
    else:
        status, reason = NOT_REPRODUCED, "no family shows a significant saving"
    figures = {}
    for f in saved:
        figures[f"work saved {f}"] = float(saved[f].mean())
        figures[f"paired p {f}"] = p[f]
    fragile = any(is_fragile(v, C2_MIN_SAVED) for v in saved.values())
    return ClaimStatus("C2", "it saves much solve time", status, figures, threshold, reason, fragile)


def decide_e1(uncalibrated_coverage: Mapping[str, Sequence[float]], alpha: float) -> ClaimStatus:
    """E1 (ours): the uncalibrated rule's mean coverage < 1 - alpha on at least one family."""
    cov = _per_family(uncalibrated_coverage, "uncalibrated coverage")
    below = {f: bool(c.mean() < 1.0 - alpha) for f, c in cov.items()}
    status = REPRODUCED if any(below.values()) else NOT_REPRODUCED
    reason = "" if status == REPRODUCED else "the uncalibrated rule reaches 1 - alpha on every family"
    return ClaimStatus("E1", "stopping at predicted gap at most eps under-covers on some family", status,
                       {f"uncalibrated coverage {f}": float(c.mean()) for f, c in cov.items()},
                       "mean coverage < 1 - alpha on at least one family", reason,
                       any(is_fragile(c, 1.0 - alpha) for c in cov.values()))


def decide_e2(first_incumbent_coverage: Mapping[str, Sequence[float]], alpha: float) -> ClaimStatus:
    """E2 (ours): stopping at the first incumbent covers < 1 - alpha on every family."""
    cov = _per_family(first_incumbent_coverage, "first-incumbent coverage")
    below = {f: bool(c.mean() < 1.0 - alpha) for f, c in cov.items()}
    status = _split_status(below)
    reason = "" if status == REPRODUCED else f"the first incumbent covers on {', '.join(f for f in below if not below[f])}"
    return ClaimStatus("E2", "stopping at the first incumbent under-covers on every family", status,
                       {f"first-incumbent coverage {f}": float(c.mean()) for f, c in cov.items()},
                       "mean coverage < 1 - alpha on every family", reason,
                       any(is_fragile(c, 1.0 - alpha) for c in cov.values()))
