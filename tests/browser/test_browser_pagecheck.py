"""The page checker itself, on small pages built here: a correct page passes, and each
deliberately broken one (a figure that does not load, a widget without saved state, raw TeX, a
stray `$` or TeX command, a MathJax error, a raw table row, an image drawn far wider than shown,
a broken image, horizontal overflow, an accessibility violation, a JavaScript error, a script
from the network, a wrong Colab link, a missing verdict, a wrong scoreboard) fails with the page
and the element named.

The pages load the same vendored MathJax, require.js and widget manager as the offline book
(they link to its _vendor/ folder), so the good page also proves that widgets and math render
with no network."""

from __future__ import annotations

import json
import re
import sys

import ipywidgets
import pytest
from ipywidgets.embed import embed_data
from pagecheck import WIDGET_STATE, WIDGET_VIEW, ChapterExpectation, check_page
from bookinfo import ROOT
from PIL import Image

sys.path.insert(0, str(ROOT / "book" / "vendor"))
from sphinx_assets import ACCESSIBILITY_FIXES, MATHJAX2_HUB_SHIM  # noqa: E402  (every book page carries them)

COLAB = "https://colab.research.google.com/github/o/r/blob/main/chapters/demo.ipynb"
MATHJAX = """<script>window.MathJax = {"options": {"processHtmlClass": "tex2jax_process|mathjax_process|math|output_area"}}</script>
<script defer src="../_vendor/mathjax/tex-mml-chtml.js"></script>
<script>""" + MATHJAX2_HUB_SHIM + "</script>\n<script>" + ACCESSIBILITY_FIXES + "</script>"
WIDGET_JS = """<script src="../_vendor/require-config.js"></script>
<script src="../_vendor/requirejs/require.js"></script>
<script src="../_vendor/html-manager/embed-amd.js"></script>"""


def _widget():
    slider = ipywidgets.IntSlider(value=3, min=0, max=9, description="k")
    data = embed_data(views=[slider])
    return data["manager_state"], data["view_specs"][0]


def _page(
    *,
    head: str = MATHJAX,
    state: dict | None = None,
    view: dict | None = None,
    img: str = "fig.png",
    verdict: str | None = "Verdict: REPRODUCED",
    colab: str = COLAB,
    extra: str = "",
) -> str:
    state_tag = f'<script type="{WIDGET_STATE}">{json.dumps(state)}</script>\n{WIDGET_JS}' if state else ""
    view_tag = f'<script type="{WIDGET_VIEW}">{json.dumps(view)}</script>' if view else ""
    verdict_tag = f"<pre>Claim: c\nMeasured: m\n{verdict}</pre>" if verdict else "<pre>done</pre>"
    return f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>demo</title>
{head}
{state_tag}
</head><body><article class="bd-article"><section id="demo"><h1>Demo</h1>
<a title="Launch on Colab" href="{colab}">Colab</a>
<p>Inline math <span class="math notranslate nohighlight">\\(x^2 + 1\\)</span>.</p>
<div class="cell"><div class="cell_output"><img alt="figure" src="{img}" style="width: 100px"></div></div>
<div class="cell"><div class="cell_output">{view_tag}</div></div>
<div class="cell"><div class="cell_output">{verdict_tag}</div></div>
{extra}
</section></article></body></html>"""


@pytest.fixture(scope="module")
def site(built_book, tmp_path_factory):
    """A site beside the book: its asset folders linked in, test pages in broken/ and chapters/."""
    root = tmp_path_factory.mktemp("pages")
    for entry in built_book.iterdir():
        if entry.name.startswith("_") or entry.suffix == ".js":
            (root / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    (root / "broken").mkdir()
    (root / "chapters").mkdir()
    Image.new("RGB", (40, 30), (30, 120, 200)).save(root / "broken" / "fig.png")
    Image.new("RGB", (2000, 300), (30, 120, 200)).save(root / "broken" / "wide.png")
    return root


@pytest.fixture(scope="module")
def site_server(site):
    from pagecheck import StaticServer

    with StaticServer(site) as srv:
        yield srv


def _check(site, site_server, browser, name, html, **expect):
    (site / "broken" / f"{name}.html").write_text(html)
    chapter = ChapterExpectation("REPRODUCED", COLAB)
    return check_page(browser, site_server.url, f"broken/{name}", f"broken/{name}.html", chapter=chapter, **expect)


def test_a_correct_page_passes(site, site_server, browser):
    state, view = _widget()
    result = _check(site, site_server, browser, "good", _page(state=state, view=view))
    assert result.problems == []
    assert result.facts["widget_views"] == 1 and result.facts["images"] == 1
    assert result.facts["mathjax_containers"] >= 1


def _missing_model():
    state, view = _widget()
    return _page(state=state, view={**view, "model_id": "0123456789abcdef0123456789abcdef"})


def _no_state_at_all():
    _, view = _widget()
    return _page(view=view)  # myst-nb's output for a notebook saved without widget state


def _wrong_scoreboard():
    rows = "".join(
        f"<tr><td>{title}</td><td>c</td><td>m</td><td>{verdict}</td><td>1 s</td></tr>"
        for title, verdict in (("Paper A", "REPRODUCED"), ("Paper B", "REPRODUCED"))
    )
    return _page(extra=f'<table class="scoreboard"><tbody>{rows}</tbody></table>')


CASES = {
    "missing_figure": (lambda: _page(img="missing.png"), ["img[src=missing.png] (cell #0): image did not load"], {}),
    "missing_widget_state": (
        _missing_model,
        ["widget view model_id=0123456789abcdef0123456789abcdef (cell #1): no saved widget state"],
        {},
    ),
    "no_widget_state_at_all": (_no_state_at_all, ["(cell #1): no saved widget state"], {}),
    "javascript_error": (
        lambda: _page(extra="<script>notAFunction();</script>"),
        ["javascript: uncaught ReferenceError: notAFunction is not defined"],
        {},
    ),
    "math_not_typeset": (
        lambda: _page(head="", extra="<p>Display $$y = 2$$ and \\[z\\].</p>"),
        ["MathJax: not loaded", "raw TeX left on the page"],
        {},
    ),
    "script_from_the_network": (
        lambda: _page(extra='<script src="https://cdn.example.org/lib.js"></script>'),
        ["script https://cdn.example.org/lib.js: needs the network"],
        {},
    ),
    "figure_from_the_network": (
        lambda: _page(img="https://example.org/figure.png"),
        ["img[src=https://example.org/figure.png] (cell #0): figure image is fetched from the network"],
        {},
    ),
    "wrong_colab_link": (
        lambda: _page(colab="https://colab.research.google.com/github/o/r/blob/main/chapters/other.ipynb"),
        ["Colab launch button: points at", "chapters/other.ipynb, expected " + COLAB],
        {},
    ),
    "raw_table_row": (
        lambda: _page(extra="<p>| method | error |\n|---|---|\n| ours | 0.1 |</p>"),
        ["a table row left as raw text"],
        {},
    ),
    "stray_dollar": (lambda: _page(extra="<p>the cost $c$ of a step</p>"), ["a $ or TeX command outside typeset math"], {}),
    "tex_command_outside_math": (
        lambda: _page(extra="<p>the error \\varepsilon stays small</p>"),
        ["a $ or TeX command outside typeset math"],
        {},
    ),
    "mathjax_error": (
        lambda: _page(extra='<p><span class="math notranslate nohighlight">\\(x^2^3\\)</span></p>'),
        ["MathJax could not typeset it"],
        {},
    ),
    "image_drawn_too_wide": (
        lambda: _page(img="wide.png"),
        ["img[src=wide.png] (cell #0): drawn 2000 px wide, shown at 100 px"],
        {},
    ),
    "broken_image": (
        lambda: _page(extra='<p><img alt="badge" src="https://example.org/badge.svg"></p>'),
        ["img[src=https://example.org/badge.svg]", "image did not load"],
        {},
    ),
    "horizontal_overflow": (
        lambda: _page(extra='<div style="width: 4000px">a very wide block</div>'),
        ["layout: the column overflows horizontally"],
        {},
    ),
    "accessibility_violation": (
        lambda: _page(extra='<p><button></button></p>'),
        ["axe critical button-name"],
        {},
    ),
    "no_verdict": (lambda: _page(verdict=None), ["verdict block: no 'Verdict:' line"], {}),
    "wrong_verdict": (lambda: _page(verdict="Verdict: NOT REPRODUCED"), ["shows 'NOT REPRODUCED'"], {}),
    "wrong_scoreboard": (
        _wrong_scoreboard,
        [
            "scoreboard row 'Paper B': verdict shows 'REPRODUCED', expected 'NOT REPRODUCED'",
            "scoreboard row 'Paper C': missing",
        ],
        {"scoreboard": {"Paper A": ("REPRODUCED", None), "Paper B": ("NOT REPRODUCED", None), "Paper C": ("planned", None)}},
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_a_broken_page_fails_naming_page_and_element(case, site, site_server, browser):
    make, expected, expect = CASES[case]
    result = _check(site, site_server, browser, case, make(), **expect)
    assert result.problems, f"{case}: the checker found nothing wrong"
    assert all(p.startswith(f"broken/{case}: ") for p in result.problems), result.problems
    text = "\n".join(result.problems)
    for fragment in expected:
        assert fragment in text, f"{fragment!r} not in:\n{text}"


def test_a_real_chapter_page_with_a_lost_figure_and_widget_state_fails(site, site_server, browser, built_book):
    """A built chapter page, its first figure pointed at a missing file and its saved widget
    state removed: the problems name the page, the image and each widget view."""
    state_tag = re.compile(rf'<script type="{re.escape(WIDGET_STATE)}">.*?</script>', re.S)
    figure = re.compile(r'src="(\.\./_images/[^"]+)"')
    pages = sorted((built_book / "chapters").glob("*.html"))
    page = next((p for p in pages if state_tag.search(p.read_text()) and figure.search(p.read_text())
                 and WIDGET_VIEW in p.read_text()), None)
    if page is None:  # chapters whose Explore is a precomputed panel store no widget state
        pytest.skip("no chapter page with a figure, a widget view and saved widget state in this build")
    html = page.read_text()
    lost = figure.search(html).group(1)
    html = figure.sub(f'src="{lost}.lost.png"', html, count=1)
    html = state_tag.sub("", html)
    (site / "chapters" / page.name).write_text(html)
    name = f"chapters/{page.stem}"
    result = check_page(browser, site_server.url, name, f"{name}.html")
    text = "\n".join(result.problems)
    assert f"{name}: img[src={lost}.lost.png]" in text and "image did not load" in text, text
    assert re.search(rf"{re.escape(name)}: widget view model_id=\w+ \(cell #\d+\): no saved widget state", text), text
