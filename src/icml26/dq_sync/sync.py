"""The paper's two-stage pipeline: DQ power-method spectral initializer, then DQGPM.

Notation (paper Sec. 3): the unknown is x = (x_1, ..., x_n) in UDQ^n, and the Hermitian
DQ measurement matrix C in DQ^{n x n} has C_ij = measurement on edge (i, j),
C_ji = C_ij^*, C_ii = 1 and zeros off the graph. Without noise on a complete graph,
C = x x^*, rank one with dominant dual eigenvalue n.

Everything is batched over edges: one product C x costs two `index_add_` over the m edges
(no Python loop over nodes or edges), so it runs unchanged on a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .algebra import dq_conj, dq_mul, dq_vector_norm, dual_div, project_udq, quat_left_matrix
from .data import PoseGraph
from .metrics import pose_errors

Tensor = torch.Tensor


def _check_vector(graph: PoseGraph, x: Tensor, name: str = "x") -> None:
    if not isinstance(x, torch.Tensor) or tuple(x.shape) != (graph.n, 2, 4):
        raise ValueError(f"{name} must be a DQ vector of shape ({graph.n}, 2, 4), got {tuple(getattr(x, 'shape', ()))}")
    if x.device != graph.device:
        raise ValueError(f"{name} is on {x.device} but the graph is on {graph.device}")


def measurement_matrix(graph: PoseGraph) -> tuple[Tensor, Tensor]:
    """The Hermitian DQ matrix C as two real 4n x 4n matrices (C_s, C_d).

    Block (i, j) of C_s is L(C_ij,s) (the left-multiplication matrix), so that for a DQ
    vector x stored as real 4n-vectors, C x = (C_s x_s, C_s x_d + C_d x_s). Dense: meant for
    inspection and tests at small n; the algorithms use `hermitian_matvec`.
    """
    n, (i, j) = graph.n, graph.edges.T
    C, Ch = graph.measurements, dq_conj(graph.measurements)
    dtype, dev = C.dtype, C.device
    blocks = torch.zeros(2, n, n, 4, 4, dtype=dtype, device=dev)  # (part, row node, col node, 4, 4)
    eye = torch.eye(4, dtype=dtype, device=dev)
    blocks[0, torch.arange(n), torch.arange(n)] = eye  # C_ii = 1 + eps 0
    blocks[:, i, j] = quat_left_matrix(C).transpose(0, 1)  # (2, m, 4, 4)
    blocks[:, j, i] = quat_left_matrix(Ch).transpose(0, 1)
    full = blocks.permute(0, 1, 3, 2, 4).reshape(2, 4 * n, 4 * n)  # (2, 4n, 4n) block matrix
    return full[0], full[1]


def hermitian_matvec(graph: PoseGraph, x: Tensor) -> Tensor:
    """y = C x for the Hermitian DQ measurement matrix, x and y of shape
    (n, 2, 4).

    y_i = x_i + sum_{(i,j) in E} C_ij x_j + sum_{(j,i) in E} C_ji^* x_j,
    as two `index_add_`.
    """
    _check_vector(graph, x)
    i, j = graph.edges[:, 0], graph.edges[:, 1]
    y = x.clone()  # the diagonal C_ii = 1
    # (m, 2, 4) summed into rows i
    y.index_add_(0, i, dq_mul(graph.measurements, x[j]))
    # Hermitian half
    y.index_add_(0, j, dq_mul(dq_conj(graph.measurements), x[i]))
    return y


@dataclass
class PowerMethodResult:
    """Leading eigenvector v (n, 2, 4) with ||v|| = 1 (dual norm), its dual eigenvalue
    (Rayleigh quotient, shape (2,)), the number of iterations and the change per iteration."""

    v: Tensor
    eigenvalue: Tensor
    iterations: int
    converged: bool
    changes: list[float] = field(default_factory=list)


def dq_power_method(graph: PoseGraph, iters: int = 300, tol: float = 1e-10,
                    generator: torch.Generator | None = None, v0: Tensor | None = None) -> PowerMethodResult:
    """Power method for the dominant eigenpair of a Hermitian DQ matrix (Cui & Qi 2024).

    v^{k+1} = C v^k / ||C v^k||, with the dual-number norm and dual division (paper,
    spectral initializer). Stops when max(||v^{k+1}_s - v^k_s||, ||v^{k+1}_d - v^k_d||) < tol.
    """
    if not isinstance(iters, int) or iters < 1:
        raise ValueError(f"iters must be a positive integer, got {iters!r}")
    dtype, dev = graph.measurements.dtype, graph.device
    if v0 is None:
        v0 = torch.randn(graph.n, 2, 4, generator=generator, dtype=dtype).to(dev)
    _check_vector(graph, v0, "v0")
    v = dual_div(v0, dq_vector_norm(v0))  # (n, 2, 4); dual_div broadcasts the (2,) norm
    changes: list[float] = []
    converged = False
    k = 0
    # region: power step
    for k in range(1, iters + 1):
        w = hermitian_matvec(graph, v)
        # v <- Cv / ||Cv|| (dual norm, dual division)
        v_new = dual_div(w, dq_vector_norm(w))
        change = float(torch.maximum((v_new[:, 0] - v[:, 0]).norm(),
                                     (v_new[:, 1] - v[:, 1]).norm()))
        changes.append(change)
        v = v_new
        if change < tol:
            converged = True
            break
    # endregion
    # dual Rayleigh quotient <v, C v> (real part of v^* C v), standard and dual parts
    w = hermitian_matvec(graph, v)
    lam = torch.stack([(v[:, 0] * w[:, 0]).sum(), (v[:, 0] * w[:, 1]).sum() + (v[:, 1] * w[:, 0]).sum()])
    return PowerMethodResult(v, lam, k, converged, changes)


def spectral_initializer(
    graph: PoseGraph, iters: int = 300, tol: float = 1e-10,
    generator: torch.Generator | None = None,
) -> tuple[Tensor, PowerMethodResult]:
    """Stage 1: leading eigenvector of C by the DQ power method, rounded
    entrywise onto UDQ (x_i^0 = P(v_i)); the scale of v cancels in the
    rounding. Returns (x0, power result)."""
    result = dq_power_method(graph, iters, tol, generator)
    return project_udq(result.v), result


def quaternion_fit(graph: PoseGraph, x: Tensor) -> float:
    """The rotation part of the least-squares fit that DQGPM's fixed points make stationary:
    sum over both orientations of every edge of <x_i,s, C_ij,s x_j,s> (larger = better fit).

    For unit x_s and unit measurements, sum_(i,j) ||x_i,s - C_ij,s x_j,s||^2 = 2m - this, so
    maximising it over unit quaternions is the quaternion least-squares problem; x = P(C x) is
    its first-order condition (the Lagrange condition of the standard part)."""
    _check_vector(graph, x)
    y = hermitian_matvec(graph, x) - x  # drop the diagonal C_ii = 1
    return float((x[:, 0] * y[:, 0]).sum())


@dataclass
class GPMResult:
    """DQGPM output: the estimate x (n, 2, 4) and per-iteration records.

    `changes[k]` is max(||x^{k+1}_s - x^k_s||, ||x^{k+1}_d - x^k_d||); when the ground truth
    is given, `rot_err_deg[k]` and `trans_err[k]` are the gauge-aligned errors of x^k
    (index 0 is the initial point). `iterates` (K+1, n, 2, 4) when asked for.
    """

    x: Tensor
    iterations: int
    changes: list[float]
    rot_err_deg: list[float]
    trans_err: list[float]
    iterates: Tensor | None


def dqgpm(graph: PoseGraph, x0: Tensor, iters: int = 30, tol: float = 0.0,
          x_true: Tensor | None = None, keep_iterates: bool = False) -> GPMResult:
    """Stage 2, the dual quaternion generalized power method: x^{k+1} = P_{UDQ^n}(C x^k).

    Each step is one Hermitian mat-vec followed by the entrywise projection onto UDQ (paper,
    DQGPM). `tol=0` runs exactly `iters` steps (what the contraction plots use).
    """
    if not isinstance(iters, int) or iters < 0:
        raise ValueError(f"iters must be a non-negative integer, got {iters!r}")
    _check_vector(graph, x0, "x0")
    if x_true is not None:
        _check_vector(graph, x_true, "x_true")
    x = project_udq(x0)
    changes: list[float] = []
    rot, trans = [], []
    kept = [x] if keep_iterates else None

    def record(z: Tensor) -> None:
        if x_true is not None:
            err = pose_errors(z, x_true)
            rot.append(err["rot_deg"])
            trans.append(err["trans"])

    record(x)
    k = 0
    # region: dqgpm step
    for k in range(1, iters + 1):
        x_new = project_udq(hermitian_matvec(graph, x))  # x^{k+1} = P_UDQ^n(C x^k)
        changes.append(float(torch.maximum((x_new[:, 0] - x[:, 0]).norm(),
                                           (x_new[:, 1] - x[:, 1]).norm())))
        x = x_new
        record(x)
        if kept is not None:
            kept.append(x)
        if tol > 0 and changes[-1] < tol:
            break
    # endregion
    iterates = torch.stack(kept) if kept is not None else None  # (K+1, n, 2, 4)
    return GPMResult(x, k if iters else 0, changes, rot, trans, iterates)


def synchronize(graph: PoseGraph, power_iters: int = 300, power_tol: float = 1e-10, gpm_iters: int = 30,
                gpm_tol: float = 0.0, seed: int = 0, x_true: Tensor | None = None,
                keep_iterates: bool = False) -> tuple[Tensor, Tensor, GPMResult]:
    """The full pipeline: spectral initializer, then DQGPM. Returns (x_spectral, x_dqgpm, gpm record)."""
    gen = torch.Generator().manual_seed(int(seed))
    x0, _ = spectral_initializer(graph, power_iters, power_tol, gen)
    gpm = dqgpm(graph, x0, gpm_iters, gpm_tol, x_true=x_true, keep_iterates=keep_iterates)
    return x0, gpm.x, gpm
