"""Figures of the chapter."""

from __future__ import annotations

import numpy as np
import torch

from icml26.common import PALETTE, book_figure, check_figure

from .theory import optimal_weight
from .weighting import LABELS, advantage_coefficients, effective_weight, prompt_weight

COLORS = {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(("grpo", "sqrt", "linear", "rloo", "dapo", "uniform", "plateau"))}


def plot_weights(n: int = 8, schemes=("rloo", "grpo", "linear", "sqrt", "uniform", "plateau")):
    """Left: effective weight w(rho) with the discrete rho_hat grid of a group of n. Right: the
    advantage of a wrong response -a0(rho_hat) (non-zero at rho_hat = 0 only for asymmetric schemes)."""
    rho = torch.linspace(0.001, 0.999, 400, dtype=torch.float64)
    grid = torch.arange(n + 1, dtype=torch.float64) / n
    fig, axes = book_figure(1, 2, height=3.4)
    for s in schemes:
        w = effective_weight(s, rho)
        axes[0].plot(rho, w / w.max(), color=COLORS[s], label=LABELS[s])
        a1, a0 = advantage_coefficients(s, grid, n)
        axes[1].plot(grid[:-1], -a0[:-1], "o-", color=COLORS[s], label=LABELS[s], ms=4)
    axes[0].set(xlabel=r"success probability $\rho$", ylabel=r"$w(\rho)$ (max = 1)",
                title=r"weight on $\bar g_1-\bar g_0$")
    axes[1].axvline(0, color="grey", lw=0.8)
    axes[1].set(xlabel=rf"$\hat\rho$ (group of M = {n})", ylabel="advantage of a wrong answer",
                title=r"wrong answers at $\hat\rho$")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=3)
    check_figure(fig)
    return fig


def plot_optimal(rho_num: dict, schemes=("grpo", "sqrt", "linear", "rloo")):
    """Optimal weights (closed form, lines; numerical minimisation, dots) vs rho, both clocks,
    with the schemes' weights, all normalised at rho = 0.5."""
    rho = torch.logspace(-2.5, np.log10(0.99), 300, dtype=torch.float64)
    fig, axes = book_figure(1, 2, height=3.6, sharey=True)
    for ax, clock in zip(axes, ("updates", "responses")):
        half = torch.tensor(0.5, dtype=torch.float64)
        for s in schemes:
            ax.loglog(rho, prompt_weight(s, rho) / prompt_weight(s, half), color=COLORS[s], lw=1, alpha=0.7, label=LABELS[s])
        opt = optimal_weight(rho, clock) / optimal_weight(half, clock)
        ax.loglog(rho, opt, "k--", lw=2, label="optimal (closed form)")
        r, om = rho_num[clock]
        k = int(torch.argmin((r - 0.5).abs()))
        ax.loglog(r[::10], (om / om[k])[::10], "ko", ms=3, label="optimal (numerical)")
        ax.set(xlabel=r"$\rho$", title=f"clock: {clock}")
    axes[0].set_ylabel(r"$\omega(\rho)\,/\,\omega(0.5)$")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=3)
    check_figure(fig)
    return fig


def plot_simulator(part_a: dict, target: float):
    """Mean success vs updates and vs generated responses: Monte Carlo (solid) and theory (dashed)."""
    fig, axes = book_figure(2, 2, height=5.6)
    for row, regime in enumerate(("scratch", "post_sft")):
        for scheme, (mc, mf) in part_a[regime].items():
            c = COLORS[scheme]
            axes[row, 0].plot(mc.accuracy, color=c, label=LABELS[scheme])
            axes[row, 0].plot(mf.accuracy, "--", color=c, lw=1)
            axes[row, 1].plot(mc.responses, mc.accuracy, color=c)
            axes[row, 1].plot(mf.responses, mf.accuracy, "--", color=c, lw=1)
        for ax in axes[row]:
            ax.axhline(target, color="grey", lw=0.6, ls=":")
        axes[row, 0].set_ylabel(f"mean success\n({'from scratch' if regime == 'scratch' else 'post-SFT start'})")
        axes[row, 0].set_xlabel("updates")
        axes[row, 1].set_xlabel("responses per prompt")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=3)
    fig.suptitle("simulated (solid) vs expected-update theory (dashed)")
    check_figure(fig)
    return fig


def plot_training(runs: dict, target: float | None = None, title: str = ""):
    """Exact accuracy per update (left) and per generated response (middle), and the fraction of
    all-zero groups (right, smoothed), one line per seed (solid, dashed, ...). Runs may have
    different lengths: from scratch, each stops when it reaches the target (or at its cap)."""
    fig, axes = book_figure(2, 2, height=5.4)
    axes = axes.ravel()
    axes[3].axis("off")
    styles = ("-", "--", ":", "-.")
    for s, hs in runs.items():
        for k, h in enumerate(hs):
            ls, lab = styles[k % len(styles)], (LABELS[s] if k == 0 else None)
            axes[0].plot(h.accuracy, color=COLORS[s], ls=ls, lw=1.2, label=lab)
            axes[1].plot(h.responses / 1000, h.accuracy, color=COLORS[s], ls=ls, lw=1.2)
            if len(h.zero_frac):
                w = max(1, min(len(h.zero_frac), 15))
                axes[2].plot(np.arange(w - 1, len(h.zero_frac)), np.convolve(h.zero_frac, np.ones(w) / w, mode="valid"),
                             color=COLORS[s], ls=ls, lw=1.2)
    if target is not None:
        for ax in axes[:2]:
            ax.axhline(target, color="grey", lw=0.6, ls=":")
    axes[0].set(xlabel="updates", ylabel="exact mean success", title=title)
    axes[1].set(xlabel="generated responses (thousands)", title="clock: responses")
    axes[2].set(xlabel="updates", ylabel="groups, no success\n(15-update mean)", ylim=(0, 1))
    axes[3].legend(*axes[0].get_legend_handles_labels(), loc="center", title="one line per seed")
    check_figure(fig)
    return fig


def plot_explore(info: dict, rho0: float, target: float):
    """Widget view: weights at rho0 (GRPO = 1) and predicted time to target relative to the optimum."""
    schemes = [s for s in info if s != "optimal"]
    fig, axes = book_figure(1, 2, height=3.4)
    x = np.arange(len(schemes))
    axes[0].bar(x, [info[s]["omega"] for s in schemes], color=[COLORS[s] for s in schemes])
    axes[0].axhline(info["optimal"]["omega_responses"], color="k", ls="--", lw=1, label="optimal weight (responses)")
    axes[0].set(xticks=x, xticklabels=[LABELS[s] for s in schemes], yscale="log",
                title=rf"$\omega(\rho_0)$, $\rho_0$ = {rho0:.3f} (GRPO = 1)")
    axes[0].tick_params(axis="x", rotation=45)
    w = 0.38
    axes[1].bar(x - w / 2, [info[s]["time_updates"] for s in schemes], w, label="clock: updates", color="#999999")
    axes[1].bar(x + w / 2, [info[s]["time_responses"] for s in schemes], w, label="clock: responses",
                color=[COLORS[s] for s in schemes])
    axes[1].axhline(1, color="k", lw=0.8)
    axes[1].set(xticks=x, xticklabels=[LABELS[s] for s in schemes], yscale="log",
                title=rf"time to {target} (optimum = 1)")
    axes[1].tick_params(axis="x", rotation=45)
    handles = [h for ax in axes for h in ax.get_legend_handles_labels()[0]]
    labels = [t for ax in axes for t in ax.get_legend_handles_labels()[1]]
    fig.legend(handles, labels, loc="outside lower center", ncol=3)
    check_figure(fig)
    return fig


def plot_sim_run(res, label: str):
    """The second widget's view: one simulator run's mean success and all-zero groups per update."""
    fig, ax = book_figure(1, 2, height=2.8)
    ax[0].plot(res.accuracy)
    ax[0].set(xlabel="updates", ylabel="mean success", title=label)
    ax[1].plot(res.zero_frac)
    ax[1].set(xlabel="updates", ylabel="all-zero groups", ylim=(0, 1))
    check_figure(fig)
    return fig
