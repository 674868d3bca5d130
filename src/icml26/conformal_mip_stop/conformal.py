"""Conformal calibration of the stopping threshold and fast offline replay of stopping rules
(Sec. "Conformal calibration"; the release's `cp.py`).

For a calibration instance i with predictions g_hat_i(t) and true gaps g_i(t):
  M_i(t)  = min_{s <= t} g_hat_i(s)                 (running minimum)
  T_i     = first t with g_i(t) <= eps             (the incumbent becomes eps-good)
  s_i     = M_i(T_i - 1),  s_i = +inf if T_i is the first checkpoint.
The online rule stops at the first t with g_hat(t) < tau, so it stops with an eps-bad
incumbent exactly when s < tau. With tau = s_(k), k = floor(alpha (n + 1)) (tau = -inf if
k = 0), exchangeability gives P(s_{n+1} < s_(k)) <= k / (n + 1) <= alpha, i.e.
P(g(t_stop) <= eps) >= 1 - alpha (Theorem 1 of the paper, marginal over instances and
calibration draws).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class TrajectoryBatch:
    """B trajectories, cut to their ready checkpoints (incumbent and bound known) and padded to
    a common length T by repeating the last step. Arrays are (B, T); `mask` marks real steps."""

    upper: np.ndarray
    lower: np.ndarray
    gap: np.ndarray
    work: np.ndarray
    wall: np.ndarray
    n_incumbents: np.ndarray
    mask: np.ndarray
    # improving solutions in the order found, (B, K) padded: true gap, checkpoints done, seconds
    inc_gap: np.ndarray | None = None
    inc_work: np.ndarray | None = None
    inc_wall: np.ndarray | None = None

    @classmethod
    def from_trajectories(cls, trajectories) -> "TrajectoryBatch":
        if len(trajectories) == 0:
            raise ValueError("need at least one trajectory")
        parts = []
        for tr in trajectories:
            keep = tr.ready()
            if not keep.any():
                raise ValueError("a trajectory has no checkpoint with an incumbent and a finite bound")
            gap = np.maximum(tr.true_gap()[keep], 0.0)
            if not np.isfinite(tr.optimum):
                raise ValueError("trajectory has no optimum z*; record it with a tight-gap solve first")
            parts.append((tr.upper[keep], tr.lower[keep], gap, tr.work[keep].astype(float), tr.wall[keep],
                          tr.n_incumbents[keep].astype(float)))
        length = max(p[0].size for p in parts)
        padded = [[np.pad(a, (0, length - a.size), mode="edge") for a in p] for p in parts]
        cols = [np.stack(c) for c in zip(*padded)]  # six arrays of shape (B, T)
        mask = np.stack([np.arange(length) < p[0].size for p in parts])
        n_inc = max(1, max(tr.inc_value.size for tr in trajectories))
        inc_gap = np.full((len(trajectories), n_inc), np.nan)
        inc_work = np.full((len(trajectories), n_inc), np.inf)
        inc_wall = np.full((len(trajectories), n_inc), np.inf)
        for i, tr in enumerate(trajectories):
            m = tr.inc_value.size
            inc_gap[i, :m] = np.maximum(tr.inc_value - tr.optimum, 0.0)
            inc_work[i, :m], inc_wall[i, :m] = tr.inc_work, tr.inc_wall
        return cls(*cols, mask=mask, inc_gap=inc_gap, inc_work=inc_work, inc_wall=inc_wall)

    def __len__(self) -> int:
        return self.upper.shape[0]

    def subset(self, idx) -> "TrajectoryBatch":
        return TrajectoryBatch(*(getattr(self, k)[idx] for k in
                                 ("upper", "lower", "gap", "work", "wall", "n_incumbents", "mask")),
                               *(None if getattr(self, k) is None else getattr(self, k)[idx]
                                 for k in ("inc_gap", "inc_work", "inc_wall")))


def first_index(condition: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per row, the first valid index where `condition` holds, else the last valid index. (B,)"""
    if condition.shape != mask.shape:
        raise ValueError(f"condition {condition.shape} and mask {mask.shape} must share a shape")
    hit = condition & mask
    last = mask.sum(1) - 1
    return np.where(hit.any(1), hit.argmax(1), last)


def conformal_scores(pred: np.ndarray, gap: np.ndarray, mask: np.ndarray,
                     eps: float) -> np.ndarray:
    """s_i = min prediction before the incumbent became eps-good (+inf if it was
    eps-good at the first checkpoint). Inputs (B, T), output (B,)."""
    if pred.shape != gap.shape or pred.shape != mask.shape:
        raise ValueError(f"pred, gap, mask must share a shape, got {pred.shape}, {gap.shape}, {mask.shape}")
    if eps < 0:
        raise ValueError(f"eps must be non-negative, got {eps}")
    first_good = first_index(gap <= eps, mask)  # (B,)
    running_min = np.minimum.accumulate(np.where(mask, pred, np.inf),
                                        axis=1)  # (B, T)
    before = running_min[np.arange(len(pred)), np.maximum(first_good - 1, 0)]
    return np.where(first_good > 0, before, np.inf)


def conformal_threshold(scores: np.ndarray, alpha: float) -> float:
    """tau_hat = s_(k), k = floor(alpha (n + 1)); -inf when k = 0 (never stop on
    the prediction)."""
    scores = np.asarray(scores, float)
    if scores.ndim != 1 or scores.size == 0:
        raise ValueError(f"scores must be a non-empty 1-d array, got shape {scores.shape}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    k = int(np.floor(alpha * (scores.size + 1)))
    if k == 0:
        return -np.inf
    return float(np.sort(scores)[k - 1])


# ----- stopping rules replayed on recorded trajectories (stop index per row, shape (B,)) -----

def stop_solve_to_eps(batch: TrajectoryBatch, eps: float) -> np.ndarray:
    """Reference: the solver's own criterion, algorithmic gap U - L <= eps."""
    return first_index(batch.upper - batch.lower <= eps, batch.mask)


def kth_incumbent_outcome(batch: TrajectoryBatch, k: int, eps: float) -> dict[str, np.ndarray]:
    """Baseline: stop the moment the k-th improving solution is found (Gurobi's SolutionLimit = k,
    the release's `evaluate_predictor`), or at gap <= eps if that comes first. The k-th solution
    may come before the first checkpoint with a finite bound (e.g. a trivial heuristic solution),
    so this uses the recorded list of improving solutions, not the checkpoint rows. Same keys as
    `evaluate_stops`."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if batch.inc_gap is None:
        raise ValueError("the batch carries no incumbent history; build it with TrajectoryBatch.from_trajectories")
    rows = np.arange(len(batch))
    ref = stop_solve_to_eps(batch, eps)
    work_ref, wall_ref = batch.work[rows, ref] + 1, batch.wall[rows, ref]
    if batch.inc_work.shape[1] >= k:
        kth_work, kth_wall, kth_gap = batch.inc_work[:, k - 1], batch.inc_wall[:, k - 1], batch.inc_gap[:, k - 1]
    else:
        kth_work = kth_wall = np.full(len(batch), np.inf)
        kth_gap = np.full(len(batch), np.nan)
    first = kth_work < work_ref  # the k-th solution arrives before the solver proves gap <= eps
    gap = np.where(first, kth_gap, batch.gap[rows, ref])
    work = np.where(first, kth_work, work_ref)
    wall = np.where(first, kth_wall, wall_ref)
    return {"covered": gap <= eps, "gap": gap, "work": work, "work_ref": work_ref,
            "work_saved": 1.0 - work / work_ref, "wall": wall, "wall_ref": wall_ref}


def stop_on_prediction(batch: TrajectoryBatch, pred: np.ndarray,
                       threshold: float, eps: float,
                       strict: bool = True) -> np.ndarray:
    """Stop at the first checkpoint with g_hat < threshold (g_hat <= threshold
    if not strict), or when the solver reaches gap <= eps by itself. The
    conformal rule uses the calibrated tau_hat (strict); the uncalibrated rule
    uses threshold = eps ("predicted gap <= eps")."""
    if pred.shape != batch.mask.shape:
        raise ValueError(f"pred must have shape {batch.mask.shape}, got {pred.shape}")
    fire = pred < threshold if strict else pred <= threshold
    return first_index(fire | (batch.upper - batch.lower <= eps), batch.mask)


def evaluate_stops(batch: TrajectoryBatch, stop: np.ndarray, eps: float) -> dict[str, np.ndarray]:
    """Per instance: eps-good at the stop (coverage), true gap, work and wall used and saved
    relative to solving to eps. Work counts checkpoints done (index + 1)."""
    rows = np.arange(len(batch))
    ref = stop_solve_to_eps(batch, eps)
    work_stop, work_ref = batch.work[rows, stop] + 1, batch.work[rows, ref] + 1
    wall_stop, wall_ref = batch.wall[rows, stop], batch.wall[rows, ref]
    gap = batch.gap[rows, stop]
    return {"covered": gap <= eps, "gap": gap, "work": work_stop, "work_ref": work_ref,
            "work_saved": 1.0 - work_stop / work_ref, "wall": wall_stop, "wall_ref": wall_ref}
