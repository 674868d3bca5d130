"""DeepImageSearch: agentic, context-aware image retrieval over visual histories (Deng et al., ICML 2026).

Modules: `album` (synthetic MiniAlbum histories and templated intra/inter-event queries), `retriever`
(mini-CLIP + attribute heads: the perception stand-ins), `tools` (ImageSeeker's tools, explicit memory,
strict tool-call parsing), `agent` (the loop, working memory, policies, direct retrieval), `experiment`
(runs, metrics, the reproduction check), `plots`, `config` (presets).
"""

from .agent import OpenAIPolicy, ScriptedPlanner, direct_retrieval, make_policy, run_agent
from .experiment import run_experiment
from .album import Album, Query, make_benchmark, render_photos
from .config import EXPECTED_TIME, PRESETS, DISConfig, get_config
from .retriever import MiniCLIP, info_nce, train_perception
from .tools import ToolCall, ToolCallRejected, Toolbox, parse_tool_call

__all__ = [
    "Album", "DISConfig", "EXPECTED_TIME", "MiniCLIP", "OpenAIPolicy", "PRESETS", "Query", "ScriptedPlanner",
    "ToolCall", "ToolCallRejected", "Toolbox", "direct_retrieval", "get_config", "info_nce", "make_benchmark",
    "make_policy", "parse_tool_call", "render_photos", "run_agent", "run_experiment", "train_perception",
]
