"""The unsupervised monotone partial-order score S(G^r, G^c) (the paper's core object).

Abstract: "infers a monotone partial-order score through unsupervised pairwise comparisons
of long-horizon outcomes". The partial order is the paper's; the architecture and the two
loss terms (dominance-rank regression + Bradley-Terry on comparable pairs) are our
reconstruction.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def _check_outcomes(g_r: torch.Tensor, g_c: torch.Tensor) -> None:
    if g_r.shape != g_c.shape:
        raise ValueError(f"returns and costs must have the same shape, got {tuple(g_r.shape)} and {tuple(g_c.shape)}")


def dominance_matrix(g_r: torch.Tensor, g_c: torch.Tensor,
                     tol: float = 0.0) -> torch.Tensor:
    """D_ij = 1[o_i dominates o_j]: G^r_i >= G^r_j - e_r and
    G^c_i <= G^c_j + e_c, and at least one of them better by more than its
    resolution e (G^r_i > G^r_j + e_r or G^c_i < G^c_j - e_c).

    The resolution e = tol * (batch std of that axis) is scale free (our
    choice; tol = 0 is the exact partial order). g_r, g_c: (B,) -> D: (B, B)
    float.
    """
    _check_outcomes(g_r, g_c)
    if g_r.dim() != 1:
        raise ValueError(f"outcomes must be 1-D batches, got shape {tuple(g_r.shape)}")
    if tol < 0:
        raise ValueError(f"tol must be >= 0, got {tol}")
    e_r, e_c = _resolution(g_r, g_c, tol)
    dr = g_r[:, None] - g_r[None, :]  # (B, B): G^r_i - G^r_j
    dc = g_c[:, None] - g_c[None, :]
    return _dominates(dr, dc, e_r, e_c)


def _resolution(g_r: torch.Tensor, g_c: torch.Tensor, tol: float):
    """Per-axis resolution e = tol * (batch std of that axis); 0 for tol = 0 or one outcome."""
    e_r = tol * g_r.std() if (tol > 0 and g_r.numel() > 1) else 0.0
    e_c = tol * g_c.std() if (tol > 0 and g_c.numel() > 1) else 0.0
    return e_r, e_c


def _dominates(dr: torch.Tensor, dc: torch.Tensor, e_r, e_c) -> torch.Tensor:
    """1[o_i dominates o_j] from the differences dr = G^r_i - G^r_j, dc = G^c_i - G^c_j."""
    strict = (dr > e_r) | (dc < -e_c)
    return ((dr >= -e_r) & (dc <= e_c) & strict).float()


def dominance_shares(g_r: torch.Tensor, g_c: torch.Tensor, batch_r: torch.Tensor, batch_c: torch.Tensor,
                     tol: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    """For query outcomes (Q,), the share of a comparison batch (B,) that each one dominates and the
    share that dominates it, under the same rule and resolution (from the batch's std) as
    `dominance_matrix`. Their difference is the rank target y the query would get as a member
    of the batch: the quantity the score regresses on, so it shows which outcome the score is
    taught to prefer (a diagnostic; D_ii = 0, so a batch member queried gets exactly its target)."""
    _check_outcomes(g_r, g_c)
    _check_outcomes(batch_r, batch_c)
    if g_r.dim() != 1 or batch_r.dim() != 1 or batch_r.numel() < 1:
        raise ValueError("queries and the comparison batch must be 1-D (the batch non-empty)")
    if tol < 0:
        raise ValueError(f"tol must be >= 0, got {tol}")
    e_r, e_c = _resolution(batch_r, batch_c, tol)
    dr = g_r[:, None] - batch_r[None, :]  # (Q, B): query minus batch member
    dc = g_c[:, None] - batch_c[None, :]
    return _dominates(dr, dc, e_r, e_c).mean(1), _dominates(-dr, -dc, e_r, e_c).mean(1)


def rank_targets(g_r: torch.Tensor, g_c: torch.Tensor,
                 tol: float = 0.0) -> torch.Tensor:
    """y_i = (1/B) sum_j D_ij - (1/B) sum_j D_ji: share of the batch that o_i
    beats minus the share that beats o_i. Monotone in the partial order;
    depends on the current data."""
    d = dominance_matrix(g_r, g_c, tol)
    return d.mean(1) - d.mean(0)


class MonotoneScore(nn.Module):
    """S(G^r, G^c), non-decreasing in G^r and non-increasing in G^c by construction.

    Inputs are standardised with stored statistics (set by `fit_score`). First layer:
    weights softplus(v) >= 0 on x_r and -softplus(v) <= 0 on x_c; later layers have
    softplus (>= 0) weights; activations are tanh (monotone). A composition of monotone
    maps is monotone, so dS/dG^r >= 0 and dS/dG^c <= 0 for every parameter value.
    """

    def __init__(self, hidden: int = 16, generator: torch.Generator | None = None):
        super().__init__()
        if hidden < 1:
            raise ValueError(f"hidden must be >= 1, got {hidden}")
        g = generator
        self.v1 = nn.Parameter(torch.randn(2, hidden, generator=g) * 0.5)
        self.b1 = nn.Parameter(torch.randn(hidden, generator=g) * 0.5)
        self.v2 = nn.Parameter(torch.randn(hidden, hidden, generator=g) * 0.5 - 1.0)
        self.b2 = nn.Parameter(torch.zeros(hidden))
        self.v3 = nn.Parameter(torch.randn(hidden, 1, generator=g) * 0.5 - 1.0)
        self.b3 = nn.Parameter(torch.zeros(1))
        self.register_buffer("mu", torch.zeros(2))
        self.register_buffer("sigma", torch.ones(2))

    def first_layer_weight(self) -> torch.Tensor:
        """(2, hidden): row 0 (return) >= 0, row 1 (cost) <= 0."""
        sign = torch.tensor([1.0, -1.0], device=self.v1.device)[:, None]
        return sign * F.softplus(self.v1)

    def forward(self, g_r: torch.Tensor, g_c: torch.Tensor) -> torch.Tensor:
        """Score of outcomes with any batch shape: g_r, g_c (*B,) -> (*B,)."""
        _check_outcomes(g_r, g_c)
        x = (torch.stack([g_r, g_c], -1) - self.mu) / self.sigma  # (*B, 2)
        h = torch.tanh(x @ self.first_layer_weight() + self.b1)
        h = torch.tanh(h @ F.softplus(self.v2) + self.b2)
        return (h @ F.softplus(self.v3) + self.b3)[..., 0]

    def set_normaliser(self, g_r: torch.Tensor, g_c: torch.Tensor) -> None:
        """Standardise inputs with the batch's mean and std (the "running stats" of the batch)."""
        x = torch.stack([g_r, g_c], -1).detach()
        self.mu.copy_(x.mean(0))
        self.sigma.copy_(x.std(0).clamp_min(1e-3))


def score_loss(score: MonotoneScore, g_r: torch.Tensor, g_c: torch.Tensor,
               beta_bt: float = 0.1, tol: float = 0.0) -> torch.Tensor:
    """L_S = L_rank + beta * L_BT on a batch of outcomes (B,).

    L_rank = mean_i (S(o_i) - y_i)^2 with y the dominance-rank targets (fixes
    the exchange rate between the axes);
    L_BT = -mean_{D_ij = 1} log sigmoid(S(o_i) - S(o_j)).
    """
    s = score(g_r, g_c)  # (B,)
    d = dominance_matrix(g_r, g_c, tol)
    y = d.mean(1) - d.mean(0)
    l_rank = (s - y).pow(2).mean()
    if d.sum() == 0:
        return l_rank
    diff = s[:, None] - s[None, :]  # (B, B): S(o_i) - S(o_j)
    l_bt = -(F.logsigmoid(diff) * d).sum() / d.sum()
    return l_rank + beta_bt * l_bt


def fit_score(score: MonotoneScore, g_r: torch.Tensor, g_c: torch.Tensor, steps: int, lr: float = 1e-2,
              beta_bt: float = 0.1, tol: float = 0.0, optimizer: torch.optim.Optimizer | None = None) -> float:
    """Refit the score on one outcome batch (full-batch Adam); returns the final loss."""
    _check_outcomes(g_r, g_c)
    if g_r.dim() != 1 or g_r.numel() < 2:
        raise ValueError("fit_score needs a 1-D batch of at least two outcomes")
    g_r, g_c = g_r.detach(), g_c.detach()
    score.set_normaliser(g_r, g_c)
    opt = optimizer or torch.optim.Adam(score.parameters(), lr=lr)
    loss = torch.zeros(())
    for _ in range(steps):
        loss = score_loss(score, g_r, g_c, beta_bt, tol)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return float(loss.detach())


def effective_multiplier(score: MonotoneScore, g_r: torch.Tensor,
                         g_c: torch.Tensor) -> torch.Tensor:
    """lambda_eff(o) = -(dS/dG^c) / (dS/dG^r): the local reward-per-cost
    exchange rate that the score implies at each outcome (comparable with a
    fixed linear penalty lambda)."""
    g_r = g_r.detach().clone().requires_grad_(True)
    g_c = g_c.detach().clone().requires_grad_(True)
    gr, gc = torch.autograd.grad(score(g_r, g_c).sum(), (g_r, g_c))
    return -gc / gr.clamp_min(1e-8)


def return_slope(score: MonotoneScore, g_r: torch.Tensor, g_c: torch.Tensor) -> torch.Tensor:
    """dS/dG^r at each outcome (>= 0 by construction): the score's return units."""
    g_r = g_r.detach().clone().requires_grad_(True)
    (gr,) = torch.autograd.grad(score(g_r, g_c.detach()).sum(), (g_r,))
    return gr
