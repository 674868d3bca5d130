"""Presets for the PRISM chapter: `smoke` (seconds, unit tests), `reduced` (the page's run,
tiny models on 2 CPU cores), `evidence` (the stored record: a longer step budget for the stopping
rule, 3 seeds) and `full` (one GPU, closer to the paper's WikiText setting).

The claims' thresholds are named constants in `claims.py`; `n_seeds` sets how many seeds
the ledger's robustness rule sees.
"""

from __future__ import annotations

from dataclasses import dataclass

from icml26.common import select_preset

NORM_MODES = ("unit", "rms", "layer")
FILTER_KINDS = ("implicit", "explicit")


@dataclass(frozen=True)
class PrismConfig:
    """All knobs of the chapter: data, model sizes, training and the pass criterion."""

    # synthetic topic + Markov masked-token task (data.py)
    n_topics: int = 4
    n_ambiguous: int = 12  # shared tokens whose statistics depend on the topic
    n_private: int = 2  # tokens that only one topic emits
    p_private: float = 0.12  # probability that a position emits a private token
    dirichlet_alpha: float = 0.1  # concentration of each topic's transition rows
    seq_len: int = 24
    n_train: int = 4096
    n_test: int = 512
    mask_prob: float = 0.15
    # models
    d_model: int = 32
    n_prism_layers: int = 2  # GHC layers of PRISM-pure and of the hybrid's wave stream
    n_attn_layers: int = 1  # attention layers of the hybrid
    n_heads: int = 4
    attn_ffn: int = 64  # feed-forward width of the hybrid's attention layer
    baseline_depth: int = 2  # Transformer layers; its FFN width is solved to match parameters
    filter_kind: str = "implicit"
    filter_hidden: int = 32
    filter_freqs: int = 8
    max_len: int = 64
    dropout: float = 0.0
    # training (AdamW, cosine schedule with warm-up, grad clip); `steps` is the budget: every model
    # stops earlier at a plateau of validation accuracy (the same rule for every arm): no gain above
    # `plateau_delta` over `plateau_patience` evaluations, one every `eval_every` steps, on `n_val`
    # held-out sequences
    steps: int = 300
    batch_size: int = 64
    lr: float = 1e-2
    weight_decay: float = 0.0
    warmup_frac: float = 0.1
    grad_clip: float = 1.0
    n_val: int = 512
    eval_every: int = 25
    plateau_patience: int = 4
    plateau_delta: float = 0.005
    # interventions
    sigmas: tuple[float, ...] = (0.0, 0.1, 0.25, 0.5, 0.75, 1.0)
    scales: tuple[float, ...] = (1.0, 0.5, 0.1, 0.01)
    sites: tuple[int, ...] = (0,)  # 0: the embedding output; k: after layer k
    attenuation_c: float = 0.1  # the attenuation the ledger's C1 reads
    n_seeds: int = 3  # seeds SEED, SEED + 1, ... (rule 1 needs at least 3)

    def __post_init__(self) -> None:
        if self.filter_kind not in FILTER_KINDS:
            raise ValueError(f"filter_kind must be one of {FILTER_KINDS}, got {self.filter_kind!r}")
        for name in ("n_topics", "n_ambiguous", "n_private", "seq_len", "n_train", "n_test", "d_model",
                     "n_prism_layers", "n_attn_layers", "n_heads", "baseline_depth", "steps", "batch_size",
                     "n_seeds", "n_val", "eval_every", "plateau_patience", "attn_ffn", "filter_hidden",
                     "filter_freqs", "max_len"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.n_seeds < 3:
            raise ValueError(f"n_seeds must be at least 3 (rule 1: independently trained seeds), got {self.n_seeds}")
        if self.lr <= 0 or self.weight_decay < 0 or self.grad_clip <= 0 or not 0 <= self.warmup_frac < 1:
            raise ValueError("lr and grad_clip must be positive, weight_decay >= 0, warmup_frac in [0, 1)")
        if self.plateau_delta < 0:
            raise ValueError(f"plateau_delta must be >= 0, got {self.plateau_delta}")
        if self.attenuation_c not in self.scales or 1.0 not in self.sigmas:
            raise ValueError("attenuation_c must be one of the scales and sigma = 1 one of the sigmas")
        if self.n_topics < 2:
            raise ValueError("the task needs at least 2 topics")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} must be divisible by n_heads={self.n_heads}")
        if self.seq_len > self.max_len:
            raise ValueError(f"seq_len={self.seq_len} exceeds max_len={self.max_len}")
        if not 0.0 < self.mask_prob < 1.0 or not 0.0 <= self.p_private < 1.0:
            raise ValueError("mask_prob must lie in (0, 1) and p_private in [0, 1)")
        if self.dirichlet_alpha <= 0:
            raise ValueError(f"dirichlet_alpha must be positive, got {self.dirichlet_alpha}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must lie in [0, 1), got {self.dropout}")
        if any(s < 0 or s > 1 for s in self.sigmas) or any(c < 0 for c in self.scales):
            raise ValueError("phase-noise sigmas must lie in [0, 1] and scales must be >= 0")
        if any(s < 0 or s > self.n_prism_layers for s in self.sites):
            raise ValueError(f"sites must lie in 0..{self.n_prism_layers}, got {self.sites}")


#: The evidence preset's step budget (the stopping rule usually ends training earlier).
EVIDENCE_STEPS = 1200

PRESETS: dict[str, PrismConfig] = {
    "smoke": PrismConfig(n_train=512, n_test=128, seq_len=16, d_model=16, n_heads=2, attn_ffn=32,
                         filter_hidden=16, filter_freqs=4, steps=20, batch_size=32, n_val=128, eval_every=5,
                         plateau_patience=2),
    "reduced": PrismConfig(steps=150),
    "evidence": PrismConfig(steps=EVIDENCE_STEPS),
    "full": PrismConfig(n_topics=8, n_ambiguous=96, n_private=4, seq_len=128, max_len=256, n_train=20000,
                        n_test=2000, d_model=128, n_prism_layers=5, n_heads=8, attn_ffn=512, baseline_depth=4,
                        filter_hidden=64, filter_freqs=32, dropout=0.1, steps=6000, batch_size=64, lr=1e-3),
}

EXPECTED_TIME = {"smoke": "a few seconds", "reduced": "about 1.5 minutes on 2 CPU cores (3 seeds, at most 150 steps)",
                 "evidence": "about 7 minutes on 2 CPU cores (3 seeds)",
                 "full": "about 45 minutes on one GPU (3 seeds, estimated)"}


def get_config(name: str = "reduced", **overrides) -> PrismConfig:
    """The preset `name` ('smoke', 'reduced', 'evidence', 'full') with optional field overrides."""
    return select_preset(PRESETS, name, **overrides)
