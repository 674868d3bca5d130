"""TT-Sparse (Soegeng, Modi & Peyrin, ICML 2026): sparse rule models from differentiable
truth tables, a soft TopK with straight-through estimation, and exact DNF/CNF extraction.

Written for this book from the paper's description (no code copied from the release).
"""

from .config import EXPECTED_TIME, PRESETS, TTSparseConfig, get_config
from .data import DATASETS, TabularSplit, load_split
from .encoding import ThermometerEncoder
from .experiment import (TTSparseResult, check_exact, fit_tt_sparse, fit_tt_sparse_pair, matched_metric,
                         matched_tree_metric, run_dataset, run_experiment)
from .model import (FrozenTTSparse, TTSparseLayer, TTSparseModel, finetune, node_preactivation,
                    predict_scores, prune, task_loss, task_metric, train_tt_sparse)
from .rules import (Formula, RuleSet, enumerate_truth_table, explain, formula_complexity, minimise,
                    predict_rules, sum_complexity)
from .topk import (SoftTopK, hard_topk, heaviside_st, soft_topk, soft_topk_st, straight_through_weights,
                   temperature_schedule)

__all__ = [
    "DATASETS", "EXPECTED_TIME", "PRESETS", "Formula", "FrozenTTSparse", "RuleSet", "SoftTopK", "TTSparseConfig",
    "TTSparseLayer", "TTSparseModel", "TTSparseResult", "TabularSplit", "ThermometerEncoder",
    "check_exact", "enumerate_truth_table", "explain", "finetune", "fit_tt_sparse", "fit_tt_sparse_pair",
    "formula_complexity",
    "get_config", "hard_topk", "heaviside_st", "load_split", "matched_tree_metric", "minimise",
    "node_preactivation", "predict_rules", "predict_scores", "prune", "matched_metric",
    "run_dataset", "run_experiment", "soft_topk", "soft_topk_st", "straight_through_weights",
    "sum_complexity", "task_loss", "task_metric", "temperature_schedule", "train_tt_sparse",
]
