"""USB-RL: Learning Reward-Cost Balance in Safe RL via Score-Based World Models (ICML 2026).

Modules: `env` (HazardNav, a batched safe-navigation task), `world_model` (ensemble dynamics
model with reward and cost heads), `score` (the monotone partial-order score and its
unsupervised pairwise training), `agent` (policy optimisation in imagination, the
scalarisations), `experiment` (runs, evaluation, the reproduction check), `plots`, `config`.
"""

from .agent import PolicyPopulation, dual_ascent, imagine, linear_objective, score_objective
from .config import EXPECTED_TIME, PRESETS, USBConfig, get_config
from .env import HazardNav, rollout, waypoint_explorer
from .score import MonotoneScore, dominance_matrix, effective_multiplier, fit_score, rank_targets, score_loss
from .world_model import WorldModel, fit_world_model, transitions

__all__ = [
    "EXPECTED_TIME", "HazardNav", "MonotoneScore", "PRESETS", "PolicyPopulation", "USBConfig", "WorldModel",
    "dominance_matrix", "dual_ascent", "effective_multiplier", "fit_score", "fit_world_model", "get_config",
    "imagine", "linear_objective", "rank_targets", "rollout", "score_loss", "score_objective", "transitions",
    "waypoint_explorer",
]
