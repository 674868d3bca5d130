"""Lesson plans (book/lessons/<slug>.md): one per chapter, each a 90-minute session in four parts,
listed in the table of contents under the course page."""

import re
from pathlib import Path

import pytest
import yaml

from icml26.catalog import PAPERS, SLUGS, project_root

LESSONS = project_root() / "book" / "lessons"
SECTIONS = ["Before class", "The 90 minutes", "Misconceptions to expect", "Exercises to assign", "After class"]
SEGMENTS = ["Primer", "Method walk-through", "Live run", "Ledger discussion"]
TITLES = {p.slug: p.title for p in PAPERS}


def session_rows(text: str) -> list[tuple[int, str]]:
    """(minutes, segment) for each row of the table under "## The 90 minutes"."""
    section = re.search(r"^## The 90 minutes\s*$(.*?)(?=^## |\Z)", text, re.M | re.S)
    if not section:
        return []
    rows = []
    for line in section.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].isdigit():
            rows.append((int(cells[0]), cells[1].strip("*")))
    return rows


def lesson_problems(text: str, slug: str) -> list[str]:
    problems = []
    first = text.splitlines()[0] if text else ""
    if first != f"# Lesson plan: {TITLES[slug]}":
        problems.append(f"first line is {first!r}, expected the paper's title")
    headings = re.findall(r"^## (.+?)\s*$", text, re.M)
    if headings != SECTIONS:
        problems.append(f"sections {headings}, expected {SECTIONS}")
    rows = session_rows(text)
    if sum(m for m, _ in rows) != 90:
        problems.append(f"the session's minutes sum to {sum(m for m, _ in rows)}, not 90")
    if [s for _, s in rows][:4] != SEGMENTS:
        problems.append(f"segments {[s for _, s in rows]}, expected {SEGMENTS} first")
    if f"chapters/{slug}" not in text:
        problems.append("no link to its chapter")
    return problems


@pytest.mark.parametrize("slug", SLUGS)
def test_each_chapter_has_a_90_minute_lesson_plan(slug):
    path = LESSONS / f"{slug}.md"
    assert path.is_file(), f"no lesson plan at {path}"
    assert lesson_problems(path.read_text(encoding="utf-8"), slug) == []


def test_a_plan_that_runs_over_or_skips_a_part_is_refused():
    good = (f"# Lesson plan: {TITLES['tam']}\n\nSee {{doc}}`../../chapters/tam`.\n\n"
            + "\n\n".join(f"## {s}\n\ntext" for s in SECTIONS))
    table = "| minutes | segment | what happens |\n|---|---|---|\n" + "".join(
        f"| {m} | {s} | x |\n" for m, s in zip((15, 25, 25, 25), SEGMENTS))
    good = good.replace("## The 90 minutes\n\ntext", "## The 90 minutes\n\n" + table)
    assert lesson_problems(good, "tam") == []
    assert "the session's minutes sum to 95, not 90" in lesson_problems(good.replace("| 15 |", "| 20 |"), "tam")
    assert any("segments" in p for p in lesson_problems(good.replace("| Live run |", "| Demo |"), "tam"))
    assert any("sections" in p for p in lesson_problems(good.replace("## After class", "## Later"), "tam"))


def test_the_lesson_plans_are_in_the_table_of_contents_under_the_course_page():
    toc = yaml.safe_load((project_root() / "book" / "_toc.yml").read_text())
    entries = [c for part in toc["parts"] for c in part["chapters"]]
    course = next(c for c in entries if c["file"] == "book/course")
    listed = [s["file"] for s in course.get("sections", [])]
    assert sorted(listed) == sorted(f"book/lessons/{slug}" for slug in SLUGS)
    assert Path(LESSONS).is_dir()
