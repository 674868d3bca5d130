"""Training, evaluation and the reproduction check of the TAM chapter."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from icml26.common import progress, resolve_device, seed_everything

from .config import N_ANSWERS, TASKS, TAMConfig
from .data import build_vocab, make_videos, sample_queries, tokenize
from .model import Inductor, VideoLM, sample_frames

BUDGET_TABLE = {"counting": 0, "temporal": 1}  # task -> tier index into (tier_h, tier_l)
TEST_SEED, VAL_SEED = 123, 999  # the test clips (held-out templates) and the validation clips


def budget(task_idx: torch.Tensor) -> torch.Tensor:
    """Budget lookup c* -> tier: counting -> high-res tier H, temporal ->
    many-frame tier L."""
    table = torch.tensor([BUDGET_TABLE[t] for t in TASKS],
                         device=task_idx.device)
    return table[task_idx]


def train_inductor(c: TAMConfig, vocab, device, seed: int = 0, return_items: bool = False):
    """Cross-entropy on (query, task) pairs from the training templates; returns (model, held-out acc),
    and with `return_items` also the per-query correctness (0/1 list) on the held-out templates."""
    seed_everything(seed)
    rng = random.Random(seed)
    ind = Inductor(len(vocab), c.inductor_hidden).to(device)
    opt = torch.optim.AdamW(ind.parameters(), lr=c.lr)
    for _ in range(c.inductor_steps):
        tasks = [rng.randrange(len(TASKS)) for _ in range(c.batch)]
        ids, _ = tokenize(sample_queries(tasks, "train", rng), vocab, device=device)
        loss = F.cross_entropy(ind(ids), torch.tensor(tasks, device=device))
        opt.zero_grad()
        loss.backward()
        opt.step()
    ind.eval().requires_grad_(False)
    tasks = [i % len(TASKS) for i in range(400)]
    ids, _ = tokenize(sample_queries(tasks, "test", rng), vocab, device=device)
    with torch.no_grad():
        right = (ind(ids).argmax(1).cpu() == torch.tensor(tasks)).float()
    acc = right.mean().item()
    return (ind, acc, right.tolist()) if return_items else (ind, acc)


@dataclass
class Routing:
    """How a model picks (task head, tier, gate input) for a batch."""
    kind: str  # "inductor" | "oracle" | "fixed"

    def __call__(self, ind, ids, gold):
        if self.kind == "fixed":
            probs = F.one_hot(gold, len(TASKS)).float() * 0  # no Inductor: uninformative gate input
            return gold, torch.zeros_like(gold), probs  # baselines get the gold answer head (conservative)
        if self.kind == "oracle":
            probs = F.one_hot(gold, len(TASKS)).float()
            return gold, budget(gold), probs
        if self.kind == "inductor":
            with torch.no_grad():
                probs = torch.softmax(ind(ids), -1)  # (B, K)
            task = probs.argmax(1)
            return task, budget(task), probs
        raise ValueError(f"unknown routing {self.kind!r}; use 'inductor', 'oracle' or 'fixed'")


def head_loss(logits: list[torch.Tensor], task: torch.Tensor, answers: torch.Tensor) -> torch.Tensor:
    """Next-token CE analogue: cross-entropy of each sample under its task's answer head."""
    loss = 0.0
    for k, lg in enumerate(logits):
        m = task == k
        if m.any():
            loss = loss + F.cross_entropy(lg[m], answers[m].clamp(max=lg.shape[1] - 1), reduction="sum")
    return loss / task.numel()


def predict(logits: list[torch.Tensor], task: torch.Tensor) -> torch.Tensor:
    preds = torch.stack([lg.argmax(1) for lg in logits], 1)  # (B, K) answer of every head
    return preds.gather(1, task[:, None]).squeeze(1)


def batch(c: TAMConfig, vocab, n: int, gen, rng, device, split="train", tasks=None):
    tasks = torch.randint(0, len(TASKS), (n,), generator=gen, device=gen.device).to(device) if tasks is None else tasks
    video, answers = make_videos(tasks, c, gen)
    ids, lens = tokenize(sample_queries(tasks.tolist(), split, rng), vocab, device=device)
    return video, ids, lens, tasks, answers


@dataclass
class Training:
    """What the convergence rule did for one tower (see `TAMConfig`)."""
    losses: list  # training loss per step
    entropies: list  # mean gate entropy per step
    count_acc: list  # counting accuracy on the training batch per step (NaN when the batch has none)
    val_steps: list  # steps at which the validation accuracy was measured
    val_acc: list  # validation mean accuracy at those steps
    best_step: int  # the step whose weights are kept
    stopped_at: int  # the last step trained
    converged: bool  # True when the patience rule stopped it; False when it hit the cap `steps`


def converged_now(val_acc: list, patience: int, min_delta: float) -> bool:
    """The convergence rule: no improvement of at least `min_delta` over the
    best earlier value in the last `patience` evaluations."""
    if patience < 1 or min_delta < 0:
        raise ValueError("patience must be >= 1 and min_delta >= 0")
    if len(val_acc) <= patience:
        return False
    best_before = max(val_acc[:-patience])
    return max(val_acc[-patience:]) < best_before + min_delta


def train_model(model: VideoLM, routing: Routing, ind, c: TAMConfig, vocab, device, seed=0, desc="train") -> Training:
    """AdamW on the answer CE until the convergence rule stops it (or the cap); keeps the best weights.

    The hard tier choice is a fixed index (no gradient through argmax). Every tower, TAM and the
    fixed pipelines alike, is trained under the same rule and cap.
    """
    gen = torch.Generator(device="cpu").manual_seed(seed + 1)
    rng = random.Random(seed + 1)
    opt = torch.optim.AdamW(model.parameters(), lr=c.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / max(c.warmup, 1)))
    log = Training([], [], [], [], [], 0, 0, False)
    best_state, best_val = None, -1.0
    model.train()
    for step in progress(range(1, c.steps + 1), desc=desc, leave=False):
        # region: update step
        video, ids, lens, gold, answers = batch(c, vocab, c.batch, gen, rng, device)
        # Inductor (or fixed) picks head, tier, gate input
        task, tier, probs = routing(ind, ids, gold)
        logits, w = model(video, ids, lens, task, tier, probs)
        loss = head_loss(logits, task, answers)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        # endregion
        log.losses.append(loss.item())
        log.entropies.append(float(-(w * w.clamp_min(1e-9).log()).sum(1).mean().detach()))
        counting = gold == TASKS.index("counting")
        with torch.no_grad():
            right = (predict(logits, task) == answers)[counting].float()
        log.count_acc.append(right.mean().item() if counting.any() else float("nan"))
        log.stopped_at = step
        # region: convergence rule
        if step % c.eval_every == 0 or step == c.steps:
            val = evaluate(model, routing, ind, c, vocab, device,
                           seed=VAL_SEED, n=c.n_val, split="train")["mean"]
            model.train()
            log.val_steps.append(step)
            log.val_acc.append(val)
            if val > best_val:  # keep the best weights seen so far
                best_val, log.best_step = val, step
                best_state = {k: v.detach().clone()
                              for k, v in model.state_dict().items()}
            if converged_now(log.val_acc, c.patience, c.min_delta):
                log.converged = True
                break
        # endregion
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    return log


@torch.no_grad()
def evaluate(model: VideoLM, routing: Routing, ind, c: TAMConfig, vocab, device, seed=TEST_SEED,
             n: int | None = None, split: str = "test") -> dict:
    """Accuracy per task on fresh videos (test: held-out query templates, seed TEST_SEED).

    Also returns the per-item correctness (`right_<task>`, 0/1 lists) for the paired tests; the
    clips depend only on the seed, so every model is scored on the same items.
    """
    was_training = model.training
    model.eval()
    n = c.n_eval if n is None else n
    gen = torch.Generator(device="cpu").manual_seed(seed)
    rng = random.Random(seed)
    out = {}
    for k, name in enumerate(TASKS):
        tasks = torch.full((n,), k, device=device, dtype=torch.long)
        video, ids, lens, gold, answers = batch(c, vocab, n, gen, rng, device, split, tasks)
        task, tier, probs = routing(ind, ids, gold)
        logits, w = model(video, ids, lens, task, tier, probs)
        right = (predict(logits, task) == answers).float()
        out[name] = right.mean().item()
        out[f"right_{name}"] = right.cpu().tolist()
        out[f"gate_{name}"] = w.mean(0).cpu().tolist()
    model.train(was_training)
    out["mean"] = sum(out[t] for t in TASKS) / len(TASKS)
    return out


@dataclass
class Result:
    """One training seed's towers (kept in memory for the page's diagnostics and controls)."""
    config: TAMConfig
    inductor_acc: float
    inductor_right: list = field(default_factory=list)  # per held-out query: 1 if routed to its true task
    acc: dict = field(default_factory=dict)  # model name -> evaluate() dict
    tokens: dict = field(default_factory=dict)  # model name -> visual tokens per query (max over tiers)
    curves: dict = field(default_factory=dict)  # model name -> training losses
    count_curves: dict = field(default_factory=dict)  # model name -> training-batch counting accuracy per step
    training: dict = field(default_factory=dict)  # model name -> Training (validation curve, stop, converged)
    gate_entropy: list = field(default_factory=list)
    models: dict = field(default_factory=dict)
    inductor: Inductor | None = None
    vocab: dict | None = None


def build_models(c: TAMConfig, vocab) -> dict[str, tuple[VideoLM, Routing]]:
    """TAM (2 tiers, E soft experts, Inductor routing) and the three fixed pipelines."""
    V = len(vocab)
    return {
        "TAM": (VideoLM(c, V, (c.tier_h, c.tier_l), c.n_experts), Routing("inductor")),
        "fixed": (VideoLM(c, V, (c.fixed,), 1), Routing("fixed")),
        "fixed-H": (VideoLM(c, V, (c.tier_h,), 1), Routing("fixed")),
        "fixed-L": (VideoLM(c, V, (c.tier_l,), 1), Routing("fixed")),
    }


def train_seed(c: TAMConfig, seed: int, device) -> Result:
    """One independently trained seed: pre-train the Inductor, train TAM and the fixed pipelines on
    the same data stream (all drawn from `seed`), evaluate all on the same test clips."""
    vocab = build_vocab()
    ind, ind_acc, ind_right = train_inductor(c, vocab, device, seed, return_items=True)
    res = Result(config=c, inductor_acc=ind_acc, inductor_right=ind_right, inductor=ind, vocab=vocab)
    for name, (model, routing) in build_models(c, vocab).items():
        seed_everything(seed)
        model = model.to(device)
        log = train_model(model, routing, ind, c, vocab, device, seed, desc=f"{name} (seed {seed})")
        res.training[name] = log
        res.curves[name] = log.losses
        res.count_curves[name] = log.count_acc
        res.acc[name] = evaluate(model, routing, ind, c, vocab, device)
        res.tokens[name] = max(model.n_visual_tokens())
        res.models[name] = model
        if name == "TAM":
            res.gate_entropy = log.entropies
            res.acc["TAM (oracle budget)"] = evaluate(model, Routing("oracle"), ind, c, vocab, device)
            res.tokens["TAM (oracle budget)"] = res.tokens["TAM"]
    return res


def seed_record(res: Result) -> dict:
    """One seed's figures as plain data (what the ledger and the page's plots read)."""
    return {"inductor_acc": res.inductor_acc, "inductor_right": list(res.inductor_right),
            "acc": res.acc, "count_curves": res.count_curves, "gate_entropy": res.gate_entropy,
            "training": {n: {"val_steps": t.val_steps, "val_acc": t.val_acc, "best_step": t.best_step,
                             "stopped_at": t.stopped_at, "converged": t.converged} for n, t in res.training.items()}}


def run_experiment(config: TAMConfig, seed: int = 0, device=None, keep: dict | None = None) -> dict:
    """The chapter's experiment: `config.n_seeds` independently trained seeds (seed, seed + 1, ...),
    each retraining the Inductor and every tower afresh; returns plain data.

    keep: when a dict is given, the first seed's trained models (`Result`) are stored in it under
    "result", for the page's diagnostics and controls (models are not plain data).
    Returns {"seeds", "cap", "tokens", "per_seed": [seed_record ...], "diagnosis" (first seed)}.
    """
    device = resolve_device("auto" if device is None else device)
    seeds = [seed + k for k in range(config.n_seeds)]
    out = {"seeds": seeds, "cap": config.steps, "tokens": {}, "per_seed": []}
    for k, s in enumerate(seeds):
        res = train_seed(config, s, device)
        out["tokens"] = dict(res.tokens)
        out["per_seed"].append(seed_record(res))
        if k == 0:
            out["diagnosis"] = diagnose_counting(res, device=device)
            if keep is not None:
                keep["result"] = res
    return out


def bird_token(video: torch.Tensor, c: TAMConfig) -> torch.Tensor:
    """The pixels of the brightest patch token of the high-resolution tier, averaged over its frames.

    (B, T, S, S) -> (B, p*p) with p = c.patch: what tier H gives the tower about the birds (all birds
    of a clip lie inside one 8x8-pixel native patch, i.e. inside ONE patch token at 16x16).
    """
    if video.dim() != 4:
        raise ValueError(f"video must have shape (B, T, S, S), got {tuple(video.shape)}")
    n_f, side = c.tier_h
    img = sample_frames(video, n_f, side).mean(1)  # (B, side, side)
    B, p, g = img.shape[0], c.patch, side // c.patch
    tok = img.view(B, g, p, g, p).permute(0, 1, 3, 2, 4).reshape(B, g * g, p * p)  # (B, tokens, p*p pixels)
    k = tok.sum(2).argmax(1)  # (B,) brightest token
    return tok[torch.arange(B, device=video.device), k]  # (B, p*p)


def threshold_rule(pixels: torch.Tensor, threshold: float = 0.125) -> torch.Tensor:
    """Hand-written counter: number of pixels of the bird token above `threshold`, minus 1 (answer index)."""
    return ((pixels > threshold).sum(1) - 1).clamp(0, N_ANSWERS["counting"] - 1)


def fit_brightness_rule(c: TAMConfig, n: int = 4000, n_bins: int = 25, seed: int = 7) -> tuple[torch.Tensor, torch.Tensor]:
    """The best count predictor that reads only the bird token's *total* brightness.

    Fitted on `n` fresh counting clips: quantile bins of the summed brightness, majority answer per bin.
    This is what a tower that sums its patch's pixels linearly (and never thresholds them) can reach.
    Returns (bin edges (n_bins - 1,), answer per bin (n_bins,)).
    """
    if n < 10 * n_bins:
        raise ValueError(f"need at least 10 clips per bin, got n={n} for n_bins={n_bins}")
    gen = torch.Generator().manual_seed(seed)
    sums, answers = [], []
    for start in range(0, n, 250):  # chunks keep the (b, T, S, S) videos small
        video, ans = make_videos(torch.zeros(min(250, n - start), dtype=torch.long), c, gen)
        sums.append(bird_token(video, c).sum(1))
        answers.append(ans)
    s, ans = torch.cat(sums), torch.cat(answers)  # (n,), (n,)
    edges = torch.quantile(s, torch.linspace(0, 1, n_bins + 1)[1:-1])  # (n_bins - 1,)
    counts = torch.zeros(n_bins, N_ANSWERS["counting"])
    counts.index_put_((torch.bucketize(s, edges), ans), torch.ones(n), accumulate=True)
    return edges, counts.argmax(1)


def brightness_rule(pixels: torch.Tensor, edges: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Apply a rule from `fit_brightness_rule` to bird-token pixels (B, p*p) -> answer index (B,)."""
    return labels.to(pixels.device)[torch.bucketize(pixels.sum(1), edges.to(pixels.device))]


@torch.no_grad()
def diagnose_counting(res: Result, seed: int = 123, device=None) -> dict:
    """Why counting stalls: compare every model's counting answers on the test clips of `evaluate`
    (same seed, so the same videos) with the threshold rule and the brightness-only rule.

    Returns {"threshold rule": acc, "brightness rule": acc, name: {"acc", "agree_brightness",
    "acc_where_brightness_wrong"}}: a model that only learned the total brightness agrees with the
    brightness rule and is rarely right where that rule is wrong; a real counter is right there too.
    """
    c = res.config
    if device is None:
        device = next(res.inductor.parameters()).device
    gen = torch.Generator(device="cpu").manual_seed(seed)
    rng = random.Random(seed)
    tasks = torch.zeros(c.n_eval, device=device, dtype=torch.long)
    video, ids, lens, gold, answers = batch(c, res.vocab, c.n_eval, gen, rng, device, "test", tasks)
    pix = bird_token(video, c)
    edges, labels = fit_brightness_rule(c)
    by_brightness = brightness_rule(pix, edges, labels)
    b_ok = by_brightness == answers
    out = {"threshold rule": (threshold_rule(pix) == answers).float().mean().item(),
           "brightness rule": b_ok.float().mean().item()}
    routes = {"TAM": Routing("inductor")} | {k: Routing("fixed") for k in ("fixed", "fixed-H", "fixed-L")}
    for name, routing in routes.items():
        if name not in res.models:
            continue
        task, tier, probs = routing(res.inductor, ids, gold)
        logits, _ = res.models[name](video, ids, lens, task, tier, probs)
        pred = predict(logits, task)
        out[name] = {"acc": (pred == answers).float().mean().item(),
                     "agree_brightness": (pred == by_brightness).float().mean().item(),
                     "acc_where_brightness_wrong": (pred == answers)[~b_ok].float().mean().item()}
    return out
