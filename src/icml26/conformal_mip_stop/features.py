"""Solver-state covariates x_t (Sec. "Features"; the release's `cb.py`): the dual bound L,
the incumbent U and the elapsed time, each clipped to +-MAX_BOUND, plus exponentially
weighted running means of L and U at several rates w,

    m_t = (exp(-w dt) m_{t-1} + v_t) / (exp(-w dt) + 1),

normalised by (x - mean) / (sd + 1) with training statistics.
Time is the deterministic work clock (checkpoint index) times a nominal 0.1 s per checkpoint
(the release's callback spacing), so that the features and hence every printed figure are
reproducible; wall seconds are kept for reporting only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SECONDS_PER_CHECKPOINT = 0.1


class FeatureState:
    """The running state that turns (U, L, work) into the 3 + 2 * len(rates) covariates.

    Works on a batch of B solves at once (arrays of shape (B,)); the live callback uses B = 1,
    the offline pipeline steps all trajectories together, so both see identical numbers."""

    def __init__(self, rates: tuple[float, ...], max_bound: float, batch: int = 1):
        if len(rates) == 0 or any(r < 0 for r in rates):
            raise ValueError(f"rates must be a non-empty tuple of non-negative numbers, got {rates}")
        self.rates = np.asarray(rates, float)       # (R,)
        self.max_bound = float(max_bound)
        self.mean_l = None                           # (B, R)
        self.mean_u = None                           # (B, R)
        self.last_time = np.zeros(batch)

    @property
    def n_features(self) -> int:
        return 3 + 2 * self.rates.size

    def step(self, upper: np.ndarray, lower: np.ndarray,
             work: np.ndarray) -> np.ndarray:
        """Advance one checkpoint; returns the raw covariates, shape (B, 3 + 2R)."""
        u = np.clip(np.asarray(upper, float), -self.max_bound, self.max_bound)
        l_ = np.clip(np.asarray(lower, float), -self.max_bound, self.max_bound)
        t = np.asarray(work, float) * SECONDS_PER_CHECKPOINT
        if self.mean_l is None:
            # (B,) -> (B, R)
            self.mean_l = np.repeat(l_[:, None], self.rates.size, axis=1)
            self.mean_u = np.repeat(u[:, None], self.rates.size, axis=1)
        else:
            # (B, R)
            decay = np.exp(-self.rates[None, :] * (t - self.last_time)[:, None])
            self.mean_l = (decay * self.mean_l + l_[:, None]) / (decay + 1.0)
            self.mean_u = (decay * self.mean_u + u[:, None]) / (decay + 1.0)
        self.last_time = t
        return np.concatenate([l_[:, None], u[:, None], t[:, None],
                               self.mean_l, self.mean_u], axis=1)


def trajectory_features(upper: np.ndarray, lower: np.ndarray, work: np.ndarray,
                        rates: tuple[float, ...], max_bound: float = 1e6) -> np.ndarray:
    """Covariates of B padded trajectories, inputs (B, T), output (B, T, F).

    A loop over time (the recursion is sequential), vectorised over the B trajectories."""
    upper, lower, work = (np.atleast_2d(np.asarray(a, float)) for a in (upper, lower, work))
    if not upper.shape == lower.shape == work.shape:
        raise ValueError(f"upper, lower, work must share a shape, got {upper.shape}, {lower.shape}, {work.shape}")
    state = FeatureState(rates, max_bound, batch=upper.shape[0])
    return np.stack([state.step(upper[:, t], lower[:, t], work[:, t]) for t in range(upper.shape[1])], axis=1)


@dataclass(frozen=True)
class Normalizer:
    """x -> (x - mean) / (sd + 1), with statistics of the training steps (the release's rule).

    The release's trainer also scales every standard deviation by 10 (`sd_scale`) and gives the
    incumbent column U the dual bound L's statistics (`tie_bounds`; columns 0 = L, 1 = U), so that
    both bounds live on one scale."""

    mean: np.ndarray  # (F,)
    sd: np.ndarray    # (F,)

    @classmethod
    def fit(cls, features: np.ndarray, mask: np.ndarray, sd_scale: float = 1.0,
            tie_bounds: bool = False) -> "Normalizer":
        """`features` (B, T, F), `mask` (B, T) of valid steps."""
        if sd_scale <= 0:
            raise ValueError(f"sd_scale must be positive, got {sd_scale}")
        rows = features[np.asarray(mask, bool)]  # (n_valid, F)
        if rows.size == 0:
            raise ValueError("cannot fit a normaliser on zero valid steps")
        mean, sd = rows.mean(0), rows.std(0) * sd_scale
        if tie_bounds:
            mean[1], sd[1] = mean[0], sd[0]
        return cls(mean, sd)

    def __call__(self, features: np.ndarray) -> np.ndarray:
        if features.shape[-1] != self.mean.size:
            raise ValueError(f"expected {self.mean.size} features in the last axis, got {features.shape[-1]}")
        return (features - self.mean) / (self.sd + 1.0)
