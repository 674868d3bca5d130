"""The claims ledger of the USB-RL chapter (the ledger rules: CONTRIBUTING.md, section 2).

One decision function per claim of the paper; each threshold is a named module constant, fixed
before the run. Comparative claims (C2, C3) follow the robustness rule over seeds
(:func:`icml26.common.ledger.robust_status`, at least ``MIN_SEEDS`` seeds); the monotonicity
claim (C1) is an exactness claim decided with a numeric tolerance.
"""

from __future__ import annotations

import numpy as np
import torch

from icml26.common.ledger import (INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED, ClaimStatus,
                                  is_fragile, robust_status)

from .score import MonotoneScore, dominance_matrix

CLAIM_IDS = ("C1", "C2", "C3")
MIN_SEEDS = 3  # the robustness rule: every comparative claim over at least 3 seeds
MONOTONE_TOL = 1e-6  # C1: a score drop larger than this along the order counts as a violation
MAX_COST_RATIO = 0.5  # C2: USB-RL's cost at most half the unconstrained agent's
MIN_RETURN_GAP = 0.0  # C2: USB-RL's return at least the heaviest fixed penalty's (gap >= 0)
N_GRID = 41  # C1: outcome grid points per axis

CLAIMS = {
    "C1": "the learned score is monotone in the partial order of outcomes",
    "C2": "without a tuned cost weight it keeps return and cuts violations",
    "C3": "no fixed linear penalty of the grid dominates its outcome",
}


def monotonicity_violations(score: MonotoneScore, g_r: torch.Tensor, g_c: torch.Tensor,
                            n_grid: int = N_GRID, tol: float = MONOTONE_TOL) -> dict[str, int]:
    """C1's two counts for one fitted score: (a) on an n_grid x n_grid grid over the batch's
    outcome range, neighbours along G^r that lower S or along G^c that raise S; (b) dominance
    pairs (D_ij = 1, exact order) of the batch with S(o_i) < S(o_j). A drop counts when > tol."""
    with torch.no_grad():
        r = torch.linspace(float(g_r.min()), float(g_r.max()), n_grid, device=g_r.device)
        c = torch.linspace(float(g_c.min()), float(g_c.max()), n_grid, device=g_c.device)
        R, C = torch.meshgrid(r, c, indexing="ij")  # (n, n): rows more return, columns more cost
        s = score(R, C)  # (n, n)
        grid = int((s[1:, :] < s[:-1, :] - tol).sum() + (s[:, 1:] > s[:, :-1] + tol).sum())
        d = dominance_matrix(g_r, g_c, 0.0).bool()  # (B, B): o_i dominates o_j
        sb = score(g_r, g_c)  # (B,)
        pairs = int((d & (sb[:, None] < sb[None, :] - tol)).sum())
    return {"grid": grid, "pairs": pairs, "n_pairs": int(d.sum()), "n_grid": 2 * n_grid * (n_grid - 1)}


def _counts(value, what: str) -> list[int]:
    vals = list(value)
    if not vals:
        raise ValueError(f"{what} needs at least one seed")
    for v in vals:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise TypeError(f"{what} must be non-negative ints, got {v!r}")
    return [int(v) for v in vals]


def decide_c1(grid_violations, pair_violations, n_pairs) -> ClaimStatus:
    """C1: zero violations on the grid and on every dominance pair, in every seed."""
    grid = _counts(grid_violations, "grid_violations")
    pairs = _counts(pair_violations, "pair_violations")
    n = _counts(n_pairs, "n_pairs")
    if not len(grid) == len(pairs) == len(n):
        raise ValueError(f"one count per seed: got {len(grid)}, {len(pairs)}, {len(n)}")
    total = sum(grid) + sum(pairs)
    status = REPRODUCED if total == 0 else NOT_REPRODUCED
    reason = "" if total == 0 else f"{total} order violations (score drops > MONOTONE_TOL along the order)"
    return ClaimStatus("C1", CLAIMS["C1"], status,
                       {"grid violations per seed": grid, "pair violations per seed": pairs,
                        "dominance pairs checked per seed": n},
                       f"0 score drops larger than MONOTONE_TOL = {MONOTONE_TOL:g} along the order, "
                       f"on a {N_GRID}x{N_GRID} grid and all dominance pairs of the last batch", reason)


def _per_seed(a, what: str) -> np.ndarray:
    arr = np.asarray(a, dtype=float)
    if arr.ndim != 2 or arr.shape[0] < 1:
        raise ValueError(f"{what} must be (seeds, methods), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{what} holds a non-finite value")
    return arr


def _indices(names, n_methods: int):
    names = list(names)
    if len(names) != n_methods:
        raise ValueError(f"{len(names)} names for {n_methods} methods")
    for need in ("usb", "unconstrained"):
        if need not in names:
            raise ValueError(f"method {need!r} missing from names {names}")
    usb, unc = names.index("usb"), names.index("unconstrained")
    linear = [i for i, n in enumerate(names) if n.startswith("linear ")]
    if not linear:
        raise ValueError("no fixed linear penalty among the methods")
    heavy = max(linear, key=lambda i: float(names[i].split()[1]))
    return usb, unc, linear, heavy


def decide_c2(returns, costs, names) -> ClaimStatus:
    """C2 per seed: (a) cost_usb <= MAX_COST_RATIO * cost_unconstrained, (b) return_usb -
    return_heaviest >= MIN_RETURN_GAP. Both in every seed -> REPRODUCED; (a) in every seed and
    (b) in none -> PARTLY REPRODUCED (violations cut, return not kept); neither part in any
    seed -> NOT REPRODUCED; seeds disagree on a part -> INCONCLUSIVE."""
    R, C = _per_seed(returns, "returns"), _per_seed(costs, "costs")
    if R.shape != C.shape:
        raise ValueError(f"returns {R.shape} and costs {C.shape} differ in shape")
    if R.shape[0] < MIN_SEEDS:
        raise ValueError(f"C2 needs at least {MIN_SEEDS} seeds, got {R.shape[0]}")
    usb, unc, _, heavy = _indices(names, R.shape[1])
    ratio = C[:, usb] / np.maximum(C[:, unc], 1e-9)
    gap = R[:, usb] - R[:, heavy]
    cut = [bool(x <= MAX_COST_RATIO) for x in ratio]
    keep = [bool(g >= MIN_RETURN_GAP) for g in gap]
    both = robust_status([a and b for a, b in zip(cut, keep)])
    s_cut, s_keep = robust_status(cut), robust_status(keep)
    if both == REPRODUCED:
        status, reason = REPRODUCED, ""
    elif s_cut == REPRODUCED and s_keep == NOT_REPRODUCED:
        status = PARTLY_REPRODUCED
        reason = "violations are cut in every seed, but the return stays below the heaviest penalty's in every seed"
    elif s_cut == NOT_REPRODUCED and s_keep == NOT_REPRODUCED:
        status, reason = NOT_REPRODUCED, "neither part holds in any seed"
    elif s_cut == NOT_REPRODUCED:
        status, reason = NOT_REPRODUCED, "violations are not cut to half in any seed"
    else:
        status = INCONCLUSIVE
        reason = (f"seeds disagree (cost cut {sum(cut)}/{len(cut)}, return kept {sum(keep)}/{len(keep)}): "
                  "the return gap to the heavy penalty is within seed noise; more seeds would settle it")
    fragile = is_fragile(ratio, MAX_COST_RATIO) or is_fragile(gap, MIN_RETURN_GAP)
    return ClaimStatus("C2", CLAIMS["C2"], status,
                       {"cost ratio USB / unconstrained per seed": [round(float(x), 3) for x in ratio],
                        f"return gap USB - {names[heavy]} per seed": [round(float(x), 3) for x in gap]},
                       f"in every one of >= {MIN_SEEDS} seeds: cost ratio <= MAX_COST_RATIO = {MAX_COST_RATIO:g} "
                       f"and return gap >= MIN_RETURN_GAP = {MIN_RETURN_GAP:g}", reason, bool(fragile))


def dominance_margin(r_u: float, c_u: float, rets, costs) -> float:
    """How far USB's point (r_u, c_u) is from being dominated by the points (rets, costs):
    min over points of max(r_u - r_k, c_k - c_u). > 0: no point dominates it; < 0: one point
    has both more return and less cost; = 0: a tie on one axis (dominated when the other is
    not better)."""
    rets, costs = np.asarray(rets, float), np.asarray(costs, float)
    return float(np.min(np.maximum(r_u - rets, costs - c_u)))


def dominated(r_u: float, c_u: float, rets, costs) -> bool:
    """the ledger rules' dominance: some point has return >= r_u and cost <= c_u, one strictly."""
    rets, costs = np.asarray(rets, float), np.asarray(costs, float)
    weak = (rets >= r_u) & (costs <= c_u)
    strict = (rets > r_u) | (costs < c_u)
    return bool((weak & strict).any())


def decide_c3(returns, costs, names) -> ClaimStatus:
    """C3 per seed: no fixed linear penalty (lambda = 0 included) dominates USB-RL's
    (return, cost); robust_status over the seeds (at least MIN_SEEDS)."""
    R, C = _per_seed(returns, "returns"), _per_seed(costs, "costs")
    if R.shape != C.shape:
        raise ValueError(f"returns {R.shape} and costs {C.shape} differ in shape")
    if R.shape[0] < MIN_SEEDS:
        raise ValueError(f"C3 needs at least {MIN_SEEDS} seeds, got {R.shape[0]}")
    usb, unc, linear, _ = _indices(names, R.shape[1])
    fixed = [unc] + linear
    holds = [not dominated(R[s, usb], C[s, usb], R[s, fixed], C[s, fixed]) for s in range(R.shape[0])]
    margins = [dominance_margin(R[s, usb], C[s, usb], R[s, fixed], C[s, fixed]) for s in range(R.shape[0])]
    status = robust_status(holds)
    reason = {REPRODUCED: "",
              NOT_REPRODUCED: "a fixed penalty dominates USB-RL's point in every seed",
              INCONCLUSIVE: f"USB-RL is not dominated in {sum(holds)} of {len(holds)} seeds: "
                            "its point and the nearest penalty's differ by less than seed noise; "
                            "more seeds would settle it"}[status]
    return ClaimStatus("C3", CLAIMS["C3"], status,
                       {"not dominated per seed": holds,
                        "dominance margin per seed": [round(m, 3) for m in margins]},
                       f"no fixed penalty has >= return and <= cost (one strictly) in every one of "
                       f">= MIN_SEEDS = {MIN_SEEDS} seeds", reason, is_fragile(margins, 0.0))
