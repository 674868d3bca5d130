"""Figures of the chapter."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from icml26.common import BASELINE, METHOD, PALETTE
from icml26.common.plotting import book_figure, place_labels, plain_log_ticks


def draw_scene(ax, center=(0.0, 0.0), radius: float = 0.3, goal=None) -> None:
    ax.add_patch(plt.Circle(tuple(float(v) for v in center), radius, color="0.8", zorder=0))
    if goal is not None:
        ax.plot(*[float(v) for v in goal], marker="*", color="k", ms=10)
    ax.set_xlim(-1, 1); ax.set_ylim(-1, 1); ax.set_aspect("equal"); ax.set_xticks([]); ax.set_yticks([])


def plot_paths(ax, paths, success, title: str, n: int = 20, radius: float = 0.3) -> None:
    """Paths (episodes, T+1, 2) of the first `n` episodes: blue = success, orange = failure."""
    draw_scene(ax, radius=radius)
    paths, success = np.asarray(paths), np.asarray(success, dtype=float)
    for i in range(min(n, paths.shape[0])):
        ax.plot(paths[i, :, 0], paths[i, :, 1], color=METHOD if success[i] else BASELINE, lw=0.8, alpha=0.8)
    ax.set_title(f"{title}\nsuccess {success.mean():.2f}", fontsize=9)


def plot_demos(demos, n: int = 40, radius: float = 0.3):
    """The bimodal expert and the mean of its two modes (which hits the obstacle)."""
    fig, ax = book_figure(1, 1, height=3.4)
    draw_scene(ax, radius=radius)
    for i in range(min(n, demos.obs.shape[0])):
        L = int(demos.lengths[i])
        p = demos.obs[i, :L, :2].numpy()
        ax.plot(p[:, 0], p[:, 1], color=PALETTE[0] if demos.side[i] < 0 else PALETTE[1], lw=0.8, alpha=0.7)
    T = int(demos.lengths.min())
    mean = demos.obs[:, :T, :2].mean(0).numpy()
    ax.plot(mean[:, 0], mean[:, 1], "k--", lw=2, label="mean of the demos")
    ax.legend(loc="lower right", fontsize=9)
    ax.set_title("expert demonstrations (left/right detours)", fontsize=9)
    return fig


def plot_all_paths(results, radius: float = 0.3):
    """Paths of every method on the same scenes (first training seed, first 20 episodes; the
    success in the title is over all its episodes), four panels per row."""
    r = results["per_seed"][0]
    names = list(r["paths"])
    rows = (len(names) + 3) // 4
    fig, axes = book_figure(rows, 4, height=2.2 * rows)
    axes = np.atleast_1d(axes).ravel()
    for ax, name in zip(axes, names):
        n = len(r["paths"][name])
        plot_paths(ax, r["paths"][name], r["success"][name][:n], name, n, radius)
        ax.set_title(f"{name}\nsuccess {np.mean(r['success'][name]):.2f}", fontsize=9)
    for ax in axes[len(names):]:
        ax.set_visible(False)
    return fig


def success_table(results) -> dict[str, np.ndarray]:
    """Success rate per method and training seed, (seeds,) each."""
    return {name: np.array([np.mean(s["success"][name]) for s in results["per_seed"]]) for name in results["methods"]}


def latency_ms(results, batch: bool = False) -> dict[str, float]:
    """Milliseconds per decision, the minimum of the timed calls, averaged over seeds (batch 1, or
    the batch of robots for STEP-2 and DDPM-100)."""
    key = "latency_batch_s" if batch else "latency_batch1_s"
    names = results["per_seed"][0][key]
    return {n: 1e3 * float(np.mean([min(s[key][n]) for s in results["per_seed"]])) for n in names}


def plot_success_latency(results):
    """Success (mean and per training seed) and the batch-1 latency of every method."""
    succ_d = success_table(results)
    names = list(succ_d)
    succ = np.stack([succ_d[n] for n in names])  # (methods, seeds)
    lat = latency_ms(results)
    ms = np.array([lat[n] for n in names])
    fig, (a, b) = book_figure(1, 2, height=3.4)
    colors = [METHOD if n.startswith("STEP") else BASELINE for n in names]
    a.bar(range(len(names)), succ.mean(1), color=colors, alpha=0.8)
    for j in range(succ.shape[1]):
        a.scatter(range(len(names)), succ[:, j], color="k", s=8, zorder=3)
    a.set_xticks(range(len(names)), names, rotation=35, ha="right", fontsize=8.5); a.set_ylabel("success rate")
    a.set_ylim(0, 1.05)
    for n, x, y in zip(names, ms, succ.mean(1)):
        b.scatter(x, y, color=METHOD if n.startswith("STEP") else BASELINE)
    b.set_xscale("log"); b.set_xlabel("ms per decision (batch 1)"); b.set_ylabel("success rate")
    plain_log_ticks(b, "x")
    place_labels(b, np.column_stack([ms, succ.mean(1)]), names)  # no two names overlap
    return fig


def plot_contraction(contraction):
    fig, (a, b) = book_figure(1, 2, height=3.0)
    err = np.asarray(contraction["error"])
    ratio = np.asarray(contraction["ratio"])
    labels = [f"t={t}" for t in contraction["timesteps"]] + ["output"]
    a.plot(range(len(err)), err, "o-", color=METHOD)
    a.set_xticks(range(len(err)), labels); a.set_ylabel(r"mean $\|\tilde A_k - A^*_k\|$"); a.set_yscale("log")
    plain_log_ticks(a, "y")
    a.set_title("error of the warm-started refinement", fontsize=9)
    b.bar(range(len(ratio)), ratio, color=METHOD, alpha=0.8)
    b.axhline(1.0, color="k", lw=1, ls="--")
    b.set_xticks(range(len(ratio)), [f"{labels[i]}→{labels[i+1]}" for i in range(len(labels) - 1)], fontsize=8.5)
    b.set_ylabel("median ratio $c_k$"); b.set_title("per-step contraction ratio", fontsize=9)
    return fig


def plot_explore(view: dict, radius: float = 0.3):
    """One precomputed Explore view: name -> {"paths", "success"}."""
    fig, axes = book_figure(1, len(view), height=3.0)
    for ax, (name, r) in zip(np.atleast_1d(axes), view.items()):
        plot_paths(ax, r["paths"], r["success"], name, len(r["paths"]), radius)
    return fig


def results_markdown(results, paper: dict[str, str]) -> str:
    """Table: method, the paper's figure (state-based Push-T success at its scale), ours (mean over
    training seeds, with the range), collisions, time per decision at batch 1."""
    succ = success_table(results)
    lat = latency_ms(results)
    seeds = results["per_seed"]
    n_ep = results["episodes"]
    rows = [f"| method | paper: Push-T success (state-based) | ours: success ({len(seeds)} training seed(s) × "
            f"{n_ep} episodes) | collisions | ms per decision (batch 1) |", "|---|---|---|---|---|"]
    for name, v in succ.items():
        rng = f" ({v.min():.2f}–{v.max():.2f})" if len(v) > 1 else ""
        coll = np.mean([np.mean(s["collided"][name]) for s in seeds])
        rows.append(f"| {name} | {paper.get(name, '–')} | {v.mean():.2f}{rng} | {coll:.2f} | {lat[name]:.1f} |")
    return "\n".join(rows)


def plot_startup(results, radius: float = 0.3):
    """Paths of the start-up diagnostics (`experiment.startup_diagnostics`) on the same scenes
    (first training seed)."""
    r = results["per_seed"][0]
    runs = r["startup_paths"]
    fig, axes = book_figure(1, len(runs), height=3.2)
    for ax, (name, d) in zip(np.atleast_1d(axes), runs.items()):
        title = name.replace(", ", ",\n", 1).replace(" (", "\n(", 1)
        plot_paths(ax, d["paths"], d["success"], title, len(d["paths"]), radius)
        ax.set_title(f"{title}\nsuccess {r['startup'][name]['success']:.2f}", fontsize=9)
    return fig
