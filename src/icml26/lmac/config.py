"""Presets for the LMAC chapter: `smoke` (seconds, unit tests), `reduced` (the stored run,
about 100 s on 2 CPU cores) and `full` (one GPU, a real LLM behind an explicit option).

The criterion's hyper-parameters follow the official release (SaaangJun/LMAC,
`src/config/algs/lmac.yaml`): success threshold `mse_thres = 0.05` on the squared error of the
normalised state, a reconstructor with a `latent_dim = 20` bottleneck, hidden width 64 and
dropout 0.1, one feedback-and-update round per refinement step and up to `max_retries = 10`
attempts for code that fails validation. The claims' thresholds live in `claims.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

from icml26.common import select_preset

LLM_BACKENDS = ("rule", "openai", "hf")


@dataclass(frozen=True)
class LMACConfig:
    """All knobs of the chapter's experiment."""

    # Overseer gridworld (our stand-in for the paper's SMAC overseer/baneling map)
    grid: int = 5  # side of the square grid
    n_strikers: int = 3  # agents 1..n_strikers; agent 0 is the overseer
    n_distract: int = 12  # irrelevant noisy features appended to every observation
    horizon: int = 12  # episode length T
    # offline data + state-awareness criterion (Sec. 3.2; official lmac.yaml where it applies)
    data_steps: int = 8000  # transitions (s_t, o_t) from a random policy
    test_frac: float = 0.25  # held-out split on which SR is measured
    mse_thres: float = 0.05  # success: squared error of a normalised state dim < mse_thres (official)
    recon_hidden: int = 64  # official hidden_dim
    latent_dim: int = 20  # official latent_dim (bottleneck of the reconstructor)
    recon_dropout: float = 0.1  # official dropout
    recon_steps: int = 150  # Adam steps of the batched reconstructors
    recon_batch: int = 1024
    recon_lr: float = 3e-3
    criterion_seeds: tuple[int, ...] = (0, 1, 2)  # reconstructor seeds for the claims on the criterion
    # refinement loop (official: one feedback + update per step, up to max_retries for invalid code)
    llm: str = "rule"  # "rule" (offline stand-in), "openai[:model]" or "hf:<model id>" (real LLM)
    step1_rounds: int = 1  # updates in Step 1 (recovery enhancement)
    step2_rounds: int = 1  # updates in Step 2 (imbalance mitigation)
    max_retries: int = 10  # attempts per update while the answer fails validation (official)
    low_sr: float = 0.6  # Step-1 analysis: a dim is poorly recovered by an agent below this SR
    source_sr: float = 0.8  # Step-2 analysis: an agent at or above this SR is a source for a lagging one
    # MARL learner (MAPPO-lite: parameter-shared actor, centralised critic)
    n_envs: int = 128
    iterations: int = 50  # PPO iterations; env steps = iterations * n_envs * horizon
    hidden: int = 64
    lr: float = 3e-3
    gamma: float = 0.97
    gae_lambda: float = 0.9
    ppo_epochs: int = 3
    minibatches: int = 2
    clip: float = 0.2
    entropy_coef: float = 0.01
    shaping: float = 1.0  # weight of the potential-based shaping (Ng et al. 1999)
    eval_episodes: int = 1024
    seeds: tuple[int, ...] = (0, 1, 2)
    arms: tuple[str, ...] = ("NoComm", "FullComm", "LMAC", "State", "TarMAC")
    device: str = "auto"

    def __post_init__(self) -> None:
        if not isinstance(self.grid, int) or self.grid < 3:
            raise ValueError(f"grid must be an int >= 3, got {self.grid!r}")
        if not isinstance(self.n_strikers, int) or self.n_strikers < 1:
            raise ValueError(f"n_strikers must be a positive int, got {self.n_strikers!r}")
        if self.n_distract < 0 or self.horizon < 1:
            raise ValueError("n_distract must be >= 0 and horizon >= 1")
        if not 0.0 < self.test_frac < 1.0:
            raise ValueError(f"test_frac must lie in (0, 1), got {self.test_frac}")
        if self.data_steps < 100:
            raise ValueError(f"data_steps must be >= 100, got {self.data_steps}")
        if self.llm.split(":")[0] not in LLM_BACKENDS:
            raise ValueError(f"llm must start with one of {LLM_BACKENDS}, got {self.llm!r}")
        if self.llm.startswith("hf") and ":" not in self.llm:
            raise ValueError("llm='hf:<model id>' needs a model id")
        unknown = sorted(set(self.arms) - {"NoComm", "FullComm", "LMAC", "State", "TarMAC"})
        if unknown or "LMAC" not in self.arms or "NoComm" not in self.arms or "FullComm" not in self.arms:
            raise ValueError(f"arms must include NoComm, FullComm, LMAC (optionally State, TarMAC); got {self.arms}")
        for name in ("seeds", "criterion_seeds"):
            if not getattr(self, name) or len(set(getattr(self, name))) != len(getattr(self, name)):
                raise ValueError(f"{name} must be a non-empty tuple of distinct seeds, got {getattr(self, name)!r}")
        for name in ("iterations", "n_envs", "eval_episodes", "recon_steps", "recon_batch", "ppo_epochs",
                     "minibatches", "hidden", "recon_hidden", "latent_dim"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if not self.lr > 0 or not self.recon_lr > 0:
            raise ValueError(f"lr and recon_lr must be > 0, got {self.lr}, {self.recon_lr}")
        if self.step1_rounds < 0 or self.step2_rounds < 0 or self.max_retries < 1:
            raise ValueError("step1_rounds and step2_rounds must be >= 0 and max_retries >= 1")
        for name in ("mse_thres", "recon_dropout", "low_sr", "source_sr"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], got {getattr(self, name)}")

    @property
    def n_agents(self) -> int:
        return self.n_strikers + 1

    @property
    def env_steps(self) -> int:
        """Environment steps each MARL arm is trained for (equal for all arms)."""
        return self.iterations * self.n_envs * self.horizon


PRESETS: dict[str, LMACConfig] = {
    "smoke": LMACConfig(data_steps=1500, recon_steps=40, recon_batch=512, max_retries=2, n_envs=32, iterations=3,
                        eval_episodes=64),  # 3 seeds of each kind, so the ledger can be built
    # the page's run: 3 seeds of each kind at a smaller MARL budget (about 41k env steps per arm)
    "reduced": LMACConfig(n_envs=96, iterations=36),
    # the evidence record: 5 seeds of each kind at the full CPU budget (about 77k env steps per arm)
    "evidence": LMACConfig(seeds=(0, 1, 2, 3, 4), criterion_seeds=(0, 1, 2, 3, 4)),
    "full": LMACConfig(grid=7, horizon=18, data_steps=40000, recon_hidden=128, recon_steps=1500,
                       llm="hf:Qwen/Qwen2.5-Coder-1.5B-Instruct", criterion_seeds=(0, 1, 2, 3, 4),
                       n_envs=1024, iterations=300, hidden=128, seeds=(0, 1, 2, 3, 4)),
}

EXPECTED_TIME = {"smoke": "about 20 s on 2 CPU cores", "reduced": "about 100 s on 2 CPU cores",
                 "evidence": "about 5 minutes on 2 CPU cores",
                 "full": "20-40 minutes on one GPU (estimated; plus the LLM's download and generation)"}


def get_config(name: str = "reduced", **overrides) -> LMACConfig:
    """The preset `name` ('smoke', 'reduced', 'evidence', 'full') with optional field overrides."""
    return select_preset(PRESETS, name, **overrides)
