"""The claims ledger of the DeepImageSearch chapter (the ledger rules: CONTRIBUTING.md, section 2).

One decision function per claim; every threshold is a named module constant, fixed before the
run. Every benchmark seed trains its own perception stand-ins and draws its own albums, so seeds
are independent runs (rule 1): C1 is decided over seeds by `robust_status`; C2's comparisons by
the shared `paired_gain` over queries within each seed and `replicated_status` over seeds. Rule 2:
the perception stand-ins must read the digit of a photo well above chance in every seed, and the
learned policy must agree with its teacher on most calls in every tool set. Rule 4: with the
scripted planner (policy='scripted'), C2 is decided by a hand-written stand-in (`STAND_INS`); with
the learned policy (the default) by a trained network. Rule 3: C3's
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
#: Rule 2: the learned policy's share of calls equal to its teacher's, on the evaluation queries,
#: in every seed and tool set (a policy that departs from the plan it imitates on more than one
#: call in five has not learned it). Set while the learned policy was developed (rule 7: listed).
IMITATION_MIN_AGREEMENT = 0.8
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


def imitation_competence(agreement_per_seed) -> Competence:
    """Rule 2: the learned policy's lowest agreement with its teacher over seeds and tool sets."""
    if not isinstance(agreement_per_seed, (list, tuple)) or not agreement_per_seed or not all(
            isinstance(d, dict) and d for d in agreement_per_seed):
        raise ValueError("imitation: one {tool set: agreement} dict per seed")
    values = [float(v) for d in agreement_per_seed for v in d.values()]
    if any(not 0 <= v <= 1 for v in values):
        raise ValueError(f"agreements must lie in [0, 1], got {values}")
    return Competence("learned policy (lowest agreement with its teacher's calls over seeds and tool sets)",
                      min(values), IMITATION_MIN_AGREEMENT)


def decide_c2(agent_f1, direct_f1, no_meta_f1, no_memory_f1, seed_of_item, perception_acc_per_seed,
              imitation_per_seed=None, stand_in: bool = True) -> ClaimStatus:
    """C2: the agent beats direct retrieval (F1 gain >= C2_MIN_F1_GAIN_DIRECT per seed), and each
    ablation loses (gain >= C2_MIN_F1_GAIN_ABLATION): without metadata filtering, and without
    explicit memory; each comparison by `compare_over_seeds`, combined by `combine_sub_results`.
    `no_memory_f1=None`: the memory ablation did not run, so the status is at most PARTLY
    REPRODUCED. `imitation_per_seed` (learned policy): its agreement with its teacher per seed and
    tool set, a competence check (rule 2). `stand_in`: the agent is the scripted planner (rule 4)."""
    if not isinstance(stand_in, bool):
        raise TypeError(f"stand_in must be a bool, got {type(stand_in).__name__}")
    competence = [perception_competence(perception_acc_per_seed)]
    if imitation_per_seed is not None:
        competence.append(imitation_competence(imitation_per_seed))
    vs_direct = compare_over_seeds(agent_f1, direct_f1, seed_of_item, C2_MIN_F1_GAIN_DIRECT)
    vs_meta = compare_over_seeds(agent_f1, no_meta_f1, seed_of_item, C2_MIN_F1_GAIN_ABLATION)
    comparisons = [("vs direct", vs_direct), ("vs no metadata filter", vs_meta)]
    if no_memory_f1 is not None:
        comparisons.append(("vs no explicit memory",
                            compare_over_seeds(agent_f1, no_memory_f1, seed_of_item, C2_MIN_F1_GAIN_ABLATION)))
    status = combine_sub_results([c["status"] for _, c in comparisons])
    if status == REPRODUCED and no_memory_f1 is None:
        status = PARTLY_REPRODUCED
    parts = [f"{name}: {c['status']}" for name, c in comparisons]
    if no_memory_f1 is None:
        parts.append("the memory ablation is not tested")
    if stand_in:
        parts.append("the agent is the scripted planner, which parses the query templates (stand-in); the claim "
                     "about a model-driven agent is tested with policy='learned' or a language model")
    elif imitation_per_seed is not None:
        parts.append("the agent is a small network trained on the scripted planner's traces (separate albums): "
                     "the plan it imitates is ours, reading the query and the photos is learned; a language "
                     "model runs on the full preset (policy='openai')")
    reason = "; ".join(parts) if status != REPRODUCED or stand_in or imitation_per_seed is not None else ""
    if any(not c.passed for c in competence):  # rule 2: say so whatever the comparison gave
        status, reason = gate_competence(status, competence), competence_reason(competence) + "; " + reason
    figures = {}
    for name, c in comparisons:
        label = name.removeprefix("vs ")
        figures[f"F1 gain vs {label}, per seed"] = [round(g, 3) for g in c["gains"]]
        figures[f"paired p vs {label}, per seed"] = [float(f"{p:.3g}") for p in c["p"]]
    figures["queries (paired)"] = int(np.size(agent_f1))
    figures["memory ablation tested"] = no_memory_f1 is not None
    return ClaimStatus("C2", CLAIMS["C2"], status, figures,
                       f"per seed: paired p < ALPHA; over seeds: rule 1 on the F1 gain, size >= C2_MIN_F1_GAIN_DIRECT"
                       f" = {C2_MIN_F1_GAIN_DIRECT} (vs direct), >= C2_MIN_F1_GAIN_ABLATION = "
                       f"{C2_MIN_F1_GAIN_ABLATION} (vs each ablation) in every seed",
                       reason, any(c["fragile"] for _, c in comparisons), competence=competence, stand_in=stand_in)


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
    nomemory_f1, _ = paired_scores(results, ARMS[2])
    ledger.add(decide_c2(agent_f1, direct_f1, nometa_f1, nomemory_f1, seed_of, perception,
                         results.get("imitation"), stand_in=scripted))
    ledger.add(decide_c3(results["verified"], results["queries"]))
    return ledger
