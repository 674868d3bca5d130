"""The two tasks of the reduced plan, generated in code (no downloads).

T1 (discrete, MIPS-like): x_i in {0..9}, y_i = x_i + x_{i-1} with x_{-1} = 0.
T2 (continuous physics): x_i = x0 + v0 i + a i^2 / 2 with random (x0, v0, a) per sequence;
the target is the next position, y_i = x_{i+1} = 3 x_i - 3 x_{i-1} + x_{i-2} (i >= 2).

Every sequence starts with a BOS token of value 0 (position 0), so x_{-1} = 0 is a real
position the attention can route to. `mask` marks the positions where the target is defined.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .config import TASKS


@dataclass
class TaskData:
    x: torch.Tensor  # (B, N) inputs, N = seq_len + 1 (BOS first)
    y: torch.Tensor  # (B, N) targets
    mask: torch.Tensor  # (B, N) bool, where the target is defined
    discrete: bool  # integer targets (exact match) or real targets (MSE)
    name: str

    def batch(self, idx: torch.Tensor) -> "TaskData":
        return TaskData(self.x[idx], self.y[idx], self.mask[idx], self.discrete, self.name)

    def __len__(self) -> int:
        return self.x.shape[0]


def make_task(name: str, n_seqs: int, seq_len: int, generator: torch.Generator,
              device: torch.device | str = "cpu") -> TaskData:
    """`n_seqs` sequences of task `name` ('t1_sum' or 't2_physics'), created on `device`."""
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; valid tasks are {TASKS}")
    if n_seqs < 1 or seq_len < 4:
        raise ValueError(f"need n_seqs >= 1 and seq_len >= 4, got {n_seqs}, {seq_len}")
    N = seq_len + 1
    if name == "t1_sum":
        digits = torch.randint(0, 10, (n_seqs, seq_len), generator=generator).float()
        x = torch.cat([torch.zeros(n_seqs, 1), digits], 1)  # (B, N)
        y = x.clone()
        y[:, 1:] = x[:, 1:] + x[:, :-1]
        mask = torch.ones(n_seqs, N, dtype=torch.bool)
        mask[:, 0] = False
        discrete = True
    else:
        u = torch.rand(n_seqs, 3, generator=generator)
        x0, v0, a = 2 * u[:, 0:1] - 1, 2 * u[:, 1:2] - 1, 0.4 * u[:, 2:3] - 0.2  # (B, 1) each
        t = torch.arange(seq_len + 1, dtype=torch.float32)[None]  # (1, seq_len + 1)
        traj = x0 + v0 * t + 0.5 * a * t**2  # (B, seq_len + 1): x_0 .. x_seq_len
        x = torch.cat([torch.zeros(n_seqs, 1), traj[:, :-1]], 1)  # (B, N): BOS, x_0 .. x_{L-1}
        y = torch.cat([torch.zeros(n_seqs, 1), traj[:, 1:]], 1)  # (B, N): -, x_1 .. x_L
        mask = torch.zeros(n_seqs, N, dtype=torch.bool)
        mask[:, 3:] = True  # real index r = p - 1 >= 2
        discrete = False
    dev = torch.device(device)
    return TaskData(x.to(dev), y.to(dev), mask.to(dev), discrete, name)


def ground_truth_rule(name: str) -> str:
    """The reference program (for the reader only; never used in training or extraction)."""
    return {"t1_sum": "y[i] = x[i] + x[i-1]", "t2_physics": "y[i] = 3*x[i] - 3*x[i-1] + x[i-2]"}[name]
