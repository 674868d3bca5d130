"""The KSKT chapter's claims ledger (CONTRIBUTING.md, section 2): one decision function per claim.

Thresholds are named module constants fixed before the stored run. Every comparative claim is
decided over the seeds of `KSKTConfig.seeds` (at least 3: the robustness rule); a figure is one
value per seed, in the seeds' order.
"""

from __future__ import annotations

from typing import Sequence

from icml26.common.ledger import per_seed_values
from icml26.common.ledger import (INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED, ClaimStatus,
                                  is_fragile, robust_status)

CLAIM_IDS = ("C1", "C2", "C3")

C1_MIN_PROBE_GAP = 0.10  # on-target minus off-target probe accuracy, each stream, every seed
C2_MIN_GAIN = 0.0  # KSKT's mean slot accuracy must exceed the baseline's by more than this (strictly)
C3_MIN_GAIN = 0.0  # KSKT's r2 accuracy must exceed the baseline's by more than this (strictly)
CEILING = 0.99  # accuracies at or above this leave no room for a gain: the test cannot discriminate
E1_MAX_SLOT_DEFICIT = 0.02  # (ours) KSKT's r2 accuracy >= baseline's - this, mean over seeds


def _same_length(**named):
    lengths = {k: len(v) for k, v in named.items()}
    if len(set(lengths.values())) != 1:
        raise ValueError(f"one value per seed is needed everywhere, got lengths {lengths}")


def decide_c1(gap_self: Sequence[float], gap_other: Sequence[float], balance_grad: Sequence[float]) -> ClaimStatus:
    """C1: the streams specialise, and the balance loss reaches the router.

    gap_self = acc(self->style) - acc(other->style), gap_other = acc(other->topic) - acc(self->topic),
    per seed (probes on prompt-pooled stream features); balance_grad = |dL_bal/d router| per seed.
    Both streams at least C1_MIN_PROBE_GAP in every seed and a non-zero gradient -> REPRODUCED; one
    stream only (or no gradient) -> PARTLY REPRODUCED; seeds disagreeing -> INCONCLUSIVE.
    """
    gs, go, gb = (per_seed_values(v, name) for v, name in (
        (gap_self, "gap_self"), (gap_other, "gap_other"), (balance_grad, "balance_grad")))
    _same_length(gap_self=gs, gap_other=go, balance_grad=gb)
    hs, ho = [g >= C1_MIN_PROBE_GAP for g in gs], [g >= C1_MIN_PROBE_GAP for g in go]
    s_self, s_other = robust_status(hs), robust_status(ho)
    grad_ok = all(g > 0 for g in gb)
    if s_self == REPRODUCED and s_other == REPRODUCED:
        status, reason = (REPRODUCED, "") if grad_ok else (PARTLY_REPRODUCED, "the balance loss gives the router no gradient")
    elif REPRODUCED in (s_self, s_other):
        which = "self" if s_self == REPRODUCED else "other"
        status, reason = PARTLY_REPRODUCED, f"only the {which} stream specialises by the bar in every seed"
    elif INCONCLUSIVE in (s_self, s_other):
        status, reason = INCONCLUSIVE, "seeds disagree on the probe gaps; more seeds or longer training would settle it"
    else:
        status, reason = NOT_REPRODUCED, "neither stream specialises by the bar in any seed"
    per_seed = [REPRODUCED if a and b else NOT_REPRODUCED for a, b in zip(hs, ho)]
    fragile = is_fragile(gs, C1_MIN_PROBE_GAP, per_seed) or is_fragile(go, C1_MIN_PROBE_GAP)
    return ClaimStatus(
        "C1", "the self and other streams specialise; the balance loss trains", status,
        figures={"self-stream gap per seed": gs, "other-stream gap per seed": go, "balance gradient per seed": gb},
        threshold=f"each gap >= C1_MIN_PROBE_GAP = {C1_MIN_PROBE_GAP} in every seed, gradient > 0",
        reason=reason, fragile=fragile)


def decide_c2(acc_kskt: Sequence[float], acc_base: Sequence[float]) -> ClaimStatus:
    """C2: KSKT beats the matched single-stream baseline overall (mean accuracy of the 3 slots).

    Holds in a seed when acc_kskt - acc_base > C2_MIN_GAIN. Both models at or above CEILING in
    every seed -> INCONCLUSIVE (no room to beat); otherwise the robustness rule.
    """
    k, b = per_seed_values(acc_kskt, "acc_kskt"), per_seed_values(acc_base, "acc_base")
    _same_length(acc_kskt=k, acc_base=b)
    gains = [x - y for x, y in zip(k, b)]
    holds = [g > C2_MIN_GAIN for g in gains]
    if all(x >= CEILING and y >= CEILING for x, y in zip(k, b)):
        status = INCONCLUSIVE
        reason = "both models are at the ceiling in every seed; a harder corpus or fewer steps would settle it"
    else:
        status = robust_status(holds)
        reason = {REPRODUCED: "", NOT_REPRODUCED: "KSKT does not beat the matched baseline in any seed",
                  INCONCLUSIVE: "seeds disagree; more seeds would settle it"}[status]
    per_seed = [REPRODUCED if h else NOT_REPRODUCED for h in holds]
    return ClaimStatus(
        "C2", "KSKT beats the matched single-stream model on the persona task", status,
        figures={"mean slot accuracy KSKT per seed": k, "mean slot accuracy baseline per seed": b},
        threshold=f"KSKT - baseline > C2_MIN_GAIN = {C2_MIN_GAIN} in every seed (not both >= CEILING = {CEILING})",
        reason=reason, fragile=is_fragile(gains, C2_MIN_GAIN, per_seed))


def decide_c3(gain_r1: Sequence[float], gain_r2: Sequence[float], gain_r3: Sequence[float],
              base_r2: Sequence[float]) -> ClaimStatus:
    """C3: the gain is largest on the slot that needs both persona and user (r2).

    gain_rk = KSKT's minus the baseline's accuracy on slot rk, per seed; base_r2 = the baseline's r2
    accuracy. REPRODUCED when, in every seed, gain_r2 > C3_MIN_GAIN and gain_r2 > max(gain_r1,
    gain_r3); PARTLY REPRODUCED when KSKT beats the baseline on r2 in every seed but the gain there
    is not always the largest; INCONCLUSIVE when the baseline is at CEILING on r2 in every seed.
    """
    g1, g2, g3, b2 = (per_seed_values(v, n) for v, n in ((gain_r1, "gain_r1"), (gain_r2, "gain_r2"),
                                                 (gain_r3, "gain_r3"), (base_r2, "base_r2")))
    _same_length(gain_r1=g1, gain_r2=g2, gain_r3=g3, base_r2=b2)
    beat = [g > C3_MIN_GAIN for g in g2]
    largest = [x > max(y, z) for x, y, z in zip(g2, g1, g3)]
    if all(b >= CEILING for b in b2):
        status, reason = INCONCLUSIVE, "the baseline is at the ceiling on r2 in every seed; a harder corpus would settle it"
    else:
        s_beat = robust_status(beat)
        if s_beat == REPRODUCED:
            status, reason = (REPRODUCED, "") if all(largest) else (
                PARTLY_REPRODUCED, "KSKT wins on r2 in every seed, but that gain is not always its largest")
        else:
            status = s_beat
            reason = {NOT_REPRODUCED: "KSKT does not beat the baseline on r2 in any seed",
                      INCONCLUSIVE: "seeds disagree on r2; more seeds would settle it"}[s_beat]
    per_seed = [REPRODUCED if a and b else NOT_REPRODUCED for a, b in zip(beat, largest)]
    return ClaimStatus(
        "C3", "the gain is largest on the slot that needs both persona and user", status,
        figures={"gain r1 per seed": g1, "gain r2 per seed": g2, "gain r3 per seed": g3, "baseline r2 per seed": b2},
        threshold=f"gain_r2 > C3_MIN_GAIN = {C3_MIN_GAIN} and gain_r2 > max(gain_r1, gain_r3), every seed",
        reason=reason, fragile=is_fragile(g2, C3_MIN_GAIN, per_seed))


def decide_e1(r2_kskt: Sequence[float], r2_base: Sequence[float]) -> ClaimStatus:
    """E1 (ours): KSKT's r2 accuracy is not worse than the baseline's by more than E1_MAX_SLOT_DEFICIT
    (means over seeds)."""
    k, b = per_seed_values(r2_kskt, "r2_kskt"), per_seed_values(r2_base, "r2_base")
    _same_length(r2_kskt=k, r2_base=b)
    mk, mb = sum(k) / len(k), sum(b) / len(b)
    ok = mk >= mb - E1_MAX_SLOT_DEFICIT
    return ClaimStatus(
        "E1", "KSKT is not worse than the matched model on the coordination slot",
        REPRODUCED if ok else NOT_REPRODUCED,
        figures={"r2 KSKT (mean)": mk, "r2 baseline (mean)": mb},
        threshold=f"KSKT >= baseline - E1_MAX_SLOT_DEFICIT = {E1_MAX_SLOT_DEFICIT} (means over seeds)",
        reason="" if ok else "KSKT trails the baseline on r2 by more than the allowance")
