"""The chapter's experiment behind its ledger (CONTRIBUTING.md, section 1): both parts, one call."""

from __future__ import annotations

import time

import torch

from icml26.common import resolve_device

from .config import W2SGConfig
from .digits import run_digits
from .synthetic import run_synthetic


def run_experiment(config: W2SGConfig, seed: int = 0, device=None) -> dict:
    """Part A (both Bregman losses, ``config.seeds`` synthetic tasks) and Part B (the digits
    temperature x loss sweep over ``config.seeds`` splits), as plain data.

    Every seed draws its own task or split, teacher and student initialisation, so the seeds are
    independently trained replicates (rule 1). Returns ``{"seeds", "part_a", "part_b", "seconds"}``:
    ``part_a`` rows from :func:`run_synthetic` (their ``seed`` is the seed's index ``0..S-1``),
    ``part_b`` rows from :func:`run_digits`, and the wall time of each part.
    """
    if not isinstance(config, W2SGConfig):
        raise TypeError(f"config must be a W2SGConfig (get_config(...)), got {type(config).__name__}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    device = resolve_device("auto") if device is None else torch.device(device)
    seeds = [seed + s for s in range(config.seeds)]
    start = time.perf_counter()
    part_a = run_synthetic(config, "squared", seed0=seed, device=device) + \
        run_synthetic(config, "kl", seed0=seed, device=device)
    mid = time.perf_counter()
    part_b = run_digits(config, seeds, device=device)
    end = time.perf_counter()
    return {"seeds": seeds, "part_a": part_a, "part_b": part_b,
            "seconds": {"part_a": mid - start, "part_b": end - mid}}
