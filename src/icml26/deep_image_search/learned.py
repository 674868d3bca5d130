"""A model-driven agent that runs offline: a small policy network trained on tool-use traces.

The paper's agent is a multimodal LLM that plans, calls tools and reads their results. Offline, the
book trains a small network by imitation (behaviour cloning) on the traces of the scripted planner,
recorded on *training* albums that share no photo, user or query with the evaluation albums. The
network sees exactly what any policy sees, the messages of the loop (text), and reads them with
learned weights:
- the query, word by word (word and position embeddings, two convolutions, and two attention
  "slots" that learn which words name what to look for; no template is parsed);
- the tools the system block lists, the names in explicit memory, and its own past calls;
- the photos that working memory still shows: each mention of a photo id in an observation
  (a `view_photos` line with its predicted description, a ranked `image_search` hit, a
  `filter_metadata` match), with where it sits.
It writes one tool call from learned heads: the tool; each argument's choice among the values its
traces used (a memory name, a number, a flag, or "a list of ids"); the search text as a span of the
query; and, for a list, which of the shown photo ids to include. So it can fail: it has to learn
when to look, what to search, which photo is the clue and which candidates match.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from icml26.common import progress

from .tools import SCHEMAS, ToolCallRejected, parse_tool_call

TOOLS = tuple(SCHEMAS)
ID_ARGS = ("ids", "near", "scope")  # arguments that take a list of photo ids or a memory name
LIST, ABSENT = "<list>", "<absent>"
MAX_RANK = 50
MAX_QUERY = 32  # words of a query the policy reads
SLOTS = 2  # attention slots over the query: what to look for, and where
POSITIVE_WEIGHT = 4.0  # a list holds few of the shown photos: weigh the ones it holds
LIST_WEIGHT = 4.0  # the weight of the listed-photos term in the imitation loss
WORD = re.compile(r"[a-z0-9]+")
_VIEW = re.compile(r"^id (\d+) \|[^|]*\|[^|]*\| (.*)$", re.M)
_HIT = re.compile(r"(\d+) \((-?\d+\.\d+)\)")
_MEMORY = re.compile(r"(\w+) \(\d+ ids\)")
_TOOL_LINE = re.compile(r"^- (\w+)\(", re.M)
ELIDED = "[older observation elided"
KINDS = ("view", "hit", "match")
MENTION_FEATURES = len(KINDS) + 3 + 4 + 2  # kind, age, rank page, rank and score
HISTORY_FEATURES = 2 * (len(TOOLS) + 2) + (len(TOOLS) + 2) + 4 + 2
MATCHES = SLOTS + 1  # the query's slots, and the words of the agent's own latest search
POOLED_FEATURES = 2 * (3 * MATCHES + 1)  # per kept observation: how well its photos match
PHOTO_FEATURES = len(KINDS) * (MATCHES + MENTION_FEATURES - len(KINDS))  # per kind of mention


@dataclass
class Mention:
    """One photo id shown in a kept observation: its kind, age (0 = latest), rank in that
    observation, search score (hits only) and the words of its predicted description (views)."""

    photo: int
    kind: int
    age: int
    rank: int
    score: float
    words: tuple[str, ...]


@dataclass
class Context:
    """What the policy reads from the messages (text only)."""

    query: tuple[str, ...]
    tools: tuple[str, ...]  # tools the system block lists
    memory: tuple[str, ...]  # names in explicit memory
    history: tuple[str, ...]  # the tools of its past calls ("invalid" for a rejected text)
    searched: tuple[str, ...]  # the words of its latest image_search
    last_rejected: bool
    mentions: list[Mention]


def _mentions(observation: str, age: int) -> list[Mention]:
    views = _VIEW.findall(observation)
    if views:
        return [Mention(int(i), 0, age, r, 0.0, tuple(WORD.findall(d.lower())))
                for r, (i, d) in enumerate(views)]
    hits = _HIT.findall(observation)
    if hits:
        return [Mention(int(i), 1, age, r, float(s), ()) for r, (i, s) in enumerate(hits)]
    if " photos match:" in observation:
        ids = re.findall(r"\d+", observation.partition(":")[2].split(" Saved ")[0])
        return [Mention(int(i), 2, age, r, 0.0, ()) for r, i in enumerate(ids)]
    return []


def read_context(messages: list[dict]) -> Context:
    """Turn the loop's messages into the policy's input (module docstring)."""
    system = messages[0]["content"]
    calls = [m["content"] for m in messages if m["role"] == "assistant"]
    observations = [m["content"] for m in messages if m["role"] == "tool"]
    history, searched = [], ()
    for text in calls:  # its own past calls
        try:
            call = parse_tool_call(text)
        except ToolCallRejected:
            history.append("invalid")
            continue
        history.append(call.tool)
        if call.tool == "image_search":
            searched = tuple(WORD.findall(call.args["query"].lower()))
    mentions = []  # the photos the kept observations show, latest first
    for age, obs in enumerate(reversed(observations)):
        if not obs.startswith(ELIDED):
            mentions += _mentions(obs, min(age, 2))
    memory = (system.rpartition("\nMemory: ")[2] if "\nMemory: " in system
              else "")
    return Context(
        query=tuple(WORD.findall(messages[1]["content"].lower())),
        tools=tuple(_TOOL_LINE.findall(system)),
        memory=tuple(_MEMORY.findall(memory)),
        history=tuple(history), searched=searched,
        last_rejected=bool(observations)
        and observations[-1].startswith("ERROR"),
        mentions=mentions)


@dataclass
class Vocab:
    """Words, memory names and each argument's choices, collected from the training traces."""

    words: tuple[str, ...]
    names: tuple[str, ...]
    choices: dict  # (tool, arg) -> tuple of choices (values as JSON text, LIST, ABSENT)

    @classmethod
    def from_traces(cls, examples: list[tuple[Context, dict]]) -> "Vocab":
        words, names, choices = set(), set(), {}
        for ctx, call in examples:
            words.update(ctx.query)
            for m in ctx.mentions:
                words.update(m.words)
            names.update(ctx.memory)
        for tool, schema in SCHEMAS.items():
            for arg, (_, required) in schema.items():
                seen = {_choice(arg, call["args"].get(arg, None), required)
                        for _, call in examples if call["tool"] == tool}
                seen |= {LIST} if arg in ID_ARGS else set()
                seen |= set() if required else {ABSENT}
                choices[(tool, arg)] = tuple(sorted(c for c in seen if c is not None))
        return cls(("<unk>",) + tuple(sorted(words)), tuple(sorted(names)), choices)

    def word_ids(self, words) -> list[int]:
        if not hasattr(self, "_index"):
            self._index = {w: i for i, w in enumerate(self.words)}
        return [self._index.get(w, 0) for w in words]


def _key(tool: str, arg: str) -> str:
    return f"{tool}__{arg}"


def _choice(arg: str, value, required: bool):
    if value is None:
        return None if required else ABSENT
    if arg in ID_ARGS and isinstance(value, list):
        return LIST
    if arg == "query":
        return None  # a span of the query, not a choice
    return json.dumps(value)


class TracePolicyNet(nn.Module):
    """The network: query reader, context summary, tool head, argument heads, span head and a
    per-photo selection head (see the module docstring)."""

    def __init__(self, vocab: Vocab, hidden: int = 32):
        super().__init__()
        self.vocab, v, h = vocab, len(vocab.words), hidden
        self.embed = nn.Embedding(v, h)
        self.position = nn.Embedding(MAX_QUERY, h)
        self.reader = nn.Sequential(nn.Conv1d(h, 2 * h, 3, padding=1), nn.ReLU(),
                                    nn.Conv1d(2 * h, 2 * h, 3, padding=1), nn.ReLU())
        self.slot = nn.Linear(2 * h, SLOTS)
        n_ctx = 2 * h + len(TOOLS) + len(vocab.names) + HISTORY_FEATURES + POOLED_FEATURES
        self.summary = nn.Sequential(nn.Linear(n_ctx, 2 * h), nn.ReLU(), nn.Linear(2 * h, 2 * h), nn.ReLU())
        self.tool_head = nn.Linear(2 * h, len(TOOLS))
        self.arg_keys = sorted(k for k, options in vocab.choices.items() if options)
        self.arg_heads = nn.ModuleDict({_key(*k): nn.Linear(2 * h, len(vocab.choices[k]))
                                        for k in self.arg_keys})
        self.span = nn.Linear(2 * h, 4 * h)  # start and end queries over the reader's states
        self.arg_embed = nn.Embedding(len(self.arg_keys), h)
        self.select = nn.Sequential(nn.Linear(PHOTO_FEATURES + 3 * h, 2 * h), nn.ReLU(), nn.Linear(2 * h, 1))

    def forward(self, batch: dict) -> dict:
        length = batch["query"].shape[1]
        qmask = batch["query_mask"]  # (B, L)
        q = (self.embed(batch["query"]) + self.position(torch.arange(length))) * qmask[..., None]  # (B, L, h)
        states = self.reader(q.transpose(1, 2)).transpose(1, 2)  # (B, h, L) -> (B, 2h, L) -> (B, L, 2h)
        pooled = (states * qmask[..., None]).sum(1) / qmask.sum(1, keepdim=True).clamp(min=1)
        # slots: attention over query positions -> a soft bag of words (B, S, V)
        att = self.slot(states).masked_fill(~qmask.bool()[..., None], -1e9).softmax(1)  # (B, L, S)
        onehot = F.one_hot(batch["query"], len(self.vocab.words)).float()  # (B, L, V)
        slot_words = torch.einsum("bls,blv->bsv", att, onehot)
        match = torch.einsum("bsv,bmv->bms", slot_words, batch["mention_words"])  # (B, M, S)
        match = torch.cat([match, batch["mention_overlap"][..., None]], -1)  # (B, M, S + 1)
        seen = _pool_matches(match, batch["mention_feat"], batch["mention_mask"])  # (B, POOLED_FEATURES)
        ctx = self.summary(torch.cat([pooled, batch["context"], seen], 1))  # (B, 2h)
        start, end = self.span(ctx).chunk(2, -1)  # (B, 2h) each
        span = torch.stack([(states * start[:, None]).sum(-1), (states * end[:, None]).sum(-1)], 1)
        span = span.masked_fill(~qmask.bool()[:, None], -1e9)  # (B, 2, L)
        arg = self.arg_embed(batch["arg_key"])  # (B, h): which (tool, arg) is being filled
        photo = _photo_features(match, batch)  # (B, U, PHOTO_FEATURES)
        u = photo.shape[1]
        logits = self.select(torch.cat([photo, ctx[:, None].expand(-1, u, -1),
                                        arg[:, None].expand(-1, u, -1)], -1)).squeeze(-1)  # (B, U)
        per_photo = logits.masked_fill(~batch["photo_mask"].bool(), -1e9)
        return {"tool": self.tool_head(ctx).masked_fill(~batch["tools"].bool(), -1e9),
                "args": {k: head(ctx) for k, head in self.arg_heads.items()}, "span": span,
                "photos": per_photo}


def _photo_features(match: torch.Tensor, batch: dict) -> torch.Tensor:
    """One vector per shown photo: for each kind of mention (view line, search hit, filter match),
    the largest of each feature over the photo's mentions of that kind (0 where it has none)."""
    feat, mask = batch["mention_feat"], batch["mention_mask"]
    kind = feat[..., :len(KINDS)]  # (B, M, K)
    rest = torch.cat([match, feat[..., len(KINDS):]], -1) * mask[..., None]  # (B, M, F)
    per_kind = (kind[..., :, None] * rest[..., None, :]).flatten(2)  # (B, M, K * F)
    index = batch["mention_photo"][..., None].expand(-1, -1, per_kind.shape[-1])
    out = torch.zeros(*batch["photo_mask"].shape, per_kind.shape[-1])
    return out.scatter_reduce(1, index, per_kind, "amax", include_self=True)  # (B, U, K * F)


def _pool_matches(match: torch.Tensor, feat: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """For the latest and the previous observation: the best and mean match of its photos with
    each slot, the share that match a slot fully, and how many photos it shows."""
    out = []
    for age in (0, 1):
        keep = mask * feat[..., len(KINDS) + age]  # (B, M) mentions of that observation
        n = keep.sum(1, keepdim=True)  # (B, 1)
        w = keep[..., None]  # (B, M, 1)
        out += [(match * w).amax(1), (match * w).sum(1) / n.clamp(min=1),
                ((match > 0.95).float() * w).sum(1) / n.clamp(min=1), n / MAX_RANK]
    return torch.cat(out, 1)


def _history_features(ctx: Context) -> list[float]:
    names = TOOLS + ("invalid", "none")
    feats = []
    for back in (1, 2):
        last = ctx.history[-back] if len(ctx.history) >= back else "none"
        feats += [float(last == n) for n in names]
    counts = [min(ctx.history.count(n), 4) / 4 for n in names]
    since_search = 0
    for tool in reversed(ctx.history):
        if tool == "image_search":
            break
        since_search += tool == "view_photos"
    return feats + counts + [float(since_search == k) for k in range(4)] + [
        float(ctx.last_rejected), min(len(ctx.history), 30) / 30]


def _mention_features(m: Mention) -> list[float]:
    rank = min(m.rank, MAX_RANK - 1)
    return ([float(m.kind == k) for k in range(len(KINDS))] + [float(m.age == a) for a in range(3)]
            + [float(rank // 16 == p) for p in range(4)] + [1 - rank / MAX_RANK, (m.score + 1) / 2])


def encode(contexts: list[Context], vocab: Vocab) -> tuple[dict, list[list[int]]]:
    """Pad a list of contexts into the network's input tensors, with each context's photo list."""
    b = len(contexts)
    length = max(1, max(min(len(c.query), MAX_QUERY) for c in contexts))
    n_m = max(1, max(len(c.mentions) for c in contexts))
    photos = [list(dict.fromkeys(m.photo for m in c.mentions)) for c in contexts]
    n_u = max(1, max(len(p) for p in photos))
    query = torch.zeros(b, length, dtype=torch.long)
    words = torch.zeros(b, n_m, len(vocab.words))
    feat = torch.zeros(b, n_m, MENTION_FEATURES)
    mention_photo = torch.zeros(b, n_m, dtype=torch.long)
    overlap = torch.zeros(b, n_m)
    rows, cols, hits, context, tools = [], [], [], [], []
    for i, c in enumerate(contexts):
        ids = vocab.word_ids(c.query[:MAX_QUERY])
        query[i, :len(ids)] = torch.tensor(ids, dtype=torch.long)
        if c.mentions:
            slot_of = {p: k for k, p in enumerate(photos[i])}
            n = len(c.mentions)
            feat[i, :n] = torch.tensor([_mention_features(m) for m in c.mentions])
            mention_photo[i, :n] = torch.tensor([slot_of[m.photo] for m in c.mentions])
            searched = set(c.searched)
            overlap[i, :n] = torch.tensor([len(set(m.words) & searched) / max(1, len(searched))
                                           for m in c.mentions])
            for j, m in enumerate(c.mentions):
                for w in vocab.word_ids(m.words):
                    rows.append(i), cols.append(j), hits.append(w)
        tools.append([float(t in c.tools) for t in TOOLS])
        context.append(tools[-1] + [float(n in c.memory) for n in vocab.names] + _history_features(c))
    words[rows, cols, hits] = 1.0
    lengths = torch.tensor([min(len(c.query), MAX_QUERY) for c in contexts])
    mentions = torch.tensor([len(c.mentions) for c in contexts])
    n_photos = torch.tensor([len(p) for p in photos])
    out = {"query": query, "query_mask": (torch.arange(length) < lengths[:, None]).float(),
           "mention_words": words, "mention_feat": feat, "mention_overlap": overlap,
           "mention_mask": (torch.arange(n_m) < mentions[:, None]).float(), "mention_photo": mention_photo,
           "photo_mask": (torch.arange(n_u) < n_photos[:, None]).float(), "tools": torch.tensor(tools),
           "context": torch.tensor(context), "arg_key": torch.zeros(b, dtype=torch.long)}
    return out, photos


def _span_of(query: tuple[str, ...], text: str) -> tuple[int, int] | None:
    words = tuple(WORD.findall(text.lower()))
    for s in range(len(query) - len(words) + 1):
        if query[s:s + len(words)] == words:
            return s, s + len(words) - 1
    return None


def _targets(contexts, calls, net: "TracePolicyNet", photos) -> dict:
    """Per example: the tool index; each argument's choice index (-100 where the tool has no such
    argument); the span's first and last word; and, for the one list argument a call may have,
    which (tool, argument) it is and which of the shown photos the teacher's list holds."""
    n, n_u = len(calls), max(1, max(len(p) for p in photos))
    vocab = net.vocab
    out = {"tool": torch.tensor([TOOLS.index(c["tool"]) for c in calls]),
           "args": {k: torch.full((n,), -100, dtype=torch.long) for k in net.arg_keys},
           "span": torch.full((n, 2), -100, dtype=torch.long), "list_key": torch.full((n,), -1, dtype=torch.long),
           "list_photos": torch.zeros(n, n_u)}
    for i, (ctx, call) in enumerate(zip(contexts, calls)):
        for arg, (_, required) in SCHEMAS[call["tool"]].items():
            value = call["args"].get(arg)
            if arg == "query":
                span = _span_of(ctx.query[:MAX_QUERY], value)
                if span is not None:
                    out["span"][i] = torch.tensor(span)
                continue
            choice, key = _choice(arg, value, required), (call["tool"], arg)
            if choice in vocab.choices[key]:
                out["args"][key][i] = vocab.choices[key].index(choice)
            if choice == LIST and imitable(ctx, call):  # ids the context does not show are not learnable
                out["list_key"][i] = net.arg_keys.index(key)
                wanted = set(value)
                out["list_photos"][i, :len(photos[i])] = torch.tensor([float(p in wanted) for p in photos[i]])
    return out


class TracePolicy:
    """The learned policy behind the loop's interface, `policy(messages) -> str`."""

    name = "learned policy (a small network trained on the scripted planner's traces)"

    def __init__(self, net: TracePolicyNet, view_limit: int = 16):
        self.net, self.view_limit = net.eval(), view_limit

    def __call__(self, messages: list[dict]) -> str:
        return self.decide_batch([read_context(messages)])[0]

    def batch(self, many: list[list[dict]]) -> list[str]:
        """One call per message list (the loop's `run_agents` asks many queries at once)."""
        return self.decide_batch([read_context(m) for m in many])

    def decide_batch(self, contexts: list[Context], chunk: int = 256) -> list[str]:
        """The call for each context: the likeliest tool, then each argument's likeliest choice;
        the search text is the likeliest span; a list holds the shown photos whose logit is
        positive (at most `view_limit` for view_photos)."""
        calls = []
        for start in range(0, len(contexts), chunk):
            calls += self._decide_chunk(contexts[start:start + chunk])
        return calls

    def _decide_chunk(self, contexts: list[Context]) -> list[str]:
        batch, photos = encode(contexts, self.net.vocab)
        calls, lists = [], []
        with torch.no_grad():
            out = self.net(batch)
            for i, ctx in enumerate(contexts):
                tool = TOOLS[int(out["tool"][i].argmax())]
                args = {}
                for arg in SCHEMAS[tool]:
                    if arg == "query":
                        s, e = int(out["span"][i, 0].argmax()), int(out["span"][i, 1].argmax())
                        args[arg] = " ".join(ctx.query[s:max(s, e) + 1])
                        continue
                    options = self.net.vocab.choices[(tool, arg)]
                    choice = options[int(out["args"][_key(tool, arg)][i].argmax())]
                    if choice == LIST:
                        lists.append((i, arg, self.net.arg_keys.index((tool, arg))))
                    elif choice != ABSENT:
                        args[arg] = json.loads(choice)
                calls.append({"tool": tool, "args": args})
            if lists:  # a call has at most one list argument: one more pass reads the photo logits
                batch["arg_key"] = torch.zeros(len(contexts), dtype=torch.long)
                for i, _, key in lists:
                    batch["arg_key"][i] = key
                logits = self.net(batch)["photos"]
                for i, arg, _ in lists:
                    row = logits[i, :len(photos[i])]
                    chosen = [p for p, z in zip(photos[i], row.tolist()) if z > 0]
                    if calls[i]["tool"] == "view_photos" and len(chosen) > self.view_limit:
                        top = set(torch.topk(row, self.view_limit).indices.tolist())
                        chosen = [p for k, p in enumerate(photos[i]) if k in top]
                    calls[i]["args"][arg] = chosen
        return [json.dumps(c) for c in calls]


class Recorder:
    """Wraps a teacher policy and keeps every (messages, call) pair it answers."""

    def __init__(self, teacher):
        self.teacher, self.examples = teacher, []

    def __call__(self, messages: list[dict]) -> str:
        out = self.teacher(messages)
        self.examples.append((read_context(messages), json.loads(out)))
        return out


def imitable(ctx: Context, call: dict) -> bool:
    """A call a policy reading only this context can make: every photo id it lists is shown in
    the context. (The scripted planner keeps result lists in its own scratchpad, so some of its
    calls name photos whose observation working memory has already elided.)"""
    shown = {m.photo for m in ctx.mentions}
    return all(set(v) <= shown for a, v in call["args"].items() if a in ID_ARGS and isinstance(v, list))


class AgreementProbe:
    """Runs the teacher and keeps each context with the teacher's call; `agreement(student)` then
    asks the student every one of them at once: the share of the imitable calls (`imitable`)
    where both give the same call (lists compared as sets)."""

    def __init__(self, teacher):
        self.teacher, self.asked = teacher, []

    def __call__(self, messages: list[dict]) -> str:
        out = self.teacher(messages)
        self.asked.append((read_context(messages), out))
        return out

    def agreement(self, student: "TracePolicy") -> float:
        if not self.asked:
            raise ValueError("the teacher answered nothing yet")
        asked = [(ctx, out) for ctx, out in self.asked if imitable(ctx, json.loads(out))]
        answers = student.decide_batch([ctx for ctx, _ in asked])
        return sum(same_call(a, b) for (_, a), b in zip(asked, answers)) / max(1, len(asked))


def same_call(a: str, b: str) -> bool:
    """Two outputs name the same tool call (lists of ids compared as sets)."""
    try:
        x, y = parse_tool_call(a), parse_tool_call(b)
    except ToolCallRejected:
        return False
    norm = lambda args: {k: sorted(set(v)) if isinstance(v, list) else v for k, v in args.items()}  # noqa: E731
    return x.tool == y.tool and norm(x.args) == norm(y.args)


def _rows(tensors: dict, idx: torch.Tensor) -> dict:
    return {k: _rows(v, idx) if isinstance(v, dict) else v[idx] for k, v in tensors.items()}


def _trim(batch: dict, target: dict) -> tuple[dict, dict]:
    """Cut a batch drawn from the padded set down to its own longest mention and photo lists."""
    m = max(1, int(batch["mention_mask"].sum(1).max()))
    u = max(1, int(batch["photo_mask"].sum(1).max()))
    for key in ("mention_words", "mention_feat", "mention_mask", "mention_overlap", "mention_photo"):
        batch[key] = batch[key][:, :m]
    batch["photo_mask"] = batch["photo_mask"][:, :u]
    target["list_photos"] = target["list_photos"][:, :u]
    return batch, target


def train_trace_policy(examples: list[tuple[Context, dict]], steps: int, seed: int, hidden: int = 32,
                       lr: float = 3e-3, batch_size: int = 64) -> tuple[TracePolicyNet, list[float]]:
    """Behaviour cloning: cross-entropy on the tool, each argument's choice and the span, binary
    cross-entropy on which shown photos a list holds (each head trained on the teacher's own
    call). Every example is encoded once; each step draws a batch of them."""
    if not examples:
        raise ValueError("no training traces: the teacher made no calls")
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    net = TracePolicyNet(Vocab.from_traces(examples), hidden)
    contexts, calls = [c for c, _ in examples], [call for _, call in examples]
    inputs, photos = encode(contexts, net.vocab)
    targets = _targets(contexts, calls, net, photos)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    losses = []
    for _ in progress(range(steps), desc="policy (imitation)"):
        idx = torch.randint(len(examples), (min(batch_size, len(examples)),), generator=gen)
        loss = _imitation_loss(net, *_trim(_rows(inputs, idx), _rows(targets, idx)))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return net.eval(), losses


def _imitation_loss(net: TracePolicyNet, batch: dict,
                    target: dict) -> torch.Tensor:
    """The behaviour-cloning loss: cross-entropy on the tool, on each
    argument's choice and on the span; weighted binary cross-entropy on the
    listed photos."""
    # the photo logits are read for the list argument each call has (if any)
    out = net({**batch, "arg_key": target["list_key"].clamp(min=0)})
    loss = F.cross_entropy(out["tool"], target["tool"])
    for key, labels in target["args"].items():
        if (labels >= 0).any():
            loss = loss + F.cross_entropy(out["args"][_key(*key)], labels,
                                          ignore_index=-100)
    for k in (0, 1):  # first and last word of the search text
        if (target["span"][:, k] >= 0).any():
            loss = loss + F.cross_entropy(
                out["span"][:, k], target["span"][:, k], ignore_index=-100)
    has_list = target["list_key"] >= 0
    if has_list.any():
        mask = batch["photo_mask"] * has_list[:, None]  # (B, U)
        bce = F.binary_cross_entropy_with_logits(
            out["photos"], target["list_photos"], reduction="none",
            pos_weight=torch.tensor(POSITIVE_WEIGHT))
        loss = loss + LIST_WEIGHT * (bce * mask).sum() / mask.sum().clamp(min=1)
    return loss
