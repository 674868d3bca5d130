"""LLM-Guided Communication for Cooperative MARL (LMAC; Bae, Park, Lee & Han, ICML 2026).

Modules: `env` (batched Overseer gridworld), `protocol` (protocols as code, sandboxed
compilation into selection matrices), `criterion` (state-awareness criterion), `llm`
(LLM back-ends and the offline rule-based stand-in), `refine` (the two-step refinement
loop), `marl` (MAPPO-lite learner), `experiment` (runs and reproduction check), `plots`,
`config` (presets).
"""

from .config import EXPECTED_TIME, PRESETS, LMACConfig, get_config
from .criterion import Awareness, collect_dataset, recovery_success, state_awareness, summarize
from .env import OverseerEnv, observation_names, observed_by, state_names
from .llm import LLMClient, OpenAIClient, RuleBasedDesigner, TransformersClient, make_llm, tiny_random_client
from .protocol import CompiledProtocol, ProtocolRejected, compile_protocol, protocol_code
from .experiment import run_experiment
from .refine import task_prompt

__all__ = [
    "Awareness", "CompiledProtocol", "EXPECTED_TIME", "LLMClient", "LMACConfig", "OpenAIClient", "OverseerEnv",
    "PRESETS", "ProtocolRejected", "RuleBasedDesigner", "TransformersClient", "collect_dataset",
    "compile_protocol", "get_config", "make_llm", "observation_names", "observed_by", "protocol_code",
    "recovery_success", "run_experiment", "state_awareness", "state_names", "summarize", "task_prompt",
    "tiny_random_client",
]
