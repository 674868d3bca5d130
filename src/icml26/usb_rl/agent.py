"""Policy optimisation in imagination (Dreamer-style analytic gradients through the learned
model) for a population of agents that differ only in how they scalarise the outcome
(G^r, G^c): unconstrained, fixed linear penalties, a Lagrangian, and the learned score."""

from __future__ import annotations

import torch
from torch import nn

from .score import MonotoneScore
from .world_model import EnsembleMLP, WorldModel


class PolicyPopulation(nn.Module):
    """P deterministic tanh policies a = tanh(MLP_p(s)), evaluated in one batched pass.

    States (P, M, d_s) -> actions (P, M, d_a). Member p is one agent; the agents never
    share parameters, so summing their losses trains each one on its own objective.
    """

    def __init__(self, n_policies: int, state_dim: int = 2, action_dim: int = 2, hidden: int = 64,
                 generator: torch.Generator | None = None):
        super().__init__()
        if n_policies < 1:
            raise ValueError(f"n_policies must be >= 1, got {n_policies}")
        self.n_policies, self.state_dim, self.action_dim = n_policies, state_dim, action_dim
        self.net = EnsembleMLP(n_policies, state_dim, action_dim, hidden, generator)

    def preactivation(self, s: torch.Tensor) -> torch.Tensor:
        """z = MLP_p(s), (P, M, d_a); the action is tanh(z)."""
        if s.dim() != 3 or s.shape[0] != self.n_policies or s.shape[-1] != self.state_dim:
            raise ValueError(f"states must have shape ({self.n_policies}, M, {self.state_dim}), got {tuple(s.shape)}")
        return self.net(s)

    def forward(self, s: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.preactivation(s))


def imagine(policy: PolicyPopulation, model: WorldModel, start: torch.Tensor,
            horizon: int, noise: torch.Tensor | float = 0.0,
            generator: torch.Generator | None = None
            ) -> dict[str, torch.Tensor]:
    """Imagined rollouts of every policy from start states (P, M, d_s) for
    `horizon` steps.

    Actions are reparameterised, a = clip(pi(s) + noise * eps), so gradients
    flow from the outcome through the model into the policy. Returns states
    (H+1, P, M, d_s), rewards and cost probabilities (H, P, M) and the
    long-horizon outcomes G^r = sum_k r_hat_k, G^c = sum_k c_hat_k (P, M)
    (undiscounted: the episode is imagined whole, so no critic is needed to
    bootstrap the tail).
    """
    if horizon < 1:
        raise ValueError(f"horizon must be >= 1, got {horizon}")
    s, states, rews, costs, sat = start, [start], [], [], []
    for _ in range(horizon):
        z = policy.preactivation(s)
        sat.append(z.pow(2).mean(-1))
        a = torch.tanh(z)
        if not (isinstance(noise, float) and noise == 0.0):
            eps = torch.randn(a.shape, generator=generator).to(a.device)
            a = a + noise * eps
        a = a.clamp(-1.0, 1.0)
        s, r, c = model(s, a)
        states.append(s), rews.append(r), costs.append(c)
    # saturation (P, M): mean z^2, kept small so tanh does not saturate
    out = {"states": torch.stack(states), "rewards": torch.stack(rews),
           "costs": torch.stack(costs),
           "saturation": torch.stack(sat).mean(0)}
    out["G_r"], out["G_c"] = out["rewards"].sum(0), out["costs"].sum(0)
    return out


def linear_objective(g_r: torch.Tensor, g_c: torch.Tensor, lam: torch.Tensor | float) -> torch.Tensor:
    """The baselines' scalarisation J = G^r - lambda G^c (lambda = 0: unconstrained)."""
    return g_r - lam * g_c


def score_objective(score: MonotoneScore, g_r: torch.Tensor, g_c: torch.Tensor,
                    return_slope: float = 1.0,
                    of_mean: bool = False) -> torch.Tensor:
    """USB-RL's scalarisation J = S_psi(G^r, G^c) / k with the score's
    parameters frozen.

    k = `return_slope` > 0 is a constant (the score's mean slope dS/dG^r on
    the current outcomes): dividing by it expresses the score in return units,
    like the baselines' G^r - lambda G^c, so the action regulariser shared by
    all agents weighs the same for every agent. A positive constant does not
    change which outcome the score prefers.

    Default: the score of every imagined outcome (its mean over rollouts is
    the *expected score*, the per-trajectory RL objective). `of_mean=True`
    instead scores the mean outcome over the last axis, S(E[G^r], E[G^c]),
    broadcast back to the input shape: the quantity the baselines' linear
    objective and the reproduction check are functions of (a diagnostic of
    the score's risk attitude; not the book default).
    """
    if not return_slope > 0:
        raise ValueError(f"return_slope must be > 0, got {return_slope}")
    for p in score.parameters():
        p.requires_grad_(False)
    try:
        if of_mean:
            return (score(g_r.mean(-1, keepdim=True),
                          g_c.mean(-1, keepdim=True))
                    / return_slope).expand_as(g_r)
        return score(g_r, g_c) / return_slope
    finally:
        for p in score.parameters():
            p.requires_grad_(True)


def dual_ascent(lam: float, mean_cost: float, budget: float, lr: float) -> float:
    """Lagrangian baseline: lambda <- max(0, lambda + lr (E[G^c] - d)) (projected dual ascent)."""
    if budget < 0 or lr <= 0:
        raise ValueError("the budget must be >= 0 and the dual step size > 0")
    return max(0.0, lam + lr * (mean_cost - budget))
