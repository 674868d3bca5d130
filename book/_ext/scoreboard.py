"""Sphinx extension: the `{scoreboard}` directive renders the reproduction scoreboard.

The table is generated at build time, never typed by hand: each chapter's statuses and verdict
come from its stored evidence record (`icml26.evidence`, CLAIMS.md rule 9) with its scale, device,
seeds and stand-ins; where no record is stored yet, from the chapter's reduced run (and the row
says so). The reduced run's expected time is the one its banner printed (the package's
`EXPECTED_TIME`), beside papermill's measured duration. Chapters appear in the book's order
(`icml26.catalog`), under the paper's exact title. Nothing here imports torch.
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
from icml26.evidence import chapter_record, record_path

HEADERS = ("Chapter", "Source basis", "The paper's claims", "Verdict", "Evidence", "Stand-ins", "Reduced run")
_BASIS = re.compile(r"Source basis:?\**:?\s*(?P<basis>[^\n]+)", re.I)
_EXPECTED = re.compile(r"expected time: (?P<time>[^\n]+)")


def expected_time(path: Path) -> str | None:
    """The reduced run's expected time as its banner printed it (from the package's EXPECTED_TIME)."""
    for cell in json.loads(path.read_text()).get("cells", []):
        for out in cell.get("outputs", []):
            match = _EXPECTED.search("".join(out.get("text", "")))
            if match:
                return match["time"].strip()
    return None


#: One class per column, so that on a phone each cell can carry its column's name (book.css).
COLUMN_CLASSES = ("sb-chapter", "sb-basis", "sb-claims", "sb-verdict", "sb-evidence", "sb-standins", "sb-reduced")


def _cell(content, column: int | None = None) -> nodes.entry:
    entry = nodes.entry(classes=[COLUMN_CLASSES[column]] if column is not None else [])
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


def claim_rows(stored, evidence: dict | None = None) -> list[dict]:
    """The paper's claims (extensions left out) with status, marks and reason: from the evidence
    record when there is one, else from the reduced run."""
    if evidence:
        return [c for c in evidence["ledger"]["claims"] if not c.get("extension")]
    if stored.record:
        return [c for c in stored.record["claims"] if not c.get("extension")]
    return [{"id": k, "status": v["status"], "fragile": v["fragile"], "reason": "", "claim": v["claim"]}
            for k, v in stored.checked["claims"].items() if k.startswith("C")]


def _claims_list(claims: list[dict]) -> nodes.Node:
    items = nodes.bullet_list()
    for claim in claims:
        para = nodes.paragraph()
        para += nodes.strong(text=f"{claim['id']} {claim['status']}")
        marks = [m for m, key in (("fragile", "fragile"), ("stand-in", "stand_in"),
                                  ("by construction", "by_construction")) if claim.get(key)]
        if marks:
            para += nodes.emphasis(text="".join(f" ({m})" for m in marks))
        para += nodes.Text(f": {claim['claim']}")
        if claim["status"] != REPRODUCED and claim.get("reason"):
            para += nodes.Text(" — ")
            para += nodes.emphasis(text=claim["reason"])
        item = nodes.list_item()
        item += para
        items += item
    return items


def _evidence_text(evidence: dict | None) -> str:
    if not evidence:
        return "no record yet"
    prov = evidence["provenance"]
    minutes = prov["wall_s"] / 60
    took = f"{prov['wall_s']:.0f} s" if minutes < 2 else f"{minutes:.0f} min"
    return f"{evidence['scale']}, {evidence['device']}, {len(prov['seeds'])} seeds ({took})"


def _reduced_text(stored, expected: str | None, verdict: str | None) -> str:
    measured = f"measured {stored.duration_s:.0f} s" if stored.duration_s is not None else "not run"
    parts = [f"{expected} ({measured})" if expected else measured]
    if verdict:
        parts.append(f"verdict at reduced: {verdict}")
    return "; ".join(parts)


class ScoreboardDirective(Directive):
    has_content = False

    def run(self):
        env = self.state.document.settings.env
        table = nodes.table(classes=["scoreboard"])
        group = nodes.tgroup(cols=len(HEADERS))
        table += group
        for width in (16, 9, 43, 9, 9, 6, 8):
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
            row += _cell(_chapter_link(paper.slug, paper.title), 0)
            if not path.is_file():
                for value in ("", "(chapter not written yet)", "planned", "", "", ""):
                    row += _cell(value)
                body += row
                continue
            env.note_dependency(str(path))
            stored = read_ledger(path)
            evidence = chapter_record(paper.slug)
            if evidence:
                env.note_dependency(str(record_path(paper.slug, evidence["scale"], evidence["device"])))
            claims = claim_rows(stored, evidence)
            totals.update(c["status"] for c in claims)
            reduced_verdict = (stored.record or {}).get("verdict") or stored.checked["verdict"] or "no stored ledger"
            verdict = evidence["ledger"]["verdict"] if evidence else reduced_verdict
            verdicts[verdict if evidence else "no evidence record yet"] += 1
            badge = nodes.strong(text=verdict) if verdict == REPRODUCED else nodes.emphasis(text=verdict)
            verdict_cell = nodes.paragraph("", "", badge)
            if not evidence:
                verdict_cell += nodes.Text(" (reduced run; no evidence record yet)")
            row += _cell(source_basis(path, stored.record), 1)
            row += _cell(_claims_list(claims), 2)
            row += _cell(verdict_cell, 3)
            row += _cell(_evidence_text(evidence), 4)
            stand_ins = [c["id"] for c in claims if c.get("stand_in")]
            row += _cell(", ".join(stand_ins) if stand_ins else "none", 5)
            row += _cell(_reduced_text(stored, expected_time(path), reduced_verdict if evidence else None), 6)
            body += row
        summary_row = nodes.row(classes=["scoreboard-total"])
        summary_row += _cell(nodes.paragraph("", "", nodes.strong(text="All chapters")))
        summary_row += _cell("")
        summary_row += _cell(", ".join(f"{totals[s]} {s.lower()}" for s in STATUSES)
                             + f" ({sum(totals.values())} claims)")
        summary_row += _cell(", ".join(f"{n} {v.lower()}" for v, n in sorted(verdicts.items())))
        summary_row += _cell(f"{sum(n for v, n in verdicts.items() if v != 'no evidence record yet')} records")
        summary_row += _cell("")
        summary_row += _cell("")
        body += summary_row
        group += body
        tested = sum(n for s, n in totals.items() if s != NOT_TESTED)
        records = sum(n for v, n in verdicts.items() if v != "no evidence record yet")
        summary = nodes.paragraph(
            text=f"{len(PAPERS)} chapters, {sum(totals.values())} claims of the papers, {tested} of them tested: "
                 f"{totals[REPRODUCED]} reproduced. {records} chapters are decided by a stored evidence record; "
                 f"the others show their reduced run until their record is made."
        )
        return [summary, table]


def _add_static_path(app):
    app.config.html_static_path.append(str(Path(__file__).parent / "static"))


def setup(app):
    app.add_directive("scoreboard", ScoreboardDirective)
    app.connect("builder-inited", _add_static_path)
    app.add_css_file("book.css")  # the scoreboard's and the ledgers' tables
    return {"version": "2.0", "parallel_read_safe": True, "parallel_write_safe": True}
