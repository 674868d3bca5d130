"""The claims ledger of the model-cloning chapter (the ledger rules: CONTRIBUTING.md, section 2).

One decision function per claim maps measured figures to a status; each threshold is a named
module constant, fixed before the runs. Comparative claims are decided over at least three
seeds (`robust_status`): they hold when they hold in every seed.

C1 normalised graphs: renamed / re-wrapped clones structurally identical, other architectures not.
C2 alignment-free weights: permuted clones score near 1 where the aligned baseline collapses.
C3 detection: ROC-AUC of the combined score >= 0.9 over all non-clones and over the hard ones
   alone (same architecture, trained independently on the other data half), and above each
   baseline, in every seed; the bases must be competent (rule 2).
C4 lineage: the weight similarity falls monotonically along fine-tuning (Spearman rho <= -0.9).
C5 real open-source models: not tested (needs downloaded model families).
E1 (ours) the combined score is at least as good as each level alone (ROC-AUC).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy.stats import spearmanr

from icml26.common.ledger import (INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTED, PARTLY_REPRODUCED, REPRODUCED,
                                  ClaimStatus, Competence, Ledger, competence_reason, gate_competence, is_fragile,
                                  per_seed_values, robust_status, seed_statuses)

CLAIM_IDS = ("C1", "C2", "C3", "C4", "C5")
SOURCE_BASIS = "abstract only"
STAND_INS: dict[str, str] = {}

C1_IDENTICAL_TOL = 1e-9  # a T1 clone's S_G must be 1 within this
C1_MAX_OTHER_ARCH = 0.5  # S_G between different architectures at most this
C2_MIN_PERMUTED = 0.99  # S_W of every permuted clone at least this
C2_MAX_ALIGNED = 0.5  # mean aligned cosine B1 over the permuted clones at most this ("collapse")
C3_MIN_AUC = 0.9  # ROC-AUC of S, clones against all non-clones
C4_MAX_RHO = -0.9  # Spearman(steps, S_W) along fine-tuning, for every architecture
E1_DIGITS = 3  # ROC-AUCs compared after rounding to this many decimals
BASELINES = ("B1", "B2", "B3")
#: Rule 2: the trained bases must classify digits (10 classes, chance 0.1) at least this well on
#: the held-out half in every seed; a detector baseline must beat chance (ROC-AUC 0.5).
BASE_MIN_ACC = 0.80
CHANCE_AUC = 0.5


def seed_figures(bench, lineages) -> dict:
    """The deciding figures of one seed: from its benchmark (pairs with S, S_G, S_W, B1-B3) and
    its fine-tuning lineages (one per architecture)."""
    from .experiment import SCORES, auc

    pairs = bench.pairs
    t1 = [p for p in pairs if p["clone"] and p["kind"] == "T1"]
    cross = [p for p in pairs if p["kind"] == "cross-arch"]
    perm = [p for p in pairs if p["clone"] and p["op"] == "permute"]
    if not (t1 and cross and perm and lineages):
        raise ValueError("the benchmark needs T1 clones, permuted clones, cross-architecture pairs and a lineage")
    aucs = {k: auc(bench, k) for k in SCORES}
    if not any(p["kind"] == "same-arch" and p["other_data"] for p in pairs):
        raise ValueError("C3 needs hard negatives: same-architecture bases trained on the other data half")
    return {
        "AUC hard": {k: auc(bench, k, "hard") for k in SCORES},
        "min base acc": float(min(bench.base_acc.values())),
        "min S_G T1": min(p["S_G"] for p in t1),
        "max S_G cross-arch": max(p["S_G"] for p in cross),
        "min S_W permuted": min(p["S_W"] for p in perm),
        "mean B1 permuted": float(np.mean([p["B1"] for p in perm])),
        "AUC": aucs,
        "max rho": max(float(spearmanr(L.steps, L.scores["S_W"])[0]) for L in lineages),
    }


def decide_c1(min_sg_t1: Sequence[float], max_sg_other_arch: Sequence[float]) -> ClaimStatus:
    """C1 (exactness, per seed): every T1 clone has S_G = 1 (within C1_IDENTICAL_TOL) and no
    pair of different architectures exceeds C1_MAX_OTHER_ARCH."""
    t1 = per_seed_values(min_sg_t1, "min S_G of T1 clones")
    other = per_seed_values(max_sg_other_arch, "max S_G across architectures", len(t1))
    same_ok = min(t1) >= 1 - C1_IDENTICAL_TOL
    other_ok = max(other) <= C1_MAX_OTHER_ARCH
    figures = {"min S_G, T1 clones": min(t1), "max S_G, other architecture": max(other)}
    threshold = (f"T1 clones S_G >= 1 - {C1_IDENTICAL_TOL:g} and other architectures "
                 f"S_G <= C1_MAX_OTHER_ARCH = {C1_MAX_OTHER_ARCH}, in every seed")
    if same_ok and other_ok:
        status, reason = REPRODUCED, ""
    elif same_ok or other_ok:
        status = PARTLY_REPRODUCED
        reason = ("renamed/re-wrapped clones identical, but other architectures score too high" if same_ok
                  else "other architectures separated, but some renamed/re-wrapped clone is not identical")
    else:
        status, reason = NOT_REPRODUCED, "clones not identical and other architectures not separated"
    per_seed = seed_statuses([a >= 1 - C1_IDENTICAL_TOL and b <= C1_MAX_OTHER_ARCH for a, b in zip(t1, other)])
    fragile = is_fragile(other, C1_MAX_OTHER_ARCH, per_seed)
    return ClaimStatus("C1", "normalised graphs: renamed or re-wrapped clones identical, other architectures not",
                       status, figures, threshold, reason, fragile)


def decide_c2(min_sw_permuted: Sequence[float],
              mean_b1_permuted: Sequence[float]) -> ClaimStatus:
    """C2 (per seed): every permuted clone has S_W >= C2_MIN_PERMUTED while the
    aligned cosine B1 averages <= C2_MAX_ALIGNED on them; robust over the seeds.

    Rule 3: S_W is built from sorted (order-free) statistics, so a permuted
    clone scores exactly 1 by construction; the paper's claim is that very
    property (no alignment needed), so the sanity check decides it
    (`property_claim`). The B1 half (the aligned baseline collapses) is
    measured.
    """
    sw = per_seed_values(min_sw_permuted, "min S_W of permuted clones")
    b1 = per_seed_values(mean_b1_permuted, "mean B1 of permuted clones",
                         len(sw))
    holds = [a >= C2_MIN_PERMUTED and b <= C2_MAX_ALIGNED
             for a, b in zip(sw, b1)]
    status = robust_status(holds)
    per_seed = seed_statuses(holds)
    reason = {REPRODUCED: "by construction: sorted statistics ignore the order "
                          "of units (the claim is that property)",
              NOT_REPRODUCED: "in no seed do permuted clones score near 1 "
                              "while B1 collapses",
              INCONCLUSIVE: f"the seeds disagree ({sum(holds)} of "
                            f"{len(holds)} hold); "
                            "more seeds would settle it"}[status]
    figures = {"min S_W, permuted clones": min(sw),
               "max over seeds of mean B1, permuted": max(b1),
               "seeds holding": f"{sum(holds)}/{len(holds)}"}
    threshold = (f"S_W >= C2_MIN_PERMUTED = {C2_MIN_PERMUTED} and "
                 f"mean B1 <= C2_MAX_ALIGNED = {C2_MAX_ALIGNED}, in every seed")
    claim = ("alignment-free weights: permuted clones near 1, "
             "aligned baseline collapses")
    fragile = (is_fragile(sw, C2_MIN_PERMUTED, per_seed)
               or is_fragile(b1, C2_MAX_ALIGNED, per_seed))
    return ClaimStatus("C2", claim, status, figures, threshold, reason, fragile,
                       by_construction=True, property_claim=True)


def competence_checks(min_base_acc: Sequence[float], auc_baselines: dict[str, Sequence[float]] | None = None
                      ) -> list[Competence]:
    """Rule 2: the trained bases (worst base over the seeds) and, when given, each detector
    baseline (worst seed's ROC-AUC against chance)."""
    acc = per_seed_values(min_base_acc, "min base accuracy per seed")
    checks = [Competence("trained bases (min accuracy)", min(acc), BASE_MIN_ACC)]
    for k, v in (auc_baselines or {}).items():
        checks.append(Competence(f"{k} (min AUC)", min(per_seed_values(v, f"AUC of {k}")), CHANCE_AUC))
    return checks


def decide_c3(auc_s: Sequence[float], auc_baselines: dict[str, Sequence[float]], auc_s_hard: Sequence[float],
              checks: Sequence[Competence] = ()) -> ClaimStatus:
    """C3 (per seed): ROC-AUC of S >= C3_MIN_AUC over all non-clones and over the hard ones alone
    (same architecture, trained independently on the other data half), and above each
    baseline's (B1, B2, B3) over all non-clones.

    Both parts in every seed: REPRODUCED. One part in every seed and the other in none:
    PARTLY REPRODUCED (which part is named). Neither part in any seed: NOT REPRODUCED.
    Otherwise the seeds disagree: INCONCLUSIVE. An incompetent arm (rule 2): INCONCLUSIVE."""
    s = per_seed_values(auc_s, "AUC of S")
    hard = per_seed_values(auc_s_hard, "AUC of S against hard negatives", len(s))
    if set(auc_baselines) != set(BASELINES):
        raise ValueError(f"need the AUCs of baselines {BASELINES}, got {sorted(auc_baselines)}")
    base = {k: per_seed_values(v, f"AUC of {k}", len(s)) for k, v in auc_baselines.items()}
    best = [max(base[k][i] for k in BASELINES) for i in range(len(s))]
    level = [x >= C3_MIN_AUC and h >= C3_MIN_AUC for x, h in zip(s, hard)]
    above = [x > b for x, b in zip(s, best)]
    st_level, st_above = robust_status(level), robust_status(above)
    both = [a and b for a, b in zip(level, above)]
    if all(both):
        status, reason = REPRODUCED, ""
    elif {st_level, st_above} == {REPRODUCED, NOT_REPRODUCED}:
        status = PARTLY_REPRODUCED
        reason = ("AUC reaches the bar but a baseline scores higher in every seed" if st_level == REPRODUCED
                  else "AUC above every baseline but under the bar in every seed")
    elif not any(level) and not any(above):
        status, reason = NOT_REPRODUCED, "AUC under the bar and under a baseline in every seed"
    else:
        status = INCONCLUSIVE
        reason = f"the seeds disagree ({sum(both)} of {len(both)} hold); more seeds would settle it"
    if competence_reason(checks):  # rule 2: a failed arm decides nothing, whatever the seeds say
        status, reason = gate_competence(status, checks), competence_reason(checks)
    margins = [x - b for x, b in zip(s, best)]
    per_seed = seed_statuses(both)
    figures = {"AUC S (min over seeds)": min(s), "AUC S, hard negatives only (min)": min(hard),
               **{f"AUC {k} (max)": max(base[k]) for k in BASELINES},
               "min margin over best baseline": min(margins), "seeds holding": f"{sum(both)}/{len(both)}"}
    threshold = (f"AUC(S) >= C3_MIN_AUC = {C3_MIN_AUC} (all non-clones and hard ones alone) and > AUC of "
                 "B1, B2, B3, in every seed")
    return ClaimStatus("C3", "detects clones accurately on the synthetic benchmark, above each baseline",
                       status, figures, threshold, reason,
                       is_fragile(margins, 0.0, per_seed) or is_fragile(s, C3_MIN_AUC, per_seed)
                       or is_fragile(hard, C3_MIN_AUC, per_seed), competence=checks)


def decide_c4(max_rho: Sequence[float], checks: Sequence[Competence] = ()) -> ClaimStatus:
    """C4 (per seed): Spearman(steps, S_W) <= C4_MAX_RHO for every architecture (the largest
    of the architectures' rho is given per seed). The fine-tuned bases must be competent."""
    rho = per_seed_values(max_rho, "max Spearman rho")
    if any(not -1.0 <= r <= 1.0 for r in rho):
        raise ValueError(f"a Spearman rho lies in [-1, 1], got {rho}")
    holds = [r <= C4_MAX_RHO for r in rho]
    status = robust_status(holds)
    reason = {REPRODUCED: "", NOT_REPRODUCED: "the weight score does not fall steadily along fine-tuning in any seed",
              INCONCLUSIVE: f"the seeds disagree ({sum(holds)} of {len(holds)} hold); more seeds would settle it"}[status]
    per_seed = seed_statuses(holds)
    if competence_reason(checks):  # rule 2: a failed arm decides nothing, whatever the seeds say
        status, reason = gate_competence(status, checks), competence_reason(checks)
    return ClaimStatus("C4", "the similarity falls monotonically along fine-tuning", status,
                       {"max Spearman rho over seeds and architectures": max(rho), "seeds holding": f"{sum(holds)}/{len(holds)}"},
                       f"Spearman(steps, S_W) <= C4_MAX_RHO = {C4_MAX_RHO} for every architecture, in every seed",
                       reason, is_fragile(rho, C4_MAX_RHO, per_seed), competence=checks)


def decide_c5() -> ClaimStatus:
    """C5 needs real open-source model families with their weights: not shipped, not downloaded."""
    return ClaimStatus("C5", "works on real open-source models", NOT_TESTED, {}, "needs real model families",
                       "needs downloaded open-source model families with weights; no preset of this chapter loads them")


def decide_e1(auc_s: Sequence[float], auc_sg: Sequence[float], auc_sw: Sequence[float]) -> ClaimStatus:
    """E1 (ours, per seed): round(AUC(S), E1_DIGITS) >= round(max(AUC(S_G), AUC(S_W)), E1_DIGITS)."""
    s = per_seed_values(auc_s, "AUC of S")
    g = per_seed_values(auc_sg, "AUC of S_G", len(s))
    w = per_seed_values(auc_sw, "AUC of S_W", len(s))
    margins = [round(a, E1_DIGITS) - round(max(b, c), E1_DIGITS) for a, b, c in zip(s, g, w)]
    holds = [m >= 0 for m in margins]
    status = robust_status(holds)
    reason = {REPRODUCED: "",
              NOT_REPRODUCED: "in every seed the weight level alone has a higher AUC than the combination",
              INCONCLUSIVE: f"the seeds disagree ({sum(holds)} of {len(holds)} hold); more seeds would settle it"}[status]
    per_seed = seed_statuses(holds)
    return ClaimStatus("E1", "the combined score is at least as good as each level alone", status,
                       {"AUC S (mean)": float(np.mean(s)), "AUC S_W (mean)": float(np.mean(w)),
                        "AUC S_G (mean)": float(np.mean(g)), "max margin": max(margins)},
                       f"AUC(S) >= max(AUC(S_G), AUC(S_W)) after rounding to {E1_DIGITS} decimals, in every seed",
                       reason, is_fragile(margins, 0.0, per_seed))


def build_ledger(results) -> Ledger:
    """The chapter's ledger from the plain-data results of `run_experiment` (their "figures":
    one dict of `seed_figures` per independently trained seed)."""
    figures = list(results["figures"])
    if len(figures) < 1:
        raise ValueError("need the figures of at least one seed")
    col = lambda key: [f[key] for f in figures]  # noqa: E731
    aucs = [f["AUC"] for f in figures]
    base_aucs = {k: [a[k] for a in aucs] for k in BASELINES}
    ledger = Ledger("model_clone", CLAIM_IDS, SOURCE_BASIS, STAND_INS)
    ledger.extend([
        decide_c1(col("min S_G T1"), col("max S_G cross-arch")),
        decide_c2(col("min S_W permuted"), col("mean B1 permuted")),
        decide_c3([a["S"] for a in aucs], base_aucs, [f["AUC hard"]["S"] for f in figures],
                  competence_checks(col("min base acc"), base_aucs)),
        decide_c4(col("max rho"), competence_checks(col("min base acc"))),
        decide_c5(),
        decide_e1([a["S"] for a in aucs], [a["S_G"] for a in aucs], [a["S_W"] for a in aucs]),
    ])
    return ledger
