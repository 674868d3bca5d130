"""HazardNav: a batched safe-navigation task in torch (our stand-in for Safety-Gymnasium's
PointGoal; the paper's benchmarks are not named in the abstract).

A point starts near (0, 0) and must reach the goal (1, 0) within `horizon` steps. A circular
hazard of radius `hazard_radius` sits at (0.5, 0), right on the straight line: the short path
crosses it (cost), the safe path goes around it (longer, so less reward). All environments
step together as one tensor operation, on any device.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

GOAL = (1.0, 0.0)
HAZARD_CENTER = (0.5, 0.0)
BOX = (-0.5, 1.5, -1.0, 1.0)  # x_min, x_max, y_min, y_max (walls: positions are clipped)


@dataclass
class HazardNav:
    """Batched point navigation with a hazard.

    Dynamics: p' = clip(p + step_size * clip(a, -1, 1)). Reward r_t = -||p_{t+1} - goal||
    (the episode return is minus the summed distance, so arriving sooner is better).
    Cost c_t = 1 when p_{t+1} lies strictly inside the hazard disc (Safety-Gymnasium
    convention: one unit per step in a hazard).
    """

    n_envs: int
    horizon: int = 20
    step_size: float = 0.1
    hazard_radius: float = 0.25
    start_jitter: float = 0.05
    device: torch.device | str = "cpu"

    def __post_init__(self) -> None:
        if self.n_envs < 1 or self.horizon < 1:
            raise ValueError(f"n_envs and horizon must be >= 1, got {self.n_envs}, {self.horizon}")
        if self.step_size <= 0 or self.hazard_radius <= 0:
            raise ValueError("step_size and hazard_radius must be positive")
        self.device = torch.device(self.device)
        self.goal = torch.tensor(GOAL, device=self.device)
        self.center = torch.tensor(HAZARD_CENTER, device=self.device)
        self.lo = torch.tensor(BOX[0::2], device=self.device)
        self.hi = torch.tensor(BOX[1::2], device=self.device)
        self.pos = torch.zeros(self.n_envs, 2, device=self.device)
        self.t = 0

    def reset(self, generator: torch.Generator | None = None) -> torch.Tensor:
        """Start positions (0, U(-j, j)); returns observations (n_envs, 2) = positions."""
        y = (torch.rand(self.n_envs, generator=generator, device="cpu") * 2 - 1) * self.start_jitter
        self.pos = torch.stack([torch.zeros_like(y), y], dim=1).to(self.device)
        self.t = 0
        return self.pos.clone()

    def reward_cost(self, next_pos: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """r = -||p' - goal||, c = 1[||p' - center|| < radius]; shapes (...,)."""
        r = -(next_pos - self.goal).norm(dim=-1)
        c = ((next_pos - self.center).norm(dim=-1) < self.hazard_radius).float()
        return r, c

    def step(self, action: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, bool]:
        """One step of every environment: returns (obs, reward, cost, done)."""
        if action.shape != self.pos.shape:
            raise ValueError(f"action must have shape {tuple(self.pos.shape)}, got {tuple(action.shape)}")
        if self.t >= self.horizon:
            raise RuntimeError("episode is over: call reset()")
        a = action.to(self.device).clamp(-1.0, 1.0)
        self.pos = torch.maximum(torch.minimum(self.pos + self.step_size * a, self.hi), self.lo)
        r, c = self.reward_cost(self.pos)
        self.t += 1
        return self.pos.clone(), r, c, self.t >= self.horizon


def rollout(env: HazardNav, act, generator: torch.Generator | None = None) -> dict[str, torch.Tensor]:
    """Run one batched episode with `act(obs, t) -> action (n_envs, 2)`.

    Returns obs (T+1, N, 2), actions (T, N, 2), rewards (T, N), costs (T, N) and the
    episode outcomes G^r, G^c (N,) (undiscounted sums, the quantities the tables report).
    """
    obs = [env.reset(generator)]
    acts, rews, costs = [], [], []
    done, t = False, 0
    while not done:
        a = act(obs[-1], t).clamp(-1.0, 1.0)
        o, r, c, done = env.step(a)
        obs.append(o), acts.append(a), rews.append(r), costs.append(c)
        t += 1
    out = {"obs": torch.stack(obs), "actions": torch.stack(acts), "rewards": torch.stack(rews),
           "costs": torch.stack(costs)}
    out["G_r"], out["G_c"] = out["rewards"].sum(0), out["costs"].sum(0)
    return out


def waypoint_explorer(env: HazardNav, generator: torch.Generator, noise: float = 0.3):
    """Exploration policy for the first data: each environment heads to its own random
    waypoint in [0.2, 0.8] x [-0.6, 0.6] and then to the goal, with Gaussian action noise,
    so the data holds paths through the hazard and around it on both sides."""
    n = env.n_envs
    wp = torch.rand(n, 2, generator=generator) * torch.tensor([0.6, 1.2]) + torch.tensor([0.2, -0.6])
    wp = wp.to(env.device)
    reached = torch.zeros(n, dtype=torch.bool, device=env.device)

    def act(obs: torch.Tensor, t: int) -> torch.Tensor:
        nonlocal reached
        reached = reached | ((obs - wp).norm(dim=-1) < 0.1)
        target = torch.where(reached[:, None], env.goal.expand_as(obs), wp)
        d = target - obs
        a = d / d.norm(dim=-1, keepdim=True).clamp_min(env.step_size)
        eps = torch.randn(obs.shape, generator=generator).to(env.device)
        return a + noise * eps

    return act
