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
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

REPRODUCED = "REPRODUCED"
PARTLY_REPRODUCED = "PARTLY REPRODUCED"
NOT_REPRODUCED = "NOT REPRODUCED"
INCONCLUSIVE = "INCONCLUSIVE"
NOT_TESTED = "NOT TESTED"
STATUSES = (REPRODUCED, PARTLY_REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, NOT_TESTED)
VERDICTS = (REPRODUCED, PARTLY_REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE)
#: Statuses that decide a claim one way or the other (rule 2 forbids them on an incompetent arm).
DECIDED = (REPRODUCED, PARTLY_REPRODUCED, NOT_REPRODUCED)
#: The significance level of every test in the book (one-sided).
ALPHA = 0.05
#: Rule 1: independently trained seeds a comparison of trained methods needs.
MIN_SEEDS = 3
#: Rule 1: paired evaluation items a claim about a fixed procedure needs.
MIN_ITEMS = 30

#: The output-metadata key under which the ledger table stores its machine-readable record
#: (metadata, not a MIME type of its own: the book's renderer would warn about an unknown type).
LEDGER_KEY = "icml26_ledger"
#: The widest checked line; a longer claim continues on indented lines.
CHECK_WIDTH = 100
#: The tag of the one cell whose output nbval compares.
CHECK_TAG = "nbval-check-output"

_ID = re.compile(r"^[CE][1-9]\d*$")


def _check_status(status: str) -> str:
    if status not in STATUSES:
        raise ValueError(f"unknown status {status!r}; allowed: {', '.join(STATUSES)}")
    return status


@dataclass(frozen=True)
class Competence:
    """Rule 2: one arm's competence check, fixed in code before the run.

    arm: the arm's name; figure: its measured figure (accuracy, return, R^2, ...); bar: what it
    must reach (a trivial baseline or chance plus a stated margin, or its training criterion);
    higher_is_better: False when the figure must stay at or below the bar (a loss, an error).
    """

    arm: str
    figure: float
    bar: float
    higher_is_better: bool = True

    def __post_init__(self):
        if not isinstance(self.arm, str) or not self.arm.strip():
            raise ValueError("a competence check needs the arm's name")
        for name in ("figure", "bar"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
                raise ValueError(f"competence of {self.arm}: {name} must be a finite number, got {value!r}")
            object.__setattr__(self, name, float(value))

    @property
    def passed(self) -> bool:
        return self.figure >= self.bar if self.higher_is_better else self.figure <= self.bar

    def text(self) -> str:
        sign = ">=" if self.higher_is_better else "<="
        mark = "ok" if self.passed else "FAILS"
        return f"{self.arm}: {_figure_text(self.figure)} (needs {sign} {_figure_text(self.bar)}) {mark}"


@dataclass(frozen=True)
class ThresholdChange:
    """Rule 7: a threshold, competence check or test changed after a result was seen."""

    what: str
    old: str
    new: str
    why: str

    def __post_init__(self):
        for name in ("what", "old", "new", "why"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip() or "\n" in value:
                raise ValueError(f"a threshold change needs a one-line {name!r}, got {value!r}")

    def text(self) -> str:
        return f"{self.what}: {self.old} -> {self.new} ({self.why})"


@dataclass(frozen=True)
class ClaimStatus:
    """One claim's decided status.

    claim_id: ``C<n>`` for a claim of the paper, ``E<n>`` for an extension of ours.
    claim: the claim in a few words (printed on the checked line: no decimal figures).
    figures: the deciding figures, name -> value (shown in the table, never printed on the checked line).
    threshold: the decision rule in words, with its named constant (e.g. "gap >= MIN_GAP = 0.10 in every seed").
    reason: one line on why, required for every status other than REPRODUCED.
    fragile: rule 5: the status changes under one extra seed, or the 95% interval of the deciding
        figure crosses its threshold (:func:`is_fragile`).
    competence: rule 2: every compared arm's :class:`Competence`. A failed one allows only
        INCONCLUSIVE or NOT TESTED, unless ``arm_failure_is_claim`` (the paper claims the arm fails).
    by_construction: rule 3: the check cannot come out the other way in our implementation. Such a
        check decides the claim only when ``property_claim`` (the paper's claim is that very
        property); otherwise the status must be NOT TESTED.
    stand_in: rule 4: the status was obtained with a hand-written stand-in for the paper's learned
        or LLM component; it counts as PARTLY REPRODUCED at most in the verdict.
    changes: rule 7: thresholds or tests changed after a result was seen; forces ``fragile``.
    """

    claim_id: str
    claim: str
    status: str
    figures: Mapping[str, object] = field(default_factory=dict)
    threshold: str = ""
    reason: str = ""
    fragile: bool = False
    competence: Sequence[Competence] = ()
    arm_failure_is_claim: bool = False
    by_construction: bool = False
    property_claim: bool = False
    stand_in: bool = False
    changes: Sequence[ThresholdChange] = ()

    def __post_init__(self):
        if not isinstance(self.claim_id, str) or not _ID.match(self.claim_id):
            raise ValueError(f"claim id must look like C1 or E1, got {self.claim_id!r}")
        if not isinstance(self.claim, str) or not self.claim.strip() or "\n" in self.claim:
            raise ValueError(f"{self.claim_id}: the claim must be one non-empty line")
        if re.search(r"\d\.\d", self.claim):
            raise ValueError(f"{self.claim_id}: the claim text is printed on the checked line and must hold no decimal figures")
        _check_status(self.status)
        for name in ("fragile", "arm_failure_is_claim", "by_construction", "property_claim", "stand_in"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{self.claim_id}: {name} must be a bool, got {type(getattr(self, name)).__name__}")
        if self.status != REPRODUCED and not (isinstance(self.reason, str) and self.reason.strip()):
            raise ValueError(f"{self.claim_id}: status {self.status} needs a one-line reason")
        if "\n" in self.reason:
            raise ValueError(f"{self.claim_id}: the reason must be one line")
        object.__setattr__(self, "competence", tuple(self.competence))
        object.__setattr__(self, "changes", tuple(self.changes))
        if any(not isinstance(c, Competence) for c in self.competence):
            raise TypeError(f"{self.claim_id}: competence takes Competence checks")
        if any(not isinstance(c, ThresholdChange) for c in self.changes):
            raise TypeError(f"{self.claim_id}: changes takes ThresholdChange entries")
        failed = [c.arm for c in self.competence if not c.passed]
        if failed and self.status in DECIDED and not self.arm_failure_is_claim:
            raise ValueError(f"{self.claim_id}: rule 2: arm(s) {', '.join(failed)} failed the competence check, "
                             f"so the status must be {INCONCLUSIVE} (or {NOT_TESTED}), not {self.status}")
        if self.by_construction and not self.property_claim and self.status != NOT_TESTED:
            raise ValueError(f"{self.claim_id}: rule 3: a check that holds by construction decides a claim only "
                             f"when the paper's claim is that property (property_claim=True); otherwise {NOT_TESTED}")
        if self.changes and not self.fragile:
            object.__setattr__(self, "fragile", True)  # rule 7: a threshold changed after a result

    @property
    def extension(self) -> bool:
        return self.claim_id.startswith("E")

    @property
    def counted_status(self) -> str:
        """The status as the verdict counts it (rule 4: a stand-in's REPRODUCED counts as PARTLY)."""
        return PARTLY_REPRODUCED if self.stand_in and self.status == REPRODUCED else self.status

    def marks(self) -> str:
        return "".join(f" ({m})" for m, on in (("fragile", self.fragile), ("stand-in", self.stand_in),
                                                ("by construction", self.by_construction)) if on)

    def check_line(self) -> str:
        """The checked line: ``C2 PARTLY REPRODUCED (fragile) (stand-in): claim`` / ``E1 (ours) ...``.
        A line longer than ``CHECK_WIDTH`` continues the claim's words on indented lines, so the
        stored output fits the code column (the status and marks stay on the first line)."""
        ours = " (ours)" if self.extension else ""
        line = f"{self.claim_id}{ours} {self.status}{self.marks()}: {self.claim}"
        return textwrap.fill(line, CHECK_WIDTH, subsequent_indent="    ", break_long_words=False,
                             break_on_hyphens=False)


def gate_competence(status: str, competence: Sequence[Competence], arm_failure_is_claim: bool = False) -> str:
    """Rule 2: the status a decision function may report: INCONCLUSIVE when any arm failed its
    competence check (unless the paper's claim is that the arm fails)."""
    _check_status(status)
    if status in DECIDED and not arm_failure_is_claim and any(not c.passed for c in competence):
        return INCONCLUSIVE
    return status


def competence_reason(competence: Sequence[Competence]) -> str:
    """One line naming the arms that failed their competence check, with their figures."""
    failed = [c.text() for c in competence if not c.passed]
    return ("rule 2: " + "; ".join(failed) + ": the comparison decides nothing") if failed else ""


def chapter_verdict(statuses: Iterable) -> str:
    """Rule 8, over the paper's claims (extensions excluded). Takes statuses or :class:`ClaimStatus`
    entries (a stand-in's REPRODUCED counts as PARTLY REPRODUCED).

    REPRODUCED when every tested claim is REPRODUCED; INCONCLUSIVE when every tested claim is
    INCONCLUSIVE; NOT REPRODUCED when no tested claim is REPRODUCED or PARTLY REPRODUCED and at
    least one is NOT REPRODUCED; PARTLY REPRODUCED otherwise. NOT TESTED never counts.
    """
    counted = [_check_status(s.counted_status if isinstance(s, ClaimStatus) else s) for s in statuses]
    tested = [s for s in counted if s != NOT_TESTED]
    if not tested:
        raise ValueError("a chapter needs at least one tested claim")
    if all(s == REPRODUCED for s in tested):
        return REPRODUCED
    if all(s == INCONCLUSIVE for s in tested):
        return INCONCLUSIVE
    if not any(s in (REPRODUCED, PARTLY_REPRODUCED) for s in tested):
        return NOT_REPRODUCED
    return PARTLY_REPRODUCED


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
    """The status of a claim made of several sub-results (datasets, baselines,
    metrics): all REPRODUCED -> REPRODUCED; some REPRODUCED or PARTLY ->
    PARTLY REPRODUCED; all NOT REPRODUCED -> NOT REPRODUCED; otherwise (none
    holds, some undecided) INCONCLUSIVE."""
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


def seed_statuses(holds_per_seed: Sequence[bool]) -> list[str]:
    """One status per seed: REPRODUCED where the effect held, NOT REPRODUCED where it did not."""
    return [REPRODUCED if h else NOT_REPRODUCED for h in per_seed_flags(holds_per_seed, "each seed's outcome")]


def robust_status(holds_per_seed: Sequence[bool], size_ok_per_seed: Sequence[bool] | None = None,
                  min_seeds: int = MIN_SEEDS) -> str:
    """Rule 1's plain form over seeds (each seed trains every arm afresh).

    holds_per_seed: whether the effect's direction held, one bool per seed (at least `min_seeds`).
    size_ok_per_seed: where a size applies, whether it reached half the paper's, per seed.
    Every seed holds -> REPRODUCED (PARTLY REPRODUCED when the size misses in any seed); no seed
    holds -> NOT REPRODUCED; seeds disagree -> INCONCLUSIVE.
    """
    holds = per_seed_flags(holds_per_seed, "each seed's outcome")
    if len(holds) < min_seeds:
        raise ValueError(f"rule 1 needs at least {min_seeds} independently trained seeds, got {len(holds)}")
    size = [True] * len(holds) if size_ok_per_seed is None else per_seed_flags(size_ok_per_seed, "each seed's size check")
    if len(size) != len(holds):
        raise ValueError(f"{len(size)} size checks for {len(holds)} seeds")
    if all(holds):
        return REPRODUCED if all(size) else PARTLY_REPRODUCED
    if not any(holds):
        return NOT_REPRODUCED
    return INCONCLUSIVE


def seed_test_p(effects: Sequence[float], threshold: float = 0.0) -> float:
    """One-sided one-sample t-test treating the training seed as the unit: p that the mean per-seed
    effect exceeds `threshold`. Identical effects give p = 0 above the threshold, 1 otherwise."""
    from scipy.stats import ttest_1samp

    values = per_seed_values(effects, "per-seed effects", min_count=2)
    if max(values) == min(values):
        return 0.0 if values[0] > threshold else 1.0
    return float(ttest_1samp(values, threshold, alternative="greater").pvalue)


def replicated_status(effects_per_seed: Sequence[float], threshold: float = 0.0,
                      size_ok_per_seed: Sequence[bool] | None = None, alpha: float = ALPHA,
                      min_seeds: int = MIN_SEEDS) -> str:
    """Rule 1 for a comparison of trained methods: one effect per independently trained seed
    (method minus baseline, each seed training every arm afresh); the effect holds in a seed when
    it exceeds `threshold`.

    Holds in every seed -> REPRODUCED; otherwise REPRODUCED when the seed-as-unit t-test gives
    p < `alpha` and the effect holds in at least two thirds of the seeds (2 of 3); no seed holds ->
    NOT REPRODUCED; else INCONCLUSIVE. A size that misses in any seed turns REPRODUCED into PARTLY.
    """
    effects = per_seed_values(effects_per_seed, "per-seed effects", min_count=min_seeds)
    holds = [e > threshold for e in effects]
    size = [True] * len(effects) if size_ok_per_seed is None else per_seed_flags(size_ok_per_seed, "each seed's size check")
    if len(size) != len(effects):
        raise ValueError(f"{len(size)} size checks for {len(effects)} seeds")
    if not any(holds):
        return NOT_REPRODUCED
    if all(holds) or (3 * sum(holds) >= 2 * len(holds) and seed_test_p(effects, threshold) < alpha):
        return REPRODUCED if all(size) else PARTLY_REPRODUCED
    return INCONCLUSIVE


def paired_test_p(method: Sequence[float], baseline: Sequence[float], min_items: int = MIN_ITEMS) -> float:
    """One-sided paired test that `method` exceeds `baseline` (Wilcoxon signed-rank; p-value).

    Over at least `min_items` paired evaluation items. Rule 1: for a fixed procedure (nothing
    trained) it decides the claim; inside one trained pair it decides one seed only.
    All-zero differences give p = 1 (no evidence of an effect).
    """
    from scipy.stats import wilcoxon

    a = per_seed_values(method, "the method's paired items")
    b = per_seed_values(baseline, "the baseline's paired items")
    if len(a) != len(b):
        raise ValueError(f"paired test needs equal lengths, got {len(a)} and {len(b)}")
    if len(a) < min_items:
        raise ValueError(f"paired test needs at least {min_items} items, got {len(a)}")
    if all(x == y for x, y in zip(a, b)):
        return 1.0
    return float(wilcoxon(a, b, alternative="greater", zero_method="zsplit").pvalue)


def paired_gain(method: Sequence[float], baseline: Sequence[float], min_gain: float = 0.0,
                alpha: float = ALPHA, min_items: int = MIN_ITEMS) -> dict:
    """A paired comparison over evaluation items (rule 1: a fixed procedure's claim, or one seed of
    a trained comparison): gain = mean difference, the one-sided paired p, and its status:
    every item equal in both arms (all at the floor or the ceiling) -> INCONCLUSIVE; p < `alpha`
    -> REPRODUCED (PARTLY REPRODUCED when the gain is under `min_gain`); gain <= 0 -> NOT
    REPRODUCED; else INCONCLUSIVE. `interval` is the bootstrap 95% interval of the gain (rule 5)."""
    a = per_seed_values(method, "the method's paired items", min_count=min_items)
    b = per_seed_values(baseline, "the baseline's paired items", n=len(a))
    diffs = [x - y for x, y in zip(a, b)]
    gain = sum(diffs) / len(diffs)
    p = paired_test_p(a, b, min_items)
    floor_or_ceiling = len(set(a) | set(b)) == 1
    if floor_or_ceiling:
        status = INCONCLUSIVE
    elif p < alpha:
        status = REPRODUCED if gain >= min_gain else PARTLY_REPRODUCED
    elif gain <= 0:
        status = NOT_REPRODUCED
    else:
        status = INCONCLUSIVE
    return {"gain": gain, "p": p, "status": status, "floor_or_ceiling": floor_or_ceiling,
            "interval": bootstrap_interval(diffs)}


def bootstrap_interval(items: Sequence[float], level: float = 0.95, n_boot: int = 2000,
                       seed: int = 0) -> tuple[float, float]:
    """Rule 5 for a single run: the percentile bootstrap interval of the mean over evaluation items
    (seeded, so it is the same on every machine)."""
    import numpy as np

    values = np.asarray(per_seed_values(items, "evaluation items", min_count=2))
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, values.size, size=(n_boot, values.size))].mean(axis=1)
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def seed_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """Rule 5 across seeds: the t interval of the mean deciding figure (at least two seeds)."""
    from scipy.stats import t

    vals = per_seed_values(values, "per-seed figures", min_count=2)
    n = len(vals)
    mean = sum(vals) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (n - 1))
    half = float(t.ppf((1 + level) / 2, n - 1)) * sd / math.sqrt(n)
    return mean - half, mean + half


def is_fragile(values: Sequence[float], threshold: float, statuses_per_seed: Sequence[str] = (),
               items: Sequence[float] | None = None) -> bool:
    """Rule 5, for every status: fragile when the per-seed statuses (an extra seed included)
    disagree, or when the 95% interval of the deciding figure crosses `threshold`: across seeds
    (t interval) when `values` holds two or more, else a bootstrap over the single run's
    evaluation `items` (required then: a single value is never exempt)."""
    vals = per_seed_values(values, "the deciding figures", min_count=1)
    for s in statuses_per_seed:
        _check_status(s)
    if len(set(statuses_per_seed)) > 1:
        return True
    if len(vals) >= 2:
        lo, hi = seed_interval(vals)
    elif items is not None:
        lo, hi = bootstrap_interval(items)
    else:
        raise ValueError("rule 5: a single deciding value needs its evaluation items (items=...) for a "
                         "bootstrap interval; no claim is exempt because it has one value")
    return lo <= float(threshold) <= hi


def half_size(paper_size: float, ratio: bool = False) -> float:
    """The REPRODUCED size bar: half the paper's gain, or 1 + (k - 1) / 2 for a ratio "k times"."""
    return 1 + (paper_size - 1) / 2 if ratio else paper_size / 2


@dataclass(frozen=True)
class SizeCheck:
    """Rule 6: our size judged against what our task can reach.

    comparable: the achievable size (computed in code from an oracle, a perfect score or the best
    possible gain) reaches the paper's, so the half-size bar applies; size_ok: the bar is met, or
    the size is not comparable (then the claim is decided on direction); fraction_of_achievable:
    our gain over the achievable gain (for a ratio, (ours - 1) / (achievable - 1)).
    """

    ours: float
    paper: float
    achievable: float
    ratio: bool
    comparable: bool
    size_ok: bool
    fraction_of_achievable: float

    def text(self) -> str:
        unit = "x" if self.ratio else ""
        head = f"size {self.ours:.3g}{unit} (paper {self.paper:.3g}{unit}, achievable {self.achievable:.3g}{unit}"
        if self.comparable:
            return head + f"): {'at least' if self.size_ok else 'under'} half the paper's"
        return head + f"): not comparable, {self.fraction_of_achievable:.0%} of the achievable gain"


def size_against_achievable(ours: float, paper: float, achievable: float, ratio: bool = False) -> SizeCheck:
    """Rule 6: compare our size with the paper's only where our task can reach the paper's size."""
    ours, paper, achievable = per_seed_values([ours, paper, achievable], "sizes (ours, paper, achievable)")
    comparable = achievable >= paper
    size_ok = (ours >= half_size(paper, ratio)) if comparable else True
    zero = 1.0 if ratio else 0.0
    room = achievable - zero
    fraction = (ours - zero) / room if room > 0 else 0.0
    return SizeCheck(ours, paper, achievable, ratio, comparable, size_ok, fraction)


def _figure_text(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3g}" if math.isfinite(value) else str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_figure_text(v) for v in value) + "]"
    return str(value)


def _jsonable(value):
    """A figure as plain JSON (numpy scalars and arrays, tuples) for the machine-readable record."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def entry_record(e: ClaimStatus) -> dict:
    """One claim as plain JSON: everything the page, the scoreboard and the evidence check need."""
    return {"id": e.claim_id, "claim": e.claim, "status": e.status, "counted_status": e.counted_status,
            "fragile": e.fragile, "stand_in": e.stand_in, "by_construction": e.by_construction,
            "property_claim": e.property_claim, "reason": e.reason, "threshold": e.threshold,
            "extension": e.extension, "figures": {k: _figure_text(v) for k, v in e.figures.items()},
            "figure_values": {k: _jsonable(v) for k, v in e.figures.items()},
            "competence": [{"arm": c.arm, "figure": c.figure, "bar": c.bar, "higher_is_better": c.higher_is_better,
                            "passed": c.passed} for c in e.competence],
            "arm_failure_is_claim": e.arm_failure_is_claim,
            "changes": [{"what": c.what, "old": c.old, "new": c.new, "why": c.why} for c in e.changes]}


#: How the verdict line names each counted status.
_COUNT_WORDS = ((REPRODUCED, "reproduced"), (PARTLY_REPRODUCED, "partly reproduced"),
                (INCONCLUSIVE, "inconclusive"), (NOT_REPRODUCED, "not reproduced"))


def verdict_summary(verdict: str, claims: Iterable[Mapping]) -> str:
    """The verdict and what it counts, from the claims' records (``entry_record``): how many paper
    claims were tested and how each counts, e.g. "PARTLY REPRODUCED (2 tested claims: 1 reproduced,
    1 inconclusive; 1 not tested)". Extensions are not counted; a stand-in counts as rule 4 says."""
    paper = [c for c in claims if not c["extension"]]
    tested = [c for c in paper if c["status"] != NOT_TESTED]
    counts = Counter(c["counted_status"] for c in tested)
    parts = ", ".join(f"{counts[status]} {words}" for status, words in _COUNT_WORDS if counts[status])
    untested = len(paper) - len(tested)
    noun = "claim" if len(tested) == 1 else "claims"
    return (f"{verdict} ({len(tested)} tested {noun}{': ' + parts if parts else ''}"
            f"{f'; {untested} not tested' if untested else ''})")


class Ledger:
    """A chapter's ledger: one :class:`ClaimStatus` per claim of the paper, then extensions.

    `claim_ids` are the chapter's claim ids (the package keeps them as a constant
    ``CLAIM_IDS``); the ledger refuses an id outside that list and, when shown or checked, a
    missing one. `stand_ins` (the package's ``STAND_INS``: claim id -> what stands in) names the
    claims decided with a hand-written stand-in (rule 4): their entries must carry the mark.
    """

    def __init__(self, slug: str, claim_ids: Sequence[str], source_basis: str = "",
                 stand_ins: Mapping[str, str] | None = None):
        ids = list(claim_ids)
        if not ids or any(not isinstance(i, str) or not re.match(r"^C[1-9]\d*$", i) for i in ids):
            raise ValueError(f"claim_ids must be a non-empty list like ['C1', 'C2'], got {claim_ids!r}")
        if len(set(ids)) != len(ids):
            raise ValueError(f"claim_ids repeat an id: {ids}")
        stand_ins = dict(stand_ins or {})
        foreign = sorted(set(stand_ins) - set(ids) - {k for k in stand_ins if _ID.match(k) and k[0] == "E"})
        if foreign:
            raise ValueError(f"stand_ins name {foreign}, not claims of {slug}")
        self.slug, self.claim_ids, self.source_basis, self.stand_ins = slug, ids, source_basis, stand_ins
        self.entries: dict[str, ClaimStatus] = {}

    def add(self, entry: ClaimStatus) -> ClaimStatus:
        if not isinstance(entry, ClaimStatus):
            raise TypeError(f"Ledger.add takes a ClaimStatus, got {type(entry).__name__}")
        if not entry.extension and entry.claim_id not in self.claim_ids:
            raise ValueError(f"{entry.claim_id} is not a claim of {self.slug}; its claims: {', '.join(self.claim_ids)}")
        if entry.claim_id in self.entries:
            raise ValueError(f"{entry.claim_id} was already added")
        if entry.claim_id in self.stand_ins and not entry.stand_in and entry.status != NOT_TESTED:
            raise ValueError(f"{entry.claim_id} is decided with a stand-in ({self.stand_ins[entry.claim_id]}): "
                             "rule 4 needs stand_in=True on its status")
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
        return chapter_verdict(e for e in self._ordered() if not e.extension)

    def verdict_line(self) -> str:
        return "Verdict: " + verdict_summary(self.verdict(), [entry_record(e) for e in self._ordered()])

    def check_lines(self) -> str:
        """The checked output: one status line per claim, extensions, then the verdict."""
        verdict = textwrap.fill(self.verdict_line(), CHECK_WIDTH, subsequent_indent="    ",
                                break_long_words=False, break_on_hyphens=False)
        return "\n".join([e.check_line() for e in self._ordered()] + [verdict])

    def print_check(self) -> None:
        """Print the checked lines (the only thing the cell tagged nbval-check-output prints)."""
        print(self.check_lines())

    def record(self) -> dict:
        """The machine-readable ledger (stored with the table and in evidence records)."""
        return {"slug": self.slug, "source_basis": self.source_basis, "stand_ins": dict(self.stand_ins),
                "verdict": self.verdict(), "verdict_line": self.verdict_line(),
                "claims": [entry_record(e) for e in self._ordered()]}

    def html_table(self, evidence: Mapping | None = None) -> str:
        """Rule 9's one table: claim | status at evidence scale | status in this run | deciding
        figures | reason. `evidence` is the chapter's stored evidence record (or None)."""
        return ledger_table_html(self.record(), evidence)

    def show(self, evidence: Mapping | str | None = "auto") -> None:
        """Display the ledger table (HTML) with its machine-readable record attached. `evidence`:
        the evidence record to show beside this run ("auto": the chapter's stored record)."""
        from IPython.display import display

        if evidence == "auto":
            from icml26.evidence import chapter_record

            evidence = chapter_record(self.slug)
        display({"text/html": self.html_table(evidence), "text/plain": self.check_lines()}, raw=True,
                metadata={LEDGER_KEY: self.record()})


def _status_html(claim: Mapping | None) -> str:
    if claim is None:
        return "<i>not in the record</i>"
    marks = "".join(f" ({m})" for m, key in (("fragile", "fragile"), ("stand-in", "stand_in"),
                                              ("by construction", "by_construction")) if claim.get(key))
    return f"<b>{html.escape(claim['status'])}</b>{html.escape(marks)}"


#: A number with a minus sign inside or before it (-0.05, 5e-4, 1e-06): the browser may break a line
#: after a hyphen-minus, which would split the number; `unbreakable_numbers` keeps each on one line.
_BREAKABLE_NUMBER = re.compile(r"(?<![\w.>-])[-+]?\d[\d.,]*(?:[eE][-+]?\d+)?(?:-\d[\d.]*)*(?![\w.])")


def unbreakable_numbers(markup: str) -> str:
    """Wrap each number that holds a '-' in <span class='nobr'> (text outside tags only)."""
    def wrap(match: re.Match) -> str:
        token = match.group(0)
        return f"<span class='nobr'>{token}</span>" if "-" in token else token

    parts = re.split(r"(<[^>]*>)", markup)
    return "".join(part if part.startswith("<") else _BREAKABLE_NUMBER.sub(wrap, part) for part in parts)


def _figures_html(claim: Mapping) -> str:
    lines = [f"{html.escape(str(k))} = {html.escape(str(v))}" for k, v in claim.get("figures", {}).items()]
    lines += [html.escape(f"competence {c['arm']}: {_figure_text(c['figure'])} "
                          f"({'>=' if c['higher_is_better'] else '<='} {_figure_text(c['bar'])})"
                          f"{'' if c['passed'] else ' FAILS'}") for c in claim.get("competence", [])]
    if claim.get("threshold"):
        lines.append("<i>rule:</i> " + html.escape(claim["threshold"]))
    return unbreakable_numbers("<br>".join(lines))


def _reason_html(claim: Mapping) -> str:
    parts = [html.escape(claim.get("reason", ""))] if claim.get("reason") else []
    parts += [html.escape(f"changed after a result (rule 7): {c['what']}: {c['old']} -> {c['new']} ({c['why']})")
              for c in claim.get("changes", [])]
    return unbreakable_numbers("<br>".join(parts))


def evidence_label(evidence: Mapping) -> str:
    """A record's scale, device and seeds in a few words: 'evidence, cpu, 5 seeds'."""
    prov = evidence.get("provenance", {})
    seeds = prov.get("seeds") or []
    return f"{evidence.get('scale', '?')}, {evidence.get('device', '?')}, {len(seeds)} seed{'s' if len(seeds) != 1 else ''}"


def ledger_table_html(run: Mapping, evidence: Mapping | None = None) -> str:
    """The ledger table from a run's record and, where there is one, the evidence record's ledger.
    Figures and reasons come from the evidence record when there is one (it decides the verdict),
    else from this run."""
    stored = {c["id"]: c for c in evidence["ledger"]["claims"]} if evidence else {}
    scale_head = f"evidence ({html.escape(evidence_label(evidence))})" if evidence else "evidence"
    head = ("<table class='ledger'><thead><tr><th>claim</th>"
            f"<th>status at {scale_head}</th><th>status in this run</th>"
            "<th>deciding figures</th><th>reason</th></tr></thead><tbody>")
    rows = []
    for claim in run["claims"]:
        decided = stored.get(claim["id"], claim) if evidence else claim
        ident = html.escape(claim["id"]) + (" (ours)" if claim["extension"] else "")
        ev = _status_html(stored.get(claim["id"])) if evidence else "<i>no record yet</i>"
        rows.append(f"<tr><td data-label='claim'><b>{ident}</b> {html.escape(claim['claim'])}</td>"
                    f"<td data-label='at evidence scale'>{ev}</td><td data-label='this run'>{_status_html(claim)}</td>"
                    f"<td data-label='deciding figures'>{_figures_html(decided)}</td>"
                    f"<td data-label='reason'>{_reason_html(decided)}</td></tr>")
    this_run = html.escape(run["verdict_line"].removeprefix("Verdict: "))
    if evidence:
        ev_line = html.escape(verdict_summary(evidence["ledger"]["verdict"], evidence["ledger"]["claims"]))
        foot = (f"<p><b>Chapter verdict</b> (evidence record: {html.escape(evidence_label(evidence))}): {ev_line}"
                f"<br>This run: {this_run}</p>")
    else:
        foot = (f"<p><b>Chapter verdict</b> (this run; no evidence record is stored yet): {this_run}</p>")
    # "Chapter verdict", not "Verdict:": the checked cell's line is the one verdict line on the page.
    return head + "".join(rows) + "</tbody></table>" + foot


_LINE = re.compile(rf"^(?P<id>[CE]\d+)(?P<ours> \(ours\))? (?P<status>{'|'.join(STATUSES)})(?P<fragile> \(fragile\))?(?P<stand_in> \(stand-in\))?(?P<construction> \(by construction\))?: (?P<claim>.*)$")
_VERDICT = re.compile(rf"^Verdict: (?P<verdict>{'|'.join(VERDICTS)})\b")


def parse_check_output(text: str) -> dict:
    """Parse checked lines back: {"claims": {id: {"status", "fragile", "claim"}}, "verdict": str|None}."""
    claims, verdict = {}, None
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if m:
            claims[m["id"]] = {"status": m["status"], "fragile": bool(m["fragile"]), "stand_in": bool(m["stand_in"]),
                              "by_construction": bool(m["construction"]), "claim": m["claim"]}
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
