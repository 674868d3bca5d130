"""The Colab edition (`make colab`, icml26.colab): what Jupyter and Colab render, nothing raw.

- no MyST left in any Colab notebook (roles, directive fences, options, labels, comments, links to
  source files), and the check is shown to fail on a deliberately broken notebook;
- each notebook rendered by nbconvert's HTML exporter (the HTML Jupyter renders, an HTML-level
  check: no browser here) shows no raw markup, and every solution is one collapsed <details>;
- code cells, tags, parameters and stored outputs are unchanged; the install cell is pinned to the
  commit; citations are author-year links into the reference list written out at the end;
- every "Open in Colab" badge of the edition opens the Colab edition, and the badge script
  (`python -m icml26.colab --fix-badges`) does the same for the chapters, idempotently.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

from icml26 import colab
from icml26.catalog import SLUGS, chapter_path, project_root

COMMIT = "0123456789abcdef0123456789abcdef01234567"
ROOT = project_root()
SETTINGS = colab.settings()
CITE = re.compile(r"\{cite(?::\w+)?\}`([^`]+)`")


def _edition(slug: str):
    source = nbformat.read(chapter_path(slug), as_version=4)
    return source, colab.colab_notebook(source, slug, COMMIT)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("colab")


def _written(slug: str, folder: Path) -> Path:
    path = folder / f"{slug}.ipynb"
    if not path.exists():
        colab.write_colab_edition([slug], folder, COMMIT)
    return path


# ------------------------------------------------------------------------------------------
# No MyST left
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("slug", SLUGS)
def test_no_myst_left_and_solutions_collapsed(slug, folder):
    findings = colab.check_notebook(_written(slug, folder))
    assert not findings, "\n".join(findings)


def test_the_check_fails_on_a_deliberately_broken_notebook(tmp_path):
    broken = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("As shown by {cite}`w2sg_xu2026`, see {ref}`sec-x`."),
        nbformat.v4.new_markdown_cell("```{admonition} Note\n:class: tip\n\nText.\n```"),
        nbformat.v4.new_markdown_cell(":::{note}\nText.\n:::"),
        nbformat.v4.new_markdown_cell("(sec-x)=\n## A section\n% a comment\n+++"),
        nbformat.v4.new_markdown_cell("Read [the dmawm chapter](dmawm.ipynb)."),
        nbformat.v4.new_markdown_cell("```python\nx = 1"),
        nbformat.v4.new_markdown_cell("<details>\n<summary>Solution</summary>\n\nA.\n</details>\nLeaked.",
                                      metadata={"tags": ["solution"]}),
        nbformat.v4.new_markdown_cell("<details open>\n<summary>Solution</summary>\n\nA.\n</details>",
                                      metadata={"tags": ["solution"]}),
    ])
    path = tmp_path / "broken.ipynb"
    nbformat.write(broken, path)
    text = "\n".join(colab.check_notebook(path))
    for kind in ("role", "directive fence", "directive option", "colon fence", "label", "MyST comment",
                 "block break", "link to a source file", "fence left open", "outside its collapsed block",
                 "block is open"):
        assert kind in text, f"the check missed a {kind}:\n{text}"
    # A real chapter, not converted, is caught too, and the command line says so with exit status 1.
    shutil.copy(chapter_path("w2sg_bregman"), tmp_path / "w2sg_bregman.ipynb")
    raw = "\n".join(colab.check_notebook(tmp_path / "w2sg_bregman.ipynb"))
    assert "role: " in raw and "directive fence" in raw
    run = subprocess.run([sys.executable, "-m", "icml26.colab", "--check", str(tmp_path)], capture_output=True, text=True)
    assert run.returncode == 1 and "w2sg_bregman.ipynb cell" in run.stdout


# ------------------------------------------------------------------------------------------
# What stays, what is pinned, what is added
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("slug", SLUGS)
def test_code_cells_tags_parameters_and_outputs_unchanged_install_pinned(slug):
    source, edition = _edition(slug)
    # The self-check blocks become code cells that show the quiz (tests/test_selfcheck.py checks
    # them); a markdown cell that held nothing but the block is gone.
    source.cells = [c for c in source.cells if not (c.cell_type == "markdown" and
                                                    colab.SELF_CHECK.fullmatch(c.source.strip()))]
    edition.cells = [c for c in edition.cells if "self-check" not in c.metadata.get("tags", [])]
    extra = edition.cells[len(source.cells):]
    assert len(extra) <= 1 and all(colab.REFERENCES_TAG in c.metadata["tags"] for c in extra)
    for before, after in zip(source.cells, edition.cells):
        assert after.cell_type == before.cell_type
        assert after.metadata == before.metadata, "cell metadata (tags, parameters) changed"
        if before.cell_type != "code":
            continue
        assert after.outputs == before.outputs and after.execution_count == before.execution_count
        if colab.COLAB_TEST in before.source:
            pinned = f"git+{SETTINGS.repository}@{COMMIT}"
            assert pinned in after.source, f"the install cell is not pinned to the commit:\n{after.source}"
            assert after.source.replace(f"@{COMMIT}", "") == before.source, "the install cell changed beyond its pin"
        else:
            assert after.source == before.source
    assert {k: v for k, v in edition.metadata.items() if k != "icml26_edition"} == dict(source.metadata)
    assert edition.metadata["icml26_edition"]["commit"] == COMMIT


@pytest.mark.parametrize("slug", SLUGS)
def test_citations_are_author_year_links_into_the_written_out_reference_list(slug):
    source, edition = _edition(slug)
    cited = {k.strip() for c in source.cells if c.cell_type == "markdown" for m in CITE.finditer(c.source)
             for k in m.group(1).split(",")}
    assert cited, "the chapter cites nothing"
    references = edition.cells[-1]
    assert colab.REFERENCES_TAG in references.metadata["tags"]
    text = "\n".join(c.source for c in edition.cells[:-1] if c.cell_type == "markdown")
    refs = colab.load_references()
    for key in sorted(cited):
        ref = refs[key]
        assert re.search(rf"\[{re.escape(ref.author)}(, {ref.year})?\]\(#ref-{re.escape(key)}\)", text), (
            f"{key}: no author-year link ({ref.author}, {ref.year})")
        assert f'<a id="ref-{key}"></a>' in references.source, f"{key}: missing from the reference list"
        assert ref.year in references.source


# ------------------------------------------------------------------------------------------
# Rendered as Jupyter renders it
# ------------------------------------------------------------------------------------------

RAW_MARKUP = [
    ("role", re.compile(r"\{[A-Za-z][\w:.-]*\}`")),
    ("fence", re.compile(r"```|~~~|:::")),
    ("directive option", re.compile(r"(^|\n)\s*:[\w-]+:")),
    ("label", re.compile(r"(^|\n)\s*\([^()\s]+\)=")),
    ("escaped HTML", re.compile(r"</?(details|summary|a|b|br|sub|sup)\b[^>]*>")),
    ("markdown emphasis", re.compile(r"\*\*\S")),
    ("link syntax", re.compile(r"\]\([^)\s]+\)")),
]


def rendered_markdown(path: Path) -> list[tuple[list[str], object]]:
    """(tags, rendered element) for each markdown cell of nbconvert's HTML (the lab template)."""
    try:
        import nbconvert
        from bs4 import BeautifulSoup
    except ImportError:
        pytest.fail("nbconvert renders the notebooks as Jupyter does: it belongs in requirements.txt (nbconvert==7.16.6)")

    notebook = nbformat.read(path, as_version=4)
    body, _ = nbconvert.HTMLExporter().from_notebook_node(notebook)
    soup = BeautifulSoup(body, "html.parser")
    rendered = soup.select("div.jp-MarkdownCell .jp-RenderedMarkdown")
    cells = [c for c in notebook.cells if c.cell_type == "markdown"]
    assert len(rendered) == len(cells), "nbconvert rendered another number of markdown cells"
    return [(c.metadata.get("tags", []), r) for c, r in zip(cells, rendered)]


def raw_markup(element) -> list[str]:
    """Raw markup a reader would see in one rendered markdown cell (code and math excepted)."""
    import copy

    element = copy.copy(element)
    found = []
    for pre in element.find_all("pre"):
        if not pre.get_text().strip():
            found.append("an empty code block (a fence left over)")
        elif re.match(r"\s*(\{\w|:[\w-]+:)", pre.get_text()) or "{" in " ".join(
                " ".join(c.get("class", [])) for c in [pre, *pre.find_all("code")]):
            found.append(f"a directive shown as code: {pre.get_text()[:60]!r}")
        pre.decompose()
    for code in element.find_all("code"):
        code.replace_with("`C`")  # inline code is the reader's; a role shows as {name} before it
    text = re.sub(r"\$\$.*?\$\$|\$[^$\n]+\$", "", element.get_text(), flags=re.S)  # MathJax's
    for kind, pattern in RAW_MARKUP:
        for match in pattern.finditer(text):
            found.append(f"{kind}: {text[max(0, match.start() - 30):match.end() + 30]!r}")
    return found


def collapsed_solution(element) -> list[str]:
    """A solution cell renders as one closed <details> with a summary, and nothing outside it."""
    details = element.find_all("details")
    problems = []
    if len(details) != 1:
        return [f"{len(details)} <details> elements, expected one"]
    if details[0].has_attr("open"):
        problems.append("the <details> is open")
    if details[0].find("summary") is None or not details[0].find("summary").get_text(strip=True):
        problems.append("no <summary>")
    if not details[0].get_text(strip=True).removeprefix(details[0].find("summary").get_text(strip=True)):
        problems.append("the solution is empty")
    outside = [t for t in element.find_all(string=True, recursive=True)
               if t.strip() and details[0] not in t.parents]
    if outside:
        problems.append(f"visible outside the collapsed block: {''.join(outside)[:80]!r}")
    return problems


@pytest.mark.parametrize("slug", SLUGS)
def test_rendered_by_nbconvert_no_raw_markup_and_solutions_collapsed(slug, folder):
    problems = []
    solutions = 0
    for i, (tags, element) in enumerate(rendered_markdown(_written(slug, folder))):
        problems += [f"markdown cell {i}: {p}" for p in raw_markup(element)]
        if "solution" in tags:
            solutions += 1
            problems += [f"solution cell {i}: {p}" for p in collapsed_solution(element)]
    assert solutions >= 3, "at least three solutions, each tagged 'solution'"
    assert not problems, f"{slug}, as Jupyter renders it:\n" + "\n".join(problems)


def test_the_rendered_check_fails_on_raw_myst(tmp_path):
    """The chapter as Colab shows it today (not converted) fails the rendered check."""
    path = tmp_path / "w2sg_bregman.ipynb"
    shutil.copy(chapter_path("w2sg_bregman"), path)
    cells = rendered_markdown(path)
    raw = [p for _, e in cells for p in raw_markup(e)]
    assert any(p.startswith("role") for p in raw) and any("directive" in p or "fence" in p for p in raw)
    assert any(collapsed_solution(e) for tags, e in cells if "solution" in tags)


# ------------------------------------------------------------------------------------------
# The converter's rules, one by one
# ------------------------------------------------------------------------------------------

def test_converter_rules():
    convert = colab.Converter("dq_sync").convert
    quoted = convert("```{warning}\nIt is *not* an LLM.\n```")
    assert quoted == "> **Warning**\n>\n> It is *not* an LLM."
    titled = convert("```{admonition} Deviations\n- one\n\n$$ a = b $$\n```")
    assert titled.splitlines()[0] == "> **Deviations**" and "> $$ a = b $$" in titled
    dropdown = convert("```{admonition} Solution\n:class: dropdown tag-solution\n\nText with ~~~code.\n```")
    assert dropdown.startswith("<details>\n<summary><b>Solution</b></summary>\n\nText") and dropdown.endswith("</details>")
    assert "<details>" in convert(":::{dropdown} More\nHidden.\n:::")
    nested = convert("````{admonition} Solution\n:class: dropdown\n\n```python\nx = 1\n```\nAfter.\n````")
    assert "```python\nx = 1\n```\nAfter.\n\n</details>" in nested
    early = convert("```{admonition} Solution\n:class: dropdown\n\n```python\nx = 1\n```\nAfter.\n```")
    assert colab.solution_leaks(early), "a fence closed early leaves text outside the dropdown"
    book = SETTINGS.book_url
    assert convert("See [the tam chapter](tam.ipynb#setup).") == f"See [the tam chapter]({book}/chapters/tam.html#setup)."
    assert convert("The [course](../book/course.md).") == f"The [course]({book}/book/course.html)."
    assert convert("Keep `{cite}` in code and [x](https://a.b/c.ipynb).") == "Keep `{cite}` in code and [x](https://a.b/c.ipynb)."
    assert convert("(my-label)=\n## Head\n% hidden\n+++\nText") == '<a id="my-label"></a>\n## Head\nText'
    assert convert("{doc}`../book/course`") == f"[{colab.document_titles()['book/course']}]({book}/book/course.html)"
    assert convert("{math}`x^2` and H{sub}`2`O") == "$x^2$ and H<sub>2</sub>O"
    assert convert("The {term}`MUPE <MUPE (Mutual-Understanding Position Encoding)>` and the {term}`alcove`.") == \
        "The MUPE and the alcove."  # glossary terms: plain text (the glossary is the book's page)
    ref = colab.load_references()["w2sg_xu2026"]
    assert convert("{cite:t}`w2sg_xu2026`") == f"[{ref.author}](#ref-w2sg_xu2026) ({ref.year})"
    with pytest.raises(colab.ConversionError, match="unknown_key"):
        convert("{cite}`unknown_key`")
    with pytest.raises(colab.ConversionError, match="role"):
        convert("{glossary}`term`")
    with pytest.raises(colab.ConversionError, match="directive"):
        convert("```{glue:figure} fig\n```")


def test_reference_labels_follow_the_book_author_year_style():
    refs = colab.load_references()
    assert refs["w2sg_xu2026"].author == "Xu et al." and refs["w2sg_xu2026"].year == "2026"
    assert refs["w2sg_burns2023"].author == "Burns et al."  # "and others"
    assert "arxiv.org/abs/2505.24313" in refs["w2sg_xu2026"].entry


# ------------------------------------------------------------------------------------------
# Badges and publishing
# ------------------------------------------------------------------------------------------

COLAB_LINK = re.compile(r"https://colab\.research\.google\.com/(?!assets/)[^)\s\"'<>]+")


def test_colab_address_comes_from_config():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    owner_repo = config["repository"]["url"].removeprefix("https://github.com/").rstrip("/")
    branch = config["colab"]["branch"]
    assert colab.colab_url("tam") == f"https://colab.research.google.com/github/{owner_repo}/blob/{branch}/tam.ipynb"
    assert colab.colab_url("tam", "student").endswith(f"/blob/{config['colab']['student_branch']}/tam.ipynb")


@pytest.mark.parametrize("slug", SLUGS)
def test_the_editions_badge_opens_the_colab_edition(slug):
    _, edition = _edition(slug)
    links = [m[0] for c in edition.cells if c.cell_type == "markdown" for m in COLAB_LINK.finditer(c.source)]
    assert colab.colab_url(slug) in links, "no Open in Colab badge"
    assert set(links) == {colab.colab_url(slug)}, f"Colab links not to the Colab edition: {set(links)}"


@pytest.mark.parametrize("slug", SLUGS)
def test_the_chapters_badges_open_the_colab_edition_once_fixed(slug):
    """Each chapter's badge opens the Colab edition, or is one that `--fix-badges` rewrites to it."""
    text = "\n".join(c.source for c in nbformat.read(chapter_path(slug), as_version=4).cells if c.cell_type == "markdown")
    links = [m[0] for m in COLAB_LINK.finditer(colab.fix_badge_text(text))]
    assert links and set(links) == {colab.colab_url(slug)}, links


def test_fix_badges_is_idempotent_and_touches_only_badges(tmp_path):
    paths = []
    for slug in ("tam", "dq_sync"):
        shutil.copy(chapter_path(slug), tmp_path / f"{slug}.ipynb")
        paths.append(tmp_path / f"{slug}.ipynb")
    legacy = f"{colab.COLAB_GITHUB}/{SETTINGS.owner_repo}/blob/main/chapters/tam.ipynb"
    notebook = nbformat.read(paths[0], as_version=4)
    notebook.cells[0].source += f"\n\n[again]({legacy})"
    nbformat.write(notebook, paths[0])
    before = [nbformat.read(p, as_version=4) for p in paths]
    assert paths[0] in colab.fix_badges(paths)
    after = [nbformat.read(p, as_version=4) for p in paths]
    for slug, old, new in zip(("tam", "dq_sync"), before, after):
        for a, b in zip(old.cells, new.cells):
            if a.cell_type == "markdown":
                assert colab.fix_badge_text(a.source) == b.source
            else:
                assert a == b
        links = {m[0] for c in new.cells for m in COLAB_LINK.finditer(c.source)}
        assert links == {colab.colab_url(slug)}
    snapshot = [p.read_bytes() for p in paths]
    assert colab.fix_badges(paths) == [] and [p.read_bytes() for p in paths] == snapshot
    # Only the links change, byte for byte: the file is edited as text, never re-serialised.
    original = chapter_path("dq_sync").read_text()
    assert paths[1].read_text() == colab.fix_badge_text(original)
    notebook.cells.append(nbformat.v4.new_code_cell(f"url = '{legacy}'"))
    nbformat.write(notebook, paths[0])
    with pytest.raises(ValueError, match="outside the markdown cells"):
        colab.fix_badges(paths[:1])


def test_fix_html_points_badges_and_launch_buttons_at_the_edition(tmp_path):
    source = f"{colab.COLAB_GITHUB}/{SETTINGS.owner_repo}/blob/{SETTINGS.branch}/chapters/tam.ipynb"
    page = tmp_path / "chapters" / "tam.html"
    page.parent.mkdir()
    page.write_text(f'<a href="{source}" title="Launch on Colab">x</a><a href="{source}"><img src="b.svg"></a>')
    assert colab.fix_html(tmp_path) == [page]
    assert page.read_text().count(f'href="{colab.colab_url("tam")}"') == 2
    assert colab.fix_html(tmp_path) == []


def test_the_book_workflow_publishes_both_editions_from_config():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "book.yml").read_text())
    text = (ROOT / ".github" / "workflows" / "book.yml").read_text()
    assert "make colab" in text and "make student" in text and "--fix-html" in text
    assert "colab_branch" in text and "student_branch" in text, "the branches must come from _config.yml"
    steps = [step.get("name", "") for job in workflow["jobs"].values() for step in job.get("steps", [])]
    assert any(name.startswith("Publish the editions") for name in steps), steps
    assert workflow["permissions"]["contents"] == "write", "pushing the editions' branches needs contents: write"


def test_make_colab_command_line(tmp_path):
    run = subprocess.run([sys.executable, "-m", "icml26.colab", "--out", str(tmp_path), "--commit", COMMIT, "tam"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    written = json.loads((tmp_path / "tam.ipynb").read_text())
    assert written["metadata"]["icml26_edition"]["commit"] == COMMIT
    bad = subprocess.run([sys.executable, "-m", "icml26.colab", "--out", str(tmp_path), "--commit", "main", "tam"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "40-digit" in bad.stderr
