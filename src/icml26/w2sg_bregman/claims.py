"""The claims ledger of the w2sg_bregman chapter (CONTRIBUTING.md, section 2): one decision function per claim.

Every threshold is a named module constant, fixed before the runs that the chapter stores.
Part A rows come from ``run_synthetic`` (both Bregman losses), Part B rows from ``run_digits``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from icml26.common.ledger import per_seed_flags
from icml26.common.ledger import (
    NOT_REPRODUCED, NOT_TESTED, PARTLY_REPRODUCED, REPRODUCED, ClaimStatus, is_fragile, robust_status,
)

CLAIM_IDS = ("C1", "C2", "C3", "C4", "C5")

#: C1: the risk-gap identity and the bias-variance split hold to this absolute tolerance.
C1_IDENTITY_TOL = 1e-6
#: C2: at the widest student, Pearson r(gain, misfit) over (seed, noise) settings above this ...
C2_MIN_CORRELATION = 0.8
#: ... and the mean |gain - misfit| / misfit at most this (both losses).
C2_MAX_RELATIVE_GAP = 0.25
#: E1 (ours): W2SG occurs at the widest synthetic student in at least this share of settings.
E1_MIN_FRACTION = 0.8


def _rows(rows, what: str) -> list[dict]:
    if not isinstance(rows, (list, tuple)) or not rows or not all(isinstance(r, dict) for r in rows):
        raise ValueError(f"{what} must be a non-empty list of result rows")
    return list(rows)


def decide_c1(residuals: Sequence[float]) -> ClaimStatus:
    """C1: the student-teacher risk gap equals the expected misfit plus a cross term that the
    posterior mean removes (Bregman three-point identity) and the teacher's risk splits into
    bias + variance: the largest |residual| over every student and loss < C1_IDENTITY_TOL."""
    r = np.asarray(residuals, dtype=float)
    if r.size == 0 or not np.all(np.isfinite(r)):
        raise ValueError("residuals must be a non-empty list of finite numbers")
    worst = float(np.abs(r).max())
    ok = worst < C1_IDENTITY_TOL
    return ClaimStatus("C1", "risk gap equals the expected misfit (Bregman decomposition)",
                       REPRODUCED if ok else NOT_REPRODUCED, {"largest residual": worst, "students": int(r.size)},
                       f"max |residual| < C1_IDENTITY_TOL = {C1_IDENTITY_TOL:g}",
                       "" if ok else "an identity residual exceeds the numerical tolerance")


def decide_c2(closer_per_seed: Sequence[bool], corr: dict, rel_gap: dict) -> ClaimStatus:
    """C2: (a) wider students get closer to the posterior-mean teacher: D(f_bar, f_s) at the
    widest width below the narrowest's, in every seed (both losses; robustness rule);
    (b) gain tracks misfit at the widest width: r > C2_MIN_CORRELATION and mean relative gap
    <= C2_MAX_RELATIVE_GAP, for each loss. Both: REPRODUCED; one: PARTLY; neither: NOT."""
    closer = per_seed_flags(closer_per_seed, "closer_per_seed")
    if set(corr) != set(rel_gap) or not corr:
        raise ValueError("corr and rel_gap need the same, non-empty set of losses")
    seeds_status = robust_status(closer)
    tracks = all(float(corr[k]) > C2_MIN_CORRELATION and float(rel_gap[k]) <= C2_MAX_RELATIVE_GAP for k in corr)
    a_ok = seeds_status == REPRODUCED
    if a_ok and tracks:
        status, reason = REPRODUCED, ""
    elif a_ok or tracks:
        status = PARTLY_REPRODUCED
        reason = ("wider students approach the posterior mean, but gain does not track misfit" if a_ok else
                  "gain tracks misfit, but students do not approach the posterior mean in every seed")
    else:
        status, reason = NOT_REPRODUCED, "neither part holds"
    figures = {"seeds closer at the widest width": f"{sum(closer)}/{len(closer)}"}
    figures.update({f"r(gain, misfit), {k}": float(v) for k, v in corr.items()})
    figures.update({f"relative gap, {k}": float(v) for k, v in rel_gap.items()})
    fragile = is_fragile(list(corr.values()), C2_MIN_CORRELATION) or is_fragile(list(rel_gap.values()),
                                                                                 C2_MAX_RELATIVE_GAP)
    return ClaimStatus("C2", "gain tracks misfit; wider students approach the posterior-mean teacher", status,
                       figures, f"closer in every seed; r > C2_MIN_CORRELATION = {C2_MIN_CORRELATION} and "
                       f"relative gap <= C2_MAX_RELATIVE_GAP = {C2_MAX_RELATIVE_GAP} for each loss",
                       reason, fragile)


def decide_c3() -> ClaimStatus:
    """C3: lower student entropy promotes W2SG under cross-entropy. Not tested: our runs never vary
    the student's entropy with the teacher held fixed."""
    return ClaimStatus("C3", "lower student entropy promotes W2SG under cross-entropy", NOT_TESTED, {}, "",
                       "needs a sweep of the student's entropy at a fixed teacher (e.g. an entropy penalty); "
                       "the full preset does not run it either")


def decide_c4(ent_rise_rce: Sequence[float], ent_rise_ce: Sequence[float], spread_rce: float,
              spread_ce: float) -> ClaimStatus:
    """C4: from the lowest to the highest teacher temperature the reverse-CE student's predictive
    entropy rises less than the forward-CE student's, in every seed (robustness rule), and its
    accuracy spread over temperatures (std, mean over seeds) is no larger."""
    a, b = np.asarray(ent_rise_rce, dtype=float), np.asarray(ent_rise_ce, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or not np.all(np.isfinite(np.concatenate([a, b]))):
        raise ValueError("one finite entropy rise per seed for both losses")
    holds = [bool(x < y) for x, y in zip(a, b)]
    status = robust_status(holds)
    spread_ok = float(spread_rce) <= float(spread_ce)
    if status == REPRODUCED and not spread_ok:
        status = PARTLY_REPRODUCED
    reason = {REPRODUCED: "", PARTLY_REPRODUCED: "entropy insensitive, but accuracy varies more across temperatures",
              NOT_REPRODUCED: "the reverse-CE student's entropy rises at least as much in every seed"}.get(
        status, "seeds disagree; more seeds would settle it")
    return ClaimStatus("C4", "reverse CE is less sensitive to teacher uncertainty than forward CE", status,
                       {"entropy rise RCE (mean)": float(a.mean()), "entropy rise CE (mean)": float(b.mean()),
                        "seeds with smaller rise": f"{sum(holds)}/{len(holds)}",
                        "accuracy spread RCE": float(spread_rce), "accuracy spread CE": float(spread_ce)},
                       "RCE entropy rise < CE's in every seed and RCE accuracy spread <= CE's", reason,
                       is_fragile(b - a, 0.0, [REPRODUCED if h else NOT_REPRODUCED for h in holds]))


def decide_c5(acc_sl: Sequence[float], acc_ce: Sequence[float]) -> ClaimStatus:
    """C5: adding reverse CE to CE (the symmetric loss CE + RCE) gives a more accurate student than
    CE alone, accuracy averaged over temperatures, in every seed (robustness rule)."""
    a, b = np.asarray(acc_sl, dtype=float), np.asarray(acc_ce, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or not np.all(np.isfinite(np.concatenate([a, b]))):
        raise ValueError("one finite accuracy per seed for both losses")
    holds = [bool(x > y) for x, y in zip(a, b)]
    status = robust_status(holds)
    reason = {REPRODUCED: "", NOT_REPRODUCED: "CE + RCE is never more accurate than CE"}.get(
        status, "seeds disagree; more seeds would settle it")
    return ClaimStatus("C5", "adding reverse CE consistently improves the student", status,
                       {"accuracy CE + RCE (mean)": float(a.mean()), "accuracy CE (mean)": float(b.mean()),
                        "seeds improved": f"{sum(holds)}/{len(holds)}"},
                       "CE + RCE more accurate than CE in every seed", reason,
                       is_fragile(a - b, 0.0, [REPRODUCED if h else NOT_REPRODUCED for h in holds]))


def decide_e1(frac_gain_pos: dict, w2sg_digits_per_seed: Sequence[bool]) -> ClaimStatus:
    """E1 (ours): W2SG occurs: the widest synthetic student beats its teacher in a share
    >= E1_MIN_FRACTION of settings for each loss, and the forward-CE digits student beats its
    teacher at T = 1 in every seed."""
    digits = per_seed_flags(w2sg_digits_per_seed, "w2sg_digits_per_seed")
    if not frac_gain_pos:
        raise ValueError("frac_gain_pos needs at least one loss")
    ok_a = all(float(v) >= E1_MIN_FRACTION for v in frac_gain_pos.values())
    ok_b = robust_status(digits) == REPRODUCED
    ok = ok_a and ok_b
    figures = {f"share with gain > 0, {k}": float(v) for k, v in frac_gain_pos.items()}
    figures["digits seeds student > teacher"] = f"{sum(digits)}/{len(digits)}"
    return ClaimStatus("E1", "the student beats its weak teacher", REPRODUCED if ok else NOT_REPRODUCED, figures,
                       f"share >= E1_MIN_FRACTION = {E1_MIN_FRACTION} per loss and every digits seed",
                       "" if ok else "W2SG does not occur in every setting")


def _select(rows, **where):
    return [r for r in rows if all(r[k] == v for k, v in where.items())]


def ledger_statuses(part_a_rows: list[dict], part_b_rows: list[dict]) -> list[ClaimStatus]:
    """All claim statuses (C1..C5, then E1) from the chapter's two parts."""
    a_rows, b_rows = _rows(part_a_rows, "part_a_rows"), _rows(part_b_rows, "part_b_rows")
    losses = sorted({r["loss"] for r in a_rows})
    residuals = [max(r["identity_residual"], r["bv_residual"]) for r in a_rows]
    seeds_a = sorted({r["seed"] for r in a_rows})
    closer, corr, rel_gap, frac = [], {}, {}, {}
    for s in seeds_a:
        ok = True
        for loss in losses:
            widths = sorted({r["width"] for r in _select(a_rows, loss=loss)})
            wide = np.mean([r["to_posterior_mean"] for r in _select(a_rows, loss=loss, seed=s, width=widths[-1])])
            narrow = np.mean([r["to_posterior_mean"] for r in _select(a_rows, loss=loss, seed=s, width=widths[0])])
            ok = ok and bool(wide < narrow)
        closer.append(ok)
    for loss in losses:
        widths = sorted({r["width"] for r in _select(a_rows, loss=loss)})
        wide = _select(a_rows, loss=loss, width=widths[-1])
        gain, misfit = np.array([r["gain"] for r in wide]), np.array([r["misfit"] for r in wide])
        corr[loss] = float(np.corrcoef(gain, misfit)[0, 1])
        rel_gap[loss] = float(np.mean(np.abs(gain - misfit) / misfit))
        frac[loss] = float(np.mean(gain > 0))
    temps = sorted({r["temperature"] for r in b_rows if r["loss"] != "ceiling"})
    seeds_b = sorted({r["seed"] for r in b_rows})

    def grid(loss, key):  # (seeds, temperatures)
        return np.array([[_select(b_rows, seed=s, temperature=t, loss=loss)[0][key] for t in temps] for s in seeds_b])

    ce, rce, sl = grid("ce", "student_acc"), grid("rce", "student_acc"), grid("sl", "student_acc")
    ent_ce, ent_rce = grid("ce", "student_entropy"), grid("rce", "student_entropy")
    teacher = grid("ce", "teacher_acc")
    return [
        decide_c1(residuals),
        decide_c2(closer, corr, rel_gap),
        decide_c3(),
        decide_c4(ent_rce[:, -1] - ent_rce[:, 0], ent_ce[:, -1] - ent_ce[:, 0],
                  float(rce.std(1).mean()), float(ce.std(1).mean())),
        decide_c5(sl.mean(1), ce.mean(1)),
        decide_e1(frac, [bool(x) for x in ce[:, 0] > teacher[:, 0]]),
    ]
