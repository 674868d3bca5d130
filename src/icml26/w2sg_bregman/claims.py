"""The claims ledger of the w2sg_bregman chapter (CONTRIBUTING.md, section 2): one decision function
per claim, wired to :func:`icml26.w2sg_bregman.run_experiment`'s results by :func:`build_ledger`.

Every threshold and competence bar is a named module constant, fixed before the runs the chapter
stores. Part A rows come from ``run_synthetic`` (both Bregman losses), Part B rows from
``run_digits``.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from icml26.common.ledger import (
    INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTED, PARTLY_REPRODUCED, REPRODUCED, ClaimStatus, Competence, Ledger,
    combine_sub_results, competence_reason, is_fragile, per_seed_flags, per_seed_values, replicated_status,
    robust_status, seed_statuses,
)

SLUG = "w2sg_bregman"
CLAIM_IDS = ("C1", "C2", "C3", "C4", "C5")
SOURCE_BASIS = "official code"
#: No claim is decided with a hand-written stand-in (rule 4).
STAND_INS: dict[str, str] = {}

#: C1: the risk-gap identity and the bias-variance split hold to this absolute tolerance.
C1_IDENTITY_TOL = 1e-6
#: C2: at the widest student, Pearson r(gain, misfit) over (seed, noise) settings above this ...
C2_MIN_CORRELATION = 0.8
#: ... and, in every seed, the mean |gain - misfit| / misfit at most this (both losses).
C2_MAX_RELATIVE_GAP = 0.25
#: E1 (ours): W2SG occurs at the widest synthetic student in at least this share of settings.
E1_MIN_FRACTION = 0.8
#: C4, C5 (rule 2): the students a claim compares, with the losses that add reverse CE.
REVERSE_CE_ARMS = ("rce", "sl", "cace")
ARM_NAMES = {"ce": "CE", "rce": "RCE alone", "sl": "CE + RCE", "cace": "CACE", "aux": "AUX"}
#: Rule 2's competence bar for a digits student, fixed before the run: it learns when its test
#: accuracy (mean over seeds) reaches its weak teacher's accuracy at every temperature. A student
#: that stays below the teacher it was trained on has not learned the teacher's labels.
COMPETENCE_BAR = "the weak teacher's accuracy (mean over seeds), at the student's worst temperature"


def _rows(rows, what: str) -> list[dict]:
    if not isinstance(rows, (list, tuple)) or not rows or not all(isinstance(r, dict) for r in rows):
        raise ValueError(f"{what} must be a non-empty list of result rows")
    return list(rows)


def decide_c1(residuals: Sequence[float]) -> ClaimStatus:
    """C1: the student-teacher risk gap equals the expected misfit plus a cross term that the
    posterior mean removes (Bregman three-point identity) and the teacher's risk splits into
    bias + variance: the largest |residual| over every student and loss < C1_IDENTITY_TOL.

    The identities hold for any student, so the check holds by construction (only a bug could
    break it, rule 3); it decides the claim because the paper's claim is that identity."""
    r = np.abs(np.asarray(per_seed_values(residuals, "identity residuals"), dtype=float))
    worst = float(r.max())
    ok = worst < C1_IDENTITY_TOL
    fragile = is_fragile([worst], C1_IDENTITY_TOL, items=r.tolist()) if r.size >= 2 else False
    return ClaimStatus("C1", "risk gap equals the expected misfit (Bregman decomposition)",
                       REPRODUCED if ok else NOT_REPRODUCED, {"largest residual": worst, "students": int(r.size)},
                       f"max |residual| < C1_IDENTITY_TOL = {C1_IDENTITY_TOL:g}",
                       "" if ok else "an identity residual exceeds the numerical tolerance (a bug: the identity is exact)",
                       fragile, by_construction=True, property_claim=True)


def decide_c2(closer_per_seed: Sequence[bool], corr: Mapping[str, float],
              rel_gap_per_seed: Mapping[str, Sequence[float]]) -> ClaimStatus:
    """C2, three sub-results (``combine_sub_results``): (a) wider students get closer to the
    posterior-mean teacher: D(f_bar, f_s) at the widest width below the narrowest's, per seed
    (both losses; ``robust_status`` over seeds); (b) at the widest width the mean relative gap
    |gain - misfit| / misfit <= C2_MAX_RELATIVE_GAP per seed, for each loss (``robust_status``);
    (c) Pearson r(gain, misfit) over the (seed, noise) settings > C2_MIN_CORRELATION for each loss.
    All hold: REPRODUCED; some: PARTLY; none: NOT REPRODUCED."""
    closer = per_seed_flags(closer_per_seed, "closer_per_seed")
    if not corr or set(corr) != set(rel_gap_per_seed):
        raise ValueError("corr and rel_gap_per_seed need the same, non-empty set of losses")
    gaps = {k: per_seed_values(v, f"relative gap per seed ({k})", n=len(closer)) for k, v in rel_gap_per_seed.items()}
    worst_gap = [max(gaps[k][s] for k in gaps) for s in range(len(closer))]
    tracks = [g <= C2_MAX_RELATIVE_GAP for g in worst_gap]
    r_ok = all(float(corr[k]) > C2_MIN_CORRELATION for k in corr)
    subs = {"closer": robust_status(closer), "gap": robust_status(tracks),
            "correlation": REPRODUCED if r_ok else NOT_REPRODUCED}
    status = combine_sub_results(subs.values())
    failed = [k for k, v in subs.items() if v != REPRODUCED]
    words = {"closer": "wider students approach the posterior mean", "gap": "gain within the relative-gap bar",
             "correlation": "gain correlates with misfit"}
    reason = "" if status == REPRODUCED else "fails or undecided: " + "; ".join(
        f"{words[k]} ({subs[k]})" for k in failed)
    figures = {"seeds closer at the widest width": f"{sum(closer)}/{len(closer)}",
               "seeds within the gap bar": f"{sum(tracks)}/{len(tracks)}"}
    figures.update({f"r(gain, misfit), {k}": float(v) for k, v in corr.items()})
    figures.update({f"relative gap, {k} (mean over seeds)": float(np.mean(v)) for k, v in gaps.items()})
    fragile = (is_fragile(worst_gap, C2_MAX_RELATIVE_GAP, seed_statuses(tracks))
               or len(set(seed_statuses(closer))) > 1)
    return ClaimStatus("C2", "gain tracks misfit; wider students approach the posterior-mean teacher", status,
                       figures, f"closer in every seed; relative gap <= C2_MAX_RELATIVE_GAP = {C2_MAX_RELATIVE_GAP} "
                       f"in every seed and r > C2_MIN_CORRELATION = {C2_MIN_CORRELATION}, for each loss",
                       reason, fragile)


def decide_c3() -> ClaimStatus:
    """C3: lower student entropy promotes W2SG under cross-entropy. Not tested: our runs never vary
    the student's entropy with the teacher held fixed."""
    return ClaimStatus("C3", "lower student entropy promotes W2SG under cross-entropy", NOT_TESTED, {}, "",
                       "needs a sweep of the student's entropy at a fixed teacher (e.g. an entropy penalty); "
                       "the full preset does not run it either")


def student_competence(loss: str, acc: np.ndarray, teacher_acc: np.ndarray) -> Competence:
    """Rule 2 for one digits student: acc (seeds, temperatures) and teacher_acc (seeds,). Its figure
    is its worst temperature's accuracy (mean over seeds); its bar the teacher's mean accuracy."""
    acc, teacher_acc = np.asarray(acc, dtype=float), np.asarray(teacher_acc, dtype=float)
    if acc.ndim != 2 or teacher_acc.shape != acc.shape[:1]:
        raise ValueError(f"acc must be (seeds, temperatures) and teacher_acc (seeds,), got {acc.shape}, {teacher_acc.shape}")
    return Competence(ARM_NAMES.get(loss, loss), float(acc.mean(0).min()), float(teacher_acc.mean()))


def decide_c4(entropy_rise: Mapping[str, Sequence[float]], acc_spread: Mapping[str, Sequence[float]],
              competence: Mapping[str, Competence]) -> ClaimStatus:
    """C4: reverse CE (alone or in the mixtures CE + RCE and CACE) is less sensitive to the teacher's
    uncertainty than forward CE, judged on the students that learn (rule 2).

    Per loss and seed: ``entropy_rise`` (predictive entropy at the highest temperature minus the
    lowest) and ``acc_spread`` (std of accuracy over temperatures). For every competent reverse-CE
    arm, two sub-results decided over seeds with ``replicated_status`` on CE's figure minus the
    arm's (> 0: less sensitive): entropy and accuracy. The claim combines them
    (``combine_sub_results``). An arm that fails its competence check is left out and named; when
    forward CE or every reverse-CE arm fails, the claim is INCONCLUSIVE."""
    arms = [a for a in REVERSE_CE_ARMS if a in entropy_rise]
    if "ce" not in entropy_rise or not arms or set(entropy_rise) != set(acc_spread) or \
            not set(entropy_rise) <= set(competence):
        raise ValueError("entropy_rise, acc_spread and competence need 'ce', at least one reverse-CE arm "
                         f"({', '.join(REVERSE_CE_ARMS)}) and the same losses")
    n = len(per_seed_values(entropy_rise["ce"], "entropy rise (ce)", min_count=1))
    rise = {k: per_seed_values(v, f"entropy rise ({k})", n=n) for k, v in entropy_rise.items()}
    spread = {k: per_seed_values(v, f"accuracy spread ({k})", n=n) for k, v in acc_spread.items()}
    competent = [a for a in arms if competence[a].passed]
    excluded = [a for a in arms if not competence[a].passed]
    figures: dict[str, object] = {"entropy rise CE (mean)": float(np.mean(rise["ce"])),
                                  "accuracy spread CE (mean)": float(np.mean(spread["ce"]))}
    threshold = ("per competent reverse-CE arm: CE's entropy rise minus the arm's > 0 and CE's accuracy "
                 "spread minus the arm's > 0 over seeds (replicated_status); competence: " + COMPETENCE_BAR)
    claim = "reverse CE is less sensitive to teacher uncertainty than forward CE"
    if excluded:
        figures["left out (did not learn)"] = ", ".join(f"{ARM_NAMES[a]} {competence[a].figure:.3g}" for a in excluded)
    if not competence["ce"].passed or not competent:
        checks = [competence["ce"]] + [competence[a] for a in arms]
        return ClaimStatus("C4", claim, INCONCLUSIVE, figures, threshold,
                           competence_reason(checks) + (" (no reverse-CE student learned)" if not competent else ""),
                           False, competence=checks)
    subs, fragile, parts = [], False, []
    for a in competent:
        for what, figure in (("entropy", rise), ("accuracy", spread)):
            effects = [c - x for c, x in zip(figure["ce"], figure[a])]
            status = replicated_status(effects, 0.0)
            subs.append(status)
            fragile = fragile or is_fragile(effects, 0.0, seed_statuses([e > 0 for e in effects]))
            parts.append(f"{ARM_NAMES[a]} {what}: {status}")
            figures[f"{what} {'rise' if what == 'entropy' else 'spread'} {ARM_NAMES[a]} (mean)"] = \
                float(np.mean(figure[a]))
            figures[f"seeds with a smaller {what} change, {ARM_NAMES[a]}"] = f"{sum(e > 0 for e in effects)}/{n}"
    status = combine_sub_results(subs)
    reason = "" if status == REPRODUCED else "; ".join(parts)
    if excluded:
        reason += ("; " if reason else "") + "left out by rule 2: " + ", ".join(ARM_NAMES[a] for a in excluded)
    return ClaimStatus("C4", claim, status, figures, threshold, reason, fragile,
                       competence=[competence["ce"]] + [competence[a] for a in competent])


def decide_c5(acc_sl: Sequence[Sequence[float]], acc_ce: Sequence[Sequence[float]], temperatures: Sequence[float],
              competence: Sequence[Competence]) -> ClaimStatus:
    """C5: adding reverse CE to CE (the symmetric loss CE + RCE) gives a more accurate student than
    CE alone, consistently: at each teacher temperature, decided over seeds with
    ``replicated_status`` on the accuracy margin (> 0); the temperatures combined with
    ``combine_sub_results`` (every temperature: REPRODUCED; some: PARTLY). ``acc_*`` are
    (seeds, temperatures); both arms pass their competence check (rule 2) or the claim is
    INCONCLUSIVE."""
    a, b = np.asarray(acc_sl, dtype=float), np.asarray(acc_ce, dtype=float)
    temps = per_seed_values(temperatures, "temperatures", min_count=1)
    if a.shape != b.shape or a.ndim != 2 or a.shape[1] != len(temps) or not np.all(np.isfinite(np.r_[a.ravel(), b.ravel()])):
        raise ValueError("acc_sl and acc_ce must be finite (seeds, temperatures) arrays of the same shape")
    checks = list(competence)
    figures: dict[str, object] = {}
    subs, fragile, parts = [], False, []
    # region: per temperature
    for j, t in enumerate(temps):
        margin = (a[:, j] - b[:, j]).tolist()  # one accuracy margin per seed
        # every seed, or 2 of 3 and p < ALPHA
        status = replicated_status(margin, 0.0)
        subs.append(status)
        fragile = fragile or is_fragile(
            margin, 0.0, seed_statuses([m > 0 for m in margin]))
        figures[f"T={t:g}: CE + RCE vs CE"] = (
            f"{a[:, j].mean():.3f} vs {b[:, j].mean():.3f}")
        figures[f"T={t:g}: seeds improved"] = (
            f"{sum(m > 0 for m in margin)}/{len(margin)}")
        if status != REPRODUCED:
            parts.append(f"T={t:g}: {status}")
    # every temperature: REPRODUCED; some: PARTLY
    status = combine_sub_results(subs)
    # endregion
    reason = "" if status == REPRODUCED else "not at every temperature: " + "; ".join(parts)
    failed = competence_reason(checks)
    if failed:
        status, reason = INCONCLUSIVE, failed
    return ClaimStatus("C5", "adding reverse CE consistently improves the student", status, figures,
                       "CE + RCE more accurate than CE at each temperature over seeds (replicated_status); "
                       "competence: " + COMPETENCE_BAR, reason, fragile, competence=checks)


def decide_e1(frac_gain_pos: Mapping[str, float], student_minus_teacher: Sequence[float]) -> ClaimStatus:
    """E1 (ours): W2SG occurs: the widest synthetic student beats its teacher in a share
    >= E1_MIN_FRACTION of settings for each loss, and the forward-CE digits student beats its
    teacher at the lowest temperature in every seed (``student_minus_teacher`` per seed)."""
    margins = per_seed_values(student_minus_teacher, "student_minus_teacher")
    digits = [m > 0 for m in margins]
    if not frac_gain_pos:
        raise ValueError("frac_gain_pos needs at least one loss")
    ok_a = all(float(v) >= E1_MIN_FRACTION for v in frac_gain_pos.values())
    ok_b = robust_status(digits) == REPRODUCED
    ok = ok_a and ok_b
    figures = {f"share with gain > 0, {k}": float(v) for k, v in frac_gain_pos.items()}
    figures["digits seeds student > teacher"] = f"{sum(digits)}/{len(digits)}"
    return ClaimStatus("E1", "the student beats its weak teacher", REPRODUCED if ok else NOT_REPRODUCED, figures,
                       f"share >= E1_MIN_FRACTION = {E1_MIN_FRACTION} per loss and every digits seed",
                       "" if ok else "W2SG does not occur in every setting",
                       is_fragile(margins, 0.0, seed_statuses(digits)))


def _select(rows, **where):
    return [r for r in rows if all(r[k] == v for k, v in where.items())]


def digits_grid(rows: list[dict], loss: str, key: str) -> tuple[np.ndarray, list[float]]:
    """A Part B figure as (seeds, temperatures), with the temperatures."""
    temps = sorted({r["temperature"] for r in rows if r["loss"] != "ceiling"})
    seeds = sorted({r["seed"] for r in rows})
    return np.array([[_select(rows, seed=s, temperature=t, loss=loss)[0][key] for t in temps] for s in seeds]), temps


def _statuses(part_a_rows: list[dict], part_b_rows: list[dict]) -> list[ClaimStatus]:
    """All claim statuses (C1..C5, then E1) from the chapter's two parts."""
    a_rows, b_rows = _rows(part_a_rows, "part_a_rows"), _rows(part_b_rows, "part_b_rows")
    losses = sorted({r["loss"] for r in a_rows})
    residuals = [max(r["identity_residual"], r["bv_residual"]) for r in a_rows]
    seeds_a = sorted({r["seed"] for r in a_rows})
    closer, corr, gaps, frac = [], {}, {}, {}
    for loss in losses:
        widths = sorted({r["width"] for r in _select(a_rows, loss=loss)})
        wide = _select(a_rows, loss=loss, width=widths[-1])
        gain, misfit = np.array([r["gain"] for r in wide]), np.array([r["misfit"] for r in wide])
        corr[loss] = float(np.corrcoef(gain, misfit)[0, 1])
        frac[loss] = float(np.mean(gain > 0))
        gaps[loss] = [float(np.mean([abs(r["gain"] - r["misfit"]) / r["misfit"] for r in wide if r["seed"] == s]))
                      for s in seeds_a]
    for s in seeds_a:
        ok = True
        for loss in losses:
            widths = sorted({r["width"] for r in _select(a_rows, loss=loss)})
            wide = np.mean([r["to_posterior_mean"] for r in _select(a_rows, loss=loss, seed=s, width=widths[-1])])
            narrow = np.mean([r["to_posterior_mean"] for r in _select(a_rows, loss=loss, seed=s, width=widths[0])])
            ok = ok and bool(wide < narrow)
        closer.append(ok)
    b_losses = [k for k in ("ce",) + REVERSE_CE_ARMS if any(r["loss"] == k for r in b_rows)]
    acc = {k: digits_grid(b_rows, k, "student_acc")[0] for k in b_losses}
    ent = {k: digits_grid(b_rows, k, "student_entropy")[0] for k in b_losses}
    teacher, temps = digits_grid(b_rows, "ce", "teacher_acc")
    teacher = teacher[:, 0]
    competence = {k: student_competence(k, acc[k], teacher) for k in b_losses}
    return [
        decide_c1(residuals),
        decide_c2(closer, corr, gaps),
        decide_c3(),
        decide_c4({k: (ent[k][:, -1] - ent[k][:, 0]).tolist() for k in b_losses},
                  {k: acc[k].std(1).tolist() for k in b_losses}, competence),
        decide_c5(acc["sl"], acc["ce"], temps, [competence["sl"], competence["ce"]]),
        decide_e1(frac, (acc["ce"][:, 0] - teacher).tolist()),
    ]


def build_ledger(results: Mapping) -> Ledger:
    """The chapter's ledger from :func:`icml26.w2sg_bregman.run_experiment`'s results (a pure
    function of the dict: the evidence check recomputes it from a stored record)."""
    if not isinstance(results, Mapping) or "part_a" not in results or "part_b" not in results:
        raise ValueError("results must be run_experiment's dict, with 'part_a' and 'part_b' rows")
    return Ledger(SLUG, CLAIM_IDS, SOURCE_BASIS, STAND_INS).extend(_statuses(results["part_a"], results["part_b"]))
