"""The hybrid MoE vision tower of TAM (reconstructed from the abstract) and the fixed-pipeline
baseline, built from tiny randomly initialised `transformers` models (no downloads).

Components (paper Sec. "Task-Aware Mechanism", as we reconstructed it from the abstract and summaries):
1. `Inductor`: text-only task classifier p(c | q) (a tiny BERT).
2. `sample_frames`: the visual budget (n_f frames, side r) chosen from the task, Eq. (budget).
3. `SoftMoEEncoder`: soft-gated mixture of E SigLIP experts, V = sum_e w_e Enc_e(x),
   w = softmax(G [p ; pool(x)]).
4. Hard-gated resolution-specific projectors P_r (top-1; exactly one runs per sample).
5. A tiny Qwen2 decoder reads [q ; Z] and answers from the mean of its visual positions
   (the paper's LLM reads [Z ; q] and answers after the query; see the chapter's deviations).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from transformers import BertConfig, BertForSequenceClassification, Qwen2Config, Qwen2Model
from transformers import SiglipVisionConfig, SiglipVisionModel

from .config import N_ANSWERS, TASKS, TAMConfig


class Inductor(nn.Module):
    """Text-only task classifier: query tokens -> logits over the K task categories."""

    def __init__(self, vocab_size: int, hidden: int = 32, n_tasks: int = len(TASKS)):
        super().__init__()
        cfg = BertConfig(vocab_size=vocab_size, hidden_size=hidden, num_hidden_layers=2,
                         num_attention_heads=2, intermediate_size=2 * hidden, max_position_embeddings=32,
                         num_labels=n_tasks, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
        self.bert = BertForSequenceClassification(cfg)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        if ids.dim() != 2:
            raise ValueError(f"Inductor expects token ids of shape (B, L), got {tuple(ids.shape)}")
        return self.bert(input_ids=ids, attention_mask=(ids != 0).long()).logits  # (B, K)


def frame_indices(n_native: int, n_frames: int, device=None) -> torch.Tensor:
    """Uniform sampling: the centre frame of each of `n_frames` equal segments."""
    if not 1 <= n_frames <= n_native:
        raise ValueError(f"n_frames must lie in [1, {n_native}], got {n_frames}")
    step = n_native / n_frames
    return (torch.arange(n_frames, device=device) * step + step / 2).long().clamp(max=n_native - 1)


def sample_frames(video: torch.Tensor, n_frames: int,
                  side: int) -> torch.Tensor:
    """Budgeted frame sampler: (B, T, S, S) -> (B, n_frames, side, side),
    area resize."""
    if video.dim() != 4 or video.shape[-1] != video.shape[-2]:
        raise ValueError(f"video must have shape (B, T, S, S), got {tuple(video.shape)}")
    if not 1 <= side <= video.shape[-1]:
        raise ValueError(f"side must lie in [1, {video.shape[-1]}], got {side}")
    idx = frame_indices(video.shape[1], n_frames, video.device)
    x = video[:, idx]  # (B, n_f, S, S)
    # (B, n_f, side, side)
    return F.interpolate(x, size=(side, side), mode="area")


def _siglip(c: TAMConfig) -> SiglipVisionModel:
    cfg = SiglipVisionConfig(hidden_size=c.hidden, intermediate_size=2 * c.hidden, num_hidden_layers=c.layers,
                             num_attention_heads=c.heads, num_channels=1, image_size=c.tier_h[1],
                             patch_size=c.patch)
    return SiglipVisionModel(cfg)


class SoftMoEEncoder(nn.Module):
    """Soft-gated MoE vision encoder: V = sum_e w_e Enc_e(x), w = softmax(G [p ; pool(x)]).

    All E experts run on every frame (dense mixture); with E = 1 it is a dense encoder.
    """

    def __init__(self, c: TAMConfig, n_experts: int, n_tasks: int = len(TASKS)):
        super().__init__()
        self.experts = nn.ModuleList([_siglip(c) for _ in range(n_experts)])
        self.gate = nn.Linear(n_tasks + 2, n_experts)

    def gate_weights(self, frames: torch.Tensor,
                     task_probs: torch.Tensor) -> torch.Tensor:
        """w in the simplex Delta^E from the Inductor's p(c|q) and pooled pixel
        statistics."""
        pooled = torch.stack([frames.mean((1, 2, 3)),
                              frames.std((1, 2, 3))], 1)  # (B, 2)
        return torch.softmax(self.gate(torch.cat([task_probs, pooled], 1)),
                             -1)  # (B, E)

    def forward(self, frames: torch.Tensor,
                task_probs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        B, n_f, r, _ = frames.shape
        x = frames.reshape(B * n_f, 1, r, r)  # (B*n_f, 1, r, r): frames as images
        w = self.gate_weights(frames, task_probs)  # (B, E)
        feats = torch.stack(
            [e(pixel_values=x, interpolate_pos_encoding=True).last_hidden_state
             for e in self.experts], 1)  # (B*n_f, E, P, d)
        feats = feats.view(B, n_f, len(self.experts), -1,
                           feats.shape[-1])  # (B, n_f, E, P, d)
        V = torch.einsum("be,bfepd->bfpd", w, feats)  # (B, n_f, P, d)
        return V, w


class VideoLM(nn.Module):
    """Vision tower + tiny Qwen2 answerer.

    `tiers` lists the (frames, side) pipelines, each with its own projector P_r. TAM uses two
    tiers routed by the task (hard top-1 gate) and E soft experts; the fixed-pipeline baseline
    uses one tier, one projector and a dense (E = 1) encoder.
    """

    def __init__(self, c: TAMConfig, vocab_size: int, tiers: tuple[tuple[int, int], ...], n_experts: int):
        super().__init__()
        if not tiers:
            raise ValueError("VideoLM needs at least one (frames, side) tier")
        self.c, self.tiers = c, tuple(tiers)
        self.encoder = SoftMoEEncoder(c, n_experts)
        self.projectors = nn.ModuleList([nn.Sequential(nn.Linear(c.hidden, c.hidden), nn.GELU(),
                                                       nn.Linear(c.hidden, c.hidden)) for _ in tiers])
        # per-tier temporal (frame-index) embeddings, added to the patch features before P_r
        self.time_emb = nn.ParameterList([nn.Parameter(0.5 * torch.randn(f, 1, c.hidden)) for f, _ in tiers])
        self.llm = Qwen2Model(Qwen2Config(vocab_size=vocab_size, hidden_size=c.hidden, intermediate_size=2 * c.hidden,
                                          num_hidden_layers=c.layers, num_attention_heads=c.heads,
                                          num_key_value_heads=1, max_position_embeddings=256))
        self.heads = nn.ModuleList([nn.Linear(c.hidden, N_ANSWERS[t]) for t in TASKS])

    def visual_tokens(self, video, tier_idx: torch.Tensor,
                      task_probs) -> tuple[torch.Tensor, torch.Tensor]:
        """Hard-gated pipelines: each sample runs only its tier's sampler and
        projector P_r."""
        B = video.shape[0]
        if tier_idx.shape != (B,) or tier_idx.min() < 0 or tier_idx.max() >= len(self.tiers):
            raise ValueError(f"tier_idx must be (B,) = ({B},) indices into {len(self.tiers)} tier(s)")
        Z, W = None, video.new_zeros(B, len(self.encoder.experts))
        for t, (n_f, side) in enumerate(self.tiers):
            sel = (tier_idx == t).nonzero().squeeze(1)
            if sel.numel() == 0:
                continue
            frames = sample_frames(video[sel], n_f, side)  # (b, n_f, side, side)
            V, w = self.encoder(frames, task_probs[sel])  # (b, n_f, P, d)
            # (b, n_f*P, d) visual tokens
            z = self.projectors[t](V + self.time_emb[t]).flatten(1, 2)
            if Z is None:
                Z = video.new_zeros(B, z.shape[1], z.shape[2])
            if z.shape[1] != Z.shape[1]:
                raise ValueError("all tiers must produce the same number of "
                                 "visual tokens")
            Z = Z.index_copy(0, sel, z)
            W = W.index_copy(0, sel, w)
        return Z, W

    def forward(self, video, ids, lens, task_idx, tier_idx, task_probs):
        """Logits per task head -> list of (B, n_answers) plus gate weights
        (B, E)."""
        if video.shape[0] != ids.shape[0]:
            raise ValueError(f"batch mismatch: {video.shape[0]} videos vs {ids.shape[0]} queries")
        Z, W = self.visual_tokens(video, tier_idx, task_probs)  # (B, N_vis, d)
        q = self.llm.embed_tokens(ids)  # (B, L, d)
        # (B, L + N_vis, d): [q ; Z]
        h = self.llm(inputs_embeds=torch.cat([q, Z], 1)).last_hidden_state
        # (B, d) mean over the query-conditioned visual positions
        pooled = h[:, q.shape[1]:].mean(1)
        return [head(pooled) for head in self.heads], W

    def n_visual_tokens(self) -> list[int]:
        return [f * (s // self.c.patch) ** 2 for f, s in self.tiers]
