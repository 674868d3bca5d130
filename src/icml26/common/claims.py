"""The reproduction check (CHAPTER_STANDARD §8): three printed lines, a verdict computed
from measured figures against a criterion fixed in code, and the reader that turns the
stored lines back into a record for the scoreboard page and the guard test."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

REPRODUCED, NOT_REPRODUCED = "REPRODUCED", "NOT REPRODUCED"


@dataclass(frozen=True)
class ClaimResult:
    """What one chapter's check found: the claim, its figures, the verdict."""

    claim: str
    measured: str
    verdict: str
    checks: Mapping[str, bool]

    @property
    def reproduced(self) -> bool:
        return self.verdict == REPRODUCED

    def lines(self) -> str:
        return f"Claim: {self.claim}\nMeasured: {self.measured}\nVerdict: {self.verdict}"


def format_figure(value, digits: int = 2) -> str:
    """Format a measured figure coarsely enough that re-runs print the same text."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        return f"{value:.{digits}g}"
    return str(value)


def report_claim(
    claim: str,
    measured: Mapping[str, object],
    checks: Mapping[str, bool],
    digits: int = 2,
) -> ClaimResult:
    """Print `Claim:` / `Measured:` / `Verdict:` and return the result.

    `checks` maps each named part of the pass criterion to whether it held; the verdict is
    REPRODUCED only when every part held. The criterion lives in the caller's code, fixed
    before the figures are seen; nothing here can be told the verdict directly.
    """
    if not claim or "\n" in claim:
        raise ValueError("claim must be one non-empty line")
    if not measured:
        raise ValueError("measured must name at least one figure")
    if not checks:
        raise ValueError("checks must hold at least one named criterion")
    for name, held in checks.items():
        if not isinstance(held, bool) and type(held).__name__ != "bool_":
            raise TypeError(f"check {name!r} must be a bool, got {type(held).__name__}")
    figures = ", ".join(f"{name}={format_figure(value, digits)}" for name, value in measured.items())
    verdict = REPRODUCED if all(bool(h) for h in checks.values()) else NOT_REPRODUCED
    result = ClaimResult(claim, figures, verdict, {k: bool(v) for k, v in checks.items()})
    print(result.lines())
    return result


_LINE = re.compile(r"^(Claim|Measured|Verdict): (.*)$", re.M)


def parse_claim_block(text: str) -> dict[str, str] | None:
    """Find the three lines in printed text; None when any is missing."""
    found = {key.lower(): value.strip() for key, value in _LINE.findall(text)}
    if {"claim", "measured", "verdict"} <= set(found):
        return found
    return None


@dataclass(frozen=True)
class ChapterRecord:
    """A chapter's stored verdict and reduced-run time, read from its notebook file."""

    slug: str
    claim: str | None
    measured: str | None
    verdict: str | None
    duration_s: float | None
    scale: str | None


def _cell_text(cell: dict) -> str:
    parts = []
    for output in cell.get("outputs", []):
        text = output.get("text", "")
        parts.append("".join(text) if isinstance(text, list) else text)
        plain = output.get("data", {}).get("text/plain", "")
        parts.append("".join(plain) if isinstance(plain, list) else plain)
    return "".join(parts)


def read_chapter_record(notebook: str | Path) -> ChapterRecord:
    """Read the stored check of a chapter notebook (the `# NBVAL_CHECK_OUTPUT` cells)."""
    path = Path(notebook)
    nb = json.loads(path.read_text())
    checked = [
        c for c in nb.get("cells", [])
        if c.get("cell_type") == "code" and "NBVAL_CHECK_OUTPUT" in "".join(c.get("source", ""))
    ]
    block = None
    for cell in checked:
        block = parse_claim_block(_cell_text(cell)) or block
    papermill = nb.get("metadata", {}).get("papermill", {})
    return ChapterRecord(
        slug=path.stem,
        claim=block and block["claim"],
        measured=block and block["measured"],
        verdict=block and block["verdict"],
        duration_s=papermill.get("duration"),
        scale=papermill.get("parameters", {}).get("SCALE"),
    )
