"""STEP: Warm-Started Visuomotor Policies with Spatiotemporal Consistency Prediction
(Li et al., ICML 2026).

Modules: `env` (ObstacleReach2D, batched in torch, and its bimodal scripted expert), `data`
(normaliser, action-chunk windows), `models` (conditional denoisers, the spatiotemporal
consistency predictor), `sampling` (diffusers DDPM/DDIM, warm-started refinement, the stall
perturbation), `policy` (training, methods, closed-loop rollouts), `experiment` (runs), `claims` (the ledger's decision functions), `plots`, `config` (presets).
"""

from .config import EXPECTED_TIME, PRESETS, StepConfig, get_config
from .env import ObstacleReach2D, collect_demos, sample_layouts
from .models import ActionPredictorTransformer, ConditionalMLPDenoiser, ConditionalTemporalDenoiser
from .experiment import run_experiment
from .policy import MethodSpec, method_specs, rollout, train_policy
from .sampling import make_scheduler, shift_chunk, stall_perturbation, warm_start_refine

__all__ = [
    "ActionPredictorTransformer", "ConditionalMLPDenoiser", "ConditionalTemporalDenoiser", "EXPECTED_TIME",
    "MethodSpec", "ObstacleReach2D", "PRESETS", "StepConfig", "collect_demos", "get_config", "make_scheduler",
    "method_specs", "rollout", "run_experiment", "sample_layouts", "shift_chunk", "train_policy", "stall_perturbation",
    "warm_start_refine",
]
