"""Follow-the-Scout: a batched, deterministic two-agent Dec-POMDP built to expose the failure
mode the paper targets (summary, "Reduced-scale reproduction plan").

Two agents move on a W x H grid with 5 discrete moves. One of two goal sites (left or right
middle cell) is active per episode; only the scout (agent 0) observes which. Both observe their
own and the other's position and the normalised time. The team is rewarded when both stand on
the active site, with a small shaping penalty on the distance. The follower (agent 1) can only
infer the goal from the scout's motion.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

N_ACTIONS = 5  # stay, left, right, down, up
MOVES = ((0, 0), (-1, 0), (1, 0), (0, -1), (0, 1))
OBS_DIM = 7  # own (x, y), other (x, y), goal one-hot (scout only), t / T


@dataclass
class FollowTheScout:
    """Batched environment; state tensors have a leading batch dim `B` (all on `device`)."""

    n_envs: int
    width: int = 5
    height: int = 3
    episode_len: int = 10
    shaping: float = 0.05
    device: torch.device | str = "cpu"

    def __post_init__(self) -> None:
        if self.n_envs < 1:
            raise ValueError(f"n_envs must be >= 1, got {self.n_envs}")
        if self.width < 3 or self.width % 2 == 0 or self.height < 1:
            raise ValueError(f"need an odd width >= 3 and height >= 1, got {self.width}x{self.height}")
        self.device = torch.device(self.device)
        mid = self.height // 2
        self.sites = torch.tensor([[0, mid], [self.width - 1, mid]], device=self.device)  # (2 goals, xy)
        self.moves = torch.tensor(MOVES, device=self.device)  # (5, 2)
        self.n_agents = 2

    def reset(self, generator: torch.Generator) -> torch.Tensor:
        """New episodes: goal ~ U{0,1}; both agents start in the middle column, random rows.
        Returns observations (B, N=2, OBS_DIM)."""
        B = self.n_envs
        self.goal = torch.randint(0, 2, (B,), generator=generator).to(self.device)  # (B,)
        rows = torch.randint(0, self.height, (B, 2), generator=generator).to(self.device)  # (B, N)
        self.pos = torch.stack([torch.full_like(rows, self.width // 2), rows], dim=-1)  # (B, N, 2)
        self.t = 0
        return self.observe()

    def observe(self) -> torch.Tensor:
        """o^i = [own xy, other xy, 1[i=scout] * onehot(goal), t/T], coordinates scaled to [-1, 1]."""
        scale = torch.tensor([self.width - 1, max(self.height - 1, 1)], device=self.device, dtype=torch.float32)
        p = 2.0 * self.pos.float() / scale - 1.0  # (B, N, 2)
        other = p.flip(1)  # (B, N, 2): agent 0 sees agent 1 and vice versa
        goal = torch.nn.functional.one_hot(self.goal, 2).float()  # (B, 2)
        private = torch.stack([goal, torch.zeros_like(goal)], dim=1)  # (B, N, 2): scout only
        t = torch.full_like(p[..., :1], self.t / self.episode_len)  # (B, N, 1)
        return torch.cat([p, other, private, t], dim=-1)

    def on_goal(self) -> torch.Tensor:
        """(B, N) bool: agent stands on the active site."""
        site = self.sites[self.goal]  # (B, 2)
        return (self.pos == site[:, None]).all(-1)

    def step(self, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """actions (B, N) int in [0, 5). Returns (obs (B,N,D), reward (B,), done (B,) bool)."""
        if actions.shape != (self.n_envs, 2):
            raise ValueError(f"actions must have shape ({self.n_envs}, 2), got {tuple(actions.shape)}")
        if actions.dtype in (torch.float16, torch.float32, torch.float64) or actions.min() < 0 or actions.max() >= N_ACTIONS:
            raise ValueError(f"actions must be integers in [0, {N_ACTIONS})")
        hi = torch.tensor([self.width - 1, self.height - 1], device=self.device)
        self.pos = torch.minimum(torch.clamp(self.pos + self.moves[actions.long()], min=0), hi)
        self.t += 1
        site = self.sites[self.goal]  # (B, 2)
        dist = (self.pos - site[:, None]).abs().sum(-1).float()  # (B, N)
        reward = self.on_goal().all(-1).float() - self.shaping * dist.mean(-1)
        done = torch.full((self.n_envs,), self.t >= self.episode_len, device=self.device)
        return self.observe(), reward, done
