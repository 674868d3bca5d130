"""The book's glossary (`book/glossary.md`) and where the chapters first use its terms.

The glossary page is one MyST ``{glossary}`` directive: a term on a line of its own, its definition
indented below it, ending with "Used in:" and `{doc}` links to the chapters that use the term
(`read_glossary`). A chapter marks the first use of each of its terms, in running prose, with the
`{term}` role, whose target is the glossary's term text exactly
(``{term}`MUPE <MUPE (Mutual-Understanding Position Encoding)>` ``), and defines the term there.

`problems` checks one chapter's markdown cells against the glossary:

- every `{term}` target is a term of the glossary;
- for each term whose "Used in" links the chapter, no prose use of the term comes before the
  chapter's first `{term}` role for it (a use with no role at all is a use before it);
- an acronym's first `{term}` role stands in a paragraph that spells the acronym out.

Running prose is the text of the markdown cells without headings, run-in headings (a bold label
such as ``**Seeds.**`` that opens a paragraph or a list item), code, math, table rows, MyST targets
and comments, directive options, the bodies of directives other than admonitions, link addresses
and the content of roles other than `{term}` (`prose`), and the chapter's byline (the paragraph
under its title: authors, venue, links). A use is one of the term's surface forms
(`Entry.forms`): the words before its parenthesis and, where the parenthesis spells the term out,
the words inside it. `FORMS` gives the forms of the terms for which that rule is wrong,
`ACRONYM_ONLY` the terms of which only the acronym counts, and `PATTERNS` the terms that need a
regular expression of their own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

#: Surface forms for the terms whose text does not give them by the rule in `Entry.forms`.
FORMS: dict[str, tuple[str, ...]] = {
    "CTDE (centralised training with decentralised execution)": (
        "CTDE", "centralised training with decentralised execution",
        "centralised training and decentralised execution"),
    "Falcon/RTI (Falcon and RTI-DP)": ("Falcon", "RTI-DP", "RTI"),
    "F1 score": ("F1",),
    "KL divergence (Kullback–Leibler divergence)": ("KL", "Kullback–Leibler"),
    "Quine–McCluskey algorithm": ("Quine–McCluskey",),
    "Reynolds operator (Reynolds average)": ("Reynolds",),
    "ROC-AUC (area under the receiver operating characteristic curve)": (
        "ROC-AUC", "AUC", "area under the receiver operating characteristic curve"),
    "SAMOE (Self-Awareness MoE)": ("SAMOE", "Self-Awareness MoE", "self-awareness mixture of experts"),
    "straight-through estimator": ("straight-through",),
    "SwiGLU (Swish-gated linear unit)": ("SwiGLU", "Swish-gated linear unit"),
    "W2SG (weak-to-strong generalization)": ("W2SG", "W2S", "weak-to-strong generalization"),
    "Wasserstein distance": ("Wasserstein",),
    "Weisfeiler–Lehman kernel": ("Weisfeiler–Lehman", "WL"),
}

#: Terms whose spelled-out words are everyday phrases ('language model', 'reinforcement learning'),
#: often part of a longer name: only the acronym counts as a use.
ACRONYM_ONLY: frozenset[str] = frozenset({
    "ALiBi", "BLEU", "BOS", "CART", "CFLP", "CLM", "CNN", "COMET", "CPO", "DAG", "EMA", "FFN", "FFT", "GELU",
    "GRU", "IRLS", "LayerNorm", "LM", "LoRA", "LSTM", "MAPPO", "MARL", "MIS", "MLLM", "MLP", "MSE", "PGR", "RBF",
    "ReLU", "RL", "RMS", "RMSE", "RNN", "SGD", "SiLU", "SVD", "VE", "VLM",
})

#: Forms matched by a regular expression of their own (a word that is part of a longer term).
PATTERNS: dict[str, str] = {
    "REPRODUCED": r"(?<!NOT )(?<!PARTLY )\bREPRODUCED\b",
    "power iteration (power method)": r"(?i:power[ -]iteration|(?<!generalized )(?<!generalised )power[ -]method)",
}

_USED_IN = re.compile(r"Used\s+in:(?P<rest>.*)\Z", re.S)
_DOC = re.compile(r"\{doc\}`(?:[^`<]*<)?\.\./chapters/(?P<slug>[\w]+)>?`")
_ROLE = re.compile(r"\{(?P<role>[A-Za-z][\w:.-]*)\}`(?P<content>[^`]+)`")
_TERM = re.compile(r"\{term\}`[^`]+`")
_TEXT_TARGET = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>\s*$", re.S)
_ACRONYM = re.compile(r"^[A-Z][A-Za-z0-9()/-]*[A-Z][A-Za-z0-9()/-]*$")
_ADMONITIONS = {"admonition", "note", "warning", "tip", "important", "caution", "attention", "danger",
                "error", "hint", "seealso", "dropdown", "margin", "sidebar", "topic"}


@dataclass(frozen=True)
class Entry:
    """One glossary entry: the term as written (the `{term}` target), its definition and chapters."""

    term: str
    definition: str
    chapters: tuple[str, ...]

    @property
    def head(self) -> str:
        """The term without its parenthesis: 'MUPE' for 'MUPE (Mutual-Understanding ...)'."""
        return re.sub(r"\s+\([^()]*(?:\([^()]*\)[^()]*)*\)$", "", self.term) or self.term

    @property
    def expansion(self) -> str | None:
        """What the parenthesis spells out, for an acronym ('Mutual-Understanding Position Encoding')."""
        match = re.search(r"\s\((?P<inner>[^()]*)\)$", self.term)
        if match is None or "," in match["inner"] or not _ACRONYM.match(self.head):
            return None
        return match["inner"]

    @property
    def forms(self) -> tuple[str, ...]:
        """The words that count as a use of the term in a chapter (`FORMS` overrides the rule)."""
        if self.term in FORMS:
            return FORMS[self.term]
        if self.head in ACRONYM_ONLY:
            return (self.head,)
        match = re.search(r"\s\((?P<inner>[^()]*)\)$", self.term)
        if match is None:
            return (self.term,)
        return (self.head,) if "," in match["inner"] else (self.head, match["inner"])

    def pattern(self) -> re.Pattern:
        """One regular expression for every form (plural and possessive endings included)."""
        if self.term in PATTERNS:
            return re.compile(PATTERNS[self.term])
        return re.compile("|".join(_form_pattern(f) for f in self.forms))


def _form_pattern(form: str) -> str:
    """A form as a regular expression: spaces and dashes interchangeable, whole words only.

    A form of several words, or in lower case, matches in any case; a single word with capitals
    only with its first letter changed (so 'MoE' does not match 'moe', and 'LLM' matches 'LLMs').
    """
    parts = [p for p in re.split(r"[\s\-–]+", form) if p]
    glue = r"[\s\-–]+"
    body = glue.join(re.sub(r"is(e|ed|es|ing|ation)\b", r"i[sz]\1", re.escape(p)) for p in parts)  # -ise, -ize
    if form == form.lower() or len(parts) > 1:
        body = f"(?i:{body})"
    elif form[0].isalpha():
        body = f"[{form[0].upper()}{form[0].lower()}]" + body[len(re.escape(form[0])):]
    return rf"(?<![\w\-–]){body}(?:s|es|'s)?(?!\w)"


def read_glossary(text: str) -> list[Entry]:
    """The entries of the glossary page, in the page's order.

    The page holds one ```` ```{glossary} ```` fence; inside it a line that starts without
    indentation is a term and the indented lines after it are its definition. The chapters are
    the `{doc}` links to `../chapters/<slug>` after the definition's "Used in:".
    """
    match = re.search(r"^(?P<fence>`{3,}|:{3,})\{glossary\}[^\n]*\n(?P<body>.*?)^(?P=fence)\s*$", text, re.M | re.S)
    if match is None:
        raise ValueError("the glossary page has no {glossary} directive")
    entries: list[tuple[str, list[str]]] = []
    for line in match["body"].split("\n"):
        if line.startswith(":") and not entries:
            continue  # a directive option such as :sorted:
        if line.strip() and not line[0].isspace():
            entries.append((line.strip(), []))
        elif entries:
            entries[-1][1].append(line.strip())
        elif line.strip():
            raise ValueError(f"the glossary's first line is indented: {line!r}")
    result = []
    for term, lines in entries:
        definition = " ".join(l for l in lines if l).strip()
        if not definition:
            raise ValueError(f"the glossary term {term!r} has no definition")
        used = _USED_IN.search(definition)
        chapters = tuple(dict.fromkeys(_DOC.findall(used["rest"]))) if used else ()
        result.append(Entry(term, definition, chapters))
    return result


def load_glossary(root: Path | None = None) -> list[Entry]:
    """The entries of `book/glossary.md` in the repository (or under `root`)."""
    from icml26.catalog import project_root

    return read_glossary(((root or project_root()) / "book" / "glossary.md").read_text(encoding="utf-8"))


def _blank(text: str, start: int, end: int) -> str:
    """`text` with [start, end) replaced by spaces (newlines kept, so positions stay put)."""
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


def prose(markdown: str) -> str:
    """The running prose of one markdown cell, everything else blanked (same length, same lines).

    `{term}` roles are kept whole, so that `term_roles` can find them in the result.
    """
    out: list[str] = []
    stack: list[tuple[str, bool]] = []  # open fences: (closing marker, body hidden)
    options = False  # at the option lines (:class: ...) of an admonition
    for line in markdown.split("\n"):
        stripped = line.strip()
        hide = True
        opening = re.match(r"^(`{3,}|~{3,}|:{3,})\s*(\{(?P<name>[^}]+)\})?", stripped)
        if stack and stripped == stack[-1][0]:
            stack.pop()
            options = False
        elif opening and (not stack or not stack[-1][1]):
            name = opening["name"]
            options = name is not None and name.split(":")[0] in _ADMONITIONS
            stack.append((opening[1], not options))
        elif stack and stack[-1][1]:
            pass
        elif options and re.match(r"^:[\w-]+:", stripped):
            pass
        else:
            options = False
            hide = bool(re.match(r"^#{1,6}\s", stripped) or stripped.startswith("|") or stripped.startswith("%")
                        or re.match(r"^\([\w-]+\)=$", stripped) or stripped == "+++")
        out.append(re.sub(r"\S", " ", line) if hide else line)
    text = "\n".join(out)
    kept: list[tuple[int, int]] = []  # the {term} roles
    for m in list(re.finditer(r"(?:\{(?P<role>[A-Za-z][\w:.-]*)\})?(?P<ticks>`+)(?P<code>.+?)(?P=ticks)", text, re.S)):
        if m["role"] == "term":
            kept.append((m.start(), m.end()))
        else:
            text = _blank(text, m.start(), m.end())
    # display and inline math, HTML comments and tags, link addresses, run-in headings
    for pattern in (r"\$\$.+?\$\$", r"\\begin\{(\w+\*?)\}.+?\\end\{\1\}", r"(?<![\\$])\$(?!\s)[^$]+?(?<![\s\\])\$",
                    r"<!--.*?-->", r"</?[A-Za-z][^>\n]*>", r"(?<=\])\([^)\s]*\)",
                    r"(?m)(?<=^)\s*(?:[-*+]\s+|\d+\.\s+)?\*\*(?:[^*\n]|\*(?!\*))+?[.:]\*?\*\*"):
        for m in list(re.finditer(pattern, text, re.S)):
            if not any(a < m.end() and m.start() < b for a, b in kept):
                text = _blank(text, m.start(), m.end())
    return text


def term_roles(text: str) -> list[tuple[int, int, str, str]]:
    """The `{term}` roles in `text`: (start, end, shown text, target), in order."""
    roles = []
    for m in _ROLE.finditer(text):
        if m["role"] != "term":
            continue
        split = _TEXT_TARGET.match(m["content"])
        shown, target = (split["text"], split["target"]) if split else (m["content"], m["content"])
        roles.append((m.start(), m.end(), shown.strip(), " ".join(target.split())))
    return roles


def _paragraph(text: str, position: int) -> str:
    """The paragraph of `text` (blocks split at blank or blanked lines) that holds `position`."""
    starts = [0] + [m.end() for m in re.finditer(r"\n[ \t]*\n", text)]
    start = max(s for s in starts if s <= position)
    end = re.compile(r"\n[ \t]*\n").search(text, position)
    return text[start:end.start() if end else len(text)]


def _shown(role: str) -> str:
    """The text a `{term}` role shows: 'MUPE' for {term}`MUPE <MUPE (...)>`."""
    content = role[len("{term}`"):-1]
    split = _TEXT_TARGET.match(content)
    return split["text"] if split else content


def _normalise(text: str) -> str:
    text = re.sub(r"[\-–/]", " ", text.lower())
    return re.sub(r"iz(e|es|ed|ing|ation|ations)\b", r"is\1", text)


def spelled_out(expansion: str, paragraph: str) -> bool:
    """Whether `paragraph` contains the words (four letters or more) of an acronym's `expansion`."""
    words = [w.rstrip("s") for w in _normalise(expansion).split() if len(w) >= 4]
    para = _normalise(paragraph)
    return all(re.search(rf"\b{re.escape(w)}", para) for w in words)


def problems(slug: str, cells: list[str] | dict[int, str], entries: list[Entry]) -> list[str]:
    """What is wrong with one chapter's use of the glossary (no problems: an empty list).

    `cells` are the chapter's markdown cells in order (a list, or a dict from the notebook's cell
    numbers, as `chapter_cells` gives them); `entries` the glossary. For each term whose "Used in"
    links the chapter: a `{term}` role for it, none of its uses in prose before the first role,
    and for an acronym the first role in a paragraph that spells it out.
    """
    numbered = dict(cells) if isinstance(cells, dict) else dict(enumerate(cells))
    terms = {" ".join(e.term.split()).lower(): e for e in entries}
    found = []
    texts = chapter_prose(numbered)
    first_role: dict[str, tuple[int, int]] = {}  # term -> (cell number, position)
    for n, text in texts.items():
        for start, _, _, target in term_roles(text):
            entry = terms.get(target.lower())
            if entry is None:
                found.append(f"{slug}: cell {n}: the {{term}} target {target!r} is not a term of the glossary")
            else:
                first_role.setdefault(entry.term, (n, start))
    for entry in entries:
        if slug not in entry.chapters:
            continue
        role = first_role.get(entry.term)
        use = first_use(entry, texts)
        if role is None:
            where = f" (first used in cell {use[0]}: {use[2]!r})" if use else ""
            found.append(f"{slug}: no {{term}} role for {entry.term!r}, which the glossary says the chapter "
                         f"uses{where}")
        if use is not None and role is not None and use[:2] < role:
            n, _, word = use
            found.append(f"{slug}: cell {n} uses {word!r} before the first {{term}} role for {entry.term!r}")
        if role is not None and entry.expansion:
            n, start = role
            paragraph = _TERM.sub(lambda m: _shown(m[0]), _paragraph(texts[n], start))
            if not spelled_out(entry.expansion, paragraph):
                found.append(f"{slug}: cell {n}: the first {{term}} role for {entry.head!r} stands in a paragraph "
                             f"that does not spell out {entry.expansion!r}")
    return found


def chapter_prose(cells: dict[int, str]) -> dict[int, str]:
    """`prose` of each markdown cell, with the byline under the chapter's title blanked too."""
    texts = {n: prose(c) for n, c in cells.items()}
    for n, text in texts.items():  # only the first cell can open with the title and byline
        byline = re.search(r"\A\s*#\s[^\n]*\n\s*\n(?P<byline>.+?)(?:\n[ \t]*\n|\Z)", cells[n], re.S)
        if byline:
            texts[n] = _blank(text, byline.start("byline"), byline.end("byline"))
        break
    return texts


def first_use(entry: Entry, texts: dict[int, str]) -> tuple[int, int, str] | None:
    """The first use of a term in prose outside `{term}` roles: (cell number, position, the words)."""
    pattern = entry.pattern()
    for n, text in texts.items():
        for start, end, _, _ in term_roles(text):
            text = _blank(text, start, end)
        match = pattern.search(text)
        if match:
            return n, match.start(), match[0]
    return None


def chapter_cells(slug: str, root: Path | None = None) -> dict[int, str]:
    """The markdown cells of a chapter's notebook: cell number -> source, in order."""
    import json

    from icml26.catalog import project_root

    path = (root or project_root()) / "chapters" / f"{slug}.ipynb"
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return {n: "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for n, c in enumerate(cells) if c["cell_type"] == "markdown"}


def page_problems(text: str, needed: tuple[str, ...] = ()) -> list[str]:
    """What is wrong with the glossary page itself (no problems: an empty list).

    Its entries must be in alphabetical order (ignoring case), each must end with "Used in:" and
    at least one chapter link, and each of `needed` must be part of some term.
    """
    try:
        entries = read_glossary(text)
    except ValueError as error:
        return [str(error)]
    found = []
    terms = [e.term for e in entries]
    for a, b in zip(terms, terms[1:]):
        if a.lower() > b.lower():
            found.append(f"the glossary is out of alphabetical order: {a!r} comes before {b!r}")
    for entry in entries:
        if not entry.chapters:
            found.append(f"the glossary term {entry.term!r} names no chapter after 'Used in:'")
    for word in needed:
        if not any(word.lower() in t.lower() for t in terms):
            found.append(f"{word!r} is not defined in the glossary")
    return found
