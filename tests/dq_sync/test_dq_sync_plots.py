"""The timing figure keeps every solver's markers visible and its log axes plainly labelled."""

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from icml26.common.plotting import check_figure  # noqa: E402
from icml26.dq_sync import plots  # noqa: E402


def test_timing_draws_each_solver_visibly():
    dense, sparse = np.array([[0.01, 0.02], [0.1, 0.2], [1.0, 1.1]]), np.array([[0.02, 0.03], [0.05, 0.06], [0.1, 0.2]])
    timing = {"n": [50, 100, 200], "seconds_dq": [0.04, 0.06, 0.2], "solvers": ["dense", "sparse"],
              "seconds_dense_all": dense, "seconds_sparse_all": sparse,
              "seconds_eig": np.minimum(dense.min(1), sparse.min(1))}
    fig = plots.plot_timing(timing)
    ax = fig.axes[0]
    lines = {ln.get_label(): ln for ln in ax.lines}
    faster, hollow = lines["EIG-SE(3), faster of the two"], lines["EIG-SE(3), sparse solver"]
    assert hollow.get_markersize() > 1.5 * faster.get_markersize() and hollow.get_markerfacecolor() == "none"
    assert faster.get_zorder() > hollow.get_zorder()
    fig.canvas.draw()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["50", "100", "200"]
    check_figure(fig)
    plt.close(fig)
