"""Presets for the KSKT chapter: `smoke` (seconds, unit tests), `reduced` (the page's run: 3 seeds,
80 steps), `evidence` (the chapter's evidence record: 5 seeds, 360 steps, where the
relationship-slot accuracy has stopped rising) and `full` (a GPU: the KSKT blocks swapped into a
real Qwen3 checkpoint loaded by name).

The claims' thresholds are fixed in `claims.py` before the runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from icml26.common import select_preset


@dataclass(frozen=True)
class KSKTConfig:
    """All knobs of the chapter: data, backbone, KSKT blocks, curriculum, criterion."""

    # --- generated role-play corpus (data.py) ---
    n_train: int = 4000
    n_test: int = 600
    conflict_rate: float = 0.3  # share of items whose user topic is the persona's forbidden topic
    # --- backbone (a real transformers Qwen3, tiny config, random init) ---
    hidden_size: int = 64
    num_layers: int = 4
    num_heads: int = 4
    num_kv_heads: int = 2
    head_dim: int = 16
    intermediate_size: int = 64
    kskt_every: int = 2  # a KSKT block replaces layers k-1, 2k-1, ... (paper: k=4 -> 3, 7, ..., 35)
    # separate input embedding and LM head, as in the release's KSKTConfig (tie_word_embeddings=False);
    # tied rows of never-predicted prompt tokens drift together and collapse R_bar, U_bar (model.py)
    tie_embeddings: bool = False
    pretrained: str | None = None  # e.g. "Qwen/Qwen3-0.6B" (full preset only; loaded by name)
    # --- KSKT blocks ---
    budgets: tuple[int, ...] = (2, 4)  # thinking-chain lengths (paper: 2, 4, 6, 8, 10)
    n_experts: int = 4
    top_k: int = 2
    n_ctx: int = 4  # length n of R_proc / U_proc (context_source="span_mean" only)
    # R_proc / U_proc: "extracted" = one row per extracted token (name, style, forbidden topic; request,
    # emotion), the paper's input processing (App. B.1); "span_mean" = the mean of every span token
    # (fillers included) repeated n_ctx times, the release's fallback
    context_source: str = "extracted"
    max_positions: int = 64  # MUPE's learned absolute table, capped at the training length
    # --- objective (Eq. 11) ---
    lambda_cons: float = 0.1
    lambda_und: float = 0.2
    lambda_bal: float = 0.01
    lambda_budget: float = 0.05
    # target of L_cons / L_und: "raw" = R_bar, U_bar as in Eq. 11 (the paper); "centred" = both
    # sides minus their batch mean (NOT the paper: an ablation for the exercises, see train.py)
    align_target: str = "raw"
    # --- phased curriculum, scaled down (paper: 2 / 1 / 1 epochs at 2e-5, 1e-5, 5e-6) ---
    phase_steps: tuple[int, int, int] = (60, 30, 30)
    lr: float = 5e-3  # phase LRs are lr * (1, 1/2, 1/4) as in the paper
    warmup: int = 10
    # "release": as the release's trainer, a fresh AdamW and LR scheduler in each phase (linear with
    # warmup, linear, cosine), each decaying to 0 by the end of its phase; "v1": the chapter's versions
    # before the third run, one AdamW across the phases and decays to 10 % of each phase's peak
    schedule: str = "release"
    batch_size: int = 32
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    eval_every: int = 40
    seeds: tuple[int, ...] = (0, 1, 2)  # the robustness rule needs at least 3 (claims.py)
    device: str = "auto"

    def __post_init__(self) -> None:
        if self.n_train < 64 or self.n_test < 40:
            raise ValueError(f"need n_train >= 64 and n_test >= 40, got {self.n_train}, {self.n_test}")
        if not 0.0 <= self.conflict_rate <= 1.0:
            raise ValueError(f"conflict_rate must lie in [0, 1], got {self.conflict_rate}")
        if self.num_heads % self.num_kv_heads:
            raise ValueError(f"num_heads ({self.num_heads}) must be a multiple of num_kv_heads ({self.num_kv_heads})")
        if not 1 <= self.kskt_every <= self.num_layers:
            raise ValueError(f"kskt_every must lie in [1, num_layers={self.num_layers}], got {self.kskt_every}")
        if not self.budgets or any(b < 1 for b in self.budgets):
            raise ValueError(f"budgets must be positive chain lengths, got {self.budgets}")
        if not 1 <= self.top_k <= self.n_experts:
            raise ValueError(f"top_k must lie in [1, n_experts={self.n_experts}], got {self.top_k}")
        if len(self.phase_steps) != 3 or any(s < 1 for s in self.phase_steps):
            raise ValueError(f"phase_steps must be three positive step counts, got {self.phase_steps}")
        if self.context_source not in ("extracted", "span_mean"):
            raise ValueError(f"context_source must be 'extracted' (App. B.1) or 'span_mean', "
                             f"got {self.context_source!r}")
        if self.schedule not in ("release", "v1"):
            raise ValueError(f"schedule must be 'release' (the official trainer) or 'v1', got {self.schedule!r}")
        if self.align_target not in ("raw", "centred"):
            raise ValueError(f"align_target must be 'raw' (the paper) or 'centred', got {self.align_target!r}")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"seeds must be a non-empty tuple of distinct seeds, got {self.seeds}")
        if self.lr <= 0 or self.batch_size < 1 or self.eval_every < 1 or self.warmup < 0:
            raise ValueError("lr must be > 0, batch_size and eval_every >= 1, warmup >= 0")

    @property
    def total_steps(self) -> int:
        return sum(self.phase_steps)


PRESETS: dict[str, KSKTConfig] = {
    "smoke": KSKTConfig(n_train=256, n_test=120, phase_steps=(6, 3, 3), batch_size=16, eval_every=6,
                        seeds=(0, 1, 2), warmup=2),
    "reduced": KSKTConfig(phase_steps=(40, 20, 20), eval_every=40),
    "evidence": KSKTConfig(phase_steps=(180, 90, 90), seeds=(0, 1, 2, 3, 4), eval_every=60),
    "full": KSKTConfig(n_train=100_000, n_test=5000, pretrained="Qwen/Qwen3-0.6B", kskt_every=4,
                       budgets=(2, 4, 6, 8, 10), phase_steps=(4000, 2000, 2000), lr=2e-5, warmup=500,
                       batch_size=128, eval_every=500, seeds=(0, 1, 2), max_positions=2048),
}

EXPECTED_TIME = {"smoke": "a few seconds on 2 CPU cores", "reduced": "about 90 s on 2 CPU cores (3 seeds, 80 steps)",
                 "evidence": "about 8 minutes on 2 CPU cores (5 seeds, 360 steps)",
                 "full": "about 2 hours on an A100 with >= 40 GB, estimated (downloads Qwen3-0.6B; "
                         "both models and their AdamW states sit on the GPU: too big for a 16 GB T4)"}


def get_config(name: str = "reduced", **overrides) -> KSKTConfig:
    """The preset `name` ('smoke', 'reduced', 'evidence', 'full') with optional field overrides."""
    return select_preset(PRESETS, name, **overrides)
