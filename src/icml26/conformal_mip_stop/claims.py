"""The claims ledger of the conformal early-stopping chapter (the ledger rules: CONTRIBUTING.md, section 2),
wired to :func:`icml26.conformal_mip_stop.run_experiment`'s results by :func:`build_ledger`.

Each decision function maps measured figures to a status; each threshold is a named module
constant, fixed before the run. Every run seed draws its own instances and trains its own gap
predictor, so seeds are independent replicates (rule 1: at least ``MIN_SEEDS`` decide a claim).

A family is *informative* only when the calibrated rule can stop at different times on it: its
threshold is finite on most re-splits and most instances are not already eps-good at their first
checkpoint. On a family where the rule always stops at once (or never stops), coverage and savings
say nothing about the calibration, so such a family is reported as uninformative and left out.

C1 validity: on every informative family the calibrated rule's coverage (mean over calibration/test
   re-splits) is at least 1 - alpha minus a sampling slack of two standard errors on the held-out
   pool, in every seed.
C2 savings: on every informative family the calibrated rule uses less work than solving to eps (a
   one-sided paired test over the >= 30 test instances of one fixed split decides each seed), and
   the mean work saved reaches half the paper's "over 60%" where our task can reach 60% at all
   (rule 6: the oracle that stops at the first eps-good checkpoint bounds the saving).
E1 (ours) the uncalibrated rule "predicted gap <= eps" covers less than 1 - alpha on some family.
E2 (ours) stopping at the first incumbent covers less than 1 - alpha on every family.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from icml26.common.ledger import (
    INCONCLUSIVE, MIN_SEEDS, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED, ClaimStatus, Competence, Ledger, combine_sub_results,
    competence_reason, is_fragile, paired_test_p, per_seed_values, robust_status, seed_statuses,
    size_against_achievable,
)

SLUG = "conformal_mip_stop"
CLAIM_IDS = ("C1", "C2")
SOURCE_BASIS = "official code"
STAND_INS: dict[str, str] = {}

C1_SLACK_SE = 2.0  # sampling slack: this many standard errors sqrt(alpha (1 - alpha) / n_pool)
C2_PAPER_SAVED = 0.60  # the paper: over 60% of solve time saved
C2_MIN_SAVED = C2_PAPER_SAVED / 2  # "size applies": at least half the paper's effect
C2_MAX_P = 0.05  # one-sided paired test, work to eps > work at the conformal stop
C2_MIN_ITEMS = 30  # paired test items (test instances of one split)
#: A family is informative when the calibrated threshold is finite on at least this share of
#: re-splits (mean over seeds) ...
INFORMATIVE_MIN_FINITE_TAU = 0.5
#: ... and at most this share of held-out instances is eps-good at the first checkpoint.
INFORMATIVE_MAX_FIRST_GOOD = 0.8
#: Rule 2 for the trained gap predictor: its held-out training criterion (band L1) at most this
#: fraction of the untrained network's (the midpoint (U - L) / 2 of the feasible range), worst seed.
COMPETENCE_MAX_LOSS_RATIO = 0.9


def coverage_slack(alpha: float, n_pool: int) -> float:
    """C1_SLACK_SE standard errors of a coverage measured on a pool of n_pool instances."""
    if not 0.0 < alpha < 1.0 or n_pool < 1:
        raise ValueError(f"need 0 < alpha < 1 and n_pool >= 1, got alpha={alpha}, n_pool={n_pool}")
    return C1_SLACK_SE * math.sqrt(alpha * (1.0 - alpha) / n_pool)


def _per_family(values: Mapping[str, Sequence[float]], what: str, n: int | None = None) -> dict[str, list[float]]:
    if not values:
        raise ValueError(f"{what}: need at least one family")
    return {fam: per_seed_values(v, f"{what} of {fam}", n=n) for fam, v in values.items()}


def is_informative(finite_tau_share: float, first_good_share: float) -> bool:
    """A family where the calibrated rule can stop at different times (see the module docstring)."""
    return finite_tau_share >= INFORMATIVE_MIN_FINITE_TAU and first_good_share <= INFORMATIVE_MAX_FIRST_GOOD


def _informative(informative: Mapping[str, bool], families) -> tuple[list[str], list[str]]:
    if set(informative) != set(families):
        raise ValueError(f"informative flags for {sorted(informative)}, figures for {sorted(families)}")
    return [f for f in families if informative[f]], [f for f in families if not informative[f]]


def _too_few_seeds(n: int) -> str:
    return (f"rule 1: {n} seed{'s' if n != 1 else ''} (each trains its own predictor); at least {MIN_SEEDS} decide "
            f"the claim: the evidence preset runs them")


def decide_c1(
        coverage: Mapping[str, Sequence[float]],
        informative: Mapping[str, bool], alpha: float, n_pool: int,
        items: Mapping[str, Sequence[float]] | None = None) -> ClaimStatus:
    """C1: per informative family, each seed's mean coverage over re-splits
    >= 1 - alpha - coverage_slack(alpha, n_pool), decided over seeds with
    ``robust_status``; the families combined with ``combine_sub_results``.
    `items` (the re-splits' coverages, one seed) serve rule 5 when only one seed
    ran. Fewer than MIN_SEEDS seeds, or no informative family: INCONCLUSIVE."""
    cov = _per_family(coverage, "coverage")
    n = len(next(iter(cov.values())))
    cov = _per_family(coverage, "coverage", n=n)
    good, bad = _informative(informative, cov)
    bar = 1.0 - alpha - coverage_slack(alpha, n_pool)
    figures: dict[str, object] = {f"coverage {f}": float(np.mean(c))
                                  for f, c in cov.items()} | {"bar": bar}
    if bad:
        figures["uninformative (left out)"] = ", ".join(bad)
    rule = (f"mean coverage >= 1 - alpha - {C1_SLACK_SE:g} "
            f"sqrt(alpha(1-alpha)/n_pool) in every seed, on every informative "
            f"family (threshold finite on >= {INFORMATIVE_MIN_FINITE_TAU:.0%} "
            f"of re-splits, <= {INFORMATIVE_MAX_FIRST_GOOD:.0%} of instances "
            f"eps-good at once)")
    claim = ("the calibrated rule keeps coverage at least 1 - alpha on every "
             "family")
    fragile = _fragile(cov, bar, items)
    if n < MIN_SEEDS:
        return ClaimStatus("C1", claim, INCONCLUSIVE, figures, rule,
                           _too_few_seeds(n), fragile)
    if not good:
        return ClaimStatus("C1", claim, INCONCLUSIVE, figures, rule,
                           f"no informative family ({', '.join(bad)}: the "
                           f"rule stops at once or never)", fragile)
    subs = {f: robust_status([c >= bar for c in cov[f]]) for f in good}
    status = combine_sub_results(subs.values())
    parts = [f"{f}: {s}" for f, s in subs.items() if s != REPRODUCED]
    if bad:
        parts.append(f"uninformative, left out: {', '.join(bad)}")
    return ClaimStatus("C1", claim, status, figures, rule, "; ".join(parts),
                       fragile)


def _fragile(values: Mapping[str, list[float]], bar: float, items: Mapping[str, Sequence[float]] | None) -> bool:
    out = False
    for f, v in values.items():
        statuses = seed_statuses([x >= bar for x in v])
        if len(v) >= 2:
            out = out or is_fragile(v, bar, statuses)
        elif items is not None and f in items:
            out = out or is_fragile(v, bar, statuses, items=list(items[f]))
    return out


def decide_c2(work_saved: Mapping[str, Sequence[float]], wall_saved: Mapping[str, Sequence[float]],
              paired: Mapping[str, Sequence[tuple[Sequence[float], Sequence[float]]]],
              oracle_saved: Mapping[str, Sequence[float]], informative: Mapping[str, bool],
              competence: Mapping[str, Competence]) -> ClaimStatus:
    """C2, per informative family: each seed holds when work to eps > work at the conformal stop by
    a one-sided paired test over its fixed split's test instances (p < C2_MAX_P, at least
    C2_MIN_ITEMS items); its size is the mean work saved over re-splits, at least C2_MIN_SAVED
    where the oracle saving (stopping at the first eps-good checkpoint) reaches the paper's 60%
    (rule 6; otherwise decided on direction and reported as a fraction of the achievable).
    Seeds: ``robust_status``; families: ``combine_sub_results``; the trained predictor passes its
    competence check per family (rule 2) or the claim is INCONCLUSIVE. `wall_saved` (seconds,
    not reproducible across machines) is reported beside the work clock."""
    saved = _per_family(work_saved, "work saved")
    n = len(next(iter(saved.values())))
    saved = _per_family(work_saved, "work saved", n=n)
    wall = _per_family(wall_saved, "wall saved", n=n)
    oracle = _per_family(oracle_saved, "oracle saving", n=n)
    if set(paired) != set(saved) or any(len(paired[f]) != n for f in saved):
        raise ValueError(f"one pair of (work to eps, work at stop) item lists per seed and family, for {sorted(saved)}")
    good, bad = _informative(informative, saved)
    threshold = (f"paired p < C2_MAX_P = {C2_MAX_P} over >= {C2_MIN_ITEMS} test instances, and mean work saved "
                 f">= C2_MIN_SAVED = {C2_MIN_SAVED:.2f} where the oracle can reach 60% (rule 6), in every seed, "
                 f"on every informative family")
    claim = "it saves much solve time"
    figures: dict[str, object] = {}
    for f in saved:
        figures[f"work saved {f}"] = float(np.mean(saved[f]))
        figures[f"wall-clock saved {f}"] = float(np.mean(wall[f]))
        figures[f"oracle work saved {f}"] = float(np.mean(oracle[f]))
    if bad:
        figures["uninformative (left out)"] = ", ".join(bad)
    fragile = any(is_fragile(saved[f], C2_MIN_SAVED, seed_statuses([s >= C2_MIN_SAVED for s in saved[f]]))
                  for f in good) if n >= 2 else False
    checks = [competence[f] for f in good if f in competence]
    if n < MIN_SEEDS:
        return ClaimStatus("C2", claim, INCONCLUSIVE, figures, threshold, _too_few_seeds(n), fragile, competence=checks)
    if not good:
        return ClaimStatus("C2", claim, INCONCLUSIVE, figures, threshold,
                           f"no informative family ({', '.join(bad)}: the rule stops at once or never)", fragile)
    if len(checks) != len(good):
        raise ValueError(f"a competence check per informative family, got {sorted(competence)}")
    short = [f for f in good if any(len(ref) < C2_MIN_ITEMS for ref, _ in paired[f])]
    if short:
        return ClaimStatus("C2", claim, INCONCLUSIVE, figures, threshold,
                           f"fewer than {C2_MIN_ITEMS} test instances on {', '.join(short)}; a held-out pool of "
                           f"n_cal + {C2_MIN_ITEMS} instances would settle it", fragile, competence=checks)
    failed = competence_reason(checks)
    if failed:
        return ClaimStatus("C2", claim, INCONCLUSIVE, figures, threshold, failed, fragile, competence=checks)
    subs, parts = {}, []
    for f in good:
        p = [paired_test_p(ref, stop, min_items=C2_MIN_ITEMS) for ref, stop in paired[f]]
        figures[f"largest paired p {f}"] = max(p)
        size = size_against_achievable(float(np.mean(saved[f])), C2_PAPER_SAVED, float(np.mean(oracle[f])))
        size_ok = [s >= C2_MIN_SAVED for s in saved[f]] if size.comparable else [True] * n
        subs[f] = robust_status([q < C2_MAX_P for q in p], size_ok)
        if not size.comparable:
            parts.append(f"{f}: {size.text()}")
        if subs[f] != REPRODUCED:
            parts.append(f"{f}: {subs[f]}")
    status = combine_sub_results(subs.values())
    if bad:
        parts.append(f"uninformative, left out: {', '.join(bad)}")
    return ClaimStatus("C2", claim, status, figures, threshold, "; ".join(parts), fragile, competence=checks)


def decide_e1(uncalibrated_coverage: Mapping[str, Sequence[float]], alpha: float) -> ClaimStatus:
    """E1 (ours): the uncalibrated rule's mean coverage (over seeds) < 1 - alpha on at least one family."""
    cov = _per_family(uncalibrated_coverage, "uncalibrated coverage")
    below = {f: bool(np.mean(c) < 1.0 - alpha) for f, c in cov.items()}
    status = REPRODUCED if any(below.values()) else NOT_REPRODUCED
    reason = "" if status == REPRODUCED else "the uncalibrated rule reaches 1 - alpha on every family"
    return ClaimStatus("E1", "stopping at predicted gap at most eps under-covers on some family", status,
                       {f"uncalibrated coverage {f}": float(np.mean(c)) for f, c in cov.items()},
                       "mean coverage < 1 - alpha on at least one family", reason,
                       any(is_fragile(c, 1.0 - alpha) for c in cov.values() if len(c) >= 2))


def decide_e2(first_incumbent_coverage: Mapping[str, Sequence[float]], alpha: float) -> ClaimStatus:
    """E2 (ours): stopping at the first incumbent covers < 1 - alpha (mean over seeds) on every family."""
    cov = _per_family(first_incumbent_coverage, "first-incumbent coverage")
    below = {f: bool(np.mean(c) < 1.0 - alpha) for f, c in cov.items()}
    status = REPRODUCED if all(below.values()) else (PARTLY_REPRODUCED if any(below.values()) else NOT_REPRODUCED)
    reason = "" if status == REPRODUCED else f"the first incumbent covers on {', '.join(f for f in below if not below[f])}"
    return ClaimStatus("E2", "stopping at the first incumbent under-covers on every family", status,
                       {f"first-incumbent coverage {f}": float(np.mean(c)) for f, c in cov.items()},
                       "mean coverage < 1 - alpha on every family", reason,
                       any(is_fragile(c, 1.0 - alpha) for c in cov.values() if len(c) >= 2))


def build_ledger(results: Mapping) -> Ledger:
    """The chapter's ledger from :func:`icml26.conformal_mip_stop.run_experiment`'s results (a pure
    function of the dict: the evidence check recomputes it from a stored record)."""
    if not isinstance(results, Mapping) or not results.get("per_seed"):
        raise ValueError("results must be run_experiment's dict, with its 'per_seed' records")
    alpha, n_pool, families = float(results["alpha"]), int(results["n_pool"]), list(results["families"])
    seeds = results["per_seed"]

    def per_seed(get):
        return {f: [get(s["families"][f]) for s in seeds] for f in families}

    informative = {f: is_informative(float(np.mean(v)), float(np.mean(w))) for (f, v), w in
                   zip(per_seed(lambda r: r["finite_tau_share"]).items(),
                       per_seed(lambda r: r["first_good_share"]).values())}
    ratio = per_seed(lambda r: r["predictor"]["loss"] / max(r["predictor"]["midpoint_loss"], 1e-12))
    competence = {f: Competence(f"gap predictor, {f} (loss / untrained)", max(v), COMPETENCE_MAX_LOSS_RATIO,
                                higher_is_better=False) for f, v in ratio.items()}
    items = {f: seeds[0]["families"][f]["coverage"]["conformal"] for f in families} if len(seeds) == 1 else None
    ledger = Ledger(SLUG, CLAIM_IDS, SOURCE_BASIS, STAND_INS)
    ledger.extend([
        decide_c1(per_seed(lambda r: float(np.mean(r["coverage"]["conformal"]))), informative, alpha, n_pool, items),
        decide_c2(per_seed(lambda r: float(np.mean(r["work_saved"]))),
                  per_seed(lambda r: float(np.mean(r["wall_saved"]))),
                  per_seed(lambda r: (r["fixed_split"]["work_ref"], r["fixed_split"]["work_stop"])),
                  per_seed(lambda r: r["oracle_work_saved"]), informative, competence),
        decide_e1(per_seed(lambda r: float(np.mean(r["coverage"]["uncalibrated"]))), alpha),
        decide_e2(per_seed(lambda r: float(np.mean(r["coverage"]["first incumbent"]))), alpha),
    ])
    return ledger
