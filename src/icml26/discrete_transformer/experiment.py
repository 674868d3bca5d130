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


def claim_figures(results: dict[str, TaskResult], config: DTConfig) -> tuple[str, dict, dict]:
    """The reproduction check's (claim, measured figures, named checks), with the criterion
    fixed in `DTConfig` (from the plan's three claims):

    1. the annealed model's extracted program reaches exact match >= 0.99 on T1 and
       relative MSE <= 1e-4 on T2;
    2. the no-anneal model's extracted program is clearly worse: exact match < 0.80 on T1,
       or relative MSE >= 100x the annealed one on T2;
    3. the mean selection entropy drops sharply: in every annealed run, a window of 10% of
       training carries >= 30% of the total drop (a linear decay would carry ~10%).
    """
    for t in ("t1_sum", "t2_physics"):
        if t not in results:
            raise ValueError(f"claim_figures needs results for both tasks; missing {t!r}")
    t1, t2 = results["t1_sum"], results["t2_physics"]
    ex1, ex1_na = t1.anneal.extracted["exact"], t1.noanneal.extracted["exact"]
    mse2, mse2_na = t2.anneal.extracted["rel_mse"], t2.noanneal.extracted["rel_mse"]
    shares = [transition_share(r.anneal.train.history["step"], r.anneal.train.history["h_mean"],
                               config.transition_window) for r in (t1, t2)]
    ratio = mse2_na / max(mse2, 1e-30)
    claim = ("Annealed discretisation makes a transformer's algorithm extractable as an exact program "
             "(hypothesis-tested heads + symbolic MLPs); without annealing extraction fails")
    measured = {"T1 exact (anneal)": round(ex1, 3), "T1 exact (no anneal)": round(ex1_na, 2),
                "T2 log10 relMSE (anneal)": round(float(np.log10(max(mse2, 1e-30)))),
                "T2 log10 relMSE (no anneal)": round(float(np.log10(max(mse2_na, 1e-30)))),
                "entropy-drop share in 10% window": round(min(shares), 2)}
    checks = {"annealed program exact": ex1 >= config.min_exact_t1 and mse2 <= config.max_relmse_t2,
              "no-anneal clearly worse": ex1_na < config.max_noanneal_exact_t1
              or ratio >= config.min_noanneal_mse_ratio_t2,
              "sharp transition": min(shares) >= config.min_transition_share}
    return claim, measured, checks


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


__all__ = ["TaskResult", "VariantResult", "attention_at_temperature", "claim_figures",
           "make_data", "run_standard_baseline", "run_task", "transition_share"]
