"""Figures of the chapter: the map with paths, the outcome plane, the score landscape."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import torch

from icml26.common import BASELINE, METHOD
from icml26.common.plotting import add_colorbar, place_labels

from .env import BOX, GOAL, HAZARD_X


def draw_map(ax, half_width: float = 0.35, apex: float = 0.5) -> None:
    """The triangular hazard (apex (0.5, apex), half-width `half_width` at y = 0, down to the
    bottom wall), start and goal."""
    y0 = BOX[2]
    w0 = half_width * (apex - y0) / apex
    tri = [(HAZARD_X, apex), (HAZARD_X - w0, y0), (HAZARD_X + w0, y0)]
    ax.add_patch(plt.Polygon(tri, closed=True, color="tab:red", alpha=0.25, label="hazard"))
    ax.plot(0, 0, "ko", ms=5)
    ax.plot(*GOAL, "g*", ms=14, label="goal")
    ax.set_xlim(-0.2, 1.4), ax.set_ylim(-0.6, 0.9), ax.set_aspect("equal")


def plot_paths(paths: dict[str, np.ndarray], half_width: float = 0.35, apex: float = 0.5, ax=None,
               title: str = ""):
    """paths: name -> (n, T+1, 2) arrays; draws every path on the map."""
    ax = ax or plt.gca()
    draw_map(ax, half_width, apex)
    colors = plt.cm.viridis(np.linspace(0, 0.9, len(paths)))
    for (name, p), col in zip(paths.items(), colors):
        c = METHOD if name == "usb" else col
        for k in range(p.shape[0]):
            ax.plot(p[k, :, 0], p[k, :, 1], "-", color=c, lw=2 if name == "usb" else 1, alpha=0.8,
                    label=name if k == 0 else None)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncols=3, fontsize=8.5, columnspacing=1.0,
              handlelength=1.5)  # under the map, off the paths
    ax.set_title(title)
    return ax


def plot_outcome_plane(names, returns: np.ndarray, costs: np.ndarray, ax=None, frontier=None):
    """Seed-mean (cost, return) of every method; per-seed points faint; optional frontier
    {lambdas, returns, costs} of fixed linear penalties."""
    ax = ax or plt.gca()
    r_m, c_m = returns.mean(0), costs.mean(0)
    for i, n in enumerate(names):
        col = METHOD if n == "usb" else (BASELINE if n == "lagrangian" else "0.4")
        ax.scatter(costs[:, i], returns[:, i], color=col, alpha=0.3, s=15)
        ax.scatter(c_m[i], r_m[i], color=col, s=60, marker="*" if n == "usb" else "o", zorder=3)
    if frontier is not None:
        o = np.argsort(frontier["costs"])
        ax.plot(frontier["costs"][o], frontier["returns"][o], "--", color="0.6", label="linear-penalty frontier")
        ax.legend(fontsize=8.5, loc="lower right")
    ax.set_xlabel("episode cost (steps in hazard)"), ax.set_ylabel("episode return")
    # names beside the seed means, placed so that no two overlap (close means get leader lines)
    place_labels(ax, np.column_stack([c_m, r_m]), list(names))
    return ax


def plot_score_landscape(score, g_r: torch.Tensor, g_c: torch.Tensor, ax=None):
    """Heat map of S(G^r, G^c) over the outcome plane with the batch it was fit on."""
    ax = ax or plt.gca()
    r = np.linspace(float(g_r.min()), float(g_r.max()), 60)
    c = np.linspace(float(g_c.min()), float(g_c.max()), 60)
    R, C = np.meshgrid(r, c)
    with torch.no_grad():
        dev = score.mu.device
        S = score(torch.tensor(R, dtype=torch.float32, device=dev), torch.tensor(C, dtype=torch.float32, device=dev))
    im = ax.contourf(C, R, S.cpu().numpy(), levels=20, cmap="viridis")
    ax.scatter(g_c.cpu(), g_r.cpu(), s=4, color="w", alpha=0.6)
    add_colorbar(im, ax, "score S")
    ax.set_xlabel("G^c (cost)"), ax.set_ylabel("G^r (return)")
    return ax
