"""The chapters' slides (`make slides`, icml26.slides) in headless Chromium: each deck loads its
local reveal.js, MathJax typesets its math, and stepping through it advances slide by slide with no
script error. ICML26_SLIDES: the decks' folder (default _build/slides)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from icml26.catalog import SLUGS, project_root

SLIDES = Path(os.environ.get("ICML26_SLIDES", project_root() / "_build" / "slides"))
STEPS = 6  # slides stepped through per deck


def deck_problems(page, url: str, steps: int = STEPS) -> tuple[list[str], dict]:
    """Open a deck, step `steps` slides forward; the problems found and a few facts."""
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(f"script error: {e}"))
    # Local assets must load; the chapters' outside links (a badge, web fonts) cannot offline.
    page.on("requestfailed", lambda r: r.url.startswith(url.rsplit("/", 1)[0]) and errors.append(f"failed to load {r.url}"))
    page.goto(url)
    page.wait_for_function("() => window.Reveal && Reveal.isReady && Reveal.isReady()", timeout=20000)
    total = page.evaluate("Reveal.getTotalSlides()")
    problems = list(errors)
    if total < 5:
        problems.append(f"only {total} slides")
    seen = []
    for _ in range(min(steps, total - 1)):
        before = page.evaluate("Reveal.getIndices()")
        page.keyboard.press("ArrowRight" if not page.evaluate("Reveal.availableRoutes().down") else "ArrowDown")
        page.wait_for_timeout(150)
        after = page.evaluate("Reveal.getIndices()")
        if after == before:
            problems.append(f"a key press did not move past slide {before}")
            break
        seen.append(after)
    page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=20000)
    page.evaluate("MathJax.startup.promise")
    raw_math = page.evaluate("""() => [...document.querySelectorAll('.reveal .slides .jp-MarkdownOutput')]
        .filter(el => /\\$\\$|\\\\frac|\\\\begin\\{/.test(el.innerText)).length""")
    typeset = page.evaluate("document.querySelectorAll('mjx-container').length")
    if raw_math:
        problems.append(f"{raw_math} Markdown cells show raw LaTeX")
    problems += [e for e in errors if e not in problems]
    return problems, {"total": total, "stepped": len(seen), "math": typeset}


@pytest.fixture(scope="module")
def decks():
    if not (SLIDES / "_vendor" / "reveal.js" / "dist" / "reveal.js").is_file():
        pytest.fail(f"no slides at {SLIDES}: run `make slides`")
    return SLIDES


@pytest.mark.parametrize("slug", SLUGS)
def test_deck_steps_through(decks, browser, slug):
    from pagecheck import StaticServer

    assert (decks / f"{slug}.slides.html").is_file(), f"{slug}: no deck"
    with StaticServer(decks) as server:
        page = browser.new_page()
        page.set_viewport_size({"width": 1280, "height": 800})
        try:
            problems, facts = deck_problems(page, f"{server.url}{slug}.slides.html")
        finally:
            page.close()
    assert not problems, f"{slug}: {problems}"
    assert facts["stepped"] == STEPS and facts["math"] > 0, facts


def test_a_broken_deck_is_caught(decks, browser, tmp_path):
    """A deck whose reveal.js is missing never initialises: the check must fail on it."""
    from pagecheck import StaticServer

    source = next(decks.glob("*.slides.html"))
    (tmp_path / source.name).write_text(source.read_text().replace("_vendor/reveal.js", "_vendor/missing"))
    with StaticServer(tmp_path) as server:
        page = browser.new_page()
        try:
            with pytest.raises(Exception):
                deck_problems(page, f"{server.url}{source.name}")
        finally:
            page.close()
