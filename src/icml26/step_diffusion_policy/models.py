"""The two networks: the diffusion policy's conditional temporal denoiser eps_theta(A, k, o)
and STEP's spatiotemporal consistency predictor f_phi(A_prev, o)."""

from __future__ import annotations

import math

import torch
from torch import nn


def sinusoidal_embedding(x: torch.Tensor, dim: int) -> torch.Tensor:
    """Transformer-style sinusoidal features of a (B,) tensor of timesteps/positions: (B, dim)."""
    half = dim // 2
    freq = torch.exp(-math.log(10000.0) * torch.arange(half, device=x.device, dtype=torch.float32) / max(half - 1, 1))
    arg = x.float()[:, None] * freq[None]  # (B, half)
    return torch.cat([arg.sin(), arg.cos()], -1)


class FiLMResBlock1D(nn.Module):
    """Two Conv1d-GroupNorm-Mish layers; the global condition sets a per-channel scale and
    bias after the first (FiLM), plus a residual path (the block of Chi et al.'s ConditionalUnet1D)."""

    def __init__(self, channels: int, cond_dim: int, kernel: int = 5):
        super().__init__()
        groups = min(8, channels)
        self.conv1 = nn.Sequential(nn.Conv1d(channels, channels, kernel, padding=kernel // 2),
                                   nn.GroupNorm(groups, channels), nn.Mish())
        self.conv2 = nn.Sequential(nn.Conv1d(channels, channels, kernel, padding=kernel // 2),
                                   nn.GroupNorm(groups, channels), nn.Mish())
        self.film = nn.Sequential(nn.Mish(), nn.Linear(cond_dim, 2 * channels))

    def forward(self, x: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        h = self.conv1(x)  # (B, C, H)
        scale, bias = self.film(cond).unsqueeze(-1).chunk(2, dim=1)  # each (B, C, 1)
        h = self.conv2(scale * h + bias)
        return x + h


class ConditionalTemporalDenoiser(nn.Module):
    """eps_theta(A^k, k, o): a 1D temporal convolution network over the action chunk
    (B, H, d_a) with FiLM conditioning on [timestep embedding, flattened T_o observations].
    A small, non-downsampling version of ConditionalUnet1D (see the chapter's deviations)."""

    def __init__(self, action_dim: int, obs_dim: int, obs_horizon: int, channels: int = 64,
                 n_blocks: int = 3, time_dim: int = 64, kernel: int = 5):
        super().__init__()
        self.action_dim, self.obs_dim, self.obs_horizon = action_dim, obs_dim, obs_horizon
        self.time_dim = time_dim
        self.time_mlp = nn.Sequential(nn.Linear(time_dim, 2 * time_dim), nn.Mish(), nn.Linear(2 * time_dim, time_dim))
        cond_dim = time_dim + obs_dim * obs_horizon
        self.inp = nn.Conv1d(action_dim, channels, 1)
        self.blocks = nn.ModuleList(FiLMResBlock1D(channels, cond_dim, kernel) for _ in range(n_blocks))
        self.out = nn.Sequential(nn.Conv1d(channels, channels, kernel, padding=kernel // 2), nn.Mish(),
                                 nn.Conv1d(channels, action_dim, 1))

    def forward(self, sample: torch.Tensor, timestep: torch.Tensor | int, obs: torch.Tensor) -> torch.Tensor:
        """sample (B, H, d_a), timestep (B,) or scalar, obs (B, T_o, d_o) -> eps (B, H, d_a)."""
        if sample.dim() != 3 or sample.shape[-1] != self.action_dim:
            raise ValueError(f"sample must be (B, H, {self.action_dim}), got {tuple(sample.shape)}")
        if obs.shape[1:] != (self.obs_horizon, self.obs_dim) or obs.shape[0] != sample.shape[0]:
            raise ValueError(f"obs must be (B, {self.obs_horizon}, {self.obs_dim}), got {tuple(obs.shape)}")
        B = sample.shape[0]
        t = torch.as_tensor(timestep, device=sample.device).reshape(-1).expand(B)  # (B,)
        cond = torch.cat([self.time_mlp(sinusoidal_embedding(t, self.time_dim)), obs.reshape(B, -1)], -1)
        x = self.inp(sample.transpose(1, 2))  # (B, d_a, H) -> (B, C, H)
        for block in self.blocks:
            x = block(x, cond)
        return self.out(x).transpose(1, 2)  # (B, C, H) -> (B, H, d_a)


class ConditionalMLPDenoiser(nn.Module):
    """eps_theta(A^k, k, o) as an MLP over the flattened chunk (B, H*d_a) with FiLM residual
    blocks conditioned on [timestep embedding, flattened observations]. The CPU-sized stand-in
    for the temporal U-Net used by the `reduced` preset (conv layers are ~10x slower on CPU)."""

    def __init__(self, action_dim: int, obs_dim: int, obs_horizon: int, pred_horizon: int, width: int = 128,
                 n_blocks: int = 3, time_dim: int = 32):
        super().__init__()
        self.action_dim, self.obs_dim, self.obs_horizon, self.pred_horizon = action_dim, obs_dim, obs_horizon, pred_horizon
        self.time_dim, self.n_blocks = time_dim, n_blocks
        self.time_mlp = nn.Sequential(nn.Linear(time_dim, 2 * time_dim), nn.Mish(), nn.Linear(2 * time_dim, time_dim))
        self.inp = nn.Linear(pred_horizon * action_dim, width)
        self.film = nn.Linear(time_dim + obs_dim * obs_horizon, 2 * width * n_blocks)
        self.lin1 = nn.ModuleList(nn.Linear(width, width) for _ in range(n_blocks))
        self.lin2 = nn.ModuleList(nn.Linear(width, width) for _ in range(n_blocks))
        self.out = nn.Linear(width, pred_horizon * action_dim)

    def forward(self, sample: torch.Tensor, timestep: torch.Tensor | int, obs: torch.Tensor) -> torch.Tensor:
        """sample (B, H, d_a), timestep (B,) or scalar, obs (B, T_o, d_o) -> eps (B, H, d_a)."""
        if sample.dim() != 3 or sample.shape[1:] != (self.pred_horizon, self.action_dim):
            raise ValueError(f"sample must be (B, {self.pred_horizon}, {self.action_dim}), got {tuple(sample.shape)}")
        if obs.shape[1:] != (self.obs_horizon, self.obs_dim) or obs.shape[0] != sample.shape[0]:
            raise ValueError(f"obs must be (B, {self.obs_horizon}, {self.obs_dim}), got {tuple(obs.shape)}")
        B = sample.shape[0]
        t = torch.as_tensor(timestep, device=sample.device).reshape(-1).expand(B)  # (B,)
        cond = torch.cat([self.time_mlp(sinusoidal_embedding(t, self.time_dim)), obs.reshape(B, -1)], -1)
        films = self.film(cond).chunk(2 * self.n_blocks, -1)  # 2 n_blocks x (B, W)
        h = self.inp(sample.reshape(B, -1))  # (B, H, d_a) -> (B, H*d_a) -> (B, W)
        for i in range(self.n_blocks):
            z = self.lin1[i](h) * (1 + films[2 * i]) + films[2 * i + 1]
            h = h + self.lin2[i](nn.functional.mish(z))
        return self.out(h).reshape(B, self.pred_horizon, self.action_dim)  # (B, H*d_a) -> (B, H, d_a)


class ActionPredictorTransformer(nn.Module):
    """STEP's spatiotemporal consistency predictor f_phi: Â_t = f_phi(A_prev, o_t).

    Condition: the H_p previously executed actions and the T_o observations, each embedded
    linearly, plus sinusoidal positions, concatenated into (B, H_p+T_o, d) and encoded by a
    pre-norm Transformer encoder (GELU). Then H learnable queries (init N(0, 0.02)) pass
    through blocks of self-attention -> cross-attention to the condition -> FFN (4d),
    post-norm, dropout 0.1; a final LayerNorm and Linear(d -> d_a) give Â_t (B, H, d_a).
    Trained with plain MSE to the expert chunk (policy.predictor_loss).

    `use_history=False` is the spatial-only ablation (BRIDGER-like start): the condition holds
    the T_o observations only, and `prev_action` is ignored.
    """

    def __init__(self, action_dim: int, obs_dim: int, obs_horizon: int, pred_horizon: int, prev_horizon: int,
                 dim: int = 64, heads: int = 4, enc_layers: int = 2, dec_layers: int = 2, dropout: float = 0.1,
                 use_history: bool = True):
        super().__init__()
        self.use_history = bool(use_history)
        self.action_dim, self.obs_dim = action_dim, obs_dim
        self.obs_horizon, self.pred_horizon, self.prev_horizon, self.dim = obs_horizon, pred_horizon, prev_horizon, dim
        self.prev_emb = nn.Linear(action_dim, dim)
        self.obs_emb = nn.Linear(obs_dim, dim)
        enc = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout, activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(enc, enc_layers, enable_nested_tensor=False)
        dec = nn.TransformerDecoderLayer(dim, heads, 4 * dim, dropout, activation="gelu", batch_first=True)
        self.decoder = nn.TransformerDecoder(dec, dec_layers)
        self.queries = nn.Parameter(0.02 * torch.randn(1, pred_horizon, dim))
        self.head = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, action_dim))
        pos = torch.arange(prev_horizon + obs_horizon)
        self.register_buffer("pos", sinusoidal_embedding(pos, dim)[None], persistent=False)  # (1, H_p+T_o, d)

    def forward(self, prev_action: torch.Tensor, obs: torch.Tensor) -> torch.Tensor:
        """prev_action (B, H_p, d_a), obs (B, T_o, d_o), both normalised -> Â_t (B, H, d_a)."""
        if prev_action.dim() != 3 or prev_action.shape[1:] != (self.prev_horizon, self.action_dim):
            raise ValueError(f"prev_action must be (B, {self.prev_horizon}, {self.action_dim}), got {tuple(prev_action.shape)}")
        if obs.dim() != 3 or obs.shape[1:] != (self.obs_horizon, self.obs_dim) or obs.shape[0] != prev_action.shape[0]:
            raise ValueError(f"obs must be (B, {self.obs_horizon}, {self.obs_dim}), got {tuple(obs.shape)}")
        # region: predictor forward
        # spatiotemporal: keys/values from the executed actions and the
        # observations
        if self.use_history:
            cond = torch.cat([self.prev_emb(prev_action), self.obs_emb(obs)],
                             1) + self.pos  # (B, H_p+T_o, d)
        else:  # spatial only: keys/values from the observations alone
            cond = self.obs_emb(obs) + self.pos[:, self.prev_horizon:]  # (B, T_o, d)
        memory = self.encoder(cond)
        # (B, H, d): the action queries
        q = self.queries.expand(prev_action.shape[0], -1, -1)
        # each block: self-attention among the action queries, cross-attention
        # to the condition, FFN
        return self.head(self.decoder(q, memory))  # (B, H, d_a)
        # endregion
