"""The chapter's experiment: KSKT vs the parameter-matched plain Qwen3 on the generated corpus,
the stream probes (the paper's Table 3 analysis), the reproduction check and the widget's re-runs."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from transformers import Qwen3ForCausalLM

from icml26.common import Timer, resolve_device

from .config import KSKTConfig
from .data import (ANSWER0, REFUSE0, SLOT_POS, USER_CLOSE_POS, VOCAB_SIZE, RolePlayData, make_roleplay_data,
                   model_inputs)
from .model import STREAMS, KSKTForCausalLM, KSKTSpec, build_kskt, tiny_qwen3_config
from .train import TrainLog, eval_batch_size, train_model

PROBES = ("self->style", "other->style", "other->topic", "self->topic")
POOLS = ("prompt", "all", "late")


def n_params(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def spec_of(cfg: KSKTConfig) -> KSKTSpec:
    return KSKTSpec(cfg.kskt_every, tuple(cfg.budgets), cfg.n_experts, cfg.top_k, cfg.n_ctx, cfg.max_positions,
                    cfg.context_source)


def build_models(cfg: KSKTConfig, seed: int, device: torch.device) -> tuple[KSKTForCausalLM, Qwen3ForCausalLM]:
    """KSKT and the plain Qwen3 whose intermediate size is raised until it has at least as many
    parameters (iso-parameter baseline); both tie or untie their embeddings alike (cfg.tie_embeddings).
    Random init, nothing downloaded (unless cfg.pretrained)."""
    if cfg.pretrained is not None:
        kskt = build_kskt(spec=spec_of(cfg), pretrained=cfg.pretrained, seed=seed).to(device)
        base = Qwen3ForCausalLM.from_pretrained(cfg.pretrained, use_cache=False).to(device)
        return kskt, base  # full preset: the same checkpoint, fine-tuned plainly (the paper's "+FT")
    qcfg = lambda inter: tiny_qwen3_config(VOCAB_SIZE, cfg.hidden_size, cfg.num_layers, cfg.num_heads,  # noqa: E731
                                           cfg.num_kv_heads, cfg.head_dim, inter, cfg.max_positions,
                                           cfg.tie_embeddings)
    kskt = build_kskt(qcfg(cfg.intermediate_size), spec_of(cfg), seed=seed)
    target = n_params(kskt)
    torch.manual_seed(seed)
    p0 = n_params(Qwen3ForCausalLM(qcfg(1)))
    inter = 1 + -(-(target - p0) // (3 * cfg.hidden_size * cfg.num_layers))  # each layer's MLP has 3 d I weights
    torch.manual_seed(seed)
    base = Qwen3ForCausalLM(qcfg(inter))
    return kskt.to(device), base.to(device)


@torch.no_grad()
def stream_features(model: KSKTForCausalLM, data: RolePlayData, pool: str = "prompt",
                    batch_size: int = 500) -> dict[str, np.ndarray]:
    """Mean-pooled O_self and O_other of the last KSKT block: (N, d) each.

    pool="prompt" averages the positions before the first response token (their inputs hold no
    answer; the criterion); pool="all" averages every position, including r1/r2 whose INPUT tokens
    are the persona's style marker and the answer, so any stream can read the labels off them there;
    pool="late" (a diagnostic) averages the prompt positions that come after both spans (`</user>`,
    `<resp>`), the only prompt positions at which both the persona and the whole user request are
    causally visible (the role and user tokens before them cannot see the user's later tokens).
    """
    if pool not in POOLS:
        raise ValueError(f"pool must be one of {POOLS}, got {pool!r}")
    t_start = USER_CLOSE_POS if pool == "late" else 0
    t_end = None if pool == "all" else SLOT_POS["r1"]
    model.eval()
    feats = {"self": [], "other": []}
    batch_size = eval_batch_size(model, data.input_ids.shape[1], batch_size)
    for i in range(0, len(data), batch_size):
        ids = data.input_ids[i:i + batch_size]
        aux = model(ids, **model_inputs(ids), force_system2=True).aux[-1]
        feats["self"].append(aux["o_self"][:, t_start:t_end].mean(1).float().cpu())  # (B, d)
        feats["other"].append(aux["o_other"][:, t_start:t_end].mean(1).float().cpu())
    return {k: torch.cat(v).numpy() for k, v in feats.items()}


def probe_accuracies(feats: dict[str, np.ndarray], data: RolePlayData, seed: int = 0) -> dict[str, float]:
    """Linear probes (logistic regression, fit on one half, scored on the other) from each stream
    to the persona style and to the user topic: the 2 x 2 cross-dissociation of Table 3."""
    n = len(data)
    perm = np.random.default_rng(seed).permutation(n)
    tr, te = perm[: n // 2], perm[n // 2:]
    targets = {"style": data.style.cpu().numpy(), "topic": data.topic.cpu().numpy()}
    out = {}
    for name in PROBES:
        stream, target = name.split("->")
        x, y = feats[stream], targets[target]
        clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
        clf.fit(x[tr], y[tr])
        out[name] = float(clf.score(x[te], y[te]))
    return out


def variance_share(x: np.ndarray, labels: np.ndarray) -> float:
    """Share of the total variance of features x (N, d) explained by the class means of `labels`
    (between-class sum of squares / total sum of squares): 0 = no trace of the label, 1 = nothing else."""
    x, labels = np.asarray(x, dtype=float), np.asarray(labels)
    if x.ndim != 2 or labels.shape != (x.shape[0],):
        raise ValueError(f"need x (N, d) and labels (N,), got {x.shape} and {labels.shape}")
    mu = x.mean(0)
    total = float(((x - mu) ** 2).sum())
    between = sum(float(((x[labels == c].mean(0) - mu) ** 2).sum()) * int((labels == c).sum()) for c in np.unique(labels))
    return between / total if total > 0 else 0.0


@torch.no_grad()
def alignment_diagnostic(model: KSKTForCausalLM, data: RolePlayData, batch_size: int = 500) -> dict[str, dict]:
    """Do L_cons / L_und carry item-specific content? (last KSKT block, every item of `data`).

    For each stream s with target c (self: R_bar, other: U_bar): `shared` = mean cos(c_i, mean_j c_j)
    (how much of each item's target is the corpus-wide direction); `own` = 1 - cos(mean_t O_s, c_i),
    the loss as trained; `other_item` = the same against another item's target (c rolled by one);
    `gamma` = the learned span bias of that stream in each block; `share_style`, `share_topic` =
    `variance_share` of the prompt-pooled stream features explained by the persona style and the
    user topic. own ~= other_item means the loss is met without any item-specific content.
    """
    model.eval()
    o, bars = {"self": [], "other": []}, {"self": [], "other": []}
    for i in range(0, len(data), batch_size):
        ids = data.input_ids[i:i + batch_size]
        out = model(ids, **model_inputs(ids), force_system2=True)
        o["self"].append(out.aux[-1]["o_self"].mean(1))  # (B, d), as in L_cons
        o["other"].append(out.aux[-1]["o_other"].mean(1))
        bars["self"].append(out.r_bar)
        bars["other"].append(out.u_bar)
    feats = stream_features(model, data)
    labels = {"style": data.style.cpu().numpy(), "topic": data.topic.cpu().numpy()}
    res = {}
    for s in STREAMS:
        m, c = torch.cat(o[s]), torch.cat(bars[s])  # (N, d) each
        cos = torch.nn.functional.cosine_similarity
        res[s] = {"shared": float(cos(c, c.mean(0, keepdim=True).expand_as(c), dim=-1).mean()),
                  "own": float((1 - cos(m, c, dim=-1)).mean()),
                  "other_item": float((1 - cos(m, c.roll(1, dims=0), dim=-1)).mean()),
                  "gamma": [round(float(b.dsaa.gamma[s]), 3) for b in model.blocks],
                  "share_style": variance_share(feats[s], labels["style"]),
                  "share_topic": variance_share(feats[s], labels["topic"])}
    return res


def balance_grad_norm(model: KSKTForCausalLM, data: RolePlayData) -> float:
    """Norm of d L_bal / d (router weights) on one batch: > 0 iff the balance loss can train."""
    ids = data.input_ids[:64]
    model.zero_grad(set_to_none=True)
    out = model(ids, **model_inputs(ids), force_system2=True)
    torch.stack([a["balance"] for a in out.aux]).mean().backward()
    g = sum(float(b.samoe.router.weight.grad.norm()) for b in model.blocks)
    model.zero_grad(set_to_none=True)
    return g


@dataclass
class SeedResult:
    seed: int
    log_kskt: TrainLog
    log_base: TrainLog
    probes: dict[str, float]
    probes_all: dict[str, float]
    balance_grad: float
    params: dict[str, int]
    seconds: dict[str, float]
    models: tuple | None = None  # (kskt, baseline), kept for the first seed only
    probes_late: dict[str, float] | None = None  # diagnostic pooling (see `stream_features`), not the criterion


@dataclass
class ExperimentResult:
    config: KSKTConfig
    seeds: list[SeedResult] = field(default_factory=list)
    test: RolePlayData | None = None

    def final(self, which: str, slot: str) -> np.ndarray:
        logs = [s.log_kskt if which == "kskt" else s.log_base for s in self.seeds]
        return np.array([lg.slot_acc[-1][slot] for lg in logs])

    def probe(self, name: str, pool: str = "prompt") -> np.ndarray:
        if pool not in POOLS:
            raise ValueError(f"pool must be one of {POOLS}, got {pool!r}")
        return np.array([{"prompt": s.probes, "all": s.probes_all, "late": s.probes_late}[pool][name]
                         for s in self.seeds])


def run_seeds(cfg: KSKTConfig, seed: int = 0) -> ExperimentResult:
    """For each seed in cfg.seeds (offset by `seed`): fresh data, KSKT and the matched baseline
    trained with the same batches and schedule, final slot accuracies, probes, balance gradient."""
    device = resolve_device(cfg.device)
    res = ExperimentResult(cfg)
    for k, s in enumerate(cfg.seeds):
        s = int(s) + int(seed)
        train = make_roleplay_data(cfg.n_train, cfg.conflict_rate, seed=1000 + s).to(device)
        test = make_roleplay_data(cfg.n_test, cfg.conflict_rate, seed=2000 + s).to(device)
        kskt, base = build_models(cfg, s, device)
        with Timer(device) as tk:
            log_k = train_model(kskt, train, test, cfg, seed=s, desc=f"KSKT seed {s}")
        with Timer(device) as tb:
            log_b = train_model(base, train, test, cfg, seed=s, desc=f"Qwen3 seed {s}")
        probes = probe_accuracies(stream_features(kskt, test), test, seed=s)
        probes_all = probe_accuracies(stream_features(kskt, test, pool="all"), test, seed=s)
        probes_late = probe_accuracies(stream_features(kskt, test, pool="late"), test, seed=s)
        res.seeds.append(SeedResult(s, log_k, log_b, probes, probes_all, balance_grad_norm(kskt, test),
                                    {"kskt": n_params(kskt), "baseline": n_params(base)},
                                    {"kskt": tk.seconds, "baseline": tb.seconds},
                                    (kskt, base) if k == 0 else None, probes_late))
        if k == 0:
            res.test = test
    return res


def results_of(res: ExperimentResult) -> dict:
    """An `ExperimentResult` as plain data: what the ledger and the page's tables read.

    {"seeds": [...], "per_seed": [{"seed", "acc": {"kskt": final slot accuracies, "baseline": ...},
    "curves": {"kskt"/"baseline": {"eval_steps", "slot_acc", "steps", "loss"}}, "probes": {pool: {probe:
    acc}}, "balance_grad", "params", "seconds"}]}. The C1 probes read the "late" pool (positions
    that see both spans, see `stream_features`); "prompt" and "all" are diagnostics."""
    def curves(lg: TrainLog) -> dict:
        return {"eval_steps": list(lg.eval_steps), "slot_acc": [dict(a) for a in lg.slot_acc],
                "steps": list(lg.steps), "loss": list(lg.loss)}
    return {"seeds": [s.seed for s in res.seeds],
            "per_seed": [{"seed": s.seed, "acc": {"kskt": dict(s.log_kskt.slot_acc[-1]),
                                                  "baseline": dict(s.log_base.slot_acc[-1])},
                          "curves": {"kskt": curves(s.log_kskt), "baseline": curves(s.log_base)},
                          "probes": {"prompt": dict(s.probes), "all": dict(s.probes_all), "late": dict(s.probes_late)},
                          "balance_grad": float(s.balance_grad), "params": dict(s.params),
                          "seconds": dict(s.seconds)} for s in res.seeds]}


def run_experiment(config: KSKTConfig, seed: int = 0, device=None, keep: dict | None = None) -> dict:
    """The chapter's experiment (`run_seeds`: every seed of `config.seeds`, offset by `seed`, trains
    KSKT and the matched baseline afresh), returned as plain data (`results_of`).

    keep: when a dict is given, the `ExperimentResult` (the first seed's trained models, the test
    data) is stored in it under "result" for the page's plots and controls."""
    from dataclasses import replace

    device = resolve_device("auto" if device is None else device)
    res = run_seeds(replace(config, device=str(device)), seed)
    if keep is not None:
        keep["result"] = res
    return results_of(res)


@torch.no_grad()
def gate_sweep(model: KSKTForCausalLM, ids: torch.Tensor, alphas) -> dict[str, np.ndarray]:
    """For one prompt (1, T), the r2 probabilities of 'answer the user' (answer:<topic>) and
    'refuse in character' (the summed refusal tokens) when every KSKT gate is forced to alpha."""
    if ids.dim() != 2 or ids.shape[0] != 1:
        raise ValueError(f"gate_sweep takes one prompt of shape (1, T), got {tuple(ids.shape)}")
    inputs = model_inputs(ids)
    pos = SLOT_POS["r2"] - 1
    answer, refuse = [], []
    model.eval()
    for a in alphas:
        p = torch.softmax(model(ids, **inputs, gate_override=float(a), force_system2=True).logits[0, pos], -1)
        answer.append(float(p[ANSWER0:ANSWER0 + 6].sum()))
        refuse.append(float(p[REFUSE0:REFUSE0 + 4].sum()))
    return {"alpha": np.asarray(alphas, dtype=float), "answer": np.array(answer), "refuse": np.array(refuse)}


@torch.no_grad()
def greedy_response(model: KSKTForCausalLM, ids: torch.Tensor, gate_override: float | None = None) -> list[int]:
    """Greedy decoding of r1 r2 r3 from the prompt (the first 14 tokens of `ids`, shape (1, T)).
    No KV cache: each step re-runs the prompt plus what was generated."""
    seq = ids[:, :SLOT_POS["r1"]].clone()
    for _ in range(3):
        logits = model(seq, **model_inputs(seq), gate_override=gate_override, force_system2=True).logits
        nxt = logits[:, -1].argmax(-1, keepdim=True)
        seq = torch.cat([seq, nxt], dim=1)
    return seq[0, SLOT_POS["r1"]:].tolist()


@torch.no_grad()
def gate_map(model: KSKTForCausalLM, ids: torch.Tensor) -> np.ndarray:
    """alpha of every KSKT block for each token: (n_blocks, B, T)."""
    out = model(ids, **model_inputs(ids), force_system2=True)
    return torch.stack([a["alpha"].squeeze(-1) for a in out.aux]).cpu().numpy()
