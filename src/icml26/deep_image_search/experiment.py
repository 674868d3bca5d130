"""Runs and metrics of the DeepImageSearch chapter (the claims are decided in `claims.py`).

Metrics (paper, Sec. "Evaluation"): per query EM = 1[S = G] and F1 = 2|S & G| / (|S| + |G|), macro-averaged,
overall / intra / inter; direct embedding retrieval also gets Recall@3 = |top3 & G| / |G|.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from icml26.common import progress, resolve_device

from .agent import ScriptedPlanner, Trajectory, direct_retrieval, make_policy, run_agent, run_agents
from .album import INTER, INTRA, Album, Query, make_benchmark
from .learned import AgreementProbe, Recorder, TracePolicy, train_trace_policy
from .retriever import MiniCLIP, train_perception
from .tools import ToolCallRejected, Toolbox, parse_tool_call

ARMS = ("direct (oracle k)", "agent w/o FilterMetadata", "agent w/o explicit memory", "agent")
#: the tool sets an agent runs with: arm suffix -> (disabled tools, explicit memory)
TOOL_SETS = {" w/o FilterMetadata": (("filter_metadata",), True), " w/o explicit memory": ((), False),
             "": ((), True)}
#: with the learned policy, its teacher (the scripted planner) runs beside it on the same queries
TEACHER_ARMS = tuple(f"scripted teacher{suffix}" for suffix in TOOL_SETS)
#: the teacher's traces come from albums drawn with this offset to the benchmark seed (never evaluated)
TRAINING_ALBUMS_OFFSET = 1_000_003

def exact_match(pred, target) -> float:
    """EM = 1[S = G] on canonical (deduplicated) sets."""
    return float(set(pred) == set(target))


def f1_score(pred, target) -> float:
    """F1 = 2|S & G| / (|S| + |G|); 1 when both sets are empty."""
    s, g = set(pred), set(target)
    if not s and not g:
        return 1.0
    return 2 * len(s & g) / (len(s) + len(g))


def recall_at_k(ranked, target, k: int = 3) -> float:
    """|top-k & G| / |G| (`ranked` in rank order)."""
    if k < 1 or not target:
        raise ValueError("k must be >= 1 and the target set non-empty")
    return len(set(list(ranked)[:k]) & set(target)) / len(set(target))


@dataclass
class Results:
    config: object
    records: pd.DataFrame  # one row per (seed, arm, query)
    trajectories: dict  # (seed, query index) -> Trajectory of the full agent
    albums: dict  # seed -> list[Album]
    queries: dict  # seed -> list[Query]
    model: MiniCLIP
    perception_losses: list
    seconds: float
    perception: dict | None = None  # seed -> digit accuracy of that seed's perception model
    imitation: dict | None = None  # seed -> {tool set: the learned policy's agreement with its teacher}
    policy_losses: dict | None = None  # seed -> the learned policy's imitation loss per step
    policy: object = None  # the first seed's agent policy (the page's Explore reruns it)

    def table(self, by: str = "arm") -> pd.DataFrame:
        """Macro EM/F1 per seed, then mean over seeds; by='arm' or ['arm', 'kind']."""
        keys = [by] if isinstance(by, str) else list(by)
        per_seed = self.records.groupby(["seed"] + keys)[["EM", "F1"]].mean()
        return per_seed.groupby(keys).mean()


def scripted(config, suffix: str) -> ScriptedPlanner:
    """The scripted planner for one tool set (`TOOL_SETS`)."""
    disabled, memory = TOOL_SETS[suffix]
    return ScriptedPlanner(config.radius_km, config.window_days, "filter_metadata" not in disabled,
                           config.view_limit, use_memory=memory)


def _run_arm(config, policy, suffix: str, album: Album, model: MiniCLIP, perceived: tuple,
             query: Query) -> Trajectory:
    """One agent on one query with the tool set `suffix`; `perceived` = (embeddings, predictions)."""
    disabled, memory = TOOL_SETS[suffix]
    box = Toolbox(album, model, *perceived, config.view_limit, disabled, explicit_memory=memory)
    return run_agent(policy, box, query, config.max_steps, config.memory_window)


def _perceive(model, albums, device) -> dict:
    """user -> (image embeddings, predicted attributes) of that user's album, computed once."""
    out = {}
    for album in albums:
        imgs = album.images.to(device)
        out[album.user] = (model.embed_album(imgs), model.predict_attributes(imgs))
    return out


def teacher_traces(config, seed: int, model: MiniCLIP, device) -> list:
    """The scripted planner's (context, call) pairs on training albums drawn for this seed alone
    (offset `TRAINING_ALBUMS_OFFSET`), in every tool set: what the learned policy imitates."""
    albums, queries = make_benchmark(config, seed + TRAINING_ALBUMS_OFFSET)
    cache = _perceive(model, albums, device)
    examples = []
    for suffix in TOOL_SETS:
        recorder = Recorder(scripted(config, suffix))
        for q in queries:
            _run_arm(config, recorder, suffix, albums[q.user], model, cache[q.user], q)
        examples += recorder.examples
    return examples


def fit_policy(config, seed: int, model: MiniCLIP, device):
    """The seed's learned policy: trained afresh on its own teacher traces (rule 1)."""
    net, losses = train_trace_policy(teacher_traces(config, seed, model, device), config.policy_steps, seed,
                                     config.policy_hidden, config.policy_lr)
    return TracePolicy(net, config.view_limit), losses


def run_seed(config, seed: int, model: MiniCLIP, device):
    """All arms on one seed's MiniAlbum benchmark. Returns the rows, the full agent's trajectories,
    the albums, the queries, and a dict with the agent's policy and (learned policy only) its
    agreement with the teacher per tool set and its imitation losses."""
    albums, queries = make_benchmark(config, seed)
    kind = config.policy.split(":")[0]
    imitation, losses = None, None
    if kind == "learned":
        learned_policy, losses = fit_policy(config, seed, model, device)
        policies = {suffix: learned_policy for suffix in TOOL_SETS}
    elif kind == "scripted":
        policies = {suffix: scripted(config, suffix) for suffix in TOOL_SETS}
    else:
        policy = make_policy(config.policy, config)
        policies = {suffix: policy for suffix in TOOL_SETS}
    probes = {suffix: AgreementProbe(scripted(config, suffix)) for suffix in TOOL_SETS} if kind == "learned" else {}
    rows, trajs = [], {}
    cache = _perceive(model, albums, device)
    by_user = {}
    for qi, q in enumerate(queries):
        by_user.setdefault(q.user, []).append(qi)
    for user, idx in by_user.items():
        album, (emb, pred) = albums[user], cache[user]
        qs = [queries[i] for i in idx]
        oracle = direct_retrieval(model, album, qs, [len(q.targets) for q in qs], emb)
        ranked = direct_retrieval(model, album, qs, 3, emb)
        for qi, q, s, top3 in zip(idx, qs, oracle, ranked):
            rows.append(dict(seed=seed, arm=ARMS[0], query=qi, kind=q.kind, EM=exact_match(s, q.targets),
                             F1=f1_score(s, q.targets), R3=recall_at_k(top3, q.targets)))
    arms = [(f"agent{suffix}", policies[suffix], suffix) for suffix in TOOL_SETS]
    arms += [(f"scripted teacher{suffix}", probes[suffix], suffix) for suffix in probes]
    for arm, pol, suffix in progress(arms, desc=f"agents (seed {seed})"):
        disabled, memory = TOOL_SETS[suffix]
        boxes = [Toolbox(albums[q.user], model, *cache[q.user], config.view_limit, disabled,
                         explicit_memory=memory) for q in queries]
        for qi, (q, traj) in enumerate(zip(queries, run_agents(pol, boxes, queries, config.max_steps,
                                                                config.memory_window))):
            rows.append(dict(seed=seed, arm=arm, query=qi, kind=q.kind, EM=exact_match(traj.answer, q.targets),
                             F1=f1_score(traj.answer, q.targets), steps=len(traj.steps), rejected=traj.rejected))
            if arm == "agent":
                trajs[(seed, qi)] = traj
    if probes:  # the learned policy asked every call its teacher made on these queries
        imitation = {suffix.strip() or "all tools": p.agreement(policies[suffix]) for suffix, p in probes.items()}
    return rows, trajs, albums, queries, {"policy": policies[""], "imitation": imitation, "losses": losses}


def run_results(config, seed: int = 0, device=None) -> Results:
    """Every seed's run: each benchmark seed trains its own perception stand-ins (on their own random
    photos) and draws its own albums and queries (rule 1: independently trained seeds).

    `seed` offsets the benchmark seeds (config.seeds + seed) so that SEED changes the whole run.
    `Results.model` is the first seed's perception model (the page's figures and widgets use it)."""
    start = time.time()
    device = resolve_device("auto" if device is None else device)
    if config.policy.startswith("openai"):
        make_policy(config.policy, config)  # fail fast on a missing endpoint, before minutes of training
    rows, trajs, albums, queries, perception, imitation, policy_losses = [], {}, {}, {}, {}, {}, {}
    first = None
    for s in config.seeds:
        model, losses = train_perception(config, s + seed, device)
        r, t, a, q, extra = run_seed(config, s + seed, model, device)
        rows += r
        trajs.update(t)
        albums[s + seed], queries[s + seed] = a, q
        perception[s + seed] = perception_accuracy(model, a)
        if extra["imitation"] is not None:
            imitation[s + seed], policy_losses[s + seed] = extra["imitation"], extra["losses"]
        if first is None:
            first = (model, losses, extra["policy"])
    res = Results(config, pd.DataFrame(rows), trajs, albums, queries, first[0], first[1], time.time() - start)
    res.perception = perception
    res.imitation, res.policy_losses = (imitation, policy_losses) if imitation else (None, None)
    res.policy = first[2]
    return res


def perception_accuracy(model: MiniCLIP, albums: list[Album]) -> float:
    """Rule 2's check of the perception stand-ins: accuracy of the predicted digit over every album
    photo of a seed (chance 0.1)."""
    hits, total = 0, 0
    for a in albums:
        pred = model.predict_attributes(a.images)["digit"].numpy()
        hits += int((pred == a.subject // 4).sum())
        total += len(a.subject)
    return hits / max(1, total)


def run_experiment(config, seed: int = 0, device=None, runs: list | None = None) -> dict:
    """The chapter's experiment behind the ledger, as plain data: `seeds`, `policy`, `records` (one
    row per seed, arm and query: EM, F1, Recall@3 for direct retrieval, steps), `perception_acc`
    (per seed), `verified` and `queries` (C3's counts per seed). `runs`, when given a list, receives
    the whole :class:`Results` (albums, trajectories, the first seed's model) for the page."""
    res = run_results(config, seed, device)
    if runs is not None:
        runs.append(res)
    valid, total = verified_queries(res)
    records = res.records.drop(columns=[c for c in ("rejected",) if c in res.records]).copy()
    records = records.astype(object).where(records.notna(), None)
    out = {"seeds": [int(s) for s in res.queries], "policy": config.policy,
           "records": records.to_dict("records"),
           "perception_acc": [float(res.perception[s]) for s in res.queries],
           "verified": valid, "queries": total, "seconds": res.seconds}
    if res.imitation:  # the learned policy's agreement with its teacher, per seed and tool set
        out["imitation"] = [{k: float(v) for k, v in res.imitation[s].items()} for s in res.queries]
    return out


def records_frame(results: dict) -> pd.DataFrame:
    """The plain results' records as a DataFrame."""
    return pd.DataFrame(results["records"])


def paired_scores(r: Results, arm: str, metric: str = "F1") -> tuple[np.ndarray, np.ndarray]:
    """Per-query `metric` of one arm, ordered by (seed, query) so that arms line up query by query;
    returns (scores, seed of each query)."""
    if arm not in ARMS + TEACHER_ARMS:
        raise ValueError(f"unknown arm {arm!r}; arms: {ARMS + TEACHER_ARMS}")
    records = records_frame(r) if isinstance(r, dict) else r.records
    rows = records[records.arm == arm].sort_values(["seed", "query"])
    return rows[metric].to_numpy(float), rows["seed"].to_numpy()


def per_seed(r: Results, arm: str, metric: str) -> list[float]:
    """Macro `metric` of one arm per seed (seed order)."""
    records = records_frame(r) if isinstance(r, dict) else r.records
    return records[records.arm == arm].groupby("seed")[metric].mean().tolist()


def verified_queries(r: Results) -> tuple[list[int], list[int]]:
    """C3's counts: per seed, how many generated queries pass `claims.verify_query`, and how many there are."""
    from .claims import verify_query

    valid, total = [], []
    for s, qs in r.queries.items():
        valid.append(sum(verify_query(r.albums[s][q.user], q) for q in qs))
        total.append(len(qs))
    return valid, total


def results_rows(r: Results) -> pd.DataFrame:
    """Overall / intra / inter EM and F1 per arm (ours) next to the paper's figures where we have them."""
    t = r.table(["arm", "kind"]).unstack("kind")
    overall = r.table("arm")
    paper = {ARMS[0]: "Recall@3 about 10-14 % (EM/F1 not available to us)",
             ARMS[1]: "ablation: metadata tools among the most important (numbers not available)",
             ARMS[2]: "ablation: explicit memory among the most important (numbers not available)",
             "agent": "EM 28.7, F1 55.0 (ImageSeeker + strongest MLLM)"}
    rows = []
    for arm in [a for a in ARMS + TEACHER_ARMS if a in overall.index]:
        rows.append({"arm": arm, "EM": f"{overall.loc[arm, 'EM']:.2f}", "F1": f"{overall.loc[arm, 'F1']:.2f}",
                     "F1 intra": f"{t.loc[arm, ('F1', INTRA)]:.2f}", "F1 inter": f"{t.loc[arm, ('F1', INTER)]:.2f}",
                     "paper (DISBench, 122 queries)": paper.get(arm, "- (our scripted planner)")})
    r3 = r.records[r.records.arm == ARMS[0]].groupby("seed")["R3"].mean().mean()
    rows.append({"arm": "direct, Recall@3", "EM": "-", "F1": f"R@3 = {r3:.2f}", "F1 intra": "-", "F1 inter": "-",
                 "paper (DISBench, 122 queries)": "about 0.10-0.14"})
    return pd.DataFrame(rows).set_index("arm")


HOSTILE = {
    "free text around the call": 'Sure! {"tool": "answer", "args": {"ids": [1]}}',
    "python code instead of JSON": "__import__('os').system('rm -rf /')",
    "unknown tool": '{"tool": "shell", "args": {"cmd": "ls"}}',
    "unknown argument": '{"tool": "image_search", "args": {"query": "red 7", "event_id": 3}}',
    "wrong type": '{"tool": "image_search", "args": {"query": "red 7", "top_k": "all"}}',
    "boolean as int": '{"tool": "image_search", "args": {"query": "red 7", "top_k": true}}',
    "NaN constant": '{"tool": "filter_metadata", "args": {"near": "clue", "radius_km": NaN}}',
    "ids out of the album": '{"tool": "answer", "args": {"ids": [999999]}}',
    "unsaved memory name": '{"tool": "view_photos", "args": {"ids": "event"}}',
    "bad memory name": '{"tool": "memory_save", "args": {"name": "../etc", "ids": [1]}}',
    "too many photos to view": '{"tool": "view_photos", "args": {"ids": [%s]}}' % ", ".join(map(str, range(40))),
}


def hostile_demo(r: Results) -> dict[str, str]:
    """Feed malformed or hostile model outputs to a fresh toolbox; each must be rejected with a reason."""
    seed = next(iter(r.albums))
    album = r.albums[seed][0]
    box = Toolbox(album, r.model, view_limit=r.config.view_limit)
    out = {}
    for name, text in HOSTILE.items():
        try:
            box.execute(parse_tool_call(text))
            out[name] = "ACCEPTED (bug)"
        except ToolCallRejected as err:
            out[name] = f"rejected: {err}"
    return out
