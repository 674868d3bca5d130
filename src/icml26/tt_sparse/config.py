"""Configuration of the TT-Sparse chapter: one frozen dataclass and the three presets."""

from __future__ import annotations

from dataclasses import dataclass

from icml26.common import select_preset


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
    n_seeds: int = 5  # seeds of the binary dataset (breast cancer)
    other_seeds: int = 3  # seeds of the other datasets (>= 3: the robustness rule)
    test_size: float = 0.3
    tree_depths: tuple[int, ...] = (1, 2, 3, 4, 5, 6)
    l1_strengths: tuple[float, ...] = (0.01, 0.03, 0.1, 0.3, 1.0)
    datasets: tuple[str, ...] = ("breast_cancer", "wine", "diabetes")


PRESETS: dict[str, TTSparseConfig] = {
    # seconds: unit tests and a first look
    "smoke": TTSparseConfig(n_nodes=6, k=3, epochs=15, prune_rounds=2, finetune_epochs=3,
                            n_seeds=3, tree_depths=(1, 2, 3), l1_strengths=(0.1, 1.0),
                            datasets=("breast_cancer",)),
    # the stored run: breast cancer with 5 seeds, wine and diabetes with 3 seeds each
    "reduced": TTSparseConfig(),
    # a GPU/Colab run: wider layers, longer training, more pruning rounds and seeds
    "full": TTSparseConfig(n_nodes=30, k=5, epochs=300, patience=40, prune_rounds=30,
                           prune_fraction=0.1, finetune_epochs=30, n_seeds=10, other_seeds=10,
                           tree_depths=(1, 2, 3, 4, 5, 6, 7, 8),
                           l1_strengths=(0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0)),
}


def get_config(name: str = "reduced", **overrides) -> TTSparseConfig:
    """The preset `name` (`smoke`, `reduced`, `full`) with optional field overrides."""
    config = select_preset(PRESETS, name, **overrides)
    if config.k < 1 or config.n_nodes < 1:
        raise ValueError(f"k and n_nodes must be >= 1, got k={config.k}, n_nodes={config.n_nodes}")
    if not 0 < config.tau_end <= config.tau_start:
        raise ValueError("need 0 < tau_end <= tau_start")
    return config
