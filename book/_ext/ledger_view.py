"""Sphinx extension: the claims ledgers on the built pages keep their numbers whole.

A stored ledger table (icml26.common.ledger.ledger_table_html, in a chapter's output) may predate
`unbreakable_numbers`; after the build each chapter page's ledger tables get it, so a figure such
as 5e-4 or -0.047 never breaks across lines at its minus sign. The layout itself is book.css.
"""
from __future__ import annotations

import re
from pathlib import Path

from icml26.common.ledger import unbreakable_numbers

LEDGER_TABLE = re.compile(r"<table class='ledger'>.*?</table>", re.S)


def keep_numbers_whole(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for page in (Path(app.outdir) / "chapters").glob("*.html"):
        text = page.read_text(encoding="utf-8")
        fixed = LEDGER_TABLE.sub(lambda m: unbreakable_numbers(m.group(0)) if "nobr" not in m.group(0)
                                 else m.group(0), text)
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")


def setup(app):
    app.connect("build-finished", keep_numbers_whole)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
