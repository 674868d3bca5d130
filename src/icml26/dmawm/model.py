"""The world models: DMAWM (independent agent modules + a shared environment module) and the
joint-latent baseline (identical, except each agent's posterior also reads the others' encodings).

Notation follows the summary of the paper we worked from:
agent module i: e^i = Enc(o^i), h^i_t = GRU(h^i_{t-1}, [z^i_{t-1}, a^i_{t-1}]),
q(z^i_t | h^i_t, e^i_t), x^i_t = [h^i_t, z^i_t]; environment module: u^{1:N} = Transformer(h^{1:N}),
p_psi(z^{1:N} | h^{1:N}) = prod_i p_psi(z^i | u^i), team reward / continuation heads on x^{1:N}.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical, kl_divergence

from .env import N_ACTIONS, OBS_DIM


def mlp(d_in: int, d_hidden: int, d_out: int) -> nn.Sequential:
    """Two hidden layers with ELU (LayerNorm-free: no statistics shared across agents or batch)."""
    return nn.Sequential(nn.Linear(d_in, d_hidden), nn.ELU(), nn.Linear(d_hidden, d_hidden), nn.ELU(),
                         nn.Linear(d_hidden, d_out))


def sample_onehot(logits: torch.Tensor, straight_through: bool = True) -> torch.Tensor:
    """DreamerV2 categorical latent: one-hot sample per group with straight-through gradients.
    logits (..., n_cat, n_classes) -> one-hot of the same shape."""
    probs = logits.softmax(-1)
    idx = torch.multinomial(probs.reshape(-1, probs.shape[-1]), 1).reshape(probs.shape[:-1])  # (...,) per group
    hard = F.one_hot(idx, probs.shape[-1]).to(probs.dtype)
    return hard + probs - probs.detach() if straight_through else hard


@dataclass
class ModelState:
    """x^i = [h^i, z^i] for every agent: h (..., N, hidden), z (..., N, n_cat*n_classes)."""

    h: torch.Tensor
    z: torch.Tensor

    @property
    def x(self) -> torch.Tensor:
        return torch.cat([self.h, self.z], dim=-1)


class WorldModel(nn.Module):
    """Agent modules (shared weights + one-hot agent id) and the environment module.

    `joint_posterior=False` is DMAWM: q(z^i | h^i, e^i). `joint_posterior=True` is the baseline:
    q(z^i | h^i, e^i, mean_{j != i} e^j), a centralized representation; at decentralized execution
    the others' encodings are replaced by zeros (`observe(..., decentralized=True)`).
    """

    def __init__(self, n_agents: int = 2, hidden: int = 64, n_cat: int = 8, n_classes: int = 8,
                 attn_heads: int = 2, attn_layers: int = 1, joint_posterior: bool = False):
        super().__init__()
        if n_agents < 2:
            raise ValueError(f"a multi-agent world model needs n_agents >= 2, got {n_agents}")
        self.n_agents, self.hidden, self.n_cat, self.n_classes = n_agents, hidden, n_cat, n_classes
        self.z_dim = n_cat * n_classes
        self.x_dim = hidden + self.z_dim
        self.joint_posterior = joint_posterior
        # agent module (Sec. "agent module", shared across agents, agent id as input)
        self.encoder = mlp(OBS_DIM + n_agents, hidden, hidden)
        self.gru = nn.GRUCell(self.z_dim + N_ACTIONS, hidden)
        post_in = hidden + hidden * (2 if joint_posterior else 1)
        self.posterior = mlp(post_in, hidden, self.z_dim)
        self.decoder = mlp(self.x_dim + n_agents, hidden, OBS_DIM)
        # environment module: interaction predictor + joint prior + team heads
        self.agent_embed = nn.Parameter(torch.randn(n_agents, hidden) * 0.1)
        layer = nn.TransformerEncoderLayer(hidden, attn_heads, dim_feedforward=2 * hidden, dropout=0.0,
                                           batch_first=True)
        self.interaction = nn.TransformerEncoder(layer, attn_layers, enable_nested_tensor=False)
        self.prior = mlp(hidden, hidden, self.z_dim)
        self.reward_head = mlp(self.x_dim, hidden, 1)
        self.cont_head = mlp(self.x_dim, hidden, 1)

    # ----- agent module -------------------------------------------------------------------
    def agent_ids(self, shape: tuple[int, ...], device) -> torch.Tensor:
        """One-hot agent id broadcast to shape (..., N, N)."""
        return torch.eye(self.n_agents, device=device).expand(*shape, self.n_agents, self.n_agents)

    def encode(self, obs: torch.Tensor) -> torch.Tensor:
        """e^i = Enc(o^i, id_i); obs (..., N, OBS_DIM) -> (..., N, hidden). Per agent, no mixing."""
        if obs.shape[-1] != OBS_DIM or obs.shape[-2] != self.n_agents:
            raise ValueError(f"obs must have shape (..., {self.n_agents}, {OBS_DIM}), got {tuple(obs.shape)}")
        return self.encoder(torch.cat([obs, self.agent_ids(obs.shape[:-2], obs.device)], -1))

    def posterior_logits(self, h: torch.Tensor, e: torch.Tensor,
                         decentralized: bool = False) -> torch.Tensor:
        """q(z^i | h^i, e^i) (DMAWM) or q(z^i | h^i, e^i, mean_{j!=i} e^j)
        (joint baseline).
        h, e: (..., N, hidden) -> logits (..., N, n_cat, n_classes)."""
        inp = [h, e]
        if self.joint_posterior:
            # (..., N, hidden): mean of j != i
            others = (e.sum(-2, keepdim=True) - e) / (self.n_agents - 1)
            inp.append(torch.zeros_like(others) if decentralized else others)
        return self.posterior(torch.cat(inp, -1)).unflatten(
            -1, (self.n_cat, self.n_classes))

    def initial_state(self, batch: int, device) -> ModelState:
        return ModelState(torch.zeros(batch, self.n_agents, self.hidden, device=device),
                          torch.zeros(batch, self.n_agents, self.z_dim, device=device))

    def recurrent(self, state: ModelState,
                  action_onehot: torch.Tensor) -> torch.Tensor:
        """h^i_t = GRU(h^i_{t-1}, [z^i_{t-1}, a^i_{t-1}]) for every agent
        independently.
        state.h (B, N, hidden), action_onehot (B, N, A) -> (B, N, hidden)."""
        B, N, _ = state.h.shape
        # (B*N, z+A)
        inp = torch.cat([state.z, action_onehot], -1).reshape(B * N, -1)
        # (B, N, hidden)
        return self.gru(inp, state.h.reshape(B * N, -1)).reshape(B, N, -1)

    def observe(self, obs: torch.Tensor, prev_actions: torch.Tensor, decentralized: bool = False,
                sample: bool = True) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Filter a real sequence with the agent modules.

        obs (B, T, N, OBS_DIM), prev_actions (B, T, N) int (a_{t-1}; entry t=0 is ignored).
        Returns h (B, T, N, hidden), z (B, T, N, z_dim), posterior logits (B, T, N, n_cat, n_classes).
        """
        if obs.dim() != 4 or prev_actions.shape != obs.shape[:3]:
            raise ValueError(f"need obs (B, T, N, D) and prev_actions (B, T, N); got {tuple(obs.shape)} "
                             f"and {tuple(prev_actions.shape)}")
        B, T = obs.shape[:2]
        e = self.encode(obs)  # (B, T, N, hidden)
        a = F.one_hot(prev_actions.long(), N_ACTIONS).float()  # (B, T, N, A)
        a[:, 0] = 0.0
        state = self.initial_state(B, obs.device)
        hs, zs, logits = [], [], []
        for t in range(T):
            h = self.recurrent(state, a[:, t])
            lg = self.posterior_logits(h, e[:, t], decentralized)
            z = (sample_onehot(lg) if sample else F.one_hot(lg.argmax(-1), self.n_classes).float()).flatten(-2)
            state = ModelState(h, z)
            hs.append(h); zs.append(z); logits.append(lg)
        return torch.stack(hs, 1), torch.stack(zs, 1), torch.stack(logits, 1)

    # ----- environment module -------------------------------------------------------------
    def interaction_tokens(self, h: torch.Tensor, return_attention: bool = False):
        """u^{1:N} = Transformer(h^{1:N} + agent embeddings); h (..., N, hidden) -> (..., N, hidden).
        With `return_attention`, also the first layer's head-averaged attention (..., N, N)."""
        lead = h.shape[:-2]
        tokens = (h + self.agent_embed).reshape(-1, self.n_agents, self.hidden)  # (M, N, hidden)
        u = self.interaction(tokens).reshape(*lead, self.n_agents, self.hidden)
        if not return_attention:
            return u
        layer = self.interaction.layers[0]
        _, attn = layer.self_attn(tokens, tokens, tokens, need_weights=True, average_attn_weights=True)
        return u, attn.reshape(*lead, self.n_agents, self.n_agents)

    def prior_logits(self, h: torch.Tensor) -> torch.Tensor:
        """p_psi(z^i | u^i), the factor of the joint prior;
        h (..., N, hidden) -> (..., N, n_cat, n_classes)."""
        return self.prior(self.interaction_tokens(h)).unflatten(
            -1, (self.n_cat, self.n_classes))

    def reward(self, x: torch.Tensor) -> torch.Tensor:
        """Team reward p(r | x^{1:N}) (mean-pooled over agents); x (..., N, x_dim) -> (...,)."""
        return self.reward_head(x).mean(-2).squeeze(-1)

    def continuation_logit(self, x: torch.Tensor) -> torch.Tensor:
        """Continuation p(gamma | x^{1:N}) as a Bernoulli logit; x (..., N, x_dim) -> (...,)."""
        return self.cont_head(x).mean(-2).squeeze(-1)

    def imagine_step(self, state: ModelState,
                     action_onehot: torch.Tensor) -> ModelState:
        """One imagination step: per-agent GRU, then
        z^{1:N} ~ prod_i p_psi(z^i | u^i)."""
        h = self.recurrent(state, action_onehot)
        z = sample_onehot(self.prior_logits(h),
                          straight_through=False).flatten(-2)  # (B, N, z_dim)
        return ModelState(h, z)


def kl_balanced(post_logits: torch.Tensor, prior_logits: torch.Tensor,
                balance: float = 0.8, free_nats: float = 1.0) -> torch.Tensor:
    """DreamerV2 KL balancing, per agent: alpha KL(sg(q)||p)
    + (1-alpha) KL(q||sg(p)), each clamped below at `free_nats`. Inputs
    (..., N, n_cat, n_classes); returns the mean over (...) and the sum over
    agents, i.e. KL(prod_i q_i || prod_i p_psi(.|u^i))
    = sum_i KL(q_i || p_i)."""
    def kl(q, p):  # sum over the n_cat groups -> (..., N)
        return kl_divergence(Categorical(logits=q),
                             Categorical(logits=p)).sum(-1)
    lhs = kl(post_logits.detach(), prior_logits).clamp(min=free_nats)
    rhs = kl(post_logits, prior_logits.detach()).clamp(min=free_nats)
    return (balance * lhs + (1.0 - balance) * rhs).sum(-1).mean()


def world_model_loss(model: WorldModel, batch: dict, kl_scale: float = 1.0,
                     balance: float = 0.8,
                     free_nats: float = 1.0) -> tuple[torch.Tensor, dict]:
    """L_WM (summary, "World-model loss"): sum_i -log p(o^i|x^i)
    - log p(r|x^{1:N}) - log p(gamma|x^{1:N}) + beta KL(prod_i q_i || p_psi).
    Gaussian log-likelihoods are unit-variance MSE.

    batch: obs (B, T, N, D), prev_act (B, T, N), reward (B, T), cont (B, T).
    """
    h, z, post = model.observe(batch["obs"], batch["prev_act"])
    x = torch.cat([h, z], -1)  # (B, T, N, x_dim)
    ids = model.agent_ids(x.shape[:-2], x.device)
    recon = 0.5 * (model.decoder(torch.cat([x, ids], -1))
                   - batch["obs"]).pow(2).sum(-1).sum(-1).mean()
    rew = 0.5 * (model.reward(x) - batch["reward"]).pow(2).mean()
    cont = F.binary_cross_entropy_with_logits(model.continuation_logit(x),
                                              batch["cont"])
    # all (B*T) steps at once: h does not depend on the prior
    prior = model.prior_logits(h)
    kl = kl_balanced(post, prior, balance, free_nats)
    loss = recon + rew + cont + kl_scale * kl
    return loss, {"recon": recon.item(), "reward": rew.item(),
                  "cont": cont.item(), "kl": kl.item()}
