"""ImageSeeker's tools over one user's album, explicit memory, and strict parsing of tool calls.

Tools (names from the paper; signatures are our reconstruction, see Deviations):
  image_search(query, top_k=10, scope=None, save_as=None)     semantic retrieval (mini-CLIP index)
  (`near`, `scope` and `ids` take a list of photo ids or the name of a set in explicit memory)
  filter_metadata(near, radius_km, days=None, outside_days=False, scope=None, save_as=None)
                                                              spatio-temporal constraints (timestamps + GPS only)
  view_photos(ids)                                            fine-grained check: PREDICTED attributes per photo
  memory_save(name, ids) / memory_list()                      explicit memory (named photo-id sets)
  answer(ids)                                                 the final exact set S
A model's output must be exactly one JSON object {"tool": <name>, "args": {...}} (optionally inside one
```json fence). Anything else - extra text, unknown tools or arguments, wrong types, ids outside the album,
bad memory names - is rejected with a message; nothing the model writes is ever executed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import numpy as np
import torch

from .album import COLOURS, DIGITS, MARKERS, SCENES, Album

NAME = re.compile(r"^[a-z_][a-z0-9_]{0,31}$")
MAX_TEXT = 4000


class ToolCallRejected(ValueError):
    """A model output that is not a valid tool call (the reason is in the message)."""


# name -> {arg: (types, required)}; `ids` accepts a list of ints or a memory name
SCHEMAS: dict[str, dict[str, tuple[tuple[type, ...], bool]]] = {
    "image_search": {"query": ((str,), True), "top_k": ((int,), False),
                     "scope": ((list, str), False), "save_as": ((str,), False)},
    "filter_metadata": {"near": ((list, str), True), "radius_km": ((int, float), True),
                        "days": ((int, float), False), "outside_days": ((bool,), False),
                        "scope": ((list, str), False), "save_as": ((str,), False)},
    "view_photos": {"ids": ((list, str), True)},
    "memory_save": {"name": ((str,), True), "ids": ((list, str), True)},
    "memory_list": {},
    "answer": {"ids": ((list, str), True)},
}

DESCRIPTIONS = {
    "image_search": "Rank photos by similarity to a short text (e.g. 'red 7', 'yellow triangle'); optional scope = "
                    "a memory name or a list of ids; saves the ranked ids under save_as.",
    "filter_metadata": "Photos within radius_km of the photos `near` (a memory name or a list of ids); with days, "
                       "only those within +-days of them (or, with outside_days=true, only those further away "
                       "in time).",
    "view_photos": "Look at up to 16 photos (list of ids or a memory name): date, place and what is visible.",
    "memory_save": "Store a list of photo ids under a name (explicit memory).",
    "memory_list": "List the names and sizes of the sets in explicit memory.",
    "answer": "Return the final set of photo ids and stop.",
}


@dataclass(frozen=True)
class ToolCall:
    tool: str
    args: dict


def parse_tool_call(text: str) -> ToolCall:
    """Strictly parse one model output into a ToolCall (types and names only; values are checked by Toolbox)."""
    if not isinstance(text, str):
        raise ToolCallRejected(f"the output must be text, got {type(text).__name__}")
    if len(text) > MAX_TEXT:
        raise ToolCallRejected(f"the output is longer than {MAX_TEXT} characters")
    # region: strict parse
    body = text.strip()
    fence = re.fullmatch(r"```(?:json)?\s*\n?(.*?)\n?```", body, flags=re.S)
    if fence:
        body = fence.group(1).strip()
    try:
        obj = json.loads(
            body, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    except (json.JSONDecodeError, ValueError) as err:
        raise ToolCallRejected(f"not a single JSON object: {err}") from None
    if not isinstance(obj, dict) or set(obj) != {"tool", "args"}:
        raise ToolCallRejected('expected exactly {"tool": <name>, "args": {...}}')
    tool, args = obj["tool"], obj["args"]
    if not isinstance(tool, str) or tool not in SCHEMAS:
        raise ToolCallRejected(f"unknown tool {tool!r}; valid: {sorted(SCHEMAS)}")
    if not isinstance(args, dict):
        raise ToolCallRejected("args must be a JSON object")
    schema = SCHEMAS[tool]
    unknown = sorted(set(args) - set(schema))
    if unknown:
        raise ToolCallRejected(f"{tool}: unknown argument(s) {unknown}; "
                               f"valid: {sorted(schema)}")
    # endregion
    for name, (types, required) in schema.items():
        if name not in args:
            if required:
                raise ToolCallRejected(f"{tool}: missing required argument {name!r}")
            continue
        value = args[name]
        if isinstance(value, bool) and bool not in types:
            raise ToolCallRejected(f"{tool}: {name} must be {'/'.join(t.__name__ for t in types)}, got a boolean")
        if not isinstance(value, types):
            raise ToolCallRejected(f"{tool}: {name} must be {'/'.join(t.__name__ for t in types)}, "
                                   f"got {type(value).__name__}")
        if isinstance(value, list) and not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise ToolCallRejected(f"{tool}: {name} must be a list of integer photo ids")
    return ToolCall(tool, dict(args))


def describe_attributes(pred: dict[str, torch.Tensor], i: int) -> str:
    marker = int(pred["marker"][i])
    seen = f"{COLOURS[int(pred['colour'][i])]} {DIGITS[int(pred['digit'][i])]}, {SCENES[int(pred['scene'][i])]}"
    return seen + (f", {MARKERS[marker - 1]}" if marker else "")


MEMORY_TOOLS = ("memory_save", "memory_list")


class Toolbox:
    """The tools of one agent over one album. Only timestamps, GPS, image embeddings and the attribute
    model's predictions are reachable; the hidden event partition and the true attributes are not.

    `explicit_memory=False` is the ablation without explicit memory: the memory tools are off, no
    `save_as` or memory name is accepted, and the agent passes photo ids as lists it read in its
    context (where long results are cut to their first 20 ids)."""

    def __init__(self, album: Album, model, embeddings: torch.Tensor | None = None,
                 predictions: dict[str, torch.Tensor] | None = None, view_limit: int = 16,
                 disabled: tuple[str, ...] = (), explicit_memory: bool = True):
        self.time, self.gps, self.n = album.time, album.gps, len(album)
        self.model = model
        self.emb = model.embed_album(album.images) if embeddings is None else embeddings  # (N, D)
        self.pred = model.predict_attributes(album.images) if predictions is None else predictions
        self.view_limit = view_limit
        unknown = sorted(set(disabled) - set(SCHEMAS))
        if unknown or "answer" in disabled:
            raise ValueError(f"cannot disable {unknown or ['answer']}; tools: {sorted(SCHEMAS)}")
        self.explicit_memory = bool(explicit_memory)
        extra = () if explicit_memory else tuple(t for t in MEMORY_TOOLS if t not in disabled)
        self.disabled = tuple(disabled) + extra
        self.memory: dict[str, list[int]] = {}
        self.answer: list[int] | None = None

    # -- helpers -------------------------------------------------------------------------------------
    def _name(self, name: str) -> str:
        if not NAME.match(name):
            raise ToolCallRejected(f"memory names are lower_snake_case (<= 32 chars), got {name!r}")
        return name

    def _no_memory(self, what: str) -> None:
        if not self.explicit_memory:
            raise ToolCallRejected(f"explicit memory is off in this configuration: {what}")

    def _ids(self, ids) -> list[int]:
        if isinstance(ids, str):
            self._no_memory(f"pass a list of photo ids, not the name {ids!r}")
            if ids not in self.memory:
                raise ToolCallRejected(f"no memory set named {ids!r}; saved: {sorted(self.memory)}")
            return list(self.memory[ids])
        bad = [i for i in ids if not 0 <= i < self.n]
        if bad:
            raise ToolCallRejected(f"photo ids out of range [0, {self.n}): {bad[:5]}")
        return list(dict.fromkeys(ids))

    def _scope(self, scope) -> np.ndarray:
        return np.arange(self.n) if scope is None else np.array(self._ids(scope), dtype=np.int64)

    def _save(self, save_as, ids: list[int]) -> str:
        if save_as is None:
            return ""
        self._no_memory(f"drop save_as={save_as!r}")
        self.memory[self._name(save_as)] = ids
        return f" Saved {len(ids)} ids as '{save_as}'."

    # -- tools ---------------------------------------------------------------------------------------
    def image_search(self, query: str, top_k: int = 10, scope=None, save_as=None) -> str:
        if not 1 <= top_k <= 50:
            raise ToolCallRejected(f"top_k must lie in [1, 50], got {top_k}")
        pool = self._scope(scope)
        if pool.size == 0:
            return "No photos in scope."
        with torch.no_grad():
            q = self.model.encode_texts([query])[0].to(self.emb.device)  # (D,)
            score = (self.emb[torch.as_tensor(pool, device=self.emb.device)] @ q).cpu().numpy()  # (|pool|,)
        order = np.argsort(-score, kind="stable")[:top_k]
        ids = pool[order].tolist()
        shown = ", ".join(f"{i} ({score[o]:.2f})" for i, o in zip(ids, order))
        return f"Top {len(ids)}: {shown}." + self._save(save_as, ids)

    def filter_metadata(self, near, radius_km: float, days=None,
                        outside_days: bool = False, scope=None,
                        save_as=None) -> str:
        if radius_km <= 0 or (days is not None and days < 0):
            raise ToolCallRejected("radius_km must be > 0 and days >= 0")
        if outside_days and days is None:
            raise ToolCallRejected("outside_days needs days")
        anchor = np.array(self._ids(near), dtype=np.int64)
        if anchor.size == 0:
            raise ToolCallRejected(f"memory set {near!r} is empty")
        pool = self._scope(scope)
        # (|pool|, |anchor|)
        dist = np.linalg.norm(self.gps[pool, None, :] - self.gps[None, anchor, :],
                              axis=-1)
        keep = (dist <= radius_km).any(1)
        if days is not None:
            close = (np.abs(self.time[pool, None] - self.time[None, anchor])
                     <= days).any(1)
            keep &= ~close if outside_days else close
        ids = pool[keep].tolist()
        head = ", ".join(map(str, ids[:20])) + (", ..." if len(ids) > 20 else "")
        return f"{len(ids)} photos match: {head}." + self._save(save_as, ids)

    def view_photos(self, ids) -> str:
        ids = self._ids(ids)
        if len(ids) > self.view_limit:
            raise ToolCallRejected(f"view_photos shows at most {self.view_limit} photos, got {len(ids)}")
        lines = [f"id {i} | day {self.time[i]:.1f} | at ({self.gps[i, 0]:.1f}, {self.gps[i, 1]:.1f}) km | "
                 f"{describe_attributes(self.pred, i)}" for i in ids]
        return "\n".join(lines) if lines else "No photos."

    def memory_save(self, name: str, ids) -> str:
        ids = self._ids(ids)
        self.memory[self._name(name)] = ids
        return f"Saved {len(ids)} ids as '{name}'."

    def memory_list(self) -> str:
        if not self.explicit_memory:
            return ""
        return "Memory: " + (", ".join(f"{k} ({len(v)} ids)" for k, v in self.memory.items()) or "empty") + "."

    def answer_(self, ids) -> str:
        self.answer = sorted(set(self._ids(ids)))  # canonical: deduplicated, sorted
        return f"Answered {len(self.answer)} photos."

    def execute(self, call: ToolCall) -> str:
        """Run a parsed call; value errors raise ToolCallRejected."""
        if call.tool in self.disabled:
            raise ToolCallRejected(f"tool {call.tool!r} is not available in this configuration")
        fn = self.answer_ if call.tool == "answer" else getattr(self, call.tool)
        return fn(**call.args)
