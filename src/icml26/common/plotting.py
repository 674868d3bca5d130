"""One plotting style for the whole book, and its figure policy (CONTRIBUTING.md, section 3).

The book's text column is about 730 px wide. A figure is drawn at the column's width
(`COLUMN_WIDTH_IN` inches at `DPI`, about 750 px) so that it is shown at nearly its natural
size and a 9 pt label stays about 9 pt on the page. Wider figures are shrunk by the browser and
their text becomes unreadable, so :func:`book_figure` is the way to make one: at most the column's
width, any number of panels. Heatmaps get a labelled colour bar (:func:`add_colorbar`), integer
axes integer ticks (:func:`integer_ticks`); :func:`check_figure` refuses a figure that breaks the
policy and the guard test checks every stored image.
"""

from __future__ import annotations

import matplotlib as mpl

# Colour-blind-safe palette (Okabe & Ito); `METHOD` is the paper's method, `BASELINE` the
# main comparison, so every chapter colours them alike.
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]
METHOD, BASELINE = PALETTE[0], PALETTE[1]

COLUMN_WIDTH_IN = 6.8   # inches: the text column at DPI
DPI = 110               # 6.8 in x 110 dpi = 748 px, shown at ~730 px
MIN_FONT_PT = 8.5       # the smallest text size allowed in a figure (displayed ~8.3-9 pt)
PANEL_HEIGHT_IN = 2.6   # one row of panels
MAX_PIXEL_WIDTH = 800   # what the guard test allows for a stored image

BOOK_STYLE = {
    "figure.figsize": (COLUMN_WIDTH_IN, 3.4),
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "figure.constrained_layout.use": True,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.prop_cycle": mpl.cycler(color=PALETTE),
    "axes.titlesize": 10.5,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "legend.title_fontsize": 9,
    "legend.frameon": False,
    "figure.titlesize": 11,
    "font.size": 10,
    "image.cmap": "viridis",
}


def use_book_style() -> None:
    """Apply the book's matplotlib style (call once, in the setup cell)."""
    mpl.rcParams.update(BOOK_STYLE)


def book_figure(nrows: int = 1, ncols: int = 1, height: float | None = None, **subplot_kw):
    """A figure at the column's width: `nrows` x `ncols` panels; returns (fig, axes) like plt.subplots.

    height: total height in inches (default PANEL_HEIGHT_IN per row). More than 3 panels in a row
    make each too narrow to read: use more rows.
    """
    import matplotlib.pyplot as plt

    if not (isinstance(nrows, int) and isinstance(ncols, int) and nrows >= 1 and ncols >= 1):
        raise ValueError(f"nrows and ncols must be positive ints, got {nrows!r}, {ncols!r}")
    if ncols > 4:
        raise ValueError(f"{ncols} panels in a row do not fit the column (at most 4): use more rows")
    height = PANEL_HEIGHT_IN * nrows if height is None else float(height)
    if not 0.5 <= height <= 12:
        raise ValueError(f"height must be between 0.5 and 12 inches, got {height}")
    return plt.subplots(nrows, ncols, figsize=(COLUMN_WIDTH_IN, height), **subplot_kw)


def add_colorbar(mappable, ax, label: str):
    """A labelled colour bar beside `ax` for a heatmap or image (`mappable` from imshow/pcolormesh)."""
    if not label:
        raise ValueError("a colour bar needs a label saying what the colour means")
    bar = ax.figure.colorbar(mappable, ax=ax, shrink=0.9)
    bar.set_label(label)
    return bar


def integer_ticks(ax, axis: str = "x") -> None:
    """Only integer ticks on an axis that counts something (steps, seeds, layers)."""
    from matplotlib.ticker import MaxNLocator

    if axis not in ("x", "y", "both"):
        raise ValueError(f"axis must be 'x', 'y' or 'both', got {axis!r}")
    for name in ("x", "y") if axis == "both" else (axis,):
        getattr(ax, f"{name}axis").set_major_locator(MaxNLocator(integer=True))


def check_figure(fig) -> None:
    """Refuse a figure that breaks the policy: wider than the column, or text under MIN_FONT_PT."""
    width, _ = fig.get_size_inches()
    if width > COLUMN_WIDTH_IN + 0.25:
        raise ValueError(f"figure is {width:.1f} in wide; the column holds {COLUMN_WIDTH_IN} in (use book_figure)")
    small = sorted({round(t.get_fontsize(), 1) for t in fig.findobj(mpl.text.Text)
                    if t.get_text().strip() and t.get_visible() and t.get_fontsize() < MIN_FONT_PT})
    if small:
        raise ValueError(f"figure has text at {small} pt; the smallest allowed is {MIN_FONT_PT} pt")


def place_labels(ax, points, texts, fontsize: float = 8.5, avoid=()) -> None:
    """Label each point (data coordinates) with its text at the first of a few offsets around it
    where the label overlaps no label placed before it, no other point and no `avoid` point;
    a label that finds no free spot takes the one with the least overlap and a thin leader line."""
    import numpy as np

    fig = ax.figure
    fig.canvas.draw()  # settle the layout: labels are placed in final display units
    renderer = fig.canvas.get_renderer()
    to_disp = ax.transData.transform
    pts = np.atleast_2d(to_disp(np.asarray(points, dtype=float)))
    others = np.atleast_2d(to_disp(np.asarray(avoid, dtype=float))) if len(avoid) else np.zeros((0, 2))
    scale = fig.dpi / 72.0
    offsets = [(5, 4, "left", "bottom"), (5, -4, "left", "top"), (-5, 4, "right", "bottom"), (-5, -4, "right", "top"),
               (0, 8, "center", "bottom"), (0, -8, "center", "top"), (12, 14, "left", "bottom"),
               (12, -14, "left", "top"), (-12, 14, "right", "bottom"), (-12, -14, "right", "top"),
               (0, 20, "center", "bottom"), (0, -20, "center", "top")]
    placed = []
    for k, (xy, text) in enumerate(zip(np.asarray(points, dtype=float), texts)):
        blockers = np.vstack([np.delete(pts, k, axis=0), others])
        best = None
        for dx, dy, ha, va in offsets:
            t = ax.annotate(text, xy, xytext=(dx, dy), textcoords="offset points", ha=ha, va=va, fontsize=fontsize)
            box = t.get_window_extent(renderer).expanded(1.05, 1.1)
            hits = sum(box.overlaps(b) for b in placed) * 10
            hits += sum(box.x0 - 4 * scale < x < box.x1 + 4 * scale and box.y0 - 4 * scale < y < box.y1 + 4 * scale
                        for x, y in blockers)
            inside = ax.bbox.x0 <= box.x0 and box.x1 <= ax.bbox.x1 and ax.bbox.y0 <= box.y0 and box.y1 <= ax.bbox.y1
            hits += 0 if inside else 5
            t.remove()
            if best is None or hits < best[0]:
                best = (hits, dx, dy, ha, va, box)
            if hits == 0:
                break
        hits, dx, dy, ha, va, box = best
        arrow = dict(arrowstyle="-", color="0.35", lw=0.7) if abs(dx) > 5 or abs(dy) > 8 else None
        ax.annotate(text, xy, xytext=(dx, dy), textcoords="offset points", ha=ha, va=va, fontsize=fontsize,
                    arrowprops=arrow)
        placed.append(box)


def plain_log_ticks(ax, axis: str = "y", values=None) -> None:
    """Plain numbers on a log axis (0.05, 0.1, 0.2 rather than 5x10^-2 ...): major ticks at 1, 2
    and 5 times a power of ten, or at `values`, and no minor labels, so the labels never crowd."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

    if axis not in ("x", "y"):
        raise ValueError(f"axis must be 'x' or 'y', got {axis!r}")
    a = getattr(ax, f"{axis}axis")
    a.set_major_locator(FixedLocator(values) if values is not None else LogLocator(subs=(1.0, 2.0, 5.0)))
    a.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}"))
    a.set_minor_formatter(NullFormatter())
