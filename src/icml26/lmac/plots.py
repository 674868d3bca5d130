"""Figures of the LMAC chapter."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from icml26.common import BASELINE, METHOD, PALETTE

from .env import state_names

ARM_COLORS = {"LMAC": METHOD, "FullComm": BASELINE, "NoComm": PALETTE[2 % len(PALETTE)],
              "State": PALETTE[3 % len(PALETTE)], "TarMAC": PALETTE[4 % len(PALETTE)]}


def plot_world(env, index: int = 0, ax=None):
    """One Overseer episode: who stands where, and who can see the target."""
    ax = ax or plt.gca()
    g = env.grid
    pos, tgt = env.pos[index].cpu().numpy(), env.target[index].cpu().numpy()
    ax.set_xlim(-0.5, g - 0.5)
    ax.set_ylim(-0.5, g - 0.5)
    ax.set_xticks(range(g))
    ax.set_yticks(range(g))
    ax.grid(True, alpha=0.3)
    ax.set_aspect("equal")
    ax.scatter(*tgt, s=600, marker="*", color="gold", edgecolor="k", zorder=2, label="target")
    ax.scatter(*pos[0], s=250, marker="s", color=BASELINE, zorder=3, label="overseer (sees target)")
    for i, (x, y) in enumerate(pos[1:], start=1):
        ax.scatter(x, y, s=200, marker="o", color=METHOD, zorder=3, label="striker (sees itself)" if i == 1 else None)
        ax.annotate(str(i), (x, y), ha="center", va="center", color="white", fontsize=9, zorder=4)
    ax.plot([pos[0][0], tgt[0]], [pos[0][1], tgt[1]], ":", color=BASELINE)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8)
    ax.set_title("Overseer gridworld (one episode)")
    return ax


def plot_sr(sr, n_strikers: int, ax=None, title: str = "", colorbar: bool = True):
    """Heat map of SR_{i,d}: agents x state dims."""
    ax = ax or plt.gca()
    im = ax.imshow(np.asarray(sr), vmin=0, vmax=1, cmap="RdYlGn", aspect="auto")
    names = state_names(n_strikers)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels([n.replace("striker", "s").replace("overseer", "ov").replace("target", "tgt") for n in names],
                       rotation=60, fontsize=7)
    ax.set_yticks(range(len(sr)))
    ax.set_yticklabels(["overseer"] + [f"striker {i}" for i in range(1, len(sr))], fontsize=8)
    ax.set_title(title, fontsize=9)
    if colorbar:
        plt.colorbar(im, ax=ax, fraction=0.04)
    return im


def plot_refinement(refinement, n_strikers: int):
    """SR heat map after every accepted/evaluated proposal of the loop."""
    rounds = [r for r in refinement.history if r.awareness is not None]
    fig, axes = plt.subplots(1, len(rounds), figsize=(3.2 * len(rounds), 2.8), squeeze=False)
    for ax, r in zip(axes[0], rounds):
        label = "P0" if r.step == 0 else f"step {r.step}, round {r.index}"
        plot_sr(r.awareness.sr.cpu().numpy(), n_strikers, ax=ax, colorbar=False,
                title=f"{label}\nmin={r.awareness.accuracy:.2f} gap={r.awareness.gap:.2f} size={r.message_size}")
        if ax is not axes[0][0]:
            ax.set_yticklabels([])
    fig.tight_layout()
    return fig


def plot_learning(results):
    """Training success vs env steps (mean over seeds) and final greedy success vs message size."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 3.6))
    for arm in results.config.arms:
        runs = [r for r in results.runs if r.arm == arm]
        curve = np.mean([r.curve for r in runs], axis=0)
        a.plot(np.asarray(runs[0].env_steps) / 1e3, curve, label=arm, color=ARM_COLORS[arm],
               lw=2.5 if arm == "LMAC" else 1.5)
    a.set_xlabel("environment steps (thousands)")
    a.set_ylabel("training success rate")
    a.legend()
    a.set_title("Learning curves (mean over seeds)")
    for arm in results.config.arms:
        size = results.message_size(arm) if arm != "State" else 0
        b.scatter(size, results.success(arm), s=80, color=ARM_COLORS[arm], label=arm, zorder=3)
        b.annotate(arm if arm != "State" else "State (given s)", (size, results.success(arm)),
                   textcoords="offset points", xytext=(6, -12) if arm == "State" else (6, 4), fontsize=8)
    b.set_xlabel("numbers sent per step (all agents)")
    b.set_ylabel("greedy success rate")
    b.set_ylim(-0.05, 1.05)
    b.set_title("Final success vs message size")
    fig.tight_layout()
    return fig
