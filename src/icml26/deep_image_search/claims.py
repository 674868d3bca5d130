"""The claims ledger of the DeepImageSearch chapter (the ledger rules: CONTRIBUTING.md, section 2).

One decision function per claim; every threshold is a named module constant, fixed before the
run. Every benchmark seed trains its own perception stand-ins and draws its own albums, so seeds
are independent runs (rule 1): C1 is decided over seeds by `robust_status`; C2's comparisons by
the shared `paired_gain` over queries within each seed and `replicated_status` over seeds. Rule 2:
the perception stand-ins must read the digit of a photo well above chance in every seed. Rule 4:
with the scripted planner, C2 is decided by a hand-written stand-in (`STAND_INS`). Rule 3: C3's
queries come from our templates and are re-checked by parsing the same templates, a sanity check by
construction, so C3 is NOT TESTED.
"""

from __future__ import annotations

import re
import numpy as np

from icml26.common.ledger import (INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTED, PARTLY_REPRODUCED, REPRODUCED,
                                  ClaimStatus, Competence, Ledger, combine_sub_results, competence_reason,
                                  gate_competence, is_fragile, paired_gain, per_seed_values, replicated_status,
                                  robust_status, seed_statuses)

from .album import INTER, INTRA, MARKERS, Album, Query, subject_name

CLAIM_IDS = ("C1", "C2", "C3")
SOURCE_BASIS = "abstract and README"
#: Rule 4: the hand-written stand-in that decides C2 when the policy is "scripted".
STAND_INS = {"C2": "ScriptedPlanner, a hand-written planner that parses the benchmark's own query templates "
                   "(not a language model)"}
C1_MAX_DIRECT_EM = 0.10  # direct retrieval "stays low": macro EM at most 0.10 ...
C1_MAX_DIRECT_F1 = 0.30  # ... and macro F1 at most 0.30, in every seed
C2_MIN_F1_GAIN_DIRECT = 0.30  # "substantially better": agent F1 - direct F1 >= 0.30
C2_MIN_F1_GAIN_ABLATION = 0.15  # an ablation "loses": agent F1 - ablation F1 >= 0.15
#: Rule 2: the perception stand-ins' digit accuracy on the album photos (chance 0.1) must reach this.
PERCEPTION_MIN_ACC = 0.4
C3_MIN_VALID_FRAC = 1.0  # every generated query verified against the hidden ground truth
C3_MIN_QUERIES = 100  # per seed ("at scale": DISBench has 122 verified queries)
QUERY_GENERATOR_IS_MODEL_ASSISTED = False  # ours fills templates; the paper's pipeline uses a VLM and humans

CLAIMS = {
    "C1": "context-dependent queries defeat one-shot query-image matching",
    "C2": "the tool-using agent with two memories does substantially better",
    "C3": "a model-assisted pipeline mines context-dependent queries at scale",
}


def _rates(values, what: str, n: int | None = None) -> list[float]:
    vals = per_seed_values(values, what, n, min_count=3)
    if any(v < 0 or v > 1 for v in vals):
        raise ValueError(f"{what} must be rates in [0, 1], got {vals}")
    return vals


def perception_competence(acc_per_seed) -> Competence:
    """Rule 2: the perception stand-ins' lowest digit accuracy over seeds against PERCEPTION_MIN_ACC."""
    acc = _rates(acc_per_seed, "perception accuracy")
    return Competence("perception stand-ins (lowest digit accuracy over seeds)", min(acc), PERCEPTION_MIN_ACC)


def decide_c1(direct_em_per_seed, direct_f1_per_seed, perception_acc_per_seed) -> ClaimStatus:
    """C1: in every seed, direct retrieval's macro EM <= C1_MAX_DIRECT_EM and F1 <= C1_MAX_DIRECT_F1
    (`robust_status`). Direct retrieval failing is the claim itself, but a perception model that
    cannot see would make it fail trivially: rule 2 gates C1 on the perception stand-ins."""
    em = _rates(direct_em_per_seed, "direct EM")
    f1 = _rates(direct_f1_per_seed, "direct F1", len(em))
    competence = [perception_competence(perception_acc_per_seed)]
    low = [e <= C1_MAX_DIRECT_EM and f <= C1_MAX_DIRECT_F1 for e, f in zip(em, f1)]
    status = robust_status(low)
    reason = {REPRODUCED: "", NOT_REPRODUCED: "direct retrieval is above the bar in every seed",
              INCONCLUSIVE: "seeds disagree: direct retrieval is near the bar"}[status]
    if any(not c.passed for c in competence):  # rule 2
        status, reason = gate_competence(status, competence), competence_reason(competence)
    fragile = (is_fragile(f1, C1_MAX_DIRECT_F1, seed_statuses(low)) or is_fragile(em, C1_MAX_DIRECT_EM))
    return ClaimStatus("C1", CLAIMS["C1"], status,
                       {"direct EM per seed": [round(v, 3) for v in em], "direct F1 per seed": [round(v, 3) for v in f1]},
                       f"in every seed (at least 3): EM <= C1_MAX_DIRECT_EM = {C1_MAX_DIRECT_EM} and "
                       f"F1 <= C1_MAX_DIRECT_F1 = {C1_MAX_DIRECT_F1}", reason, fragile, competence=competence)


def compare_over_seeds(agent_f1, other_f1, seed_of_item, min_gain: float) -> dict:
    """One comparison of C2: per seed, the shared `paired_gain` over that seed's queries (the same
    query answered by both arms; it decides the seed only); over seeds, rule 1
    (`replicated_status` of the per-seed gains against 0, with the size min_gain per seed)."""
    a, b = np.asarray(agent_f1, float), np.asarray(other_f1, float)
    seeds = np.asarray(seed_of_item)
    if a.ndim != 1 or a.shape != b.shape or seeds.shape != a.shape:
        raise ValueError(f"one agent score, one other score and one seed per query, got {a.shape}, {b.shape}, "
                         f"{seeds.shape}")
    per = [paired_gain(a[seeds == s].tolist(), b[seeds == s].tolist(), min_gain) for s in np.unique(seeds)]
    gains = [p["gain"] for p in per]
    status = replicated_status(gains, 0.0, [g >= min_gain for g in gains])
    fragile = is_fragile(gains, min_gain, [p["status"] for p in per])
    return {"gains": gains, "p": [p["p"] for p in per], "status": status, "fragile": fragile}


def decide_c2(agent_f1, direct_f1, no_meta_f1, seed_of_item, perception_acc_per_seed,
              stand_in: bool = True, memory_ablation_tested: bool = False) -> ClaimStatus:
    """C2: the agent beats direct retrieval (F1 gain >= C2_MIN_F1_GAIN_DIRECT per seed) and the
    ablation without metadata filtering loses (gain >= C2_MIN_F1_GAIN_ABLATION), each by
    `compare_over_seeds`. The ablation without memory is part of the claim; while it is not tested
    the status is at most PARTLY REPRODUCED. `stand_in`: the agent is the scripted planner (rule 4)."""
    for name, flag in (("stand_in", stand_in), ("memory_ablation_tested", memory_ablation_tested)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be a bool, got {type(flag).__name__}")
    competence = [perception_competence(perception_acc_per_seed)]
    vs_direct = compare_over_seeds(agent_f1, direct_f1, seed_of_item, C2_MIN_F1_GAIN_DIRECT)
    vs_meta = compare_over_seeds(agent_f1, no_meta_f1, seed_of_item, C2_MIN_F1_GAIN_ABLATION)
    subs = [vs_direct["status"], vs_meta["status"]]
    status = combine_sub_results(subs)
    if status == REPRODUCED and not memory_ablation_tested:
        status = PARTLY_REPRODUCED
    parts = [f"vs direct: {subs[0]}", f"vs no metadata filter: {subs[1]}"]
    if not memory_ablation_tested:
        parts.append("the memory ablation is not tested")
    if stand_in:
        parts.append("the agent is the scripted planner, which parses the query templates (stand-in); the claim "
                     "about a model-driven agent is not tested until a language model runs (policy='openai')")
    reason = "; ".join(parts) if status != REPRODUCED or stand_in else ""
    if any(not c.passed for c in competence):  # rule 2: say so whatever the comparison gave
        status, reason = gate_competence(status, competence), competence_reason(competence) + "; " + reason
    return ClaimStatus("C2", CLAIMS["C2"], status,
                       {"F1 gain vs direct, per seed": [round(g, 3) for g in vs_direct["gains"]],
                        "paired p vs direct, per seed": [float(f"{p:.3g}") for p in vs_direct["p"]],
                        "F1 gain vs no metadata filter, per seed": [round(g, 3) for g in vs_meta["gains"]],
                        "paired p vs no metadata filter, per seed": [float(f"{p:.3g}") for p in vs_meta["p"]],
                        "queries (paired)": int(np.size(agent_f1)), "memory ablation tested": memory_ablation_tested},
                       f"per seed: paired p < ALPHA; over seeds: rule 1 on the F1 gain, size >= C2_MIN_F1_GAIN_DIRECT"
                       f" = {C2_MIN_F1_GAIN_DIRECT} (vs direct), >= C2_MIN_F1_GAIN_ABLATION = "
                       f"{C2_MIN_F1_GAIN_ABLATION} (vs each ablation) in every seed",
                       reason, vs_direct["fragile"] or vs_meta["fragile"], competence=competence, stand_in=stand_in)


_INTRA = re.compile(r"^photos of the (\w+ \d) from the trip where I saw the (\w+ \w+)$")
_INTER = re.compile(r"^photos of the (\w+ \d) taken where I saw the (\w+ \w+), but on other visits$")


def verify_query(album: Album, query: Query) -> bool:
    """Recompute G from the query TEXT and the album's hidden ground truth
    (events, subjects, markers), independently of the generator: the marker
    must mark exactly one event; G is the subject's photos in that event
    (intra) or at its place in other events (inter); the query is
    context-dependent when the subject also appears outside G (a one-shot
    matcher cannot tell)."""
    m = _INTRA.match(query.text) or _INTER.match(query.text)
    if m is None or query.kind != (INTRA if _INTRA.match(query.text)
                                   else INTER):
        return False
    names = [subject_name(s) for s in range(40)]
    if m.group(1) not in names or m.group(2) not in MARKERS:
        return False
    subject, marker = names.index(m.group(1)), MARKERS.index(m.group(2)) + 1
    events = np.unique(album.event[album.marker == marker])
    if events.size != 1:
        return False
    e = int(events[0])
    has_s, in_e = album.subject == subject, album.event == e
    if query.kind == INTRA:
        g = np.flatnonzero(has_s & in_e)
    else:
        same_place = album.event_place[album.event] == album.event_place[e]
        g = np.flatnonzero(has_s & same_place & ~in_e)
    context_dependent = bool((has_s & ~np.isin(np.arange(len(album)), g)).any())
    return (set(g.tolist()) == set(query.targets) and len(g) > 0
            and context_dependent)


def decide_c3(valid_per_seed, queries_per_seed) -> ClaimStatus:
    """C3: a model-assisted pipeline mines valid context-dependent queries at scale. Our generator
    fills templates and `verify_query` re-parses the same templates against the album, so a valid
    share of 1 holds by construction (rule 3, a sanity check): the claim is NOT TESTED unless the
    generator is model-assisted; the counts are shown."""
    valid = [int(v) for v in valid_per_seed]
    n = [int(v) for v in queries_per_seed]
    if len(valid) != len(n) or not n:
        raise ValueError(f"one count per seed: got {len(valid)} and {len(n)}")
    if any(v < 0 or v > k for v, k in zip(valid, n)):
        raise ValueError("valid counts must lie between 0 and the number of queries")
    frac = sum(valid) / max(1, sum(n))
    ok = frac >= C3_MIN_VALID_FRAC and min(n) >= C3_MIN_QUERIES
    figures = {"verified queries": f"{sum(valid)}/{sum(n)}", "queries per seed": n,
               "model-assisted generator": QUERY_GENERATOR_IS_MODEL_ASSISTED}
    threshold = (f"verified share >= C3_MIN_VALID_FRAC = {C3_MIN_VALID_FRAC}, >= C3_MIN_QUERIES = {C3_MIN_QUERIES} "
                 "per seed, by a check independent of a model-assisted generator")
    if not QUERY_GENERATOR_IS_MODEL_ASSISTED:
        return ClaimStatus("C3", CLAIMS["C3"], NOT_TESTED, figures, threshold,
                           "our queries are filled from templates and verified by parsing the same templates (a "
                           "sanity check by construction); mining with a vision-language model is not run here",
                           by_construction=True)
    status = REPRODUCED if ok else NOT_REPRODUCED
    reason = "" if ok else "some generated queries fail the ground-truth check, or too few per seed"
    return ClaimStatus("C3", CLAIMS["C3"], status, figures, threshold, reason)


def build_ledger(results) -> Ledger:
    """The chapter's ledger from `experiment.run_experiment`'s plain results (a pure function)."""
    from .experiment import ARMS, paired_scores, per_seed

    scripted = str(results["policy"]).split(":")[0] == "scripted"
    ledger = Ledger("deep_image_search", CLAIM_IDS, SOURCE_BASIS, STAND_INS if scripted else {})
    perception = results["perception_acc"]
    ledger.add(decide_c1(per_seed(results, ARMS[0], "EM"), per_seed(results, ARMS[0], "F1"), perception))
    agent_f1, seed_of = paired_scores(results, "agent")
    direct_f1, _ = paired_scores(results, ARMS[0])
    nometa_f1, _ = paired_scores(results, ARMS[1])
    ledger.add(decide_c2(agent_f1, direct_f1, nometa_f1, seed_of, perception, stand_in=scripted))
    ledger.add(decide_c3(results["verified"], results["queries"]))
    return ledger
