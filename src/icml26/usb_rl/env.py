"""HazardNav: a batched safe-navigation task in torch (our stand-in for Safety-Gymnasium's
PointGoal; the paper's benchmarks are not named in the abstract).

A point starts near (0, 0) and must reach the goal (1, 0) within `horizon` steps. A triangular
hazard stands across the straight line: its apex is at (0.5, `hazard_apex`) and it widens
downward to the bottom wall, with half-width `hazard_half_width` where it crosses the straight
line y = 0. The straight path crosses its thickest useful part (most cost, most reward);
crossing higher up, where it is thinner, costs fewer hazard steps but a longer path; going over
the apex costs nothing but the longest path. So the task's Pareto front has several graded
points, and the hazard is not symmetric about the straight line (its thin side is up). All
environments step together as one tensor operation, on any device.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

GOAL = (1.0, 0.0)
HAZARD_X = 0.5  # the hazard's axis of symmetry is the vertical line x = 0.5
BOX = (-0.5, 1.5, -1.0, 1.0)  # x_min, x_max, y_min, y_max (walls: positions are clipped)


def hazard_depth(pos: torch.Tensor, half_width: float = 0.35, apex: float = 0.5) -> torch.Tensor:
    """Signed depth inside the triangular hazard, (..., 2) -> (...): w(y) - |x - 0.5| with
    half-width w(y) = half_width * (apex - y) / apex (w(0) = half_width, w(apex) = 0).
    Positive strictly inside, negative outside; the cost is 1[depth > 0]."""
    w = half_width * (apex - pos[..., 1]) / apex
    return w - (pos[..., 0] - HAZARD_X).abs()


@dataclass
class HazardNav:
    """Batched point navigation with a hazard.

    Dynamics: p' = clip(p + step_size * clip(a, -1, 1)). Reward r_t = -||p_{t+1} - goal||
    (the episode return is minus the summed distance, so arriving sooner is better).
    Cost c_t = 1 when p_{t+1} lies strictly inside the triangular hazard (Safety-Gymnasium
    convention: one unit per step in a hazard).
    """

    n_envs: int
    horizon: int = 20
    step_size: float = 0.1
    hazard_half_width: float = 0.35
    hazard_apex: float = 0.5
    start_jitter: float = 0.05
    device: torch.device | str = "cpu"

    def __post_init__(self) -> None:
        if self.n_envs < 1 or self.horizon < 1:
            raise ValueError(f"n_envs and horizon must be >= 1, got {self.n_envs}, {self.horizon}")
        if self.step_size <= 0 or self.hazard_half_width <= 0 or self.hazard_apex <= 0:
            raise ValueError("step_size, hazard_half_width and hazard_apex must be positive")
        self.device = torch.device(self.device)
        self.goal = torch.tensor(GOAL, device=self.device)
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

    def reward_cost(self, next_pos: torch.Tensor
                    ) -> tuple[torch.Tensor, torch.Tensor]:
        """r = -||p' - goal||, c = 1[p' strictly inside the triangle]; shapes
        (...,)."""
        r = -(next_pos - self.goal).norm(dim=-1)
        c = (hazard_depth(next_pos, self.hazard_half_width,
                          self.hazard_apex) > 0).float()
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
    waypoint in [0.2, 0.8] x [-0.6, 0.8] and then to the goal, with Gaussian action noise,
    so the data holds paths through every part of the hazard and over its apex."""
    n = env.n_envs
    wp = torch.rand(n, 2, generator=generator) * torch.tensor([0.6, 1.4]) + torch.tensor([0.2, -0.6])
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


def pareto_mask(returns: torch.Tensor, costs: torch.Tensor) -> torch.Tensor:
    """True for the outcomes (G^r, G^c) that no other outcome strictly Pareto-dominates
    (at least as much return and at most as much cost, and better in one). (N,) -> (N,) bool."""
    if returns.shape != costs.shape or returns.dim() != 1:
        raise ValueError(f"returns and costs must be equal 1-D shapes, got {tuple(returns.shape)}, "
                         f"{tuple(costs.shape)}")
    ge = (returns[None, :] >= returns[:, None]) & (costs[None, :] <= costs[:, None])  # (N, N): j weakly beats i
    gt = (returns[None, :] > returns[:, None]) | (costs[None, :] < costs[:, None])
    return ~(ge & gt).any(1)


def reference_front(horizon: int = 20, step_size: float = 0.1, hazard_half_width: float = 0.35,
                    hazard_apex: float = 0.5, lambdas=(0.0, 0.03, 0.1, 0.3, 1.0, 3.0), n_offsets: int = 10,
                    iters: int = 400, lr: float = 0.03, device: torch.device | str = "cpu") -> dict[str, torch.Tensor]:
    """What the task itself allows: open-loop action sequences from the start (0, 0), planned
    with the TRUE dynamics and reward (no learned model, no policy network), for each penalty
    weight lambda and from `n_offsets` initial plans that cross x = 0.5 at heights from -0.1 to
    apex + 0.2 (so the straight, the partial-cut and the over-the-apex basins are all searched).
    The hard cost is smoothed by a sigmoid of the hazard depth (temperature annealed
    0.05 -> 0.02) for the gradient; all candidates are then scored in the real environment.
    Diagnostic only (our addition, not the paper's): it shows the price of safety in return.

    Returns returns, costs (L, O): real outcomes of every candidate; best_return, best_cost
    (L,): per lambda, the candidate with the largest G^r - lambda G^c among ALL
    candidates (those planned for the other weights included); front_return, front_cost
    (F,): the candidates no other candidate Pareto-dominates, one per cost level, by cost.
    """
    if horizon < 1 or n_offsets < 1 or iters < 0:
        raise ValueError("horizon and n_offsets must be >= 1 and iters >= 0")
    device = torch.device(device)
    lam = torch.as_tensor(lambdas, dtype=torch.float32, device=device)
    if lam.dim() != 1 or lam.numel() < 1 or (lam < 0).any():
        raise ValueError("lambdas must be a non-empty 1-D sequence of non-negative weights")
    n_l, goal = lam.numel(), torch.tensor(GOAL, device=device)
    lo, hi = torch.tensor(BOX[0::2], device=device), torch.tensor(BOX[1::2], device=device)
    heights = torch.linspace(-0.1, hazard_apex + 0.2, n_offsets, device=device)
    # initial plans: head for the waypoint (0.5, height) until x >= 0.45, then for the goal
    a0 = torch.zeros(horizon, n_offsets, 2, device=device)
    p = torch.zeros(n_offsets, 2, device=device)
    for t in range(horizon):
        tgt = torch.where((p[:, 0] < 0.45)[:, None], torch.stack([torch.full_like(heights, HAZARD_X), heights], -1),
                          goal)
        d = tgt - p
        a0[t] = d / d.norm(dim=-1, keepdim=True).clamp_min(step_size)
        p = p + step_size * a0[t]
    z = torch.atanh(a0.clamp(-0.999, 0.999))[:, None].repeat(1, n_l, 1, 1).requires_grad_(True)  # (T, L, O, 2)
    opt = torch.optim.Adam([z], lr=lr)
    for k in range(iters):
        temp = 0.05 * (0.4 ** (k / max(iters, 1)))
        p, g_r, g_c = torch.zeros(n_l, n_offsets, 2, device=device), 0.0, 0.0
        for t in range(horizon):
            p = torch.maximum(torch.minimum(p + step_size * torch.tanh(z[t]), hi), lo)
            g_r = g_r - (p - goal).norm(dim=-1)
            g_c = g_c + torch.sigmoid(hazard_depth(p, hazard_half_width, hazard_apex) / temp)
        loss = -(g_r - lam[:, None] * g_c).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    env = HazardNav(n_l * n_offsets, horizon, step_size, hazard_half_width, hazard_apex, 0.0, device)
    plan = torch.tanh(z.detach()).reshape(horizon, n_l * n_offsets, 2)  # (T, L*O, 2)
    ep = rollout(env, lambda obs, t: plan[t])
    g_r, g_c = ep["G_r"].reshape(n_l, n_offsets), ep["G_c"].reshape(n_l, n_offsets)  # (L, O)
    flat_r, flat_c = g_r.flatten(), g_c.flatten()  # (L*O,): every candidate plan, whatever it was optimised for
    best = (flat_r[None, :] - lam[:, None] * flat_c[None, :]).argmax(1)  # (L,): best of ALL candidates per lambda
    keep = pareto_mask(flat_r, flat_c)
    fr, fc = flat_r[keep], flat_c[keep]
    levels = torch.unique(fc)  # sorted; one point per cost level (ties in return are duplicates)
    front_r = torch.stack([fr[fc == c].max() for c in levels])
    return {"lambdas": lam, "returns": g_r, "costs": g_c, "best_return": flat_r[best],
            "best_cost": flat_c[best], "front_return": front_r, "front_cost": levels}
