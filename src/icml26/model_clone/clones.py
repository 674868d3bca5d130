"""The clone taxonomy and the clone operations of the generated benchmark.

Definitions (the paper's text was not readable; these are OUR definitions, modelled on the
code-clone types 1-4 the abstract says the paper draws on):

- Type 1, exact: same graph and same weights up to names, file format or containers.
- Type 2, reparameterised: the same function with transformed parameters (hidden-unit
  permutations, positive per-layer rescaling between ReLU layers).
- Type 3, modified: derived by fine-tuning, pruning, quantisation, noise or head replacement.
- Non-clone: trained independently (other seed, data half and learning rate), including
  models of exactly the same architecture.
Type 4 (a different structure with similar behaviour, e.g. distillation) is out of scope of
a static detector and is not generated.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
from torch import nn

from .models import RenamedNet, layer_chain, rewrap_containers, train_full_batch

CLONE_TYPES = {
    "T1": "exact (renamed, re-wrapped)",
    "T2": "reparameterised (permuted, rescaled)",
    "T3": "modified (fine-tuned, pruned, quantised, noisy, new head)",
    "NC": "non-clone (independently trained)",
}
OPERATIONS = {"rename": "T1", "container": "T1", "permute": "T2", "rescale": "T2", "finetune": "T3",
              "prune": "T3", "quantise": "T3", "noise": "T3", "head": "T3"}


@dataclass(frozen=True)
class CloneSpec:
    """One clone operation at one strength (its meaning depends on the operation)."""

    op: str
    strength: float = 0.0

    def __post_init__(self) -> None:
        if self.op not in OPERATIONS:
            raise ValueError(f"unknown clone operation {self.op!r}; valid: {', '.join(OPERATIONS)}")

    @property
    def clone_type(self) -> str:
        return OPERATIONS[self.op]

    @property
    def name(self) -> str:
        return self.op if self.op in ("rename", "container", "permute", "quantise", "head") else f"{self.op}({self.strength:g})"


@torch.no_grad()
def permute_hidden_units(model: nn.Module,
                         generator: torch.Generator) -> nn.Module:
    """Type 2: permute the output units of every layer but the last, and the
    matching input units of the next layer. The function is unchanged (ReLU and
    pooling act per unit)."""
    out = copy.deepcopy(model)
    chain = layer_chain(out)
    for a, b in zip(chain[:-1], chain[1:]):
        p = torch.randperm(a.weight.shape[0],
                           generator=generator).to(a.weight.device)
        a.weight.copy_(a.weight[p])
        if a.bias is not None:
            a.bias.copy_(a.bias[p])
        # (out, units, rest): rest = kernel or h*w
        w = b.weight.reshape(b.weight.shape[0], a.weight.shape[0], -1)
        b.weight.copy_(w[:, p].reshape(b.weight.shape))
    return out


@torch.no_grad()
def rescale_layers(model: nn.Module, factor: float) -> nn.Module:
    """Type 2: for every layer l but the last, W_l <- a W_l, b_l <- a b_l and
    W_{l+1} <- W_{l+1} / a with a = `factor`. Exact because ReLU and max/avg pooling are
    positively homogeneous: relu(a z) = a relu(z) for a > 0."""
    if factor <= 0:
        raise ValueError(f"rescaling needs a positive factor, got {factor}")
    out = copy.deepcopy(model)
    chain = layer_chain(out)
    for layer, nxt in zip(chain[:-1], chain[1:]):
        layer.weight.mul_(factor)
        if layer.bias is not None:
            layer.bias.mul_(factor)
        nxt.weight.div_(factor)
    return out


@torch.no_grad()
def magnitude_prune(model: nn.Module, rate: float) -> nn.Module:
    """Type 3: zero the `rate` fraction of smallest-magnitude entries of every weight matrix
    (biases kept), written into the weights (no masks or hooks stay in the model)."""
    if not 0.0 < rate < 1.0:
        raise ValueError(f"prune rate must lie in (0, 1), got {rate}")
    out = copy.deepcopy(model)
    for layer in layer_chain(out):
        w = layer.weight
        k = int(rate * w.numel())
        if k > 0:
            thr = w.abs().flatten().kthvalue(k).values
            w.mul_((w.abs() > thr).to(w.dtype))
    return out


@torch.no_grad()
def fake_quantise(model: nn.Module, bits: int = 8) -> nn.Module:
    """Type 3: symmetric per-tensor quantisation to `bits` bits and back (fake quantisation)."""
    out = copy.deepcopy(model)
    q = 2 ** (bits - 1) - 1
    for p in out.parameters():
        step = p.abs().max().clamp_min(1e-12) / q
        p.copy_(torch.round(p / step).clamp(-q, q) * step)
    return out


@torch.no_grad()
def add_noise(model: nn.Module, level: float, generator: torch.Generator) -> nn.Module:
    """Type 3: add Gaussian noise of std `level` x (each tensor's std) to every parameter."""
    out = copy.deepcopy(model)
    for p in out.parameters():
        noise = torch.randn(p.shape, generator=generator).to(p.device, p.dtype)
        p.add_(level * p.std().clamp_min(1e-12) * noise)
    return out


def fine_tune(model: nn.Module, x: torch.Tensor, y: torch.Tensor, steps: int, lr: float) -> nn.Module:
    """Type 3: `steps` full-batch Adam steps on new data (a copy; the input is untouched)."""
    return train_full_batch(copy.deepcopy(model), x, y, steps, lr)


def replace_head(model: nn.Module, x: torch.Tensor, y: torch.Tensor, steps: int, lr: float,
                 generator: torch.Generator, n_out: int = 2) -> nn.Module:
    """Type 3: swap the last layer for a fresh `n_out`-way head (here: digit parity) and train
    only the head; the body is the original's."""
    out = copy.deepcopy(model)
    last_name = [n for n, m in out.named_modules() if m is layer_chain(out)[-1]][0]
    old = layer_chain(out)[-1]
    new = nn.Linear(old.in_features, n_out).to(old.weight.device)
    with torch.no_grad():
        bound = 1.0 / old.in_features ** 0.5
        new.weight.copy_((torch.rand(new.weight.shape, generator=generator) * 2 - 1).to(new.weight.device) * bound)
        new.bias.zero_()
    parent = out
    *path, leaf = last_name.split(".")
    for p in path:
        parent = getattr(parent, p)
    setattr(parent, leaf, new)
    return train_full_batch(out, x, y % n_out, steps, lr, params=new.parameters())


def apply_clone(model: nn.Module, spec: CloneSpec, data_x: torch.Tensor, data_y: torch.Tensor, config,
                generator: torch.Generator) -> nn.Module:
    """Apply one clone operation; fine-tuning and head replacement use (data_x, data_y)."""
    if spec.op == "rename":
        return RenamedNet(copy.deepcopy(model)).eval()
    if spec.op == "container":
        return rewrap_containers(copy.deepcopy(model)).eval()
    if spec.op == "permute":
        return permute_hidden_units(model, generator).eval()
    if spec.op == "rescale":
        return rescale_layers(model, spec.strength).eval()
    if spec.op == "finetune":
        return fine_tune(model, data_x, data_y, int(spec.strength), config.finetune_lr)
    if spec.op == "prune":
        return magnitude_prune(model, spec.strength).eval()
    if spec.op == "quantise":
        return fake_quantise(model, config.quant_bits).eval()
    if spec.op == "noise":
        return add_noise(model, spec.strength, generator).eval()
    return replace_head(model, data_x, data_y, config.head_steps, 1e-2, generator)  # "head"


def clone_specs(config) -> list[CloneSpec]:
    """Every clone operation of the benchmark at every strength in `config`."""
    specs = [CloneSpec("rename"), CloneSpec("container"), CloneSpec("permute")]
    specs += [CloneSpec("rescale", a) for a in config.rescale_factors]
    specs += [CloneSpec("finetune", s) for s in config.finetune_steps]
    specs += [CloneSpec("prune", r) for r in config.prune_rates]
    specs += [CloneSpec("quantise", config.quant_bits)]
    specs += [CloneSpec("noise", s) for s in config.noise_levels]
    specs += [CloneSpec("head")]
    return specs
