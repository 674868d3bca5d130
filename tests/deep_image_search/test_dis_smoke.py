import pytest
import torch

from icml26.deep_image_search import PRESETS, get_config, make_policy
from icml26.deep_image_search.experiment import hostile_demo, reproduction_check, results_rows, run_experiment

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
    claim, measured, checks = reproduction_check(r)
    assert set(checks) and all(isinstance(v, bool) for v in checks.values())
    assert 0.0 <= measured["F1 agent"] <= 1.0 and "not an LLM" in claim
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
