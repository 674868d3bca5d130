"""The Explore panels on the published pages work without a kernel (icml26.common.explorer): in
headless Chromium, on every chapter page that has one, moving each control (by keyboard for a
slider, by choosing another option in a dropdown) changes the figure shown, exactly one view is
shown at a time, and each control has a label. A panel whose script is missing is caught, on a
page made by the helper and on a chapter page served without it."""

from __future__ import annotations

import re

import pytest

from icml26.catalog import SLUGS

# Chapters whose Explore section still uses live-only ipywidgets (no panel on the page): the test
# fails once one of them has a panel, so that it leaves this set.
EXPLORE_PENDING: set[str] = set()

# What a panel shows: the key of each visible view, with its image data and printed text.
_SHOWN = """
(panel) => Array.from(panel.querySelectorAll('.icml26-explore-view'))
  .filter((v) => !v.hidden && v.getClientRects().length > 0)
  .map((v) => ({key: v.getAttribute('data-key'),
                images: Array.from(v.querySelectorAll('img')).map((i) => i.src),
                loaded: Array.from(v.querySelectorAll('img')).every((i) => i.complete && i.naturalWidth > 0),
                text: (v.querySelector('pre') || {}).textContent || ''}))
"""


def explore_problems(page) -> list[str]:
    """Move every control of every Explore panel on the page; what did not work."""
    problems = []
    panels = page.locator(".icml26-explore")
    for i in range(panels.count()):
        panel = panels.nth(i)
        name = f"panel {i + 1}"
        shown = panel.evaluate(_SHOWN)
        if len(shown) != 1:
            problems.append(f"{name}: {len(shown)} views shown at load, expected the default one")
            continue
        if not shown[0]["images"] or not shown[0]["loaded"]:
            problems.append(f"{name}: the default view shows no loaded figure")
        controls = panel.locator("[data-explore-control]")
        if controls.count() == 0:
            problems.append(f"{name}: no controls")
        for j in range(controls.count()):
            control = controls.nth(j)
            cid = control.get_attribute("id")
            label = panel.locator(f"label[for='{cid}']")
            text = label.inner_text().strip() if label.count() == 1 else ""
            if not text:
                problems.append(f"{name}, control {j + 1}: no label")
            what = f"{name}, control {text or j + 1!r}"
            before = panel.evaluate(_SHOWN)
            if control.evaluate("(el) => el.type") == "range":
                at_end = control.evaluate("(el) => el.value === el.max")
                control.focus()
                page.keyboard.press("ArrowLeft" if at_end else "ArrowRight")
            else:
                count = control.locator("option").count()
                current = int(control.input_value())
                control.select_option(index=(current + 1) % count)
            after = panel.evaluate(_SHOWN)
            if len(after) != 1:
                problems.append(f"{what}: {len(after)} views shown after moving it, expected one")
            elif (after[0]["images"], after[0]["text"]) == (before[0]["images"], before[0]["text"]):
                problems.append(f"{what}: moving it did not change the figure")
            elif not after[0]["loaded"]:
                problems.append(f"{what}: the figure it shows did not load")
    return problems


def _panels(page) -> int:
    return page.locator(".icml26-explore").count()


@pytest.mark.parametrize("slug", SLUGS)
def test_explore_controls_change_the_figure(slug, built_book, server, browser):
    page = browser.new_page()
    try:
        page.set_viewport_size({"width": 412, "height": 900})
        page.goto(f"{server.url}chapters/{slug}.html")
        panels = _panels(page)
        problems = explore_problems(page)
        wide = page.evaluate("""() => Array.from(document.querySelectorAll('.icml26-explore-controls'))
            .filter((c) => c.scrollWidth > c.clientWidth + 1).length""")
    finally:
        page.close()
    if slug in EXPLORE_PENDING:
        assert panels == 0, f"{slug} has an Explore panel now: remove it from EXPLORE_PENDING"
        return
    assert panels >= 1, f"{slug}: no Explore panel on the page (re-run the chapter with make run)"
    assert not problems, f"{slug}:\n" + "\n".join(problems)
    assert not wide, f"{slug}: {wide} Explore control row(s) wider than the page at 412 px"


def _demo_panel() -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from icml26.common import explorer
    from icml26.common.plotting import book_figure

    def draw(alpha=0.5, kind="sin"):
        fig, ax = book_figure(1, 1, height=2.0)
        ax.plot([0, 1, 2], [0, alpha, 2 * alpha] if kind == "sin" else [1, 1, alpha])
        plt.show()
        print(f"alpha = {alpha}, {kind}")

    controls = {"alpha": [0.0, 0.5, 1.0], "kind": ["sin", "cos"]}
    options, labels = explorer._prepare(controls, {"alpha": 1.0, "kind": "sin"}, "x" * 30, 30, None)
    views = explorer.precompute(draw, controls)
    return explorer.static_html(views, options, {"alpha": 1.0, "kind": "sin"}, "The default view " * 3,
                                "A line plot of a demo curve", labels)


def test_a_panel_made_by_the_helper_works_and_fails_without_its_script(browser):
    panel = _demo_panel()
    page = browser.new_page()
    try:
        # two panels on one page (the second a copy with its own ids), then the same without the script
        second = re.sub(r"icml26-explore-(\w{10})", r"icml26-explore-\1b", panel)
        page.set_content(f"<!doctype html><html><body><main>{panel}<p>text</p>{second}</main></body></html>")
        assert _panels(page) == 2
        assert explore_problems(page) == []
        page.set_content(f"<!doctype html><html><body><main>"
                         f"{re.sub(r'<script.*?</script>', '', panel, flags=re.S)}</main></body></html>")
        problems = explore_problems(page)
    finally:
        page.close()
    assert any("did not change the figure" in p for p in problems), problems


def test_a_chapter_page_without_the_explore_script_is_caught(built_book, server, browser):
    slug = next((s for s in SLUGS if s not in EXPLORE_PENDING), None)
    if slug is None:
        pytest.skip("no chapter has an Explore panel yet")
    page = browser.new_page()

    def strip_script(route):
        response = route.fetch()
        body = re.sub(r'<script class="icml26-explore-script">.*?</script>', "", response.text(), flags=re.S)
        route.fulfill(response=response, body=body)

    try:
        page.route(f"**/chapters/{slug}.html", strip_script)
        page.goto(f"{server.url}chapters/{slug}.html")
        assert _panels(page) >= 1
        problems = explore_problems(page)
    finally:
        page.close()
    assert any("did not change the figure" in p for p in problems), problems
