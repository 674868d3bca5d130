"""The student edition: every chapter without its exercise solutions and stored outputs.

    python -m icml26.student [--out _build/student] [SLUG ...]      (make student)

A solution is a cell tagged `solution` (its collapsed admonition carries the class
`tag-solution` on the rendered page). The edition removes those cells and clears every code
cell's outputs and execution count; every other cell stays, in order, unchanged. It works from
the tags only, never from the cells' text.
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


def student_notebook(notebook):
    """A copy of `notebook` (nbformat v4) without solution cells and without outputs."""
    import copy

    edition = copy.deepcopy(notebook)
    edition.cells = [cell for cell in edition.cells if not is_solution(cell)]
    for cell in edition.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    # Widget state and papermill's record describe the stored run, which the edition does not hold.
    edition.metadata.pop("widgets", None)
    edition.metadata.pop("papermill", None)
    return edition


def write_student_edition(slugs=SLUGS, out: Path | None = None) -> list[Path]:
    """Write `<out>/<slug>.ipynb` for each chapter; return the paths written."""
    import nbformat

    out = Path(out) if out is not None else project_root() / DEFAULT_OUT
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for slug in slugs:
        notebook = nbformat.read(chapter_path(slug), as_version=4)
        solutions = sum(is_solution(c) for c in notebook.cells)
        if solutions == 0:
            raise ValueError(f"chapter {slug!r} has no cell tagged {SOLUTION_TAG!r}: its solutions cannot be removed")
        target = out / f"{slug}.ipynb"
        nbformat.write(student_notebook(notebook), target)
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m icml26.student", description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", help=f"default: all ({', '.join(SLUGS)})")
    parser.add_argument("--out", type=Path, default=None, help=f"folder (default {DEFAULT_OUT})")
    args = parser.parse_args(argv)
    try:
        paths = write_student_edition(args.chapters or SLUGS, args.out)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"student edition: {len(paths)} notebooks in {paths[0].parent}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
