"""Figures of the chapter."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import torch

from icml26.common import BASELINE, METHOD, PALETTE
from icml26.common.plotting import book_figure


def draw_scene(ax, center=(0.0, 0.0), radius: float = 0.3, goal=None) -> None:
    ax.add_patch(plt.Circle(tuple(float(v) for v in center), radius, color="0.8", zorder=0))
    if goal is not None:
        ax.plot(*[float(v) for v in goal], marker="*", color="k", ms=10)
    ax.set_xlim(-1, 1); ax.set_ylim(-1, 1); ax.set_aspect("equal"); ax.set_xticks([]); ax.set_yticks([])


def plot_paths(ax, rollout, title: str, n: int = 30, radius: float = 0.3) -> None:
    """Paths of the first `n` episodes: green = success, red = failure (collision or timeout)."""
    draw_scene(ax, radius=radius)
    for i in range(min(n, rollout.paths.shape[0])):
        p = rollout.paths[i].numpy()
        ax.plot(p[:, 0], p[:, 1], color=METHOD if rollout.success[i] else BASELINE, lw=0.8, alpha=0.8)
    ax.set_title(f"{title}\nsuccess {rollout.success.float().mean():.2f}", fontsize=9)


def plot_demos(demos, n: int = 40, radius: float = 0.3):
    """The bimodal expert and the mean of its two modes (which hits the obstacle)."""
    fig, ax = book_figure(1, 1, height=3.4)
    draw_scene(ax, radius=radius)
    for i in range(min(n, demos.obs.shape[0])):
        L = int(demos.lengths[i])
        p = demos.obs[i, :L, :2].numpy()
        ax.plot(p[:, 0], p[:, 1], color=PALETTE[0] if demos.side[i] < 0 else PALETTE[1], lw=0.8, alpha=0.7)
    T = int(demos.lengths.min())
    mean = demos.obs[:, :T, :2].mean(0).numpy()
    ax.plot(mean[:, 0], mean[:, 1], "k--", lw=2, label="mean of the demos")
    ax.legend(loc="lower right", fontsize=9)
    ax.set_title("expert demonstrations (left/right detours)", fontsize=9)
    return fig


def plot_all_paths(result, n: int = 30):
    """Paths of every method on the same scenes, four panels per row."""
    names = list(result.rollouts)
    rows = (len(names) + 3) // 4
    fig, axes = book_figure(rows, 4, height=2.2 * rows)
    axes = np.atleast_1d(axes).ravel()
    for ax, name in zip(axes, names):
        plot_paths(ax, result.rollouts[name], name, n, result.config.obstacle_radius)
    for ax in axes[len(names):]:
        ax.set_visible(False)
    return fig


def plot_success_latency(result):
    """Success (mean and per seed) and the batch-1 latency of every method."""
    names = list(result.rollouts)
    succ = np.stack([result.success(n) for n in names])  # (methods, seeds)
    ms = np.array([result.latency_batch1[n] * 1e3 for n in names])  # latency of one decision, batch 1
    fig, (a, b) = book_figure(1, 2, height=3.4)
    colors = [METHOD if n.startswith("STEP") else BASELINE for n in names]
    a.bar(range(len(names)), succ.mean(1), color=colors, alpha=0.8)
    for j in range(succ.shape[1]):
        a.scatter(range(len(names)), succ[:, j], color="k", s=8, zorder=3)
    a.set_xticks(range(len(names)), names, rotation=35, ha="right", fontsize=8.5); a.set_ylabel("success rate")
    a.set_ylim(0, 1.05)
    for n, x, y in zip(names, ms, succ.mean(1)):
        b.scatter(x, y, color=METHOD if n.startswith("STEP") else BASELINE)
        b.annotate(n, (x, y), fontsize=8.5, xytext=(3, 3), textcoords="offset points")
    b.set_xscale("log"); b.set_xlabel("ms per decision (batch 1)"); b.set_ylabel("success rate")
    return fig


def plot_contraction(contraction):
    fig, (a, b) = book_figure(1, 2, height=3.0)
    err = contraction["error"]
    labels = [f"t={t}" for t in contraction["timesteps"]] + ["output"]
    a.plot(range(len(err)), err, "o-", color=METHOD)
    a.set_xticks(range(len(err)), labels); a.set_ylabel(r"mean $\|\tilde A_k - A^*_k\|$"); a.set_yscale("log")
    a.set_title("error of the warm-started refinement", fontsize=9)
    b.bar(range(len(contraction["ratio"])), contraction["ratio"], color=METHOD, alpha=0.8)
    b.axhline(1.0, color="k", lw=1, ls="--")
    b.set_xticks(range(len(contraction["ratio"])), [f"{labels[i]}→{labels[i+1]}" for i in range(len(labels) - 1)],
                 fontsize=8.5, rotation=20)
    b.set_ylabel("median ratio $c_k$"); b.set_title("per-step contraction ratio", fontsize=9)
    return fig


def plot_explore(rollouts: dict, radius: float = 0.3):
    fig, axes = book_figure(1, len(rollouts), height=3.0)
    for ax, (name, r) in zip(np.atleast_1d(axes), rollouts.items()):
        plot_paths(ax, r, name, r.paths.shape[0], radius)
    return fig


def results_markdown(result, paper: dict[str, str]) -> str:
    """Table: method, the paper's figure (state-based Push-T success at its scale), ours (this
    scale), collisions, time per decision at batch 1."""
    rows = ["| method | paper: Push-T success (state-based) | ours: success (150 episodes) | collisions "
            "| ms per decision (batch 1) |", "|---|---|---|---|---|"]
    for name in result.rollouts:
        rows.append(f"| {name} | {paper.get(name, '–')} | {result.success(name).mean():.2f} | "
                    f"{result.collision(name).mean():.2f} | {result.latency_batch1[name] * 1e3:.1f} |")
    return "\n".join(rows)


def plot_startup(result, n: int = 30):
    """Paths of the start-up diagnostics (`experiment.startup_diagnostics`) on the same scenes."""
    runs = result.startup
    fig, axes = book_figure(1, len(runs), height=3.2)
    for ax, (name, r) in zip(np.atleast_1d(axes), runs.items()):
        plot_paths(ax, r, name.replace(", ", ",\n", 1).replace(" (", "\n(", 1), n, result.config.obstacle_radius)
    return fig
