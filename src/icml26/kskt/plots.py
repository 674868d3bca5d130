"""Figures of the KSKT chapter."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from icml26.common import BASELINE, METHOD

from .data import SLOT_POS, decode
from .experiment import PROBES, ExperimentResult

SPAN_COLOURS = {"role": "#4C72B0", "user": "#DD8452", "resp": "#55A868", "marker": "#BBBBBB"}


def plot_layout(ids, ax=None):
    """One item of the corpus as a coloured token strip: role span, user span, response slots."""
    toks = decode(ids)
    ax = ax or plt.subplots(figsize=(13, 1.9))[1]
    for i, t in enumerate(toks):
        kind = ("marker" if t.startswith("<") else "role" if 1 <= i <= 5 else "user" if 8 <= i <= 11 else "resp")
        ax.add_patch(plt.Rectangle((i, 0), 0.95, 1, color=SPAN_COLOURS[kind], alpha=0.85))
        ax.text(i + 0.47, 0.5, t, rotation=90, ha="center", va="center", fontsize=8, color="white" if kind != "marker" else "black")
    for name, pos in SLOT_POS.items():
        need = {"r1": "character", "r2": "both", "r3": "user"}[name]
        ax.text(pos + 0.47, -0.25, f"{name}\n({need})", ha="center", va="top", fontsize=8)
    ax.set_xlim(0, len(toks))
    ax.set_ylim(-0.9, 1.05)
    ax.axis("off")
    return ax


def plot_curves(res: ExperimentResult):
    """Teacher-forced slot accuracy vs training step, KSKT vs the matched Qwen3 (mean over seeds)."""
    fig, axes = plt.subplots(1, 4, figsize=(15, 3.3), sharey=True)
    for ax, slot in zip(axes, ("r1", "r3", "r2", "r2_conflict")):
        for which, colour, label in (("kskt", METHOD, "KSKT"), ("baseline", BASELINE, "Qwen3 (matched)")):
            logs = [s.log_kskt if which == "kskt" else s.log_base for s in res.seeds]
            acc = np.array([[d[slot] for d in lg.slot_acc] for lg in logs])
            ax.plot(logs[0].eval_steps, acc.mean(0), "o-", color=colour, label=label)
        ax.set_title({"r1": "r1: style (character)", "r3": "r3: empathy (user)", "r2": "r2: relationship (both)",
                      "r2_conflict": "r2 on conflict items"}[slot])
        ax.set_xlabel("step")
    axes[0].set_ylabel("accuracy")
    axes[0].legend()
    fig.tight_layout()
    return fig


POOL_TITLES = {"prompt": "the prompt (the criterion)", "late": "</user>, <resp> (diagnostic)",
               "all": "all tokens (confounded)"}


def plot_probes(res: ExperimentResult):
    """The 2 x 2 probe cross-dissociation (mean over seeds) for the three poolings of
    `experiment.stream_features`: prompt (the criterion), late (diagnostic) and all tokens."""
    fig, axes = plt.subplots(1, 3, figsize=(15, 3.2), sharey=True)
    for ax, pool in zip(axes, ("prompt", "late", "all")):
        vals = [res.probe(p, pool).mean() for p in PROBES]
        ax.bar(range(4), vals, color=[METHOD, BASELINE, METHOD, BASELINE])
        ax.set_xticks(range(4), PROBES)
        ax.axhline(0.25, ls=":", color="k", lw=1)
        ax.axhline(1 / 6, ls="--", color="k", lw=1)
        ax.set_title(f"pooled over {POOL_TITLES[pool]}", fontsize=10)
    axes[0].set_ylabel("probe accuracy (chance 0.25 style, 0.17 topic)")
    fig.tight_layout()
    return fig


def plot_gate_sweep(sweep: dict, ax=None):
    ax = ax or plt.subplots(figsize=(5, 3))[1]
    ax.plot(sweep["alpha"], sweep["answer"], "o-", color=BASELINE, label="answer the user")
    ax.plot(sweep["alpha"], sweep["refuse"], "s-", color=METHOD, label="refuse in character")
    ax.set_xlabel(r"forced gate $\alpha$ (0 = other stream, 1 = self stream)")
    ax.set_ylabel("P(r2)")
    ax.legend()
    return ax


def plot_gate_heatmap(alpha: np.ndarray, ids, ax=None):
    """alpha (n_blocks, T) of one item over its tokens."""
    ax = ax or plt.subplots(figsize=(12, 2))[1]
    im = ax.imshow(alpha, aspect="auto", cmap="coolwarm", vmin=0, vmax=1)
    ax.set_xticks(range(len(ids)), decode(ids), rotation=90, fontsize=8)
    ax.set_yticks(range(alpha.shape[0]), [f"KSKT block {i}" for i in range(alpha.shape[0])])
    plt.colorbar(im, ax=ax, label=r"$\alpha$ (self share)")
    return ax
