"""Errors after removing the global gauge.

Poses are recovered only up to a common right factor: x_i g (poses T_i G) give the same
relative measurements. We estimate that factor in closed form and score the aligned poses:

* rotation: R_g = proj_SO3(sum_i R_i^T Rhat_i) (chordal mean), aligned Rhat_i R_g^T;
* translation: the aligned translation is that_i - Rhat_i u, with
  u = mean_i Rhat_i^T (that_i - t_i) the least-squares gauge translation.

Both steps are exactly equivariant, so the errors are exactly gauge invariant (tested).
"""

from __future__ import annotations

import math

import torch

from .algebra import dq_to_rt, project_so3, rotation_angle

Tensor = torch.Tensor


def align_gauge(R_hat: Tensor, t_hat: Tensor, R: Tensor, t: Tensor) -> tuple[Tensor, Tensor]:
    """Aligned estimates (R (n, 3, 3), t (n, 3)) of (R_hat, t_hat) to the truth (R, t)."""
    for name, a, shape in (("R_hat", R_hat, (3, 3)), ("R", R, (3, 3)), ("t_hat", t_hat, (3,)), ("t", t, (3,))):
        if a.dim() != len(shape) + 1 or tuple(a.shape[1:]) != shape:
            raise ValueError(f"{name} must have shape (n, {', '.join(map(str, shape))}), got {tuple(a.shape)}")
    if not (R_hat.shape[0] == R.shape[0] == t_hat.shape[0] == t.shape[0]):
        raise ValueError("estimate and truth must have the same number of poses")
    R_g = project_so3((R.transpose(-1, -2) @ R_hat).sum(0))  # (3, 3)
    R_al = R_hat @ R_g.T  # (n, 3, 3)
    u = (R_hat.transpose(-1, -2) @ (t_hat - t)[..., None]).mean(0)  # (3, 1)
    t_al = t_hat - (R_hat @ u)[..., 0]  # (n, 3)
    return R_al, t_al


def pose_errors_rt(R_hat: Tensor, t_hat: Tensor, R: Tensor, t: Tensor) -> dict[str, float]:
    """Mean rotation error (degrees, geodesic) and mean translation error ||t_al - t|| after
    gauge alignment; also the medians."""
    R_al, t_al = align_gauge(R_hat, t_hat, R, t)
    ang = rotation_angle(R_al @ R.transpose(-1, -2)) * (180.0 / math.pi)  # (n,)
    dt = (t_al - t).norm(dim=-1)  # (n,)
    return {
        "rot_deg": float(ang.mean()),
        "trans": float(dt.mean()),
        "rot_deg_median": float(ang.median()),
        "trans_median": float(dt.median()),
    }


def pose_errors(x_hat: Tensor, x_true: Tensor) -> dict[str, float]:
    """`pose_errors_rt` for UDQ vectors (n, 2, 4)."""
    if x_hat.shape != x_true.shape or x_hat.dim() != 3 or tuple(x_hat.shape[1:]) != (2, 4):
        raise ValueError(f"x_hat and x_true must both be (n, 2, 4), got {tuple(x_hat.shape)} and {tuple(x_true.shape)}")
    R_hat, t_hat = dq_to_rt(x_hat)
    R, t = dq_to_rt(x_true)
    return pose_errors_rt(R_hat, t_hat, R, t)
