"""LMAC's protocol refinement loop (Sec. 3.3; prompts and feedback format are ours).

P0 = LLM(task prompt). Step 1 (K rounds): while min_i SR_i < tau1, show the LLM its code and
a table of the worst-recovered (agent, state dim) pairs and ask for the minimum extra
information. Step 2: while max_i SR_i - min_i SR_i > tau2, ask it to even out recovery
across agents without useless messages. Every answer goes through parse -> static check ->
sandboxed compilation/verification -> criterion; rejected answers are logged and skipped.
The best protocol so far is kept by (A, -Delta, -message size).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .criterion import Awareness, Dataset, state_awareness
from .env import observation_names, observed_by, state_names
from .llm import LLMClient, extract_code
from .protocol import CompiledProtocol, ProtocolRejected, compile_protocol, no_comm_code

STEP_INSTRUCTIONS = {
    1: "Step 1 (accuracy): add the minimum information needed so that each agent can recover the "
       "poorly recovered state components listed above. Keep existing messages that help.",
    2: "Step 2 (balance): make recovery equally good for all agents; the agents listed above lag "
       "behind. Do not add messages that do not improve the criterion.",
}


def task_prompt(config) -> str:
    """Task goal, state dims, each agent's observation dims and the required function."""
    n = config.n_agents
    obs = "\n".join(f"- agent {a} ({'overseer' if a == 0 else f'striker {a}'}): "
                    + ", ".join(observation_names(a, config.n_distract)) for a in range(n))
    seen = observed_by(config.n_strikers, config.n_distract)
    rows = "\n".join(f"| - | {d} | 0.00 | " + "; ".join(f"{a}: {observation_names(a, config.n_distract)[k]}"
                                                      for a, k in seen.get(d, [])) + " |"
                     for d in state_names(config.n_strikers))
    return (
        f"Task: cooperative gridworld ({config.grid}x{config.grid}). Agent 0, the overseer, stands still "
        f"and is the only agent that sees the target cell. Agents 1..{config.n_strikers} (strikers) see only "
        "their own cell and adjacent walls. The team is rewarded only when all strikers stand on the target "
        "cell at the same step. Every observation also contains noise_* features that carry no information.\n"
        f"Observation features (by index order):\n{obs}\n"
        "Global state dimensions and who observes them directly:\n"
        f"| agent | state dim | SR | observed directly by (agent: feature) |\n|---|---|---|---|\n{rows}\n"
        "Write one self-contained Python function `messages(agent_id, obs)` (numpy only, no other "
        "imports, no access to the global state or to other agents' observations) that returns a dict "
        "{receiver_id: 1-D numpy array} of the features agent `agent_id` sends to each receiver. "
        "Messages must be deterministic selections of `obs`; keep them short. Answer with one "
        "```python code block.")


def feedback_table(aw: Awareness, config, rows: int, step: int) -> str:
    """Markdown table of the worst (agent, state dim) pairs and the agents that observe those dims."""
    names = state_names(config.n_strikers)
    seen = observed_by(config.n_strikers, config.n_distract)
    sr = aw.sr.cpu()
    if step == 2:  # only the lagging agents
        lag = aw.per_agent.cpu() <= aw.per_agent.min().cpu() + config.tau2
        sr = torch.where(lag[:, None], sr, torch.ones_like(sr))
    order = torch.argsort(sr.flatten(), stable=True)[:rows].tolist()
    lines = ["| agent | state dim | SR | observed directly by (agent: feature) |", "|---|---|---|---|"]
    for flat in order:
        i, d = divmod(flat, sr.shape[1])
        if sr[i, d] >= 0.999:
            continue
        who = "; ".join(f"{a}: {observation_names(a, config.n_distract)[k]}" for a, k in seen.get(names[d], []))
        lines.append(f"| {i} | {names[d]} | {sr[i, d]:.2f} | {who} |")
    per = ", ".join(f"agent {i}: {v:.2f}" for i, v in enumerate(aw.per_agent.tolist()))
    return (f"Per-agent recovery SR_i: {per}; min = {aw.accuracy:.2f}, gap = {aw.gap:.2f}.\n"
            "Worst-recovered (agent, state dim) pairs:\n" + "\n".join(lines))


def refine_prompt(config, code: str, aw: Awareness, step: int) -> str:
    return (task_prompt(config) + "\n\nCurrent protocol:\n```python\n" + code + "```\n\nFeedback:\n"
            + feedback_table(aw, config, config.feedback_rows, step) + "\n\n" + STEP_INSTRUCTIONS[step])


@dataclass
class Round:
    """One proposal of the loop."""

    step: int  # 0 = initial protocol, 1, 2
    index: int
    code: str
    accepted: bool
    reason: str
    awareness: Awareness | None = None
    message_size: int | None = None


@dataclass
class Refinement:
    best: CompiledProtocol
    best_awareness: Awareness
    history: list[Round] = field(default_factory=list)


def _key(aw: Awareness, size: int) -> tuple:
    return (round(aw.accuracy, 2), -round(aw.gap, 2), -size)


def propose(llm: LLMClient, prompt: str, obs_dims: list[int], max_len: int | None = None
            ) -> tuple[CompiledProtocol | None, str, str]:
    """LLM answer -> code -> sandboxed compile. Returns (protocol or None, code, reason)."""
    try:
        answer = llm.complete(prompt)
    except Exception as error:  # noqa: BLE001 - a failing back-end is a rejected proposal
        return None, "", f"LLM call failed: {type(error).__name__}: {error}"
    try:
        code = extract_code(answer)
        return compile_protocol(code, obs_dims, max_len=max_len), code, "ok"
    except ProtocolRejected as error:
        return None, answer if isinstance(answer, str) else "", f"rejected: {error}"


def refine(config, data: Dataset, llm: LLMClient, seed: int = 0, progress_bar=None) -> Refinement:
    """Algorithm: initial protocol, then Step 1 and Step 2 rounds, keeping the best so far."""
    obs_dims = [len(observation_names(a, config.n_distract)) for a in range(config.n_agents)]
    history = []
    proto, code, reason = propose(llm, task_prompt(config), obs_dims)
    if proto is None:  # graceful fallback: start from no communication
        history.append(Round(0, 0, code, False, reason))
        proto, code = compile_protocol(no_comm_code(), obs_dims), no_comm_code()
    aw = state_awareness(proto, data, config, seed)
    history.append(Round(0, 0, code, True, "initial protocol", aw, proto.message_size))
    best, best_aw = proto, aw
    for step, rounds, done in ((1, config.step1_rounds, lambda a: a.accuracy >= config.tau1),
                               (2, config.step2_rounds, lambda a: a.gap <= config.tau2)):
        for k in range(rounds):
            if done(best_aw):
                break
            cand, code, reason = propose(llm, refine_prompt(config, best.code, best_aw, step), obs_dims)
            if cand is None:
                history.append(Round(step, k + 1, code, False, reason))
                continue
            aw = state_awareness(cand, data, config, seed)
            better = _key(aw, cand.message_size) > _key(best_aw, best.message_size)
            history.append(Round(step, k + 1, code, better, "improved" if better else "no improvement, discarded",
                                 aw, cand.message_size))
            if better:
                best, best_aw = cand, aw
            if progress_bar is not None:
                progress_bar.update(1)
    return Refinement(best, best_aw, history)
