"""End-to-end smoke run, the pass criterion, and bad input to the experiment entry points."""

import numpy as np
import pytest

from icml26.w2sg_bregman import (get_config, load_digit_split, part_a_summary, pool_images,
                                 run_digits, run_synthetic)
from icml26.common.ledger import Ledger
from icml26.w2sg_bregman.claims import CLAIM_IDS, ledger_statuses


@pytest.fixture(scope="module")
def smoke_rows():
    cfg = get_config("smoke")
    a = run_synthetic(cfg, "squared") + run_synthetic(cfg, "kl")
    b = run_digits(cfg, list(range(cfg.seeds)))
    return cfg, a, b


def test_smoke_run(smoke_rows):
    cfg, a, b = smoke_rows
    assert len(a) == 2 * cfg.seeds * len(cfg.a_noise_levels) * len(cfg.a_widths)
    assert len(b) == cfg.seeds * (len(cfg.b_temperatures) * len(cfg.b_losses) + 1)
    for loss in ("squared", "kl"):
        assert part_a_summary(a, loss)["identity_residual"] < 1e-6
    assert all(0 <= r["student_acc"] <= 1 for r in b)
    ledger = Ledger("w2sg_bregman", CLAIM_IDS).extend(ledger_statuses(a, b))
    assert ledger.entries["C1"].status == "REPRODUCED" and ledger.entries["C3"].status == "NOT TESTED"
    assert ledger.verdict() in ("REPRODUCED", "PARTLY REPRODUCED", "NOT REPRODUCED")


def test_smoke_is_deterministic(smoke_rows):
    cfg, _, b = smoke_rows
    again = run_digits(cfg, list(range(cfg.seeds)))
    assert [r["student_acc"] for r in again] == [r["student_acc"] for r in b]


def test_pooling_shapes_and_values():
    x = np.arange(2 * 64, dtype=np.float32).reshape(2, 64)
    pooled = pool_images(x, 2)
    assert pooled.shape == (2, 16)
    assert pooled[0, 0] == np.mean([0, 1, 8, 9])
    assert pool_images(x, 8).shape == (2, 1)


def test_bad_settings_are_rejected():
    cfg = get_config("smoke")
    with pytest.raises(ValueError, match="valid presets"):
        get_config("huge")
    with pytest.raises(ValueError, match="unknown config field"):
        get_config("smoke", widths=3)
    with pytest.raises(ValueError, match="unknown Bregman loss"):
        run_synthetic(cfg, "hinge")
    with pytest.raises(ValueError, match="temperature"):
        run_digits(cfg, [0], temperatures=(1.0, 0.0))
    with pytest.raises(ValueError, match="unknown w2s loss"):
        run_digits(cfg, [0], losses=("ce", "focal"))
    with pytest.raises(ValueError, match="width"):
        run_digits(cfg, [0], hidden=0)
    with pytest.raises(ValueError, match="block"):
        pool_images(np.zeros((1, 64)), 3)
    with pytest.raises(ValueError, match="8x8"):
        pool_images(np.zeros((1, 10)), 2)
    with pytest.raises(ValueError, match="n_teacher"):
        load_digit_split(5, 100, 0)
