"""Training: the annealed Discrete Transformer, the no-anneal ablation (baseline a) and a
standard `nn.TransformerEncoder` (baseline b), all on the same batches."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn

from icml26.common import progress

from .config import DTConfig
from .data import TaskData
from .model import DiscreteTransformer, temperature


def masked_loss(pred: torch.Tensor, data: TaskData) -> torch.Tensor:
    """MSE on the positions where the target is defined (both tasks are trained as regression)."""
    if pred.shape != data.y.shape:
        raise ValueError(f"prediction shape {tuple(pred.shape)} != target shape {tuple(data.y.shape)}")
    return ((pred - data.y) ** 2)[data.mask].mean()


@dataclass
class TrainResult:
    model: nn.Module
    final_tau: float
    anneal: bool
    history: dict[str, list[float]] = field(default_factory=dict)


def train_discrete_transformer(config: DTConfig, train: TaskData, anneal: bool = True,
                               seed: int = 0, desc: str | None = None,
                               gumbel_attention: bool = False) -> TrainResult:
    """Adam on the masked MSE. With `anneal`, tau follows the geometric schedule 3 -> 0.01
    for the Gumbel reads *and* the attention softmax; without it (baseline a) tau stays at
    `noanneal_tau`. Logs loss, tau and the selection entropies every `log_every` steps."""
    device = train.x.device
    torch.manual_seed(seed)
    model = DiscreteTransformer(train.x.shape[1], config.n_layers, config.n_heads, config.mlp_vars_in,
                                config.mlp_hidden, gumbel_attention=gumbel_attention).to(device)
    struct = [p for n, p in model.named_parameters() if "logits" in n or "theta" in n]
    rest = [p for n, p in model.named_parameters() if not ("logits" in n or "theta" in n)]
    opt = torch.optim.Adam([{"params": struct, "lr": config.lr_struct}, {"params": rest, "lr": config.lr}])
    gen = torch.Generator().manual_seed(seed + 1)
    hist: dict[str, list[float]] = {k: [] for k in ("step", "loss", "tau", "h_read", "h_attn", "h_mean")}
    probe = train.x[:256]
    bar = progress(range(config.steps), desc=desc or ("anneal" if anneal else "no anneal"), leave=False)
    tau = config.noanneal_tau
    # region: training step
    for step in bar:
        st = (anneal and config.straight_through_frac > 0
              and step >= (1 - config.straight_through_frac) * config.steps)
        for r in model.reads():
            r.straight_through = st
        tau = (temperature(step, config.steps, config.tau_start, config.tau_end)
               if anneal else config.noanneal_tau)
        idx = torch.randint(0, len(train), (config.batch_size,),
                            generator=gen).to(device)
        batch = train.batch(idx)
        # None: no noise anywhere
        noise_gen = gen if (config.gumbel_noise or gumbel_attention) else None
        for r in model.reads():
            r.noise = config.gumbel_noise
        loss = masked_loss(
            model(batch.x, tau, hard=False, generator=noise_gen), batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
        # endregion
        if step % config.log_every == 0 or step == config.steps - 1:
            h = model.selection_entropy(tau, probe)
            for k, v in (("step", step), ("loss", float(loss.detach())), ("tau", tau), ("h_read", h["read"]),
                         ("h_attn", h["attn"]), ("h_mean", h["mean"])):
                hist[k].append(float(v))
    for r in model.reads():
        r.straight_through = False
    model.eval()
    return TrainResult(model, tau, anneal, hist)


class StandardTransformer(nn.Module):
    """Baseline (b): a causal `nn.TransformerEncoder` on the scalar inputs (linear embedding
    plus a learned position embedding), with a linear readout."""

    def __init__(self, max_len: int, d_model: int = 32, n_layers: int = 2, n_heads: int = 2):
        super().__init__()
        self.embed = nn.Linear(1, d_model)
        self.pos = nn.Parameter(0.1 * torch.randn(max_len, d_model))
        layer = nn.TransformerEncoderLayer(d_model, n_heads, 2 * d_model, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, 1)

    def _mask(self, N: int, device) -> torch.Tensor:
        return torch.triu(torch.full((N, N), float("-inf"), device=device), 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (B, N) -> predictions (B, N)."""
        h = self.embed(x[..., None]) + self.pos[: x.shape[1]]  # (B, N, d)
        return self.head(self.encoder(h, mask=self._mask(x.shape[1], x.device), is_causal=True))[..., 0]

    @torch.no_grad()
    def attention_maps(self, x: torch.Tensor) -> list[torch.Tensor]:
        """Per-head attention (B, N, N) of every layer, recomputed layer by layer."""
        mask = self._mask(x.shape[1], x.device)
        h = self.embed(x[..., None]) + self.pos[: x.shape[1]]
        maps = []
        for layer in self.encoder.layers:
            _, w = layer.self_attn(h, h, h, attn_mask=mask, need_weights=True, average_attn_weights=False)
            maps += [w[:, k] for k in range(w.shape[1])]  # (B, N, N) per head
            h = layer(h, src_mask=mask, is_causal=True)
        return maps


def train_standard_transformer(config: DTConfig, train: TaskData, seed: int = 0) -> StandardTransformer:
    """Adam (lr 3e-3) on the same masked MSE and batches as the Discrete Transformer."""
    torch.manual_seed(seed)
    model = StandardTransformer(train.x.shape[1], config.std_d_model, config.n_layers, config.n_heads).to(train.x.device)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    gen = torch.Generator().manual_seed(seed + 2)
    for _ in progress(range(config.std_steps), desc="standard transformer", leave=False):
        idx = torch.randint(0, len(train), (config.batch_size,), generator=gen).to(train.x.device)
        batch = train.batch(idx)
        loss = masked_loss(model(batch.x), batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    return model
