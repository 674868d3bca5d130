"""plot_history keeps a method whose curves equal an earlier method's visible, and says so."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from icml26.dmawm import plots  # noqa: E402


def _run(seed, success, real, imagined):
    return {"seed": seed, "history": [{"env_steps": 100 * (i + 1), "success": s, "real_return": r, "imagined_return": m}
                                      for i, (s, r, m) in enumerate(zip(success, real, imagined))]}


def test_identical_curves_stay_visible():
    same = [_run(0, [0.5, 0.5], [1.0, 1.1], [0.2, 0.9])]
    runs = {"dmawm": same, "joint": [_run(0, [0.5, 0.5], [1.0, 1.1], [1.5, -0.2])],
            "model_free": [{"seed": 0, "history": [{"env_steps": 100, "success": 1.0}, {"env_steps": 200, "success": 0.4}]}]}
    fig = plots.plot_history(runs, cap=2)
    left, right = fig.axes[0], fig.axes[1]
    labels = [t.get_text() for t in left.get_legend().get_texts()]
    assert labels == ["DMAWM", "joint WM (= DMAWM)", "model-free"]
    assert "joint WM real (= DMAWM)" in [t.get_text() for t in right.get_legend().get_texts()]
    wide, thin = left.lines[0], left.lines[1]
    assert wide.get_linewidth() > 2 * thin.get_linewidth() and thin.get_zorder() > wide.get_zorder()
    plt.close(fig)
