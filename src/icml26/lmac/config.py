"""Presets for the LMAC chapter: `smoke` (seconds, unit tests), `reduced` (the stored run,
~60 s on 2 CPU cores) and `full` (one GPU, a real LLM behind an explicit option).

The pass criterion's thresholds are fixed here, before any result was seen; they follow the
"claim to reproduce" of the paper dossier (shared/papers/lmac.md).
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
    # offline data + state-awareness criterion (Sec. "state-awareness criterion", recon)
    data_steps: int = 8000  # transitions (s_t, o_t) from a random policy
    test_frac: float = 0.25  # held-out split on which SR is measured
    recon_hidden: int = 64
    recon_steps: int = 150  # Adam steps of the batched reconstructors
    recon_batch: int = 1024
    recon_lr: float = 3e-3
    # refinement loop
    llm: str = "rule"  # "rule" (offline stand-in), "openai[:model]" or "hf:<model id>" (real LLM)
    step1_rounds: int = 5  # K rounds of Step 1 (raise min-agent recovery)
    step2_rounds: int = 2  # K rounds of Step 2 (narrow the gap)
    tau1: float = 0.9  # Step-1 stop: min_i SR_i >= tau1
    tau2: float = 0.05  # Step-2 stop: max_i SR_i - min_i SR_i <= tau2
    feedback_rows: int = 8  # worst (agent, dim) pairs listed in the feedback table
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
    seeds: tuple[int, ...] = (0, 1)
    arms: tuple[str, ...] = ("NoComm", "FullComm", "LMAC", "State", "TarMAC")
    # pass criterion (fixed before looking at results; dossier's claim)
    min_sr_lmac: float = 0.9  # LMAC min-agent SR >= 0.9
    max_gap_lmac: float = 0.1  # LMAC SR spread <= 0.1
    max_sr_nocomm: float = 0.5  # NoComm strikers' SR <= 0.5
    min_success_gain: float = 0.30  # LMAC success >= NoComm + 30 points
    max_msg_frac: float = 0.25  # LMAC message size <= 25% of FullComm's
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
        if not self.seeds or self.iterations < 1 or self.n_envs < 1:
            raise ValueError("seeds must be non-empty, iterations and n_envs positive")
        for name in ("tau1", "tau2", "min_sr_lmac", "max_gap_lmac", "max_sr_nocomm", "max_msg_frac"):
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
    "smoke": LMACConfig(data_steps=1500, recon_steps=40, recon_batch=512, step1_rounds=2, step2_rounds=1,
                        n_envs=32, iterations=3, eval_episodes=64, seeds=(0,)),
    "reduced": LMACConfig(),
    "full": LMACConfig(grid=7, horizon=18, data_steps=40000, recon_hidden=128, recon_steps=1500,
                       llm="hf:Qwen/Qwen2.5-Coder-1.5B-Instruct", step1_rounds=5, step2_rounds=3,
                       n_envs=1024, iterations=300, hidden=128, seeds=(0, 1, 2, 3, 4)),
}

EXPECTED_TIME = {"smoke": "a few seconds", "reduced": "about a minute on 2 CPU cores",
                 "full": "20-40 minutes on one GPU (plus the LLM's download/generation)"}


def get_config(name: str = "reduced", **overrides) -> LMACConfig:
    """The preset `name` ('smoke', 'reduced', 'full') with optional field overrides."""
    return select_preset(PRESETS, name, **overrides)
