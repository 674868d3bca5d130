"""Configuration and scale presets for the chapter (CONTRIBUTING.md, section 1)."""

from __future__ import annotations

from dataclasses import dataclass

from icml26.common import select_preset

from .losses import LOSS_NAMES


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

    def __post_init__(self):
        def bad(name, allowed):
            raise ValueError(f"W2SGConfig.{name} = {getattr(self, name)!r}; allowed: {allowed}")

        positive_ints = ("seeds", "a_dim", "a_n_teacher", "a_n_student", "a_n_test", "a_mc_draws", "a_steps",
                         "b_n_teacher", "b_n_w2s", "b_hidden", "b_steps")
        for name in positive_ints:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                bad(name, "an integer >= 1")
        if self.seeds < 3:
            bad("seeds", "at least 3 (rule 1: claims about trained students need 3 independently trained seeds)")
        if self.a_classes < 2:
            bad("a_classes", "an integer >= 2")
        if not self.a_noise_levels or any(s < 0 for s in self.a_noise_levels):
            bad("a_noise_levels", "a non-empty tuple of noise levels >= 0")
        if not self.a_widths or any(isinstance(w, bool) or not isinstance(w, int) or w < 1 for w in self.a_widths):
            bad("a_widths", "a non-empty tuple of integer widths >= 1")
        for name in ("a_lr", "b_lr", "b_sl_beta", "b_teacher_C"):
            if not getattr(self, name) > 0:
                bad(name, "a number > 0")
        for name in ("a_ridge", "b_weight_decay", "b_teacher_noise"):
            if not getattr(self, name) >= 0:
                bad(name, "a number >= 0")
        if self.b_pool not in (1, 2, 4, 8):
            bad("b_pool", "1, 2, 4 or 8 (a divisor of the 8x8 image side)")
        if len(self.b_temperatures) < 2 or any(not t > 0 for t in self.b_temperatures):
            bad("b_temperatures", "at least two temperatures > 0")
        if not {"ce", "rce", "sl"} <= set(self.b_losses) or not set(self.b_losses) <= set(LOSS_NAMES):
            bad("b_losses", f"losses among {LOSS_NAMES} including 'ce', 'rce' and 'sl' (the claims compare them)")
        if not 0 <= self.b_rce_eps < 1:
            bad("b_rce_eps", "a number in [0, 1)")
        if not 0 < self.b_cace_quantile < 1:
            bad("b_cace_quantile", "a number in (0, 1)")


PRESETS = {
    "smoke": W2SGConfig(seeds=3, a_noise_levels=(0.5, 1.5), a_widths=(4, 32), a_n_student=400,
                        a_n_test=100, a_mc_draws=16, a_steps=30, b_n_w2s=300, b_hidden=32,
                        b_steps=20, b_temperatures=(1.0, 4.0)),
    "reduced": W2SGConfig(),
    # The smallest scale that decides the claims (rule 9): 10 independently trained seeds, twice the
    # reduced run's digits training steps, and two more teacher temperatures (0.5 and 8).
    "evidence": W2SGConfig(seeds=10, b_steps=240, b_temperatures=(0.5, 1.0, 2.0, 4.0, 8.0)),
    # Sized for a 16 GB GPU and 12 GB of host memory (a Colab T4): the largest tensors are the
    # student features, seeds x students x (width + 1) float64 = 3.3 GB (+ a float32 copy for
    # KL), and the teacher draws on the test inputs, seeds x noise levels x tests x draws x
    # classes float64 = 2 GB. The first version (50 000 students, widths to 4096, 5000 tests)
    # needed about 33 GB for the features and 20 GB of host memory for the test views.
    "full": W2SGConfig(seeds=20, a_dim=20, a_classes=5, a_noise_levels=(0.25, 0.5, 1.0, 1.5, 2.0),
                       a_widths=(4, 16, 64, 256, 1024), a_n_student=20_000, a_n_test=2000,
                       a_mc_draws=256, a_steps=500, b_hidden=512, b_steps=400,
                       b_temperatures=(0.5, 1.0, 2.0, 4.0, 8.0)),
}


#: How long each preset takes (the banner, the chapter's Time section and the scoreboard read it).
EXPECTED_TIME = {
    "smoke": "about 5 s on 2 CPU cores",
    "reduced": "about 40 s on 2 CPU cores",
    "evidence": "about 5 min on 2 CPU cores",
    "full": "about 10 min on one GPU",
}


def get_config(name: str = "reduced", **overrides) -> W2SGConfig:
    """The named preset (``smoke``, ``reduced``, ``evidence`` or ``full``), with optional field overrides."""
    return select_preset(PRESETS, name, **overrides)
