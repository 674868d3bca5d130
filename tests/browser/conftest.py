"""Fixtures for the reader-path tests (`make browser`, part of `make test`).

These tests are slow (a headless browser over every page; a fresh virtual environment for the
Colab install), so they run once, in their own pytest invocation that sets ICML26_BROWSER=1;
elsewhere (`make unit`, a bare `pytest tests`) they are skipped.

Environment:
  ICML26_BROWSER=1     run them
  ICML26_BOOK_HTML     the built book to check (default: _build/html, built with OFFLINE=1)
  ICML26_TOC           the table of contents the book was built from (default: book/_toc.yml)
  ICML26_CHROMIUM      the Chromium binary (default: /usr/bin/chromium)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bookinfo import SCREENSHOTS, book_html  # noqa: E402

ENABLED = os.environ.get("ICML26_BROWSER") == "1"


def pytest_collection_modifyitems(config, items):
    if ENABLED:
        return
    skip = pytest.mark.skip(reason="reader-path test: run with `make browser` (part of `make test`)")
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def built_book() -> Path:
    html = book_html()
    if not (html / "index.html").is_file():
        pytest.fail(f"no built book at {html}: run `make browser` (it builds with OFFLINE=1 first)")
    if not (html / "_vendor" / "mathjax" / "tex-mml-chtml.js").is_file():
        pytest.fail(f"{html} is not an offline build (no _vendor/): run `make book-strict OFFLINE=1`")
    return html


@pytest.fixture(scope="session")
def server(built_book):
    from pagecheck import StaticServer

    with StaticServer(built_book) as srv:
        yield srv


@pytest.fixture(scope="session")
def browser(tmp_path_factory):
    from playwright.sync_api import sync_playwright

    if not Path(os.environ.get("ICML26_CHROMIUM", "/usr/bin/chromium")).exists():
        pytest.fail("Chromium is not installed (Debian: apt-get install chromium; .ci/run does it)")
    from pagecheck import launch

    with sync_playwright() as playwright:
        context = launch(playwright, tmp_path_factory.mktemp("chromium-profile"))
        yield context
        context.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    # `make browser` clears old screenshots once; here two workers may share the folder
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
