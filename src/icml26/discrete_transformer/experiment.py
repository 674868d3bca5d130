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


__all__ = ["TaskResult", "VariantResult", "attention_at_temperature",
           "make_data", "run_standard_baseline", "run_task", "transition_share"]
