"""The chapter's experiment: TT-Sparse (learned soft-TopK connections, then pruned) versus
the random-connection ablation and the baselines, on the same bits, plus the pass criterion."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from icml26.common import progress, resolve_device

from . import baselines
from .config import TTSparseConfig
from .data import TabularSplit, load_split
from .model import FrozenTTSparse, TTSparseModel, predict_scores, prune, task_accuracy, task_metric, train_tt_sparse
from .rules import RuleSet, explain, predict_rules


@dataclass
class TTSparseResult:
    """One trained TT-Sparse model, its exact rules and its test figures."""

    frozen: FrozenTTSparse
    rules: RuleSet
    test_metric: float
    test_accuracy: float | None
    complexity: int
    exact: bool
    max_score_diff: float


def check_exact(frozen: FrozenTTSparse, rules: RuleSet, X, S=None, rel_tol: float = 1e-5) -> tuple[bool, float]:
    """Rule-only predictions equal the network's: identical node bits (DNF and CNF), the same
    predicted class, and scores equal up to float32 rounding (|diff| <= rel_tol (1 + |s|))."""
    device = frozen.idx.device
    with torch.no_grad():
        z = frozen.nodes(torch.as_tensor(np.asarray(X), dtype=torch.float32, device=device)).cpu().numpy()
    z = z[:, rules.node_ids]
    bits_ok = all(np.array_equal(rules.node_bits(np.asarray(X), f), z) for f in ("dnf", "cnf"))
    net = predict_scores(frozen, X, S)
    ok = bits_ok
    diff = 0.0
    for form in ("dnf", "cnf"):
        rs = predict_rules(rules, X, S, form)
        diff = max(diff, float(np.abs(rs - net).max()))
        ok &= bool(np.all(np.abs(rs - net) <= rel_tol * (1 + np.abs(net))))
        if rules.task != "regression":
            cls = lambda s: (s[:, 0] > 0) if s.shape[1] == 1 else s.argmax(1)
            ok &= bool(np.array_equal(cls(rs), cls(net)))
    return ok, diff


def _finish(frozen: FrozenTTSparse, split: TabularSplit, S_te, S_all, dont_cares: str) -> TTSparseResult:
    """Rules, exactness on every row (train, validation, test) and test figures of a frozen model."""
    rules = explain(frozen, split.encoder, split.X_train, dont_cares=dont_cares, task=split.task)
    X_all = np.concatenate([split.X_train, split.X_val, split.X_test])
    exact, diff = check_exact(frozen, rules, X_all, S_all)
    scores = predict_rules(rules, split.X_test, S_te)
    acc = None if split.task == "regression" else task_accuracy(split.task, split.y_test, scores)
    return TTSparseResult(frozen, rules, task_metric(split.task, split.y_test, scores), acc,
                          rules.complexity(), exact, diff)


def _skip_features(split: TabularSplit, cfg: TTSparseConfig):
    """The skip features (S_train, S_val, S_test, all three stacked), or Nones without skips."""
    S_tr, S_va, S_te = (split.S_train, split.S_val, split.S_test) if cfg.use_skip else (None, None, None)
    return S_tr, S_va, S_te, None if S_tr is None else np.concatenate([S_tr, S_va, S_te])


def _train_frozen(split: TabularSplit, cfg: TTSparseConfig, S_tr, S_va, seed: int, learn_connections: bool,
                  device) -> FrozenTTSparse:
    """Build and train one TT-sparse network, then freeze it ."""
    model = TTSparseModel(split.encoder.n_bits, split.n_outputs, cfg.n_nodes, cfg.k,
                          n_skip=S_tr.shape[1] if cfg.use_skip else 0, learn_connections=learn_connections,
                          dropout=cfg.dropout, seed=seed, device=device)
    train_tt_sparse(model, split.X_train, split.y_train, split.task, split.X_val, split.y_val, cfg,
                    S_tr, S_va, seed=seed)
    return model.freeze()


def fit_tt_sparse_pair(split: TabularSplit, cfg: TTSparseConfig, seed: int = 0, learn_connections: bool = True,
                       device="auto", dont_cares: str = "structural") -> tuple[TTSparseResult, TTSparseResult]:
    """Train once, freeze, and return (unpruned result, pruned result), both converted to rules."""
    device = resolve_device(device)
    S_tr, S_va, S_te, S_all = _skip_features(split, cfg)
    frozen = _train_frozen(split, cfg, S_tr, S_va, seed, learn_connections, device)
    unpruned = _finish(frozen, split, S_te, S_all, dont_cares)
    pruned, _ = prune(frozen, split.X_train, split.y_train, split.task, split.X_val, split.y_val,
                      cfg, S_tr, S_va)
    return unpruned, _finish(pruned, split, S_te, S_all, dont_cares)


def fit_tt_sparse(split: TabularSplit, cfg: TTSparseConfig, seed: int = 0, learn_connections: bool = True,
                  do_prune: bool = True, device="auto", dont_cares: str = "structural") -> TTSparseResult:
    """Train, freeze, optionally prune, and convert to rules; exactness checked on train+val+test."""
    device = resolve_device(device)
    if do_prune:
        return fit_tt_sparse_pair(split, cfg, seed, learn_connections, device, dont_cares)[1]
    S_tr, S_va, S_te, S_all = _skip_features(split, cfg)
    return _finish(_train_frozen(split, cfg, S_tr, S_va, seed, learn_connections, device), split, S_te,
                   S_all, dont_cares)


def _baseline_rows(split: TabularSplit, cfg: TTSparseConfig, seed: int) -> list[dict]:
    rows = []
    fits = [(f"tree d={d}", "decision tree", lambda d=d: baselines.decision_tree(split.task, d, split.X_train,
                                                                               split.y_train, seed))
            for d in cfg.tree_depths]
    fits += [(f"L1 C={c:g}", "L1 linear", lambda c=c: baselines.l1_linear(split.task, c, split.X_train,
                                                                         split.y_train, seed))
             for c in cfg.l1_strengths]
    if split.task == "binary":
        fits.append(("RIPPER", "RIPPER", lambda: baselines.ripper(split.X_train, split.y_train, seed)))
    fits.append(("gradient boosting", "gradient boosting",
                 lambda: baselines.gradient_boosting(split.task, split.X_train, split.y_train, seed)))
    for variant, method, fit in fits:
        out = fit()
        if out is None:
            continue
        score_fn, cx = out
        s = score_fn(split.X_test)
        acc = None
        if split.task != "regression":
            acc = task_accuracy(split.task, split.y_test, s if split.task == "multiclass" else s - 0.5)
        rows.append(dict(dataset=split.name, task=split.task, seed=seed, method=method, variant=variant,
                         metric=task_metric(split.task, split.y_test, s), accuracy=acc, complexity=cx,
                         exact=None))
    return rows


def run_dataset(name: str, cfg: TTSparseConfig, seeds, device="auto") -> tuple[list[dict], dict]:
    """All methods on one dataset for every seed; returns (rows, best TT-Sparse models per seed)."""
    rows, models = [], {}
    for seed in progress(list(seeds), desc=name):
        split = load_split(name, seed, cfg.test_size, cfg.val_fraction, cfg.n_thresholds)
        learned, pruned = fit_tt_sparse_pair(split, cfg, seed, True, device=device)
        random_ = fit_tt_sparse(split, cfg, seed, False, do_prune=False, device=device)
        for variant, method, res in (("learned TopK", "TT-Sparse", learned),
                                     ("learned TopK + pruning", "TT-Sparse (pruned)", pruned),
                                     ("random fixed k-sparse", "random connections", random_)):
            rows.append(dict(dataset=name, task=split.task, seed=seed, method=method, variant=variant,
                             metric=res.test_metric, accuracy=res.test_accuracy, complexity=res.complexity,
                             exact=res.exact))
        models[seed] = (split, pruned)
        rows += _baseline_rows(split, cfg, seed)
    return rows, models


def run_experiment(config: TTSparseConfig, seed: int = 0, device=None) -> dict:
    """The chapter's run: the first dataset over `n_seeds` seeds, the others over `other_seeds`
    (seeds `seed`, `seed + 1`, ...; each redraws the split and retrains every arm).

    Returns plain data: `rows` (one per dataset, seed and method variant: metric, accuracy,
    complexity, exactness of the rules), `seeds` (every seed run), `test_rows` (test-set size per
    dataset) and `example`: the first dataset's pruned model at `seed`, its rules as DNF and CNF text.
    """
    device = resolve_device("auto" if device is None else device)
    rows, example, test_rows = [], {}, {}
    for i, name in enumerate(config.datasets):
        seeds = range(seed, seed + (config.n_seeds if i == 0 else config.other_seeds))
        r, models = run_dataset(name, config, seeds, device)
        rows += r
        split, res = models[seed]
        test_rows[name] = int(len(split.y_test))
        if i == 0:
            example = {"dataset": name, "seed": seed, "test_metric": res.test_metric, "complexity": res.complexity,
                       "exact": res.exact, "dnf": res.rules.to_text(split.encoder, "dnf"),
                       "cnf": res.rules.to_text(split.encoder, "cnf")}
    n_max = max(config.n_seeds, config.other_seeds if len(config.datasets) > 1 else 0)
    return {"rows": rows, "seeds": list(range(seed, seed + n_max)), "datasets": list(config.datasets),
            "test_rows": test_rows, "example": example}


def matched_metric(rows: list[dict], dataset: str, seed: int, complexity: int, method: str = "decision tree",
                   slack: float = 0.2) -> float | None:
    """Best test metric of `method` among its variants with complexity <= (1 + slack) x `complexity`
    (its simplest variant when none is that small); None when `method` has no row there."""
    runs = [r for r in rows if r["dataset"] == dataset and r["seed"] == seed and r["method"] == method]
    if not runs:
        return None
    ok = [r["metric"] for r in runs if r["complexity"] <= (1 + slack) * complexity]
    return max(ok) if ok else min(runs, key=lambda r: r["complexity"])["metric"]


def matched_tree_metric(rows: list[dict], dataset: str, seed: int, complexity: int, slack: float = 0.2) -> float:
    """`matched_metric` for the decision trees (which every dataset has)."""
    value = matched_metric(rows, dataset, seed, complexity, "decision tree", slack)
    if value is None:
        raise ValueError(f"no decision-tree rows for {dataset!r}, seed {seed}")
    return value


