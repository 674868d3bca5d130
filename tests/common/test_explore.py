"""The Explore panel (icml26.common.explorer): every view precomputed for the page, the cap on the
grid, the page's HTML, the live ipywidgets path and the switch between them."""

from __future__ import annotations

import base64
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from icml26.common import explorer as ex  # noqa: E402
from icml26.common.plotting import book_figure  # noqa: E402

NOTE = "In the default view the line is flat: the gate does not decide this item."
ALT = "A line plot of one curve against x"
CALLS: list[dict] = []


def draw(alpha=0.5, kind="sin"):
    CALLS.append({"alpha": alpha, "kind": kind})
    fig, ax = book_figure(1, 1, height=2.0)
    ax.plot([0, 1, 2], [0, alpha, 2 * alpha] if kind == "sin" else [1, 1, alpha])
    ax.set_title(f"alpha {alpha} {kind}")
    plt.show()
    print(f"alpha = {alpha}, {kind}")


CONTROLS = {"alpha": [0.0, 0.5, 1.0], "kind": [("sine", "sin"), ("cosine", "cos")]}
DEFAULT = {"alpha": 0.5, "kind": "cos"}


def test_the_grid_is_precomputed_one_figure_per_combination():
    CALLS.clear()
    views = ex.precompute(draw, CONTROLS)
    assert len(views) == 6 and len(CALLS) == 6
    assert [v["values"] for v in views][:2] == [{"alpha": 0.0, "kind": "sin"}, {"alpha": 0.0, "kind": "cos"}]
    assert all(len(v["pngs"]) == 1 and v["pngs"][0][:8] == b"\x89PNG\r\n\x1a\n" for v in views)
    assert views[4]["text"] == "alpha = 1.0, sin" and views[4]["index"] == (2, 0)
    assert len({v["pngs"][0] for v in views}) == 6  # each combination draws its own figure
    assert plt.get_fignums() == []  # nothing left open for the inline backend to show again


def test_a_grid_over_the_cap_is_refused_with_its_size():
    big = {"a": list(range(8)), "b": ["x", "y", "z", "w"]}
    with pytest.raises(ValueError, match=r"32 views \(8 x 4 .*the cap is 30"):
        ex.explore(draw, big, default={"a": 0, "b": "x"}, note=NOTE, alt=ALT, mode="static")
    with pytest.raises(ValueError, match="32 views"):
        ex.explore(draw, big, default={"a": 0, "b": "x"}, note=NOTE, alt=ALT, mode="live")
    with pytest.raises(ValueError, match="the cap is 5"):
        ex.precompute(draw, CONTROLS, max_views=5)


@pytest.mark.parametrize("bad, message", [
    (dict(controls={}), "map each parameter"),
    (dict(controls={"alpha": []}), "no values"),
    (dict(controls={"alpha": [0, "x"]}), "mixes numbers and strings"),
    (dict(controls={"alpha": [0, 0]}), "lists a value twice"),
    (dict(controls={"alpha": [None]}), "numbers .* or strings"),
    (dict(default={"alpha": 0.5}), "one value for each control"),
    (dict(default={"alpha": 0.7, "kind": "sin"}), "not one of the control's values"),
    (dict(note=""), "what to see in the default view"),
    (dict(alt=" "), "describe the figure"),
    (dict(labels={"beta": "b"}), "unknown controls"),
    (dict(mode="web"), "ICML26_EXPLORE='web'"),
])
def test_bad_arguments_are_refused(bad, message):
    args = dict(controls=CONTROLS, default=DEFAULT, note=NOTE, alt=ALT, mode="static") | bad
    with pytest.raises(ValueError, match=message):
        ex.explore(draw, args.pop("controls"), **args)


def test_the_note_is_required():
    with pytest.raises(TypeError):
        ex.explore(draw, CONTROLS, default=DEFAULT, alt=ALT, mode="static")  # noqa


def _static_page(monkeypatch, **kwargs):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    ex.explore(draw, CONTROLS, default=DEFAULT, note=kwargs.pop("note", NOTE), alt=ALT,
               labels={"alpha": "gate $\\alpha$"}, **kwargs)
    assert len(shown) == 1, "one output: the HTML panel"
    return shown[0].data


def test_the_page_html_holds_one_view_per_combination_and_shows_the_default(monkeypatch):
    monkeypatch.setenv(ex.ENV, "static")
    page = _static_page(monkeypatch)
    views = re.findall(r"<div class='icml26-explore-view' data-key='([\d-]+)'( hidden)?>(.*?)</div>", page)
    assert sorted(k for k, _, _ in views) == ["0-0", "0-1", "1-0", "1-1", "2-0", "2-1"]
    assert [k for k, hidden, _ in views if not hidden] == ["1-1"]  # alpha 0.5, cosine: the default
    for _, _, body in views:
        images = re.findall(r"<img src='data:image/png;base64,([A-Za-z0-9+/=]+)' alt='([^']+)'>", body)
        assert len(images) == 1 and base64.b64decode(images[0][0])[:4] == b"\x89PNG"
        assert images[0][1].startswith(ALT + " (gate alpha = ") and "/" not in images[0][1]
    assert "<pre>alpha = 0.5, cos</pre>" in page
    # the controls: a labelled slider over the numbers, a labelled dropdown over the strings, set to the default
    slider = re.search(r"<label for='([\w-]+-alpha)'>gate alpha</label><input type='range' id='\1' "
                       r"data-explore-control min='0' max='2' step='1' value='1' aria-valuetext='0.5'", page)
    assert slider, page[:2000]
    assert re.search(r"<label for='([\w-]+-kind)'>kind</label><select id='\1' data-explore-control>"
                     r"<option value='0'>sine</option><option value='1' selected>cosine</option></select>", page)
    # the note, once, with its math typeset by the book's MathJax
    assert page.count("icml26-explore-note") == 2  # its style rule and its paragraph
    assert "<strong>Default view</strong> (gate alpha = 0.5, kind = cosine): In the default view" in page
    # self-contained: no network, no require.js, no jQuery
    assert "<script class=\"icml26-explore-script\">" in page and "src=" not in page.split("<script")[1]
    assert not re.search(r"https?://|require\(|\$\(|jQuery", page.split("<script")[1])


def test_two_panels_on_one_page_have_their_own_ids(monkeypatch):
    first = _static_page(monkeypatch, mode="static")
    second = _static_page(monkeypatch, mode="static", note=NOTE + " Another panel.")
    ids = lambda page: set(re.findall(r" id='([\w-]+)'", page))  # noqa: E731
    assert ids(first) and not ids(first) & ids(second)
    assert _static_page(monkeypatch, mode="static") == first  # deterministic: a re-run stores the same HTML


def test_the_live_path_builds_ipywidgets_and_draws_the_default_once(monkeypatch):
    import ipywidgets as widgets

    CALLS.clear()
    options, labels = ex._prepare(CONTROLS, DEFAULT, NOTE, ex.MAX_VIEWS, {"alpha": "gate"})
    box, controls, out = ex.live_controls(draw, options, DEFAULT, NOTE, labels)
    assert isinstance(box, widgets.VBox) and isinstance(out, widgets.Output)
    assert isinstance(controls["alpha"], widgets.SelectionSlider) and controls["alpha"].value == 0.5
    assert isinstance(controls["kind"], widgets.Dropdown) and controls["kind"].value == "cos"
    assert controls["alpha"].description == "gate" and controls["kind"].label == "cosine"
    assert CALLS == [DEFAULT]  # the default view, drawn once
    controls["alpha"].value = 1.0
    assert CALLS[-1] == {"alpha": 1.0, "kind": "cos"}
    assert "Default view" in box.children[0].value and NOTE in box.children[0].value
    plt.close("all")


def test_the_mode_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv(ex.ENV, raising=False)
    assert ex.explore_mode() == "live"
    monkeypatch.setenv(ex.ENV, "static")
    assert ex.explore_mode() == "static" and ex.explore_mode("live") == "live"
    monkeypatch.setenv(ex.ENV, "html")
    with pytest.raises(ValueError, match="use one of live, static"):
        ex.explore_mode()


def test_live_mode_displays_widgets_not_html(monkeypatch):
    import ipywidgets as widgets

    monkeypatch.setenv(ex.ENV, "live")
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    ex.explore(draw, CONTROLS, default=DEFAULT, note=NOTE, alt=ALT)
    assert len(shown) == 1 and isinstance(shown[0], widgets.VBox)
    plt.close("all")


def test_the_runner_stores_static_panels(tmp_path, monkeypatch):
    """`make run` (icml26.runner) executes chapters with ICML26_EXPLORE=static."""
    import nbformat
    import papermill

    import icml26.runner as runner

    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('SCALE = "reduced"\nDEVICE = "auto"\nSEED = 0')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params]
    path = tmp_path / "dq_sync.ipynb"
    nbformat.write(nb, path)
    monkeypatch.setattr(runner, "chapter_path", lambda slug: path)
    monkeypatch.delenv(ex.ENV, raising=False)
    seen = []
    monkeypatch.setattr(papermill, "execute_notebook", lambda *a, **k: seen.append(runner.os.environ.get(ex.ENV)))
    runner.run_chapter("dq_sync", {})
    assert seen == ["static"]


def test_a_view_drawn_wider_than_the_column_is_refused():
    def wide(x=1):
        plt.figure(figsize=(12, 3))
        plt.plot([0, x])

    with pytest.raises(ValueError, match="px wide"):
        ex.render_view(wide, {"x": 1})
    assert plt.get_fignums() == []
