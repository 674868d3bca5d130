"""Bregman divergences and the generalized bias-variance decomposition (paper Sec. 3).

Two generators are used throughout:

* ``"squared"``: phi(y) = ||y||^2, so D(y, y') = ||y - y'||^2 and grad phi(y) = 2y;
* ``"kl"``: phi(p) = sum_k p_k log p_k on the simplex, so D(p, q) = KL(p || q) and
  grad phi(p) = log p + 1 (the constant cancels against simplex differences).

Predictions carry their outcome dimension last: a scalar regression output has shape
``(..., 1)`` and a class-probability vector has shape ``(..., K)``.
"""

from __future__ import annotations

import torch

BREGMAN_LOSSES = ("squared", "kl")
PROB_ATOL = 1e-4


def _check_loss(loss: str) -> None:
    if loss not in BREGMAN_LOSSES:
        raise ValueError(f"unknown Bregman loss {loss!r}; valid: {', '.join(BREGMAN_LOSSES)}")


def check_probabilities(p: torch.Tensor, name: str = "p", atol: float = PROB_ATOL) -> None:
    """Reject tensors that are not probability vectors along the last axis.

    Raises ``TypeError`` for non-tensors and ``ValueError`` for fewer than two classes,
    non-finite or negative entries, or rows that do not sum to one (within ``atol``).
    """
    if not isinstance(p, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(p).__name__}")
    if p.ndim < 1 or p.shape[-1] < 2:
        raise ValueError(f"{name} must have a class axis of size >= 2 last, got shape {tuple(p.shape)}")
    if not torch.isfinite(p).all():
        raise ValueError(f"{name} contains NaN or infinite probabilities")
    if (p < 0).any():
        raise ValueError(f"{name} contains negative probabilities (min {p.min().item():.3g})")
    err = (p.sum(-1) - 1).abs().max().item()
    if err > atol:
        raise ValueError(f"{name} rows must sum to 1 (largest deviation {err:.3g})")


def _check_pair(y: torch.Tensor, y_hat: torch.Tensor, loss: str) -> None:
    _check_loss(loss)
    for name, t in (("y", y), ("y_hat", y_hat)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    try:
        torch.broadcast_shapes(y.shape, y_hat.shape)
    except RuntimeError as error:
        raise ValueError(f"shapes {tuple(y.shape)} and {tuple(y_hat.shape)} do not broadcast") from error
    if y.shape[-1] != y_hat.shape[-1]:
        raise ValueError(f"outcome axes differ: {y.shape[-1]} vs {y_hat.shape[-1]}")
    if loss == "kl":
        check_probabilities(y, "y")
        check_probabilities(y_hat, "y_hat")


def grad_phi(y: torch.Tensor, loss: str) -> torch.Tensor:
    """The mirror map grad phi: 2y (squared) or log p + 1 (negative entropy)."""
    _check_loss(loss)
    if loss == "squared":
        return 2 * y
    return torch.log(y) + 1


def bregman_divergence(y: torch.Tensor, y_hat: torch.Tensor,
                       loss: str) -> torch.Tensor:
    """D_phi(y, y_hat) = phi(y) - phi(y_hat) - <grad phi(y_hat), y - y_hat>
    (Def. of Sec. 3).

    Returns one value per prediction (the outcome axis is summed). For ``"kl"``
    this is KL(y || y_hat) with the convention 0 log 0 = 0.
    """
    _check_pair(y, y_hat, loss)
    if loss == "squared":
        return ((y - y_hat) ** 2).sum(-1)
    return torch.xlogy(y, y).sum(-1) - (y * torch.log(y_hat)).sum(-1)


def dual_mean(preds: torch.Tensor, loss: str, dim: int = 0) -> torch.Tensor:
    """The posterior-mean ("dual-mean") teacher
    f_bar = (grad phi)^{-1}(E[grad phi(f_w)]).

    Squared loss: the arithmetic mean of the teacher predictions along ``dim``.
    KL: the normalized geometric mean  p_bar ∝ exp(E[log p_w]).
    """
    _check_loss(loss)
    if not isinstance(preds, torch.Tensor):
        raise TypeError(f"preds must be a torch.Tensor, got {type(preds).__name__}")
    if loss == "squared":
        return preds.mean(dim)
    check_probabilities(preds, "preds")
    return torch.softmax(torch.log(preds).mean(dim), dim=-1)


def bias_variance(g: torch.Tensor, teacher: torch.Tensor, loss: str) -> dict[str, torch.Tensor]:
    """Generalized bias-variance decomposition (Pfau 2013; paper Lemma on Bregman risk).

    ``g``: target, shape (N, C). ``teacher``: predictions for M draws of the teacher's
    randomness, shape (N, M, C). Returns per-input tensors (N,):
    ``risk`` = E_M D(g, f_w), ``bias`` = D(g, f_bar), ``variance`` = E_M D(f_bar, f_w),
    ``residual`` = risk - bias - variance (zero up to rounding).
    """
    if teacher.ndim != 3 or g.ndim != 2 or teacher.shape[0] != g.shape[0] or teacher.shape[2] != g.shape[1]:
        raise ValueError(f"expected g (N, C) and teacher (N, M, C); got {tuple(g.shape)} and {tuple(teacher.shape)}")
    f_bar = dual_mean(teacher, loss, dim=1)  # (N, C)
    risk = bregman_divergence(g[:, None, :], teacher, loss).mean(1)
    bias = bregman_divergence(g, f_bar, loss)
    variance = bregman_divergence(f_bar[:, None, :], teacher, loss).mean(1)
    return {"risk": risk, "bias": bias, "variance": variance, "residual": risk - bias - variance, "f_bar": f_bar}


def misfit_decomposition(g: torch.Tensor, student: torch.Tensor,
                         teacher: torch.Tensor,
                         loss: str) -> dict[str, torch.Tensor]:
    """Risk gap = misfit + cross term (three-point identity; paper Thm. on
    W2SG).

    For every input, with expectations over the M teacher draws,
      E D(g, f_w) - D(g, f_s)
        = E D(f_s, f_w) + E <grad phi(f_s) - grad phi(f_w), g - f_s>.
    The cross term vanishes when f_s equals the dual-mean teacher, so then the
    gain equals the misfit exactly. Shapes: g and student (N, C), teacher
    (N, M, C). Returns per-input tensors (N,): ``teacher_risk``,
    ``student_risk``, ``gain``, ``misfit``, ``cross``, ``residual``
    (= gain - misfit - cross) and ``to_posterior_mean`` = D(f_bar, f_s).
    """
    if student.shape != g.shape:
        raise ValueError(f"student shape {tuple(student.shape)} must equal g shape {tuple(g.shape)}")
    bv = bias_variance(g, teacher, loss)
    student_risk = bregman_divergence(g, student, loss)
    misfit = bregman_divergence(student[:, None, :], teacher, loss).mean(1)
    # (N, M, C)
    diff = grad_phi(student, loss)[:, None, :] - grad_phi(teacher, loss)
    cross = (diff * (g - student)[:, None, :]).sum(-1).mean(1)
    gain = bv["risk"] - student_risk
    return {
        "teacher_risk": bv["risk"], "student_risk": student_risk, "gain": gain,
        "misfit": misfit, "cross": cross, "residual": gain - misfit - cross,
        "to_posterior_mean": bregman_divergence(bv["f_bar"], student, loss),
        "bv_residual": bv["residual"], "variance": bv["variance"],
    }
