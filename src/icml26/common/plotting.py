"""One plotting style for the whole book."""

from __future__ import annotations

import matplotlib as mpl

# Colour-blind-safe palette (Okabe & Ito); `METHOD` is the paper's method, `BASELINE` the
# main comparison, so every chapter colours them alike.
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]
METHOD, BASELINE = PALETTE[0], PALETTE[1]

BOOK_STYLE = {
    "figure.figsize": (6.4, 3.6),
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "savefig.bbox": "tight",
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.prop_cycle": mpl.cycler(color=PALETTE),
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "font.size": 10,
    "image.cmap": "viridis",
}


def use_book_style() -> None:
    """Apply the book's matplotlib style (call once, in the setup cell)."""
    mpl.rcParams.update(BOOK_STYLE)
