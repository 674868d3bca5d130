"""Figures of the LMAC chapter (column width, book style: `icml26.common.plotting`)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from icml26.common import BASELINE, METHOD, PALETTE
from icml26.common.plotting import add_colorbar, book_figure

from .env import important_state, state_names

ARM_COLORS = {"LMAC": METHOD, "FullComm": BASELINE, "NoComm": PALETTE[2], "State": PALETTE[3], "TarMAC": PALETTE[4]}


def _short(name: str) -> str:
    return name.replace("striker", "s").replace("overseer", "ov").replace("target", "tgt")


def plot_world(env, index: int = 0, ax=None):
    """One Overseer episode: who stands where, and who can see the target."""
    ax = ax or plt.gca()
    g = env.grid
    pos, tgt = env.pos[index].cpu().numpy(), env.target[index].cpu().numpy()
    ax.set_xlim(-0.5, g - 0.5)
    ax.set_ylim(-0.5, g - 0.5)
    ax.set_xticks(range(g))
    ax.set_yticks(range(g))
    ax.set_aspect("equal")
    # agents that share a cell with the target or with each other move apart inside the cell (the
    # star to the upper left, agents from the lower right on), so the star and every number show
    cells: dict[tuple, list[int]] = {}
    for a, (x, y) in enumerate(pos):
        cells.setdefault((int(x), int(y)), []).append(a)
    shown, star = pos.astype(float), tgt.astype(float)
    for (x, y), agents in cells.items():
        on_target = (x, y) == (int(tgt[0]), int(tgt[1]))
        if len(agents) == 1 and not on_target:
            continue
        if on_target:
            star = star + 0.25 * np.array([-1.0, 1.0])
        for k, a in enumerate(agents):
            angle = -np.pi / 4 - k * 2 * np.pi / max(len(agents) + on_target, 3)
            shown[a] = (x + 0.28 * np.cos(angle), y + 0.28 * np.sin(angle))
    ax.plot([pos[0][0], star[0]], [pos[0][1], star[1]], ":", color=BASELINE)
    ax.scatter(*star, s=400, marker="*", color="gold", edgecolor="k", zorder=5, label="target")
    ax.scatter(*shown[0], s=220, marker="s", color=BASELINE, zorder=3, label="overseer (sees target)")
    for i, (x, y) in enumerate(shown[1:], start=1):
        ax.scatter(x, y, s=200, marker="o", color=METHOD, zorder=3, label="striker (sees itself)" if i == 1 else None)
        ax.annotate(str(i), (x, y), ha="center", va="center", color="white", fontsize=9, zorder=4)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
    ax.set_xlabel("x cell")
    ax.set_ylabel("y cell")
    ax.set_title("Overseer gridworld (one episode)")
    return ax


def plot_sr(sr, n_strikers: int, ax, title: str = "", ylabels: bool = True):
    """Heat map of SR_{i,d}: agents x important state dims; returns the image for a colour bar."""
    im = ax.imshow(np.asarray(sr), vmin=0, vmax=1, cmap="RdYlGn", aspect="auto")
    names = [state_names(n_strikers)[d] for d in important_state(n_strikers)]
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels([_short(n) for n in names], rotation=90)
    ax.set_yticks(range(len(sr)))
    ax.set_yticklabels(["ov"] + [f"s{i}" for i in range(1, len(sr))] if ylabels else [])
    ax.grid(False)
    ax.set_title(title)
    return im


def plot_sr_panels(tables: list, titles: list[str], n_strikers: int, note: str = ""):
    """Several SR heat maps side by side (at most 4 per row) with one colour bar; `note` (for
    instance which reconstructor seed the maps come from) becomes the figure's title."""
    ncols = min(4, len(tables))
    nrows = -(-len(tables) // ncols)
    fig, axes = book_figure(nrows, ncols, height=2.9 * nrows, squeeze=False)
    im = None
    for k, ax in enumerate(axes.flat):
        if k >= len(tables):
            ax.axis("off")
            continue
        im = plot_sr(tables[k], n_strikers, ax, titles[k], ylabels=k % ncols == 0)
    add_colorbar(im, axes.flat[len(tables) - 1], "recovery success SR")
    if note:
        fig.suptitle(note, fontsize=10)
    return fig


def plot_refinement(refinement, n_strikers: int, note: str = ""):
    """SR heat map after every accepted proposal of the loop (initial protocol, then each step);
    `note` as in `plot_sr_panels`."""
    rounds = [r for r in refinement.history if r.awareness is not None]
    titles = [("initial" if r.step == 0 else f"after step {r.step}") + f"\nmin {r.awareness.accuracy:.2f}, "
              f"size {r.message_size}" for r in rounds]
    return plot_sr_panels([r.awareness.sr.cpu().numpy() for r in rounds], titles, n_strikers, note)


def plot_learning(results):
    """Training success vs env steps (mean over seeds) and final greedy success vs message size.
    The State arm sends no message but is given the true state, so it is not a point at size 0
    (NoComm's column) but a reference: a dashed line at its mean and a band over its seeds."""
    fig, (a, b) = book_figure(1, 2, height=3.0)
    for arm in results.config.arms:
        runs = [r for r in results.runs if r.arm == arm]
        curve = np.mean([r.curve for r in runs], axis=0)
        a.plot(np.asarray(runs[0].env_steps) / 1e3, curve, label=arm, color=ARM_COLORS[arm],
               lw=2.5 if arm == "LMAC" else 1.5)
    a.set_xlabel("env steps (thousands)")
    a.set_ylabel("training success rate")
    a.legend()
    a.set_title("Learning (mean over seeds)")
    for arm in results.config.arms:
        vals = results.success_per_seed(arm)
        if arm == "State":
            b.axhspan(min(vals), max(vals), color=ARM_COLORS[arm], alpha=0.15, lw=0)
            b.axhline(results.success(arm), ls="--", lw=1.5, color=ARM_COLORS[arm], label="State (band: seeds)")
            continue
        size = results.message_size(arm)
        b.scatter([size] * len(vals), vals, s=18, color=ARM_COLORS[arm], alpha=0.5)
        b.scatter(size, results.success(arm), s=70, color=ARM_COLORS[arm], label=arm, zorder=3)
    b.set_xlabel("numbers sent per step")
    b.set_ylabel("greedy success rate")
    b.set_ylim(-0.05, 1.05)
    b.legend(loc="upper right", ncol=2)  # above every arm's points and the State band
    b.set_title("Success vs message size")
    return fig
