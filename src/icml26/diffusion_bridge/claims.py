"""The claims ledger of the diffusion_bridge chapter (CLAIMS.md, revision 2; CONTRIBUTING.md, section 2).

Each decision function maps figures measured over the independently trained seeds (at least
`MIN_SEEDS`: every seed trains every arm afresh, rule 1) to a status; every threshold and
competence bar is a named module constant fixed before the runs. Extensions E1-E3 are checks of
ours, never counted in the verdict.

Competence (rule 2): the bridge trained on all pairs, C1's yardstick and C2's target, must keep
content well above chance (`MIN_PAIRED_ACC`); the bridges C2 compares must beat chance by
`C1_MIN_ACC_OVER_CHANCE`; and the unpaired SDB bridge that decides C1 must have finished training:
its loss drops by at most `MAX_LOSS_DROP` from the fourth to the last fifth of training. Where
that criterion fails, C1 is INCONCLUSIVE and the reason names the `full` budget.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from icml26.common.ledger import (
    ALPHA, INCONCLUSIVE, MIN_SEEDS, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED, ClaimStatus, Competence, Ledger,
    ThresholdChange, combine_sub_results, competence_reason, gate_competence, is_fragile, per_seed_values,
    replicated_status, robust_status, seed_statuses,
)

CLAIM_IDS = ("C1", "C2")
SOURCE_BASIS = "full-text summary"
STAND_INS: dict[str, str] = {}

#: Chance level of the class-preservation probe (10 digit classes, about equally frequent).
CHANCE = 0.10
#: C1: content is kept when the translations' class accuracy exceeds chance by at least this.
C1_MIN_ACC_OVER_CHANCE = 0.05
#: C1: translations land on the target distribution when MMD(SDB, rho = 0) <= this x MMD(paired, rho = 1).
C1_MAX_MMD_RATIO = 1.5
#: C2: the small pairing fraction at which the claim is tested.
C2_RHO = 0.05
#: C2: "close to fully paired": acc(SDB, C2_RHO) >= acc(paired-only, rho = 1) - this (a non-inferiority margin).
C2_MAX_GAP_TO_FULL = 0.05
#: C2: "above pairs-only": acc(SDB, C2_RHO) - acc(paired-only, C2_RHO) > this.
C2_MIN_GAIN = 0.0
#: Competence: the fully paired bridge keeps content at least this often.
MIN_PAIRED_ACC = 0.5
#: Competence of the unpaired SDB bridge (its training criterion): relative loss drop over the last fifth.
MAX_LOSS_DROP = 0.05
#: E2 (ours): at rho = 1, acc(SDB) >= acc(paired-only) - this.
E2_MAX_DROP_FULL = 0.01
#: E3 (ours): PSNR(SDB) - PSNR(paired-only) at C2_RHO >= this (dB).
E3_MIN_PSNR_GAIN = 0.5
#: Rule 7: C2's parts were first decided by a t-test over (seed, test digit) items pooled across the
#: seeds; the reduced run showed that test passing with one seed's gain negative, which measures
#: evaluation noise, not training variance. They are now decided by rule 1 with the seed as the unit.
C2_CHANGES = (ThresholdChange(
    "C2's test", "t-test over (seed, digit) items pooled across seeds, direction in 2 of 3 seeds",
    "replicated_status over the per-seed mean gains (every seed, or seed-as-unit p < ALPHA in 2 of 3)",
    "changed after the reduced run, where the pooled test passed with a negative seed"),)
#: What would settle a claim the CPU budget leaves open.
FULL_BUDGET = "the full preset (20k steps, hidden 512, 5 seeds; about 1-1.5 GPU hours)"


def _few(n: int) -> str:
    return f"{n} seed(s) here; rule 1 needs {MIN_SEEDS} independently trained seeds"


def decide_c1(acc_unpaired: Sequence[float], mmd_unpaired: Sequence[float], mmd_paired_full: Sequence[float],
              acc_paired_full: Sequence[float], loss_drop_unpaired: Sequence[float]) -> ClaimStatus:
    """C1: with no pairs (rho = 0), per seed, the translations land on the target distribution
    (MMD <= C1_MAX_MMD_RATIO x the fully paired bridge's) and keep content (class accuracy >=
    CHANCE + C1_MIN_ACC_OVER_CHANCE). Each part by `robust_status` over seeds; both -> REPRODUCED,
    one -> PARTLY, neither -> NOT; seeds disagreeing -> INCONCLUSIVE. Competence: the fully paired
    bridge keeps content (>= MIN_PAIRED_ACC) and the unpaired bridge finished training (loss drop
    <= MAX_LOSS_DROP in every seed)."""
    acc = per_seed_values(acc_unpaired, "acc_unpaired")
    n = len(acc)
    mmd = per_seed_values(mmd_unpaired, "mmd_unpaired", n)
    ref = per_seed_values(mmd_paired_full, "mmd_paired_full", n)
    full = per_seed_values(acc_paired_full, "acc_paired_full", n)
    drop = per_seed_values(loss_drop_unpaired, "loss_drop_unpaired", n)
    if any(r <= 0 for r in ref):
        raise ValueError("mmd_paired_full must be positive")
    ratio = [m / r for m, r in zip(mmd, ref)]
    checks = [Competence("paired-only at rho = 1 (keeps content)", min(full), MIN_PAIRED_ACC),
              Competence("SDB at rho = 0 (loss drop over the last fifth)", max(drop), MAX_LOSS_DROP,
                         higher_is_better=False)]
    figures = {"class accuracy at rho = 0, per seed": acc, "MMD ratio to paired at rho = 1": ratio,
               "loss drop over the last fifth, per seed": drop}
    threshold = (f"every seed: MMD ratio <= C1_MAX_MMD_RATIO = {C1_MAX_MMD_RATIO}; accuracy >= CHANCE + "
                 f"C1_MIN_ACC_OVER_CHANCE = {CHANCE} + {C1_MIN_ACC_OVER_CHANCE}")
    claim = "with no pairs the translations land on the target distribution and keep content"
    if n < MIN_SEEDS:
        return ClaimStatus("C1", claim, INCONCLUSIVE, figures, threshold, _few(n), True, checks)
    # region: decide
    # per seed: on the target distribution
    on_target = [q <= C1_MAX_MMD_RATIO for q in ratio]
    # per seed: content kept
    content = [x >= CHANCE + C1_MIN_ACC_OVER_CHANCE for x in acc]
    parts = {"landing on the target distribution": robust_status(on_target),
             "keeping content": robust_status(content)}
    # both -> REPRODUCED, one -> PARTLY, none -> NOT
    status = combine_sub_results(parts.values())
    if INCONCLUSIVE in parts.values():
        status = INCONCLUSIVE  # a part whose seeds disagree leaves the claim open
    fragile = (
        is_fragile(acc, CHANCE + C1_MIN_ACC_OVER_CHANCE, seed_statuses(content))
        or is_fragile(ratio, C1_MAX_MMD_RATIO, seed_statuses(on_target))
    )
    # rule 2: an arm that fails its check -> INCONCLUSIVE
    gated = gate_competence(status, checks)
    # endregion
    if competence_reason(checks):
        reason = f"{competence_reason(checks)}; {FULL_BUDGET} would settle it"
    else:
        reason = "" if status == REPRODUCED else "; ".join(
            f"{p}: {'holds in every seed' if s == REPRODUCED else 'holds in no seed' if s == NOT_REPRODUCED else 'seeds disagree'}"
            for p, s in parts.items())
    return ClaimStatus("C1", claim, gated, figures, threshold, reason, fragile, checks)


def blocked_paired_p(differences: Sequence[Sequence[float]]) -> float:
    """One-sided p that the mean paired difference is above 0, blocked by seed: the differences are
    formed within each seed (the same test digit, the same seed's bridges), pooled over the seeds and
    tested with a one-sample t-test (a paired t-test; thousands of 0/1 differences, so the t
    distribution applies). All differences equal: p = 0 when they are positive, else 1."""
    from scipy.stats import ttest_1samp

    pooled = [d for seed in differences for d in per_seed_values(seed, "per-digit differences", min_count=2)]
    if max(pooled) == min(pooled):
        return 0.0 if pooled[0] > 0 else 1.0
    return float(ttest_1samp(pooled, 0.0, alternative="greater").pvalue)


def _blocked_part(method: Sequence[Sequence[float]], baseline: Sequence[Sequence[float]], shift: float,
                  what: str) -> tuple[str, float, list[float]]:
    """One part of C2, over seeds: per seed the mean difference (method + shift) - baseline over the
    test digits, decided by rule 1 with the seed as the unit (`replicated_status`: positive in every
    seed, or the seed-as-unit t-test p < ALPHA with 2 of 3 seeds positive; in none: NOT REPRODUCED;
    else INCONCLUSIVE). The test over items blocked by seed (`blocked_paired_p`) is reported beside
    it; it measures how sure each seed's evaluation is, not whether training repeats (C2_CHANGES)."""
    if len(method) != len(baseline):
        raise ValueError(f"{what}: {len(method)} seeds against {len(baseline)}")
    per_seed = []
    for a, b in zip(method, baseline):
        a = per_seed_values(a, f"{what}: per-digit items", min_count=2)
        b = per_seed_values(b, f"{what}: per-digit items", n=len(a))
        per_seed.append([x + shift - y for x, y in zip(a, b)])
    diffs = [sum(d) / len(d) for d in per_seed]
    return replicated_status(diffs, 0.0), blocked_paired_p(per_seed), diffs


def decide_c2(correct_sdb_low: Sequence[Sequence[float]], correct_paired_low: Sequence[Sequence[float]],
              correct_paired_full: Sequence[Sequence[float]]) -> ClaimStatus:
    """C2: at rho = C2_RHO, SDB (a) beats the bridge trained on the same pairs alone and (b) comes
    near the fully paired bridge. Inputs: per seed, per test digit, 1 if the probe recognises the
    translation's digit. (a): SDB > pairs-only; (b): non-inferiority, SDB + C2_MAX_GAP_TO_FULL >
    paired(rho = 1); each over the seeds by rule 1 (`_blocked_part`, C2_CHANGES). Both ->
    REPRODUCED; one -> PARTLY; neither -> NOT; an undecided part with no decided one -> INCONCLUSIVE
    (`combine_sub_results`). Every compared bridge must beat chance (rule 2)."""
    n = len(correct_sdb_low)
    accs = {name: [sum(per_seed_values(s, name)) / len(s) for s in items]
            for name, items in (("SDB", correct_sdb_low), ("pairs-only", correct_paired_low),
                                ("paired rho = 1", correct_paired_full))}
    checks = [Competence(f"{name} at rho = {C2_RHO if name != 'paired rho = 1' else 1}", min(v), CHANCE + C1_MIN_ACC_OVER_CHANCE)
              for name, v in accs.items()]
    figures = {f"acc SDB at rho = {C2_RHO}": accs["SDB"], f"acc paired-only at rho = {C2_RHO}": accs["pairs-only"],
               "acc paired-only at rho = 1": accs["paired rho = 1"]}
    threshold = (f"(a) SDB > pairs-only and (b) SDB + C2_MAX_GAP_TO_FULL = {C2_MAX_GAP_TO_FULL} > paired(1): "
                 f"per-seed mean gains over the test digits, by rule 1 over seeds (every seed, or seed-as-unit "
                 f"p < ALPHA = {ALPHA} in 2 of 3)")
    claim = "with few pairs SDB beats pairs-only and nears fully paired quality"
    if n < MIN_SEEDS:
        return ClaimStatus("C2", claim, INCONCLUSIVE, figures, threshold, _few(n), True, checks)
    sa, pa, da = _blocked_part(correct_sdb_low, correct_paired_low, C2_MIN_GAIN, "beats pairs-only")
    sb, pb, db = _blocked_part(correct_sdb_low, correct_paired_full, C2_MAX_GAP_TO_FULL, "near fully paired")
    figures.update({"(a) gain over pairs-only per seed": da, "(a) p over items, blocked by seed": pa,
                    "(b) margin - gap to fully paired per seed": db, "(b) p over items, blocked by seed": pb})
    status = gate_competence(combine_sub_results([sa, sb]), checks)
    words = {REPRODUCED: "holds", NOT_REPRODUCED: "fails in every seed", INCONCLUSIVE: "undecided"}
    reason = (f"beats pairs-only: {words[sa]}; near fully paired: {words[sb]} (over seeds, rule 1)"
              if status != REPRODUCED else "")
    if competence_reason(checks):
        reason = competence_reason(checks) + "; " + reason
    fragile = (is_fragile(da, 0.0, seed_statuses([d > 0 for d in da]))
               or is_fragile(db, 0.0, seed_statuses([d > 0 for d in db])))
    return ClaimStatus("C2", claim, status, figures, threshold, reason, fragile, checks, changes=C2_CHANGES)


def decide_e1(acc_unpaired_legacy: Sequence[float]) -> ClaimStatus:
    """E1 (ours): the earlier form (frozen, unaligned autoencoders and the pseudo-pair cycle) keeps
    content with no pairs: accuracy >= CHANCE + C1_MIN_ACC_OVER_CHANCE in every seed."""
    acc = per_seed_values(acc_unpaired_legacy, "acc_unpaired_legacy", min_count=3)
    holds = [x >= CHANCE + C1_MIN_ACC_OVER_CHANCE for x in acc]
    status = robust_status(holds)
    reason = "" if status == REPRODUCED else f"content kept in {holds.count(True)} of {len(holds)} seeds"
    return ClaimStatus("E1", "the frozen-autoencoder form keeps content without pairs",
                       status, {"class accuracy at rho = 0, per seed": acc},
                       f"every seed: accuracy >= CHANCE + C1_MIN_ACC_OVER_CHANCE = {CHANCE} + {C1_MIN_ACC_OVER_CHANCE}",
                       reason, is_fragile(acc, CHANCE + C1_MIN_ACC_OVER_CHANCE, [REPRODUCED if h else NOT_REPRODUCED for h in holds]))


def decide_e2(acc_sdb_full: Sequence[float], acc_paired_full: Sequence[float]) -> ClaimStatus:
    """E2 (ours): at rho = 1, SDB is not worse than paired-only: acc >= paired - E2_MAX_DROP_FULL, every seed."""
    a = per_seed_values(acc_sdb_full, "acc_sdb_full", min_count=3)
    p = per_seed_values(acc_paired_full, "acc_paired_full", len(a), min_count=3)
    diff = [x - y for x, y in zip(a, p)]
    holds = [d >= -E2_MAX_DROP_FULL for d in diff]
    status = robust_status(holds)
    reason = {NOT_REPRODUCED: "SDB is worse in every seed", INCONCLUSIVE: "the seeds disagree"}.get(status, "")
    return ClaimStatus("E2", "with all pairs SDB is not worse than paired-only training", status,
                       {"acc SDB at rho = 1": a, "acc paired-only at rho = 1": p},
                       f"every seed: SDB - paired >= -E2_MAX_DROP_FULL = -{E2_MAX_DROP_FULL}", reason,
                       is_fragile(diff, -E2_MAX_DROP_FULL, [REPRODUCED if h else NOT_REPRODUCED for h in holds]))


def decide_e3(psnr_sdb_low: Sequence[float], psnr_paired_low: Sequence[float]) -> ClaimStatus:
    """E3 (ours): at rho = C2_RHO the PSNR gain of SDB over pairs-only is >= E3_MIN_PSNR_GAIN dB, every seed."""
    a = per_seed_values(psnr_sdb_low, "psnr_sdb_low", min_count=3)
    p = per_seed_values(psnr_paired_low, "psnr_paired_low", len(a), min_count=3)
    gain = [x - y for x, y in zip(a, p)]
    holds = [g >= E3_MIN_PSNR_GAIN for g in gain]
    status = robust_status(holds)
    reason = {NOT_REPRODUCED: "the gain is under the bar in every seed", INCONCLUSIVE: "the seeds disagree"}.get(status, "")
    return ClaimStatus("E3", "with few pairs SDB gains PSNR over pairs-only training", status,
                       {f"PSNR SDB at rho = {C2_RHO}": a, f"PSNR paired-only at rho = {C2_RHO}": p},
                       f"every seed: gain >= E3_MIN_PSNR_GAIN = {E3_MIN_PSNR_GAIN} dB", reason,
                       is_fragile(gain, E3_MIN_PSNR_GAIN, [REPRODUCED if h else NOT_REPRODUCED for h in holds]))


def build_ledger(results: Mapping) -> Ledger:
    """The chapter's ledger from `run_experiment`'s results (a pure function of the plain dict)."""
    m = results["metrics"]
    low = C2_RHO

    def get(method: str, rho: float, metric: str) -> list:
        k = f"{method}|{float(rho)}"
        if k not in m:
            raise ValueError(f"the ledger needs {method} at rho = {rho}; the results hold {sorted(m)}")
        return m[k][metric]

    ledger = Ledger("diffusion_bridge", CLAIM_IDS, SOURCE_BASIS, STAND_INS)
    ledger.add(decide_c1(get("SDB", 0.0, "acc"), get("SDB", 0.0, "mmd"), get("paired-only", 1.0, "mmd"),
                         get("paired-only", 1.0, "acc"), get("SDB", 0.0, "loss_drop")))
    ledger.add(decide_c2(get("SDB", low, "correct"), get("paired-only", low, "correct"),
                         get("paired-only", 1.0, "correct")))
    legacy = "SDB (frozen AEs, pseudo-pair cycle)|0.0"
    if legacy in m and len(m[legacy]["acc"]) >= MIN_SEEDS:
        ledger.add(decide_e1(m[legacy]["acc"]))
    if "SDB|1.0" in m and len(get("SDB", 1.0, "acc")) >= MIN_SEEDS:
        ledger.add(decide_e2(get("SDB", 1.0, "acc"), get("paired-only", 1.0, "acc")))
    if len(get("SDB", low, "psnr")) >= MIN_SEEDS:
        ledger.add(decide_e3(get("SDB", low, "psnr"), get("paired-only", low, "psnr")))
    return ledger
