"""Device resolution and the banner every chapter prints after its setup cell.

On an accelerator the banner also says whether the run is bit-repeatable (`seeding.repeatability`).
"""

from __future__ import annotations

import platform
import re

import torch

_DEVICE_PATTERN = re.compile(r"^(auto|cpu|mps|cuda(:\d+)?)$")
VALID_DEVICES = "'auto', 'cpu', 'cuda', 'cuda:N' (N a GPU index) or 'mps'"
#: The book's thread policy on the CPU: its models are small and run many tiny ops, for which one
#: thread is fastest on a shared 2-core machine (no oversubscription) and sums in one fixed order.
CPU_THREADS = 1


def resolve_device(name: str | torch.device = "auto", cpu_threads: int = CPU_THREADS) -> torch.device:
    """Turn a user's device name into a `torch.device`, refusing what cannot run here, and apply
    the thread policy: on the CPU, torch runs `cpu_threads` intra-op threads (the one place the
    book sets them; a chapter whose large matmuls gain from more passes its own count).

    `auto` picks CUDA when present, then Apple's MPS, then the CPU. An explicit
    accelerator that is absent is an error, never a silent fallback.
    """
    device = _resolve(name)
    if device.type == "cpu":
        if isinstance(cpu_threads, bool) or not isinstance(cpu_threads, int) or cpu_threads < 1:
            raise ValueError(f"cpu_threads must be a positive integer, got {cpu_threads!r}")
        torch.set_num_threads(cpu_threads)
    return device


def _resolve(name) -> torch.device:
    if isinstance(name, torch.device):
        name = str(name)
    if not isinstance(name, str) or not _DEVICE_PATTERN.match(name.strip().lower()):
        raise ValueError(f"unknown device {name!r}; use {VALID_DEVICES}")
    name = name.strip().lower()
    if name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if _mps_available():
            return torch.device("mps")
        return torch.device("cpu")
    if name.startswith("cuda"):
        if not torch.cuda.is_available():
            raise RuntimeError(
                f"device {name!r} was asked for but CUDA is not available on this machine "
                "(no GPU or a CPU-only torch build); use DEVICE='auto' or 'cpu'"
            )
        index = int(name.split(":")[1]) if ":" in name else 0
        if index >= torch.cuda.device_count():
            raise RuntimeError(
                f"device {name!r} was asked for but only {torch.cuda.device_count()} CUDA "
                f"device(s) exist (valid indices 0..{torch.cuda.device_count() - 1})"
            )
        return torch.device(name)
    if name == "mps" and not _mps_available():
        raise RuntimeError("device 'mps' was asked for but Apple's MPS backend is not available")
    return torch.device(name)


def _mps_available() -> bool:
    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())


def device_banner(device: torch.device, preset: str, expected: str) -> str:
    """Two short lines: the device and torch version; the preset and its expected running time."""
    if device.type == "cuda":
        hardware = torch.cuda.get_device_name(device)
    elif device.type == "mps":
        hardware = "Apple GPU (MPS)"
    else:
        hardware = f"CPU ({platform.machine()}, {torch.get_num_threads()} threads)"
    line = f"device: {device} [{hardware}] | torch {torch.__version__}\npreset: {preset} | expected time: {expected}"
    if device.type == "cpu":
        return line
    from .seeding import repeatability

    repeatable, why = repeatability(device)
    return line + (f"\nbit-repeatable: yes, {why}" if repeatable else f"\nNOT bit-repeatable: {why}")
