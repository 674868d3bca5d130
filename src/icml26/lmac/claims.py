"""The LMAC chapter's claims ledger (CONTRIBUTING.md, section 2): one decision function per claim.

Every threshold is a named module constant fixed before the stored run. C1 and C2 are
decided over the reconstructor seeds of the criterion (`LMACConfig.criterion_seeds`), C3 over
the MARL seeds (`LMACConfig.seeds`); each needs at least 3 (the robustness rule). The claims
about the protocol name the designer that wrote it: offline it is the rule-based stand-in, so
the LLM designer itself is not tested by the stored run.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from icml26.common.ledger import per_seed_values
from icml26.common.ledger import (INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED, ClaimStatus,
                                  is_fragile, robust_status)

CLAIM_IDS = ("C1", "C2", "C3")

C1_MIN_SR = 0.90  # every agent's recovery success SR_i (min over agents) at least this
C1_MAX_SPREAD = 0.10  # max_i SR_i - min_i SR_i at most this
C2_MIN_GAIN = 0.10  # refinement raises min_i SR_i by at least this over the initial protocol
C3_MIN_MARGIN = 0.05  # LMAC's greedy success beats a baseline's by at least this, in every seed
C3_BASELINES = ("NoComm", "FullComm", "TarMAC")
E1_MAX_MSG_FRAC = 0.25  # (ours) LMAC's message at most this fraction of FullComm's
_EPS = 1e-9  # float round-off allowance in comparisons of differences (0.6 - 0.5 < 0.1 in floats)


def _same_length(*named):
    lengths = {name: len(v) for name, v in named}
    if len(set(lengths.values())) != 1:
        raise ValueError(f"one value per seed is needed everywhere, got lengths {lengths}")


def _designer(designer: str) -> str:
    if not isinstance(designer, str) or not designer.strip():
        raise TypeError("designer must be a non-empty string naming who wrote the protocol")
    return designer


def decide_c1(min_sr: Sequence[float], spread: Sequence[float], designer: str) -> ClaimStatus:
    """C1: the final protocol lets every agent recover the important state, evenly.

    min_sr, spread: A = min_i SR_i and max_i SR_i - min_i SR_i of the final protocol, one per
    reconstructor seed. Holds in a seed when A >= C1_MIN_SR and spread <= C1_MAX_SPREAD.
    """
    designer = _designer(designer)
    a, g = per_seed_values(min_sr, "min_sr"), per_seed_values(spread, "spread")
    _same_length(("min_sr", a), ("spread", g))
    holds = [x >= C1_MIN_SR and y <= C1_MAX_SPREAD for x, y in zip(a, g)]
    status = robust_status(holds)
    per_seed = [REPRODUCED if h else NOT_REPRODUCED for h in holds]
    fragile = is_fragile(a, C1_MIN_SR, per_seed) or is_fragile(g, C1_MAX_SPREAD)
    reason = {REPRODUCED: "",
              NOT_REPRODUCED: "some agent stays below the recovery bar, or recovery is uneven, in every seed",
              INCONCLUSIVE: "reconstructor seeds disagree; more seeds or more reconstructor steps would settle it"}
    return ClaimStatus(
        "C1", f"every agent recovers the state, evenly ({designer})", status,
        figures={"min-agent SR per seed": a, "SR spread per seed": g},
        threshold=f"min SR >= C1_MIN_SR = {C1_MIN_SR} and spread <= C1_MAX_SPREAD = {C1_MAX_SPREAD}, every seed",
        reason=reason[status], fragile=fragile)


def decide_c2(min_sr_initial: Sequence[float], min_sr_final: Sequence[float], spread_initial: Sequence[float],
              spread_final: Sequence[float], designer: str) -> ClaimStatus:
    """C2: refining with the criterion raises recovery and narrows the gap between agents.

    Per seed: accuracy holds when A_final - A_initial >= C2_MIN_GAIN; the gap narrows when
    spread_final < spread_initial. Both in every seed -> REPRODUCED; accuracy in every seed but
    the gap not -> PARTLY REPRODUCED; accuracy in no seed -> NOT REPRODUCED; else INCONCLUSIVE.
    """
    designer = _designer(designer)
    a0, a1 = per_seed_values(min_sr_initial, "min_sr_initial"), per_seed_values(min_sr_final, "min_sr_final")
    g0, g1 = per_seed_values(spread_initial, "spread_initial"), per_seed_values(spread_final, "spread_final")
    _same_length(("min_sr_initial", a0), ("min_sr_final", a1), ("spread_initial", g0), ("spread_final", g1))
    gains = [y - x for x, y in zip(a0, a1)]
    acc = [d >= C2_MIN_GAIN - _EPS for d in gains]
    narrow = [y < x for x, y in zip(g0, g1)]
    acc_status = robust_status(acc)
    if acc_status == REPRODUCED:
        status = REPRODUCED if all(narrow) else PARTLY_REPRODUCED
    else:
        status = acc_status
    reason = {REPRODUCED: "",
              PARTLY_REPRODUCED: "recovery rises in every seed, but the spread between agents does not shrink in all",
              NOT_REPRODUCED: "refinement does not raise the weakest agent's recovery by the bar in any seed",
              INCONCLUSIVE: "seeds disagree on the gain; more reconstructor seeds would settle it"}
    per_seed = [REPRODUCED if x and y else NOT_REPRODUCED for x, y in zip(acc, narrow)]
    return ClaimStatus(
        "C2", f"refinement raises recovery and narrows the gap ({designer})", status,
        figures={"min SR initial": a0, "min SR final": a1, "spread initial": g0, "spread final": g1},
        threshold=f"A_final - A_initial >= C2_MIN_GAIN = {C2_MIN_GAIN} and spread_final < spread_initial, every seed",
        reason=reason[status], fragile=is_fragile(gains, C2_MIN_GAIN, per_seed))


def decide_c3(success: Mapping[str, Sequence[float]], designer: str) -> ClaimStatus:
    """C3: LMAC's task success beats the communication baselines.

    success: arm -> greedy success per MARL seed; needs "LMAC" and every arm of C3_BASELINES.
    Per baseline, the robustness rule on "LMAC >= baseline + C3_MIN_MARGIN" in each seed. Every
    baseline beaten -> REPRODUCED; some -> PARTLY REPRODUCED (the reason names the others); none,
    with some baseline's seeds disagreeing -> INCONCLUSIVE; else NOT REPRODUCED.
    """
    designer = _designer(designer)
    if not isinstance(success, Mapping):
        raise TypeError(f"success must map arm -> per-seed success, got {type(success).__name__}")
    missing = [a for a in ("LMAC",) + C3_BASELINES if a not in success]
    if missing:
        raise ValueError(f"success lacks the arms {missing}")
    lmac = per_seed_values(success["LMAC"], "success['LMAC']")
    per_base, figures, fragile = {}, {"LMAC": lmac}, False
    for arm in C3_BASELINES:
        base = per_seed_values(success[arm], f"success[{arm!r}]")
        _same_length(("LMAC", lmac), (arm, base))
        holds = [x - y >= C3_MIN_MARGIN - _EPS for x, y in zip(lmac, base)]
        per_base[arm] = robust_status(holds)
        figures[arm] = base
        fragile |= is_fragile([x - y for x, y in zip(lmac, base)], C3_MIN_MARGIN,
                              [REPRODUCED if h else NOT_REPRODUCED for h in holds])
    beaten = [a for a, s in per_base.items() if s == REPRODUCED]
    if len(beaten) == len(C3_BASELINES):
        status, reason = REPRODUCED, ""
    elif beaten:
        others = ", ".join(a for a in C3_BASELINES if a not in beaten)
        status, reason = PARTLY_REPRODUCED, f"beats {', '.join(beaten)} in every seed but not {others}"
    elif any(s == INCONCLUSIVE for s in per_base.values()):
        status, reason = INCONCLUSIVE, "seeds disagree against some baseline; more MARL seeds would settle it"
    else:
        status, reason = NOT_REPRODUCED, "no baseline is beaten by the margin in every seed"
    return ClaimStatus(
        "C3", f"beats no-comm, broadcast, learned comm ({designer})", status,
        figures={f"success {k} per seed": v for k, v in figures.items()},
        threshold=f"LMAC >= baseline + C3_MIN_MARGIN = {C3_MIN_MARGIN} in every seed, for each of "
                  f"{', '.join(C3_BASELINES)}",
        reason=reason, fragile=fragile)


def decide_e1(message_lmac: int, message_fullcomm: int) -> ClaimStatus:
    """E1 (ours): LMAC's message is at most E1_MAX_MSG_FRAC of FullComm's (numbers sent per step)."""
    for name, v in (("message_lmac", message_lmac), ("message_fullcomm", message_fullcomm)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise TypeError(f"{name} must be a non-negative int, got {v!r}")
    if message_fullcomm == 0:
        raise ValueError("FullComm sends nothing: the ratio is undefined")
    frac = message_lmac / message_fullcomm
    ok = frac <= E1_MAX_MSG_FRAC
    return ClaimStatus(
        "E1", "the refined protocol sends a small fraction of the broadcast", REPRODUCED if ok else NOT_REPRODUCED,
        figures={"numbers sent LMAC": message_lmac, "numbers sent FullComm": message_fullcomm, "fraction": frac},
        threshold=f"fraction <= E1_MAX_MSG_FRAC = {E1_MAX_MSG_FRAC}",
        reason="" if ok else "the refined protocol sends more than the bar allows")
