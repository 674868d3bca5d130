"""The training objective (Eq. 11) and the phased curriculum (§4.1, Table 4), scaled down.

L = L_CLM + lambda_1 L_cons + lambda_2 L_und + lambda_3 L_bal + 0.05 L_budget, where the
three phases switch the terms on one after the other: phase 1 CLM + cons (linear schedule with
warmup), phase 2 + und (linear), phase 3 + bal (cosine); learning rates lr * (1, 1/2, 1/4).
The plain Qwen3 baseline gets the same data, steps, batches and schedule, with L_CLM only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import Qwen3ForCausalLM

from icml26.common import progress

from .config import KSKTConfig
from .data import SLOT_POS, RolePlayData, model_inputs
from .model import KSKTForCausalLM, KSKTOutput

PHASE_TERMS = ({"cons"}, {"cons", "und"}, {"cons", "und", "bal"})
PHASE_LR_SCALE = (1.0, 0.5, 0.25)  # the paper's 2e-5, 1e-5, 5e-6


def clm_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Next-token cross-entropy on the response tokens only (labels are -100 elsewhere)."""
    return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1), ignore_index=-100)


def _alignment(o: torch.Tensor, target: torch.Tensor, centre: bool) -> torch.Tensor:
    """1 - cos(mean_t o, target), averaged over the batch; o: (B, T, d), target: (B, d).
    centre=True subtracts the batch mean from both sides first (not in the paper)."""
    if o.dim() != 3 or target.dim() != 2 or o.shape[0] != target.shape[0] or o.shape[-1] != target.shape[-1]:
        raise ValueError(f"need stream outputs (B, T, d) and targets (B, d), got {tuple(o.shape)} and {tuple(target.shape)}")
    a, b = o.mean(1), target.detach()  # (B, d) each; gradient stops at the target
    if centre:
        a, b = a - a.mean(0, keepdim=True), b - b.mean(0, keepdim=True)
    return (1.0 - F.cosine_similarity(a, b, dim=-1)).mean()


def consistency_loss(o_self: torch.Tensor, r_bar: torch.Tensor, centre: bool = False) -> torch.Tensor:
    """L_cons = 1 - cos(mean_t O_self, R_bar) (Eq. 11), R_bar from the input embeddings (a fixed
    target: gradient stops there). The release pools O_self itself instead (self-referential).

    `centre=True` is NOT the paper: it compares the batch-centred stream mean with the
    batch-centred R_bar, so that only the item-specific part of the persona counts (the raw
    R_bar of all items share one dominant direction, see `experiment.alignment_diagnostic`)."""
    return _alignment(o_self, r_bar, centre)


def understanding_loss(o_other: torch.Tensor, u_bar: torch.Tensor, centre: bool = False) -> torch.Tensor:
    """L_und = 1 - cos(mean_t O_other, U_bar) (Eq. 11); `centre` as in `consistency_loss`."""
    return _alignment(o_other, u_bar, centre)


def budget_loss(aux: dict) -> torch.Tensor:
    """Budget-head supervision (App. A.3): conflict score 0.6 E|alpha - beta| + 0.4 H(p_expert),
    binned into len(budgets) classes by batch-rank quantiles, trained with cross-entropy."""
    alpha = aux["alpha"].detach().squeeze(-1)  # (B, T)
    p = aux["p_expert"].detach()
    score = 0.6 * (2 * alpha - 1).abs().mean(1) - 0.4 * (p * p.clamp_min(1e-9).log()).sum(-1)  # (B,)
    n_bins = aux["budget_logits"].shape[-1]
    rank = score.argsort().argsort().float() / max(len(score), 1)
    target = (rank * n_bins).long().clamp_max(n_bins - 1)
    return F.cross_entropy(aux["budget_logits"], target)


def kskt_objective(out: KSKTOutput, labels: torch.Tensor, terms: set[str],
                   cfg: KSKTConfig) -> dict[str, torch.Tensor]:
    """All loss terms of Eq. 11 (L_cons/L_und on the last KSKT block, L_bal
    averaged over blocks)."""
    last = out.aux[-1]
    centre = cfg.align_target == "centred"
    parts = {"clm": clm_loss(out.logits, labels),
             "cons": consistency_loss(last["o_self"], out.r_bar, centre),
             "und": understanding_loss(last["o_other"], out.u_bar, centre),
             "bal": torch.stack([a["balance"] for a in out.aux]).mean(),
             "budget": torch.stack(
                 [budget_loss(a) for a in out.aux if a["system2"]]
                 or [out.logits.new_zeros(())]).mean()}
    lam = {"cons": cfg.lambda_cons, "und": cfg.lambda_und,
           "bal": cfg.lambda_bal}
    total = (parts["clm"] + cfg.lambda_budget * parts["budget"]
             + sum(lam[t] * parts[t] for t in terms))
    return {"total": total, **parts}


def make_optimizer(model: nn.Module, cfg: KSKTConfig) -> torch.optim.Optimizer:
    """AdamW, betas (0.9, 0.95), weight decay on matrices only (not norms, biases, scalars)."""
    decay = [p for p in model.parameters() if p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                              {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr, betas=(0.9, 0.95))


def lr_at(step: int, cfg: KSKTConfig) -> tuple[int, float]:
    """(phase, learning rate) at a global step. Phase 1: linear warmup then linear decay; phase 2:
    linear decay; phase 3: cosine decay; peaks lr * PHASE_LR_SCALE.

    cfg.schedule = "release" follows the release's per-phase schedulers: each phase decays from its
    peak toward 0 at its end (the decay counts the steps after the warmup). "v1" (an alternative: one
    optimizer across the phases) decays to 10 % of the peak over the whole phase, warmup steps included."""
    start = 0
    for phase, n in enumerate(cfg.phase_steps):
        if step < start + n:
            peak, s = cfg.lr * PHASE_LR_SCALE[phase], step - start
            if phase == 0 and s < cfg.warmup:
                return phase, peak * (s + 1) / cfg.warmup
            if cfg.schedule == "v1":
                floor, frac = 0.1, s / max(n - 1, 1)
            else:
                warm = cfg.warmup if phase == 0 else 0
                floor, frac = 0.0, (s - warm) / max(n - warm, 1)  # in [0, 1): the last step stays above 0
            if phase == 2:
                return phase, peak * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * frac)))
            return phase, peak * (1.0 - (1 - floor) * frac)
        start += n
    raise ValueError(f"step {step} is beyond the curriculum ({cfg.total_steps} steps)")


@dataclass
class TrainLog:
    steps: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)
    eval_steps: list[int] = field(default_factory=list)
    slot_acc: list[dict] = field(default_factory=list)


def forward_any(model: nn.Module, input_ids: torch.Tensor, **kw):
    """Logits (and KSKTOutput) of a KSKT model or of a plain Qwen3 on a batch of token ids."""
    if isinstance(model, KSKTForCausalLM):
        out = model(input_ids, **model_inputs(input_ids), **kw)
        return out.logits, out
    if kw:
        raise ValueError(f"options {sorted(kw)} only apply to a KSKT model")
    return model(input_ids=input_ids, use_cache=False).logits, None


LOGITS_BUDGET = 2 ** 28  # entries of one evaluation batch's (B, T, vocab) logits: 1 GiB in float32


def eval_batch_size(model: nn.Module, seq_len: int, batch_size: int) -> int:
    """`batch_size`, capped so that one evaluation batch's logits stay within LOGITS_BUDGET
    entries (with a real checkpoint's 151 936-token vocabulary, 500 sequences would need 5.5 GB)."""
    vocab = (model.lm if isinstance(model, KSKTForCausalLM) else model).config.vocab_size
    return max(1, min(batch_size, LOGITS_BUDGET // (seq_len * vocab)))


@torch.no_grad()
def slot_accuracy(model: nn.Module, data: RolePlayData, batch_size: int = 500, **kw) -> dict[str, float]:
    """Teacher-forced accuracy of each response slot; r2 is also split into conflict items."""
    model.eval()
    hits = {k: [] for k in SLOT_POS}
    batch_size = eval_batch_size(model, data.input_ids.shape[1], batch_size)
    for i in range(0, len(data), batch_size):
        ids = data.input_ids[i:i + batch_size]
        logits, _ = forward_any(model, ids, force_system2=True, **kw) if isinstance(model, KSKTForCausalLM) \
            else forward_any(model, ids)
        for k, pos in SLOT_POS.items():
            hits[k].append(logits[:, pos - 1].argmax(-1) == ids[:, pos])
    model.train()
    h = {k: torch.cat(v) for k, v in hits.items()}
    c = data.conflict
    return {"r1": h["r1"].float().mean().item(), "r2": h["r2"].float().mean().item(),
            "r3": h["r3"].float().mean().item(),
            "r2_conflict": h["r2"][c].float().mean().item() if c.any() else float("nan")}


def train_model(model: nn.Module, train: RolePlayData, test: RolePlayData, cfg: KSKTConfig, seed: int = 0,
                desc: str = "train") -> TrainLog:
    """The phased curriculum for a KSKT model, or the same schedule with L_CLM only for a plain Qwen3.
    With cfg.schedule = "release" each phase starts a fresh AdamW, as the release's trainer does."""
    is_kskt = isinstance(model, KSKTForCausalLM)
    if not is_kskt and not isinstance(model, Qwen3ForCausalLM):
        raise TypeError(f"expected a KSKTForCausalLM or Qwen3ForCausalLM, got {type(model).__name__}")
    device = next(model.parameters()).device
    opt = make_optimizer(model, cfg)
    gen = torch.Generator().manual_seed(int(seed) + 12345)
    log = TrainLog()
    model.train()
    for step in progress(range(cfg.total_steps), desc=desc, leave=False):
        # region: step
        phase, lr = lr_at(step, cfg)
        if cfg.schedule == "release" and step > 0 and phase != lr_at(step - 1, cfg)[0]:
            # a new phase: fresh moments (release trainer)
            opt = make_optimizer(model, cfg)
        for g in opt.param_groups:
            g["lr"] = lr
        idx = torch.randint(len(train), (cfg.batch_size,), generator=gen)
        ids, labels = train.input_ids[idx].to(device), train.labels[idx].to(device)
        logits, out = forward_any(model, ids)
        loss = (kskt_objective(out, labels, PHASE_TERMS[phase], cfg)["total"]
                if is_kskt else clm_loss(logits, labels))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        # endregion
        log.steps.append(step)
        log.loss.append(loss.item())
        if (step + 1) % cfg.eval_every == 0 or step + 1 == cfg.total_steps:
            log.eval_steps.append(step + 1)
            log.slot_acc.append(slot_accuracy(model, test))
    model.eval()
    return log
