import json

import pytest

from icml26.deep_image_search import PRESETS, DISConfig, get_config, make_policy
from icml26.deep_image_search.claims import build_ledger
from icml26.deep_image_search.experiment import (hostile_demo, paired_scores, per_seed, results_rows, run_experiment,
                                                verified_queries)
from icml26.evidence import from_plain, to_plain


def test_presets_and_bad_configs():
    assert list(PRESETS) == ["smoke", "reduced", "evidence", "full"]
    assert all(len(c.seeds) >= 3 for c in PRESETS.values())
    for bad in ({"n_places": 9}, {"policy": "gpt"}, {"photos_max": 3}, {"seeds": ()}, {"seeds": (0, 1)},
                {"seeds": (0, 0, 1)}, {"marker_events": 13}, {"n_events": 200}, {"cast": 2}, {"memory_window": -1},
                {"batch": 0}):
        with pytest.raises(ValueError):
            get_config("smoke", **bad)
        with pytest.raises(ValueError):
            DISConfig(**bad)
    with pytest.raises(ValueError, match="unknown policy"):
        make_policy("claude", get_config("smoke"))


@pytest.fixture(scope="module")
def smoke():
    runs = []
    results = run_experiment(get_config("smoke"), seed=0, device="cpu", runs=runs)
    return results, runs[0]


def test_smoke_end_to_end(smoke):
    results, r = smoke
    cfg = get_config("smoke")
    assert results["seeds"] == list(cfg.seeds) and len(results["perception_acc"]) == len(cfg.seeds)
    f1, seeds = paired_scores(results, "agent")
    f1d, seeds_d = paired_scores(results, "direct (oracle k)")
    assert f1.shape == f1d.shape and (seeds == seeds_d).all() and ((0 <= f1) & (f1 <= 1)).all()
    assert len(per_seed(results, "agent", "EM")) == len(cfg.seeds)
    valid, total = verified_queries(r)
    assert valid == total == results["queries"]
    assert list(results_rows(r).index) == ["direct (oracle k)", "agent w/o FilterMetadata",
                                          "agent w/o explicit memory", "agent", "scripted teacher w/o FilterMetadata",
                                          "scripted teacher w/o explicit memory", "scripted teacher",
                                          "direct, Recall@3"]
    assert (r.records[r.records.arm.str.startswith("scripted teacher")].rejected == 0).all()
    # the learned policy's agreement with its teacher, per seed and tool set
    assert [sorted(d) for d in results["imitation"]] == [["all tools", "w/o FilterMetadata",
                                                           "w/o explicit memory"]] * len(cfg.seeds)
    assert all(v.startswith("rejected") for v in hostile_demo(r).values())


def test_smoke_ledger_statuses(smoke):
    results, _ = smoke
    ledger = build_ledger(results)
    # 40 training steps leave the perception stand-ins blind and the learned policy far from its
    # teacher (rule 2), so C1 and C2 are undecided; C3 is a sanity check by construction (templates
    # verified by their own pattern)
    assert ledger.check_lines().splitlines() == [
        "C1 INCONCLUSIVE: context-dependent queries defeat one-shot query-image matching",
        "C2 INCONCLUSIVE: the tool-using agent with two memories does substantially better",
        "C3 NOT TESTED (by construction): a model-assisted pipeline mines context-dependent queries at scale",
        "Verdict: INCONCLUSIVE (2 tested claims: 2 inconclusive; 1 not tested)",
    ]
    c2 = ledger.entries["C2"]
    assert not c2.stand_in and [c.passed for c in c2.competence] == [False, False]
    assert "trained on the scripted planner's traces" in c2.reason
    plain = from_plain(json.loads(json.dumps(to_plain(results))))
    assert build_ledger(plain).record() == ledger.record()


def test_openai_policy_without_endpoint_fails_fast(monkeypatch):
    """A full run with policy='openai' and no endpoint configured stops before any training, clearly."""
    from icml26.deep_image_search import OpenAIPolicy
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match="OPENAI_BASE_URL"):
        make_policy("openai", get_config("smoke"))
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:8000/v1")
    policy = OpenAIPolicy()  # a local server needs no key; the client is created lazily
    assert policy.base_url == "http://localhost:8000/v1" and policy.api_key == "not-needed"
