"""Input binarization (the paper's tabular encoder): thermometer bits for numeric
features, one-hot bits for categorical ones."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def _as_2d_finite(X, name: str = "X") -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (samples, features), got shape {X.shape}")
    if X.shape[0] == 0:
        raise ValueError(f"{name} has no rows")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or infinite values; impute them before encoding")
    return X


@dataclass
class ThermometerEncoder:
    """Binarize a table: numeric column x -> bits 1[x >= theta_b], b = 1..B.

    The B thresholds sit at the quantiles (1/(B+1), ..., B/(B+1)) of the column's *unique*
    training values (duplicates removed, so no two bits are identical). A categorical column
    becomes one-hot bits 1[x == c] with the first category dropped. The standardized numeric
    columns are also available as the optional linear "skip" input of the head.

    Thresholds are kept in the raw units of the feature, so a literal of a learned rule
    reads directly as ``feature >= threshold``.
    """

    n_thresholds: int = 9
    categorical: tuple[int, ...] = ()
    feature_names: tuple[str, ...] | None = None
    bit_feature: np.ndarray = field(init=False, repr=False)
    bit_threshold: np.ndarray = field(init=False, repr=False)
    bit_is_onehot: np.ndarray = field(init=False, repr=False)

    def fit(self, X) -> "ThermometerEncoder":
        if not isinstance(self.n_thresholds, int) or self.n_thresholds < 1:
            raise ValueError(f"n_thresholds must be a positive int, got {self.n_thresholds!r}")
        X = _as_2d_finite(X)
        n_features = X.shape[1]
        if any(c < 0 or c >= n_features for c in self.categorical):
            raise ValueError(f"categorical indices {self.categorical} out of range 0..{n_features - 1}")
        if self.feature_names is None:
            self.feature_names = tuple(f"x{j}" for j in range(n_features))
        if len(self.feature_names) != n_features:
            raise ValueError(f"{len(self.feature_names)} feature names for {n_features} columns")
        levels = np.linspace(1 / (self.n_thresholds + 1), self.n_thresholds / (self.n_thresholds + 1),
                             self.n_thresholds)
        feats, thrs, onehot = [], [], []
        for j in range(n_features):
            uniq = np.unique(X[:, j])
            if j in self.categorical:
                values = uniq[1:]  # drop-first one-hot
                is_onehot = True
            else:
                values = np.unique(np.quantile(uniq, levels))
                values = values[values > uniq[0]]  # a threshold at the minimum is a constant bit
                is_onehot = False
            feats += [j] * len(values)
            thrs += list(values)
            onehot += [is_onehot] * len(values)
        self.bit_feature = np.asarray(feats, dtype=np.int64)
        self.bit_threshold = np.asarray(thrs, dtype=np.float64)
        self.bit_is_onehot = np.asarray(onehot, dtype=bool)
        numeric = [j for j in range(n_features) if j not in self.categorical]
        self._numeric = np.asarray(numeric, dtype=np.int64)
        self._mean = X[:, numeric].mean(0)
        self._std = np.where(X[:, numeric].std(0) > 0, X[:, numeric].std(0), 1.0)
        self.n_features_in_ = n_features
        return self

    @property
    def n_bits(self) -> int:
        return int(self.bit_feature.shape[0])

    def transform(self, X) -> np.ndarray:
        """(N, D) raw table -> (N, F) array of {0, 1} bits (float32)."""
        if not hasattr(self, "n_features_in_"):
            raise RuntimeError("call fit before transform")
        X = _as_2d_finite(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} columns, the encoder was fitted on {self.n_features_in_}")
        cols = X[:, self.bit_feature]  # (N, F): the source column of every bit
        bits = np.where(self.bit_is_onehot, cols == self.bit_threshold, cols >= self.bit_threshold)
        return bits.astype(np.float32)

    def skip_features(self, X) -> np.ndarray:
        """(N, D) -> (N, S) standardized numeric columns (the head's linear skip input)."""
        X = _as_2d_finite(X)
        return ((X[:, self._numeric] - self._mean) / self._std).astype(np.float32)

    def literal(self, bit: int, positive: bool = True, digits: int = 4) -> str:
        """Readable literal of one bit: ``name >= t`` (or ``name < t`` when negated)."""
        name = self.feature_names[self.bit_feature[bit]]
        value = f"{self.bit_threshold[bit]:.{digits}g}"
        if self.bit_is_onehot[bit]:
            return f"{name} == {value}" if positive else f"{name} != {value}"
        return f"{name} >= {value}" if positive else f"{name} < {value}"

    def impossible(self, bits: np.ndarray, pattern: np.ndarray) -> bool:
        """Whether an assignment `pattern` of the bits `bits` can never come from a real row.

        Thermometer bits of one feature are monotone (x >= t2 with t2 > t1 implies x >= t1)
        and at most one one-hot bit of a categorical feature is on. These patterns are the
        structural don't-cares of rule extraction: safe, since no input can produce them.
        """
        for a in range(len(bits)):
            for b in range(len(bits)):
                fa, fb = self.bit_feature[bits[a]], self.bit_feature[bits[b]]
                if a == b or fa != fb:
                    continue
                if self.bit_is_onehot[bits[a]]:
                    if a < b and pattern[a] and pattern[b]:
                        return True
                elif self.bit_threshold[bits[a]] < self.bit_threshold[bits[b]] and pattern[b] and not pattern[a]:
                    return True
        return False
