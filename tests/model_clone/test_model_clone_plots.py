"""The graph figure: black labels beside opaque nodes, within the book's figure policy."""

import matplotlib
import networkx as nx

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from icml26.model_clone import plots  # noqa: E402


def _chain(labels):
    g = nx.DiGraph()
    for i, label in enumerate(labels):
        g.add_node(i, label=label)
        if i:
            g.add_edge(i - 1, i)
    return g


def test_plot_graphs_labels_read():
    fig = plots.plot_graphs([_chain(["input", "linear/w3", "output"]), _chain(["input", "conv/w3", "output"])],
                            ["MLP", "a title long enough to wrap onto two lines"])
    texts = [t for ax in fig.axes for t in ax.texts]
    assert sorted(t.get_text() for t in texts) == sorted(["input", "linear/w3", "output", "input", "conv/w3", "output"])
    assert all(t.get_color() == "black" for t in texts)
    assert all(c.get_alpha() in (None, 1) for ax in fig.axes for c in ax.collections)
    assert "\n" in fig.axes[1].get_title()
    plt.close(fig)
