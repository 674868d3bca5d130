"""The claims ledger of the asymmetric-weighting chapter (the ledger rules: CONTRIBUTING.md, section 2).

Each decision function maps measured figures to a status; each threshold is a named module
constant fixed before the runs. Times to a target are *censored*: a run that stops at its cap
without reaching the target has an unknown time T >= cap. Every per-seed comparison therefore
uses the bounds (lo, hi) of each time ((T, T) if reached, (cap, inf) if censored) and is decided
only when it holds, or fails, for every value the censored times can take; otherwise the seed is
undetermined. Over the seeds (>= 3) the robustness rule applies: a claim holds when it holds in
every seed.

C1 from scratch, Sqrt-R and Linear-R reach the target in at most C1_MAX_RATIO x GRPO's updates
   (each scheme is its own sub-result).
C2 the speed-up of Sqrt-R over GRPO is smaller after SFT than from scratch.
C3 theory: the time-optimal weight for the response clock is asymmetric (matches its closed
   form, up-weights low success), and the theory's predicted times agree with the simulator.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from icml26.common.ledger import (INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED, ClaimStatus,
                                  is_fragile, robust_status)

CLAIM_IDS = ("C1", "C2", "C3")

C1_MAX_RATIO = 0.7  # updates to target, asymmetric scheme / GRPO, in every seed ("clearly faster")
C3_OPT_TOL = 1e-3  # numerically minimised optimum vs closed form, max relative gap
C3_ASYM_RHO = 0.1  # the optimum for the response clock weighs rho = 0.1 against rho = 0.9 ...
C3_MIN_ASYMMETRY = 2.0  # ... by at least this factor (the update clock's optimum gives exactly 1)
C3_MAX_TIME_GAP = 0.2  # |simulated - predicted| / predicted time to target, every scheme and seed
C1_SCHEMES = ("sqrt", "linear")
NAMES = {"sqrt": "Sqrt-R", "linear": "Linear-R"}

Bounds = tuple[float, float]


def time_bounds(accuracy, target: float) -> Bounds:
    """(lo, hi) of the updates to reach `target`: (T, T) when reached, (cap, inf) when censored
    (the run used its whole cap of len(accuracy) - 1 updates without reaching it)."""
    acc = np.asarray(accuracy, dtype=float)
    if acc.ndim != 1 or acc.size == 0:
        raise ValueError("an accuracy curve needs at least one point")
    hit = np.nonzero(acc >= target)[0]
    if hit.size:
        return float(hit[0]), float(hit[0])
    return float(acc.size - 1), math.inf


def _bounds(seq, what: str, n: int | None = None) -> list[Bounds]:
    out = []
    for b in seq:
        if not (isinstance(b, (tuple, list)) and len(b) == 2):
            raise ValueError(f"{what}: each seed needs a (lo, hi) pair, got {b!r}")
        lo, hi = float(b[0]), float(b[1])
        if not (math.isfinite(lo) and lo >= 0 and hi >= lo):
            raise ValueError(f"{what}: need 0 <= lo <= hi with lo finite, got {b!r}")
        out.append((lo, hi))
    if n is not None and len(out) != n:
        raise ValueError(f"{what}: got {len(out)} seeds, expected {n}")
    if len(out) < 3:
        raise ValueError(f"{what}: the robustness rule needs at least 3 seeds, got {len(out)}")
    return out


def _aggregate(outcomes: Sequence[str | bool]) -> str:
    """Per-seed outcomes True (holds), False (fails), 'undetermined' -> a status."""
    if any(o == "undetermined" for o in outcomes):
        return INCONCLUSIVE
    return robust_status([bool(o) for o in outcomes])


def ratio_outcome(s: Bounds, g: Bounds, max_ratio: float) -> str | bool:
    """Is T_s <= max_ratio * T_g for every value of the censored times (True), for none (False)?"""
    if s[1] <= max_ratio * g[0]:
        return True
    if s[0] > max_ratio * g[1]:
        return False
    return "undetermined"


def _ratio_text(s: Bounds, g: Bounds) -> str:
    lo = s[0] / g[1] if g[1] > 0 else math.inf
    hi = s[1] / g[0] if g[0] > 0 else math.inf
    if lo == hi:
        return f"{hi:.2f}"
    if math.isfinite(hi):
        return f"<={hi:.2f}"
    return f">={lo:.2f}" if lo > 0 else "undetermined"


def decide_c1(grpo: Sequence[Bounds], asym: dict[str, Sequence[Bounds]]) -> ClaimStatus:
    """C1: per scheme (Sqrt-R, Linear-R) and seed, T_scheme <= C1_MAX_RATIO x T_GRPO for every
    value of the censored times. Per scheme: every seed holds -> REPRODUCED, none -> NOT
    REPRODUCED, an undetermined seed or disagreement -> INCONCLUSIVE. Both schemes REPRODUCED:
    REPRODUCED; one REPRODUCED: PARTLY REPRODUCED; both NOT REPRODUCED: NOT REPRODUCED; else
    INCONCLUSIVE."""
    if set(asym) != set(C1_SCHEMES):
        raise ValueError(f"need the times of {C1_SCHEMES}, got {sorted(asym)}")
    g = _bounds(grpo, "GRPO times")
    sub, figures, per_seed_all, finite = {}, {}, [], []
    for s in C1_SCHEMES:
        b = _bounds(asym[s], f"{NAMES[s]} times", len(g))
        outcomes = [ratio_outcome(x, y, C1_MAX_RATIO) for x, y in zip(b, g)]
        sub[s] = _aggregate(outcomes)
        per_seed_all.append([REPRODUCED if o is True else NOT_REPRODUCED if o is False else INCONCLUSIVE
                             for o in outcomes])
        figures[f"{NAMES[s]}/GRPO per seed"] = ", ".join(_ratio_text(x, y) for x, y in zip(b, g))
        finite += [x[1] / y[0] for x, y in zip(b, g) if math.isfinite(x[1]) and y[0] > 0]
        figures[f"{NAMES[s]} sub-result"] = sub[s]
    figures["GRPO censored"] = f"{sum(math.isinf(x[1]) for x in g)}/{len(g)}"
    st = list(sub.values())
    if all(x == REPRODUCED for x in st):
        status, reason = REPRODUCED, ""
    elif REPRODUCED in st:
        good = next(s for s in C1_SCHEMES if sub[s] == REPRODUCED)
        bad = next(s for s in C1_SCHEMES if sub[s] != REPRODUCED)
        status, reason = PARTLY_REPRODUCED, f"holds for {NAMES[good]}; {NAMES[bad]} is {sub[bad]}"
    elif all(x == NOT_REPRODUCED for x in st):
        status, reason = NOT_REPRODUCED, "neither asymmetric scheme is clearly faster than GRPO in any seed"
    else:
        status = INCONCLUSIVE
        reason = "censored runs or disagreeing seeds leave the ratio undecided; a longer cap or more seeds would settle it"
    fragile = any(len(set(p)) > 1 for p in per_seed_all) or (len(finite) >= 2 and is_fragile(finite, C1_MAX_RATIO))
    return ClaimStatus("C1", "from scratch, Sqrt-R and Linear-R reach the target faster than GRPO", status,
                       figures, f"T(scheme) <= C1_MAX_RATIO = {C1_MAX_RATIO} x T(GRPO) for every value of censored "
                       "times, in every seed, per scheme", reason, fragile)


def speedup_bounds(grpo: Bounds, sqrt: Bounds) -> Bounds:
    """Bounds on T_GRPO / T_Sqrt-R over every value of the censored times."""
    lo = grpo[0] / sqrt[1] if sqrt[1] > 0 else math.inf
    hi = grpo[1] / max(sqrt[0], 1.0)
    return lo, hi


def decide_c2(scratch_grpo: Sequence[Bounds], scratch_sqrt: Sequence[Bounds],
              sft_grpo: Sequence[Bounds], sft_sqrt: Sequence[Bounds]) -> ClaimStatus:
    """C2: per seed, the speed-up T_GRPO / T_Sqrt-R after SFT is smaller than from scratch for
    every value of the censored times (holds), or at least as large for every value (fails);
    otherwise the seed is undetermined. Aggregated over seeds by the robustness rule."""
    sg = _bounds(scratch_grpo, "scratch GRPO")
    n = len(sg)
    ss = _bounds(scratch_sqrt, "scratch Sqrt-R", n)
    pg = _bounds(sft_grpo, "post-SFT GRPO", n)
    ps = _bounds(sft_sqrt, "post-SFT Sqrt-R", n)
    scratch = [speedup_bounds(a, b) for a, b in zip(sg, ss)]
    post = [speedup_bounds(a, b) for a, b in zip(pg, ps)]
    outcomes = []
    for a, b in zip(scratch, post):
        outcomes.append(True if b[1] < a[0] else False if b[0] >= a[1] else "undetermined")
    status = _aggregate(outcomes)
    fmt = lambda b: f"{b[0]:.2f}" if b[0] == b[1] else (f">={b[0]:.2f}" if math.isinf(b[1]) else f"{b[0]:.2f}-{b[1]:.2f}")  # noqa: E731
    figures = {"speed-up from scratch per seed": ", ".join(fmt(b) for b in scratch),
               "speed-up after SFT per seed": ", ".join(fmt(b) for b in post),
               "seeds holding": f"{sum(o is True for o in outcomes)}/{n}"}
    reason = {REPRODUCED: "",
              NOT_REPRODUCED: "after SFT, Sqrt-R's speed-up over GRPO is at least as large as from scratch in every seed",
              INCONCLUSIVE: "censored runs or disagreeing seeds leave the comparison undecided; a longer cap or more seeds "
                            "would settle it"}[status]
    per_seed = [REPRODUCED if o is True else NOT_REPRODUCED if o is False else INCONCLUSIVE for o in outcomes]
    return ClaimStatus("C2", "the benefit is smaller when RL starts after SFT", status, figures,
                       "speed-up T(GRPO)/T(Sqrt-R) after SFT < from scratch for every value of censored times, "
                       "in every seed", reason, len(set(per_seed)) > 1)


def decide_c3(opt_gap: float, asymmetry: float, time_gaps: Sequence[float]) -> ClaimStatus:
    """C3: (a) the response-clock optimum found numerically matches its closed form within
    C3_OPT_TOL and weighs rho = C3_ASYM_RHO at least C3_MIN_ASYMMETRY times rho = 1 - C3_ASYM_RHO;
    (b) in every seed the simulated times to target agree with the mean-field theory within
    C3_MAX_TIME_GAP (largest relative gap over schemes, regimes and both clocks). Both:
    REPRODUCED; one: PARTLY REPRODUCED; neither: NOT REPRODUCED; (b) disagreeing over seeds with
    (a) failing: INCONCLUSIVE."""
    opt_gap, asymmetry = float(opt_gap), float(asymmetry)
    if not (math.isfinite(opt_gap) and opt_gap >= 0 and math.isfinite(asymmetry) and asymmetry > 0):
        raise ValueError(f"need a finite gap >= 0 and asymmetry > 0, got {opt_gap}, {asymmetry}")
    gaps = [float(x) for x in time_gaps]
    if any(math.isnan(x) or x < 0 for x in gaps):
        raise ValueError(f"time gaps must be >= 0, got {gaps}")
    theory_ok = opt_gap <= C3_OPT_TOL and asymmetry >= C3_MIN_ASYMMETRY
    agree = robust_status([x <= C3_MAX_TIME_GAP for x in gaps])
    if theory_ok and agree == REPRODUCED:
        status, reason = REPRODUCED, ""
    elif theory_ok or agree == REPRODUCED:
        status = PARTLY_REPRODUCED
        reason = ("the optimal weights are asymmetric, but simulated and predicted times differ" if theory_ok
                  else "simulated and predicted times agree, but the optimum is not asymmetric as stated")
    elif agree == NOT_REPRODUCED:
        status, reason = NOT_REPRODUCED, "neither the asymmetric optimum nor the agreement with the simulator holds"
    else:
        status, reason = INCONCLUSIVE, "the seeds disagree on the agreement with the simulator; more seeds would settle it"
    finite = [x for x in gaps if math.isfinite(x)]
    figures = {"optimum: numeric vs closed form (max rel. gap)": opt_gap,
               f"optimum weight ratio rho={C3_ASYM_RHO} vs {1 - C3_ASYM_RHO:g}": asymmetry,
               "simulated vs predicted time (max rel. gap per seed)": [round(x, 3) for x in gaps]}
    fragile = len({x <= C3_MAX_TIME_GAP for x in gaps}) > 1 or (len(finite) >= 2 and is_fragile(finite, C3_MAX_TIME_GAP))
    return ClaimStatus("C3", "the time-optimal weights are asymmetric, and the theory's times match the simulator",
                       status, figures,
                       f"numeric optimum within C3_OPT_TOL = {C3_OPT_TOL:g} of the closed form, weight ratio >= "
                       f"C3_MIN_ASYMMETRY = {C3_MIN_ASYMMETRY}, time gap <= C3_MAX_TIME_GAP = {C3_MAX_TIME_GAP} "
                       "in every seed", reason, fragile)
