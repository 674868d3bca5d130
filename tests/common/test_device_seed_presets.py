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


def test_resolve_device_applies_the_thread_policy_on_the_cpu():
    from icml26.common.device import CPU_THREADS

    before = torch.get_num_threads()
    try:
        resolve_device("cpu", cpu_threads=2)
        assert torch.get_num_threads() == 2
        resolve_device("cpu")
        assert torch.get_num_threads() == CPU_THREADS == 1
        for bad in (0, -1, 1.5, True):
            with pytest.raises(ValueError, match="cpu_threads must be a positive integer"):
                resolve_device("cpu", cpu_threads=bad)
    finally:
        torch.set_num_threads(before)


def test_expected_time_covers_every_preset_in_one_line_each():
    from icml26.common.presets import check_expected_time

    good = {"smoke": "seconds", "reduced": "about 20 s", "evidence": "about 3 min", "full": "about 1 h on a GPU"}
    assert check_expected_time(good, _PRESETS) == good
    with pytest.raises(ValueError, match="the presets are"):
        check_expected_time({"smoke": "s"}, _PRESETS)
    with pytest.raises(ValueError, match="one line of words"):
        check_expected_time({**good, "full": ""}, _PRESETS)


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


_PRESETS = {"smoke": _Config(1), "reduced": _Config(10), "evidence": _Config(100), "full": _Config(1000, 64)}


def test_presets_select_and_override():
    assert PRESET_NAMES == ("smoke", "reduced", "evidence", "full")
    assert select_preset(_PRESETS, "reduced").steps == 10
    assert select_preset(_PRESETS, "full", steps=5) == _Config(5, 64)


def test_unknown_preset_lists_the_valid_ones():
    with pytest.raises(ValueError, match="unknown preset 'tiny'; valid presets: smoke, reduced, evidence, full"):
        select_preset(_PRESETS, "tiny")
    with pytest.raises(ValueError, match="unknown config field.*depth.*valid fields: steps, width"):
        select_preset(_PRESETS, "smoke", depth=3)


def test_progress_is_silent_under_tqdm_disable(monkeypatch, capsys):
    monkeypatch.setenv("TQDM_DISABLE", "1")
    assert list(progress(range(3), desc="x")) == [0, 1, 2]
    assert progress(range(3)).disable
    assert progress(range(3), disable=None).disable and progress(range(3), disable=False).disable
    monkeypatch.setenv("TQDM_DISABLE", "0")
    assert not progress(range(3)).disable


# --- CUDA repeatability (seeding.enable_cuda_determinism) and the device fixture ---------------

from icml26.common.seeding import CUBLAS_WORKSPACE, enable_cuda_determinism, repeatability  # noqa: E402


def test_cublas_workspace_is_set_at_import():
    import os

    assert os.environ.get("CUBLAS_WORKSPACE_CONFIG")  # set by icml26.common.seeding unless the reader set one
    assert CUBLAS_WORKSPACE == ":4096:8"


def test_cpu_banner_is_unchanged_and_repeatable():
    line = device_banner(torch.device("cpu"), "reduced", "1 s")
    assert "repeatable" not in line  # CPU runs are bit-repeatable: the banner says nothing
    assert all(len(part) <= 100 for part in line.splitlines())  # fits the code column
    assert repeatability("cpu")[0]


def test_cuda_determinism_is_reported_and_switchable(monkeypatch):
    # The flags are process-global: restore them afterwards.
    before = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
              torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)
    try:
        torch.use_deterministic_algorithms(False)
        ok, why = repeatability("cuda")
        assert not ok and "deterministic algorithms off" in why
        monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        enable_cuda_determinism()
        assert torch.are_deterministic_algorithms_enabled() and torch.is_deterministic_algorithms_warn_only_enabled()
        ok, why = repeatability("cuda")
        assert ok and "warn-only" in why
        monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG")
        assert "CUBLAS_WORKSPACE_CONFIG unset" in repeatability("cuda")[1]
        assert not repeatability("mps")[0]
    finally:
        torch.use_deterministic_algorithms(before[0], warn_only=before[1])
        torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = before[2], before[3]


def test_seed_everything_leaves_cpu_only_runs_alone():
    before = torch.are_deterministic_algorithms_enabled()
    seed_everything(0, device="cpu")
    assert torch.are_deterministic_algorithms_enabled() == before


def test_training_steps_repeat_bit_for_bit_on_the_test_device(device):
    """Two seeded runs of a few optimiser steps (matmuls, a reduction, an index_add: an atomic
    on CUDA) give identical parameters on --device (make gpu-check runs this on CUDA)."""
    before = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
              torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)

    def run():
        generator = seed_everything(3, device=device)
        net = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 8)).to(device)
        opt = torch.optim.AdamW(net.parameters(), lr=1e-2)
        x = torch.randn(256, 32, generator=generator).to(device)
        idx = torch.randint(0, 16, (256,), generator=generator).to(device)
        for _ in range(5):
            out = net(x)
            pooled = torch.zeros(16, 8, device=device).index_add(0, idx, out)
            loss = pooled.square().mean() + out.logsumexp(-1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return [p.detach().cpu().clone() for p in net.parameters()]

    try:
        a, b = run(), run()
    finally:
        torch.use_deterministic_algorithms(before[0], warn_only=before[1])
        torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = before[2], before[3]
    assert all(torch.equal(p, q) for p, q in zip(a, b))
