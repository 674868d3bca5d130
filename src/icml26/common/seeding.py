"""Seeding: the same seed gives the same numbers on every run of a chapter.

On CUDA, seeding alone does not make a run repeatable: cuBLAS picks reduction orders per
workspace and some kernels (atomics) are nondeterministic. `seed_everything` therefore also
switches on PyTorch's deterministic algorithms (warn-only: an op that has no deterministic
kernel warns instead of failing) and cuDNN's deterministic mode, and sets the cuBLAS workspace
(`CUBLAS_WORKSPACE_CONFIG=:4096:8`, which cuBLAS reads when it first starts, hence also at
import). `repeatability()` says what holds; the banner prints it.
"""

from __future__ import annotations

import os
import random

import numpy as np
import torch

#: The cuBLAS workspace setting that makes cuBLAS reductions repeatable (CUDA >= 10.2).
CUBLAS_WORKSPACE = ":4096:8"

# cuBLAS reads the variable once, when its first handle is made: set it before any CUDA work.
# It changes nothing on a machine without CUDA. A reader's own value is kept.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE)


def enable_cuda_determinism() -> None:
    """Deterministic algorithms (warn-only), cuDNN deterministic without autotuning, and the
    cuBLAS workspace. Called by `seed_everything` when CUDA is present."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE)
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def repeatability(device: torch.device | str) -> tuple[bool, str]:
    """(bit-repeatable?, why) for runs on `device` with the settings in force now.

    The CPU is repeatable (fixed kernels and thread count, see icml26.numerics). CUDA is
    repeatable when deterministic algorithms are on and cuBLAS has a fixed workspace; even then an
    op without a deterministic kernel only warns (warn-only), which the reason says. MPS offers no
    such switch.
    """
    device = torch.device(device)
    if device.type == "cpu":
        return True, "CPU kernels are deterministic"
    if device.type == "cuda":
        missing = []
        if not torch.are_deterministic_algorithms_enabled():
            missing.append("deterministic algorithms off")
        if os.environ.get("CUBLAS_WORKSPACE_CONFIG") not in (":4096:8", ":16:8"):
            missing.append("CUBLAS_WORKSPACE_CONFIG unset")
        if not torch.backends.cudnn.deterministic or torch.backends.cudnn.benchmark:
            missing.append("cuDNN autotuning on")
        if missing:
            return False, "; ".join(missing)
        return True, "deterministic algorithms (warn-only: an op without a deterministic kernel warns)"
    return False, f"{device.type} has no deterministic mode"


def seed_everything(seed: int, device: torch.device | str | None = None) -> torch.Generator:
    """Seed Python, NumPy and torch (all devices); return a CPU generator seeded alike.

    Chapters pass the returned generator (or `np.random.default_rng(seed)`) to the code
    that draws random numbers, so results do not depend on call order elsewhere.

    When `device` is a CUDA device, or is not given and CUDA is present, CUDA runs are made
    repeatable as far as PyTorch allows (`enable_cuda_determinism`). CPU-only machines are left
    exactly as before.
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    os.environ["PYTHONHASHSEED"] = str(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    on_cuda = torch.device(device).type == "cuda" if device is not None else torch.cuda.is_available()
    if on_cuda:
        enable_cuda_determinism()
    return torch.Generator().manual_seed(seed)
