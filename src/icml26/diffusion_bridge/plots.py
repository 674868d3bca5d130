"""Figures of the chapter (book style: column width, colour bars, integer ticks)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import torch

from icml26.common import BASELINE, METHOD, PALETTE
from icml26.common.plotting import COLUMN_WIDTH_IN, add_colorbar, book_figure, integer_ticks

from .experiment import LEGACY, ExperimentResult, toy_domains


def plot_bridge_paths(z0: float = -1.0, zT: float = 1.5, n_paths: int = 12, seed: int = 0):
    """A picture of the VE diffusion bridge in one latent dimension: sample paths pinned at z_0 (t = 0)
    and z_T (t = T), their mean and the band mean +- 2 sigma_t from `bridge_mean_std`. The paths are a
    Brownian bridge in tau = t^2 / T^2 (its variance tau (1 - tau) equals sigma_t^2), so every time
    slice has exactly the bridge's marginal."""
    from .bridge import T, bridge_mean_std

    t = torch.linspace(0.0, T, 201)
    tau = (t / T) ** 2
    gen = torch.Generator().manual_seed(seed)
    dw = torch.randn(n_paths, len(t) - 1, generator=gen) * tau.diff().sqrt()  # (P, 200) increments in tau
    w = torch.cat([torch.zeros(n_paths, 1), dw.cumsum(1)], 1)  # (P, 201) Brownian motion in tau
    paths = tau * zT + (1 - tau) * z0 + (w - tau * w[:, -1:])  # pinned at both ends
    mu, sd = bridge_mean_std(torch.full_like(t, z0), torch.full_like(t, zT), t)
    fig, ax = book_figure(1, 1, height=2.8)
    ax.fill_between(t.numpy(), (mu - 2 * sd).numpy(), (mu + 2 * sd).numpy(), color=PALETTE[0], alpha=0.15,
                    label="mean ± 2σ_t")
    for k in range(n_paths):
        ax.plot(t.numpy(), paths[k].numpy(), color="0.45", lw=0.7, label="sample paths" if k == 0 else None)
    ax.plot(t.numpy(), mu.numpy(), color=METHOD, lw=2, label="mean")
    ax.scatter([0.0, T], [z0, zT], color="black", zorder=3, s=30)
    ax.annotate("z_0 (target, t = 0)", (0.0, z0), xytext=(0.03, z0 - 0.55), fontsize=9)
    ax.annotate("z_T (source, t = T)", (T, zT), xytext=(T - 0.36, zT + 0.35), fontsize=9)
    ax.set_xlabel("bridge time t")
    ax.set_ylabel("latent z_t (one dimension)")
    ax.legend(loc="upper left", fontsize=8.5)
    return fig


def plot_toy(n: int = 40, n_pairs: int = 3, seed: int = 0):
    """The true and the mirrored coupling between the circle X and the parabola Y: both push the
    source marginal onto the target marginal and are exactly invertible; only pairs tell them apart."""
    theta, x, y = toy_domains(n, seed)
    s = theta / (2 * np.pi)
    pairs = np.random.default_rng(seed + 2).choice(n, n_pairs, replace=False)
    fig, axes = book_figure(1, 2, height=3.3)
    for a, name, th in zip(axes, ("true coupling", "mirrored coupling"), (2 * np.pi * s, 2 * np.pi * (1 - s))):
        xh = np.stack([np.cos(th), np.sin(th)], 1)
        for i in range(n):
            a.plot([y[i, 0], xh[i, 0]], [y[i, 1], xh[i, 1]], color="0.8", lw=0.6, zorder=0)
        sc = a.scatter(*y.T, c=s, cmap="viridis", s=14, label="Y (source)")
        a.scatter(*xh.T, c=s, cmap="viridis", s=14, marker="s", label="S(Y) in X")
        a.scatter(*x[pairs].T, facecolors="none", edgecolors="red", s=110, lw=1.5, label="known pairs")
        a.scatter(*xh[pairs].T, c="red", s=20, marker="x")
        a.set_title(name); a.set_aspect("equal")
    axes[0].legend(loc="lower left", bbox_to_anchor=(0.0, -0.05))
    add_colorbar(sc, axes[1], "source position s")
    return fig


def plot_metrics(res: ExperimentResult):
    """Accuracy, PSNR and MMD against the pairing fraction rho for SDB and paired-only (mean and
    std over seeds), the extension's unpaired point, and the two references."""
    fig, axes = book_figure(1, 3, height=3.0)
    c = res.config
    for metric, a in zip(("acc", "psnr", "mmd"), axes):
        for name, rhos, col, mk in (("SDB", c.rhos_sdb, METHOD, "o"), ("paired-only", c.rhos_paired, BASELINE, "s"),
                                    (LEGACY, c.rhos_legacy, PALETTE[2], "^")):
            if not rhos:
                continue
            vals = np.array([res.metrics[(name, float(r))][metric] for r in rhos])  # (rho, seed)
            xs = [max(r, 0.01) for r in rhos]
            a.errorbar(xs, vals.mean(1), yerr=vals.std(1), marker=mk, color=col, capsize=3,
                       label={"SDB": "SDB", "paired-only": "pairs only", LEGACY: "frozen AEs (E1)"}[name],
                       ls="-" if name != LEGACY else "none")
        for ref, ls in (("nearest upsampling", ":"), ("AE reconstruction of true HR", "--")):
            a.axhline(res.mean(ref, 1.0, metric), color="0.5", ls=ls, lw=1)
        a.set_xscale("log"); a.set_xlabel("pairing fraction ρ")
        a.set_title({"acc": "class accuracy", "psnr": "PSNR (dB)", "mmd": "MMD² to real HR"}[metric])
    axes[0].legend(loc="lower right")
    return fig


def plot_grid(rows: dict[str, torch.Tensor], n: int = 10):
    """A grid of digits: one row per entry of `rows` ((N, 16) or (N, 64) images in [-1, 1])."""
    fig = plt.figure(figsize=(COLUMN_WIDTH_IN, 0.62 * len(rows) + 0.2))
    axes = fig.subplots(len(rows), n, squeeze=False)
    for r, (name, imgs) in enumerate(rows.items()):
        side = int(round(imgs.shape[1] ** 0.5))
        for i in range(n):
            a = axes[r, i]
            a.imshow(imgs[i].reshape(side, side).cpu().numpy(), cmap="gray_r", vmin=-1, vmax=1)
            a.set_xticks([]); a.set_yticks([])
        axes[r, 0].set_ylabel(name, rotation=0, ha="right", va="center", fontsize=9)
    return fig


def plot_losses(res: ExperimentResult):
    """Training loss (sum of the active terms) per member, mean over seeds, for each rho."""
    fig, ax = book_figure(1, 1, height=2.8)
    for name, col in (("SDB", METHOD), ("paired-only", BASELINE)):
        ens = res.ensembles[name]
        rhos = np.array(ens.rhos)
        for k, r in enumerate(sorted(set(ens.rhos))):
            curve = res.losses[name][:, rhos == r].mean(1)
            ax.plot(curve, color=col, alpha=0.4 + 0.6 * k / max(1, len(set(ens.rhos)) - 1), lw=1,
                    label=f"{'SDB' if name == 'SDB' else 'pairs only'} ρ={r}")
    ax.set_yscale("log"); ax.set_xlabel("training step"); ax.set_ylabel("total loss"); integer_ticks(ax, "x")
    ax.legend(ncols=3)
    return fig
