"""USB-RL: Learning Reward-Cost Balance in Safe RL via Score-Based World Models (ICML 2026).

Modules: `env` (HazardNav, a batched safe-navigation task with a triangular hazard), `world_model` (ensemble dynamics
model with reward and cost heads), `score` (the monotone partial-order score and its
unsupervised pairwise training), `agent` (policy optimisation in imagination, the
scalarisations), `experiment` (runs, evaluation, the reproduction check), `plots`, `config`.
"""

from .agent import PolicyPopulation, dual_ascent, imagine, linear_objective, score_objective
from .config import EXPECTED_TIME, PRESETS, USBConfig, get_config
from .experiment import run_experiment
from .env import HazardNav, hazard_depth, pareto_mask, reference_front, rollout, waypoint_explorer
from .score import (MonotoneScore, dominance_matrix, dominance_shares, effective_multiplier, fit_score, rank_targets,
                    return_slope, score_loss)
from .world_model import WorldModel, fit_world_model, transitions

__all__ = [
    "EXPECTED_TIME", "HazardNav", "MonotoneScore", "PRESETS", "PolicyPopulation", "USBConfig", "WorldModel",
    "dominance_matrix", "dominance_shares", "dual_ascent", "effective_multiplier", "fit_score", "fit_world_model",
    "get_config",
    "hazard_depth", "imagine", "linear_objective", "pareto_mask", "rank_targets", "reference_front", "return_slope",
    "rollout", "run_experiment", "score_loss", "score_objective", "transitions", "waypoint_explorer",
]
