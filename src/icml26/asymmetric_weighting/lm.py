"""Parts B and C: group-based RL on a real `transformers` causal LM (random init from a tiny config).

One RL step (paper, Sec. 2, "Algorithm"): sample P prompts -> n completions each (temperature 1,
digit-masked) -> verify -> rho_hat per group -> advantages by the chosen weighting -> DAPO only:
keep informative groups, drawing further prompt batches until P are collected -> one
policy-gradient update with the token-level loss

    L = -(1 / sum_i L_i) sum_i sum_t min(k_it A_i, clip(k_it, 1 - eps_l, 1 + eps_h) A_i),

k_it = pi_theta / pi_old (== 1 on the single on-policy update we take, so this is REINFORCE with
the scheme's advantages). Everything but the advantage is identical across schemes.

Implementation: answers have at most two digits, so one batched forward pass over every prompt
followed by every possible first digit gives the whole policy (`answer_table`); sampling, the
exact accuracy and the loss all come from that one pass (`sample_groups` / `answer_logprobs` are
the token-by-token reference it is tested against).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from transformers import GPT2Config, GPT2LMHeadModel

from icml26.common import progress

from .task import MAX_ANSWER_LEN, NUM_DIGITS, VOCAB_SIZE, AdditionTask, exact_match_reward
from .weighting import check_scheme, group_advantages, informative_groups


def build_model(d_model: int = 64, n_layer: int = 2, n_head: int = 2, seed: int = 0, device="cpu") -> GPT2LMHeadModel:
    """A randomly initialised GPT-2 (Hugging Face `transformers`) from a tiny config; nothing is downloaded."""
    if d_model % n_head:
        raise ValueError(f"d_model ({d_model}) must be divisible by n_head ({n_head})")
    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=VOCAB_SIZE, n_positions=8, n_embd=d_model, n_layer=n_layer, n_head=n_head,
                        n_inner=2 * d_model, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                        bos_token_id=12, eos_token_id=12)
    return GPT2LMHeadModel(config).to(device)


def digit_logits(model, tokens: torch.Tensor) -> torch.Tensor:
    """Next-token logits restricted to the digit tokens (the decoding mask): (B, T) -> (B, T, 10)."""
    return model(input_ids=tokens).logits[..., :NUM_DIGITS]


@torch.no_grad()
def sample_groups(model, prompts: torch.Tensor, n: int, generator: torch.Generator) -> torch.Tensor:
    """n sampled answers of MAX_ANSWER_LEN digits per prompt, batched: (P, T0) -> (P * n, T0 + 2).

    Row p * n + j is the j-th sample of prompt p (temperature 1 over the digit tokens).
    """
    probs = torch.softmax(digit_logits(model, prompts)[:, -1].float(), dim=-1)  # (P, 10): first digit, once per prompt
    first = torch.multinomial(probs, n, replacement=True, generator=generator).reshape(-1, 1)  # (P*n, 1)
    seqs = torch.cat([prompts.repeat_interleave(n, dim=0), first], dim=1)  # (P*n, T0 + 1)
    for _ in range(MAX_ANSWER_LEN - 1):
        probs = torch.softmax(digit_logits(model, seqs)[:, -1].float(), dim=-1)  # (P*n, 10)
        nxt = torch.multinomial(probs, 1, generator=generator)  # (P*n, 1)
        seqs = torch.cat([seqs, nxt], dim=1)
    return seqs


def answer_logprobs(model, seqs: torch.Tensor, prompt_len: int) -> torch.Tensor:
    """log pi(y_t | prefix) of the answer tokens under the digit-masked policy: (B, T) -> (B, L)."""
    logits = digit_logits(model, seqs[:, :-1])[:, prompt_len - 1:]  # (B, L, 10)
    return torch.log_softmax(logits.float(), dim=-1).gather(-1, seqs[:, prompt_len:, None]).squeeze(-1)


@torch.no_grad()
def success_probs(model, task: AdditionTask) -> torch.Tensor:
    """Exact success probability of every prompt: prod_t pi(correct digit_t | correct prefix). (N,)"""
    seqs = torch.cat([task.prompts, task.answers], dim=1)
    lp = answer_logprobs(model, seqs, task.prompts.shape[1])  # (N, L)
    mask = torch.arange(MAX_ANSWER_LEN, device=lp.device)[None, :] < task.lengths[:, None]
    return torch.exp((lp * mask).sum(dim=1))


def pg_loss(logp: torch.Tensor, old_logp: torch.Tensor, adv: torch.Tensor,
            mask: torch.Tensor, eps_low: float = 0.2,
            eps_high: float = 0.28) -> torch.Tensor:
    """Token-level clipped surrogate (DAPO-style clip-higher), averaged over all
    response tokens.

    logp, old_logp, mask: (B, L); adv: (B,).
    """
    ratio = torch.exp(logp - old_logp)
    a = adv[:, None]
    obj = torch.minimum(ratio * a, ratio.clamp(1 - eps_low, 1 + eps_high) * a)
    return -(obj * mask).sum() / mask.sum().clamp_min(1)


@dataclass
class RLHistory:
    """Per-step logs of one RL run."""

    scheme: str
    accuracy: np.ndarray  # (k + 1,) mean exact success probability over all prompts after 0..k updates
    zero_frac: np.ndarray  # (k,) fraction of sampled groups with rho_hat = 0
    responses: np.ndarray  # (k + 1,) cumulative generated responses


def answer_table(model, task: AdditionTask) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probabilities of *every* answer of *every* prompt in one batched forward pass.

    Answers have one or two digits and the environment fixes the length, so the policy is fully
    described by pi(d1 | x) and, for two-digit prompts only, pi(d2 | x, d1). We feed each
    two-digit prompt followed by each of the 10 first digits and each one-digit prompt once
    (followed by a dummy digit that is never scored): R = 10 * N_2 + N_1 rows of T0 + 1 tokens.
    The logits at position T0 - 1 are the first-digit distribution (the model is causal, so the
    extra token does not change them), those at position T0 the second-digit distribution.
    Returns lp1 (N, 10) = log pi(d1 | x) and lp2 (N, 10, 10) = log pi(d2 | x, d1), differentiable;
    lp2 of one-digit prompts is a constant uniform placeholder (their second token is masked out).
    Sampling from these tables and back-propagating through them is exactly the sampled policy
    gradient of `sample_groups` + `answer_logprobs`, at one forward/backward pass per step.
    """
    if MAX_ANSWER_LEN != 2:
        raise ValueError("answer_table enumerates first digits and needs answers of at most two digits")
    N, T0 = task.prompts.shape
    dev = task.prompts.device
    two = task.lengths == 2  # (N,)
    reps = torch.where(two, NUM_DIGITS, 1)  # (N,) rows per prompt
    start = torch.cumsum(reps, 0) - reps  # (N,) first row of each prompt
    owner = torch.repeat_interleave(torch.arange(N, device=dev), reps)  # (R,) prompt of each row
    digit = torch.arange(owner.shape[0], device=dev) - start[owner]  # (R,) 0..9 (two-digit) or 0 (dummy)
    seqs = torch.cat([task.prompts[owner], digit[:, None]], dim=1)  # (R, T0 + 1)
    lp = torch.log_softmax(digit_logits(model, seqs)[:, T0 - 1:].float(), dim=-1)  # (R, 2, 10)
    lp1 = lp[start, 0]  # (N, 10)
    lp2 = lp.new_full((N, NUM_DIGITS, NUM_DIGITS), -math.log(NUM_DIGITS))  # placeholder (one-digit prompts)
    lp2[two] = lp[two[owner], 1].reshape(-1, NUM_DIGITS, NUM_DIGITS)  # (10 * N_2, 10) -> (N_2, d1, d2)
    return lp1, lp2


def table_success(lp1: torch.Tensor, lp2: torch.Tensor, task: AdditionTask) -> torch.Tensor:
    """Exact success probability of every prompt from the answer table (same as `success_probs`). (N,)"""
    rows = torch.arange(task.size, device=lp1.device)
    a0, a1 = task.answers[:, 0], task.answers[:, 1]
    return torch.exp(lp1[rows, a0] + (task.lengths == 2).to(lp1.dtype) * lp2[rows, a0, a1])


def sample_from_table(lp1: torch.Tensor, lp2: torch.Tensor, idx: torch.Tensor, n: int,
                      generator: torch.Generator) -> torch.Tensor:
    """n answers of MAX_ANSWER_LEN digits for each prompt index in idx (temperature 1):
    (P,) -> (P * n, 2); row p * n + j is the j-th sample of prompt idx[p] (as `sample_groups`)."""
    P = idx.shape[0]
    first = torch.multinomial(torch.exp(lp1[idx]), n, replacement=True, generator=generator)  # (P, n)
    p2 = torch.exp(lp2[idx[:, None], first])  # (P, n, 10)
    second = torch.multinomial(p2.reshape(P * n, NUM_DIGITS), 1, generator=generator)  # (P*n, 1)
    return torch.cat([first.reshape(P * n, 1), second], dim=1)  # (P*n, 2)


def response_logprobs(lp1: torch.Tensor, lp2: torch.Tensor, idx: torch.Tensor, resp: torch.Tensor) -> torch.Tensor:
    """log pi(y_t | prefix) of sampled answers from the table: idx (B,), resp (B, 2) -> (B, 2)."""
    return torch.stack([lp1[idx, resp[:, 0]], lp2[idx, resp[:, 0], resp[:, 1]]], dim=1)


def _collect_batch(lp1, lp2, task, scheme, P, n, max_rounds, gen):
    """Sample P groups from the (detached) answer table; DAPO keeps only
    informative groups, drawing up to `max_rounds` prompt batches. Returns
    (responses (G*n, 2), rewards (G, n), prompt ids (G,), responses generated,
    fraction of all-wrong groups in the first batch)."""
    device = lp1.device
    resp_all, rew_all, idx_all, used, zero, kept = [], [], [], 0, None, 0
    for _ in range(max_rounds if scheme == "dapo" else 1):
        idx = torch.randint(task.size, (P,), generator=gen,
                            device=device)  # (P,)
        resp = sample_from_table(lp1, lp2, idx, n, gen)  # (P*n, 2)
        rewards = exact_match_reward(resp,
                                     task.answers[idx].repeat_interleave(n, 0),
                                     task.lengths[idx].repeat_interleave(n, 0))
        rewards = rewards.reshape(P, n)  # (P*n,) -> (P, n)
        used += P * n
        if zero is None:
            zero = float((rewards.sum(1) == 0).float().mean())
        if scheme == "dapo":
            keep = informative_groups(rewards)
        else:
            keep = torch.ones(P, dtype=torch.bool, device=device)
        keep &= torch.cumsum(keep.long(), 0) <= P - kept  # do not overfill
        resp_all.append(resp.reshape(P, n, 2)[keep].reshape(-1, 2))
        rew_all.append(rewards[keep])
        idx_all.append(idx[keep])
        kept += int(keep.sum())
        if kept >= P:
            break
    return (torch.cat(resp_all), torch.cat(rew_all), torch.cat(idx_all), used,
            zero)


def train_rl(model, task: AdditionTask, scheme: str, steps: int, prompts_per_step: int = 32, group_size: int = 8,
             lr: float = 1e-3, max_rounds: int = 4, grad_clip: float = 1.0, seed: int = 0,
             show_progress: bool = False, desc: str | None = None, stop_at: float | None = None) -> RLHistory:
    """Group-based policy-gradient RL with the weighting `scheme` (one on-policy update per batch).

    Each step: one forward pass gives the answer table (`answer_table`), from which the groups are
    sampled and scored, the scheme's advantages formed, and the token-level loss `pg_loss`
    back-propagated through the same table. accuracy[k] is the exact mean success after k updates.
    `steps` is a cap: with `stop_at`, the run ends as soon as the exact accuracy reaches it (the
    updates it does take are exactly those of the uncapped run with the same seed).
    """
    check_scheme(scheme)
    if group_size < 2:
        raise ValueError(f"group size must be at least 2, got {group_size}")
    if steps < 1 or prompts_per_step < 1 or lr <= 0:
        raise ValueError("steps, prompts_per_step and lr must be positive")
    if stop_at is not None and not 0 < stop_at <= 1:
        raise ValueError(f"stop_at must be an accuracy in (0, 1], got {stop_at}")
    device = next(model.parameters()).device
    task = task.to(device)
    gen = torch.Generator(device=device).manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    acc, zero, resp_count = [], [], [0.0]
    for _ in progress(range(steps), desc=desc or scheme, disable=not show_progress, leave=False):
        # region: rl update
        lp1, lp2 = answer_table(model, task)  # (N, 10), (N, 10, 10), differentiable
        acc.append(float(table_success(lp1.detach(), lp2.detach(), task).mean()))
        if stop_at is not None and acc[-1] >= stop_at:
            # target reached after len(acc) - 1 updates: the rest of the cap is
            # not needed
            break
        resp, rewards, idx, used, z = _collect_batch(
            lp1.detach(), lp2.detach(), task, scheme, prompts_per_step,
            group_size, max_rounds, gen)
        zero.append(z)
        resp_count.append(resp_count[-1] + used)
        if rewards.shape[0] == 0:
            continue  # DAPO found no informative group in max_rounds batches: no update
        adv = group_advantages(rewards, scheme).reshape(-1)  # (G*n,)
        idx_rep = idx.repeat_interleave(group_size, 0)  # (G*n,)
        positions = torch.arange(MAX_ANSWER_LEN, device=device)[None, :]  # (1, L)
        mask = (positions < task.lengths[idx_rep][:, None]).float()  # (G*n, L)
        logp = response_logprobs(lp1, lp2, idx_rep, resp)  # (G*n, L)
        loss = pg_loss(logp, logp.detach(), adv, mask)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        opt.step()
        # endregion
    else:  # the cap was used up: record the accuracy after the last update
        with torch.no_grad():
            acc.append(float(table_success(*answer_table(model, task), task).mean()))
    return RLHistory(scheme, np.array(acc), np.array(zero), np.array(resp_count))


def train_sft(model, task: AdditionTask, steps: int, batch_size: int = 32, lr: float = 1e-3, seed: int = 0) -> float:
    """Supervised warm-up: cross-entropy on the correct answers (digit-masked). Returns final mean success."""
    device = next(model.parameters()).device
    task = task.to(device)
    gen = torch.Generator(device="cpu").manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    T0 = task.prompts.shape[1]
    for _ in range(steps):
        idx = torch.randint(task.size, (batch_size,), generator=gen).to(device)
        seqs = torch.cat([task.prompts[idx], task.answers[idx]], dim=1)
        mask = (torch.arange(MAX_ANSWER_LEN, device=device)[None, :] < task.lengths[idx][:, None]).float()
        loss = -(answer_logprobs(model, seqs, T0) * mask).sum() / mask.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return float(success_probs(model, task).mean())
