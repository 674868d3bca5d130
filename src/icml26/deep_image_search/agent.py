"""The ImageSeeker-style agent loop (thought -> tool call -> observation), its policies, and direct retrieval.

Dual memory (the paper names it; the design is our reconstruction):
- explicit memory: named photo-id sets in the Toolbox, outside the context, re-shown every step;
- working memory: the dialogue, in which only the last `memory_window` observations are kept verbatim and
  older ones are replaced by a one-line stub.
Policies share one interface, `policy(messages) -> str` (the text of one tool call):
- `ScriptedPlanner`: an offline, hand-written planner. It is NOT a language model: it fills the paper's
  reference plan from the templated query and reads ids off the observations' text. It is the
  teacher of the learned policy.
- `learned.TracePolicy`: a small network trained on the scripted planner's traces (the default).
- `OpenAIPolicy`: any OpenAI-compatible chat endpoint with function calling (the full preset's option;
  `openai` is imported only there).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

import numpy as np
import torch

from .album import Album, Query
from .tools import DESCRIPTIONS, SCHEMAS, ToolCallRejected, Toolbox, parse_tool_call

SYSTEM = """You search a user's photo history. Answer with the EXACT set of photos the query asks for.
Each step, output one tool call as JSON: {"tool": <name>, "args": {...}}. Tools:
%s
Rules: find the clue photo first and save it; use filter_metadata for trips (time + place) and places;
verify candidates with view_photos before answering; save intermediate sets in memory."""


def system_prompt(disabled: tuple[str, ...] = ()) -> str:
    lines = [f"- {name}({', '.join(a + ('' if req else '?') for a, (_, req) in SCHEMAS[name].items())}): "
             f"{DESCRIPTIONS[name]}" for name in SCHEMAS if name not in disabled]
    return SYSTEM % "\n".join(lines)


@dataclass
class Trajectory:
    query: Query
    steps: list[tuple[str, str]] = field(default_factory=list)  # (model output, observation)
    answer: list[int] | None = None
    rejected: int = 0


def working_context(system: str, query: str, steps: list[tuple[str, str]],
                    memory: str, window: int) -> list[dict]:
    """The messages the policy sees: system block (+ explicit memory), query,
    and the dialogue in which only the last `window` observations are verbatim
    (working-memory compression)."""
    # no memory block when explicit memory is off
    block = system + "\n" + memory if memory else system
    msgs = [{"role": "system", "content": block},
            {"role": "user", "content": query}]
    for k, (call, obs) in enumerate(steps):
        keep = k >= len(steps) - window
        msgs.append({"role": "assistant", "content": call})
        msgs.append({"role": "tool", "content": obs if keep else
                     "[older observation elided; see memory]"})
    return msgs


def run_agent(policy, toolbox: Toolbox, query: Query, max_steps: int = 30,
              window: int = 2) -> Trajectory:
    """ReAct loop until `answer` or `max_steps` tool calls. Rejected calls
    become error observations."""
    traj = Trajectory(query)
    system = system_prompt(toolbox.disabled)
    for _ in range(max_steps):
        msgs = working_context(system, query.text, traj.steps,
                               toolbox.memory_list(), window)
        if _act(traj, toolbox, policy(msgs)):
            break
    traj.answer = toolbox.answer if toolbox.answer is not None else []
    return traj


def _act(traj: Trajectory, toolbox: Toolbox, out: str) -> bool:
    """Execute one model output (a rejected call becomes an error
    observation); True once the agent has answered."""
    try:
        obs = toolbox.execute(parse_tool_call(out))
    except ToolCallRejected as err:
        obs, traj.rejected = f"ERROR: {err}", traj.rejected + 1
    traj.steps.append((out, obs))
    return toolbox.answer is not None


def run_agents(policy, toolboxes: list[Toolbox], queries: list[Query],
               max_steps: int = 30, window: int = 2) -> list[Trajectory]:
    """`run_agent` on many queries. A policy with a `batch(list of messages)`
    method is asked for every unfinished query's next call at once (the same
    calls, since each query's context is its own); others run one by one."""
    if not hasattr(policy, "batch"):
        return [run_agent(policy, b, q, max_steps, window)
                for b, q in zip(toolboxes, queries)]
    trajs = [Trajectory(q) for q in queries]
    systems = [system_prompt(b.disabled) for b in toolboxes]
    active = list(range(len(queries)))
    for _ in range(max_steps):
        if not active:
            break
        outs = policy.batch([
            working_context(systems[i], queries[i].text, trajs[i].steps,
                            toolboxes[i].memory_list(), window)
            for i in active])
        active = [i for i, out in zip(active, outs)
                  if not _act(trajs[i], toolboxes[i], out)]
    for traj, box in zip(trajs, toolboxes):
        traj.answer = box.answer if box.answer is not None else []
    return trajs


def _call(tool: str, **args) -> str:
    return json.dumps({"tool": tool, "args": args})


_INTRA = re.compile(r"photos of the (\w+ \d) from the trip where I saw the (\w+ \w+)$")
_INTER = re.compile(r"photos of the (\w+ \d) taken where I saw the (\w+ \w+), but on other visits$")
_LINE = re.compile(r"^id (\d+) \|.*\| ([^|]+)$", re.M)


class ScriptedPlanner:
    """Offline stand-in for the LLM policy - NOT a language model.

    It follows the reference plan: search the clue -> view pages of 16 hits until a photo
    described with the clue marker appears -> save it as 'clue' -> filter_metadata (same trip: +-window_days
    and radius; other visits: same radius, outside the window) -> search the subject inside that scope ->
    view pages of candidates while a page still holds matches -> answer the photos whose *predicted*
    description names the subject. Without filter_metadata it searches the subject in the whole album.
    Its decisions use the query text, its own past calls and the latest observation; it keeps the current
    result list as a scratchpad (a real LLM would keep it in its context).
    """

    name = "scripted planner (offline stand-in, not an LLM)"

    def __init__(self, radius_km: float = 3.0, window_days: float = 3.0, use_metadata: bool = True,
                 view_limit: int = 16, use_memory: bool = True):
        self.radius_km, self.window_days = radius_km, window_days
        self.use_metadata, self.view_limit = use_metadata, view_limit
        self.use_memory = use_memory

    def __call__(self, messages: list[dict]) -> str:
        query = messages[1]["content"]
        m_intra, m_inter = _INTRA.match(query), _INTER.match(query)
        if not (m_intra or m_inter):
            return _call("answer", ids=[])  # a template it does not know
        subject, clue = (m_intra or m_inter).groups()
        calls = [json.loads(m["content"]) for m in messages if m["role"] == "assistant"]
        last = messages[-1]["content"] if messages[-1]["role"] == "tool" else ""
        seen = [(int(i), desc) for i, desc in _LINE.findall(last)]
        k = self.view_limit
        save = self._save_as
        if not calls:  # 1. look for the clue (3 pages of results at most)
            if not self.use_metadata:
                return _call("image_search", query=subject, top_k=3 * k, **save("candidates"))
            return _call("image_search", query=clue, top_k=3 * k, **save("clue_hits"))
        prev = calls[-1]
        if prev["tool"] == "image_search":  # 2. view the first page of hits
            hits = [int(i) for i in re.findall(r"(\d+) \(", last)]
            self._hits, self._page, self._kept = hits, 0, []  # its scratchpad for this result list
            return _call("view_photos", ids=hits[:k])
        # region: anchor and verify
        if prev["tool"] == "view_photos":
            looking_for_clue = self.use_metadata and not any(
                c["tool"] in ("memory_save", "filter_metadata") for c in calls)
            if looking_for_clue:
                found = [i for i, d in seen if d.endswith(clue)]
                page = self._page + 1
                # 3. save the clue (fallback: the top hit); without
                #    explicit memory, anchor on its ids at once
                if found or page * k >= len(self._hits):
                    clue_ids = found[:2] or self._hits[:1]
                    if not self.use_memory:
                        return self._anchor(clue_ids, m_inter)
                    return _call("memory_save", name="clue", ids=clue_ids)
                self._page = page
                return _call("view_photos", ids=self._hits[page * k:(page + 1) * k])
            # 6. verify: keep the photos whose predicted description names the
            #    subject; page through the candidates until a page has no match
            match = [i for i, d in seen if d.startswith(subject + ",")]
            self._kept = self._kept + match
            page = self._page + 1
            if match and page * k < len(self._hits):
                self._page = page
                return _call("view_photos", ids=self._hits[page * k:(page + 1) * k])
            return _call("answer", ids=self._kept)
        # 4. anchor the trip / the place with metadata
        if prev["tool"] == "memory_save":
            return self._anchor("clue", m_inter)
        # endregion
        if prev["tool"] == "filter_metadata":  # 5. search the subject inside the scope
            scope = ("scope" if self.use_memory else  # without memory: the ids shown
                     [int(i) for i in re.findall(r"\d+", last.partition(":")[2])])
            return _call("image_search", query=subject, top_k=3 * k, scope=scope,
                         **save("candidates"))
        return _call("answer", ids=[])

    def _save_as(self, name: str) -> dict:
        return {"save_as": name} if self.use_memory else {}

    def _anchor(self, near, other_visits) -> str:
        """4. the trip (or, for other visits, the place) around the clue."""
        args = dict(near=near, radius_km=self.radius_km, days=self.window_days,
                    **self._save_as("scope"))
        if other_visits:
            args["outside_days"] = True
        return _call("filter_metadata", **args)


class OpenAIPolicy:
    """An OpenAI-compatible endpoint with function calling (vLLM, Ollama, a hosted API).

    The tool call it returns is turned back into our JSON text and goes through the same strict parser.
    """

    def __init__(self, model: str | None = None, base_url: str | None = None, api_key: str | None = None,
                 temperature: float = 0.0):
        self.model = model or os.environ.get("DIS_LLM_MODEL", "gpt-4o-mini")
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if self.base_url is None and key is None:
            raise ValueError("policy 'openai' needs an endpoint: set OPENAI_BASE_URL to an OpenAI-compatible server "
                             "(vLLM, Ollama; no key needed) or OPENAI_API_KEY for the hosted API, and optionally "
                             "DIS_LLM_MODEL (default gpt-4o-mini); or use policy='scripted'")
        self.api_key = key or "not-needed"  # local servers accept any key
        self.temperature = temperature
        self.name = f"OpenAI-compatible endpoint ({self.model})"
        self._client = None

    def tools(self) -> list[dict]:
        kinds = {str: "string", int: "integer", float: "number", bool: "boolean"}
        out = []
        for name, schema in SCHEMAS.items():
            props = {}
            for arg, (types, _) in schema.items():
                if list in types:
                    props[arg] = {"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "string"}]}
                else:
                    props[arg] = {"type": kinds[types[-1]] if types != (int, float) else "number"}
            out.append({"type": "function", "function": {
                "name": name, "description": DESCRIPTIONS[name],
                "parameters": {"type": "object", "properties": props,
                               "required": [a for a, (_, req) in schema.items() if req]}}})
        return out

    def __call__(self, messages: list[dict]) -> str:
        if self._client is None:
            try:
                from openai import OpenAI  # lazy: only the full preset / explicit option needs it
            except ImportError as err:
                raise ImportError("policy='openai' needs the openai client: pip install openai") from err
            self._client = OpenAI(base_url=self.base_url, api_key=self.api_key)
        # our 'tool' turns become user turns: we do not keep the endpoint's tool-call ids
        chat = [{"role": "user" if m["role"] == "tool" else m["role"], "content": m["content"]} for m in messages]
        reply = self._client.chat.completions.create(model=self.model, messages=chat, tools=self.tools(),
                                                     temperature=self.temperature)
        msg = reply.choices[0].message
        if msg.tool_calls:
            fn = msg.tool_calls[0].function
            try:
                args = json.loads(fn.arguments or "{}")
            except json.JSONDecodeError:
                return fn.arguments or ""  # rejected by the strict parser with a message
            return json.dumps({"tool": fn.name, "args": args})
        return msg.content or ""


def make_policy(spec: str, config, use_metadata: bool = True):
    """'scripted' | 'openai[:model]' -> a policy. ('learned' is trained per seed on the
    scripted planner's traces: `experiment.fit_policy`.)"""
    kind, _, arg = spec.partition(":")
    if kind == "scripted":
        return ScriptedPlanner(config.radius_km, config.window_days, use_metadata, config.view_limit)
    if kind == "openai":
        return OpenAIPolicy(model=arg or None)
    if kind == "learned":
        raise ValueError("the learned policy is trained per seed on the teacher's traces: use "
                         "experiment.fit_policy(config, seed, perception_model, device)")
    raise ValueError(f"unknown policy {spec!r}; use 'learned', 'scripted' or 'openai[:model]'")


def direct_retrieval(model, album: Album, queries: list[Query],
                     k: int | list[int],
                     embeddings: torch.Tensor | None = None
                     ) -> list[list[int]]:
    """One-shot embedding retrieval: score every photo against the full query
    text, P(R | Q, I); top-k.

    `k` is one int or one per query (oracle k = |G|). Batched: one (Q, N)
    similarity matrix.
    """
    ks = [k] * len(queries) if isinstance(k, int) else list(k)
    if len(ks) != len(queries) or any(not isinstance(x, (int, np.integer)) or x < 1 for x in ks):
        raise ValueError("k must be a positive int or one positive int per query")
    if not queries:
        return []
    # (N, D)
    emb = (model.embed_album(album.images) if embeddings is None
           else embeddings)
    with torch.no_grad():
        # (Q, N)
        sim = (model.encode_texts([q.text for q in queries]).to(emb.device)
               @ emb.T)
    order = torch.argsort(sim, dim=1, descending=True,
                          stable=True).cpu().numpy()
    return [sorted(order[i, :ks[i]].tolist()) for i in range(len(queries))]
