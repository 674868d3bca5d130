"""The chapter's experiment: offline data, protocol refinement, the criterion for every arm
(over several reconstructor seeds), MARL training of NoComm / FullComm / LMAC / State / TarMAC,
and the claims ledger."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from icml26.common import progress, resolve_device

from .criterion import Awareness, Dataset, collect_dataset, state_awareness
from .env import observation_names
from .llm import LLMClient, make_llm, tiny_random_client
from .marl import TARMAC_KEY, TARMAC_VALUE, TrainResult, random_policy_success, train_arm
from .protocol import CompiledProtocol, ProtocolRejected, compile_protocol, full_comm_code, no_comm_code
from .refine import Refinement, propose, refine, task_prompt

@dataclass
class Results:
    config: object
    data: Dataset
    refinement: Refinement
    protocols: dict[str, CompiledProtocol | None]
    awareness: dict[str, Awareness]
    runs: list[TrainResult] = field(default_factory=list)
    llm_name: str = ""
    seed_awareness: dict[str, list[Awareness]] = field(default_factory=dict)  # "initial"/"final" per seed

    random_success: list[float] = field(default_factory=list)  # chance level per MARL seed

    @property
    def designer(self) -> str:
        """Who wrote the protocol, as the claims name it."""
        return "rule-based stand-in" if self.config.llm == "rule" else "LLM designer"

    def success_per_seed(self, arm: str) -> list[float]:
        return [r.success for s in self.config.seeds for r in self.runs if r.arm == arm and r.seed == s]

    def success(self, arm: str) -> float:
        """Greedy evaluation success rate, mean over seeds."""
        return float(np.mean([r.success for r in self.runs if r.arm == arm]))

    def message_size(self, arm: str) -> int:
        """Numbers sent per step; TarMAC-lite: a (value, key) from every agent to every striker."""
        if arm == "TarMAC":
            c = self.config
            return c.n_strikers * (c.n_agents - 1) * (TARMAC_VALUE + TARMAC_KEY)
        proto = self.protocols.get(arm)
        return 0 if proto is None else proto.message_size


def obs_dims(config) -> list[int]:
    return [len(observation_names(a, config.n_distract)) for a in range(config.n_agents)]


def run_all(config, device, seed: int = 0, llm: LLMClient | None = None) -> Results:
    """Everything the chapter measures, in order (deterministic given `seed`), as objects."""
    data = collect_dataset(config, device, seed)
    llm = llm or make_llm(config.llm, str(device))
    bar = progress(range(config.step1_rounds + config.step2_rounds), desc="protocol refinement")
    ref = refine(config, data, llm, seed, progress_bar=bar)
    bar.close()
    first = next(r for r in ref.history if r.step == 0 and r.accepted)
    protocols = {"NoComm": compile_protocol(no_comm_code(), obs_dims(config)),
                 "FullComm": compile_protocol(full_comm_code(config.n_agents), obs_dims(config)),
                 "LMAC": ref.final, "State": None}
    awareness = {"NoComm": state_awareness(protocols["NoComm"], data, config, seed),
                 "FullComm": state_awareness(protocols["FullComm"], data, config, seed),
                 "LMAC": ref.final_awareness}
    results = Results(config, data, ref, protocols, awareness, llm_name=llm.name)
    # the criterion of the initial and the final protocol, re-trained with every reconstructor seed
    p0 = compile_protocol(first.code, obs_dims(config))
    for name, proto, known in (("initial", p0, first.awareness), ("final", ref.final, ref.final_awareness)):
        results.seed_awareness[name] = [known if s == seed else state_awareness(proto, data, config, s)
                                        for s in config.criterion_seeds]
    jobs = [(arm, s) for s in config.seeds for arm in config.arms]
    for arm, s in progress(jobs, desc="MARL arms x seeds"):
        proto = protocols[arm] if arm in ("FullComm", "LMAC") else None
        results.runs.append(train_arm(arm, proto, config, s, device))
    results.random_success = [random_policy_success(config, s, device) for s in config.seeds]
    return results


def results_dict(r: Results) -> dict:
    """The measured figures as plain data: what the ledger reads and the evidence record stores."""
    c = r.config

    def aw(a: Awareness) -> dict:
        return {"accuracy": float(a.accuracy), "gap": float(a.gap), "sr": a.sr.cpu().numpy().tolist()}

    return {
        "seeds": [int(s) for s in c.seeds], "criterion_seeds": [int(s) for s in c.criterion_seeds],
        "llm": c.llm, "llm_name": r.llm_name, "designer": r.designer, "stand_in": c.llm == "rule",
        "awareness": {k: [aw(a) for a in v] for k, v in r.seed_awareness.items()},
        "awareness_arms": {k: aw(v) for k, v in r.awareness.items()},
        "success": {arm: r.success_per_seed(arm) for arm in c.arms},
        "random_success": list(r.random_success),
        "message_size": {arm: r.message_size(arm) for arm in c.arms if arm != "State"},
        "refinement": [{"step": h.step, "index": h.index, "accepted": h.accepted, "reason": h.reason,
                        "accuracy": None if h.awareness is None else float(h.awareness.accuracy),
                        "gap": None if h.awareness is None else float(h.awareness.gap),
                        "message_size": h.message_size} for h in r.refinement.history],
        "final_protocol": r.protocols["LMAC"].code,
    }


def run_experiment(config, seed: int = 0, device=None, llm: LLMClient | None = None,
                   keep_objects: bool = False) -> dict:
    """The chapter's experiment (the contract's entry point): offline data, the refinement loop, the
    criterion over `config.criterion_seeds` and every MARL arm over `config.seeds` (each seed trains
    every arm afresh). Returns plain data (`results_dict`); with `keep_objects`, also the
    :class:`Results` object under "objects" (the page's figures and explorer use it)."""
    device = resolve_device(config.device) if device is None else device
    r = run_all(config, device, seed, llm)
    out = results_dict(r)
    if keep_objects:
        out["objects"] = r
    return out


# What the paper reports for each arm at its scale (win rates; we read the ordering, not the numbers)
PAPER_ORDER = {"NoComm": "below LMAC (QMIX)", "FullComm": "below LMAC", "LMAC": "best communication method",
               "State": "sometimes below LMAC (QMIX+State)", "TarMAC": "below LMAC"}


def results_rows(r: Results) -> list[dict]:
    """One row per arm for the results table (the paper's column gives its reported ordering)."""
    rows = []
    for arm in r.config.arms:
        aw = r.awareness.get(arm)
        rows.append({
            "arm": arm,
            "min-agent SR": {"State": "given (upper bound)", "TarMAC": "learned messages (n/a)"}.get(
                arm, f"{aw.accuracy:.2f}" if aw is not None else "-"),
            "SR spread": f"{aw.gap:.2f}" if aw is not None else "-",
            "numbers sent / step": "state given" if arm == "State" else r.message_size(arm),
            "success (ours, mean over seeds)": f"{r.success(arm):.2f}",
            "paper (SMAC-Comm etc.; ordering only)": PAPER_ORDER[arm],
        })
    return rows


def guardrail_demo(config, seed: int = 0) -> tuple[str, str]:
    """Prompt -> generate -> parse -> sandbox with a tiny random GPT-2: the answer is rejected."""
    client = tiny_random_client(seed)
    proto, text, reason = propose(client, task_prompt(config), obs_dims(config))
    if proto is not None:
        raise RuntimeError("a randomly initialised model unexpectedly wrote a valid protocol")
    return text, reason


HOSTILE = {
    "imports os": "import os\ndef messages(agent_id, obs):\n    return {1: [len(os.listdir('/'))]}\n",
    "reads the state": "def messages(agent_id, obs):\n    return {1: state[:2]}\n",
    "extra argument": "def messages(agent_id, obs, env=None):\n    return {}\n",
    "imports random": ("import random\ndef messages(agent_id, obs):\n"
                       "    return {(agent_id + 1) % 4: [obs[0] + random.random()]}\n"),
    "non-deterministic (stateful)": ("import numpy as np\nCALLS = [0]\ndef messages(agent_id, obs):\n"
                                     "    CALLS[0] += 1\n"
                                     "    return {(agent_id + 1) % 4: np.asarray(obs)[:1] + CALLS[0]}\n"),
    "not a selection": ("import numpy as np\ndef messages(agent_id, obs):\n"
                        "    return {(agent_id + 1) % 4: np.asarray(obs)[:2] ** 2}\n"),
    "wrong shape": ("import numpy as np\ndef messages(agent_id, obs):\n"
                    "    return {(agent_id + 1) % 4: np.ones((2, 2))}\n"),
    "sends to itself": "def messages(agent_id, obs):\n    return {agent_id: obs[:1]}\n",
}


def hostile_demo(config) -> dict[str, str]:
    """Why each hostile/malformed protocol in `HOSTILE` is rejected."""
    out = {}
    for name, code in HOSTILE.items():
        try:
            compile_protocol(code, obs_dims(config), wall_seconds=3)
            out[name] = "ACCEPTED (should not happen)"
        except ProtocolRejected as error:
            out[name] = str(error)
    return out


def explore_protocol(config, data: Dataset, target: bool, overseer_pos: bool, striker_pos: bool, noise: int,
                     seed: int = 0) -> tuple[Awareness, CompiledProtocol]:
    """Score a hand-made protocol with the criterion (cheap settings) for the Explore widget."""
    from .protocol import protocol_code

    names = [observation_names(a, config.n_distract) for a in range(config.n_agents)]
    sends = {j: {} for j in range(config.n_agents)}
    for j in range(config.n_agents):
        feats = [f"noise_{k}" for k in range(min(noise, config.n_distract))]
        feats += ["self_x", "self_y"] if (overseer_pos if j == 0 else striker_pos) else []
        feats += ["target_x", "target_y"] if (j == 0 and target) else []
        for i in range(config.n_agents):
            if i != j and feats:
                sends[j][i] = feats
    proto = compile_protocol(protocol_code(sends, names), obs_dims(config))
    return state_awareness(proto, data, config, seed), proto
