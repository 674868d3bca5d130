"""Presets for the STEP chapter: `smoke` (seconds, unit tests), `reduced` (the page's run, one
training seed), `evidence` (three independently trained seeds: the stored evidence record) and
`full` (a GPU machine: bigger models, longer training, more rollouts, five training seeds).

The claims' thresholds are named constants in `claims.py`, fixed before the run.
"""

from __future__ import annotations

from dataclasses import dataclass

from icml26.common import select_preset

SAMPLERS = ("ddpm", "ddim")
DENOISERS = ("mlp", "conv")


@dataclass(frozen=True)
class StepConfig:
    """All knobs of the chapter (names follow the paper: T_o, H, n_a, H_p, K')."""

    # environment (ObstacleReach2D) and expert
    max_steps: int = 80  # episode limit (steps)
    max_speed: float = 0.05  # largest displacement per step
    goal_tol: float = 0.05  # success radius
    obstacle_radius: float = 0.3
    n_demos: int = 200
    # action chunking (the paper's T_o=2, H=16, n_a=8, H_p=8)
    obs_horizon: int = 2  # T_o
    pred_horizon: int = 16  # H
    action_horizon: int = 8  # n_a (executed actions per decision)
    prev_horizon: int = 8  # H_p (executed actions fed to the predictor)
    # diffusion (the paper's DDPMScheduler: 100 steps, squaredcos_cap_v2, epsilon, clip)
    num_train_timesteps: int = 100
    denoiser: str = "mlp"  # 'mlp' (CPU-sized) or 'conv' (the temporal conv net, for a GPU)
    denoiser_channels: int = 128  # MLP width or conv channels
    denoiser_blocks: int = 3
    denoiser_steps: int = 3000
    # spatiotemporal consistency predictor (the paper's: 128-dim, 2 cross-attention blocks, action
    # queries attending to the encoded observation (and action history) as keys/values)
    predictor_dim: int = 128
    predictor_heads: int = 8
    predictor_enc_layers: int = 1  # the official code: 2 (1 here for the CPU budget)
    predictor_dec_layers: int = 2  # the paper's 2 cross-attention blocks
    predictor_dropout: float = 0.1
    predictor_steps: int = 200
    batch_size: int = 256
    predictor_batch_size: int = 64
    lr: float = 1e-3
    predictor_lr: float = 1e-3
    # STEP inference
    refine_steps: int = 2  # K'
    sampler: str = "ddim"  # refinement sampler: DDIM in the official configuration, as the official evaluation
    stall_threshold: float = 0.01  # eps_a: stall if ||A_cache - A_{t-2H}|| < eps_a (unnormalised)
    sigma_scale: float = 1.0  # sigma when stalled
    sigma_stall: float = 0.1  # sigma_t when stalled (the paper's value in simulation)
    stall_dead_band: float = 0.02  # C4's stall task: commanded moves shorter than this do not move the point
    # evaluation
    train_seeds: int = 1  # independently trained seeds (each trains the denoiser and both predictors afresh)
    eval_seeds: tuple[int, ...] = (0, 1, 2)
    episodes_per_seed: int = 50
    latency_repeats: int = 20  # latency = the minimum over this many timed calls (a shared CPU is noisy)
    latency_batch: int = 50  # the second timing setting: one decision for this many robots at once
    explore_episodes: int = 12  # scenes of the precomputed Explore views

    def __post_init__(self) -> None:
        for name in ("obs_horizon", "pred_horizon", "action_horizon", "prev_horizon", "num_train_timesteps",
                     "refine_steps", "n_demos", "episodes_per_seed", "max_steps", "denoiser_steps",
                     "predictor_steps", "batch_size", "predictor_batch_size", "train_seeds", "latency_repeats",
                     "latency_batch", "explore_episodes", "denoiser_channels", "denoiser_blocks", "predictor_dim",
                     "predictor_heads", "predictor_enc_layers", "predictor_dec_layers"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be a positive integer, got {getattr(self, name)}")
        if self.prev_horizon < 2:
            raise ValueError(f"prev_horizon must be >= 2 , got {self.prev_horizon}")
        if self.obs_horizon - 1 + self.action_horizon > self.pred_horizon:
            raise ValueError(f"the executed actions [T_o-1, T_o-1+n_a) = [{self.obs_horizon - 1}, "
                             f"{self.obs_horizon - 1 + self.action_horizon}) do not fit in H={self.pred_horizon}")
        if self.refine_steps > self.num_train_timesteps:
            raise ValueError(f"K'={self.refine_steps} must be <= num_train_timesteps={self.num_train_timesteps}")
        for name in ("max_speed", "goal_tol", "obstacle_radius", "lr", "predictor_lr"):
            if not float(getattr(self, name)) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")
        if not 0 <= self.predictor_dropout < 1:
            raise ValueError(f"predictor_dropout must lie in [0, 1), got {self.predictor_dropout}")
        if self.sampler not in SAMPLERS:
            raise ValueError(f"unknown sampler {self.sampler!r}; valid samplers: {', '.join(SAMPLERS)}")
        if self.denoiser not in DENOISERS:
            raise ValueError(f"unknown denoiser {self.denoiser!r}; valid denoisers: {', '.join(DENOISERS)}")
        if not self.eval_seeds:
            raise ValueError("eval_seeds must name at least one seed")
        if self.predictor_dim % self.predictor_heads:
            raise ValueError(f"predictor_dim={self.predictor_dim} must be divisible by predictor_heads={self.predictor_heads}")
        if self.sigma_stall < 0 or self.sigma_scale <= 0 or self.stall_threshold < 0:
            raise ValueError("sigma_stall and stall_threshold must be >= 0 and sigma_scale > 0")
        if not 0 <= self.stall_dead_band < self.max_speed:
            raise ValueError(f"stall_dead_band must lie in [0, max_speed={self.max_speed}), got {self.stall_dead_band}")


#: One training seed of the page's run and of the evidence record (sized to fit 3 seeds in about
#: 5 minutes on 2 CPU cores).
_SEED_SCALE = dict(denoiser_steps=1500, predictor_dim=64, predictor_heads=4, predictor_steps=400, latency_repeats=10)

PRESETS: dict[str, StepConfig] = {
    "smoke": StepConfig(n_demos=30, denoiser_steps=40, predictor_steps=30, episodes_per_seed=30, eval_seeds=(0,),
                        num_train_timesteps=20, max_steps=60, denoiser_channels=16, predictor_dim=16,
                        predictor_heads=2, predictor_dec_layers=1, batch_size=64, latency_repeats=2,
                        latency_batch=8, explore_episodes=3),
    "reduced": StepConfig(**_SEED_SCALE),
    "evidence": StepConfig(**_SEED_SCALE, train_seeds=3),
    "full": StepConfig(n_demos=1000, denoiser="conv", denoiser_channels=256, denoiser_blocks=4,
                       denoiser_steps=30000, predictor_enc_layers=2, predictor_steps=20000, predictor_batch_size=256,
                       episodes_per_seed=200, eval_seeds=(0, 1, 2, 3, 4), lr=3e-4, predictor_lr=3e-4,
                       latency_repeats=20, train_seeds=5),
}

EXPECTED_TIME = {"smoke": "about 15 s on 2 CPU cores",
                 "reduced": "about 100 s on 2 CPU cores (one training seed)",
                 "evidence": "about 5 minutes on 2 CPU cores (three training seeds)",
                 "full": "about 1-2 hours on one GPU (five training seeds; estimated, not yet timed)"}


def get_config(name: str = "reduced", **overrides) -> StepConfig:
    """The preset `name` ('smoke', 'reduced', 'evidence', 'full') with optional field overrides."""
    return select_preset(PRESETS, name, **overrides)
