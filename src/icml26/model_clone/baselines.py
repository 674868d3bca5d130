"""Baselines the chapter compares against.

B1 aligned weight similarity: cosine of the concatenated state-dict tensors matched by key
   (or, when the keys differ, by position if every shape agrees in order); 0 when nothing aligns.
B2 name/shape comparison: Jaccard index of the sets of 'key:shape' strings of two state dicts
   (a "text clone" view of the checkpoint).
B3 output behaviour (ModelDiff-like, needs forward access): cosine of the concatenated softmax
   outputs on shared probe inputs; 0 if the output shapes differ.
"""

from __future__ import annotations

import torch
from torch import nn


def _tensors(model: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().float() for k, v in model.state_dict().items() if v.is_floating_point()}


def aligned_cosine(m1: nn.Module, m2: nn.Module) -> float:
    """B1: cosine similarity of all weights aligned by state-dict key (or
    position)."""
    s1, s2 = _tensors(m1), _tensors(m2)
    if set(s1) == set(s2) and all(s1[k].shape == s2[k].shape for k in s1):
        keys = sorted(s1)
        a = torch.cat([s1[k].flatten() for k in keys])
        b = torch.cat([s2[k].flatten() for k in keys])
    elif len(s1) == len(s2) and all(x.shape == y.shape for x, y
                                    in zip(s1.values(), s2.values())):
        a = torch.cat([x.flatten() for x in s1.values()])
        b = torch.cat([y.flatten() for y in s2.values()])
    else:
        return 0.0
    return float(torch.nn.functional.cosine_similarity(a, b, dim=0)
                 .clamp(-1, 1))


def state_dict_jaccard(m1: nn.Module, m2: nn.Module) -> float:
    """B2: |A & B| / |A | B| over the 'key:shape' strings of the two state
    dicts."""
    a = {f"{k}:{tuple(v.shape)}" for k, v in m1.state_dict().items()}
    b = {f"{k}:{tuple(v.shape)}" for k, v in m2.state_dict().items()}
    return len(a & b) / max(len(a | b), 1)


@torch.no_grad()
def output_cosine(m1: nn.Module, m2: nn.Module, probes: torch.Tensor) -> float:
    """B3: cosine of the softmax outputs (flattened over probes) on the same probe inputs."""
    p1 = torch.softmax(m1.eval()(probes), -1)
    p2 = torch.softmax(m2.eval()(probes), -1)
    if p1.shape != p2.shape:
        return 0.0
    return float(torch.nn.functional.cosine_similarity(p1.flatten(), p2.flatten(), dim=0))
