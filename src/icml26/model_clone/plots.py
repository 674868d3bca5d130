"""Figures and tables of the chapter."""

from __future__ import annotations

import matplotlib.pyplot as plt
import networkx as nx
import numpy as np
from sklearn.metrics import roc_curve

from icml26.common import BASELINE, METHOD, PALETTE

from .experiment import SCORE_NAMES, SCORES, BenchmarkResult, ExploreResult, LineageResult, auc, summary_table

COLORS = {"S": METHOD, "S_G": PALETTE[2], "S_W": PALETTE[3], "B1": BASELINE, "B2": PALETTE[4], "B3": PALETTE[5]}


def _layered_pos(g: nx.DiGraph) -> dict:
    pos = {}
    for depth, layer in enumerate(nx.topological_generations(g)):
        for i, v in enumerate(sorted(layer)):
            pos[v] = (i - (len(layer) - 1) / 2, -depth)
    return pos


def plot_graphs(graphs: list, titles: list[str], highlight: bool = True):
    """Normalised graphs side by side; nodes whose label occurs in every graph are coloured
    like the method, the others like the baseline."""
    fig, axes = plt.subplots(1, len(graphs), figsize=(3.2 * len(graphs), 4.2))
    axes = np.atleast_1d(axes)
    common = set.intersection(*[{d["label"] for _, d in g.nodes(data=True)} for g in graphs])
    for ax, g, title in zip(axes, graphs, titles):
        colors = [METHOD if (d["label"] in common or not highlight) else BASELINE for _, d in g.nodes(data=True)]
        nx.draw_networkx(g, _layered_pos(g), ax=ax, labels={v: d["label"] for v, d in g.nodes(data=True)},
                         node_color=colors, node_size=380, font_size=7, arrowsize=8, alpha=0.9)
        ax.set_title(title, fontsize=9)
        ax.axis("off")
    fig.tight_layout()
    return fig


def plot_scores_by_op(res: BenchmarkResult, keys=("S", "S_W", "S_G", "B1", "B2", "B3")):
    """Mean score per clone operation / non-clone kind, method and baselines side by side."""
    rows = summary_table(res)
    fig, ax = plt.subplots(figsize=(12, 3.8))
    x = np.arange(len(rows))
    w = 0.8 / len(keys)
    for i, k in enumerate(keys):
        ax.bar(x + (i - len(keys) / 2 + 0.5) * w, [r[k] for r in rows], w, label=SCORE_NAMES[k], color=COLORS[k])
    ax.axhline(res.theta, color="k", ls="--", lw=1, label=f"calibrated θ = {res.theta:.2f} (for S)")
    ax.set_xticks(x, [f"{r['pair']}\n[{r['type']}]" for r in rows], rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("similarity")
    ax.legend(fontsize=7, ncol=4, loc="upper center", bbox_to_anchor=(0.5, 1.25))
    fig.tight_layout()
    return fig


def plot_roc(res: BenchmarkResult):
    """ROC curves, clones vs all non-clones (left) and vs same-architecture models (right)."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, neg, title in zip(axes, (None, "same-arch"), ("all non-clones", "same-architecture non-clones only")):
        rows = [p for p in res.pairs if p["clone"] or neg is None or p["kind"] == neg]
        y = [p["clone"] for p in rows]
        for k in SCORES:
            fpr, tpr, _ = roc_curve(y, [p[k] for p in rows])
            ax.plot(fpr, tpr, color=COLORS[k], label=f"{SCORE_NAMES[k]} (AUC {auc(res, k, neg):.3f})")
        ax.plot([0, 1], [0, 1], "k:", lw=0.8)
        ax.set_xlabel("false-positive rate")
        ax.set_ylabel("true-positive rate")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


def plot_lineage(lineages: list[LineageResult]):
    fig, axes = plt.subplots(1, len(lineages), figsize=(5 * len(lineages), 3.4), squeeze=False)
    for ax, L in zip(axes[0], lineages):
        for k, c in (("S", METHOD), ("S_W", PALETTE[3]), ("B1", BASELINE)):
            ax.plot(L.steps, L.scores[k], "o-", color=c, label=SCORE_NAMES[k])
        ax.set_xscale("symlog", linthresh=10)
        ax.set_xlabel("fine-tuning steps on the other half")
        ax.set_ylabel("similarity to the base")
        ax.set_title(f"{L.arch}: lineage along fine-tuning", fontsize=10)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_structure_matrix(sm: dict):
    fig, ax = plt.subplots(figsize=(4.8, 4))
    im = ax.imshow(sm["matrix"], vmin=0, vmax=1, cmap="viridis")
    ax.set_xticks(range(len(sm["names"])), sm["names"], rotation=45, ha="right")
    ax.set_yticks(range(len(sm["names"])), sm["names"])
    for i in range(len(sm["names"])):
        for j in range(len(sm["names"])):
            ax.text(j, i, f"{sm['matrix'][i, j]:.2f}", ha="center", va="center", fontsize=7,
                    color="w" if sm["matrix"][i, j] < 0.6 else "k")
    fig.colorbar(im, ax=ax, label="S_G (WL kernel)")
    ax.set_title("structure only: normalised-graph similarity", fontsize=10)
    fig.tight_layout()
    return fig


def plot_explore(ex: ExploreResult):
    fig, ax = plt.subplots(figsize=(6, 3.4))
    for k, c in (("S", METHOD), ("S_W", PALETTE[3]), ("B1", BASELINE)):
        ax.plot(ex.steps, ex.scores[k], "o-", color=c, label=SCORE_NAMES[k])
    if "pruned S" in ex.scores:
        ax.axhline(ex.scores["pruned S"][0], color=PALETTE[4], ls="--", label=f"S of the base pruned at {ex.prune:.0%}")
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("fine-tuning steps")
    ax.set_ylabel("similarity to the base")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def results_markdown(res: BenchmarkResult) -> str:
    """The results table: the paper's figure (none retrievable), ours, the baselines."""
    aucs = {k: auc(res, k) for k in SCORES}
    hard = {k: auc(res, k, "same-arch") for k in SCORES}
    lines = ["| score | paper (its scale) | ROC-AUC, all pairs (ours) | ROC-AUC vs same-architecture (ours) |",
             "|---|---|---|---|"]
    for k in SCORES:
        paper = "not retrievable (abstract only: 'accurately detect')" if k == "S" else "—"
        lines.append(f"| {SCORE_NAMES[k]} | {paper} | {aucs[k]:.3f} | {hard[k]:.3f} |")
    return "\n".join(lines)
