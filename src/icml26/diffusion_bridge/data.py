"""Data: scikit-learn digits as two modalities (X = 8x8 high-res, Y = noisy 4x4 low-res), and
the pairing-fraction splits with disjoint unpaired halves (no hidden pairs)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from sklearn.datasets import load_digits


def downsample(x: torch.Tensor) -> torch.Tensor:
    """2x2 average pooling of flattened 8x8 images: (N, 64) -> (N, 16)."""
    if x.ndim != 2 or x.shape[1] != 64:
        raise ValueError(f"expected flattened 8x8 images of shape (N, 64), got {tuple(x.shape)}")
    img = x.reshape(-1, 4, 2, 4, 2)  # (N, row block, row in block, col block, col in block)
    return img.mean(dim=(2, 4)).reshape(-1, 16)  # (N, 4, 4) -> (N, 16)


def upsample_nearest(y: torch.Tensor) -> torch.Tensor:
    """Nearest-neighbour upsampling (the reference): (N, 16) -> (N, 64)."""
    if y.ndim != 2 or y.shape[1] != 16:
        raise ValueError(f"expected flattened 4x4 images of shape (N, 16), got {tuple(y.shape)}")
    img = y.reshape(-1, 4, 1, 4, 1).expand(-1, 4, 2, 4, 2)  # (N, 4, 2, 4, 2)
    return img.reshape(-1, 64)


@dataclass
class Digits:
    """Train/test high-res `x` (N, 64), low-res `y` (N, 16) in [-1, 1] (+ noise), labels."""

    x_train: torch.Tensor
    y_train: torch.Tensor
    label_train: np.ndarray
    x_test: torch.Tensor
    y_test: torch.Tensor
    label_test: np.ndarray


def load_data(n_train: int = 1400, lr_noise: float = 0.05, seed: int = 0, device="cpu") -> Digits:
    """Digits scaled to [-1, 1]; Y = avgpool2x2(X) + N(0, lr_noise^2). Fixed split by `seed`."""
    d = load_digits()
    x = torch.tensor(d.data, dtype=torch.float32) / 8.0 - 1.0  # (1797, 64), pixel values 0..16
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(x))
    g = torch.Generator().manual_seed(seed)
    y = downsample(x) + lr_noise * torch.randn(len(x), 16, generator=g)
    tr, te = perm[:n_train], perm[n_train:]
    dev = torch.device(device)
    return Digits(x[tr].to(dev), y[tr].to(dev), d.target[tr], x[te].to(dev), y[te].to(dev), d.target[te])


@dataclass
class PairingPools:
    """Index pools of one run: `paired` (same index in X and Y), `src` (the Y images a run may
    draw unpaired) and `tgt` (the X images it may draw unpaired). `src` and `tgt` share only the
    paired indices; the rest of the training set is split into disjoint halves."""

    paired: np.ndarray
    src: np.ndarray
    tgt: np.ndarray


def pairing_pools(n: int, rho: float, seed: int) -> PairingPools:
    """Split `n` training indices for pairing fraction `rho` (Sec. "semi-paired regime")."""
    if not 0.0 <= rho <= 1.0:
        raise ValueError(f"rho must lie in [0, 1], got {rho}")
    perm = np.random.default_rng(1000 + seed).permutation(n)
    n_p = int(round(rho * n))
    paired, rest = perm[:n_p], perm[n_p:]
    half = len(rest) // 2
    return PairingPools(paired, np.concatenate([paired, rest[:half]]), np.concatenate([paired, rest[half:]]))


def stack_pools(pools: list[np.ndarray], device) -> tuple[torch.Tensor, torch.Tensor]:
    """Pad a list of index pools into (M, max_len) with counts (M,), for batched sampling."""
    m = max(1, max(len(p) for p in pools))
    out = np.zeros((len(pools), m), dtype=np.int64)
    for i, p in enumerate(pools):
        out[i, :len(p)] = p
    return torch.tensor(out, device=device), torch.tensor([len(p) for p in pools], device=device)


def draw(pool: torch.Tensor, count: torch.Tensor, batch: int, gen: torch.Generator) -> torch.Tensor:
    """Uniform draw with replacement of `batch` indices from each member's pool: (M, batch)."""
    u = torch.rand(pool.shape[0], batch, generator=gen, device=pool.device)
    k = (u * count.clamp(min=1)[:, None]).long()  # (M, batch) positions in each pool
    return torch.gather(pool, 1, k)
