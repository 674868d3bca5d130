"""The pass criterion, fixed before any result was seen (CHAPTER_STANDARD §8).

Part A (theory, both Bregman losses):
  A1  the three-point and bias-variance identities hold: max |residual| < 1e-6;
  A2  the student approaches the posterior-mean teacher: mean D(f_bar, f_s) at the widest
      student is below that of the narrowest;
  A3  at the widest student the gain follows the misfit: Pearson r(gain, misfit) over
      (seed, noise) settings > 0.8 and mean |gain - misfit| / misfit <= 0.25;
  A4  W2SG occurs at the widest student: gain > 0 in >= 80% of settings.
Part B (digits):
  B1  W2SG: the forward-CE student beats its teacher at T = 1 in >= 4 of 5 seeds
      (>= 80% of seeds);
  B2  reverse CE is less sensitive to teacher uncertainty than forward CE: from the lowest to
      the highest temperature, the RCE student's predictive entropy rises less, and its
      accuracy spread (std over T, mean over seeds) is no larger;
  B3  incorporating RCE helps: the CE + RCE student (``sl``) beats the forward-CE student in
      accuracy averaged over T in >= 80% of seeds.
"""

from __future__ import annotations

import numpy as np

IDENTITY_TOL = 1e-6
MIN_CORRELATION = 0.8
MAX_RELATIVE_GAP = 0.25
MIN_FRACTION = 0.8


def _select(rows: list[dict], **where) -> list[dict]:
    return [r for r in rows if all(r[k] == v for k, v in where.items())]


def part_a_summary(rows: list[dict], loss: str) -> dict[str, float]:
    """Figures of Part A for one loss (rows from ``run_synthetic``)."""
    rows = _select(rows, loss=loss)
    if not rows:
        raise ValueError(f"no Part A rows for loss {loss!r}")
    widths = sorted({r["width"] for r in rows})
    wide, narrow = _select(rows, width=widths[-1]), _select(rows, width=widths[0])
    gain = np.array([r["gain"] for r in wide])
    misfit = np.array([r["misfit"] for r in wide])
    return {
        "identity_residual": max(max(r["identity_residual"], r["bv_residual"]) for r in rows),
        "to_pm_narrow": float(np.mean([r["to_posterior_mean"] for r in narrow])),
        "to_pm_wide": float(np.mean([r["to_posterior_mean"] for r in wide])),
        "corr": float(np.corrcoef(gain, misfit)[0, 1]) if len(gain) > 2 else float("nan"),
        "rel_gap": float(np.mean(np.abs(gain - misfit) / misfit)),
        "frac_gain_pos": float(np.mean(gain > 0)),
    }


def part_b_summary(rows: list[dict]) -> dict[str, float]:
    """Figures of Part B (rows from ``run_digits``); needs the ``ce``, ``rce`` and ``sl`` losses."""
    temps = sorted({r["temperature"] for r in rows if r["loss"] != "ceiling"})
    seeds = sorted({r["seed"] for r in rows})
    if len(temps) < 2 or not {"ce", "rce", "sl"} <= {r["loss"] for r in rows}:
        raise ValueError("Part B needs >= 2 temperatures and the losses 'ce', 'rce' and 'sl'")

    def grid(loss, key):  # (seeds, temperatures)
        return np.array([[_select(rows, seed=s, temperature=t, loss=loss)[0][key] for t in temps] for s in seeds])

    ce, rce, sl = grid("ce", "student_acc"), grid("rce", "student_acc"), grid("sl", "student_acc")
    teacher = grid("ce", "teacher_acc")
    ent_ce, ent_rce = grid("ce", "student_entropy"), grid("rce", "student_entropy")
    return {
        "teacher_acc": float(teacher[:, 0].mean()),
        "ce_acc": float(ce[:, 0].mean()),
        "frac_w2sg": float(np.mean(ce[:, 0] > teacher[:, 0])),
        "ent_rise_ce": float((ent_ce[:, -1] - ent_ce[:, 0]).mean()),
        "ent_rise_rce": float((ent_rce[:, -1] - ent_rce[:, 0]).mean()),
        "spread_ce": float(ce.std(1).mean()),
        "spread_rce": float(rce.std(1).mean()),
        "sl_minus_ce": float((sl.mean(1) - ce.mean(1)).mean()),
        "frac_sl_better": float(np.mean(sl.mean(1) > ce.mean(1))),
    }


def reproduction_checks(part_a_rows: list[dict], part_b_rows: list[dict]) -> dict[str, bool]:
    """Evaluate the fixed criterion (see the module docstring); one bool per named part."""
    checks = {}
    for loss in ("squared", "kl"):
        a = part_a_summary(part_a_rows, loss)
        checks[f"A1 identity ({loss})"] = bool(a["identity_residual"] < IDENTITY_TOL)
        checks[f"A2 -> posterior mean ({loss})"] = bool(a["to_pm_wide"] < a["to_pm_narrow"])
        checks[f"A3 gain ~ misfit ({loss})"] = bool(a["corr"] > MIN_CORRELATION and a["rel_gap"] <= MAX_RELATIVE_GAP)
        checks[f"A4 W2SG ({loss})"] = bool(a["frac_gain_pos"] >= MIN_FRACTION)
    b = part_b_summary(part_b_rows)
    checks["B1 W2SG digits"] = bool(b["frac_w2sg"] >= MIN_FRACTION)
    checks["B2 RCE insensitive"] = bool(b["ent_rise_rce"] < b["ent_rise_ce"] and b["spread_rce"] <= b["spread_ce"])
    checks["B3 CE+RCE beats CE"] = bool(b["frac_sl_better"] >= MIN_FRACTION)
    return checks
