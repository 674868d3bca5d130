"""Self-checks (icml26.common.selfcheck): every chapter has 8-12 questions with one "predict before
you run", placed in the chapter (predict before the results, review before the exercises), shown by
the book's directive and as a code cell in the Colab edition; malformed data is refused."""

from __future__ import annotations

import json
import re

import nbformat
import pytest

from icml26.catalog import SLUGS, chapter_path
from icml26.colab import ConversionError, split_self_check
from icml26.common import selfcheck

GOOD_Q = {"prompt": "p", "options": ["a", "b"], "answer": 1, "explain": "e"}
GOOD = {"predict": GOOD_Q, "questions": [dict(GOOD_Q, prompt=f"q{i}") for i in range(7)]}


def _headings_and_marks(slug):
    nb = json.loads(chapter_path(slug).read_text())
    order = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        text = "".join(cell["source"])
        for line in text.splitlines():
            if line.startswith("## "):
                order.append(line[3:].strip())
        for part in re.findall(r"^```\{self-check\}\s*(\w+)", text, re.M):
            order.append(f"<{part}>")
    return order


# Chapters whose self-checks are still being written (the list may only shrink).
PENDING: set[str] = set()


def test_pending_chapters_have_none_yet():
    assert not PENDING & set(selfcheck.available())


@pytest.mark.parametrize("slug", [s for s in SLUGS if s not in PENDING])
def test_chapter_self_check(slug):
    check = selfcheck.load(slug)
    total = 1 + len(check.questions)
    assert selfcheck.MIN_QUESTIONS <= total <= selfcheck.MAX_QUESTIONS
    assert sum(q.kind == "number" for q in check.questions) >= 2, f"{slug}: fewer than two numeric questions"
    order = _headings_and_marks(slug)
    assert order.count("<predict>") == 1 and order.count("<review>") == 1, order
    assert order.index("<predict>") < order.index("Results"), f"{slug}: predict after the results: {order}"
    assert order.index("Summary") < order.index("<review>") < order.index("Exercises"), order
    html = selfcheck.quiz_html(slug, "review")
    assert html.count("class='selfcheck-q'") == len(check.questions)


def test_parse_refuses_malformed_data():
    selfcheck.parse("x", GOOD)
    cases = [
        ({"questions": GOOD["questions"]}, "two keys"),
        ({**GOOD, "questions": GOOD["questions"][:6]}, "8 to 12"),
        ({**GOOD, "questions": GOOD["questions"] * 2}, "8 to 12"),
        ({**GOOD, "predict": dict(GOOD_Q, answer=2)}, "0-based index"),
        ({**GOOD, "predict": {"prompt": "p", "number": 3, "explain": "e"}}, "multiple choice"),
        ({**GOOD, "questions": GOOD["questions"][:6] + [{"prompt": "p", "explain": "e", "number": 1,
                                                         "options": ["a", "b"], "answer": 0}]}, "not both"),
        ({**GOOD, "questions": GOOD["questions"][:6] + [{"prompt": "p", "explain": "e"}]}, "finite 'number'"),
        ({**GOOD, "questions": GOOD["questions"][:6] + [dict(GOOD_Q, options=["a", "a"])]}, "the same"),
        ({**GOOD, "questions": GOOD["questions"][:6] + [dict(GOOD_Q, hint="x")]}, "unknown fields"),
    ]
    for data, message in cases:
        with pytest.raises(ValueError, match=message):
            selfcheck.parse("x", data)


def test_answers_are_checked():
    choice = selfcheck.Question("p", "e", ("a", "b"), answer=1)
    assert choice.accepts(1) and not choice.accepts(0)
    number = selfcheck.Question("p", "e", number=15.0, tolerance=0.5)
    assert number.accepts("15.4") and not number.accepts("15.6") and not number.accepts("abc")
    assert not number.accepts("nan")


def test_colab_edition_shows_the_quiz_as_code():
    text, code = split_self_check("## Self-check\n\nTen questions.\n\n```{self-check} review\n```", "kskt")
    assert text == "## Self-check\n\nTen questions." and code.endswith('show("kskt", "review")')
    assert split_self_check("no quiz here", "kskt") == ("no quiz here", None)
    with pytest.raises(ConversionError, match="must end its cell"):
        split_self_check("```{self-check} review\n```\n\nmore text", "kskt")


def test_colab_notebook_has_the_quiz_cells():
    from icml26.colab import colab_notebook

    slug = "model_clone"
    nb = nbformat.read(chapter_path(slug), as_version=4)
    edition = colab_notebook(nb, slug, "0" * 40)
    quiz = [c.source for c in edition.cells if c.cell_type == "code" and "selfcheck import show" in c.source]
    assert quiz == [f'from icml26.common.selfcheck import show\nshow("{slug}", "predict")',
                    f'from icml26.common.selfcheck import show\nshow("{slug}", "review")']
    assert not any("{self-check}" in c.source for c in edition.cells if c.cell_type == "markdown")


def test_inline_math_is_typeset_on_the_page():
    html = selfcheck.text_with_math_html("the gain $g = a - b$ costs $5 in total & more")
    assert "<span class='math notranslate nohighlight'>\\(g = a - b\\)</span>" in html
    assert "costs $5 in total &amp; more" in html  # a lone dollar stays text, and is escaped
