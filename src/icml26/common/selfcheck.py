"""Self-check questions: a chapter's auto-checked quiz, in the published book and in a notebook.

Each chapter's questions live in `icml26/common/selfchecks/<slug>.yml`: one `predict` question (asked before
the chapter's main run; its answer is what the run shows) and 7 to 11 `questions` (multiple choice,
or a number with a tolerance). `quiz_html` renders them as static HTML with a few lines of
JavaScript that check an answer in the browser, so the quiz works with no kernel: on the published
page (the book's `{self-check}` directive) and in Jupyter or Colab (`show`).

`python -m icml26.common.selfcheck [slug ...]` validates the files.
"""
from __future__ import annotations

import html
import math
import re
import sys
from dataclasses import dataclass
from importlib import resources

import yaml

PARTS = ("predict", "review")
MIN_QUESTIONS, MAX_QUESTIONS = 8, 12  # in total, the predict question included


@dataclass(frozen=True)
class Question:
    prompt: str
    explain: str
    options: tuple[str, ...] = ()
    answer: int | None = None   # index into options (choice questions)
    number: float | None = None  # numeric questions
    tolerance: float = 0.0

    @property
    def kind(self) -> str:
        return "choice" if self.options else "number"

    def accepts(self, response) -> bool:
        """Whether a response (an option index, or a number) is right."""
        if self.kind == "choice":
            return response == self.answer
        try:
            value = float(response)
        except (TypeError, ValueError):
            return False
        return math.isfinite(value) and abs(value - self.number) <= self.tolerance


@dataclass(frozen=True)
class SelfCheck:
    slug: str
    predict: Question
    questions: tuple[Question, ...]

    def part(self, name: str) -> tuple[Question, ...]:
        if name not in PARTS:
            raise ValueError(f"self-check part {name!r}: use one of {PARTS}")
        return (self.predict,) if name == "predict" else self.questions


def _question(raw, where: str) -> Question:
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: a question is a mapping with prompt, explain and options+answer or number")
    unknown = set(raw) - {"prompt", "explain", "options", "answer", "number", "tolerance"}
    if unknown:
        raise ValueError(f"{where}: unknown fields {sorted(unknown)}")
    for key in ("prompt", "explain"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise ValueError(f"{where}: needs a non-empty '{key}'")
    if "options" in raw:
        options = raw["options"]
        if not (isinstance(options, list) and len(options) >= 2 and all(isinstance(o, str) and o.strip() for o in options)):
            raise ValueError(f"{where}: 'options' must list at least two non-empty strings")
        if len(set(options)) != len(options):
            raise ValueError(f"{where}: two options are the same")
        answer = raw.get("answer")
        if not (isinstance(answer, int) and not isinstance(answer, bool) and 0 <= answer < len(options)):
            raise ValueError(f"{where}: 'answer' must be the 0-based index of an option (0..{len(options) - 1})")
        if "number" in raw:
            raise ValueError(f"{where}: a question has options or a number, not both")
        return Question(raw["prompt"], raw["explain"], tuple(options), answer)
    number = raw.get("number")
    if not isinstance(number, (int, float)) or isinstance(number, bool) or not math.isfinite(number):
        raise ValueError(f"{where}: needs 'options' and 'answer', or a finite 'number'")
    tolerance = raw.get("tolerance", 0)
    if not isinstance(tolerance, (int, float)) or tolerance < 0:
        raise ValueError(f"{where}: 'tolerance' must be a number >= 0")
    return Question(raw["prompt"], raw["explain"], number=float(number), tolerance=float(tolerance))


def parse(slug: str, data) -> SelfCheck:
    """Validate a chapter's self-check data (the YAML, loaded)."""
    where = f"selfcheck/{slug}.yml"
    if not isinstance(data, dict) or set(data) != {"predict", "questions"}:
        raise ValueError(f"{where}: needs exactly two keys, 'predict' (one question) and 'questions' (a list)")
    predict = _question(data["predict"], f"{where} predict")
    if predict.kind != "choice":
        raise ValueError(f"{where} predict: the predict-before-you-run question is multiple choice")
    raw = data["questions"]
    if not isinstance(raw, list):
        raise ValueError(f"{where}: 'questions' must be a list")
    questions = tuple(_question(q, f"{where} question {i + 1}") for i, q in enumerate(raw))
    total = 1 + len(questions)
    if not MIN_QUESTIONS <= total <= MAX_QUESTIONS:
        raise ValueError(f"{where}: {total} questions in all; a self-check has {MIN_QUESTIONS} to {MAX_QUESTIONS}")
    return SelfCheck(slug, predict, questions)


def load(slug: str) -> SelfCheck:
    """A chapter's self-check, read from the package (so it works on a Colab install too)."""
    path = resources.files("icml26") / "common" / "selfchecks" / f"{slug}.yml"
    if not path.is_file():
        raise FileNotFoundError(f"no self-check for {slug!r} (expected icml26/common/selfchecks/{slug}.yml)")
    return parse(slug, yaml.safe_load(path.read_text(encoding="utf-8")))


def available() -> list[str]:
    folder = resources.files("icml26") / "common" / "selfchecks"
    return sorted(p.name.removesuffix(".yml") for p in folder.iterdir() if p.name.endswith(".yml"))


# One script per page (defined once, whatever the number of quizzes): it checks one question.
_SCRIPT = """<script>
window.icml26SelfCheck = window.icml26SelfCheck || function (button) {
  var q = button.closest('.selfcheck-q'), ok = false, given = false;
  if (q.dataset.kind === 'choice') {
    var picked = q.querySelector('input[type=radio]:checked');
    given = !!picked; ok = given && picked.value === q.dataset.answer;
  } else {
    var raw = q.querySelector('input[type=text]').value.trim(), v = Number(raw);
    given = raw !== '' && isFinite(v);
    ok = given && Math.abs(v - Number(q.dataset.answer)) <= Number(q.dataset.tolerance);
  }
  var out = q.querySelector('.selfcheck-result');
  out.hidden = false;
  out.className = 'selfcheck-result ' + (given ? (ok ? 'right' : 'wrong') : 'none');
  out.querySelector('.selfcheck-verdict').textContent =
    given ? (ok ? 'Right.' : 'Not quite.') : 'Pick or type an answer first.';
  out.querySelector('.selfcheck-explain').hidden = !given;
};
</script>"""


INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)(?P<tex>[^$\n]+?)(?<![\\\s])\$")


def text_with_math_html(text: str) -> str:
    """Escaped text whose `$...$` becomes the inline-math element MathJax typesets on the book's
    pages (Sphinx's `span.math` with `\\( \\)` delimiters). Shared with icml26.common.explorer."""
    parts, last = [], 0
    for match in INLINE_MATH.finditer(text):
        parts.append(html.escape(text[last:match.start()]))
        parts.append(f"<span class='math notranslate nohighlight'>\\({html.escape(match['tex'])}\\)</span>")
        last = match.end()
    parts.append(html.escape(text[last:]))
    return "".join(parts)


def _question_html(q: Question, qid: str, number: int) -> str:
    prompt = text_with_math_html(q.prompt)
    if q.kind == "choice":
        # aria-label: an option written only in math has no text a screen reader finds in the label
        body = "".join(f"<label><input type='radio' name='{qid}' value='{i}' aria-label='{html.escape(o, quote=True)}'> "
                       f"{text_with_math_html(o)}</label>"
                       for i, o in enumerate(q.options))
        data = f"data-kind='choice' data-answer='{q.answer}'"
        right = text_with_math_html(q.options[q.answer])
    else:
        body = (f"<label>Your answer: <input type='text' inputmode='decimal' size='10' "
                f"aria-label='answer to question {number}'></label>")
        data = f"data-kind='number' data-answer='{q.number:g}' data-tolerance='{q.tolerance:g}'"
        right = f"{q.number:g}" + (f" (within {q.tolerance:g})" if q.tolerance else "")
    return (f"<div class='selfcheck-q' {data}><p class='selfcheck-prompt'><b>{number}.</b> {prompt}</p>"
            f"<div class='selfcheck-options'>{body}</div>"
            "<button type='button' onclick='icml26SelfCheck(this)'>Check</button>"
            "<div class='selfcheck-result' hidden role='status'><span class='selfcheck-verdict'></span> "
            f"<span class='selfcheck-explain' hidden>The answer: {right}. {text_with_math_html(q.explain)}</span></div></div>")


def quiz_html(slug: str, part: str = "review") -> str:
    """The quiz for one part of a chapter's self-check, as self-contained HTML."""
    check = load(slug)
    questions = check.part(part)
    title = ("Predict before you run" if part == "predict"
             else f"Self-check: {len(questions)} questions")
    items = "".join(_question_html(q, f"sc-{slug}-{part}-{i}", i + 1) for i, q in enumerate(questions))
    return (f"<div class='selfcheck selfcheck-{part}'><p class='selfcheck-title'><b>{title}</b></p>"
            f"{items}</div>{_SCRIPT}")


def show(slug: str, part: str = "review") -> None:
    """Display a chapter's self-check in a notebook (Jupyter, Colab)."""
    from IPython.display import HTML, display

    display(HTML(quiz_html(slug, part)))


def main(argv: list[str]) -> int:
    slugs = argv or available()
    failed = 0
    for slug in slugs:
        try:
            check = load(slug)
        except (ValueError, FileNotFoundError, yaml.YAMLError) as error:
            print(f"FAIL {slug}: {error}")
            failed += 1
            continue
        numbers = sum(q.kind == "number" for q in check.questions)
        print(f"ok   {slug}: predict + {len(check.questions)} questions ({numbers} numeric)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


__all__ = ["PARTS", "Question", "SelfCheck", "available", "load", "parse", "quiz_html", "show"]
