"""Figures for the DMAWM chapter."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from icml26.common import BASELINE, METHOD

LABELS = {"dmawm": "DMAWM (disentangled)", "joint": "joint-latent WM"}
COLORS = {"dmawm": METHOD, "joint": BASELINE}


def plot_task(config):
    """The Follow-the-Scout grid: start column, the two goal sites, who sees what."""
    fig, ax = plt.subplots(figsize=(6, 2.6))
    W, H = config.grid_width, config.grid_height
    for x in range(W):
        for y in range(H):
            ax.add_patch(plt.Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, color="0.8"))
    mid = H // 2
    for gx, name in ((0, "goal A"), (W - 1, "goal B")):
        ax.add_patch(plt.Rectangle((gx - 0.5, mid - 0.5), 1, 1, color="gold", alpha=0.5))
        ax.text(gx, mid + 0.3, name, ha="center", fontsize=8)
    ax.scatter([W // 2], [mid - 0.15], s=120, color=METHOD, label="scout (sees the active goal)")
    ax.scatter([W // 2], [mid + 0.15], s=120, color=BASELINE, label="follower (sees only positions)")
    ax.set_xlim(-0.6, W - 0.4); ax.set_ylim(-0.6, H - 0.4); ax.set_aspect("equal")
    ax.set_xticks([]); ax.set_yticks([])
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.02), ncol=2, fontsize=8, frameon=False)
    ax.set_title("Follow-the-Scout: both must stand on the active goal")
    return fig


def plot_history(results):
    """Real decentralized success and the imagined/real return per collection round."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
    for m, runs in results.items():
        for k, run in enumerate(runs):
            steps = [h["env_steps"] for h in run["history"]]
            lab = LABELS[m] if k == 0 else None
            axes[0].plot(steps, [h["success"] for h in run["history"]], "o-", color=COLORS[m], label=lab)
            axes[1].plot(steps, [h["real_return"] for h in run["history"]], "o-", color=COLORS[m], label=lab and lab + " real")
            axes[1].plot(steps, [h["imagined_return"] for h in run["history"]], "x--", color=COLORS[m],
                         label=lab and lab + " imagined")
    axes[0].set_xlabel("environment steps"); axes[0].set_ylabel("decentralized success rate"); axes[0].legend()
    axes[1].set_xlabel("environment steps"); axes[1].set_ylabel("episode return"); axes[1].legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_summary(summary, config):
    """Bars: follower probe accuracy (t=0) and real success, for both methods."""
    fig, axes = plt.subplots(1, 2, figsize=(8, 3))
    ms = list(summary)
    axes[0].bar([LABELS[m] for m in ms], [summary[m]["probe"] for m in ms], color=[COLORS[m] for m in ms])
    axes[0].axhline(0.5, color="k", ls=":", label="chance")
    axes[0].axhline(config.probe_chance_max, color="0.5", ls="--", lw=0.8)
    axes[0].axhline(config.probe_joint_min, color="0.5", ls="--", lw=0.8)
    axes[0].set_ylim(0, 1.05); axes[0].set_ylabel("probe accuracy: follower latent -> goal"); axes[0].legend()
    axes[1].bar([LABELS[m] for m in ms], [summary[m]["success"] for m in ms], color=[COLORS[m] for m in ms])
    axes[1].set_ylim(0, 1.05); axes[1].set_ylabel("real decentralized success")
    for ax in axes:
        ax.tick_params(axis="x", labelsize=8)
    fig.tight_layout()
    return fig


def plot_dream(d, title=""):
    """Agents' x-position over time: real episode (solid) vs the model's imagination (dashed)."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3), gridspec_kw={"width_ratios": [3, 1]})
    t = np.arange(d["real"].shape[0])
    for i, (name, c) in enumerate((("scout", METHOD), ("follower", BASELINE))):
        axes[0].plot(t, d["real"][:, i], "-o", color=c, label=f"{name}, real")
        axes[0].plot(t, d["dream"][:, i], "--", color=c, label=f"{name}, imagined")
    axes[0].axhline(d["goal_x"], color="gold", lw=3, alpha=0.6, label="active goal")
    axes[0].set_xlabel("step"); axes[0].set_ylabel("x position"); axes[0].legend(fontsize=7, ncol=3)
    axes[0].set_title(title)
    im = axes[1].imshow(d["attention"].mean(0).numpy(), vmin=0, vmax=1, cmap="viridis")
    axes[1].set_xticks([0, 1], ["scout", "follower"]); axes[1].set_yticks([0, 1], ["scout", "follower"])
    axes[1].set_title("attention (mean over dream)", fontsize=9); fig.colorbar(im, ax=axes[1])
    fig.tight_layout()
    return fig
