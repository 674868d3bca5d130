"""KSKT blocks and their assembly into a Hugging Face `transformers` Qwen3.

Components (paper §3.2-3.5, App. A; the official code's module names in brackets):
`DualStreamAttention` [dsaa], `MutualUnderstandingPE` [mupe], `BipolarReasoning` [bipolar],
`SelfAwarenessMoE` [samoe], `KSKTBlock` (pre-norm recipe, replaces a whole decoder layer) and
`KSKTForCausalLM` (a real `Qwen3ForCausalLM` with every k-th layer swapped; Algorithm 1).

The role/user context of a batch reaches the blocks through a `KSKTContext` that the wrapper
sets before it calls the unchanged Hugging Face forward (caching off) and clears afterwards.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import Qwen3Config, Qwen3ForCausalLM
from transformers.modeling_layers import GradientCheckpointingLayer
from transformers.models.qwen3.modeling_qwen3 import Qwen3RMSNorm, apply_rotary_pos_emb

STREAMS = ("self", "other")
CONTEXT_SOURCES = ("extracted", "span_mean")


@dataclass
class KSKTContext:
    """What the KSKT blocks need besides the hidden states, for one batch.

    role_mask, user_mask: (B, T) in {0, 1}, markers excluded; r_proc, u_proc: (B, n_r, d), (B, n_u, d)
    role and user context representations; r_bar, u_bar: (B, d) their means; gate_override: force
    alpha (None = learned gate); force_system2: run the slow path regardless of the pre-gate
    (None = the paper's rule).
    """

    role_mask: torch.Tensor
    user_mask: torch.Tensor
    r_proc: torch.Tensor
    u_proc: torch.Tensor
    r_bar: torch.Tensor
    u_bar: torch.Tensor
    gate_override: float | None = None
    force_system2: bool | None = None

    @property
    def prompt_mask(self) -> torch.Tensor:
        return ((self.role_mask + self.user_mask) > 0).float()


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of x (B, T, d) over the tokens where mask (B, T) is 1; an empty mask gives zeros."""
    w = mask.to(x.dtype).unsqueeze(-1)  # (B, T, 1)
    return (w * x).sum(1) / w.sum(1).clamp_min(1.0)


def gather_rows(x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The rows of x (B, T, d) where mask (B, T) is 1, in order, as (B, n, d) with n the largest
    count in the batch (at least 1), and their mean (B, d). A row with fewer selected tokens is
    padded with its own mean, so the mean over n always equals `masked_mean(x, mask)`; an empty
    mask gives zeros."""
    B, T, d = x.shape
    sel = mask > 0
    counts = sel.sum(1)  # (B,)
    n = max(int(counts.max().item()), 1)
    order = torch.argsort((~sel).to(torch.int8), dim=1, stable=True)[:, :n]  # (B, n): selected positions first
    rows = x.gather(1, order.unsqueeze(-1).expand(B, n, d))  # (B, n, d)
    mean = masked_mean(x, mask)  # (B, d)
    keep = (torch.arange(n, device=x.device)[None, :] < counts[:, None]).unsqueeze(-1)  # (B, n, 1)
    return torch.where(keep, rows, mean.unsqueeze(1).expand(B, n, d)), mean


def validate_masks(role_mask: torch.Tensor, user_mask: torch.Tensor, batch: int, time: int,
                   role_extract: torch.Tensor | None = None, user_extract: torch.Tensor | None = None) -> None:
    """Reject masks of the wrong shape, non-binary values, overlapping role/user spans, or
    extraction masks that select tokens outside their span."""
    for name, m in (("role_mask", role_mask), ("user_mask", user_mask), ("role_extract", role_extract),
                    ("user_extract", user_extract)):
        if m is None and name.endswith("extract"):
            continue
        if not isinstance(m, torch.Tensor):
            raise TypeError(f"{name} must be a tensor, got {type(m).__name__}")
        if tuple(m.shape) != (batch, time):
            raise ValueError(f"{name} must have shape (batch, time) = {(batch, time)}, got {tuple(m.shape)}")
        if not torch.all((m == 0) | (m == 1)):
            raise ValueError(f"{name} must contain only 0 and 1")
    if torch.any((role_mask > 0) & (user_mask > 0)):
        raise ValueError("role_mask and user_mask overlap: a token cannot be both role and user context")
    for name, x, span in (("role_extract", role_extract, role_mask), ("user_extract", user_extract, user_mask)):
        if x is not None and torch.any((x > 0) & (span == 0)):
            raise ValueError(f"{name} selects tokens outside its span: extracted tokens must lie inside the span")


class SwiGLU(nn.Module):
    """down(SiLU(gate x) * up x), the Qwen3 MLP form."""

    def __init__(self, d_in: int, d_hidden: int, d_out: int):
        super().__init__()
        self.gate = nn.Linear(d_in, d_hidden, bias=False)
        self.up = nn.Linear(d_in, d_hidden, bias=False)
        self.down = nn.Linear(d_hidden, d_out, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.gate(x)) * self.up(x))


STREAM_INIT_GAIN = 0.02  # the release's initializer_range, used as the Xavier gain of every stream projection


class StreamProjections(nn.Module):
    """One stream's own W_Q, W_K, W_V, W_O and per-head QK-RMSNorm (as in Qwen3).

    The four projections start from Xavier-uniform with gain 0.02, as in the official
    release's stream attention (its `_init_weights`, initializer_range = 0.02): the new
    attention starts almost silent and grows during training instead of injecting large
    random outputs into the residual stream (PyTorch's default init is ~30x larger).
    """

    def __init__(self, d: int, n_heads: int, n_kv: int, head_dim: int, eps: float):
        super().__init__()
        self.q = nn.Linear(d, n_heads * head_dim, bias=False)
        self.k = nn.Linear(d, n_kv * head_dim, bias=False)
        self.v = nn.Linear(d, n_kv * head_dim, bias=False)
        self.o = nn.Linear(n_heads * head_dim, d, bias=False)
        for lin in (self.q, self.k, self.v, self.o):
            nn.init.xavier_uniform_(lin.weight, gain=STREAM_INIT_GAIN)
        self.q_norm = Qwen3RMSNorm(head_dim, eps=eps)
        self.k_norm = Qwen3RMSNorm(head_dim, eps=eps)


class DualStreamAttention(nn.Module):
    """Dual-Stream Axial Attention, Eq. 1-7.

    For s in {self, other}: A_s = softmax(Q_s K_s^T / sqrt(d_h) + B_s + M_causal), O_s = A_s V_s W_O^s,
    with B_self[b,q,k] = gamma_self * 1[k in role], B_other[b,q,k] = gamma_other * 1[k in user].
    Fusion: alpha = sigmoid(H w_f + b_f), H_out = alpha * O_self + (1 - alpha) * O_other (Eq. 7).
    """

    def __init__(self, d: int, n_heads: int, n_kv: int, head_dim: int, eps: float = 1e-6):
        super().__init__()
        if n_heads % n_kv:
            raise ValueError(f"n_heads ({n_heads}) must be a multiple of n_kv ({n_kv})")
        self.n_heads, self.n_kv, self.head_dim = n_heads, n_kv, head_dim
        self.proj = nn.ModuleDict({s: StreamProjections(d, n_heads, n_kv, head_dim, eps) for s in STREAMS})
        self.gamma = nn.ParameterDict({s: nn.Parameter(0.02 * torch.randn(())) for s in STREAMS})
        self.fuse = nn.Linear(d, 1)  # w_f, b_f zero-initialised: alpha = 0.5 at the start
        nn.init.zeros_(self.fuse.weight)
        nn.init.zeros_(self.fuse.bias)

    def stream(self, h: torch.Tensor, s: str, position_embeddings,
               span: torch.Tensor) -> torch.Tensor:
        """O_s for one stream: GQA with QK-norm, RoPE, the span bias and a
        causal mask. h: (B, T, d)."""
        if s not in STREAMS:
            raise ValueError(f"unknown stream {s!r}; valid: {STREAMS}")
        B, T, _ = h.shape
        p = self.proj[s]
        # q: (B, h, T, d_h); k, v: (B, h_kv, T, d_h)
        q = p.q_norm(p.q(h).view(B, T, self.n_heads, self.head_dim)).transpose(1, 2)
        k = p.k_norm(p.k(h).view(B, T, self.n_kv, self.head_dim)).transpose(1, 2)
        v = p.v(h).view(B, T, self.n_kv, self.head_dim).transpose(1, 2)
        cos, sin = position_embeddings
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        rep = self.n_heads // self.n_kv
        k, v = (k.repeat_interleave(rep, dim=1),
                v.repeat_interleave(rep, dim=1))  # (B, h, T, d_h)
        causal = torch.full((T, T), float("-inf"), device=h.device,
                            dtype=h.dtype).triu(1)  # M_causal
        # B_s: (B, 1, 1, T), same for every query
        bias = self.gamma[s] * span.to(h.dtype)[:, None, None, :]
        # (B, h, T, d_h)
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=causal + bias)
        # (B, T, d)
        return p.o(o.transpose(1, 2).reshape(B, T, self.n_heads * self.head_dim))

    def gate(self, h: torch.Tensor) -> torch.Tensor:
        """alpha = sigmoid(H w_f + b_f): (B, T, 1)."""
        return torch.sigmoid(self.fuse(h))

    def forward(self, h: torch.Tensor, position_embeddings, ctx: KSKTContext):
        o_self = self.stream(h, "self", position_embeddings, ctx.role_mask)
        o_other = self.stream(h, "other", position_embeddings, ctx.user_mask)
        alpha = self.gate(h)
        if ctx.gate_override is not None:
            alpha = torch.full_like(alpha, float(ctx.gate_override))
        out = alpha * o_self + (1.0 - alpha) * o_other  # Eq. 7, beta = 1 - alpha
        return out, {"o_self": o_self, "o_other": o_other, "alpha": alpha}


class MutualUnderstandingPE(nn.Module):
    """MUPE (§3.3): Delta = W_self f_self([PE(i); R_bar]) + W_other f_other([PE(i); U_bar]);
    H <- H + 0.5 Delta. W_self, W_other are zero-initialised, so MUPE starts as the identity."""

    def __init__(self, d: int, max_positions: int):
        super().__init__()
        self.pe = nn.Embedding(max_positions, d)
        nn.init.normal_(self.pe.weight, std=0.02)
        self.f = nn.ModuleDict({s: nn.Sequential(nn.Linear(2 * d, d // 2), nn.ReLU(), nn.Linear(d // 2, d))
                                for s in STREAMS})
        self.w = nn.ModuleDict({s: nn.Linear(d, d, bias=False) for s in STREAMS})
        for lin in self.w.values():
            nn.init.zeros_(lin.weight)

    def forward(self, x: torch.Tensor, ctx: KSKTContext) -> torch.Tensor:
        B, T, _ = x.shape
        if T > self.pe.num_embeddings:
            raise ValueError(f"sequence length {T} exceeds MUPE's max_positions {self.pe.num_embeddings}")
        pe = (self.pe(torch.arange(T, device=x.device))
              .unsqueeze(0).expand(B, T, -1))  # (B, T, d)
        delta = 0
        for s, c in (("self", ctx.r_bar), ("other", ctx.u_bar)):
            # pooled context R_bar / U_bar (B, T, d)
            bar = c.unsqueeze(1).expand(B, T, -1)
            delta = delta + self.w[s](self.f[s](torch.cat([pe, bar], dim=-1)))
        return x + 0.5 * delta


class ThinkingChain(nn.Module):
    """The slow path (App. A.3): c_i = CrossAttn(h_{i-1}, [R; U]) (one head),
    t_i = SwiGLU([h_{i-1}; c_i]), h_i = LayerNorm(h_{i-1} + t_i), for i = 1..T_budget."""

    def __init__(self, d: int, d_hidden: int):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.step = SwiGLU(2 * d, d_hidden, d)
        self.norm = nn.LayerNorm(d)

    def cross(self, h: torch.Tensor, mem: torch.Tensor) -> torch.Tensor:
        att = torch.softmax(self.q(h) @ self.k(mem).transpose(1, 2) / math.sqrt(h.shape[-1]), dim=-1)  # (B, T, m)
        return self.o(att @ self.v(mem))  # (B, T, d)

    def forward(self, h: torch.Tensor, mem: torch.Tensor,
                budget: int) -> torch.Tensor:
        for _ in range(budget):
            c = self.cross(h, mem)
            h = self.norm(h + self.step(torch.cat([h, c], dim=-1)))
        return h


class BipolarReasoning(nn.Module):
    """Bipolar Reasoning Module, Eq. 8-9 and App. A.3.

    h_fast = SwiGLU(RMSNorm(H)); per-sequence pre-gate p_sys2 = sigmoid(MLP([H_bar; h_fast_bar]))
    (System 2 runs if any p_sys2 > 0.5: a hard rule, no gradient); budget head over `budgets`
    (rounded batch mean of the argmax); h_slow = ThinkingChain(H); per-token post-gate
    g = sigmoid(MLP([H; h_fast; h_slow])), output g h_fast + (1 - g) h_slow.
    Sequence pools run over the prompt tokens only, so no future response token leaks in.
    """

    def __init__(self, d: int, d_hidden: int, budgets: tuple[int, ...], eps: float = 1e-6):
        super().__init__()
        self.budgets = tuple(budgets)
        self.norm = Qwen3RMSNorm(d, eps=eps)
        self.fast = SwiGLU(d, d_hidden, d)
        self.pre_gate = nn.Sequential(nn.Linear(2 * d, d // 2), nn.GELU(), nn.Linear(d // 2, 1))
        self.budget_head = nn.Linear(d, len(self.budgets))
        self.chain = ThinkingChain(d, d_hidden)
        self.post_gate = nn.Sequential(nn.Linear(3 * d, d // 2), nn.ReLU(), nn.Dropout(0.1), nn.Linear(d // 2, 1))

    def forward(self, h: torch.Tensor, ctx: KSKTContext):
        h_fast = self.fast(self.norm(h))
        pm = ctx.prompt_mask
        h_bar = masked_mean(h, pm)  # (B, d)
        p_sys2 = torch.sigmoid(
            self.pre_gate(torch.cat([h_bar, masked_mean(h_fast, pm)], -1))
        ).squeeze(-1)  # (B,)
        budget_logits = self.budget_head(h_bar)  # (B, n_budgets)
        run = (bool((p_sys2 > 0.5).any()) if ctx.force_system2 is None
               else bool(ctx.force_system2))
        aux = {"p_sys2": p_sys2, "budget_logits": budget_logits, "system2": run}
        if not run:
            aux["budget"] = 0
            return h_fast, aux
        idx = int(torch.round(budget_logits.argmax(-1).float().mean()).item())
        budget = self.budgets[idx]
        mem = torch.cat([ctx.r_proc, ctx.u_proc], dim=1)  # (B, 2n, d)
        h_slow = self.chain(h, mem, budget)
        # (B, T, 1)
        g = torch.sigmoid(self.post_gate(torch.cat([h, h_fast, h_slow], dim=-1)))
        aux.update(budget=budget, g=g)
        return g * h_fast + (1.0 - g) * h_slow, aux


class SelfAwarenessMoE(nn.Module):
    """Self-Awareness MoE, Eq. 10 and App. A.4: character-conditioned, per-sequence top-k routing.

    M = softmax(R_proc (W H)^T / sqrt(d)) (B, n, T); w = column sums of M, renormalised;
    h_role = sum_t w_t H_t; h_ctx = R_bar; q = SiLU(W_a x) * W_b x with x = [h_role; h_ctx];
    p = softmax(W_g q / tau); top-k experts, renormalised; output sum_k p~_k E_k(H).
    Balance loss L_bal = sum_j (f_j - 1/N)^2 with f_j = mean_b p_bj, computed WITH gradient
    (the release computes f under no_grad, so its L_bal trains nothing).
    """

    def __init__(self, d: int, d_hidden: int, n_experts: int = 4, top_k: int = 2):
        super().__init__()
        if not 1 <= top_k <= n_experts:
            raise ValueError(f"top_k must lie in [1, {n_experts}], got {top_k}")
        self.top_k = top_k
        self.key = nn.Linear(d, d, bias=False)
        self.wa, self.wb = nn.Linear(2 * d, d), nn.Linear(2 * d, d)
        self.router = nn.Linear(d, n_experts)
        self.log_tau = nn.Parameter(torch.zeros(()))  # tau = exp(log_tau) = 1 at init
        self.experts = nn.ModuleList(SwiGLU(d, d_hidden, d) for _ in range(n_experts))
        for e in self.experts:
            for lin in (e.gate, e.up, e.down):
                nn.init.normal_(lin.weight, std=0.01)

    def route(self, h: torch.Tensor, ctx: KSKTContext) -> torch.Tensor:
        """Router probabilities p: (B, N). Only prompt tokens are pooled
        (causality)."""
        d = h.shape[-1]
        # (B, n, T)
        scores = ctx.r_proc @ self.key(h).transpose(1, 2) / math.sqrt(d)
        scores = scores.masked_fill(ctx.prompt_mask[:, None, :] == 0, float("-inf"))
        # an empty prompt gives zero weights
        m = torch.softmax(scores, dim=-1).nan_to_num(0.0)
        w = m.sum(1)
        w = w / w.sum(-1, keepdim=True).clamp_min(1e-9)  # (B, T)
        h_role = (w.unsqueeze(-1) * h).sum(1)  # (B, d)
        # (B, 2d): [h_role; h_ctx = R_bar]
        x = torch.cat([h_role, ctx.r_bar], dim=-1)
        q = F.silu(self.wa(x)) * self.wb(x)
        return torch.softmax(self.router(q) / self.log_tau.exp(), dim=-1)

    def forward(self, h: torch.Tensor, ctx: KSKTContext):
        p = self.route(h, ctx)  # (B, N)
        top_p, top_i = p.topk(self.top_k, dim=-1)
        weights = torch.zeros_like(p).scatter(
            1, top_i, top_p / top_p.sum(-1, keepdim=True)
        )  # (B, N), k nonzero
        outs = torch.stack([e(h) for e in self.experts], dim=1)  # (B, N, T, d)
        out = torch.einsum("bn,bntd->btd", weights, outs)
        return out, {"p_expert": p, "balance": balance_loss(p)}


def balance_loss(p: torch.Tensor) -> torch.Tensor:
    """L_bal = sum_j (f_j - 1/N)^2, f_j = mean_b p_bj (App. A.4),
    differentiable in p."""
    f = p.mean(0)
    return ((f - 1.0 / p.shape[-1]) ** 2).sum()


class KSKTBlock(GradientCheckpointingLayer):
    """A KSKT block that replaces a whole Qwen3 decoder layer (§3.1, Algorithm 1), with the same
    call signature: h1 = x + DSAA(RMSNorm(x) + 0.5 Delta_MUPE); h2 = h1 + BRM(RMSNorm(h1));
    y = h2 + SAMOE(RMSNorm(h2)). MUPE corrects the attention's input only (as in the release,
    where it runs inside DSAA on the normed states), not the residual stream. There is no
    separate FFN: the BRM fast path plays that role."""

    def __init__(self, hidden_size: int, num_heads: int, num_kv_heads: int, head_dim: int, intermediate_size: int,
                 budgets: tuple[int, ...], n_experts: int, top_k: int, max_positions: int, eps: float = 1e-6):
        super().__init__()
        d = hidden_size
        self.mupe = MutualUnderstandingPE(d, max_positions)
        self.norm_attn, self.norm_brm, self.norm_moe = (Qwen3RMSNorm(d, eps=eps) for _ in range(3))
        self.dsaa = DualStreamAttention(d, num_heads, num_kv_heads, head_dim, eps)
        self.brm = BipolarReasoning(d, intermediate_size, budgets, eps)
        self.samoe = SelfAwarenessMoE(d, intermediate_size, n_experts, top_k)
        self.ctx: KSKTContext | None = None
        self.aux: dict = {}

    def forward(self, hidden_states: torch.Tensor, attention_mask=None,
                position_ids=None, cache=None, use_cache: bool | None = False,
                position_embeddings=None, **kwargs) -> torch.Tensor:
        if self.ctx is None:
            raise RuntimeError("a KSKT block needs its role/user context: call the model through KSKTForCausalLM")
        if use_cache or cache is not None:
            raise ValueError("KSKT blocks do not support a KV cache: call with use_cache=False")
        ctx = self.ctx
        x = hidden_states
        a, aux = self.dsaa(self.mupe(self.norm_attn(x), ctx),
                           position_embeddings, ctx)  # MUPE feeds DSAA only
        h1 = x + a
        r, aux_brm = self.brm(self.norm_brm(h1), ctx)
        h2 = h1 + r
        m, aux_moe = self.samoe(self.norm_moe(h2), ctx)
        self.aux = {**aux, **aux_brm, **aux_moe}
        return h2 + m


@dataclass(frozen=True)
class KSKTSpec:
    """What a KSKT model adds to its Qwen3 config (saved with the weights)."""

    kskt_every: int = 2
    budgets: tuple[int, ...] = (2, 4)
    n_experts: int = 4
    top_k: int = 2
    n_ctx: int = 4  # length n of R_proc / U_proc when context_source = "span_mean"
    max_positions: int = 64
    # where R_proc / U_proc come from: "extracted" = the embeddings of the extracted tokens, one row
    # each (App. B.1); "span_mean" = the mean embedding of the whole span repeated n_ctx times (the
    # release's fallback when no extraction is supplied; this chapter's versions before the third run)
    context_source: str = "extracted"

    def __post_init__(self) -> None:
        if self.context_source not in CONTEXT_SOURCES:
            raise ValueError(f"context_source must be one of {CONTEXT_SOURCES}, got {self.context_source!r}")

    def layer_indices(self, num_layers: int) -> list[int]:
        """0-based indices of the replaced layers: k-1, 2k-1, ... (paper: 3, 7, ..., 35 for k=4)."""
        return list(range(self.kskt_every - 1, num_layers, self.kskt_every))


@dataclass
class KSKTOutput:
    logits: torch.Tensor
    aux: list[dict] = field(default_factory=list)  # one dict per KSKT block, in layer order
    r_bar: torch.Tensor | None = None
    u_bar: torch.Tensor | None = None


class KSKTForCausalLM(nn.Module):
    """A `transformers.Qwen3ForCausalLM` whose every k-th decoder layer is a `KSKTBlock`."""

    def __init__(self, lm: Qwen3ForCausalLM, spec: KSKTSpec):
        super().__init__()
        cfg = lm.config
        self.lm, self.spec = lm, spec
        self.kskt_layers = spec.layer_indices(cfg.num_hidden_layers)
        if not self.kskt_layers:
            raise ValueError(f"kskt_every={spec.kskt_every} replaces no layer of a {cfg.num_hidden_layers}-layer model")
        dev = lm.get_input_embeddings().weight.device
        dtype = lm.get_input_embeddings().weight.dtype
        for i in self.kskt_layers:
            block = KSKTBlock(cfg.hidden_size, cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim,
                              cfg.intermediate_size, spec.budgets, spec.n_experts, spec.top_k, spec.max_positions,
                              cfg.rms_norm_eps)
            lm.model.layers[i] = block.to(device=dev, dtype=dtype)

    @property
    def blocks(self) -> list[KSKTBlock]:
        return [self.lm.model.layers[i] for i in self.kskt_layers]

    def context(self, input_ids, role_mask, user_mask, embeds,
                gate_override=None, force_system2=None, role_extract=None,
                user_extract=None) -> KSKTContext:
        """R_proc, U_proc from the input embeddings (§3.2, App. B.1).

        context_source = "extracted": R_proc = [trait; knowledge; temporal],
        U_proc = [intent; emotion; directive], i.e. one row per extracted token
        (`role_extract`, `user_extract`; the whole span when they are not
        given). "span_mean": the release's fallback, the mean embedding of the
        whole span repeated n_ctx times. R_bar, U_bar are the means over rows.
        """
        B = input_ids.shape[0]
        if self.spec.context_source == "extracted":
            r_proc, r_bar = gather_rows(embeds, role_mask if role_extract is None
                                        else role_extract)  # (B, n_r, d)
            u_proc, u_bar = gather_rows(embeds, user_mask if user_extract is None
                                        else user_extract)  # (B, n_u, d)
        else:
            r_bar, u_bar = (masked_mean(embeds, role_mask),
                            masked_mean(embeds, user_mask))  # (B, d)
            n = self.spec.n_ctx
            r_proc, u_proc = (r_bar[:, None].expand(B, n, -1),
                              u_bar[:, None].expand(B, n, -1))  # (B, n, d)
        return KSKTContext(role_mask.to(embeds.dtype), user_mask.to(embeds.dtype),
                           r_proc, u_proc, r_bar, u_bar,
                           gate_override, force_system2)

    def forward(self, input_ids: torch.Tensor, role_mask: torch.Tensor, user_mask: torch.Tensor,
                gate_override: float | None = None, force_system2: bool | None = None,
                role_extract: torch.Tensor | None = None, user_extract: torch.Tensor | None = None) -> KSKTOutput:
        """role_mask / user_mask: the spans (the stream biases); role_extract / user_extract: the
        extracted tokens that make up R_proc / U_proc (optional; see `context`)."""
        if input_ids.dim() != 2:
            raise ValueError(f"input_ids must be (batch, time), got shape {tuple(input_ids.shape)}")
        B, T = input_ids.shape
        validate_masks(role_mask, user_mask, B, T, role_extract, user_extract)
        if gate_override is not None and not 0.0 <= float(gate_override) <= 1.0:
            raise ValueError(f"gate_override must lie in [0, 1], got {gate_override}")
        embeds = self.lm.get_input_embeddings()(input_ids)
        ctx = self.context(input_ids, role_mask, user_mask, embeds, gate_override, force_system2, role_extract,
                           user_extract)
        for b in self.blocks:
            b.ctx = ctx
        try:
            logits = self.lm(inputs_embeds=embeds, use_cache=False).logits
        finally:
            for b in self.blocks:
                b.ctx = None
        return KSKTOutput(logits, [b.aux for b in self.blocks], ctx.r_bar, ctx.u_bar)


def tiny_qwen3_config(vocab_size: int, hidden_size: int = 64, num_layers: int = 4, num_heads: int = 4,
                      num_kv_heads: int = 2, head_dim: int = 16, intermediate_size: int = 128,
                      max_positions: int = 64, tie_word_embeddings: bool = False) -> Qwen3Config:
    """A tiny Qwen3Config (random init, nothing downloaded).

    The input embedding and the LM head are separate matrices by default, as in the release's
    KSKTConfig (`tie_word_embeddings=False`, with its own `lm_head`). This matters here because
    R_proc, U_proc (and so the targets of L_cons, L_und) are means of input embeddings: with a
    tied matrix trained from scratch, every role/user token is a never-predicted output row
    (labels cover the response only), all those rows get the same softmax push, which Adam turns
    into equal-sized steps, and after a few dozen steps every R_bar_i (and U_bar_i) points along
    one shared direction (cosine ~0.99 with the corpus mean; `test_tied_embeddings_collapse_prompt_means`).
    """
    return Qwen3Config(vocab_size=vocab_size, hidden_size=hidden_size, num_hidden_layers=num_layers,
                       num_attention_heads=num_heads, num_key_value_heads=num_kv_heads, head_dim=head_dim,
                       intermediate_size=intermediate_size, max_position_embeddings=max_positions,
                       tie_word_embeddings=tie_word_embeddings, use_cache=False, attn_implementation="sdpa")


def build_kskt(qwen_config: Qwen3Config | None = None, spec: KSKTSpec | None = None,
               pretrained: str | None = None, seed: int = 0) -> KSKTForCausalLM:
    """A KSKT model: a Qwen3 from `qwen_config` (random init) or, for the full preset only, the
    checkpoint `pretrained` loaded by name; every `spec.kskt_every`-th layer becomes a KSKT block."""
    spec = spec or KSKTSpec()
    torch.manual_seed(seed)
    if pretrained is not None:
        lm = Qwen3ForCausalLM.from_pretrained(pretrained, use_cache=False)  # full preset: downloads weights
    else:
        if qwen_config is None:
            raise ValueError("give a qwen_config (random init) or a pretrained checkpoint name")
        lm = Qwen3ForCausalLM(qwen_config)
    return KSKTForCausalLM(lm, spec)


def save_kskt(model: KSKTForCausalLM, path) -> None:
    """Save the Qwen3 config, the KSKT spec and all weights in one file."""
    torch.save({"qwen_config": model.lm.config.to_dict(), "spec": asdict(model.spec),
                "state_dict": model.state_dict()}, path)


def load_kskt(path, map_location="cpu") -> KSKTForCausalLM:
    """Rebuild a model saved by `save_kskt` (no download: the config travels in the file)."""
    blob = torch.load(path, map_location=map_location, weights_only=False)
    cfg = Qwen3Config.from_dict(blob["qwen_config"])
    spec = blob["spec"]
    spec = KSKTSpec(**{**spec, "budgets": tuple(spec["budgets"])})
    model = KSKTForCausalLM(Qwen3ForCausalLM(cfg), spec)
    model.load_state_dict(blob["state_dict"])
    return model
