"""LMAC's protocol refinement loop (Sec. 3.3; the structure follows the official release,
the prompt wording and the feedback table are ours).

P0 = LLM(task prompt). Then, as in the release, one feedback-and-update round per step:
Step 1 (recovery enhancement) lists, per important state dim, every agent's recovery success
with the current protocol and without communication, and asks for the missing information;
Step 2 (imbalance mitigation) asks to share what some agents recover and others do not. Each
update is a *new message appended* to the current protocol (the release concatenates it).
Every answer goes through parse -> static check -> sandboxed compilation -> criterion; an
answer that fails is sent back with the error, up to `max_retries` attempts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .criterion import Awareness, Dataset, state_awareness
from .env import important_state, observation_names, observed_by, state_names
from .llm import LLMClient, extract_code
from .protocol import CompiledProtocol, ProtocolRejected, compile_protocol, no_comm_code


def step_instruction(config, step: int) -> str:
    """The step-specific instruction (our wording of the release's two steps)."""
    if step == 1:
        return (f"Step 1 (recovery enhancement): some agents recover some important state dims poorly "
                f"(SR below {config.low_sr}). Write a NEW message that gives each such agent the missing "
                "information from an agent that observes it. The new message is appended to the current "
                "protocol: do not repeat what is already sent.")
    return (f"Step 2 (imbalance mitigation): where one agent recovers a dim well (SR at least "
            f"{config.source_sr}) and another does not, write a NEW message so that every agent recovers it "
            "equally. The new message is appended: do not repeat what is already sent, and add nothing "
            "that does not help.")


def task_prompt(config) -> str:
    """Task goal, important state dims, each agent's observation dims and the required function."""
    n = config.n_agents
    obs = "\n".join(f"- agent {a} ({'overseer' if a == 0 else f'striker {a}'}): "
                    + ", ".join(observation_names(a, config.n_distract)) for a in range(n))
    seen = observed_by(config.n_strikers, config.n_distract)
    names = state_names(config.n_strikers)
    rows = "\n".join(f"| {names[d]} | " + "; ".join(f"{a}: {observation_names(a, config.n_distract)[k]}"
                                                    for a, k in seen.get(names[d], [])) + " |"
                     for d in important_state(config.n_strikers))
    return (
        f"Task: cooperative gridworld ({config.grid}x{config.grid}). Agent 0, the overseer, stands still "
        f"and is the only agent that sees the target cell. Agents 1..{config.n_strikers} (strikers) see only "
        "their own cell and adjacent walls. The team is rewarded only when all strikers stand on the target "
        "cell at the same step. Every observation also contains noise_* features that carry no information.\n"
        f"Observation features (by index order):\n{obs}\n"
        "Important state dimensions and who observes them directly:\n"
        f"| state dim | observed directly by (agent: feature) |\n|---|---|\n{rows}\n"
        "Write one self-contained Python function `messages(agent_id, obs)` (numpy only, no other "
        "imports, no access to the global state or to other agents' observations) that returns a dict "
        "{receiver_id: 1-D numpy array} of the features agent `agent_id` sends to each receiver. "
        "Messages must be deterministic selections of `obs`; keep them short. Answer with one "
        "```python code block.")


def feedback_table(aw: Awareness, base: Awareness, config) -> str:
    """Per important dim: every agent's SR with the current protocol and
    without communication, the spread across agents, and the agents that
    observe the dim (the release's feedback data)."""
    names = state_names(config.n_strikers)
    seen = observed_by(config.n_strikers, config.n_distract)
    lines = ["| state dim | SR with communication (agent 0, 1, ...) "
             "| SR without communication | spread "
             "| observed directly by (agent: feature) |",
             "|---|---|---|---|---|"]
    for col, d in enumerate(important_state(config.n_strikers)):
        sr, sr0 = aw.sr[:, col].tolist(), base.sr[:, col].tolist()
        who = "; ".join(f"{a}: {observation_names(a, config.n_distract)[k]}"
                        for a, k in seen.get(names[d], []))
        lines.append(f"| {names[d]} | {' '.join(f'{v:.2f}' for v in sr)} "
                     f"| {' '.join(f'{v:.2f}' for v in sr0)} "
                     f"| {max(sr) - min(sr):.2f} | {who} |")
    per = ", ".join(f"agent {i}: {v:.2f}"
                    for i, v in enumerate(aw.per_agent.tolist()))
    return (f"Per-agent recovery SR_i: {per}; min = {aw.accuracy:.2f}, "
            f"spread = {aw.gap:.2f}.\n" + "\n".join(lines))


def refine_prompt(config, code: str, aw: Awareness, base: Awareness, step: int) -> str:
    return (task_prompt(config) + "\n\nCurrent protocol:\n```python\n" + code + "```\n\nFeedback:\n"
            + feedback_table(aw, base, config) + "\n\n" + step_instruction(config, step))


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
    final: CompiledProtocol
    final_awareness: Awareness
    history: list[Round] = field(default_factory=list)


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


def propose_with_retries(llm, prompt, obs_dims, retries: int, history: list, step: int, index: int):
    """Ask up to `retries` times; a rejected answer goes back with its error (as in the release)."""
    extra = ""
    for _ in range(retries):
        cand, code, reason = propose(llm, prompt + extra, obs_dims)
        if cand is not None:
            return cand, code
        history.append(Round(step, index, code, False, reason))
        extra = f"\n\nYour previous answer was rejected ({reason}). Answer again, fixing this."
    return None, ""


def refine(config, data: Dataset, llm: LLMClient, seed: int = 0, progress_bar=None) -> Refinement:
    """The loop: initial protocol, then `step1_rounds` Step-1 and `step2_rounds` Step-2 updates."""
    obs_dims = [len(observation_names(a, config.n_distract)) for a in range(config.n_agents)]
    history: list[Round] = []
    silent = compile_protocol(no_comm_code(), obs_dims)
    base = state_awareness(silent, data, config, seed)  # "without communication", shown in the feedback
    # region: loop
    proto, code = propose_with_retries(llm, task_prompt(config), obs_dims,
                                       config.max_retries, history, 0, 0)
    if proto is None:  # graceful fallback: start from no communication
        proto, code = silent, no_comm_code()
    aw = state_awareness(proto, data, config, seed)
    history.append(Round(0, 0, code, True, "initial protocol", aw,
                         proto.message_size))
    for step, rounds in ((1, config.step1_rounds), (2, config.step2_rounds)):
        for k in range(1, rounds + 1):
            prompt = refine_prompt(config, proto.code, aw, base, step)
            update, code = propose_with_retries(llm, prompt, obs_dims,
                                                config.max_retries, history,
                                                step, k)
            if update is None or update.message_size == 0:
                history.append(Round(step, k, code, False, "nothing appended"))
                continue
            # the new message is appended
            proto = proto.concat(update, label=f"step {step}, round {k}")
            aw = state_awareness(proto, data, config, seed)
            history.append(Round(step, k, code, True, "appended", aw,
                                 proto.message_size))
            if progress_bar is not None:
                progress_bar.update(1)
    # endregion
    return Refinement(proto, aw, history)
