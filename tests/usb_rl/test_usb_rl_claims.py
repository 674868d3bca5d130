"""Decision functions of the USB-RL ledger on hand-made figures, on both sides of every boundary."""

import json

import numpy as np
import pytest
import torch

from icml26.common.ledger import INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTED, PARTLY_REPRODUCED, REPRODUCED
from icml26.usb_rl import claims
from icml26.usb_rl.score import MonotoneScore

NAMES = ["unconstrained", "linear 0.1", "linear 1", "lagrangian", "usb"]
BAR = claims.competence_bar()["bar"]


def table(usb_r, usb_c, heavy_r=-6.5, heavy_c=0.7, unc_c=10.0):
    """One row per seed x 5 methods; USB's values per seed."""
    R = np.array([[-5.8, -5.6, heavy_r, -8.0, r] for r in usb_r])
    C = np.array([[unc_c, 6.5, heavy_c, 1.0, c] for c in usb_c])
    return R, C


def test_contract_names():
    assert claims.CLAIM_IDS == ("C1", "C2", "C3")
    assert claims.SOURCE_BASIS == "abstract only" and claims.STAND_INS == {}


def test_competence_bar_from_the_task():
    b = claims.competence_bar(20, 0.1)
    assert b["stand_still"] == -20.0
    assert b["straight_dash"] == pytest.approx(-4.5)  # 0.9 + 0.8 + ... + 0.1
    assert b["bar"] == pytest.approx(-20 + claims.COMPETENT_SHARE * 15.5)


def test_c1_is_a_sanity_check_labelled_by_construction_and_not_tested():
    ok = claims.decide_c1([0, 0, 0], [0, 0, 0], [10, 12, 9])
    assert ok.status == NOT_TESTED and ok.by_construction and "by construction" in ok.reason
    bad = claims.decide_c1([0, 1, 0], [0, 0, 0], [10, 12, 9])
    assert bad.status == NOT_TESTED and "bug" in bad.reason
    with pytest.raises(TypeError):
        claims.decide_c1([True, 0, 0], [0, 0, 0], [1, 1, 1])
    with pytest.raises(ValueError):
        claims.decide_c1([0, 0], [0, 0, 0], [1, 1, 1])


def test_monotonicity_check_counts_zero_for_the_monotone_net_and_catches_a_non_monotone_one(device):
    g = torch.Generator().manual_seed(0)
    s = MonotoneScore(8, g).to(device)
    r, c = torch.randn(64, generator=g).to(device), (torch.rand(64, generator=g) * 5).to(device)
    out = claims.monotonicity_violations(s, r, c, n_grid=11)
    assert out["grid"] == 0 and out["pairs"] == 0 and out["n_pairs"] > 0

    class Bad(torch.nn.Module):  # rewards cost: must be caught on the grid and on the pairs
        def forward(self, g_r, g_c):
            return g_r + 2.0 * g_c

    bad = claims.monotonicity_violations(Bad(), r, c, n_grid=11)
    assert bad["grid"] > 0 and bad["pairs"] > 0


def test_c2_each_status():
    R, C = table([-6.4, -6.3, -6.45], [0.5, 0.6, 0.4])  # cuts and keeps return in every seed
    assert claims.decide_c2(R, C, NAMES, BAR).status == REPRODUCED
    R, C = table([-6.6, -6.7, -6.8], [0.5, 0.6, 0.4])  # cuts, never keeps return
    part = claims.decide_c2(R, C, NAMES, BAR)
    assert part.status == PARTLY_REPRODUCED and "NOT REPRODUCED (0/3" in part.reason
    R, C = table([-6.4, -6.7, -6.45], [0.5, 0.6, 0.4])  # return kept in 2 of 3 seeds, not significant
    assert claims.decide_c2(R, C, NAMES, BAR).status == PARTLY_REPRODUCED
    R, C = table([-6.6, -6.7, -6.8], [6.0, 5.5, 7.0])  # cost ratio > 0.5 everywhere, return never kept
    assert claims.decide_c2(R, C, NAMES, BAR).status == NOT_REPRODUCED
    # exactly at the boundary (ratio 0.5, gap 0): the effects must exceed it, so neither holds
    R, C = table([-6.5, -6.5, -6.5], [5.0, 5.0, 5.0])
    assert claims.decide_c2(R, C, NAMES, BAR).status == NOT_REPRODUCED
    R, C = table([-6.5 + 1e-3] * 3, [5.0 - 1e-3] * 3)
    assert claims.decide_c2(R, C, NAMES, BAR).status == REPRODUCED


def test_c2_seed_as_unit_test_over_ten_seeds():
    # return kept in 8 of 10 seeds with a clearly positive mean: the t-test decides it
    gaps = np.array([0.3, 0.4, 0.2, 0.35, -0.05, 0.3, 0.25, -0.02, 0.4, 0.3])
    R, C = table(list(-6.5 + gaps), [0.5] * 10)
    assert claims.decide_c2(R, C, NAMES, BAR).status == REPRODUCED
    # 6 of 10 seeds, mean near 0: undecided -> cut holds, keep inconclusive -> PARTLY
    gaps = np.array([0.1, -0.1, 0.05, -0.08, 0.02, -0.1, 0.1, 0.03, -0.05, 0.01])
    R, C = table(list(-6.5 + gaps), [0.5] * 10)
    res = claims.decide_c2(R, C, NAMES, BAR)
    assert res.status == PARTLY_REPRODUCED and res.fragile


def test_c2_c3_incompetent_arm_is_inconclusive():
    R, C = table([-6.4, -6.3, -6.45], [0.5, 0.6, 0.4])
    R[:, 0] = -19.0  # the unconstrained agent stands still: below the bar
    c2 = claims.decide_c2(R, C, NAMES, BAR)
    assert c2.status == INCONCLUSIVE and "rule 2" in c2.reason
    c3 = claims.decide_c3(R, C, NAMES, BAR)
    assert c3.status == INCONCLUSIVE and "unconstrained" in c3.reason
    # right at the bar passes
    R[:, 0] = BAR
    assert claims.decide_c2(R, C, NAMES, BAR).status == REPRODUCED


def test_c2_c3_bad_input():
    R, C = table([-6.4, -6.3, -6.45], [0.5, 0.6, 0.4])
    with pytest.raises(ValueError):
        claims.decide_c2(R[:2], C[:2], NAMES, BAR)  # fewer than 3 seeds
    with pytest.raises(ValueError):
        claims.decide_c3(R, C, NAMES[:-1], BAR)  # wrong number of names
    with pytest.raises(ValueError):
        claims.decide_c3(R, C[:, :4], NAMES, BAR)
    bad = R.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError):
        claims.decide_c2(bad, C, NAMES, BAR)


def test_c3_each_status_and_dominance_rule():
    assert claims.dominated(-6.5, 0.7, [-6.5], [0.6])  # equal return, less cost: dominated
    assert not claims.dominated(-6.5, 0.7, [-6.5], [0.7])  # an exact tie dominates nobody
    R, C = table([-6.4, -6.3, -6.45], [0.8, 0.9, 0.75])  # more return than heavy, less cost than others
    assert claims.decide_c3(R, C, NAMES, BAR).status == REPRODUCED
    R, C = table([-6.6, -6.7, -6.8], [0.8, 0.9, 0.75])  # heavy has more return and less cost
    res = claims.decide_c3(R, C, NAMES, BAR)
    assert res.status == NOT_REPRODUCED and all(m < 0 for m in res.figures["dominance margin per seed"])
    R, C = table([-6.4, -6.7, -6.8], [0.8, 0.9, 0.75])
    res = claims.decide_c3(R, C, NAMES, BAR)
    assert res.status == INCONCLUSIVE and res.fragile


def test_build_ledger_is_a_pure_function_of_plain_results():
    R, C = table([-6.4, -6.3, -6.45], [0.5, 0.6, 0.4])
    results = {"names": NAMES, "horizon": 20, "step_size": 0.1, "returns": R, "costs": C,
               "monotonicity": [{"grid": 0, "pairs": 0, "n_pairs": 10}] * 3}
    plain = json.loads(json.dumps({**results, "returns": R.tolist(), "costs": C.tolist()}))
    a, b = claims.build_ledger(results), claims.build_ledger(plain)
    assert a.check_lines() == b.check_lines()
    assert [e.status for e in a._ordered()] == [NOT_TESTED, REPRODUCED, REPRODUCED]


def test_competence_is_checked_in_every_seed():
    # one seed's USB agent stands still while the mean over seeds still clears the bar: rule 2 per
    # seed makes C2 and C3 INCONCLUSIVE (the worst seed fails), and both list the rule-7 change
    usb_r = [-6.4, -6.3, -6.45, -6.4, -6.3, -6.45, -6.4, -6.3, -6.45, BAR - 0.5]
    assert np.mean(usb_r) >= BAR
    R, C = table(usb_r, [0.5] * 10)
    for decide in (claims.decide_c2, claims.decide_c3):
        result = decide(R, C, NAMES, BAR)
        assert result.status == INCONCLUSIVE and "usb (worst seed)" in result.reason
        assert result.fragile and result.changes == claims.COMPETENCE_CHANGES
    # the same seed at the bar passes
    R[-1, 4] = BAR
    assert claims.decide_c2(R, C, NAMES, BAR).status != INCONCLUSIVE
