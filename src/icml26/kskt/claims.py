"""The KSKT chapter's claims ledger (CONTRIBUTING.md, section 2; CLAIMS.md revision 2).

Thresholds are named module constants fixed before the runs. Every comparative claim is decided
over the independently trained seeds of `KSKTConfig.seeds` (at least `MIN_SEEDS`; each seed draws
its own corpus and trains both models afresh); a figure is one value per seed, in the seeds'
order. Each compared model passes a competence check (rule 2) on the slots that need one side
only; the balance-loss gradient is a sanity check (rule 3): shown, never deciding.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from icml26.common.ledger import (INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED, ClaimStatus,
                                  Competence, Ledger, competence_reason, gate_competence, is_fragile,
                                  per_seed_values, replicated_status, robust_status, seed_statuses)

CLAIM_IDS = ("C1", "C2", "C3")
SOURCE_BASIS = "official code"
STAND_INS: dict[str, str] = {}

C1_MIN_PROBE_GAP = 0.10  # on-target minus off-target probe accuracy, each stream, every seed
C1_POOL = "late"  # the probes read the positions that see both spans (`experiment.stream_features`)
C2_MIN_GAIN = 0.0  # KSKT's mean slot accuracy must exceed the baseline's by more than this (strictly)
C3_MIN_GAIN = 0.0  # KSKT's r2 accuracy must exceed the baseline's by more than this (strictly)
CEILING = 0.99  # accuracies at or above this leave no room for a gain: the test cannot discriminate
E1_MAX_SLOT_DEFICIT = 0.02  # (ours) KSKT's r2 accuracy >= baseline's - this, mean over seeds
#: Rule 2: chance on the one-sided slots r1 (4 styles) and r3 (3 emotions), and the margin each
#: model's mean accuracy on them (worst seed) must clear: the model has learned the format and
#: reads the span each slot needs.
CHANCE_R1_R3 = (1 / 4 + 1 / 3) / 2
COMPETENCE_MARGIN = 0.5
FULL_BUDGET = "the full preset (8000 steps on Qwen3-0.6B, about 2 GPU hours)"


def _same_length(**named):
    lengths = {k: len(v) for k, v in named.items()}
    if len(set(lengths.values())) != 1:
        raise ValueError(f"one value per seed is needed everywhere, got lengths {lengths}")


def competence(arm: str, r1: Sequence[float], r3: Sequence[float]) -> Competence:
    """Rule 2: the arm's mean accuracy on r1 and r3 (worst seed) must beat chance by COMPETENCE_MARGIN."""
    a, b = per_seed_values(r1, f"{arm} r1 accuracy"), per_seed_values(r3, f"{arm} r3 accuracy")
    _same_length(r1=a, r3=b)
    return Competence(f"{arm} (r1, r3)", min((x + y) / 2 for x, y in zip(a, b)), CHANCE_R1_R3 + COMPETENCE_MARGIN)


def decide_c1(gap_self: Sequence[float], gap_other: Sequence[float], balance_grad: Sequence[float],
              checks: Sequence[Competence] = ()) -> ClaimStatus:
    """C1: the streams specialise (and, as a sanity check, the balance loss reaches the router).

    gap_self = acc(self->style) - acc(other->style), gap_other = acc(other->topic) - acc(self->topic),
    per seed, probes on the stream features at the positions that see both spans (C1_POOL);
    balance_grad = |dL_bal/d router| per seed. Both gaps >= C1_MIN_PROBE_GAP in every seed ->
    REPRODUCED; one stream only -> PARTLY REPRODUCED; seeds disagreeing -> INCONCLUSIVE.
    Rule 3: a non-zero balance gradient holds by construction (the loss is a function of the
    router's output), so it is shown and never decides; a zero one is a bug: INCONCLUSIVE.
    """
    gs, go, gb = (per_seed_values(v, name) for v, name in (
        (gap_self, "gap_self"), (gap_other, "gap_other"), (balance_grad, "balance_grad")))
    _same_length(gap_self=gs, gap_other=go, balance_grad=gb)
    hs, ho = [g >= C1_MIN_PROBE_GAP for g in gs], [g >= C1_MIN_PROBE_GAP for g in go]
    s_self, s_other = robust_status(hs), robust_status(ho)
    if s_self == REPRODUCED and s_other == REPRODUCED:
        status, reason = REPRODUCED, ""
    elif REPRODUCED in (s_self, s_other):
        which = "self" if s_self == REPRODUCED else "other"
        status, reason = PARTLY_REPRODUCED, f"only the {which} stream specialises by the bar in every seed"
    elif INCONCLUSIVE in (s_self, s_other):
        status, reason = INCONCLUSIVE, f"seeds disagree on the probe gaps; {FULL_BUDGET} would settle it"
    else:
        status, reason = NOT_REPRODUCED, "neither stream specialises by the bar in any seed"
    if competence_reason(checks):  # rule 2: a failed arm decides nothing, whatever the seeds say
        status, reason = gate_competence(status, checks), competence_reason(checks)
    if not all(g > 0 for g in gb):
        status, reason = INCONCLUSIVE, "sanity check failed: the balance loss gives the router no gradient (a bug)"
    per_seed = seed_statuses([a and b for a, b in zip(hs, ho)])
    fragile = (is_fragile(gs, C1_MIN_PROBE_GAP, per_seed) or is_fragile(go, C1_MIN_PROBE_GAP, per_seed))
    return ClaimStatus(
        "C1", "the self and other streams specialise; the balance loss trains", status,
        figures={"self-stream gap per seed": gs, "other-stream gap per seed": go,
                 "balance gradient per seed (sanity check, by construction)": gb},
        threshold=(f"each gap >= C1_MIN_PROBE_GAP = {C1_MIN_PROBE_GAP} in every seed, probes at the positions "
                   "that see both spans; gradient > 0 is a sanity check"),
        reason=reason, fragile=fragile, competence=checks)


def decide_c2(acc_kskt: Sequence[float], acc_base: Sequence[float], checks: Sequence[Competence] = ()) -> ClaimStatus:
    """C2: KSKT beats the matched single-stream baseline overall (mean accuracy of the 3 slots).

    Holds in a seed when acc_kskt - acc_base > C2_MIN_GAIN. Both models at or above CEILING in
    every seed -> INCONCLUSIVE (no room to beat); otherwise rule 1 over the seeds
    (`replicated_status`); an incompetent model (rule 2) -> INCONCLUSIVE.
    """
    k, b = per_seed_values(acc_kskt, "acc_kskt"), per_seed_values(acc_base, "acc_base")
    _same_length(acc_kskt=k, acc_base=b)
    gains = [x - y for x, y in zip(k, b)]
    holds = [g > C2_MIN_GAIN for g in gains]
    if all(x >= CEILING and y >= CEILING for x, y in zip(k, b)):
        status = INCONCLUSIVE
        reason = "both models are at the ceiling in every seed; a harder corpus or fewer steps would settle it"
    else:
        status = replicated_status(gains, C2_MIN_GAIN)
        reason = {REPRODUCED: "", NOT_REPRODUCED: "KSKT does not beat the matched baseline in any seed",
                  INCONCLUSIVE: f"seeds disagree and the seed-level test is not significant; {FULL_BUDGET} "
                                "would settle it"}[status]
    if competence_reason(checks):  # rule 2: a failed arm decides nothing, whatever the seeds say
        status, reason = gate_competence(status, checks), competence_reason(checks)
    per_seed = seed_statuses(holds)
    return ClaimStatus(
        "C2", "KSKT beats the matched single-stream model on the persona task", status,
        figures={"mean slot accuracy KSKT per seed": k, "mean slot accuracy baseline per seed": b},
        threshold=(f"KSKT - baseline > C2_MIN_GAIN = {C2_MIN_GAIN} over the seeds (replicated_status; "
                   f"not both >= CEILING = {CEILING})"),
        reason=reason, fragile=is_fragile(gains, C2_MIN_GAIN, per_seed), competence=checks)


def decide_c3(gain_r1: Sequence[float], gain_r2: Sequence[float], gain_r3: Sequence[float],
              base_r2: Sequence[float], checks: Sequence[Competence] = ()) -> ClaimStatus:
    """C3: the gain is largest on the slot that needs both persona and user (r2).

    gain_rk = KSKT's minus the baseline's accuracy on slot rk, per seed; base_r2 = the baseline's r2
    accuracy. REPRODUCED when, in every seed, gain_r2 > C3_MIN_GAIN and gain_r2 > max(gain_r1,
    gain_r3); PARTLY REPRODUCED when KSKT beats the baseline on r2 (rule 1, `replicated_status`) but
    the gain there is not always the largest; INCONCLUSIVE when the baseline is at CEILING on r2 in
    every seed or a model is incompetent (rule 2).
    """
    g1, g2, g3, b2 = (per_seed_values(v, n) for v, n in ((gain_r1, "gain_r1"), (gain_r2, "gain_r2"),
                                                 (gain_r3, "gain_r3"), (base_r2, "base_r2")))
    _same_length(gain_r1=g1, gain_r2=g2, gain_r3=g3, base_r2=b2)
    beat = [g > C3_MIN_GAIN for g in g2]
    largest = [x > max(y, z) for x, y, z in zip(g2, g1, g3)]
    if all(b >= CEILING for b in b2):
        status, reason = INCONCLUSIVE, "the baseline is at the ceiling on r2 in every seed; a harder corpus would settle it"
    else:
        s_beat = replicated_status(g2, C3_MIN_GAIN)
        if s_beat == REPRODUCED:
            status, reason = (REPRODUCED, "") if all(largest) else (
                PARTLY_REPRODUCED, "KSKT wins on r2, but that gain is not always its largest")
        else:
            status = s_beat
            reason = {NOT_REPRODUCED: "KSKT does not beat the baseline on r2 in any seed",
                      INCONCLUSIVE: f"seeds disagree on r2; {FULL_BUDGET} would settle it"}[s_beat]
    if competence_reason(checks):  # rule 2: a failed arm decides nothing, whatever the seeds say
        status, reason = gate_competence(status, checks), competence_reason(checks)
    per_seed = seed_statuses([a and b for a, b in zip(beat, largest)])
    return ClaimStatus(
        "C3", "the gain is largest on the slot that needs both persona and user", status,
        figures={"gain r1 per seed": g1, "gain r2 per seed": g2, "gain r3 per seed": g3, "baseline r2 per seed": b2},
        threshold=f"gain_r2 > C3_MIN_GAIN = {C3_MIN_GAIN} and gain_r2 > max(gain_r1, gain_r3), every seed",
        reason=reason, fragile=is_fragile(g2, C3_MIN_GAIN, per_seed), competence=checks)


def decide_e1(r2_kskt: Sequence[float], r2_base: Sequence[float]) -> ClaimStatus:
    """E1 (ours): KSKT's r2 accuracy is not worse than the baseline's by more than E1_MAX_SLOT_DEFICIT
    (means over seeds)."""
    k, b = per_seed_values(r2_kskt, "r2_kskt"), per_seed_values(r2_base, "r2_base")
    _same_length(r2_kskt=k, r2_base=b)
    mk, mb = sum(k) / len(k), sum(b) / len(b)
    ok = mk >= mb - E1_MAX_SLOT_DEFICIT
    diffs = [x - y for x, y in zip(k, b)]
    fragile = (is_fragile(diffs, -E1_MAX_SLOT_DEFICIT, seed_statuses([d >= -E1_MAX_SLOT_DEFICIT for d in diffs]))
               if len(diffs) > 1 else True)
    return ClaimStatus(
        "E1", "KSKT is not worse than the matched model on the coordination slot",
        REPRODUCED if ok else NOT_REPRODUCED,
        figures={"r2 KSKT (mean)": mk, "r2 baseline (mean)": mb},
        threshold=f"KSKT >= baseline - E1_MAX_SLOT_DEFICIT = {E1_MAX_SLOT_DEFICIT} (means over seeds)",
        reason="" if ok else "KSKT trails the baseline on r2 by more than the allowance", fragile=fragile)


def build_ledger(results: Mapping) -> Ledger:
    """The claims ledger from the plain-data results of `experiment.run_experiment`."""
    per = list(results["per_seed"])
    if not per:
        raise ValueError("results hold no seed")
    slots = ("r1", "r2", "r3")
    acc = {m: {s: [p["acc"][m][s] for p in per] for s in slots} for m in ("kskt", "baseline")}
    gain = {s: [x - y for x, y in zip(acc["kskt"][s], acc["baseline"][s])] for s in slots}
    probe = lambda name: [p["probes"][C1_POOL][name] for p in per]  # noqa: E731
    checks = [competence("KSKT", acc["kskt"]["r1"], acc["kskt"]["r3"]),
              competence("baseline", acc["baseline"]["r1"], acc["baseline"]["r3"])]
    mean = {m: [sum(acc[m][s][i] for s in slots) / 3 for i in range(len(per))] for m in acc}
    ledger = Ledger("kskt", CLAIM_IDS, SOURCE_BASIS, STAND_INS)
    ledger.add(decide_c1([a - b for a, b in zip(probe("self->style"), probe("other->style"))],
                         [a - b for a, b in zip(probe("other->topic"), probe("self->topic"))],
                         [p["balance_grad"] for p in per], checks[:1]))
    ledger.add(decide_c2(mean["kskt"], mean["baseline"], checks))
    ledger.add(decide_c3(gain["r1"], gain["r2"], gain["r3"], acc["baseline"]["r2"], checks))
    ledger.add(decide_e1(acc["kskt"]["r2"], acc["baseline"]["r2"]))
    return ledger
