"""The Colab edition: every chapter converted to markdown that Jupyter and Colab render.

    python -m icml26.colab [--out _build/colab] [--commit SHA] [SLUG ...]      (make colab)
    python -m icml26.colab --check DIR          report MyST syntax left in DIR/*.ipynb
    python -m icml26.colab --fix-badges         point the chapters' badges at the Colab edition
    python -m icml26.colab --fix-html DIR       the same for a built book (badges, launch buttons)

The chapters are written in MyST for Jupyter Book; Jupyter and Colab show its roles and directive
fences as raw text. The edition rewrites the markdown cells only:

- ``{cite}`key` `` becomes an author-year link into the chapter's reference list, which a last
  markdown cell writes out from book/refs/*.bib;
- a dropdown (`:class: dropdown`, or the `{dropdown}` directive) becomes a collapsed
  `<details><summary>`; any other admonition a block quote with a bold title;
- `{ref}`, `{doc}` and links to other chapters or book pages become links to the published book;
  labels become anchors; MyST comments and block breaks go.

Code cells, tags, parameters and stored outputs stay as they are, except the install cell, which
installs the package at the commit the edition was built from (`git+<repository>@<commit>`).
The repository, the edition's branch and the book's address are read from _config.yml
(`repository:` and `colab:`). An unknown role or directive is an error, so nothing is left raw.
"""

from __future__ import annotations

import argparse
import copy
import functools
import html
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .catalog import SLUGS, chapter_path, project_root

DEFAULT_OUT = Path("_build") / "colab"
COLAB_GITHUB = "https://colab.research.google.com/github"
COLAB_TEST = '"google.colab" in sys.modules'
SOLUTION_TAG = "solution"
REFERENCES_TAG = "colab-references"

ADMONITION_TITLES = {
    "admonition": "Note", "note": "Note", "tip": "Tip", "hint": "Hint", "important": "Important",
    "warning": "Warning", "caution": "Caution", "attention": "Attention", "danger": "Danger",
    "error": "Error", "seealso": "See also", "topic": "", "sidebar": "", "margin": "", "epigraph": "",
}
CODE_DIRECTIVES = {"code", "code-block", "sourcecode", "code-cell"}
DROPPED_DIRECTIVES = {"bibliography", "tableofcontents", "contents"}
CITE_ROLES = {"cite", "cite:p", "cite:ps", "cite:t", "cite:ts", "cite:alp", "cite:alps", "cite:author",
              "cite:authors", "cite:year", "cite:empty"}
OTHER_ROLES = {"ref", "numref", "doc", "eq", "math", "sub", "sup", "abbr", "kbd", "term", "download", "code"}


# --------------------------------------------------------------------------------------------
# Settings: one place for the repository, the edition's branch and the book's address
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Settings:
    repository: str  # https://github.com/<owner>/<repo>
    branch: str  # the source branch (repository.branch)
    colab_branch: str  # where the Colab edition is published
    student_branch: str  # where the student edition is published
    book_url: str  # the published book, no trailing slash

    @property
    def owner_repo(self) -> str:
        return self.repository.rstrip("/").removeprefix("https://github.com/")


@functools.lru_cache(maxsize=None)
def settings(root: Path | None = None) -> Settings:
    """_config.yml's `repository:` and `colab:` blocks."""
    import yaml

    config = yaml.safe_load(((root or project_root()) / "_config.yml").read_text())
    repo = config["repository"]
    colab = config.get("colab") or {}
    url = repo["url"].rstrip("/")
    owner, name = url.removeprefix("https://github.com/").split("/", 1)
    return Settings(
        repository=url,
        branch=repo.get("branch", "main"),
        colab_branch=colab.get("branch", "colab"),
        student_branch=colab.get("student_branch", "student"),
        book_url=str(colab.get("book_url") or f"https://{owner}.github.io/{name}").rstrip("/"),
    )


def colab_url(slug: str, edition: str = "colab", config: Settings | None = None) -> str:
    """The Colab address of a chapter's Colab (or student) edition: the badges' target."""
    config = config or settings()
    branch = {"colab": config.colab_branch, "student": config.student_branch}[edition]
    return f"{COLAB_GITHUB}/{config.owner_repo}/blob/{branch}/{slug}.ipynb"


def source_badge_pattern(config: Settings | None = None) -> re.Pattern:
    """A Colab address of a chapter's source notebook (any branch): what the badges pointed at."""
    config = config or settings()
    return re.compile(
        re.escape(f"{COLAB_GITHUB}/{config.owner_repo}/blob/") + r"[\w.\-]+/chapters/(?P<slug>\w+)\.ipynb"
    )


def current_commit(root: Path | None = None) -> str:
    """The commit the edition is built from: $ICML26_COMMIT, else $GITHUB_SHA, else git's HEAD."""
    commit = os.environ.get("ICML26_COMMIT") or os.environ.get("GITHUB_SHA")
    if not commit:
        run = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root or project_root(), capture_output=True, text=True)
        if run.returncode != 0:
            raise ValueError(f"cannot find the commit to pin (git rev-parse HEAD: {run.stderr.strip()}); pass --commit")
        commit = run.stdout.strip()
    return validate_commit(commit)


def validate_commit(commit: str) -> str:
    if not re.fullmatch(r"[0-9a-f]{40}", commit):
        raise ValueError(f"commit {commit!r} is not a full 40-digit git hash")
    return commit


# --------------------------------------------------------------------------------------------
# The bibliography: author-year labels and the written-out entries
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Reference:
    key: str
    author: str  # "Xu et al.", "Boumal", "Xu and Yao"
    year: str
    entry: str  # the entry written out, in markdown

    @property
    def anchor(self) -> str:
        return f"ref-{self.key}"


def _latex_text(text: str) -> str:
    import latexcodec  # noqa: F401  (registers the codec)

    text = re.sub(r"\s+", " ", text.replace("--", "–"))
    try:
        text = text.encode("utf-8").decode("ulatex")
    except Exception:  # noqa: BLE001 - keep the raw text rather than fail on exotic LaTeX
        pass
    return text.replace("{", "").replace("}", "").replace("\\", "").strip()


def _last_name(person) -> str:
    return _latex_text(" ".join(person.prelast_names + person.last_names))


def _full_name(person) -> str:
    return _latex_text(" ".join(person.first_names + person.middle_names + person.prelast_names + person.last_names))


def _entry_link(fields) -> str:
    if fields.get("url"):
        return fields["url"]
    if fields.get("doi"):
        return f"https://doi.org/{fields['doi']}"
    blob = " ".join(str(fields.get(k, "")) for k in ("eprint", "note", "journal", "howpublished"))
    match = re.search(r"arXiv[:\s]*(\d{4}\.\d{4,5})", blob, re.I) or (
        re.fullmatch(r"\s*(\d{4}\.\d{4,5})\s*", str(fields.get("eprint", ""))))
    return f"https://arxiv.org/abs/{match.group(1)}" if match else ""


@functools.lru_cache(maxsize=None)
def load_references(root: Path | None = None) -> dict[str, Reference]:
    """Every entry of book/refs/*.bib, as the book cites it (author-year, et al. from three authors)."""
    from pybtex.database import parse_file

    refs: dict[str, Reference] = {}
    for bib in sorted(((root or project_root()) / "book" / "refs").glob("*.bib")):
        for key, entry in parse_file(str(bib), bib_format="bibtex").entries.items():
            people = entry.persons.get("author") or entry.persons.get("editor") or []
            others = any(_last_name(p).lower() == "others" for p in people)
            people = [p for p in people if _last_name(p).lower() != "others"]
            names = [_last_name(p) for p in people] or [_latex_text(entry.fields.get("organization", key))]
            if len(names) >= 3 or others:
                author = f"{names[0]} et al."
            elif len(names) == 2:
                author = f"{names[0]} and {names[1]}"
            else:
                author = names[0]
            year = str(entry.fields.get("year", "n.d."))
            fields = entry.fields
            full = [_full_name(p) for p in people] + (["others"] if others else [])
            authors = ", ".join(full[:-1]) + (" and " if len(full) > 1 else "") + full[-1] if full else author
            title = _latex_text(fields.get("title", ""))
            venue = next((_latex_text(fields[k]) for k in ("booktitle", "journal", "publisher", "howpublished",
                                                           "school", "institution") if fields.get(k)), "")
            note = _latex_text(fields.get("note", "")) if fields.get("note") else ""
            parts = [f"{authors} ({year}). *{title}*."] + [f"{p}." for p in (venue, note) if p and p not in title]
            link = _entry_link(fields)
            if link:
                parts.append(f"<{link}>")
            refs[key] = Reference(key, author, year, " ".join(parts))
    return refs


# --------------------------------------------------------------------------------------------
# Labels and titles of the book's documents, for {ref} and {doc}
# --------------------------------------------------------------------------------------------

LABEL_LINE = re.compile(r"^\s*\((?P<label>[^()\s]+)\)=\s*$")


def _document_markdown(root: Path) -> dict[str, list[str]]:
    """document path without suffix ('chapters/dq_sync', 'book/intro') -> its markdown texts."""
    import json

    docs = {}
    for path in sorted((root / "chapters").glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        docs[f"chapters/{path.stem}"] = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    for path in sorted((root / "book").glob("*.md")):
        docs[f"book/{path.stem}"] = [path.read_text()]
    return docs


@functools.lru_cache(maxsize=None)
def label_index(root: Path | None = None) -> dict[str, tuple[str, str]]:
    """label -> (document, title): the heading that follows each `(label)=` line."""
    index = {}
    for doc, texts in _document_markdown(root or project_root()).items():
        lines = "\n".join(texts).splitlines()
        for i, line in enumerate(lines):
            match = LABEL_LINE.match(line)
            if match:
                heading = next((l for l in lines[i + 1:] if l.strip()), "")
                title = heading.lstrip("#").strip() if heading.startswith("#") else match["label"]
                index[match["label"]] = (doc, title)
    return index


@functools.lru_cache(maxsize=None)
def document_titles(root: Path | None = None) -> dict[str, str]:
    titles = {}
    for doc, texts in _document_markdown(root or project_root()).items():
        heading = next((l for t in texts for l in t.splitlines() if l.startswith("# ")), doc)
        titles[doc] = heading.removeprefix("# ").strip()
    return titles


def anchor_id(label: str) -> str:
    """The HTML id Sphinx gives a label (docutils' make_id)."""
    return re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")


# --------------------------------------------------------------------------------------------
# Markdown conversion
# --------------------------------------------------------------------------------------------

OPEN_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,}|:{3,})(?P<info>.*)$")
ROLE = re.compile(r"\{(?P<role>[A-Za-z][\w:.-]*)\}(?P<ticks>`+)(?P<content>.+?)(?P=ticks)", re.S)
LINK = re.compile(r"(?P<bang>!?)\[(?P<text>(?:[^\[\]]|\[[^\[\]]*\])*)\]\((?P<target>[^)\s]+)(?P<title>\s+\"[^\"]*\")?\)")
ROLE_OR_CODE = re.compile(ROLE.pattern + r"|(?P<code_ticks>`+).+?(?P=code_ticks)", re.S)
LINK_OR_CODE = re.compile(LINK.pattern + r"|(?P<code_ticks>`+).+?(?P=code_ticks)", re.S)
TEXT_AND_TARGET = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>\s*$", re.S)


def _closing(fence: str, line: str) -> bool:
    stripped = line.strip()
    return (bool(stripped) and set(stripped) == {fence[0]} and len(stripped) >= len(fence))


def _is_open_fence(match: re.Match) -> bool:
    return not (match["fence"][0] == "`" and "`" in match["info"])


def unclosed_fence(text: str) -> str | None:
    """The fence left open at the end of `text` (CommonMark's rules), or None."""
    open_fence = None
    for line in text.split("\n"):
        if open_fence is None:
            match = OPEN_FENCE.match(line)
            if match and _is_open_fence(match):
                open_fence = match["fence"]
        elif _closing(open_fence, line):
            open_fence = None
    return open_fence


class ConversionError(ValueError):
    pass


class Converter:
    """Converts one chapter's markdown; collects the keys it cites, in order."""

    def __init__(self, slug: str, config: Settings | None = None, root: Path | None = None,
                 glued: dict[str, str] | None = None):
        self.slug = slug
        self.glued = glued or {}  # name -> text of the run's glued figures ({glue:text}`name`)
        self.doc = f"chapters/{slug}"
        self.config = config or settings(root)
        self.root = root or project_root()
        self.cited: list[str] = []

    # -- blocks -------------------------------------------------------------------------------
    def convert(self, text: str) -> str:
        lines = text.split("\n")
        out: list[str] = []
        paragraph: list[str] = []

        def flush():
            if paragraph:
                out.extend(self.inline("\n".join(paragraph)).split("\n"))
                paragraph.clear()

        i = 0
        while i < len(lines):
            line = lines[i]
            match = OPEN_FENCE.match(line)
            if match and _is_open_fence(match):
                flush()
                fence, indent, info = match["fence"], match["indent"], match["info"].strip()
                end = next((j for j in range(i + 1, len(lines)) if _closing(fence, lines[j])), len(lines))
                body = [l[len(indent):] if l.startswith(indent) else l.lstrip() for l in lines[i + 1:end]]
                if info.startswith("{"):
                    out.extend(indent + l if l else l for l in self.directive(info, body))
                    if end + 1 < len(lines) and lines[end + 1].strip():
                        out.append("")  # an HTML block or a block quote would swallow the next line
                elif fence[0] == ":":
                    raise ConversionError(f"{self.slug}: a colon fence without a directive: {line!r}")
                else:  # a plain code block, kept as it is
                    out.extend(lines[i:end + 1])
                    if end == len(lines):
                        out.append(indent + fence)
                i = end + 1
                continue
            label = LABEL_LINE.match(line)
            if label:
                flush()
                out.append(f'<a id="{anchor_id(label["label"])}"></a>')
            elif line.startswith("%") or line.startswith("+++"):
                flush()  # a MyST comment or block break: nothing on the page
            else:
                paragraph.append(line)
            i += 1
        flush()
        return "\n".join(out)

    def directive(self, info: str, body: list[str]) -> list[str]:
        match = re.match(r"^\{(?P<name>[\w:-]+)\}\s*(?P<arg>.*)$", info)
        if not match:
            raise ConversionError(f"{self.slug}: cannot read the directive {info!r}")
        name, arg = match["name"], match["arg"].strip()
        options: dict[str, str] = {}
        if body and body[0].strip() == "---":  # YAML options block
            end = next((k for k in range(1, len(body)) if body[k].strip() == "---"), None)
            if end is not None:
                import yaml

                options = {str(k): str(v) for k, v in (yaml.safe_load("\n".join(body[1:end])) or {}).items()}
                body = body[end + 1:]
        while body and re.match(r"^:[\w-]+:", body[0]):
            option = re.match(r"^:(?P<key>[\w-]+):\s*(?P<value>.*)$", body.pop(0))
            options[option["key"]] = option["value"].strip()
        while body and not body[0].strip():
            body.pop(0)
        while body and not body[-1].strip():
            body.pop()
        anchor = [f'<a id="{anchor_id(options["name"])}"></a>', ""] if options.get("name") else []

        if name in CODE_DIRECTIVES:
            return anchor + ["```" + arg, *body, "```"]
        if name in DROPPED_DIRECTIVES:
            return []
        if name == "math":
            return anchor + ["$$", *body, "$$"]
        if name in {"figure", "image"}:
            alt = options.get("alt", "")
            caption = self.convert("\n".join(body)).strip()
            lines = anchor + [f"![{alt}]({self.asset_url(arg)})"]
            return lines + (["", f"*{caption}*"] if caption else [])
        classes = options.get("class", "").split()
        if name == "dropdown" or name in ADMONITION_TITLES:
            title = arg or ADMONITION_TITLES.get(name, "") or ("Details" if name == "dropdown" else "")
            content = self.convert("\n".join(body))
            still_open = unclosed_fence(content)
            if still_open:  # MyST parses the body on its own: a fence left open ends with it
                content += "\n" + still_open
            if name == "dropdown" or "dropdown" in classes:
                summary = self.inline_html(title) or "Details"
                opened = " open" if "open" in options else ""
                return anchor + [f"<details{opened}>", f"<summary><b>{summary}</b></summary>", "", content, "",
                                 "</details>"]
            quoted = ([f"**{self.inline(title)}**", ""] if title else []) + content.split("\n")
            return anchor + [("> " + l) if l.strip() else ">" for l in quoted]
        raise ConversionError(f"{self.slug}: the directive {{{name}}} has no Colab form in icml26.colab")

    # -- inline -------------------------------------------------------------------------------
    def inline(self, text: str) -> str:
        def role_or_code(match: re.Match) -> str:
            if match["role"] is None:
                return match[0]
            return self.role(match["role"], match["content"].strip())

        text = ROLE_OR_CODE.sub(role_or_code, text)

        def link_or_code(match: re.Match) -> str:
            if match["target"] is None:
                return match[0]
            target = self.link_target(match["target"], image=bool(match["bang"]))
            return f"{match['bang']}[{match['text']}]({target}{match['title'] or ''})"

        return LINK_OR_CODE.sub(link_or_code, text)

    def inline_html(self, text: str) -> str:
        """A title for <summary>, where markdown is not parsed."""
        text = html.escape(self.inline(text), quote=False)
        text = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", text)
        text = re.sub(r"\*(.+?)\*", r"<i>\1</i>", text)
        text = re.sub(r"`(.+?)`", r"<code>\1</code>", text)
        return re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r'<a href="\2">\1</a>', text)

    def role(self, role: str, content: str) -> str:
        if role in CITE_ROLES:
            return self.cite(role, content)
        split = TEXT_AND_TARGET.match(content)
        text, target = (split["text"].strip(), split["target"].strip()) if split else ("", content)
        if role in {"ref", "numref"}:
            doc, title = self.resolve_label(target)
            return f"[{text or title}]({self.doc_url(doc, anchor_id(target))})"
        if role == "eq":
            doc, _ = self.resolve_label(target)
            return f"[({text or target})]({self.doc_url(doc, anchor_id(target))})"
        if role == "doc":
            doc = os.path.normpath(os.path.join(os.path.dirname(self.doc), target)).removesuffix(".md") \
                .removesuffix(".ipynb") if not target.startswith("/") else target.lstrip("/")
            if doc not in document_titles(self.root):
                raise ConversionError(f"{self.slug}: {{doc}} points at {target!r}, not a document of the book")
            return f"[{text or document_titles(self.root)[doc]}]({self.doc_url(doc)})"
        if role == "math":
            return f"${content}$"
        if role in {"sub", "sup", "kbd"}:
            return f"<{role}>{html.escape(content)}</{role}>"
        if role == "abbr":
            return re.sub(r"\s*\(.*\)\s*$", "", content)
        if role in {"term", "code"}:
            return f"`{content}`" if role == "code" else (text or target)
        if role == "download":
            return f"[{text or target}]({self.asset_url(target)})"
        if role == "glue:text":
            return self.glue(content)
        if role.startswith("glue"):
            raise ConversionError(f"{self.slug}: paste glued figures with {{glue:text}} (the book shows "
                                  f"{{{role}}}'s stored literal with its quotes)")
        raise ConversionError(f"{self.slug}: the role {{{role}}} has no Colab form in icml26.colab")

    def glue(self, content: str) -> str:
        """The stored text of a glued figure (``name``, or ``name:fmt`` formatted as MyST-NB does)."""
        from icml26.common.glued import format_glued

        name, _, fmt = content.partition(":")
        if name not in self.glued:
            raise ConversionError(f"{self.slug}: {{glue}} names {name!r}, which no stored output of the "
                                  f"chapter glues (glued: {', '.join(sorted(self.glued)) or 'none'})")
        return format_glued(self.glued[name], fmt)

    def cite(self, role: str, content: str) -> str:
        refs = load_references(self.root)
        keys = [k.strip() for k in content.split(",") if k.strip()]
        unknown = [k for k in keys if k not in refs]
        if unknown:
            raise ConversionError(f"{self.slug}: cited keys not in book/refs/*.bib: {', '.join(unknown)}")
        for key in keys:
            if key not in self.cited:
                self.cited.append(key)
        found = [refs[k] for k in keys]
        base = role.removesuffix("s")  # cite:ps -> cite:p, cite:ts -> cite:t, cite:authors -> cite:author
        if base in {"cite", "cite:p"}:
            return "(" + "; ".join(f"[{r.author}, {r.year}](#{r.anchor})" for r in found) + ")"
        if base == "cite:alp":
            return "; ".join(f"[{r.author}, {r.year}](#{r.anchor})" for r in found)
        if base == "cite:t":
            return ", ".join(f"[{r.author}](#{r.anchor}) ({r.year})" for r in found)
        if base == "cite:author":
            return ", ".join(f"[{r.author}](#{r.anchor})" for r in found)
        if base == "cite:year":
            return ", ".join(f"[{r.year}](#{r.anchor})" for r in found)
        return ""  # cite:empty: listed, not shown

    # -- addresses ----------------------------------------------------------------------------
    def resolve_label(self, label: str) -> tuple[str, str]:
        index = label_index(self.root)
        if label not in index:
            raise ConversionError(f"{self.slug}: {{ref}} to the unknown label {label!r}")
        return index[label]

    def doc_url(self, doc: str, anchor: str = "") -> str:
        if doc == self.doc and anchor:
            return f"#{anchor}"  # the label's anchor is in this notebook
        return f"{self.config.book_url}/{doc}.html" + (f"#{anchor}" if anchor else "")

    def asset_url(self, target: str) -> str:
        if re.match(r"^[a-z][\w+.-]*:", target):
            return target
        path = os.path.normpath(os.path.join(os.path.dirname(self.doc), target))
        return f"https://raw.githubusercontent.com/{self.config.owner_repo}/{self.config.branch}/{path}"

    def link_target(self, target: str, image: bool = False) -> str:
        badge = source_badge_pattern(self.config).fullmatch(target)
        if badge:
            return colab_url(badge["slug"], config=self.config)
        if target.startswith("#") or re.match(r"^[a-z][\w+.-]*:", target):
            return target
        if image:
            return self.asset_url(target)
        path, _, fragment = target.partition("#")
        doc = os.path.normpath(os.path.join(os.path.dirname(self.doc), path))
        stem, suffix = os.path.splitext(doc)
        if suffix in {".ipynb", ".md"}:
            return f"{self.config.book_url}/{stem}.html" + (f"#{fragment}" if fragment else "")
        return self.asset_url(target)

    def reference_list(self) -> str:
        refs = load_references(self.root)
        entries = sorted((refs[k] for k in self.cited), key=lambda r: (r.author.lower(), r.year, r.key))
        lines = ["## Works cited", "",
                 f"The works this chapter cites; the book lists them all on its "
                 f"[bibliography page]({self.config.book_url}/book/bibliography.html).", ""]
        lines += [f'- <a id="{r.anchor}"></a>{r.entry}' for r in entries]
        return "\n".join(lines)


def pin_install(source: str, commit: str, config: Settings | None = None) -> str:
    """The install cell's `git+<repository>` with `@<commit>` (an existing ref is replaced)."""
    config = config or settings()
    pattern = re.escape(f"git+{config.repository}") + r"(?:\.git)?(?:@[\w./-]+)?(?![\w./-])"
    pinned, count = re.subn(pattern, f"git+{config.repository}@{commit}", source)
    if count == 0:
        raise ConversionError(f"the install cell does not install from git+{config.repository}")
    return pinned


SELF_CHECK = re.compile(r"^```\{self-check\}[ \t]*(?P<part>\w+)[ \t]*\n```[ \t]*$", re.M)


def split_self_check(source: str, slug: str) -> tuple[str, str | None]:
    """A markdown cell's text without its `{self-check}` block, and the code that shows that quiz
    in Jupyter and Colab (None when the cell has none)."""
    found = list(SELF_CHECK.finditer(source))
    if not found:
        return source, None
    if len(found) > 1 or found[0].end() != len(source.rstrip()):
        raise ConversionError(f"{slug}: a {{self-check}} block must end its cell, once")
    part = found[0]["part"]
    code = f'from icml26.common.selfcheck import show\nshow("{slug}", "{part}")'
    return source[:found[0].start()].rstrip(), code


def colab_notebook(notebook, slug: str, commit: str, config: Settings | None = None, root: Path | None = None):
    """A copy of `notebook` (nbformat v4) that Jupyter and Colab render; see the module's docstring."""
    import nbformat

    config = config or settings(root)
    from icml26.common.glued import glued_values

    converter = Converter(slug, config, root, glued=glued_values(notebook.cells))
    edition = copy.deepcopy(notebook)
    installs = 0
    cells = []
    for cell in edition.cells:  # a {self-check} block becomes a code cell that shows the quiz
        cells.append(cell)
        if cell.cell_type == "markdown":
            cell.source, quiz = split_self_check(cell.source, slug)
            if quiz:
                cells.append(nbformat.v4.new_code_cell(quiz, metadata={"tags": ["self-check"]}))
                cells[-1].pop("id", None)
    edition.cells = [c for c in cells if c.cell_type != "markdown" or c.source.strip()]
    for index, cell in enumerate(edition.cells):
        if edition.nbformat_minor >= 5 and "id" not in cell:  # nbformat 4.5 wants one; a stable one
            cell["id"] = f"{slug}-cell-{index}"
        if cell.cell_type == "markdown":
            try:
                cell.source = converter.convert(cell.source)
            except ConversionError as error:
                raise ConversionError(f"{error} (cell {cell.get('id', '?')})") from None
        elif cell.cell_type == "code" and COLAB_TEST in cell.source:
            cell.source = pin_install(cell.source, commit, config)
            installs += 1
    if installs != 1:
        raise ConversionError(f"{slug}: expected one install cell (`if {COLAB_TEST}:`), found {installs}")
    if converter.cited:
        cell = nbformat.v4.new_markdown_cell(converter.reference_list(), metadata={"tags": [REFERENCES_TAG]})
        cell.pop("id", None)
        edition.cells.append(cell)
        if edition.nbformat_minor >= 5:
            cell["id"] = f"{slug}-works-cited"
    edition.metadata["icml26_edition"] = {
        "edition": "colab", "source": f"chapters/{slug}.ipynb", "commit": commit,
        "repository": config.repository, "book": f"{config.book_url}/chapters/{slug}.html",
    }
    return edition


def write_colab_edition(slugs=SLUGS, out: Path | None = None, commit: str | None = None) -> list[Path]:
    """Write `<out>/<slug>.ipynb` for each chapter; return the paths written."""
    import nbformat

    out = Path(out) if out is not None else project_root() / DEFAULT_OUT
    commit = validate_commit(commit) if commit else current_commit()
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for slug in slugs:
        notebook = nbformat.read(chapter_path(slug), as_version=4)
        target = out / f"{slug}.ipynb"
        nbformat.write(colab_notebook(notebook, slug, commit), target)
        written.append(target)
    return written


# --------------------------------------------------------------------------------------------
# The check: no MyST left
# --------------------------------------------------------------------------------------------

LEFTOVERS = [
    ("role", re.compile(r"\{[A-Za-z][\w:.-]*\}`")),
    ("directive fence", re.compile(r"^\s*(`{3,}|~{3,}|:{3,})\s*\{", re.M)),
    ("colon fence", re.compile(r"^\s*:{3,}", re.M)),
    ("directive option", re.compile(r"^\s*:(class|name|open|label|alt|width|align|dropdown|title):", re.M)),
    ("label", re.compile(r"^\s*\([^()\s]+\)=\s*$", re.M)),
    ("MyST comment", re.compile(r"^%", re.M)),
    ("block break", re.compile(r"^\+\+\+", re.M)),
    ("link to a source file", re.compile(r"\]\((?![a-z][\w+.-]*:|#)[^)]*\.(ipynb|md)(#[^)]*)?\)")),
]


def myst_leftovers(source: str) -> list[str]:
    """The MyST syntax left in a markdown cell, one line per finding ('role: {cite}`a`')."""
    found = []
    for kind, pattern in LEFTOVERS:
        for match in pattern.finditer(source):
            line = source[source.rfind("\n", 0, match.start()) + 1:].split("\n", 1)[0]
            found.append(f"{kind}: {line.strip()[:80]}")
    if unclosed_fence(source):
        found.append("fence left open at the end of the cell")
    return found


def check_notebook(path: Path) -> list[str]:
    """Every MyST leftover in a notebook's markdown cells, as 'file cell N: finding'."""
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    found = []
    for i, cell in enumerate(notebook.cells):
        if cell.cell_type != "markdown":
            continue
        findings = myst_leftovers(cell.source)
        if SOLUTION_TAG in cell.metadata.get("tags", []):
            findings += solution_leaks(cell.source)
        found += [f"{Path(path).name} cell {i}: {finding}" for finding in findings]
    return found


def solution_leaks(source: str) -> list[str]:
    """A solution cell must be one collapsed <details> block with nothing outside it."""
    blocks = re.findall(r"<details(?P<attrs>[^>]*)>", source)
    outside = re.sub(r"<details[^>]*>.*</details>", "", source, flags=re.S).strip()
    found = []
    if len(blocks) != 1:
        found.append(f"solution: {len(blocks)} <details> blocks, expected one")
    if any("open" in attrs for attrs in blocks):
        found.append("solution: its <details> block is open")
    if outside:
        found.append(f"solution text outside its collapsed block (a fence closed early?): {outside[:60]!r}")
    return found


# --------------------------------------------------------------------------------------------
# Badges: the chapters' and the built book's "Open in Colab" links
# --------------------------------------------------------------------------------------------

def fix_badge_text(text: str, config: Settings | None = None) -> str:
    config = config or settings()
    return source_badge_pattern(config).sub(lambda m: colab_url(m["slug"], config=config), text)


def fix_badges(paths=None, config: Settings | None = None) -> list[Path]:
    """Point every Colab link of the chapters' markdown cells at the Colab edition (idempotent).
    The file's text is edited in place, so nothing but those links changes (no re-serialisation);
    a link found outside a markdown cell's source is an error. Returns the files rewritten."""
    import json

    config = config or settings()
    pattern = source_badge_pattern(config)
    changed = []
    for path in paths or [chapter_path(s) for s in SLUGS]:
        text = Path(path).read_text(encoding="utf-8")
        in_markdown = sum(len(pattern.findall("".join(cell["source"]) if isinstance(cell["source"], list)
                                              else cell["source"]))
                          for cell in json.loads(text)["cells"] if cell["cell_type"] == "markdown")
        in_file = len(pattern.findall(text))
        if in_file != in_markdown:
            raise ValueError(f"{path}: {in_file - in_markdown} Colab link(s) outside the markdown cells; fix by hand")
        if in_file:
            Path(path).write_text(fix_badge_text(text, config), encoding="utf-8")
            changed.append(Path(path))
    return changed


def fix_html(folder: Path, config: Settings | None = None) -> list[Path]:
    """The same for a built book: badges and the theme's Colab launch buttons (idempotent)."""
    config = config or settings()
    changed = []
    for page in sorted(Path(folder).rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        fixed = fix_badge_text(text, config)
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")
            changed.append(page)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m icml26.colab", description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", help=f"default: all ({', '.join(SLUGS)})")
    parser.add_argument("--out", type=Path, default=None, help=f"folder (default {DEFAULT_OUT})")
    parser.add_argument("--commit", default=None, help="commit the install cell pins (default: git HEAD)")
    parser.add_argument("--check", type=Path, metavar="DIR", help="report MyST left in DIR/*.ipynb; exit 1 if any")
    parser.add_argument("--fix-badges", action="store_true", help="point chapters/*.ipynb badges at the Colab edition")
    parser.add_argument("--fix-html", type=Path, metavar="DIR", help="point a built book's Colab links at the edition")
    args = parser.parse_args(argv)
    try:
        if args.check:
            findings = [f for p in sorted(args.check.glob("*.ipynb")) for f in check_notebook(p)]
            print("\n".join(findings) or f"no MyST left in {args.check}")
            return 1 if findings else 0
        if args.fix_badges:
            paths = [chapter_path(s) for s in (args.chapters or SLUGS)]
            changed = fix_badges(paths)
            print(f"badges: {len(changed)} of {len(paths)} chapters rewritten")
            return 0
        if args.fix_html:
            print(f"badges: {len(fix_html(args.fix_html))} pages of {args.fix_html} rewritten")
            return 0
        commit = validate_commit(args.commit) if args.commit else current_commit()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "chapters", "src"], cwd=project_root(),
                               capture_output=True, text=True).stdout.strip()
        if dirty and not args.commit:
            print(f"note: uncommitted changes; the install cells pin {commit[:12]}, which lacks them", file=sys.stderr)
        paths = write_colab_edition(args.chapters or SLUGS, args.out, commit)
        findings = [f for p in paths for f in check_notebook(p)]
        if findings:
            print("The Colab edition is not clean (MyST left, or a solution not collapsed):\n" + "\n".join(findings), file=sys.stderr)
            return 1
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"Colab edition: {len(paths)} notebooks in {paths[0].parent} (install pinned to {commit[:12]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
