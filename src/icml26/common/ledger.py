"""The claims ledger (CONTRIBUTING.md, sections 2 and 3).

A chapter's verdict is a ledger of the paper's own claims ``C1, C2, ...``, one status each,
computed in code from measured figures by a decision function in the chapter's package whose
threshold is a named constant. Checks that the book adds beyond the paper are extensions
``E1, E2, ...``: shown, marked as ours, never counted in the verdict.

- :class:`ClaimStatus` is one decided claim (status, deciding figures, threshold, reason, fragile).
- :func:`per_seed_values` and :func:`per_seed_flags` check what a decision function receives;
  :func:`combine_sub_results` gives a claim's status from its sub-results;
  :func:`robust_status` applies the robustness rule over seeds; :func:`paired_test_p` gives the
  one-sided paired test over evaluation items; :func:`is_fragile` the fragile flag.
- :class:`Ledger` collects a chapter's statuses, shows the table (HTML, with the figures) and
  prints the checked lines (no figures, so they print the same on any machine).
- :func:`read_ledger` reads a stored notebook back for the scoreboard.
"""

from __future__ import annotations

import html
import json
import math
import numbers
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

REPRODUCED = "REPRODUCED"
PARTLY_REPRODUCED = "PARTLY REPRODUCED"
NOT_REPRODUCED = "NOT REPRODUCED"
INCONCLUSIVE = "INCONCLUSIVE"
NOT_TESTED = "NOT TESTED"
STATUSES = (REPRODUCED, PARTLY_REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, NOT_TESTED)
VERDICTS = (REPRODUCED, PARTLY_REPRODUCED, NOT_REPRODUCED)

#: The output-metadata key under which the ledger table stores its machine-readable record
#: (metadata, not a MIME type of its own: the book's renderer would warn about an unknown type).
LEDGER_KEY = "icml26_ledger"
#: The tag of the one cell whose output nbval compares.
CHECK_TAG = "nbval-check-output"

_ID = re.compile(r"^[CE][1-9]\d*$")


def _check_status(status: str) -> str:
    if status not in STATUSES:
        raise ValueError(f"unknown status {status!r}; allowed: {', '.join(STATUSES)}")
    return status


@dataclass(frozen=True)
class ClaimStatus:
    """One claim's decided status.

    claim_id: ``C<n>`` for a claim of the paper, ``E<n>`` for an extension of ours.
    claim: the claim in a few words (printed on the checked line: no decimal figures).
    figures: the deciding figures, name -> value (shown in the table, never printed on the checked line).
    threshold: the decision rule in words, with its named constant (e.g. "gap >= MIN_GAP = 0.10 in every seed").
    reason: one line on why, required for every status other than REPRODUCED.
    fragile: the fragile flag (CONTRIBUTING.md, section 2): the status changes under an extra seed,
        or the deciding figure lies within one standard deviation of its threshold.
    """

    claim_id: str
    claim: str
    status: str
    figures: Mapping[str, object] = field(default_factory=dict)
    threshold: str = ""
    reason: str = ""
    fragile: bool = False

    def __post_init__(self):
        if not isinstance(self.claim_id, str) or not _ID.match(self.claim_id):
            raise ValueError(f"claim id must look like C1 or E1, got {self.claim_id!r}")
        if not isinstance(self.claim, str) or not self.claim.strip() or "\n" in self.claim:
            raise ValueError(f"{self.claim_id}: the claim must be one non-empty line")
        if re.search(r"\d\.\d", self.claim):
            raise ValueError(f"{self.claim_id}: the claim text is printed on the checked line and must hold no decimal figures")
        _check_status(self.status)
        if not isinstance(self.fragile, bool):
            raise TypeError(f"{self.claim_id}: fragile must be a bool, got {type(self.fragile).__name__}")
        if self.status != REPRODUCED and not (isinstance(self.reason, str) and self.reason.strip()):
            raise ValueError(f"{self.claim_id}: status {self.status} needs a one-line reason")
        if "\n" in self.reason:
            raise ValueError(f"{self.claim_id}: the reason must be one line")

    @property
    def extension(self) -> bool:
        return self.claim_id.startswith("E")

    def check_line(self) -> str:
        """The checked line: ``C2 PARTLY REPRODUCED (fragile): claim`` / ``E1 (ours) ...``."""
        ours = " (ours)" if self.extension else ""
        fragile = " (fragile)" if self.fragile else ""
        return f"{self.claim_id}{ours} {self.status}{fragile}: {self.claim}"


def chapter_verdict(statuses: Iterable[str]) -> str:
    """The chapter-verdict rule (CONTRIBUTING.md, section 2) over the paper's claims (extensions excluded).

    REPRODUCED when every tested claim is REPRODUCED; NOT REPRODUCED when no tested claim is
    REPRODUCED or PARTLY REPRODUCED; PARTLY REPRODUCED otherwise. NOT TESTED never counts.
    """
    tested = [_check_status(s) for s in statuses if _check_status(s) != NOT_TESTED]
    if not tested:
        raise ValueError("a chapter needs at least one tested claim")
    if all(s == REPRODUCED for s in tested):
        return REPRODUCED
    if any(s in (REPRODUCED, PARTLY_REPRODUCED) for s in tested):
        return PARTLY_REPRODUCED
    return NOT_REPRODUCED


def _as_bool(value, what: str) -> bool:
    if isinstance(value, bool) or (type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_")):
        return bool(value)
    raise TypeError(f"{what} must be a bool, got {type(value).__name__} ({value!r})")


def per_seed_values(values, what: str, n: int | None = None, min_count: int = 1) -> list[float]:
    """The measured figures handed to a decision function, checked: a sequence (list, tuple or
    array) of finite real numbers, at least `min_count` of them, and exactly `n` when given (one
    per seed or per item). Returns them as floats; bad input raises with what was wrong."""
    if isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__len__"):
        raise TypeError(f"{what} must be a sequence of numbers (one per seed), got {type(values).__name__}")
    out = []
    for v in values:
        if isinstance(v, bool) or type(v).__module__ == "numpy" and type(v).__name__ in ("bool", "bool_") \
                or not isinstance(v, numbers.Real):
            raise TypeError(f"{what} must hold numbers, got {type(v).__name__} ({v!r})")
        if not math.isfinite(float(v)):
            raise ValueError(f"{what} holds a non-finite value ({v!r})")
        out.append(float(v))
    if n is not None and len(out) != n:
        raise ValueError(f"{what} has {len(out)} values for {n} seeds")
    if len(out) < min_count:
        raise ValueError(f"{what}: needs at least {min_count} values, got {len(out)}")
    return out


def per_seed_flags(values, what: str) -> list[bool]:
    """Yes/no results handed to a decision function (one per seed, run or density), checked:
    a sequence of bools (Python or numpy). Returns them as Python bools."""
    if isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__len__"):
        raise TypeError(f"{what} must be a sequence of bools, got {type(values).__name__}")
    return [_as_bool(v, what) for v in values]


def combine_sub_results(statuses: Iterable[str]) -> str:
    """The status of a claim made of several sub-results (datasets, baselines, metrics): all
    REPRODUCED -> REPRODUCED; some REPRODUCED or PARTLY -> PARTLY REPRODUCED; all NOT REPRODUCED
    -> NOT REPRODUCED; otherwise (none holds, some undecided) INCONCLUSIVE."""
    subs = [_check_status(s) for s in statuses]
    if not subs:
        raise ValueError("a claim needs at least one sub-result")
    if all(s == REPRODUCED for s in subs):
        return REPRODUCED
    if any(s in (REPRODUCED, PARTLY_REPRODUCED) for s in subs):
        return PARTLY_REPRODUCED
    if all(s == NOT_REPRODUCED for s in subs):
        return NOT_REPRODUCED
    return INCONCLUSIVE


def robust_status(holds_per_seed: Sequence[bool], size_ok_per_seed: Sequence[bool] | None = None,
                  min_seeds: int = 3) -> str:
    """The robustness rule over seeds (CONTRIBUTING.md, section 2).

    holds_per_seed: whether the effect's direction held, one bool per seed (at least `min_seeds`).
    size_ok_per_seed: where a size applies, whether it reached half the paper's, per seed.
    Every seed holds -> REPRODUCED (PARTLY REPRODUCED when the size misses in any seed); no seed
    holds -> NOT REPRODUCED; seeds disagree -> INCONCLUSIVE.
    """
    holds = [_as_bool(h, "each seed's outcome") for h in holds_per_seed]
    if len(holds) < min_seeds:
        raise ValueError(f"the robustness rule needs at least {min_seeds} seeds, got {len(holds)}")
    if size_ok_per_seed is not None:
        size = [_as_bool(s, "each seed's size check") for s in size_ok_per_seed]
        if len(size) != len(holds):
            raise ValueError(f"{len(size)} size checks for {len(holds)} seeds")
    else:
        size = [True] * len(holds)
    if all(holds):
        return REPRODUCED if all(size) else PARTLY_REPRODUCED
    if not any(holds):
        return NOT_REPRODUCED
    return INCONCLUSIVE


def paired_test_p(method: Sequence[float], baseline: Sequence[float], min_items: int = 30) -> float:
    """One-sided paired test that `method` exceeds `baseline` (Wilcoxon signed-rank; p-value).

    Over at least `min_items` paired evaluation items of one run (the ledger rules' alternative to 3 seeds).
    All-zero differences give p = 1 (no evidence of an effect).
    """
    from scipy.stats import wilcoxon

    a = [float(x) for x in method]
    b = [float(x) for x in baseline]
    if len(a) != len(b):
        raise ValueError(f"paired test needs equal lengths, got {len(a)} and {len(b)}")
    if len(a) < min_items:
        raise ValueError(f"paired test needs at least {min_items} items, got {len(a)}")
    if any(not math.isfinite(x) for x in a + b):
        raise ValueError("paired test got a non-finite value")
    if all(x == y for x, y in zip(a, b)):
        return 1.0
    return float(wilcoxon(a, b, alternative="greater", zero_method="zsplit").pvalue)


def is_fragile(values: Sequence[float], threshold: float, statuses_per_seed: Sequence[str] = ()) -> bool:
    """The fragile flag: the mean deciding figure lies within one standard deviation (across
    seeds) of its threshold, or the per-seed statuses (extra seeds included) disagree."""
    vals = [float(v) for v in values]
    if not vals:
        raise ValueError("is_fragile needs at least one value")
    for s in statuses_per_seed:
        _check_status(s)
    if len(set(statuses_per_seed)) > 1:
        return True
    if len(vals) < 2:
        return False
    mean = sum(vals) / len(vals)
    sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (len(vals) - 1))
    return abs(mean - float(threshold)) <= sd


def _figure_text(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3g}" if math.isfinite(value) else str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_figure_text(v) for v in value) + "]"
    return str(value)


class Ledger:
    """A chapter's ledger: one :class:`ClaimStatus` per claim of the paper, then extensions.

    `claim_ids` are the chapter's claim ids (the package keeps them as a constant
    ``CLAIM_IDS``); the ledger refuses an id outside that list and, when shown or checked, a
    missing one.
    """

    def __init__(self, slug: str, claim_ids: Sequence[str], source_basis: str = ""):
        ids = list(claim_ids)
        if not ids or any(not isinstance(i, str) or not re.match(r"^C[1-9]\d*$", i) for i in ids):
            raise ValueError(f"claim_ids must be a non-empty list like ['C1', 'C2'], got {claim_ids!r}")
        if len(set(ids)) != len(ids):
            raise ValueError(f"claim_ids repeat an id: {ids}")
        self.slug, self.claim_ids, self.source_basis = slug, ids, source_basis
        self.entries: dict[str, ClaimStatus] = {}

    def add(self, entry: ClaimStatus) -> ClaimStatus:
        if not isinstance(entry, ClaimStatus):
            raise TypeError(f"Ledger.add takes a ClaimStatus, got {type(entry).__name__}")
        if not entry.extension and entry.claim_id not in self.claim_ids:
            raise ValueError(f"{entry.claim_id} is not a claim of {self.slug}; its claims: {', '.join(self.claim_ids)}")
        if entry.claim_id in self.entries:
            raise ValueError(f"{entry.claim_id} was already added")
        self.entries[entry.claim_id] = entry
        return entry

    def extend(self, entries: Iterable[ClaimStatus]) -> "Ledger":
        for e in entries:
            self.add(e)
        return self

    def _ordered(self) -> list[ClaimStatus]:
        missing = [c for c in self.claim_ids if c not in self.entries]
        if missing:
            raise ValueError(f"the ledger of {self.slug} lacks {', '.join(missing)}")
        claims = [self.entries[c] for c in self.claim_ids]
        ext = sorted((e for e in self.entries.values() if e.extension), key=lambda e: int(e.claim_id[1:]))
        return claims + ext

    def verdict(self) -> str:
        return chapter_verdict(e.status for e in self._ordered() if not e.extension)

    def verdict_line(self) -> str:
        claims = [e for e in self._ordered() if not e.extension]
        tested = [e for e in claims if e.status != NOT_TESTED]
        done = sum(e.status == REPRODUCED for e in tested)
        return f"Verdict: {self.verdict()} ({done} of {len(tested)} tested claims reproduced)"

    def check_lines(self) -> str:
        """The checked output: one status line per claim, extensions, then the verdict."""
        return "\n".join([e.check_line() for e in self._ordered()] + [self.verdict_line()])

    def print_check(self) -> None:
        """Print the checked lines (the only thing the cell tagged nbval-check-output prints)."""
        print(self.check_lines())

    def record(self) -> dict:
        """The machine-readable ledger stored with the table (read back by the scoreboard)."""
        return {
            "slug": self.slug,
            "source_basis": self.source_basis,
            "verdict": self.verdict(),
            "claims": [
                {"id": e.claim_id, "claim": e.claim, "status": e.status, "fragile": e.fragile,
                 "reason": e.reason, "threshold": e.threshold, "extension": e.extension,
                 "figures": {k: _figure_text(v) for k, v in e.figures.items()}}
                for e in self._ordered()
            ],
        }

    def html_table(self) -> str:
        head = ("<table class='ledger'><thead><tr><th>id</th><th>claim</th><th>deciding figures</th>"
                "<th>threshold</th><th>status</th><th>why</th></tr></thead><tbody>")
        rows = []
        for e in self._ordered():
            figs = "<br>".join(f"{html.escape(str(k))} = {html.escape(_figure_text(v))}" for k, v in e.figures.items())
            status = html.escape(e.status) + (" (fragile)" if e.fragile else "")
            ident = html.escape(e.claim_id) + (" (ours)" if e.extension else "")
            rows.append(
                f"<tr><td>{ident}</td><td>{html.escape(e.claim)}</td><td>{figs}</td>"
                f"<td>{html.escape(e.threshold)}</td><td><b>{status}</b></td><td>{html.escape(e.reason)}</td></tr>"
            )
        # "Chapter verdict", not "Verdict:": the checked cell's line is the one verdict line on the page.
        verdict = html.escape(self.verdict_line().removeprefix("Verdict: "))
        return head + "".join(rows) + f"</tbody></table><p><b>Chapter verdict:</b> {verdict}</p>"

    def show(self) -> None:
        """Display the ledger table (HTML) with its machine-readable record attached."""
        from IPython.display import display

        display({"text/html": self.html_table(), "text/plain": self.check_lines()}, raw=True,
                metadata={LEDGER_KEY: self.record()})


_LINE = re.compile(rf"^(?P<id>[CE]\d+)(?P<ours> \(ours\))? (?P<status>{'|'.join(STATUSES)})(?P<fragile> \(fragile\))?: (?P<claim>.*)$")
_VERDICT = re.compile(rf"^Verdict: (?P<verdict>{'|'.join(VERDICTS)})\b")


def parse_check_output(text: str) -> dict:
    """Parse checked lines back: {"claims": {id: {"status", "fragile", "claim"}}, "verdict": str|None}."""
    claims, verdict = {}, None
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if m:
            claims[m["id"]] = {"status": m["status"], "fragile": bool(m["fragile"]), "claim": m["claim"]}
            continue
        v = _VERDICT.match(line.strip())
        if v:
            verdict = v["verdict"]
    return {"claims": claims, "verdict": verdict}


def _joined(text) -> str:
    return "".join(text) if isinstance(text, list) else (text or "")


@dataclass(frozen=True)
class StoredLedger:
    """A chapter's stored ledger and reduced-run time, read from its notebook file."""

    slug: str
    record: dict | None
    checked: dict
    duration_s: float | None
    scale: str | None


def read_ledger(notebook: str | Path) -> StoredLedger:
    """Read a stored notebook: the ledger record (from the table's output) and the checked lines."""
    path = Path(notebook)
    nb = json.loads(path.read_text())
    record, checked_text = None, ""
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        for out in cell.get("outputs", []):
            if LEDGER_KEY in out.get("metadata", {}):
                record = out["metadata"][LEDGER_KEY]
        if CHECK_TAG in cell.get("metadata", {}).get("tags", []):
            checked_text += "".join(_joined(o.get("text")) for o in cell.get("outputs", []) if o.get("name") == "stdout")
    papermill = nb.get("metadata", {}).get("papermill", {})
    return StoredLedger(path.stem, record, parse_check_output(checked_text),
                        papermill.get("duration"), papermill.get("parameters", {}).get("SCALE"))
