"""Normalisation and training windows (the diffusion policy's and the predictor's).

Convention (Chi et al.'s `oa_step_convention`, which STEP keeps): a sample at time t holds
the observations o_{t-T_o+1..t}, the action chunk a_{t-T_o+1 .. t-T_o+H} (so chunk index
T_o-1 is the action taken at t, and the executed slice is [T_o-1, T_o-1+n_a)), and for the
predictor the H_p actions executed just before t, a_{t-H_p..t-1}, set to zero (normalised)
before the episode start. Episode starts repeat the first observation/action and episode
ends repeat the last action (the goal).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .env import Demos


class LinearNormalizer:
    """Min-max ('limits') normalisation of the last dimension to [-1, 1], as in the paper's
    `LinearNormalizer`. Constant dimensions are only shifted (mapped to 0)."""

    def __init__(self, data: torch.Tensor):
        flat = data.reshape(-1, data.shape[-1])  # (N, D)
        lo, hi = flat.min(0).values, flat.max(0).values
        rng = hi - lo
        const = rng < 1e-4
        self.scale = torch.where(const, torch.ones_like(rng), 2.0 / rng.clamp_min(1e-4))
        self.offset = torch.where(const, -lo, -1.0 - lo * self.scale)

    def to(self, device) -> "LinearNormalizer":
        self.scale, self.offset = self.scale.to(device), self.offset.to(device)
        return self

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[-1] != self.scale.shape[0]:
            raise ValueError(f"last dimension must be {self.scale.shape[0]}, got {x.shape[-1]}")
        return x * self.scale + self.offset

    def unnormalize(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[-1] != self.scale.shape[0]:
            raise ValueError(f"last dimension must be {self.scale.shape[0]}, got {x.shape[-1]}")
        return (x - self.offset) / self.scale


@dataclass
class Windows:
    """Normalised training samples: obs (N, T_o, 6), action chunk (N, H, 2), prev_action (N, H_p, 2)."""

    obs: torch.Tensor
    action: torch.Tensor
    prev_action: torch.Tensor

    def __len__(self) -> int:
        return self.obs.shape[0]


def make_windows(demos: Demos, obs_norm: LinearNormalizer, act_norm: LinearNormalizer,
                 obs_horizon: int, pred_horizon: int, prev_horizon: int) -> Windows:
    """Every (episode, t < length) window, gathered with index tensors (no loop over samples)."""
    if min(obs_horizon, pred_horizon, prev_horizon) < 1:
        raise ValueError("obs_horizon, pred_horizon and prev_horizon must be >= 1")
    n, T = demos.actions.shape[:2]
    dev = demos.actions.device
    ep, t = torch.meshgrid(torch.arange(n, device=dev), torch.arange(T, device=dev), indexing="ij")
    keep = t < demos.lengths[:, None]
    ep, t = ep[keep], t[keep]  # (N,) valid (episode, time) pairs
    last = (demos.lengths[ep] - 1)[:, None]  # (N, 1)
    o_idx = (t[:, None] - obs_horizon + 1 + torch.arange(obs_horizon, device=dev)).clamp(min=0)  # (N, T_o)
    a_idx = t[:, None] - obs_horizon + 1 + torch.arange(pred_horizon, device=dev)  # (N, H)
    a_idx = torch.minimum(a_idx.clamp(min=0), last)
    p_idx = t[:, None] - prev_horizon + torch.arange(prev_horizon, device=dev)  # (N, H_p)
    obs = obs_norm.normalize(demos.obs[ep[:, None], o_idx])  # (N, T_o, 6)
    action = act_norm.normalize(demos.actions[ep[:, None], a_idx])  # (N, H, 2)
    prev = act_norm.normalize(demos.actions[ep[:, None], p_idx.clamp(min=0)])  # (N, H_p, 2)
    prev = torch.where((p_idx >= 0).unsqueeze(-1), prev, torch.zeros_like(prev))
    return Windows(obs, action, prev)
