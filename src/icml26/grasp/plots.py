"""Figures for the GRASP chapter."""

from __future__ import annotations

import matplotlib.pyplot as plt
import networkx as nx
import numpy as np

from icml26.common import BASELINE, METHOD
from icml26.common.plotting import integer_ticks


def draw_episode(adj, u, v, probed, ax, title=""):
    """The graph (node -> neighbours), the query nodes u, v (outlined) and the nodes the agent
    probed (filled). Labels are white on the dark probed nodes and black on the light ones."""
    adj = {int(k): [int(x) for x in nb] for k, nb in adj.items()}
    g = nx.Graph()
    g.add_nodes_from(adj)
    g.add_edges_from((a, b) for a in adj for b in adj[a])
    pos = nx.spring_layout(g, seed=0)
    probed = {int(x) for x in probed}
    colors = [METHOD if x in probed else "#dddddd" for x in g.nodes()]
    edgecol = ["black" if x in (u, v) else "#999999" for x in g.nodes()]
    nx.draw_networkx_edges(g, pos, ax=ax, alpha=0.4)
    nx.draw_networkx_nodes(g, pos, ax=ax, node_color=colors, edgecolors=edgecol, linewidths=2, node_size=260)
    for dark in (True, False):
        nodes = [x for x in g.nodes() if (x in probed) == dark]
        nx.draw_networkx_labels(g, pos, labels={x: str(x) for x in nodes}, ax=ax, font_size=8.5,
                                font_color="white" if dark else "black")
    ax.set_title(title)
    ax.axis("off")


def plot_training(results, axes):
    s = results["per_seed"][0]
    axes[0].plot(s["sft_loss"], color=METHOD, label="agent")
    axes[0].plot(s["passive_loss"], color=BASELINE, label="passive")
    axes[0].set_yscale("log"); axes[0].set_xlabel("SFT step (subsampled)"); axes[0].set_ylabel("masked NLL")
    axes[0].legend()
    for r in results["per_seed"]:
        first = r is s
        axes[1].plot(r["grpo_hist"]["reward"], color=METHOD, alpha=1.0 if first else 0.35, label="reward" if first else None)
        axes[1].plot(r["grpo_hist"]["probe_first"], color="gray", alpha=1.0 if first else 0.35,
                     label="probe first" if first else None)
    axes[1].set_xlabel("GRPO iteration"); axes[1].set_ylim(-0.05, 1.05); axes[1].legend()
    integer_ticks(axes[1], "x")


def plot_accuracy(results, ax):
    sizes = results["test_sizes"]
    x = np.arange(len(sizes))
    for off, key, color, label in ((-0.2, "blind_after", METHOD, "agent"), (0.2, "passive", BASELINE, "passive")):
        vals = np.array([[s[key][str(n)] for n in sizes] for s in results["per_seed"]])  # (seeds, sizes)
        ax.bar(x + off, vals.mean(0), 0.4, color=color, label=label)
        if len(vals) > 1:
            for row in vals:
                ax.scatter(x + off, row, color="k", s=8, zorder=3)
    triv = np.mean([[s["trivial"][str(n)] for n in sizes] for s in results["per_seed"]], 0)
    ax.scatter(x, triv, marker="_", s=400, color="k", label="trivial")
    ax.set_xticks(x, [f"n={n}" for n in sizes]); ax.set_ylim(0, 1.05); ax.set_ylabel("accuracy")
    ax.legend()
