"""Figures for the DeepImageSearch chapter."""

from __future__ import annotations

import json
import re

import matplotlib.pyplot as plt
import numpy as np

from icml26.common import BASELINE, METHOD, PALETTE
from icml26.common.plotting import COLUMN_WIDTH_IN

from .album import INTER, INTRA, Album, Query


def show_photos(album: Album, ids, targets=(), ax_row=None, title: str = "", max_n: int = 8):
    """A strip of thumbnails; green border = in G, red = not in G (when targets are given)."""
    ids = list(ids)[:max_n]
    if ax_row is None:
        n = max(1, len(ids))
        fig, ax_row = plt.subplots(1, n, figsize=(min(COLUMN_WIDTH_IN, 0.85 * n), 1.3), squeeze=False)
        ax_row = ax_row[0]
    for ax in ax_row:
        ax.axis("off")
    for ax, i in zip(ax_row, ids):
        ax.imshow(album.images[i].permute(1, 2, 0).numpy())  # (3, 32, 32) -> (32, 32, 3)
        ax.set_title(f"{i}", fontsize=8.5)
        if len(targets):
            ax.axis("on")
            ax.set_xticks([]), ax.set_yticks([])
            for side in ax.spines.values():
                side.set_visible(True)
                side.set_color("tab:green" if i in targets else "tab:red")
                side.set_linewidth(3)
    if title:
        ax_row[0].text(-0.1, 0.5, title, transform=ax_row[0].transAxes, ha="right", va="center", fontsize=8.5)
    return ax_row


def plot_history(album: Album, query: Query, ax=None):
    """Timeline (days) x distance from the clue's place: events, the clue photo and the target set G."""
    ax = ax or plt.gca()
    clue = np.flatnonzero(album.marker == query.marker)
    dist = np.linalg.norm(album.gps - album.gps[clue[0]], axis=1)
    ax.scatter(album.time, dist, s=6, c="lightgray", label="photos")
    clue_ev = album.event == album.event[clue[0]]
    ax.scatter(album.time[clue_ev], dist[clue_ev], s=10, c=PALETTE[1], label="clue's event (hidden)")
    g = np.array(sorted(query.targets))
    ax.scatter(album.time[g], dist[g], s=40, facecolors="none", edgecolors=METHOD, linewidths=1.5, label="targets G")
    ax.scatter(album.time[clue], dist[clue], marker="*", s=120, c="gold", edgecolors="k", label="clue photo")
    same_subject = album.subject == query.subject
    ax.scatter(album.time[same_subject & ~np.isin(np.arange(len(album)), g)],
               dist[same_subject & ~np.isin(np.arange(len(album)), g)], s=14, marker="x", c=BASELINE,
               label="same subject, not in G")
    ax.set_xlabel("day")
    ax.set_ylabel("km from the clue photo")
    ax.set_title(f"{query.kind}-event query", fontsize=9.5)
    ax.legend(fontsize=8.5, loc="upper right")
    return ax


def plot_scores(results, ax=None):
    """Macro F1 and EM per arm, intra vs inter (mean over seeds)."""
    ax = ax or plt.gca()
    t = results.table(["arm", "kind"])
    arms = list(dict.fromkeys(results.records.arm))
    x = np.arange(len(arms))
    for j, (kind, metric, hatch) in enumerate([(INTRA, "F1", ""), (INTER, "F1", "//"), (INTRA, "EM", ""),
                                               (INTER, "EM", "//")]):
        vals = [t.loc[(a, kind), metric] for a in arms]
        ax.bar(x + (j - 1.5) * 0.2, vals, 0.2, color=[METHOD if metric == "F1" else BASELINE][0], hatch=hatch,
               alpha=1.0 if metric == "F1" else 0.6, label=f"{metric} {kind}")
    ax.set_xticks(x, [a.replace(" w/o ", "\nw/o ").replace(" (", "\n(") for a in arms], fontsize=8.5)
    ax.set_ylim(0, 1)
    ax.set_ylabel("score (macro, mean over seeds)")
    ax.legend(fontsize=8.5, ncol=2)
    return ax


def observed_ids(obs: str) -> list[int]:
    """The photo ids an observation names (view lines, ranked hits, or a filter's match list)."""
    if obs.startswith("id "):
        return [int(i) for i in re.findall(r"^id (\d+) \|", obs, flags=re.M)]
    if obs.startswith("Top"):
        return [int(i) for i in re.findall(r"(\d+) \(", obs)]
    m = re.match(r"\d+ photos match: ([\d, ]*)", obs)
    return [int(i) for i in m.group(1).replace(",", " ").split()] if m else []


def plot_trajectory(album: Album, traj, max_steps: int = 8):
    """One row per step: the tool call and up to 8 thumbnails of the ids its observation names."""
    steps = traj.steps[:max_steps]
    fig, axes = plt.subplots(len(steps), 9, figsize=(COLUMN_WIDTH_IN, 0.95 * len(steps)), squeeze=False,
                             gridspec_kw={"width_ratios": [3.6] + [1] * 8}, layout="constrained")
    for row, (call, obs) in zip(axes, steps):
        try:
            c = json.loads(call)
            label = c["tool"] + "\n" + ", ".join(f"{k}={v}" for k, v in c["args"].items())[:30]
        except (ValueError, KeyError, TypeError):
            label = call[:60]
        row[0].axis("off")
        row[0].text(0, 0.5, label, fontsize=8.5, va="center")
        ids = observed_ids(obs)[:8]
        show_photos(album, ids, traj.query.targets, row[1:])
        for ax in row[1:]:
            ax.set_title("")  # ids are too small to read at this size; the colours carry the message
    return fig
