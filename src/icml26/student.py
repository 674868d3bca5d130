"""The student edition: every chapter without its exercise solutions and stored outputs.

    python -m icml26.student [--from _build/colab] [--out _build/student] [SLUG ...]   (make student)
    python -m icml26.student --book _build/student-book                  (make book EDITION=student)

It is made from the Colab edition (icml26.colab), so the handout reads right in Jupyter and
Colab too: `--from` reads the built edition's notebooks; without it each chapter is converted
here, pinned to the current commit. A solution is a cell tagged `solution`. The edition removes
those cells and clears every code cell's outputs and execution count; every other cell stays, in
order, unchanged, except that the Colab badges open the student edition. It works from the tags
only, never from the cells' text.

`--book DIR` writes the sources of the student edition of the *book* instead: the repository's
`book/` folder and `_config.yml` (titled as the student edition), with every chapter keeping its
stored outputs but not its solution cells, so a course that grades the exercises can publish the
pages without their answers.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .catalog import SLUGS, chapter_path, project_root

SOLUTION_TAG = "solution"
DEFAULT_OUT = Path("_build") / "student"
DEFAULT_BOOK_OUT = Path("_build") / "student-book"
EDITION_TITLE_SUFFIX = " (student edition)"


def is_solution(cell) -> bool:
    return SOLUTION_TAG in cell.get("metadata", {}).get("tags", [])


def student_notebook(notebook, slug: str | None = None):
    """A copy of `notebook` (nbformat v4) without solution cells and without outputs; with `slug`,
    its Colab badges (to either edition) open the chapter's student edition."""
    edition = without_solutions(notebook)
    if slug is not None:
        from .colab import colab_url, fix_badge_text

        for cell in edition.cells:
            if cell.cell_type == "markdown":
                fixed = fix_badge_text(cell.source)
                cell.source = fixed.replace(colab_url(slug), colab_url(slug, "student"))
    for cell in edition.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    # Widget state and papermill's record describe the stored run, which the edition does not hold.
    edition.metadata.pop("widgets", None)
    edition.metadata.pop("papermill", None)
    if "icml26_edition" in edition.metadata:
        edition.metadata["icml26_edition"]["edition"] = "student"
    return edition


def colab_source(slug: str, source: Path | None = None, commit: str | None = None):
    """The chapter's Colab edition: read from the folder `source`, else converted from the chapter."""
    import nbformat

    from .colab import colab_notebook, current_commit

    if source is not None:
        path = Path(source) / f"{slug}.ipynb"
        if not path.is_file():
            raise ValueError(f"no Colab edition of {slug!r} at {path}: run `make colab` first")
        return nbformat.read(path, as_version=4)
    chapter_path(slug)  # an unknown chapter is an error naming the valid ones
    return colab_notebook(nbformat.read(chapter_path(slug), as_version=4), slug, commit or current_commit())


def write_student_edition(slugs=SLUGS, out: Path | None = None, source: Path | None = None,
                          commit: str | None = None) -> list[Path]:
    """Write `<out>/<slug>.ipynb` for each chapter, from its Colab edition; return the paths written."""
    import nbformat

    out = Path(out) if out is not None else project_root() / DEFAULT_OUT
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for slug in slugs:
        notebook = colab_source(slug, source, commit)
        solutions = sum(is_solution(c) for c in notebook.cells)
        if solutions == 0:
            raise ValueError(f"chapter {slug!r} has no cell tagged {SOLUTION_TAG!r}: its solutions cannot be removed")
        target = out / f"{slug}.ipynb"
        nbformat.write(student_notebook(notebook, slug), target)
        written.append(target)
    return written


def without_solutions(notebook):
    """A copy of `notebook` without its solution cells; outputs and everything else kept."""
    import copy

    edition = copy.deepcopy(notebook)
    edition.cells = [cell for cell in edition.cells if not is_solution(cell)]
    return edition


def write_student_book(out: Path | None = None, slugs=SLUGS) -> Path:
    """The sources of the book's student edition in `out`: `book/`, `_config.yml` (its title marked)
    and `chapters/<slug>.ipynb` without solution cells. Returns the folder; build it with
    `jupyter-book build <out> --toc <out>/book/_toc.yml --config <out>/_config.yml`."""
    import shutil

    import nbformat
    import yaml

    root = project_root()
    out = Path(out) if out is not None else root / DEFAULT_BOOK_OUT
    target, sources = out.resolve(), [(root / name).resolve() for name in ("book", "chapters", "src")]
    if target == root.resolve() or any(target == s or s in target.parents for s in sources):
        raise ValueError(f"--book {out}: the repository's own sources would be overwritten; choose a folder "
                         f"of its own (default {DEFAULT_BOOK_OUT})")
    for name in ("book", "chapters"):
        shutil.rmtree(out / name, ignore_errors=True)
    shutil.copytree(root / "book", out / "book", ignore=shutil.ignore_patterns("__pycache__", "node_modules"))
    (out / "chapters").mkdir(parents=True)
    for slug in slugs:
        notebook = nbformat.read(chapter_path(slug), as_version=4)
        if not any(is_solution(c) for c in notebook.cells):
            raise ValueError(f"chapter {slug!r} has no cell tagged {SOLUTION_TAG!r}: its solutions cannot be removed")
        nbformat.write(without_solutions(notebook), out / "chapters" / f"{slug}.ipynb")
    config = yaml.safe_load((root / "_config.yml").read_text())
    config["title"] = config["title"] + EDITION_TITLE_SUFFIX
    (out / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m icml26.student", description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", help=f"default: all ({', '.join(SLUGS)})")
    parser.add_argument("--out", type=Path, default=None, help=f"folder (default {DEFAULT_OUT})")
    parser.add_argument("--from", dest="source", type=Path, default=None,
                        help="the built Colab edition (make colab); default: convert each chapter here")
    parser.add_argument("--book", type=Path, default=None, metavar="DIR",
                        help=f"write the student edition's book sources to DIR instead (e.g. {DEFAULT_BOOK_OUT})")
    args = parser.parse_args(argv)
    try:
        if args.book is not None:
            folder = write_student_book(args.book, args.chapters or SLUGS)
            print(f"student book sources in {folder}")
            return 0
        paths = write_student_edition(args.chapters or SLUGS, args.out, args.source)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"student edition: {len(paths)} notebooks in {paths[0].parent}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
