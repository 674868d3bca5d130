"""Tool calls (our reconstruction): strict parsing of what the model emits, and the Code
Interpreter ("hands") executed ONLY inside `icml26.common.run_sandboxed`.

A model turn is one of three actions, each a segment of words ending in `;` (or `<eos>`):

* `probe x1 ... xk ;` -- Neighbor Retrieval for 1..cap nodes (ids, or the symbols `u`, `v` that
  stand for the question's query nodes);
* `code: <python words> ;` -- Code Interpreter; only the code words of the vocabulary
  (`print( len( int( set( ) N[u] N[v] in &`, the symbols `u v` and node ids) are accepted;
* `answer X <eos>` -- the final answer (the paper's boxed answer), a single integer, or
  `answer out <eos>`, which submits the interpreter's last output.

Anything else is rejected with `ToolCallRejected` (the episode ends with reward 0).
Code runs in a batch: one sandboxed child executes every snippet of a batch, each in a fresh
namespace that holds only the read-only neighbour dict `N` the episode has retrieved (never the
graph or the answer) and a capturing `print`; a snippet's error is captured, not raised. If the
batch call itself fails (e.g. an infinite loop hits the CPU limit) we fall back to one sandboxed
call per snippet.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from icml26.common import run_sandboxed

from .env import CODE_WORDS, SYMBOLS, Vocab

ALLOWED_IMPORTS = ("math", "collections", "heapq", "itertools", "functools")
MAX_CODE_WORDS = 40
MAX_OUTPUT_CHARS = 200


class ToolCallRejected(ValueError):
    """A model turn that is not a well-formed probe / code / answer action."""


@dataclass(frozen=True)
class Action:
    kind: str  # "probe" | "code" | "answer"
    nodes: tuple[int, ...] = ()
    code: str = ""
    value: int | None = None
    from_output: bool = False


def parse_action(words: list[str], vocab: Vocab, *, probe_cap: int, graph_nodes=None,
                 bindings: dict[str, int] | None = None) -> Action:
    """Strictly parse one model segment (list of words, terminator included).
    `bindings` maps the symbols `u`, `v` to the question's query nodes."""
    bindings = bindings or {}
    if not words:
        raise ToolCallRejected("empty turn")
    head, body, end = words[0], words[1:-1], words[-1]
    if head == "answer":
        if end == "<eos>" and body == ["out"]:
            return Action("answer", from_output=True)
        if end != "<eos>" or len(body) != 1 or not body[0].isdigit() or int(body[0]) >= vocab.max_id:
            raise ToolCallRejected(f"malformed answer {' '.join(words)!r}: expected 'answer <int> <eos>' or 'answer out <eos>'")
        return Action("answer", value=int(body[0]))
    if end != ";":
        raise ToolCallRejected(f"turn {' '.join(words)!r} does not end with ';'")
    if head == "probe":
        if not 1 <= len(body) <= probe_cap or not all(w.isdigit() or w in bindings for w in body):
            raise ToolCallRejected(f"malformed probe {' '.join(words)!r}: expected 1..{probe_cap} node ids")
        nodes = tuple(bindings[w] if w in bindings else int(w) for w in body)
        if graph_nodes is not None and any(x not in graph_nodes for x in nodes):
            raise ToolCallRejected(f"probe asks for nodes not in the graph: {nodes}")
        return Action("probe", nodes=nodes)
    if head == "code:":
        if not body or len(body) > MAX_CODE_WORDS:
            raise ToolCallRejected(f"code must have 1..{MAX_CODE_WORDS} words")
        bad = [w for w in body if w not in CODE_WORDS and w not in SYMBOLS
               and not (w.isdigit() and int(w) < vocab.max_id)]
        if bad:
            raise ToolCallRejected(f"code uses words outside the interpreter's vocabulary: {bad[:5]}")
        code = " ".join(body)
        try:
            ast.parse(code)
        except SyntaxError as error:
            raise ToolCallRejected(f"code does not parse: {error.msg}") from None
        return Action("code", code=code)
    raise ToolCallRejected(f"unknown action {head!r}; expected probe, code: or answer")


def parse_text(text: str, vocab: Vocab, *, probe_cap: int, graph_nodes=None, bindings=None) -> Action:
    """`parse_action` for a raw string (e.g. from a real LLM); rejects non-strings and junk."""
    if not isinstance(text, str):
        raise ToolCallRejected(f"a turn must be a str, got {type(text).__name__}")
    return parse_action(text.split(), vocab, probe_cap=probe_cap, graph_nodes=graph_nodes, bindings=bindings)


_HARNESS = '''
def _grasp_batch(jobs, max_chars):
    results = []
    for code, nb, uv in jobs:
        out = []
        def _print(*args, sep=" ", end="\\n"):
            out.append(sep.join(str(a) for a in args) + end)
        ns = {"N": {int(k): tuple(x) for k, x in nb.items()}, "print": _print, "u": uv[0], "v": uv[1]}
        try:
            exec(code, ns)
            results.append(["".join(out)[:max_chars], None])
        except BaseException as error:
            results.append(["".join(out)[:max_chars], type(error).__name__ + ": " + str(error)[:200]])
    return results
'''


def run_code_batch(snippets: list[str], neighbours: list[dict[int, list[int]]],
                   queries=None, *,
                   wall_seconds: float = 20) -> list[tuple[str, str | None]]:
    """Execute model code in the sandbox: [(stdout, error or None)] per snippet
    (one child per batch). `queries[i] = (u, v)` binds the symbols u, v; the
    namespace holds only N, u, v and print."""
    queries = queries if queries is not None else [(-1, -1)] * len(snippets)
    if not len(snippets) == len(neighbours) == len(queries):
        raise ValueError(f"{len(snippets)} snippets, {len(neighbours)} neighbour dicts, {len(queries)} queries")
    if not snippets:
        return []
    for s in snippets:
        if not isinstance(s, str):
            raise TypeError(f"snippets must be str, got {type(s).__name__}")
    jobs = [[s, {str(k): list(x) for k, x in nb.items()}, [int(a), int(b)]]
            for s, nb, (a, b) in zip(snippets, neighbours, queries)]
    # no dunder escapes (a third layer, on top of the sandbox's own checks):
    # rejected per snippet
    ok_idx = [i for i, s in enumerate(snippets) if "__" not in s]
    out: list[tuple[str, str | None]] = (
        [("", "Rejected: dunder names are not allowed")] * len(snippets))
    if not ok_idx:
        return out
    res = run_sandboxed(_HARNESS, call="_grasp_batch",
                        args=[[jobs[i] for i in ok_idx], MAX_OUTPUT_CHARS],
                        allowed_imports=ALLOWED_IMPORTS, cpu_seconds=2,
                        memory_mb=512, wall_seconds=wall_seconds)
    if res.ok:
        for i, (stdout, err) in zip(ok_idx, res.value):
            out[i] = (stdout, err)
        return out
    # the batch failed as a whole: isolate the culprit, one call per snippet
    for i in ok_idx:
        r = run_sandboxed(_HARNESS, call="_grasp_batch",
                          args=[[jobs[i]], MAX_OUTPUT_CHARS],
                          allowed_imports=ALLOWED_IMPORTS, cpu_seconds=1,
                          memory_mb=512, wall_seconds=5)
        out[i] = (tuple(r.value[0]) if r.ok
                  else ("", f"{r.error_type}: {r.error_message}"))
    return out


def output_words(stdout: str, error: str | None, vocab: Vocab) -> str:
    """Tool response as protocol words: `out: X ;` for an in-range integer, else `out: error ;`."""
    s = stdout.strip()
    if error is None and s.isdigit() and int(s) < vocab.max_id:
        return f"out: {int(s)} ;"
    return "out: error ;"
