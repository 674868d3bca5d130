import pytest
import torch

from icml26.common.ledger import INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTED, PARTLY_REPRODUCED, REPRODUCED
from icml26.grasp import build_ledger, get_config, run_experiment
from icml26.grasp import claims
from icml26.grasp.claims import ALPHA, decide_c1, decide_c2, decide_c3, decide_e1, decide_e2

N = 40


def rate(k, n=N):
    """k successes out of n, as per-question outcomes."""
    return [1.0] * k + [0.0] * (n - k)


def test_claim_ids():
    assert claims.CLAIM_IDS == ("C1", "C2", "C3") and ALPHA == 0.05


def test_c1_boundaries():
    assert decide_c1(rate(30), rate(20), rate(35), rate(10)).status == REPRODUCED
    same_margin = decide_c1(rate(30), rate(10), rate(30), rate(10))  # wins at both sizes, no widening
    assert same_margin.status == PARTLY_REPRODUCED and "widen" in same_margin.reason
    large_only = decide_c1(rate(21), rate(20), rate(30), rate(10))
    assert large_only.status == PARTLY_REPRODUCED and "larger" in large_only.reason
    assert decide_c1(rate(20), rate(20), rate(20), rate(20)).status == NOT_REPRODUCED
    assert decide_c1(rate(N), rate(N), rate(N), rate(N)).status == INCONCLUSIVE
    assert not decide_c1(rate(30), rate(20), rate(35), rate(10)).fragile  # p far from ALPHA
    near = [claims.paired_test_p(rate(k), rate(20)) for k in range(21, 30)]
    k = next(i for i, p in enumerate(near) if claims.FRAGILE_BAND[0] <= p < claims.FRAGILE_BAND[1])
    assert decide_c1(rate(21 + k), rate(20), rate(35), rate(10)).fragile  # the small-size p is near ALPHA


def test_c1_bad_input():
    with pytest.raises(ValueError, match="at least 30"):
        decide_c1(rate(10, 20), rate(5, 20), rate(10, 20), rate(5, 20))
    with pytest.raises(ValueError, match="pair"):
        decide_c1(rate(30), rate(20, 41), rate(30), rate(20))
    with pytest.raises(TypeError):
        decide_c1("abc" * 20, rate(20), rate(30), rate(20))
    with pytest.raises(TypeError):
        decide_c1([None] * N, rate(20), rate(30), rate(20))


def test_c2_boundaries():
    assert decide_c2(rate(10), rate(30), rate(5), rate(30)).status == REPRODUCED
    acc_only = decide_c2(rate(10), rate(30), rate(5), rate(5))
    assert acc_only.status == PARTLY_REPRODUCED and "probe" in acc_only.reason
    assert decide_c2(rate(10), rate(10), rate(5), rate(30)).status == PARTLY_REPRODUCED
    assert decide_c2(rate(30), rate(10), rate(30), rate(5)).status == NOT_REPRODUCED  # both fall
    with pytest.raises(ValueError):
        decide_c2(rate(10), rate(30), rate(5, 41), rate(30, 41))


def test_c3_not_tested_and_extensions():
    c3 = decide_c3()
    assert c3.status == NOT_TESTED and c3.reason
    assert decide_e1(0.8, 0.5, 0.8).status == REPRODUCED  # exactly at both sizes
    assert decide_e1(0.79, 0.5, 0.9).status == NOT_REPRODUCED
    assert decide_e1(0.9, 0.5, 0.79).status == NOT_REPRODUCED
    assert decide_e2(0.15, 0.2).status == REPRODUCED
    assert decide_e2(0.15, 0.19).status == NOT_REPRODUCED
    with pytest.raises(TypeError):
        decide_e1(True, 0.5, 0.8)
    with pytest.raises(TypeError):
        decide_e2("0.2", 0.2)


def test_smoke_end_to_end():
    torch.set_num_threads(1)
    cfg = get_config("smoke", eval_graphs=8)
    r = run_experiment(cfg, torch.device("cpu"))
    items = r.seeds[0].items
    assert set(items) >= {"blind_before", "probe_before", "probe_after", "agent_12", "passive_12"}
    assert all(len(v) == cfg.eval_graphs for v in items.values())
    # the smoke preset evaluates 8 questions: the paired test refuses to decide on fewer than 30
    with pytest.raises(ValueError, match="at least 30"):
        build_ledger(r)
    ledger = build_ledger(run_experiment(get_config("smoke"), torch.device("cpu")))  # 30 questions: enough
    assert ledger.entries["C3"].status == NOT_TESTED


def test_checked_lines_fit_the_code_column():
    entries = (decide_c1(rate(30), rate(20), rate(35), rate(10)), decide_c2(rate(10), rate(30), rate(5), rate(30)),
               decide_c3())
    for entry in entries:
        assert len("C1 PARTLY REPRODUCED (fragile): " + entry.claim) <= 100, entry.claim
    for entry in (decide_e1(0.8, 0.5, 0.8), decide_e2(0.15, 0.2)):
        assert len("E1 (ours) NOT REPRODUCED: " + entry.claim) <= 100
