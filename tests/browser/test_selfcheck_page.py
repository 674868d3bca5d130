"""The self-check quizzes on the published pages work without a kernel: in headless Chromium, the
right option (or number) is marked right, a wrong one wrong, on every chapter page; a quiz whose
script is missing is caught."""

from __future__ import annotations

import pytest

from icml26.catalog import SLUGS


def quiz_problems(page) -> list[str]:
    """Answer every question of the page's quizzes right, then the first one wrong; what failed."""
    problems = []
    questions = page.locator(".selfcheck-q")
    count = questions.count()
    if count < 8:
        problems.append(f"{count} self-check questions on the page (8 to 12 expected)")
    for i in range(count):
        q = questions.nth(i)
        kind, answer = q.get_attribute("data-kind"), q.get_attribute("data-answer")
        if kind == "choice":
            q.locator(f"input[type=radio][value='{answer}']").check()
        else:
            q.locator("input[type=text]").fill(answer)
        q.locator("button").click()
        if q.locator(".selfcheck-result.right").count() != 1:
            problems.append(f"question {i + 1}: the right answer was not marked right")
    first = questions.first
    if first.get_attribute("data-kind") == "choice":
        wrong = next(v for v in ("0", "1") if v != first.get_attribute("data-answer"))
        first.locator(f"input[type=radio][value='{wrong}']").check()
    else:
        first.locator("input[type=text]").fill("-123456789")
    first.locator("button").click()
    if first.locator(".selfcheck-result.wrong").count() != 1:
        problems.append("a wrong answer was not marked wrong")
    return problems


PENDING: set[str] = set()  # self-checks still being written


@pytest.mark.parametrize("slug", [s for s in SLUGS if s not in PENDING])
def test_self_check_works_on_the_page(slug, built_book, server, browser):
    page = browser.new_page()
    try:
        page.goto(f"{server.url}chapters/{slug}.html")
        assert not quiz_problems(page)
    finally:
        page.close()


def test_a_quiz_without_its_script_is_caught(built_book, server, browser):
    page = browser.new_page()
    try:
        page.goto(f"{server.url}chapters/{SLUGS[0]}.html")
        page.evaluate("() => { window.icml26SelfCheck = function () {}; }")  # the checking script gone
        assert quiz_problems(page)
    finally:
        page.close()
