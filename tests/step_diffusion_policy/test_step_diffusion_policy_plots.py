"""The success-latency figure names every method without overlaps and labels its log axis plainly."""

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from icml26.common.plotting import check_figure  # noqa: E402
from icml26.step_diffusion_policy import plots  # noqa: E402


def test_success_latency_labels():
    pts = {"DDPM-100": (140, 0.62), "DDIM-2": (1.2, 0.01), "Spatial-only-2": (5, 0.54), "STEP-2": (5.3, 0.49),
           "DDIM-2 trailing": (1.15, 0.48), "Reuse-2": (1.25, 0.69), "Predictor only": (1.9, 0.25)}
    per = [{"success": {n: [y] for n, (x, y) in pts.items()}, "latency_batch1_s": {n: [x / 1e3] for n, (x, y) in pts.items()}}]
    fig = plots.plot_success_latency({"per_seed": per, "methods": list(pts)})
    ax = fig.axes[1]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [matplotlib.text.Text.get_window_extent(t, renderer) for t in ax.texts]
    assert sorted(t.get_text() for t in ax.texts) == sorted(pts)
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    assert all("times" not in t.get_text() and "^" not in t.get_text() for t in ax.get_xticklabels())
    check_figure(fig)
    plt.close(fig)
