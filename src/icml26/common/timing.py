"""A timer that measures honestly: wall time, CUDA synchronised, and peak memory."""

from __future__ import annotations

import resource
import sys
import time
from dataclasses import dataclass, field

import torch


@dataclass
class Timer:
    """Context manager: `with Timer(device) as t: ...`, then `t.seconds`, `t.peak_mb`.

    On CUDA the device is synchronised before reading the clock (kernels are async) and
    the peak is the allocator's maximum; on the CPU it is the process's peak resident size.
    """

    device: torch.device | str = "cpu"
    seconds: float = field(default=0.0, init=False)
    peak_mb: float = field(default=0.0, init=False)

    def __post_init__(self) -> None:
        self.device = torch.device(self.device)

    def _sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def __enter__(self) -> "Timer":
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(self.device)
        self._sync()
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self._sync()
        self.seconds = time.perf_counter() - self._start
        if self.device.type == "cuda":
            self.peak_mb = torch.cuda.max_memory_allocated(self.device) / 2**20
        else:
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            self.peak_mb = rss / 2**20 if sys.platform == "darwin" else rss / 2**10
