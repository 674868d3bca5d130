"""Show the real source of an imported object in a notebook, so the text and the code that
runs can never drift apart (CONTRIBUTING.md, section 3, item 5).

`show_source(obj)` shows a function or class as it is; `excerpt` cuts what a reader needs next
to one equation: argument validation left out, or only a marked region of a function. Marking a
region in the package is a pair of comments that do not change what runs::

    # region: posterior update
    ...
    # endregion
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap

_REGION_START = re.compile(r"^\s*# region: (?P<name>.+?)\s*$")
_REGION_END = re.compile(r"^\s*# endregion\s*$")
OMITTED = "# ... (argument checks omitted)"


def source_of(obj) -> str:
    """The source text of a function, class or method, dedented."""
    try:
        return textwrap.dedent(inspect.getsource(obj))
    except (TypeError, OSError) as error:
        raise TypeError(f"cannot show the source of {obj!r}: {error}") from error


def _is_validation(node: ast.stmt) -> bool:
    """An argument check: `if ...: raise ...` (every branch only raises) or an `assert`."""
    if isinstance(node, ast.Assert):
        return True
    if isinstance(node, ast.If):
        branches = [node.body] + ([node.orelse] if node.orelse else [])
        return all(
            all(isinstance(s, ast.Raise) or (isinstance(s, ast.If) and _is_validation(s)) for s in b)
            for b in branches
        )
    return False


def _validation_lines(text: str) -> set[int]:
    """0-based line numbers of the argument checks in the first function found in `text`."""
    tree = ast.parse(text)
    func = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if func is None:
        return set()
    drop: set[int] = set()
    for node in func.body:
        if _is_validation(node):
            drop.update(range(node.lineno - 1, node.end_lineno))
    return drop


def _docstring_lines(text: str) -> set[int]:
    """0-based line numbers of the docstring of the first function or class in `text`."""
    node = next((n for n in ast.walk(ast.parse(text))
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))), None)
    if node is None or not node.body:
        return set()
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return set(range(first.lineno - 1, first.end_lineno))
    return set()


def _without_markers(lines: list[str]) -> list[str]:
    return [line for line in lines if not (_REGION_START.match(line) or _REGION_END.match(line))]


def _region(lines: list[str], name: str, where: str) -> list[str]:
    starts = [i for i, line in enumerate(lines) if (m := _REGION_START.match(line)) and m["name"] == name]
    if len(starts) != 1:
        found = [m["name"] for line in lines if (m := _REGION_START.match(line))]
        raise ValueError(f"{where} has {len(starts)} regions named {name!r}; its regions: {found or 'none'}")
    end = next((i for i in range(starts[0] + 1, len(lines)) if _REGION_END.match(lines[i])), None)
    if end is None:
        raise ValueError(f"region {name!r} of {where} has no '# endregion'")
    return textwrap.dedent("\n".join(lines[starts[0] + 1:end])).splitlines()


def excerpt(obj, region: str | None = None, drop_validation: bool = True, drop_docstring: bool = False,
            max_lines: int = 30) -> str:
    """The lines of `obj`'s real source a reader needs beside one equation.

    region: only the lines between `# region: <name>` and `# endregion` in the source.
    drop_validation: leave out argument checks (`if ...: raise`, `assert`), marked by one comment.
    drop_docstring: leave out the docstring.
    max_lines: an excerpt longer than this is refused (mark a region instead).
    """
    text = source_of(obj)
    where = getattr(obj, "__qualname__", repr(obj))
    lines = text.splitlines()
    checks = _validation_lines(text) if drop_validation else set()
    drop = set(checks) | (_docstring_lines(text) if drop_docstring else set())
    kept = []
    for i, line in enumerate(lines):
        if i in checks and i - 1 not in checks:  # one marker where each run of checks was
            kept.append(line[: len(line) - len(line.lstrip())] + OMITTED)
        if i not in drop:
            kept.append(line)
    kept = _region(kept, region, where) if region is not None else _without_markers(kept)
    if not kept:
        raise ValueError(f"the excerpt of {where} is empty")
    if len(kept) > max_lines:
        raise ValueError(
            f"the excerpt of {where} has {len(kept)} lines (> max_lines={max_lines}); "
            f"mark a region with '# region: <name>' ... '# endregion' and pass region=<name>"
        )
    return "\n".join(kept)


def show_source(*objects, region: str | None = None, drop_validation: bool = False, max_lines: int | None = None) -> None:
    """Display the highlighted source of each object (a function, class or method).

    With `region` or `drop_validation` (or `max_lines`), show the :func:`excerpt` instead.
    """
    from IPython.display import Code, display

    for obj in objects:
        if region is None and not drop_validation and max_lines is None:
            text = "\n".join(_without_markers(source_of(obj).splitlines()))
        else:
            text = excerpt(obj, region=region, drop_validation=drop_validation,
                           max_lines=max_lines if max_lines is not None else 30)
        display(Code(text, language="python"))
