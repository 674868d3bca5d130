"""The claims ledger of the DMAWM chapter (the ledger rules: CONTRIBUTING.md, section 2): one decision function per claim.

Thresholds are named module constants, fixed before the run. Comparisons use the one-sided paired
test over the same real evaluation episodes (same goals and starts for every method; `paired_test_p`,
p < ALPHA), which the robustness rule allows for at least 30 items. Every method is trained under the
same convergence rule (`DMAWMConfig`).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from icml26.common.ledger import (INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED, ClaimStatus,
                                  is_fragile, paired_test_p)

CLAIM_IDS = ("C1", "C2", "C3")

C1_PROBE_CHANCE_MAX = 0.60  # DMAWM follower probe (t = 0) at most this: near chance (0.5)
C1_PROBE_JOINT_MIN = 0.90  # joint-latent follower probe at least this: clearly above chance
ALPHA = 0.05  # one-sided paired test
LEARNED_MIN = 0.75  # a policy "learns" the task: success at least this (a goal-blind team gets at most 0.5)
BASELINES = ("joint", "model_free")


def _prob(x, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not 0.0 <= float(x) <= 1.0:
        raise ValueError(f"{what} must lie in [0, 1], got {x!r}")
    return float(x)


def _items(x: Sequence, what: str) -> list[float]:
    vals = [float(v) for v in x]
    if not vals:
        raise ValueError(f"{what} is empty")
    return vals


def _bools(flags: Mapping[str, object], names: Sequence[str], what: str) -> dict[str, bool]:
    missing = [n for n in names if n not in flags]
    if missing:
        raise ValueError(f"no {what} for {missing}")
    for n in names:
        if not isinstance(flags[n], bool):
            raise TypeError(f"{what}[{n!r}] must be a bool, got {type(flags[n]).__name__}")
    return {n: flags[n] for n in names}


def decide_c1(probe_dmawm: float, probe_joint: float) -> ClaimStatus:
    """C1: DMAWM's follower latent holds no goal information at t = 0, the joint latent does."""
    d, j = _prob(probe_dmawm, "probe_dmawm"), _prob(probe_joint, "probe_joint")
    ok_d, ok_j = d <= C1_PROBE_CHANCE_MAX, j >= C1_PROBE_JOINT_MIN
    rule = f"DMAWM probe <= C1_PROBE_CHANCE_MAX = {C1_PROBE_CHANCE_MAX}, joint >= C1_PROBE_JOINT_MIN = {C1_PROBE_JOINT_MIN}"
    claim = "agent modules keep another agent's private information out of each latent"
    figs = {"probe DMAWM": d, "probe joint": j}
    fragile = is_fragile([d], C1_PROBE_CHANCE_MAX) or is_fragile([j], C1_PROBE_JOINT_MIN)
    if ok_d and ok_j:
        return ClaimStatus("C1", claim, REPRODUCED, figs, rule, "", fragile)
    if ok_d:
        return ClaimStatus("C1", claim, INCONCLUSIVE, figs, rule,
                           "the joint model's latent does not hold the goal either: the probe cannot discriminate", fragile)
    return ClaimStatus("C1", claim, NOT_REPRODUCED, figs, rule, f"DMAWM's follower latent holds the goal (probe {d:.2f})",
                       fragile)


def decide_c2(gap_dmawm: Sequence, gap_joint: Sequence, success: Mapping[str, float]) -> ClaimStatus:
    """C2: imagined rollouts follow decentralized execution more faithfully (smaller |imagined - real|
    return per episode than the joint model, one-sided paired p < ALPHA). It tests only policies that
    act on the goal: INCONCLUSIVE when neither world model's policy learned (success < LEARNED_MIN)."""
    d, j = _items(gap_dmawm, "gap_dmawm"), _items(gap_joint, "gap_joint")
    if len(d) != len(j):
        raise ValueError(f"paired items differ in number: {len(d)} vs {len(j)}")
    s = {m: _prob(success[m], f"success[{m}]") for m in ("dmawm", "joint")}
    p = paired_test_p(j, d)  # the joint model's gap exceeds DMAWM's
    figs = {"mean gap DMAWM": sum(d) / len(d), "mean gap joint": sum(j) / len(j), "p (one-sided, paired)": p,
            "success DMAWM / joint": f"{s['dmawm']:.2f} / {s['joint']:.2f}"}
    rule = f"paired one-sided p < ALPHA = {ALPHA}; some world-model policy learned (success >= {LEARNED_MIN})"
    claim = "imagined rollouts follow decentralized execution better than the joint model's"
    if max(s.values()) < LEARNED_MIN:
        return ClaimStatus("C2", claim, INCONCLUSIVE, figs, rule,
                           "neither world-model policy learned the task, so the gap tests no decentralized behaviour")
    if p < ALPHA:
        return ClaimStatus("C2", claim, REPRODUCED, figs, rule, "", is_fragile([p], ALPHA))
    return ClaimStatus("C2", claim, NOT_REPRODUCED, figs, rule, f"DMAWM's gap is not smaller (p = {p:.3g})",
                       is_fragile([p], ALPHA))


def decide_c3(success_items: Mapping[str, Sequence], converged: Mapping[str, object],
              auc: Mapping[str, float], cap: int) -> ClaimStatus:
    """C3: DMAWM learns faster and better than the model-based (joint) and model-free baselines.

    success_items: per evaluation episode (0/1) for "dmawm", "joint", "model_free" (same episodes);
    auc: mean validation success over the cap's rounds (a stopped run keeps its last value), "faster".
    Better: DMAWM's success exceeds each baseline's (paired p < ALPHA); faster: its auc >= each's.
    Against both -> REPRODUCED; one -> PARTLY; none -> NOT REPRODUCED. INCONCLUSIVE when no method
    learns (success < LEARNED_MIN for all), or when DMAWM stopped at the cap without converging."""
    names = ("dmawm",) + BASELINES
    items = {m: _items(success_items[m], f"success_items[{m}]") for m in names}
    if len({len(v) for v in items.values()}) != 1:
        raise ValueError("every method needs the same evaluation episodes")
    conv = _bools(converged, names, "converged")
    a = {m: float(auc[m]) for m in names}
    mean = {m: sum(v) / len(v) for m, v in items.items()}
    p = {b: paired_test_p(items["dmawm"], items[b]) for b in BASELINES}
    beats = {b: p[b] < ALPHA and a["dmawm"] >= a[b] for b in BASELINES}
    figs = {**{f"success {m}": mean[m] for m in names}, **{f"p vs {b}": p[b] for b in BASELINES},
            **{f"curve mean {m}": a[m] for m in names}}
    rule = (f"vs each baseline: paired one-sided p < ALPHA = {ALPHA} on success and curve mean >= its; "
            f"some method learns (success >= LEARNED_MIN = {LEARNED_MIN})")
    claim = "it learns faster and better than model-based and model-free baselines"
    if max(mean.values()) < LEARNED_MIN:
        return ClaimStatus("C3", claim, INCONCLUSIVE, figs, rule,
                           f"no method learns within the {cap}-round cap; more rounds or a smaller task would settle it")
    if not conv["dmawm"] and not all(beats.values()):
        return ClaimStatus("C3", claim, INCONCLUSIVE, figs, rule,
                           f"DMAWM still improving at the {cap}-round cap; the full preset's cap settles it")
    if all(beats.values()):
        return ClaimStatus("C3", claim, REPRODUCED, figs, rule, "", False)
    if any(beats.values()):
        won = [b for b in BASELINES if beats[b]]
        return ClaimStatus("C3", claim, PARTLY_REPRODUCED, figs, rule, f"holds only against {', '.join(won)}", False)
    return ClaimStatus("C3", claim, NOT_REPRODUCED, figs, rule,
                       "DMAWM neither learns faster nor better than the baselines at this budget", False)


def curve_mean(history: Sequence[Mapping], cap: int) -> float:
    """Mean validation success over `cap` rounds; a run the rule stopped early keeps its last value."""
    vals = [float(h["success"]) for h in history]
    if not vals or cap < len(vals):
        raise ValueError(f"need 1..{cap} rounds of history, got {len(vals)}")
    vals = vals + [vals[-1]] * (cap - len(vals))
    return sum(vals) / cap


def decide_all(results: Mapping[str, list], config) -> list[ClaimStatus]:
    """Every claim from `run_experiment`'s results (first seed of each method)."""
    r = {m: results[m][0] for m in ("dmawm",) + BASELINES}
    f = {m: r[m]["final"] for m in r}
    return [
        decide_c1(f["dmawm"]["probe"], f["joint"]["probe"]),
        decide_c2(f["dmawm"]["gap_items"], f["joint"]["gap_items"],
                  {m: f[m]["success"] for m in ("dmawm", "joint")}),
        decide_c3({m: f[m]["success_items"] for m in r}, {m: r[m]["converged"] for m in r},
                  {m: curve_mean(r[m]["history"], config.rounds) for m in r}, config.rounds),
    ]
