"""Paper-cutting / topology design at small scale: the virtual temperature method (VTM,
the paper's Eq. 6) on a periodic Q1 finite-element grid, with an adjoint gradient, and a
periodic flood-fill check of connectivity.

Heat conduction -div(k(rho) grad T) = q on the periodic unit cell, T = 0 on the sink
Gamma = {u1 = 0} U {u2 = 0}; SIMP conductivity k = k_min + rho^p (k0 - k_min); heat generated
in the material, q_e = q0 rho_e (our reading: islands of material that are not connected to the
sink heat up). Score (mean T^P)^(1/P).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
import torch
from scipy import ndimage

# Q1 (bilinear) element conductivity matrix on a square element, nodes (0,0),(1,0),(1,1),(0,1)
KE = np.array([[4, -1, -2, -1], [-1, 4, -1, -2], [-2, -1, 4, -1], [-1, -2, -1, 4]], dtype=float) / 6.0


def _element_nodes(n: int) -> np.ndarray:
    """(n*n, 4) node ids of every element of the periodic n x n grid (node (i, j) -> i*n + j)."""
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    i, j = i.ravel(), j.ravel()
    ip, jp = (i + 1) % n, (j + 1) % n
    return np.stack((i * n + j, ip * n + j, ip * n + jp, i * n + jp), 1)


def solve_vtm(rho: np.ndarray, penal: float = 4.0, P: float = 20.0, q0: float = 1e-4, k0: float = 1.0,
              kmin: float = 1e-4) -> tuple[float, np.ndarray, np.ndarray]:
    """Assemble and solve the periodic heat problem (sparse direct solve, so no CG stall);
    return the score J, the temperature T (n, n) and the adjoint gradient dJ/drho (n, n)."""
    r = np.asarray(rho, dtype=float)
    n = r.shape[0]
    en = _element_nodes(n)
    k = kmin + r.ravel() ** penal * (k0 - kmin)  # (n*n,)
    rows = np.repeat(en, 4, 1).ravel()
    cols = np.tile(en, (1, 4)).ravel()
    vals = (k[:, None, None] * KE[None]).ravel()
    K = sp.csr_matrix((vals, (rows, cols)), shape=(n * n, n * n))
    q = np.zeros(n * n)
    np.add.at(q, en.ravel(), np.repeat(q0 * r.ravel() / 4.0, 4))
    node_i, node_j = np.divmod(np.arange(n * n), n)
    free = np.nonzero((node_i > 0) & (node_j > 0))[0]
    solve = spla.factorized(K[free][:, free].tocsc())
    T = np.zeros(n * n)
    T[free] = solve(q[free])
    Tf = np.maximum(T[free], 0.0)
    J = float(np.mean(Tf ** P) ** (1.0 / P))
    dJdT = J ** (1 - P) * Tf ** (P - 1) / len(free) if J > 0 else np.zeros_like(Tf)
    lam = np.zeros(n * n)
    lam[free] = solve(dJdT)  # adjoint (K is symmetric)
    Te, Le = T[en], lam[en]  # (n*n, 4)
    dk = penal * r.ravel() ** (penal - 1) * (k0 - kmin)
    grad = q0 / 4.0 * Le.sum(1) - dk * np.einsum("ea,ab,eb->e", Le, KE, Te)
    return J, T.reshape(n, n), grad.reshape(n, n)


class _VTMFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, rho, kwargs):
        J, _, grad = solve_vtm(rho.detach().cpu().double().numpy(), **kwargs)
        ctx.save_for_backward(torch.as_tensor(grad, dtype=rho.dtype, device=rho.device))
        return rho.new_tensor(J)

    @staticmethod
    def backward(ctx, g):
        (grad,) = ctx.saved_tensors
        return g * grad, None


def vtm_score(rho: torch.Tensor, **kwargs) -> torch.Tensor:
    """VTM connectivity score (Eq. 6) of an (n, n) element density in [0, 1] on the periodic
    cell, differentiable through the adjoint solve (the FE solve itself is scipy, on CPU).
    kwargs: penal, P, q0, k0, kmin (see `solve_vtm`)."""
    if not isinstance(rho, torch.Tensor) or rho.ndim != 2 or rho.shape[0] != rho.shape[1] or rho.shape[0] < 3:
        raise ValueError(f"rho must be a square (n, n) density tensor with n >= 3, got {getattr(rho, 'shape', rho)}")
    if float(rho.detach().min()) < 0 or float(rho.detach().max()) > 1:
        raise ValueError("rho must lie in [0, 1]")
    return _VTMFunction.apply(rho, kwargs)


def periodic_components(mask: np.ndarray) -> int:
    """Number of 4-connected components of a binary (n, n) mask on the torus (flood fill by
    scipy.ndimage.label, then components touching across opposite edges are merged)."""
    mask = np.asarray(mask, dtype=bool)
    if mask.ndim != 2:
        raise ValueError(f"mask must be 2D, got shape {mask.shape}")
    lab, k = ndimage.label(mask)
    parent = list(range(k + 1))

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for a, b in ((lab[0, :], lab[-1, :]), (lab[:, 0], lab[:, -1])):
        for x, y in zip(a, b):
            if x and y:
                parent[find(x)] = find(y)
    return len({find(x) for x in range(1, k + 1)})
