"""The claims ledger of the TAM chapter (CONTRIBUTING.md, section 2; CLAIMS.md revision 2).

One decision function per claim, every threshold a named module constant fixed before the run.
Each seed of `run_experiment` retrains the Inductor and every tower afresh, so the comparisons
(C2, C3) are decided over the seeds (rule 1: at least `MIN_SEEDS` of them); one seed decides
nothing comparative. Every compared tower passes a competence check on the task its budget suits
(rule 2) and must have been stopped by the shared convergence rule, not the cap. Every status
carries the fragile flag of rule 5: across seeds (t interval, per-seed statuses) or, for one seed,
a bootstrap over the test clips.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from icml26.common.ledger import (INCONCLUSIVE, MIN_SEEDS, NOT_REPRODUCED, NOT_TESTED, REPRODUCED, ClaimStatus,
                                  Competence, Ledger, combine_sub_results, competence_reason, gate_competence,
                                  is_fragile, per_seed_flags, per_seed_values, replicated_status, robust_status,
                                  seed_statuses)

CLAIM_IDS = ("C1", "C2", "C3", "C4")
SOURCE_BASIS = "abstract only"
STAND_INS: dict[str, str] = {}

C1_MIN_ACC = 0.95  # Inductor held-out accuracy (held-out query templates), in every seed
C2_MIN_GAIN = 0.0  # TAM's mean accuracy minus the best fixed pipeline at equal or smaller budget, per seed
C3_BAR = 0.60  # a tower "fails" a task below this accuracy and "passes" it at or above
E1_MIN_ACC = 0.85  # ours: TAM's accuracy on each task
E2_MAX_GAP = 0.02  # ours: |oracle-budget mean - Inductor-budget mean|
#: Rule 2: chance accuracy per task (5 counts, 4 quarters) and the margin every compared tower must
#: clear on the task its budget suits (TAM and `fixed`: on the mean over both tasks).
CHANCE = {"counting": 1 / 5, "temporal": 1 / 4, "mean": (1 / 5 + 1 / 4) / 2}
COMPETENCE_MARGIN = 0.15
MATCHED_TASK = {"TAM": "mean", "fixed": "mean", "fixed-H": "counting", "fixed-L": "temporal"}
FIXED_ARMS = ("fixed", "fixed-H", "fixed-L")
FULL_BUDGET = "the full preset (6000-step cap, 5 seeds, about 2.5 GPU hours)"


def _accs(values, what: str, n: int | None = None) -> list[float]:
    vals = per_seed_values(values, what, n=n)
    if any(not 0.0 <= v <= 1.0 for v in vals):
        raise ValueError(f"{what} must be accuracies in [0, 1], got {vals}")
    return vals


def _right(x: Sequence, what: str) -> list[float]:
    vals = list(x)
    if any(isinstance(v, bool) or v not in (0, 1) for v in vals):
        raise ValueError(f"{what} must be per-item correctness, 0 or 1")
    return [float(v) for v in vals]


def _not_converged(converged: Sequence[Mapping[str, object]], names: Sequence[str]) -> list[str]:
    """The towers among `names` that hit the cap (not stopped by the convergence rule) in any seed."""
    out = []
    for k, conv in enumerate(converged):
        missing = [n for n in names if n not in conv]
        if missing:
            raise ValueError(f"seed {k}: no convergence flag for {missing}")
        flags = per_seed_flags([conv[n] for n in names], f"seed {k}'s convergence flags")
        out += [n for n, ok in zip(names, flags) if not ok and n not in out]
    return out


def _fragile(values: Sequence[float], bar: float, statuses: Sequence[str], items: Sequence[Sequence] | None,
             what: str) -> bool:
    """Rule 5: the seed interval (or, for one seed, the bootstrap over its test clips) crosses `bar`,
    or any seed's own bootstrap interval over its test clips does. items: one list per seed."""
    if items is not None and len(items) != len(values):
        raise ValueError(f"{what}: {len(items)} item lists for {len(values)} seeds")
    its = [per_seed_values(x, f"{what} items") for x in items] if items is not None else None
    if is_fragile(values, bar, statuses, items=its[0] if its and len(values) == 1 else None):
        return True
    return bool(its) and any(is_fragile([v], bar, items=x) for v, x in zip(values, its))


def _one_seed_reason(n: int) -> str:
    return (f"{n} trained seed(s): rule 1 needs MIN_SEEDS = {MIN_SEEDS} for a comparison of trained towers; "
            "the evidence preset runs 3")


def competence(arm: str, figures_per_seed: Sequence[float]) -> Competence:
    """Rule 2: the arm's accuracy on the task its budget suits (worst seed) must beat chance by
    COMPETENCE_MARGIN."""
    if arm not in MATCHED_TASK:
        raise ValueError(f"unknown arm {arm!r}; arms: {', '.join(MATCHED_TASK)}")
    task = MATCHED_TASK[arm]
    worst = min(_accs(figures_per_seed, f"{arm}'s {task} accuracy per seed"))
    return Competence(f"{arm} ({task})", worst, CHANCE[task] + COMPETENCE_MARGIN)


def decide_c1(inductor_acc: Sequence[float], items: Sequence | None = None) -> ClaimStatus:
    """C1: a small text-only Inductor infers the task type from the query.

    inductor_acc: held-out accuracy per seed; items: the first seed's per-query correctness (the
    bootstrap of rule 5 when there is one seed). Every seed >= C1_MIN_ACC -> REPRODUCED; none ->
    NOT REPRODUCED; seeds disagree -> INCONCLUSIVE. Not a comparison: one seed may decide it.
    """
    accs = _accs(inductor_acc, "inductor_acc")
    holds = [a >= C1_MIN_ACC for a in accs]
    status = REPRODUCED if all(holds) else NOT_REPRODUCED if not any(holds) else INCONCLUSIVE
    its = _right(items, "items") if len(accs) == 1 and items is not None else None
    reason = {REPRODUCED: "", NOT_REPRODUCED: f"held-out accuracy {min(accs):.3f} is below {C1_MIN_ACC}",
              INCONCLUSIVE: "the seeds disagree about the bar"}[status]
    return ClaimStatus("C1", "a small text-only Inductor infers the task type from the query", status,
                       {"Inductor held-out accuracy per seed": accs},
                       f"held-out accuracy >= C1_MIN_ACC = {C1_MIN_ACC} in every seed", reason,
                       is_fragile(accs, C1_MIN_ACC, seed_statuses(holds), items=its))


def decide_c2(tam_mean: Sequence[float], fixed_mean: Mapping[str, Sequence[float]], tokens: Mapping[str, int],
              converged: Sequence[Mapping[str, object]], checks: Sequence[Competence], cap: int,
              items: Sequence[Sequence[float]] | None = None) -> ClaimStatus:
    """C2: task-aware budgeting and routing beat one fixed pipeline at no larger token budget.

    The comparator of each seed is the *best* fixed pipeline whose token budget is at most TAM's
    (by its mean test accuracy in that seed). The effect per seed is TAM's mean accuracy minus that
    comparator's; `replicated_status` over >= MIN_SEEDS seeds decides (rule 1). items: per seed,
    the per-clip differences TAM - comparator. Rule 5: fragile when the seed interval crosses the
    bar, or when any seed's own bootstrap interval over its test clips does (that seed's sign is
    then within evaluation noise, and another machine's rounding can flip it).
    """
    tam = _accs(tam_mean, "TAM mean accuracy")
    n = len(tam)
    eligible = [a for a in FIXED_ARMS if int(tokens[a]) <= int(tokens["TAM"])]
    if not eligible:
        raise ValueError("no fixed pipeline spends at most TAM's tokens; the test needs one")
    fixed = {a: _accs(fixed_mean[a], f"{a} mean accuracy", n=n) for a in eligible}
    best = [max(eligible, key=lambda a: fixed[a][k]) for k in range(n)]
    effects = [tam[k] - fixed[best[k]][k] for k in range(n)]
    figures = {"TAM mean acc per seed": tam, "best fixed at <= TAM's tokens per seed": best,
               "its mean acc per seed": [fixed[best[k]][k] for k in range(n)], "gain per seed": effects,
               "tokens TAM / " + " / ".join(eligible): " / ".join(str(int(tokens[a])) for a in ["TAM"] + eligible)}
    rule = f"gain > C2_MIN_GAIN = {C2_MIN_GAIN} over >= {MIN_SEEDS} seeds (replicated_status), arms competent and converged"
    claim = "task-aware routing beats the best fixed pipeline at no larger token budget"
    fragile = _fragile(effects, C2_MIN_GAIN, seed_statuses([e > C2_MIN_GAIN for e in effects]), items, "items")
    open_ = _not_converged(converged, ["TAM"] + eligible)
    if open_:
        return ClaimStatus("C2", claim, INCONCLUSIVE, figures, rule,
                           f"{', '.join(open_)} still improving at the {cap}-step cap; {FULL_BUDGET} settles it",
                           fragile, competence=checks)
    if n < MIN_SEEDS:
        return ClaimStatus("C2", claim, INCONCLUSIVE, figures, rule, _one_seed_reason(n), fragile, competence=checks)
    status = gate_competence(replicated_status(effects, C2_MIN_GAIN), checks)
    reason = competence_reason(checks) or {REPRODUCED: "", NOT_REPRODUCED: "TAM is not above the best fixed pipeline in any seed",
                                           INCONCLUSIVE: "the seeds disagree and the seed-level test is not significant"}[status]
    return ClaimStatus("C2", claim, status, figures, rule, reason, fragile, competence=checks)


def decide_c3(fixed_h_temporal: Sequence[float], fixed_l_counting: Sequence[float], tam_temporal: Sequence[float],
              tam_counting: Sequence[float], converged: Sequence[Mapping[str, object]], checks: Sequence[Competence],
              cap: int, items: Mapping[str, Sequence[Sequence]] | None = None) -> ClaimStatus:
    """C3: each fixed tier fails the task that mismatches it, while TAM passes the same bar on both.

    Part "time": fixed-H (4 frames) < C3_BAR on temporal and TAM >= C3_BAR there. Part "space":
    fixed-L (8x8 pixels) < C3_BAR on counting and TAM >= C3_BAR there. Each part is decided over
    >= MIN_SEEDS seeds (`robust_status`); the claim combines the parts (`combine_sub_results`).
    items: per seed, the per-clip correctness behind the four figures (keys "fixed-H temporal",
    "fixed-L counting", "TAM temporal", "TAM counting"). Rule 5: fragile when a figure's seed
    interval crosses C3_BAR, or when any seed's bootstrap interval over its test clips does.
    """
    fh = _accs(fixed_h_temporal, "fixed-H temporal accuracy")
    n = len(fh)
    fl = _accs(fixed_l_counting, "fixed-L counting accuracy", n=n)
    tt = _accs(tam_temporal, "TAM temporal accuracy", n=n)
    tc = _accs(tam_counting, "TAM counting accuracy", n=n)
    time_holds = [fh[k] < C3_BAR <= tt[k] for k in range(n)]
    space_holds = [fl[k] < C3_BAR <= tc[k] for k in range(n)]
    figures = {"fixed-H temporal": fh, "TAM temporal": tt, "fixed-L counting": fl, "TAM counting": tc}
    rule = (f"per part, fixed tier < C3_BAR = {C3_BAR} on its mismatched task and TAM >= {C3_BAR} there, "
            f"in every one of >= {MIN_SEEDS} seeds (robust_status); parts combined")
    claim = "each fixed tier fails its mismatched task while TAM passes both"
    named = {"fixed-H temporal": (fh, time_holds), "TAM temporal": (tt, time_holds),
             "fixed-L counting": (fl, space_holds), "TAM counting": (tc, space_holds)}
    fragile = any(_fragile(vals, C3_BAR, seed_statuses(holds), None if items is None else items[key], key)
                  for key, (vals, holds) in named.items())
    open_ = _not_converged(converged, ["TAM", "fixed-H", "fixed-L"])
    if open_:
        return ClaimStatus("C3", claim, INCONCLUSIVE, figures, rule,
                           f"{', '.join(open_)} still improving at the {cap}-step cap; {FULL_BUDGET} settles it",
                           fragile, competence=checks)
    if n < MIN_SEEDS:
        return ClaimStatus("C3", claim, INCONCLUSIVE, figures, rule, _one_seed_reason(n), fragile, competence=checks)
    parts = {"time (few frames)": robust_status(time_holds), "space (low resolution)": robust_status(space_holds)}
    status = gate_competence(combine_sub_results(parts.values()), checks)
    if competence_reason(checks):
        reason = competence_reason(checks)
    elif status == REPRODUCED:
        reason = ""
    else:
        reason = "; ".join(f"{p}: {s}" for p, s in parts.items())
        if INCONCLUSIVE in parts.values():
            reason += f" (seeds disagree at the {C3_BAR} bar; {FULL_BUDGET} would settle it)"
    return ClaimStatus("C3", claim, status, figures, rule, reason, fragile, competence=checks)


def decide_c4() -> ClaimStatus:
    """C4: state-of-the-art video-benchmark results with a 7B LLM: not testable here."""
    return ClaimStatus("C4", "state-of-the-art video benchmark results with a 7B LLM", NOT_TESTED, {}, "-",
                       "needs the 8B TallVA model, TA-116K and real video benchmarks; no preset runs them")


def decide_e1(tam_counting: Sequence[float], tam_temporal: Sequence[float], tam_converged: Sequence[bool], cap: int,
              items: Sequence | None = None) -> ClaimStatus:
    """E1 (ours): TAM reaches at least E1_MIN_ACC on both tasks in every seed. Failing while TAM
    was still improving at the cap is INCONCLUSIVE (more training could lift it). items: for one
    seed, the per-clip correctness on TAM's weaker task."""
    c = _accs(tam_counting, "TAM counting accuracy")
    t = _accs(tam_temporal, "TAM temporal accuracy", n=len(c))
    conv = per_seed_flags(tam_converged, "TAM's convergence flags")
    lo = [min(a, b) for a, b in zip(c, t)]
    holds = [v >= E1_MIN_ACC for v in lo]
    its = _right(items, "items") if len(lo) == 1 and items is not None else None
    fragile = is_fragile(lo, E1_MIN_ACC, seed_statuses(holds), items=its)
    figures = {"TAM counting": c, "TAM temporal": t}
    rule = f"min over tasks >= E1_MIN_ACC = {E1_MIN_ACC} in every seed"
    claim = "TAM solves both tasks (absolute bar)"
    if all(holds):
        return ClaimStatus("E1", claim, REPRODUCED, figures, rule, "", fragile)
    if not all(conv):
        return ClaimStatus("E1", claim, INCONCLUSIVE, figures, rule,
                           f"TAM still improving at the {cap}-step cap; {FULL_BUDGET} settles it", fragile)
    if any(holds):
        return ClaimStatus("E1", claim, INCONCLUSIVE, figures, rule, "the seeds disagree about the bar", fragile)
    return ClaimStatus("E1", claim, NOT_REPRODUCED, figures, rule,
                       f"TAM converged at {max(lo):.2f} at best on its weaker task", fragile)


def decide_e2(tam_mean: Sequence[float], oracle_mean: Sequence[float], items: Sequence[float] | None = None) -> ClaimStatus:
    """E2 (ours): the Inductor's budget is as good as the ground-truth (oracle) budget in every
    seed. items: for one seed, the per-clip differences oracle - TAM."""
    a = _accs(tam_mean, "TAM mean accuracy")
    o = _accs(oracle_mean, "oracle mean accuracy", n=len(a))
    gaps = [abs(y - x) for x, y in zip(a, o)]
    holds = [g <= E2_MAX_GAP for g in gaps]
    status = REPRODUCED if all(holds) else NOT_REPRODUCED if not any(holds) else INCONCLUSIVE
    if len(gaps) == 1 and items is not None:
        its = per_seed_values(items, "items")
        fragile = is_fragile(gaps, E2_MAX_GAP, items=its) or is_fragile(gaps, -E2_MAX_GAP, items=its)
    else:
        fragile = is_fragile(gaps, E2_MAX_GAP, seed_statuses(holds))
    reason = {REPRODUCED: "", NOT_REPRODUCED: f"the oracle budget is {max(gaps):.3f} apart",
              INCONCLUSIVE: "the seeds disagree about the bar"}[status]
    return ClaimStatus("E2", "the Inductor's budget is as good as the oracle budget", status,
                       {"TAM mean": a, "oracle mean": o, "gap": gaps}, f"|gap| <= E2_MAX_GAP = {E2_MAX_GAP} in every seed",
                       reason, fragile)


def build_ledger(results: Mapping) -> Ledger:
    """Every claim and extension from the plain-data results of `run_experiment`."""
    per = list(results["per_seed"])
    if not per:
        raise ValueError("results hold no seed")
    cap, tokens = int(results["cap"]), results["tokens"]
    acc = lambda name, task: [s["acc"][name][task] for s in per]  # noqa: E731  (one figure per seed)
    conv = [{n: t["converged"] for n, t in s["training"].items()} for s in per]
    checks = {a: competence(a, acc(a, MATCHED_TASK[a])) for a in MATCHED_TASK}
    first = per[0]["acc"]
    both = lambda a, name: list(a[name]["right_counting"]) + list(a[name]["right_temporal"])  # noqa: E731
    eligible = [a for a in FIXED_ARMS if int(tokens[a]) <= int(tokens["TAM"])]
    c2_items = []
    for s in per:
        best = max(eligible, key=lambda a: s["acc"][a]["mean"])
        c2_items.append([x - y for x, y in zip(both(s["acc"], "TAM"), both(s["acc"], best))])
    c3_items = {f"{arm} {task}": [s["acc"][arm][f"right_{task}"] for s in per]
                for arm, task in (("fixed-H", "temporal"), ("TAM", "temporal"), ("fixed-L", "counting"),
                                  ("TAM", "counting"))}
    weak = min(("counting", "temporal"), key=lambda t: first["TAM"][t])
    e2_items = [y - x for x, y in zip(both(first, "TAM"), both(first, "TAM (oracle budget)"))]
    ledger = Ledger("tam", CLAIM_IDS, SOURCE_BASIS, STAND_INS)
    ledger.extend([
        decide_c1([s["inductor_acc"] for s in per], per[0]["inductor_right"]),
        decide_c2(acc("TAM", "mean"), {a: acc(a, "mean") for a in eligible}, tokens, conv,
                  [checks["TAM"]] + [checks[a] for a in eligible], cap, c2_items),
        decide_c3(acc("fixed-H", "temporal"), acc("fixed-L", "counting"), acc("TAM", "temporal"), acc("TAM", "counting"),
                  conv, [checks["TAM"], checks["fixed-H"], checks["fixed-L"]], cap, c3_items),
        decide_c4(),
        decide_e1(acc("TAM", "counting"), acc("TAM", "temporal"), [c["TAM"] for c in conv], cap,
                  first["TAM"][f"right_{weak}"]),
        decide_e2(acc("TAM", "mean"), acc("TAM (oracle budget)", "mean"), e2_items),
    ])
    return ledger
