import pytest
import torch

from icml26.lmac import PRESETS, get_config
from icml26.lmac.experiment import build_ledger, run_experiment
from icml26.lmac.llm import make_llm
from icml26.lmac.marl import ArmInputs

torch.set_num_threads(1)


def test_presets_and_bad_configs():
    assert set(PRESETS) == {"smoke", "reduced", "full"}
    with pytest.raises(ValueError, match="valid presets"):
        get_config("huge")
    with pytest.raises(ValueError, match="unknown config field"):
        get_config("smoke", nonsense=1)
    for bad in ({"grid": 1}, {"llm": "gpt"}, {"llm": "hf"}, {"arms": ("NoComm", "LMAC")}, {"test_frac": 1.5},
                {"seeds": ()}, {"criterion_seeds": ()}, {"mse_thres": 2.0}, {"max_retries": 0}):
        with pytest.raises(ValueError):
            get_config("smoke", **bad)
    with pytest.raises(ValueError):
        make_llm("claude")
    with pytest.raises(ValueError, match="unknown arm"):
        ArmInputs("CommNet", None, 3, 18, 10)
    with pytest.raises(ValueError, match="needs a compiled protocol"):
        ArmInputs("LMAC", None, 3, 18, 10)


def test_smoke_end_to_end():
    cfg = get_config("smoke")
    results = run_experiment(cfg, torch.device("cpu"), seed=0)
    assert len(results.runs) == len(cfg.arms) * len(cfg.seeds)
    assert results.refinement.history[0].step == 0
    # the refined protocol never sends more than FullComm
    assert results.message_size("LMAC") <= results.message_size("FullComm")
    assert 0.0 <= results.success("LMAC") <= 1.0
    ledger = build_ledger(results)  # 3 seeds of each kind: the ledger can be built
    assert set(ledger.entries) == {"C1", "C2", "C3", "E1"} and "rule-based" in ledger.entries["C1"].claim
    with pytest.raises(ValueError, match="at least 3 seeds"):  # the robustness rule refuses fewer seeds
        build_ledger(run_experiment(get_config("smoke", seeds=(0,), criterion_seeds=(0,)), torch.device("cpu")))
    # the appended protocol starts with the initial protocol's messages
    first = next(r for r in results.refinement.history if r.step == 0 and r.accepted)
    assert results.protocols["LMAC"].code.startswith(first.code.rstrip())


def test_tarmac_striker_ignores_its_own_message_slot():
    from icml26.lmac.marl import TarMACActor

    torch.manual_seed(0)
    s, n, own_dim, sd = 3, 4, 18, 25
    actor = TarMACActor(own_dim, s, n, sd, 32)
    senders = torch.randn(5, 1, n, sd).expand(5, s, n, sd)  # same senders' part for every striker
    x = torch.cat([torch.randn(5, s, own_dim), torch.eye(s).expand(5, s, s), senders.reshape(5, s, -1)], dim=-1)
    before = actor(x)
    y = x.clone()
    head = own_dim + s
    y[..., head + 2 * sd: head + 3 * sd] += 5.0  # agent 2's message slot = striker index 1
    after = actor(y)
    assert torch.allclose(before[:, 1], after[:, 1], atol=1e-6)  # striker 1 (agent 2) does not read itself
    assert not torch.allclose(before[:, 0], after[:, 0], atol=1e-3)  # the others do


def test_refinement_survives_a_designer_that_only_writes_garbage():
    from icml26.lmac.criterion import collect_dataset
    from icml26.lmac.refine import refine

    class Garbage:
        name = "garbage"

        def __init__(self):
            self.answers = iter(["no code at all", "```python\nimport os\ndef messages(agent_id, obs):\n    return {}\n```"])

        def complete(self, prompt):
            return next(self.answers, "still nothing")

    cfg = get_config("smoke")
    data = collect_dataset(cfg, torch.device("cpu"), 0)
    result = refine(cfg, data, Garbage())
    assert result.final.message_size == 0  # fell back to no communication
    rejected = [r for r in result.history if not r.accepted]
    assert rejected and all(r.reason.startswith("rejected") or r.reason == "nothing appended" for r in rejected)
    assert sum(r.step == 0 for r in rejected) == cfg.max_retries  # retried, then fell back
    assert any("import" in r.reason for r in rejected)
