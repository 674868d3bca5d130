"""Decision functions of the dq_sync ledger, on hand-made figures, on both sides of every boundary."""

import numpy as np
import pytest

from icml26.common.ledger import INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED, Ledger
from icml26.dq_sync import claims as C


def test_claim_ids_match_claims_md():
    assert C.CLAIM_IDS == ("C1", "C2", "C3", "C4")
    Ledger("dq_sync", C.CLAIM_IDS)


def test_c1_boundaries():
    ok = C.decide_c1([0.5, 0.6, 0.7], [True] * 3, [True] * 3)
    assert ok.status == REPRODUCED and not ok.fragile
    at = C.decide_c1([0.5, 0.6, C.C1_MAX_RATE], [True] * 3, [True] * 3)  # rate must be strictly below
    assert at.status == INCONCLUSIVE and at.fragile
    assert C.decide_c1([1.2, 1.1, 1.3], [True] * 3, [True] * 3).status == NOT_REPRODUCED
    assert C.decide_c1([0.5] * 3, [False] * 3, [True] * 3).status == NOT_REPRODUCED
    assert C.decide_c1([0.5] * 3, [True] * 3, [True, False, True]).status == INCONCLUSIVE


def test_c1_bad_input():
    with pytest.raises(TypeError):
        C.decide_c1([0.5] * 3, [1, 1, 1], [True] * 3)
    with pytest.raises(ValueError):
        C.decide_c1([0.5] * 3, [True] * 2, [True] * 3)
    with pytest.raises(ValueError):
        C.decide_c1([0.5, 0.6], [True] * 2, [True] * 2)  # fewer than 3 seeds
    with pytest.raises(ValueError):
        C.decide_c1([np.nan] * 3, [True] * 3, [True] * 3)


def _pairs(delta_rot, delta_trans, n=40, seed=0):
    rng = np.random.default_rng(seed)
    eig_r = 5 + rng.random(n)
    eig_t = 0.1 + 0.01 * rng.random(n)
    return (eig_r * (1 + delta_rot + 0.001 * rng.standard_normal(n)), eig_r,
            eig_t * (1 + delta_trans + 0.001 * rng.standard_normal(n)), eig_t)


def test_c2_statuses():
    assert C.decide_c2(*_pairs(-0.2, -0.2), [True, True], [True, True]).status == REPRODUCED
    part = C.decide_c2(*_pairs(-0.2, +0.03), [True, True], [False, False])
    assert part.status == PARTLY_REPRODUCED and "rotation" in part.reason
    # significantly better overall, but not lower at one density: that metric does not hold
    assert C.decide_c2(*_pairs(-0.2, -0.2), [True, False], [True, True]).status == PARTLY_REPRODUCED
    none = C.decide_c2(*_pairs(+0.01, +0.03), [False, False], [False, False])
    assert none.status == NOT_REPRODUCED and none.reason


def test_c2_equivalence_band_and_inconclusive():
    rng = np.random.default_rng(1)
    eig = 1 + rng.random(40)
    # symmetric noise, no effect, |mean rel diff| tiny: within C2_EQUIV -> NOT REPRODUCED
    noise = 0.01 * rng.standard_normal(40)
    assert C.decide_c2(eig * (1 + noise), eig, eig * (1 - noise), eig, [True], [True]).status == NOT_REPRODUCED
    # huge symmetric noise: |mean rel diff| beyond the band, no significance -> INCONCLUSIVE
    # relative +50% on half the runs, -30% on the other half, with equal absolute differences
    up = np.arange(40) % 2 == 0
    base = np.where(up, 1.0, 5.0 / 3.0)
    wild = np.where(up, 1.5, 0.7)
    s = C.decide_c2(base * wild, base, base * wild, base, [True], [True])
    assert abs(np.mean(wild - 1)) > C.C2_EQUIV and s.status == INCONCLUSIVE
    few = C.decide_c2(eig[:10], eig[:10], eig[:10], eig[:10], [True], [True])
    assert few.status == INCONCLUSIVE


def test_c2_bad_input():
    a, b, c, d = _pairs(-0.2, -0.2)
    with pytest.raises(ValueError):
        C.decide_c2(a[:-1], b, c, d, [True], [True])
    with pytest.raises(TypeError):
        C.decide_c2(a, b, c, d, ["yes"], [True])
    with pytest.raises(ValueError):
        C.decide_c2(a, b, c, d, [True, True], [True])


def test_c3_boundaries():
    assert C.decide_c3([1.0, 1.0, 1.0], [2.0, 2.1, 1.9], 200).status == REPRODUCED
    assert C.decide_c3([1.0, 1.0, 1.0], [1.0, 1.0, 1.0], 200).status == NOT_REPRODUCED  # equal is not faster
    mixed = C.decide_c3([1.0, 1.0, 1.0], [1.1, 0.9, 1.2], 200)
    assert mixed.status == INCONCLUSIVE and mixed.fragile
    with pytest.raises(ValueError):
        C.decide_c3([1.0, 1.0], [1.0, 1.0], 200)  # fewer than 3 repeats
    with pytest.raises(ValueError):
        C.decide_c3([1.0] * 3, [1.0] * 2, 200)
    with pytest.raises(ValueError):
        C.decide_c3([1.0] * 3, [1.0] * 3, 0)


def test_c4_boundaries():
    assert C.decide_c4(C.C4_MAX_ROT_DEG, C.C4_MAX_RMSE).status == REPRODUCED
    assert C.decide_c4(C.C4_MAX_ROT_DEG + 1e-9, 0.0).status == NOT_REPRODUCED
    assert C.decide_c4(0.0, C.C4_MAX_RMSE + 1e-9).status == NOT_REPRODUCED
    with pytest.raises(ValueError):
        C.decide_c4(float("nan"), 0.01)
    with pytest.raises(ValueError):
        C.decide_c4(-1.0, 0.01)


def test_e1_boundaries():
    at = C.decide_e1([True] * 90 + [False] * 10)  # share exactly E1_MIN_IMPROVES = 0.9
    assert at.status == REPRODUCED and at.extension and at.fragile
    assert C.decide_e1([True] * 89 + [False] * 11).status == NOT_REPRODUCED
    clean = C.decide_e1([True] * 100)
    assert clean.status == REPRODUCED and not clean.fragile
    with pytest.raises(TypeError):
        C.decide_e1([1, 0, 1])
    with pytest.raises(ValueError):
        C.decide_e1([])


def test_subspace_block_must_hold_the_eigenspace():
    from scipy.sparse import identity

    from icml26.dq_sync.baselines import subspace_top4

    with pytest.raises(ValueError, match="block"):
        subspace_top4(identity(20, format="csr"), block=3)
