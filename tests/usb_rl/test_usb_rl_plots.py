"""The outcome plane names every agent without two names overlapping; the map's legend sits
under the map."""

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from icml26.common.plotting import book_figure, check_figure  # noqa: E402
from icml26.usb_rl import plots  # noqa: E402


def test_outcome_labels_do_not_overlap():
    names = ["unconstrained", "linear 0.03", "linear 0.1", "linear 0.3", "linear 1", "lagrangian", "usb"]
    c = np.array([9.0, 7.1, 6.1, 3.1, 0.7, 1.0, 0.75])
    r = np.array([-5.7, -5.5, -5.6, -6.1, -6.6, -7.95, -6.65])
    fig, ax = book_figure(1, 1, height=3.0)
    plots.plot_outcome_plane(names, np.tile(r, (3, 1)), np.tile(c, (3, 1)), ax, {"returns": r[:5], "costs": c[:5]})
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [matplotlib.text.Text.get_window_extent(t, renderer) for t in ax.texts]  # the text, not its leader
    assert sorted(t.get_text() for t in ax.texts) == sorted(names)
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    check_figure(fig)
    plt.close(fig)


def test_map_legend_under_the_map():
    fig, ax = book_figure(1, 1, height=3.0)
    plots.plot_paths({"usb": np.zeros((1, 5, 2))}, ax=ax)
    fig.canvas.draw()
    legend = ax.get_legend().get_window_extent(fig.canvas.get_renderer())
    assert legend.y1 <= ax.bbox.y0
    plt.close(fig)
