"""Low-level specialised primitives: the multi-tail network and staged PPO (our reconstruction).

An episode is a *design stage* (t = 0: the design tail emits xi, the body is built) followed by a
*control stage* (t = 1..T: the control tail acts given xi). With `multi_tail=True` the design and
control objectives have separate action tails and separate value tails (V_design, V_control);
`multi_tail=False` is the paper's "W/O Stage Opt" ablation (one action head, one value head and
one GAE chain over both stages). `fixed_xi` freezes the body (single-robot control baseline).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from icml26.common import progress

from .config import ReconfigConfig
from .env import OBS_DIM, ReconfCourse


class MultiTailPolicy(nn.Module):
    """Shared trunk f(s, xi, stage) with tails: design mean, control mean, V_design, V_control."""

    def __init__(self, hidden: int = 64, multi_tail: bool = True):
        super().__init__()
        self.multi_tail = multi_tail
        self.trunk = nn.Sequential(nn.Linear(OBS_DIM, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        n_tails = 2 if multi_tail else 1
        self.mu = nn.Linear(hidden, n_tails)  # column 0: control tail, column 1: design tail
        self.value = nn.Linear(hidden, n_tails)  # column 0: V_control, column 1: V_design
        self.log_std = nn.Parameter(torch.full((n_tails,), -0.5))

    def forward(self, obs: torch.Tensor, design_stage: torch.Tensor):
        """Return (mean, log_std, value), each [N], reading the tail of each
        sample's stage."""
        if obs.dim() != 2 or obs.shape[1] != OBS_DIM:
            raise ValueError(f"obs must be [N, {OBS_DIM}], got {tuple(obs.shape)}")
        h = self.trunk(obs)
        idx = (design_stage.long()[:, None] if self.multi_tail
               else torch.zeros_like(design_stage, dtype=torch.long)[:, None])
        mu = self.mu(h).gather(1, idx).squeeze(1)
        value = self.value(h).gather(1, idx).squeeze(1)
        return mu, self.log_std[idx.squeeze(1)], value

    @torch.no_grad()
    def act_mean(self, env: ReconfCourse, xi: torch.Tensor, design: bool) -> torch.Tensor:
        """Deterministic squashed action in [0, 1] (xi at the design stage, effort otherwise)."""
        obs = env.observe(xi, design)
        mu, _, _ = self(obs, torch.full((env.n,), design, device=obs.device))
        return squash(mu)


def tail_gradient_leak(policy: MultiTailPolicy, n: int = 64,
                       seed: int = 0) -> float:
    """How much each stage's loss reaches the other stage's tails: the largest
    |gradient| that a loss on design-stage samples puts on the control tail's
    parameters (row 0 of `mu`, `value`) plus the same for control-stage samples
    on the design tail (row 1). Exactly 0 for a multi-tail network; with one
    shared tail (W/O Stage Opt) both stages write to the same row."""
    g = torch.Generator().manual_seed(seed)
    obs = torch.randn(n, OBS_DIM, generator=g)
    leak = 0.0
    for stage, other in ((True, 0), (False, 1)):
        p = MultiTailPolicy(policy.trunk[0].out_features, policy.multi_tail)
        p.load_state_dict(policy.state_dict())
        p.requires_grad_(True)
        mu, log_std, v = p(obs, torch.full((n,), stage))
        (mu.pow(2).sum() + v.pow(2).sum() + log_std.sum()).backward()
        # one shared tail: the other stage's head is row 0 too
        row = other if policy.multi_tail else 0
        grads = [p.mu.weight.grad[row], p.mu.bias.grad[row],
                 p.value.weight.grad[row], p.value.bias.grad[row]]
        leak = max(leak, max(float(t.abs().max()) for t in grads))
    return leak


def squash(u: torch.Tensor) -> torch.Tensor:
    """tanh squashing to the feasible box [0, 1] (design bounds / effort bounds)."""
    return 0.5 * (torch.tanh(u) + 1.0)


def gae(rewards: torch.Tensor, values: torch.Tensor, gamma: float, lam: float) -> torch.Tensor:
    """Generalised advantage estimation over a fixed-length episode; rewards, values [T, N];
    the episode ends after step T (bootstrap 0)."""
    if rewards.shape != values.shape:
        raise ValueError("rewards and values must have the same [T, N] shape")
    adv = torch.zeros_like(rewards)
    last = torch.zeros_like(rewards[0])
    for t in reversed(range(rewards.shape[0])):
        nxt = values[t + 1] if t + 1 < rewards.shape[0] else torch.zeros_like(last)
        delta = rewards[t] + gamma * nxt - values[t]
        last = delta + gamma * lam * last
        adv[t] = last
    return adv


def staged_advantages(rewards, v_control, v_design, cfg: ReconfigConfig,
                      multi_tail: bool):
    """Advantages and value targets of both stages.

    multi-tail: control A_t = GAE(r, V_control); design A_0 = G - V_design(s_0)
    with G the full discounted episode return (the design action is judged by
    its own value tail).
    W/O stage opt: one GAE chain over [design step (reward 0), control steps]
    with one value head.
    Returns (adv_design [N], target_design [N], adv_control [T, N],
    target_control [T, N]).
    """
    T = rewards.shape[0]
    if multi_tail:
        adv_c = gae(rewards, v_control, cfg.gamma, cfg.lam)
        disc = cfg.gamma ** torch.arange(T, device=rewards.device,
                                         dtype=rewards.dtype)
        ret = (disc[:, None] * rewards).sum(0)
        return ret - v_design, ret, adv_c, adv_c + v_control
    r_all = torch.cat([torch.zeros_like(rewards[:1]), rewards])  # [T+1, N]
    v_all = torch.cat([v_design[None], v_control])  # [T+1, N]
    adv = gae(r_all, v_all, cfg.gamma, cfg.lam)
    return adv[0], adv[0] + v_design, adv[1:], adv[1:] + v_control


@dataclass
class Primitive:
    """A trained (then frozen) primitive: configuration id, its policy and training curve."""

    config_id: int
    policy: MultiTailPolicy
    fixed_xi: float | None
    curve: list


def rollout(policy, env: ReconfCourse, config_id: int, T: int, fixed_xi: float | None, kappa_scale: float = 1.0):
    """One synchronous staged episode of all envs; returns a dict of tensors ([N] / [T, N])."""
    n, dev = env.n, env.device
    env.reset()
    cfg_vec = torch.full((n,), config_id, device=dev, dtype=torch.long)
    obs_d = env.observe(torch.zeros(n, device=dev), True)
    with torch.no_grad():
        mu_d, ls_d, v_d = policy(obs_d, torch.ones(n, dtype=torch.bool, device=dev))
        u_d = mu_d + ls_d.exp() * torch.randn_like(mu_d)
    xi = squash(u_d) if fixed_xi is None else torch.full((n,), fixed_xi, device=dev)
    obs, acts, logps, vals, rews = [], [], [], [], []
    for _ in range(T):
        o = env.observe(xi, False)
        with torch.no_grad():
            mu, ls, v = policy(o, torch.zeros(n, dtype=torch.bool, device=dev))
            u = mu + ls.exp() * torch.randn_like(mu)
            logp = torch.distributions.Normal(mu, ls.exp()).log_prob(u)
        dx, energy = env.step(cfg_vec, xi, squash(u))
        rews.append(10.0 * dx - kappa_scale * energy)  # progress reward minus energy kappa ||a||^2
        obs.append(o); acts.append(u); logps.append(logp); vals.append(v)
    logp_d = torch.distributions.Normal(mu_d, ls_d.exp()).log_prob(u_d)
    return {"obs_d": obs_d, "u_d": u_d, "logp_d": logp_d, "v_d": v_d, "xi": xi,
            "obs": torch.stack(obs), "acts": torch.stack(acts), "logps": torch.stack(logps),
            "vals": torch.stack(vals), "rews": torch.stack(rews), "progress": env.progress()}


def ppo_update(policy, opt, batch, cfg: ReconfigConfig, train_design: bool):
    """Clipped PPO over design samples (one per env) and control samples (T per env)."""
    T, n = batch["rews"].shape
    adv_d, tgt_d, adv_c, tgt_c = staged_advantages(batch["rews"], batch["vals"], batch["v_d"], cfg, policy.multi_tail)
    if policy.multi_tail:  # each tail's advantages are normalised on their own
        adv_c = (adv_c - adv_c.mean()) / (adv_c.std() + 1e-8)
        adv_d = (adv_d - adv_d.mean()) / (adv_d.std() + 1e-8)
    else:  # one objective: joint normalisation
        both = torch.cat([adv_d[None], adv_c])
        both = (both - both.mean()) / (both.std() + 1e-8)
        adv_d, adv_c = both[0], both[1:]
    obs = torch.cat([batch["obs_d"], batch["obs"].reshape(T * n, -1)])  # [N + T*N, OBS_DIM]
    stage = torch.cat([torch.ones(n, dtype=torch.bool), torch.zeros(T * n, dtype=torch.bool)]).to(obs.device)
    acts = torch.cat([batch["u_d"], batch["acts"].reshape(-1)])
    old = torch.cat([batch["logp_d"], batch["logps"].reshape(-1)])
    adv = torch.cat([adv_d, adv_c.reshape(-1)])
    tgt = torch.cat([tgt_d, tgt_c.reshape(-1)])
    weight = torch.ones_like(adv)
    if not train_design:
        weight[:n] = 0.0
    m = obs.shape[0]
    for _ in range(cfg.ppo_epochs):
        perm = torch.randperm(m, device=obs.device)
        # region: clipped PPO step
        for idx in perm.chunk(cfg.ppo_minibatches):
            mu, ls, v = policy(obs[idx], stage[idx])
            dist = torch.distributions.Normal(mu, ls.exp())
            ratio = (dist.log_prob(acts[idx]) - old[idx]).exp()
            surr = torch.min(ratio * adv[idx],
                             ratio.clamp(1 - cfg.clip, 1 + cfg.clip) * adv[idx])
            w = weight[idx]
            loss = (-(w * surr).sum() / w.sum().clamp(min=1)
                    + 0.5 * ((v - tgt[idx]) ** 2).mean()
                    - cfg.ent_coef * dist.entropy().mean())
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            opt.step()
        # endregion


def train_primitive(make_env, config_id: int, cfg: ReconfigConfig, generator: torch.Generator,
                    multi_tail: bool = True, fixed_xi: float | None = None, T: int | None = None,
                    desc: str = "primitive") -> Primitive:
    """Jointly optimise a configuration's design xi and its controller with staged PPO.

    `make_env(generator)` builds the batch of sub-tasks / courses for one iteration.
    """
    if fixed_xi is not None and not 0.0 <= fixed_xi <= 1.0:
        raise ValueError(f"fixed_xi must lie in [0, 1], got {fixed_xi}")
    torch.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=generator)))
    policy = MultiTailPolicy(cfg.hidden, multi_tail).to(make_env(generator).device)
    opt = torch.optim.Adam(policy.parameters(), lr=cfg.lr)
    curve = []
    for _ in progress(range(cfg.ppo_iters), desc=desc, leave=False):
        batch = rollout(policy, make_env(generator), config_id, T or cfg.prim_horizon, fixed_xi)
        curve.append(float(batch["progress"].mean()))
        ppo_update(policy, opt, batch, cfg, train_design=fixed_xi is None)
    policy.eval()
    for p in policy.parameters():
        p.requires_grad_(False)  # primitives are frozen after training
    return Primitive(config_id, policy, fixed_xi, curve)
