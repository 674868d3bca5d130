"""Summary figures of both parts, for the chapter's tables; the claims are decided in ``claims``."""

from __future__ import annotations

import numpy as np



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
