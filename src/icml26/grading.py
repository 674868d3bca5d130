"""Graded exercises with otter-grader: `make assignments` and `make grade-test`.

Each chapter's graded exercises are written once, as plain Python data, in `assignments/<slug>.py`
(see `assignments/README.md` for the fields). From it this module writes an otter-grader *master
notebook* (otter's own format: raw `# BEGIN QUESTION` / `# BEGIN SOLUTION` / `# BEGIN TESTS` cells),
and `otter assign` turns that into

- `student/<slug>-exercises.ipynb`: answer cells with `...` where the work goes, each followed by
  `grader.check("<name>")`, which runs the public checks (in Jupyter and on Colab, where the checks
  are fetched from the published branch);
- `autograder/`: the reference solutions, the public *and hidden* checks and the zip that
  `otter run` grades a submission with (no Docker needed).

`make grade-test` checks every question three ways: the reference answer must score full marks, the
blank student answer (otter's `...`) must score 0, and the assignment's wrong answer must lose marks,
each scored by otter's own test files, hidden checks included. By default it does so in **one
execution** of each chapter's autograder notebook (`grade_in_one_run`): the code a question hands out
(before its solution, often a training run) runs once; then the blank and the wrong answer are run in
a copy of the notebook's state and scored, the state is put back and the reference runs. The slower
`--otter` mode grades three whole submissions with `otter run` (the path a lecturer uses;
`tests/test_grading.py` takes a small assignment through it).

Why otter-grader rather than nbgrader: its checks are plain Python a student can run anywhere
(Colab included, through `grader.check`), hidden checks are stripped from the student notebook by
`otter assign`, and `otter run` grades locally without a JupyterHub, a database or Docker, which is
what CI (and a lecturer without a grading server) has.
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[2]
ASSIGNMENTS = REPO / "assignments"
BUILD = REPO / "_build" / "assignments"
# Public checks are fetched from here on Colab (the branch the Colab editions are published to).
TESTS_URL = "https://raw.githubusercontent.com/icml26-runnable/icml26-runnable/{branch}/assignments/{slug}/tests/"


# The first cell: on Colab, install the book's package and the grader (Colab's own torch, numpy and
# ipywidgets are kept); then the grader, which fetches the public checks on Colab.
INIT = """\
import sys, subprocess
if "google.colab" in sys.modules:  # on Colab only
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "otter-grader",
                    "icml26 @ git+https://github.com/icml26-runnable/icml26-runnable"], check=True)
import icml26.numerics; icml26.numerics.pin_cpu_numerics()  # before otter imports numpy
import otter
grader = otter.Notebook("{slug}-exercises.ipynb", tests_url_prefix="{url}")
"""


@dataclass(frozen=True)
class Question:
    """One graded exercise. `solution` is the reference answer cell: otter's markers (`# SOLUTION`
    at the end of a line, or `# BEGIN SOLUTION` / `# END SOLUTION` around lines) mark what the
    student version replaces by `...`. `public` checks are shown to the student; `hidden` ones
    (numeric keys with tolerances, on the graded variant) are kept in the autograder only."""

    name: str
    exercise: int
    points: int
    prompt: str
    solution: str
    public: tuple[str, ...]
    hidden: tuple[str, ...]
    wrong: str | None = None  # an answer cell that must lose marks (make grade-test)

    def __post_init__(self):
        if not self.name.isidentifier():
            raise ValueError(f"question name {self.name!r}: use a Python identifier (letters, digits, _)")
        if not (self.public and self.hidden):
            raise ValueError(f"question {self.name!r}: needs at least one public and one hidden check")
        if "SOLUTION" not in self.solution:
            raise ValueError(f"question {self.name!r}: mark the answer with otter's `# SOLUTION` markers")


@dataclass(frozen=True)
class Assignment:
    slug: str
    title: str
    setup: str
    questions: tuple[Question, ...] = field(default_factory=tuple)


def assignment_slugs() -> list[str]:
    return sorted(p.stem for p in ASSIGNMENTS.glob("*.py") if not p.name.startswith("_"))


def load_assignment(slug: str) -> Assignment:
    """Read `assignments/<slug>.py` (its TITLE, SETUP and QUESTIONS)."""
    path = ASSIGNMENTS / f"{slug}.py"
    if not path.exists():
        raise FileNotFoundError(f"no assignment for {slug!r}; there are: {', '.join(assignment_slugs())}")
    spec = importlib.util.spec_from_file_location(f"_assignment_{slug}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    questions = tuple(q if isinstance(q, Question) else Question(**{**q, "public": tuple(q["public"]),
                                                                     "hidden": tuple(q["hidden"])})
                      for q in module.QUESTIONS)
    names = [q.name for q in questions]
    if len(set(names)) != len(names):
        raise ValueError(f"assignments/{slug}.py: question names repeat: {names}")
    return Assignment(slug, module.TITLE, module.SETUP, questions)


def _code(source: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell(textwrap.dedent(source).strip("\n"))


def master_notebook(assignment: Assignment, branch: str = "colab") -> nbformat.NotebookNode:
    """The otter-grader master notebook of an assignment."""
    raw = nbformat.v4.new_raw_cell
    config = textwrap.dedent(f"""\
        # ASSIGNMENT CONFIG
        name: {assignment.slug}-exercises
        init_cell: false
        check_all_cell: false
        export_cell: false
        run_tests: true
        solutions_pdf: false
        generate: true
        tests:
          files: true
          url_prefix: {TESTS_URL.format(branch=branch, slug=assignment.slug)}
        """)
    cells = [raw(config),
             nbformat.v4.new_markdown_cell(f"# {assignment.title}\n\nGraded exercises for the chapter "
                                           f"`{assignment.slug}`. Write your answer where you see `...`, "
                                           "then run the `grader.check` cell below it: it runs the public "
                                           "checks. Your grade comes from hidden checks on the same answers."),
             _code(INIT.format(slug=assignment.slug, url=TESTS_URL.format(branch=branch, slug=assignment.slug))),
             _code(assignment.setup)]
    for q in assignment.questions:
        cells += [raw(f"# BEGIN QUESTION\nname: {q.name}\npoints: {q.points}"),
                  nbformat.v4.new_markdown_cell(textwrap.dedent(q.prompt).strip("\n")),
                  raw("# BEGIN SOLUTION"), _code(q.solution), raw("# END SOLUTION"),
                  raw("# BEGIN TESTS")]
        cells += [_code(t) for t in q.public]
        cells += [_code("# HIDDEN\n" + textwrap.dedent(t).strip("\n")) for t in q.hidden]
        cells += [raw("# END TESTS"), raw("# END QUESTION")]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def assign(slug: str, out: Path = BUILD, run_tests: bool = True) -> Path:
    """Write the master notebook and run `otter assign`, which (unless `run_tests` is False)
    executes the reference solutions and fails if a check fails on them. Returns the folder with
    `student/` and `autograder/`."""
    assignment = load_assignment(slug)
    dest = out / slug
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    master = dest / f"{slug}-exercises.ipynb"
    nbformat.write(master_notebook(assignment), master)
    _otter(["assign", str(master), str(dest / "dist"), *([] if run_tests else ["--no-run-tests"])], cwd=dest)
    return dest / "dist"


def _otter(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "otter", *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"otter {args[0]} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done


def grade(dist: Path, submission: Path) -> dict[str, tuple[float, float]]:
    """Grade one submission notebook with `otter run`: {question: (score, max score)}."""
    zips = sorted((dist / "autograder").glob("*.zip"))
    if not zips:
        raise FileNotFoundError(f"no autograder zip under {dist / 'autograder'}: run assign first")
    with tempfile.TemporaryDirectory() as tmp:
        _otter(["run", "-a", str(zips[-1]), "-o", tmp, str(submission)], cwd=submission.parent)
        results = json.loads((Path(tmp) / "results.json").read_text())
    return {t["name"]: (t["score"], t["max_score"]) for t in results["tests"] if "max_score" in t}


def wrong_submission(assignment: Assignment, reference: Path, dest: Path) -> Path | None:
    """The reference notebook with each question's `wrong` answer in place of its solution cell."""
    wrong = {q.name: q for q in assignment.questions if q.wrong}
    if not wrong:
        return None
    nb = nbformat.read(reference, as_version=4)
    for i, cell in enumerate(nb.cells[1:], start=1):
        for name, q in wrong.items():
            if cell.cell_type == "code" and cell.source.strip() == f'grader.check("{name}")':
                answer = nb.cells[i - 1]
                if "otter_assign_solution_cell" not in answer.metadata.get("tags", []):
                    raise ValueError(f"{assignment.slug}/{name}: no answer cell before its check")
                answer.source = textwrap.dedent(q.wrong).strip("\n")
    nbformat.write(nb, dest)
    return dest


@dataclass
class GradeReport:
    slug: str
    reference: dict
    blank: dict
    wrong: dict | None
    per_question_wrong: bool = False  # the wrong answers were scored one question at a time

    @staticmethod
    def total(scores: dict | None) -> str:
        if scores is None:
            return "-"
        return f"{sum(s for s, _ in scores.values()):g}/{sum(m for _, m in scores.values()):g}"

    def problems(self) -> list[str]:
        out = [f"{self.slug}: reference loses marks on {q} ({s:g}/{m:g})" for q, (s, m) in self.reference.items() if s < m]
        out += [f"{self.slug}: a blank answer scores on {q} ({s:g}/{m:g})" for q, (s, m) in self.blank.items() if s > 0]
        if self.per_question_wrong:
            out += [f"{self.slug}: the wrong answer gets full marks on {q}" for q, (s, m) in self.wrong.items() if s >= m]
        elif self.wrong is not None and sum(s for s, _ in self.wrong.values()) >= sum(m for _, m in self.wrong.values()):
            out.append(f"{self.slug}: the wrong answer gets full marks")
        return out


def score_variants(name: str, variants: dict[str, str], env: dict, tests: str = "tests") -> dict:
    """Run each answer variant (source code) in `env`, score it with otter's test file for question
    `name` (public and hidden checks), then restore `env` as it was: {variant: [score, possible]}.
    Runs inside the kernel (see `probe_notebook`). Objects mutated in place by a variant are not
    restored; the variants graded here only bind names."""
    before = dict(env)
    scores = {}
    for label, source in variants.items():
        try:
            try:
                exec(compile(source, f"<{name}: {label} answer>", "exec"), env)
            except Exception:  # an answer that raises is graded on what it left, as otter run does
                pass
            scores[label] = score_now(name, env, tests)
        finally:
            env.clear()
            env.update(before)
    return scores


def score_now(name: str, env: dict, tests: str = "tests") -> list[float]:
    """Otter's score for question `name` on the state `env`: [score, possible]."""
    from otter.test_files import OKTestFile  # otter assign writes OK-format test files

    test_file = OKTestFile.from_file(str(Path(tests) / f"{name}.py"))
    test_file.run(env)
    return [float(test_file.score), float(test_file.possible)]


PROBE_RESULTS = "grade-test-scores.json"


def probe_notebook(assignment: Assignment, dist: Path) -> nbformat.NotebookNode:
    """The autograder notebook with, before each reference answer, a cell that scores the blank
    (from the student notebook) and the wrong answer, and in place of its `grader.check` cell one
    that scores the reference; the last cell writes every score to PROBE_RESULTS."""
    name = f"{assignment.slug}-exercises.ipynb"
    reference = nbformat.read(dist / "autograder" / name, as_version=4)
    blank = {q: cell.source for q, cell in _answer_cells(nbformat.read(dist / "student" / name, as_version=4))}
    answers = dict(_answer_cells(reference))
    wrong = {q.name: textwrap.dedent(q.wrong).strip("\n") for q in assignment.questions}
    if set(answers) != set(wrong) or set(blank) != set(wrong):
        raise ValueError(f"{assignment.slug}: answer cells {sorted(answers)} / student {sorted(blank)} do not match "
                         f"the questions {sorted(wrong)}")
    cells = []
    for cell in reference.cells:
        question = next((q for q, answer in answers.items() if answer is cell), None)
        if question is not None:
            given, blank_rest, reference_rest = split_given_code(blank[question], cell.source)
            if given:  # the code every submission starts with (often a training run) runs once
                cells.append(_code(given))
                cell = nbformat.v4.new_code_cell(reference_rest)
            variants = {"blank": blank_rest, "wrong": wrong[question]}
            cells.append(_code(f"from icml26.grading import score_variants, score_now\n"
                               f"_scores = globals().setdefault('_scores', {{}})\n"
                               f"_scores[{question!r}] = score_variants({question!r}, {variants!r}, globals())"))
        checked = re.fullmatch(r'grader\.check\("(\w+)"\)', cell.source.strip()) if cell.cell_type == "code" else None
        if checked:  # scored here with every check (grader.check would fetch the public ones by URL)
            cells.append(_code(f"_scores[{checked[1]!r}]['reference'] = score_now({checked[1]!r}, globals())"))
        else:
            cells.append(cell)
    cells.append(_code(f"import json\nopen({PROBE_RESULTS!r}, 'w').write(json.dumps(_scores))"))
    reference.cells = cells
    return reference


def split_given_code(blank: str, reference: str) -> tuple[str, str, str]:
    """(given, blank rest, reference rest): the leading whole statements that the blank and the
    reference answer share (the code the exercise hands out, before its solution), and what follows
    in each. The probe runs the given code once, before the variants, instead of once per variant:
    a submission starts from the same state either way. ("", blank, reference) when nothing complete
    is shared."""
    shared = []
    for blank_line, reference_line in zip(blank.splitlines(), reference.splitlines()):
        if blank_line != reference_line:
            break
        shared.append(blank_line)
    while shared:  # the longest shared prefix that ends on a statement boundary in both
        given = "\n".join(shared)
        rests = ["\n".join(src.splitlines()[len(shared):]) for src in (blank, reference)]
        try:
            for code in (given, *rests):
                ast.parse(code)
        except SyntaxError:
            shared.pop()
            continue
        return (given, *rests) if given.strip() else ("", blank, reference)
    return "", blank, reference


def _answer_cells(nb: nbformat.NotebookNode):
    """(question, answer cell) pairs: the code cell just before each `grader.check("<question>")`."""
    for before, cell in zip(nb.cells, nb.cells[1:]):
        checked = re.fullmatch(r'grader\.check\("(\w+)"\)', cell.source.strip()) if cell.cell_type == "code" else None
        if checked:
            if before.cell_type != "code":
                raise ValueError(f"question {checked[1]}: no answer cell before its check")
            yield checked[1], before


def grade_in_one_run(slug: str, out: Path = BUILD) -> GradeReport:
    """`otter assign` (without its own run), then ONE execution of the probe notebook, which scores
    the reference, blank and wrong answer of every question with otter's test files."""
    from nbclient import NotebookClient

    assignment = load_assignment(slug)
    dist = assign(slug, out, run_tests=False)
    probe = probe_notebook(assignment, dist)
    folder = dist / "autograder"
    (folder / PROBE_RESULTS).unlink(missing_ok=True)
    NotebookClient(probe, timeout=1800, kernel_name="python3", allow_errors=False,
                   resources={"metadata": {"path": str(folder)}}).execute()
    nbformat.write(probe, folder / f"probe-{slug}-exercises.ipynb")
    scores = json.loads((folder / PROBE_RESULTS).read_text())
    missing = [q.name for q in assignment.questions if set(scores.get(q.name, {})) != {"blank", "wrong", "reference"}]
    if missing:
        raise RuntimeError(f"{slug}: the probe notebook scored no reference/blank/wrong for {missing}")
    pick = lambda label: {q: tuple(v[label]) for q, v in scores.items()}
    return GradeReport(slug, pick("reference"), pick("blank"), pick("wrong"), per_question_wrong=True)


def grade_test(slug: str, regrade_reference: bool = False, out: Path = BUILD) -> GradeReport:
    """Assign (otter executes the reference and fails if any check, hidden ones included, fails on
    it), then grade the blank student notebook and, where the assignment names one, a wrong answer.
    `regrade_reference` also grades the reference with `otter run` (its scores, for a report)."""
    assignment = load_assignment(slug)
    dist = assign(slug, out)
    name = f"{slug}-exercises.ipynb"
    full = {q.name: (float(q.points), float(q.points)) for q in assignment.questions}
    reference = grade(dist, dist / "autograder" / name) if regrade_reference else full
    blank = grade(dist, dist / "student" / name)
    wrong_nb = wrong_submission(assignment, dist / "autograder" / name, dist / f"wrong-{name}")
    wrong = grade(dist, wrong_nb) if wrong_nb else None
    return GradeReport(slug, reference, blank, wrong)


def share_cores() -> None:
    """Let idle OpenMP threads sleep in the kernels started from here (``OMP_WAIT_POLICY=PASSIVE``,
    unless the caller set a policy). With two kernels of two threads each on two cores, threads
    that spin while they wait starve the other kernel's: `make grade-test` took 15 min on the
    book's 2-core machine with the default policy and under 3 min with this one. The wait policy
    changes no result (what a thread computes does not depend on how its idle siblings wait)."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["assign", "test"])
    parser.add_argument("slugs", nargs="*", help="chapters (default: every assignment)")
    parser.add_argument("--jobs", type=int, default=1, help="chapters graded at once")
    parser.add_argument("--otter", action="store_true",
                        help="grade three whole submissions per chapter with otter run (slower; default: "
                             "one execution per chapter scores all three, see grade_in_one_run)")
    parser.add_argument("--regrade-reference", action="store_true",
                        help="with --otter: also grade the reference with otter run (assign already checks it)")
    args = parser.parse_intermixed_args(argv)
    slugs = args.slugs or assignment_slugs()
    if args.command == "assign":
        for slug in slugs:
            print(f"{slug}: {assign(slug)}")
        return 0
    from concurrent.futures import ThreadPoolExecutor

    if args.jobs > 1:
        share_cores()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:  # each job runs otter subprocesses
        run = (lambda s: grade_test(s, args.regrade_reference)) if args.otter else grade_in_one_run
        reports = list(pool.map(run, slugs))
    print(f"{'chapter':24} {'questions':>9} {'reference':>10} {'blank':>8} {'wrong':>8}")
    problems = []
    for report in reports:
        print(f"{report.slug:24} {len(report.reference):>9} {report.total(report.reference):>10} "
              f"{report.total(report.blank):>8} {report.total(report.wrong):>8}")
        problems += report.problems()
    for p in problems:
        print("FAIL", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
