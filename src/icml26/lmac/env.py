"""A batched "Overseer" gridworld, our small stand-in for the paper's motivating SMAC map.

Agent 0 (the *overseer*) stands still and is the only one that sees the target; agents
1..S (the *strikers*) see only their own cell and the walls next to them. Every agent also
receives `n_distract` noisy features that carry no information. The team is rewarded only
when all strikers stand on the target cell on the same step (then the episode ends), so the
strikers must learn where the target is from messages.
"""

from __future__ import annotations

import torch

ACTIONS = ("stay", "up", "down", "left", "right")
# (dx, dy) of each action; "up" increases y
_MOVES = ((0, 0), (0, 1), (0, -1), (-1, 0), (1, 0))


def observation_names(agent: int, n_distract: int) -> list[str]:
    """Named observation features of one agent (agent 0 is the overseer)."""
    names = ["self_x", "self_y", "wall_up", "wall_down", "wall_left", "wall_right"]
    if agent == 0:
        names += ["target_x", "target_y"]
    return names + [f"noise_{k}" for k in range(n_distract)]


def state_names(n_strikers: int) -> list[str]:
    """Named dimensions of the global state s_t."""
    names = ["overseer_x", "overseer_y"]
    for i in range(1, n_strikers + 1):
        names += [f"striker{i}_x", f"striker{i}_y"]
    return names + ["target_x", "target_y"]


def important_state(n_strikers: int) -> list[int]:
    """Indices of the state dims the task's reward depends on: every striker's cell and the target.

    The official release asks the LLM to pick these first (its "important state" step); here the
    choice follows from the reward, which names only the strikers and the target (the overseer
    never moves).
    """
    names = state_names(n_strikers)
    return [k for k, name in enumerate(names) if not name.startswith("overseer")]


def observed_by(n_strikers: int, n_distract: int) -> dict[str, list[tuple[int, int]]]:
    """For every state dim: the (agent, observation index) pairs that observe it directly."""
    table: dict[str, list[tuple[int, int]]] = {}
    for agent in range(n_strikers + 1):
        own = "overseer" if agent == 0 else f"striker{agent}"
        for k, name in enumerate(observation_names(agent, n_distract)):
            if name in ("self_x", "self_y"):
                table.setdefault(f"{own}_{name[-1]}", []).append((agent, k))
            elif name in ("target_x", "target_y"):
                table.setdefault(name, []).append((agent, k))
    return table


class OverseerEnv:
    """`n_envs` independent Overseer episodes stepped together (all tensors on `device`).

    Positions are integer cells in [0, grid-1]^2; observations and the state use the
    normalised coordinate c / (grid - 1) in [0, 1].
    """

    def __init__(self, n_envs: int, grid: int = 5, n_strikers: int = 3, n_distract: int = 12,
                 horizon: int = 12, device: torch.device | str = "cpu", seed: int = 0):
        if n_envs < 1 or grid < 2 or n_strikers < 1 or n_distract < 0 or horizon < 1:
            raise ValueError("need n_envs >= 1, grid >= 2, n_strikers >= 1, n_distract >= 0, horizon >= 1")
        self.n_envs, self.grid, self.n_strikers = n_envs, grid, n_strikers
        self.n_distract, self.horizon = n_distract, horizon
        self.n_agents = n_strikers + 1
        self.device = torch.device(device)
        self.generator = torch.Generator(device=self.device).manual_seed(seed)
        self.moves = torch.tensor(_MOVES, device=self.device)  # (5, 2)
        self.obs_dims = [len(observation_names(a, n_distract)) for a in range(self.n_agents)]
        self.state_dim = 2 * self.n_agents + 2
        self.reset()

    def _cells(self, *shape) -> torch.Tensor:
        return torch.randint(0, self.grid, (*shape, 2), device=self.device, generator=self.generator)

    def reset(self) -> None:
        """New episodes: overseer, strikers and target on uniformly random cells."""
        self.pos = self._cells(self.n_envs, self.n_agents)  # (B, N, 2), agent 0 = overseer
        self.target = self._cells(self.n_envs)  # (B, 2)
        self.done = torch.zeros(self.n_envs, dtype=torch.bool, device=self.device)
        self.t = 0

    def set_positions(self, pos: torch.Tensor, target: torch.Tensor) -> None:
        """Place agents/target by hand (tests, figures); shapes (B, N, 2) and (B, 2)."""
        if pos.shape != (self.n_envs, self.n_agents, 2) or target.shape != (self.n_envs, 2):
            raise ValueError(f"expected pos {(self.n_envs, self.n_agents, 2)} and target {(self.n_envs, 2)}, "
                             f"got {tuple(pos.shape)} and {tuple(target.shape)}")
        if (pos < 0).any() or (pos >= self.grid).any() or (target < 0).any() or (target >= self.grid).any():
            raise ValueError("positions must lie on the grid")
        self.pos, self.target = pos.to(self.device).long(), target.to(self.device).long()
        self.done = torch.zeros(self.n_envs, dtype=torch.bool, device=self.device)

    def state(self) -> torch.Tensor:
        """Global state s_t: (B, 2N + 2) = all agent cells then the target, normalised."""
        flat = torch.cat([self.pos.reshape(self.n_envs, -1), self.target], dim=1)  # (B, 2N+2)
        return flat.float() / (self.grid - 1)

    def observations(self) -> list[torch.Tensor]:
        """One (B, d_i) tensor per agent: own cell, 4 wall flags, [target], noise."""
        scale = self.grid - 1
        x, y = self.pos[..., 0], self.pos[..., 1]  # (B, N)
        walls = torch.stack([y == scale, y == 0, x == 0, x == scale], dim=-1).float()  # (B, N, 4)
        own = torch.cat([self.pos.float() / scale, walls], dim=-1)  # (B, N, 6)
        noise = torch.randn(self.n_envs, self.n_agents, self.n_distract, device=self.device,
                            generator=self.generator)  # (B, N, n_distract)
        obs = [torch.cat([own[:, 0], self.target.float() / scale, noise[:, 0]], dim=1)]
        obs += [torch.cat([own[:, a], noise[:, a]], dim=1) for a in range(1, self.n_agents)]
        return obs

    def on_target(self) -> torch.Tensor:
        """(B, S) bool: which strikers stand on the target cell."""
        return (self.pos[:, 1:] == self.target[:, None]).all(dim=-1)

    def potential(self) -> torch.Tensor:
        """Phi(s) = -mean striker Manhattan distance to the target / (2 (grid-1)), in [-1, 0]."""
        dist = (self.pos[:, 1:] - self.target[:, None]).abs().sum(-1).float()  # (B, S)
        return -dist.mean(1) / (2 * (self.grid - 1))

    def step(self, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Move the strikers (actions (B, S) in 0..4); the overseer never moves.

        Returns the team reward (B,) (1 on the step all strikers are on the target, else 0),
        `done` (B,) and `success` (B,) (episode ended with all strikers on the target).
        Finished episodes are frozen until `reset`.
        """
        if actions.shape != (self.n_envs, self.n_strikers):
            raise ValueError(f"actions must have shape {(self.n_envs, self.n_strikers)}, got {tuple(actions.shape)}")
        if actions.dtype not in (torch.int64, torch.int32) or (actions < 0).any() or (actions >= len(ACTIONS)).any():
            raise ValueError(f"actions must be integers in [0, {len(ACTIONS) - 1}]")
        active = ~self.done
        delta = self.moves[actions.long()] * active[:, None, None]  # (B, S, 2), frozen envs do not move
        self.pos[:, 1:] = (self.pos[:, 1:] + delta).clamp(0, self.grid - 1)
        self.t += 1
        success = self.on_target().all(dim=1) & active
        reward = success.float()
        self.done = self.done | success | (self.t >= self.horizon)
        return reward, self.done.clone(), success
