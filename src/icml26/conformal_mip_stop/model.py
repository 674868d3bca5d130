"""The gap predictor (Sec. "Gap prediction"; the release's `models.py` and `loss.py`):
an LSTM reads the normalised covariates x_1..x_t and predicts the true gap

    g_hat_t = 1/2 (tanh(o_t) + 1) (U_t - L_t)  in [0, U_t - L_t],

since the true gap U - z* never exceeds the algorithmic gap U - L.

Training loss. The release's training script maps the configs' `loss_fn: rescaled_mse` (the
paper's default setting) to a band-weighted *relative absolute* error (`band_l1` here):

    mean_t  w_t |g_hat_t - g_t| / (g_t + eps),
    w_t = ( r 1[eps/10 <= g_t <= 10 eps] / (n_band + 1) + 1[outside] / (n_out + 1) ) / (r + 1),

with r = 10: errors are measured relative to the gap, and the checkpoints whose gap lies within a
decade of eps together weigh r times the rest. `rescaled_mse`, mean((g_hat - g)^2 / (g/scale + sigma)),
is the other loss class of the release (kept as an option; the first versions of this chapter used it).
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import torch
from torch import nn

from icml26.common import progress


class GapLSTM(nn.Module):
    """LSTM(F -> H, `layers`) then Linear(H -> 1), output bounded by the algorithmic gap."""

    def __init__(self, n_features: int = 9, hidden: int = 32, layers: int = 2):
        super().__init__()
        if n_features < 1 or hidden < 1 or layers < 1:
            raise ValueError(f"sizes must be positive, got n_features={n_features}, hidden={hidden}, layers={layers}")
        self.n_features = n_features
        self.lstm = nn.LSTM(n_features, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x: torch.Tensor, alg_gap: torch.Tensor, state=None):
        """`x` (B, T, F) normalised covariates, `alg_gap` (B, T) = U - L in raw
        units. Returns the predicted gap (B, T) and the recurrent state (for
        online use)."""
        if x.dim() != 3 or x.shape[-1] != self.n_features:
            raise ValueError(f"x must have shape (B, T, {self.n_features}), got {tuple(x.shape)}")
        if alg_gap.shape != x.shape[:2]:
            raise ValueError(f"alg_gap must have shape {tuple(x.shape[:2])}, got {tuple(alg_gap.shape)}")
        hidden, state = self.lstm(x, state)       # (B, T, H)
        o = self.head(hidden).squeeze(-1)          # (B, T, 1) -> (B, T)
        return 0.5 * (torch.tanh(o) + 1.0) * alg_gap.clamp_min(0.0), state


def rescaled_mse(pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor,
                 scale: float = 1000.0, sigma: float = 1.0) -> torch.Tensor:
    """The paper's rescaled squared loss over the valid steps: mean((g_hat-g)^2 / (g/scale + sigma))."""
    if pred.shape != target.shape or pred.shape != mask.shape:
        raise ValueError(f"pred, target, mask must share a shape, got {tuple(pred.shape)}, "
                         f"{tuple(target.shape)}, {tuple(mask.shape)}")
    if sigma <= 0 or scale <= 0:
        raise ValueError("scale and sigma must be positive")
    weight = mask.float() / (target.clamp_min(0.0) / scale + sigma)
    return ((pred - target) ** 2 * weight).sum() / mask.float().sum().clamp_min(1.0)


def band_l1(pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor,
            eps: float, band_weight: float = 10.0) -> torch.Tensor:
    """The release's training loss for `rescaled_mse` configs (see the module
    docstring): relative absolute error |g_hat - g| / (g + eps), with the valid
    steps whose true gap lies in [eps/10, 10 eps] sharing weight
    band_weight / (band_weight + 1) and the others 1 / (band_weight + 1).
    Counts are taken over the valid steps of the batch (the release counts per
    time step over padded sequences); the mean is over valid steps."""
    if pred.shape != target.shape or pred.shape != mask.shape:
        raise ValueError(f"pred, target, mask must share a shape, got {tuple(pred.shape)}, "
                         f"{tuple(target.shape)}, {tuple(mask.shape)}")
    if eps <= 0 or band_weight < 0:
        raise ValueError(f"need eps > 0 and band_weight >= 0, got eps={eps}, band_weight={band_weight}")
    valid = mask.float()
    gap = target.clamp_min(0.0)
    # (B, T)
    in_band = ((gap >= eps / 10.0) & (gap <= 10.0 * eps)).float() * valid
    outside = valid - in_band
    weight = (band_weight * in_band / (in_band.sum() + 1.0)
              + outside / (outside.sum() + 1.0)) / (band_weight + 1.0)
    relative = (pred - target).abs() / (gap + eps)
    return (weight * relative).sum() / valid.sum().clamp_min(1.0)


LOSSES = ("band_l1", "rescaled_mse")


@contextmanager
def cpu_threads_for(device: torch.device, hidden: int, max_hidden_single: int = 64):
    """Run a *small* recurrent net single-threaded on CPU (restoring the setting afterwards).

    A 16-unit LSTM steps through hundreds of checkpoints one at a time; splitting each tiny
    matrix product over threads only adds synchronisation, and on a shared 2-core machine it
    made training several times slower in wall time. Larger nets (the `full` preset) keep torch's default."""
    if torch.device(device).type != "cpu" or hidden > max_hidden_single:
        yield
        return
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def train_predictor(x: torch.Tensor, alg_gap: torch.Tensor, target: torch.Tensor, mask: torch.Tensor,
                    hidden: int = 32, layers: int = 2, epochs: int = 150, batch_size: int = 16,
                    lr: float = 3e-3, scale: float = 1000.0, sigma: float = 1.0,
                    generator: torch.Generator | None = None, desc: str = "train LSTM",
                    loss: str = "rescaled_mse", eps: float | None = None,
                    band_weight: float = 10.0) -> tuple[GapLSTM, list[float]]:
    """Adam on the chosen loss (`band_l1`, which needs `eps`, or `rescaled_mse`) over padded
    sequences (B, T, F); returns the model and the per-epoch mean loss. Padding repeats the last
    step and is masked out of the loss."""
    if loss not in LOSSES:
        raise ValueError(f"unknown loss {loss!r}; valid: {', '.join(LOSSES)}")
    if loss == "band_l1":
        if eps is None or eps <= 0:
            raise ValueError(f"the band_l1 loss needs a positive eps, got {eps}")
        loss_fn = lambda p, t, m: band_l1(p, t, m, eps, band_weight)  # noqa: E731
    else:
        loss_fn = lambda p, t, m: rescaled_mse(p, t, m, scale, sigma)  # noqa: E731
    with cpu_threads_for(x.device, hidden):
        return _train(x, alg_gap, target, mask, hidden, layers, epochs, batch_size, lr, loss_fn, generator, desc)


def _train(x, alg_gap, target, mask, hidden, layers, epochs, batch_size, lr, loss_fn, generator, desc):
    model = GapLSTM(x.shape[-1], hidden, layers).to(x.device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in progress(range(epochs), desc=desc):
        order = torch.randperm(x.shape[0], generator=generator).to(x.device)
        total = 0.0
        for start in range(0, x.shape[0], batch_size):
            # region: training step
            idx = order[start:start + batch_size]
            pred, _ = model(x[idx], alg_gap[idx])  # (b, T) predicted gaps, bounded by U - L
            loss = loss_fn(pred, target[idx], mask[idx])  # padded checkpoints masked out
            opt.zero_grad()
            loss.backward()
            opt.step()
            # endregion
            total += float(loss.detach()) * idx.numel()
        losses.append(total / x.shape[0])
    return model.eval(), losses


@torch.no_grad()
def predict_gaps(model: GapLSTM, x: torch.Tensor, alg_gap: torch.Tensor) -> np.ndarray:
    """Offline predictions for a padded batch, (B, T) as numpy."""
    return model(x, alg_gap)[0].cpu().numpy()
