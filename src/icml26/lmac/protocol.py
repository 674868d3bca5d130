"""Communication protocols written as Python code, compiled safely into selection matrices.

A protocol (LMAC, Sec. 3) is code defining `messages(agent_id, obs) -> {receiver: 1-D array}`:
what the sender `agent_id` sends to each receiver, computed from its own observation only.
Model-generated code never runs in this process: `compile_protocol` probes it inside
`icml26.common.run_sandboxed` on the zero vector and the basis vectors, which yields an affine
map m^{j->i} = W_{ji} o^j + b_{ji} per (sender, receiver); on fresh random observations (and
twice on each, for determinism) it then checks, still in the sandbox, that the map reproduces
the code's outputs exactly. Training applies the matrices in torch. Because a compiled message
is a function of the sender's own observation by construction, no protocol can leak the
global state.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import torch

from icml26.common import run_sandboxed

ALLOWED_IMPORTS = ("numpy", "math")
FORBIDDEN_NAMES = {"state", "global_state", "env", "open", "eval", "exec", "compile", "globals", "locals",
                   "vars", "getattr", "setattr", "delattr", "__import__", "input", "breakpoint"}

_HARNESS = '''

def _lmac_compile(obs_dims, n_agents, probes, max_len):
    import numpy as _np
    out = {}
    for j in range(n_agents):
        d = obs_dims[j]
        def call(o):
            msgs = messages(j, o.copy())
            if msgs is None:
                msgs = {}
            if not isinstance(msgs, dict):
                raise TypeError("messages() must return a dict {receiver_id: 1-D array}, got " + type(msgs).__name__)
            res = {}
            for r, v in msgs.items():
                if isinstance(r, bool) or not isinstance(r, (int, _np.integer)):
                    raise TypeError("receiver ids must be ints, got " + repr(r))
                r = int(r)
                if not 0 <= r < n_agents or r == j:
                    raise ValueError("agent %d sends to invalid receiver %d" % (j, r))
                a = _np.asarray(v, dtype=float)
                if a.ndim != 1:
                    raise ValueError("message %d->%d must be a 1-D array, got shape %s" % (j, r, a.shape))
                if not _np.all(_np.isfinite(a)):
                    raise ValueError("message %d->%d is not finite" % (j, r))
                if a.size:
                    res[r] = a
            return res
        zero = call(_np.zeros(d))
        cols = []
        for k in range(d):
            e = _np.zeros(d)
            e[k] = 1.0
            got = call(e)
            if sorted(got) != sorted(zero) or any(got[r].shape != zero[r].shape for r in zero):
                raise ValueError("agent %d: receivers or message lengths depend on the observation" % j)
            cols.append({r: got[r] - zero[r] for r in zero})
        maps = {r: (_np.stack([c[r] for c in cols], axis=1) if d else _np.zeros((zero[r].size, 0)), zero[r])
                for r in zero}
        for probe in probes[j]:
            o = _np.asarray(probe, dtype=float)
            got, again = call(o), call(o)
            if sorted(got) != sorted(zero) or any(got[r].shape != zero[r].shape for r in zero):
                raise ValueError("agent %d: receivers or message lengths depend on the observation" % j)
            for r, (W, b) in maps.items():
                if not _np.array_equal(got[r], again[r]):
                    raise ValueError("agent %d: messages are not deterministic" % j)
                if _np.max(_np.abs(W @ o + b - got[r])) > 1e-6:
                    raise ValueError("agent %d -> %d: message is not a fixed selection (affine map) of the "
                                     "sender's observation" % (j, r))
        out[str(j)] = {str(r): {"W": W.tolist(), "b": b.tolist()} for r, (W, b) in maps.items()}
    total = sum(len(m["b"]) for s in out.values() for m in s.values())
    if total > max_len:
        raise ValueError("protocol sends %d numbers per step, more than the limit %d" % (total, max_len))
    return out
'''


class ProtocolRejected(ValueError):
    """A protocol failed a static check, the sandbox or the compiled-map verification."""


@dataclass
class CompiledProtocol:
    """A verified protocol: affine maps `maps[(sender, receiver)] = (W (m, d_sender), b (m,))`."""

    code: str
    n_agents: int
    obs_dims: list[int]
    maps: dict[tuple[int, int], tuple[torch.Tensor, torch.Tensor]] = field(default_factory=dict)

    def message_dims(self) -> list[int]:
        """Numbers each receiver gets per step."""
        return [sum(b.numel() for (s, r), (_, b) in self.maps.items() if r == i) for i in range(self.n_agents)]

    @property
    def message_size(self) -> int:
        """Total numbers sent per step, over all (sender, receiver) pairs."""
        return sum(self.message_dims())

    def to(self, device) -> "CompiledProtocol":
        maps = {k: (W.to(device), b.to(device)) for k, (W, b) in self.maps.items()}
        return CompiledProtocol(self.code, self.n_agents, self.obs_dims, maps)

    def receive(self, obs: list[torch.Tensor]) -> list[torch.Tensor]:
        """Messages m^{.->i} for every receiver i:
        (B, message_dims[i]) = concat_j W_ji o^j + b_ji."""
        if len(obs) != self.n_agents or any(o.shape[-1] != d for o, d in zip(obs, self.obs_dims)):
            raise ValueError(f"expected {self.n_agents} observations with dims {self.obs_dims}")
        batch = obs[0].shape[0]
        out = []
        for i in range(self.n_agents):
            parts = [obs[j] @ W.T + b
                     for (j, r), (W, b) in sorted(self.maps.items()) if r == i]
            out.append(torch.cat(parts, dim=1) if parts
                       else obs[0].new_zeros(batch, 0))
        return out

    def concat(self, other: "CompiledProtocol",
               label: str = "update") -> "CompiledProtocol":
        """The protocol that sends this one's messages followed by `other`'s
        (an appended update).

        In the official release each refinement step writes a new message that
        is concatenated with the previous ones; here the affine maps of a
        (sender, receiver) pair are stacked.
        """
        if other.n_agents != self.n_agents or other.obs_dims != self.obs_dims:
            raise ValueError("can only append a protocol for the same agents and observation dims")
        maps = dict(self.maps)
        for key, (W, b) in other.maps.items():
            if key in maps:
                W0, b0 = maps[key]
                maps[key] = (torch.cat([W0, W.to(W0.device)]),
                             torch.cat([b0, b.to(b0.device)]))
            else:
                maps[key] = (W, b)
        code = (f"{self.code.rstrip()}\n\n# --- {label}: appended message ---\n"
                f"{other.code}")
        return CompiledProtocol(code, self.n_agents, list(self.obs_dims), maps)

    def selection(self, names: list[list[str]]) -> dict[tuple[int, int], list[str]]:
        """Readable form: the observation features (by name) each (sender, receiver) pair carries."""
        table = {}
        for (j, i), (W, b) in sorted(self.maps.items()):
            rows = []
            for w in W:
                nz = torch.nonzero(w).flatten().tolist()
                rows.append(names[j][nz[0]] if len(nz) == 1 and float(w[nz[0]]) == 1.0 else "mix")
            table[(j, i)] = rows
        return table


def static_check(code: str) -> None:
    """Reject code that does not parse, lacks `def messages(agent_id, obs)` or names forbidden things.

    This only parses the text (`ast`); nothing is executed here.
    """
    if not isinstance(code, str) or not code.strip():
        raise ProtocolRejected("empty protocol")
    try:
        tree = ast.parse(code)
    except SyntaxError as error:
        raise ProtocolRejected(f"syntax error: {error.msg} (line {error.lineno})") from None
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "messages"]
    if not funcs:
        raise ProtocolRejected("the code defines no top-level function messages(agent_id, obs)")
    args = funcs[0].args
    if len(args.args) != 2 or args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
        raise ProtocolRejected("messages must take exactly two arguments (agent_id, obs): "
                               "a protocol may read only the sender's own observation")
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            bad = [m for m in mods if m.split(".")[0] not in ALLOWED_IMPORTS]
            if bad or (isinstance(node, ast.ImportFrom) and node.level):
                raise ProtocolRejected(f"import of {bad or 'a relative module'} is not allowed (numpy/math only)")
        if isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            raise ProtocolRejected(f"the protocol refers to {node.id!r}; it may read only its own observation")
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            raise ProtocolRejected(f"access to private attribute {node.attr!r} is not allowed")
        if isinstance(node, ast.Global):
            raise ProtocolRejected("global statements are not allowed (messages must be stateless)")


def compile_protocol(code: str, obs_dims: list[int], *, n_random: int = 16,
                     seed: int = 0, max_len: int | None = None,
                     wall_seconds: float = 20) -> CompiledProtocol:
    """Static check, then probe + verify `messages` in the sandbox; raise
    ProtocolRejected on failure."""
    if not obs_dims or any((not isinstance(d, int)) or d < 0 for d in obs_dims):
        raise ValueError(f"obs_dims must be a non-empty list of non-negative ints, got {obs_dims}")
    n_agents = len(obs_dims)
    full = (n_agents - 1) * sum(obs_dims)
    max_len = full if max_len is None else max_len
    static_check(code)
    # fresh random observations for the verification (drawn here: numpy.random
    # is not importable in the sandbox)
    gen = torch.Generator().manual_seed(seed)
    probes = [(2.0 * torch.randn(n_random, d, generator=gen,
                                 dtype=torch.float64)).tolist()
              for d in obs_dims]
    result = run_sandboxed(code + _HARNESS, call="_lmac_compile",
                           args=[list(obs_dims), n_agents, probes, max_len],
                           allowed_imports=ALLOWED_IMPORTS,
                           wall_seconds=wall_seconds, cpu_seconds=10)
    if not result.ok:
        raise ProtocolRejected(f"{result.error_type}: {result.error_message}")
    maps = {}
    try:
        for j, per in result.value.items():
            for i, m in per.items():
                W = torch.tensor(m["W"], dtype=torch.float32).reshape(
                    len(m["b"]), obs_dims[int(j)])
                maps[(int(j), int(i))] = (
                    W, torch.tensor(m["b"], dtype=torch.float32))
    except (AttributeError, KeyError, TypeError, ValueError,
            RuntimeError) as error:
        raise ProtocolRejected(
            f"malformed compilation result: {error}") from None
    return CompiledProtocol(code, n_agents, list(obs_dims), maps)


def protocol_code(sends: dict[int, dict[int, list[str]]], obs_names: list[list[str]]) -> str:
    """Render a selection protocol {sender: {receiver: [feature names]}} as readable code."""
    lines = ["import numpy as np", "", "# observation features of each agent, by index",
             f"FEATURES = {{{', '.join(f'{a}: {names!r}' for a, names in enumerate(obs_names))}}}",
             "", "# sender -> receiver -> features sent"]
    body = ",\n".join(
        f"    {j}: {{{', '.join(f'{i}: {sorted(f, key=obs_names[j].index)!r}' for i, f in sorted(per.items()) if f)}}}"
        for j, per in sorted(sends.items()))
    lines += ["SENDS = {", body, "}" if body else "}", "",
              "def messages(agent_id, obs):",
              "    obs = np.asarray(obs, dtype=float)",
              "    out = {}",
              "    for receiver, feats in SENDS.get(agent_id, {}).items():",
              "        out[receiver] = obs[[FEATURES[agent_id].index(f) for f in feats]]",
              "    return out", ""]
    return "\n".join(lines)


def no_comm_code() -> str:
    """The NoComm arm: nobody sends anything."""
    return "def messages(agent_id, obs):\n    return {}\n"


def full_comm_code(n_agents: int) -> str:
    """The FullComm arm: every agent broadcasts its whole observation to all others."""
    return ("import numpy as np\n\n"
            f"N_AGENTS = {n_agents}\n\n"
            "def messages(agent_id, obs):\n"
            "    obs = np.asarray(obs, dtype=float)\n"
            "    return {r: obs.copy() for r in range(N_AGENTS) if r != agent_id}\n")


def parse_sends(code: str) -> dict[int, dict[int, list[str]]]:
    """Read the `SENDS = {...}` literal of a protocol without executing it (ast.literal_eval)."""
    for node in ast.parse(code).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "SENDS" for t in node.targets):
            value = ast.literal_eval(node.value)
            return {int(j): {int(i): list(f) for i, f in per.items()} for j, per in value.items()}
    return {}
