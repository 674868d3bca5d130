"""The chapter's experiment: per seed, Phase A (SFT, mostly visible traces), blind evaluation,
Phase B (structure-blind GRPO), evaluation at two held-out sizes, and the passive baseline with
the same number of gradient updates; then the claims ledger (decision functions in `claims`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from icml26.common import progress
from icml26.common.ledger import Ledger

from . import claims

from .agent import build_policy, grpo, passive_answers, rollout, sft
from .env import Question, Vocab, sample_question

# The stored run uses no LLM: the policy is a tiny randomly initialised Qwen3 trained here.
SOURCE_BASIS = "abstract only (and the README)"


@dataclass
class SeedResult:
    seed: int
    sft_loss: list[float]
    passive_loss: list[float]
    grpo_hist: dict[str, list[float]]
    blind_before: float
    probe_before: float
    blind_after: dict[int, float]  # size -> accuracy (greedy, blind)
    probe_after: float
    visible_after: float
    passive: dict[int, float]  # size -> accuracy
    per_task: dict[str, dict[str, float]] = field(default_factory=dict)
    example: object = None
    agent: object = None  # trained policies (kept for the Explore section)
    passive_model: object = None
    # per-question outcomes on the held-out sets, for the paired tests of the claims:
    # "blind_before", "probe_before", "probe_after" (small size), f"agent_{n}", f"passive_{n}"
    items: dict[str, list[float]] = field(default_factory=dict)


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


def run_seed(cfg, seed: int, device) -> SeedResult:
    torch.manual_seed(seed)
    vocab = Vocab(cfg.max_id)
    rng = np.random.default_rng(seed)
    sampler = make_sampler(cfg)
    pool = [sampler(rng) for _ in range(2048)]
    tests = {n: eval_set(cfg, n, seed) for n in cfg.test_sizes}
    n0 = cfg.test_sizes[0]
    # Phase A: SFT on oracle traces: visible for all tasks, a few blind ones only for `sft_blind_tasks`
    agent = build_policy(cfg, vocab, seed, device)
    sft_pools = {"visible": pool, "blind": [q for q in pool if q.task in cfg.sft_blind_tasks]}
    modes, probs = (["visible", "blind"], [1 - cfg.blind_frac, cfg.blind_frac]) if cfg.blind_frac > 0 else (["visible"], [1.0])
    sft_loss = sft(agent, vocab, sft_pools, modes, probs,
                   cfg.sft_steps, cfg.sft_batch, cfg.sft_lr, seed, device, desc="SFT agent")
    blind_before, probe_before, eps_before = agent_eval(agent, vocab, tests[n0], "blind", cfg)
    items = {"blind_before": [e.reward for e in eps_before], "probe_before": [float(e.probed_first) for e in eps_before]}
    # Phase B: structure-blind GRPO
    hist = grpo(agent, vocab, sampler, cfg, seed, device)
    blind_after, per_task, example = {}, {}, None
    probe_after = 0.0
    for n in cfg.test_sizes:
        acc, pr, eps = agent_eval(agent, vocab, tests[n], "blind", cfg)
        blind_after[n] = acc
        items[f"agent_{n}"] = [e.reward for e in eps]
        if n == n0:
            items["probe_after"] = [float(e.probed_first) for e in eps]
            probe_after, example = pr, eps[0]
            for t in cfg.tasks:
                per_task.setdefault(t, {})["agent"] = float(np.mean([e.reward for e in eps if e.q.task == t] or [0]))
    visible_after, _, _ = agent_eval(agent, vocab, tests[n0], "visible", cfg)
    # Passive baseline: same architecture, same number of gradient updates, full edge list, no tools
    passive = build_policy(cfg, vocab, seed, device)
    p_loss = sft(passive, vocab, pool, ["passive"], [1.0], cfg.sft_steps + cfg.grpo_iters, cfg.sft_batch,
                 cfg.sft_lr, seed, device, desc="SFT passive")
    p_acc = {}
    for n in cfg.test_sizes:
        ans = passive_answers(passive, vocab, tests[n])
        p_acc[n] = float(np.mean([a == q.answer for a, q in zip(ans, tests[n])]))
        items[f"passive_{n}"] = [float(a == q.answer) for a, q in zip(ans, tests[n])]
        if n == n0:
            for t in cfg.tasks:
                per_task[t]["passive"] = float(np.mean([a == q.answer for a, q in zip(ans, tests[n]) if q.task == t] or [0]))
    return SeedResult(seed, sft_loss, p_loss, hist, blind_before, probe_before, blind_after, probe_after,
                      visible_after, p_acc, per_task, example, agent.eval(), passive.eval(), items)


@dataclass
class Results:
    config: object
    seeds: list[SeedResult]

    def mean(self, key: str, n: int | None = None) -> float:
        vals = [getattr(s, key) for s in self.seeds]
        if n is not None:
            vals = [v[n] for v in vals]
        return float(np.mean(vals))


def run_experiment(cfg, device) -> Results:
    out = [run_seed(cfg, s, device) for s in progress(cfg.seeds, desc="seeds")]
    return Results(cfg, out)


def build_ledger(r: Results) -> Ledger:
    """The claims ledger from the first seed's per-question outcomes (paired tests, see `claims`);
    the extensions use the means over seeds."""
    small, large = r.config.test_sizes[0], r.config.test_sizes[-1]
    it = r.seeds[0].items
    ledger = Ledger("grasp", claims.CLAIM_IDS, SOURCE_BASIS)
    ledger.add(claims.decide_c1(it[f"agent_{small}"], it[f"passive_{small}"], it[f"agent_{large}"],
                                it[f"passive_{large}"]))
    ledger.add(claims.decide_c2(it["blind_before"], it[f"agent_{small}"], it["probe_before"], it["probe_after"]))
    ledger.add(claims.decide_c3())
    ledger.add(claims.decide_e1(r.mean("blind_after", small), r.mean("passive", small), r.mean("blind_after", large)))
    ledger.add(claims.decide_e2(r.mean("blind_after", small) - r.mean("blind_before"),
                                r.mean("probe_after") - r.mean("probe_before")))
    return ledger


def results_rows(r: Results) -> list[dict]:
    small, large = r.config.test_sizes[0], r.config.test_sizes[-1]
    return [
        {"arm": "passive (edge list, no tools)", f"acc n={small}": r.mean("passive", small),
         f"acc n={large}": r.mean("passive", large), "paper": "base model, passive prompt (numbers not available)"},
        {"arm": "agent after SFT (blind)", f"acc n={small}": r.mean("blind_before"), f"acc n={large}": float("nan"),
         "paper": "not available"},
        {"arm": "agent after SFT + blind GRPO", f"acc n={small}": r.mean("blind_after", small),
         f"acc n={large}": r.mean("blind_after", large), "paper": "GRASP-4B: +53.06% avg over base (abstract)"},
    ]
