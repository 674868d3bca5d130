import json

import numpy as np
import pytest
import torch

from icml26.evidence import from_plain, to_plain
from icml26.tt_sparse import (PRESETS, TTSparseConfig, TTSparseLayer, TTSparseModel, ThermometerEncoder, get_config,
                              load_split, run_experiment, task_metric)
from icml26.tt_sparse.claims import build_ledger


def test_encoder_thermometer_and_nan_rejection():
    X = np.random.default_rng(0).normal(size=(100, 3))
    enc = ThermometerEncoder(n_thresholds=9).fit(X)
    B = enc.transform(X)
    assert B.shape == (100, 27) and set(np.unique(B)) <= {0.0, 1.0}
    # thermometer: within a feature the bits are monotone in the threshold
    assert np.all(np.diff(B[:, :9], axis=1) <= 0)
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        enc.transform(X)
    with pytest.raises(ValueError, match="2-D"):
        ThermometerEncoder().fit(np.zeros(5))


def test_layer_rejects_k_larger_than_inputs_and_unknown_names():
    with pytest.raises(ValueError, match="between 1 and the number of inputs"):
        TTSparseLayer(n_inputs=5, n_nodes=3, k=6)
    with pytest.raises(ValueError, match="unknown dataset"):
        load_split("iris")
    with pytest.raises(ValueError, match="unknown task"):
        task_metric("ranking", np.zeros(3), np.zeros(3))


@pytest.mark.parametrize("field,value,allowed", [
    ("k", 0, "integer >= 1"), ("n_nodes", -1, "integer >= 1"), ("n_seeds", 2, "rule 1"),
    ("other_seeds", 1, "rule 1"), ("tau_end", 0.5, "tau_end <= tau_start"), ("lr", 0.0, "positive"),
    ("dropout", 1.0, "dropout < 1"), ("test_size", 1.2, "between 0 and 1"), ("tree_depths", (), "non-empty"),
    ("datasets", ("iris",), "breast_cancer"), ("datasets", ("wine", "wine"), "distinct"),
])
def test_config_refuses_out_of_range_fields(field, value, allowed):
    with pytest.raises(ValueError, match=f"TTSparseConfig.{field}") as err:
        TTSparseConfig(**{field: value})
    assert allowed in str(err.value)
    with pytest.raises(ValueError, match=f"TTSparseConfig.{field}"):
        get_config("smoke", **{field: value})


def test_every_preset_runs_rule_1_seeds_and_the_evidence_preset_runs_ripper_twice():
    assert all(c.n_seeds >= 3 and c.other_seeds >= 3 for c in PRESETS.values())
    ev = PRESETS["evidence"]
    assert ev.n_seeds >= 10 and ev.other_seeds >= 10
    assert {"breast_cancer", "diabetes_binary"} <= set(ev.datasets)  # two binary datasets: RIPPER on both


def test_diabetes_binary_is_a_balanced_binary_task():
    split = load_split("diabetes_binary", 0)
    y = np.concatenate([split.y_train, split.y_val, split.y_test])
    assert split.task == "binary" and set(np.unique(y)) == {0, 1}
    assert 0.45 < y.mean() < 0.55  # the median split


def test_head_folding_and_freezing_preserve_the_function(device):
    torch.manual_seed(0)
    m = TTSparseModel(n_inputs=30, n_outputs=3, n_nodes=8, k=4, seed=0, device=device)
    X = (torch.rand(200, 30) < 0.5).float().to(device)
    m.train()
    for _ in range(3):  # populate BatchNorm running statistics
        m(X)
    m.eval()
    with torch.no_grad():
        z = m.layer(X)
        A, c = m.fold_head()
        assert torch.allclose(m.head(z), z @ A.T + c, atol=1e-5)
        fr = m.freeze()
        assert torch.allclose(fr(X), m(X), atol=1e-4)


@pytest.fixture(scope="module")
def smoke_results():
    return run_experiment(get_config("smoke"), seed=0, device="cpu")


def test_smoke_run_end_to_end(smoke_results):
    cfg = get_config("smoke")
    rows = smoke_results["rows"]
    assert smoke_results["seeds"] == [0, 1, 2]
    tt = [r for r in rows if r["method"] == "TT-Sparse (pruned)"]
    assert len(tt) == cfg.n_seeds and all(0.5 < r["metric"] <= 1.0 for r in tt)
    ex = smoke_results["example"]
    assert ex["exact"] is True and ex["dnf"].strip() and ex["cnf"].strip() and ex["complexity"] >= 1


def test_smoke_ledger_statuses(smoke_results):
    ledger = build_ledger(smoke_results)
    # C1: exact on every model; C2: smoke runs one dataset, so each baseline ran on fewer than two
    # datasets and the claim is undecided; C3: learned beats random in 3 of 3 smoke seeds, fragile
    # because three seeds give a wide interval (figures of the pinned numerics, tests/conftest.py).
    assert ledger.check_lines().splitlines() == [
        "C1 REPRODUCED (by construction): nodes and the whole model convert exactly into DNF/CNF rules",
        "C2 INCONCLUSIVE (fragile): matched-complexity accuracy at least that of rule and tree baselines",
        "C3 REPRODUCED (fragile): learned soft-TopK connections beat random ones",
        "Verdict: PARTLY REPRODUCED (3 tested claims: 2 reproduced, 1 inconclusive)",
    ]
    plain = from_plain(json.loads(json.dumps(to_plain(smoke_results))))
    assert build_ledger(plain).record() == ledger.record()


def test_baseline_complexities_use_the_shared_measure():
    from icml26.tt_sparse.baselines import decision_tree, l1_linear, ripper
    rng = np.random.default_rng(0)
    X = (rng.random((300, 6)) < 0.5).astype(np.float32)
    y = ((X[:, 0] > 0) ^ (X[:, 1] > 0)).astype(int)
    _, cx = decision_tree("binary", 2, X, y)
    assert cx == 15  # 4 leaves x (2 literals + 1 AND) + 3 '+'
    _, cx1 = decision_tree("binary", 1, X, y)
    assert cx1 == 3
    score, cx_l1 = l1_linear("binary", 1.0, X, y)
    assert score(X).shape == (300, 1) and cx_l1 >= 1
    out = ripper(X, y)
    if out is not None:  # wittgenstein installed
        assert out[1] >= 1 and out[0](X).shape == (300, 1)
