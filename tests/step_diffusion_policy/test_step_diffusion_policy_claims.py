import numpy as np
import pytest

from icml26.common.ledger import INCONCLUSIVE, NOT_REPRODUCED, PARTLY_REPRODUCED, REPRODUCED
from icml26.step_diffusion_policy import claims

N = 60


def succ(rate, n=N, seed=0):
    """n episodes with exactly round(rate * n) successes, shuffled."""
    a = np.zeros(n)
    a[: int(round(rate * n))] = 1
    return np.random.default_rng(seed).permutation(a)


def paired(base_rate, extra, n=N):
    """baseline successes, and the method = baseline + `extra` share of the episodes flipped to success."""
    b = np.zeros(n)
    b[: int(round(base_rate * n))] = 1
    m = b.copy()
    m[int(round(base_rate * n)): int(round((base_rate + extra) * n))] = 1
    return m, b


def test_claim_ids_and_sizes():
    assert claims.CLAIM_IDS == ("C1", "C2", "C3", "C4")
    assert claims.C1_MIN_GAIN_DDIM == pytest.approx(0.10) and claims.C1_MIN_GAIN_SPATIAL == pytest.approx(0.06)


def test_paired_gain_each_status():
    m, b = paired(0.3, 0.3)
    assert claims.paired_gain(m, b, 0.10)["status"] == REPRODUCED
    m, b = paired(0.3, 0.15)  # significant, under the size 0.2
    assert claims.paired_gain(m, b, 0.20)["status"] == PARTLY_REPRODUCED
    m, b = paired(0.3, 0.0)
    assert claims.paired_gain(m, b, 0.10)["status"] == NOT_REPRODUCED  # absent
    b2, m2 = paired(0.3, 0.3)
    assert claims.paired_gain(m2, b2, 0.10)["status"] == NOT_REPRODUCED  # reversed
    m, b = paired(0.3, 1 / N)  # one more success: not significant, positive
    assert claims.paired_gain(m, b, 0.10)["status"] == INCONCLUSIVE
    z = np.zeros(N)
    assert claims.paired_gain(z, z, 0.10)["status"] == INCONCLUSIVE  # all at the floor


def test_c1_combination_and_size_boundary():
    step, ddim = paired(0.3, 0.3)
    spatial = ddim.copy()
    assert claims.decide_c1(step, ddim, spatial).status == REPRODUCED
    assert claims.decide_c1(step, ddim, step).status == PARTLY_REPRODUCED  # holds vs DDIM only
    assert claims.decide_c1(ddim, step, step).status == NOT_REPRODUCED  # reversed vs DDIM, absent vs spatial
    # gain exactly 0.10 vs DDIM-2 (significant) is enough; 0.0833 is not
    s10, d10 = paired(0.3, 0.1, n=150)
    assert claims.paired_gain(s10, d10, claims.C1_MIN_GAIN_DDIM)["status"] == REPRODUCED
    s8, d8 = paired(0.3, 13 / 150, n=150)
    assert claims.paired_gain(s8, d8, claims.C1_MIN_GAIN_DDIM)["status"] == PARTLY_REPRODUCED


def test_bad_input():
    with pytest.raises(ValueError):
        claims.decide_c1(np.ones(10), np.ones(10), np.ones(10))  # fewer than 30 items
    with pytest.raises(ValueError):
        claims.decide_c1(np.ones(N), np.ones(N - 1), np.ones(N))
    with pytest.raises(ValueError):
        claims.paired_gain(np.ones(N), np.ones(N), 0.1, n_groups=7)  # does not divide
    with pytest.raises(ValueError):
        claims.paired_gain(np.ones(N), np.ones(N), 0.1, n_groups=True)
    with pytest.raises(ValueError):
        claims.decide_c2(True, 1.0)
    with pytest.raises(ValueError):
        claims.decide_c2(0.1, 0.0)
    with pytest.raises(ValueError):
        claims.decide_c3(np.ones(5))
    with pytest.raises(ValueError):
        claims.decide_c4(np.full(N, 0.5), np.zeros(N))
    with pytest.raises(ValueError):
        claims.decide_extension("E3", np.ones(N), np.ones(N))


def test_c2_boundary():
    assert claims.decide_c2(0.15, 1.0).status == REPRODUCED
    assert claims.decide_c2(0.16, 1.0).status == NOT_REPRODUCED
    both = claims.decide_c2(0.1, 1.0, 0.5, 1.0)  # decided at batch 1; the batch ratio is only reported
    assert both.status == REPRODUCED and len(both.figures) == 2
    with pytest.raises(ValueError):
        claims.decide_c2(0.1, 1.0, 0.5, None)


def test_no_fragile_flag_when_nothing_differs():
    z = np.zeros(N)
    assert claims.paired_gain(z, z, 0.0, n_groups=3)["fragile"] is False


def test_c3_statuses():
    rng = np.random.default_rng(0)
    e0 = rng.uniform(1, 2, N)
    shrinking = np.stack([e0, 0.8 * e0, 0.5 * e0], 1)
    assert claims.decide_c3(shrinking).status == REPRODUCED
    bump = np.stack([e0, 1.2 * e0, 0.5 * e0], 1)
    assert claims.decide_c3(bump).status == PARTLY_REPRODUCED
    growing = np.stack([e0, 1.2 * e0, 1.5 * e0], 1)
    assert claims.decide_c3(growing).status == NOT_REPRODUCED


def test_c4_statuses():
    without, with_ = paired(0.1, 0.4)  # 50 % stall without, 10 % with
    assert claims.decide_c4(with_, without).status == REPRODUCED
    assert claims.decide_c4(without, with_).status == NOT_REPRODUCED
    z = np.zeros(N)
    assert claims.decide_c4(z, z).status == INCONCLUSIVE
    wo1, w1 = paired(0.1, 1 / N)
    assert claims.decide_c4(w1, wo1).status == INCONCLUSIVE  # one more stall without: not resolved


def test_extension_statuses():
    m, b = paired(0.3, 0.3)
    assert claims.decide_extension("E1", m, b).status == REPRODUCED
    assert claims.decide_extension("E2", b, m).status == NOT_REPRODUCED
