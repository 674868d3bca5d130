"""Numbers in a page's prose that come from its run (CONTRIBUTING.md, "Numbers in prose").

A code cell formats a figure and stores it under a name; the prose pastes it with MyST-NB's
role, so a re-run can never leave a stale number in the text::

    glue("steps", config.total_steps)              # code cell (no visible output)
    glue("lead", lead, ".2f")
    ... trains for {glue:text}`steps` steps; the lead is {glue:text}`lead`.   # markdown

The stored output is MyST-NB's own glue format (the ``scrapbook`` metadata, the papermill record
MIME prefix), written here so a notebook needs no myst_nb at run time (Colab has none). The text is
stored as a Python string literal, so the book pastes exactly the formatted text ("1,200" stays
"1,200"). The Colab edition (``icml26.colab``) pastes the same stored text into its markdown.
"""

from __future__ import annotations

import ast

#: MyST-NB's prefix for glued data that is stored but not shown in the cell's output.
GLUE_PREFIX = "application/papermill.record/"
GLUE_MIME = GLUE_PREFIX + "text/plain"


def glue(name: str, value, fmt: str = "") -> None:
    """Store `value`, formatted with `fmt` (a format spec such as ".3f" or ","), under `name` for
    the prose's {glue:text}`name`. Nothing shows in the cell's output (it returns None, so a cell
    that ends with a glue call prints nothing either)."""
    from IPython.display import display

    if not name.isidentifier():
        raise ValueError(f"a glue name must be an identifier (letters, digits, _), got {name!r}")
    try:
        text = format(value, fmt)
    except (TypeError, ValueError) as error:
        raise ValueError(f"cannot format {value!r} with {fmt!r}: {error}") from None
    display({GLUE_MIME: repr(text)}, raw=True,
            metadata={"scrapbook": {"name": name, "mime_prefix": GLUE_PREFIX}})


def format_glued(text: str, fmt: str = "") -> str:
    """A stored glue text as MyST-NB's {glue:text} pastes it: the Python literal read back, then
    formatted with `fmt` (its last character picks str, int or float, as in MyST-NB)."""
    try:
        value = ast.literal_eval(text)
    except (SyntaxError, ValueError):
        value = text
    if not fmt:
        return str(value)
    kind = fmt[-1]
    value = str(value) if kind == "s" else int(value) if kind in "bcdoxX" else float(value) if kind in "eEfFgGn%" \
        else value
    return format(value, fmt)


def glued_values(cells) -> dict[str, str]:
    """name -> glued text (the stored literal) of every glue output in a notebook's cells (v4 dicts)."""
    values = {}
    for cell in cells:
        for out in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            meta = out.get("metadata", {}).get("scrapbook")
            data = out.get("data", {})
            if meta and GLUE_MIME in data:
                text = data[GLUE_MIME]
                values[meta["name"]] = "".join(text) if isinstance(text, list) else text
    return values
