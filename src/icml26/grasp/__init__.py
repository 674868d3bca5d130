"""GRASP (ICML 2026): an LLM agent that probes a graph with Neighbor Retrieval and solves with a
sandboxed Code Interpreter, trained by SFT then structure-blind GRPO; reduced-scale reconstruction."""

from .agent import build_policy, group_advantages, grpo, grpo_loss, passive_answers, rollout, sft, token_logprobs
from .config import EXPECTED_TIME, PRESETS, TASKS, GraspConfig, get_config
from .env import Question, Vocab, ground_truth, neighbor_retrieval, oracle_trace, prompt, sample_question
from .experiment import results_rows, run_experiment
from .tools import Action, ToolCallRejected, parse_action, parse_text, run_code_batch

__all__ = ["EXPECTED_TIME", "PRESETS", "TASKS", "GraspConfig", "get_config", "Question", "Vocab", "ground_truth", "neighbor_retrieval",
           "oracle_trace", "prompt", "sample_question", "build_policy", "group_advantages", "grpo", "grpo_loss",
           "passive_answers", "rollout", "sft", "token_logprobs", "results_rows", "run_experiment", "Action", "ToolCallRejected", "parse_action",
           "parse_text", "run_code_batch"]
