"""Dual Quaternion SE(3) Synchronization with Recovery Guarantees (Zhao, Zhu & So, ICML 2026).

Modules: `algebra` (batched DQ algebra), `data` (pose graphs, synthetic benchmark), `sync`
(Hermitian DQ matrix, DQ power method, spectral initializer, DQGPM), `metrics` (gauge-free
errors), `baselines` (EIG-SE(3), DQ spectral), `registration` (multi-scan demo),
`experiment` (the chapter's runs and reproduction check), `plots`, `config` (presets).
"""

from .algebra import (
    dq_conj, dq_from_matrix, dq_from_rt, dq_mul, dq_norm, dq_to_matrix, dq_to_rt, project_udq, quat_mul,
)
from .baselines import dq_spectral, eig_se3
from .config import EXPECTED_TIME, PRESETS, DQSyncConfig, get_config
from .data import PoseGraph, make_synthetic_problem
from .experiment import run_experiment
from .metrics import pose_errors, pose_errors_rt
from .sync import dq_power_method, dqgpm, hermitian_matvec, measurement_matrix, spectral_initializer, synchronize

__all__ = [
    "DQSyncConfig", "EXPECTED_TIME", "PRESETS", "PoseGraph", "dq_conj", "dq_from_matrix", "dq_from_rt", "dq_mul",
    "dq_norm", "dq_power_method", "dq_spectral", "dq_to_matrix", "dq_to_rt", "dqgpm", "eig_se3", "get_config",
    "hermitian_matvec", "make_synthetic_problem", "measurement_matrix", "pose_errors", "pose_errors_rt",
    "project_udq", "quat_mul", "run_experiment", "spectral_initializer", "synchronize",
]
