from itertools import product

import numpy as np
import pytest
import torch

from icml26.tt_sparse import (FrozenTTSparse, ThermometerEncoder, check_exact, enumerate_truth_table, explain,
                              formula_complexity, minimise, predict_rules)


def _random_frozen(seed, M=8, F=25, k=4, out=1, prune_some=True):
    g = torch.Generator().manual_seed(seed)
    idx = torch.stack([torch.randperm(F, generator=g)[:k] for _ in range(M)])
    fr = FrozenTTSparse(idx, torch.randn(M, k, generator=g), torch.randn(M, generator=g) * 0.5,
                        torch.randn(out, M, generator=g), torch.randn(out, generator=g))
    if prune_some:
        fr.edge_mask[0, :] = 0  # a constant node
        fr.edge_mask[1, 1] = 0
        fr.head_mask[:, 2] = 0
    return fr


@pytest.mark.parametrize("form", ["dnf", "cnf"])
def test_minimisation_agrees_with_brute_force(form):
    rng = np.random.default_rng(0)
    for _ in range(30):
        k = int(rng.integers(1, 6))
        rows = list(product((0, 1), repeat=k))
        truth = rng.random(len(rows)) < 0.5
        care = rng.random(len(rows)) < 0.8
        on = [r for r, t, c in zip(rows, truth, care) if t and c]
        dc = [r for r, c in zip(rows, care) if not c]
        f = minimise(range(k), on, dc, form)
        got = f.evaluate(np.array(rows, dtype=np.float32))
        assert np.array_equal(got[care], truth[care])


def test_minimisation_finds_the_minimal_formula():
    # x0 AND x1 OR x0 AND NOT x1 == x0 (one literal)
    f = minimise([0, 1], [(1, 0), (1, 1)], form="dnf")
    assert f.clauses == (((0, True),),) and f.complexity == 1
    assert minimise([0, 1], []).constant is False
    assert minimise([0, 1], list(product((0, 1), repeat=2))).constant is True
    assert formula_complexity((((0, True), (1, False)), ((2, True),))) == 5  # 3 literals + AND + OR


def test_truth_table_matches_direct_enumeration():
    fr = _random_frozen(1)
    w = (fr.w * fr.edge_mask).detach().numpy().astype(np.float64)
    for j in range(fr.n_nodes):
        bits, patterns, out = enumerate_truth_table(fr, j)
        slots = np.nonzero(fr.edge_mask[j].numpy())[0]
        direct = patterns @ w[j, slots] + float(fr.b[j].detach()) > 0
        margin = np.abs(patterns @ w[j, slots] + float(fr.b[j].detach())) > 1e-5
        assert np.array_equal(direct[margin], out[margin])
        assert len(bits) == len(slots)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dnf_and_cnf_equal_every_node_on_all_inputs(seed):
    fr = _random_frozen(seed, prune_some=False)
    rules = explain(fr, dont_cares="none")
    for r, j in enumerate(rules.node_ids):
        k = fr.idx.shape[1]
        x = torch.zeros(2 ** k, 25)
        x[:, fr.idx[j]] = torch.tensor(list(product((0.0, 1.0), repeat=k)))
        net = fr.nodes(x)[:, j].detach().numpy() > 0.5
        assert np.array_equal(rules.dnf[r].evaluate(x.numpy()), net)
        assert np.array_equal(rules.cnf[r].evaluate(x.numpy()), net)


@pytest.mark.parametrize("seed,out,task", [(0, 1, "binary"), (3, 3, "multiclass"), (4, 1, "regression")])
def test_model_rules_equivalence_on_random_data(seed, out, task):
    fr = _random_frozen(seed, out=out)
    X = (np.random.default_rng(seed).random((500, 25)) < 0.5).astype(np.float32)
    rules = explain(fr, dont_cares="none", task=task)
    exact, diff = check_exact(fr, rules, X)
    assert exact and diff < 1e-5
    # breaking one rule must break the equivalence (the check can fail)
    rules.intercept = rules.intercept + 10.0
    assert not check_exact(fr, rules, X)[0]


def test_structural_dont_cares_are_impossible_patterns():
    X = np.arange(20, dtype=float).reshape(10, 2)
    enc = ThermometerEncoder(n_thresholds=3).fit(X)
    bits = np.array([0, 1])  # two thresholds of feature 0, ascending
    assert enc.impossible(bits, np.array([0, 1]))  # x >= t2 but not x >= t1
    assert not enc.impossible(bits, np.array([1, 0]))
    B = enc.transform(X)
    assert not any(enc.impossible(np.arange(enc.n_bits), row) for row in B)


def test_bad_inputs_are_rejected():
    with pytest.raises(ValueError, match="form"):
        minimise([0], [(1,)], form="xor")
    with pytest.raises(ValueError, match="one bit per variable"):
        minimise([0, 1], [(1,)])
    fr = _random_frozen(0)
    with pytest.raises(ValueError, match="dont_cares"):
        explain(fr, dont_cares="sometimes")
    with pytest.raises(ValueError, match="out of range"):
        enumerate_truth_table(fr, 99)
    with pytest.raises(ValueError, match="2-D"):
        predict_rules(explain(fr, dont_cares="none"), np.zeros(25))


def test_unseen_dont_cares_are_exact_on_training_rows_and_shorter():
    fr = _random_frozen(5, prune_some=False)
    X = (np.random.default_rng(5).random((12, 25)) < 0.5).astype(np.float32)  # few rows: many unseen patterns
    loose = explain(fr, X_train=X, dont_cares="unseen")
    strict = explain(fr, dont_cares="none")
    assert check_exact(fr, loose, X)[0]
    assert loose.complexity() <= strict.complexity()
    with pytest.raises(ValueError, match="needs X_train"):
        explain(fr, dont_cares="unseen")
