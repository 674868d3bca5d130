"""The chapter's experiment: per independently trained seed, Phase A (SFT, mostly visible
traces), blind evaluation, Phase B (structure-blind GRPO), evaluation at the held-out sizes, and
the passive baseline with the same number of gradient updates. `run_experiment` returns plain
data; the claims are decided from it in `claims.py` (`build_ledger`). The policy is a tiny
randomly initialised Qwen3 trained here: no LLM is downloaded."""

from __future__ import annotations

import numpy as np
import torch

from icml26.common import progress

from .agent import build_policy, grpo, passive_answers, rollout, sft
from .env import Question, Vocab, sample_question



def make_sampler(cfg, n_range=None):
    lo, hi = n_range or cfg.train_n
    def sample(rng):
        return sample_question(rng, int(rng.integers(lo, hi + 1)), cfg.p_edge, cfg.max_id, cfg.tasks)
    return sample


def eval_set(cfg, n: int, seed: int) -> list[Question]:
    rng = np.random.default_rng(10_000 + 97 * n + seed)  # held-out: disjoint seed stream from training
    return [sample_question(rng, n, cfg.p_edge, cfg.max_id, cfg.tasks) for _ in range(cfg.eval_graphs)]


def agent_eval(model, vocab, qs, mode, cfg):
    eps = rollout(model, vocab, [Question(q.adj, q.task, q.u, q.v, q.answer) for q in qs], mode, cfg, greedy=True)
    acc = float(np.mean([e.reward for e in eps]))
    probe = float(np.mean([e.probed_first for e in eps]))
    return acc, probe, eps


def trivial_answers(pool: list[Question]) -> dict[str, int]:
    """The trivial baseline of the competence checks: per task, the most frequent answer in the
    training pool (what a model that ignores the graph would say)."""
    out = {}
    for task in sorted({q.task for q in pool}):
        values, counts = np.unique([q.answer for q in pool if q.task == task], return_counts=True)
        out[task] = int(values[np.argmax(counts)])
    return out


def _down(values, n: int = 200) -> list[float]:
    values = list(values)
    return [float(v) for v in values[:: max(1, len(values) // n)]]


def explore_views(agent_model, passive_model, vocab, cfg, sizes=(8, 12, 16, 20, 24, 28), n_questions: int = 16,
                  seed: int = 0) -> dict:
    """The Explore section's precomputed views (plain data): per graph size and task, 16 fresh
    questions answered by the trained agent (blind, greedy) and the passive model; the first
    question's graph, query nodes and the nodes the agent probed, for the drawing."""
    views = {}
    for n in sizes:
        if n >= cfg.max_id:  # the prompt names n as a number word: 0..max_id-1
            continue
        for task in cfg.tasks:
            rng = np.random.default_rng(1234 + seed + 31 * n)
            qs = [sample_question(rng, n, cfg.p_edge, cfg.max_id, (task,)) for _ in range(n_questions)]
            eps = rollout(agent_model, vocab, [Question(q.adj, q.task, q.u, q.v, q.answer) for q in qs], "blind",
                          cfg, greedy=True)
            pas = passive_answers(passive_model, vocab, qs)
            q0 = eps[0].q
            views[f"{n}-{task}"] = {
                "agent": [float(e.reward) for e in eps], "passive": [float(a == q.answer) for a, q in zip(pas, qs)],
                "adj": {str(k): [int(x) for x in v] for k, v in q0.adj.items()}, "u": int(q0.u), "v": int(q0.v),
                "task": task, "answer": int(q0.answer), "probes": [int(x) for x in q0.probes],
                "agent_answer": eps[0].answer, "passive_answer": int(pas[0])}
    return views


def run_seed(cfg, seed: int, device, keep_views: bool = False) -> dict:
    """One independently trained seed: Phase A (SFT), blind evaluation, Phase B (structure-blind
    GRPO), evaluation at the held-out sizes, and the passive baseline with the same number of
    gradient updates, each trained afresh from `seed`. Returns plain data."""
    torch.manual_seed(seed)
    vocab = Vocab(cfg.max_id)
    rng = np.random.default_rng(seed)
    sampler = make_sampler(cfg)
    pool = [sampler(rng) for _ in range(2048)]
    tests = {n: eval_set(cfg, n, seed) for n in cfg.test_sizes}
    n0 = cfg.test_sizes[0]
    trivial = trivial_answers(pool)
    # Phase A: SFT on oracle traces: visible for all tasks, a few blind ones only for `sft_blind_tasks`
    agent = build_policy(cfg, vocab, seed, device)
    sft_pools = {"visible": pool, "blind": [q for q in pool if q.task in cfg.sft_blind_tasks]}
    modes, probs = (["visible", "blind"], [1 - cfg.blind_frac, cfg.blind_frac]) if cfg.blind_frac > 0 else (["visible"], [1.0])
    sft_loss = sft(agent, vocab, sft_pools, modes, probs,
                   cfg.sft_steps, cfg.sft_batch, cfg.sft_lr, seed, device, desc="SFT agent")
    blind_before, probe_before, eps_before = agent_eval(agent, vocab, tests[n0], "blind", cfg)
    visible_before, _, _ = agent_eval(agent, vocab, tests[n0], "visible", cfg)
    items = {"blind_before": [e.reward for e in eps_before], "probe_before": [float(e.probed_first) for e in eps_before]}
    # Phase B: structure-blind GRPO
    hist = grpo(agent, vocab, sampler, cfg, seed, device)
    blind_after, per_task, example = {}, {}, None
    probe_after = 0.0
    for n in cfg.test_sizes:
        acc, pr, eps = agent_eval(agent, vocab, tests[n], "blind", cfg)
        blind_after[str(n)] = acc
        items[f"agent_{n}"] = [e.reward for e in eps]
        per_task[str(n)] = {t: {"count": sum(e.q.task == t for e in eps),
                                "agent": float(np.mean([e.reward for e in eps if e.q.task == t] or [0]))}
                            for t in cfg.tasks}
        if n == n0:
            items["probe_after"] = [float(e.probed_first) for e in eps]
            probe_after, example = pr, eps[0]
    visible_after, _, _ = agent_eval(agent, vocab, tests[n0], "visible", cfg)
    # Passive baseline: same architecture, same number of gradient updates, full edge list, no tools
    passive = build_policy(cfg, vocab, seed, device)
    p_loss = sft(passive, vocab, pool, ["passive"], [1.0], cfg.sft_steps + cfg.grpo_iters, cfg.sft_batch,
                 cfg.sft_lr, seed, device, desc="SFT passive")
    p_acc, t_acc = {}, {}
    for n in cfg.test_sizes:
        ans = passive_answers(passive, vocab, tests[n])
        right = [float(a == q.answer) for a, q in zip(ans, tests[n])]
        p_acc[str(n)] = float(np.mean(right))
        items[f"passive_{n}"] = right
        t_acc[str(n)] = float(np.mean([trivial[q.task] == q.answer for q in tests[n]]))
        for t in cfg.tasks:
            per_task[str(n)][t]["passive"] = float(np.mean([r for r, q in zip(right, tests[n]) if q.task == t] or [0]))
    out = {"seed": int(seed), "sft_loss": _down(sft_loss), "passive_loss": _down(p_loss),
           "grpo_hist": {k: [float(x) for x in v] for k, v in hist.items()},
           "blind_before": blind_before, "probe_before": probe_before, "visible_before": visible_before,
           "blind_after": blind_after, "probe_after": probe_after, "visible_after": visible_after,
           "passive": p_acc, "trivial": t_acc, "per_task": per_task, "items": items,
           "example": {"text": vocab.decode(example.ids), "reward": float(example.reward)}}
    if keep_views:
        out["explore"] = explore_views(agent.eval(), passive.eval(), vocab, cfg, seed=seed)
    return out


def run_experiment(config, seed: int = 0, device=None) -> dict:
    """The chapter's experiment: `config.train_seeds` independently trained seeds (seed, seed+1,
    ...), each training the agent (SFT, then structure-blind GRPO) and the passive model afresh
    and evaluating both on the same held-out questions (`run_seed`). Plain data; the first seed
    also keeps the Explore views."""
    from icml26.common import resolve_device

    device = resolve_device("auto") if device is None else resolve_device(device)
    seeds = [int(seed) + i for i in range(config.train_seeds)]
    per_seed = [run_seed(config, s, device, keep_views=(i == 0))
                for i, s in enumerate(progress(seeds, desc="training seeds"))]
    return {"seeds": seeds, "test_sizes": list(config.test_sizes), "tasks": list(config.tasks),
            "grpo_iters": config.grpo_iters, "per_seed": per_seed}


def mean_over_seeds(results: dict, key: str, n: int | None = None) -> float:
    vals = [s[key] for s in results["per_seed"]]
    if n is not None:
        vals = [v[str(n)] for v in vals]
    return float(np.mean(vals))


def results_rows(results: dict) -> list[dict]:
    small, large = results["test_sizes"][0], results["test_sizes"][-1]
    m = lambda k, n=None: mean_over_seeds(results, k, n)  # noqa: E731
    return [
        {"arm": "trivial (majority answer per task)", f"acc n={small}": m("trivial", small),
         f"acc n={large}": m("trivial", large), "paper": "–"},
        {"arm": "passive (edge list, no tools)", f"acc n={small}": m("passive", small),
         f"acc n={large}": m("passive", large), "paper": "base model, passive prompt (numbers not available)"},
        {"arm": "agent after SFT (blind)", f"acc n={small}": m("blind_before"), f"acc n={large}": float("nan"),
         "paper": "not available"},
        {"arm": "agent after SFT + blind GRPO", f"acc n={small}": m("blind_after", small),
         f"acc n={large}": m("blind_after", large), "paper": "GRASP-4B: +53.06% avg over base (abstract)"},
    ]
