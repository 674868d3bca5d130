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


def _emptiest_box(ax, xs, ys, size=(0.3, 0.42)):
    """Axes-fraction (x0, y0, w, h) of the candidate box (corners and edge middles) that holds the
    fewest of the points (xs, ys), for an inset that hides no data."""
    to_axes = ax.transData + ax.transAxes.inverted()
    pts = to_axes.transform(np.column_stack([xs, ys]))
    w, h = size
    candidates = [(x0, y0) for y0 in (0.45, 0.08) for x0 in (0.03, 0.35, 0.67)]
    count = lambda x0, y0: int(np.sum((pts[:, 0] > x0 - 0.04) & (pts[:, 0] < x0 + w + 0.04)  # noqa: E731
                                      & (pts[:, 1] > y0 - 0.06) & (pts[:, 1] < y0 + h + 0.16)))  # + its title
    x0, y0 = min(candidates, key=lambda c: count(*c))
    return (x0, y0, w, h)


def plot_history(album: Album, query: Query, ax=None):
    """Timeline (days) x distance from the clue's place: events, the clue photo and the target set G.
    Where targets share the clue's event (intra-event queries) they sit on the clue's point at this
    scale, so an inset zooms into that event (hours and metres apart) where no data is hidden."""
    ax = ax or plt.gca()
    clue = np.flatnonzero(album.marker == query.marker)
    dist = np.linalg.norm(album.gps - album.gps[clue[0]], axis=1)
    clue_ev = album.event == album.event[clue[0]]
    g = np.array(sorted(query.targets))
    same_subject = album.subject == query.subject
    others = same_subject & ~np.isin(np.arange(len(album)), g)

    def draw(a, small=False):
        k = 0.7 if small else 1.0
        a.scatter(album.time, dist, s=6, c="lightgray", label="photos")
        a.scatter(album.time[clue_ev], dist[clue_ev], s=10 * k, c=PALETTE[1], label="clue's event (hidden)")
        a.scatter(album.time[clue], dist[clue], marker="*", s=120 * k, c="gold", edgecolors="k", label="clue photo")
        a.scatter(album.time[g], dist[g], s=40 * k, facecolors="none", edgecolors=METHOD, linewidths=1.5,
                  label="targets G", zorder=3)  # over the star: a target never hides
        a.scatter(album.time[others], dist[others], s=14, marker="x", c=BASELINE, label="same subject, not in G")

    draw(ax)
    ax.set_xlabel("day")
    ax.set_ylabel("km from the clue photo")
    ax.set_title(f"{query.kind}-event query", fontsize=9.5)
    ax.legend(fontsize=8.5, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    if np.isin(g, np.flatnonzero(clue_ev)).any():
        ev = np.flatnonzero(clue_ev)
        ax.figure.canvas.draw()  # settle the layout so the inset's box is placed in final axes units
        inset = ax.inset_axes(_emptiest_box(ax, album.time, dist))
        draw(inset, small=True)
        pad_t, pad_d = 0.1 * np.ptp(album.time[ev]) + 0.02, 0.1 * dist[ev].max() + 0.02
        inset.set_xlim(album.time[ev].min() - pad_t, album.time[ev].max() + pad_t)
        inset.set_ylim(-pad_d, dist[ev].max() + pad_d)
        inset.set_xticks([]); inset.set_yticks([])
        inset.set_title(f"clue's event: {np.ptp(album.time[ev]):.1f} days, {dist[ev].max():.1f} km", fontsize=8.5)
        ax.indicate_inset_zoom(inset, edgecolor="0.4")
    return ax


def _arm_label(arm: str) -> str:
    return (arm.replace("scripted teacher", "teacher").replace(" w/o FilterMetadata", "\nw/o filter")
            .replace(" w/o explicit memory", "\nw/o memory").replace(" (", "\n("))


def plot_scores(results, ax=None):
    """Macro F1 and EM per arm, intra vs inter (mean over seeds); the scripted teacher's arms, when
    they ran, stand apart on the right."""
    from .experiment import ARMS, TEACHER_ARMS

    ax = ax or plt.gca()
    t = results.table(["arm", "kind"])
    ran = set(results.records.arm)
    arms = [a for a in (ARMS[0], ARMS[3], ARMS[1], ARMS[2]) + TEACHER_ARMS[::-1] if a in ran]
    x = np.arange(len(arms))
    for j, (kind, metric, hatch) in enumerate([(INTRA, "F1", ""), (INTER, "F1", "//"), (INTRA, "EM", ""),
                                               (INTER, "EM", "//")]):
        vals = [t.loc[(a, kind), metric] for a in arms]
        ax.bar(x + (j - 1.5) * 0.2, vals, 0.2, color=[METHOD if metric == "F1" else BASELINE][0], hatch=hatch,
               alpha=1.0 if metric == "F1" else 0.6, label=f"{metric} {kind}")
    if any(a in TEACHER_ARMS for a in arms):
        ax.axvline(3.5, color="0.5", lw=0.8, ls="--")
        ax.text(3.6, 0.97, "scripted teacher (for comparison)", fontsize=8, va="top", color="0.3")
    ax.set_xticks(x, [_arm_label(a) for a in arms], fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("score (macro, mean over seeds)")
    ax.legend(fontsize=8, ncol=4, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
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
