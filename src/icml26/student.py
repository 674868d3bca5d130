"""The student edition: every chapter without its exercise solutions and stored outputs.

    python -m icml26.student [--from _build/colab] [--out _build/student] [SLUG ...]   (make student)

It is made from the Colab edition (icml26.colab), so the handout reads right in Jupyter and
Colab too: `--from` reads the built edition's notebooks; without it each chapter is converted
here, pinned to the current commit. A solution is a cell tagged `solution`. The edition removes
those cells and clears every code cell's outputs and execution count; every other cell stays, in
order, unchanged, except that the Colab badges open the student edition. It works from the tags
only, never from the cells' text.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .catalog import SLUGS, chapter_path, project_root

SOLUTION_TAG = "solution"
DEFAULT_OUT = Path("_build") / "student"


def is_solution(cell) -> bool:
    return SOLUTION_TAG in cell.get("metadata", {}).get("tags", [])


def student_notebook(notebook, slug: str | None = None):
    """A copy of `notebook` (nbformat v4) without solution cells and without outputs; with `slug`,
    its Colab badges (to either edition) open the chapter's student edition."""
    import copy

    edition = copy.deepcopy(notebook)
    edition.cells = [cell for cell in edition.cells if not is_solution(cell)]
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m icml26.student", description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", help=f"default: all ({', '.join(SLUGS)})")
    parser.add_argument("--out", type=Path, default=None, help=f"folder (default {DEFAULT_OUT})")
    parser.add_argument("--from", dest="source", type=Path, default=None,
                        help="the built Colab edition (make colab); default: convert each chapter here")
    args = parser.parse_args(argv)
    try:
        paths = write_student_edition(args.chapters or SLUGS, args.out, args.source)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"student edition: {len(paths)} notebooks in {paths[0].parent}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
