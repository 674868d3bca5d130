"""Sphinx extension: the `{scoreboard}` directive renders the reproduction scoreboard.

The table is generated at build time from each chapter's stored outputs (its
`# NBVAL_CHECK_OUTPUT` cell and papermill's recorded duration), never typed by hand.
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx import addnodes

from icml26.catalog import PAPERS, chapter_path
from icml26.common.claims import REPRODUCED, read_chapter_record

HEADERS = ("Chapter", "Claim", "Measured (reduced scale)", "Verdict", "Reduced run")


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


def _row(paper, env) -> nodes.row:
    row = nodes.row()
    path = chapter_path(paper.slug)
    if not path.is_file():
        cells = [paper.title, "(chapter not written yet)", "", "planned", ""]
        for value in cells:
            row += _cell(value)
        return row
    env.note_dependency(str(path))
    record = read_chapter_record(path)
    verdict = record.verdict or "no stored verdict"
    badge = nodes.strong(text=verdict) if verdict == REPRODUCED else nodes.emphasis(text=verdict)
    duration = f"{record.duration_s:.0f} s" if record.duration_s is not None else "not run"
    row += _cell(_chapter_link(paper.slug, paper.title))
    row += _cell(record.claim or "")
    row += _cell(record.measured or "")
    row += _cell(nodes.paragraph("", "", badge))
    row += _cell(duration)
    return row


class ScoreboardDirective(Directive):
    has_content = False

    def run(self):
        env = self.state.document.settings.env
        table = nodes.table(classes=["scoreboard"])
        group = nodes.tgroup(cols=len(HEADERS))
        table += group
        for width in (22, 30, 28, 10, 10):
            group += nodes.colspec(colwidth=width)
        head = nodes.thead()
        header = nodes.row()
        for title in HEADERS:
            header += _cell(title)
        head += header
        group += head
        body = nodes.tbody()
        for paper in PAPERS:
            body += _row(paper, env)
        group += body
        written = [p for p in PAPERS if chapter_path(p.slug).is_file()]
        reproduced = sum(read_chapter_record(chapter_path(p.slug)).verdict == REPRODUCED for p in written)
        summary = nodes.paragraph(
            text=f"{len(written)} of {len(PAPERS)} chapters written; "
            f"{reproduced} of them reproduce their paper's claim at the reduced scale."
        )
        return [summary, table]


def _add_static_path(app):
    app.config.html_static_path.append(str(Path(__file__).parent / "static"))


def setup(app):
    app.add_directive("scoreboard", ScoreboardDirective)
    app.connect("builder-inited", _add_static_path)
    app.add_css_file("scoreboard.css")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
