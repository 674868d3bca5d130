import numpy as np
import pytest
import torch

from icml26.common.ledger import INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED
from icml26.usb_rl import claims
from icml26.usb_rl.score import MonotoneScore

NAMES = ["unconstrained", "linear 0.1", "linear 1", "lagrangian", "usb"]


def table(usb_r, usb_c, heavy_r=-6.5, heavy_c=0.7, unc_c=10.0):
    """3 seeds x 5 methods; USB's values per seed."""
    R = np.array([[-5.8, -5.6, heavy_r, -8.0, r] for r in usb_r])
    C = np.array([[unc_c, 6.5, heavy_c, 1.0, c] for c in usb_c])
    return R, C


def test_claim_ids_match_claims_md():
    assert claims.CLAIM_IDS == ("C1", "C2", "C3")


def test_c1_boundary_and_bad_input():
    assert claims.decide_c1([0, 0, 0], [0, 0, 0], [10, 12, 9]).status == REPRODUCED
    assert claims.decide_c1([0, 1, 0], [0, 0, 0], [10, 12, 9]).status == NOT_REPRODUCED
    assert claims.decide_c1([0, 0, 0], [0, 0, 2], [10, 12, 9]).status == NOT_REPRODUCED
    with pytest.raises(TypeError):
        claims.decide_c1([True, 0, 0], [0, 0, 0], [1, 1, 1])
    with pytest.raises(ValueError):
        claims.decide_c1([0, 0], [0, 0, 0], [1, 1, 1])


def test_monotonicity_check_counts_zero_for_the_monotone_net_and_catches_a_non_monotone_one():
    g = torch.Generator().manual_seed(0)
    s = MonotoneScore(8, g)
    r, c = torch.randn(64, generator=g), torch.rand(64, generator=g) * 5
    out = claims.monotonicity_violations(s, r, c, n_grid=11)
    assert out["grid"] == 0 and out["pairs"] == 0 and out["n_pairs"] > 0

    class Bad(torch.nn.Module):  # rewards cost: must be caught on the grid and on the pairs
        def forward(self, g_r, g_c):
            return g_r + 2.0 * g_c

    bad = claims.monotonicity_violations(Bad(), r, c, n_grid=11)
    assert bad["grid"] > 0 and bad["pairs"] > 0


def test_c2_each_status():
    R, C = table([-6.4, -6.3, -6.45], [0.5, 0.6, 0.4])  # cuts and keeps return in every seed
    assert claims.decide_c2(R, C, NAMES).status == REPRODUCED
    R, C = table([-6.6, -6.7, -6.8], [0.5, 0.6, 0.4])  # cuts, never keeps return
    assert claims.decide_c2(R, C, NAMES).status == PARTLY_REPRODUCED
    R, C = table([-6.4, -6.7, -6.45], [0.5, 0.6, 0.4])  # return kept in 2 of 3 seeds
    assert claims.decide_c2(R, C, NAMES).status == INCONCLUSIVE
    R, C = table([-6.6, -6.7, -6.8], [6.0, 5.5, 7.0])  # cost ratio > 0.5 everywhere
    assert claims.decide_c2(R, C, NAMES).status == NOT_REPRODUCED
    # exactly at the boundary: ratio 0.5 and gap 0 hold
    R, C = table([-6.5, -6.5, -6.5], [5.0, 5.0, 5.0])
    assert claims.decide_c2(R, C, NAMES).status == REPRODUCED


def test_c2_c3_bad_input():
    R, C = table([-6.4, -6.3, -6.45], [0.5, 0.6, 0.4])
    with pytest.raises(ValueError):
        claims.decide_c2(R[:2], C[:2], NAMES)  # fewer than 3 seeds
    with pytest.raises(ValueError):
        claims.decide_c3(R, C, NAMES[:-1])  # wrong number of names
    with pytest.raises(ValueError):
        claims.decide_c3(R, C[:, :4], NAMES)
    bad = R.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError):
        claims.decide_c2(bad, C, NAMES)


def test_c3_each_status_and_dominance_rule():
    assert claims.dominated(-6.5, 0.7, [-6.5], [0.6])  # equal return, less cost: dominated
    assert not claims.dominated(-6.5, 0.7, [-6.5], [0.7])  # an exact tie dominates nobody
    R, C = table([-6.4, -6.3, -6.45], [0.8, 0.9, 0.75])  # more return than heavy, less cost than others
    assert claims.decide_c3(R, C, NAMES).status == REPRODUCED
    R, C = table([-6.6, -6.7, -6.8], [0.8, 0.9, 0.75])  # heavy has more return and less cost
    res = claims.decide_c3(R, C, NAMES)
    assert res.status == NOT_REPRODUCED and all(m < 0 for m in res.figures["dominance margin per seed"])
    R, C = table([-6.4, -6.7, -6.8], [0.8, 0.9, 0.75])
    assert claims.decide_c3(R, C, NAMES).status == INCONCLUSIVE
