"""Every page of the built book at a desktop width (1280 px) and a phone's (412 px): equations and
code that overflow show a scroll cue (and no display equation overflows at 1280 px), table cells
never break a word, figures have descriptive alt text and a caption (tests/browser/layout.py).
Each check also runs on a deliberately broken page, which must fail."""

from __future__ import annotations

import pytest
from bookinfo import toc_files
from layout import layout_problems

WIDTHS = (1280, 412)
# Chapters whose figures still lack captions and alt text (cell metadata `mystnb`): every other
# check runs on them; the test fails once one of them is captioned, so that it leaves this list.
CAPTIONS_PENDING: set[str] = set()

BROKEN_PAGE = """<!doctype html><html><head><style>
  .bd-article { width: 300px; } table { width: 90px; table-layout: fixed; } td { word-break: break-all; }
  div.highlight pre { overflow-x: auto; }
</style></head><body><main class="bd-article">
<div class="highlight"><pre>{code}</pre></div>
<table><tr><td>gain 0.5e-4 and -0.000471234567 stand-in</td></tr></table>
<div class="cell_output"><img src="data:image/png;base64,{png}" alt="_images/fig.png"></div>
<p><code style="white-space: pre">experiment.variance_share(out.u_bar.detach().numpy(), te.topic.numpy(), {args})</code></p>
</main></body></html>"""
PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", toc_files())
def test_layout(path, width, built_book, server, browser):
    page = browser.new_page()
    try:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{server.url}{path}.html")
        page.evaluate("() => window.MathJax && MathJax.startup ? MathJax.startup.promise : null")
        problems = layout_problems(page, width, captions=path not in CAPTIONS_PENDING)
        uncaptioned = path in CAPTIONS_PENDING and any("no caption" in p for p in layout_problems(page, width))
    finally:
        page.close()
    assert not problems, f"{path} at {width} px:\n" + "\n".join(problems[:40])
    assert uncaptioned or path not in CAPTIONS_PENDING, f"{path} is captioned now: remove it from CAPTIONS_PENDING"


@pytest.mark.parametrize("width", WIDTHS)
def test_a_broken_page_fails_each_check(width, browser):
    page = browser.new_page()
    try:
        page.set_viewport_size({"width": width, "height": 900})
        page.set_content(BROKEN_PAGE.replace("{code}", "x = " + "1 + " * 80).replace("{png}", PNG).replace("{args}", ", ".join(["arg"] * 60)))
        problems = layout_problems(page, width)
    finally:
        page.close()
    text = "\n".join(problems)
    assert "code block" in text and "no visible scroll cue" in text
    assert "breaks across lines" in text
    assert "does not describe it" in text and "no caption" in text
    assert "the page scrolls sideways: 'experiment.variance_share" in text


def test_alt_text_that_is_a_path():
    from layout import _path_like

    for path in ("_images/fig.png", "figs/plot1", "https://x.org/a", "plot.svg", "../a b.png"):
        assert _path_like(path), path
    for sentence in ("Bars for ours and W/O eps-greedy.", "A chain of nodes; linear/w7 is orange."):
        assert not _path_like(sentence), sentence
