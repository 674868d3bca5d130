"""The history figure: an intra-event query gets a zoom inset where its targets show apart from
the clue photo, an inter-event one does not need it."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from icml26.common.plotting import book_figure, check_figure  # noqa: E402
from icml26.deep_image_search import album, get_config, plots  # noqa: E402


def test_history_zooms_into_the_clue_event():
    config = get_config("smoke")
    albums, queries = album.make_benchmark(config, config.seeds[0])
    for kind in ("intra", "inter"):
        q = next(q for q in queries if q.kind == kind)
        fig, ax = book_figure(1, 1, height=2.8)
        plots.plot_history(albums[q.user], q, ax)
        insets = ax.child_axes
        assert len(insets) == (1 if kind == "intra" else 0)
        if insets:
            x0, x1 = insets[0].get_xlim()
            assert x1 - x0 < 0.1 * (ax.get_xlim()[1] - ax.get_xlim()[0])  # zoomed in
        check_figure(fig)
        plt.close(fig)
