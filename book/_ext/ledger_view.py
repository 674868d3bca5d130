"""Sphinx extension: the tables on the chapter pages keep their numbers whole.

A stored table (the claims ledger of icml26.common.ledger, a results table a cell displays) may
predate `unbreakable_numbers`; after the build every table on a chapter page gets it, so a figure
such as 5e-4, -0.047 or 0.10-0.14 never breaks across lines at its minus sign or dash. The ledger's
layout itself is book.css.
"""
from __future__ import annotations

import re
from pathlib import Path

from icml26.common.ledger import unbreakable_numbers

TABLE = re.compile(r"<table\b.*?</table>", re.S)


def _skip(table: str) -> bool:
    """Tables already done, and tables with math (a span inside TeX would break MathJax)."""
    return "nobr" in table or "\\(" in table or "math notranslate" in table


def keep_numbers_whole(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for page in (Path(app.outdir) / "chapters").glob("*.html"):
        text = page.read_text(encoding="utf-8")
        fixed = TABLE.sub(lambda m: m.group(0) if _skip(m.group(0)) else unbreakable_numbers(m.group(0)), text)
        # A wide HTML output (a table) scrolls inside its box; a keyboard must reach it (axe:
        # scrollable-region-focusable).
        fixed = fixed.replace('<div class="output text_html">', '<div class="output text_html" tabindex="0">')
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")


def setup(app):
    app.connect("build-finished", keep_numbers_whole)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
