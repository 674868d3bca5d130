"""Baselines: the matrix spectral method EIG-SE(3) and the DQ spectral estimate alone.

EIG-SE(3) (Arrigoni, Rossi & Fusiello 2016, "Spectral synchronization of multiple views
in SE(3)", SIAM J. Imaging Sci.): stack the 4x4 relative poses T_ij = T_i T_j^{-1} into
X in R^{4n x 4n} (X_ii = I_4, zero off the graph) and D = (deg + 1) kron I_4. Then
X M = D M for M = [T_1; ...; T_n], so the columns of M span the eigenspace of D^{-1} X
for its largest eigenvalue 1. With noise, take the 4 eigenvectors of largest real part
and *round*: (1) fix the 4x4 mixing by making the bottom row of every block ~ [0 0 0 1]
(least squares), (2) divide each block by its (4,4) entry, (3) project the 3x3 part onto
SO(3) by SVD and read off the translation. That multi-step rounding is what the paper
contrasts with the one-line UDQ normalisation.
"""

from __future__ import annotations

import torch

from .algebra import dq_from_rt, dq_to_matrix, project_so3
from .data import PoseGraph
from .sync import spectral_initializer

Tensor = torch.Tensor


def se3_block_matrix(graph: PoseGraph) -> tuple[Tensor, Tensor]:
    """X (4n, 4n) with blocks T_ij, T_ji = T_ij^{-1}, X_ii = I; and the degrees+1 (n,)."""
    n, (i, j) = graph.n, graph.edges.T
    T = dq_to_matrix(graph.measurements)  # (m, 4, 4)
    T_inv = torch.linalg.inv(T)
    dtype, dev = T.dtype, T.device
    blocks = torch.zeros(n, n, 4, 4, dtype=dtype, device=dev)
    blocks[torch.arange(n), torch.arange(n)] = torch.eye(4, dtype=dtype, device=dev)
    blocks[i, j] = T
    blocks[j, i] = T_inv
    X = blocks.permute(0, 2, 1, 3).reshape(4 * n, 4 * n)  # (4n, 4n) block matrix
    deg = graph.degrees().to(dtype) + 1.0  # (n,) counting the self-loop
    return X, deg


def _top4_eigenspace(A: Tensor, solver: str) -> Tensor:
    """Real orthonormal basis (N, 4) of the invariant subspace of the 4 eigenvalues of A
    with the largest real part. Complex pairs are handled by spanning [Re V, Im V]."""
    if solver == "dense":
        vals, vecs = torch.linalg.eig(A)  # general (non-symmetric) eigensolver
        idx = vals.real.argsort(descending=True)[:4]
        V = vecs[:, idx]  # (N, 4) complex
    else:  # "sparse": ARPACK on the CPU, as Arrigoni et al. do for large graphs
        from scipy.sparse import csr_matrix
        from scipy.sparse.linalg import eigs

        A_np = csr_matrix(A.detach().cpu().numpy())
        _, vecs_np = eigs(A_np, k=4, which="LR", tol=1e-10)
        V = torch.from_numpy(vecs_np).to(A.device)
    W = torch.cat([V.real, V.imag], 1).to(A.dtype)  # (N, 8) spans the real invariant subspace
    U, _, _ = torch.linalg.svd(W, full_matrices=False)
    return U[:, :4]  # (N, 4)


def eig_se3(graph: PoseGraph, solver: str = "auto") -> tuple[Tensor, Tensor]:
    """EIG-SE(3) with its rounding. Returns (R (n, 3, 3), t (n, 3)).

    solver: "dense" (torch.linalg.eig, any device), "sparse" (scipy ARPACK `eigs`, CPU) or
    "auto" (dense up to 4n = 1200, sparse above).
    """
    if solver not in ("auto", "dense", "sparse"):
        raise ValueError(f"unknown solver {solver!r}; valid: 'auto', 'dense', 'sparse'")
    n = graph.n
    if solver == "auto":
        solver = "dense" if 4 * n <= 1200 else "sparse"
    X, deg = se3_block_matrix(graph)
    A = X / deg.repeat_interleave(4)[:, None]  # D^{-1} X
    U = _top4_eigenspace(A, solver).reshape(n, 4, 4)  # (n nodes, 4 rows, 4 cols)
    # (1) choose Q with B Q ~ [0 0 0 1] for the bottom rows B (n, 4) of all blocks.
    B = U[:, 3, :]  # (n, 4)
    _, _, Vh = torch.linalg.svd(B, full_matrices=True)
    null = Vh[1:].T  # (4, 3): right singular vectors of the 3 smallest singular values
    q4 = torch.linalg.lstsq(B, torch.ones(n, 1, dtype=B.dtype, device=B.device)).solution  # (4, 1)
    Q = torch.cat([null, q4], 1)  # (4, 4)
    M = U @ Q  # (n, 4, 4), each block ~ T_i G
    # a reflection in the mixing would make every 3x3 block improper: flip one null vector
    if float(torch.det(M[:, :3, :3]).median()) < 0:
        Q = torch.cat([-null[:, :1], null[:, 1:], q4], 1)
        M = U @ Q
    # (2) normalise each block by its (4,4) entry, (3) project onto SO(3), read translation.
    M = M / M[:, 3:4, 3:4]
    R = project_so3(M[:, :3, :3])
    t = M[:, :3, 3]
    return R, t


def eig_se3_dq(graph: PoseGraph, solver: str = "auto") -> Tensor:
    """EIG-SE(3) estimate as UDQs (n, 2, 4), for code that scores DQ vectors."""
    R, t = eig_se3(graph, solver)
    return dq_from_rt(R, t)


def dq_spectral(graph: PoseGraph, iters: int = 300, tol: float = 1e-10, seed: int = 0) -> Tensor:
    """The DQ spectral estimate without refinement (stage 1 alone), (n, 2, 4)."""
    x0, _ = spectral_initializer(graph, iters, tol, torch.Generator().manual_seed(int(seed)))
    return x0


__all__ = ["dq_spectral", "eig_se3", "eig_se3_dq", "se3_block_matrix"]
