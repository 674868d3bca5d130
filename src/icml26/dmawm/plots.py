"""Figures for the DMAWM chapter (book figure policy: column width, fonts >= 8.5 pt)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from icml26.common import BASELINE, METHOD, PALETTE, add_colorbar, book_figure, check_figure

LABELS = {"dmawm": "DMAWM (disentangled)", "joint": "joint-latent WM", "model_free": "model-free"}
SHORT = {"dmawm": "DMAWM", "joint": "joint WM", "model_free": "model-free"}
COLORS = {"dmawm": METHOD, "joint": BASELINE, "model_free": PALETTE[2]}


def plot_task(config):
    """The Follow-the-Scout grid: start column, the two goal sites, who sees what."""
    fig, ax = book_figure(1, 1, height=2.2 if config.grid_height == 1 else 3.0)
    W, H = config.grid_width, config.grid_height
    for x in range(W):
        for y in range(H):
            ax.add_patch(plt.Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, color="0.7"))
    mid = H // 2
    for gx, name in ((0, "goal A"), (W - 1, "goal B")):
        ax.add_patch(plt.Rectangle((gx - 0.5, mid - 0.5), 1, 1, color="gold", alpha=0.5))
        ax.text(gx, mid + 0.3, name, ha="center", fontsize=9)
    ax.scatter([W // 2], [mid - 0.15], s=120, color=METHOD, label="scout (sees the active goal)")
    ax.scatter([W // 2], [mid + 0.15], s=120, color=BASELINE, label="follower (sees only positions)")
    ax.set_xlim(-0.6, W - 0.4); ax.set_ylim(-0.6, H - 0.4); ax.set_aspect("equal")
    ax.set_xticks([]); ax.set_yticks([]); ax.grid(False)
    ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=9)
    ax.set_title("Follow-the-Scout: both must stand on the active goal")
    check_figure(fig)
    return fig


def _same_as(results, m: str, key: str) -> str | None:
    """The method drawn before `m` whose `key` history equals m's in every seed, if any."""
    def curves(name):
        return [[(h["env_steps"], h.get(key)) for h in run["history"]] for run in results[name]]
    earlier = list(results)[:list(results).index(m)]
    return next((e for e in earlier if curves(e) == curves(m)), None)


def plot_history(results, cap: int):
    """Real decentralized validation success per round (the convergence rule's curve), and the
    world models' imagined vs real return. Every method's solid lines are drawn a little
    thinner than the one before, on top of it, so a method whose curves equal an earlier
    method's shows as a thin line inside a wide one, and its legend entry says so."""
    fig, axes = book_figure(1, 2, height=3.0)
    for j, (m, runs) in enumerate(results.items()):
        lw, ms = (4.5, 6.5) if j == 0 else (1.4, 3.0)  # the first wide and translucent, the others thin on top
        style = dict(lw=lw, ms=ms, alpha=0.5 if j == 0 else 1.0, color=COLORS[m], zorder=2 + j)
        twin = {key: _same_as(results, m, key) for key in ("success", "real_return")}
        for k, run in enumerate(runs):
            steps = [h["env_steps"] for h in run["history"]]
            lab = SHORT[m] if k == 0 else None
            note = lambda key: f" (= {SHORT[twin[key]]})" if twin[key] else ""  # noqa: E731
            axes[0].plot(steps, [h["success"] for h in run["history"]], "o-", label=lab and lab + note("success"), **style)
            if "imagined_return" in run["history"][0]:
                axes[1].plot(steps, [h["real_return"] for h in run["history"]], "o-",
                             label=lab and lab + " real" + note("real_return"), **style)
                axes[1].plot(steps, [h["imagined_return"] for h in run["history"]], "x--", color=COLORS[m], lw=1.2,
                             zorder=5, label=lab and lab + " imagined")
    axes[0].set_xlabel("environment steps"); axes[0].set_ylabel("validation success")
    axes[0].set_ylim(-0.03, 1.05); axes[0].legend()
    axes[0].set_title(f"success (cap {cap} rounds)")
    axes[1].set_xlabel("environment steps"); axes[1].set_ylabel("episode return"); axes[1].legend(fontsize=8.5)
    axes[1].set_title("world models: dream vs reality")
    check_figure(fig)
    return fig


def plot_summary(summary, probe_lines=(0.6, 0.9)):
    """Bars: follower probe accuracy (t=0, world models) and real success (every method)."""
    fig, axes = book_figure(1, 2, height=2.8)
    wms = [m for m in summary if "probe" in summary[m]]
    axes[0].bar([SHORT[m] for m in wms], [summary[m]["probe"] for m in wms], color=[COLORS[m] for m in wms])
    axes[0].axhline(0.5, color="k", ls=":", label="chance")
    for y in probe_lines:
        axes[0].axhline(y, color="0.5", ls="--", lw=0.8)
    axes[0].set_ylim(0, 1.05); axes[0].set_ylabel("probe acc. (goal)"); axes[0].legend()
    axes[0].set_title("follower latent at t=0")
    ms = list(summary)
    axes[1].bar([SHORT[m] for m in ms], [summary[m]["success"] for m in ms], color=[COLORS[m] for m in ms])
    axes[1].set_ylim(0, 1.05); axes[1].set_ylabel("real success"); axes[1].set_title("decentralized execution")
    check_figure(fig)
    return fig


def plot_dream(d, title=""):
    """Agents' x-position over time: real episode (solid) vs the model's imagination (dashed)."""
    fig, axes = book_figure(1, 2, height=2.8, gridspec_kw={"width_ratios": [2.2, 1]})
    t = np.arange(np.asarray(d["real"]).shape[0])
    for i, (name, c) in enumerate((("scout", METHOD), ("follower", BASELINE))):
        axes[0].plot(t, d["real"][:, i], "-o", ms=3, color=c, label=f"{name}, real")
        axes[0].plot(t, d["dream"][:, i], "--", color=c, label=f"{name}, dream")
    axes[0].axhline(d["goal_x"], color="gold", lw=3, alpha=0.6, label="active goal")
    axes[0].set_xlabel("step"); axes[0].set_ylabel("x position"); axes[0].legend(fontsize=8.5, ncol=2)
    axes[0].set_title(title)
    im = axes[1].imshow(np.asarray(d["attention"]).mean(0), vmin=0, vmax=1, cmap="viridis")
    axes[1].set_xticks([0, 1], ["scout", "follower"]); axes[1].set_yticks([0, 1], ["scout", "follower"])
    axes[1].grid(False); axes[1].set_title("attention")
    add_colorbar(im, axes[1], "weight")
    check_figure(fig)
    return fig
