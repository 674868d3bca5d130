"""`ObstacleReach2D`: a point reaches a goal around a disc obstacle, batched over
environments in torch (runs on a GPU unchanged), and its scripted bimodal expert.

Observation (6-d): position, goal, obstacle centre. Action: an absolute target position
(as in Push-T); the point moves toward it by at most `max_speed` per step. An episode
succeeds when the point comes within `goal_tol` of the goal within `max_steps` steps
without ever entering the obstacle. The expert detours left or right of the obstacle with
probability 1/2 each, so the demonstrations are bimodal and their mean drives straight
into the obstacle (the mode-averaging failure the chapter is about).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

OBS_DIM, ACTION_DIM = 6, 2


@dataclass
class Layout:
    """Start positions, goals and obstacle centres, each (B, 2)."""

    start: torch.Tensor
    goal: torch.Tensor
    center: torch.Tensor

    @property
    def n(self) -> int:
        return self.start.shape[0]


def sample_layouts(n: int, generator: torch.Generator, device: torch.device | str = "cpu") -> Layout:
    """Random scenes: start near (0, -0.8), goal near (0, 0.8), obstacle near the origin."""
    if n < 1:
        raise ValueError(f"need at least one layout, got n={n}")
    u = torch.rand(n, 4, generator=generator, device=device)
    start = torch.stack([0.2 * u[:, 0] - 0.1, torch.full_like(u[:, 0], -0.8)], -1)  # (n, 2)
    goal = torch.stack([0.2 * u[:, 1] - 0.1, torch.full_like(u[:, 1], 0.8)], -1)
    center = 0.1 * u[:, 2:] - 0.05  # (n, 2)
    return Layout(start, goal, center)


def concat_layouts(layouts: list[Layout]) -> Layout:
    return Layout(*(torch.cat([getattr(l, k) for l in layouts]) for k in ("start", "goal", "center")))


def segment_hits_disc(p0: torch.Tensor, p1: torch.Tensor, center: torch.Tensor, radius: float) -> torch.Tensor:
    """Whether the segment p0->p1 (each (B, 2)) passes within `radius` of `center`: (B,) bool."""
    d = p1 - p0
    t = ((center - p0) * d).sum(-1) / (d * d).sum(-1).clamp_min(1e-12)
    closest = p0 + t.clamp(0.0, 1.0).unsqueeze(-1) * d
    return (closest - center).norm(dim=-1) < radius


class ObstacleReach2D:
    """The batched environment. `step(targets)` moves every unfinished episode at once.

    `dead_band` (default 0) makes commanded displacements shorter than it produce no motion:
    a constructed stand-in for the real-robot "execution stall" that motivates STEP's
    velocity-aware perturbation.
    """

    def __init__(self, layout: Layout, max_speed: float = 0.05, goal_tol: float = 0.05,
                 obstacle_radius: float = 0.3, max_steps: int = 80, dead_band: float = 0.0):
        if max_speed <= 0 or goal_tol <= 0 or obstacle_radius <= 0 or max_steps < 1:
            raise ValueError("max_speed, goal_tol, obstacle_radius and max_steps must be positive")
        self.layout, self.max_speed, self.goal_tol = layout, max_speed, goal_tol
        self.radius, self.max_steps, self.dead_band = obstacle_radius, max_steps, dead_band
        n, dev = layout.n, layout.start.device
        self.pos = layout.start.clone()
        self.t = 0
        self.success = torch.zeros(n, dtype=torch.bool, device=dev)
        self.collided = torch.zeros(n, dtype=torch.bool, device=dev)
        self.still = torch.zeros(n, dtype=torch.long, device=dev)  # consecutive steps without motion
        self.stalled = torch.zeros(n, dtype=torch.bool, device=dev)  # ever still for >= 10 steps

    @property
    def done(self) -> torch.Tensor:
        return self.success | self.collided | (self.t >= self.max_steps)

    def observe(self) -> torch.Tensor:
        """(B, 6): position, goal, obstacle centre."""
        return torch.cat([self.pos, self.layout.goal, self.layout.center], -1)

    def step(self, target: torch.Tensor) -> torch.Tensor:
        """Move toward `target` (B, 2) by at most `max_speed`; finished
        episodes stay frozen. Returns the new positions (B, 2)."""
        if target.shape != self.pos.shape:
            raise ValueError(f"target must have shape {tuple(self.pos.shape)}, got {tuple(target.shape)}")
        active = ~self.done
        delta = target - self.pos
        dist = delta.norm(dim=-1, keepdim=True)
        move = delta * (self.max_speed / dist.clamp_min(1e-12)).clamp(max=1.0)
        move = torch.where(dist < self.dead_band, torch.zeros_like(move), move)
        new = torch.where(active.unsqueeze(-1), self.pos + move, self.pos)
        hit = segment_hits_disc(self.pos, new, self.layout.center,
                                self.radius) & active
        moved = (new - self.pos).norm(dim=-1) > 1e-6
        self.still = torch.where(active & ~moved, self.still + 1,
                                 torch.zeros_like(self.still))
        self.stalled |= self.still >= 10
        self.pos = new
        self.collided |= hit
        self.success |= active & ~hit & (
            (new - self.layout.goal).norm(dim=-1) < self.goal_tol)
        self.t += 1
        return self.pos


def expert_waypoints(layout: Layout, side: torch.Tensor, radius: float, margin: float = 0.15) -> torch.Tensor:
    """The expert's polyline start -> detour point -> goal, (B, 3, 2). `side` is +-1 per
    episode: the detour point sits at the obstacle's height, `radius + margin` to its side."""
    detour = layout.center + torch.stack([side * (radius + margin), torch.zeros_like(side)], -1)
    return torch.stack([layout.start, detour, layout.goal], 1)


def point_on_polyline(way: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    """The point at arc length `s` (B,) along the polylines `way` (B, P, 2), clamped at the end."""
    seg = way[:, 1:] - way[:, :-1]  # (B, P-1, 2)
    length = seg.norm(dim=-1)  # (B, P-1)
    cum = torch.cat([torch.zeros_like(length[:, :1]), length.cumsum(-1)], -1)  # (B, P)
    s = s.clamp(max=cum[:, -1])
    idx = ((s.unsqueeze(-1) >= cum[:, 1:]).sum(-1)).clamp(max=seg.shape[1] - 1)  # segment index (B,)
    frac = (s - cum.gather(1, idx[:, None]).squeeze(1)) / length.gather(1, idx[:, None]).squeeze(1).clamp_min(1e-12)
    start = way.gather(1, idx[:, None, None].expand(-1, 1, 2)).squeeze(1)
    d = seg.gather(1, idx[:, None, None].expand(-1, 1, 2)).squeeze(1)
    return start + frac.clamp(0, 1).unsqueeze(-1) * d


@dataclass
class Demos:
    """Expert episodes: observations (N, T, 6) before each action, actions (N, T, 2),
    episode lengths (N,) (steps up to and including success) and the chosen sides (N,)."""

    obs: torch.Tensor
    actions: torch.Tensor
    lengths: torch.Tensor
    side: torch.Tensor


def collect_demos(n: int, generator: torch.Generator, max_speed: float = 0.05, goal_tol: float = 0.05,
                  obstacle_radius: float = 0.3, max_steps: int = 80, device: torch.device | str = "cpu") -> Demos:
    """Run the scripted expert in `n` environments at once: a random side per episode
    (left/right, 50/50) and a random speed in [0.7, 0.95] * max_speed along its polyline."""
    layout = sample_layouts(n, generator, device)
    side = torch.where(torch.rand(n, generator=generator, device=device) < 0.5, -1.0, 1.0)
    speed = max_speed * (0.7 + 0.25 * torch.rand(n, generator=generator, device=device))
    way = expert_waypoints(layout, side, obstacle_radius)
    env = ObstacleReach2D(layout, max_speed, goal_tol, obstacle_radius, max_steps)
    obs, act = [], []
    lengths = torch.full((n,), max_steps, dtype=torch.long, device=device)
    for k in range(max_steps):
        obs.append(env.observe())
        target = point_on_polyline(way, (k + 1) * speed)
        act.append(target)
        was_done = env.done.clone()
        env.step(target)
        lengths = torch.where(~was_done & env.success, torch.full_like(lengths, k + 1), lengths)
        if bool(env.done.all()):
            break
    if bool(env.collided.any()) or not bool(env.success.all()):
        raise RuntimeError("the scripted expert failed an episode; check the layout ranges")
    return Demos(torch.stack(obs, 1), torch.stack(act, 1), lengths, side)
