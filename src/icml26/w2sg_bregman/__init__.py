"""Weak-to-strong generalization through a Bregman bias-variance lens
(Xu, Yao, Wang & Liu, ICML 2026; arXiv 2505.24313).

Part A checks the paper's identities and the gain-misfit relation on synthetic data;
Part B compares forward and reverse cross-entropy students of a weak teacher on digits.
"""

from .bregman import (BREGMAN_LOSSES, bias_variance, bregman_divergence, check_probabilities,
                      dual_mean, grad_phi, misfit_decomposition)
from .config import EXPECTED_TIME, PRESETS, W2SGConfig, get_config
from .criterion import part_a_summary, part_b_summary
from .digits import (load_digit_split, performance_gap_recovered, pool_images, run_digits,
                     teacher_view, train_students)
from .losses import (LOSS_NAMES, aux_confidence, cace, forward_ce, reverse_ce, reverse_ce_grad,
                     symmetric_ce, teacher_probs, w2s_loss)
from .experiment import run_experiment
from .synthetic import run_synthetic

__all__ = [
    "BREGMAN_LOSSES", "EXPECTED_TIME", "LOSS_NAMES", "PRESETS", "W2SGConfig", "aux_confidence", "bias_variance",
    "bregman_divergence", "cace", "check_probabilities", "dual_mean", "forward_ce", "get_config",
    "grad_phi", "load_digit_split", "misfit_decomposition", "part_a_summary", "part_b_summary",
    "performance_gap_recovered", "pool_images", "reverse_ce",
    "reverse_ce_grad", "run_digits", "run_experiment", "run_synthetic", "symmetric_ce", "teacher_probs",
    "teacher_view", "train_students", "w2s_loss",
]
