"""KSKT's `full` preset on several GPUs: PyTorch DistributedDataParallel under torchrun.

The chapter's `full` preset (Qwen3-0.6B with KSKT blocks, and the same checkpoint fine-tuned
plainly) keeps both models and their AdamW states on one GPU, which needs >= 40 GB. Here each
model is trained in turn, data-parallel over the GPUs of one machine or a cluster, with the
chapter's own training pieces (`train.make_optimizer`, `train.lr_at`, `train.kskt_objective`,
`train.clm_loss`, `train.slot_accuracy`, `experiment.build_models`, `data.make_roleplay_data`):
the same global batch of `cfg.batch_size` items per step, drawn by the same generator as
`train.train_model`, split into equal contiguous shards, gradients averaged by DDP. No home-made
parallelism: DDP only.

Launch (one machine, 2 GPUs; `--nproc_per_node` = the number of GPUs):

    torchrun --nproc_per_node=2 -m icml26.kskt.distributed --preset full --out runs/kskt_full

On a cluster, add torchrun's `--nnodes`, `--node_rank` and `--rdzv_endpoint`. The backend is NCCL on
GPUs and gloo on CPUs (the CPU run is what the tests check):

    torchrun --nproc_per_node=2 -m icml26.kskt.distributed --preset smoke --steps 12 --out /tmp/kskt_ddp

Rank 0 writes `<out>/log.json` (the loss of every step, averaged over ranks, and the slot
accuracies) and the trained models (`kskt_seed<S>.pt`, `qwen3_seed<S>/`).

One difference from a single process remains, by design of the objective: the load-balance term
(L_bal) and the budget head's batch-rank targets are computed per shard, not over the whole
global batch, so the loss trajectory matches a single-process run only to a tolerance (the test
checks it); every other term is a per-item mean and matches exactly.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from .config import KSKTConfig, get_config
from .data import RolePlayData, make_roleplay_data, model_inputs
from .model import KSKTForCausalLM, save_kskt
from .train import PHASE_TERMS, TrainLog, clm_loss, kskt_objective, lr_at, make_optimizer, slot_accuracy


def world() -> tuple[int, int]:
    """(rank, world size); (0, 1) without a process group."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def init_from_environment() -> torch.device:
    """Start the process group torchrun describes (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR...);
    return this rank's device: cuda:LOCAL_RANK with NCCL when CUDA is present, else the CPU with gloo."""
    if "RANK" not in os.environ:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if torch.cuda.is_available():
        local = int(os.environ.get("LOCAL_RANK", 0))
        torch.cuda.set_device(local)
        dist.init_process_group("nccl")
        return torch.device("cuda", local)
    dist.init_process_group("gloo")
    return torch.device("cpu")


def shard(idx: torch.Tensor, rank: int, world_size: int) -> torch.Tensor:
    """This rank's contiguous share of a global batch of indices (sizes must divide evenly, so that
    averaging the ranks' gradients is the gradient of the global batch's mean loss)."""
    if len(idx) % world_size:
        raise ValueError(f"the global batch ({len(idx)}) must be a multiple of the number of processes ({world_size})")
    per = len(idx) // world_size
    return idx[rank * per:(rank + 1) * per]


class StepLoss(nn.Module):
    """The model with its training loss, so that DDP sees the loss as the forward's output: the
    parameters that the phase's terms do not reach (an unused aux output, an unused expert) are then
    found unused, where a model output would mark them used and leave their gradients pending."""

    def __init__(self, model: nn.Module, cfg: KSKTConfig):
        super().__init__()
        self.model, self.cfg = model, cfg
        self.is_kskt = isinstance(model, KSKTForCausalLM)

    def forward(self, ids: torch.Tensor, labels: torch.Tensor, phase: int) -> torch.Tensor:
        """One step's loss on a batch, as in `train.train_model`."""
        if self.is_kskt:
            out = self.model(ids, **model_inputs(ids))
            return kskt_objective(out, labels, PHASE_TERMS[phase], self.cfg)["total"]
        return clm_loss(self.model(input_ids=ids, use_cache=False).logits, labels)


def ddp_train(model: nn.Module, train: RolePlayData, test: RolePlayData | None, cfg: KSKTConfig, seed: int = 0,
              max_steps: int | None = None) -> TrainLog:
    """`train.train_model`'s curriculum, data-parallel over the process group (or one process).

    Same optimiser, schedule (fresh AdamW per phase under cfg.schedule="release"), gradient clipping
    and batch draws (generator seeded `seed + 12345`); each rank computes its shard of the global
    batch. The logged loss is the mean over ranks. `test=None` skips the slot accuracies;
    `max_steps` stops early (a slice of the curriculum, for tests and timing).
    """
    rank, world_size = world()
    is_kskt = isinstance(model, KSKTForCausalLM)
    device = next(model.parameters()).device
    step_loss = StepLoss(model, cfg)
    if world_size > 1:
        # The phases switch loss terms on one after the other, and KSKT's routing and System-2
        # chains change which parameters a step reaches: DDP must look for unused ones.
        step_loss = DDP(step_loss, device_ids=[device.index] if device.type == "cuda" else None,
                        find_unused_parameters=is_kskt)
    opt = make_optimizer(model, cfg)
    gen = torch.Generator().manual_seed(int(seed) + 12345)
    log = TrainLog()
    model.train()
    steps = cfg.total_steps if max_steps is None else min(max_steps, cfg.total_steps)
    for step in range(steps):
        phase, lr = lr_at(step, cfg)
        if cfg.schedule == "release" and step > 0 and phase != lr_at(step - 1, cfg)[0]:
            opt = make_optimizer(model, cfg)
        for g in opt.param_groups:
            g["lr"] = lr
        idx = shard(torch.randint(len(train), (cfg.batch_size,), generator=gen), rank, world_size)
        ids, labels = train.input_ids[idx].to(device), train.labels[idx].to(device)
        loss = step_loss(ids, labels, phase)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        mean = loss.detach().clone()
        if world_size > 1:
            dist.all_reduce(mean)
            mean /= world_size
        log.steps.append(step)
        log.loss.append(mean.item())
        if test is not None and ((step + 1) % cfg.eval_every == 0 or step + 1 == steps):
            log.eval_steps.append(step + 1)
            log.slot_acc.append(slot_accuracy(model, test))  # replicas are identical: every rank agrees
    model.eval()
    return log


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="torchrun --nproc_per_node=N -m icml26.kskt.distributed",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="full", help="smoke, reduced or full (default full)")
    parser.add_argument("--seeds", default="", help="comma-separated seeds (default: the preset's)")
    parser.add_argument("--models", default="kskt,baseline", help="which to train: kskt, baseline or both")
    parser.add_argument("--steps", type=int, default=None, help="stop after this many steps (default: the curriculum)")
    parser.add_argument("--no-eval", action="store_true", help="skip the slot accuracies")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    device = init_from_environment()
    rank, world_size = world()
    if device.type == "cpu":
        torch.set_num_threads(1)
    from .experiment import build_models  # transformers and scikit-learn load here, after the group starts

    cfg = get_config(args.preset, device=str(device))
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()] or list(cfg.seeds)
    wanted = [m.strip() for m in args.models.split(",") if m.strip()]
    record = {"preset": args.preset, "world_size": world_size, "device": str(device), "seeds": {}}
    for s in seeds:
        train = make_roleplay_data(cfg.n_train, cfg.conflict_rate, seed=1000 + s)
        test = None if args.no_eval else make_roleplay_data(cfg.n_test, cfg.conflict_rate, seed=2000 + s).to(device)
        kskt, base = build_models(cfg, s, torch.device("cpu"))  # on the GPU one at a time
        for name, model in (("kskt", kskt), ("baseline", base)):
            if name not in wanted:
                continue
            model.to(device)
            t0 = time.perf_counter()
            log = ddp_train(model, train, test, cfg, seed=s, max_steps=args.steps)
            record["seeds"].setdefault(str(s), {})[name] = {
                "loss": log.loss, "eval_steps": log.eval_steps, "slot_acc": log.slot_acc,
                "seconds": time.perf_counter() - t0}
            if rank == 0:
                args.out.mkdir(parents=True, exist_ok=True)
                if name == "kskt":
                    save_kskt(model, args.out / f"kskt_seed{s}.pt")
                else:
                    model.save_pretrained(args.out / f"qwen3_seed{s}")
            model.to("cpu")
            if device.type == "cuda":
                torch.cuda.empty_cache()
    if rank == 0:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "log.json").write_text(json.dumps(record, indent=1))
        print(f"rank 0 of {world_size}: wrote {args.out / 'log.json'}")
    if world_size > 1:
        dist.barrier()
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
