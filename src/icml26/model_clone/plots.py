"""Figures and tables of the chapter."""

from __future__ import annotations

import networkx as nx
import numpy as np
from sklearn.metrics import roc_curve

from icml26.common import BASELINE, METHOD, PALETTE, add_colorbar, book_figure, check_figure

from .experiment import SCORE_NAMES, SCORES, BenchmarkResult, ExploreResult, LineageResult, auc, summary_table

SHORT = {"S": "S (ours)", "S_G": "S_G (ours)", "S_W": "S_W (ours)", "B1": "B1 aligned", "B2": "B2 keys", "B3": "B3 outputs"}

COLORS = {"S": METHOD, "S_G": PALETTE[2], "S_W": PALETTE[3], "B1": BASELINE, "B2": PALETTE[4], "B3": PALETTE[5]}


def _layered_pos(g: nx.DiGraph) -> dict:
    pos = {}
    for depth, layer in enumerate(nx.topological_generations(g)):
        for i, v in enumerate(sorted(layer)):
            pos[v] = (i - (len(layer) - 1) / 2, -depth)
    return pos


def plot_graphs(graphs: list, titles: list[str], highlight: bool = True):
    """Normalised graphs side by side (up to four in a row); nodes whose label occurs in every
    graph are coloured like the method, the others like the baseline. Labels are black text
    beside opaque nodes, so they read at any colour."""
    import textwrap

    from matplotlib.lines import Line2D

    ncols = min(4, len(graphs))
    nrows = (len(graphs) + ncols - 1) // ncols
    fig, axes = book_figure(nrows, ncols, height=3.9 * nrows)
    axes = np.atleast_1d(axes).ravel()
    for ax in axes[len(graphs):]:
        ax.axis("off")
    common = set.intersection(*[{d["label"] for _, d in g.nodes(data=True)} for g in graphs])
    for ax, g, title in zip(axes, graphs, titles):
        pos = _layered_pos(g)
        colors = [METHOD if (d["label"] in common or not highlight) else BASELINE for _, d in g.nodes(data=True)]
        nx.draw_networkx_edges(g, pos, ax=ax, node_size=120, arrowsize=8, edge_color="0.3")
        nx.draw_networkx_nodes(g, pos, ax=ax, node_color=colors, node_size=120, edgecolors="k", linewidths=0.6)
        for v, d in g.nodes(data=True):
            ax.text(pos[v][0] + 0.18, pos[v][1], d["label"], fontsize=9, ha="left", va="center", color="black")
        xs = [x for x, _ in pos.values()]
        ax.set_xlim(min(xs) - 0.4, max(xs) + 1.9)  # room for the labels on the right
        ax.set_title(textwrap.fill(title, 18), fontsize=9.5)
        ax.axis("off")
    if highlight:
        marker = lambda c: Line2D([], [], marker="o", ls="", color=c, markeredgecolor="k", markersize=8)  # noqa: E731
        fig.legend([marker(METHOD), marker(BASELINE)], ["label in every graph", "label not in every graph"],
                   loc="outside lower center", ncols=2)
    check_figure(fig)
    return fig


def plot_scores_by_op(res: BenchmarkResult, keys=("S", "S_W", "S_G", "B1", "B2", "B3")):
    """Mean score per clone operation / non-clone kind, method and baselines side by side."""
    rows = summary_table(res)
    fig, ax = book_figure(1, 1, height=4.2)
    y = np.arange(len(rows))
    w = 0.85 / len(keys)
    for i, k in enumerate(keys):
        ax.barh(y + (i - len(keys) / 2 + 0.5) * w, [r[k] for r in rows], w, label=SHORT[k], color=COLORS[k])
    ax.axvline(res.theta, color="k", ls="--", lw=1, label=f"θ = {res.theta:.2f} (for S)")
    ax.set_yticks(y, [f"{r['pair']} [{r['type']}]" for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel("mean similarity to the base")
    ax.legend(ncol=1, loc="center left", bbox_to_anchor=(1.0, 0.5))
    check_figure(fig)
    return fig


def plot_roc(res: BenchmarkResult):
    """ROC curves, clones vs all non-clones (left) and vs same-architecture models (right)."""
    fig, axes = book_figure(1, 2, height=3.6)
    for ax, neg, title in zip(axes, (None, "same-arch"), ("all non-clones", "same-architecture only")):
        rows = [p for p in res.pairs if p["clone"] or neg is None or p["kind"] == neg]
        y = [p["clone"] for p in rows]
        for k in SCORES:
            fpr, tpr, _ = roc_curve(y, [p[k] for p in rows])
            ax.plot(fpr, tpr, color=COLORS[k], label=f"{k} {auc(res, k, neg):.2f}")
        ax.plot([0, 1], [0, 1], "k:", lw=0.8)
        ax.set_xlabel("false-positive rate")
        ax.set_ylabel("true-positive rate")
        ax.set_title(title)
        ax.legend(loc="lower right", title="AUC", ncol=2, fontsize=8.5, columnspacing=0.8, handlelength=1.2)
    check_figure(fig)
    return fig


def plot_lineage(lineages: list[LineageResult]):
    fig, axes = book_figure(1, len(lineages), height=3.0, squeeze=False)
    for ax, L in zip(axes[0], lineages):
        for k, c in (("S", METHOD), ("S_W", PALETTE[3]), ("B1", BASELINE)):
            ax.plot(L.steps, L.scores[k], "o-", color=c, label=SHORT[k])
        ax.set_xscale("symlog", linthresh=10)
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("fine-tuning steps")
        ax.set_ylabel("similarity to the base")
        ax.set_title(f"{L.arch}: along fine-tuning")
        ax.legend(loc="lower left")
    check_figure(fig)
    return fig


def plot_structure_matrix(sm: dict):
    fig, ax = book_figure(1, 1, height=4.2)
    im = ax.imshow(sm["matrix"], vmin=0, vmax=1, cmap="viridis")
    ax.set_xticks(range(len(sm["names"])), sm["names"], rotation=45, ha="right")
    ax.set_yticks(range(len(sm["names"])), sm["names"])
    for i in range(len(sm["names"])):
        for j in range(len(sm["names"])):
            ax.text(j, i, f"{sm['matrix'][i, j]:.2f}", ha="center", va="center", fontsize=8.5,
                    color="w" if sm["matrix"][i, j] < 0.6 else "k")
    add_colorbar(im, ax, "S_G (WL kernel)")
    ax.grid(False)
    ax.set_title("structure only: normalised-graph similarity")
    check_figure(fig)
    return fig


def plot_explore(ex: ExploreResult):
    fig, ax = book_figure(1, 1, height=3.0)
    for k, c in (("S", METHOD), ("S_W", PALETTE[3]), ("B1", BASELINE)):
        ax.plot(ex.steps, ex.scores[k], "o-", color=c, label=SCORE_NAMES[k])
    if "pruned S" in ex.scores:
        ax.axhline(ex.scores["pruned S"][0], color=PALETTE[4], ls="--", label=f"S of the base pruned at {ex.prune:.0%}")
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("fine-tuning steps")
    ax.set_ylabel("similarity to the base")
    ax.legend()
    check_figure(fig)
    return fig


def results_table(res: BenchmarkResult):
    """The results table (a DataFrame): the paper's figure (none readable), ours, the baselines."""
    import pandas as pd

    rows = []
    for k in SCORES:
        rows.append({"score": SCORE_NAMES[k],
                     "paper (its scale)": "not readable (abstract: 'accurately detect')" if k == "S" else "—",
                     "ROC-AUC, all pairs": round(auc(res, k), 3),
                     "ROC-AUC vs same architecture": round(auc(res, k, "same-arch"), 3)})
    return pd.DataFrame(rows)
