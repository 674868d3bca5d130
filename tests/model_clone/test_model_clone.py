"""Tests of the model-cloning chapter: invariances, exactness, symmetry, errors, smoke run."""

import warnings

import networkx as nx
import numpy as np
import pytest
import torch
from torch import nn

from icml26.model_clone import experiment as E
from icml26.model_clone.baselines import aligned_cosine, state_dict_jaccard
from icml26.model_clone.clones import CloneSpec, apply_clone, magnitude_prune, permute_hidden_units, rescale_layers
from icml26.model_clone.config import get_config
from icml26.model_clone.detector import balanced_accuracy, calibrate_threshold, clone_scores, fingerprint
from icml26.model_clone.graph import GraphExportError, ged_similarity, normalised_graph, wl_similarity
from icml26.model_clone.models import RenamedNet, make_cnn, make_mlp, rewrap_containers
from icml26.model_clone.weights import (UNPAIRED_COST, describe_tensor, node_distance, truncated_wasserstein,
                                        weight_distance, weight_similarity)

warnings.filterwarnings("ignore", category=FutureWarning)
EX = (torch.zeros(2, 1, 8, 8),)


@pytest.fixture(scope="module")
def models():
    torch.manual_seed(0)
    return {"mlp": make_mlp((64, 32, 16, 10)).eval(), "cnn": make_cnn((4, 8)).eval()}


@pytest.fixture(scope="module")
def config():
    return get_config("smoke")


@pytest.mark.parametrize("arch", ["mlp", "cnn"])
@pytest.mark.parametrize("op", ["rename", "container", "permute", "rescale"])
def test_type1_type2_clones_are_identical_functions_and_score_one(models, config, arch, op):
    base = models[arch]
    clone = apply_clone(base, CloneSpec(op, 3.0), None, None, config, torch.Generator().manual_seed(1))
    x = torch.rand(5, 1, 8, 8)
    torch.testing.assert_close(clone(x), base(x), atol=1e-5, rtol=1e-4)  # same function
    s = clone_scores(fingerprint(base, EX), fingerprint(clone, EX))
    assert s["S_G"] == pytest.approx(1.0, abs=1e-12)
    assert s["S_W"] == pytest.approx(1.0, abs=1e-5)
    assert s["S"] == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("arch", ["mlp", "cnn"])
def test_graph_normalisation_stable_under_renaming_and_containers(models, arch):
    g0 = normalised_graph(models[arch], EX).graph
    for variant in (RenamedNet(models[arch]), rewrap_containers(models[arch])):
        g1 = normalised_graph(variant.eval(), EX).graph
        assert nx.is_isomorphic(g0, g1, node_match=lambda a, b: a["label"] == b["label"])
        assert wl_similarity(g0, g1) == pytest.approx(1.0)
        assert not any(d["label"] in ("noop", "getitem", "view", "permute") for _, d in g1.nodes(data=True))


def test_structure_separates_architectures(models):
    g_mlp, g_cnn = normalised_graph(models["mlp"], EX).graph, normalised_graph(models["cnn"], EX).graph
    assert wl_similarity(g_mlp, g_cnn) < 0.5
    assert wl_similarity(g_mlp, g_cnn) == pytest.approx(wl_similarity(g_cnn, g_mlp))
    assert ged_similarity(g_mlp, g_mlp) == pytest.approx(1.0)
    assert ged_similarity(g_mlp, g_cnn) < 1.0


def test_statistics_are_permutation_invariant(device):
    w = torch.randn(24, 40, device=device) ** 3
    p = w[torch.randperm(24, device=device)][:, torch.randperm(40, device=device)]
    a, b = describe_tensor(w, "linear/weight"), describe_tensor(p, "linear/weight")
    np.testing.assert_allclose(a.quantiles, b.quantiles, atol=1e-6)
    np.testing.assert_allclose(a.moments, b.moments, atol=1e-5)
    np.testing.assert_allclose(a.spectrum, b.spectrum, atol=1e-5)
    assert truncated_wasserstein(a, b) == pytest.approx(0.0, abs=1e-9)
    # ...but they do see a real change
    c = describe_tensor(w + 0.5 * w.std() * torch.randn_like(w), "linear/weight")
    assert truncated_wasserstein(a, c) > 1e-3


def test_pruned_copy_compared_on_kept_weights():
    w = torch.randn(32, 32)
    layer = nn.Linear(32, 32)
    with torch.no_grad():
        layer.weight.copy_(w)
    pruned = magnitude_prune(nn.Sequential(layer), 0.5)[0].weight
    a, b = describe_tensor(w, "linear/weight"), describe_tensor(pruned, "linear/weight")
    assert b.sparsity == pytest.approx(0.5, abs=0.01)
    assert truncated_wasserstein(a, b) == pytest.approx(0.0, abs=1e-9)


def test_paired_slot_never_costs_more_than_an_unpaired_one():
    """A replaced classifier head (10 x 64 against 2 x 64): the zero-padded spectra of different
    rank are far apart (raw L1 > 1), but pairing the two slots may not cost more than leaving
    them unpaired."""
    g = torch.Generator().manual_seed(0)
    old = describe_tensor(torch.randn(10, 64, generator=g), "linear/weight")
    new = describe_tensor(torch.randn(2, 64, generator=g), "linear/weight")
    raw = truncated_wasserstein(old, new) + float(np.abs(old.spectrum - new.spectrum).sum())
    assert raw > UNPAIRED_COST  # the situation the cap is for
    assert node_distance(old, new) == pytest.approx(UNPAIRED_COST)
    w = torch.randn(64, 64, generator=g)
    body = describe_tensor(w, "linear/weight")
    paired = weight_distance([body, old], [body, new])
    alone = (old.numel + new.numel) * UNPAIRED_COST / (2 * body.numel + old.numel + new.numel)
    assert paired <= alone + 1e-12
    # nearby tensors are not affected by the cap: their distance stays the uncapped sum
    near = describe_tensor(w + 0.05 * torch.randn(64, 64, generator=g), "linear/weight")
    raw_near = truncated_wasserstein(body, near) + float(np.abs(body.spectrum - near.spectrum).sum())
    assert node_distance(body, near) == pytest.approx(raw_near)
    assert 0 < raw_near < UNPAIRED_COST


def test_combined_score_is_symmetric(models, config):
    fm, fc = fingerprint(models["mlp"], EX), fingerprint(models["cnn"], EX)
    fp = fingerprint(magnitude_prune(models["mlp"], 0.4), EX)
    for f1, f2 in ((fm, fc), (fm, fp), (fc, fp)):
        s12, s21 = clone_scores(f1, f2), clone_scores(f2, f1)
        for k in s12:
            assert s12[k] == pytest.approx(s21[k], abs=1e-12)
    assert clone_scores(fm, fc)["S"] < 0.5


def test_aligned_baselines_collapse_where_expected(models):
    base = models["mlp"]
    perm = permute_hidden_units(base, torch.Generator().manual_seed(0))
    assert aligned_cosine(base, perm) < 0.9  # B1 misses a permuted clone
    assert aligned_cosine(base, rescale_layers(base, 3.0)) < 0.99
    assert state_dict_jaccard(base, rewrap_containers(base)) == 0.0  # B2 misses a re-wrapped clone
    assert aligned_cosine(base, RenamedNet(base)) == pytest.approx(1.0)  # positional fallback


class DataDependent(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        h = self.fc(x.flatten(1))
        if h.sum() > 0:  # data-dependent control flow: cannot be exported
            return h
        return -h


def test_export_error_names_the_model_and_cause():
    with pytest.raises(GraphExportError, match=r"DataDependent.*(data-dependent|Guard|control flow)"):
        normalised_graph(DataDependent(), EX)
    with pytest.raises(GraphExportError, match="MLP|Sequential"):
        normalised_graph(make_mlp((64, 8, 10)), (torch.zeros(2, 3),))  # wrong input shape
    with pytest.raises(TypeError):
        normalised_graph(lambda x: x, EX)


def test_threshold_calibration_known_answer():
    scores = np.array([0.1, 0.2, 0.3, 0.8, 0.9, 0.95])
    labels = np.array([0, 0, 0, 1, 1, 1], bool)
    theta = calibrate_threshold(scores, labels)
    assert 0.3 < theta < 0.8
    assert balanced_accuracy(scores >= theta, labels) == 1.0


def test_config_validation_names_the_field():
    for field, bad, match in (("n_seeds", 0, "n_seeds"), ("n_bases", 1, "n_bases"), ("lam", 1.5, "lam"),
                              ("finetune_lr", -1.0, "finetune_lr"), ("archs", ("rnn",), "architectures")):
        with pytest.raises(ValueError, match=match):
            get_config("smoke", **{field: bad})
    assert get_config("evidence").n_seeds >= 3 and get_config("reduced").n_seeds >= 3


def test_bad_inputs_are_rejected():
    with pytest.raises(ValueError, match="valid"):
        CloneSpec("distill")
    with pytest.raises(ValueError, match="prune"):
        get_config("smoke", prune_rates=(1.5,))
    with pytest.raises(ValueError, match="positive"):
        rescale_layers(make_mlp((64, 8, 10)), -1.0)
    with pytest.raises(ValueError, match="both clone and non-clone"):
        calibrate_threshold(np.array([0.1, 0.2]), np.array([True, True]))
    with pytest.raises(ValueError, match="equal length"):
        calibrate_threshold(np.array([0.1, 0.2]), np.array([True]))
    with pytest.raises(ValueError, match="tau"):
        weight_similarity([], [], tau=0.0)
    with pytest.raises(ValueError, match="architecture"):
        E.make_model("resnet", get_config("smoke"))
    with pytest.raises(ValueError, match="40 nodes"):
        ged_similarity(nx.path_graph(50, nx.DiGraph), nx.path_graph(50, nx.DiGraph))


def test_smoke_end_to_end(monkeypatch):
    import json

    from icml26.evidence import from_plain, to_plain
    from icml26.model_clone.claims import build_ledger

    monkeypatch.setenv("TQDM_DISABLE", "1")
    cfg = get_config("smoke")
    keep = {}
    out = E.run_experiment(cfg, seed=0, device="cpu", keep=keep)
    assert out["seeds"] == [0, 1, 2] and len(out["figures"]) == 3
    res = keep["runs"][0].bench
    assert len(res.pairs) == len(E.benchmark_pairs(res.zoo))
    assert {p["kind"] for p in res.pairs} >= {"T1", "T2", "T3", "same-arch", "cross-arch"}
    assert any(p["kind"] == "same-arch" and p["other_data"] for p in res.pairs)  # hard negatives
    lin = E.run_lineage(cfg, "mlp", seed=0)
    assert lin.scores["S_W"][0] == pytest.approx(1.0)
    assert out["figures"][0]["min S_G T1"] == pytest.approx(1.0)
    ledger = build_ledger(out)
    assert build_ledger(from_plain(json.loads(json.dumps(to_plain(out))))).record() == ledger.record()
    st = {k: e.status for k, e in ledger.entries.items()}
    # even 30-step smoke bases pass the competence bar (0.80 on the held-out half), so every claim decides
    assert [st[c] for c in ("C1", "C2", "C3", "C4", "C5")] == ["REPRODUCED"] * 4 + ["NOT TESTED"]
    assert ledger.entries["C2"].by_construction and ledger.entries["C2"].property_claim
    assert all(c.passed for c in ledger.entries["C3"].competence)
    sweep = {r["lam"]: r for r in E.combination_sweep(res, (0.0, 0.5, 1.0))}
    assert sweep[0.0]["AUC all pairs"] == pytest.approx(E.auc(res, "S_W"))
    assert sweep[0.5]["AUC all pairs"] == pytest.approx(E.auc(res, "S"))
    assert sweep[1.0]["AUC vs same-arch"] == pytest.approx(E.auc(res, "S_G", "same-arch"))
    with pytest.raises(ValueError, match="lam"):
        E.combination_sweep(res, (0.5, 1.5))
    facts = E.level_facts(res)
    assert all(0.0 <= v <= 1.0 for v in facts.values())
