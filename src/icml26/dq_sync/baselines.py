"""Baselines: the matrix spectral method EIG-SE(3) and the DQ spectral estimate alone.

EIG-SE(3) (Arrigoni, Rossi & Fusiello 2016, "Spectral synchronization of multiple views
in SE(3)", SIAM J. Imaging Sci.): stack the 4x4 relative poses T_ij = T_i T_j^{-1} into
X in R^{4n x 4n} (X_ii = I_4, zero off the graph) and D = (deg + 1) kron I_4. Then
X M = D M for M = [T_1; ...; T_n], so the columns of M span the eigenspace of D^{-1} X
for its largest eigenvalue 1. With noise, take the 4 eigenvectors of largest real part
and *round*: (1) fix the 4x4 mixing by making the bottom row of every block ~ [0 0 0 1]
(least squares), (2) divide each block by its (4,4) entry, (3) project the 3x3 part onto
SO(3) by SVD and read off the translation. That multi-step rounding is what the paper
contrasts with the one-line UDQ normalisation. `self_loops=False` gives the other common
convention (empty diagonal, D = deg kron I_4); at this scale both give the same errors.

Least-squares references (evidence, not competitors, and not part of the pass criterion):

* `ls_translations`: the linear least-squares fit of t_i - R_ij t_j = t_ij with the *measured*
  relative rotations R_ij. Under the chapter's noise model (data.py) the translation part of
  a measurement is t_ij = t_i - R_ij t_j + R_i sigma_t xi exactly, with isotropic Gaussian
  noise independent of the rotation noise, so this fit is the maximum-likelihood translation
  estimate (a linear Gaussian model: least squares = ML, Gauss-Markov).
* `chordal_rotations`: the chordal least-squares rotation estimate, a local optimum of
  sum_ij ||R_i - R_ij R_j||_F^2 reached by the SO(3) generalized power method from a start.
* `chordal_cost`: the cost that `chordal_rotations` minimises, to compare estimates.
* `eig_se3(..., rounding="anchor")` and `eig_se3(..., fix_reflection=False)`: two weaker
  roundings of EIG-SE(3), to see whether a weaker baseline would explain the paper's table.
* `dq_translation_fixed_point`: the translations at which DQGPM's update is stationary for
  frozen rotations, with the two ingredients of the DQ sum switched on/off (chapter, results).
"""

from __future__ import annotations

import torch

from .algebra import (
    dq_conj, dq_from_rt, dq_mul, dq_to_matrix, dq_to_rt, is_udq, project_so3, project_udq, quat_conj, quat_mul,
)
from .data import PoseGraph
from .sync import spectral_initializer

Tensor = torch.Tensor


def se3_block_matrix(graph: PoseGraph, self_loops: bool = True) -> tuple[Tensor, Tensor]:
    """X (4n, 4n) with blocks T_ij, T_ji = T_ij^{-1}, X_ii = I; and the degrees+1 (n,).

    `self_loops=False`: X_ii = 0 and the plain degrees (the other convention)."""
    n, (i, j) = graph.n, graph.edges.T
    meas = graph.measurements
    if not bool(is_udq(meas).all()):  # additive DQ noise: round each measurement to a pose first
        meas = project_udq(meas)
    T = dq_to_matrix(meas)  # (m, 4, 4)
    T_inv = torch.linalg.inv(T)
    dtype, dev = T.dtype, T.device
    blocks = torch.zeros(n, n, 4, 4, dtype=dtype, device=dev)
    if self_loops:
        blocks[torch.arange(n), torch.arange(n)] = torch.eye(4, dtype=dtype, device=dev)
    blocks[i, j] = T
    blocks[j, i] = T_inv
    X = blocks.permute(0, 2, 1, 3).reshape(4 * n, 4 * n)  # (4n, 4n) block matrix
    deg = graph.degrees().to(dtype) + (1.0 if self_loops else 0.0)  # (n,), + 1 for the self-loop
    return X, deg


#: Block size of the sparse solver's subspace iteration (>= 4: the wanted eigenvalue 1 is 4-fold
#: without noise, and a block method needs at least as many vectors as the multiplicity).
SUBSPACE_BLOCK = 12
#: Iteration cap of the subspace iteration; past it the dense solver decides.
SUBSPACE_MAX_ITERS = 4000
#: Rayleigh-Ritz (and the convergence test) every this many multiplications.
SUBSPACE_CHECK_EVERY = 10
#: Accepted eigen-residual ||A U - U (U^T A U)||_F / ||A||_F of the returned 4-dim subspace.
EIG_RESIDUAL_TOL = 1e-12
#: Accepted gap between the 4th wanted real part and everything outside (other Ritz values, and
#: the smallest Ritz modulus of the block, which bounds the eigenvalues the block did not capture).
EIG_GAP_MIN = 1e-3


def _real_span(V: "np.ndarray") -> "np.ndarray":
    """Orthonormal real basis (N, 4) of the span of complex vectors V (N, 4) taken with their
    conjugates: [Re V, Im V] spans the real invariant subspace."""
    import numpy as np

    W = np.concatenate([V.real, V.imag], 1)  # (N, 8)
    U, _, _ = np.linalg.svd(W, full_matrices=False)
    return U[:, :4]


def subspace_top4(A, block: int = SUBSPACE_BLOCK, max_iters: int = SUBSPACE_MAX_ITERS, seed: int = 0):
    """Sparse path: block subspace iteration with Rayleigh-Ritz for the 4 eigenvalues of largest
    real part of a (sparse) real matrix A (N, N). Returns (U (N, 4) orthonormal, certified: bool,
    info dict with the residual, the gap and the iterations).

    A block of `block` >= 4 random vectors spans every vector of a multiple eigenvalue, which a
    single-vector Krylov method (ARPACK) cannot guarantee. The result is certified when the
    eigen-residual of U is below EIG_RESIDUAL_TOL and the wanted real parts exceed, by EIG_GAP_MIN,
    the other Ritz values and the smallest Ritz modulus of the block.
    """
    import numpy as np

    if not isinstance(block, int) or block < 4:
        raise ValueError(f"block must be an int >= 4 (the wanted eigenspace has dimension 4), got {block!r}")
    N = A.shape[0]
    p = min(block, N)
    normA = float(np.sqrt(A.multiply(A).sum())) if hasattr(A, "multiply") else float(np.linalg.norm(A))
    Q = np.linalg.qr(np.random.default_rng(seed).standard_normal((N, p)))[0]  # (N, p)
    info = {"residual": float("inf"), "gap": float("-inf"), "iters": 0}
    U = Q[:, :4]
    for it in range(1, max_iters + 1):
        # region: subspace step
        Q = np.linalg.qr(A @ Q)[0]  # (N, p): one multiplication, re-orthonormalised
        if it % SUBSPACE_CHECK_EVERY and it != max_iters:
            continue
        H = Q.T @ (A @ Q)  # (p, p) Rayleigh quotient
        theta, Y = np.linalg.eig(H)
        order = np.argsort(-theta.real)
        U = _real_span(Q @ Y[:, order[:4]])  # (N, 4)
        resid = np.linalg.norm(A @ U - U @ (U.T @ (A @ U))) / normA
        # endregion
        outside = max(theta.real[order[4:]].max(initial=-np.inf), np.abs(theta).min())
        info = {"residual": float(resid), "gap": float(theta.real[order[3]] - outside), "iters": it}
        if resid < EIG_RESIDUAL_TOL:
            break
    certified = info["residual"] < EIG_RESIDUAL_TOL and info["gap"] > EIG_GAP_MIN
    return U, certified, info


def _top4_eigenspace(A: Tensor, solver: str) -> Tensor:
    """Real orthonormal basis (N, 4) of the invariant subspace of the 4 eigenvalues of A
    with the largest real part. Complex pairs are handled by spanning [Re V, Im V].

    "dense": torch.linalg.eig. "sparse": block subspace iteration on the sparse matrix
    (`subspace_top4`), falling back to the dense solver when its residual/gap check fails."""
    if solver == "sparse":
        from scipy.sparse import csr_matrix

        U_np, certified, _ = subspace_top4(csr_matrix(A.detach().cpu().numpy()))
        if certified:
            return torch.from_numpy(U_np).to(device=A.device, dtype=A.dtype)
    vals, vecs = torch.linalg.eig(A)  # general (non-symmetric) eigensolver
    idx = vals.real.argsort(descending=True)[:4]
    V = vecs[:, idx]  # (N, 4) complex
    W = torch.cat([V.real, V.imag], 1).to(A.dtype)  # (N, 8) spans the real invariant subspace
    U, _, _ = torch.linalg.svd(W, full_matrices=False)
    return U[:, :4]  # (N, 4)


def eig_se3(graph: PoseGraph, solver: str = "auto", self_loops: bool = True, rounding: str = "least_squares",
            fix_reflection: bool = True) -> tuple[Tensor, Tensor]:
    """EIG-SE(3) with its rounding. Returns (R (n, 3, 3), t (n, 3)).

    solver: "dense" (torch.linalg.eig, any device), "sparse" (block subspace iteration on the
    sparse matrix, CPU, certified by its eigen-residual and eigenvalue gap, else dense) or
    "auto" (dense up to 4n = 1200, sparse above). self_loops: X_ii = I_4 and D = deg + 1
    (default), or X_ii = 0 and D = deg.

    rounding (how the 4x4 mixing of the eigenvectors is fixed): "least_squares" (the compared
    baseline: bottom rows ~ [0 0 0 1] for all blocks, steps (1)-(3) above) or "anchor" (the
    cruder gauge fix U <- U U_1^{-1}, node 0's block becomes I_4). fix_reflection=False skips
    the orientation choice of the least-squares null vectors (evidence only: without it the
    3x3 blocks are R_i K with det K < 0 about half the time, and the SVD projection fails).
    """
    if solver not in ("auto", "dense", "sparse"):
        raise ValueError(f"unknown solver {solver!r}; valid: 'auto', 'dense', 'sparse'")
    if rounding not in ("least_squares", "anchor"):
        raise ValueError(f"unknown rounding {rounding!r}; valid: 'least_squares', 'anchor'")
    n = graph.n
    if solver == "auto":
        solver = "dense" if 4 * n <= 1200 else "sparse"
    X, deg = se3_block_matrix(graph, self_loops)
    A = X / deg.repeat_interleave(4)[:, None]  # D^{-1} X
    U = _top4_eigenspace(A, solver).reshape(n, 4, 4)  # (n nodes, 4 rows, 4 cols)
    if rounding == "anchor":
        M = U @ torch.linalg.inv(U[0])  # (n, 4, 4), block 0 = I_4: every block ~ T_i T_0^{-1}
        M = M / M[:, 3:4, 3:4]
        return project_so3(M[:, :3, :3]), M[:, :3, 3]
    # region: rounding
    # (1) choose Q with B Q ~ [0 0 0 1] for the bottom rows B (n, 4).
    # B has rank 1 (only the eigenvalue-1 vector reaches the bottom rows):
    # its 3 null directions give the rotation columns, and B q = 1 has a
    # family of exact solutions. The minimum-norm one, along B's one
    # direction, does not depend on the basis the eigensolver returned.
    B = U[:, 3, :]  # (n, 4)
    left, sing, Vh = torch.linalg.svd(B, full_matrices=True)
    null = Vh[1:].T  # (4, 3): the 3 smallest singular directions
    q4 = Vh[:1].T * (left[:, 0].sum() / sing[0])  # (4, 1)
    Q = torch.cat([null, q4], 1)  # (4, 4)
    M = U @ Q  # (n, 4, 4), each block ~ T_i G
    # a reflection in the mixing makes every 3x3 block improper:
    # flip one null vector
    if fix_reflection and float(torch.det(M[:, :3, :3]).median()) < 0:
        Q = torch.cat([-null[:, :1], null[:, 1:], q4], 1)
        M = U @ Q
    # (2) divide each block by its (4,4) entry,
    # (3) project onto SO(3) and read the translation.
    M = M / M[:, 3:4, 3:4]
    R = project_so3(M[:, :3, :3])
    t = M[:, :3, 3]
    # endregion
    return R, t


def eig_se3_dq(graph: PoseGraph, solver: str = "auto") -> Tensor:
    """EIG-SE(3) estimate as UDQs (n, 2, 4), for code that scores DQ vectors."""
    R, t = eig_se3(graph, solver)
    return dq_from_rt(R, t)


def dq_spectral(graph: PoseGraph, iters: int = 300, tol: float = 1e-10, seed: int = 0) -> Tensor:
    """The DQ spectral estimate without refinement (stage 1 alone), (n, 2, 4)."""
    x0, _ = spectral_initializer(graph, iters, tol, torch.Generator().manual_seed(int(seed)))
    return x0


def _directed(graph: PoseGraph) -> tuple[Tensor, Tensor, Tensor]:
    """Both orientations of every edge: rows i, cols j (2m,) and C_ij (2m, 2, 4), C_ji = C_ij^*."""
    i, j = graph.edges[:, 0], graph.edges[:, 1]
    C = torch.cat([graph.measurements, dq_conj(graph.measurements)])  # (2m, 2, 4)
    return torch.cat([i, j]), torch.cat([j, i]), C


def _solve(A: Tensor, b: Tensor, hermitian: bool = False) -> Tensor:
    """x = A^+ b; the pseudo-inverse handles the exact gauge null space of noiseless data."""
    return torch.linalg.pinv(A, hermitian=hermitian) @ b


def ls_translations(graph: PoseGraph) -> Tensor:
    """Least-squares (= ML under our noise model) translations (n, 3) given the measured
    relative rotations: argmin_t sum_(i,j) ||t_i - R_ij t_j - t_ij||^2.

    Normal equations N t = b with the 3n x 3n block matrix N_ii = deg_i I, N_ij = -R_ij,
    N_ji = -R_ij^T, and b_i += t_ij, b_j -= R_ij^T t_ij. Noiseless data leave the gauge
    t_i -> t_i + R_i u free; the pseudo-inverse then returns one solution of the family.
    """
    n, (i, j) = graph.n, graph.edges.T
    Rm, tm = dq_to_rt(graph.measurements)  # (m, 3, 3), (m, 3)
    dtype, dev = Rm.dtype, Rm.device
    blocks = torch.zeros(n, n, 3, 3, dtype=dtype, device=dev)
    blocks[torch.arange(n), torch.arange(n)] = graph.degrees().to(dtype)[:, None, None] * torch.eye(3, dtype=dtype, device=dev)
    blocks[i, j] = -Rm
    blocks[j, i] = -Rm.transpose(-1, -2)
    N = blocks.permute(0, 2, 1, 3).reshape(3 * n, 3 * n)  # (3n, 3n)
    b = torch.zeros(n, 3, dtype=dtype, device=dev)
    b.index_add_(0, i, tm)
    b.index_add_(0, j, -(Rm.transpose(-1, -2) @ tm[..., None])[..., 0])
    return _solve(N, b.reshape(-1, 1), hermitian=True).reshape(n, 3)


def chordal_cost(graph: PoseGraph, R: Tensor) -> float:
    """The chordal least-squares cost sum_(i,j) ||R_i - R_ij R_j||_F^2 of rotations R (n, 3, 3)."""
    if not isinstance(R, torch.Tensor) or tuple(R.shape) != (graph.n, 3, 3):
        raise ValueError(f"R must have shape ({graph.n}, 3, 3), got {tuple(getattr(R, 'shape', ()))}")
    i, j = graph.edges[:, 0], graph.edges[:, 1]
    Rm, _ = dq_to_rt(graph.measurements)  # (m, 3, 3)
    return float(((R[i] - Rm @ R[j]) ** 2).sum())


def chordal_rotations(graph: PoseGraph, R0: Tensor, iters: int = 200, tol: float = 1e-12) -> Tensor:
    """Chordal least-squares rotations (n, 3, 3): R_i <- proj_SO3(sum_j R_ij R_j) from R0
    (the SO(3) generalized power method) until the largest change is below `tol`."""
    if not isinstance(R0, torch.Tensor) or tuple(R0.shape) != (graph.n, 3, 3):
        raise ValueError(f"R0 must have shape ({graph.n}, 3, 3), got {tuple(getattr(R0, 'shape', ()))}")
    if not isinstance(iters, int) or iters < 1:
        raise ValueError(f"iters must be a positive integer, got {iters!r}")
    rows, cols, C = _directed(graph)
    Rm, _ = dq_to_rt(C)  # (2m, 3, 3)
    R = R0
    for _ in range(iters):
        S = torch.zeros_like(R).index_add_(0, rows, Rm @ R[cols])  # (n, 3, 3)
        R_new = project_so3(S)
        change = float((R_new - R).abs().max())
        R = R_new
        if change < tol:
            break
    return R


def dq_translation_fixed_point(graph: PoseGraph, x: Tensor, rotation_weights: bool = True,
                               coupling: bool = True) -> Tensor:
    """Translations (n, 3) at which DQGPM's update is stationary when the rotations are frozen
    at those of the UDQ vector x (n, 2, 4).

    The update x_i <- P(x_i + sum_j C_ij x_j) sums the UDQs p_j = C_ij x_j, each one neighbour's
    prediction of pose i: rotation q_j = quat(R_ij R_j), translation tau_j = t_ij + R_ij t_j.
    With r_j = q_j s_i^* = (w_j, v_j) (its rotation relative to the estimate s_i), the
    translation read off the projected sum is
        t_i = sum_j (w_j tau_j + tau_j x v_j) / sum_j w_j
    (the self term x_i has r = 1 and cancels at a fixed point). `rotation_weights=False` sets
    w_j = 1, `coupling=False` drops tau_j x v_j; with both off the fixed point is
    `ls_translations`, with both on it is DQGPM's own. The map is affine in t, so the fixed
    point solves a 3n x 3n linear system.
    """
    if not isinstance(x, torch.Tensor) or tuple(x.shape) != (graph.n, 2, 4):
        raise ValueError(f"x must be a DQ vector of shape ({graph.n}, 2, 4), got {tuple(getattr(x, 'shape', ()))}")
    n = graph.n
    rows, cols, C = _directed(graph)
    Rm, tm = dq_to_rt(C)  # (2m, 3, 3), (2m, 3)
    q = dq_mul(C, x[cols])[:, 0]  # (2m, 4) rotation of each prediction
    r = quat_mul(q, quat_conj(x[rows, 0]))  # (2m, 4) relative to the current estimate (signs as in the DQ sum)
    w = r[:, 0] if rotation_weights else torch.ones_like(r[:, 0])
    v = r[:, 1:] if coupling else torch.zeros_like(r[:, 1:])
    W = torch.zeros(n, dtype=r.dtype, device=r.device).index_add_(0, rows, w)  # (n,)
    vx = torch.zeros(v.shape[0], 3, 3, dtype=v.dtype, device=v.device)  # [v]_x, so tau x v = -[v]_x tau
    vx[:, 0, 1], vx[:, 0, 2], vx[:, 1, 2] = -v[:, 2], v[:, 1], -v[:, 0]
    vx = vx - vx.transpose(-1, -2)
    K = (w[:, None, None] * torch.eye(3, dtype=r.dtype, device=r.device) - vx) / W[rows, None, None]  # (2m, 3, 3)
    blocks = torch.zeros(n, n, 3, 3, dtype=r.dtype, device=r.device)
    blocks.index_put_((rows, cols), -(K @ Rm), accumulate=True)
    A = blocks.permute(0, 2, 1, 3).reshape(3 * n, 3 * n) + torch.eye(3 * n, dtype=r.dtype, device=r.device)
    b = torch.zeros(n, 3, dtype=r.dtype, device=r.device).index_add_(0, rows, (K @ tm[..., None])[..., 0])
    return _solve(A, b.reshape(-1, 1)).reshape(n, 3)


__all__ = ["chordal_cost", "chordal_rotations", "dq_spectral", "dq_translation_fixed_point", "eig_se3", "eig_se3_dq",
           "ls_translations", "se3_block_matrix"]
