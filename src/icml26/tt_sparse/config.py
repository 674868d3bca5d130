"""Configuration of the TT-Sparse chapter: one frozen dataclass, the four presets and their times."""

from __future__ import annotations

from dataclasses import dataclass

from icml26.common import select_preset

#: The datasets a run may use (scikit-learn's bundled tables; see `data.DATASETS`).
DATASET_NAMES = ("breast_cancer", "diabetes_binary", "wine", "diabetes")


@dataclass(frozen=True)
class TTSparseConfig:
    """Every knob of one TT-Sparse run (model, training, pruning, experiment).

    Model (Sec. "TT-Sparse node"): `n_nodes` nodes M, each reading `k` binary inputs chosen
    by the soft TopK; `n_thresholds` thermometer thresholds B per numeric feature.
    Temperature: the soft TopK temperature is annealed geometrically from `tau_start` to
    `tau_end` over the training epochs.
    Pruning (paper variant, magnitude based): up to `prune_rounds` rounds, each removing the
    `prune_fraction` smallest-magnitude active edges and fine-tuning for `finetune_epochs`;
    a round is kept only if the validation metric drops by at most `max_drop`.
    Experiment: the first dataset of `datasets` runs `n_seeds` seeds, the others `other_seeds`
    (each seed redraws the split and retrains every arm); both at least 3 (rule 1).
    """

    n_nodes: int = 16
    k: int = 4
    n_thresholds: int = 9
    tau_start: float = 0.1
    tau_end: float = 0.01
    use_skip: bool = False
    dropout: float = 0.0
    epochs: int = 100
    batch_size: int = 256
    lr: float = 5e-3
    weight_decay: float = 3e-4
    patience: int = 25
    val_fraction: float = 0.2
    prune_rounds: int = 12
    prune_fraction: float = 0.15
    finetune_epochs: int = 15
    finetune_lr: float = 0.02
    max_drop: float = 0.01
    n_seeds: int = 5  # seeds of the first dataset (breast cancer)
    other_seeds: int = 3  # seeds of the other datasets (>= 3: rule 1)
    test_size: float = 0.3
    tree_depths: tuple[int, ...] = (1, 2, 3, 4, 5, 6)
    l1_strengths: tuple[float, ...] = (0.01, 0.03, 0.1, 0.3, 1.0)
    datasets: tuple[str, ...] = ("breast_cancer", "diabetes_binary", "wine", "diabetes")

    def __post_init__(self):
        def need(ok: bool, name: str, allowed: str):
            if not ok:
                raise ValueError(f"TTSparseConfig.{name} = {getattr(self, name)!r}; allowed: {allowed}")

        for name in ("n_nodes", "k", "n_thresholds", "epochs", "batch_size", "patience"):
            value = getattr(self, name)
            need(isinstance(value, int) and not isinstance(value, bool) and value >= 1, name, "an integer >= 1")
        for name in ("prune_rounds", "finetune_epochs"):
            value = getattr(self, name)
            need(isinstance(value, int) and not isinstance(value, bool) and value >= 0, name, "an integer >= 0")
        for name in ("n_seeds", "other_seeds"):
            value = getattr(self, name)
            need(isinstance(value, int) and not isinstance(value, bool) and value >= 3, name,
                 "an integer >= 3 (rule 1: at least 3 independently trained seeds)")
        need(0 < self.tau_end <= self.tau_start, "tau_end", "0 < tau_end <= tau_start")
        for name in ("lr", "finetune_lr"):
            need(getattr(self, name) > 0, name, "a positive number")
        need(self.weight_decay >= 0, "weight_decay", "a number >= 0")
        need(0 <= self.dropout < 1, "dropout", "0 <= dropout < 1")
        for name in ("val_fraction", "test_size", "prune_fraction"):
            need(0 < getattr(self, name) < 1, name, "a fraction strictly between 0 and 1")
        need(self.max_drop >= 0, "max_drop", "a number >= 0")
        need(len(self.tree_depths) > 0 and all(isinstance(d, int) and d >= 1 for d in self.tree_depths),
             "tree_depths", "a non-empty tuple of integers >= 1")
        need(len(self.l1_strengths) > 0 and all(s > 0 for s in self.l1_strengths), "l1_strengths",
             "a non-empty tuple of positive numbers")
        need(len(self.datasets) > 0 and len(set(self.datasets)) == len(self.datasets)
             and all(d in DATASET_NAMES for d in self.datasets), "datasets",
             f"a non-empty tuple of distinct names from {', '.join(DATASET_NAMES)}")


PRESETS: dict[str, TTSparseConfig] = {
    # seconds: unit tests and a first look (one dataset, three seeds)
    "smoke": TTSparseConfig(n_nodes=6, k=3, epochs=15, prune_rounds=2, finetune_epochs=3,
                            n_seeds=3, tree_depths=(1, 2, 3), l1_strengths=(0.1, 1.0),
                            datasets=("breast_cancer",)),
    # the page's run: breast cancer with 5 seeds, the other three datasets with 3 seeds each
    "reduced": TTSparseConfig(),
    # the evidence record: the reduced model, 10 seeds on every dataset (RIPPER on both binary ones)
    "evidence": TTSparseConfig(n_seeds=10, other_seeds=10),
    # a GPU/Colab run: wider layers, longer training, more pruning rounds and seeds
    "full": TTSparseConfig(n_nodes=30, k=5, epochs=300, patience=40, prune_rounds=30,
                           prune_fraction=0.1, finetune_epochs=30, n_seeds=10, other_seeds=10,
                           tree_depths=(1, 2, 3, 4, 5, 6, 7, 8),
                           l1_strengths=(0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0)),
}

#: How long each preset takes (the banner, the Time section and the scoreboard read it).
EXPECTED_TIME: dict[str, str] = {
    "smoke": "about 5 s on 2 CPU cores",
    "reduced": "about 50 s on 2 CPU cores",
    "evidence": "about 2.5 minutes on 2 CPU cores",
    "full": "about 10 min on one GPU",
}


def get_config(name: str = "reduced", **overrides) -> TTSparseConfig:
    """The preset `name` (`smoke`, `reduced`, `evidence`, `full`) with optional field overrides."""
    return select_preset(PRESETS, name, **overrides)
