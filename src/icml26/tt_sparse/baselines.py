"""Baselines on the same binarized inputs, scored with the same complexity measure.

Decision trees (CART) at several depths, L1-regularised linear models, RIPPER (the
`wittgenstein` library, binary tasks) and gradient boosting (the accuracy ceiling).
A tree is read as a weighted sum of its leaf conjunctions (each root-to-leaf path is an
AND of its split literals), RIPPER as one DNF, a linear model as a weighted sum of single
literals; `rules.formula_complexity` / `rules.sum_complexity` count them all alike.
"""

from __future__ import annotations

import warnings

import numpy as np
import sklearn
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor
from sklearn.linear_model import Lasso, LogisticRegression
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from .rules import formula_complexity, sum_complexity


def tree_complexity(tree, n_outputs: int = 1) -> int:
    """sum over leaves of (2 depth - 1) (a path of d literals joined by d - 1
    ANDs), plus the '+' connectives of the weighted sum of leaves (L - 1 per
    output)."""
    t = tree.tree_
    costs, stack = [], [(0, 0)]
    while stack:
        node, depth = stack.pop()
        if t.children_left[node] == -1:
            costs.append(max(2 * depth - 1, 0))
        else:
            stack += [(t.children_left[node], depth + 1),
                      (t.children_right[node], depth + 1)]
    return sum_complexity(costs, [len(costs)] * n_outputs)


def _scores(model, task: str, X) -> np.ndarray:
    if task == "binary":
        return model.predict_proba(X)[:, 1:2]
    if task == "multiclass":
        return np.log(np.clip(model.predict_proba(X), 1e-12, None))
    return model.predict(X).reshape(-1, 1)


def _l1_logistic(C: float, multiclass: bool) -> LogisticRegression:
    new_api = tuple(int(v) for v in sklearn.__version__.split(".")[:2]) >= (1, 8)
    solver = "saga" if multiclass else "liblinear"
    if new_api:
        return LogisticRegression(l1_ratio=1.0, C=C, solver=solver, max_iter=5000)
    return LogisticRegression(penalty="l1", C=C, solver=solver, max_iter=5000)


def decision_tree(task: str, depth: int, X, y, seed: int = 0):
    """CART of maximum `depth`; returns (scoring function, complexity)."""
    cls = DecisionTreeRegressor if task == "regression" else DecisionTreeClassifier
    model = cls(max_depth=depth, random_state=seed).fit(X, y)
    n_out = model.n_classes_ if task == "multiclass" else 1
    return (lambda Z: _scores(model, task, Z)), tree_complexity(model, n_out)


def l1_linear(task: str, strength: float, X, y, seed: int = 0):
    """L1 logistic regression (C = strength) or Lasso (alpha = 1 / (100 strength))."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if task == "regression":
            model = Lasso(alpha=1.0 / (100 * strength), max_iter=20000, random_state=seed).fit(X, y)
        else:
            model = _l1_logistic(strength, task == "multiclass").fit(X, y)
    coef = np.atleast_2d(model.coef_)  # (out, F)
    nz = np.abs(coef) > 0
    return (lambda Z: _scores(model, task, Z)), sum_complexity([1] * int(nz.any(0).sum()), nz.sum(1))


def gradient_boosting(task: str, X, y, seed: int = 0, n_estimators: int = 100):
    """Gradient-boosted depth-3 trees: the black-box accuracy ceiling (complexity = all trees)."""
    cls = GradientBoostingRegressor if task == "regression" else GradientBoostingClassifier
    model = cls(n_estimators=n_estimators, max_depth=3, random_state=seed).fit(X, y)
    cx = sum(tree_complexity(t) for t in np.asarray(model.estimators_).ravel())
    return (lambda Z: _scores(model, task, Z)), int(cx)


def ripper(X, y, seed: int = 0):
    """RIPPER (wittgenstein) on the bits; binary tasks only. Returns (scores, complexity),
    or None when `wittgenstein` is not installed."""
    try:
        import pandas as pd
        import wittgenstein as lw
    except ImportError:
        return None
    cols = [f"b{i}" for i in range(X.shape[1])]
    frame = lambda Z: pd.DataFrame(np.asarray(Z).astype(np.int8), columns=cols)
    model = lw.RIPPER(random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(frame(X), np.asarray(y), pos_class=1)
    clauses = tuple(tuple((int(c.feature[1:]), bool(c.val)) for c in rule.conds)
                    for rule in model.ruleset_.rules)
    return (lambda Z: model.predict_proba(frame(Z))[:, 1:2]), formula_complexity(clauses)
