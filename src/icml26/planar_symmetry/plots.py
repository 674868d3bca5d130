"""Figures of the chapter (book style: column width, colour bars on heatmaps, integer ticks)."""

from __future__ import annotations

import numpy as np
from scipy.ndimage import maximum_filter

from icml26.common import BASELINE, METHOD, PALETTE
from icml26.common.plotting import COLUMN_WIDTH_IN, add_colorbar, book_figure

from .experiment import render_patterns
from .fields import CONSTRUCTIONS

TITLES = {"symmetrized": "Eq. 3 (fold × η)", "naive_wrap": "naive wrap", "group_average": "group averaging"}
COLORS = {"symmetrized": METHOD, "naive_wrap": BASELINE, "group_average": PALETTE[2]}


REFINE = 3  # the second render of `render_seams` is this many times finer


def render_seams(group_name: str, res: int = 160, **kwargs) -> dict:
    """`experiment.render_patterns(group_name, res=res, **kwargs)` plus '<kind>_jump': where each
    construction jumps, from a second render REFINE times finer on the same window.

    The idea is the tear ratio's (`metrics.tear_ratio`) on every pixel: refining the grid by k
    shrinks a smooth field's one-pixel differences k times, but not a jump. With G and g the
    gradient magnitudes (per pixel, over the blurred picture) on the coarse and the fine grid, a
    jump J gives G = g = J/2 and a smooth field g = G/k, so J ~ 2 (g - G/k) / (1 - 1/k), which is
    about 0 where the field is smooth (capped at the pattern's intensity range, which no jump can
    exceed; where two seams cross, the estimate overshoots). Drawing aid only: nothing here feeds
    a claim."""
    r = render_patterns(group_name, res=res, **kwargs)
    fine = render_patterns(group_name, res=REFINE * (res - 1) + 1, **kwargs)  # every REFINE-th point is a coarse one
    for kind in CONSTRUCTIONS:
        g = maximum_filter(fine[kind + "_seam"], size=REFINE, mode="nearest")[::REFINE, ::REFINE]  # (res, res)
        jump = 2 * (g - r[kind + "_seam"] / REFINE) / (1 - 1 / REFINE)
        r[kind + "_jump"] = np.clip(jump, 0.0, float(np.ptp(r[kind])))
    return r


def plot_patterns(r: dict, title: str = ""):
    """The three constructions' patterns (top row) and where each one jumps (bottom row), from
    `render_seams`: the estimated jump of the same construction over a blurred copy of the picture
    (the blur removes the picture's own edges, the refinement the smooth part of the gradient, so
    what stays bright is a seam). One colour scale for the bottom row, up to the 99.5th
    percentile of the three panels together (at least 0.2), so a bright line is a jump in any panel."""
    fig, axes = book_figure(2, 3, height=5.0)
    jumps = {kind: r[kind + "_jump"] for kind in CONSTRUCTIONS}
    vmax = max(float(np.quantile(np.concatenate([j.ravel() for j in jumps.values()]), 0.995)), 0.2)
    for k, kind in enumerate(CONSTRUCTIONS):
        axes[0, k].imshow(r[kind], cmap="gray", extent=r["extent"])
        axes[0, k].set_title(TITLES[kind])
        # grey like the top row: the page's precomputed views keep 256 colours, which one grey
        # scale fits exactly but a second colour map would share, and band (its colour bar in steps)
        im = axes[1, k].imshow(jumps[kind], cmap="gray", vmin=0, vmax=vmax, extent=r["extent"])
        axes[1, k].set_title(f"largest jump {jumps[kind].max():.2f}", fontsize=9.5)
        for a in axes[:, k]:
            a.set_xticks([]); a.set_yticks([]); a.grid(False)
    axes[0, 0].set_ylabel("pattern")
    axes[1, 0].set_ylabel("where it jumps (seams)")
    add_colorbar(im, axes[1, 2], "jump in intensity")
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
    """Per group (one row): the target, then for each construction its fit (held-out grid, PSNR
    in the title) beside its error map |fit - target|. The three error maps of a row share one
    colour scale (its colour bar on the right, up to the row's 99th percentile), so the
    construction with the darker map fits that group better; `fitting` is
    `run_experiment(...)["fitting"]`."""
    import matplotlib.pyplot as plt

    n, kinds = len(groups), list(CONSTRUCTIONS)
    gap, bar_w = 0.12, 0.09
    widths = [1.0] + [gap, 1.0, 1.0] * len(kinds) + [bar_w]  # target | (gap, fit, error) per kind | colour bar
    fig = plt.figure(figsize=(COLUMN_WIDTH_IN, 0.35 + 1.0 * n))
    gs = fig.add_gridspec(n + 1, len(widths), width_ratios=widths, height_ratios=[0.12] + [1.0] * n)
    headers = [(0, 1, "target")] + [(2 + 3 * k, 4 + 3 * k, TITLES[kind].split(" (")[0]) for k, kind in enumerate(kinds)]
    for start, stop, text in headers:  # one header over each (fit, error) pair
        head = fig.add_subplot(gs[0, start:stop])
        head.axis("off")
        head.text(0.5, 0.0, text, ha="center", va="bottom", fontsize=10, transform=head.transAxes)
    for i, g in enumerate(groups):
        target = np.asarray(fitting[g]["target"])
        a = fig.add_subplot(gs[i + 1, 0])
        a.imshow(target, cmap="gray", vmin=0, vmax=1)
        a.set_ylabel(g)
        row = [a]
        errors = {kind: np.abs(np.asarray(fitting[g]["preds"][kind]) - target) for kind in kinds}
        vmax = float(np.quantile(np.concatenate([e.ravel() for e in errors.values()]), 0.99)) or 1.0
        for k, kind in enumerate(kinds):
            a_fit, a_err = fig.add_subplot(gs[i + 1, 2 + 3 * k]), fig.add_subplot(gs[i + 1, 3 + 3 * k])
            a_fit.imshow(np.asarray(fitting[g]["preds"][kind]), cmap="gray", vmin=0, vmax=1)
            a_fit.set_title(f"{fitting[g]['psnr'][kind]:.1f} dB", fontsize=9)
            im = a_err.imshow(errors[kind], cmap="magma", vmin=0, vmax=vmax)
            a_err.set_title("|fit − target|" if i == 0 else "", fontsize=8.5)
            row += [a_fit, a_err]
        bar = fig.colorbar(im, cax=fig.add_subplot(gs[i + 1, -1]))
        bar.set_label("|error|", fontsize=8.5)
        bar.ax.tick_params(labelsize=8.5)
        bar.ax.locator_params(nbins=3)
        for a in row:
            a.set_xticks([]); a.set_yticks([]); a.grid(False)
            for side in a.spines.values():
                side.set_visible(False)
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
