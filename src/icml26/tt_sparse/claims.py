"""The claims ledger of the tt_sparse chapter (CONTRIBUTING.md, section 2): one decision function per claim.

Every threshold is a named module constant, fixed before the runs that the chapter stores.
Comparative claims follow rule 1 with the seed as the unit (each seed redraws the split and
retrains every arm): a sub-result (dataset, baseline) is decided by `replicated_status` over at
least 3 seeds; rule 2 gates each claim on every compared arm beating its trivial baseline.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from icml26.common.ledger import (
    INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED, ClaimStatus, Competence, Ledger, combine_sub_results,
    competence_reason, gate_competence, is_fragile, per_seed_flags, replicated_status, seed_statuses,
)

from .experiment import matched_metric

CLAIM_IDS = ("C1", "C2", "C3")
SOURCE_BASIS = "official code"
STAND_INS: dict[str, str] = {}

#: C2: a baseline variant is "matched" when its complexity is at most (1 + C2_SLACK) x TT-Sparse's.
C2_SLACK = 0.2
#: C2: TT-Sparse must be at least as accurate as the matched baseline minus this margin (0: no slack).
C2_MARGIN = 0.0
#: C2: "at least as accurate": a tie up to float rounding holds.
C2_TIE = 1e-9
#: The rule and tree baselines C2 compares against (linear models are reported, not compared).
C2_BASELINES = ("decision tree", "RIPPER")
#: C2: each rule baseline must run on at least this many datasets (CLAIMS.md).
C2_MIN_DATASETS_PER_BASELINE = 2
#: Rule 2: the trivial level of each task's metric (AUC of a constant score; R^2 of the mean) ...
TRIVIAL = {"binary": 0.5, "multiclass": 0.5, "regression": 0.0}
#: ... and the margin every compared arm's mean test metric must clear above it.
COMPETENCE_MARGIN = 0.1


def _pairs(pairs, what: str) -> tuple[np.ndarray, np.ndarray]:
    arr = np.asarray(pairs, dtype=float)
    if arr.ndim != 2 or arr.shape[1] != 2 or not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} must be (method, baseline) pairs of finite numbers, one per seed")
    return arr[:, 0], arr[:, 1]


def _trivial(trivial: Mapping[str, float], dataset: str) -> float:
    if dataset not in trivial:
        raise ValueError(f"no trivial level for dataset {dataset!r}; given for {sorted(trivial)}")
    return float(trivial[dataset])


def arm_competence(arm: str, dataset: str, values, trivial_level: float) -> Competence:
    """Rule 2: an arm's mean test metric on `dataset` against trivial + COMPETENCE_MARGIN."""
    return Competence(f"{arm} on {dataset}", float(np.mean(values)), trivial_level + COMPETENCE_MARGIN)


def decide_c1(exact_flags: Sequence[bool]) -> ClaimStatus:
    """C1: the extracted DNF/CNF rules equal the network on every input row (train, validation,
    test) of every trained model (an exactness claim: float32 rounding tolerance in `check_exact`).
    Rule 3: exact extraction holds by construction (the truth table is enumerated), and the paper's
    claim is that very property, so this check decides it; a mismatch could only be a bug."""
    flags = per_seed_flags(exact_flags, "exact_flags")
    if not flags:
        raise ValueError("C1 needs at least one model")
    ok = all(flags)
    return ClaimStatus("C1", "nodes and the whole model convert exactly into DNF/CNF rules",
                       REPRODUCED if ok else NOT_REPRODUCED, {"models exact": f"{sum(flags)}/{len(flags)}"},
                       "rules equal the network on every row of every model",
                       "" if ok else f"{len(flags) - sum(flags)} models' rules differ from the network",
                       fragile=False, by_construction=True, property_claim=True)


def decide_c2(pairs: Mapping[tuple[str, str], Sequence[Sequence[float]]], trivial: Mapping[str, float]) -> ClaimStatus:
    """C2: at matched complexity TT-Sparse (pruned) is at least as accurate as each rule/tree
    baseline, per dataset. `pairs[(dataset, baseline)]` = per-seed (TT-Sparse metric, matched
    baseline metric); `trivial[dataset]` the metric's trivial level (rule 2). Each (dataset,
    baseline) is one sub-result under rule 1 (`replicated_status` over the seeds); a baseline run
    on fewer than C2_MIN_DATASETS_PER_BASELINE datasets leaves the claim INCONCLUSIVE."""
    if not pairs:
        raise ValueError("C2 needs at least one (dataset, baseline) sub-result")
    sub, figures, fragile, competence = {}, {}, False, []
    for (dataset, base), pr in pairs.items():
        tt, bl = _pairs(pr, f"pairs[{dataset!r}, {base!r}]")
        level = _trivial(trivial, dataset)
        effects = tt - bl
        threshold = -C2_MARGIN - C2_TIE
        sub[f"{dataset} vs {base}"] = replicated_status(effects, threshold)
        holds = [bool(e > threshold) for e in effects]
        figures[f"{dataset} vs {base}: seeds at least as good"] = f"{sum(holds)}/{len(holds)}"
        figures[f"{dataset} vs {base}: mean margin"] = float(np.mean(effects))
        fragile = fragile or is_fragile(effects, threshold, seed_statuses(holds))
        competence += [arm_competence("TT-Sparse (pruned)", dataset, tt, level),
                       arm_competence(f"matched {base}", dataset, bl, level)]
    competence = list({c.arm: c for c in competence}.values())  # TT-Sparse once per dataset
    status = combine_sub_results(sub.values())
    failing = [k for k, v in sub.items() if v != REPRODUCED]
    reason = "" if status == REPRODUCED else "not in enough seeds: " + ", ".join(f"{k} ({sub[k]})" for k in failing)
    counts = {b: len({d for d, bb in pairs if bb == b}) for b in dict.fromkeys(b for _, b in pairs)}
    few = [b for b, n in counts.items() if n < C2_MIN_DATASETS_PER_BASELINE]
    if few and status != INCONCLUSIVE:
        status = INCONCLUSIVE
        reason = (f"{', '.join(few)} ran on fewer than C2_MIN_DATASETS_PER_BASELINE = "
                  f"{C2_MIN_DATASETS_PER_BASELINE} datasets; " + reason).rstrip("; ")
    gated = gate_competence(status, competence)
    if gated != status:
        status, reason = gated, competence_reason(competence)
    return ClaimStatus("C2", "matched-complexity accuracy at least that of rule and tree baselines", status,
                       figures, f"TT-Sparse >= best baseline of complexity <= (1 + C2_SLACK = {C2_SLACK}) x its own, "
                       f"minus C2_MARGIN = {C2_MARGIN}, per dataset and baseline, by rule 1 over seeds; every arm "
                       f">= trivial + COMPETENCE_MARGIN = {COMPETENCE_MARGIN}", reason, fragile, competence=competence)


def decide_c3(pairs: Mapping[str, Sequence[Sequence[float]]],
              trivial: Mapping[str, float]) -> ClaimStatus:
    """C3: learned TopK connections beat random fixed connections of the same
    cardinality (same M, k, training, unpruned): `pairs[dataset]` = per-seed
    (learned metric, random metric); the test metric must be higher, per
    dataset, by rule 1 over seeds (`replicated_status`, threshold 0)."""
    if not pairs:
        raise ValueError("C3 needs at least one dataset")
    sub, figures, fragile, competence = {}, {}, False, []
    for dataset, pr in pairs.items():
        learned, rand = _pairs(pr, f"pairs[{dataset!r}]")
        level = _trivial(trivial, dataset)
        gains = learned - rand
        sub[dataset] = replicated_status(gains, 0.0)
        holds = [bool(g > 0) for g in gains]
        figures[f"{dataset}: seeds learned > random"] = (
            f"{sum(holds)}/{len(holds)}")
        figures[f"{dataset}: mean gain"] = float(np.mean(gains))
        fragile = fragile or is_fragile(gains, 0.0, seed_statuses(holds))
        competence += [
            arm_competence("learned TopK", dataset, learned, level),
            arm_competence("random connections", dataset, rand, level)]
    status = combine_sub_results(sub.values())
    failing = [k for k, v in sub.items() if v != REPRODUCED]
    reason = ("" if status == REPRODUCED else "not in enough seeds on "
              + ", ".join(f"{k} ({sub[k]})" for k in failing))
    gated = gate_competence(status, competence)
    if gated != status:
        status, reason = gated, competence_reason(competence)
    return ClaimStatus("C3", "learned soft-TopK connections beat random ones",
                       status, figures,
                       "learned > random test metric per dataset, by rule 1 "
                       "over seeds; every arm >= trivial + "
                       f"COMPETENCE_MARGIN = {COMPETENCE_MARGIN}", reason,
                       fragile, competence=competence)


def ledger_inputs(rows: list[dict]) -> tuple[list[bool], dict, dict, dict]:
    """The decision functions' inputs from `run_experiment`'s rows: (C1 exact flags, C2 pairs,
    C3 pairs, trivial level per dataset)."""
    if not rows:
        raise ValueError("no result rows")
    get = lambda d, s, m: next(r for r in rows if r["dataset"] == d and r["seed"] == s and r["method"] == m)
    exact = [bool(r["exact"]) for r in rows if r["exact"] is not None]
    c2, c3, trivial = {}, {}, {}
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        seeds = sorted({r["seed"] for r in rows if r["dataset"] == dataset})
        trivial[dataset] = TRIVIAL[next(r["task"] for r in rows if r["dataset"] == dataset)]
        for base in C2_BASELINES:
            pr = []
            for s in seeds:
                p = get(dataset, s, "TT-Sparse (pruned)")
                m = matched_metric(rows, dataset, s, p["complexity"], base, C2_SLACK)
                if m is not None:
                    pr.append((p["metric"], m))
            if pr:
                c2[(dataset, base)] = pr
        c3[dataset] = [(get(dataset, s, "TT-Sparse")["metric"], get(dataset, s, "random connections")["metric"])
                       for s in seeds]
    return exact, c2, c3, trivial


def build_ledger(results) -> Ledger:
    """The chapter's ledger from `run_experiment`'s results (a pure function of the dict)."""
    exact, c2, c3, trivial = ledger_inputs(results["rows"])
    ledger = Ledger("tt_sparse", CLAIM_IDS, SOURCE_BASIS, STAND_INS)
    return ledger.extend([decide_c1(exact), decide_c2(c2, trivial), decide_c3(c3, trivial)])
