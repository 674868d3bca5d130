"""Figures of the chapter (book style: column width, colour bars on heatmaps, integer ticks)."""

from __future__ import annotations

import numpy as np

from icml26.common import BASELINE, METHOD, PALETTE
from icml26.common.plotting import add_colorbar, book_figure

from .fields import CONSTRUCTIONS

TITLES = {"symmetrized": "Eq. 3 (fold × η)", "naive_wrap": "naive wrap", "group_average": "group averaging"}
COLORS = {"symmetrized": METHOD, "naive_wrap": BASELINE, "group_average": PALETTE[2]}


def plot_patterns(r: dict, title: str = ""):
    """The three constructions' patterns (top row) and the gradient magnitude of the same
    construction over a blurred copy of the picture (bottom row): the blur removes the picture's
    own edges, so what stays bright is a seam, a jump of the construction itself. One colour
    scale for the bottom row, set by the largest of the three panels."""
    fig, axes = book_figure(2, 3, height=5.0)
    vmax = max(float(np.quantile(r[kind + "_seam"], 0.995)) for kind in CONSTRUCTIONS)
    for k, kind in enumerate(CONSTRUCTIONS):
        axes[0, k].imshow(r[kind], cmap="gray", extent=r["extent"])
        axes[0, k].set_title(TITLES[kind])
        im = axes[1, k].imshow(r[kind + "_seam"], cmap="magma", vmin=0, vmax=vmax, extent=r["extent"])
        for a in axes[:, k]:
            a.set_xticks([]); a.set_yticks([])
    axes[0, 0].set_ylabel("pattern")
    axes[1, 0].set_ylabel("|gradient|, blurred picture")
    add_colorbar(im, axes[1, 2], "|gradient|")
    if title:
        fig.suptitle(title)
    return fig


def plot_tears(cont: dict, groups: tuple[str, ...], max_continuous: float, min_naive: float):
    """Tear ratio of every construction on every group (log scale), with the two bars."""
    fig, ax = book_figure(1, 1, height=3.0)
    xs = np.arange(len(groups))
    for k, kind in enumerate(CONSTRUCTIONS):
        ax.bar(xs + (k - 1) * 0.27, [cont[(g, kind)] for g in groups], 0.27, label=TITLES[kind], color=COLORS[kind])
    ax.axhline(max_continuous, ls="--", c="k", lw=1, label="no seam (≤)")
    ax.axhline(min_naive, ls=":", c="k", lw=1, label="torn (≥)")
    ax.set_xticks(xs); ax.set_xticklabels(groups, rotation=90)
    ax.set_ylabel("tear ratio L(h/10)/L(h)"); ax.legend(ncols=3, loc="upper left")
    ax.set_ylim(0, max(max(cont.values()) * 1.35, min_naive * 1.5))
    return fig


def plot_fits(fitting: dict, groups: tuple[str, ...]):
    """Target and the three fits of one cell per group (held-out grid), PSNR in the titles;
    `fitting` is `run_experiment(...)["fitting"]`."""
    fig, axes = book_figure(len(groups), 4, height=1.75 * len(groups))
    axes = np.atleast_2d(axes)
    for i, g in enumerate(groups):
        im = axes[i, 0].imshow(np.asarray(fitting[g]["target"]), cmap="gray", vmin=0, vmax=1)
        axes[i, 0].set_ylabel(g)
        axes[i, 0].set_title("target" if i == 0 else "")
        for k, kind in enumerate(CONSTRUCTIONS):
            axes[i, k + 1].imshow(np.asarray(fitting[g]["preds"][kind]), cmap="gray", vmin=0, vmax=1)
            axes[i, k + 1].set_title(f"{TITLES[kind].split(' (')[0]}: {fitting[g]['psnr'][kind]:.1f} dB", fontsize=8.5)
        for a in axes[i]:
            a.set_xticks([]); a.set_yticks([])
    add_colorbar(im, axes[:, 3].tolist()[-1], "intensity")
    return fig


def plot_base_sweep(sweep: dict, min_gain: float):
    """C3: held-out PSNR of Eq. 3 against the base's parameter count, per group, and each
    group's gain from the smallest to the largest base; `sweep` is
    `run_experiment(...)["base_sweep"]`."""
    groups = list(sweep["groups"])
    fig, (a1, a2) = book_figure(1, 2, height=3.2)
    for i, g in enumerate(groups):
        c = PALETTE[i % len(PALETTE)]
        v = sweep["groups"][g]
        a1.plot(v["params"], v["psnr"], "o-", color=c, label=g if len(groups) <= 8 else None, lw=1, ms=3)
        a2.bar(i, v["psnr"][-1] - v["psnr"][0], color=c)
    a1.set_xscale("log"); a1.set_xlabel("parameters of Eq. 3's base"); a1.set_ylabel("held-out PSNR (dB)")
    a1.set_title("fit quality as the base grows")
    if len(groups) <= 8:
        a1.legend(ncols=2)
    a2.axhline(min_gain, ls="--", c="k", lw=1, label=f"bar ({min_gain:g} dB)")
    a2.set_xticks(range(len(groups))); a2.set_xticklabels(groups, rotation=90 if len(groups) > 8 else 0)
    a2.set_ylabel("gain, smallest → largest (dB)"); a2.set_title("C3's deciding figures"); a2.legend()
    return fig


def plot_topology(topos: list[dict]):
    """Paper cutting: the island target, and per seed the binarised design without and with the
    VTM term (projected densities); `topos` is `run_experiment(...)["topology"]`."""
    fig, axes = book_figure(len(topos), 3, height=2.1 * len(topos))
    axes = np.atleast_2d(axes)
    for i, topo in enumerate(topos):
        axes[i, 0].imshow(np.asarray(topo["target"]), cmap="gray_r", vmin=0, vmax=1)
        axes[i, 0].set_title(f"target: {topo['target_components']} pieces", fontsize=8.5)
        axes[i, 0].set_ylabel(f"seed {i}")
        for a, label in zip(axes[i, 1:], ("fit only", "fit + VTM")):
            n = topo["components"][label]
            im = a.imshow(np.asarray(topo["rho"][label]), cmap="gray_r", vmin=0, vmax=1)
            a.set_title(f"{label}: {n} piece{'s' if n != 1 else ''}, grey {topo['grey'][label]:.2f}", fontsize=8.5)
        for a in axes[i]:
            a.set_xticks([]); a.set_yticks([])
    add_colorbar(im, axes[-1, 2], "density ρ")
    return fig
