"""The policy (a tiny randomly initialised `transformers` Qwen3), the batched multi-turn agent
loop, Phase A (SFT on oracle traces), Phase B (structure-blind GRPO with masked tool tokens)
and the passive baseline (our reduced-scale reconstruction of the paper's training)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from .env import MODES, Question, Vocab, encode_traces, neighbor_retrieval, oracle_trace, prompt, query_nodes, render_nb
from .tools import ToolCallRejected, output_words, parse_action, run_code_batch


def build_policy(cfg, vocab: Vocab, seed: int, device):
    """Tiny `Qwen3ForCausalLM` from a `Qwen3Config` (random init; nothing downloaded)."""
    from transformers import Qwen3Config, Qwen3ForCausalLM
    qc = Qwen3Config(vocab_size=len(vocab), hidden_size=cfg.hidden, intermediate_size=cfg.intermediate,
                     num_hidden_layers=cfg.layers, num_attention_heads=cfg.heads, num_key_value_heads=cfg.kv_heads,
                     head_dim=cfg.hidden // cfg.heads, max_position_embeddings=1024, tie_word_embeddings=True,
                     pad_token_id=vocab.pad, bos_token_id=vocab.bos, eos_token_id=vocab.eos)
    torch.manual_seed(seed)
    return Qwen3ForCausalLM(qc).to(device)


def token_logprobs(model, ids: torch.Tensor) -> torch.Tensor:
    """log pi(o_t | o_<t) for t >= 1: (B, T-1). Right padding needs no attention mask (causal)."""
    logits = model(input_ids=ids).logits[:, :-1].float()  # (B, T-1, V)
    return torch.log_softmax(logits, -1).gather(-1, ids[:, 1:, None]).squeeze(-1)


def sft(model, vocab: Vocab, pool, modes: list[str], probs: list[float], steps: int, batch: int,
        lr: float, seed: int, device, desc: str = "SFT") -> list[float]:
    """Phase A: masked next-token NLL on oracle traces (only model tokens count).
    `pool` is a list of questions shared by all modes, or a dict mode -> list (per-mode question pools)."""
    from icml26.common import progress
    pools = pool if isinstance(pool, dict) else {m: pool for m in modes}
    empty = [m for m in modes if not pools.get(m)]
    if empty:
        raise ValueError(f"SFT has no questions for mode(s) {empty}")
    rng = np.random.default_rng(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 20) * max(0.05, 1 - s / steps))
    losses = []
    model.train()
    for _ in progress(range(steps), desc=desc, leave=False):
        if isinstance(pool, dict):
            ms = rng.choice(modes, size=batch, p=probs)
            qs = [pools[m][int(rng.integers(len(pools[m])))] for m in ms]
        else:  # one shared pool
            idx = rng.integers(len(pool), size=batch)
            ms = rng.choice(modes, size=batch, p=probs)
            qs = [pool[i] for i in idx]
        ids, mask = encode_traces(vocab, [oracle_trace(q, m) for q, m in zip(qs, ms)], device)
        lp = token_logprobs(model, ids)  # (B, T-1)
        m = mask[:, 1:]
        loss = -(lp * m).sum() / m.sum()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    model.eval()
    return losses


@dataclass
class Episode:
    q: Question
    ids: list[int]
    mask: list[int]  # 1 on model-generated tokens, 0 on prompt and tool outputs
    nb: dict[int, list[int]] = field(default_factory=dict)  # the interpreter's N
    done: bool = False
    pending_code: str | None = None
    reward: float = 0.0
    answer: int | None = None
    turns: int = 0
    generated: int = 0
    seg: list[int] = field(default_factory=list)
    first_tool: str | None = None
    probed_first: bool = False  # before its first code, it probed every node that code reads (`nodes_read`)
    codes: list[str] = field(default_factory=list)
    reason: str = ""
    last_out: int | None = None  # the interpreter's last output, if an in-range integer


def nodes_read(code: str, q: Question) -> set[int]:
    """The graph nodes a code snippet reads: `N[u]` reads the query node u, `N[v]` reads v
    ("probing first" = every node the first code reads was probed before it ran; an adjacency
    test `v in N[u]` reads u only)."""
    return {node for sym, node in (("N[u]", q.u), ("N[v]", q.v)) if sym in code}


def _append(ep: Episode, text: str, vocab: Vocab) -> None:
    toks = vocab.encode(text)
    ep.ids += toks
    ep.mask += [0] * len(toks)


@torch.no_grad()
def rollout(model, vocab: Vocab, questions: list[Question], mode: str, cfg, *, greedy: bool,
            gen: torch.Generator | None = None) -> list[Episode]:
    """Batched multi-turn agent loop (Sec. "Interaction format"): decode, parse each finished turn
    strictly, answer probes from the graph, and run all pending code in ONE sandboxed batch."""
    if mode not in ("visible", "blind"):
        raise ValueError(f"the agent runs in 'visible' or 'blind' mode, got {mode!r}")
    device = next(model.parameters()).device
    eps = []
    for q in questions:
        q.probes = []
        ep = Episode(q, vocab.encode(prompt(q, mode)), [])
        ep.mask = [0] * len(ep.ids)
        if mode == "visible":
            ep.nb = {x: list(q.adj[x]) for x in query_nodes(q)}
        eps.append(ep)
    semi, eos = vocab.index[";"], vocab.eos
    while True:
        active = [e for e in eps if not e.done and e.pending_code is None]
        if not active:
            waiting = [e for e in eps if e.pending_code is not None]
            if not waiting:
                break
            outs = run_code_batch([e.pending_code for e in waiting], [e.nb for e in waiting],
                                  [(e.q.u, e.q.v) for e in waiting])
            for e, (stdout, err) in zip(waiting, outs):
                words = output_words(stdout, err, vocab)
                _append(e, words, vocab)
                e.last_out = int(words.split()[1]) if words.split()[1].isdigit() else None
                e.pending_code = None
            continue
        # region: decode
        T = max(len(e.ids) for e in active)
        ids = torch.full((len(active), T), vocab.pad, dtype=torch.long)
        for i, e in enumerate(active):
            ids[i, :len(e.ids)] = torch.tensor(e.ids)
        ids = ids.to(device)
        last = torch.tensor([len(e.ids) - 1 for e in active], device=device)
        logits = model(input_ids=ids).logits[
            torch.arange(len(active), device=device), last].float()  # (B, V)
        if greedy:
            nxt = logits.argmax(-1)
        else:
            probs = torch.softmax(logits / cfg.temperature, -1)
            nxt = torch.multinomial(probs.cpu(), 1, generator=gen).squeeze(-1)
        for e, t in zip(active, nxt.tolist()):
            e.ids.append(t)
            e.mask.append(1)
            e.seg.append(t)
            e.generated += 1
            if t in (semi, eos):
                _step_env(e, vocab, cfg)
            elif e.generated >= cfg.max_new_tokens or len(e.seg) > 16:
                e.done, e.reason = True, "token budget exhausted"
        # endregion
    return eps


def _step_env(e: Episode, vocab: Vocab, cfg) -> None:
    words = vocab.decode(e.seg).split()
    e.seg = []
    # region: step
    try:
        act = parse_action(words, vocab, probe_cap=cfg.probe_cap,
                           graph_nodes=e.q.adj,
                           bindings={"u": e.q.u, "v": e.q.v})
    except ToolCallRejected as error:
        e.done, e.reason = True, f"rejected: {error}"
        return
    if act.kind == "answer":
        value = e.last_out if act.from_output else act.value
        e.done, e.answer = True, value
        e.reward = float(value is not None and value == e.q.answer)
        e.reason = "answered"
        return
    e.turns += 1
    if e.first_tool is None:
        e.first_tool = act.kind
    if act.kind == "probe":
        got = neighbor_retrieval(e.q, list(act.nodes), cfg.probe_cap)
        e.nb.update(got)
        _append(e, f"obs {render_nb(got)} ;", vocab)
    else:
        if not e.codes:
            read = nodes_read(act.code, e.q)
            e.probed_first = bool(read) and read <= set(e.q.probes)
        e.codes.append(act.code)
        e.pending_code = act.code
    # endregion
    if e.turns > cfg.max_turns:
        e.done, e.reason = True, "too many tool calls"


def pad_episodes(eps: list[Episode], pad: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    T = max(len(e.ids) for e in eps)
    ids = torch.full((len(eps), T), pad, dtype=torch.long)
    mask = torch.zeros((len(eps), T))
    for i, e in enumerate(eps):
        ids[i, :len(e.ids)] = torch.tensor(e.ids)
        mask[i, :len(e.mask)] = torch.tensor(e.mask, dtype=torch.float32)
    return ids.to(device), mask.to(device)


def group_advantages(rewards: torch.Tensor,
                     delta: float = 1e-4) -> tuple[torch.Tensor, torch.Tensor]:
    """GRPO advantages A_i = (r_i - mean_g r) / (std_g r + delta), per group
    (rows of (Q, G)). Returns (A (Q, G), keep (Q,)) where groups with
    all-equal rewards are dropped."""
    if rewards.dim() != 2 or rewards.shape[1] < 2:
        raise ValueError(f"rewards must be (questions, G>=2), got shape {tuple(rewards.shape)}")
    mean = rewards.mean(1, keepdim=True)
    std = rewards.std(1, keepdim=True, unbiased=False)
    keep = (rewards.max(1).values - rewards.min(1).values) > 0
    return (rewards - mean) / (std + delta), keep


def grpo_loss(lp: torch.Tensor, lp_old: torch.Tensor, lp_ref: torch.Tensor,
              adv: torch.Tensor, mask: torch.Tensor,
              eps: float, beta: float) -> torch.Tensor:
    """Negative GRPO objective (the objective J of the chapter): clipped ratio
    term on model tokens only, normalised by sum_i |o_i|, minus
    beta * KL(pi || pi_ref) (k3 estimator). All (B, T-1) but adv (B,)."""
    ratio = torch.exp(lp - lp_old)
    a = adv[:, None]
    surr = torch.minimum(ratio * a, torch.clamp(ratio, 1 - eps, 1 + eps) * a)
    kl = torch.exp(lp_ref - lp) - (lp_ref - lp) - 1
    per_tok = surr - beta * kl
    return -(per_tok * mask).sum() / mask.sum().clamp_min(1.0)


def grpo(model, vocab: Vocab, sample_q, cfg, seed: int, device, epochs: int = 1) -> dict[str, list[float]]:
    """Phase B: structure-blind GRPO. `sample_q(rng)` draws a fresh training question."""
    import copy
    from icml26.common import progress
    ref = copy.deepcopy(model).eval()
    for p in ref.parameters():
        p.requires_grad_(False)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.grpo_lr, weight_decay=0.0)
    rng = np.random.default_rng(seed + 1000)
    gen = torch.Generator().manual_seed(seed + 2000)
    hist = {"reward": [], "probe_first": [], "kept_groups": []}
    for _ in progress(range(cfg.grpo_iters), desc="GRPO (blind)", leave=False):
        # region: iteration
        qs = [sample_q(rng) for _ in range(cfg.grpo_questions)]
        batch = [Question(q.adj, q.task, q.u, q.v, q.answer)
                 for q in qs for _ in range(cfg.group)]
        model.eval()
        eps_ = rollout(model, vocab, batch, "blind", cfg, greedy=False, gen=gen)
        r = torch.tensor([e.reward for e in eps_]).view(
            cfg.grpo_questions, cfg.group)  # (Q, G)
        hist["reward"].append(float(r.mean()))
        hist["probe_first"].append(float(np.mean([e.probed_first for e in eps_])))
        adv, keep = group_advantages(r)
        hist["kept_groups"].append(int(keep.sum()))
        if not keep.any():
            continue
        sel = [i for i in range(len(eps_)) if keep[i // cfg.group]]
        ids, mask = pad_episodes([eps_[i] for i in sel], vocab.pad, device)
        a = adv.reshape(-1)[sel].to(device)  # (B,)
        m = mask[:, 1:]
        with torch.no_grad():
            lp_old = token_logprobs(model, ids)
            lp_ref = token_logprobs(ref, ids)
        model.train()
        for _ in range(epochs):
            loss = grpo_loss(token_logprobs(model, ids), lp_old, lp_ref, a, m,
                             cfg.clip_eps, cfg.kl_beta)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        # endregion
        model.eval()
    return hist


@torch.no_grad()
def passive_answers(model, vocab: Vocab, questions: list[Question], chunk: int = 64) -> list[int]:
    """Passive ingestion: the prompt holds the whole edge list; the model answers directly (greedy)."""
    device = next(model.parameters()).device
    out = []
    for s in range(0, len(questions), chunk):
        seqs = [vocab.encode(prompt(q, "passive") + " answer") for q in questions[s:s + chunk]]
        T = max(map(len, seqs))
        ids = torch.full((len(seqs), T), vocab.pad, dtype=torch.long)
        for i, x in enumerate(seqs):
            ids[i, :len(x)] = torch.tensor(x)
        last = torch.tensor([len(x) - 1 for x in seqs])
        logits = model(input_ids=ids.to(device)).logits[torch.arange(len(seqs)), last.to(device)]
        for t in logits.argmax(-1).tolist():
            out.append(int(vocab.words[t]) if vocab.is_num(t) else -1)
    return out


__all__ = ["MODES", "build_policy", "sft", "rollout", "grpo", "group_advantages", "grpo_loss", "passive_answers",
           "token_logprobs", "Episode"]
