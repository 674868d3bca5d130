"""The model zoo of the clone benchmark: small MLPs and CNNs on scikit-learn's digits,
full-batch training, and the re-wrapped variants used for type-1 clones."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class DigitsData:
    """scikit-learn digits (1797 images, 8x8, scaled to [0, 1]) split into two disjoint halves."""

    x: tuple[torch.Tensor, torch.Tensor]  # (A, B), each (n, 1, 8, 8)
    y: tuple[torch.Tensor, torch.Tensor]  # (A, B), each (n,) int64


def load_digits_halves(device: torch.device | str = "cpu", seed: int = 0) -> DigitsData:
    """Load the bundled digits data set and split it at random into halves A and B."""
    from sklearn.datasets import load_digits

    d = load_digits()
    perm = np.random.default_rng(seed).permutation(len(d.target))
    x = torch.tensor(d.images[perm] / 16.0, dtype=torch.float32, device=device).unsqueeze(1)  # (n, 8, 8) -> (n, 1, 8, 8)
    y = torch.tensor(d.target[perm], dtype=torch.long, device=device)
    h = len(y) // 2
    return DigitsData((x[:h], x[h:]), (y[:h], y[h:]))


def make_mlp(widths: tuple[int, ...]) -> nn.Sequential:
    """Flatten -> [Linear -> ReLU]* -> Linear, e.g. widths (64, 128, 64, 10)."""
    if len(widths) < 2 or widths[0] != 64:
        raise ValueError(f"an MLP on 8x8 digits needs widths (64, ..., classes), got {widths}")
    layers: list[nn.Module] = [nn.Flatten()]
    for i, (a, b) in enumerate(zip(widths[:-1], widths[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(widths) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def make_cnn(channels: tuple[int, ...], n_classes: int = 10) -> nn.Sequential:
    """[Conv3x3 -> ReLU -> MaxPool2]* -> Flatten -> Linear on 8x8 inputs (at most 3 conv stages).

    The head's input features are channel-major (c, h, w), so a permutation of the last conv's
    channels permutes blocks of h*w head columns (see `clones.permute_hidden_units`)."""
    if not 1 <= len(channels) <= 3:
        raise ValueError(f"a CNN on 8x8 digits needs 1 to 3 conv stages, got {channels}")
    layers: list[nn.Module] = []
    c_in, side = 1, 8
    for c in channels:
        layers += [nn.Conv2d(c_in, c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)]
        c_in, side = c, side // 2
    layers += [nn.Flatten(), nn.Linear(c_in * side * side, n_classes)]
    return nn.Sequential(*layers)


def make_model(arch: str, config) -> nn.Sequential:
    """The benchmark architecture `arch` ('mlp' or 'cnn') with the sizes in `config`."""
    if arch == "mlp":
        return make_mlp(tuple(config.mlp_widths))
    if arch == "cnn":
        return make_cnn(tuple(config.cnn_channels))
    raise ValueError(f"unknown architecture {arch!r}; valid: mlp, cnn")


def layer_chain(model: nn.Module) -> list[nn.Module]:
    """The parametrised layers (Linear, Conv2d) in definition order = data-flow order for the
    chain-structured models of this chapter."""
    return [m for m in model.modules() if isinstance(m, (nn.Linear, nn.Conv2d))]


def train_full_batch(model: nn.Module, x: torch.Tensor, y: torch.Tensor, steps: int, lr: float,
                     params=None) -> nn.Module:
    """`steps` full-batch Adam steps on cross-entropy (in place); returns the model in eval mode."""
    if steps < 0 or lr <= 0:
        raise ValueError(f"steps must be >= 0 and lr > 0, got {steps}, {lr}")
    model.train()
    opt = torch.optim.Adam(model.parameters() if params is None else params, lr=lr)
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return model.eval()


@torch.no_grad()
def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    return float((model.eval()(x).argmax(-1) == y).float().mean())


class RenamedNet(nn.Module):
    """A type-1 clone: the same layers under new attribute names in a `ModuleDict`, with
    activations and pooling called functionally (`F.relu`) instead of as modules."""

    def __init__(self, seq: nn.Sequential):
        super().__init__()
        self.blocks = nn.ModuleDict()
        self.kinds: list[str] = []
        for i, m in enumerate(seq):
            if isinstance(m, nn.ReLU):
                self.kinds.append("relu")
            elif isinstance(m, nn.Flatten):
                self.kinds.append("flatten")
            else:
                self.kinds.append(f"stage{i}_{type(m).__name__.lower()}")
                self.blocks[self.kinds[-1]] = m

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for k in self.kinds:
            if k == "relu":
                x = F.relu(x)
            elif k == "flatten":
                x = torch.flatten(x, 1)  # (n, ...) -> (n, features)
            else:
                x = self.blocks[k](x)
        return x


def rewrap_containers(seq: nn.Sequential) -> nn.Sequential:
    """A type-1 clone: the same layers regrouped into nested containers, with no-op modules
    (Identity, Dropout that is inactive in eval mode) inserted."""
    mods = list(seq)
    half = len(mods) // 2
    return nn.Sequential(nn.Identity(), nn.Sequential(*mods[:half]), nn.Dropout(0.1),
                         nn.Sequential(nn.Identity(), *mods[half:]))
