"""Presets for the model-cloning chapter: `smoke` (seconds, unit tests), `reduced` (the page's
run, 3 seeds), `evidence` (the chapter's evidence record: 5 seeds, 4 bases per architecture) and
`full` (a GPU machine: more bases, more strengths).

The claims' decision rules and thresholds live in `claims.py`; every preset runs `n_seeds`
independent repetitions so that the comparative claims are decided over three seeds.
"""

from __future__ import annotations

from dataclasses import dataclass

from icml26.common import select_preset

ARCHS = ("mlp", "cnn")
HF_FAMILIES = ("bert", "roberta", "distilbert", "gpt2")


@dataclass(frozen=True)
class CloneConfig:
    """All knobs of the chapter: base models, clone operations, detector, pass criterion."""

    # base models, trained in code on scikit-learn digits (full batch, Adam)
    archs: tuple[str, ...] = ARCHS
    mlp_widths: tuple[int, ...] = (64, 128, 64, 10)  # input, hidden..., classes
    cnn_channels: tuple[int, ...] = (8, 16)  # conv channels; global average pool, linear head
    n_bases: int = 4  # independently trained models per architecture (seed, data half, LR differ)
    base_steps: int = 150
    base_lrs: tuple[float, ...] = (1e-2, 2e-2)  # base k uses base_lrs[k % len]
    # clone operations and their strengths (the benchmark; fixed before running)
    rescale_factors: tuple[float, ...] = (0.5, 3.0)
    finetune_lr: float = 1e-3
    finetune_steps: tuple[int, ...] = (5, 20, 80)
    prune_rates: tuple[float, ...] = (0.3, 0.6)
    noise_levels: tuple[float, ...] = (0.01, 0.05)  # Gaussian noise, fraction of each tensor's std
    quant_bits: int = 8
    head_steps: int = 50  # new 2-class head (digit parity) trained on the other half
    lineage_steps: tuple[int, ...] = (0, 10, 20, 50, 100, 200, 400)
    # detector (our reconstruction; see the chapter's deviations box)
    wl_iterations: int = 3
    shape_buckets: bool = True  # add log2(width) to node labels
    spectrum_k: int = 8
    tau: float = 0.1  # S_W = exp(-d / tau)
    lam: float = 0.5  # S = lam S_G + (1 - lam) S_W
    calib_frac: float = 0.5  # fraction of pairs used to calibrate the threshold
    n_probes: int = 64  # probe inputs of the behavioural baseline B3
    hf_families: tuple[str, ...] = HF_FAMILIES  # structure-only pairs (empty: skip)
    n_seeds: int = 3  # independent repetitions of benchmark + lineage (the claims' robustness rule)
    device: str = "auto"

    def __post_init__(self) -> None:
        bad = [a for a in self.archs if a not in ARCHS]
        if not self.archs or bad:
            raise ValueError(f"unknown architectures {bad}; valid: {', '.join(ARCHS)}")
        badhf = [f for f in self.hf_families if f not in HF_FAMILIES]
        if badhf:
            raise ValueError(f"unknown transformers families {badhf}; valid: {', '.join(HF_FAMILIES)}")
        if self.base_steps < 1 or self.head_steps < 1 or self.finetune_lr <= 0:
            raise ValueError("base_steps and head_steps must be >= 1 and finetune_lr > 0")
        if self.n_seeds < 1:
            raise ValueError(f"n_seeds must be >= 1, got {self.n_seeds}")
        if self.n_bases < 2:
            raise ValueError(f"n_bases must be >= 2 (non-clone pairs need two bases), got {self.n_bases}")
        if len(self.mlp_widths) < 3 or len(self.cnn_channels) < 1:
            raise ValueError("mlp_widths needs input, >= 1 hidden and output widths; cnn_channels >= 1 entry")
        if any(not 0.0 < p < 1.0 for p in self.prune_rates):
            raise ValueError(f"prune rates must lie in (0, 1), got {self.prune_rates}")
        if any(a <= 0 for a in self.rescale_factors):
            raise ValueError(f"rescale factors must be positive (ReLU is only positively homogeneous), got {self.rescale_factors}")
        if not 0.0 <= self.lam <= 1.0:
            raise ValueError(f"lam must lie in [0, 1], got {self.lam}")
        if not 0.0 < self.calib_frac < 1.0:
            raise ValueError(f"calib_frac must lie in (0, 1), got {self.calib_frac}")
        if self.tau <= 0 or self.wl_iterations < 1 or self.spectrum_k < 1:
            raise ValueError("tau, wl_iterations and spectrum_k must be positive")
        if not 2 <= self.quant_bits <= 16:
            raise ValueError(f"quant_bits must lie in [2, 16], got {self.quant_bits}")


PRESETS: dict[str, CloneConfig] = {
    "smoke": CloneConfig(
        mlp_widths=(64, 32, 10), cnn_channels=(4,), n_bases=2, base_steps=30, finetune_steps=(5,), prune_rates=(0.5,),
        noise_levels=(0.01,), rescale_factors=(2.0,), head_steps=10, lineage_steps=(0, 5, 10, 20), hf_families=(),
        n_probes=16,
    ),
    "reduced": CloneConfig(n_bases=3, lineage_steps=(0, 10, 20, 50, 100)),  # 3 seeds within ~100 s
    "evidence": CloneConfig(n_bases=4, n_seeds=5, lineage_steps=(0, 10, 20, 50, 100)),
    "full": CloneConfig(
        n_bases=10, base_steps=400, finetune_steps=(5, 20, 80, 320), prune_rates=(0.3, 0.6, 0.8),
        noise_levels=(0.01, 0.05, 0.2), rescale_factors=(0.25, 0.5, 3.0, 10.0),
        lineage_steps=(0, 10, 20, 50, 100, 200, 400, 800, 1600), spectrum_k=16,
    ),
}

EXPECTED_TIME = {"smoke": "a few seconds on 2 CPU cores", "reduced": "about 50 s on 2 CPU cores (3 seeds)",
                 "evidence": "about 3 minutes on 2 CPU cores (5 seeds)", "full": "a few minutes on one GPU"}


def get_config(name: str = "reduced", **overrides) -> CloneConfig:
    """The preset `name` ('smoke', 'reduced', 'evidence', 'full') with optional field overrides."""
    return select_preset(PRESETS, name, **overrides)
