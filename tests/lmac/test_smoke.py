import pytest
import torch

from icml26.common.ledger import INCONCLUSIVE, NOT_TESTED, REPRODUCED
from icml26.lmac import get_config
from icml26.lmac.claims import build_ledger
from icml26.lmac.experiment import run_experiment
from icml26.lmac.llm import make_llm
from icml26.lmac.marl import ArmInputs


def test_bad_configs_name_the_field():
    for bad, field in (({"grid": 1}, "grid"), ({"llm": "gpt"}, "llm"), ({"llm": "hf"}, "hf"),
                       ({"arms": ("NoComm", "LMAC")}, "arms"), ({"test_frac": 1.5}, "test_frac"),
                       ({"seeds": ()}, "seeds"), ({"seeds": (0, 0, 1)}, "seeds"), ({"criterion_seeds": ()}, "criterion_seeds"),
                       ({"mse_thres": 2.0}, "mse_thres"), ({"max_retries": 0}, "max_retries"),
                       ({"iterations": 0}, "iterations"), ({"eval_episodes": 0}, "eval_episodes"), ({"lr": 0.0}, "lr")):
        with pytest.raises(ValueError, match=field):
            get_config("smoke", **bad)
    with pytest.raises(ValueError):
        make_llm("claude")
    with pytest.raises(ValueError, match="unknown arm"):
        ArmInputs("CommNet", None, 3, 18, 10)
    with pytest.raises(ValueError, match="needs a compiled protocol"):
        ArmInputs("LMAC", None, 3, 18, 10)


def test_smoke_end_to_end():
    import json

    from icml26.evidence import from_plain, to_plain

    cfg = get_config("smoke")
    out = run_experiment(cfg, 0, torch.device("cpu"), keep_objects=True)
    results = out.pop("objects")
    assert out["seeds"] == list(cfg.seeds) and out["stand_in"] and out["designer"] == "rule-based stand-in"
    assert len(results.runs) == len(cfg.arms) * len(cfg.seeds)
    assert results.refinement.history[0].step == 0
    # the refined protocol never sends more than FullComm
    assert out["message_size"]["LMAC"] <= out["message_size"]["FullComm"]
    assert all(0.0 <= v <= 1.0 for v in out["success"]["LMAC"] + out["random_success"])
    ledger = build_ledger(out)
    plain = from_plain(json.loads(json.dumps(to_plain(out))))
    assert build_ledger(plain).check_lines() == ledger.check_lines()
    assert {c: (e.status, e.stand_in) for c, e in ledger.entries.items()} == SMOKE_STATUSES
    # the appended protocol starts with the initial protocol's messages
    first = next(r for r in results.refinement.history if r.step == 0 and r.accepted)
    assert results.protocols["LMAC"].code.startswith(first.code.rstrip())


SMOKE_STATUSES = {"C1": ("NOT REPRODUCED", True), "C2": ("NOT TESTED", True),
                  "C3": ("INCONCLUSIVE", True), "E1": ("REPRODUCED", False)}


def test_fewer_than_three_seeds_leave_the_claims_inconclusive():
    out = run_experiment(get_config("smoke", seeds=(0,), criterion_seeds=(0,), arms=("NoComm", "FullComm", "LMAC",
                                                                                     "TarMAC")),
                         0, torch.device("cpu"))
    ledger = build_ledger(out)
    assert ledger.entries["C1"].status == INCONCLUSIVE and ledger.entries["C3"].status == INCONCLUSIVE
    assert ledger.entries["C2"].status == NOT_TESTED  # by construction with the stand-in, however many seeds


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
