"""Task-Aware Mechanism: Hybrid MoE Vision Tower Towards Holistic Video Understanding (ICML 2026).

Modules: `config` (presets, pass criterion), `data` (synthetic counting/temporal videos and
query templates), `model` (Inductor, budgeted frame sampler, soft-gated MoE encoder,
hard-gated projectors, tiny Qwen2 answerer), `experiment` (training, evaluation, `run_experiment`),
`claims` (the ledger: `build_ledger`).
"""

from .config import EXPECTED_TIME, PRESETS, TASKS, TAMConfig, get_config
from .data import TEMPLATES, build_vocab, make_videos, sample_queries, tokenize
from .experiment import (BUDGET_TABLE, Result, Routing, Training, bird_token, brightness_rule, budget, build_models,
                         converged_now, diagnose_counting, evaluate, seed_record, train_seed, fit_brightness_rule, head_loss, run_experiment,
                         threshold_rule, train_inductor, train_model)
from .model import Inductor, SoftMoEEncoder, VideoLM, frame_indices, sample_frames

__all__ = [
    "BUDGET_TABLE", "EXPECTED_TIME", "Inductor", "PRESETS", "Result", "Routing", "SoftMoEEncoder", "TASKS",
    "TAMConfig", "TEMPLATES", "VideoLM", "bird_token", "brightness_rule", "budget", "build_models", "build_vocab",
    "converged_now", "diagnose_counting", "Training", "evaluate", "fit_brightness_rule", "frame_indices", "get_config",
    "head_loss", "make_videos", "run_experiment", "sample_frames", "sample_queries", "threshold_rule", "tokenize",
    "seed_record", "train_inductor", "train_model", "train_seed",
]
