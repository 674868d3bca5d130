"""The course plan (icml26.course): the syllabus keeps its rules, and each rule can fail."""

import dataclasses

from icml26 import course
from icml26.catalog import SLUGS


def test_the_book_s_syllabus_keeps_every_rule():
    assert course.syllabus_problems() == []


def test_the_prerequisite_graph_is_read_from_the_prerequisites_section_only():
    text = ("## Prerequisites\nRead [the dmawm chapter](dmawm.ipynb) and [usb](../chapters/usb_rl.ipynb) first; "
            "[dmawm again](dmawm.ipynb).\n\n## Time\nSee [tam](tam.ipynb).")
    assert course.prerequisites_in(text) == ["dmawm", "usb_rl"]
    assert course.prerequisites_in("## Time\n[tam](tam.ipynb)") == []


def test_every_chapter_has_exercises_and_a_place_on_the_graph():
    graph = course.prerequisite_graph()
    assert set(graph) == set(SLUGS)
    assert all(course.exercise_count(slug) >= 2 for slug in SLUGS)
    assert graph[course.FIRST_CHAPTER] == [] and course.find_cycle(graph) is None


def _good():
    return course.prerequisite_graph(), {s: 3 for s in SLUGS}


def test_a_cycle_is_found_and_named():
    graph, exercises = _good()
    graph = {**graph, "tt_sparse": ["discrete_transformer"]}
    problems = course.syllabus_problems(graph=graph, exercises=exercises)
    assert any("cycle: tt_sparse -> discrete_transformer -> tt_sparse" in p or
               "cycle: discrete_transformer -> tt_sparse -> discrete_transformer" in p for p in problems)
    assert course.find_cycle({"a": ["b"], "b": ["c"], "c": []}) is None


def test_a_prerequisite_taught_later_is_refused():
    graph, exercises = _good()
    graph = {**graph, "w2sg_bregman": ["grasp"]}
    assert "w2sg_bregman (week 2) builds on grasp (week 10), which is not taught earlier" in \
        course.syllabus_problems(graph=graph, exercises=exercises)


def test_a_crowded_week_a_missing_chapter_and_a_chapter_without_exercises_are_refused():
    graph, exercises = _good()
    weeks = list(course.SYLLABUS)
    weeks[1] = dataclasses.replace(weeks[1], chapters=weeks[1].chapters + ("dq_sync",))
    weeks[2] = dataclasses.replace(weeks[2], chapters=("conformal_mip_stop",))
    weeks[9] = dataclasses.replace(weeks[9], chapters=("reconfigure",))  # grasp now in no week
    problems = course.syllabus_problems(syllabus=tuple(weeks), graph=graph, exercises={**exercises, "tam": 0})
    assert "week 2 holds 3 chapters (at most two)" in problems
    assert "grasp is in no week" in problems
    assert "tam has no exercise set" in problems


def test_a_path_out_of_the_table_s_order_is_refused():
    graph, exercises = _good()
    paths = list(course.PATHS)
    paths[0] = dataclasses.replace(paths[0], chapters=tuple(reversed(paths[0].chapters)))
    problems = course.syllabus_problems(paths=tuple(paths), graph=graph, exercises=exercises)
    assert any(p.startswith("path A does not follow the table's weeks") for p in problems)


def test_the_glossary_defines_the_terms_the_chapters_left_undefined():
    """book/glossary.md (in the toc): a {glossary} directive with each term the pages used undefined."""
    from icml26 import glossary
    from icml26.catalog import project_root

    text = (project_root() / "book" / "glossary.md").read_text(encoding="utf-8")
    needed = ("free module", "alcove", "Reynolds", "root sine", "linear character", "SIMP", "MUPE", "DSAA",
              "BRM", "SAMOE", "FiLM", "BRIDGER", "Falcon", "fragile", "competence check", "stand-in")
    assert glossary.page_problems(text, needed) == []
    assert "book/glossary" in (project_root() / "book" / "_toc.yml").read_text()
    # ... and the check fails when a needed term is missing or two terms change places
    entries = glossary.read_glossary(text)
    first, second = entries[0].term, entries[1].term
    without_mupe = text.replace("\nMUPE (", "\nMUPX (")
    assert "'MUPE' is not defined in the glossary" in glossary.page_problems(without_mupe, needed)
    swapped = text.replace(f"\n{first}\n", "\n@@\n").replace(f"\n{second}\n", f"\n{first}\n") \
        .replace("\n@@\n", f"\n{second}\n")
    assert f"the glossary is out of alphabetical order: {second!r} comes before {first!r}" in \
        glossary.page_problems(swapped, needed)
