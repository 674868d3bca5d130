"""Figures of the KSKT chapter (column width, book style: `icml26.common.plotting`)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from icml26.common import BASELINE, METHOD
from icml26.common.plotting import add_colorbar, book_figure, integer_ticks

from .data import SLOT_POS, decode
from .experiment import PROBES, ExperimentResult

SPAN_COLOURS = {"role": "#4C72B0", "user": "#DD8452", "resp": "#55A868", "marker": "#BBBBBB"}
PROBE_LABELS = {"self->style": "self→\nstyle", "other->style": "other→\nstyle", "other->topic": "other→\ntopic",
                "self->topic": "self→\ntopic"}


def plot_layout(ids, ax=None):
    """One item of the corpus as a coloured token strip: role span, user span, response slots."""
    toks = decode(ids)
    ax = ax or book_figure(1, 1, height=2.4)[1]
    for i, t in enumerate(toks):
        kind = ("marker" if t.startswith("<") else "role" if 1 <= i <= 5 else "user" if 8 <= i <= 11 else "resp")
        ax.add_patch(plt.Rectangle((i, 0), 0.95, 1, color=SPAN_COLOURS[kind], alpha=0.85))
        ax.text(i + 0.47, 0.5, t, rotation=90, ha="center", va="center", fontsize=8.5,
                color="white" if kind != "marker" else "black")
    for name, pos in SLOT_POS.items():
        need = {"r1": "char.", "r2": "both", "r3": "user"}[name]
        ax.text(pos + 0.47, -0.25, f"{name}\n({need})", ha="center", va="top", fontsize=8.5)
    ax.set_xlim(0, len(toks))
    ax.set_ylim(-0.7, 1.05)
    ax.axis("off")
    return ax


def plot_curves(res: ExperimentResult):
    """Teacher-forced slot accuracy vs training step, KSKT vs the matched Qwen3: one thin line per
    seed (the ledger decides per seed) and the mean over seeds as the thick line."""
    fig, axes = book_figure(2, 2, height=4.8, sharey=True, sharex=True)
    for ax, slot in zip(axes.flat, ("r1", "r3", "r2", "r2_conflict")):
        for which, colour, label in (("kskt", METHOD, "KSKT"), ("baseline", BASELINE, "Qwen3 (matched)")):
            logs = [s.log_kskt if which == "kskt" else s.log_base for s in res.seeds]
            acc = np.array([[d[slot] for d in lg.slot_acc] for lg in logs])  # (seeds, evals)
            for row in acc:
                ax.plot(logs[0].eval_steps, row, "-", color=colour, lw=0.8, alpha=0.45)
            ax.plot(logs[0].eval_steps, acc.mean(0), "o-", color=colour, lw=2, label=f"{label} (mean)")
        ax.set_title({"r1": "r1: style (character)", "r3": "r3: empathy (user)", "r2": "r2: relationship (both)",
                      "r2_conflict": "r2 on conflict items"}[slot])
        integer_ticks(ax, "x")
    for ax in axes[1]:
        ax.set_xlabel("training step")
    for ax in axes[:, 0]:
        ax.set_ylabel("accuracy")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    handles.append(plt.Line2D([], [], color="0.4", lw=0.8, alpha=0.6))
    labels.append("one seed")
    fig.legend(handles, labels, loc="outside lower center", ncol=3, frameon=False)
    return fig


# Probe bars: their own colours (the book's method/baseline colours mean KSKT/Qwen3 elsewhere).
ON_TARGET, OFF_TARGET = "#5e3c99", "#b2abd2"
POOL_TITLES = {"prompt": "(b) prompt average", "late": "(a) after both spans\n(the criterion)",
               "all": "(c) all tokens"}


def plot_probes(res: ExperimentResult):
    """The 2 x 2 probe cross-dissociation for the three poolings of `experiment.stream_features`:
    (a) late (the criterion: the positions that see both spans), (b) the prompt average and (c) all
    tokens (diagnostics). Bars: the mean over seeds; dots: each seed."""
    fig, axes = book_figure(1, 3, height=3.3, sharey=True)
    rng = np.random.default_rng(0)  # horizontal jitter of the seed dots only
    for ax, pool in zip(axes, ("late", "prompt", "all")):
        per_seed = [np.asarray(res.probe(p, pool), float) for p in PROBES]
        ax.bar(range(4), [v.mean() for v in per_seed], color=[ON_TARGET, OFF_TARGET, ON_TARGET, OFF_TARGET])
        for i, v in enumerate(per_seed):
            ax.plot(i + rng.uniform(-0.15, 0.15, len(v)), v, "o", color="black", mec="white", mew=0.6, ms=4)
        ax.set_xticks(range(4), [PROBE_LABELS[p] for p in PROBES], fontsize=7.5)
        ax.axhline(0.25, ls=":", color="k", lw=1)
        ax.axhline(1 / 6, ls="--", color="k", lw=1)
        ax.set_title(POOL_TITLES[pool])
    axes[0].set_ylabel("probe accuracy")
    legend = [plt.Rectangle((0, 0), 1, 1, color=ON_TARGET), plt.Rectangle((0, 0), 1, 1, color=OFF_TARGET),
              plt.Line2D([], [], marker="o", ls="", color="black", ms=4),
              plt.Line2D([], [], ls=":", color="k"), plt.Line2D([], [], ls="--", color="k")]
    fig.legend(legend, ["on-target probe (stream reads its own span)", "off-target probe", "one seed",
                        "chance, style (1/4)", "chance, topic (1/6)"],
               loc="outside lower center", ncol=2, frameon=False, fontsize=8)
    return fig


def plot_gate_sweep(sweep: dict, ax=None):
    ax = ax or book_figure(1, 1)[1]
    ax.plot(sweep["alpha"], sweep["answer"], "o-", color=BASELINE, label="answer the user")
    ax.plot(sweep["alpha"], sweep["refuse"], "s-", color=METHOD, label="refuse in character")
    ax.set_xlabel(r"forced gate $\alpha$ (0 other, 1 self)")
    ax.set_ylabel("P(r2)")
    ax.legend()
    return ax


def plot_gate_heatmap(alpha: np.ndarray, ids, ax=None):
    """alpha (n_blocks, T) of one item over its tokens."""
    ax = ax or book_figure(1, 1, height=2.2)[1]
    im = ax.imshow(alpha, aspect="auto", cmap="coolwarm", vmin=0, vmax=1)
    ax.set_xticks(range(len(ids)), decode(ids), rotation=90)
    ax.set_yticks(range(alpha.shape[0]), [f"block {i}" for i in range(alpha.shape[0])])
    ax.grid(False)
    add_colorbar(im, ax, r"$\alpha$ (self share)")
    return ax
