"""Pose graphs and the synthetic SE(3) synchronization benchmark.

Measurement model (our choice for the experiments, see the chapter's deviations): for an
edge (i, j) the measurement is the UDQ `C_ij = x_i * n_ij * x_j^*`, where `x_i` is the
ground-truth pose of node i and `n_ij` is the UDQ of a random pose with rotation
`exp(sigma_r * omega)` and translation `sigma_t * xi`, `omega, xi ~ N(0, I_3)`. Generating
the noise in DQ form keeps the quaternion signs consistent with `x_i x_j^*`. A fraction of
edges can be replaced by uniformly random poses (outliers).

`noise_model="additive"` (evidence only) is the other reading of the paper's
"C_ij = x_i x_j^* + Delta_ij with i.i.d. Hermitian DQ noise": Delta_ij has i.i.d. Gaussian
entries, standard part sd sigma_r / 2 and dual part sd sigma_t / 2 (so that, to first order,
the rotation noise is sigma_r per axis and the translation noise sigma_t per axis), and the
measurement is not a UDQ. Its translation errors are correlated with its rotation errors.

Random numbers are drawn on the CPU from an explicit `torch.Generator` and then moved to
the target device, so a seed gives the same problem on every device.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .algebra import dq_conj, dq_from_quat_translation, dq_mul, quat_exp, random_udq, random_unit_quaternion

Tensor = torch.Tensor


@dataclass
class PoseGraph:
    """A measurement graph: n nodes, edges (m, 2) and DQ measurements (m, 2, 4).

    `measurements[k]` is C_ij for `edges[k] = (i, j)`, an estimate of `x_i x_j^*` (the pose
    T_i T_j^{-1}). The reverse entry C_ji = C_ij^* is implied (Hermitian measurement matrix).
    """

    n: int
    edges: Tensor
    measurements: Tensor

    def __post_init__(self) -> None:
        if not isinstance(self.n, int) or self.n < 2:
            raise ValueError(f"a pose graph needs n >= 2 nodes, got {self.n!r}")
        if not isinstance(self.edges, torch.Tensor) or self.edges.dim() != 2 or self.edges.shape[1] != 2:
            raise ValueError(f"edges must be a (m, 2) integer tensor, got {getattr(self.edges, 'shape', self.edges)}")
        if self.edges.dtype not in (torch.int64, torch.int32):
            raise ValueError(f"edges must hold integers, got dtype {self.edges.dtype}")
        m = self.edges.shape[0]
        if m == 0:
            raise ValueError("a pose graph needs at least one edge")
        if tuple(self.measurements.shape) != (m, 2, 4):
            raise ValueError(f"measurements must have shape ({m}, 2, 4) to match edges, got {tuple(self.measurements.shape)}")
        if self.measurements.device != self.edges.device:
            raise ValueError("edges and measurements must be on the same device")
        if int(self.edges.min()) < 0 or int(self.edges.max()) >= self.n:
            raise ValueError(f"edge endpoints must lie in [0, {self.n - 1}]")
        if bool((self.edges[:, 0] == self.edges[:, 1]).any()):
            raise ValueError("self-loops are not allowed (C_ii = 1 is implied)")
        self.edges = self.edges.long()

    @property
    def num_edges(self) -> int:
        return int(self.edges.shape[0])

    @property
    def device(self) -> torch.device:
        return self.edges.device

    def degrees(self) -> Tensor:
        """Node degrees (n,) without the self-loop."""
        deg = torch.zeros(self.n, dtype=torch.long, device=self.device)
        ones = torch.ones(self.num_edges, dtype=torch.long, device=self.device)
        return deg.index_add(0, self.edges[:, 0], ones).index_add(0, self.edges[:, 1], ones)

    def is_connected(self) -> bool:
        """Whether the graph is connected (scipy's connected components on the CPU)."""
        import numpy as np
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        e = self.edges.cpu().numpy()
        adj = coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(self.n, self.n))
        return connected_components(adj, directed=False)[0] == 1


def erdos_renyi_edges(n: int, p: float, generator: torch.Generator | None = None) -> Tensor:
    """Edges (m, 2), i < j, of an Erdos-Renyi G(n, p) graph made connected.

    Connectivity: the union with a random spanning tree (node perm[k] attaches to a uniformly
    chosen earlier node perm[u], u < k), so every node is reachable whatever p is.
    """
    if not isinstance(n, int) or n < 2:
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"edge probability p must lie in [0, 1], got {p}")
    upper = torch.triu(torch.rand(n, n, generator=generator) < p, diagonal=1)  # (n, n) bool
    perm = torch.randperm(n, generator=generator)
    k = torch.arange(1, n)
    parent_pos = (torch.rand(n - 1, generator=generator) * k).long()  # uniform in [0, k)
    a, b = perm[1:], perm[parent_pos]
    upper[torch.minimum(a, b), torch.maximum(a, b)] = True
    return upper.nonzero()  # (m, 2) with i < j


def noise_udq(m: int, sigma_r: float, sigma_t: float, generator: torch.Generator | None = None,
              dtype=torch.float64) -> Tensor:
    """m noise poses as UDQs (m, 2, 4): rotation exp(sigma_r omega), translation sigma_t xi."""
    if sigma_r < 0 or sigma_t < 0:
        raise ValueError(f"noise levels must be non-negative, got sigma_r={sigma_r}, sigma_t={sigma_t}")
    omega = torch.randn(m, 3, generator=generator, dtype=dtype)
    xi = torch.randn(m, 3, generator=generator, dtype=dtype)
    return dq_from_quat_translation(quat_exp(sigma_r * omega), sigma_t * xi)


@dataclass
class SyntheticProblem:
    """A benchmark instance: the graph with its measurements and the ground truth (n, 2, 4)."""

    graph: PoseGraph
    x_true: Tensor
    sigma_r: float
    sigma_t: float
    trans_scale: float
    outlier_mask: Tensor


def make_synthetic_problem(
    n: int,
    edge_prob: float,
    sigma_r: float,
    sigma_t: float,
    trans_scale: float = 1.0,
    outlier_rate: float = 0.0,
    seed: int = 0,
    device: str | torch.device = "cpu",
    dtype=torch.float64,
    noise_model: str = "pose",
) -> SyntheticProblem:
    """Ground truth x (uniform rotations, t ~ N(0, s^2 I)), a connected ER graph and
    measurements C_ij = x_i n_ij x_j^* (`noise_model="pose"`) or C_ij = x_i x_j^* + Delta_ij
    (`"additive"`, see the module docstring); a fraction `outlier_rate` replaced by random poses."""
    if noise_model not in ("pose", "additive"):
        raise ValueError(f"unknown noise_model {noise_model!r}; valid: 'pose', 'additive'")
    if not 0.0 <= outlier_rate < 1.0:
        raise ValueError(f"outlier_rate must lie in [0, 1), got {outlier_rate}")
    if trans_scale < 0:
        raise ValueError(f"trans_scale must be non-negative, got {trans_scale}")
    gen = torch.Generator().manual_seed(int(seed))
    x_true = random_udq(n, trans_scale, gen, dtype)  # (n, 2, 4)
    edges = erdos_renyi_edges(n, edge_prob, gen)  # (m, 2)
    m = edges.shape[0]
    if noise_model == "pose":
        noise = noise_udq(m, sigma_r, sigma_t, gen, dtype)  # (m, 2, 4)
        C = dq_mul(dq_mul(x_true[edges[:, 0]], noise), dq_conj(x_true[edges[:, 1]]))  # (m, 2, 4)
    else:
        if sigma_r < 0 or sigma_t < 0:
            raise ValueError(f"noise levels must be non-negative, got sigma_r={sigma_r}, sigma_t={sigma_t}")
        delta = torch.randn(m, 2, 4, generator=gen, dtype=dtype)  # (m, [standard; dual], 4)
        delta = delta * torch.tensor([0.5 * sigma_r, 0.5 * sigma_t], dtype=dtype)[None, :, None]
        C = dq_mul(x_true[edges[:, 0]], dq_conj(x_true[edges[:, 1]])) + delta  # (m, 2, 4), not unit
    outliers = torch.rand(m, generator=gen) < outlier_rate  # (m,)
    if bool(outliers.any()):
        k = int(outliers.sum())
        qs = random_unit_quaternion((k,), gen, dtype)
        t = trans_scale * 2.0 * torch.randn(k, 3, generator=gen, dtype=dtype)
        C[outliers] = dq_from_quat_translation(qs, t)
    device = torch.device(device)
    graph = PoseGraph(n, edges.to(device), C.to(device))
    return SyntheticProblem(graph, x_true.to(device), float(sigma_r), float(sigma_t), float(trans_scale),
                            outliers.to(device))
