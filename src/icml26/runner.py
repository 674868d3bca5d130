"""Execute chapters in place with papermill, storing their outputs (`make run`, `make chapters`).

    python -m icml26.runner dq_sync [--scale reduced] [--device auto] [--seed 0] [-p NAME=VALUE ...]
    python -m icml26.runner --all
    python -m icml26.runner --all --device cuda --output-dir _build/scratch   (stored notebooks untouched)

The chapters' Explore panels are stored static (ICML26_EXPLORE=static, icml26.common.explorer):
every view precomputed, so the published page needs no kernel.

Papermill only warns about a parameter the notebook does not declare; this runner refuses
it, and refuses unknown chapters, presets and devices, before anything runs.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import sys
import time
from pathlib import Path

from .catalog import SLUGS, chapter_path, written_chapters
from .common.device import VALID_DEVICES, _DEVICE_PATTERN
from .common.explorer import ENV as EXPLORE_ENV
from .common.presets import PRESET_NAMES
from .numerics import pinned_environment


def declared_parameters(notebook) -> dict[str, object]:
    """Names and default values assigned in the cell tagged `parameters`."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    cells = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    if not cells:
        raise ValueError(f"{notebook} has no cell tagged 'parameters'")
    defaults = {}
    for node in ast.parse(cells[0].source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            defaults[node.targets[0].id] = ast.literal_eval(node.value)
    return defaults


def written_notebook(slug: str):
    """The notebook of a chapter that exists; unknown or unwritten chapters are errors."""
    path = chapter_path(slug)
    if not path.is_file():
        raise ValueError(f"chapter {slug!r} has no notebook yet; written: {', '.join(written_chapters())}")
    return path


def parse_assignment(text: str) -> tuple[str, object]:
    """`NAME=VALUE` with VALUE a Python literal (a bare word is taken as a string)."""
    match = re.fullmatch(r"([A-Za-z_]\w*)=(.*)", text)
    if not match:
        raise ValueError(f"malformed parameter {text!r}; write NAME=VALUE")
    name, raw = match.groups()
    try:
        return name, ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        return name, raw


def check_parameters(slug: str, wanted: dict[str, object]) -> dict[str, object]:
    """Validate requested parameters against the notebook; return those differing from its defaults."""
    defaults = declared_parameters(written_notebook(slug))
    unknown = sorted(set(wanted) - set(defaults))
    if unknown:
        raise ValueError(
            f"chapter {slug!r} declares no parameter(s) {unknown}; "
            f"its parameters are: {', '.join(defaults)}"
        )
    if "SCALE" in wanted and wanted["SCALE"] not in PRESET_NAMES:
        raise ValueError(f"unknown preset {wanted['SCALE']!r}; valid presets: {', '.join(PRESET_NAMES)}")
    if "DEVICE" in wanted and not _DEVICE_PATTERN.match(str(wanted["DEVICE"])):
        raise ValueError(f"unknown device {wanted['DEVICE']!r}; use {VALID_DEVICES}")
    for name, value in wanted.items():
        if type(value) is not type(defaults[name]) and not (
            isinstance(value, (int, float)) and isinstance(defaults[name], (int, float))
        ):
            raise ValueError(
                f"parameter {name} of chapter {slug!r} takes a {type(defaults[name]).__name__} "
                f"(default {defaults[name]!r}), got {value!r}"
            )
    # Only what differs from the defaults is injected, so a default run leaves no extra cell.
    return {k: v for k, v in wanted.items() if v != defaults[k]}


def run_chapter(slug: str, parameters: dict[str, object], output_dir=None) -> float:
    """Execute one chapter in place, or into `output_dir`/<slug>.ipynb (the stored notebook is then
    only read); return its wall time in seconds."""
    import papermill

    # The kernel is a new process: it inherits the pinned math-library settings (icml26.numerics).
    os.environ.update(pinned_environment())
    # Stored outputs hold no progress-bar remnants; a reader's interactive run shows the bars.
    os.environ["TQDM_DISABLE"] = "1"
    # Explore panels are stored for a page with no kernel: every view precomputed, swapped by a
    # few lines of JavaScript (icml26.common.explorer); a reader's live notebook gets ipywidgets.
    os.environ[EXPLORE_ENV] = "static"

    path = written_notebook(slug)
    import nbformat

    injected = check_parameters(slug, parameters)
    notebook = nbformat.read(path, as_version=4)
    # A cell injected by an earlier run with other parameters would otherwise stay behind.
    notebook.cells = [c for c in notebook.cells if "injected-parameters" not in c.metadata.get("tags", [])]
    # papermill records its input in metadata.papermill.input_path: hand it the path, not the
    # notebook object, or every run would nest the whole previous notebook in the metadata.
    target = path
    if output_dir is not None:
        target = Path(output_dir) / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, target)
    started = time.perf_counter()
    # The working folder stays chapters/ (a chapter may read files beside it), wherever it is written.
    papermill.execute_notebook(
        str(target), str(target), parameters=injected, cwd=str(path.parent),
        kernel_name="python3", progress_bar=False, request_save_on_cell_execute=False,
    )
    return time.perf_counter() - started


def status_summary(notebook: Path) -> str:
    """The executed chapter's checked status lines, read back with the ledger's grammar."""
    from .common.ledger import read_ledger

    checked = read_ledger(notebook).checked
    lines = [f"  {cid} {c['status']}{' (fragile)' if c['fragile'] else ''}{' (stand-in)' if c['stand_in'] else ''}"
             for cid, c in checked["claims"].items()]
    return "\n".join(lines + [f"  verdict of this run: {checked['verdict'] or 'none printed'}"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m icml26.runner", description=__doc__.split("\n\n")[0])
    parser.add_argument("chapter", nargs="?", help=f"one of: {', '.join(SLUGS)}")
    parser.add_argument("--all", action="store_true", help="run every written chapter")
    parser.add_argument("--scale", default="reduced")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--output-dir", default=None, metavar="DIR",
                        help="write the executed notebooks to DIR/<slug>.ipynb instead of over the stored ones")
    args = parser.parse_args(argv)
    if bool(args.chapter) == args.all:
        parser.error("name one chapter or pass --all")
    try:
        slugs = written_chapters() if args.all else [args.chapter]
        parameters = {"SCALE": args.scale, "DEVICE": args.device, "SEED": args.seed}
        parameters.update(parse_assignment(p) for p in args.param)
        for slug in slugs:
            check_parameters(slug, parameters)
        for slug in slugs:
            seconds = run_chapter(slug, parameters, args.output_dir)
            where = Path(args.output_dir) / f"{slug}.ipynb" if args.output_dir else chapter_path(slug)
            print(f"{slug}: executed in {seconds:.0f} s -> {where}")
            print(status_summary(where))
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
