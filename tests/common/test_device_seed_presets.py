from dataclasses import dataclass

import numpy as np
import pytest
import torch

from icml26.common import (PRESET_NAMES, device_banner, progress, resolve_device,
                           seed_everything, select_preset)


def test_auto_resolves_to_an_available_device():
    device = resolve_device("auto")
    assert device.type in {"cpu", "cuda", "mps"}
    torch.zeros(1, device=device)


def test_cpu_is_always_available():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "tpu", "", "CUDA 0", 3])
def test_unknown_device_names_are_rejected_with_the_valid_ones(bad):
    with pytest.raises(ValueError, match="unknown device.*'auto', 'cpu'"):
        resolve_device(bad)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_cuda_asked_for_but_absent_is_a_clear_error():
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        resolve_device("cuda")
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        resolve_device("cuda:1")


def test_banner_names_device_torch_preset_and_time():
    line = device_banner(torch.device("cpu"), "reduced", "about 60 s")
    assert "cpu" in line and torch.__version__ in line and "reduced" in line and "60 s" in line


def test_seeding_makes_draws_repeatable():
    generator = seed_everything(7)
    a = (torch.rand(3), np.random.rand(3), torch.rand(3, generator=generator))
    generator = seed_everything(7)
    b = (torch.rand(3), np.random.rand(3), torch.rand(3, generator=generator))
    assert torch.equal(a[0], b[0]) and np.array_equal(a[1], b[1]) and torch.equal(a[2], b[2])
    seed_everything(8)
    assert not torch.equal(torch.rand(3), a[0])


@pytest.mark.parametrize("bad", [-1, 1.5, "0", True])
def test_bad_seeds_are_rejected(bad):
    with pytest.raises(ValueError, match="seed"):
        seed_everything(bad)


@dataclass(frozen=True)
class _Config:
    steps: int
    width: int = 8


_PRESETS = {"smoke": _Config(1), "reduced": _Config(10), "full": _Config(1000, 64)}


def test_presets_select_and_override():
    assert PRESET_NAMES == ("smoke", "reduced", "full")
    assert select_preset(_PRESETS, "reduced").steps == 10
    assert select_preset(_PRESETS, "full", steps=5) == _Config(5, 64)


def test_unknown_preset_lists_the_valid_ones():
    with pytest.raises(ValueError, match="unknown preset 'tiny'; valid presets: smoke, reduced, full"):
        select_preset(_PRESETS, "tiny")
    with pytest.raises(ValueError, match="unknown config field.*depth.*valid fields: steps, width"):
        select_preset(_PRESETS, "smoke", depth=3)


def test_progress_is_silent_under_tqdm_disable(monkeypatch, capsys):
    monkeypatch.setenv("TQDM_DISABLE", "1")
    assert list(progress(range(3), desc="x")) == [0, 1, 2]
    assert progress(range(3)).disable
    monkeypatch.setenv("TQDM_DISABLE", "0")
    assert not progress(range(3)).disable
