"""KSKT under torchrun (icml26.kskt.distributed): two gloo processes on the CPU follow the loss
trajectory of one process with the same global batch.

Tolerances, fixed before the comparison was run: the plain Qwen3 baseline (per-item mean losses
only) matches to 1e-4 absolute; KSKT matches to 3 % relative, because its load-balance term and the
budget head's batch-rank targets are computed per shard (the module docstring says why)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from icml26.kskt import get_config, make_roleplay_data
from icml26.kskt.distributed import ddp_train, shard
from icml26.kskt.experiment import build_models
from icml26.kskt.train import train_model

ROOT = Path(__file__).resolve().parents[2]
STEPS = 12  # the whole smoke curriculum: all three phases


def _single(name: str):
    cfg = get_config("smoke", device="cpu")
    train = make_roleplay_data(cfg.n_train, cfg.conflict_rate, seed=1000)
    test = make_roleplay_data(cfg.n_test, cfg.conflict_rate, seed=2000)
    kskt, base = build_models(cfg, 0, torch.device("cpu"))
    return {"kskt": kskt, "baseline": base}[name], train, test, cfg


def test_shards_split_the_global_batch_evenly():
    idx = torch.arange(16)
    assert torch.equal(torch.cat([shard(idx, r, 4) for r in range(4)]), idx)
    with pytest.raises(ValueError, match="multiple of the number of processes"):
        shard(torch.arange(10), 0, 4)


@pytest.mark.parametrize("name", ["kskt", "baseline"])
def test_one_process_is_the_chapter_training_loop(name):
    """Without a process group, ddp_train is train.train_model step for step (same losses, same
    slot accuracies): the distributed path reuses the chapter's training, it does not fork it."""
    torch.set_num_threads(1)
    model, train, test, cfg = _single(name)
    reference = train_model(model, train, test, cfg, seed=0, desc="reference")
    model, *_ = _single(name)
    ours = ddp_train(model, train, test, cfg, seed=0)
    assert ours.loss == reference.loss
    assert ours.slot_acc == reference.slot_acc and ours.eval_steps == reference.eval_steps


def test_two_gloo_processes_match_one_process(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])),
           "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
           "-m", "icml26.kskt.distributed", "--preset", "smoke", "--seeds", "0", "--steps", str(STEPS),
           "--no-eval", "--out", str(tmp_path)]
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    record = json.loads((tmp_path / "log.json").read_text())
    assert record["world_size"] == 2
    assert (tmp_path / "kskt_seed0.pt").is_file() and (tmp_path / "qwen3_seed0").is_dir()
    torch.set_num_threads(1)
    for name, (atol, rtol) in {"baseline": (1e-4, 0.0), "kskt": (0.0, 0.03)}.items():
        model, train, test, cfg = _single(name)
        single = np.array(train_model(model, train, test, cfg, seed=0).loss[:STEPS])
        distributed = np.array(record["seeds"]["0"][name]["loss"])
        assert distributed.shape == single.shape == (STEPS,)
        np.testing.assert_allclose(distributed, single, atol=atol, rtol=rtol, err_msg=name)
