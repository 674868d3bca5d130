"""icml26.common.glue: numbers in a page's prose come from its run (CONTRIBUTING.md, "Numbers in
prose"). The stored output is MyST-NB's glue format, the book and the Colab edition paste the same
text, and every glue role of a chapter names a figure its stored run glued."""

from __future__ import annotations

import json
import re

import pytest

from icml26 import colab
from icml26.catalog import SLUGS, chapter_path
from icml26.common import glued as glue_module
from icml26.common.glued import GLUE_MIME, format_glued, glue, glued_values

GLUE_ROLE = re.compile(r"\{glue(?P<kind>:\w*)?\}`(?P<name>[^`:]+)(?::[^`]*)?`")


@pytest.fixture
def shown(monkeypatch):
    calls = []
    monkeypatch.setattr("IPython.display.display", lambda *objs, **kw: calls.append((objs, kw)))
    return calls


def test_glue_stores_the_formatted_text_in_myst_nbs_format(shown):
    assert glue("steps", 1200, ",") is None  # a cell ending in glue(...) shows nothing
    (bundle,), kw = shown[0]
    assert bundle == {GLUE_MIME: "'1,200'"} and kw["raw"] is True
    assert kw["metadata"] == {"scrapbook": {"name": "steps", "mime_prefix": "application/papermill.record/"}}
    cell = {"cell_type": "code", "outputs": [{"output_type": "display_data", "data": bundle,
                                              "metadata": kw["metadata"]}]}
    assert glued_values([cell]) == {"steps": "'1,200'"}
    assert format_glued("'1,200'") == "1,200"  # a tuple if read back unquoted


def test_glue_refuses_bad_names_and_formats(shown):
    with pytest.raises(ValueError, match="identifier"):
        glue("a lead", 0.2)
    with pytest.raises(ValueError, match="cannot format"):
        glue("lead", "text", ".2f")
    assert not shown


@pytest.mark.parametrize("text, fmt", [("'0.552'", ""), ("'0.552'", ".1f"), ("'1,200'", ""), ("'12'", "d"),
                                       ("'3.58'", ".1f"), ("'C1 and C2'", "s"), ("0.25", ".0%")])
def test_format_glued_matches_myst_nb(text, fmt):
    from myst_nb.core.variables import format_plain_text

    assert format_glued(text, fmt) == format_plain_text(text, fmt)


def test_the_colab_edition_pastes_glued_text_and_refuses_an_unknown_name():
    converter = colab.Converter("dq_sync", glued={"lead": "'0.17'", "steps": "'1,200'"})
    text = converter.convert("The lead is {glue:text}`lead` after {glue:text}`steps` steps, {glue:text}`lead:.1f`.")
    assert text == "The lead is 0.17 after 1,200 steps, 0.2."
    with pytest.raises(colab.ConversionError, match="glue:text"):
        converter.convert("after {glue}`steps` steps")
    with pytest.raises(colab.ConversionError, match="'gap', which no stored output"):
        converter.convert("a gap of {glue:text}`gap`")
    assert glue_module.GLUE_PREFIX in GLUE_MIME


@pytest.mark.parametrize("slug", SLUGS)
def test_every_glue_role_names_a_glued_figure_of_the_stored_run(slug):
    cells = json.loads(chapter_path(slug).read_text())["cells"]
    glued = glued_values(cells)
    roles = [m for c in cells if c["cell_type"] == "markdown" for m in GLUE_ROLE.finditer("".join(c["source"]))]
    other = [m[0] for m in roles if m["kind"] != ":text"]
    assert not other, f"{slug}: paste glued figures with {{glue:text}} (the book quotes other kinds): {other}"
    named = {m["name"] for m in roles}
    assert not named - set(glued), f"{slug}: glue roles without a stored value: {sorted(named - set(glued))}"
