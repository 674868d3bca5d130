"""The chapter's runs: the generated clone benchmark, the fine-tuning lineage, structure-only
pairs of transformer families, the reproduction check and the widget's cheap re-run."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np
import torch
from sklearn.metrics import roc_auc_score
from torch import nn

from icml26.common import progress, resolve_device

from .baselines import aligned_cosine, output_cosine, state_dict_jaccard
from .clones import CloneSpec, apply_clone, clone_specs
from .config import CloneConfig
from .detector import balanced_accuracy, calibrate_threshold, clone_scores, fingerprint, probe_inputs
from .graph import normalised_graph, wl_similarity
from .models import DigitsData, accuracy, load_digits_halves, make_model, train_full_batch

SCORES = ("S", "S_G", "S_W", "B1", "B2", "B3")
SCORE_NAMES = {"S": "combined S (ours)", "S_G": "structure S_G (ours)", "S_W": "weights S_W (ours)",
               "B1": "B1 aligned cosine", "B2": "B2 key/shape Jaccard", "B3": "B3 output cosine"}


@dataclass
class ZooModel:
    """One model of the benchmark: its architecture, the base it derives from, how."""

    name: str
    arch: str
    base: int  # index of the independently trained base it derives from
    op: str  # 'base' or a clone operation name
    clone_type: str  # 'base', 'T1', 'T2', 'T3'
    model: nn.Module


@dataclass
class BenchmarkResult:
    config: CloneConfig
    zoo: list[ZooModel]
    pairs: list[dict] = field(default_factory=list)  # one dict per scored pair
    theta: float = float("nan")
    base_acc: dict[str, float] = field(default_factory=dict)
    data: DigitsData | None = None

    def column(self, key: str, subset=None) -> np.ndarray:
        rows = self.pairs if subset is None else [p for p in self.pairs if subset(p)]
        return np.array([p[key] for p in rows])


def example_input(device) -> tuple:
    return (torch.zeros(2, 1, 8, 8, device=device),)


def _seed(*parts: int) -> int:
    return int(sum(p * 10 ** (3 * i) for i, p in enumerate(reversed(parts))))


def train_base(arch: str, k: int, data: DigitsData, config: CloneConfig, seed: int, device) -> nn.Module:
    """Independently trained base k: its own init seed, data half k % 2 and learning rate."""
    torch.manual_seed(_seed(seed, 1 + k, 7 if arch == "cnn" else 3))
    model = make_model(arch, config).to(device)
    half = k % 2
    return train_full_batch(model, data.x[half], data.y[half], config.base_steps, config.base_lrs[k % len(config.base_lrs)])


def build_zoo(config: CloneConfig, seed: int = 0, data: DigitsData | None = None) -> tuple[list[ZooModel], DigitsData, dict]:
    """Train the bases and derive every clone of every base (clone ops use the other half)."""
    device = resolve_device(config.device)
    data = data or load_digits_halves(device, seed)
    zoo, accs = [], {}
    specs = clone_specs(config)
    jobs = [(a, k) for a in config.archs for k in range(config.n_bases)]
    for arch, k in progress(jobs, desc="train bases + clones"):
        base = train_base(arch, k, data, config, seed, device)
        other = 1 - k % 2
        accs[f"{arch}{k}"] = accuracy(base, data.x[other], data.y[other])
        zoo.append(ZooModel(f"{arch}{k}", arch, k, "base", "base", base))
        gen = torch.Generator().manual_seed(_seed(seed, 50 + k, 5))
        for spec in specs:
            clone = apply_clone(base, spec, data.x[other], data.y[other], config, gen)
            zoo.append(ZooModel(f"{arch}{k}:{spec.name}", arch, k, spec.name, spec.clone_type, clone))
    return zoo, data, accs


def benchmark_pairs(zoo: list[ZooModel]) -> list[tuple[int, int, bool, str]]:
    """(i, j, is_clone, kind) index pairs: every clone with its base (clone); every clone and
    base with every other base of the same architecture (hard non-clone); bases and clones
    against the other architecture's base of the same index (easy non-clone)."""
    bases = {(z.arch, z.base): i for i, z in enumerate(zoo) if z.op == "base"}
    out = []
    for i, z in enumerate(zoo):
        if z.op != "base":
            out.append((bases[(z.arch, z.base)], i, True, z.clone_type))
        for (arch, k), b in bases.items():
            if arch == z.arch and k != z.base and (z.op != "base" or k > z.base):
                out.append((b, i, False, "same-arch"))
            elif arch != z.arch and k == z.base and (z.op != "base" or arch > z.arch):
                out.append((b, i, False, "cross-arch"))
    return out


def run_benchmark(config: CloneConfig, seed: int = 0, cache: dict | None = None) -> BenchmarkResult:
    """Build the zoo, fingerprint every model once, score every pair with the method and the
    baselines, and calibrate the threshold on a random `calib_frac` of the pairs.

    cache: traced graphs keyed by code and shapes; pass one dict to several seeds so that each
    architecture variant is exported once (the export does not depend on the weights)."""
    device = resolve_device(config.device)
    zoo, data, accs = build_zoo(config, seed)
    cache = {} if cache is None else cache
    ex = example_input(device)
    fps = [fingerprint(z.model, ex, cache, config.spectrum_k, config.shape_buckets)
           for z in progress(zoo, desc="fingerprints")]
    probes = probe_inputs(config.n_probes, device, torch.Generator().manual_seed(_seed(seed, 9)))
    res = BenchmarkResult(config, zoo, base_acc=accs, data=data)
    rng = np.random.default_rng(_seed(seed, 11))
    # region: score pairs
    for i, j, is_clone, kind in progress(benchmark_pairs(zoo), desc="score pairs"):
        s = clone_scores(fps[i], fps[j], config.lam, config.tau,
                         config.wl_iterations)
        a, b = zoo[i], zoo[j]
        s.update(B1=aligned_cosine(a.model, b.model),
                 B2=state_dict_jaccard(a.model, b.model),
                 B3=output_cosine(a.model, b.model, probes))
        res.pairs.append(dict(a=a.name, b=b.name, clone=is_clone, kind=kind,
                              # bases k use data half k % 2
                              other_data=a.base % 2 != b.base % 2,
                              op=b.op if is_clone else kind, arch=b.arch,
                              calib=bool(rng.random() < config.calib_frac), **s))
    calib = [p for p in res.pairs if p["calib"]]
    res.theta = calibrate_threshold(np.array([p["S"] for p in calib]),
                                    np.array([p["clone"] for p in calib]))
    # endregion
    return res


def auc(res: BenchmarkResult, key: str, negatives: str | None = None) -> float:
    """ROC-AUC of score `key` for clones against non-clones (all, or one `kind` of them; "hard":
    same-architecture bases trained independently on the other data half, and their clones)."""
    if negatives == "hard":
        rows = [p for p in res.pairs if p["clone"] or (p["kind"] == "same-arch" and p["other_data"])]
    else:
        rows = [p for p in res.pairs if p["clone"] or negatives is None or p["kind"] == negatives]
    return float(roc_auc_score([p["clone"] for p in rows], [p[key] for p in rows]))


def combination_sweep(res: BenchmarkResult, lams=(0.0, 0.05, 0.1, 0.25, 0.5, 0.75, 1.0)) -> list[dict]:
    """Diagnostic (not part of the method): ROC-AUC of S_lam = lam S_G + (1 - lam) S_W over all
    pairs and against same-architecture non-clones, for each lam; lam = 0.5 is the detector's."""
    lams = tuple(float(x) for x in lams)
    if not lams or any(not 0.0 <= x <= 1.0 for x in lams):
        raise ValueError(f"every lam must lie in [0, 1], got {lams}")
    y = np.array([p["clone"] for p in res.pairs])
    hard = np.array([p["clone"] or p["kind"] == "same-arch" for p in res.pairs])
    sg, sw = res.column("S_G"), res.column("S_W")
    rows = []
    for lam in lams:
        s = lam * sg + (1 - lam) * sw
        rows.append({"lam": lam, "AUC all pairs": float(roc_auc_score(y, s)),
                     "AUC vs same-arch": float(roc_auc_score(y[hard], s[hard]))})
    return rows


def level_facts(res: BenchmarkResult) -> dict[str, float]:
    """Why S_G alone scores a low AUC here: the share of clones and of same-architecture
    non-clones whose graphs are identical (S_G = 1), and whether S_W alone already separates
    the cross-architecture pairs (the only negatives S_G can recognise)."""
    clones = [p for p in res.pairs if p["clone"]]
    same = [p for p in res.pairs if p["kind"] == "same-arch"]
    cross = [p for p in res.pairs if p["kind"] == "cross-arch"]
    return {
        "clones with S_G = 1": float(np.mean([p["S_G"] > 1 - 1e-9 for p in clones])),
        "same-arch non-clones with S_G = 1": float(np.mean([p["S_G"] > 1 - 1e-9 for p in same])),
        "min S_W over clones": float(min(p["S_W"] for p in clones)),
        "max S_W over cross-arch non-clones": float(max(p["S_W"] for p in cross)) if cross else float("nan"),
    }


def summary_table(res: BenchmarkResult) -> list[dict]:
    """Mean of every score per clone operation (and per non-clone kind), in benchmark order."""
    ops = list(dict.fromkeys(p["op"] for p in res.pairs))
    rows = []
    for op in ops:
        sel = [p for p in res.pairs if p["op"] == op]
        rows.append({"pair": op, "type": sel[0]["kind"], "n": len(sel),
                     **{k: float(np.mean([p[k] for p in sel])) for k in SCORES}})
    return rows


@dataclass
class LineageResult:
    arch: str
    steps: np.ndarray
    scores: dict[str, np.ndarray]  # S_W, S, B1 along the trajectory
    acc_new: np.ndarray  # accuracy on the fine-tuning half


def run_lineage(config: CloneConfig, arch: str = "mlp", seed: int = 0, data: DigitsData | None = None,
                steps: tuple[int, ...] | None = None, base: nn.Module | None = None,
                cache: dict | None = None) -> LineageResult:
    """Score checkpoints along one fine-tuning trajectory of base 0 (Adam on the other half,
    lr `finetune_lr`) against the base: S_W, S and the aligned baseline B1. Pass `base` (the
    zoo's base 0, trained identically) to skip retraining it."""
    device = resolve_device(config.device)
    data = data or load_digits_halves(device, seed)
    steps = tuple(sorted(config.lineage_steps if steps is None else steps))
    if not steps or steps[0] < 0:
        raise ValueError(f"lineage steps must be non-negative, got {steps}")
    base = base if base is not None else train_base(arch, 0, data, config, seed, device)
    ex = example_input(device)
    cache = {} if cache is None else cache
    f0 = fingerprint(base, ex, cache, config.spectrum_k, config.shape_buckets)
    model = copy.deepcopy(base)
    opt = torch.optim.Adam(model.parameters(), lr=config.finetune_lr)
    x, y = data.x[1], data.y[1]
    out = {"S_W": [], "S": [], "B1": []}
    acc, done = [], 0
    for target in progress(steps, desc=f"lineage {arch}"):
        # region: lineage step
        model.train()
        for _ in range(target - done):  # fine-tune up to the next checkpoint
            opt.zero_grad(set_to_none=True)
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        done = target
        model.eval()
        s = clone_scores(f0, fingerprint(model, ex, cache, config.spectrum_k,
                                         config.shape_buckets),
                         config.lam, config.tau, config.wl_iterations)
        out["S_W"].append(s["S_W"])
        out["S"].append(s["S"])
        out["B1"].append(aligned_cosine(base, model))
        # endregion
        acc.append(accuracy(model, x, y))
    return LineageResult(arch, np.array(steps), {k: np.array(v) for k, v in out.items()}, np.array(acc))


def tiny_transformer(family: str, seed: int = 0) -> nn.Module:
    """A randomly initialised tiny model of a `transformers` family (no download)."""
    import transformers as tf

    torch.manual_seed(seed)
    common = dict(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                  max_position_embeddings=32)
    if family == "bert":
        return tf.BertModel(tf.BertConfig(**common)).eval()
    if family == "roberta":
        return tf.RobertaModel(tf.RobertaConfig(**common, pad_token_id=1)).eval()
    if family == "distilbert":
        return tf.DistilBertModel(tf.DistilBertConfig(vocab_size=64, dim=32, n_layers=2, n_heads=2, hidden_dim=64,
                                                      max_position_embeddings=32)).eval()
    if family == "gpt2":
        return tf.GPT2Model(tf.GPT2Config(vocab_size=64, n_embd=32, n_layer=2, n_head=2, n_positions=32,
                                          use_cache=False, bos_token_id=0, eos_token_id=0)).eval()
    raise ValueError(f"unknown family {family!r}; valid: bert, roberta, distilbert, gpt2")


def structure_matrix(config: CloneConfig, seed: int = 0) -> dict | None:
    """S_G between the normalised graphs of the tiny transformer families and our MLP/CNN
    (structure only: random weights). None when `transformers` is not installed."""
    if not config.hf_families:
        return None
    try:
        import transformers  # noqa: F401
    except ImportError:
        return None
    names, graphs = [], []
    ids = (torch.arange(8).unsqueeze(0) % 64,)  # (1, 8) token ids
    for fam in progress(config.hf_families, desc="export transformers"):
        graphs.append(normalised_graph(tiny_transformer(fam, seed), ids, config.shape_buckets).graph)
        names.append(fam)
    for arch in config.archs:
        graphs.append(normalised_graph(make_model(arch, config), example_input("cpu"), config.shape_buckets).graph)
        names.append(arch)
    n = len(names)
    mat = np.array([[wl_similarity(graphs[i], graphs[j], config.wl_iterations) for j in range(n)] for i in range(n)])
    return {"names": names, "matrix": mat, "graphs": dict(zip(names, graphs))}


@dataclass
class SeedRun:
    """One seed of the experiment: the benchmark and the fine-tuning lineages."""

    seed: int
    bench: BenchmarkResult
    lineages: list[LineageResult]


def run_experiment(config: CloneConfig, seed: int = 0, device=None, keep: dict | None = None) -> dict:
    """The chapter's experiment: `run_seeds` (the benchmark and the lineages, `config.n_seeds`
    independently trained seeds), reduced to plain data: {"seeds", "figures": one dict of
    `claims.seed_figures` per seed, "base_acc": per seed, base name -> held-out accuracy}.

    keep: when a dict is given, the runs (models, pairs, lineages) are stored in it under "runs"
    for the page's plots and controls (models are not plain data)."""
    from dataclasses import replace

    from .claims import seed_figures

    device = resolve_device("auto" if device is None else device)
    runs = run_seeds(replace(config, device=str(device)), seed)
    if keep is not None:
        keep["runs"] = runs
    return {"seeds": [r.seed for r in runs], "figures": [seed_figures(r.bench, r.lineages) for r in runs],
            "base_acc": [dict(r.bench.base_acc) for r in runs]}


def run_seeds(config: CloneConfig, seed: int = 0) -> list[SeedRun]:
    """The benchmark and the lineages for seeds seed, seed + 1, ... (`config.n_seeds` of them):
    every base retrained, every clone re-derived, the threshold re-calibrated per seed. The
    first seed's run is the one the chapter's figures show."""
    cache: dict = {}
    runs = []
    for s in range(seed, seed + config.n_seeds):
        bench = run_benchmark(config, s, cache)
        bases = {z.arch: z.model for z in bench.zoo if z.op == "base" and z.base == 0}
        lineages = [run_lineage(config, a, seed=s, data=bench.data, base=bases[a], cache=cache) for a in config.archs]
        runs.append(SeedRun(s, bench, lineages))
    return runs


@dataclass
class ExploreResult:
    steps: np.ndarray
    prune: float
    scores: dict[str, np.ndarray]


def explore_decay(config: CloneConfig, base: nn.Module, data: DigitsData, max_steps: int = 200,
                  prune: float = 0.0, n_points: int = 6) -> ExploreResult:
    """The widget's cheap re-run: fine-tune `base` for up to `max_steps` steps (then
    magnitude-prune at rate `prune` if > 0) and score each checkpoint against the base."""
    from .clones import magnitude_prune

    if max_steps < 1:
        raise ValueError(f"max_steps must be >= 1, got {max_steps}")
    steps = np.unique(np.linspace(0, max_steps, n_points).astype(int))
    arch = "cnn" if any(isinstance(m, nn.Conv2d) for m in base.modules()) else "mlp"
    lin = run_lineage(config, arch, data=data, steps=tuple(int(s) for s in steps), base=base)
    if prune > 0:
        ex = example_input(next(base.parameters()).device)
        f0 = fingerprint(base, ex)
        pruned = magnitude_prune(base, prune)
        s = clone_scores(f0, fingerprint(pruned, ex), config.lam, config.tau, config.wl_iterations)
        lin.scores["pruned S"] = np.full(len(steps), s["S"])
    return ExploreResult(lin.steps, prune, lin.scores)
