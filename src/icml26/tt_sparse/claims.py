"""The claims ledger of the tt_sparse chapter (CONTRIBUTING.md, section 2): one decision function per claim.

Every threshold is a named module constant, fixed before the runs that the chapter stores.
Comparative claims follow the robustness rule: a sub-result holds when it holds in every seed
(at least 3 seeds per dataset).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from icml26.common.ledger import per_seed_flags
from icml26.common.ledger import (
    NOT_REPRODUCED, REPRODUCED, ClaimStatus, combine_sub_results, is_fragile, robust_status,
)

from .experiment import matched_metric

CLAIM_IDS = ("C1", "C2", "C3")

#: C2: a baseline variant is "matched" when its complexity is at most (1 + C2_SLACK) x TT-Sparse's.
C2_SLACK = 0.2
#: C2: TT-Sparse must be at least as accurate as the matched baseline minus this margin (0: no slack).
C2_MARGIN = 0.0
#: The rule and tree baselines C2 compares against (linear models are reported, not compared).
C2_BASELINES = ("decision tree", "RIPPER")


def _pairs(pairs, what: str) -> tuple[np.ndarray, np.ndarray]:
    arr = np.asarray(pairs, dtype=float)
    if arr.ndim != 2 or arr.shape[1] != 2 or not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} must be (method, baseline) pairs of finite numbers, one per seed")
    return arr[:, 0], arr[:, 1]

def decide_c1(exact_flags: Sequence[bool]) -> ClaimStatus:
    """C1: the extracted DNF/CNF rules equal the network on every input row (train, validation,
    test) of every trained model (an exactness claim: float32 rounding tolerance in `check_exact`)."""
    flags = per_seed_flags(exact_flags, "exact_flags")
    if not flags:
        raise ValueError("C1 needs at least one model")
    ok = all(flags)
    return ClaimStatus("C1", "nodes and the whole model convert exactly into DNF/CNF rules",
                       REPRODUCED if ok else NOT_REPRODUCED, {"models exact": f"{sum(flags)}/{len(flags)}"},
                       "rules equal the network on every row of every model",
                       "" if ok else f"{len(flags) - sum(flags)} models' rules differ from the network")


def decide_c2(pairs: Mapping[tuple[str, str], Sequence[Sequence[float]]]) -> ClaimStatus:
    """C2: at matched complexity TT-Sparse (pruned) is at least as accurate as each rule/tree
    baseline, per dataset. `pairs[(dataset, baseline)]` = per-seed (TT-Sparse metric, matched
    baseline metric). Each (dataset, baseline) is one sub-result under the robustness rule."""
    if not pairs:
        raise ValueError("C2 needs at least one (dataset, baseline) sub-result")
    sub, figures, fragile = {}, {}, False
    for (dataset, base), pr in pairs.items():
        tt, bl = _pairs(pr, f"pairs[{dataset!r}, {base!r}]")
        holds = [bool(a >= b - C2_MARGIN) for a, b in zip(tt, bl)]
        sub[f"{dataset} vs {base}"] = robust_status(holds)
        figures[f"{dataset} vs {base}: seeds at least as good"] = f"{sum(holds)}/{len(holds)}"
        figures[f"{dataset} vs {base}: mean margin"] = float(np.mean(tt - bl))
        fragile = fragile or is_fragile(tt - bl, -C2_MARGIN, [REPRODUCED if h else NOT_REPRODUCED for h in holds])
    status = combine_sub_results(sub.values())
    failing = [k for k, v in sub.items() if v != REPRODUCED]
    reason = "" if status == REPRODUCED else "not in every seed: " + ", ".join(f"{k} ({sub[k]})" for k in failing)
    return ClaimStatus("C2", "matched-complexity accuracy at least that of rule and tree baselines", status,
                       figures, f"TT-Sparse >= best baseline of complexity <= (1 + C2_SLACK = {C2_SLACK}) x its own, "
                       f"minus C2_MARGIN = {C2_MARGIN}, in every seed, per dataset and baseline", reason, fragile)


def decide_c3(pairs: Mapping[str, Sequence[Sequence[float]]]) -> ClaimStatus:
    """C3: learned TopK connections beat random fixed connections of the same cardinality (same M,
    k, training, unpruned): `pairs[dataset]` = per-seed (learned metric, random metric); the test
    metric must be strictly higher in every seed, per dataset."""
    if not pairs:
        raise ValueError("C3 needs at least one dataset")
    sub, figures, fragile = {}, {}, False
    for dataset, pr in pairs.items():
        learned, rand = _pairs(pr, f"pairs[{dataset!r}]")
        holds = [bool(a > b) for a, b in zip(learned, rand)]
        sub[dataset] = robust_status(holds)
        figures[f"{dataset}: seeds learned > random"] = f"{sum(holds)}/{len(holds)}"
        figures[f"{dataset}: mean gain"] = float(np.mean(learned - rand))
        fragile = fragile or is_fragile(learned - rand, 0.0, [REPRODUCED if h else NOT_REPRODUCED for h in holds])
    status = combine_sub_results(sub.values())
    failing = [k for k, v in sub.items() if v != REPRODUCED]
    reason = "" if status == REPRODUCED else "not in every seed on " + ", ".join(f"{k} ({sub[k]})" for k in failing)
    return ClaimStatus("C3", "learned soft-TopK connections beat random ones", status, figures,
                       "learned > random test metric in every seed, per dataset", reason, fragile)


def ledger_statuses(rows: list[dict]) -> list[ClaimStatus]:
    """All claim statuses (C1..C3) from the rows of `run_experiment`."""
    if not rows:
        raise ValueError("no result rows")
    get = lambda d, s, m: next(r for r in rows if r["dataset"] == d and r["seed"] == s and r["method"] == m)
    exact = [r["exact"] for r in rows if r["exact"] is not None]
    c2, c3 = {}, {}
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        seeds = sorted({r["seed"] for r in rows if r["dataset"] == dataset})
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
    return [decide_c1(exact), decide_c2(c2), decide_c3(c3)]
