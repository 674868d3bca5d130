"""A trained gap predictor with its feature pipeline, used both offline (batched replay) and
online inside the HiGHS callback (Sec. "Online stopping"; the release's Gurobi callback keeps
the LSTM's hidden state across callbacks the same way)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from .conformal import TrajectoryBatch
from .features import FeatureState, Normalizer, trajectory_features
from .model import GapLSTM, predict_gaps, train_predictor


@dataclass
class GapPredictor:
    model: GapLSTM
    normalizer: Normalizer
    rates: tuple[float, ...]
    max_bound: float
    device: torch.device
    losses: list = field(default_factory=list)

    def tensors(self, batch: TrajectoryBatch):
        """Normalised covariates (B, T, F) and algorithmic gap (B, T) on the target device."""
        feats = self.normalizer(trajectory_features(batch.upper, batch.lower, batch.work, self.rates, self.max_bound))
        x = torch.as_tensor(feats, dtype=torch.float32, device=self.device)
        alg = torch.as_tensor(batch.upper - batch.lower, dtype=torch.float32, device=self.device)
        return x, alg

    def predict(self, batch: TrajectoryBatch) -> np.ndarray:
        """g_hat for every checkpoint of every trajectory, (B, T)."""
        x, alg = self.tensors(batch)
        return predict_gaps(self.model, x, alg)

    def stopper(self, threshold: float, strict: bool = True) -> "OnlineStopper":
        return OnlineStopper(self, threshold, strict)


def fit_predictor(batch: TrajectoryBatch, rates, max_bound: float, device: torch.device, hidden: int, layers: int,
                  epochs: int, batch_size: int, lr: float, scale: float, sigma: float,
                  generator: torch.Generator | None = None, desc: str = "train LSTM", loss: str = "rescaled_mse",
                  eps: float | None = None, band_weight: float = 10.0, norm_sd_scale: float = 1.0,
                  norm_tie_bounds: bool = False) -> GapPredictor:
    """Fit the normaliser on the training steps, then the LSTM on the chosen loss (see `train_predictor`)."""
    raw = trajectory_features(batch.upper, batch.lower, batch.work, rates, max_bound)  # (B, T, F)
    norm = Normalizer.fit(raw, batch.mask, sd_scale=norm_sd_scale, tie_bounds=norm_tie_bounds)
    x = torch.as_tensor(norm(raw), dtype=torch.float32, device=device)
    alg = torch.as_tensor(batch.upper - batch.lower, dtype=torch.float32, device=device)
    target = torch.as_tensor(batch.gap, dtype=torch.float32, device=device)
    mask = torch.as_tensor(batch.mask, device=device)
    model, losses = train_predictor(x, alg, target, mask, hidden, layers, epochs, batch_size, lr, scale, sigma,
                                    generator=generator, desc=desc, loss=loss, eps=eps, band_weight=band_weight)
    return GapPredictor(model, norm, tuple(rates), max_bound, device, losses)


class OnlineStopper:
    """The callback-side rule: at each ready checkpoint update the covariates, advance the
    LSTM one step (carrying its hidden state), and interrupt when g_hat < tau_hat."""

    def __init__(self, predictor: GapPredictor, threshold: float, strict: bool = True):
        self.predictor, self.threshold, self.strict = predictor, float(threshold), strict
        self.state = FeatureState(predictor.rates, predictor.max_bound, batch=1)
        self.hidden = None
        self.predictions: list[float] = []
        self.works: list[int] = []

    @torch.no_grad()
    def __call__(self, upper: float, lower: float, work: int) -> bool:
        p = self.predictor
        raw = self.state.step(np.array([upper]), np.array([lower]),
                              np.array([work]))  # (1, F)
        x = torch.as_tensor(p.normalizer(raw)[None], dtype=torch.float32,
                            device=p.device)  # (1, F) -> (1, 1, F)
        alg = torch.tensor([[upper - lower]], dtype=torch.float32,
                           device=p.device)  # (1, 1)
        pred, self.hidden = p.model(x, alg, self.hidden)
        value = float(pred[0, 0])
        self.predictions.append(value)
        self.works.append(int(work))
        return value < self.threshold if self.strict else value <= self.threshold
