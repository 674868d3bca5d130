"""Slide tags (icml26.slides): every chapter cell carries one, by the rule or set by hand, so that
`make slides` renders the notebook itself as a deck; the rule on hand-made cells."""

from __future__ import annotations

import nbformat
import pytest

from icml26 import slides
from icml26.catalog import SLUGS, chapter_path


PENDING: set[str] = set()  # tagged once their exercise sets are in


@pytest.mark.parametrize("slug", [s for s in SLUGS if s not in PENDING])
def test_every_cell_is_tagged(slug):
    nb = nbformat.read(chapter_path(slug), as_version=4)
    assert slides.untagged_cells(nb) == [], f"{slug}: run `python -m icml26.slides --tag {slug}`"
    kinds = [c.metadata["slideshow"]["slide_type"] for c in nb.cells]
    assert kinds[0] == slides.SLIDE and kinds.count(slides.SLIDE) >= 8
    for cell, kind in zip(nb.cells, kinds):
        if "solution" in cell.metadata.get("tags", []):
            assert kind == slides.SKIP, f"{slug}: a solution shows on a slide"


def test_the_rule():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    assert slides.slide_type(md("## Method\ntext")) == slides.SLIDE
    assert slides.slide_type(md("### A detail")) == slides.SUBSLIDE
    assert slides.slide_type(md("plain text")) == slides.CONTINUE
    assert slides.slide_type(code("x = 1")) == slides.CONTINUE
    assert slides.slide_type(md("```{admonition} Solution", metadata={"tags": ["solution"]})) == slides.SKIP
    assert slides.slide_type(code('if "google.colab" in sys.modules: pass')) == slides.SKIP
    nb = nbformat.v4.new_notebook(cells=[md("intro"), md("## A"), code("y = 2")])
    nb.cells[2].metadata["slideshow"] = {"slide_type": "fragment"}  # set by hand: kept
    assert slides.tag_notebook(nb) == 2
    assert [c.metadata["slideshow"]["slide_type"] for c in nb.cells] == ["slide", "slide", "fragment"]
    assert slides.untagged_cells(nb) == []


def test_the_decks_leave_out_glue_outputs():
    import nbformat

    from icml26.common.glued import GLUE_MIME, GLUE_PREFIX
    from icml26.slides import drop_glue_outputs

    glued = nbformat.v4.new_output("display_data", data={GLUE_MIME: "'150'"},
                                   metadata={"scrapbook": {"name": "steps", "mime_prefix": GLUE_PREFIX}})
    shown = nbformat.v4.new_output("stream", text="seed 0\n")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("glue('steps', 150)")])
    nb.cells[0].outputs = [glued, shown]
    assert drop_glue_outputs(nb) == 1 and nb.cells[0].outputs == [shown]
