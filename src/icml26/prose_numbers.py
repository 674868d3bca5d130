"""Run figures typed by hand into a chapter's prose (CONTRIBUTING.md, "Numbers in prose").

A figure of the run quoted in markdown is glued, never typed. This module finds the likely
exceptions mechanically, from a stored notebook alone: the numbers its code cells printed (stream
text, ``text/plain``, HTML and Markdown tables, glued texts; never the listings ``show_source``
prints, which are source code) against the numbers typed in its markdown cells' running prose
(math, inline code, code blocks, roles such as ``{cite}`` and ``{glue:text}``, links' addresses,
HTML tags, heading numbers and references such as "Table 3" or "Section 4.2" are not prose).

The rule (``typed_run_figures``). A typed number counts if it has at least two significant digits
(leading and trailing zeros do not count: 0.63, 0.098, 126.5, 1,200 count; 0.5, 0.05, 30, 500 do
not) and is not an integer up to 20 or a year (1950-2030). It is a hit when the run printed the
same number:

* the same digits once thousands separators, the sign and trailing decimal zeros are dropped
  ("0.63" and "0.630", "1,200" and "1200"), a percentage also standing for its fraction ("63%"
  and "0.63");
* or, for a typed number with a decimal point and at least two significant digits, the printed
  number with more decimals rounds to it ("0.63" and "0.6317").

A hit is a candidate, not a verdict: the paper's own figures, constants and config values that the
run also prints, and the inputs of a worked example are legitimately typed. The guard test
(``tests/test_prose_numbers.py``) keeps those in a per-chapter allowlist, one reason each.

What it cannot see: a typed figure the run never prints (read off a plot, or from a run that is not
stored), a one-digit figure, and numbers inside math.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, InvalidOperation

from icml26.common.glued import GLUE_MIME, format_glued

#: A number as written: optional thousands groups, decimals, exponent; not part of a word
#: ("C1", "x86_64"), of a dotted version ("2.13.0") or of a longer number.
NUMBER = re.compile(r"(?<![\w.])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?(?!\d|\.\d)")

_FENCE = re.compile(r"^\s*(?P<mark>`{3,}|~{3,})(?P<info>.*)$")
_PROSE_DIRECTIVES = re.compile(r"^\{(?!code|code-block|code-cell|literalinclude|math)[\w:-]+\}")
_DISPLAY_MATH = re.compile(r"\$\$.*?\$\$", re.S)
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)(?:\\.|[^$\\])+?\$")
_ROLE = re.compile(r"\{[\w:.-]+\}`[^`]*`")
_INLINE_CODE = re.compile(r"(`+).+?\1", re.S)
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_URL = re.compile(r"(?:https?://|www\.)\S+|\barXiv:\s*\d{4}\.\d{4,5}(?:v\d+)?", re.I)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_HEADING_NUMBER = re.compile(r"^(\s*#+\s*)(?:\d+(?:\.\d+)*\.?\s+)", re.M)
_LABEL = re.compile(r"^\s*\([\w:.-]+\)=\s*$", re.M)
_OPTION = re.compile(r"^\s*:[\w-]+:.*$", re.M)
_FOOTNOTE = re.compile(r"\[\^[^\]]*\]")
#: References to parts of a paper ("Table 3", "Section 4.2", "Eq. (5)", "Appendix B.1").
_REFERENCE = re.compile(
    r"\b(?:Tables?|Figs?\.|Figures?|Eqs?\.|Equations?|Sections?|Secs?\.|§|Appendix|Appendices|Theorems?|"
    r"Lemmas?|Propositions?|Corollary|Corollaries|Definitions?|Algorithms?|Assumptions?|Remarks?|"
    r"Examples?|Chapters?|Lines?|pp?\.)\s*\(?[A-Z]?\d+(?:\.\d+)*\)?(?:\s*(?:and|,|-|–)\s*\(?[A-Z]?\d+(?:\.\d+)*\)?)*",
    re.I)

#: The Verbatim block of a pygments listing: an output that shows source code, not a run's figure.
_LISTING = "\\begin{Verbatim}"
_STYLE = re.compile(r"<(style|script)\b.*?</\1>", re.S | re.I)
_DATA_URI = re.compile(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=]+")
_ROW_END = re.compile(r"</(?:tr|p|li|div|h\d)>|<br\s*/?>", re.I)
_CELL_END = re.compile(r"</t[dh]>", re.I)
_FIGURE_REPR = re.compile(r"<(?:Figure|matplotlib|pandas|IPython)[^>]*>")


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


# --- the prose ---------------------------------------------------------------------------------------

def _drop_code_blocks(source: str) -> str:
    """Code blocks go; the body of a MyST directive (admonition, warning, self-check) stays prose,
    without its `:option:` lines. Nested fences are followed (a ~~~python block in an admonition)."""
    kept, stack = [], []  # stack of (mark char, length, is_prose)
    for line in source.split("\n"):
        fence = _FENCE.match(line)
        if fence:
            mark, info = fence["mark"], fence["info"].strip()
            if stack and not info and mark[0] == stack[-1][0] and len(mark) >= stack[-1][1]:
                stack.pop()
                kept.append("")
                continue
            if not stack or stack[-1][2]:
                stack.append((mark[0], len(mark), bool(_PROSE_DIRECTIVES.match(info))))
                kept.append("")
                continue
        kept.append(line if all(prose for *_, prose in stack) else "")
    return _OPTION.sub("", "\n".join(kept))


def prose_text(source: str) -> str:
    """The running prose of a markdown cell: what is left once everything that is not prose is blanked
    (a span becomes a space; a code block's lines stay, empty, so paragraphs survive)."""
    text = _HTML_COMMENT.sub(" ", source)
    text = _drop_code_blocks(text)
    text = _DISPLAY_MATH.sub(" ", text)
    text = _ROLE.sub(" ", text)
    text = _INLINE_CODE.sub(" ", text)
    text = _INLINE_MATH.sub(" ", text)
    text = _IMAGE.sub(" ", text)
    text = _LINK.sub(r"\1", text)
    text = _URL.sub(" ", text)
    text = _TAG.sub(" ", text)
    text = _FOOTNOTE.sub(" ", text)
    text = _LABEL.sub("", text)
    text = _HEADING_NUMBER.sub(r"\1", text)
    return _REFERENCE.sub(" ", text)


# --- numbers -----------------------------------------------------------------------------------------

def _decimal(token: str) -> Decimal:
    return abs(Decimal(token.replace(",", "")))


def number_key(value: Decimal) -> str:
    """The digits of a number, as compared: no sign, no exponent, no trailing decimal zeros."""
    text = format(abs(value), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text or "0"


def _keys(token: str, percent: bool) -> set[str]:
    try:
        value = _decimal(token)
    except InvalidOperation:
        return set()
    keys = {number_key(value)}
    if percent:
        keys.add(number_key(value / 100))
    return keys


def _is_percent(text: str, end: int) -> bool:
    return text[end:end + 2].lstrip(" \u202f\u00a0")[:1] == "%"


def significant_digits(token: str) -> int:
    """Significant digits as compared: leading zeros and trailing zeros ("0.50", "500") do not count."""
    mantissa = re.split(r"[eE]", token)[0].replace(",", "").replace(".", "")
    return len(mantissa.strip("0"))


def counts(token: str) -> bool:
    """Whether a typed number is one the guard looks at: at least two significant digits, not an
    integer up to 20, not a year. One-digit values (0.5, 0.05, 30, 500) are overwhelmingly settings,
    thresholds and grid points, and would match some printed number on almost every page."""
    if significant_digits(token) < 2:
        return False
    if "." in token or "e" in token.lower():
        return True
    value = int(token.replace(",", ""))
    return value > 20 and not ("," not in token and 1950 <= value <= 2030)


@dataclass(frozen=True)
class Printed:
    """A number a code cell's stored output shows."""

    token: str
    cell: int
    context: str
    value: Decimal
    percent: bool


def _output_texts(cell: dict) -> list[str]:
    texts = []
    for out in cell.get("outputs", []):
        kind = out.get("output_type")
        if kind == "stream":
            texts.append(_text(out.get("text", "")))
            continue
        data = out.get("data", {})
        if "text/latex" in data and _LISTING in _text(data["text/latex"]):
            continue  # a source listing (show_source, excerpt)
        if GLUE_MIME in data:
            texts.append(format_glued(_text(data[GLUE_MIME])))
            continue
        if "text/markdown" in data:
            texts.append(_text(data["text/markdown"]))
        elif "text/html" in data:
            page = _DATA_URI.sub(" ", _STYLE.sub(" ", _text(data["text/html"])))
            page = _CELL_END.sub(" | ", _ROW_END.sub("\n", " ".join(page.split())))
            texts.append(html.unescape(_TAG.sub(" ", page)))
        elif "text/plain" in data:
            texts.append(_FIGURE_REPR.sub(" ", _text(data["text/plain"])))
    return texts


def printed_numbers(cells: list[dict]) -> list[Printed]:
    """Every number shown by the stored outputs of a notebook's code cells (v4 cell dicts)."""
    found = []
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        for text in _output_texts(cell):
            for match in NUMBER.finditer(text):
                try:
                    value = _decimal(match[0])
                except InvalidOperation:
                    continue
                line_start = text.rfind("\n", 0, match.start()) + 1
                line_end = text.find("\n", match.end())
                line = " ".join(text[line_start:None if line_end < 0 else line_end].split())
                found.append(Printed(match[0], index, line[:160], value, _is_percent(text, match.end())))
    return found


@dataclass(frozen=True)
class Hit:
    """A number typed in the prose that the stored run also printed."""

    slug: str
    cell: int
    token: str
    sentence: str
    printed: Printed
    rounded: bool  # matched by rounding the printed number, not digit for digit

    def __str__(self) -> str:
        how = "rounds" if self.rounded else "equals"
        return (f"{self.slug} cell {self.cell}: {self.token!r} in \"{self.sentence}\" {how} "
                f"{self.printed.token!r} printed by cell {self.printed.cell} (\"{self.printed.context}\")")


def _sentence(text: str, start: int, end: int, width: int = 90) -> str:
    """The sentence (or the table row) around a typed number, at most `width` characters each side."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = len(text) if text.find("\n", end) < 0 else text.find("\n", end)
    if text[line_start:line_end].lstrip().startswith("|"):
        left, right = line_start, line_end
    else:  # a sentence may wrap over lines, not over a paragraph or a list item
        para_start = max([i + skip for mark, skip in (("\n\n", 2), ("\n- ", 1))
                          if (i := text.rfind(mark, 0, start)) >= 0], default=0)
        para_end = min(i for i in (text.find("\n\n", end), text.find("\n- ", end), len(text)) if i >= 0)
        flat = text.replace("\n", " ")
        stop = flat.rfind(". ", para_start, start)
        left = para_start if stop < 0 else stop + 2
        right = min(i for i in (flat.find(". ", end, para_end), para_end) if i >= 0) + 1
    left, right = max(left, start - width), min(right, end + width)
    return " ".join(text[left:right].split())


def _rounds_to(value: Decimal, token: str) -> bool:
    typed = Decimal(token.replace(",", ""))
    exponent = typed.as_tuple().exponent
    if value.as_tuple().exponent >= exponent:
        return False  # printed with no more decimals than typed: only an exact match counts
    return any(value.quantize(Decimal(1).scaleb(exponent), rounding=mode) == typed
               for mode in (ROUND_HALF_EVEN, ROUND_HALF_UP))


def typed_run_figures(slug: str, cells: list[dict]) -> list[Hit]:
    """The numbers typed in a notebook's prose that equal (or round) a number its stored run printed."""
    printed = printed_numbers(cells)
    exact: dict[str, Printed] = {}
    for number in printed:
        for key in {number_key(number.value)} | ({number_key(number.value / 100)} if number.percent else set()):
            exact.setdefault(key, number)
    hits = []
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "markdown":
            continue
        text = prose_text(_text(cell.get("source", "")))
        for match in NUMBER.finditer(text):
            token = match[0]
            if not counts(token):
                continue
            keys = _keys(token, _is_percent(text, match.end()))
            same = next((exact[k] for k in sorted(keys) if k in exact), None)
            rounded = None
            if same is None and "." in token and "e" not in token.lower():
                rounded = next((p for p in printed if p.value and _rounds_to(p.value, token)), None)
            if same or rounded:
                hits.append(Hit(slug, index, token, _sentence(text, match.start(), match.end()),
                                same or rounded, same is None))
    return hits
