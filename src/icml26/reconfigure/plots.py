"""Figures of the chapter."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import torch

from icml26.common import BASELINE, METHOD, PALETTE, add_colorbar, book_figure, check_figure

from .config import CONFIGS, TERRAINS
from .env import velocity_and_energy

LABELS = {"ours": "ours (primitives + scheduler)", "no_eps": "W/O eps-greedy",
          "fixed": "best single fixed robot + PPO", "codesign": "best single co-designed robot"}
COLORS = {"ours": METHOD, "no_eps": PALETTE[2], "fixed": BASELINE, "codesign": PALETTE[3]}


def plot_speed_table(step_h: float = 0.4):
    """Top speed (effort 1, largest body) of each configuration on each terrain; 'X' = failure."""
    C, K = len(CONFIGS), len(TERRAINS)
    cfg = torch.arange(C).repeat_interleave(K)  # [C*K]
    ter = torch.arange(K).repeat(C)  # [C*K]
    v, _, fail = velocity_and_energy(cfg, torch.ones(C * K), ter, torch.full((C * K,), step_h), torch.ones(C * K))
    v = v.reshape(C, K).numpy()  # [C, K]
    fail = fail.reshape(C, K).numpy()
    fig, ax = book_figure(1, 1, height=3.0)
    im = ax.imshow(100 * v, cmap="Greens")
    add_colorbar(im, ax, "top speed (x100 per step)")
    for i in range(C):
        for j in range(K):
            ax.text(j, i, "X" if fail[i, j] else f"{100 * v[i, j]:.1f}", ha="center", va="center")
    ax.set_xticks(range(K), TERRAINS)
    ax.set_yticks(range(C), CONFIGS)
    ax.set_title(f"top speed per terrain (step height {step_h}); X = failure")
    ax.grid(False)
    check_figure(fig)
    return fig


def plot_progress(summary: dict, arms=("ours", "no_eps", "fixed", "codesign")):
    """Grouped bars: mean final progress per course and arm."""
    courses = list(summary["progress"]["ours"])
    fig, ax = book_figure(1, 1, height=3.0)
    w = 0.8 / len(arms)
    for i, a in enumerate(arms):
        ax.bar(np.arange(len(courses)) + i * w, [summary["progress"][a][k] for k in courses], w,
               label=LABELS[a], color=COLORS[a])
    ax.set_xticks(np.arange(len(courses)) + 0.4 - w / 2, courses)
    ax.set_ylabel("progress at the horizon")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8.5, loc="upper left", bbox_to_anchor=(1, 1))
    check_figure(fig)
    return fig


def plot_schedule(schedule: dict):
    """Configuration in use over time, for the first evaluation course of each kind
    (`schedule`: course -> [T] configuration index, from one seed's results)."""
    fig, ax = book_figure(1, 1, height=2.4)
    for i, (name, configs) in enumerate(schedule.items()):
        ax.plot(np.asarray(configs) + 0.06 * i, label=name, drawstyle="steps-post")
    ax.set_yticks(range(len(CONFIGS)), CONFIGS)
    ax.set_xlabel("step")
    ax.legend(fontsize=8.5, loc="upper left", bbox_to_anchor=(1, 1))
    ax.set_title("scheduler's choice of configuration")
    check_figure(fig)
    return fig


def plot_curves(result: dict):
    """Training curves: primitives' sub-task progress and the scheduler's course progress."""
    fig, axes = book_figure(1, 2, height=2.8)
    for name, c in result["curves"]["primitives"].items():
        axes[0].plot(c, label=name)
    axes[0].set_title("primitives (own sub-task)")
    axes[0].set_xlabel("PPO iteration"); axes[0].set_ylabel("distance")
    axes[0].legend(fontsize=8.5)
    axes[1].plot(result["curves"]["scheduler"], color=METHOD, label="eps-greedy")
    axes[1].plot(result["curves"]["scheduler_no_eps"], color=PALETTE[2], label="W/O eps-greedy")
    axes[1].set_title("scheduler (full courses)")
    axes[1].set_xlabel("iteration"); axes[1].set_ylabel("progress")
    axes[1].legend(fontsize=8.5)
    check_figure(fig)
    return fig
