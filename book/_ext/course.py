"""Sphinx extension: the course page's plan, rendered from `icml26.course`, never typed by hand.

Directives:
- `{syllabus}`: the 12-week table (week, theme, chapters, exercise set);
- `{learning-paths}`: the three paths, in the table's order;
- `{prerequisite-graph}`: the chapters' prerequisite graph (read from each chapter's
  Prerequisites section) drawn as an SVG by week, with the same facts as a list;
- `{compute-sheet}`: per chapter and preset, the measured CPU times (papermill's duration of the
  stored reduced run; the evidence record's wall time and peak memory), the `full` preset's
  estimate, and its GPU time where a `full-cuda` record stores one (else "not measured").

Nothing here imports torch.
"""

from __future__ import annotations

import ast
from html import escape
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx import addnodes

from icml26 import course
from icml26.catalog import PAPERS, SLUGS, chapter_path, project_root
from icml26.common.ledger import read_ledger
from icml26.evidence import record_path

TITLES = {p.slug: p.title for p in PAPERS}

#: Labels short enough for a node of the graph.
SHORT_NAMES = {
    "dq_sync": "DQ sync", "planar_symmetry": "Planar symmetry", "w2sg_bregman": "W2SG Bregman",
    "asymmetric_weighting": "Asym. weighting", "conformal_mip_stop": "Conformal MIP", "tt_sparse": "TT-Sparse",
    "discrete_transformer": "Discrete Transf.", "model_clone": "Model cloning", "prism": "PRISM (phase)",
    "kskt": "KSKT", "tam": "TAM", "deep_image_search": "DeepImageSearch", "step_diffusion_policy": "STEP",
    "usb_rl": "USB-RL", "dmawm": "DMAWM", "lmac": "LMAC", "reconfigure": "Reconfigure", "grasp": "GRASP",
    "diffusion_bridge": "Diffusion bridges",
}


def _depend_on_the_chapters(directive: Directive) -> None:
    """Rebuild the course page when a chapter, its evidence record or its config changes."""
    env = directive.state.document.settings.env
    for slug in SLUGS:
        for path in (chapter_path(slug), record_path(slug, "evidence", "cpu"), record_path(slug, "full", "cuda"),
                     project_root() / "src" / "icml26" / slug / "config.py", Path(course.__file__)):
            env.note_dependency(str(path))


def _link(slug: str, text: str | None = None, folder: str = "chapters") -> addnodes.pending_xref:
    reference = addnodes.pending_xref("", refdomain="std", reftype="doc", reftarget=f"/{folder}/{slug}",
                                      refexplicit=True)
    reference += nodes.inline(text=text or TITLES[slug])
    return reference


def _paragraph(*parts) -> nodes.paragraph:
    paragraph = nodes.paragraph()
    for part in parts:
        paragraph += part if isinstance(part, nodes.Node) else nodes.Text(part)
    return paragraph


def _table(headers, rows, classes) -> nodes.table:
    table = nodes.table(classes=classes)
    group = nodes.tgroup(cols=len(headers))
    table += group
    group += [nodes.colspec(colwidth=1) for _ in headers]
    head = nodes.thead()
    head += nodes.row("", *[nodes.entry("", _paragraph(h)) for h in headers])
    body = nodes.tbody()
    for row in rows:
        body += nodes.row("", *[nodes.entry("", cell if isinstance(cell, nodes.Element) else _paragraph(cell))
                                 for cell in row])
    group += [head, body]
    return table


def _chapter_list(slugs) -> nodes.paragraph:
    parts = []
    for i, slug in enumerate(slugs):
        parts += ([", "] if i else []) + [_link(slug, SHORT_NAMES[slug])]
    return _paragraph(*parts)


class Syllabus(Directive):
    def run(self):
        _depend_on_the_chapters(self)
        rows = []
        for week in course.SYLLABUS:
            chapters = _chapter_list(week.chapters) if week.chapters else _paragraph("the term project (below)")
            sets = "; ".join(f"{SHORT_NAMES[s]}: all {course.exercise_count(s)}" for s in week.chapters)
            plans = _paragraph(*[part for i, slug in enumerate(week.chapters)
                                 for part in ([", "] if i else []) + [_link(slug, SHORT_NAMES[slug], "book/lessons")]])
            rows.append([str(week.number), week.theme, chapters, sets or "project milestones",
                         plans if week.chapters else "the rubric below"])
        return [_table(("Week", "Theme", "Chapters (reading and lab)", "Exercise set", "Lesson plan"), rows,
                       ["course-syllabus"])]


class LearningPaths(Directive):
    def run(self):
        _depend_on_the_chapters(self)
        weeks = course.week_of()
        out = []
        for path in course.PATHS:
            out.append(_paragraph(nodes.strong(text=f"Path {path.key}: {path.title}."),
                                  f" Background: {path.background}. After week 1's ",
                                  _link(course.FIRST_CHAPTER, SHORT_NAMES[course.FIRST_CHAPTER]), ":"))
            items = nodes.enumerated_list()
            for slug in path.chapters:
                items += nodes.list_item("", _paragraph(_link(slug), f" (week {weeks[slug]})"))
            out.append(items)
        return out


def graph_svg(graph: dict[str, list[str]]) -> str:
    """The prerequisite graph by week, top to bottom: one row per teaching week, an arrow from each
    prerequisite to the chapter that builds on it (arrows that skip weeks bend outwards, so they
    pass beside the chapters in between rather than under them). A picture only (role img, no
    links inside): the list under it carries the links."""
    weeks = [w for w in course.SYLLABUS if w.chapters]
    left, width, height, gap, row, top = 64, 150, 30, 40, 48, 8
    where = {}
    for i, week in enumerate(weeks):
        for j, slug in enumerate(week.chapters):
            where[slug] = (left + j * (width + gap), top + i * row, j)
    total_w, total_h = left + 2 * width + gap + 40, top + len(weeks) * row
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {total_w} {total_h}" role="img" '
             f'aria-labelledby="prereq-title" class="prereq-graph">',
             '<title id="prereq-title">The chapters by teaching week, top to bottom, with an arrow from each '
             'chapter to every chapter that builds on it</title>',
             '<defs><marker id="prereq-arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" '
             'markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#555"/></marker></defs>']
    for i, week in enumerate(weeks):
        parts.append(f'<text x="4" y="{top + i * row + height / 2 + 4}" font-size="12" fill="#444">'
                     f'week {week.number}</text>')
    for slug, needs in graph.items():
        for need in needs:
            (x1, y1, c1), (x2, y2, c2) = where[need], where[slug]
            sx, sy, ex, ey = x1 + width / 2, y1 + height, x2 + width / 2, y2
            if c1 == c2 and ey - sy > row:  # skips a week in one column: pass beside it
                out = -1 if c1 == 0 else 1
                sx, sy, ex, ey = x1 + (0 if out < 0 else width), y1 + height / 2, x2 + (0 if out < 0 else width), \
                    y2 + height / 2
                bend = out * min(58, 18 + (ey - sy) / 6)
                path = f"M{sx},{sy} C{sx + bend},{sy} {ex + bend},{ey} {ex},{ey}"
            else:
                mid = (sy + ey) / 2
                path = f"M{sx},{sy} C{sx},{mid} {ex},{mid} {ex},{ey}"
            parts.append(f'<path d="{path}" fill="none" stroke="#555" stroke-width="1.3" '
                         f'marker-end="url(#prereq-arrow)"/>')
    for slug, (x, y, _) in where.items():
        parts.append(f'<rect x="{x}" y="{y}" width="{width}" height="{height}" rx="6" fill="#eef3fb" '
                     f'stroke="#3b5b92"/><text x="{x + width / 2}" y="{y + height / 2 + 4}" text-anchor="middle" '
                     f'font-size="13" fill="#1a2a4a">{escape(SHORT_NAMES[slug])}</text>')
    parts.append("</svg>")
    return "".join(parts)


class PrerequisiteGraph(Directive):
    def run(self):
        _depend_on_the_chapters(self)
        graph = course.prerequisite_graph()
        problems = course.syllabus_problems(graph=graph)
        if problems:
            raise self.error("the course plan breaks its rules: " + "; ".join(problems))
        figure = nodes.raw("", f'<div class="prereq-figure">{graph_svg(graph)}</div>', format="html")
        items = nodes.bullet_list()
        for week in course.SYLLABUS:
            for slug in week.chapters:
                needs = graph[slug]
                parts = [_link(slug, SHORT_NAMES[slug]), f" (week {week.number}) builds on "]
                if needs:
                    for i, need in enumerate(needs):
                        parts += ([", "] if i else []) + [_link(need, SHORT_NAMES[need])]
                else:
                    parts.append("no other chapter")
                items += nodes.list_item("", _paragraph(*parts))
        return [figure, items]


def expected_full_time(slug: str) -> str:
    """The `full` preset's estimate, read from the package's EXPECTED_TIME without importing it."""
    tree = ast.parse((project_root() / "src" / "icml26" / slug / "config.py").read_text())
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if getattr(target, "id", None) == "EXPECTED_TIME":
            return str(ast.literal_eval(node.value)["full"])
    raise ValueError(f"{slug}: config.py has no literal EXPECTED_TIME")


def _record(slug: str, scale: str, device: str) -> dict | None:
    import json

    path = record_path(slug, scale, device)
    return json.loads(path.read_text()) if path.is_file() else None


def compute_rows() -> list[list[str]]:
    rows = []
    for slug in SLUGS:
        stored = read_ledger(chapter_path(slug))
        reduced = f"{stored.duration_s:.0f} s" if stored.duration_s is not None else "not run"
        evidence = _record(slug, "evidence", "cpu")
        if evidence:
            prov = evidence["provenance"]
            memory = prov.get("peak_memory_mb", {}).get("host")
            evidence_text = f"{prov['wall_s'] / 60:.1f} min" + (f", {memory / 1024:.1f} GB peak" if memory else "")
        else:
            evidence_text = "no record yet"
        gpu = _record(slug, "full", "cuda")
        gpu_text = f"{gpu['provenance']['wall_s'] / 60:.0f} min" if gpu else "not measured"
        estimate = expected_full_time(slug)
        t4 = "no (needs more GPU memory)" if "too big for a 16 GB T4" in estimate else "not measured"
        rows.append([SHORT_NAMES[slug], reduced, evidence_text, estimate, gpu_text, t4])
    return rows


class ComputeSheet(Directive):
    def run(self):
        _depend_on_the_chapters(self)
        headers = ("Chapter", "Reduced, CPU", "Evidence, CPU", "Full (estimate)", "Full, GPU",
                   "Full on a free Colab T4")
        rows = [[_paragraph(_link(slug, row[0]))] + row[1:] for slug, row in zip(SLUGS, compute_rows())]
        return [_table(headers, rows, ["course-compute"])]


def setup(app):
    app.add_directive("syllabus", Syllabus)
    app.add_directive("learning-paths", LearningPaths)
    app.add_directive("prerequisite-graph", PrerequisiteGraph)
    app.add_directive("compute-sheet", ComputeSheet)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
