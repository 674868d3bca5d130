"""Figures of the chapter (book style: column width, colour bars, integer ticks;
METHOD = PRISM, BASELINE = Transformer)."""

from __future__ import annotations

import numpy as np
import torch

from icml26.common import BASELINE, METHOD, PALETTE
from icml26.common.plotting import add_colorbar, book_figure, integer_ticks

from .experiment import LABELS, ChapterRun
from .layers import static_rotation

COLORS = {"prism_unit": PALETTE[2], "prism_rms": METHOD, "hybrid": PALETTE[3], "transformer": BASELINE}
SHORT = {"prism_unit": "PRISM |z|=1", "prism_rms": "PRISM (RMS)", "hybrid": "hybrid", "transformer": "Transformer"}


def plot_interference(seq_len: int = 64):
    """The idea in one picture: unit phasors whose phases line up add (constructive), whose
    phases disagree cancel (destructive); and the phase position code."""
    fig, (a1, a2) = book_figure(1, 2, height=3.1)
    g = torch.Generator().manual_seed(0)
    coherent = torch.polar(torch.ones(seq_len), 0.3 * torch.randn(seq_len, generator=g) + 0.8)
    random = torch.polar(torch.ones(seq_len), 2 * np.pi * torch.rand(seq_len, generator=g))
    for z, name, c in ((coherent, "locked", METHOD), (random, "random", BASELINE)):
        a1.scatter(z.real.numpy(), z.imag.numpy(), s=10, color=c, alpha=0.6, label=f"{name}: |mean| = {abs(complex(z.mean())):.2f}")
        m = z.mean()
        a1.annotate("", (float(m.real), float(m.imag)), (0, 0), arrowprops=dict(color=c, lw=2.5))
    a1.set_aspect("equal"); a1.set_xlim(-1.3, 1.3); a1.set_ylim(-2.1, 1.3)  # the legend below the circle
    a1.set_xlabel("Re z"); a1.set_ylabel("Im z")
    a1.set_title("phasors and their mean"); a1.legend(loc="lower center")
    s = static_rotation(seq_len, 8)  # (L, 8)
    for j, c in zip((0, 2, 5), PALETTE):
        a2.plot(torch.angle(s[:, j]).numpy(), color=c, label=f"channel {j}")
    a2.set_xlabel("position p"); a2.set_ylabel("phase (rad)"); integer_ticks(a2, "x")
    a2.set_ylim(-3.4, 5.0); a2.set_yticks(range(-3, 4))  # a band above the lines for the legend
    a2.set_title("position code $e^{i p \\omega_j}$")
    a2.legend(loc="upper center", ncols=3, handlelength=1.2, columnspacing=0.8)
    return fig


def plot_transitions(task, topics: tuple[int, ...] = (0, 1)):
    """Two topics' transition matrices over the ambiguous tokens (heatmaps with a colour bar)."""
    fig, axes = book_figure(1, len(topics), height=3.0)
    for t, ax in zip(topics, np.atleast_1d(axes)):
        im = ax.imshow(task.transitions[t].numpy(), cmap="viridis", vmin=0, vmax=1)
        ax.set_title(f"topic {t}: $T_{t}$"); ax.set_xlabel("next ambiguous token"); ax.set_ylabel("current token")
        integer_ticks(ax, "both"); ax.grid(False)
    add_colorbar(im, ax, "probability")
    return fig


def plot_training(run: ChapterRun):
    fig, ax = book_figure(1, 1, height=2.8)
    for k, losses in run.losses.items():
        sm = np.convolve(losses, np.ones(10) / 10, mode="valid")
        ax.plot(sm, color=COLORS[k], label=SHORT[k])
    ax.set_xlabel("training step"); ax.set_ylabel("masked loss (10-step mean)"); integer_ticks(ax, "x")
    ax.legend(ncols=2)
    return fig


def plot_interventions(run: ChapterRun):
    """Accuracy against phase-noise strength sigma and against the attenuation c."""
    c = run.config
    fig, (a1, a2) = book_figure(1, 2, height=3.8)
    for k in run.models:
        a1.plot(c.sigmas, run.phase_curve[k], "o-", color=COLORS[k], label=SHORT[k])
        a2.plot(c.scales, run.scale_curve[k], "o-", color=COLORS[k])
        a2.scatter([c.scales[-1] / 3], [run.flatten[k]], marker="s", color=COLORS[k])
    for a in (a1, a2):
        a.axhline(run.chance, color="0.5", ls=":", label="chance")
        a.set_ylabel("masked accuracy"); a.set_ylim(0, None)
    a1.set_xlabel("phase noise $\\sigma$"); a1.set_title("destroying phase")
    fig.legend(*a1.get_legend_handles_labels(), loc="outside lower center", ncols=5, handlelength=1.5,
               columnspacing=1.0)  # below both panels, off the curves
    a2.set_xscale("log"); a2.invert_xaxis(); a2.set_xlabel("attenuation c (squares: flattened)")
    a2.set_title("shrinking or flattening magnitude")
    return fig


def plot_seed_figures(figs: list[dict], keep_min: float):
    """The deciding figures of every seed: C1's magnitude keep against its bar, C2's accuracies
    and C3's topic-probe accuracies, hybrid against Transformer."""
    fig, (a1, a2, a3) = book_figure(1, 3, height=3.1)
    seeds = np.arange(len(figs))
    a1.plot(seeds, [f["keep_flatten"] for f in figs], "o", color=METHOD, label="flattening")
    a1.plot(seeds, [f["keep_attenuation"] for f in figs], "s", color=PALETTE[2], label="c = 0.1")
    a1.axhline(keep_min, color="0.3", ls="--", label="bar")
    a1.set_title("C1: accuracy kept")
    for ax, key, title in ((a2, "acc", "C2: masked acc."), (a3, "probe", "C3: topic probe")):
        ax.plot(seeds, [f[f"{key}_hybrid"] for f in figs], "o", color=COLORS["hybrid"], label="hybrid")
        ax.plot(seeds, [f[f"{key}_transformer"] for f in figs], "s", color=BASELINE, label="Transformer")
        ax.set_title(title)
    handles, labels = [sum(x, []) for x in zip(a1.get_legend_handles_labels(), a2.get_legend_handles_labels())]
    fig.legend(handles, labels, loc="outside lower center", ncols=5, handlelength=1.5, columnspacing=1.0)
    for ax in (a1, a2, a3):
        ax.set_xlabel("seed"); integer_ticks(ax, "x"); ax.set_xlim(-0.5, len(figs) - 0.5)
    return fig


@torch.no_grad()
def plot_token_phases(run: ChapterRun, channel: int = 0, name: str = "prism_rms"):
    """Phase compass: the position-free phase arg(z_c rho) of every token in one channel,
    before and after training; private tokens coloured by their topic."""
    task = run.task
    V, A, P = task.vocab_size, task.n_ambiguous, run.config.n_private
    ids = torch.arange(V)[None]  # (1, V)
    fig, axes = book_figure(1, 2, height=3.4, subplot_kw={"projection": "polar"})
    for ax, model, title in ((axes[0], run.initial[name], "before training"), (axes[1], run.models[name], "after training")):
        dev = next(model.parameters()).device
        z = model.encoder.rose.token_phase(ids.to(dev))[0, :, channel].cpu()  # (V,)
        ph, r = torch.angle(z).numpy(), np.ones(V)
        ax.scatter(ph[1:A + 1], r[1:A + 1], color="0.55", s=20, label="ambiguous")
        for t in range(run.config.n_topics):
            sl = slice(1 + A + t * P, 1 + A + (t + 1) * P)
            ax.scatter(ph[sl], r[sl] * 1.15, color=PALETTE[t % len(PALETTE)], s=40, label=f"topic {t}")
        ax.scatter(ph[:1], r[:1] * 0.8, color="k", marker="x", s=40, label="[MASK]")
        ax.set_yticks([]); ax.set_ylim(0, 1.3); ax.set_title(title)
    axes[1].legend(loc="center left", bbox_to_anchor=(1.1, 0.5))
    return fig


def plot_explore(acc: dict[str, float], chance: float, title: str = ""):
    fig, ax = book_figure(1, 1, height=2.4)
    names = list(acc)
    ax.barh([SHORT[k] for k in names], [acc[k] for k in names], color=[COLORS[k] for k in names])
    ax.axvline(chance, color="0.4", ls=":")
    ax.annotate("chance", (chance, 1.0), xycoords=("data", "axes fraction"), xytext=(3, 2), textcoords="offset points",
                ha="left", va="bottom", fontsize=9, color="0.3")  # named above the line, off the bars
    ax.set_xlim(0, 1); ax.set_xlabel("masked accuracy"); ax.set_title(title)
    return fig
