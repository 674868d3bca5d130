"""The interventional ablations (summary "Phase and magnitude interventions"), for complex
PRISM states and, as matched controls, for the real-valued Transformer's states.

Complex z = |z| e^{i phi}:
- `phase_noise`  z -> z e^{i eps}, eps ~ U(-pi sigma, pi sigma) per element (sigma = 1: phase destroyed);
- `attenuate`    z -> c z (uniform attenuation);
- `flatten`      z -> rms_token(z) z / |z| (every element's modulus set to the token's RMS; phase kept).
Real h = |h| sign(h) (sign is the phase of a real number, the group {+1, -1}):
- `phase_noise`  flip each sign with probability sigma / 2 (sigma = 1: signs uniformly random);
- `attenuate`    h -> c h;
- `flatten`      h -> rms_token(h) sign(h).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

KINDS = ("none", "phase_noise", "attenuate", "flatten")


@dataclass(frozen=True)
class Intervention:
    """What to do (`kind`, `strength`: sigma for phase noise, c for attenuation) and where
    (`sites`: 0 = the embedding output, k = the output of layer k)."""

    kind: str = "none"
    strength: float = 0.0
    sites: tuple[int, ...] = (0,)
    seed: int = 0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown intervention {self.kind!r}; valid: {KINDS}")
        if self.kind == "phase_noise" and not 0.0 <= self.strength <= 1.0:
            raise ValueError(f"phase-noise sigma must lie in [0, 1], got {self.strength}")
        if self.kind == "attenuate" and self.strength < 0:
            raise ValueError(f"attenuation c must be >= 0, got {self.strength}")
        if any(int(s) < 0 for s in self.sites):
            raise ValueError(f"sites must be non-negative layer indices, got {self.sites}")

    def applies_at(self, site: int) -> bool:
        return self.kind != "none" and site in self.sites


def _generator(x: torch.Tensor, seed: int, site: int) -> torch.Generator:
    return torch.Generator(device=x.device).manual_seed(int(seed) * 1009 + int(site))


def _chain(x: torch.Tensor, ivs, site: int, fn) -> torch.Tensor:
    for iv in ivs:
        x = fn(x, iv, site)
    return x


def intervene_complex(z: torch.Tensor,
                      iv: Intervention | tuple[Intervention, ...],
                      site: int = 0) -> torch.Tensor:
    """Apply `iv` (or a tuple of interventions, in order) to a complex state
    (B, L, d) if it targets `site`; otherwise return z unchanged."""
    if isinstance(iv, (tuple, list)):
        return _chain(z, iv, site, intervene_complex)
    if not torch.is_complex(z):
        raise TypeError(f"intervene_complex needs a complex state, got {z.dtype}; use intervene_real")
    if not iv.applies_at(site):
        return z
    if iv.kind == "attenuate":
        return z * iv.strength
    if iv.kind == "flatten":
        mod = torch.abs(z)
        rms = mod.square().mean(-1, keepdim=True).sqrt()  # (B, L, 1)
        return torch.where(
            mod > 0, z / mod.clamp_min(1e-30), torch.ones_like(z)
        ) * rms
    eps = (
        torch.rand(
            z.shape, generator=_generator(z, iv.seed, site), device=z.device
        ) * 2 - 1
    ) * math.pi * iv.strength
    return z * torch.polar(torch.ones_like(eps), eps)


def intervene_real(h: torch.Tensor, iv: Intervention | tuple[Intervention, ...], site: int = 0) -> torch.Tensor:
    """The matched control for a real state (B, L, d): the same kinds, with sign as phase."""
    if isinstance(iv, (tuple, list)):
        return _chain(h, iv, site, intervene_real)
    if torch.is_complex(h):
        raise TypeError("intervene_real needs a real state; use intervene_complex")
    if not iv.applies_at(site):
        return h
    if iv.kind == "attenuate":
        return h * iv.strength
    if iv.kind == "flatten":
        rms = h.square().mean(-1, keepdim=True).sqrt()  # (B, L, 1)
        return torch.where(h >= 0, 1.0, -1.0).to(h.dtype) * rms
    flip = torch.rand(h.shape, generator=_generator(h, iv.seed, site), device=h.device) < iv.strength / 2
    return torch.where(flip, -h, h)
