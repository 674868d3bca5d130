"""Decision functions of the tt_sparse ledger, on hand-made figures, around every boundary."""

import pytest

from icml26.common.ledger import INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED
from icml26.tt_sparse import claims as C
from icml26.tt_sparse.experiment import matched_metric

T = {"a": 0.5, "b": 0.5, "r": 0.0}  # trivial levels: two classification tables, one regression


def test_c1_is_exactness_by_construction_and_can_fail():
    ok = C.decide_c1([True] * 5)
    assert ok.status == REPRODUCED and ok.by_construction and ok.property_claim
    bad = C.decide_c1([True, False])
    assert bad.status == NOT_REPRODUCED and bad.reason
    with pytest.raises(TypeError):
        C.decide_c1([1, 1])
    with pytest.raises(ValueError):
        C.decide_c1([])


def _both(pairs):
    """The same per-seed pairs for both baselines on datasets a and b (each baseline on 2 datasets)."""
    return {(d, base): pairs for d in ("a", "b") for base in C.C2_BASELINES}


def test_c2_boundaries_and_combination():
    tie = [(0.9, 0.9)] * 3  # equal accuracy counts as "at least as accurate"
    assert C.decide_c2(_both(tie), T).status == REPRODUCED
    below = [(0.9, 0.9 + 1e-6)] * 3
    assert C.decide_c2(_both(below), T).status == NOT_REPRODUCED
    mixed = C.decide_c2(_both([(0.9, 0.8), (0.8, 0.9), (0.9, 0.8)]), T)
    assert mixed.status == INCONCLUSIVE and mixed.fragile
    # rule 1: 2 of 3 seeds hold but the seed test is not significant -> INCONCLUSIVE; 9 of 10 with a
    # clear mean margin -> REPRODUCED (fragile: one seed disagrees)
    nine = [(0.95, 0.90)] * 9 + [(0.90, 0.91)]
    many = C.decide_c2(_both(nine), T)
    assert many.status == REPRODUCED and many.fragile
    pairs = _both(tie)
    pairs[("b", "RIPPER")] = below
    part = C.decide_c2(pairs, T)
    assert part.status == PARTLY_REPRODUCED and "b vs RIPPER" in part.reason


def test_c2_needs_each_baseline_on_two_datasets():
    tie = [(0.9, 0.9)] * 3
    one = C.decide_c2({("a", "decision tree"): tie, ("b", "decision tree"): tie, ("a", "RIPPER"): tie}, T)
    assert one.status == INCONCLUSIVE and "RIPPER ran on fewer than" in one.reason
    two = C.decide_c2({("a", "decision tree"): tie, ("b", "decision tree"): tie, ("a", "RIPPER"): tie,
                       ("b", "RIPPER"): tie}, T)
    assert two.status == REPRODUCED


def test_c2_competence_gate():
    # the matched baseline at AUC 0.59 misses trivial 0.5 + COMPETENCE_MARGIN 0.1: INCONCLUSIVE
    weak = C.decide_c2(_both([(0.7, 0.59)] * 3), T)
    assert weak.status == INCONCLUSIVE and "rule 2" in weak.reason
    assert C.decide_c2(_both([(0.7, 0.61)] * 3), T).status == REPRODUCED
    # regression: R^2 0.09 is under 0.0 + 0.1, 0.11 is over
    reg = {("r", b): [(0.2, 0.09)] * 3 for b in C.C2_BASELINES} | {("a", b): [(0.9, 0.8)] * 3 for b in C.C2_BASELINES}
    assert C.decide_c2(reg, T).status == INCONCLUSIVE
    reg = {("r", b): [(0.2, 0.11)] * 3 for b in C.C2_BASELINES} | {("a", b): [(0.9, 0.8)] * 3 for b in C.C2_BASELINES}
    assert C.decide_c2(reg, T).status == REPRODUCED


def test_c2_rejects_bad_input():
    with pytest.raises(ValueError):
        C.decide_c2({("a", "decision tree"): [(0.9, 0.8)] * 2}, T)  # two seeds
    with pytest.raises(ValueError):
        C.decide_c2({("a", "decision tree"): [(0.9,)] * 3}, T)
    with pytest.raises(ValueError):
        C.decide_c2({}, T)
    with pytest.raises(ValueError, match="trivial level"):
        C.decide_c2({("z", "decision tree"): [(0.9, 0.8)] * 3}, T)


def test_c3_boundaries():
    assert C.decide_c3({"a": [(0.9, 0.8)] * 3}, T).status == REPRODUCED
    assert C.decide_c3({"a": [(0.9, 0.9)] * 3}, T).status == NOT_REPRODUCED  # strictly better needed
    assert C.decide_c3({"a": [(0.9, 0.8)] * 3, "b": [(0.8, 0.9)] * 3}, T).status == PARTLY_REPRODUCED
    assert C.decide_c3({"a": [(0.9, 0.8), (0.7, 0.8), (0.9, 0.8)]}, T).status == INCONCLUSIVE
    weak = C.decide_c3({"a": [(0.9, 0.55)] * 3}, T)  # the random arm is not competent
    assert weak.status == INCONCLUSIVE and "random connections on a" in weak.reason
    with pytest.raises(ValueError):
        C.decide_c3({"a": [(0.9, float("nan"))] * 3}, T)


def _rows(tt_metric, tree_metric):
    """Hand-made run rows: two binary datasets, three seeds, every method build_ledger reads."""
    rows = []
    for d in ("a", "b"):
        for s in range(3):
            base = dict(dataset=d, task="binary", seed=s, accuracy=None)
            rows += [dict(base, method="TT-Sparse", variant="learned", metric=0.92, complexity=40, exact=True),
                     dict(base, method="TT-Sparse (pruned)", variant="pruned", metric=tt_metric, complexity=20,
                          exact=True),
                     dict(base, method="random connections", variant="random", metric=0.85, complexity=40,
                          exact=True),
                     dict(base, method="decision tree", variant="tree d=2", metric=tree_metric, complexity=15,
                          exact=None),
                     dict(base, method="decision tree", variant="tree d=6", metric=0.99, complexity=200,
                          exact=None),
                     dict(base, method="RIPPER", variant="RIPPER", metric=0.80, complexity=22, exact=None)]
    return rows


def test_build_ledger_wires_the_rows_to_the_decisions():
    # the tree of complexity 200 is not matched (> 1.2 x 20): TT-Sparse is compared with the depth-2 tree
    good = C.build_ledger({"rows": _rows(0.9, 0.88), "seeds": [0, 1, 2]})
    assert [good.entries[c].status for c in C.CLAIM_IDS] == [REPRODUCED] * 3
    worse = C.build_ledger({"rows": _rows(0.9, 0.91), "seeds": [0, 1, 2]})
    assert worse.entries["C2"].status == PARTLY_REPRODUCED  # loses to the tree, beats RIPPER
    assert "a vs decision tree" in worse.entries["C2"].reason


def test_matched_metric():
    rows = [{"dataset": "d", "seed": 0, "method": "RIPPER", "metric": m, "complexity": c}
            for m, c in ((0.7, 5), (0.8, 12), (0.9, 40))]
    assert matched_metric(rows, "d", 0, 10, "RIPPER") == 0.8  # 12 <= 1.2 x 10
    assert matched_metric(rows, "d", 0, 3, "RIPPER") == 0.7  # none that small: the simplest
    assert matched_metric(rows, "d", 0, 10, "decision tree") is None
