"""Show the real source of an imported object in a notebook, so the text and the code
that runs can never drift apart."""

from __future__ import annotations

import inspect
import textwrap


def source_of(obj) -> str:
    """The source text of a function, class or method, dedented."""
    try:
        return textwrap.dedent(inspect.getsource(obj))
    except (TypeError, OSError) as error:
        raise TypeError(f"cannot show the source of {obj!r}: {error}") from error


def show_source(*objects) -> None:
    """Display the highlighted source of each object (a function, class or method)."""
    from IPython.display import Code, display

    for obj in objects:
        display(Code(source_of(obj), language="python"))
