"""Presets for the USB-RL chapter (CONTRIBUTING.md, section 1): `smoke` (seconds, unit tests),
`reduced` (the page's run: the 3 seeds rule 1 asks for, with 32 imagined rollouts per agent and
policy step so that the page runs in under two minutes), `evidence` (the stored evidence record: the
same pipeline with 64 imagined rollouts per step, over 10 independently trained seeds) and `full`
(one GPU: more seeds, rollouts and updates). The claims' thresholds are named constants in
`claims.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

from icml26.common import select_preset


@dataclass(frozen=True)
class USBConfig:
    """All knobs of the chapter (environment, world model, score, policy, evaluation)."""

    # HazardNav: a point on the plane, goal at (1, 0), a triangular hazard across the straight line
    n_envs: int = 256  # parallel environments for data collection and evaluation
    horizon: int = 20  # episode length T (imagination covers the whole episode)
    step_size: float = 0.1  # |displacement| per step at full action
    hazard_half_width: float = 0.35  # half-width of the triangle where it crosses y = 0
    hazard_apex: float = 0.5  # height of its apex (0.5, apex); it widens downward to the wall
    start_jitter: float = 0.05  # start = (0, U(-j, j))
    # world model (ensemble of MLPs with reward and cost heads)
    ensemble: int = 3
    wm_hidden: int = 64
    wm_lr: float = 3e-3
    wm_steps_initial: int = 400  # on the exploration data
    wm_steps_refit: int = 150  # after every further collection round
    wm_batch: int = 512
    # monotone partial-order score
    score_hidden: int = 16
    score_lr: float = 1e-2
    score_steps: int = 40  # steps per refit
    score_every: int = 10  # policy steps between refits ("dynamic balancing")
    score_batch: int = 256  # outcomes per refit batch (B)
    score_real_frac: float = 0.5  # share of the batch drawn from real episode outcomes
    beta_bt: float = 0.1  # weight of the Bradley-Terry term
    dominance_tol: float = 0.1  # comparisons resolve differences > 0.1 batch std per axis
    outcome_noise_max: float = 0.6  # imagined outcomes for the score: action noise ~ U(0, this)
    usb_objective: str = "expected_score"  # or "score_of_mean": S(E[G^r], E[G^c]) (a diagnostic)
    # policy optimisation in imagination
    policy_hidden: int = 64
    policy_lr: float = 3e-3
    imagined_rollouts: int = 128  # M start states per policy step
    policy_noise: float = 0.1  # reparameterised action noise while optimising
    rounds: int = 2  # collection rounds after the exploration data
    policy_steps: int = 100  # imagination steps per round
    collect_noise: float = 0.3
    action_reg: float = 0.01  # pre-tanh penalty, identical for every agent
    # the baselines: same pipeline, other scalarisations
    lambdas: tuple[float, ...] = (0.03, 0.1, 0.3, 1.0)  # fixed linear penalties (lambda = 0 is added)
    cost_budget: float = 1.0  # Lagrangian: expected hazard steps per episode
    dual_lr: float = 0.05
    n_seeds: int = 3
    n_eval: int = 256  # test episodes per policy
    device: str = "auto"

    def __post_init__(self) -> None:
        if self.n_envs < 1 or self.horizon < 2 or self.n_eval < 1:
            raise ValueError("n_envs, n_eval must be >= 1 and horizon >= 2")
        if not 0.0 < self.step_size < 1.0 or not 0.0 < self.hazard_half_width < 0.5:
            raise ValueError("step_size must lie in (0, 1) and hazard_half_width in (0, 0.5)")
        if not 0.0 < self.hazard_apex < 1.0:
            raise ValueError(f"hazard_apex must lie in (0, 1), got {self.hazard_apex}")
        if self.ensemble < 1 or self.wm_hidden < 1 or self.score_hidden < 1 or self.policy_hidden < 1:
            raise ValueError("ensemble and hidden sizes must be positive")
        if self.n_seeds < 1 or self.rounds < 0 or self.policy_steps < 1:
            raise ValueError("n_seeds and policy_steps must be >= 1, rounds >= 0")
        if not self.lambdas or any(lam <= 0 for lam in self.lambdas):
            raise ValueError(f"lambdas must be positive penalty weights, got {self.lambdas}")
        if self.cost_budget < 0:
            raise ValueError(f"cost_budget must be >= 0, got {self.cost_budget}")
        if not 0.0 <= self.score_real_frac < 1.0:
            raise ValueError(f"score_real_frac must lie in [0, 1), got {self.score_real_frac}: the score's batch needs "
                             "imagined outcomes of the current policy (the score's return slope is measured on them)")
        if self.usb_objective not in ("expected_score", "score_of_mean"):
            raise ValueError(f"usb_objective must be 'expected_score' or 'score_of_mean', got {self.usb_objective!r}")
        if self.score_batch < 4 or self.score_every < 1:
            raise ValueError("score_batch must be >= 4 and score_every >= 1")
        if int(round(self.score_real_frac * self.score_batch)) >= self.score_batch:
            raise ValueError(f"score_real_frac={self.score_real_frac} leaves no imagined outcome in a batch of "
                             f"score_batch={self.score_batch}; use a smaller share of real outcomes")
        for name in ("wm_lr", "score_lr", "policy_lr", "dual_lr"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be a positive learning rate, got {getattr(self, name)}")
        for name in ("imagined_rollouts", "wm_batch", "wm_steps_initial", "score_steps"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.policy_noise < 0 or self.collect_noise < 0 or self.outcome_noise_max < 0 or self.action_reg < 0:
            raise ValueError("policy_noise, collect_noise, outcome_noise_max and action_reg must be >= 0")


PRESETS: dict[str, USBConfig] = {
    "smoke": USBConfig(n_envs=64, ensemble=2, wm_steps_initial=60, wm_steps_refit=20, rounds=1, policy_steps=20,
                       imagined_rollouts=32, score_steps=10, score_every=10, score_batch=64, n_seeds=3, n_eval=64,
                       lambdas=(0.1, 1.0)),
    # half the evidence preset's imagined rollouts per policy step: the page's run fits in 120 s
    "reduced": USBConfig(imagined_rollouts=32, rounds=1, policy_steps=150, n_seeds=3),
    # 10 independently trained seeds (rule 1; C2's and C3's margins are within the seed spread at
    # 3 seeds), 64 imagined rollouts per agent and policy step
    "evidence": USBConfig(imagined_rollouts=64, rounds=1, policy_steps=150, n_seeds=10),
    "full": USBConfig(n_envs=1024, ensemble=5, wm_hidden=128, wm_steps_initial=2000, wm_steps_refit=600,
                      rounds=4, policy_steps=300, imagined_rollouts=1024, score_batch=1024, n_seeds=10,
                      n_eval=1024, lambdas=(0.01, 0.03, 0.1, 0.3, 1.0, 3.0)),
}

EXPECTED_TIME = {"smoke": "about 25 s on 2 CPU cores", "reduced": "about 100 s on 2 CPU cores",
                 "evidence": "about 6 minutes on 2 CPU cores",
                 "full": "about 20 minutes on a T4 GPU (estimated, not yet timed)"}


def get_config(name: str = "reduced", **overrides) -> USBConfig:
    """The preset `name` ('smoke', 'reduced', 'evidence', 'full') with optional field overrides."""
    return select_preset(PRESETS, name, **overrides)
