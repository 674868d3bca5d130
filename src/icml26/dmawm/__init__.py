"""Learning Disentangled Multi-Agent World Model for Decentralized Control (DMAWM, ICML 2026).

Modules: `env` (the batched Follow-the-Scout task), `model` (agent modules, environment module,
world-model loss; DMAWM and the joint-latent baseline), `behavior` (imagination, actor-critic),
`experiment` (training loop, evaluation, probe, reproduction check), `plots`, `config` (presets).
"""

from .behavior import Actor, Critic, actor_critic_losses, imagine, lambda_return
from .config import EXPECTED_TIME, METHODS, PRESETS, DMAWMConfig, get_config
from .env import FollowTheScout
from .experiment import run_experiment
from .model import ModelState, WorldModel, kl_balanced, world_model_loss

__all__ = [
    "Actor", "Critic", "DMAWMConfig", "EXPECTED_TIME", "FollowTheScout", "METHODS", "ModelState", "PRESETS",
    "WorldModel", "actor_critic_losses", "get_config", "imagine", "kl_balanced", "lambda_return",
    "run_experiment", "world_model_loss",
]
