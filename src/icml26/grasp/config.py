"""Presets for the GRASP chapter: `smoke` (seconds, unit tests), `reduced` (the page's run, one
training seed), `evidence` (three training seeds, five times the GRPO iterations: the stored
evidence record) and `full` (one GPU: a bigger tiny Qwen3, more steps, larger graphs).

The claims' thresholds and tests are fixed in `claims.py` before the stored run.
"""

from __future__ import annotations

from dataclasses import dataclass

from icml26.common import select_preset

TASKS = ("degree", "adjacent", "common")


def validate(cfg: "GraspConfig") -> None:
    """Reject impossible settings with a clear message."""
    lo, hi = cfg.train_n
    if not 3 <= lo <= hi:
        raise ValueError(f"train_n must be (lo, hi) with 3 <= lo <= hi, got {cfg.train_n}")
    if max((hi,) + tuple(cfg.test_sizes)) > cfg.max_id:
        raise ValueError(f"graph sizes {cfg.train_n}, {cfg.test_sizes} exceed max_id={cfg.max_id}")
    if not 0.0 < cfg.p_edge < 1.0:
        raise ValueError(f"p_edge must be in (0, 1), got {cfg.p_edge}")
    bad = [t for t in cfg.tasks if t not in TASKS]
    if bad or not cfg.tasks:
        raise ValueError(f"unknown tasks {bad}; valid: {TASKS}")
    bad = [t for t in cfg.sft_blind_tasks if t not in cfg.tasks]
    if bad or (cfg.blind_frac > 0 and not cfg.sft_blind_tasks):
        raise ValueError(f"sft_blind_tasks must be a non-empty subset of tasks {cfg.tasks}, got {cfg.sft_blind_tasks}")
    if not 0.0 <= cfg.blind_frac <= 1.0:
        raise ValueError(f"blind_frac must be in [0, 1], got {cfg.blind_frac}")
    if cfg.group < 2:
        raise ValueError(f"GRPO needs a group of at least 2 rollouts, got group={cfg.group}")
    if cfg.probe_cap < 2:
        raise ValueError(f"probe_cap must be >= 2 (tasks query two nodes), got {cfg.probe_cap}")
    for name in ("sft_steps", "sft_batch", "grpo_iters", "grpo_questions", "eval_graphs", "train_seeds", "max_turns",
                 "max_new_tokens", "hidden", "layers", "heads", "kv_heads", "intermediate", "max_id"):
        if not isinstance(getattr(cfg, name), int) or getattr(cfg, name) < 1:
            raise ValueError(f"{name} must be a positive integer, got {getattr(cfg, name)!r}")
    if cfg.eval_graphs < 30:
        raise ValueError(f"eval_graphs must be >= 30 (the paired test per seed needs 30 questions), got {cfg.eval_graphs}")
    if len(cfg.test_sizes) < 2 or list(cfg.test_sizes) != sorted(set(cfg.test_sizes)):
        raise ValueError(f"test_sizes must be at least two increasing sizes, got {cfg.test_sizes}")
    for name in ("sft_lr", "grpo_lr", "temperature"):
        if not getattr(cfg, name) > 0:
            raise ValueError(f"{name} must be > 0, got {getattr(cfg, name)}")
    if not 0 < cfg.clip_eps < 1 or cfg.kl_beta < 0:
        raise ValueError(f"clip_eps must lie in (0, 1) and kl_beta >= 0, got {cfg.clip_eps}, {cfg.kl_beta}")
    if cfg.hidden % cfg.heads or cfg.heads % cfg.kv_heads:
        raise ValueError("hidden must be divisible by heads and heads by kv_heads")


@dataclass(frozen=True)
class GraspConfig:
    """All knobs of the chapter's experiment."""

    # graphs: G(n, p) with nodes relabelled at random into ids 0..max_id-1
    max_id: int = 32
    train_n: tuple[int, int] = (8, 12)  # n ~ U{lo..hi} for training
    test_sizes: tuple[int, ...] = (12, 24)  # held-out graph sizes
    p_edge: float = 0.25
    tasks: tuple[str, ...] = TASKS
    probe_cap: int = 4  # at most this many nodes per neighbor_retrieval call
    max_turns: int = 3  # tool calls per episode before it is cut off
    max_new_tokens: int = 24  # model tokens per episode
    # tiny Qwen3 (randomly initialised, Sec. "Model" of the reduced plan)
    hidden: int = 64
    layers: int = 2
    heads: int = 4
    kv_heads: int = 2
    intermediate: int = 128
    # Phase A: SFT on oracle traces
    sft_steps: int = 150
    sft_batch: int = 32
    sft_lr: float = 3e-3
    blind_frac: float = 0.02  # fraction of structure-blind traces in SFT (rest: visible)
    # tasks the few blind SFT traces are drawn from (stand-in for a pretrained model's generic tool-use
    # prior); the blind policy for the other tasks is left to structure-blind GRPO, as in the paper
    sft_blind_tasks: tuple[str, ...] = ("degree",)
    # Phase B: structure-blind GRPO (masked tool outputs)
    grpo_iters: int = 12
    grpo_questions: int = 8
    group: int = 8  # G rollouts per question
    grpo_lr: float = 3e-4
    clip_eps: float = 0.2
    kl_beta: float = 1e-3
    temperature: float = 1.0
    # evaluation
    eval_graphs: int = 64  # held-out questions per size (greedy decoding)
    # independently trained seeds (each trains the agent and the passive model afresh); the trained
    # comparisons are decided over them (claims.py); `run_experiment(config, seed)` runs seed, seed+1, ...
    train_seeds: int = 1

    def __post_init__(self) -> None:
        validate(self)


PRESETS = {
    "smoke": GraspConfig(sft_steps=20, grpo_iters=2, grpo_questions=4, group=4, eval_graphs=30, test_sizes=(12, 16)),
    "reduced": GraspConfig(),
    "evidence": GraspConfig(grpo_iters=60, train_seeds=3),
    "full": GraspConfig(max_id=64, test_sizes=(12, 24, 48), hidden=128, intermediate=256,
                        sft_steps=2000, grpo_iters=200, grpo_questions=32, eval_graphs=500, train_seeds=3),
}

EXPECTED_TIME = {"smoke": "about 15 s on 2 CPU cores",
                 "reduced": "about 30 s on 2 CPU cores (one training seed)",
                 "evidence": "about 4 minutes on 2 CPU cores (three training seeds)",
                 "full": "about an hour on one GPU (estimated, not yet timed)"}


def get_config(name: str = "reduced", **overrides) -> GraspConfig:
    """The named preset with optional field overrides (unknown name -> ValueError)."""
    return select_preset(PRESETS, name, **overrides)
