import pytest
import torch

from icml26.deep_image_search import PRESETS, get_config, make_policy
from icml26.deep_image_search.experiment import (hostile_demo, paired_scores, per_seed, results_rows, run_experiment,
                                                verified_queries)

torch.set_num_threads(1)


def test_presets_and_bad_configs():
    assert set(PRESETS) == {"smoke", "reduced", "full"}
    with pytest.raises(ValueError, match="valid presets"):
        get_config("huge")
    with pytest.raises(ValueError, match="unknown config field"):
        get_config("smoke", nonsense=1)
    for bad in ({"n_places": 9}, {"policy": "gpt"}, {"photos_max": 3}, {"seeds": ()}, {"marker_events": 13},
                {"n_events": 200}, {"cast": 2}, {"memory_window": -1}, {"batch": 0}):
        with pytest.raises(ValueError):
            get_config("smoke", **bad)
    with pytest.raises(ValueError, match="unknown policy"):
        make_policy("claude", get_config("smoke"))


def test_smoke_end_to_end():
    cfg = get_config("smoke")
    r = run_experiment(cfg, "cpu", seed=0)
    f1, seeds = paired_scores(r, "agent")
    f1d, seeds_d = paired_scores(r, "direct (oracle k)")
    assert f1.shape == f1d.shape and (seeds == seeds_d).all() and ((0 <= f1) & (f1 <= 1)).all()
    assert len(per_seed(r, "agent", "EM")) == len(cfg.seeds)
    valid, total = verified_queries(r)
    assert valid == total  # every generated query passes the independent ground-truth check
    assert len(results_rows(r)) == 4
    assert (r.records[r.records.arm == "agent"].rejected == 0).all()
    assert all(v.startswith("rejected") for v in hostile_demo(r).values())


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
