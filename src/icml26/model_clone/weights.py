"""Weight level: alignment-free statistics of the parameters, paired by graph order.

Each parameter tensor W_v (a 'slot' of the normalised graph) gets a descriptor that does not
depend on the order of its entries (our reconstruction; the paper's exact statistics are not
known to us):
- moments of W_v / rms(W_v): mean, std, skewness, kurtosis; the sparsity |w| < 1e-8;
- the normalised quantile function Q_v(u) on a grid of u;
- the normalised spectrum sigma_i(W_v) / ||W_v||_F of the 2-D reshape (out, rest), top k.
Slots are paired by graph order within each (op, role) group (the i-th linear weight with the
i-th linear weight), never by matching neurons. The node distance is
    d_v = min(1, W_1(W_v / rms, W_v' / rms') + || s_v - s_v' ||_1),
where W_1 is scipy's 1-D Wasserstein distance between the value distributions, computed on the
entries that survive the larger of the two sparsities (so a magnitude-pruned copy is compared
on the weights pruning kept). Unpaired slots cost d = 1, and a paired slot never costs more
than an unpaired one (the cap at 1): without it, two tensors of different shapes (a replaced
classifier head, 10 x 64 against 2 x 64) had zero-padded spectra of different rank whose L1
distance (~2.3) made pairing them cost more than not pairing them at all. The model score is
    S_W = exp(-d_bar / tau),   d_bar = sum_v n_v d_v / sum_v n_v   (n_v: parameter count).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from scipy.stats import wasserstein_distance

from .graph import NormalisedGraph

UNPAIRED_COST = 1.0
SPARSE_EPS = 1e-8


@dataclass(frozen=True)
class TensorDescriptor:
    """Permutation-invariant summary of one parameter tensor (see module docstring)."""

    group: str  # op (without shape bucket) + role, e.g. 'linear/weight'
    numel: int
    values_by_magnitude: np.ndarray  # entries sorted by decreasing |w| (for the truncated W_1)
    sorted_normalised: np.ndarray  # sorted entries of W / rms(W) (the untruncated case)
    sparsity: float
    moments: np.ndarray  # (4,) mean, std, skewness, kurtosis of W / rms
    quantiles: np.ndarray  # (n_q,) quantile function of W / rms
    spectrum: np.ndarray  # (k,) sigma_i / ||W||_F, zero-padded


def _rms(x: torch.Tensor) -> torch.Tensor:
    return x.pow(2).mean().sqrt().clamp_min(1e-12)


def describe_tensor(w: torch.Tensor, group: str, k: int = 8,
                    n_quantiles: int = 99) -> TensorDescriptor:
    """The alignment-free descriptor of one tensor (computed on its device,
    returned as numpy)."""
    w = w.detach().float()
    flat = w.flatten()  # (numel,)
    z = flat / _rms(flat)
    mu, sd = z.mean(), z.std(unbiased=False).clamp_min(1e-12)
    c = (z - mu) / sd
    moments = torch.stack([mu, sd, c.pow(3).mean(), c.pow(4).mean()])
    u = torch.linspace(0.01, 0.99, n_quantiles, device=w.device)
    quantiles = torch.quantile(z, u)
    spectrum = torch.zeros(k, device=w.device)
    if w.dim() >= 2:
        # (out, in * kernel...) : rows are output units
        mat = w.reshape(w.shape[0], -1)
        sv = torch.linalg.svdvals(mat) / mat.norm().clamp_min(1e-12)
        spectrum[: min(k, sv.numel())] = sv[:k]
    order = torch.argsort(flat.abs(), descending=True, stable=True)
    return TensorDescriptor(group, flat.numel(),
                            flat[order].cpu().numpy().astype(np.float64),
                            np.sort(z.cpu().numpy().astype(np.float64)),
                            float((flat.abs() < SPARSE_EPS).float().mean()),
                            moments.cpu().numpy(),
                            quantiles.cpu().numpy(), spectrum.cpu().numpy())


def describe_model(ng: NormalisedGraph, k: int = 8) -> list[TensorDescriptor]:
    """Descriptors of every parameter slot of a normalised graph, in graph order."""
    return [describe_tensor(t, f"{label.split('/')[0]}/{role}", k) for label, role, _, t in ng.slots]


def truncated_wasserstein(a: TensorDescriptor, b: TensorDescriptor) -> float:
    """W_1 between the rms-normalised value distributions of the entries that
    survive the larger sparsity of the two (the top (1 - rho) fraction by
    magnitude in each tensor)."""
    rho = max(a.sparsity, b.sparsity)
    na, nb = (max(1, int(round((1 - rho) * a.numel))),
              max(1, int(round((1 - rho) * b.numel))))
    if na == a.numel and nb == b.numel:
        # nothing truncated: reuse sorted values
        va, vb = a.sorted_normalised, b.sorted_normalised
    else:
        va, vb = (np.sort(v[:n] / max(np.sqrt(np.mean(v[:n] ** 2)), 1e-12))
                  for v, n in ((a.values_by_magnitude, na),
                               (b.values_by_magnitude, nb)))
    # equal sizes: W_1 = mean |sorted a - sorted b| (as scipy computes it)
    if va.size == vb.size:
        return float(np.abs(va - vb).mean())
    return float(wasserstein_distance(va, vb))


def node_distance(a: TensorDescriptor, b: TensorDescriptor) -> float:
    """d_v = min(UNPAIRED_COST, W_1 (truncated, rms-normalised) + L1 distance
    of normalised spectra): a paired slot costs at most what an unpaired slot
    costs."""
    d = (truncated_wasserstein(a, b)
         + float(np.abs(a.spectrum - b.spectrum).sum()))
    return min(d, UNPAIRED_COST)


def pair_by_graph_order(da: list[TensorDescriptor], db: list[TensorDescriptor]):
    """Pair the i-th slot of each (op, role) group of one model with the i-th of the other.

    Returns (pairs, unpaired): index pairs, and the descriptors left over in either model."""
    groups: dict[str, tuple[list[int], list[int]]] = {}
    for i, d in enumerate(da):
        groups.setdefault(d.group, ([], []))[0].append(i)
    for j, d in enumerate(db):
        groups.setdefault(d.group, ([], []))[1].append(j)
    pairs, unpaired = [], []
    for ia, ib in groups.values():
        pairs += list(zip(ia, ib))
        unpaired += [da[i] for i in ia[len(ib):]] + [db[j] for j in ib[len(ia):]]
    return pairs, unpaired


def weight_distance(da: list[TensorDescriptor],
                    db: list[TensorDescriptor]) -> float:
    """d_bar: the parameter-count weighted mean node distance (unpaired slots
    cost 1)."""
    if not da or not db:
        raise ValueError("both models need at least one parameter tensor")
    pairs, unpaired = pair_by_graph_order(da, db)
    num = sum(0.5 * (da[i].numel + db[j].numel) * node_distance(da[i], db[j])
              for i, j in pairs)
    num += sum(d.numel * UNPAIRED_COST for d in unpaired)
    den = (sum(0.5 * (da[i].numel + db[j].numel) for i, j in pairs)
           + sum(d.numel for d in unpaired))
    return float(num / den)


def weight_similarity(da: list[TensorDescriptor], db: list[TensorDescriptor],
                      tau: float = 0.1) -> float:
    """S_W = exp(-d_bar / tau) in (0, 1]; 1 for identical descriptors;
    symmetric."""
    if tau <= 0:
        raise ValueError(f"tau must be positive, got {tau}")
    return float(math.exp(-weight_distance(da, db) / tau))
