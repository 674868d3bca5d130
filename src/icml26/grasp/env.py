"""The graph environment (our reconstruction): random graphs, the three local tasks,
the word-level protocol vocabulary, oracle traces and the Neighbor Retrieval tool.

Episode text (one word per token; Sec. "Interaction format", our word-level stand-in for the
Qwen3 chat template, used identically for SFT, GRPO and evaluation):

    visible:  <bos> visible n 12 nb 3 : 1 5 | 7 : 5 ; Q common 3 7 ; code: print ( ... ) ; out: 1 ; answer out <eos>
    blind:    <bos> blind n 12 Q common 3 7 ; probe u v ; obs 3 : 1 5 | 7 : 5 ; code: print( len( set( N[u] ) & set( N[v] ) ) ) ; out: 1 ; answer out <eos>
    passive:  <bos> passive n 12 edges 0 1 , 0 4 , ... ; Q common 3 7 ; answer 1 <eos>

In `visible` mode the prompt lists only the queried nodes' neighbour lines (the interpreter's
dict `N` is pre-filled with them); in `blind` mode nothing about the structure is given and
`N` holds exactly what `probe` (Neighbor Retrieval) returned.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx
import numpy as np
import torch

SPECIAL = ["<pad>", "<bos>", "<eos>"]
WORDS = ["visible", "blind", "passive", "n", "Q", "degree", "adjacent", "common", "nb", "edges", "probe",
         "obs", "code:", "out:", "answer", "error", ":", "|", ";", ","]
# Code words are Python fragments; `u`, `v` are bound by the interpreter to the question's query nodes
# (a tiny model copies ids badly: it never has to copy them into code).
CODE_WORDS = ["print(", "len(", "int(", "set(", ")", "N[u]", "N[v]", "in", "&"]
SYMBOLS = ["u", "v"]
ANSWER_OUT = "out"  # `answer out` submits the interpreter's last output (the boxed tool result)
MODES = ("visible", "blind", "passive")


class Vocab:
    """Word-level vocabulary: specials, protocol words, code words and node ids 0..max_id-1."""

    def __init__(self, max_id: int):
        if not isinstance(max_id, int) or max_id < 4:
            raise ValueError(f"max_id must be an int >= 4, got {max_id!r}")
        self.max_id = max_id
        self.words = SPECIAL + WORDS + SYMBOLS + [ANSWER_OUT] + CODE_WORDS + [str(i) for i in range(max_id)]
        self.index = {w: i for i, w in enumerate(self.words)}
        self.pad, self.bos, self.eos = (self.index[w] for w in SPECIAL)
        self.code_ids = {self.index[w] for w in CODE_WORDS} | set(range(self.num(0), self.num(0) + max_id))

    def __len__(self) -> int:
        return len(self.words)

    def num(self, i: int) -> int:
        return self.index[str(i)]

    def is_num(self, tok: int) -> bool:
        return self.num(0) <= tok < self.num(0) + self.max_id

    def encode(self, text: str) -> list[int]:
        try:
            return [self.index[w] for w in text.split()]
        except KeyError as error:
            raise ValueError(f"word {error.args[0]!r} is not in the protocol vocabulary") from None

    def decode(self, ids) -> str:
        return " ".join(self.words[int(i)] for i in ids)

    def hf_tokenizer(self):
        """The same vocabulary as a `transformers` fast tokenizer (WordLevel + whitespace split)."""
        from tokenizers import Tokenizer, models, pre_tokenizers
        from transformers import PreTrainedTokenizerFast
        tok = Tokenizer(models.WordLevel(vocab=self.index, unk_token="error"))
        tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
        return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", eos_token="<eos>",
                                       pad_token="<pad>", unk_token="error")


@dataclass
class Question:
    """One instance: graph (adjacency over relabelled ids), task, query nodes, ground truth a*."""

    adj: dict[int, list[int]]
    task: str
    u: int
    v: int
    answer: int
    probes: list[int] = field(default_factory=list)  # filled by the environment during an episode

    @property
    def n(self) -> int:
        return len(self.adj)


def ground_truth(g: nx.Graph, task: str, u: int, v: int) -> int:
    """a* computed with networkx (the ground truth)."""
    if task == "degree":
        return int(g.degree[u])
    if task == "adjacent":
        return int(g.has_edge(u, v))
    if task == "common":
        return len(list(nx.common_neighbors(g, u, v)))
    raise ValueError(f"unknown task {task!r}; valid: degree, adjacent, common")


def sample_question(rng: np.random.Generator, n: int, p: float, max_id: int, tasks) -> Question:
    """G(n, p) with nodes relabelled into random distinct ids from 0..max_id-1, then a task."""
    if n > max_id:
        raise ValueError(f"graph size n={n} exceeds max_id={max_id}")
    g0 = nx.gnp_random_graph(n, p, seed=int(rng.integers(2**31)))
    ids = rng.choice(max_id, size=n, replace=False)
    g = nx.relabel_nodes(g0, {i: int(ids[i]) for i in range(n)})
    task = str(tasks[int(rng.integers(len(tasks)))])
    u, v = (int(x) for x in rng.choice(ids, size=2, replace=False))
    if task == "adjacent" and rng.random() < 0.5 and g.number_of_edges() > 0:  # balance yes/no
        edges = list(g.edges())
        u, v = edges[int(rng.integers(len(edges)))]
        if rng.random() < 0.5:
            u, v = v, u
    adj = {int(a): sorted(int(b) for b in g.neighbors(a)) for a in g.nodes()}
    return Question(adj, task, int(u), int(v), ground_truth(g, task, u, v))


def query_nodes(q: Question) -> list[int]:
    return [q.u] if q.task == "degree" else [q.u, q.v]


def neighbor_retrieval(q: Question, nodes: list[int],
                       cap: int) -> dict[int, list[int]]:
    """Tool "eyes": adjacency of the requested nodes (at most `cap` per call);
    probes are logged."""
    if not nodes or len(nodes) > cap:
        raise ValueError(f"neighbor_retrieval takes 1..{cap} nodes, got {len(nodes)}")
    missing = [x for x in nodes if x not in q.adj]
    if missing:
        raise ValueError(f"nodes {missing} are not in the graph")
    q.probes.extend(nodes)
    return {x: list(q.adj[x]) for x in nodes}


def render_nb(nb: dict[int, list[int]]) -> str:
    return " | ".join(f"{x} : " + " ".join(map(str, ys)) for x, ys in nb.items()).replace("  ", " ")


def oracle_code(q: Question) -> str:
    """The solver a perfect agent writes (words separated by spaces; valid Python; `u`, `v` bound by the tool)."""
    if q.task == "degree":
        return "print( len( N[u] ) )"
    if q.task == "adjacent":
        return "print( int( v in N[u] ) )"
    return "print( len( set( N[u] ) & set( N[v] ) ) )"


def prompt(q: Question, mode: str) -> str:
    """The episode's opening text (what the model is conditioned on) for each observation mode."""
    head = f"<bos> {mode} n {q.n}"
    ask = f"Q {q.task} {q.u} {q.v} ;"
    if mode == "visible":
        nb = {x: q.adj[x] for x in query_nodes(q)}
        return f"{head} nb {render_nb(nb)} ; {ask}"
    if mode == "blind":
        return f"{head} {ask}"
    if mode == "passive":
        edges = " , ".join(f"{a} {b}" for a in sorted(q.adj) for b in q.adj[a] if a < b)
        return f"{head} edges {edges} ; {ask}"
    raise ValueError(f"unknown mode {mode!r}; valid: {MODES}")


def oracle_trace(q: Question, mode: str) -> list[tuple[str, bool]]:
    """Oracle episode as (text, is_model_text) segments; tool outputs and the prompt are not model text."""
    segs = [(prompt(q, mode), False)]
    if mode == "passive":
        return segs + [(f"answer {q.answer} <eos>", True)]
    if mode == "blind":
        nodes = query_nodes(q)
        segs += [(f"probe {' '.join(['u', 'v'][:len(nodes)])} ;", True),
                 (f"obs {render_nb({x: q.adj[x] for x in nodes})} ;", False)]
    segs += [(f"code: {oracle_code(q)} ;", True), (f"out: {q.answer} ;", False),
             (f"answer {ANSWER_OUT} <eos>", True)]
    return segs


def encode_traces(vocab: Vocab, traces: list[list[tuple[str, bool]]], device) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ids (B, T) and a loss mask (B, T) that is 1 on model tokens only (masked tool outputs)."""
    ids, masks = [], []
    for segs in traces:
        seq, m = [], []
        for text, is_model in segs:
            toks = vocab.encode(text)
            seq += toks
            m += [int(is_model)] * len(toks)
        ids.append(seq)
        masks.append(m)
    T = max(map(len, ids))
    out = torch.full((len(ids), T), vocab.pad, dtype=torch.long)
    mask = torch.zeros((len(ids), T), dtype=torch.float32)
    for i, (s, m) in enumerate(zip(ids, masks)):
        out[i, :len(s)] = torch.tensor(s)
        mask[i, :len(m)] = torch.tensor(m, dtype=torch.float32)
    return out.to(device), mask.to(device)
