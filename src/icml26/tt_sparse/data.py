"""The chapter's data: scikit-learn's bundled tables (two binary, one multiclass, one regression),
with a fixed split per seed.

`diabetes_binary` is the diabetes table with its target made binary: disease progression above
the median of all 442 patients (a fixed definition, not learned from any split), so that the rule
learner RIPPER, which needs a binary task, runs on two datasets."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine
from sklearn.model_selection import train_test_split

from .encoding import ThermometerEncoder

TASKS = ("binary", "multiclass", "regression")


def load_diabetes_binary():
    """The diabetes table with y = 1 when progression exceeds the median of all patients."""
    bunch = load_diabetes()
    bunch.target = (bunch.target > np.median(bunch.target)).astype(np.int64)
    return bunch


DATASETS = {"breast_cancer": ("binary", load_breast_cancer),
            "diabetes_binary": ("binary", load_diabetes_binary),
            "wine": ("multiclass", load_wine),
            "diabetes": ("regression", load_diabetes)}


@dataclass
class TabularSplit:
    """A binarized train/validation/test split of one dataset."""

    name: str
    task: str
    encoder: ThermometerEncoder
    X_train: np.ndarray  # (N_tr, F) bits
    y_train: np.ndarray
    X_val: np.ndarray
    y_val: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    S_train: np.ndarray  # (N_tr, S) standardized skip features
    S_val: np.ndarray
    S_test: np.ndarray

    @property
    def n_outputs(self) -> int:
        return int(self.y_train.max()) + 1 if self.task == "multiclass" else 1


def load_split(name: str, seed: int = 0, test_size: float = 0.3, val_fraction: float = 0.2,
               n_thresholds: int = 9) -> TabularSplit:
    """Load `name`, split train/test (70/30, stratified for classification) with `seed`,
    carve a validation part out of train, and fit the encoder on the training part only."""
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; valid: {', '.join(DATASETS)}")
    task, loader = DATASETS[name]
    bunch = loader()
    X, y = bunch.data.astype(np.float64), bunch.target
    strat = y if task != "regression" else None
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=test_size, random_state=seed, stratify=strat)
    strat = y_tr if task != "regression" else None
    X_fit, X_val, y_fit, y_val = train_test_split(X_tr, y_tr, test_size=val_fraction,
                                                  random_state=seed, stratify=strat)
    names = tuple(str(n).replace(" ", "_") for n in bunch.feature_names)
    enc = ThermometerEncoder(n_thresholds=n_thresholds, feature_names=names).fit(X_fit)
    cast = (lambda v: v.astype(np.float64)) if task == "regression" else (lambda v: v.astype(np.int64))
    return TabularSplit(name, task, enc, enc.transform(X_fit), cast(y_fit), enc.transform(X_val),
                        cast(y_val), enc.transform(X_te), cast(y_te), enc.skip_features(X_fit),
                        enc.skip_features(X_val), enc.skip_features(X_te))
