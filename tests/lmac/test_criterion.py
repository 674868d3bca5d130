import pytest
import torch

from icml26.lmac import get_config
from icml26.lmac.criterion import recovery_success, summarize
from icml26.lmac.experiment import pass_criterion


def test_recovery_success_known_answer():
    state = torch.tensor([[0.0, 0.5], [1.0, 0.25]])  # grid 5: half a cell = 0.125
    pred = torch.stack([state + torch.tensor([[0.1, 0.0], [0.0, 0.2]]),  # dim0 2/2, dim1 1/2
                        state + 0.13])  # everything just outside
    sr = recovery_success(pred, state, grid=5)
    assert sr.tolist() == [[1.0, 0.5], [0.0, 0.0]]
    aw = summarize(sr)
    assert aw.per_agent.tolist() == [0.75, 0.0] and aw.accuracy == 0.0 and aw.gap == 0.75
    with pytest.raises(ValueError):
        recovery_success(pred[:, :1], state, grid=5)
    with pytest.raises(ValueError):
        summarize(torch.zeros(3))


GOOD = {"LMAC min-agent SR": 0.95, "LMAC SR spread": 0.05, "NoComm striker SR (max)": 0.4,
        "success LMAC": 0.8, "success NoComm": 0.1, "success FullComm": 0.6, "message LMAC/FullComm": 0.2}


def test_pass_criterion_on_synthetic_figures():
    cfg = get_config("smoke")
    assert all(pass_criterion(GOOD, cfg).values())
    flips = {"LMAC min-agent SR": 0.89, "LMAC SR spread": 0.11, "NoComm striker SR (max)": 0.51,
             "success NoComm": 0.51, "success FullComm": 0.81, "message LMAC/FullComm": 0.26}
    for key, value in flips.items():
        checks = pass_criterion({**GOOD, key: value}, cfg)
        assert sum(not v for v in checks.values()) == 1, key
    # boundaries hold (>= / <=)
    edge = {**GOOD, "LMAC min-agent SR": 0.9, "LMAC SR spread": 0.1, "success FullComm": 0.8}
    assert all(pass_criterion(edge, cfg).values())
