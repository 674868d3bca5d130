"""KSKT: Know Thyself, Know Thy User -- dual-stream self/other attention for role-playing LLMs
(Sun, Xie, Xu & Jiang, ICML 2026).

Modules: `data` (generated role-play corpus, role/user masks), `model` (DSAA, MUPE, BRM, SAMOE,
the KSKT block and its assembly into a transformers Qwen3), `train` (Eq. 11 and the phased
curriculum), `experiment` (KSKT vs matched Qwen3, probes, `run_experiment`, widget re-runs),
`claims` (the ledger: `build_ledger`),
`plots`, `config` (presets).
"""

from .config import EXPECTED_TIME, PRESETS, KSKTConfig, get_config
from .data import context_masks, extraction_masks, make_roleplay_data, model_inputs, span_mask
from .model import (BipolarReasoning, DualStreamAttention, KSKTBlock, KSKTForCausalLM, KSKTSpec, MutualUnderstandingPE,
                    SelfAwarenessMoE, balance_loss, build_kskt, load_kskt, save_kskt, tiny_qwen3_config)
from .experiment import run_experiment
from .train import consistency_loss, kskt_objective, train_model, understanding_loss

__all__ = [
    "BipolarReasoning", "DualStreamAttention", "EXPECTED_TIME", "KSKTBlock", "KSKTConfig", "KSKTForCausalLM",
    "KSKTSpec", "MutualUnderstandingPE", "PRESETS", "SelfAwarenessMoE", "balance_loss", "build_kskt",
    "consistency_loss", "context_masks", "extraction_masks", "get_config", "kskt_objective", "load_kskt",
    "make_roleplay_data", "model_inputs", "run_experiment", "save_kskt", "span_mask", "tiny_qwen3_config", "train_model",
    "understanding_loss",
]
