"""The claims ledger of the reconfigure chapter (the ledger rules: CONTRIBUTING.md, section 2).

One decision function per claim; thresholds are named module constants fixed before the run.
Comparative claims use the one-sided paired test over the same evaluation items of one run
(`paired_test_p`, p < ALPHA): the same 3 x n_eval randomised courses for every arm, the same
sub-task episodes for both primitive variants. Where the claim says "size applies", a claim is
REPRODUCED only when our average gain is at least half the paper's: 1 + (k - 1) / 2 times.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from icml26.common.ledger import (NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED, ClaimStatus, is_fragile,
                                  paired_test_p)

CLAIM_IDS = ("C1", "C2", "C3", "C4")

ALPHA = 0.05
PAPER_GAIN_FIXED = 5.95  # C1: average progress vs single-robot control (paper)
PAPER_GAIN_CODESIGN = 9.81  # C2: vs reconfiguration-free co-design (paper)
TAIL_TOL = 0.0  # C3: a stage's loss must put exactly zero gradient on the other stage's tail
C4_WINDOW = 0.25  # C4: a switch "at a boundary" happens within this distance of one (segments 0.4-1.2 long)
C4_MIN_FRACTION = 0.8  # C4: at least this share of the switches happen at a boundary
E1_STEP_MAX = 0.5  # ours: the tallest step of the courses; a walker climbs steps up to 0.6 L


def half_size(k: float) -> float:
    """Half of a paper's ratio effect k: 1 + (k - 1) / 2."""
    return 1.0 + (float(k) - 1.0) / 2.0


def _items(x: Sequence, what: str) -> list[float]:
    vals = [float(v) for v in x]
    if not vals:
        raise ValueError(f"{what} is empty")
    return vals


def mean_gain(ours: Mapping[str, float], base: Mapping[str, float]) -> float:
    """Average over courses of ours / baseline progress (a baseline at 0 counts as 1e-6)."""
    if set(ours) != set(base) or not ours:
        raise ValueError(f"courses differ: {sorted(ours)} vs {sorted(base)}")
    return sum(float(ours[k]) / max(float(base[k]), 1e-6) for k in ours) / len(ours)


def _gain_claim(cid: str, claim: str, paper: float, ours_items, base_items, ours_prog, base_prog,
                base_name: str) -> ClaimStatus:
    a, b = _items(ours_items, "ours_items"), _items(base_items, "base_items")
    if len(a) != len(b):
        raise ValueError(f"paired items differ in number: {len(a)} vs {len(b)}")
    gain, need = mean_gain(ours_prog, base_prog), half_size(paper)
    p = paired_test_p(a, b)
    figs = {"average gain": gain, "paper gain": paper, "half the paper's": need, "p (one-sided, paired)": p}
    rule = f"paired one-sided p < ALPHA = {ALPHA}; gain >= 1 + (paper - 1) / 2 = {need:.3g}"
    if p >= ALPHA:
        return ClaimStatus(cid, claim, NOT_REPRODUCED, figs, rule, f"no significant gain over {base_name} (p = {p:.3g})",
                           is_fragile([p], ALPHA))
    if gain >= need:
        return ClaimStatus(cid, claim, REPRODUCED, figs, rule, "", is_fragile([gain], need))
    return ClaimStatus(cid, claim, PARTLY_REPRODUCED, figs, rule,
                       f"ahead of {base_name} but {gain:.2f} times, under half the paper's {paper} times",
                       is_fragile([gain], need))


def decide_c1(ours_items, fixed_items, ours_prog: Mapping[str, float], fixed_prog: Mapping[str, float]) -> ClaimStatus:
    """C1: switching configurations gives several times the progress of single fixed bodies (5.95x)."""
    return _gain_claim("C1", "switching configurations gives several times the progress of fixed bodies",
                       PAPER_GAIN_FIXED, ours_items, fixed_items, ours_prog, fixed_prog, "the best fixed body")


def decide_c2(ours_items, co_items, ours_prog: Mapping[str, float], co_prog: Mapping[str, float]) -> ClaimStatus:
    """C2: it also beats the best reconfiguration-free co-design (9.81x)."""
    return _gain_claim("C2", "it beats the best reconfiguration-free co-design", PAPER_GAIN_CODESIGN,
                       ours_items, co_items, ours_prog, co_prog, "the best co-designed body")


def decide_c3(leak_multi_tail: float, split_items: Sequence, no_split_items: Sequence) -> ClaimStatus:
    """C3: multi-tail primitives keep design and control apart. (a) each stage's loss puts zero
    gradient (<= TAIL_TOL) on the other stage's tail; (b) removing the split hurts: the multi-tail
    primitives cover more distance on their own sub-tasks than the W/O Stage Opt ones (paired
    p < ALPHA). Both -> REPRODUCED; (a) only -> PARTLY; (a) fails -> NOT REPRODUCED."""
    if isinstance(leak_multi_tail, bool) or not isinstance(leak_multi_tail, (int, float)) or leak_multi_tail < 0:
        raise ValueError(f"leak_multi_tail must be a non-negative number, got {leak_multi_tail!r}")
    a, b = _items(split_items, "split_items"), _items(no_split_items, "no_split_items")
    if len(a) != len(b):
        raise ValueError(f"paired items differ in number: {len(a)} vs {len(b)}")
    p = paired_test_p(a, b)
    apart, hurts = float(leak_multi_tail) <= TAIL_TOL, p < ALPHA
    figs = {"gradient leak across tails": float(leak_multi_tail), "sub-task distance, split": sum(a) / len(a),
            "sub-task distance, no split": sum(b) / len(b), "p (one-sided, paired)": p}
    rule = f"leak <= TAIL_TOL = {TAIL_TOL}; split beats no split, paired p < ALPHA = {ALPHA}"
    claim = "multi-tail primitives keep design and control objectives apart"
    if not apart:
        return ClaimStatus("C3", claim, NOT_REPRODUCED, figs, rule, "a stage's loss reaches the other stage's tail")
    if hurts:
        return ClaimStatus("C3", claim, REPRODUCED, figs, rule, "", is_fragile([p], ALPHA))
    return ClaimStatus("C3", claim, PARTLY_REPRODUCED, figs, rule,
                       f"the tails are apart, but removing the split does not hurt here (p = {p:.3g})",
                       is_fragile([p], ALPHA))


def decide_c4(switch_gaps: Sequence) -> ClaimStatus:
    """C4: the scheduler switches at sub-task boundaries: at least C4_MIN_FRACTION of the switches
    happen within C4_WINDOW of a segment boundary."""
    g = [float(v) for v in switch_gaps]
    frac = sum(x <= C4_WINDOW for x in g) / len(g) if g else 0.0
    figs = {"switches": len(g), "share within the window": frac}
    rule = f"share of switches within C4_WINDOW = {C4_WINDOW} of a boundary >= C4_MIN_FRACTION = {C4_MIN_FRACTION}"
    claim = "the scheduler switches at sub-task boundaries"
    ok = frac >= C4_MIN_FRACTION
    return ClaimStatus("C4", claim, REPRODUCED if ok else NOT_REPRODUCED, figs, rule,
                       "" if ok else (f"only {frac:.2f} of the switches happen near a boundary" if g
                                      else "the scheduler never switches"), is_fragile([frac], C4_MIN_FRACTION))


def decide_e1(walker_leg: float) -> ClaimStatus:
    """E1 (ours): the stairs walker's learned legs clear the tallest step (0.6 L >= E1_STEP_MAX)."""
    L = float(walker_leg)
    ok = 0.6 * L >= E1_STEP_MAX
    return ClaimStatus("E1", "the stairs walker's learned legs clear the tallest step",
                       REPRODUCED if ok else NOT_REPRODUCED, {"leg length L": L}, f"0.6 L >= E1_STEP_MAX = {E1_STEP_MAX}",
                       "" if ok else "the learned legs are too short for the tallest step")


def decide_e2(eps_items: Sequence, no_eps_items: Sequence) -> ClaimStatus:
    """E2 (ours; the paper's W/O eps-greedy ablation): the eps-greedy scheduler beats the one without
    exploration (paired p < ALPHA over the evaluation courses)."""
    a, b = _items(eps_items, "eps_items"), _items(no_eps_items, "no_eps_items")
    if len(a) != len(b):
        raise ValueError(f"paired items differ in number: {len(a)} vs {len(b)}")
    p = paired_test_p(a, b)
    ok = p < ALPHA
    return ClaimStatus("E2", "exploration over primitives helps the scheduler", REPRODUCED if ok else NOT_REPRODUCED,
                       {"progress with eps": sum(a) / len(a), "without": sum(b) / len(b), "p": p},
                       f"paired one-sided p < ALPHA = {ALPHA}", "" if ok else f"no significant gain (p = {p:.3g})",
                       is_fragile([p], ALPHA))


def decide_all(result: dict) -> list[ClaimStatus]:
    """Every claim and extension from one seed's `run_seed` result."""
    it, pr = result["items"], result["progress"]
    sub = result["subtask_items"]
    split = [float(v) for n in sorted(sub["multi_tail"]) for v in sub["multi_tail"][n]]
    nosplit = [float(v) for n in sorted(sub["no_stage"]) for v in sub["no_stage"][n]]
    return [
        decide_c1(it["ours"].tolist(), it["fixed"].tolist(), pr["ours"], pr["fixed"]),
        decide_c2(it["ours"].tolist(), it["codesign"].tolist(), pr["ours"], pr["codesign"]),
        decide_c3(result["tail_leak"]["multi_tail"], split, nosplit),
        decide_c4(result["rollout"]["switch_gaps"].tolist()),
        decide_e1(result["designs"]["walker"]),
        decide_e2(it["ours"].tolist(), it["no_eps"].tolist()),
    ]
