"""The chapter's runs (Parts A, B, C), the learning-rate tuning rule, the claims' figures and the
widgets' cheap re-runs."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np
import torch

from icml26.common import progress, resolve_device

from .config import AsymConfig
from .lm import RLHistory, build_model, success_probs, train_rl, train_sft
from .simulator import SimResult, mean_field, simulate, time_to_target
from .task import make_task
from .theory import optimal_weight, optimal_weight_numeric, scheme_time
from .weighting import LABELS

TUNE_SEED_OFFSET = 999  # the held-out tuning seed: model and sampling seed 1000 * seed + 999, used by no claim


def run_part_a(config: AsymConfig, seed: int = 0) -> dict[str, dict[str, tuple[SimResult, SimResult]]]:
    """Monte Carlo and mean-field (exact expected update) runs of every scheme, from scratch and
    from a post-SFT start. Keyed [regime][scheme] -> (monte_carlo, mean_field)."""
    out = {}
    for regime, rho0 in (("scratch", config.sim_rho0), ("post_sft", config.sim_rho0_sft)):
        start = torch.full((config.sim_prompts,), rho0, dtype=torch.float64)
        out[regime] = {}
        for scheme in progress(config.sim_schemes, desc=f"simulator ({regime})"):
            kw = dict(n=config.group_size, lr=config.sim_lr, steps=config.sim_steps, num_answers=config.sim_answers,
                      max_rounds=config.dapo_max_rounds)
            out[regime][scheme] = (simulate(start, scheme, seed=seed, **kw), mean_field(start, scheme, **kw))
    return out


def steps_to_target(accuracy: np.ndarray, target: float) -> float:
    """Updates until the mean success first reaches `target`; inf if the run never reached it
    (a censored run: its time is only known to exceed the updates it was given)."""
    return time_to_target(accuracy, target)


@dataclass(frozen=True)
class CensoredMean:
    """Mean over seeds of a time to target when some runs may have hit their cap first.

    lower: each censored run counted as its cap (a lower bound on the true mean);
    upper: the true mean when no run is censored, else inf (a censored time has no upper bound).
    """

    lower: float
    upper: float
    censored: int
    runs: int

    @property
    def exact(self) -> bool:
        return self.censored == 0


def censored_mean(runs: list[RLHistory], target: float) -> CensoredMean:
    """Bounds on the mean updates-to-target over `runs` (each capped run counted as its cap)."""
    if not runs:
        raise ValueError("censored_mean needs at least one run")
    times = [steps_to_target(h.accuracy, target) for h in runs]
    lower = [t if np.isfinite(t) else float(len(h.accuracy) - 1) for t, h in zip(times, runs)]  # cap if censored
    censored = sum(not np.isfinite(t) for t in times)
    return CensoredMean(float(np.mean(lower)), float(np.mean(lower)) if censored == 0 else float("inf"), censored,
                        len(runs))


def ratio_bounds(num: CensoredMean, den: CensoredMean) -> tuple[float, float]:
    """(lower, upper) bounds on mean(num) / mean(den) that hold whatever the censored times are."""
    return num.lower / den.upper, num.upper / den.lower


def tuning_score(h: RLHistory, target: float) -> float:
    """The one rule that ranks learning rates, the same for every scheme:
    updates to reach `target` (lower is better); a run that never reached it
    ranks after every run that did, by its final accuracy (score = cap + 1 -
    final accuracy)."""
    t = steps_to_target(h.accuracy, target)
    return (float(t) if np.isfinite(t)
            else float(len(h.accuracy) - 1) + 1.0 - float(h.accuracy[-1]))


def tune_learning_rate(run, grid: tuple[float, ...],
                       target: float) -> tuple[float, dict[float, float]]:
    """Run `run(lr)` for every lr of `grid` and keep the one with the lowest
    `tuning_score` (ties: the smaller lr). Returns (best lr, {lr: score})."""
    if not grid:
        raise ValueError("the learning-rate grid is empty")
    scores = {}
    for lr in grid:
        scores[lr] = tuning_score(run(lr), target)
    best = min(grid, key=lambda lr: (scores[lr], lr))
    return best, scores


def post_sft_target(start_acc: float, gain: float) -> float:
    """The post-SFT target: close the fraction `gain` of the gap between the start accuracy and 1."""
    return float(start_acc + gain * (1.0 - start_acc))


def _scratch_run(config: AsymConfig, task, scheme: str, lr: float, model_seed: int, cap: int) -> RLHistory:
    model = build_model(config.d_model, config.n_layer, config.n_head, seed=model_seed, device=task.prompts.device)
    return train_rl(model, task, scheme, cap, config.prompts_per_step, config.group_size, lr=lr,
                    max_rounds=config.dapo_max_rounds, seed=model_seed, stop_at=config.target_acc)


def _sft_base(config: AsymConfig, task, model_seed: int):
    base = build_model(config.d_model, config.n_layer, config.n_head, seed=model_seed, device=task.prompts.device)
    acc = train_sft(base, task, config.sft_steps, config.prompts_per_step, config.sft_lr, seed=model_seed)
    return base, acc


def _post_sft_run(config: AsymConfig, task, base, scheme: str, lr: float, run_seed: int, start_acc: float) -> RLHistory:
    return train_rl(copy.deepcopy(base), task, scheme, config.post_sft_steps, config.prompts_per_step,
                    config.group_size, lr=lr, max_rounds=config.dapo_max_rounds, seed=run_seed,
                    stop_at=post_sft_target(start_acc, config.post_sft_gain))


@dataclass
class Tuning:
    """The learning rate each scheme got, per regime, and the score of every grid point."""

    scratch: dict[str, float]
    post_sft: dict[str, float]
    scores: dict[str, dict[str, dict[float, float]]]  # regime -> scheme -> {lr: score}


def tune_all(config: AsymConfig, seed: int = 0) -> Tuning:
    """The tuning rule applied to every scheme alike, on the held-out seed 1000 * seed + 999:
    from scratch over `lr_grid` (cap `tune_steps`, target `target_acc`); after SFT over
    `post_sft_lr_grid` (cap `post_sft_steps`, the post-SFT target)."""
    device = resolve_device(config.device)
    task = make_task(config.min_operand, config.max_operand, device=device)
    ts = 1000 * seed + TUNE_SEED_OFFSET
    scratch, post, scores = {}, {}, {"scratch": {}, "post_sft": {}}
    for scheme in progress(config.schemes, desc="tune lr (scratch)"):
        cap = min(config.tune_steps, config.context_steps if scheme in config.context_schemes else config.rl_steps)
        scratch[scheme], scores["scratch"][scheme] = tune_learning_rate(
            lambda lr: _scratch_run(config, task, scheme, lr, ts, cap), config.lr_grid, config.target_acc)
    base, _ = _sft_base(config, task, ts)
    a0 = float(success_probs(base, task).mean())
    for scheme in progress(config.post_sft_schemes, desc="tune lr (post-SFT)"):
        post[scheme], scores["post_sft"][scheme] = tune_learning_rate(
            lambda lr: _post_sft_run(config, task, base, scheme, lr, ts + 500, a0),
            config.post_sft_lr_grid, post_sft_target(a0, config.post_sft_gain))
    return Tuning(scratch, post, scores)


def run_part_b(config: AsymConfig, seed: int = 0, lrs: dict[str, float] | None = None) -> dict[str, list[RLHistory]]:
    """From-scratch RL: every scheme from the same random initialisation per seed, each at its
    own tuned learning rate `lrs[scheme]` (default: the middle of the grid). A run stops when it
    reaches the target or after its cap (`context_steps` for context baselines, else `rl_steps`)."""
    device = resolve_device(config.device)
    task = make_task(config.min_operand, config.max_operand, device=device)
    lrs = lrs or {s: config.lr_grid[len(config.lr_grid) // 2] for s in config.schemes}
    runs = {s: [] for s in config.schemes}
    cells = [(k, s) for k in range(config.seeds) for s in config.schemes]
    for k, scheme in progress(cells, desc="from-scratch RL"):
        cap = config.context_steps if scheme in config.context_schemes else config.rl_steps
        runs[scheme].append(_scratch_run(config, task, scheme, lrs[scheme], 1000 * seed + k, cap))
    return runs


def run_part_c(config: AsymConfig, seed: int = 0,
               lrs: dict[str, float] | None = None) -> tuple[dict[str, list[RLHistory]], list[float]]:
    """Post-SFT RL: supervised warm-up once per seed, then each scheme from a copy of that model
    at its tuned post-SFT learning rate; a run stops at the post-SFT target or at its cap."""
    device = resolve_device(config.device)
    task = make_task(config.min_operand, config.max_operand, device=device)
    lrs = lrs or {s: config.post_sft_lr_grid[len(config.post_sft_lr_grid) // 2] for s in config.post_sft_schemes}
    runs, sft_acc = {s: [] for s in config.post_sft_schemes}, []
    for k in progress(range(config.seeds), desc="post-SFT RL"):
        base, _ = _sft_base(config, task, 1000 * seed + k)
        sft_acc.append(float(success_probs(base, task).mean()))
        for scheme in config.post_sft_schemes:
            runs[scheme].append(_post_sft_run(config, task, base, scheme, lrs[scheme], 1000 * seed + k + 500,
                                              sft_acc[-1]))
    return runs, sft_acc


def mean_steps(runs: dict[str, list[RLHistory]], target: float) -> dict[str, CensoredMean]:
    """Per scheme, the censoring-aware mean over seeds of the updates to reach `target`."""
    return {s: censored_mean(hs, target) for s, hs in runs.items()}


def simulator_time_gaps(part_a: dict, target_scratch: float, target_post: float) -> float:
    """Largest relative gap |simulated - predicted| / predicted between the Monte Carlo and the
    mean-field time to target, over every scheme, both regimes and both clocks (inf when only
    one of the two reaches the target)."""
    gaps = []
    for regime, tgt in (("scratch", target_scratch), ("post_sft", target_post)):
        for mc, mf in part_a[regime].values():
            for clock in (None, "responses"):
                a = time_to_target(mc.accuracy, tgt, None if clock is None else mc.responses)
                b = time_to_target(mf.accuracy, tgt, None if clock is None else mf.responses)
                if np.isfinite(a) and np.isfinite(b):
                    gaps.append(abs(a - b) / max(b, 1.0))
                elif np.isfinite(a) != np.isfinite(b):
                    gaps.append(float("inf"))
    return max(gaps) if gaps else float("inf")


def theory_figures() -> tuple[float, float]:
    """(max relative gap between the numerically minimised and the closed-form optimum of the
    response clock, optimum weight at rho = C3_ASYM_RHO over that at 1 - C3_ASYM_RHO)."""
    from .claims import C3_ASYM_RHO

    rho, om = optimal_weight_numeric(0.003, 0.99, "responses")
    cf = optimal_weight(rho, "responses")
    gap = float((om / (cf / cf[0]) - 1).abs().max())
    lo, hi = (optimal_weight(torch.tensor(r, dtype=torch.float64), "responses") for r in (C3_ASYM_RHO, 1 - C3_ASYM_RHO))
    return gap, float(lo / hi)


def responses_to_target(h: RLHistory, target: float) -> float:
    """Generated responses until the mean success first reaches `target` (inf if never)."""
    return time_to_target(h.accuracy, target, h.responses)


def results_table(part_b, part_c, sft_acc, config: AsymConfig, tuning: Tuning | None = None):
    """A DataFrame: per scheme, the paper's finding, the tuned learning rate, the updates to the
    target per seed ('never' within the cap), their censoring-aware mean, generated responses to
    the target, the all-wrong groups at the first update, and the post-SFT updates to its target."""
    import pandas as pd

    steps = mean_steps(part_b, config.target_acc)
    tgt = f"{config.target_acc:.0%}"
    paper = {"rloo": "symmetric baseline", "grpo": "symmetric baseline", "dapo": "symmetric baseline",
             "linear": "substantially faster (no numbers)", "sqrt": "substantially faster (no numbers)"}
    rows = []
    for s, hs in part_b.items():
        per_seed = ", ".join(f"{t:.0f}" if np.isfinite(t) else "never" for t in
                             (steps_to_target(h.accuracy, config.target_acc) for h in hs))
        m = steps[s]
        r = [responses_to_target(h, config.target_acc) for h in hs]
        row = {"scheme": LABELS[s], "paper (from scratch)": paper.get(s, "-"),
               "lr (tuned)": f"{tuning.scratch[s]:g}" if tuning else "-",
               f"updates to {tgt}, per seed": per_seed,
               "mean": f"{m.lower:.0f}" if m.exact else f">= {m.lower:.0f}",
               f"responses to {tgt}": f"{np.mean(r) / 1000:.0f}k" if all(np.isfinite(x) for x in r) else "-",
               "all-wrong groups at step 1": f"{np.mean([h.zero_frac[0] for h in hs if len(h.zero_frac)]):.2f}"}
        if s in part_c:
            post = [steps_to_target(h.accuracy, post_sft_target(a0, config.post_sft_gain)) for h, a0 in zip(part_c[s], sft_acc)]
            row["post-SFT lr"] = f"{tuning.post_sft[s]:g}" if tuning else "-"
            row["post-SFT updates, per seed"] = ", ".join(f"{t:.0f}" if np.isfinite(t) else "never" for t in post)
        else:
            row["post-SFT lr"] = row["post-SFT updates, per seed"] = "-"
        rows.append(row)
    return pd.DataFrame(rows)


def explore_theory(rho0: float, target: float = 0.9, schemes=("rloo", "grpo", "linear", "sqrt", "uniform")) -> dict:
    """For the widget: each scheme's predicted time to target (relative to the optimum) for both
    clocks, and the weights omega(rho0) normalised so that GRPO's is 1."""
    rho = torch.tensor([rho0], dtype=torch.float64)
    from .weighting import prompt_weight
    g = float(prompt_weight("grpo", rho))
    return {s: {"omega": float(prompt_weight(s, rho)) / g,
                "time_updates": scheme_time(s, rho0, target, "updates"),
                "time_responses": scheme_time(s, rho0, target, "responses")} for s in schemes} | {
        "optimal": {"omega_updates": float(optimal_weight(rho, "updates")) / g,
                    "omega_responses": float(optimal_weight(rho, "responses")) / g}}


def _history(h) -> dict:
    return {"accuracy": [float(x) for x in h.accuracy], "zero_frac": [float(x) for x in h.zero_frac],
            "responses": [float(x) for x in h.responses]}


def run_experiment(config: AsymConfig, seed: int = 0, device=None) -> dict:
    """The whole experiment behind the ledger: learning rates tuned by one rule on a held-out
    seed, Part A (the exact simulator, at most 3 seeds: a sanity check), Part B (from-scratch RL,
    `config.seeds` independently trained seeds, every scheme from the same initialisation per
    seed) and Part C (RL after SFT). Returns plain data (curves as lists); `histories` turns it
    back into the objects the plots take."""
    from dataclasses import asdict, replace

    dev = resolve_device("auto" if device is None else device)
    config = replace(config, device=str(dev))
    tuning = tune_all(config, seed=seed)
    part_a = [run_part_a(config, seed=seed + k) for k in range(min(config.seeds, 3))]
    part_b = run_part_b(config, seed=seed, lrs=tuning.scratch)
    part_c, sft_acc = run_part_c(config, seed=seed, lrs=tuning.post_sft)
    gap, asym = theory_figures()
    sim_post_target = 0.95
    return {
        "config": asdict(config), "seeds": [1000 * seed + k for k in range(config.seeds)],
        "target_acc": config.target_acc, "post_sft_gain": config.post_sft_gain,
        "sim_target": config.sim_target, "sim_post_target": sim_post_target,
        "tuning": {"scratch": dict(tuning.scratch), "post_sft": dict(tuning.post_sft),
                   "scores": {r: {s: [[float(lr), float(v)] for lr, v in sc.items()] for s, sc in d.items()}
                              for r, d in tuning.scores.items()}},
        "part_a": [{regime: {s: {"mc": _history(mc), "mf": _history(mf)} for s, (mc, mf) in d.items()}
                    for regime, d in a.items()} for a in part_a],
        "scratch": {s: [_history(h) for h in hs] for s, hs in part_b.items()},
        "post_sft": {s: [_history(h) for h in hs] for s, hs in part_c.items()},
        "sft_acc": [float(a) for a in sft_acc],
        "theory": {"opt_gap": gap, "asymmetry": asym},
        "sim_time_gaps": [simulator_time_gaps(a, config.sim_target, sim_post_target) for a in part_a],
    }


def histories(results: dict):
    """(part_a, part_b, part_c, sft_acc, tuning) as the plots and tables take them, from the plain
    results of `run_experiment`."""
    arr = lambda h, cls, s: cls(s, np.array(h["accuracy"]), np.array(h["zero_frac"]), np.array(h["responses"]))  # noqa: E731
    part_a = [{regime: {s: (arr(v["mc"], SimResult, s), arr(v["mf"], SimResult, s)) for s, v in d.items()}
               for regime, d in a.items()} for a in results["part_a"]]
    part_b = {s: [arr(h, RLHistory, s) for h in hs] for s, hs in results["scratch"].items()}
    part_c = {s: [arr(h, RLHistory, s) for h in hs] for s, hs in results["post_sft"].items()}
    t = results["tuning"]
    tuning = Tuning(dict(t["scratch"]), dict(t["post_sft"]),
                    {r: {s: {float(lr): float(v) for lr, v in sc} for s, sc in d.items()} for r, d in t["scores"].items()})
    return part_a, part_b, part_c, list(results["sft_acc"]), tuning
