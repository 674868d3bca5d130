"""Structured Diffusion Bridges (Kosman, Serussi, Baskin; ICML 2026) at digits scale:
a latent VE diffusion bridge from 4x4 low-res to 8x8 high-res digits, trained with marginal
matching (capacity-constrained winner-takes-all), endpoint and trajectory cycle consistency and
optional paired supervision, against the same bridge trained on pairs only (LDDBM-lite)."""

from .config import EXPECTED_TIME, PRESETS, BridgeConfig, get_config


def run_experiment(config, seed: int = 0, device=None, show_progress: bool = True, keep_objects: bool = False) -> dict:
    """The chapter's experiment (`experiment.run_experiment`; imported lazily, it needs torch)."""
    from .experiment import run_experiment as run

    return run(config, seed, device, show_progress, keep_objects)


__all__ = ["EXPECTED_TIME", "PRESETS", "BridgeConfig", "get_config", "run_experiment"]
