"""The chapter's experiment: offline data, protocol refinement, the criterion for every arm,
MARL training of NoComm / FullComm / LMAC / State, and the reproduction check."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from icml26.common import progress

from .criterion import Awareness, Dataset, collect_dataset, state_awareness
from .env import observation_names
from .llm import LLMClient, make_llm, tiny_random_client
from .marl import TARMAC_KEY, TARMAC_VALUE, TrainResult, train_arm
from .protocol import CompiledProtocol, ProtocolRejected, compile_protocol, full_comm_code, no_comm_code
from .refine import Refinement, propose, refine, task_prompt

# The stored run's protocol designer is the offline rule-based stand-in, not an LLM: the claim
# line says so, so that the verdict covers only what was tested.
CLAIM = ("Criterion-guided protocols (designed offline by a rule-based stand-in for the LLM) give every agent "
         "an accurate, uniform state estimate and learn faster than no-comm or broadcast-everything, "
         "with far smaller messages")


@dataclass
class Results:
    config: object
    data: Dataset
    refinement: Refinement
    protocols: dict[str, CompiledProtocol | None]
    awareness: dict[str, Awareness]
    runs: list[TrainResult] = field(default_factory=list)
    llm_name: str = ""

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


def run_experiment(config, device, seed: int = 0, llm: LLMClient | None = None) -> Results:
    """Everything the chapter measures, in order (deterministic given `seed`)."""
    data = collect_dataset(config, device, seed)
    llm = llm or make_llm(config.llm, str(device))
    bar = progress(range(config.step1_rounds + config.step2_rounds), desc="protocol refinement")
    ref = refine(config, data, llm, seed, progress_bar=bar)
    bar.close()
    protocols = {"NoComm": compile_protocol(no_comm_code(), obs_dims(config)),
                 "FullComm": compile_protocol(full_comm_code(config.n_agents), obs_dims(config)),
                 "LMAC": ref.best, "State": None}
    awareness = {"NoComm": state_awareness(protocols["NoComm"], data, config, seed),
                 "FullComm": state_awareness(protocols["FullComm"], data, config, seed),
                 "LMAC": ref.best_awareness}
    results = Results(config, data, ref, protocols, awareness, llm_name=llm.name)
    jobs = [(arm, s) for s in config.seeds for arm in config.arms]
    for arm, s in progress(jobs, desc="MARL arms x seeds"):
        proto = protocols[arm] if arm in ("FullComm", "LMAC") else None
        results.runs.append(train_arm(arm, proto, config, s, device))
    return results


def claim_figures(r: Results) -> dict[str, float]:
    """The measured figures the pass criterion uses."""
    sr_nocomm = r.awareness["NoComm"].per_agent
    return {
        "LMAC min-agent SR": r.awareness["LMAC"].accuracy,
        "LMAC SR spread": r.awareness["LMAC"].gap,
        "NoComm striker SR (max)": float(sr_nocomm[1:].max()),
        "success LMAC": r.success("LMAC"),
        "success NoComm": r.success("NoComm"),
        "success FullComm": r.success("FullComm"),
        "message LMAC/FullComm": r.message_size("LMAC") / max(1, r.message_size("FullComm")),
    }


def pass_criterion(fig: dict[str, float], config) -> dict[str, bool]:
    """The dossier's pass criterion, with thresholds fixed in `LMACConfig` before any run."""
    return {
        "LMAC min-agent SR >= 0.9": fig["LMAC min-agent SR"] >= config.min_sr_lmac,
        "LMAC SR spread <= 0.1": fig["LMAC SR spread"] <= config.max_gap_lmac,
        "NoComm strikers SR <= 0.5": fig["NoComm striker SR (max)"] <= config.max_sr_nocomm,
        "LMAC success >= NoComm + 30 pts": fig["success LMAC"] >= fig["success NoComm"] + config.min_success_gain,
        "LMAC success >= FullComm": fig["success LMAC"] >= fig["success FullComm"],
        "LMAC message <= 25% of FullComm": fig["message LMAC/FullComm"] <= config.max_msg_frac,
    }


def reproduction_check(r: Results) -> tuple[str, dict[str, float], dict[str, bool]]:
    """(claim, measured figures rounded for printing, checks) for `report_claim`."""
    fig = claim_figures(r)
    checks = pass_criterion(fig, r.config)
    measured = {k: round(v, 2) for k, v in fig.items()}
    return CLAIM, measured, checks


def results_rows(r: Results) -> list[dict]:
    """One row per arm for the results table (the paper's numbers are not available)."""
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
            "paper (SMAC-Comm etc.)": "not available",
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
