"""The GRASP chapter's decision functions on hand-made figures (both sides of every boundary), the
"probing first" definition, and the smoke run end to end with its specific statuses."""

import json

import numpy as np
import pytest

from icml26.common.ledger import INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTED, PARTLY_REPRODUCED, REPRODUCED, Competence
from icml26.grasp import claims, get_config, run_experiment
from icml26.grasp.agent import nodes_read
from icml26.grasp.claims import decide_c1, decide_c2, decide_c3, decide_e1, decide_e2
from icml26.grasp.env import Question

N = 40
OK = (Competence("agent", 0.6, 0.5), Competence("passive", 0.6, 0.5))
BAD = (Competence("agent", 0.6, 0.5), Competence("passive", 0.4, 0.5))


def rate(k, n=N):
    """k successes out of n, as per-question outcomes."""
    return [1.0] * k + [0.0] * (n - k)


def three(k):
    return [rate(k)] * 3


def test_claim_ids_and_basis():
    assert claims.CLAIM_IDS == ("C1", "C2", "C3")
    assert claims.SOURCE_BASIS == "abstract and README" and claims.STAND_INS == {}


def test_probing_first_means_the_nodes_the_code_reads():
    q = Question({1: [2], 2: [1], 3: []}, "adjacent", 1, 2, 1)
    assert nodes_read("print( int( v in N[u] ) )", q) == {1}  # adjacency reads u's list only
    assert nodes_read("print( len( set( N[u] ) & set( N[v] ) ) )", q) == {1, 2}
    assert nodes_read("print( 3 )", q) == set()


def test_comparison_needs_three_seeds():
    one = claims.comparison([rate(30)], [rate(10)], "x")
    assert one["status"] == INCONCLUSIVE and one["n_seeds"] == 1
    assert claims.comparison(three(30), three(10), "x")["status"] == REPRODUCED
    assert claims.comparison(three(10), three(10), "x")["status"] == NOT_REPRODUCED
    mixed = claims.comparison([rate(30), rate(5), rate(30)], three(10), "x")
    assert mixed["status"] == INCONCLUSIVE and mixed["fragile"]


def test_c1_boundaries():
    full = decide_c1(three(30), three(25), three(35), three(10), OK)  # wins at both sizes, widens
    assert full.status == REPRODUCED
    no_widen = decide_c1(three(30), three(10), three(30), three(20), OK)  # wins, gap narrows
    assert no_widen.status == PARTLY_REPRODUCED and "widening: NOT REPRODUCED" in no_widen.reason
    large_only = decide_c1(three(20), three(20), three(30), three(10), OK)
    assert large_only.status == PARTLY_REPRODUCED
    none = decide_c1(three(10), three(20), three(10), three(20), OK)
    assert none.status == NOT_REPRODUCED
    assert decide_c1(three(30), three(25), three(35), three(10), BAD).status == INCONCLUSIVE
    one = decide_c1([rate(30)], [rate(25)], [rate(35)], [rate(10)], OK)
    assert one.status == INCONCLUSIVE and "rule 1 needs 3" in one.reason


def test_c1_bad_input():
    with pytest.raises(ValueError, match="at least 30"):
        decide_c1([rate(5, 10)] * 3, [rate(5, 10)] * 3, three(5), three(5))
    with pytest.raises(ValueError, match="one list"):
        decide_c1(three(5), three(5)[:2], three(5), three(5))


def test_c2_boundaries():
    assert decide_c2(three(10), three(30), three(5), three(30), OK).status == REPRODUCED
    part = decide_c2(three(10), three(30), three(10), three(10), OK)
    assert part.status == PARTLY_REPRODUCED and "probing first: NOT REPRODUCED" in part.reason
    assert decide_c2(three(10), three(10), three(10), three(10), OK).status == NOT_REPRODUCED
    assert decide_c2(three(10), three(30), three(5), three(30), BAD).status == INCONCLUSIVE


def test_c3_not_tested_and_extensions():
    assert decide_c3().status == NOT_TESTED
    assert decide_e1([0.9] * 3, [0.5] * 3, [0.85] * 3).status == REPRODUCED
    assert decide_e1([0.7] * 3, [0.5] * 3, [0.85] * 3).status == NOT_REPRODUCED
    assert decide_e2([0.2] * 3, [0.3] * 3).status == REPRODUCED
    assert decide_e2([0.1] * 3, [0.3] * 3).status == NOT_REPRODUCED
    with pytest.raises(TypeError):
        decide_e2(["0.2"], [0.2])


def test_checked_lines_fit_the_code_column():
    for claim in claims.CLAIMS.values():
        assert len("C1 PARTLY REPRODUCED (fragile): " + claim) <= 100, claim


@pytest.fixture(scope="module")
def smoke_results():
    return run_experiment(get_config("smoke"), device="cpu")


def test_smoke_end_to_end(smoke_results):
    cfg = get_config("smoke")
    assert smoke_results["seeds"] == [0]
    items = smoke_results["per_seed"][0]["items"]
    assert set(items) >= {"blind_before", "probe_before", "probe_after", "agent_12", "passive_12", "agent_16"}
    assert all(len(v) == cfg.eval_graphs for v in items.values())
    assert set(smoke_results["per_seed"][0]["explore"]) >= {"12-common", "24-degree"}


def test_smoke_statuses_and_json_round_trip(smoke_results):
    """One training seed at smoke: every comparison is INCONCLUSIVE (rule 1), C3 NOT TESTED."""
    from icml26.evidence import from_plain, to_plain

    ledger = claims.build_ledger(smoke_results)
    got = {k: e.status for k, e in ledger.entries.items() if not e.extension}
    assert got == {"C1": INCONCLUSIVE, "C2": INCONCLUSIVE, "C3": NOT_TESTED}
    assert ledger.verdict() == INCONCLUSIVE
    plain = from_plain(json.loads(json.dumps(to_plain(smoke_results))))
    assert claims.build_ledger(plain).check_lines() == ledger.check_lines()


def test_competence_uses_the_trivial_baseline():
    c = claims.competence("passive", [0.50, 0.60], [0.40, 0.44])
    assert c.bar == pytest.approx(0.44 + claims.COMPETENCE_MARGIN) and c.figure == 0.50 and c.passed
    assert not claims.competence("passive", [0.48], [0.44]).passed
    assert np.isfinite(c.figure)
