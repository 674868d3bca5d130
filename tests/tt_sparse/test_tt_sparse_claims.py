"""Decision functions of the tt_sparse ledger, on hand-made figures, around every boundary."""

import pytest

from icml26.common.ledger import INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED, Ledger
from icml26.tt_sparse import claims as C
from icml26.tt_sparse.experiment import matched_metric


def test_claim_ids():
    assert C.CLAIM_IDS == ("C1", "C2", "C3")
    Ledger("tt_sparse", C.CLAIM_IDS)


def test_c1():
    assert C.decide_c1([True] * 5).status == REPRODUCED
    bad = C.decide_c1([True, False])
    assert bad.status == NOT_REPRODUCED and bad.reason
    with pytest.raises(TypeError):
        C.decide_c1([1, 1])
    with pytest.raises(ValueError):
        C.decide_c1([])


def test_c2_boundaries_and_combination():
    tie = [(0.9, 0.9)] * 3  # equal accuracy counts as "at least as accurate"
    assert C.decide_c2({("a", "decision tree"): tie}).status == REPRODUCED
    below = [(0.9, 0.9 + 1e-9)] * 3
    assert C.decide_c2({("a", "decision tree"): below}).status == NOT_REPRODUCED
    mixed = C.decide_c2({("a", "decision tree"): [(0.9, 0.8), (0.8, 0.9), (0.9, 0.8)]})
    assert mixed.status == INCONCLUSIVE and mixed.fragile
    part = C.decide_c2({("a", "decision tree"): tie, ("b", "decision tree"): below})
    assert part.status == PARTLY_REPRODUCED and "b vs decision tree" in part.reason
    with pytest.raises(ValueError):
        C.decide_c2({("a", "decision tree"): [(0.9, 0.8)] * 2})  # two seeds
    with pytest.raises(ValueError):
        C.decide_c2({("a", "decision tree"): [(0.9,)] * 3})
    with pytest.raises(ValueError):
        C.decide_c2({})


def test_c3_boundaries():
    assert C.decide_c3({"a": [(0.9, 0.8)] * 3}).status == REPRODUCED
    assert C.decide_c3({"a": [(0.9, 0.9)] * 3}).status == NOT_REPRODUCED  # strictly better needed
    assert C.decide_c3({"a": [(0.9, 0.8)] * 3, "b": [(0.8, 0.9)] * 3}).status == PARTLY_REPRODUCED
    assert C.decide_c3({"a": [(0.9, 0.8), (0.7, 0.8), (0.9, 0.8)]}).status == INCONCLUSIVE
    with pytest.raises(ValueError):
        C.decide_c3({"a": [(0.9, float("nan"))] * 3})


def test_matched_metric():
    rows = [{"dataset": "d", "seed": 0, "method": "RIPPER", "metric": m, "complexity": c}
            for m, c in ((0.7, 5), (0.8, 12), (0.9, 40))]
    assert matched_metric(rows, "d", 0, 10, "RIPPER") == 0.8  # 12 <= 1.2 x 10
    assert matched_metric(rows, "d", 0, 3, "RIPPER") == 0.7  # none that small: the simplest
    assert matched_metric(rows, "d", 0, 10, "decision tree") is None
