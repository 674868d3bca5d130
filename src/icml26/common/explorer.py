"""Explore: one control panel that works in a running notebook and on the published page.

A chapter's Explore section calls :func:`explore` once per figure it lets the reader vary::

    explore(show_gate, {"alpha": [0.0, 0.25, 0.5, 0.75, 1.0]}, default={"alpha": 0.5},
            labels={"alpha": "gate α"}, alt="Line plot of ... and a heatmap of ...",
            note="At the default α = 0.5 the refusal stays near 0.9: ...")

`fn(**values)` draws one matplotlib figure (``plt.show()``) and may print a short line. Each
entry of `controls` lists the few values a control offers: numbers give a slider, strings a
dropdown (a ``(label, value)`` pair shows `label` for `value`).

Two ways to show it, chosen by the environment variable ``ICML26_EXPLORE``:

- ``live`` (the default, so Colab and a local Jupyter get it): ipywidgets controls that call
  `fn` again whenever one moves; the default view is drawn once, under the sentence `note`.
- ``static`` (set by ``icml26.runner``, i.e. ``make run`` and ``make chapters``, which store the
  outputs of the published book): `fn` is called for every combination of the control values
  (at most :data:`MAX_VIEWS`) and every figure is stored as a PNG in ONE ``text/html`` output,
  with a few lines of JavaScript (no network, no libraries) that show the view the controls
  select. The page needs no kernel; the default view is the one shown first, under `note`.

A grid larger than `max_views` is refused in both modes, so a chapter that works live also
stores its outputs.
"""
from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import io
import itertools
import json
import numbers
import os

from .selfcheck import INLINE_MATH, text_with_math_html

ENV = "ICML26_EXPLORE"
MODES = ("live", "static")
MAX_VIEWS = 30


def explore_mode(mode: str | None = None) -> str:
    """`mode`, else ``$ICML26_EXPLORE``, else ``live``; anything else is an error."""
    chosen = mode if mode is not None else (os.environ.get(ENV) or "live")
    if chosen not in MODES:
        raise ValueError(f"{ENV}={chosen!r}: use one of {', '.join(MODES)}")
    return chosen


# --- the controls -------------------------------------------------------------------------------

def _format(value) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _options(name: str, raw) -> list[tuple[str, object]]:
    """A control's values as (label, value) pairs; all numbers (a slider) or all strings (a dropdown)."""
    if isinstance(raw, (str, bytes)) or not hasattr(raw, "__iter__"):
        raise ValueError(f"control {name!r}: give a list of values, got {raw!r}")
    pairs = []
    for item in raw:
        label, value = item if isinstance(item, tuple) and len(item) == 2 else (None, item)
        is_number = isinstance(value, numbers.Real) and not isinstance(value, bool)
        if not (is_number or isinstance(value, str)):
            raise ValueError(f"control {name!r}: values are numbers (a slider) or strings (a dropdown), "
                             f"got {value!r}")
        if is_number and not isinstance(value, (int, float)):
            value = float(value) if not isinstance(value, numbers.Integral) else int(value)
        pairs.append((str(label) if label is not None else _format(value), value))
    if not pairs:
        raise ValueError(f"control {name!r} has no values")
    kinds = {isinstance(v, str) for _, v in pairs}
    if len(kinds) > 1:
        raise ValueError(f"control {name!r} mixes numbers and strings: {[v for _, v in pairs]}")
    values = [v for _, v in pairs]
    if len(set(values)) != len(values):
        raise ValueError(f"control {name!r} lists a value twice: {values}")
    return pairs


def _is_slider(pairs) -> bool:
    return not isinstance(pairs[0][1], str)


def _prepare(controls, default, note, max_views, labels):
    if not isinstance(controls, dict) or not controls:
        raise ValueError("controls: map each parameter of fn to a list of values, e.g. {'alpha': [0, 0.5, 1]}")
    options = {name: _options(name, raw) for name, raw in controls.items()}
    sizes = [len(p) for p in options.values()]
    count = 1
    for size in sizes:
        count *= size
    if count > max_views:
        raise ValueError(f"the Explore grid has {count} views ({' x '.join(map(str, sizes))} values of "
                         f"{', '.join(options)}); the cap is {max_views}: offer fewer values per control")
    if not isinstance(default, dict) or set(default) != set(options):
        raise ValueError(f"default: give one value for each control ({', '.join(options)}), got {default!r}")
    for name, value in default.items():
        if value not in [v for _, v in options[name]]:
            raise ValueError(f"default {name}={value!r} is not one of the control's values "
                             f"{[v for _, v in options[name]]}")
    if not isinstance(note, str) or len(note.strip()) < 20:
        raise ValueError("note: one or two sentences on what to see in the default view (required)")
    labels = dict(labels or {})
    unknown = set(labels) - set(options)
    if unknown:
        raise ValueError(f"labels for unknown controls {sorted(unknown)}")
    labels = {name: str(labels.get(name, name)) for name in options}
    return options, labels


def _combinations(options):
    """Every combination of the control values, as index tuples and value dicts, in row-major order."""
    names = list(options)
    for index in itertools.product(*(range(len(options[n])) for n in names)):
        yield index, {n: options[n][i][1] for n, i in zip(names, index)}


# --- static: every view precomputed --------------------------------------------------------------

def _png(fig) -> bytes:
    """The figure as a PNG, as the notebook's inline backend draws it (tight box, the book's dpi),
    reduced to 256 colours where that keeps it smaller (line plots and bar charts stay exact to the eye)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight")
    data = buffer.getvalue()
    try:
        from PIL import Image
    except ImportError:  # pragma: no cover - Pillow comes with matplotlib
        return data
    image = Image.open(io.BytesIO(data)).convert("RGB")
    small = io.BytesIO()
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
        small, format="PNG", optimize=True)
    return small.getvalue() if small.tell() < len(data) else data


def render_view(fn, values: dict) -> tuple[list[bytes], str]:
    """Call `fn(**values)` without showing anything: (PNG of each figure it drew, what it printed)."""
    import matplotlib.pyplot as plt

    from .plotting import MAX_PIXEL_WIDTH

    before = set(plt.get_fignums())
    printed = io.StringIO()
    show = plt.show
    plt.show = lambda *args, **kwargs: None  # the figures are saved below, not displayed
    try:
        with contextlib.redirect_stdout(printed):
            fn(**values)
    finally:
        plt.show = show
    pngs = []
    for number in [n for n in plt.get_fignums() if n not in before]:
        fig = plt.figure(number)
        try:
            data = _png(fig)
        finally:
            plt.close(fig)
        width = int.from_bytes(data[16:20], "big")
        if width > MAX_PIXEL_WIDTH:
            raise ValueError(f"view {values}: figure drawn {width} px wide (> {MAX_PIXEL_WIDTH}); use book_figure()")
        pngs.append(data)
    return pngs, printed.getvalue().rstrip("\n")


def precompute(fn, controls: dict, *, max_views: int = MAX_VIEWS) -> list[dict]:
    """Every view of the grid: [{'index': (i, j, ...), 'values': {...}, 'pngs': [...], 'text': str}]."""
    options = {name: _options(name, raw) for name, raw in controls.items()}
    count = 1
    for pairs in options.values():
        count *= len(pairs)
    if count > max_views:
        raise ValueError(f"the Explore grid has {count} views; the cap is {max_views}")
    views = []
    for index, values in _combinations(options):
        pngs, text = render_view(fn, values)
        views.append({"index": index, "values": values, "pngs": pngs, "text": text})
    return views


def _plain(text: str) -> str:
    """`text` without its `$` delimiters (alt text and labels are read, not typeset)."""
    return INLINE_MATH.sub(lambda m: m["tex"].replace("\\", ""), text)


_STYLE = """<style>
.icml26-explore { margin: 0.5em 0; max-width: 100%; }
.icml26-explore-note { margin: 0 0 0.5em 0; }
.icml26-explore-controls { display: flex; flex-wrap: wrap; gap: 0.4em 1.5em; margin: 0 0 0.5em 0; }
.icml26-explore-control { display: flex; flex-wrap: wrap; align-items: center; gap: 0.2em 0.5em; max-width: 100%; }
.icml26-explore-control input[type=range] { width: 11rem; max-width: 100%; }
.icml26-explore-control select { max-width: 100%; font: inherit; }
.icml26-explore-control output { min-width: 3em; font-variant-numeric: tabular-nums; }
.icml26-explore-view[hidden] { display: none !important; }
.icml26-explore-view img { display: block; max-width: 100%; height: auto; }
.icml26-explore-view pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0.3em 0 0 0; }
</style>"""

# Defined once per page, whatever the number of Explore outputs: a moved control shows the view
# its panel's controls select (event delegation, so it needs no set-up per panel).
_SCRIPT = """<script class="icml26-explore-script">
(function () {
  if (window.icml26Explore) return;
  var show = function (root) {
    var key = [];
    root.querySelectorAll('[data-explore-control]').forEach(function (el) {
      key.push(el.value);
      if (el.type === 'range') {
        var text = JSON.parse(el.getAttribute('data-labels'))[Number(el.value)];
        el.setAttribute('aria-valuetext', text);
        var shown = root.querySelector('output[for="' + el.id + '"]');
        if (shown) shown.textContent = text;
      }
    });
    key = key.join('-');
    root.querySelectorAll('.icml26-explore-view').forEach(function (view) {
      view.hidden = view.getAttribute('data-key') !== key;
    });
  };
  var moved = function (event) {
    var root = event.target.closest && event.target.closest('.icml26-explore');
    if (root) show(root);
  };
  document.addEventListener('input', moved);
  document.addEventListener('change', moved);
  window.icml26Explore = show;
})();
</script>"""


def static_html(views: list[dict], options: dict, default: dict, note: str, alt: str, labels: dict) -> str:
    """The page's Explore panel: controls, the note, every view (the default one shown), the script."""
    names = list(options)
    digest = hashlib.sha1(json.dumps([names, [v["values"] for v in views], note], default=str).encode())
    uid = "icml26-explore-" + digest.hexdigest()[:10]
    start = tuple([v for _, v in options[n]].index(default[n]) for n in names)
    setting = ", ".join(f"{labels[n]} = {options[n][i][0]}" for n, i in zip(names, start))
    parts = [f"<div class='icml26-explore' id='{uid}'>", _STYLE,
             f"<p class='icml26-explore-note'><strong>Default view</strong> ({html.escape(_plain(setting))}): "
             f"{text_with_math_html(note)}</p>",
             f"<div class='icml26-explore-controls' role='group' aria-label='Explore controls'>"]
    for name, i in zip(names, start):
        cid = f"{uid}-{name}"
        pairs = options[name]
        label = f"<label for='{cid}'>{html.escape(_plain(labels[name]))}</label>"
        if _is_slider(pairs):
            texts = [p[0] for p in pairs]
            control = (f"<input type='range' id='{cid}' data-explore-control min='0' max='{len(pairs) - 1}' "
                       f"step='1' value='{i}' aria-valuetext='{html.escape(texts[i], quote=True)}' "
                       f"data-labels='{html.escape(json.dumps(texts), quote=True)}'>"
                       f"<output for='{cid}'>{html.escape(texts[i])}</output>")
        else:
            items = "".join(f"<option value='{k}'{' selected' if k == i else ''}>{html.escape(text)}</option>"
                            for k, (text, _) in enumerate(pairs))
            control = f"<select id='{cid}' data-explore-control>{items}</select>"
        parts.append(f"<div class='icml26-explore-control'>{label}{control}</div>")
    parts.append("</div><div class='icml26-explore-views' aria-live='polite'>")
    for view in views:
        key = "-".join(map(str, view["index"]))
        where = ", ".join(f"{labels[n]} = {options[n][i][0]}" for n, i in zip(names, view["index"]))
        hidden = "" if tuple(view["index"]) == start else " hidden"
        images = "".join(
            f"<img src='data:image/png;base64,{base64.b64encode(png).decode()}' "
            f"alt='{html.escape(_plain(alt) + ' (' + _plain(where) + ')', quote=True)}'>" for png in view["pngs"])
        text = f"<pre>{html.escape(view['text'])}</pre>" if view["text"] else ""
        parts.append(f"<div class='icml26-explore-view' data-key='{key}'{hidden}>{images}{text}</div>")
    parts.append("</div></div>")
    parts.append(_SCRIPT)
    return "".join(parts)


# --- live: ipywidgets ----------------------------------------------------------------------------

def live_controls(fn, options: dict, default: dict, note: str, labels: dict):
    """ipywidgets controls driving `fn`, the note, and the output they redraw (ipywidgets 7 and 8)."""
    import ipywidgets as widgets

    controls = {}
    for name, pairs in options.items():
        common = dict(options=pairs, value=default[name], description=_plain(labels[name]),
                      style={"description_width": "initial"})
        if _is_slider(pairs):
            controls[name] = widgets.SelectionSlider(continuous_update=False, **common)
        else:
            controls[name] = widgets.Dropdown(**common)
    shown = ", ".join(f"{_plain(labels[n])} = {_format(default[n])}" for n in options)
    text = widgets.HTMLMath(value=f"<b>Default view</b> ({html.escape(shown)}): {html.escape(note)}")
    out = widgets.interactive_output(fn, controls)  # draws the default view once, then on every change
    box = widgets.VBox([text, widgets.HBox(list(controls.values()),
                                            layout=widgets.Layout(flex_flow="row wrap")), out])
    return box, controls, out


def explore(fn, controls: dict, *, default: dict, note: str, alt: str, labels: dict | None = None,
            max_views: int = MAX_VIEWS, mode: str | None = None):
    """Show `fn`'s figure with a control per entry of `controls` (see the module docstring).

    default: the value of each control in the default view (the one the page shows first).
    note: what to see in the default view (required: one or two sentences, `$...$` math allowed).
    alt: what the figure shows, for a reader who cannot see it (the page adds each view's values).
    labels: the label shown beside each control (default: the parameter's name).
    mode: ``live`` or ``static``; default ``$ICML26_EXPLORE``, else ``live``.
    Displays the panel and returns None (so a cell ending in this call shows it once).
    """
    from IPython.display import HTML, display

    if not callable(fn):
        raise ValueError(f"fn must be callable, got {fn!r}")
    chosen = explore_mode(mode)
    options, labels = _prepare(controls, default, note, max_views, labels)
    if not isinstance(alt, str) or len(alt.strip()) < 20:
        raise ValueError("alt: describe the figure for a reader who cannot see it (required)")
    if chosen == "live":
        box, _, _ = live_controls(fn, options, default, note, labels)
        display(box)
        return None
    views = precompute(fn, controls, max_views=max_views)
    page = static_html(views, options, default, note, alt, labels)
    display(HTML(page))
    return None


__all__ = ["ENV", "MAX_VIEWS", "MODES", "explore", "explore_mode", "live_controls", "precompute",
           "render_view", "static_html"]
