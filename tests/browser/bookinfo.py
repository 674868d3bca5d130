"""Where the reader-path tests find the book: its folder, toc, repository settings, build."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SCREENSHOTS = ROOT / "_build" / "screenshots"


def book_html() -> Path:
    """The built book to check (ICML26_BOOK_HTML, default _build/html)."""
    return Path(os.environ.get("ICML26_BOOK_HTML", ROOT / "_build" / "html")).resolve()


def toc_path() -> Path:
    """The toc the book was built from (ICML26_TOC, default book/_toc.yml)."""
    return Path(os.environ.get("ICML26_TOC", ROOT / "book" / "_toc.yml")).resolve()


def toc_files() -> list[str]:
    """The toc's documents in book order ('book/intro', 'chapters/dq_sync', ...), sections included."""
    toc = yaml.safe_load(toc_path().read_text())
    files = [toc["root"]]

    def walk(entries):
        for entry in entries:
            files.append(entry["file"])
            walk(entry.get("sections", []))

    for part in toc.get("parts", []):
        walk(part.get("chapters", []))
    return [f.removesuffix(".md").removesuffix(".ipynb") for f in files]


def repository() -> dict:
    """_config.yml's `repository:` block (url, branch, path_to_book)."""
    return yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]
