"""Seeding: the same seed gives the same numbers on every run of a chapter."""

from __future__ import annotations

import os
import random

import numpy as np
import torch


def seed_everything(seed: int) -> torch.Generator:
    """Seed Python, NumPy and torch (all devices); return a CPU generator seeded alike.

    Chapters pass the returned generator (or `np.random.default_rng(seed)`) to the code
    that draws random numbers, so results do not depend on call order elsewhere.
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    os.environ["PYTHONHASHSEED"] = str(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)
