"""Base representations (multi-resolution grid, dense or hashed; Fourier-feature MLP; a fixed
pixel grid) and the three symmetric constructions compared in the chapter:

* `SymmetrizedField` -- the paper's Eq. 3, f(u) = sum_i h_i(pi_W(u)) eta_i(u);
* `NaiveWrapField`   -- baseline B, the base evaluated at a canonical orbit representative;
* `GroupAveragedField` -- baseline C, the Reynolds average (1/|P|) sum_g h(w(g u)).

Every field maps points (..., 2) (fractional coordinates for wallpaper groups, Cartesian for
rosettes) to values (..., C).
"""

from __future__ import annotations

import math
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

from .groups import PlanarGroup

Box = tuple[tuple[float, float], tuple[float, float]]
_HASH_PRIME = 2654435761  # Instant-NGP's spatial hash constant for the second axis


def _check_points(x: torch.Tensor) -> None:
    if not isinstance(x, torch.Tensor) or x.ndim < 1 or x.shape[-1] != 2:
        raise ValueError(f"points must be a tensor of shape (..., 2), got {getattr(x, 'shape', type(x))}")


def _normalize(v: torch.Tensor, box: Box) -> torch.Tensor:
    """Map the box to [0, 1]^2."""
    lo = torch.tensor([box[0][0], box[1][0]], dtype=v.dtype, device=v.device)
    hi = torch.tensor([box[0][1], box[1][1]], dtype=v.dtype, device=v.device)
    return (v - lo) / (hi - lo)


class MultiResGrid(nn.Module):
    """The paper's base representation (Sec. 4, hash-grid idea of Instant-NGP): L levels of
    grids with resolutions from `base_res` to `max_res` (geometric), bilinear interpolation,
    features summed over levels. `table_size=None`: dense grids; otherwise each level with more
    than `table_size` vertices is stored in a hash table of that size (spatial hash).

    `scale` = (s1, s2) multiplies the resolution of each axis: level l has
    round(s_k * res_l) cells along axis k. It is how a base on a small alcove gets the same
    feature spacing, in lattice units, as a base on the whole unit cell (`alcove_scale`)."""

    def __init__(self, box: Box, out_dim: int, levels: int = 4, base_res: int = 8, max_res: int = 64,
                 table_size: int | None = None, init_std: float = 0.1, generator: torch.Generator | None = None,
                 dtype=torch.float64, scale: tuple[float, float] = (1.0, 1.0)):
        super().__init__()
        if levels < 1 or base_res < 1 or max_res < base_res:
            raise ValueError(f"need levels >= 1 and 1 <= base_res <= max_res, got {levels}, {base_res}, {max_res}")
        if out_dim < 1:
            raise ValueError(f"out_dim must be >= 1, got {out_dim}")
        if len(scale) != 2 or not all(s > 0 for s in scale):
            raise ValueError(f"scale must be two positive numbers, got {scale!r}")
        self.box, self.out_dim, self.table_size = box, out_dim, table_size
        self.res = self.level_resolutions(levels, base_res, max_res, scale)
        sizes = self.table_sizes(self.res, table_size)
        self.tables = nn.ParameterList(
            [nn.Parameter(torch.randn(n, out_dim, generator=generator, dtype=dtype) * init_std) for n in sizes])

    @staticmethod
    def level_resolutions(levels: int, base_res: int, max_res: int,
                          scale: tuple[float, float] = (1.0, 1.0)) -> list[tuple[int, int]]:
        """(cells along axis 1, cells along axis 2) of each level: round(s_k * res_l), with res_l
        geometric from `base_res` to `max_res`."""
        growth = (max_res / base_res) ** (1.0 / max(levels - 1, 1))
        return [tuple(max(1, int(round(base_res * growth ** l * s))) for s in scale) for l in range(levels)]

    @staticmethod
    def table_sizes(res: list[tuple[int, int]], table_size: int | None = None) -> list[int]:
        """Rows of each level's table: its (r1 + 1)(r2 + 1) vertices, capped by `table_size`."""
        return [(r1 + 1) * (r2 + 1) if table_size is None else min((r1 + 1) * (r2 + 1), table_size)
                for r1, r2 in res]

    @classmethod
    def num_parameters(cls, out_dim: int, levels: int = 4, base_res: int = 8, max_res: int = 64,
                       table_size: int | None = None, scale: tuple[float, float] = (1.0, 1.0)) -> int:
        """Parameter count of a grid with these settings, without building it."""
        return out_dim * sum(cls.table_sizes(cls.level_resolutions(levels, base_res, max_res, scale), table_size))

    def _index(self, ix: torch.Tensor, iy: torch.Tensor, level: int) -> torch.Tensor:
        (r1, r2), n = self.res[level], self.tables[level].shape[0]
        if n == (r1 + 1) * (r2 + 1):
            return ix * (r2 + 1) + iy  # dense
        return torch.bitwise_xor(ix, iy * _HASH_PRIME) % n  # hashed

    def forward(self, v: torch.Tensor) -> torch.Tensor:
        t = _normalize(v, self.box).clamp(0.0, 1.0)  # (..., 2)
        out = 0.0
        for level, res in enumerate(self.res):
            r = torch.tensor(res, dtype=t.dtype, device=t.device)  # (2,)
            p = t * r
            i0 = torch.minimum(torch.floor(p), r - 1).long()  # (..., 2)
            f = p - i0  # (..., 2) bilinear weights
            out_l = 0.0
            for dx in (0, 1):
                for dy in (0, 1):
                    w = (f[..., 0] if dx else 1 - f[..., 0]) * (f[..., 1] if dy else 1 - f[..., 1])  # (...,)
                    idx = self._index(i0[..., 0] + dx, i0[..., 1] + dy, level)
                    out_l = out_l + w[..., None] * self.tables[level][idx]  # (..., out_dim)
            out = out + out_l
        return out


class FourierMLP(nn.Module):
    """Fourier-feature MLP (Tancik et al. 2020): gamma(v) = [sin 2 pi B t, cos 2 pi B t] with
    B ~ N(0, sigma^2), then a ReLU MLP to `out_dim` channels. `scale` = (s1, s2) multiplies
    the frequencies of each axis (same role as in `MultiResGrid`)."""

    def __init__(self, box: Box, out_dim: int, n_freq: int = 32, sigma: float = 2.0, hidden: int = 64,
                 depth: int = 2, generator: torch.Generator | None = None, dtype=torch.float64,
                 scale: tuple[float, float] = (1.0, 1.0)):
        super().__init__()
        if out_dim < 1 or n_freq < 1 or hidden < 1 or depth < 1:
            raise ValueError("out_dim, n_freq, hidden and depth must be >= 1")
        if len(scale) != 2 or not all(s > 0 for s in scale):
            raise ValueError(f"scale must be two positive numbers, got {scale!r}")
        self.box = box
        B = torch.randn(2, n_freq, generator=generator, dtype=dtype) * sigma  # (2, n_freq)
        self.register_buffer("B", B * torch.tensor(scale, dtype=dtype)[:, None])
        dims = [2 * n_freq] + [hidden] * depth + [out_dim]
        layers = []
        for i in range(len(dims) - 1):
            lin = nn.Linear(dims[i], dims[i + 1], dtype=dtype)
            bound = 1 / math.sqrt(dims[i])
            with torch.no_grad():
                lin.weight.copy_((torch.rand(lin.weight.shape, generator=generator, dtype=dtype) * 2 - 1) * bound)
                lin.bias.copy_((torch.rand(lin.bias.shape, generator=generator, dtype=dtype) * 2 - 1) * bound)
            layers += [lin, nn.ReLU()]
        self.net = nn.Sequential(*layers[:-1])

    def forward(self, v: torch.Tensor) -> torch.Tensor:
        z = 2 * math.pi * _normalize(v, self.box) @ self.B.to(v)  # (..., n_freq)
        return self.net(torch.cat((torch.sin(z), torch.cos(z)), -1))


class PixelBase(nn.Module):
    """A fixed pixel grid (C, H, W) read by bilinear interpolation over `box` (the paper's
    'pixel grid' base; used to turn a picture into a pattern without training)."""

    def __init__(self, box: Box, image: torch.Tensor):
        super().__init__()
        if image.ndim != 3:
            raise ValueError(f"image must have shape (C, H, W), got {tuple(image.shape)}")
        self.box, self.out_dim = box, image.shape[0]
        self.register_buffer("image", image)

    def forward(self, v: torch.Tensor) -> torch.Tensor:
        t = _normalize(v, self.box).clamp(0, 1) * 2 - 1  # (..., 2) in [-1, 1]
        flat = t.reshape(1, -1, 1, 2).flip(-1).to(self.image)  # (1, N, 1, 2); grid_sample wants (x=col, y=row)
        out = F.grid_sample(self.image[None], flat, mode="bilinear", align_corners=True)  # (1, C, N, 1)
        return out[0, :, :, 0].T.reshape(*v.shape[:-1], self.out_dim).to(v)  # (..., C)


BaseFactory = Callable[..., nn.Module]  # (box, out_dim, scale=(1, 1)) -> base module


def make_base(kind: str, generator: torch.Generator | None = None, **kwargs) -> BaseFactory:
    """A factory (box, out_dim, scale=(1, 1)) -> base module: 'grid' (dense multi-resolution
    grid), 'hashgrid' (hashed; table_size defaults to 2^10) or 'fourier' (Fourier-feature MLP)."""
    if kind == "grid":
        return lambda box, out, scale=(1.0, 1.0): MultiResGrid(box, out, generator=generator, scale=scale, **kwargs)
    if kind == "hashgrid":
        kw = {"table_size": 2 ** 10, **kwargs}
        return lambda box, out, scale=(1.0, 1.0): MultiResGrid(box, out, generator=generator, scale=scale, **kw)
    if kind == "fourier":
        return lambda box, out, scale=(1.0, 1.0): FourierMLP(box, out, generator=generator, scale=scale, **kwargs)
    raise ValueError(f"unknown base representation {kind!r}; valid: grid, hashgrid, fourier")


def _cell_box(group: PlanarGroup) -> Box:
    return ((0.0, 1.0), (0.0, 1.0)) if group.periodic else ((-1.0, 1.0), (-1.0, 1.0))


def alcove_scale(group: PlanarGroup) -> tuple[float, float]:
    """Side lengths of the bounding box of W's alcove (`group.alcove_box`) measured in the units
    of the baselines' box (`_cell_box`: the unit cell, or the disk's square of side 2).

    The fold outputs v = A u for p2mm / p4mm types (a refined lattice for glide and centred
    groups: A = diag(1, 2) for pg), so an alcove side of length l along v_k is l * |A^{-1} e_k|
    lattice lengths; p6mm folds to Cartesian coordinates of the unit hexagonal lattice and
    rosettes to Cartesian coordinates. A base built with this `scale` has the same feature
    spacing in the pattern as the baselines' base with the same resolution settings."""
    (a0, a1), (b0, b1) = group.alcove_box
    if group.w_type in ("p2mm", "p4mm"):
        col = torch.linalg.inv(group.A).norm(dim=0)  # (2,) lattice length of a unit step along v_k
        return (float((a1 - a0) * col[0]), float((b1 - b0) * col[1]))
    ref = 1.0 if group.periodic else 2.0
    return ((a1 - a0) / ref, (b1 - b0) / ref)


RESOLUTIONS = ("lattice", "box")


def matched_grid_factor(group: PlanarGroup, channels: int = 1, levels: int = 4, base_res: int = 8,
                        max_res: int = 64, table_size: int | None = None, lo: float = 0.25, hi: float = 4.0,
                        step: float = 0.01) -> float:
    """The factor s (on a grid of step `step` in [lo, hi]) by which Eq. 3's grid, read in lattice
    units (`alcove_scale`), must be refined along both axes so that its parameter count
    (r * C channels on the alcove) is the closest to the baselines' grid on the cell (C
    channels): the same network size for every construction (ties: the smallest s)."""
    if not 0 < lo <= hi or step <= 0:
        raise ValueError(f"need 0 < lo <= hi and step > 0, got lo={lo}, hi={hi}, step={step}")
    target = MultiResGrid.num_parameters(channels, levels, base_res, max_res, table_size)
    a = alcove_scale(group)
    best, best_err = lo, math.inf
    for k in range(int(round((hi - lo) / step)) + 1):
        s = lo + k * step
        n = MultiResGrid.num_parameters(group.rank * channels, levels, base_res, max_res, table_size,
                                        (a[0] * s, a[1] * s))
        if abs(n - target) < best_err:
            best, best_err = s, abs(n - target)
    return round(best, 6)


def _cell_wrap(group: PlanarGroup, u: torch.Tensor) -> torch.Tensor:
    return u - torch.floor(u) if group.periodic else u


class SymmetrizedField(nn.Module):
    """The paper's Eq. 3: f(u) = sum_{i=1}^r h_i(pi_W(u)) eta_i(u), with h = base(pi_W(u))
    reshaped to (r, C). Exactly G-invariant (both factors are) and continuous (pi_W is
    1-Lipschitz, eta smooth), for any continuous base evaluated only on W's alcove.

    `resolution` says how a base factory's resolution settings are read: 'lattice' (default)
    keeps the base's feature spacing in lattice units equal to the baselines' (the base is
    built with `scale=alcove_scale(group)`); 'box' spreads the full resolution over the
    alcove's bounding box in the fold's coordinates, which for pg (v2 = 2 u2) is 2x finer
    than the cell grid along u1 and 4x finer along the glide axis u2. `scale_factor`
    refines the 'lattice' reading by a further factor along both axes (the chapter's
    equal-size protocol takes it from `matched_grid_factor`).

    The fold and eta of the last input are kept (the fitting loop feeds the same training
    points at every step; they do not depend on the parameters)."""

    evaluations_per_point = 1

    def __init__(self, group: PlanarGroup, base: BaseFactory | nn.Module, channels: int = 1,
                 resolution: str = "lattice", scale_factor: float = 1.0):
        super().__init__()
        if resolution not in RESOLUTIONS:
            raise ValueError(f"unknown resolution {resolution!r}; valid: {', '.join(RESOLUTIONS)}")
        if not (isinstance(scale_factor, (int, float)) and scale_factor > 0):
            raise ValueError(f"scale_factor must be a positive number, got {scale_factor!r}")
        self.group, self.channels = group, channels
        scale = alcove_scale(group) if resolution == "lattice" else (1.0, 1.0)
        scale = (scale[0] * scale_factor, scale[1] * scale_factor)
        self.base = base if isinstance(base, nn.Module) else base(group.alcove_box, group.rank * channels, scale=scale)
        self._memo: tuple | None = None  # (input, its version, fold, eta)

    def _fold_eta(self, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        m = self._memo
        if m is not None and m[0] is u and m[1] == u._version and not u.requires_grad:
            return m[2], m[3]
        p, eta = self.group.fold(u), self.group.eta(u)  # (..., 2), (..., r)
        self._memo = None if u.requires_grad else (u, u._version, p, eta)
        return p, eta

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        _check_points(u)
        p, eta = self._fold_eta(u)
        h = self.base(p)  # (..., r * C)
        h = h.reshape(*u.shape[:-1], self.group.rank, self.channels)  # (..., r, C)
        eta = eta.to(h)  # (..., r)
        return (h * eta[..., None]).sum(-2)  # (..., C)


class NaiveWrapField(nn.Module):
    """Baseline B: f(u) = h(canonical representative of the orbit of u). Exactly invariant,
    torn wherever two pieces of the fundamental domain are glued by a rotation or a glide."""

    evaluations_per_point = 1

    def __init__(self, group: PlanarGroup, base: BaseFactory | nn.Module, channels: int = 1):
        super().__init__()
        self.group, self.channels = group, channels
        self.base = base if isinstance(base, nn.Module) else base(_cell_box(group), channels)

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        _check_points(u)
        return self.base(self.group.canonical_rep(u))


class GroupAveragedField(nn.Module):
    """Baseline C, group (Reynolds) averaging: f(u) = (1/|P|) sum_{g in P} h(w(g u)), with w
    the wrap into the unit cell. Invariant; continuous only if h is periodic; |P| base
    evaluations per point."""

    def __init__(self, group: PlanarGroup, base: BaseFactory | nn.Module, channels: int = 1):
        super().__init__()
        self.group, self.channels = group, channels
        self.base = base if isinstance(base, nn.Module) else base(_cell_box(group), channels)
        self.evaluations_per_point = len(group.elements)

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        _check_points(u)
        orb = _cell_wrap(self.group, self.group.orbit(u))  # (..., P, 2)
        return self.base(orb).mean(-2)  # (..., C)


CONSTRUCTIONS = {"symmetrized": SymmetrizedField, "naive_wrap": NaiveWrapField, "group_average": GroupAveragedField}


def make_field(kind: str, group: PlanarGroup, base: BaseFactory | nn.Module, channels: int = 1,
               resolution: str = "lattice", scale_factor: float = 1.0) -> nn.Module:
    """Construction by name: 'symmetrized' (Eq. 3), 'naive_wrap' or 'group_average'.
    `resolution` ('lattice' or 'box') and `scale_factor` apply to Eq. 3's base (see
    `SymmetrizedField`)."""
    if kind not in CONSTRUCTIONS:
        raise ValueError(f"unknown construction {kind!r}; valid: {', '.join(CONSTRUCTIONS)}")
    if not isinstance(channels, int) or channels < 1:
        raise ValueError(f"channels must be a positive integer, got {channels!r}")
    if resolution not in RESOLUTIONS:
        raise ValueError(f"unknown resolution {resolution!r}; valid: {', '.join(RESOLUTIONS)}")
    if kind == "symmetrized":
        return SymmetrizedField(group, base, channels, resolution, scale_factor)
    return CONSTRUCTIONS[kind](group, base, channels)
