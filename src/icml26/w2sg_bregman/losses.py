"""Student training losses on a teacher's soft labels (paper Sec. 5; official ``loss.py``).

All losses take student logits ``z`` of shape (..., K) and teacher probabilities ``p_t``
of the same shape, and return one value per example, shape (...,). Multi-class versions
of the official binary losses are our reconstruction (recorded in the chapter).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .bregman import check_probabilities

LOSS_NAMES = ("ce", "rce", "sl", "cace", "aux")


def check_temperature(temperature: float) -> float:
    """A teacher temperature must be a finite positive number."""
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)):
        raise TypeError(f"temperature must be a number, got {type(temperature).__name__}")
    if not math.isfinite(temperature) or temperature <= 0:
        raise ValueError(f"temperature must be finite and > 0, got {temperature!r}")
    return float(temperature)


def teacher_probs(logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """Teacher soft labels softmax(z_t / T); T > 1 makes the teacher more uncertain."""
    return torch.softmax(logits / check_temperature(temperature), dim=-1)


def smooth_labels(p_t: torch.Tensor, eps: float) -> torch.Tensor:
    """Label smoothing p_t <- (1 - eps) p_t + eps / K, keeping log p_t finite (Sec. 5)."""
    if not 0 <= eps < 1:
        raise ValueError(f"smoothing eps must lie in [0, 1), got {eps!r}")
    return (1 - eps) * p_t + eps / p_t.shape[-1]


def _check_inputs(z: torch.Tensor, p_t: torch.Tensor) -> None:
    if not isinstance(z, torch.Tensor):
        raise TypeError(f"student logits must be a torch.Tensor, got {type(z).__name__}")
    if z.shape != p_t.shape:
        raise ValueError(f"student logits {tuple(z.shape)} and teacher probs {tuple(p_t.shape)} differ in shape")
    check_probabilities(p_t, "teacher probabilities")


def forward_ce(z: torch.Tensor, p_t: torch.Tensor) -> torch.Tensor:
    """Forward cross-entropy  L_CE = -sum_k p_t(k) log p_s(k)
    (the standard W2S loss)."""
    _check_inputs(z, p_t)
    return -(p_t * F.log_softmax(z, dim=-1)).sum(-1)


def reverse_ce(z: torch.Tensor, p_t: torch.Tensor,
               eps: float = 1e-4) -> torch.Tensor:
    """Reverse cross-entropy  L_RCE = -sum_k p_s(k) log p_t(k)
    (student in the first slot).

    The teacher is smoothed by ``eps`` so that log p_t is finite. Note
    L_RCE = KL(p_s || p_t) + H(p_s): the misfit of the KL Bregman divergence
    plus the student's entropy, which the paper's analysis says to keep low.
    """
    _check_inputs(z, p_t)
    return -(torch.softmax(z, dim=-1)
             * torch.log(smooth_labels(p_t, eps))).sum(-1)


def reverse_ce_grad(z: torch.Tensor, p_t: torch.Tensor,
                    eps: float = 1e-4) -> torch.Tensor:
    """Closed-form gradient of L_RCE wrt the student logits:
    dL/dz_j = p_s(j) (l_j - sum_k p_s(k) l_k),  l_k = -log p_t(k).

    With p_t = softmax(z_t / T) (and eps = 0),
    l_j - sum_k p_s(k) l_k = -(z_t,j - <p_s, z_t>)/T:
    the teacher's temperature rescales the gradient but never turns it.
    """
    _check_inputs(z, p_t)
    p_s = torch.softmax(z, dim=-1)
    ell = -torch.log(smooth_labels(p_t, eps))
    return p_s * (ell - (p_s * ell).sum(-1, keepdim=True))


def symmetric_ce(z: torch.Tensor, p_t: torch.Tensor, alpha: float = 1.0,
                 beta: float = 0.1, eps: float = 1e-4) -> torch.Tensor:
    """Symmetric loss  alpha * CE + beta * RCE  (official ``SL_a1_b0.1``)."""
    return alpha * forward_ce(z, p_t) + beta * reverse_ce(z, p_t, eps)


def confidence_threshold(p_t: torch.Tensor, quantile: float = 0.5) -> torch.Tensor:
    """The confidence cut for CACE: a quantile of the teacher's max-probabilities
    (official ``Quan_CACE_q``; multi-class: confidence = max_k p_t(k))."""
    if not 0 <= quantile <= 1:
        raise ValueError(f"quantile must lie in [0, 1], got {quantile!r}")
    return torch.quantile(p_t.max(-1).values.flatten(), quantile)


def cace(z: torch.Tensor, p_t: torch.Tensor, threshold: float | torch.Tensor,
         eps: float = 1e-4) -> torch.Tensor:
    """Confidence-adaptive CE: forward CE on examples where the teacher is
    confident (max_k p_t(k) >= threshold), reverse CE where it is uncertain."""
    confident = p_t.max(-1).values >= threshold
    return torch.where(confident, forward_ce(z, p_t), reverse_ce(z, p_t, eps))


def aux_confidence(z: torch.Tensor, p_t: torch.Tensor, aux_weight: float) -> torch.Tensor:
    """Burns et al. (2023) auxiliary confidence loss: CE toward
    (1 - a) p_t + a * onehot(argmax p_s), the student's own hardened prediction (detached)."""
    if not 0 <= aux_weight <= 1:
        raise ValueError(f"aux_weight must lie in [0, 1], got {aux_weight!r}")
    _check_inputs(z, p_t)
    hard = F.one_hot(z.detach().argmax(-1), z.shape[-1]).to(p_t.dtype)
    target = (1 - aux_weight) * p_t + aux_weight * hard
    return -(target * F.log_softmax(z, dim=-1)).sum(-1)


def aux_schedule(step_frac: float, max_weight: float = 0.5, warmup: float = 0.2) -> float:
    """Linear warm-up of the AUX weight to ``max_weight`` over the first ``warmup`` of training."""
    return max_weight * min(1.0, step_frac / warmup)


def w2s_loss(name: str, z: torch.Tensor, p_t: torch.Tensor, *, eps: float = 1e-4,
             beta: float = 0.1, threshold: float | torch.Tensor = 0.5,
             step_frac: float = 1.0) -> torch.Tensor:
    """Dispatch a weak-to-strong loss by name (one of ``LOSS_NAMES``); per-example values."""
    if name == "ce":
        return forward_ce(z, p_t)
    if name == "rce":
        return reverse_ce(z, p_t, eps)
    if name == "sl":
        return symmetric_ce(z, p_t, 1.0, beta, eps)
    if name == "cace":
        return cace(z, p_t, threshold, eps)
    if name == "aux":
        return aux_confidence(z, p_t, aux_schedule(step_frac))
    raise ValueError(f"unknown w2s loss {name!r}; valid: {', '.join(LOSS_NAMES)}")
