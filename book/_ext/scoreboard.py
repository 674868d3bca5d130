"""Sphinx extension: the `{scoreboard}` directive renders the reproduction scoreboard.

The table is generated at build time from each chapter's stored claims ledger (the record that
its ledger table stores, the checked lines, papermill's recorded duration), never typed by hand.
Chapters appear in the book's order (`icml26.catalog`, which the table of contents follows),
under the paper's exact title.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx import addnodes

from icml26.catalog import PAPERS, chapter_path
from icml26.common.ledger import NOT_TESTED, REPRODUCED, STATUSES, read_ledger

HEADERS = ("Chapter", "Source basis", "The paper's claims at our scale", "Verdict", "Reduced run")
_BASIS = re.compile(r"Source basis:?\**:?\s*(?P<basis>[^\n]+)", re.I)


def _cell(content) -> nodes.entry:
    entry = nodes.entry()
    entry += content if isinstance(content, nodes.Node) else nodes.paragraph(text=str(content))
    return entry


def _chapter_link(slug: str, title: str) -> nodes.paragraph:
    reference = addnodes.pending_xref(
        "", refdomain="std", reftype="doc", reftarget=f"/chapters/{slug}", refexplicit=True
    )
    reference += nodes.inline(text=title)
    return nodes.paragraph("", "", reference)


def source_basis(path: Path, record: dict | None) -> str:
    """The chapter's source basis: from its ledger record, else from its title cell's text."""
    if record and record.get("source_basis"):
        return record["source_basis"]
    for cell in json.loads(path.read_text()).get("cells", [])[:3]:
        match = _BASIS.search("".join(cell.get("source", "")))
        if match:
            return re.sub(r"[*_`]", "", match["basis"]).strip().rstrip(".")
    return "not stated"


def claim_rows(stored) -> list[dict]:
    """The paper's claims (extensions left out) with status, fragile flag and reason."""
    if stored.record:
        return [c for c in stored.record["claims"] if not c.get("extension")]
    return [{"id": k, "status": v["status"], "fragile": v["fragile"], "reason": "", "claim": v["claim"]}
            for k, v in stored.checked["claims"].items() if k.startswith("C")]


def _claims_list(claims: list[dict]) -> nodes.Node:
    items = nodes.bullet_list()
    for claim in claims:
        para = nodes.paragraph()
        para += nodes.strong(text=f"{claim['id']} {claim['status']}")
        if claim.get("fragile"):
            para += nodes.emphasis(text=" (fragile)")
        para += nodes.Text(f": {claim['claim']}")
        if claim["status"] != REPRODUCED and claim.get("reason"):
            para += nodes.Text(" — ")
            para += nodes.emphasis(text=claim["reason"])
        item = nodes.list_item()
        item += para
        items += item
    return items


class ScoreboardDirective(Directive):
    has_content = False

    def run(self):
        env = self.state.document.settings.env
        table = nodes.table(classes=["scoreboard"])
        group = nodes.tgroup(cols=len(HEADERS))
        table += group
        for width in (20, 12, 50, 10, 8):
            group += nodes.colspec(colwidth=width)
        head = nodes.thead()
        header = nodes.row()
        for title in HEADERS:
            header += _cell(title)
        head += header
        group += head
        body = nodes.tbody()
        totals: Counter = Counter()
        verdicts: Counter = Counter()
        for paper in PAPERS:
            path = chapter_path(paper.slug)
            row = nodes.row()
            row += _cell(_chapter_link(paper.slug, paper.title))
            if not path.is_file():
                for value in ("", "(chapter not written yet)", "planned", ""):
                    row += _cell(value)
                body += row
                continue
            env.note_dependency(str(path))
            stored = read_ledger(path)
            claims = claim_rows(stored)
            totals.update(c["status"] for c in claims)
            verdict = (stored.record or {}).get("verdict") or stored.checked["verdict"] or "no stored ledger"
            verdicts[verdict] += 1
            badge = nodes.strong(text=verdict) if verdict == REPRODUCED else nodes.emphasis(text=verdict)
            row += _cell(source_basis(path, stored.record))
            row += _cell(_claims_list(claims))
            row += _cell(nodes.paragraph("", "", badge))
            row += _cell(f"{stored.duration_s:.0f} s" if stored.duration_s is not None else "not run")
            body += row
        summary_row = nodes.row(classes=["scoreboard-total"])
        summary_row += _cell(nodes.paragraph("", "", nodes.strong(text="All chapters")))
        summary_row += _cell("")
        summary_row += _cell(", ".join(f"{totals[s]} {s.lower()}" for s in STATUSES)
                             + f" ({sum(totals.values())} claims)")
        summary_row += _cell(", ".join(f"{n} {v.lower()}" for v, n in sorted(verdicts.items())))
        summary_row += _cell("")
        body += summary_row
        group += body
        tested = sum(n for s, n in totals.items() if s != NOT_TESTED)
        summary = nodes.paragraph(
            text=f"{len(PAPERS)} chapters, {sum(totals.values())} claims of the papers, {tested} of them tested "
                 f"at the reduced scale: {totals[REPRODUCED]} reproduced."
        )
        return [summary, table]


def _add_static_path(app):
    app.config.html_static_path.append(str(Path(__file__).parent / "static"))


def setup(app):
    app.add_directive("scoreboard", ScoreboardDirective)
    app.connect("builder-inited", _add_static_path)
    app.add_css_file("book.css")  # the scoreboard's and the ledgers' tables
    return {"version": "2.0", "parallel_read_safe": True, "parallel_write_safe": True}
