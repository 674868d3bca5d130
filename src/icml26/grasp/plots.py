"""Figures for the GRASP chapter."""

from __future__ import annotations

import matplotlib.pyplot as plt
import networkx as nx
import numpy as np

from icml26.common import BASELINE, METHOD
from icml26.common.plotting import integer_ticks


def draw_episode(q, probed, ax, title=""):
    """The graph, the query nodes (outlined) and the nodes the agent probed (filled)."""
    g = nx.Graph()
    g.add_nodes_from(q.adj)
    g.add_edges_from((a, b) for a in q.adj for b in q.adj[a])
    pos = nx.spring_layout(g, seed=0)
    probed = set(probed)
    colors = [METHOD if x in probed else "#dddddd" for x in g.nodes()]
    edgecol = ["black" if x in (q.u, q.v) else "#999999" for x in g.nodes()]
    nx.draw_networkx_edges(g, pos, ax=ax, alpha=0.4)
    nx.draw_networkx_nodes(g, pos, ax=ax, node_color=colors, edgecolors=edgecol, linewidths=2, node_size=260)
    nx.draw_networkx_labels(g, pos, ax=ax, font_size=8.5)
    ax.set_title(title)
    ax.axis("off")


def plot_training(r, axes):
    s = r.seeds[0]
    axes[0].plot(s.sft_loss, color=METHOD, label="agent")
    axes[0].plot(s.passive_loss, color=BASELINE, label="passive")
    axes[0].set_yscale("log"); axes[0].set_xlabel("SFT step"); axes[0].set_ylabel("masked NLL"); axes[0].legend()
    axes[1].plot(s.grpo_hist["reward"], color=METHOD, marker="o", label="reward")
    axes[1].plot(s.grpo_hist["probe_first"], color="gray", marker="s", label="probe first")
    axes[1].set_xlabel("GRPO iteration"); axes[1].set_ylim(-0.05, 1.05); axes[1].legend()
    integer_ticks(axes[1], "x")


def plot_accuracy(r, ax):
    sizes = r.config.test_sizes
    x = np.arange(len(sizes))
    ax.bar(x - 0.2, [r.mean("blind_after", n) for n in sizes], 0.4, color=METHOD, label="agent")
    ax.bar(x + 0.2, [r.mean("passive", n) for n in sizes], 0.4, color=BASELINE, label="passive")
    ax.set_xticks(x, [f"n={n}" for n in sizes]); ax.set_ylim(0, 1.05); ax.set_ylabel("accuracy")
    ax.legend()
