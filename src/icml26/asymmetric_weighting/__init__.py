"""Asymmetric Prompt Weighting for Reinforcement Learning with Verifiable Rewards
(Heckel, Soltanolkotabi & Thramboulidis, ICML 2026).

Modules: `weighting` (RLOO, GRPO, DAPO filter, Linear-R, Sqrt-R, Uniform-R, Plateau-R advantages),
`theory` (time-to-target optimal weights), `simulator` (Part A: exact bandit simulator),
`task` (generated addition task, exact-match reward), `lm` (Parts B/C: RL on a tiny `transformers`
GPT-2), `experiment` (runs and the reproduction check), `plots`, `config` (presets).
"""

from .config import EXPECTED_TIME, PRESETS, AsymConfig, get_config
from .experiment import run_experiment
from .weighting import (
    ASYMMETRIC, LABELS, SCHEMES, SYMMETRIC, advantage_coefficients, effective_weight, group_advantages,
    informative_groups, prompt_weight,
)

__all__ = ["ASYMMETRIC", "AsymConfig", "EXPECTED_TIME", "LABELS", "PRESETS", "SCHEMES", "SYMMETRIC",
           "advantage_coefficients", "effective_weight", "get_config", "group_advantages", "informative_groups",
           "prompt_weight", "run_experiment"]
