"""Graded exercises (icml26.grading, assignments/<slug>.py): every chapter has its set, each
question is well formed, and otter grades a tiny assignment the way `make grade-test` relies on:
a blank answer scores 0, a wrong one loses marks, a wrong key fails `otter assign`."""

from __future__ import annotations

import json
import re
import textwrap

import pytest

from icml26 import grading
from icml26.catalog import SLUGS, chapter_path


# Chapters whose graded exercises are still being written (the list may only shrink).
PENDING: set[str] = set()
READY = [s for s in SLUGS if s not in PENDING]


def test_every_chapter_has_graded_exercises():
    assert grading.assignment_slugs() == sorted(READY)


@pytest.mark.parametrize("slug", READY)
def test_assignment_is_well_formed(slug):
    a = grading.load_assignment(slug)
    assert 2 <= len(a.questions) <= 6, f"{slug}: {len(a.questions)} questions"
    assert "pin_cpu_numerics" in a.setup, f"{slug}: SETUP must pin the CPU numerics (keys are exact)"
    for q in a.questions:
        assert "Deliverable" in q.prompt, f"{slug}/{q.name}: the prompt names no deliverable"
        assert q.wrong, f"{slug}/{q.name}: no wrong answer for grade-test"
    # The chapter's exercise text points at each graded question.
    text = "".join("".join(c["source"]) for c in json.loads(chapter_path(slug).read_text())["cells"]
                   if c["cell_type"] == "markdown")
    for q in a.questions:
        assert re.search(rf"`{re.escape(q.name)}`", text), f"{slug}: the chapter never names graded question {q.name!r}"


def test_question_checks():
    ok = dict(name="q", exercise=1, points=1, prompt="p", solution="x = 1  # SOLUTION",
              public=("assert isinstance(x, int)",), hidden=("assert x == 1",))
    grading.Question(**ok)
    for bad, message in [({"name": "q 1"}, "identifier"), ({"hidden": ()}, "hidden"),
                         ({"solution": "x = 1"}, "SOLUTION")]:
        with pytest.raises(ValueError, match=message):
            grading.Question(**{**ok, **bad})


def _tiny(tmp_path, key: int):
    (tmp_path / "tiny.py").write_text(textwrap.dedent(f'''
        TITLE = "tiny"
        SETUP = "import math"
        QUESTIONS = [dict(name="square", exercise=1, points=2,
                          prompt="*Deliverable:* `y`, the square of 7 (an int).",
                          solution="y = 7 ** 2  # SOLUTION",
                          public=["assert isinstance(y, int)"],
                          hidden=["assert isinstance(y, int) and y == {key}"],
                          wrong="y = 48")]
        '''))


def test_master_notebook_layout(tmp_path, monkeypatch):
    _tiny(tmp_path, 49)
    monkeypatch.setattr(grading, "ASSIGNMENTS", tmp_path)
    nb = grading.master_notebook(grading.load_assignment("tiny"))
    raw = [c.source.splitlines()[0] for c in nb.cells if c.cell_type == "raw"]
    assert raw == ["# ASSIGNMENT CONFIG", "# BEGIN QUESTION", "# BEGIN SOLUTION", "# END SOLUTION",
                   "# BEGIN TESTS", "# END TESTS", "# END QUESTION"]
    hidden = [c.source for c in nb.cells if c.cell_type == "code" and c.source.startswith("# HIDDEN")]
    assert hidden == ["# HIDDEN\nassert isinstance(y, int) and y == 49"]


def test_otter_grades_blank_wrong_and_reference(tmp_path, monkeypatch):
    _tiny(tmp_path, 49)
    monkeypatch.setattr(grading, "ASSIGNMENTS", tmp_path)
    report = grading.grade_test("tiny", regrade_reference=True, out=tmp_path / "build")
    assert report.reference == {"square": (2.0, 2.0)}
    assert report.blank == {"square": (0.0, 2.0)}
    assert 0 <= report.wrong["square"][0] < 2.0
    assert report.problems() == []
    student = (tmp_path / "build" / "tiny" / "dist" / "student" / "tiny-exercises.ipynb").read_text()
    assert "y == 49" not in student and "y = ..." in student  # hidden key and answer stripped


def test_a_wrong_key_fails_assign(tmp_path, monkeypatch):
    _tiny(tmp_path, 50)  # the reference computes 49
    monkeypatch.setattr(grading, "ASSIGNMENTS", tmp_path)
    with pytest.raises(RuntimeError, match="otter assign failed"):
        grading.assign("tiny", tmp_path / "build")


def test_report_flags_a_blank_that_scores():
    report = grading.GradeReport("x", {"q": (1.0, 1.0)}, {"q": (0.5, 1.0)}, {"q": (1.0, 1.0)})
    assert any("blank answer scores" in p for p in report.problems())
    assert any("wrong answer gets full marks" in p for p in report.problems())


def test_one_run_scores_reference_blank_and_wrong_like_otter_run(tmp_path, monkeypatch):
    """grade_in_one_run (what make grade-test does) gives the scores otter run gives, per question."""
    _tiny(tmp_path, 49)
    monkeypatch.setattr(grading, "ASSIGNMENTS", tmp_path)
    report = grading.grade_in_one_run("tiny", out=tmp_path / "build")
    assert report.reference == {"square": (2.0, 2.0)}
    assert report.blank == {"square": (0.0, 2.0)}
    assert report.wrong["square"][0] == 1.0  # the public type check passes, the hidden key fails
    assert report.problems() == []


def test_one_run_catches_checks_that_cannot_fail(tmp_path, monkeypatch):
    """A hidden check that passes on anything lets the blank and the wrong answer score: flagged."""
    (tmp_path / "loose.py").write_text(textwrap.dedent('''
        TITLE = "loose"
        SETUP = "import math"
        QUESTIONS = [dict(name="square", exercise=1, points=2, prompt="*Deliverable:* `y`.",
                          solution="y = 7 ** 2  # SOLUTION", public=["assert True"], hidden=["assert True"],
                          wrong="y = 48")]
        '''))
    monkeypatch.setattr(grading, "ASSIGNMENTS", tmp_path)
    problems = grading.grade_in_one_run("loose", out=tmp_path / "build").problems()
    assert "loose: a blank answer scores on square (2/2)" in problems
    assert "loose: the wrong answer gets full marks on square" in problems


def test_a_variant_leaves_the_state_as_it_was():
    env = {"x": 1}
    tests = grading.Path(__file__).parent  # any folder: the missing test file must raise after the restore
    with pytest.raises(FileNotFoundError):
        grading.score_variants("absent", {"wrong": "x = 2\ny = 3"}, env, str(tests))
    assert env == {"x": 1}


def test_the_code_an_exercise_hands_out_is_split_on_a_statement_boundary():
    given, blank, reference = grading.split_given_code("a = 1\nb = (2,\n     3)\ny = ...", "a = 1\nb = (2,\n     3)\ny = a + 1")
    assert (given, blank, reference) == ("a = 1\nb = (2,\n     3)", "y = ...", "y = a + 1")
    # a shared line inside a statement that then differs is not split off; nor is a loop's body
    assert grading.split_given_code("a = (1,\n 2)\ny = ...", "a = (1,\n 3)\ny = 1")[0] == ""
    assert grading.split_given_code("for i in r:\n    a = 1\n    y = ...", "for i in r:\n    a = 1\n    y = 2")[0] == ""
    assert grading.split_given_code("y = ...", "y = 49") == ("", "y = ...", "y = 49")


def test_one_run_runs_the_handed_out_code_once_and_scores_as_before(tmp_path, monkeypatch):
    """The code before the solution (a training run, in the chapters) runs once, not per variant."""
    (tmp_path / "given.py").write_text(textwrap.dedent('''
        TITLE = "given"
        SETUP = "import pathlib"
        QUESTIONS = [dict(name="square", exercise=1, points=2, prompt="*Deliverable:* `y`.",
                          solution=("log = pathlib.Path('given-runs.txt')\\n"
                                    "log.write_text((log.read_text() if log.exists() else '') + 'run ')\\n"
                                    "base = 7\\n"
                                    "# BEGIN SOLUTION\\ny = base ** 2\\n# END SOLUTION"),
                          public=["assert isinstance(y, int)"], hidden=["assert isinstance(y, int) and y == 49"],
                          wrong="y = 48")]
        '''))
    monkeypatch.setattr(grading, "ASSIGNMENTS", tmp_path)
    report = grading.grade_in_one_run("given", out=tmp_path / "build")
    assert (report.reference, report.blank, report.wrong) == (
        {"square": (2.0, 2.0)}, {"square": (0.0, 2.0)}, {"square": (1.0, 2.0)})
    runs = next((tmp_path / "build").rglob("given-runs.txt")).read_text()
    assert runs == "run "  # once: before, the blank variant and the reference each ran it


def test_parallel_grading_lets_idle_threads_sleep(monkeypatch):
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    grading.share_cores()
    assert grading.os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")  # a caller's own choice is kept
    grading.share_cores()
    assert grading.os.environ["OMP_WAIT_POLICY"] == "ACTIVE"
