"""The three models of the chapter and the parameter accounting.

- `PrismLM`: PRISM-pure, DynamicRoSE -> N GHC layers -> norm -> bridge -> tied head (no attention).
- `PrismHybridLM`: the same wave stream, then the "periscope" GELU(LN(W [bridge; e])) that
  fuses it with the real particle embedding, then standard attention layers, then the tied head.
- `TransformerLM`: the baseline, pre-LN encoder blocks (GELU FFN) whose attention carries
  position by rotary embedding (RoPE), as the official code's x-transformers encoders do;
  its FFN width is solved so that its non-embedding parameters match the hybrid's
  (`matched_ffn_dim`). The hybrid's attention layer is the same block.
All heads are tied to the real token embedding E; "embedding" parameters = E only.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from .config import PrismConfig
from .interventions import Intervention, intervene_complex, intervene_real
from .layers import Bridge, DynamicRoSE, GatedHarmonicConv, make_norm, project_unit

NO_INTERVENTION = Intervention()


def _check_tokens(tokens: torch.Tensor, vocab: int) -> None:
    if tokens.dim() != 2 or tokens.dtype != torch.long:
        raise ValueError(f"tokens must be a (batch, length) long tensor, got {tuple(tokens.shape)} {tokens.dtype}")
    if tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) >= vocab):
        raise ValueError(f"token ids must lie in [0, {vocab}), got range [{int(tokens.min())}, {int(tokens.max())}]")


class PrismEncoder(nn.Module):
    """DynamicRoSE and the GHC stack; returns every state (embedding output, after each layer)."""

    def __init__(self, vocab_size: int, d: int, n_layers: int, norm: str = "unit", filter_kind: str = "implicit",
                 filter_hidden: int = 64, filter_freqs: int = 32, max_len: int = 512, dropout: float = 0.0):
        super().__init__()
        self.norm_mode = norm
        self.rose = DynamicRoSE(vocab_size, d)
        self.layers = nn.ModuleList(GatedHarmonicConv(d, norm, filter_kind, filter_hidden, filter_freqs, max_len, dropout)
                                    for _ in range(n_layers))
        self.final_norm = make_norm(norm, d)

    def forward(self, tokens: torch.Tensor,
                intervention: Intervention = NO_INTERVENTION,
                return_states: bool = False):
        z, e = self.rose(tokens)
        if self.norm_mode == "unit":
            z = project_unit(z)  # phase only from the start
        z = intervene_complex(z, intervention, 0)
        states = [z]
        for k, layer in enumerate(self.layers, start=1):
            z = intervene_complex(layer(z), intervention, k)
            states.append(z)
        out = self.final_norm(z)
        return (out, e, states) if return_states else (out, e)


class PrismLM(nn.Module):
    """PRISM-pure: no attention, no particle bypass; every bit of context goes through waves."""

    def __init__(self, vocab_size: int, d: int, n_layers: int, **kw):
        super().__init__()
        self.vocab_size = vocab_size
        self.encoder = PrismEncoder(vocab_size, d, n_layers, **kw)
        self.bridge = Bridge(d)
        self.out_bias = nn.Parameter(torch.zeros(vocab_size))

    @property
    def embedding(self) -> nn.Embedding:
        return self.encoder.rose.embed

    def forward(self, tokens: torch.Tensor, intervention: Intervention = NO_INTERVENTION) -> torch.Tensor:
        """(B, L) ids -> (B, L, V) logits."""
        _check_tokens(tokens, self.vocab_size)
        z, _ = self.encoder(tokens, intervention)
        return self.bridge(z) @ self.embedding.weight.T + self.out_bias


def rotary(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotary position embedding (RoPE, Su et al. 2021) of queries or keys x (B, H, L, Dh):
    each pair of channels (2m, 2m+1) at position p is rotated by the angle p * base^(-2m/Dh),
    so that the score q_p . k_r depends on the positions only through p - r."""
    L, Dh = x.shape[-2], x.shape[-1]
    if Dh % 2:
        raise ValueError(f"rotary embedding needs an even head dimension, got {Dh}")
    inv_freq = base ** (-torch.arange(0, Dh, 2, device=x.device, dtype=torch.float32) / Dh)  # (Dh/2,)
    angle = torch.arange(L, device=x.device, dtype=torch.float32)[:, None] * inv_freq  # (L, Dh/2)
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    x1, x2 = x[..., 0::2], x[..., 1::2]  # (B, H, L, Dh/2) each
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], -1).flatten(-2)  # (B, H, L, Dh)


class RotaryEncoderLayer(nn.Module):
    """Pre-LN Transformer encoder block with RoPE in the attention (the official code's
    x-transformers `Encoder(rotary_pos_emb=True)` layers; PyTorch's `nn.TransformerEncoderLayer`
    has no rotary option). x -> x + Attn(LN(x)) -> x + FFN(LN(x)), FFN = W2 GELU(W1 .).
    Same parameter layout as `nn.TransformerEncoderLayer`: fused q/k/v and output
    projections with biases, the FFN, two LayerNorms."""

    def __init__(self, d: int, n_heads: int, ffn: int, dropout: float = 0.0):
        super().__init__()
        if d % n_heads or (d // n_heads) % 2:
            raise ValueError(f"d={d} must split into n_heads={n_heads} heads of even size (rotary embedding)")
        self.n_heads, self.dropout = n_heads, dropout
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.out_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ffn = nn.Sequential(nn.Linear(d, ffn), nn.GELU(), nn.Dropout(dropout), nn.Linear(ffn, d))
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, L, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(B, L, 3, self.n_heads, d // self.n_heads).permute(2, 0, 3, 1, 4)
        # q, k, v: (B, H, L, Dh); bidirectional attention (a masked-token encoder)
        a = F.scaled_dot_product_attention(rotary(q), rotary(k), v, dropout_p=self.dropout if self.training else 0.0)
        x = x + self.drop(self.out_proj(a.transpose(1, 2).reshape(B, L, d)))  # (B, H, L, Dh) -> (B, L, d)
        return x + self.drop(self.ffn(self.norm2(x)))


def _attention_layer(d: int, heads: int, ffn: int, dropout: float) -> RotaryEncoderLayer:
    return RotaryEncoderLayer(d, heads, ffn, dropout)


class PrismHybridLM(nn.Module):
    """PRISM wave stream + periscope fusion with the particle embedding + attention refiner."""

    def __init__(self, vocab_size: int, d: int, n_layers: int, n_attn_layers: int = 1, n_heads: int = 4,
                 attn_ffn: int = 128, dropout: float = 0.0, **kw):
        super().__init__()
        self.vocab_size = vocab_size
        self.encoder = PrismEncoder(vocab_size, d, n_layers, dropout=dropout, **kw)
        self.bridge = Bridge(d)
        self.periscope = nn.Sequential(nn.Linear(2 * d, d), nn.LayerNorm(d), nn.GELU())
        self.attn = nn.ModuleList(_attention_layer(d, n_heads, attn_ffn, dropout) for _ in range(n_attn_layers))
        self.final_ln = nn.LayerNorm(d)
        self.out_bias = nn.Parameter(torch.zeros(vocab_size))

    @property
    def embedding(self) -> nn.Embedding:
        return self.encoder.rose.embed

    def features(self, tokens: torch.Tensor,
                 intervention: Intervention = NO_INTERVENTION) -> torch.Tensor:
        """The final real states before the tied head, (B, L, d) (what the
        topic probe reads)."""
        _check_tokens(tokens, self.vocab_size)
        z, e = self.encoder(tokens, intervention)
        # (B, L, 2d) -> (B, L, d)
        h = self.periscope(torch.cat([self.bridge(z), e], -1))
        for layer in self.attn:
            h = layer(h)
        return self.final_ln(h)

    def forward(self, tokens: torch.Tensor, intervention: Intervention = NO_INTERVENTION) -> torch.Tensor:
        return self.features(tokens, intervention) @ self.embedding.weight.T + self.out_bias


class TransformerLM(nn.Module):
    """Real-valued baseline: E[x] * sqrt(d) -> pre-LN encoder layers with rotary position
    embedding (as the official x-transformers baseline) -> LN -> tied head."""

    def __init__(self, vocab_size: int, d: int, depth: int, n_heads: int, ffn: int, dropout: float = 0.0):
        super().__init__()
        self.vocab_size, self.d = vocab_size, d
        self.embed = nn.Embedding(vocab_size, d)
        nn.init.normal_(self.embed.weight, std=d ** -0.5)
        self.layers = nn.ModuleList(_attention_layer(d, n_heads, ffn, dropout) for _ in range(depth))
        self.final_ln = nn.LayerNorm(d)
        self.out_bias = nn.Parameter(torch.zeros(vocab_size))

    @property
    def embedding(self) -> nn.Embedding:
        return self.embed

    def features(self, tokens: torch.Tensor, intervention: Intervention = NO_INTERVENTION) -> torch.Tensor:
        """The final real states before the tied head, (B, L, d) (what the topic probe reads)."""
        _check_tokens(tokens, self.vocab_size)
        h = self.embed(tokens) * math.sqrt(self.d)  # (B, L, d); positions enter inside attention (RoPE)
        h = intervene_real(h, intervention, 0)
        for k, layer in enumerate(self.layers, start=1):
            h = intervene_real(layer(h), intervention, k)
        return self.final_ln(h)

    def forward(self, tokens: torch.Tensor, intervention: Intervention = NO_INTERVENTION) -> torch.Tensor:
        return self.features(tokens, intervention) @ self.embed.weight.T + self.out_bias


def count_params(model: nn.Module) -> dict[str, int]:
    """Total, embedding (the tied token table E) and non-embedding parameter counts."""
    total = sum(p.numel() for p in model.parameters())
    emb = model.embedding.weight.numel()
    return {"total": total, "embedding": emb, "non_embedding": total - emb}


def _attn_layer_params(d: int, ffn: int) -> int:
    """Parameters of one RotaryEncoderLayer: q/k/v and output projections, FFN, two LayerNorms."""
    return (3 * d * d + 3 * d) + (d * d + d) + (d * ffn + ffn) + (ffn * d + d) + 4 * d


def matched_ffn_dim(target_non_embedding: int, vocab_size: int, d: int,
                    depth: int) -> int:
    """The FFN width that makes the Transformer's non-embedding count closest
    to the target. Raises ValueError when even a width of d would exceed the
    target (use fewer layers)."""
    # layers without FFN, final LN, head bias
    fixed = depth * _attn_layer_params(d, 0) + 2 * d + vocab_size
    # each FFN unit: d in-weights, 1 bias, d out-weights
    per_unit = depth * (2 * d + 1)
    ffn = round((target_non_embedding - fixed) / per_unit)
    if ffn < d:
        raise ValueError(f"cannot match {target_non_embedding} non-embedding parameters with depth={depth}, d={d} "
                         f"(FFN width would be {ffn} < d); lower baseline_depth")
    return int(ffn)


def build_models(config: PrismConfig, vocab_size: int, device=None) -> dict[str, nn.Module]:
    """PRISM-pure in both normalisation modes, the hybrid and the matched Transformer."""
    kw = dict(filter_kind=config.filter_kind, filter_hidden=config.filter_hidden, filter_freqs=config.filter_freqs,
              max_len=config.max_len)
    d = config.d_model
    models = {
        "prism_unit": PrismLM(vocab_size, d, config.n_prism_layers, norm="unit", dropout=config.dropout, **kw),
        "prism_rms": PrismLM(vocab_size, d, config.n_prism_layers, norm="rms", dropout=config.dropout, **kw),
        "hybrid": PrismHybridLM(vocab_size, d, config.n_prism_layers, config.n_attn_layers, config.n_heads,
                                config.attn_ffn, config.dropout, norm="rms", **kw),
    }
    target = count_params(models["hybrid"])["non_embedding"]
    ffn = matched_ffn_dim(target, vocab_size, d, config.baseline_depth)
    models["transformer"] = TransformerLM(vocab_size, d, config.baseline_depth, config.n_heads, ffn, config.dropout)
    return {k: m.to(device) for k, m in models.items()}
