import numpy as np
import pytest

from icml26.common.ledger import INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED
from icml26.deep_image_search import album as A
from icml26.deep_image_search import claims, get_config

N = 60


def test_claim_ids():
    assert claims.CLAIM_IDS == ("C1", "C2", "C3")


def test_c1_boundaries_and_bad_input():
    assert claims.decide_c1([0.0, 0.05, 0.1], [0.1, 0.2, 0.3]).status == REPRODUCED  # at the bars: holds
    assert claims.decide_c1([0.0, 0.05, 0.11], [0.1, 0.2, 0.3]).status == INCONCLUSIVE  # one seed above
    assert claims.decide_c1([0.2, 0.3, 0.4], [0.1, 0.2, 0.3]).status == NOT_REPRODUCED
    assert claims.decide_c1([0.0, 0.0, 0.0], [0.31, 0.4, 0.5]).status == NOT_REPRODUCED
    with pytest.raises(ValueError):
        claims.decide_c1([0.0, 0.0], [0.1, 0.1])  # two seeds
    with pytest.raises(ValueError):
        claims.decide_c1([0.0, 0.0, 1.5], [0.1, 0.1, 0.1])


def scores(base, gain, n=N):
    """Paired per-query F1: the other arm `base` everywhere, the agent `base + gain` on a shuffled share."""
    other = np.full(n, base)
    agent = other.copy()
    agent[: n // 2] += 2 * gain  # half the queries gain twice as much: mean gain = gain
    return np.clip(agent, 0, 1), other


def test_c2_each_status():
    a, d = scores(0.1, 0.4)
    _, m = scores(0.2, 0.3)
    assert claims.decide_c2(a, d, m, memory_ablation_tested=True).status == REPRODUCED
    assert claims.decide_c2(a, d, m).status == PARTLY_REPRODUCED  # the memory ablation untested caps it
    a2, d2 = scores(0.1, 0.1)  # significant, but gain 0.1 < 0.30 vs direct
    assert claims.decide_c2(a2, d2, d2, memory_ablation_tested=True).status == PARTLY_REPRODUCED
    assert claims.decide_c2(d, a, a).status == NOT_REPRODUCED  # reversed
    with pytest.raises(TypeError):
        claims.decide_c2(a, d, m, memory_ablation_tested=1)
    with pytest.raises(ValueError):
        claims.decide_c2(a[:10], d[:10], m[:10])
    with pytest.raises(ValueError):
        claims.decide_c2(a, d[:-1], m)


def test_paired_gain_size_boundary():
    a, d = scores(0.1, 0.3)
    assert claims.paired_gain(a, d, 0.30)["status"] == REPRODUCED
    a, d = scores(0.1, 0.29)
    assert claims.paired_gain(a, d, 0.30)["status"] == PARTLY_REPRODUCED


def test_verify_query_accepts_generated_and_rejects_tampered():
    cfg = get_config("smoke")
    albums, queries = A.make_benchmark(cfg, 0)
    q = queries[0]
    al = albums[q.user]
    assert all(claims.verify_query(albums[x.user], x) for x in queries)
    bad_targets = A.Query(q.user, q.kind, q.text, q.subject, q.marker, frozenset(list(q.targets)[:-1]))
    assert not claims.verify_query(al, bad_targets)
    wrong_kind = A.Query(q.user, "inter" if q.kind == "intra" else "intra", q.text, q.subject, q.marker, q.targets)
    assert not claims.verify_query(al, wrong_kind)
    garbled = A.Query(q.user, q.kind, q.text + " please", q.subject, q.marker, q.targets)
    assert not claims.verify_query(al, garbled)


def test_c3_statuses():
    assert claims.decide_c3([150, 150, 150], [150, 150, 150]).status == PARTLY_REPRODUCED  # templates, not a model
    assert claims.decide_c3([149, 150, 150], [150, 150, 150]).status == NOT_REPRODUCED
    assert claims.decide_c3([50, 50, 50], [50, 50, 50]).status == NOT_REPRODUCED  # under 100 per seed
    with pytest.raises(ValueError):
        claims.decide_c3([151], [150])
