"""Presets for the `reconfigure` chapter. The claims' decision functions and thresholds are in
`claims.py`, fixed before any run."""

from __future__ import annotations

from dataclasses import dataclass

from icml26.common import select_preset

CONFIGS = ("walker", "wheel", "flyer", "swimmer")  # configuration families c = 1..C
TERRAINS = ("flat", "pit", "stairs", "water")  # segment types tau_k
COURSES = {  # the three heterogeneous courses of the reduced plan: flat -> X -> flat
    "Fly-Walk": ("flat", "pit", "flat"),
    "Car-Leg": ("flat", "stairs", "flat"),
    "Wheel-Swim": ("flat", "water", "flat"),
}
PRIMITIVE_TASKS = {"wheel": "flat", "walker": "stairs", "flyer": "pit", "swimmer": "water"}


@dataclass(frozen=True)
class ReconfigConfig:
    """All knobs of the chapter."""

    n_envs: int = 128  # parallel environments in every PPO / scheduler batch
    horizon: int = 120  # steps on a full course (progress is measured at the end)
    prim_horizon: int = 30  # control steps of a primitive's training episode (one segment type)
    switch_cost: int = 5  # T_sw: steps of zero motion after a reconfiguration
    decision_every: int = 5  # Delta: scheduler decision period
    hidden: int = 64
    ppo_iters: int = 15
    ppo_epochs: int = 3
    ppo_minibatches: int = 4
    lr: float = 3e-3
    gamma: float = 0.99
    lam: float = 0.95
    clip: float = 0.2
    ent_coef: float = 1e-3
    sched_iters: int = 25
    sched_updates: int = 30
    sched_gamma: float = 0.95
    eps_start: float = 1.0
    eps_end: float = 0.05
    n_eval: int = 128
    n_seeds: int = 1
    device: str = "auto"

    def __post_init__(self) -> None:
        for name in ("n_envs", "horizon", "prim_horizon", "decision_every", "hidden", "ppo_iters",
                     "ppo_epochs", "ppo_minibatches", "sched_iters", "sched_updates", "n_eval", "n_seeds"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if isinstance(self.switch_cost, bool) or not isinstance(self.switch_cost, int) or self.switch_cost < 0:
            raise ValueError(f"switch_cost must be an integer >= 0, got {self.switch_cost!r}")
        if self.n_envs % self.ppo_minibatches:
            raise ValueError(f"n_envs ({self.n_envs}) must be divisible by ppo_minibatches ({self.ppo_minibatches})")
        for name in ("gamma", "sched_gamma"):
            if not 0 < getattr(self, name) <= 1:
                raise ValueError(f"{name} must lie in (0, 1], got {getattr(self, name)}")
        if not 0 <= self.lam <= 1:
            raise ValueError(f"lam must lie in [0, 1], got {self.lam}")
        if not self.lr > 0 or not self.clip > 0 or self.ent_coef < 0:
            raise ValueError(f"lr and clip must be > 0 and ent_coef >= 0, got lr={self.lr}, clip={self.clip}, "
                             f"ent_coef={self.ent_coef}")
        if not 0 <= self.eps_end <= self.eps_start <= 1:
            raise ValueError(f"eps_start and eps_end need 0 <= eps_end <= eps_start <= 1, got {self.eps_start}, "
                             f"{self.eps_end}")


PRESETS: dict[str, ReconfigConfig] = {
    "smoke": ReconfigConfig(n_envs=32, horizon=60, prim_horizon=10, ppo_iters=2, ppo_epochs=1,
                            sched_iters=2, sched_updates=2, n_eval=32, n_seeds=3),
    # the page's run: one seed (rule 1 needs three, so its claims wait for the evidence record)
    "reduced": ReconfigConfig(n_envs=48, n_eval=48, n_seeds=1),
    # the evidence record: the same scale, three independently trained seeds (about 5 minutes on 2 cores)
    "evidence": ReconfigConfig(n_envs=48, n_eval=48, n_seeds=3),
    "full": ReconfigConfig(n_envs=2048, hidden=128, ppo_iters=200, ppo_epochs=4, sched_iters=200, sched_updates=50,
                           n_eval=2048, n_seeds=5, lr=1e-3),
}

EXPECTED_TIME = {"smoke": "about 15 s on 2 CPU cores", "reduced": "about 100 s on 2 CPU cores",
                 "evidence": "about 5 minutes on 2 CPU cores",
                 "full": "tens of minutes on one GPU"}


def get_config(name: str = "reduced", **overrides) -> ReconfigConfig:
    """The preset `name` ('smoke', 'reduced', 'evidence', 'full') with optional field overrides."""
    return select_preset(PRESETS, name, **overrides)
