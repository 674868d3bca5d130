"""The chapter's experiments: per task, the annealed Discrete Transformer and the no-anneal
ablation through the identical extraction pipeline, the standard-transformer baseline, the
entropy-transition measure, the reproduction criterion and the widget's cheap re-run."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from icml26.common import resolve_device

from .config import DTConfig
from .data import TaskData, make_task
from .extract import Program, evaluate_predictions, extract_program, hypothesis_test, run_program
from .train import TrainResult, train_discrete_transformer, train_standard_transformer


@dataclass
class VariantResult:
    train: TrainResult
    program: Program
    network: dict[str, float]  # argmax reads, attention at the final temperature
    extracted: dict[str, float]  # the extracted program


@dataclass
class TaskResult:
    name: str
    test: TaskData
    anneal: VariantResult
    noanneal: VariantResult


def make_data(config: DTConfig, name: str, seed: int) -> tuple[TaskData, TaskData]:
    """Train and test sets of task `name` (independent generators)."""
    device = resolve_device(config.device)
    g = torch.Generator().manual_seed(1000 * seed + 17 + (0 if name == "t1_sum" else 1))
    return (make_task(name, config.n_train, config.seq_len, g, device),
            make_task(name, config.n_test, config.seq_len, g, device))


def run_variant(config: DTConfig, train: TaskData, test: TaskData, anneal: bool, seed: int) -> VariantResult:
    tr = train_discrete_transformer(config, train, anneal, seed, desc=f"{train.name} {'anneal' if anneal else 'no anneal'}")
    with torch.no_grad():
        net = evaluate_predictions(tr.model(test.x, tr.final_tau, hard=True), test)
    prog = extract_program(tr.model, test, tr.final_tau, config, seed)
    return VariantResult(tr, prog, net, evaluate_predictions(run_program(prog, test.x), test))


def run_task(config: DTConfig, name: str, seed: int = 0) -> TaskResult:
    """Annealed model and no-anneal baseline on task `name`, same data and seed."""
    train, test = make_data(config, name, seed)
    return TaskResult(name, test, run_variant(config, train, test, True, seed),
                      run_variant(config, train, test, False, seed))


def run_standard_baseline(config: DTConfig, name: str = "t2_physics", seed: int = 0) -> dict:
    """Baseline (b): a standard transformer; its test error and, per head, the best routing
    hypothesis (no key slots exist, so only positional/uniform hypotheses apply)."""
    train, test = make_data(config, name, seed)
    model = train_standard_transformer(config, train, seed)
    with torch.no_grad():
        err = evaluate_predictions(model(test.x), test)
        tests = [hypothesis_test(A, test.mask, config) for A in model.attention_maps(test.x)]
    return {"model": model, "error": err, "heads": tests,
            "best_agreement": max(t.agreement for t in tests), "n_accepted": sum(t.accepted for t in tests)}


def transition_share(step: np.ndarray | list, entropy: np.ndarray | list, window: float = 0.1) -> float:
    """Largest share of the total entropy drop that happens within any window of `window` x
    (training length); a linear decay gives about `window`, a sharp transition far more."""
    s, h = np.asarray(step, float), np.asarray(entropy, float)
    if s.ndim != 1 or s.shape != h.shape or len(s) < 3:
        raise ValueError("step and entropy must be 1-D arrays of the same length >= 3")
    total = h[0] - h[-1]
    if total <= 0:
        return 0.0
    width = window * (s[-1] - s[0])
    best = 0.0
    for a in range(len(s)):
        b = np.searchsorted(s, s[a] + width, side="right") - 1
        best = max(best, h[a] - h[b])
    return float(best / total)


def attention_at_temperature(result: TaskResult, tau: float, n_seqs: int = 1):
    """Widget helper: the annealed model's attention matrices and read distributions when
    the temperature is set to `tau` (argmax-free soft reads without noise)."""
    if tau <= 0:
        raise ValueError(f"temperature must be positive, got {tau}")
    model = result.anneal.train.model
    with torch.no_grad():
        _, tr = model(result.test.x[:n_seqs], tau, hard=True, trace=True)
        reads = [torch.softmax(r.logits / tau, -1).cpu().numpy() for r in model.reads()]
    return [a[0].cpu().numpy() for layer in tr["attn"] for a in layer], reads


def _rel(a: torch.Tensor, b: torch.Tensor, data: TaskData) -> float:
    """Relative MSE of predictions `a` against `b` on the target positions (divided by Var y)."""
    m = data.mask
    return float(((a[m].double() - b[m].double()) ** 2).mean() / data.y[m].double().var(unbiased=False).clamp_min(1e-12))


def run_seed(config: DTConfig, seed: int) -> tuple[dict, dict]:
    """One independently trained seed of every arm: on T1 the annealed model, the no-anneal model
    (deterministic attention) and the no-anneal model with Gumbel attention, each through the same
    extraction; on T2 the annealed model and the standard transformer. Returns (plain figures,
    the TaskResults for the page's plots)."""
    from .claims import per_sequence

    t1_train, t1_test = make_data(config, "t1_sum", seed)
    t1 = TaskResult("t1_sum", t1_test, run_variant(config, t1_train, t1_test, True, seed),
                    run_variant(config, t1_train, t1_test, False, seed))
    tr = train_discrete_transformer(config, t1_train, False, seed, desc="t1_sum no anneal, Gumbel attention",
                                    gumbel_attention=True)
    prog = extract_program(tr.model, t1_test, tr.final_tau, config, seed)
    gumbel = VariantResult(tr, prog, {}, evaluate_predictions(run_program(prog, t1_test.x), t1_test))
    seq = per_sequence(t1)
    with torch.no_grad():
        soft = {k: evaluate_predictions(v.train.model(t1_test.x, v.train.final_tau, hard=False), t1_test)["exact"]
                for k, v in (("anneal", t1.anneal), ("noanneal", t1.noanneal), ("noanneal_gumbel", gumbel))}
    t2_train, t2_test = make_data(config, "t2_physics", seed)
    a2 = run_variant(config, t2_train, t2_test, True, seed)
    with torch.no_grad():
        net2 = a2.train.model(t2_test.x, a2.train.final_tau, hard=True)
        prog2 = run_program(a2.program, t2_test.x)
    std = run_standard_baseline(config, "t2_physics", seed)
    figures = {
        "seed": seed,
        "t1": {"anneal": {"program_exact": t1.anneal.extracted["exact"], "agree_share": float(np.mean(seq["agree"])),
                          "network_exact": soft["anneal"]},
               "noanneal": {"program_exact": t1.noanneal.extracted["exact"], "network_exact": soft["noanneal"]},
               "noanneal_gumbel": {"program_exact": gumbel.extracted["exact"], "network_exact": soft["noanneal_gumbel"]},
               "seq_anneal": seq["anneal"].tolist(), "seq_noanneal": seq["noanneal"].tolist()},
        "t2": {"program_rel_mse": a2.extracted["rel_mse"], "network_rel_mse": a2.network["rel_mse"],
               "fidelity_rel_mse": _rel(prog2, net2, t2_test), "standard_rel_mse": std["error"]["rel_mse"],
               "heads_accepted": [a2.program.n_heads_accepted, a2.program.n_heads]},
        "entropy_share": [transition_share(r.train.history["step"], r.train.history["h_mean"], 0.1)
                          for r in (t1.anneal, a2)],
        "history": {"t1_anneal": t1.anneal.train.history, "t1_noanneal": t1.noanneal.train.history,
                    "t2_anneal": a2.train.history},
    }
    return figures, {"t1_sum": t1, "t2_physics": TaskResult("t2_physics", t2_test, a2, a2), "standard": std,
                     "t1_gumbel": gumbel}


def run_experiment(config: DTConfig, seed: int = 0, device=None, keep: dict | None = None) -> dict:
    """The whole experiment behind the ledger: `config.n_seeds` independently trained seeds
    (seed, seed + 1, ...) of every arm (`run_seed`), as plain data, plus the first seed's program
    sources. `keep`: a dict that receives the first seed's trained models (TaskResults) for the
    page's attention plots and widget; the results themselves never hold a model."""
    from dataclasses import asdict, replace

    from .extract import program_source

    dev = resolve_device("auto" if device is None else device)
    config = replace(config, device=str(dev))
    per_seed = []
    for k in range(config.n_seeds):
        figures, objects = run_seed(config, seed + k)
        per_seed.append(figures)
        if k == 0:
            figures["programs"] = {"t1_anneal": program_source(objects["t1_sum"].anneal.program),
                                   "t1_noanneal": program_source(objects["t1_sum"].noanneal.program),
                                   "t1_noanneal_gumbel": program_source(objects["t1_gumbel"].program),
                                   "t2_anneal": program_source(objects["t2_physics"].anneal.program)}
            if keep is not None:
                keep.update(objects)
    return {"config": asdict(config), "seeds": [seed + k for k in range(config.n_seeds)], "per_seed": per_seed}


__all__ = ["TaskResult", "VariantResult", "attention_at_temperature",
           "make_data", "run_experiment", "run_seed", "run_standard_baseline", "run_task", "transition_share"]
