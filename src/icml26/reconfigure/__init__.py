"""Learning to Reconfigure (ICML 2026): configuration-control co-optimisation of reconfigurable
robots, reconstructed at CPU scale: multi-tail staged-PPO primitives + an eps-greedy scheduler."""

from .config import CONFIGS, COURSES, EXPECTED_TIME, PRESETS, TERRAINS, ReconfigConfig, get_config
from .env import ReconfCourse, make_courses, make_subtask, velocity_and_energy
from .experiment import run_experiment, run_seed, summarize
from .primitives import MultiTailPolicy, gae, staged_advantages, train_primitive
from .scheduler import QScheduler, run_hierarchy, train_scheduler

__all__ = ["CONFIGS", "COURSES", "EXPECTED_TIME", "PRESETS", "TERRAINS", "MultiTailPolicy", "QScheduler",
           "ReconfCourse", "ReconfigConfig", "gae", "get_config", "make_courses", "make_subtask",
           "run_experiment", "run_hierarchy", "run_seed", "staged_advantages", "summarize", "train_primitive",
           "train_scheduler", "velocity_and_energy"]
