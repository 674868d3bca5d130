"""Discrete Transformer (Zhang et al., ICML 2026): annealed discretisation, hypothesis-tested
attention heads and symbolic-regression MLPs, assembled into an executable program."""

from .config import EXPECTED_TIME, PRESETS, TASKS, DTConfig, get_config
from .data import TaskData, ground_truth_rule, make_task
from .experiment import attention_at_temperature, run_experiment, run_standard_baseline, run_task, transition_share
from .extract import (Program, evaluate_predictions, extract_program, fit_symbolic, program_source, run_program,
                      hypothesis_test)
from .model import DiscreteTransformer, gumbel_softmax, temperature
from .train import train_discrete_transformer, train_standard_transformer

__all__ = [
    "EXPECTED_TIME", "PRESETS", "TASKS", "DTConfig", "DiscreteTransformer", "Program", "TaskData",
    "attention_at_temperature", "evaluate_predictions", "extract_program", "fit_symbolic",
    "get_config", "ground_truth_rule", "gumbel_softmax", "make_task", "program_source", "run_experiment",
    "run_program",
    "run_standard_baseline", "run_task", "temperature", "hypothesis_test", "train_discrete_transformer",
    "train_standard_transformer",
]
