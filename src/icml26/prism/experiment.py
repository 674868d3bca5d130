"""The chapter's runs: training every model on the masked-token task, accuracy under the
phase and magnitude interventions, the parameter table, the reproduction check and the
cheap re-evaluation behind the widgets."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from icml26.common import markdown_cell, progress, resolve_device

from .config import PrismConfig
from .data import TopicMarkovTask, make_task, mask_tokens, sample_sequences
from .interventions import Intervention
from .layers import project_unit
from .models import build_models, count_params

LABELS = {"prism_unit": "PRISM-pure (|z|=1)", "prism_rms": "PRISM-pure (RMS norm, official code)",
          "hybrid": "PRISM hybrid (waves + 1 attention)", "transformer": "Transformer (matched)"}


def cosine_lr(step: int, total: int, warmup_frac: float) -> float:
    """Learning-rate multiplier: linear warm-up over warmup_frac * total steps, then cosine to 0."""
    warm = max(1, int(warmup_frac * total))
    if step < warm:
        return (step + 1) / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))


def plateaued(curve, patience: int, delta: float) -> bool:
    """The book's one stopping rule for every arm: the last `patience`
    validation accuracies improved on the best earlier one by at most `delta`
    (a plateau of validation accuracy)."""
    curve = list(curve)
    if patience < 1:
        raise ValueError(f"patience must be >= 1, got {patience}")
    if len(curve) <= patience:
        return False
    return max(curve[-patience:]) <= max(curve[:-patience]) + delta


def validation_set(task: TopicMarkovTask, config: PrismConfig, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Held-out sequences from the task's own generating process, with a fixed mask: what the
    stopping rule reads (never the test set). Returns (tokens (n_val, L), mask (n_val, L))."""
    g = torch.Generator().manual_seed(100_003 + int(seed))
    tokens, _ = sample_sequences(task.transitions, config.n_val, config.seq_len, task.n_private, task.p_private, g)
    return tokens, torch.rand(config.n_val, config.seq_len, generator=g) < config.mask_prob


def train_model(model: nn.Module, task: TopicMarkovTask, config: PrismConfig, seed: int = 0,
                desc: str = "train", val: tuple[torch.Tensor, torch.Tensor] | None = None) -> dict:
    """AdamW + cosine schedule (over at most `config.steps` steps) on the MLM loss
    (cross-entropy on masked positions only). Batches are drawn on the CPU generator and moved
    to the model's device. With `val`, the stopping rule: validation accuracy every
    `config.eval_every` steps, stop at a plateau (`plateaued`), keep the best weights.
    Returns {"losses", "steps", "converged", "val_acc"}."""
    device = next(model.parameters()).device
    g = torch.Generator().manual_seed(int(seed))
    opt = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: cosine_lr(s, config.steps, config.warmup_frac))
    model.train()
    losses, val_acc, best, converged, steps = [], [], None, False, 0
    for step in progress(range(config.steps), desc=desc, leave=False):
        # region: train_step
        idx = torch.randint(task.train.shape[0], (config.batch_size,), generator=g)
        tokens = task.train[idx]
        # 15% of positions -> [MASK]
        inputs, mask = mask_tokens(tokens, config.mask_prob, g)
        tokens, inputs, mask = tokens.to(device), inputs.to(device), mask.to(device)
        logits = model(inputs)  # (B, L, V)
        loss = F.cross_entropy(logits[mask], tokens[mask])  # masked positions only
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
        opt.step()
        sched.step()  # warm-up, then cosine decay
        # endregion
        losses.append(loss.item())
        steps = step + 1
        if val is not None and steps % config.eval_every == 0:
            # region: stopping_rule
            acc = accuracy_on(model, *val)
            model.train()
            if not val_acc or acc > max(val_acc):
                best = copy.deepcopy(model.state_dict())  # keep the best weights
            val_acc.append(acc)
            if plateaued(val_acc, config.plateau_patience, config.plateau_delta):
                converged = True
                break
            # endregion
    if best is not None:
        model.load_state_dict(best)
    model.eval()
    return {"losses": losses, "steps": steps, "converged": converged, "val_acc": val_acc}


@torch.no_grad()
def accuracy_on(model: nn.Module, tokens: torch.Tensor, mask: torch.Tensor,
                intervention: Intervention | tuple = Intervention(), batch_size: int = 1024) -> float:
    """Top-1 accuracy of `model` at the masked positions `mask` of `tokens`."""
    device = next(model.parameters()).device
    model.eval()
    correct, total = 0, 0
    for start in range(0, tokens.shape[0], batch_size):
        tok = tokens[start:start + batch_size].to(device)
        inputs, m = mask_tokens(tok, 0.0, mask=mask[start:start + batch_size].to(device))
        pred = model(inputs, intervention).argmax(-1)
        correct += int((pred[m] == tok[m]).sum())
        total += int(m.sum())
    return correct / max(1, total)


def masked_accuracy(model: nn.Module, task: TopicMarkovTask, intervention: Intervention | tuple = Intervention(),
                    batch_size: int = 1024) -> float:
    """Top-1 accuracy at the fixed masked test positions, optionally under an intervention."""
    return accuracy_on(model, task.test, task.test_mask, intervention, batch_size)


@dataclass
class ChapterRun:
    """Everything the notebook shows: the task, the trained models (and PRISM-pure's
    untrained copy for the phase plots), losses, parameter counts and intervention sweeps."""

    config: PrismConfig
    task: TopicMarkovTask
    models: dict[str, nn.Module]
    initial: dict[str, nn.Module]
    losses: dict[str, list[float]]
    params: dict[str, dict[str, int]]
    clean: dict[str, float] = field(default_factory=dict)
    phase_curve: dict[str, np.ndarray] = field(default_factory=dict)  # accuracy vs sigma
    scale_curve: dict[str, np.ndarray] = field(default_factory=dict)  # accuracy vs c
    flatten: dict[str, float] = field(default_factory=dict)
    steps: dict[str, int] = field(default_factory=dict)  # steps trained (the stopping rule)
    converged: dict[str, bool] = field(default_factory=dict)  # stopped at a validation plateau
    val_acc: dict[str, list[float]] = field(default_factory=dict)  # the validation curve

    @property
    def chance(self) -> float:
        return self.task.chance

    @cached_property
    def bayes(self) -> float:
        """Accuracy of the exact Bayes-optimal predictor on the same masked test positions
        (computed once: it is an exact forward-backward pass over every test sequence)."""
        return self.task.bayes_accuracy()


def build_task(config: PrismConfig, seed: int = 0) -> TopicMarkovTask:
    return make_task(config.n_topics, config.n_ambiguous, config.n_private, config.p_private, config.dirichlet_alpha,
                     config.seq_len, config.n_train, config.n_test, config.mask_prob, seed=seed)


def sweep_interventions(model: nn.Module, task: TopicMarkovTask, config: PrismConfig, seed: int = 0) -> dict:
    """Accuracy vs phase-noise sigma, vs attenuation c, and under flattening, at config.sites."""
    sites = tuple(config.sites)
    phase = np.array([masked_accuracy(model, task, Intervention("phase_noise", s, sites, seed)) for s in config.sigmas])
    scale = np.array([masked_accuracy(model, task, Intervention("attenuate", c, sites, seed)) for c in config.scales])
    flat = masked_accuracy(model, task, Intervention("flatten", 0.0, sites, seed))
    return {"phase": phase, "scale": scale, "flatten": flat}


def run_chapter(config: PrismConfig, seed: int = 0, device=None) -> ChapterRun:
    """Generate the task, train the four models side by side (each by the same stopping rule on
    the same validation set), and run every intervention."""
    device = resolve_device("auto" if device is None else device)
    task = build_task(config, seed)
    val = validation_set(task, config, seed)
    torch.manual_seed(int(seed))
    models = build_models(config, task.vocab_size, device)
    initial = {k: copy.deepcopy(m) for k, m in models.items() if k.startswith("prism")}
    run = ChapterRun(config, task, models, initial, {}, {k: count_params(m) for k, m in models.items()})
    for name in progress(list(models), desc="models"):
        log = train_model(models[name], task, config, seed=seed + 1, desc=name, val=val)
        run.losses[name], run.steps[name] = log["losses"], log["steps"]
        run.converged[name], run.val_acc[name] = log["converged"], log["val_acc"]
        run.clean[name] = masked_accuracy(models[name], task)
        sw = sweep_interventions(models[name], task, config, seed)
        run.phase_curve[name], run.scale_curve[name], run.flatten[name] = sw["phase"], sw["scale"], sw["flatten"]
    return run


def param_table(run: ChapterRun) -> str:
    """Markdown table of parameter counts (as the official Eval notebook reports them)."""
    rows = ["| model | total | embedding (tied E) | non-embedding | masked acc. |", "|---|---|---|---|---|"]
    for k, p in run.params.items():
        rows.append(f"| {markdown_cell(LABELS[k])} | {p['total']:,} | {p['embedding']:,} | {p['non_embedding']:,} | {run.clean[k]:.3f} |")
    rows.append(f"| Bayes-optimal predictor (knows the generating process; the ceiling) | — | — | — | {run.bayes:.3f} |")
    return "\n".join(rows)


def _at(values: tuple[float, ...], target: float) -> int:
    if target not in values:
        raise ValueError(f"{target} is not among the swept values {values}")
    return values.index(target)


def phase_left(run: ChapterRun, name: str) -> float:
    """Fraction of the above-chance accuracy left at phase noise sigma = 1 (1 if nothing was learned)."""
    gain = run.clean[name] - run.chance
    return float((run.phase_curve[name][_at(run.config.sigmas, 1.0)] - run.chance) / gain) if gain > 0 else 1.0


@torch.no_grad()
def topic_probe(model: nn.Module, task: TopicMarkovTask, ridge: float = 1e-2) -> float:
    """Linear probe of the hidden topic from the model's final states at the masked test
    positions: ridge regression onto one-hot topics, fitted on the first half of the test
    sequences and scored (argmax) on the second half. Only the context can reveal the topic there."""
    device = next(model.parameters()).device
    model.eval()
    tokens, mask = task.test.to(device), task.test_mask.to(device)
    inputs, _ = mask_tokens(tokens, 0.0, mask=mask)
    # region: topic_probe
    h = model.features(inputs)  # (N, L, d)
    topics = task.test_topics.to(device)[:, None].expand(mask.shape)  # (N, L)
    half = torch.zeros_like(mask)
    half[: mask.shape[0] // 2] = True  # fit on the first half of the sequences
    fit, score = mask & half, mask & ~half
    x = h[fit].double()  # (n_fit, d)
    mu, sd = x.mean(0), x.std(0) + 1e-6
    x = torch.cat(
        [(x - mu) / sd, torch.ones(len(x), 1, dtype=x.dtype, device=device)], 1
    )  # (n_fit, d+1)
    # (n_fit, K)
    y = F.one_hot(topics[fit], int(task.test_topics.max()) + 1).double()
    w = torch.linalg.solve(
        x.T @ x
        + ridge * len(x) * torch.eye(x.shape[1], dtype=x.dtype, device=device),
        x.T @ y,
    )
    xs = torch.cat(
        [
            (h[score].double() - mu) / sd,
            torch.ones(int(score.sum()), 1, dtype=x.dtype, device=device),
        ],
        1,
    )
    # endregion
    return float(((xs @ w).argmax(1) == topics[score]).double().mean())


def seed_figures(run: ChapterRun) -> dict:
    """Every figure the decision functions read, for one seed's run."""
    c = run.config
    i_att = _at(c.scales, c.attenuation_c)
    coh = phase_coherence(run.models["prism_rms"], run.task, c.n_private)
    return {
        "chance": run.chance, "clean_rms": run.clean["prism_rms"], "clean_unit": run.clean["prism_unit"],
        "phase_left_rms": phase_left(run, "prism_rms"), "phase_left_unit": phase_left(run, "prism_unit"),
        "keep_attenuation": float(run.scale_curve["prism_rms"][i_att] / run.clean["prism_rms"]),
        "keep_flatten": run.flatten["prism_rms"] / run.clean["prism_rms"],
        "keep_flatten_transformer": run.flatten["transformer"] / run.clean["transformer"],
        "acc_hybrid": run.clean["hybrid"], "acc_transformer": run.clean["transformer"],
        "params_hybrid": run.params["hybrid"]["non_embedding"],
        "params_transformer": run.params["transformer"]["non_embedding"],
        "probe_hybrid": topic_probe(run.models["hybrid"], run.task),
        "probe_transformer": topic_probe(run.models["transformer"], run.task),
        "coherence_same": coh["same_topic"], "coherence_different": coh["different_topic"],
        **{f"steps_{k}": int(v) for k, v in run.steps.items()},
        **{f"converged_{k}": bool(v) for k, v in run.converged.items()},
    }


def run_seeds(config: PrismConfig, seed: int = 0, device=None) -> tuple[ChapterRun, list[dict]]:
    """The main run at `seed` (kept whole, for the figures) and the figures of `config.n_seeds`
    seeds seed, seed + 1, ... (each a fresh task, initialisation and batch order)."""
    main = run_chapter(config, seed, device)
    figs = [seed_figures(main)]
    for s in range(seed + 1, seed + config.n_seeds):
        figs.append(seed_figures(run_chapter(config, s, device)))
    return main, figs


def run_experiment(config: PrismConfig, seed: int = 0, device=None, runs: list | None = None) -> dict:
    """The chapter's experiment behind the ledger: `config.n_seeds` independently trained seeds
    (task, initialisation, batch order), four models each, every intervention and probe.

    Returns plain data: `seeds`, `per_seed` (the figures the decision functions read, one dict per
    seed), `chance`, `bayes` (the first seed's ceiling), `max_steps` and `full_steps` (the
    budgets), and the first seed's curves for the plots. `runs`, when given a list, receives the
    first seed's whole :class:`ChapterRun` (trained models included) for the page's figures."""
    from .config import PRESETS

    main, figs = run_seeds(config, seed, device)
    if runs is not None:
        runs.append(main)
    return {
        "seeds": list(range(seed, seed + config.n_seeds)), "per_seed": figs,
        "chance": main.chance, "bayes": main.bayes, "max_steps": config.steps,
        "full_steps": PRESETS["full"].steps,
        "main": {"clean": dict(main.clean), "flatten": dict(main.flatten), "steps": dict(main.steps),
                 "converged": dict(main.converged), "val_acc": dict(main.val_acc),
                 "phase_curve": {k: v.tolist() for k, v in main.phase_curve.items()},
                 "scale_curve": {k: v.tolist() for k, v in main.scale_curve.items()},
                 "params": main.params, "losses": dict(main.losses)},
    }


def explore_accuracy(run: ChapterRun, sigma: float = 0.0, scale: float = 1.0, flatten: bool = False,
                     site: int = 0, seed: int = 0) -> dict[str, float]:
    """The widgets' cheap re-run: accuracy of every trained model with phase noise sigma,
    then attenuation by c (then, optionally, flattening), all at one site (clipped to each
    model's depth)."""
    out = {}
    for name, model in run.models.items():
        depth = len(model.layers) if hasattr(model, "layers") else len(model.encoder.layers)
        s = (min(int(site), depth),)
        chain = [Intervention("phase_noise", sigma, s, seed), Intervention("attenuate", scale, s, seed)]
        if flatten:
            chain.append(Intervention("flatten", 0.0, s, seed))
        out[name] = masked_accuracy(model, run.task, tuple(chain))
    return out


@torch.no_grad()
def phase_coherence(model: nn.Module, task: TopicMarkovTask, n_private: int) -> dict[str, float]:
    """The paper's phase-coherence statistic R = |mean_j exp(i (phi^a_j - phi^b_j))| on the
    position-free token phases arg(z_c rho), averaged over pairs of private tokens of the same
    topic ("synonyms") and over pairs from different topics."""
    device = next(model.parameters()).device
    V, A = task.vocab_size, task.n_ambiguous
    ids = torch.arange(1 + A, V, device=device)[None]  # (1, P) private tokens
    u = project_unit(model.encoder.rose.token_phase(ids)[0])  # (P, d) unit phasors
    R = (u[:, None, :] * u[None, :, :].conj()).mean(-1).abs()  # (P, P)
    topic = torch.arange(R.shape[0], device=device) // n_private
    same = (topic[:, None] == topic[None, :]) & ~torch.eye(R.shape[0], dtype=torch.bool, device=device)
    diff = topic[:, None] != topic[None, :]
    return {"same_topic": float(R[same].mean()), "different_topic": float(R[diff].mean())}
