"""Metrics of the chapter: invariance error under every generator, a finite-difference
continuity test (the "tear ratio"), and PSNR."""

from __future__ import annotations

import math

import torch
from torch import nn

from .groups import PlanarGroup


def sample_points(group: PlanarGroup, n: int, generator: torch.Generator, extent: float = 2.0,
                  dtype=torch.float64, device=None) -> torch.Tensor:
    """n random points: fractional coordinates in [-extent, extent]^2 for wallpaper groups
    (several cells), the disk of radius 0.9 for rosettes. Shape (n, 2)."""
    if n < 1:
        raise ValueError(f"need n >= 1 points, got {n}")
    if group.periodic:
        return ((torch.rand(n, 2, generator=generator, dtype=dtype) * 2 - 1) * extent).to(device)
    r = 0.9 * torch.rand(n, generator=generator, dtype=dtype).sqrt()
    th = 2 * math.pi * torch.rand(n, generator=generator, dtype=dtype)
    return torch.stack((r * torch.cos(th), r * torch.sin(th)), -1).to(device)


@torch.no_grad()
def invariance_error(field: nn.Module, group: PlanarGroup, n: int = 2048, seed: int = 0, device=None) -> float:
    """max_g max_u |f(g u) - f(u)| over random points u and every generator g of G
    (including the unit translations for wallpaper groups)."""
    u = sample_points(group, n, torch.Generator().manual_seed(seed), device=device)
    f = field(u)
    return max(float((field(g.apply(u)) - f).abs().max()) for g in group.generators)


@torch.no_grad()
def lipschitz_estimate(field: nn.Module, group: PlanarGroup, h: float,
                       n: int = 20000, seed: int = 0, device=None) -> float:
    """max |f(u + h d) - f(u)| / h over n random points u and random unit
    directions d (one cell for wallpaper groups, so every fundamental-domain
    boundary is crossed)."""
    g = torch.Generator().manual_seed(seed)
    u = (sample_points(group, n, g, extent=0.5, device=device)
         + (0.5 if group.periodic else 0.0))
    th = 2 * math.pi * torch.rand(n, generator=g, dtype=u.dtype).to(u.device)
    d = torch.stack((torch.cos(th), torch.sin(th)), -1)
    return float((field(u + h * d) - field(u)).abs().max() / h)


def tear_ratio(field: nn.Module, group: PlanarGroup, h: float = 5e-3,
               factor: float = 10.0, n: int = 20000, seed: int = 0,
               device=None) -> float:
    """L(h / factor) / L(h) with L the finite-difference Lipschitz estimate.
    A continuous (Lipschitz) field gives ~1 (its slope does not depend on the
    step); a field with a jump J gives ~factor, because
    |f(u+hd)-f(u)|/h ~ J/h across the seam."""
    return (lipschitz_estimate(field, group, h / factor, n, seed, device)
            / lipschitz_estimate(field, group, h, n, seed, device))


def psnr(pred: torch.Tensor, target: torch.Tensor, data_range: float = 1.0) -> float:
    """Peak signal-to-noise ratio 10 log10(range^2 / MSE) in dB."""
    if pred.shape != target.shape:
        raise ValueError(f"shape mismatch: {tuple(pred.shape)} vs {tuple(target.shape)}")
    mse = float(((pred - target) ** 2).mean())
    return 10 * math.log10(data_range ** 2 / max(mse, 1e-20))


def effective_dimension(field: nn.Module, u: torch.Tensor) -> int:
    """Rank of the design matrix d f(u_n) / d theta, shape (N, number of parameters): how many
    independent functions a field that is linear in its parameters (the grid bases) can put on
    the points u (N, 2). A capacity measure that counts what the symmetrization leaves usable,
    unlike the parameter count."""
    if not isinstance(u, torch.Tensor) or u.ndim != 2 or u.shape[-1] != 2:
        raise ValueError(f"points must be a tensor of shape (N, 2), got {getattr(u, 'shape', type(u))}")
    names, params = zip(*field.named_parameters())

    def outputs(*p):
        return torch.func.functional_call(field, dict(zip(names, p)), (u,)).reshape(-1)  # (N * C,)

    jac = torch.autograd.functional.jacobian(outputs, tuple(p.detach() for p in params), vectorize=True)
    J = torch.cat([j.reshape(j.shape[0], -1) for j in jac], 1)  # (N * C, number of parameters)
    return int(torch.linalg.matrix_rank(J))
