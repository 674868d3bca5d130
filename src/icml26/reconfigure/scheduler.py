"""High-level scheduler: picks which frozen primitive (configuration) acts, from global progress,
the terrain ahead and the current configuration; trained by fitted Q-learning with epsilon-greedy
exploration over primitives (epsilon 1 -> 0.05 linearly; eps = 0 is the "W/O eps-Greedy" ablation).
"""

from __future__ import annotations

import copy

import torch
from torch import nn

from icml26.common import progress

from .config import CONFIGS, ReconfigConfig
from .env import N_TERRAIN, ReconfCourse
from .primitives import Primitive, squash

N_CONFIG = len(CONFIGS)
SCHED_OBS_DIM = 2 + 2 * N_TERRAIN + 2 + N_CONFIG


def scheduler_obs(env: ReconfCourse, current: torch.Tensor) -> torch.Tensor:
    """[N, SCHED_OBS_DIM] = [progress p_t, failed flag, onehot(here), onehot(next), dist, h, onehot(current c)]
    (current = -1 before the first choice gives an all-zero one-hot)."""
    here, nxt, dist = env.terrain()
    eye = torch.eye(N_TERRAIN, device=env.device)
    cur = torch.cat([torch.eye(N_CONFIG, device=env.device), torch.zeros(1, N_CONFIG, device=env.device)])[current]
    return torch.cat([env.progress()[:, None], env.failed.float()[:, None], eye[here], eye[nxt], dist.clamp(max=1.0)[:, None],
                      env.step_h[:, None], cur], dim=1)


class QScheduler(nn.Module):
    """Q(p, terrain, c_current) -> one value per primitive c."""

    def __init__(self, hidden: int = 64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(SCHED_OBS_DIM, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, N_CONFIG))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        if obs.dim() != 2 or obs.shape[1] != SCHED_OBS_DIM:
            raise ValueError(f"scheduler obs must be [N, {SCHED_OBS_DIM}], got {tuple(obs.shape)}")
        return self.net(obs)


def run_hierarchy(prims: dict[int, Primitive], env: ReconfCourse, chooser, cfg: ReconfigConfig,
                  horizon: int | None = None) -> dict:
    """Hierarchical rollout: every `decision_every` steps `chooser(obs, current)` picks c [N];
    a switch re-runs the chosen primitive's design tail (new xi) and costs `switch_cost` idle
    steps; in between the chosen primitive's control tail acts. Returns progress [N], switch
    counts [N], the per-step configuration [T, N], the decision transitions, the boundary gap of
    every switch, and the boundary gap and switch flag of every robot at every decision ([D, N]:
    the chance baseline of C4 draws its switch times from these)."""
    n, dev = env.n, env.device
    env.reset()
    current = torch.full((n,), -1, dtype=torch.long, device=dev)
    xi = torch.zeros(n, device=dev)
    switches = torch.zeros(n, dtype=torch.long, device=dev)
    trans, used, gaps, dec_gaps, dec_switch = [], [], [], [], []
    T = horizon or cfg.horizon
    ids = sorted(prims)
    for t in range(T):
        # region: decision
        if t % cfg.decision_every == 0:
            s = scheduler_obs(env, current)
            choice = chooser(s, current)
            if t > 0:
                trans[-1]["s2"] = s
            new = choice != current
            switch = new & (current >= 0)
            env.timer = torch.where(switch,
                                    torch.full_like(env.timer, cfg.switch_cost),
                                    env.timer)
            switches += switch.long()
            # [N] distance to the nearest inner segment boundary
            gap = boundary_gap(env)
            # how far from a segment boundary each switch happens
            gaps.append(gap[switch])
            dec_gaps.append(gap)
            dec_switch.append(switch)
            for c in ids:  # re-emit the design of the chosen primitive (design stage)
                xi_c = (prims[c].policy.act_mean(env, xi, True)
                        if prims[c].fixed_xi is None
                        else torch.full((n,), prims[c].fixed_xi, device=dev))
                xi = torch.where(new & (choice == c), xi_c, xi)
            current = choice
            trans.append({"s": s, "a": choice, "p0": env.progress()})
        # endregion
        effort = torch.zeros(n, device=dev)
        obs = env.observe(xi, False)  # one observation for all primitives, [N, OBS_DIM]
        control = torch.zeros(n, dtype=torch.bool, device=dev)
        for c in ids:  # batched over envs, loop only over the C primitives
            with torch.no_grad():
                mu = prims[c].policy(obs, control)[0]
            effort = torch.where(current == c, squash(mu), effort)
        env.step(current, xi, effort)
        used.append(current.clone())
        if (t + 1) % cfg.decision_every == 0 or t + 1 == T:
            trans[-1]["r"] = 10.0 * (env.progress() - trans[-1]["p0"])
    trans[-1]["s2"] = scheduler_obs(env, current)
    return {"progress": env.progress(), "switches": switches, "configs": torch.stack(used), "trans": trans,
            "switch_gaps": torch.cat(gaps), "decision_gaps": torch.stack(dec_gaps),
            "decision_switches": torch.stack(dec_switch)}


def boundary_gap(env: ReconfCourse) -> torch.Tensor:
    """[N] distance from each robot to the nearest inner segment boundary (ahead or behind)."""
    k = env.segment().clamp(max=env.bounds.shape[1] - 1)
    ahead = env.bounds.gather(1, k[:, None]).squeeze(1) - env.x
    inner = env.bounds[:, :-1]  # boundaries between segments (the course's end is not one)
    behind = torch.where(k > 0, env.x - inner.gather(1, (k - 1).clamp(min=0)[:, None]).squeeze(1),
                         torch.full_like(env.x, float("inf")))
    ahead = torch.where(k < inner.shape[1], ahead, torch.full_like(ahead, float("inf")))
    return torch.minimum(ahead, behind)


def train_scheduler(prims: dict[int, Primitive], make_env, cfg: ReconfigConfig, generator: torch.Generator,
                    epsilon_greedy: bool = True, desc: str = "scheduler") -> tuple[QScheduler, list]:
    """Fitted Q-learning on full courses: target r + gamma max_c' Q_target(s', c'), the last
    decision of an episode is terminal. Epsilon decays linearly (or stays 0 without eps-greedy)."""
    torch.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=generator)))
    env0 = make_env(generator)
    q = QScheduler(cfg.hidden).to(env0.device)
    opt = torch.optim.Adam(q.parameters(), lr=cfg.lr)
    buffer, curve = [], []
    for it in progress(range(cfg.sched_iters), desc=desc, leave=False):
        frac = it / max(cfg.sched_iters - 1, 1)
        eps = (cfg.eps_start + frac * (cfg.eps_end - cfg.eps_start)) if epsilon_greedy else 0.0

        def chooser(s, current, eps=eps):
            with torch.no_grad():
                greedy = q(s).argmax(1)
            rand = torch.randint(0, N_CONFIG, greedy.shape, generator=generator).to(s.device)
            explore = torch.rand(greedy.shape, generator=generator).to(s.device) < eps
            return torch.where(explore, rand, greedy)

        out = run_hierarchy(prims, make_env(generator), chooser, cfg)
        curve.append(float(out["progress"].mean()))
        D = len(out["trans"])
        done = torch.zeros(D, out["progress"].shape[0], device=env0.device)
        done[-1] = 1.0
        buffer.append({k: torch.stack([tr[k] for tr in out["trans"]]).flatten(0, 1) for k in ("s", "a", "r", "s2")}
                      | {"done": done.flatten()})  # [D*N, ...]
        buffer = buffer[-5:]
        data = {k: torch.cat([b[k] for b in buffer]) for k in buffer[0]}
        # region: fitted Q step
        target_q = copy.deepcopy(q)
        with torch.no_grad():
            y = data["r"] + (cfg.sched_gamma * (1 - data["done"])
                             * target_q(data["s2"]).max(1).values)
        for _ in range(cfg.sched_updates):
            pred = q(data["s"]).gather(1, data["a"][:, None]).squeeze(1)
            loss = nn.functional.smooth_l1_loss(pred, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        # endregion
    q.eval()
    return q, curve


def greedy_chooser(q: QScheduler):
    """Inference: the scheduler's greedy choice."""
    def choose(s, current):
        with torch.no_grad():
            return q(s).argmax(1)
    return choose


def random_chooser(generator: torch.Generator):
    """A scheduler that picks a configuration uniformly at random at every decision (the chance
    level the trained scheduler must beat: its competence check)."""
    def choose(s, current):
        return torch.randint(0, N_CONFIG, (s.shape[0],), generator=generator).to(s.device)
    return choose


def constant_chooser(c: int):
    """A robot that never reconfigures (single-body baselines)."""
    def choose(s, current):
        return torch.full((s.shape[0],), c, dtype=torch.long, device=s.device)
    return choose
