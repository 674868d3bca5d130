"""`ReconfCourse`: a batched, kinematic ("physics-lite") 1-D course for reconfigurable robots.

Our reconstruction of the paper's task suite (walk / drive / fly / swim) at CPU scale: each
configuration family c has one design parameter xi in [0, 1] (leg length, wheel radius, rotor arm,
fin size) and one control (effort e in [0, 1]). Speeds and energy per (configuration, terrain)
are given in `velocity_and_energy`; pits swallow everything that cannot fly and water swamps wheels.
"""

from __future__ import annotations

import torch

from .config import CONFIGS, COURSES, TERRAINS

N_TERRAIN = len(TERRAINS)
OBS_DIM = 2 * N_TERRAIN + 4  # terrain here, terrain ahead, distance to boundary, step height, xi, stage
FLAT, PIT, STAIRS, WATER = range(4)
WALKER, WHEEL, FLYER, SWIMMER = range(4)
STEP_RANGE = (0.3, 0.5)  # step heights h ~ U(STEP_RANGE) (randomised, see the pitfalls)
ENERGY_COEF = torch.tensor([0.15, 0.03, 0.02, 0.05])  # kappa_c per configuration


def physical_size(xi: torch.Tensor) -> torch.Tensor:
    """Map the squashed design xi in [0, 1] to a physical size in [0.2, 1.0]."""
    return 0.2 + 0.8 * xi


def velocity_and_energy(config: torch.Tensor, xi: torch.Tensor, terrain: torch.Tensor, step_h: torch.Tensor,
                        effort: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per-env speed, energy and failure flag, all shape [N].

    walker: flat 0.03 L e; stairs 0.02 L e if 0.6 L >= h else blocked; water 0.002 e; pit: falls.
    wheel:  flat 0.07 R e; stairs blocked if h > 0.3 R; water and pit: stuck for good.
    flyer:  every terrain 0.008 e (1.1 - 0.3 A); energy kappa e^2 / A.
    swimmer: water 0.05 F e; elsewhere 0.003 e; pit: falls.
    Energy of the ground/water families is kappa_c e^2 size^2 (bigger bodies cost more).
    """
    size = physical_size(xi)
    e = effort
    zero = torch.zeros_like(e)
    flat, pit, stairs, water = (terrain == k for k in range(4))
    v_walk = torch.where(flat, 0.03 * size * e, zero)
    v_walk = torch.where(stairs & (0.6 * size >= step_h), 0.02 * size * e, v_walk)
    v_walk = torch.where(water, 0.002 * e, v_walk)
    v_wheel = torch.where(flat, 0.07 * size * e, zero)
    v_wheel = torch.where(stairs & (step_h <= 0.3 * size), 0.03 * e, v_wheel)
    v_fly = 0.008 * e * (1.1 - 0.3 * size)
    v_swim = torch.where(water, 0.05 * size * e, 0.003 * e)
    v_swim = torch.where(pit, zero, v_swim)
    v = torch.stack([v_walk, v_wheel, v_fly, v_swim], dim=-1).gather(-1, config[:, None]).squeeze(-1)
    kappa = ENERGY_COEF.to(e.device)[config]
    energy = torch.where(config == FLYER, kappa * e**2 / size, kappa * e**2 * size**2)
    fail = (pit & (config != FLYER)) | (water & (config == WHEEL))
    return v, energy, fail


class ReconfCourse:
    """Batched course: `types` [N, K] terrain ids and `lengths` [N, K] segment lengths.

    State: position x [N], failure flag [N], switch timer [N]; progress p = x / course length.
    """

    def __init__(self, types: torch.Tensor, lengths: torch.Tensor, step_h: torch.Tensor):
        if types.dim() != 2 or types.shape != lengths.shape:
            raise ValueError(f"types and lengths must both be [N, K], got {tuple(types.shape)} and {tuple(lengths.shape)}")
        if step_h.shape != types.shape[:1]:
            raise ValueError(f"step_h must be [N], got {tuple(step_h.shape)}")
        if (lengths <= 0).any():
            raise ValueError("segment lengths must be positive")
        if types.min() < 0 or types.max() >= N_TERRAIN:
            raise ValueError(f"terrain ids must lie in [0, {N_TERRAIN})")
        self.types, self.lengths, self.step_h = types.long(), lengths, step_h
        self.bounds = torch.cumsum(lengths, dim=1)  # [N, K] right end of each segment
        self.total = self.bounds[:, -1]
        self.device = types.device
        self.reset()

    @property
    def n(self) -> int:
        return self.types.shape[0]

    def reset(self) -> None:
        self.x = torch.zeros(self.n, device=self.device)
        self.failed = torch.zeros(self.n, dtype=torch.bool, device=self.device)
        self.timer = torch.zeros(self.n, dtype=torch.long, device=self.device)

    def segment(self) -> torch.Tensor:
        """Index k of the segment under each robot, [N] (clamped to the last one)."""
        k = (self.x[:, None] >= self.bounds).sum(1)
        return k.clamp(max=self.types.shape[1] - 1)

    def terrain(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Terrain here [N], terrain of the next segment [N] and distance to the boundary [N]."""
        k = self.segment()
        here = self.types.gather(1, k[:, None]).squeeze(1)
        nxt = self.types.gather(1, (k + 1).clamp(max=self.types.shape[1] - 1)[:, None]).squeeze(1)
        dist = self.bounds.gather(1, k[:, None]).squeeze(1) - self.x
        return here, nxt, dist

    def progress(self) -> torch.Tensor:
        return (self.x / self.total).clamp(max=1.0)

    def observe(self, xi: torch.Tensor, design_stage: bool) -> torch.Tensor:
        """Observation [N, OBS_DIM] = [onehot(here), onehot(next), dist, h, xi, stage]."""
        here, nxt, dist = self.terrain()
        eye = torch.eye(N_TERRAIN, device=self.device)
        stage = torch.full((self.n, 1), float(design_stage), device=self.device)
        return torch.cat([eye[here], eye[nxt], dist.clamp(max=1.0)[:, None], self.step_h[:, None],
                          xi[:, None], stage], dim=1)

    def step(self, config: torch.Tensor, xi: torch.Tensor, effort: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Advance every env one step; returns (dx, energy), both [N]. Failed robots stop for good,
        robots in a reconfiguration (timer > 0) do not move."""
        here, _, _ = self.terrain()
        v, energy, fail = velocity_and_energy(config, xi, here, self.step_h, effort)
        self.failed |= fail
        moving = (~self.failed) & (self.timer == 0) & (self.x < self.total)
        dx = torch.where(moving, v, torch.zeros_like(v))
        self.x = self.x + dx
        self.timer = (self.timer - 1).clamp(min=0)
        return dx, torch.where(moving, energy, torch.zeros_like(energy))


def make_courses(names: list[str] | tuple[str, ...], n: int, generator: torch.Generator,
                 device: torch.device) -> tuple[ReconfCourse, torch.Tensor]:
    """`n` randomised courses per name (flat U[0.8,1.2], middle U[0.4,0.6]); also returns the
    course id [len(names) * n] of each env."""
    for name in names:
        if name not in COURSES:
            raise ValueError(f"unknown course {name!r}; valid: {sorted(COURSES)}")
    types = torch.tensor([[TERRAINS.index(t) for t in COURSES[name]] for name in names])  # [M, 3]
    types = types.repeat_interleave(n, dim=0)  # [M*n, 3]
    u = torch.rand(types.shape, generator=generator)
    lengths = torch.where(torch.arange(3) == 1, 0.4 + 0.2 * u, 0.8 + 0.4 * u)
    step_h = STEP_RANGE[0] + (STEP_RANGE[1] - STEP_RANGE[0]) * torch.rand(types.shape[0], generator=generator)
    ids = torch.arange(len(names)).repeat_interleave(n)
    return ReconfCourse(types.to(device), lengths.to(device), step_h.to(device)), ids.to(device)


def make_subtask(terrain: str, n: int, generator: torch.Generator, device: torch.device) -> ReconfCourse:
    """A single long segment of one terrain type (a primitive's training sub-task)."""
    if terrain not in TERRAINS:
        raise ValueError(f"unknown terrain {terrain!r}; valid: {list(TERRAINS)}")
    types = torch.full((n, 1), TERRAINS.index(terrain), device=device)
    step_h = STEP_RANGE[0] + (STEP_RANGE[1] - STEP_RANGE[0]) * torch.rand(n, generator=generator)
    return ReconfCourse(types, torch.full((n, 1), 100.0, device=device), step_h.to(device))


def config_index(name: str) -> int:
    if name not in CONFIGS:
        raise ValueError(f"unknown configuration {name!r}; valid: {list(CONFIGS)}")
    return CONFIGS.index(name)
