"""The GRASP chapter's claims ledger (CONTRIBUTING.md, section 2): one decision function per claim.

The reduced run has one seed (the time limit), so every comparison is decided, as the ledger rules (CONTRIBUTING.md, section 2)
allows, by a one-sided paired test over the held-out questions of that run (at least 30 per
size; `paired_test_p`, p < ALPHA), stated here before the run. Thresholds are named constants.
With one seed the fragile flag marks a deciding p-value near its threshold: between ALPHA / 2
and 2 ALPHA (the test would flip with a slightly different set of questions).
"""

from __future__ import annotations

from typing import Sequence

from icml26.common.ledger import (INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTED, PARTLY_REPRODUCED, REPRODUCED,
                                  ClaimStatus, paired_test_p)

CLAIM_IDS = ("C1", "C2", "C3")

ALPHA = 0.05  # one-sided paired test over held-out questions: the effect holds when p < ALPHA
MIN_ITEMS = 30  # the robustness rule's minimum number of paired items
CEILING = 0.98  # both arms at or above this accuracy: the test cannot discriminate
FRAGILE_BAND = (ALPHA / 2, 2 * ALPHA)  # a deciding p-value in this band is flagged fragile
E1_MIN_GAP_SMALL = 0.30  # (ours) agent - passive at the small size
E1_MIN_AGENT_LARGE = 0.80  # (ours) agent accuracy at the large size
E2_MIN_BLIND_GAIN = 0.15  # (ours) blind accuracy gain over the blind stage
E2_MIN_PROBE_GAIN = 0.20  # (ours) probe-before-code rate gain over the blind stage


def _items(values, what: str) -> list[float]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise TypeError(f"{what} must be a sequence of per-question outcomes, got {type(values).__name__}")
    out = []
    for v in values:
        if not isinstance(v, (bool, int, float)) and type(v).__name__ not in ("bool_", "float64", "float32"):
            raise TypeError(f"{what} must hold numbers or bools, got {v!r}")
        out.append(float(v))
    if len(out) < MIN_ITEMS:
        raise ValueError(f"{what} has {len(out)} items; the paired test needs at least {MIN_ITEMS}")
    return out


def _pair(a, b, what_a, what_b):
    x, y = _items(a, what_a), _items(b, what_b)
    if len(x) != len(y):
        raise ValueError(f"{what_a} and {what_b} must pair item by item, got {len(x)} and {len(y)}")
    return x, y


def _mean(x):
    return sum(x) / len(x)


def _near(*ps) -> bool:
    return any(FRAGILE_BAND[0] <= p < FRAGILE_BAND[1] for p in ps)


def decide_c1(agent_small: Sequence[float], passive_small: Sequence[float], agent_large: Sequence[float],
              passive_large: Sequence[float]) -> ClaimStatus:
    """C1: probing + code beats passive ingestion, more so on larger graphs.

    Per size, the agent beats passive ingestion when the one-sided paired test over the same
    held-out questions gives p < ALPHA; the margin widens when (agent - passive) at the large size
    exceeds that at the small size. Both sizes and widening -> REPRODUCED; the large size only, or
    both without widening -> PARTLY REPRODUCED; neither size -> NOT REPRODUCED (INCONCLUSIVE when
    both arms are at the ceiling).
    """
    a_s, p_s = _pair(agent_small, passive_small, "agent_small", "passive_small")
    a_l, p_l = _pair(agent_large, passive_large, "agent_large", "passive_large")
    p_small, p_large = paired_test_p(a_s, p_s), paired_test_p(a_l, p_l)
    gap_s, gap_l = _mean(a_s) - _mean(p_s), _mean(a_l) - _mean(p_l)
    win_s, win_l, widens = p_small < ALPHA, p_large < ALPHA, gap_l > gap_s
    if min(_mean(a_s), _mean(p_s)) >= CEILING and min(_mean(a_l), _mean(p_l)) >= CEILING:
        status, reason = INCONCLUSIVE, "both arms at the ceiling; larger graphs would settle it"
    elif win_s and win_l and widens:
        status, reason = REPRODUCED, ""
    elif win_s and win_l:
        status, reason = PARTLY_REPRODUCED, "the agent wins at both sizes but the margin does not widen"
    elif win_l and widens:
        status, reason = PARTLY_REPRODUCED, "the agent wins clearly only on the larger graphs, not the smaller"
    elif win_s or win_l:
        status, reason = PARTLY_REPRODUCED, "the agent wins at one size only and the margin does not widen"
    else:
        status, reason = NOT_REPRODUCED, "the agent does not beat passive ingestion at either size"
    return ClaimStatus(
        "C1", "probing and code beat passive ingestion, more so on larger graphs", status,
        figures={"agent small": _mean(a_s), "passive small": _mean(p_s), "p small": p_small,
                 "agent large": _mean(a_l), "passive large": _mean(p_l), "p large": p_large},
        threshold=f"paired one-sided p < ALPHA = {ALPHA} at each size (>= {MIN_ITEMS} questions), "
                  "and gap_large > gap_small",
        reason=reason, fragile=_near(p_small, p_large))


def decide_c2(acc_before: Sequence[float], acc_after: Sequence[float], probe_before: Sequence[float],
              probe_after: Sequence[float]) -> ClaimStatus:
    """C2: the structure-blind stage builds topological awareness.

    On the same held-out blind questions before and after the blind GRPO stage: accuracy rises
    (paired one-sided p < ALPHA) and the agent probes the query nodes before computing more often
    (paired one-sided p < ALPHA). Both -> REPRODUCED; one -> PARTLY REPRODUCED; neither -> NOT
    REPRODUCED.
    """
    a0, a1 = _pair(acc_before, acc_after, "acc_before", "acc_after")
    q0, q1 = _pair(probe_before, probe_after, "probe_before", "probe_after")
    if len(a0) != len(q0):
        raise ValueError("accuracy and probing must be measured on the same questions")
    p_acc, p_probe = paired_test_p(a1, a0), paired_test_p(q1, q0)
    acc_up, probe_up = p_acc < ALPHA, p_probe < ALPHA
    if acc_up and probe_up:
        status, reason = REPRODUCED, ""
    elif acc_up:
        status, reason = PARTLY_REPRODUCED, "blind accuracy rises, but the agent does not probe before computing more often"
    elif probe_up:
        status, reason = PARTLY_REPRODUCED, "the agent probes first more often, but blind accuracy does not rise"
    else:
        status, reason = NOT_REPRODUCED, "neither blind accuracy nor probing rises over the blind stage"
    return ClaimStatus(
        "C2", "the blind stage raises blind accuracy and probing before computing", status,
        figures={"blind acc before": _mean(a0), "blind acc after": _mean(a1), "p accuracy": p_acc,
                 "probe-first before": _mean(q0), "probe-first after": _mean(q1), "p probing": p_probe},
        threshold=f"paired one-sided p < ALPHA = {ALPHA} for each rise (>= {MIN_ITEMS} questions)",
        reason=reason, fragile=_near(p_acc, p_probe))


def decide_c3() -> ClaimStatus:
    """C3: the released 4B model's gains, the win over large models and unseen-task transfer."""
    return ClaimStatus(
        "C3", "a 4B model gains 53 %, beats larger models, transfers to new tasks", NOT_TESTED,
        threshold="not testable offline",
        reason="needs the released GRASP-4B model and the paper's benchmarks; no task type is held out here")


def decide_e1(acc_agent_small: float, acc_passive_small: float, acc_agent_large: float) -> ClaimStatus:
    """E1 (ours): agent - passive >= E1_MIN_GAP_SMALL at the small size and agent >= E1_MIN_AGENT_LARGE
    at the large size."""
    vals = (acc_agent_small, acc_passive_small, acc_agent_large)
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in vals):
        raise TypeError(f"accuracies must be numbers, got {vals!r}")
    ok = acc_agent_small - acc_passive_small >= E1_MIN_GAP_SMALL and acc_agent_large >= E1_MIN_AGENT_LARGE
    return ClaimStatus(
        "E1", "the agent's margin and large-graph accuracy reach our sizes", REPRODUCED if ok else NOT_REPRODUCED,
        figures={"gap small": acc_agent_small - acc_passive_small, "agent large": acc_agent_large},
        threshold=f"gap >= E1_MIN_GAP_SMALL = {E1_MIN_GAP_SMALL} and agent large >= E1_MIN_AGENT_LARGE = "
                  f"{E1_MIN_AGENT_LARGE}",
        reason="" if ok else "the agent's margin or its large-graph accuracy is under our sizes")


def decide_e2(blind_gain: float, probe_gain: float) -> ClaimStatus:
    """E2 (ours): the blind stage adds at least E2_MIN_BLIND_GAIN accuracy and E2_MIN_PROBE_GAIN probing."""
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in (blind_gain, probe_gain)):
        raise TypeError("gains must be numbers")
    ok = blind_gain >= E2_MIN_BLIND_GAIN and probe_gain >= E2_MIN_PROBE_GAIN
    return ClaimStatus(
        "E2", "the blind stage's gains reach our sizes", REPRODUCED if ok else NOT_REPRODUCED,
        figures={"blind accuracy gain": blind_gain, "probe-first gain": probe_gain},
        threshold=f"accuracy gain >= E2_MIN_BLIND_GAIN = {E2_MIN_BLIND_GAIN} and probe gain >= "
                  f"E2_MIN_PROBE_GAIN = {E2_MIN_PROBE_GAIN}",
        reason="" if ok else "one of the gains is under our size")
