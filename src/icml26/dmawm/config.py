"""Presets for the DMAWM chapter: `smoke` (seconds, unit tests), `reduced` (the page's run),
`evidence` (the stored record: 3 independently trained seeds, a longer world-model warm-up) and
`full` (one GPU).

The convergence rule that sets every method's budget is fixed here; the claims' decision functions
and thresholds are in `claims.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

from icml26.common import select_preset

METHODS = ("dmawm", "joint")  # the world models: the paper's disentangled one, and the joint-latent baseline
ALL_METHODS = METHODS + ("model_free",)  # plus the model-free baseline (same actor-critic on real episodes)


@dataclass(frozen=True)
class DMAWMConfig:
    """All knobs: environment, model sizes, training budget, pass criterion."""

    # Follow-the-Scout environment (batched, deterministic per seed)
    n_agents: int = 2
    grid_width: int = 5  # x in {0..W-1}; the two goal sites are the left and right middle cells
    grid_height: int = 3
    episode_len: int = 8  # T real steps per episode (plan: 25)
    n_envs: int = 256  # episodes collected in parallel per round (one tensor)
    shaping: float = 0.2  # reward -= shaping * mean Manhattan distance to the active goal
    # model (agent module + environment module)
    hidden: int = 64  # MLP width and GRU size (paper: 256)
    n_cat: int = 8  # categorical latents ...
    n_classes: int = 8  # ... each with this many classes (paper: 32 x 32)
    attn_heads: int = 2  # interaction predictor: 1 transformer layer (paper: 2 layers, 4 heads, d=256)
    attn_layers: int = 1
    kl_scale: float = 1.0  # beta
    kl_balance: float = 0.8  # alpha of DreamerV2 KL balancing (prior side)
    free_nats: float = 1.0
    # training budget: the same convergence rule for every method, fixed before any run. After each
    # round, the real validation success; stop when it has not gained `min_delta` over its best for
    # `patience` rounds, or at the cap `rounds`; keep the best round's weights.
    rounds: int = 3  # the cap (rounds of collect -> WM updates -> imagination updates)
    wm_warmup: int = 0  # extra world-model updates on the first (random-action) data, before any behaviour update
    min_rounds: int = 1  # the convergence rule applies from this round on (a fixed budget before it)
    patience: int = 4
    min_delta: float = 0.02
    mf_updates: int = 8  # model-free baseline: on-policy updates per round (n_envs / mf_updates episodes each)
    wm_updates: int = 30  # per round
    ac_updates: int = 40  # per round
    batch_size: int = 64  # episodes per WM batch (each a full T+1 sequence)
    imag_starts: int = 256  # imagination start states per actor-critic update
    horizon: int = 6  # H (paper: 15)
    gamma: float = 0.95
    lam: float = 0.95
    entropy: float = 1e-2  # eta (paper: 1e-3)
    lr_wm: float = 2e-3
    lr_actor: float = 1e-3
    lr_critic: float = 2e-3
    n_seeds: int = 1
    n_eval: int = 512  # real evaluation episodes per method
    device: str = "auto"

    def __post_init__(self) -> None:
        if self.n_agents != 2:
            raise ValueError(f"Follow-the-Scout is a 2-agent task (scout + follower), got n_agents={self.n_agents}")
        if self.grid_width < 3 or self.grid_width % 2 == 0:
            raise ValueError(f"grid_width must be odd and >= 3, got {self.grid_width}")
        if self.grid_height < 1:
            raise ValueError(f"grid_height must be >= 1, got {self.grid_height}")
        if self.episode_len < 2:
            raise ValueError(f"episode_len must be >= 2, got {self.episode_len}")
        if self.hidden % self.attn_heads != 0:
            raise ValueError(f"hidden ({self.hidden}) must be divisible by attn_heads ({self.attn_heads})")
        if min(self.n_envs, self.rounds, self.wm_updates, self.batch_size, self.horizon, self.n_seeds,
               self.n_eval, self.n_cat, self.n_classes, self.imag_starts, self.patience, self.mf_updates) < 1:
            raise ValueError("sizes, budgets and counts must be positive")
        if self.wm_warmup < 0:
            raise ValueError(f"wm_warmup must be >= 0, got {self.wm_warmup}")
        if not 1 <= self.min_rounds <= self.rounds:
            raise ValueError(f"min_rounds must lie in [1, rounds = {self.rounds}], got {self.min_rounds}")
        if min(self.lr_wm, self.lr_actor, self.lr_critic) <= 0:
            raise ValueError("learning rates lr_wm, lr_actor and lr_critic must be positive")
        if self.min_delta < 0:
            raise ValueError(f"min_delta must be >= 0, got {self.min_delta}")
        if not 0.0 <= self.kl_balance <= 1.0:
            raise ValueError(f"kl_balance must lie in [0, 1], got {self.kl_balance}")
        if not (0.0 < self.gamma <= 1.0 and 0.0 <= self.lam <= 1.0):
            raise ValueError("gamma must lie in (0, 1] and lam in [0, 1]")


PRESETS: dict[str, DMAWMConfig] = {
    "smoke": DMAWMConfig(n_envs=32, rounds=2, wm_updates=3, ac_updates=3, batch_size=8, imag_starts=32,
                         horizon=4, n_seeds=3, n_eval=64, hidden=32, n_cat=4, n_classes=4),
    # the smallest Follow-the-Scout: a 3x1 corridor, goals left and right of the start, 4 steps
    "reduced": DMAWMConfig(grid_width=3, grid_height=1, episode_len=4, horizon=4, rounds=6, wm_warmup=100,
                           min_rounds=4, n_seeds=3, wm_updates=15, ac_updates=20),
    "evidence": DMAWMConfig(grid_width=3, grid_height=1, episode_len=4, horizon=4, rounds=10, wm_warmup=300,
                            min_rounds=6, n_seeds=3),
    "full": DMAWMConfig(n_envs=512, episode_len=25, grid_width=9, grid_height=5, rounds=20, wm_updates=200,
                        ac_updates=200, batch_size=128, imag_starts=1024, horizon=15, patience=5, hidden=256, n_cat=32,
                        n_classes=32, attn_heads=4, attn_layers=2, n_seeds=3, n_eval=2048, lr_wm=3e-4,
                        lr_actor=1e-4, lr_critic=3e-4, gamma=0.99, wm_warmup=1000, min_rounds=8),
}

EXPECTED_TIME = {"smoke": "a few seconds", "reduced": "about 100 s on 2 CPU cores",
                 "evidence": "about 4 minutes on 2 CPU cores",
                 "full": "about an hour on a T4 GPU (estimated, not yet timed)"}


def get_config(name: str = "reduced", **overrides) -> DMAWMConfig:
    """The preset `name` ('smoke', 'reduced', 'evidence', 'full') with optional field overrides."""
    return select_preset(PRESETS, name, **overrides)
