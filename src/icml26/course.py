"""The course plan as data: the 12-week syllabus, the three learning paths, the chapters'
prerequisite graph and the compute sheet. The course page renders all of it
(`book/_ext/course.py`), and `tests/test_course.py` holds it to its rules (`syllabus_problems`):
every chapter once, one or two per week, each with its exercise set; paths in the table's order;
a prerequisite graph without cycles whose edges point to earlier weeks.

The prerequisite graph is read from the chapters themselves: a link to another chapter inside a
chapter's "Prerequisites" section says "read that one first". Nothing here imports torch.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from icml26.catalog import SLUGS, chapter_path


@dataclass(frozen=True)
class Week:
    number: int
    theme: str
    chapters: tuple[str, ...]  # empty: a project week


SYLLABUS = (
    Week(1, "How to read a reproduction", ("tt_sparse",)),
    Week(2, "Symmetry by construction; generalisation from weak supervision", ("planar_symmetry", "w2sg_bregman")),
    Week(3, "Spectral methods on manifolds; conformal guarantees", ("dq_sync", "conformal_mip_stop")),
    Week(4, "Programs and fingerprints inside networks", ("discrete_transformer", "model_clone")),
    Week(5, "Phase and attention", ("prism", "kskt")),
    Week(6, "RL with verifiable rewards; routing in a vision tower", ("asymmetric_weighting", "tam")),
    Week(7, "Safe RL; an agent that searches images", ("usb_rl", "deep_image_search")),
    Week(8, "Few-step diffusion policies; multi-agent world models", ("step_diffusion_policy", "dmawm")),
    Week(9, "Diffusion bridges; LLM-designed communication", ("diffusion_bridge", "lmac")),
    Week(10, "Co-design; agents that learn to call tools", ("reconfigure", "grasp")),
    Week(11, "Project work and check-in", ()),
    Week(12, "Project presentations", ()),
)


@dataclass(frozen=True)
class LearningPath:
    key: str
    title: str
    background: str
    chapters: tuple[str, ...]


PATHS = (
    LearningPath("A", "Geometry, symmetry and structure",
          "linear algebra, groups at the level of \"rotations compose\"",
          ("planar_symmetry", "dq_sync", "prism", "diffusion_bridge", "reconfigure")),
    LearningPath("B", "Learning theory, optimisation and reinforcement learning",
          "probability, gradient descent, a policy gradient",
          ("w2sg_bregman", "conformal_mip_stop", "asymmetric_weighting", "usb_rl", "step_diffusion_policy",
           "dmawm")),
    LearningPath("C", "Interpretability, trust and agents",
          "one course in deep learning; Transformers at the level of attention and a language-model head",
          ("discrete_transformer", "model_clone", "kskt", "tam", "deep_image_search", "lmac", "grasp")),
)

#: Every path starts with week 1's chapter, which teaches how to read the claims ledger.
FIRST_CHAPTER = "tt_sparse"

_SECTION = re.compile(r"^#+\s*Prerequisites\s*$(?P<body>.*?)(?=^#+\s|\Z)", re.M | re.S)
_CHAPTER_LINK = re.compile(r"\]\((?:\.\./chapters/|\./)?(?P<slug>[a-z0-9_]+)\.ipynb")
_EXERCISE = re.compile(r"^\*\*\d+\.", re.M)


def _markdown_cells(slug: str, root: Path | None = None) -> list[str]:
    path = chapter_path(slug) if root is None else Path(root) / f"{slug}.ipynb"
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]


def prerequisites_in(markdown: str) -> list[str]:
    """The chapters a "Prerequisites" section links to, in order, without repeats."""
    found: list[str] = []
    for section in _SECTION.finditer(markdown):
        for link in _CHAPTER_LINK.finditer(section["body"]):
            if link["slug"] not in found:
                found.append(link["slug"])
    return found


def prerequisite_graph(root: Path | None = None) -> dict[str, list[str]]:
    """chapter -> the chapters its Prerequisites section links to (read from the notebooks)."""
    return {slug: prerequisites_in("\n\n".join(_markdown_cells(slug, root))) for slug in SLUGS}


def exercise_count(slug: str, root: Path | None = None) -> int:
    """How many numbered exercises ("**1. ...") the chapter's markdown holds."""
    return sum(len(_EXERCISE.findall(text)) for text in _markdown_cells(slug, root))


def find_cycle(graph: dict[str, list[str]]) -> list[str] | None:
    """One cycle of the graph as a list of nodes (first == last), or None when it has none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in graph:
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def week_of(syllabus=SYLLABUS) -> dict[str, int]:
    return {slug: week.number for week in syllabus for slug in week.chapters}


def syllabus_problems(syllabus=SYLLABUS, paths=PATHS, graph: dict[str, list[str]] | None = None,
                      exercises: dict[str, int] | None = None) -> list[str]:
    """Every way the plan breaks the course's rules (an empty list when it keeps them)."""
    graph = prerequisite_graph() if graph is None else graph
    exercises = {s: exercise_count(s) for s in SLUGS} if exercises is None else exercises
    problems = []
    listed = [slug for week in syllabus for slug in week.chapters]
    for slug in sorted(set(SLUGS) - set(listed)):
        problems.append(f"{slug} is in no week")
    for slug in sorted({s for s in listed if listed.count(s) > 1}):
        problems.append(f"{slug} is in more than one week")
    for slug in sorted(set(listed) - set(SLUGS)):
        problems.append(f"{slug} is not a chapter")
    for week in syllabus:
        if len(week.chapters) > 2:
            problems.append(f"week {week.number} holds {len(week.chapters)} chapters (at most two)")
    numbers = [week.number for week in syllabus]
    if numbers != list(range(1, len(syllabus) + 1)):
        problems.append(f"weeks are not numbered 1..{len(syllabus)} in order: {numbers}")
    for slug in listed:
        if exercises.get(slug, 0) < 1:
            problems.append(f"{slug} has no exercise set")
    weeks = week_of(syllabus)
    if syllabus and syllabus[0].chapters != (FIRST_CHAPTER,):
        problems.append(f"week 1 must be {FIRST_CHAPTER} alone (every path starts there)")
    in_paths = [slug for path in paths for slug in path.chapters]
    for slug in sorted(set(SLUGS) - set(in_paths) - {FIRST_CHAPTER}):
        problems.append(f"{slug} is on no learning path")
    for path in paths:
        order = [weeks.get(slug, 0) for slug in path.chapters]
        if order != sorted(order):
            problems.append(f"path {path.key} does not follow the table's weeks: "
                            + ", ".join(f"{s} (week {w})" for s, w in zip(path.chapters, order)))
    cycle = find_cycle(graph)
    if cycle:
        problems.append("prerequisite cycle: " + " -> ".join(cycle))
    for slug, needs in graph.items():
        for need in needs:
            if need not in SLUGS:
                problems.append(f"{slug} lists {need!r}, which is not a chapter")
            elif slug in weeks and weeks.get(need, 99) >= weeks[slug]:
                problems.append(f"{slug} (week {weeks[slug]}) builds on {need} (week {weeks.get(need)}), "
                                "which is not taught earlier")
    return problems

