"""The claims ledger of the diffusion_bridge chapter (the ledger rules: CONTRIBUTING.md, section 2).

Each decision function maps per-seed figures (one value per seed, at least 3: the robustness
rule) to a status; every threshold is a named module constant fixed before the runs.
Extensions E1-E3 are checks of ours, never counted in the verdict.
"""

from __future__ import annotations

from typing import Sequence

from icml26.common.ledger import per_seed_values
from icml26.common.ledger import (
    INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED, ClaimStatus, is_fragile, robust_status,
)

CLAIM_IDS = ("C1", "C2")

#: Chance level of the class-preservation probe (10 digit classes, about equally frequent).
CHANCE = 0.10
#: C1: content is kept when the translations' class accuracy exceeds chance by at least this.
C1_MIN_ACC_OVER_CHANCE = 0.05
#: C1: translations land on the target distribution when MMD(SDB, rho = 0) <= this x MMD(paired, rho = 1).
C1_MAX_MMD_RATIO = 1.5
#: C2: the small pairing fraction at which the claim is tested.
C2_RHO = 0.05
#: C2: "close to fully paired": acc(SDB, C2_RHO) >= acc(paired-only, rho = 1) - this.
C2_MAX_GAP_TO_FULL = 0.05
#: C2: "above pairs-only": acc(SDB, C2_RHO) - acc(paired-only, C2_RHO) > this.
C2_MIN_GAIN = 0.0
#: E2 (ours): at rho = 1, acc(SDB) >= acc(paired-only) - this.
E2_MAX_DROP_FULL = 0.01
#: E3 (ours): PSNR(SDB) - PSNR(paired-only) at C2_RHO >= this (dB).
E3_MIN_PSNR_GAIN = 0.5


def _two_part(claim_id: str, claim: str, a: list[bool], b: list[bool], names: tuple[str, str], figures: dict,
              threshold: str, fragile: bool) -> ClaimStatus:
    """Both parts in every seed -> REPRODUCED; one part robust and the other failing in every seed
    -> PARTLY; both failing in every seed -> NOT; any part with seeds that disagree -> INCONCLUSIVE."""
    sa, sb = robust_status(a), robust_status(b)
    if sa == sb == REPRODUCED:
        return ClaimStatus(claim_id, claim, REPRODUCED, figures, threshold, "", fragile)
    if INCONCLUSIVE in (sa, sb):
        part = names[0] if sa == INCONCLUSIVE else names[1]
        k = (a if sa == INCONCLUSIVE else b).count(True)
        return ClaimStatus(claim_id, claim, INCONCLUSIVE, figures, threshold,
                           f"{part} holds in {k} of {len(a)} seeds; more seeds would settle it", True)
    if sa == sb == NOT_REPRODUCED:
        return ClaimStatus(claim_id, claim, NOT_REPRODUCED, figures, threshold,
                           f"neither {names[0]} nor {names[1]} holds in any seed", fragile)
    missing = names[1] if sa == REPRODUCED else names[0]
    held = names[0] if sa == REPRODUCED else names[1]
    return ClaimStatus(claim_id, claim, PARTLY_REPRODUCED, figures, threshold,
                       f"{held} holds in every seed, {missing} in none", fragile)


def decide_c1(acc_unpaired: Sequence[float], mmd_unpaired: Sequence[float], mmd_paired_full: Sequence[float]) -> ClaimStatus:
    """C1: with no pairs (rho = 0), per seed, the translations land on the target distribution
    (MMD <= C1_MAX_MMD_RATIO x the fully paired bridge's) and keep content (class accuracy >=
    CHANCE + C1_MIN_ACC_OVER_CHANCE)."""
    acc = per_seed_values(acc_unpaired, "acc_unpaired", min_count=3)
    n = len(acc)
    mmd = per_seed_values(mmd_unpaired, "mmd_unpaired", n, min_count=3)
    ref = per_seed_values(mmd_paired_full, "mmd_paired_full", n, min_count=3)
    if any(r <= 0 for r in ref):
        raise ValueError("mmd_paired_full must be positive")
    ratio = [m / r for m, r in zip(mmd, ref)]
    on_target = [q <= C1_MAX_MMD_RATIO for q in ratio]
    content = [x >= CHANCE + C1_MIN_ACC_OVER_CHANCE for x in acc]
    figures = {"class accuracy at rho = 0, per seed": acc, "MMD ratio to paired at rho = 1": ratio}
    threshold = (f"every seed: MMD ratio <= C1_MAX_MMD_RATIO = {C1_MAX_MMD_RATIO}; accuracy >= CHANCE + "
                 f"C1_MIN_ACC_OVER_CHANCE = {CHANCE} + {C1_MIN_ACC_OVER_CHANCE}")
    per_seed = [REPRODUCED if o and c else PARTLY_REPRODUCED if o or c else NOT_REPRODUCED
                for o, c in zip(on_target, content)]
    fragile = is_fragile(acc, CHANCE + C1_MIN_ACC_OVER_CHANCE, per_seed) or is_fragile(ratio, C1_MAX_MMD_RATIO)
    return _two_part("C1", "with no pairs the translations land on the target distribution and keep content",
                     on_target, content, ("landing on the target distribution", "keeping content"), figures,
                     threshold, fragile)


def decide_c2(acc_sdb_low: Sequence[float], acc_paired_low: Sequence[float], acc_paired_full: Sequence[float]) -> ClaimStatus:
    """C2: at rho = C2_RHO, per seed, SDB beats the bridge trained on the pairs alone (gain >
    C2_MIN_GAIN) and comes close to fully paired training (acc >= paired(rho = 1) - C2_MAX_GAP_TO_FULL)."""
    a = per_seed_values(acc_sdb_low, "acc_sdb_low", min_count=3)
    n = len(a)
    p = per_seed_values(acc_paired_low, "acc_paired_low", n, min_count=3)
    full = per_seed_values(acc_paired_full, "acc_paired_full", n, min_count=3)
    gain = [x - y for x, y in zip(a, p)]
    gap = [f - x for x, f in zip(a, full)]
    above = [g > C2_MIN_GAIN for g in gain]
    close = [g <= C2_MAX_GAP_TO_FULL for g in gap]
    figures = {f"acc SDB at rho = {C2_RHO}": a, f"acc paired-only at rho = {C2_RHO}": p,
               "acc paired-only at rho = 1": full}
    threshold = (f"every seed: SDB - pairs-only > C2_MIN_GAIN = {C2_MIN_GAIN}; paired(1) - SDB <= "
                 f"C2_MAX_GAP_TO_FULL = {C2_MAX_GAP_TO_FULL}")
    per_seed = [REPRODUCED if u and v else PARTLY_REPRODUCED if u or v else NOT_REPRODUCED for u, v in zip(above, close)]
    fragile = is_fragile(gain, C2_MIN_GAIN, per_seed) or is_fragile(gap, C2_MAX_GAP_TO_FULL)
    return _two_part("C2", "with few pairs SDB beats pairs-only and nears fully paired quality",
                     above, close, ("beating pairs-only", "nearing fully paired"), figures, threshold, fragile)


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
