"""Figures of the chapter (book style: column width, colour bars on heatmaps, integer ticks)."""

from __future__ import annotations

import numpy as np

from icml26.common import BASELINE, METHOD, PALETTE
from icml26.common.plotting import add_colorbar, book_figure

from .fields import CONSTRUCTIONS

TITLES = {"symmetrized": "Eq. 3 (fold × η)", "naive_wrap": "naive wrap", "group_average": "group averaging"}
COLORS = {"symmetrized": METHOD, "naive_wrap": BASELINE, "group_average": PALETTE[2]}


def plot_patterns(r: dict, title: str = ""):
    """The three constructions' patterns (top) and their gradient magnitude (bottom: seams are
    bright lines), from `experiment.render_patterns`; one colour scale for the bottom row."""
    fig, axes = book_figure(2, 3, height=5.0)
    vmax = float(np.quantile(r["symmetrized_grad"], 0.999) * 2)
    for k, kind in enumerate(CONSTRUCTIONS):
        axes[0, k].imshow(r[kind], cmap="gray", extent=r["extent"])
        axes[0, k].set_title(TITLES[kind])
        im = axes[1, k].imshow(r[kind + "_grad"], cmap="magma", vmin=0, vmax=vmax, extent=r["extent"])
        for a in axes[:, k]:
            a.set_xticks([]); a.set_yticks([])
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


def plot_fits(fits, groups: tuple[str, ...]):
    """Target and the three fits of one cell per group (held-out grid), PSNR in the titles."""
    fig, axes = book_figure(len(groups), 4, height=1.75 * len(groups))
    axes = np.atleast_2d(axes)
    for i, g in enumerate(groups):
        im = axes[i, 0].imshow(fits.targets[g], cmap="gray", vmin=0, vmax=1)
        axes[i, 0].set_ylabel(g)
        axes[i, 0].set_title("target" if i == 0 else "")
        for k, kind in enumerate(CONSTRUCTIONS):
            axes[i, k + 1].imshow(fits.preds[(g, kind)], cmap="gray", vmin=0, vmax=1)
            axes[i, k + 1].set_title(f"{TITLES[kind].split(' (')[0]}: {fits.psnr[(g, kind)]:.1f} dB", fontsize=8.5)
        for a in axes[i]:
            a.set_xticks([]); a.set_yticks([])
    add_colorbar(im, axes[:, 3].tolist()[-1], "intensity")
    return fig


def plot_base_sweep(sweep, groups: tuple[str, ...], min_gain: float):
    """C3: held-out PSNR of Eq. 3 against the base's parameter count, per group."""
    fig, (a1, a2) = book_figure(1, 2, height=2.9)
    for i, g in enumerate(groups):
        c = PALETTE[i % len(PALETTE)]
        a1.plot(sweep.params(g), sweep.psnr(g), "o-", color=c, label=g)
        a2.bar(i, sweep.psnr(g)[-1] - sweep.psnr(g)[0], color=c)
    a1.set_xscale("log"); a1.set_xlabel("parameters of Eq. 3's base"); a1.set_ylabel("held-out PSNR (dB)")
    a1.set_title("fit quality as the base grows"); a1.legend(ncols=2)
    a2.axhline(min_gain, ls="--", c="k", lw=1, label=f"bar ({min_gain:g} dB)")
    a2.set_xticks(range(len(groups))); a2.set_xticklabels(groups)
    a2.set_ylabel("gain, smallest → largest (dB)"); a2.set_title("C3's deciding figures"); a2.legend()
    return fig


def plot_topology(topo):
    """Paper cutting: the island target, the fit without and with the VTM term (densities)."""
    fig, axes = book_figure(1, 3, height=2.6)
    axes[0].imshow(topo.target, cmap="gray_r", vmin=0, vmax=1)
    axes[0].set_title(f"target: {topo.target_components} pieces")
    for a, (label, rho) in zip(axes[1:], topo.rho.items()):
        im = a.imshow(rho, cmap="gray_r", vmin=0, vmax=1)
        a.set_title(f"{label}: {topo.components[label]} piece{'s' if topo.components[label] != 1 else ''}")
    for a in axes:
        a.set_xticks([]); a.set_yticks([])
    add_colorbar(im, axes[2], "density ρ")
    return fig
