"""Slides from the chapters themselves: `make slides` writes `_build/slides/<slug>.slides.html`.

Each chapter's cells carry Jupyter's slide tags (`metadata.slideshow.slide_type`, the tags RISE and
nbconvert read). `tag_notebook` sets them by one rule, so a lecturer can re-tag after editing and
override any cell by hand:

- a Markdown cell that opens with a level-1 or level-2 heading starts a slide; one that opens with
  a level-3 heading starts a sub-slide (reveal.js's vertical stack);
- exercise solutions, the Colab install cell and the parameters cell are skipped;
- every other cell continues the current slide (long slides scroll).

The slides are rendered with nbconvert's reveal.js exporter from the Colab edition (MyST already
turned into Markdown that nbconvert renders), with reveal.js, MathJax and require.js from the
book's pinned local copies (book/vendor), so the deck works offline.
"""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import nbformat

from icml26.catalog import SLUGS, chapter_path, project_root

SLIDE, SUBSLIDE, CONTINUE, SKIP = "slide", "subslide", "-", "skip"
SKIPPED_TAGS = {"solution", "parameters", "self-check", "colab-references"}
TEMPLATE = Path(__file__).resolve().parent / "common" / "slide_template"


def slide_type(cell) -> str:
    """The slide tag the rule gives a cell (see the module docstring)."""
    tags = set(cell.get("metadata", {}).get("tags", []))
    source = cell.get("source", "")
    source = "".join(source) if isinstance(source, list) else source
    if tags & SKIPPED_TAGS or "google.colab" in source:
        return SKIP
    if cell.get("cell_type") == "markdown":
        first = source.lstrip().split("\n", 1)[0]
        if first.startswith(("# ", "## ")):
            return SLIDE
        if first.startswith("### "):
            return SUBSLIDE
    return CONTINUE


def tag_notebook(nb, keep_existing: bool = True) -> int:
    """Give every cell a slide tag (by the rule, or kept where one is set); returns how many changed."""
    changed = 0
    for index, cell in enumerate(nb.cells):
        show = cell.metadata.setdefault("slideshow", {})
        wanted = show.get("slide_type") if keep_existing and show.get("slide_type") else slide_type(cell)
        if index == 0 and wanted in (CONTINUE, SKIP) and cell.cell_type == "markdown":
            wanted = SLIDE  # the deck opens on the title
        if show.get("slide_type") != wanted:
            show["slide_type"] = wanted
            changed += 1
    return changed


def untagged_cells(nb) -> list[int]:
    """Indices of cells without a slide tag."""
    return [i for i, c in enumerate(nb.cells) if not c.get("metadata", {}).get("slideshow", {}).get("slide_type")]


def tag_chapters(slugs=SLUGS, keep_existing: bool = True) -> dict[str, int]:
    """Write the slide tags into chapters/<slug>.ipynb (metadata only; outputs untouched)."""
    done = {}
    for slug in slugs:
        path = chapter_path(slug)
        nb = nbformat.read(path, as_version=4)
        done[slug] = tag_notebook(nb, keep_existing)
        if done[slug]:  # nbformat's own layout; the file's final newline kept as it was
            ending = "\n" if path.read_text(encoding="utf-8").endswith("\n") else ""
            path.write_text(nbformat.writes(nb) + ending, encoding="utf-8")
    return done


def drop_glue_outputs(nb) -> int:
    """Remove the stored glue outputs (icml26.common.glue): their figures are pasted into the markdown
    already, and nbconvert has nothing to show for them. Returns how many were removed."""
    removed = 0
    for cell in nb.cells:
        if cell.cell_type == "code":
            kept = [o for o in cell.outputs if "scrapbook" not in o.get("metadata", {})]
            removed += len(cell.outputs) - len(kept)
            cell.outputs = kept
    return removed


def vendor_assets(out: Path) -> Path:
    """reveal.js, MathJax and require.js (the book's pinned npm copies) under out/_vendor."""
    sys.path.insert(0, str(project_root() / "book" / "vendor"))
    try:
        import offline  # book/vendor/offline.py: `npm ci` of the pinned lock file
    finally:
        sys.path.pop(0)
    modules = offline.npm_install()
    vendor = out / "_vendor"
    shutil.rmtree(vendor, ignore_errors=True)
    for part in ("dist", "plugin/notes"):
        shutil.copytree(modules / "reveal.js" / part, vendor / "reveal.js" / part)
    shutil.copy2(modules / "reveal.js" / "LICENSE", vendor / "reveal.js" / "LICENSE")
    mathjax = modules / "mathjax" / "es5"
    for part in offline.MATHJAX_KEEP:
        source, target = mathjax / part, vendor / "mathjax" / part
        target.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, target)
    (vendor / "requirejs").mkdir(parents=True)
    shutil.copy2(modules / "requirejs" / "require.js", vendor / "requirejs" / "require.js")
    return vendor


def write_slides(slugs=SLUGS, source: Path | None = None, out: Path | None = None) -> list[Path]:
    """Render `<out>/<slug>.slides.html` from the Colab edition in `source`."""
    from nbconvert import SlidesExporter

    root = project_root()
    source = source or root / "_build" / "colab"
    out = out or root / "_build" / "slides"
    out.mkdir(parents=True, exist_ok=True)
    vendor_assets(out)
    exporter = SlidesExporter(template_file=str(TEMPLATE / "icml26_slides.html.j2"),
                              reveal_url_prefix="_vendor/reveal.js", reveal_scroll=True,
                              reveal_theme="simple", reveal_number="c/t", exclude_input_prompt=True,
                              exclude_output_prompt=True)
    exporter.mathjax_url = "_vendor/mathjax/tex-mml-chtml.js"
    exporter.require_js_url = "_vendor/requirejs/require.js"
    written = []
    for slug in slugs:
        path = source / f"{slug}.ipynb"
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: run `make colab` first")
        nb = nbformat.read(path, as_version=4)
        tag_notebook(nb)  # a cell without a stored tag gets the rule's (tests/test_slide_tags.py wants them stored)
        nb.metadata.pop("widgets", None)  # widget state needs the online widget manager; the deck is static
        drop_glue_outputs(nb)
        body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": slug}})
        target = out / f"{slug}.slides.html"
        target.write_text(body, encoding="utf-8")
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("slugs", nargs="*", help="chapters (default: all)")
    parser.add_argument("--tag", action="store_true", help="write the slide tags into chapters/<slug>.ipynb")
    parser.add_argument("--retag", action="store_true", help="like --tag, replacing tags set by hand")
    parser.add_argument("--source", type=Path, help="the Colab edition's folder (default _build/colab)")
    parser.add_argument("--out", type=Path, help="where to write the decks (default _build/slides)")
    args = parser.parse_args(argv)
    slugs = args.slugs or list(SLUGS)
    unknown = sorted(set(slugs) - set(SLUGS))
    if unknown:
        parser.error(f"unknown chapters {unknown}; the chapters are {', '.join(SLUGS)}")
    if args.tag or args.retag:
        for slug, n in tag_chapters(slugs, keep_existing=not args.retag).items():
            print(f"{slug}: {n} cells tagged")
        return 0
    for path in write_slides(slugs, args.source, args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
