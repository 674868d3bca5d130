"""Conformal early stopping of MIP solvers (Clarke & Stellato, ICML 2026): an LSTM predicts
the true optimality gap from the solver-state trajectory, and split conformal calibration
picks the stopping threshold that keeps P(gap at stop <= eps) >= 1 - alpha.

Written for this book from the paper's description (no code copied from the release);
HiGHS (highspy) is the solver.
"""

from .config import EXPECTED_TIME, PRESETS, ConformalMIPConfig, get_config
from .conformal import (TrajectoryBatch, conformal_scores, conformal_threshold, evaluate_stops, first_index,
                        kth_incumbent_outcome, stop_on_prediction, stop_solve_to_eps)
from .experiment import (METHODS, FamilyResult, LiveRun, alpha_sweep, family_record, fixed_split_work, live_solves,
                         record_family, resplit_evaluation, rule_outcomes, run_experiment, run_family, run_seed,
                         summary)
from .features import FeatureState, Normalizer, trajectory_features
from .instances import (FAMILIES, CFLPInstance, MISInstance, build_model, generate, generate_cflp, generate_mis,
                        is_feasible, objective)
from .model import LOSSES, GapLSTM, band_l1, predict_gaps, rescaled_mse, train_predictor
from .predictor import GapPredictor, OnlineStopper, fit_predictor
from .solver import SolveResult, Trajectory, record, solve

__all__ = [
    "EXPECTED_TIME", "FAMILIES", "LOSSES", "METHODS", "PRESETS", "CFLPInstance", "ConformalMIPConfig", "FamilyResult",
    "FeatureState", "GapLSTM", "GapPredictor", "LiveRun", "MISInstance", "Normalizer", "OnlineStopper",
    "SolveResult", "Trajectory", "TrajectoryBatch", "alpha_sweep", "band_l1", "build_model", "conformal_scores",
    "conformal_threshold", "evaluate_stops", "family_record", "fixed_split_work", "first_index", "fit_predictor", "generate",
    "generate_cflp", "generate_mis", "get_config", "is_feasible", "live_solves", "objective", "predict_gaps",
    "record", "record_family", "rescaled_mse", "resplit_evaluation", "rule_outcomes",
    "run_experiment", "run_family", "run_seed", "solve", "kth_incumbent_outcome", "stop_on_prediction", "stop_solve_to_eps",
    "summary", "train_predictor", "trajectory_features",
]
