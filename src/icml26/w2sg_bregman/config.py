"""Configuration and scale presets for the chapter (CONTRIBUTING.md, section 1)."""

from __future__ import annotations

from dataclasses import dataclass

from icml26.common import select_preset


@dataclass(frozen=True)
class W2SGConfig:
    """All knobs of both parts. ``a_*``: Part A (synthetic theory check);
    ``b_*``: Part B (digits, forward vs reverse cross-entropy)."""

    seeds: int = 5
    # Part A: synthetic data with a known target, a noisy-view teacher, random-feature students
    a_dim: int = 10
    a_classes: int = 3
    a_noise_levels: tuple[float, ...] = (0.5, 1.0, 1.5)
    a_widths: tuple[int, ...] = (4, 16, 64, 256)
    a_n_teacher: int = 300
    a_n_student: int = 3000
    a_n_test: int = 500
    a_mc_draws: int = 64
    a_steps: int = 150
    a_lr: float = 1.0
    a_ridge: float = 1e-3
    # Part B: digits
    b_n_teacher: int = 300
    b_n_w2s: int = 1000
    b_pool: int = 2
    b_teacher_noise: float = 0.5
    b_teacher_C: float = 1.0
    b_hidden: int = 64
    b_steps: int = 120
    b_lr: float = 3e-3
    b_weight_decay: float = 1e-2
    b_temperatures: tuple[float, ...] = (1.0, 2.0, 4.0)
    b_losses: tuple[str, ...] = ("ce", "rce", "sl", "cace", "aux")
    b_rce_eps: float = 1e-4
    b_sl_beta: float = 1.0
    b_cace_quantile: float = 0.5
    expected_time: str = "about 60 s on 2 CPU cores"


PRESETS = {
    "smoke": W2SGConfig(seeds=3, a_noise_levels=(0.5, 1.5), a_widths=(4, 32), a_n_student=400,
                        a_n_test=100, a_mc_draws=16, a_steps=30, b_n_w2s=300, b_hidden=32,
                        b_steps=20, b_temperatures=(1.0, 4.0), expected_time="a few seconds"),
    "reduced": W2SGConfig(),
    # Sized for a 16 GB GPU and 12 GB of host memory (a Colab T4): the largest tensors are the
    # student features, seeds x students x (width + 1) float64 = 3.3 GB (+ a float32 copy for
    # KL), and the teacher draws on the test inputs, seeds x noise levels x tests x draws x
    # classes float64 = 2 GB. The first version (50 000 students, widths to 4096, 5000 tests)
    # needed about 33 GB for the features and 20 GB of host memory for the test views.
    "full": W2SGConfig(seeds=20, a_dim=20, a_classes=5, a_noise_levels=(0.25, 0.5, 1.0, 1.5, 2.0),
                       a_widths=(4, 16, 64, 256, 1024), a_n_student=20_000, a_n_test=2000,
                       a_mc_draws=256, a_steps=500, b_hidden=512, b_steps=400,
                       b_temperatures=(0.5, 1.0, 2.0, 4.0, 8.0), expected_time="about 10 min on one GPU"),
}


def get_config(name: str = "reduced", **overrides) -> W2SGConfig:
    """The named preset (``smoke``, ``reduced`` or ``full``), with optional field overrides."""
    return select_preset(PRESETS, name, **overrides)
