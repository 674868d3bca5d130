"""Figures of the chapter (matplotlib, book colours: METHOD = PRISM, BASELINE = Transformer)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import torch

from icml26.common import BASELINE, METHOD, PALETTE

from .experiment import LABELS, ChapterRun
from .layers import harmonic_conv, static_rotation

COLORS = {"prism_unit": PALETTE[2], "prism_rms": METHOD, "hybrid": PALETTE[3], "transformer": BASELINE}


def plot_interference(seq_len: int = 64):
    """The idea in one picture: unit phasors whose phases line up add (constructive), whose
    phases disagree cancel (destructive); a harmonic filter decides which is which."""
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.4))
    g = torch.Generator().manual_seed(0)
    coherent = torch.polar(torch.ones(seq_len), 0.3 * torch.randn(seq_len, generator=g) + 0.8)
    random = torch.polar(torch.ones(seq_len), 2 * np.pi * torch.rand(seq_len, generator=g))
    for z, name, c in ((coherent, "phase-locked", METHOD), (random, "random phases", BASELINE)):
        a1.scatter(z.real, z.imag, s=12, color=c, alpha=0.6, label=f"{name}: |mean| = {abs(complex(z.mean())):.2f}")
        m = z.mean()
        a1.annotate("", (float(m.real), float(m.imag)), (0, 0), arrowprops=dict(color=c, lw=2.5))
    a1.set_aspect("equal"); a1.set_xlim(-1.3, 1.3); a1.set_ylim(-1.3, 1.3)
    a1.set_title("unit phasors and their mean (interference)"); a1.legend(fontsize=8, loc="lower left")
    s = static_rotation(seq_len, 8)  # (L, 8)
    for j, c in zip((0, 2, 5), PALETTE):
        a2.plot(torch.angle(s[:, j]).numpy(), color=c, label=f"channel {j}")
    a2.set_xlabel("position p"); a2.set_ylabel("phase of $s_{p,j}$ (rad)")
    a2.set_title("phase position code $e^{i p \\omega_j}$"); a2.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_training(run: ChapterRun):
    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    for k, losses in run.losses.items():
        sm = np.convolve(losses, np.ones(10) / 10, mode="valid")
        ax.plot(sm, color=COLORS[k], label=LABELS[k])
    ax.set_xlabel("step"); ax.set_ylabel("masked-token loss (10-step mean)"); ax.legend(fontsize=8)
    return fig


def plot_interventions(run: ChapterRun):
    """Accuracy against phase-noise strength sigma and against the attenuation c."""
    c = run.config
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.6))
    for k in run.models:
        a1.plot(c.sigmas, run.phase_curve[k], "o-", color=COLORS[k], label=LABELS[k])
        a2.plot(c.scales, run.scale_curve[k], "o-", color=COLORS[k], label=LABELS[k])
        a2.scatter([c.scales[-1] / 3], [run.flatten[k]], marker="s", color=COLORS[k])
    for a in (a1, a2):
        a.axhline(run.chance, color="0.5", ls=":", label="chance (majority token)")
        a.set_ylabel("masked accuracy")
    a1.set_xlabel("phase noise $\\sigma$ (real models: sign-flip prob. $\\sigma/2$)")
    a1.set_title("destroying phase"); a1.legend(fontsize=7)
    a2.set_xscale("log"); a2.invert_xaxis(); a2.set_xlabel("attenuation c (squares: flattened |z|)")
    a2.set_title("shrinking or flattening magnitude")
    fig.tight_layout()
    return fig


@torch.no_grad()
def plot_token_phases(run: ChapterRun, channel: int = 0, name: str = "prism_rms"):
    """Phase compass: the position-free phase arg(z_c rho) of every token in one channel,
    before and after training; private tokens coloured by their topic."""
    task = run.task
    V, A, P = task.vocab_size, task.n_ambiguous, run.config.n_private
    ids = torch.arange(V)[None]  # (1, V)
    fig, axes = plt.subplots(1, 2, figsize=(9, 4.2), subplot_kw={"projection": "polar"})
    for ax, model, title in ((axes[0], run.initial[name], "before training"), (axes[1], run.models[name], "after training")):
        dev = next(model.parameters()).device
        z = model.encoder.rose.token_phase(ids.to(dev))[0, :, channel].cpu()  # (V,)
        ph, r = torch.angle(z).numpy(), np.ones(V)
        ax.scatter(ph[1:A + 1], r[1:A + 1], color="0.55", s=25, label="ambiguous")
        for t in range(run.config.n_topics):
            sl = slice(1 + A + t * P, 1 + A + (t + 1) * P)
            ax.scatter(ph[sl], r[sl] * 1.15, color=PALETTE[t % len(PALETTE)], s=45, label=f"topic {t} private")
        ax.scatter(ph[:1], r[:1] * 0.8, color="k", marker="x", s=50, label="[MASK]")
        ax.set_yticks([]); ax.set_ylim(0, 1.3); ax.set_title(f"{title} (channel {channel})")
    axes[1].legend(fontsize=7, loc="lower left", bbox_to_anchor=(1.0, 0.0))
    fig.tight_layout()
    return fig


def plot_explore(acc: dict[str, float], chance: float, title: str = ""):
    fig, ax = plt.subplots(figsize=(7, 2.8))
    names = list(acc)
    ax.barh([LABELS[k] for k in names], [acc[k] for k in names], color=[COLORS[k] for k in names])
    ax.axvline(chance, color="0.4", ls=":", label="chance")
    ax.set_xlim(0, 1); ax.set_xlabel("masked accuracy"); ax.set_title(title); ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
