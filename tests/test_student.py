"""The student edition (`make student`), made from the Colab edition: no solution left, every
other cell of the Colab edition kept, no outputs, badges that open the student edition, and the
notebooks still execute at the `smoke` scale."""

import os
import subprocess
import sys

import nbformat
import pytest

from icml26.catalog import SLUGS, chapter_path
from icml26.colab import colab_notebook, colab_url
from icml26.student import SOLUTION_TAG, is_solution, student_notebook, write_student_edition

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    """The folder of the student edition; each test writes its own chapter (one bad chapter fails alone)."""
    return tmp_path_factory.mktemp("student")


@pytest.mark.parametrize("slug", SLUGS)
def test_solutions_and_outputs_are_gone_and_every_other_cell_kept(slug, edition):
    original = colab_notebook(nbformat.read(chapter_path(slug), as_version=4), slug, COMMIT)  # the Colab edition
    write_student_edition([slug], edition, commit=COMMIT)
    student = nbformat.read(edition / f"{slug}.ipynb", as_version=4)
    solutions = [c for c in original.cells if is_solution(c)]
    assert len(solutions) >= 3, "at least three exercise solutions, each tagged 'solution'"
    kept = [c for c in original.cells if not is_solution(c)]
    assert [c.source for c in student.cells] == [
        c.source.replace(colab_url(slug), colab_url(slug, "student")) for c in kept]
    assert any(colab_url(slug, "student") in c.source for c in student.cells if c.cell_type == "markdown"), (
        "the badge does not open the student edition")
    assert student.metadata["icml26_edition"]["edition"] == "student"
    assert [c.cell_type for c in student.cells] == [c.cell_type for c in kept]
    text = "\n".join(c.source for c in student.cells)
    for solution in solutions:
        assert solution.source.strip() not in text
    assert "tag-solution" not in text, "a solution block is left in a cell that is not tagged 'solution'"
    assert all(c.outputs == [] and c.execution_count is None for c in student.cells if c.cell_type == "code")


def test_the_edition_keeps_untagged_cells_and_refuses_a_chapter_without_tagged_solutions(tmp_path):
    cells = [nbformat.v4.new_markdown_cell("**1. (Conceptual)** Why?"),
             nbformat.v4.new_markdown_cell("Because.", metadata={"tags": [SOLUTION_TAG]}),
             nbformat.v4.new_code_cell("x = 1", outputs=[nbformat.v4.new_output("stream", text="1")], execution_count=3)]
    edition = student_notebook(nbformat.v4.new_notebook(cells=cells))
    assert [c.source for c in edition.cells] == ["**1. (Conceptual)** Why?", "x = 1"]
    assert edition.cells[1].outputs == [] and edition.cells[1].execution_count is None
    built = tmp_path / "colab"  # a built Colab edition (make colab), read with --from
    built.mkdir()
    nbformat.write(nbformat.v4.new_notebook(cells=cells[:1] + [nbformat.v4.new_markdown_cell("Because.")]),
                   built / "dq_sync.ipynb")
    with pytest.raises(ValueError, match="no cell tagged 'solution'"):
        write_student_edition(["dq_sync"], tmp_path / "out", source=built)
    with pytest.raises(ValueError, match="run `make colab` first"):
        write_student_edition(["tam"], tmp_path / "out", source=built)
    with pytest.raises(ValueError, match="unknown chapter"):
        chapter_path("not_a_chapter")


# The student edition's code cells are exactly the Colab edition's (no solution is a code cell; the
# first test above compares every kept cell), and tests/browser/test_colab_install.py runs every Colab
# notebook at `smoke` on Colab's versions (make browser, part of make test). So this test runs one
# handed-out notebook end to end; ICML26_STUDENT_SMOKE="slug ..." (or "all") runs others.
_SMOKE = os.environ.get("ICML26_STUDENT_SMOKE", "conformal_mip_stop")
SMOKE_SLUGS = list(SLUGS) if _SMOKE == "all" else _SMOKE.split()


def test_no_solution_is_a_code_cell():
    """What lets the Colab edition's smoke runs stand for the student edition's."""
    for slug in SLUGS:
        nb = nbformat.read(chapter_path(slug), as_version=4)
        assert not [c for c in nb.cells if is_solution(c) and c.cell_type == "code"], f"{slug}: a code solution"


@pytest.mark.parametrize("slug", SMOKE_SLUGS)
def test_the_student_notebook_executes_at_smoke_scale(slug, edition, tmp_path):
    """Papermill runs the handed-out notebook (SCALE='smoke'), in a scratch folder."""
    out = tmp_path / f"{slug}.ipynb"
    write_student_edition([slug], edition, commit=COMMIT)
    env = {**os.environ, "TQDM_DISABLE": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "papermill", str(edition / f"{slug}.ipynb"), str(out), "-p", "SCALE", "smoke",
         "--cwd", str(chapter_path(slug).parent), "-k", "python3", "--no-progress-bar"],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]


def test_the_student_book_keeps_outputs_drops_solutions_and_guards_the_sources(tmp_path):
    """`make book EDITION=student`: the book's sources with every chapter's solution cells removed,
    its stored outputs kept, and the title marked; it refuses to write over the repository."""
    import yaml

    from icml26.catalog import project_root
    from icml26.student import EDITION_TITLE_SUFFIX, write_student_book

    out = write_student_book(tmp_path / "student-book", ["tam", "w2sg_bregman"])
    for slug in ("tam", "w2sg_bregman"):
        original = nbformat.read(chapter_path(slug), as_version=4)
        student = nbformat.read(out / "chapters" / f"{slug}.ipynb", as_version=4)
        kept = [c for c in original.cells if not is_solution(c)]
        assert not any(is_solution(c) for c in student.cells)
        assert [c.source for c in student.cells] == [c.source for c in kept]
        assert [c.get("outputs") for c in student.cells] == [c.get("outputs") for c in kept]
    config = yaml.safe_load((out / "_config.yml").read_text())
    assert config["title"].endswith(EDITION_TITLE_SUFFIX) and (out / "book" / "_toc.yml").is_file()
    root = project_root()
    for bad in (root, root / "book", root / "chapters" / "x"):
        with pytest.raises(ValueError, match="would be overwritten"):
            write_student_book(bad, ["tam"])
