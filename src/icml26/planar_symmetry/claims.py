"""The claims ledger of the planar_symmetry chapter (the ledger rules: CONTRIBUTING.md, section 2).

One decision function per claim maps measured figures to a status; each threshold is a named
module constant fixed before the runs. C1 and C2 are exactness claims (numeric tolerances);
C3 compares the smallest and the largest base of one run by a one-sided paired test over the
held-out pixels (the robustness rule's paired alternative); C4 is a design demo with a
measurable connectivity outcome. E1 is a check of ours, never counted in the verdict.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

from icml26.common.ledger import (
    NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED, ClaimStatus, is_fragile, paired_test_p,
)

from .groups import WALLPAPER_GROUPS

CLAIM_IDS = ("C1", "C2", "C3", "C4")

#: C1: the largest invariance error of Eq. 3 (every group, every generator, both bases).
C1_MAX_INVARIANCE_ERROR = 1e-9
#: C2: Eq. 3's tear ratio on every group may be at most this (a jump gives about the step factor, 10).
C2_MAX_TEAR_CONTINUOUS = 2.0
#: C2: the naive wrap must tear (ratio at least this) on each of these groups.
C2_MIN_TEAR_NAIVE = 4.0
C2_TEAR_GROUPS = ("p3", "p4", "p6", "pg")
#: C3: PSNR gained from the smallest to the largest base, on every fitted group.
C3_MIN_GAIN_DB = 6.0
#: C3: the one-sided paired test (squared error per held-out pixel, smallest > largest base).
C3_ALPHA = 0.05
#: C4: the paper-cutting design (Eq. 3 + VTM) must be one connected piece (periodic flood fill).
C4_MAX_COMPONENTS = 1
#: E1 (ours): Eq. 3's PSNR may be at most this far below group averaging's, on every fitted group.
E1_MAX_PSNR_GAP_DB = 1.0


def _number(name: str, v) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) and type(v).__name__ not in ("float64", "float32", "int64"):
        raise TypeError(f"{name} must be a number, got {type(v).__name__} ({v!r})")
    if math.isnan(float(v)):
        raise ValueError(f"{name} is NaN")
    return float(v)


def _per_group(name: str, values: Mapping[str, float]) -> dict[str, float]:
    if not isinstance(values, Mapping) or not values:
        raise TypeError(f"{name} must be a non-empty mapping group -> number")
    return {str(g): _number(f"{name}[{g}]", v) for g, v in values.items()}


def decide_c1(invariance_error: Mapping[str, float]) -> ClaimStatus:
    """C1: the largest invariance error of Eq. 3 for each group run (max over generators and
    bases) is below C1_MAX_INVARIANCE_ERROR, and all 17 wallpaper groups were run."""
    err = _per_group("invariance_error", invariance_error)
    claim = "Eq. 3 is exactly invariant under every planar group run"
    missing = [g for g in WALLPAPER_GROUPS if g not in err]
    bad = [g for g, e in err.items() if not e < C1_MAX_INVARIANCE_ERROR]
    figures = {"groups run": len(err), "wallpaper groups run": 17 - len(missing), "max invariance error": max(err.values()),
               "groups over the tolerance": len(bad)}
    threshold = f"max error < C1_MAX_INVARIANCE_ERROR = {C1_MAX_INVARIANCE_ERROR:g} on every group; all 17 wallpaper groups"
    if missing:
        raise ValueError(f"C1 needs all 17 wallpaper groups; missing {missing}")
    if not bad:
        return ClaimStatus("C1", claim, REPRODUCED, figures, threshold)
    status = NOT_REPRODUCED if len(bad) == len(err) else PARTLY_REPRODUCED
    return ClaimStatus("C1", claim, status, figures, threshold, f"not invariant to tolerance on {', '.join(bad)}")


def decide_c2(tear_eq3: Mapping[str, float], tear_naive: Mapping[str, float]) -> ClaimStatus:
    """C2: Eq. 3's tear ratio is at most C2_MAX_TEAR_CONTINUOUS on every group run, and the naive
    wrap's is at least C2_MIN_TEAR_NAIVE on each of C2_TEAR_GROUPS."""
    eq3 = _per_group("tear_eq3", tear_eq3)
    naive = _per_group("tear_naive", tear_naive)
    missing = [g for g in C2_TEAR_GROUPS if g not in naive]
    if missing:
        raise ValueError(f"C2 needs the naive wrap's tear ratio on {missing}")
    claim = "Eq. 3 has no seam on any group; the naive wrap tears on p3, p4, p6, pg"
    seams = [g for g, t in eq3.items() if t > C2_MAX_TEAR_CONTINUOUS]
    intact = [g for g in C2_TEAR_GROUPS if naive[g] < C2_MIN_TEAR_NAIVE]
    figures = {"groups run": len(eq3), "max tear ratio, Eq. 3": max(eq3.values()),
               "min tear ratio, naive wrap on p3, p4, p6, pg": min(naive[g] for g in C2_TEAR_GROUPS)}
    threshold = (f"Eq. 3 tear <= C2_MAX_TEAR_CONTINUOUS = {C2_MAX_TEAR_CONTINUOUS} on every group; naive tear "
                 f">= C2_MIN_TEAR_NAIVE = {C2_MIN_TEAR_NAIVE} on {', '.join(C2_TEAR_GROUPS)}")
    if not seams and not intact:
        return ClaimStatus("C2", claim, REPRODUCED, figures, threshold)
    if seams and len(seams) == len(eq3):
        return ClaimStatus("C2", claim, NOT_REPRODUCED, figures, threshold, "Eq. 3 shows a seam on every group")
    parts = ([f"Eq. 3 shows a seam on {', '.join(seams)}"] if seams else []) + (
        [f"the naive wrap does not tear on {', '.join(intact)}"] if intact else [])
    return ClaimStatus("C2", claim, PARTLY_REPRODUCED, figures, threshold, "; ".join(parts))


def decide_c3(psnr_smallest: Mapping[str, float], psnr_largest: Mapping[str, float],
              err_smallest: Mapping[str, Sequence[float]], err_largest: Mapping[str, Sequence[float]]) -> ClaimStatus:
    """C3: for every fitted group, the largest base gains at least C3_MIN_GAIN_DB of held-out
    PSNR over the smallest, and a one-sided paired Wilcoxon test over the held-out pixels
    (squared error, smallest > largest) gives p < C3_ALPHA. Every group gains and tests ->
    REPRODUCED; the error falls significantly everywhere but some gain is under the bar, or it
    falls on some groups only -> PARTLY REPRODUCED; on none -> NOT REPRODUCED. Fragile: the mean
    gain lies within one standard deviation (across groups) of the bar, or the groups disagree."""
    small, large = _per_group("psnr_smallest", psnr_smallest), _per_group("psnr_largest", psnr_largest)
    if set(small) != set(large) or set(small) != set(err_smallest) or set(small) != set(err_largest):
        raise ValueError("C3 needs the same groups in every argument")
    gains = {g: large[g] - small[g] for g in small}
    pvals = {g: paired_test_p(err_smallest[g], err_largest[g]) for g in small}
    falls = {g: pvals[g] < C3_ALPHA for g in small}
    ok = {g: falls[g] and gains[g] >= C3_MIN_GAIN_DB for g in small}
    per_group = [REPRODUCED if ok[g] else PARTLY_REPRODUCED if falls[g] else NOT_REPRODUCED for g in small]
    figures = {f"PSNR gain {g} (dB)": gains[g] for g in small} | {"largest paired-test p": max(pvals.values())}
    threshold = (f"every group: gain >= C3_MIN_GAIN_DB = {C3_MIN_GAIN_DB} dB and one-sided paired test over the "
                 f"held-out pixels p < C3_ALPHA = {C3_ALPHA}")
    fragile = is_fragile(list(gains.values()), C3_MIN_GAIN_DB, per_group)
    claim = "the fit error to symmetric targets falls as the base representation grows"
    if all(ok.values()):
        return ClaimStatus("C3", claim, REPRODUCED, figures, threshold, "", fragile)
    if not any(falls.values()):
        return ClaimStatus("C3", claim, NOT_REPRODUCED, figures, threshold,
                           "the larger base does not lower the error significantly on any group", fragile)
    short = [g for g in small if not ok[g]]
    return ClaimStatus("C3", claim, PARTLY_REPRODUCED, figures, threshold,
                       f"under {C3_MIN_GAIN_DB:g} dB or not significant on {', '.join(short)}", fragile)


def decide_c4(components_design: int, components_fit_only: int, score_design: float, score_fit_only: float) -> ClaimStatus:
    """C4: the paper-cutting demo (Eq. 3 with the VTM connectivity term) gives a design with at
    most C4_MAX_COMPONENTS connected piece(s); the fit without VTM is reported beside it."""
    for name, v in (("components_design", components_design), ("components_fit_only", components_fit_only)):
        if isinstance(v, bool) or not isinstance(v, int) and type(v).__name__ != "int64":
            raise TypeError(f"{name} must be an int, got {type(v).__name__}")
        if v < 0:
            raise ValueError(f"{name} must be >= 0, got {v}")
    figures = {"pieces, Eq. 3 + VTM": int(components_design), "pieces, fit only": int(components_fit_only),
               "VTM score, Eq. 3 + VTM": _number("score_design", score_design),
               "VTM score, fit only": _number("score_fit_only", score_fit_only)}
    claim = "a symmetric paper-cutting design comes out in one connected piece"
    threshold = f"pieces of the p4mm design <= C4_MAX_COMPONENTS = {C4_MAX_COMPONENTS}"
    if 1 <= components_design <= C4_MAX_COMPONENTS:
        return ClaimStatus("C4", claim, REPRODUCED, figures, threshold)
    return ClaimStatus("C4", claim, NOT_REPRODUCED, figures, threshold,
                       f"the design falls apart into {components_design} pieces")


def decide_e1(psnr_eq3: Mapping[str, float], psnr_average: Mapping[str, float]) -> ClaimStatus:
    """E1 (ours): at equal network size, Eq. 3's held-out PSNR is at most E1_MAX_PSNR_GAP_DB below
    group averaging's on every fitted group."""
    a, b = _per_group("psnr_eq3", psnr_eq3), _per_group("psnr_average", psnr_average)
    if set(a) != set(b):
        raise ValueError("E1 needs the same groups for both constructions")
    gaps = {g: a[g] - b[g] for g in a}
    behind = [g for g, d in gaps.items() if d < -E1_MAX_PSNR_GAP_DB]
    figures = {f"gap {g} (dB)": d for g, d in gaps.items()}
    threshold = f"Eq. 3 PSNR >= group averaging's - E1_MAX_PSNR_GAP_DB = {E1_MAX_PSNR_GAP_DB} dB on every group"
    claim = "Eq. 3 fits as well as group averaging at the same network size"
    if not behind:
        return ClaimStatus("E1", claim, REPRODUCED, figures, threshold)
    status = NOT_REPRODUCED if len(behind) == len(gaps) else PARTLY_REPRODUCED
    return ClaimStatus("E1", claim, status, figures, threshold,
                       f"more than {E1_MAX_PSNR_GAP_DB:g} dB behind on {', '.join(behind)}")
