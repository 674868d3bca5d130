"""Presets: `smoke` (seconds, unit tests), `reduced` (the page's run), `evidence` (the stored
evidence record: 10 independently trained seeds), `full` (a GPU machine).

The claims' decision rules and thresholds live in `claims.py`. Learning rates are not set by
hand: every scheme gets the best rate of the same grid, chosen by one rule on a held-out seed
that no claim uses (`experiment.tune_learning_rate`), separately for the from-scratch and the
post-SFT regime.
"""

from __future__ import annotations

from dataclasses import dataclass

from icml26.common import select_preset

from .weighting import SCHEMES


@dataclass(frozen=True)
class AsymConfig:
    """All knobs of the chapter's experiments."""

    # Part A: exact simulator (tabular softmax policies, one per prompt)
    sim_prompts: int = 400
    sim_answers: int = 20
    sim_rho0: float = 0.02  # from-scratch start
    sim_rho0_sft: float = 0.6  # post-SFT start
    sim_steps: int = 120
    sim_lr: float = 1.0
    sim_target: float = 0.5
    sim_schemes: tuple[str, ...] = ("rloo", "grpo", "dapo", "linear", "sqrt")
    # Parts B and C: tiny GPT-2 on single-digit addition
    min_operand: int = 3
    max_operand: int = 7
    d_model: int = 32
    n_layer: int = 2
    n_head: int = 2
    schemes: tuple[str, ...] = ("grpo", "dapo", "linear", "sqrt")
    seeds: int = 3  # claim seeds; the learning rates are tuned on one more, held-out seed
    rl_steps: int = 600  # cap: a from-scratch run stops at the target or after this many updates
    context_schemes: tuple[str, ...] = ()  # baselines outside the claims, run with the shorter cap below
    context_steps: int = 250
    prompts_per_step: int = 32
    group_size: int = 8  # M responses per prompt (the paper's from-scratch runs use 16; 8 lets the trap form)
    lr_grid: tuple[float, ...] = (1e-3, 2e-3, 5e-3)  # from scratch: each scheme takes the best of these
    tune_steps: int = 300  # cap of a tuning run (held-out seed)
    dapo_max_rounds: int = 4
    # Part C: supervised warm-up, then RL
    sft_steps: int = 100
    sft_lr: float = 3e-3
    post_sft_schemes: tuple[str, ...] = ("grpo", "sqrt")
    post_sft_steps: int = 100  # cap of a post-SFT run
    post_sft_lr_grid: tuple[float, ...] = (3e-4, 1e-3, 3e-3, 1e-2)  # after SFT: each scheme takes the best of these
    post_sft_gain: float = 0.5  # post-SFT target: close this fraction of the gap from the SFT accuracy to 1
    target_acc: float = 0.5  # from-scratch target: mean exact success over all prompts
    device: str = "auto"

    def __post_init__(self) -> None:
        for s in self.schemes + self.post_sft_schemes + self.sim_schemes:
            if s not in SCHEMES:
                raise ValueError(f"unknown weighting scheme {s!r}; valid schemes: {', '.join(SCHEMES)}")
        for need in ("grpo", "sqrt", "linear"):
            if need not in self.schemes:
                raise ValueError(f"schemes must include {need!r} (the reproduction check compares it)")
        if not {"grpo", "sqrt"} <= set(self.post_sft_schemes):
            raise ValueError("post_sft_schemes must include 'grpo' and 'sqrt'")
        if set(self.context_schemes) & {"grpo", "sqrt", "linear"}:
            raise ValueError("context_schemes must not include 'grpo', 'sqrt' or 'linear': the check compares "
                             "them, so they all run to the full cap rl_steps")
        if self.group_size < 2:
            raise ValueError(f"group size must be at least 2, got {self.group_size}")
        if self.seeds < 3:
            raise ValueError(f"seeds must be at least 3 (rule 1: independently trained seeds), got {self.seeds}")
        if min(self.seeds, self.rl_steps, self.context_steps, self.post_sft_steps, self.sim_steps, self.tune_steps) < 1:
            raise ValueError("seeds and step counts must be positive")
        if not self.lr_grid or not self.post_sft_lr_grid or min(self.lr_grid + self.post_sft_lr_grid) <= 0:
            raise ValueError("learning-rate grids must be non-empty and positive")
        if not 0 < self.post_sft_gain < 1:
            raise ValueError(f"post_sft_gain must lie in (0, 1), got {self.post_sft_gain}")
        if not 0 < self.sim_rho0 < 1 or not 0 < self.sim_rho0_sft < 1 or not 0 < self.target_acc < 1:
            raise ValueError("success probabilities and the target must lie in (0, 1)")
        if self.sft_lr <= 0 or self.sim_lr <= 0:
            raise ValueError(f"sft_lr and sim_lr must be positive, got {self.sft_lr}, {self.sim_lr}")
        if not 0 <= self.min_operand <= self.max_operand <= 9:
            raise ValueError(f"need 0 <= min_operand <= max_operand <= 9 (single digits), got "
                             f"{self.min_operand}, {self.max_operand}")
        if min(self.prompts_per_step, self.sft_steps, self.dapo_max_rounds, self.sim_prompts) < 1 or self.sim_answers < 2:
            raise ValueError("prompts_per_step, sft_steps, dapo_max_rounds and sim_prompts must be positive, "
                             "sim_answers at least 2")
        if self.d_model % self.n_head:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_head ({self.n_head})")


PRESETS: dict[str, AsymConfig] = {
    "smoke": AsymConfig(sim_prompts=50, sim_steps=10, seeds=3, rl_steps=4, context_steps=3, prompts_per_step=8,
                        group_size=4, sft_steps=4, post_sft_steps=3, dapo_max_rounds=2, lr_grid=(5e-3, 1e-2),
                        post_sft_lr_grid=(3e-4,), tune_steps=3),
    "reduced": AsymConfig(schemes=("grpo", "linear", "sqrt"), tune_steps=200),
    "evidence": AsymConfig(schemes=("grpo", "linear", "sqrt"), seeds=10, lr_grid=(5e-4, 1e-3, 2e-3, 5e-3)),
    "full": AsymConfig(sim_prompts=4000, sim_steps=400, sim_lr=0.5, min_operand=0, max_operand=9, d_model=64,
                       schemes=("rloo", "grpo", "dapo", "linear", "sqrt", "uniform", "plateau"), seeds=10,
                       rl_steps=3000, context_steps=3000, prompts_per_step=64, lr_grid=(1e-3, 2e-3, 5e-3, 1e-2),
                       tune_steps=1500, sft_steps=600, post_sft_steps=200),
}

EXPECTED_TIME = {"smoke": "a few seconds", "reduced": "about 90 s on 2 CPU cores",
                 "evidence": "about 6 minutes on 2 CPU cores", "full": "about an hour on one GPU"}


def get_config(name: str = "reduced", **overrides) -> AsymConfig:
    """The preset `name` ('smoke', 'reduced', 'evidence', 'full') with optional field overrides."""
    return select_preset(PRESETS, name, **overrides)
