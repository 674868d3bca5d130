"""End-to-end smoke run, the pass criterion, and bad input to the experiment entry points."""

import numpy as np
import pytest

from icml26.w2sg_bregman import (W2SGConfig, get_config, load_digit_split, part_a_summary, pool_images,
                                 run_digits, run_experiment, run_synthetic)
from icml26.w2sg_bregman.claims import build_ledger


@pytest.fixture(scope="module")
def smoke_results():
    cfg = get_config("smoke")
    return cfg, run_experiment(cfg, device="cpu")


def test_smoke_run(smoke_results):
    cfg, results = smoke_results
    a, b = results["part_a"], results["part_b"]
    assert results["seeds"] == list(range(cfg.seeds))
    assert len(a) == 2 * cfg.seeds * len(cfg.a_noise_levels) * len(cfg.a_widths)
    assert len(b) == cfg.seeds * (len(cfg.b_temperatures) * len(cfg.b_losses) + 1)
    for loss in ("squared", "kl"):
        assert part_a_summary(a, loss)["identity_residual"] < 1e-6
    assert all(0 <= r["student_acc"] <= 1 for r in b)


def test_smoke_statuses(smoke_results):
    """At smoke (20 digits steps) no digits student reaches its teacher's accuracy, so rule 2 makes
    C4 and C5 INCONCLUSIVE; the identity holds by construction; the 400-student synthetic run is
    too small for gain to track misfit."""
    ledger = build_ledger(smoke_results[1])
    status = {k: e.status for k, e in ledger.entries.items()}
    assert status == {"C1": "REPRODUCED", "C2": "PARTLY REPRODUCED", "C3": "NOT TESTED", "C4": "INCONCLUSIVE",
                      "C5": "INCONCLUSIVE", "E1": "NOT REPRODUCED"}
    assert ledger.entries["C1"].by_construction and ledger.entries["C1"].property_claim
    assert not any(c.passed for c in ledger.entries["C4"].competence)
    assert ledger.verdict() == "PARTLY REPRODUCED"


def test_run_experiment_rejects_bad_input():
    with pytest.raises(TypeError, match="W2SGConfig"):
        run_experiment({"seeds": 3})
    with pytest.raises(ValueError, match="seed"):
        run_experiment(get_config("smoke"), seed=-1)


@pytest.mark.parametrize("field, value, allowed", [
    ("seeds", 2, "at least 3"), ("a_widths", (), "widths"), ("a_noise_levels", (-0.1,), "noise levels"),
    ("b_lr", 0.0, "> 0"), ("b_pool", 3, "1, 2, 4 or 8"), ("b_temperatures", (1.0,), "two temperatures"),
    ("b_losses", ("ce", "rce"), "including 'ce', 'rce' and 'sl'"), ("b_rce_eps", 1.0, r"\[0, 1\)"),
    ("b_steps", 0, "integer >= 1"), ("a_classes", 1, ">= 2"),
])
def test_config_validates_its_fields(field, value, allowed):
    with pytest.raises(ValueError, match=f"{field}.*allowed: .*{allowed}"):
        get_config("smoke", **{field: value})
    assert isinstance(get_config("smoke"), W2SGConfig)


def test_smoke_is_deterministic(smoke_results):
    cfg, results = smoke_results
    b = results["part_b"]
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
