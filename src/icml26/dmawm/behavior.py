"""Behaviour learning in imagination (summary, "Imagination" and "Behaviour learning"):
decentralized actors pi(a^i | x^i), a centralized critic V(x^{1:N}), lambda-returns, REINFORCE
with an entropy bonus, world model frozen."""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

from .env import N_ACTIONS
from .model import ModelState, WorldModel, mlp


class Actor(nn.Module):
    """pi(a^i | x^i, id_i): reads only agent i's own model state (decentralized execution)."""

    def __init__(self, x_dim: int, n_agents: int, hidden: int):
        super().__init__()
        self.n_agents = n_agents
        self.net = mlp(x_dim + n_agents, hidden, N_ACTIONS)

    def forward(self, x: torch.Tensor) -> Categorical:
        """x (..., N, x_dim) -> a Categorical over actions with batch shape (..., N)."""
        ids = torch.eye(self.n_agents, device=x.device).expand(*x.shape[:-2], self.n_agents, self.n_agents)
        return Categorical(logits=self.net(torch.cat([x, ids], -1)))


class Critic(nn.Module):
    """Centralized V(x^{1:N}) by mean-pooling per-agent features (training only)."""

    def __init__(self, x_dim: int, hidden: int):
        super().__init__()
        self.net = mlp(x_dim, hidden, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x).mean(-2).squeeze(-1)  # (..., N, x_dim) -> (...)


def lambda_return(reward: torch.Tensor, value: torch.Tensor, discount: torch.Tensor, lam: float) -> torch.Tensor:
    """TD(lambda) targets, R_k = r_{k+1} + d_{k+1} ((1-lam) V_{k+1} + lam R_{k+1}), bootstrapped with V_H.

    reward, discount: (H, B) for steps 1..H; value: (H+1, B) for steps 0..H. Returns (H, B) for steps 0..H-1.
    """
    if reward.shape != discount.shape or value.shape[0] != reward.shape[0] + 1 or value.shape[1:] != reward.shape[1:]:
        raise ValueError(f"need reward/discount (H, B) and value (H+1, B); got {tuple(reward.shape)}, "
                         f"{tuple(discount.shape)}, {tuple(value.shape)}")
    out, last = [], value[-1]
    for k in reversed(range(reward.shape[0])):
        last = reward[k] + discount[k] * ((1 - lam) * value[k + 1] + lam * last)
        out.append(last)
    return torch.stack(out[::-1])


def imagine(model: WorldModel, actor: Actor, start: ModelState, horizon: int,
            greedy: bool = False) -> dict:
    """Roll the world model forward H steps from `start` (h, z: (B, N, .))
    with each agent acting on its own x^i. Returns x (H+1, B, N, x_dim),
    actions (H, B, N), logp/entropy (H, B, N), reward/cont (H, B)."""
    if horizon < 1:
        raise ValueError(f"horizon must be >= 1, got {horizon}")
    state = ModelState(start.h.detach(), start.z.detach())
    xs, acts, logps, ents = [state.x], [], [], []
    for _ in range(horizon):
        dist = actor(state.x.detach())
        a = dist.probs.argmax(-1) if greedy else dist.sample()  # (B, N)
        acts.append(a)
        logps.append(dist.log_prob(a))
        ents.append(dist.entropy())
        with torch.no_grad():
            state = model.imagine_step(state, F.one_hot(a, N_ACTIONS).float())
        xs.append(state.x)
    x = torch.stack(xs)  # (H+1, B, N, x_dim)
    with torch.no_grad():
        reward = model.reward(x[1:])
        cont = torch.sigmoid(model.continuation_logit(x[1:]))
    return {"x": x, "actions": torch.stack(acts), "logp": torch.stack(logps),
            "entropy": torch.stack(ents), "reward": reward, "cont": cont}


def actor_critic_losses(
    traj: dict, critic: Critic, gamma: float, lam: float, entropy: float
) -> tuple[torch.Tensor, torch.Tensor, dict]:
    """Critic regression on lambda-returns; REINFORCE actor on normalised
    advantages (sum of the agents' log-probs, shared team advantage)
    + entropy bonus; trajectories weighted by the cumulative discount."""
    x = traj["x"].detach()
    value = critic(x)  # (H+1, B)
    discount = gamma * traj["cont"]  # (H, B)
    with torch.no_grad():
        target = lambda_return(traj["reward"], value.detach(),
                               discount, lam)  # (H, B)
        weight = torch.cumprod(torch.cat([torch.ones_like(discount[:1]),
                                          discount[:-1]]), 0)  # (H, B)
        adv = target - value[:-1].detach()
        adv = (adv - adv.mean()) / (adv.std() + 1e-6)
    critic_loss = (weight * 0.5 * (value[:-1] - target).pow(2)).mean()
    actor_loss = -(weight * (traj["logp"].sum(-1) * adv
                             + entropy * traj["entropy"].sum(-1))).mean()
    return actor_loss, critic_loss, {"imag_return": target[0].mean().item()}
