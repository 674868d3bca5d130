"""The combined detector: S = lam S_G + (1 - lam) S_W, and its threshold calibrated on held-out
pairs (the decision rule 'clone iff S >= theta')."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from .graph import NormalisedGraph, cached_graph, wl_similarity
from .weights import TensorDescriptor, describe_model, weight_similarity


@dataclass
class ModelFingerprint:
    """What the detector keeps of a model M = (G, W): its normalised graph and the
    alignment-free descriptors of its parameters (in graph order)."""

    graph: NormalisedGraph
    descriptors: list[TensorDescriptor]


def fingerprint(model: nn.Module, example_inputs: tuple, cache: dict | None = None, k: int = 8,
                shape_buckets: bool = True) -> ModelFingerprint:
    """Export + normalise the model, then describe every parameter slot."""
    ng = cached_graph(model, example_inputs, cache, shape_buckets)
    return ModelFingerprint(ng, describe_model(ng, k))


def clone_scores(f1: ModelFingerprint, f2: ModelFingerprint,
                 lam: float = 0.5, tau: float = 0.1,
                 wl_iterations: int = 3) -> dict[str, float]:
    """S_G (normalised WL kernel), S_W (alignment-free weight score) and the
    combined S = lam S_G + (1 - lam) S_W. Symmetric in (f1, f2)."""
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must lie in [0, 1], got {lam}")
    sg = wl_similarity(f1.graph.graph, f2.graph.graph, wl_iterations)
    sw = weight_similarity(f1.descriptors, f2.descriptors, tau)
    return {"S_G": sg, "S_W": sw, "S": lam * sg + (1 - lam) * sw}


def model_similarity(m1: nn.Module, m2: nn.Module, example_inputs: tuple, lam: float = 0.5, tau: float = 0.1) -> dict:
    """Convenience: fingerprint two models and score them."""
    return clone_scores(fingerprint(m1, example_inputs), fingerprint(m2, example_inputs), lam, tau)


def calibrate_threshold(scores: np.ndarray, labels: np.ndarray) -> float:
    """theta maximising balanced accuracy of 'clone iff score >= theta' on
    calibration pairs (midpoints between consecutive distinct scores are the
    candidates)."""
    scores, labels = np.asarray(scores, float), np.asarray(labels, bool)
    if scores.shape != labels.shape or scores.ndim != 1:
        raise ValueError(f"scores and labels must be 1-D of equal length, got {scores.shape} and {labels.shape}")
    if labels.all() or (~labels).all():
        raise ValueError("calibration needs both clone and non-clone pairs")
    u = np.unique(scores)
    cands = np.concatenate([[u[0] - 1e-9], (u[:-1] + u[1:]) / 2,
                            [u[-1] + 1e-9]])
    bacc = [balanced_accuracy(scores >= t, labels) for t in cands]
    return float(cands[int(np.argmax(bacc))])


def balanced_accuracy(pred: np.ndarray, labels: np.ndarray) -> float:
    """Mean of the true-positive and true-negative rates."""
    pred, labels = np.asarray(pred, bool), np.asarray(labels, bool)
    return float(0.5 * (pred[labels].mean() + (~pred[~labels]).mean()))


def probe_inputs(n: int, device, generator: torch.Generator) -> torch.Tensor:
    """Uniform random 8x8 images for the behavioural baseline, shape (n, 1, 8, 8)."""
    return torch.rand((n, 1, 8, 8), generator=generator).to(device)
