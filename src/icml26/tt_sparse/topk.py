"""The soft TopK operator with straight-through estimation (the paper's key contribution).

Forward: each node keeps exactly k of its F inputs (a hard, k-hot mask), so the trained
network is sparse and its nodes can be enumerated. Backward: gradients flow through the
soft relaxation

    p_i = sigmoid(s_i / tau + t),   t chosen so that sum_i p_i = k,

whose exact Jacobian (through the implicit threshold t) is

    dp_i/ds_j = (1/tau) (v_i delta_ij - v_i v_j / sum_l v_l),   v_i = p_i (1 - p_i).
"""

from __future__ import annotations

import torch


def _check_scores(scores: torch.Tensor, k: int, tau: float) -> None:
    if not isinstance(scores, torch.Tensor) or scores.ndim < 1:
        raise ValueError("scores must be a tensor with the candidate inputs on its last axis")
    n = scores.shape[-1]
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= n:
        raise ValueError(f"k must be an int in 1..{n} (the number of inputs), got {k!r}")
    if not tau > 0:
        raise ValueError(f"temperature tau must be > 0, got {tau!r}")
    if not torch.isfinite(scores).all():
        raise ValueError("scores contain NaN or infinite values")


def soft_topk_threshold(z: torch.Tensor, k: int,
                        n_iter: int = 48) -> torch.Tensor:
    """Solve sum_i sigmoid(z_i + t) = k for t by bisection, independently for
    every row.

    The bracket [-max z - 10, -min z + 10] holds the root: at its left end
    every term is below sigmoid(-10), at its right end above sigmoid(10).
    Returns t with shape z.shape[:-1] + (1,).
    """
    lo = -z.amax(-1, keepdim=True) - 10.0  # (..., 1)
    hi = -z.amin(-1, keepdim=True) + 10.0
    for _ in range(n_iter):
        mid = 0.5 * (lo + hi)
        below = torch.sigmoid(z + mid).sum(-1, keepdim=True) < k
        lo = torch.where(below, mid, lo)
        hi = torch.where(below, hi, mid)
    return 0.5 * (lo + hi)


class SoftTopK(torch.autograd.Function):
    """p = sigmoid(s / tau + t(s)) with sum(p) = k along the last axis; exact
    implicit backward."""

    @staticmethod
    def forward(ctx, scores: torch.Tensor, k: int, tau: float) -> torch.Tensor:
        # float64 where the device has it (tau can be tiny); Apple's MPS has no
        # float64
        wide = torch.float32 if scores.device.type == "mps" else torch.float64
        z = scores.detach().to(wide) / tau
        p = torch.sigmoid(z + soft_topk_threshold(z, k))
        ctx.save_for_backward(p)
        ctx.tau = tau
        return p.to(scores.dtype)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        (p,) = ctx.saved_tensors
        g = grad.to(p.dtype)
        v = p * (1.0 - p)
        vg = (v * g).sum(-1, keepdim=True)
        denom = v.sum(-1, keepdim=True).clamp_min(1e-300)
        # J^T g, J from the module docstring
        grad_scores = (v * g - v * vg / denom) / ctx.tau
        return grad_scores.to(grad.dtype), None, None


def soft_topk(scores: torch.Tensor, k: int, tau: float) -> torch.Tensor:
    """The soft TopK mask p in (0, 1) with sum p = k along the last axis (differentiable)."""
    _check_scores(scores, k, tau)
    return SoftTopK.apply(scores, k, tau)


def hard_topk(scores: torch.Tensor, k: int) -> torch.Tensor:
    """The exactly k-hot mask of the k largest scores along the last axis (no gradient)."""
    idx = scores.detach().topk(k, dim=-1).indices
    return torch.zeros_like(scores).scatter_(-1, idx, 1.0)


def soft_topk_st(scores: torch.Tensor, k: int, tau: float) -> torch.Tensor:
    """Straight-through soft TopK: the value is the hard k-hot mask, the gradient the soft one.

    Written as hard + (soft - soft.detach()) so that the forward value is *exactly* k-hot.
    """
    soft = soft_topk(scores, k, tau)
    return hard_topk(scores, k) + (soft - soft.detach())


def straight_through_weights(weights: torch.Tensor, scores: torch.Tensor,
                             k: int, tau: float
                             ) -> tuple[torch.Tensor, torch.Tensor]:
    """Effective node weights W * m with m = hard TopK in the forward pass.

    Backward: dL/dW uses the soft mask (unselected inputs still learn), and the
    connection scores receive dL/dm = W * (sum_b g x) pushed through the soft
    TopK Jacobian. Returns (effective weights, hard mask), both (M, F).
    """
    hard = hard_topk(scores, k)
    soft = soft_topk(scores, k, tau)
    w_soft = weights * soft
    return weights.detach() * hard + (w_soft - w_soft.detach()), hard


def heaviside_st(h: torch.Tensor) -> torch.Tensor:
    """Node output z = 1[h > 0] (strict), with the identity as straight-through
    gradient."""
    return (h > 0).to(h.dtype) + (h - h.detach())


def temperature_schedule(epoch: int, n_epochs: int, tau_start: float,
                         tau_end: float) -> float:
    """Geometric annealing
    tau_e = tau_start * (tau_end / tau_start) ** (e / (E - 1))."""
    if n_epochs <= 1:
        return tau_end
    return tau_start * (tau_end / tau_start) ** (epoch / (n_epochs - 1))
