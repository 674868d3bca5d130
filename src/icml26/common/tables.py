"""Markdown tables that code prints (CONTRIBUTING.md, "What the reader sees")."""

from __future__ import annotations


def markdown_cell(text: str) -> str:
    """`text` as one cell of a Markdown table row: a pipe in it (PRISM's "|z|=1", say) is escaped,
    since an unescaped one starts a new cell and shifts the rest of the row."""
    return str(text).replace("\\|", "|").replace("|", "\\|")
