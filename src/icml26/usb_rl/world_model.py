"""The learned world model: an ensemble of MLPs f_e(s, a) -> (delta s, r_hat, c_logit)
(Section "world model" of the chapter; the abstract only says "model-based", so the
architecture is our reconstruction, a vector-state MBPO/PETS-style ensemble)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class EnsembleLinear(nn.Module):
    """K independent linear layers applied at once: x (K, B, d_in) -> (K, B, d_out)."""

    def __init__(self, k: int, d_in: int, d_out: int, generator: torch.Generator | None = None):
        super().__init__()
        bound = d_in ** -0.5
        self.weight = nn.Parameter((torch.rand(k, d_in, d_out, generator=generator) * 2 - 1) * bound)
        self.bias = nn.Parameter(torch.zeros(k, 1, d_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.baddbmm(self.bias, x, self.weight)


class EnsembleMLP(nn.Module):
    """K two-hidden-layer SiLU MLPs evaluated in one batched pass: (K, B, d_in) -> (K, B, d_out)."""

    def __init__(self, k: int, d_in: int, d_out: int, hidden: int, generator: torch.Generator | None = None):
        super().__init__()
        self.layers = nn.ModuleList([EnsembleLinear(k, d_in, hidden, generator),
                                     EnsembleLinear(k, hidden, hidden, generator),
                                     EnsembleLinear(k, hidden, d_out, generator)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers[:-1]:
            x = F.silu(layer(x))
        return self.layers[-1](x)


class WorldModel(nn.Module):
    """Ensemble dynamics model with reward and cost heads.

    Predicts the state change (scaled by 1/`delta_scale`), the reward and a cost logit.
    Loss: MSE on delta s and r, BCE on c (the cost head is a classifier of c in {0, 1}).
    In imagination the next state and reward are the ensemble mean and the cost is the
    *pessimistic* (max over members) probability, against model exploitation.
    """

    def __init__(self, state_dim: int = 2, action_dim: int = 2, hidden: int = 64, ensemble: int = 3,
                 delta_scale: float = 0.1, generator: torch.Generator | None = None):
        super().__init__()
        if state_dim < 1 or action_dim < 1 or ensemble < 1 or hidden < 1 or delta_scale <= 0:
            raise ValueError("state_dim, action_dim, ensemble, hidden and delta_scale must be positive")
        self.state_dim, self.action_dim, self.ensemble, self.delta_scale = state_dim, action_dim, ensemble, delta_scale
        self.net = EnsembleMLP(ensemble, state_dim + action_dim, state_dim + 2, hidden, generator)

    def _check(self, s: torch.Tensor, a: torch.Tensor) -> None:
        if s.shape[-1] != self.state_dim or a.shape[-1] != self.action_dim or s.shape[:-1] != a.shape[:-1]:
            raise ValueError(f"expected states (..., {self.state_dim}) and actions (..., {self.action_dim}) "
                             f"with equal batch shapes, got {tuple(s.shape)} and {tuple(a.shape)}")

    def members(self, s: torch.Tensor, a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Every member's prediction: next state (K, *B, d_s), reward (K, *B), cost logit (K, *B)."""
        self._check(s, a)
        batch = s.shape[:-1]
        x = torch.cat([s, a], -1).reshape(1, -1, self.state_dim + self.action_dim)  # (1, B, d_s + d_a)
        out = self.net(x.expand(self.ensemble, -1, -1))  # (K, B, d_s + 2)
        out = out.reshape(self.ensemble, *batch, self.state_dim + 2)  # (K, *B, d_s + 2)
        nxt = s + self.delta_scale * out[..., : self.state_dim]
        return nxt, out[..., self.state_dim], out[..., self.state_dim + 1]

    def forward(self, s: torch.Tensor, a: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Imagination step: mean next state, mean reward, max-over-members
        cost probability."""
        nxt, r, c_logit = self.members(s, a)
        return nxt.mean(0), r.mean(0), torch.sigmoid(c_logit).amax(0)

    def loss(self, s: torch.Tensor, a: torch.Tensor, s_next: torch.Tensor, r: torch.Tensor,
             c: torch.Tensor) -> torch.Tensor:
        """MSE on the scaled state change and the reward, BCE on the cost, summed over members."""
        nxt, r_hat, c_logit = self.members(s, a)
        d_err = ((nxt - s_next) / self.delta_scale).pow(2).sum(-1).mean()
        target_c = c.expand_as(c_logit)
        return self.ensemble * (d_err + (r_hat - r).pow(2).mean()
                                + F.binary_cross_entropy_with_logits(c_logit, target_c))


def fit_world_model(model: WorldModel, data: dict[str, torch.Tensor], steps: int, batch: int = 512,
                    lr: float = 3e-3, generator: torch.Generator | None = None,
                    optimizer: torch.optim.Optimizer | None = None) -> list[float]:
    """Minibatch Adam on transitions `data` = {s, a, s_next, r, c} (each (N, ...)); returns losses."""
    n = data["s"].shape[0]
    if any(v.shape[0] != n for v in data.values()):
        raise ValueError("all transition tensors must have the same first dimension")
    opt = optimizer or torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        idx = torch.randint(0, n, (min(batch, n),), generator=generator).to(data["s"].device)
        loss = model.loss(data["s"][idx], data["a"][idx], data["s_next"][idx], data["r"][idx], data["c"][idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return losses


def transitions(episode: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Flatten a batched episode (T, N, ...) from `env.rollout` into transitions (T*N, ...)."""
    obs = episode["obs"]
    return {"s": obs[:-1].reshape(-1, obs.shape[-1]), "a": episode["actions"].reshape(-1, obs.shape[-1]),
            "s_next": obs[1:].reshape(-1, obs.shape[-1]), "r": episode["rewards"].reshape(-1),
            "c": episode["costs"].reshape(-1)}
