"""The chapter's figures draw within the book's policy, and the gridworld keeps everything in a
shared cell visible."""

from types import SimpleNamespace

import matplotlib
import numpy as np
import torch

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from icml26.common.plotting import book_figure, check_figure  # noqa: E402
from icml26.lmac import plots  # noqa: E402


def test_world_spreads_a_shared_target_cell():
    world = SimpleNamespace(grid=5, pos=torch.tensor([[[3, 0], [3, 0], [1, 1], [3, 0]]]), target=torch.tensor([[3, 0]]))
    fig, ax = book_figure(1, 1, height=2.9)
    plots.plot_world(world, 0, ax)
    centres = [tuple(np.round(c.get_offsets()[0], 2)) for c in ax.collections]
    assert len(set(centres)) == len(centres) == 5  # star, overseer and three strikers apart
    assert all(abs(x - 3) < 0.5 and abs(y) < 0.5 for x, y in centres if (x, y) != (1.0, 1.0))  # still in the cell
    check_figure(fig)
    plt.close(fig)


def test_learning_draws_state_as_a_reference():
    succ = {"NoComm": [0.0, 0.1], "LMAC": [0.5, 0.6], "State": [0.4, 0.7]}
    runs = [SimpleNamespace(arm=a, curve=np.linspace(0, v, 5), env_steps=np.arange(1, 6) * 1000.0)
            for a, vs in succ.items() for v in vs]
    res = SimpleNamespace(config=SimpleNamespace(arms=tuple(succ)), runs=runs, message_size={"NoComm": 0, "LMAC": 24}.get,
                          success_per_seed=succ.get, success=lambda a: float(np.mean(succ[a])))
    fig = plots.plot_learning(res)
    right = fig.axes[1]
    xs = {x for c in right.collections for x, _ in c.get_offsets()}
    assert xs == {0.0, 24.0}  # NoComm and LMAC only: State is the dashed line, not a point at 0
    assert any(line.get_linestyle() == "--" for line in right.lines)
    check_figure(fig)
    plt.close(fig)
