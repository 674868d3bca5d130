"""PRISM: Language as a Wave Phenomenon (Yildirim & Yucedag, ICML 2026).

Modules: `config` (presets, pass criterion), `data` (topic + Markov masked-token task),
`layers` (DynamicRoSE, normalisations, gated harmonic convolution, bridge), `interventions`
(phase/magnitude ablations and the real-valued controls), `models` (PRISM-pure, hybrid,
matched Transformer, parameter accounting), `experiment` (training, sweeps, the check),
`plots`.
"""

from .config import EXPECTED_TIME, PRESETS, PrismConfig, get_config
from .experiment import run_experiment
from .data import MASK_ID, TopicMarkovTask, bayes_posterior, make_task, mask_tokens
from .interventions import Intervention, intervene_complex, intervene_real
from .layers import (
    Bridge, DynamicRoSE, GatedHarmonicConv, ModReLU, PhasePreservingLayerNorm, RobustPhaseNorm, harmonic_conv,
    project_unit, static_rotation,
)
from .models import PrismHybridLM, PrismLM, TransformerLM, build_models, count_params, matched_ffn_dim

__all__ = [
    "bayes_posterior", "Bridge", "build_models", "count_params", "DynamicRoSE", "EXPECTED_TIME",
    "GatedHarmonicConv", "get_config", "harmonic_conv", "intervene_complex", "intervene_real", "Intervention",
    "make_task", "MASK_ID", "mask_tokens", "matched_ffn_dim", "ModReLU", "PhasePreservingLayerNorm", "PRESETS",
    "PrismConfig", "PrismHybridLM", "PrismLM", "project_unit", "RobustPhaseNorm", "run_experiment", "static_rotation",
    "TopicMarkovTask", "TransformerLM",
]
