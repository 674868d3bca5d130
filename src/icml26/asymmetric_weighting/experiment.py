"""The chapter's runs (Parts A, B, C), the reproduction check and the widgets' cheap re-runs."""

from __future__ import annotations

import copy

import numpy as np
import torch

from icml26.common import progress, resolve_device

from .config import AsymConfig
from .lm import RLHistory, build_model, train_rl, train_sft
from .simulator import SimResult, mean_field, simulate, time_to_target
from .task import make_task
from .theory import optimal_weight, scheme_time
from .weighting import LABELS

CLAIM = ("asymmetric prompt weights (Sqrt-R, Linear-R) reach the target accuracy clearly faster than GRPO "
         "in from-scratch RL, and the gain largely disappears when RL starts after SFT")


def run_part_a(config: AsymConfig, seed: int = 0) -> dict[str, dict[str, tuple[SimResult, SimResult]]]:
    """Monte Carlo and mean-field (exact expected update) runs of every scheme, from scratch and
    from a post-SFT start. Keyed [regime][scheme] -> (monte_carlo, mean_field)."""
    out = {}
    for regime, rho0 in (("scratch", config.sim_rho0), ("post_sft", config.sim_rho0_sft)):
        start = torch.full((config.sim_prompts,), rho0, dtype=torch.float64)
        out[regime] = {}
        for scheme in progress(config.schemes, desc=f"simulator ({regime})"):
            kw = dict(n=config.group_size, lr=config.sim_lr, steps=config.sim_steps, num_answers=config.sim_answers,
                      max_rounds=config.dapo_max_rounds)
            out[regime][scheme] = (simulate(start, scheme, seed=seed, **kw), mean_field(start, scheme, **kw))
    return out


def steps_to_target(accuracy: np.ndarray, target: float) -> float:
    """Updates until the mean success first reaches `target`; the step budget if never (Sec. 'claim')."""
    t = time_to_target(accuracy, target)
    return float(len(accuracy) - 1) if not np.isfinite(t) else t


def run_part_b(config: AsymConfig, seed: int = 0) -> dict[str, list[RLHistory]]:
    """From-scratch RL: every scheme from the same random initialisation, per seed."""
    device = resolve_device(config.device)
    task = make_task(config.min_operand, config.max_operand, device=device)
    runs = {s: [] for s in config.schemes}
    cells = [(k, s) for k in range(config.seeds) for s in config.schemes]
    for k, scheme in progress(cells, desc="from-scratch RL"):
        model = build_model(config.d_model, config.n_layer, config.n_head, seed=1000 * seed + k, device=device)
        runs[scheme].append(train_rl(model, task, scheme, config.rl_steps, config.prompts_per_step, config.group_size,
                                     lr=config.lr, max_rounds=config.dapo_max_rounds, seed=1000 * seed + k))
    return runs


def run_part_c(config: AsymConfig, seed: int = 0) -> tuple[dict[str, list[RLHistory]], list[float]]:
    """Post-SFT RL: supervised warm-up once per seed, then each scheme from a copy of that model."""
    device = resolve_device(config.device)
    task = make_task(config.min_operand, config.max_operand, device=device)
    runs, sft_acc = {s: [] for s in config.post_sft_schemes}, []
    for k in progress(range(config.seeds), desc="post-SFT RL"):
        base = build_model(config.d_model, config.n_layer, config.n_head, seed=1000 * seed + k, device=device)
        sft_acc.append(train_sft(base, task, config.sft_steps, config.prompts_per_step, config.sft_lr, seed=1000 * seed + k))
        for scheme in config.post_sft_schemes:
            runs[scheme].append(train_rl(copy.deepcopy(base), task, scheme, config.post_sft_steps, config.prompts_per_step,
                                         config.group_size, lr=config.post_sft_lr, max_rounds=config.dapo_max_rounds,
                                         seed=1000 * seed + k + 500))
    return runs, sft_acc


def mean_steps(runs: dict[str, list[RLHistory]], target: float) -> dict[str, float]:
    """Mean over seeds of the updates to reach `target` (budget if never)."""
    return {s: float(np.mean([steps_to_target(h.accuracy, target) for h in hs])) for s, hs in runs.items()}


def claim_figures(part_b: dict[str, list[RLHistory]], part_c: dict[str, list[RLHistory]], config: AsymConfig):
    """(claim, measured, checks) for `report_claim`; the criterion is fixed in `AsymConfig`:

    * from scratch: mean steps-to-target of Sqrt-R and of Linear-R <= max_speed_ratio x GRPO's;
    * post-SFT: |mean final accuracy of Sqrt-R - GRPO| <= max_post_sft_gap.
    """
    steps = mean_steps(part_b, config.target_acc)
    ratio_sqrt = steps["sqrt"] / steps["grpo"]
    ratio_lin = steps["linear"] / steps["grpo"]
    final = {s: float(np.mean([h.accuracy[-1] for h in hs])) for s, hs in part_c.items()}
    gap = final["sqrt"] - final["grpo"]
    measured = {"steps_to_target_grpo": round(steps["grpo"] / 10) * 10, "steps_sqrt": round(steps["sqrt"] / 10) * 10,
                "steps_linear": round(steps["linear"] / 10) * 10, "ratio_sqrt_vs_grpo": round(ratio_sqrt, 2),
                "ratio_linear_vs_grpo": round(ratio_lin, 2), "post_sft_acc_grpo": round(final["grpo"], 1),
                "post_sft_acc_sqrt": round(final["sqrt"], 1)}
    checks = {"Sqrt-R faster than GRPO from scratch": bool(ratio_sqrt <= config.max_speed_ratio),
              "Linear-R faster than GRPO from scratch": bool(ratio_lin <= config.max_speed_ratio),
              "post-SFT gap small": bool(abs(gap) <= config.max_post_sft_gap)}
    return CLAIM, measured, checks


def responses_to_target(h: RLHistory, target: float) -> float:
    """Generated responses until the mean success first reaches `target` (inf if never)."""
    return time_to_target(h.accuracy, target, h.responses)


def results_table(part_b, part_c, sft_acc, config: AsymConfig) -> str:
    """Markdown table: per scheme, mean updates and generated responses to the target, final
    accuracy, fraction of all-wrong groups at the first step, post-SFT final accuracy."""
    steps = mean_steps(part_b, config.target_acc)
    rows = ["| scheme | paper (from scratch, its scale) | ours: updates to "
            f"{config.target_acc:.0%} (mean of {config.seeds} seeds, budget {config.rl_steps}) | ours: generated responses "
            f"to {config.target_acc:.0%} | ours: final acc. | ours: groups with no success at step 1 | "
            "ours: post-SFT final acc. |", "|---|---|---|---|---|---|---|"]
    paper = {"rloo": "symmetric baseline", "grpo": "symmetric baseline", "dapo": "symmetric baseline",
             "linear": "substantially better (no numbers available)", "sqrt": "substantially better (no numbers available)"}
    for s, hs in part_b.items():
        post = f"{np.mean([h.accuracy[-1] for h in part_c[s]]):.2f}" if s in part_c else "-"
        r = [responses_to_target(h, config.target_acc) for h in hs]
        reached = [x for x in r if np.isfinite(x)]
        resp = (f"{np.mean(r) / 1000:.0f}k" if len(reached) == len(r)
                else f"not reached in {len(r) - len(reached)} of {len(r)} runs")
        rows.append(f"| {LABELS[s]} | {paper.get(s, '-')} | {steps[s]:.0f} | {resp} | {np.mean([h.accuracy[-1] for h in hs]):.2f} | "
                    f"{np.mean([h.zero_frac[0] for h in hs]):.2f} | {post} |")
    rows.append(f"\nSFT warm-up reached mean accuracy {np.mean(sft_acc):.2f} before the post-SFT RL runs "
                f"(RL after SFT at learning rate {config.post_sft_lr:g}, from scratch at {config.lr:g}).")
    return "\n".join(rows)


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
