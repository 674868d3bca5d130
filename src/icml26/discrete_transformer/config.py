"""Presets for the Discrete Transformer chapter: `smoke` (seconds, unit tests), `reduced`
(the page's run), `evidence` (the stored record: 3 independently trained seeds per arm, twice the
training steps) and `full` (one GPU: longer annealing, more data, more seeds).

The pass criterion of the reproduction check is fixed here, before any result is seen; it
follows the "claims to reproduce" of the paper summary (the summary of the paper we worked from).
"""

from __future__ import annotations

from dataclasses import dataclass

from icml26.common import select_preset

TASKS = ("t1_sum", "t2_physics")


@dataclass(frozen=True)
class DTConfig:
    """All knobs of the chapter's experiments."""

    tasks: tuple[str, ...] = TASKS
    seq_len: int = 12  # real tokens per sequence (a BOS token with value 0 is prepended)
    n_train: int = 20_000
    n_test: int = 2_000
    # model (Sec. 3 as reconstructed: 2 layers x (2 numerical heads + 1 numerical MLP))
    n_layers: int = 2
    n_heads: int = 2
    mlp_vars_in: int = 2  # m: how many slots one numerical MLP may read (the inductive-bias knob)
    mlp_hidden: int = 16
    # training
    steps: int = 1000
    batch_size: int = 128
    lr: float = 1e-2  # MLP weights and readout
    lr_struct: float = 5e-2  # read logits and attention parameters (Transformer Programs default)
    tau_start: float = 3.0
    tau_end: float = 0.01
    gumbel_noise: bool = True  # Gumbel-softmax reads (False: annealed softmax without noise)
    straight_through_frac: float = 0.0  # final fraction of annealed training with hard (ST) reads
    noanneal_tau: float = 1.0  # baseline (a): fixed temperature, soft reads
    log_every: int = 25
    # extraction
    max_offset: int = 4  # hypothesis library: j* = i - k for k = 0..max_offset, plus others
    accept_agreement: float = 0.995
    null_agreement: float = 0.95  # binomial test H0: agreement <= 0.95
    p_value: float = 0.01
    n_probe: int = 4000  # positions probed per MLP for symbolic regression
    sr_max_terms: int = 3
    sr_tol: float = 1e-3  # relative MSE a symbolic fit must reach to count as a fit
    # baseline (b): a standard nn.TransformerEncoder of similar width
    std_d_model: int = 32
    std_steps: int = 300
    # pass criterion (fixed before looking at results)
    transition_window: float = 0.10  # the entropy-drop window of the results table (E1 uses claims.E1_WINDOW)
    n_seeds: int = 3  # independently trained seeds per arm (rule 1)
    device: str = "auto"

    def __post_init__(self) -> None:
        bad = [t for t in self.tasks if t not in TASKS]
        if not self.tasks or bad:
            raise ValueError(f"unknown task(s) {bad}; valid tasks are {TASKS}")
        if self.seq_len < 4:
            raise ValueError(f"seq_len must be >= 4, got {self.seq_len}")
        if self.n_layers < 1 or self.n_heads < 1:
            raise ValueError("n_layers and n_heads must be positive")
        if self.mlp_vars_in not in (1, 2):
            raise ValueError(f"mlp_vars_in must be 1 or 2, got {self.mlp_vars_in}")
        if not 0.0 < self.tau_end < self.tau_start:
            raise ValueError(f"need 0 < tau_end < tau_start, got {self.tau_end}, {self.tau_start}")
        if self.steps < 10 or self.batch_size < 1 or self.n_train < self.batch_size:
            raise ValueError("need steps >= 10 and batch_size <= n_train")
        if not 0.0 < self.null_agreement < self.accept_agreement <= 1.0:
            raise ValueError("need 0 < null_agreement < accept_agreement <= 1")
        if self.sr_max_terms < 1:
            raise ValueError("sr_max_terms must be >= 1")
        if self.n_seeds < 3:
            raise ValueError(f"n_seeds must be at least 3 (rule 1: independently trained seeds), got {self.n_seeds}")
        if min(self.lr, self.lr_struct, self.noanneal_tau) <= 0:
            raise ValueError("lr, lr_struct and noanneal_tau must be positive")
        if set(self.tasks) != set(TASKS):
            raise ValueError(f"the ledger needs both tasks {TASKS}, got {self.tasks}")


PRESETS: dict[str, DTConfig] = {
    "smoke": DTConfig(n_train=512, n_test=128, steps=60, batch_size=128, std_steps=20, n_probe=400,
                      log_every=10),
    "reduced": DTConfig(steps=600, n_test=1000),
    "evidence": DTConfig(steps=2000),
    "full": DTConfig(n_train=100_000, n_test=10_000, steps=20_000, batch_size=512, std_steps=5000,
                     n_layers=3, n_probe=20_000, log_every=100),
}

EXPECTED_TIME = {"smoke": "about 30 s on 2 CPU cores", "reduced": "about 100 s on 2 CPU cores (600 steps)",
                 "evidence": "about 4 minutes on 2 CPU cores",
                 "full": "about ten minutes on one GPU"}


def get_config(name: str = "reduced", **overrides) -> DTConfig:
    """The preset `name` ('smoke', 'reduced', 'evidence', 'full') with optional field overrides."""
    return select_preset(PRESETS, name, **overrides)
