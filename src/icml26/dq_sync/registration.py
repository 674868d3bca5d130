"""Multi-scan point-set registration demo on a generated shape (no download).

A swiss roll (scikit-learn's `make_swiss_roll`) is cut into overlapping patches
("scans") on a grid of its surface coordinates; scan k is stored in its own frame, p_k = g_k(p) + noise, where g_k is an unknown
world-to-scan pose. For overlapping scans i, j, Kabsch on a few noisy correspondences
gives the relative pose g_i g_j^{-1} (scan j's frame -> scan i's frame), which is exactly
the measurement C_ij ~ x_i x_j^* with x_k <-> g_k. Synchronizing recovers every g_k, and
the merged cloud is sum_k g_k^{-1}(p_k).

Kabsch output is a rotation matrix, so the quaternion sign of each C_ij is arbitrary; we
make the signs consistent before building C (`fix_quaternion_signs`, our choice).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from .algebra import (
    dq_conj, dq_from_quat_translation, dq_to_rt, project_so3, quat_mul, random_unit_quaternion,
    rotmat_to_quat,
)
from .data import PoseGraph

Tensor = torch.Tensor


def kabsch(P: Tensor, Q: Tensor, weights: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """Batched weighted Kabsch: (R, t) minimising sum_k w_k ||P_k - (R Q_k + t)||^2.

    P, Q: (..., K, 3) corresponding points; weights (..., K) (0 marks padding).
    Returns R (..., 3, 3), t (..., 3).
    """
    if P.shape != Q.shape or P.shape[-1] != 3:
        raise ValueError(f"P and Q must both be (..., K, 3), got {tuple(P.shape)} and {tuple(Q.shape)}")
    w = torch.ones(P.shape[:-1], dtype=P.dtype, device=P.device) if weights is None else weights.to(P.dtype)
    w = w / w.sum(-1, keepdim=True).clamp_min(1e-12)  # (..., K)
    mp = (w[..., None] * P).sum(-2)  # (..., 3) weighted centroids
    mq = (w[..., None] * Q).sum(-2)
    H = ((Q - mq[..., None, :]) * w[..., None]).transpose(-1, -2) @ (P - mp[..., None, :])  # (..., 3, 3)
    R = project_so3(H.transpose(-1, -2))  # argmax tr(R^T H^T): the SVD solution with det fix
    t = mp - (R @ mq[..., None])[..., 0]
    return R, t


def fix_quaternion_signs(n: int, edges: Tensor, q: Tensor) -> Tensor:
    """Flip the signs of edge quaternions q (m, 4) so that q_ij ~ +q_i q_j^* for one
    consistent choice of node quaternions q_i.

    q and -q are the same rotation, so Kabsch cannot tell them apart, but the DQ matrix is
    rank one only for sign-consistent entries (a hidden Z2 synchronization). We get
    reference node rotations from the sign-free SO(3) spectral method (top-3 eigenvectors of
    the symmetric 3n x 3n block matrix), then set sign(q_ij) = sign <q_ij, q_i q_j^*>.
    """
    i, j = edges[:, 0], edges[:, 1]
    Rij = dq_to_rt(torch.stack([q, torch.zeros_like(q)], -2))[0]  # (m, 3, 3)
    blocks = torch.zeros(n, n, 3, 3, dtype=q.dtype, device=q.device)
    blocks[torch.arange(n), torch.arange(n)] = torch.eye(3, dtype=q.dtype, device=q.device)
    blocks[i, j] = Rij
    blocks[j, i] = Rij.transpose(-1, -2)
    S = blocks.permute(0, 2, 1, 3).reshape(3 * n, 3 * n)  # symmetric (3n, 3n)
    _, vecs = torch.linalg.eigh(S)
    V = vecs[:, -3:].reshape(n, 3, 3) * np.sqrt(n)  # (n, 3, 3) ~ R_i A
    if float(torch.det(V).median()) < 0:
        V = V * V.new_tensor([-1.0, 1.0, 1.0])
    qn = rotmat_to_quat(project_so3(V))  # (n, 4) node references
    ref = quat_mul(qn[i], qn[j] * qn.new_tensor([1.0, -1.0, -1.0, -1.0]))  # q_i q_j^*
    sign = torch.where((q * ref).sum(-1) < 0, -1.0, 1.0).to(q.dtype)
    return q * sign[:, None]


@dataclass
class ScanSet:
    """Generated scans: all points in scan-local frames with their scan index and world index."""

    world: Tensor  # (N, 3) the true shape
    local: Tensor  # (P, 3) every scan's points in its own frame, concatenated
    scan_of: Tensor  # (P,) scan index of each local point
    point_of: Tensor  # (P,) index into `world` of each local point
    g_true: Tensor  # (K, 2, 4) world-to-scan poses
    graph: PoseGraph  # Kabsch measurements between overlapping scans


def make_scans(n_scans: int = 12, n_points: int = 3000, radius: float = 0.8, point_noise: float = 0.01,
               n_correspondences: int = 12, min_overlap: int = 30, seed: int = 0,
               device: str | torch.device = "cpu", dtype=torch.float64) -> ScanSet:
    """Cut a normalised swiss roll into `n_scans` posed, noisy, overlapping scans and
    measure pairwise poses by Kabsch on `n_correspondences` random shared points per pair.

    `radius` is the half-width of a scan window in grid cells (0.5: scans just touch).
    """
    from sklearn.datasets import make_swiss_roll

    if n_correspondences < 3:
        raise ValueError(f"Kabsch needs at least 3 correspondences, got {n_correspondences}")
    gen = torch.Generator().manual_seed(int(seed))
    pts, roll_t = make_swiss_roll(n_points, noise=0.0, random_state=seed)
    world = torch.as_tensor(pts, dtype=dtype)
    world = (world - world.mean(0)) / world.std(0).max()  # (N, 3), size ~ 1
    # scans are overlapping windows on a rows x cols grid of the surface's own coordinates
    # (position along the roll, height), so neighbouring scans share a strip of points
    uv = torch.stack([torch.as_tensor(roll_t), torch.as_tensor(pts[:, 1])], 1)  # (N, 2)
    uv = (uv - uv.min(0).values) / (uv.max(0).values - uv.min(0).values)  # in [0, 1]^2
    rows = max(1, int(round(math.sqrt(n_scans / 2))))
    cols = math.ceil(n_scans / rows)
    cell = torch.tensor([1.0 / cols, 1.0 / rows], dtype=uv.dtype)
    grid = torch.stack(torch.meshgrid(torch.arange(cols), torch.arange(rows), indexing="ij"), -1).reshape(-1, 2)
    centers = ((grid[:n_scans] + 0.5) * cell).to(uv.dtype)  # (K, 2)
    member = (((uv[None] - centers[:, None]).abs() / cell) < radius).all(-1)  # (K, N) bool
    overlap = member.double() @ member.double().T  # (K, K) shared point counts
    iu = torch.triu_indices(n_scans, n_scans, 1)
    keep = overlap[iu[0], iu[1]] >= min_overlap
    edges = iu[:, keep].T.contiguous()  # (m, 2)
    if edges.shape[0] == 0:
        raise ValueError("no two scans overlap; increase radius or decrease min_overlap")
    # world-to-scan poses and the scans in their frames
    g_true = dq_from_quat_translation(random_unit_quaternion((n_scans,), gen, dtype),
                                      torch.randn(n_scans, 3, generator=gen, dtype=dtype))  # (K, 2, 4)
    R, t = dq_to_rt(g_true)
    scan_of, point_of = member.nonzero(as_tuple=True)  # (P,), (P,)
    local = (R[scan_of] @ world[point_of][..., None])[..., 0] + t[scan_of]
    local = local + point_noise * torch.randn(local.shape, generator=gen, dtype=dtype)
    # Kabsch per edge on random shared points; padded batch (m, K, 3) with weights
    m, K = edges.shape[0], n_correspondences
    both = member[edges[:, 0]] & member[edges[:, 1]]  # (m, N)
    scores = torch.rand(both.shape, generator=gen) + both.double()  # shared points score > 1
    pick = scores.topk(K, dim=1).indices  # (m, K) world indices, shared ones first
    valid = torch.gather(both, 1, pick).double()  # (m, K)
    lookup = torch.full((n_scans, n_points), -1, dtype=torch.long)
    lookup[scan_of, point_of] = torch.arange(scan_of.shape[0])
    Pi = local[lookup[edges[:, 0, None], pick].clamp_min(0)]  # (m, K, 3) in scan i
    Pj = local[lookup[edges[:, 1, None], pick].clamp_min(0)]  # (m, K, 3) in scan j
    Rij, tij = kabsch(Pi, Pj, valid)  # scan j -> scan i
    qij = fix_quaternion_signs(n_scans, edges, rotmat_to_quat(Rij))
    C = dq_from_quat_translation(qij, tij)  # (m, 2, 4)
    device = torch.device(device)
    graph = PoseGraph(n_scans, edges.to(device), C.to(device))
    if not graph.is_connected():
        raise ValueError("the overlap graph of the scans is not connected; increase radius")
    return ScanSet(world.to(device), local.to(device), scan_of.to(device), point_of.to(device),
                   g_true.to(device), graph)


def merge_scans(scans: ScanSet, g_hat: Tensor) -> Tensor:
    """Merged cloud (P, 3): each scan mapped back by g_k^{-1}, then the whole estimate
    aligned to the truth by the one rigid transform that best fits the points (the gauge)."""
    if tuple(g_hat.shape) != tuple(scans.g_true.shape):
        raise ValueError(f"g_hat must have shape {tuple(scans.g_true.shape)}, got {tuple(g_hat.shape)}")
    R, t = dq_to_rt(dq_conj(g_hat))  # scan-to-world estimates
    merged = (R[scans.scan_of] @ scans.local[..., None])[..., 0] + t[scans.scan_of]
    Rg, tg = kabsch(scans.world[scans.point_of], merged)  # gauge: one global rigid motion
    return merged @ Rg.T + tg


def registration_rmse(scans: ScanSet, merged: Tensor) -> float:
    """Root-mean-square distance of merged points to their true positions."""
    return float((merged - scans.world[scans.point_of]).norm(dim=-1).pow(2).mean().sqrt())


__all__ = ["ScanSet", "fix_quaternion_signs", "kabsch", "make_scans", "merge_scans", "registration_rmse"]
