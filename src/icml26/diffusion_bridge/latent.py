"""The latent spaces of the bridges.

`JointCodec` is the paper's setting (LDDBM's, which SDB builds on): modality-specific encoders
E_X (64 -> d), E_Y (16 -> d) and decoders D_X, D_Y map both modalities into ONE shared latent
space of width d, trained jointly with the bridges; an alignment loss ties the two encoders'
latents together. `FrozenCodec` is the simpler setting kept as an extension: two autoencoders
pre-trained separately and frozen, so the two latent spaces are not aligned with each other.
Both give latents of shape (M, B, d) for an ensemble of M independent runs.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from .bridge import AutoEncoder, EnsembleMLP


def sphere(h: torch.Tensor) -> torch.Tensor:
    """Project latents onto the sphere of radius sqrt(d): z = sqrt(d) h / ||h||.
    Keeps the jointly trained latents at unit scale per dimension on average
    (the bridge's preconditioning assumes sigma_0 = sigma_T = 1) and rules out
    the collapse z -> 0, which would make every bridge loss trivially small."""
    return (
        math.sqrt(h.shape[-1]) * h
        / h.norm(dim=-1, keepdim=True).clamp(min=1e-6)
    )


class JointCodec(nn.Module):
    """M independent pairs of autoencoders into one shared latent space per run, trained jointly."""

    joint = True

    def __init__(self, members: int, latent_dim: int, gen: torch.Generator | None = None,
                 hidden_x: int = 128, hidden_y: int = 64):
        super().__init__()
        self.members, self.latent_dim = members, latent_dim
        self.enc_x = EnsembleMLP(members, 64, hidden_x, latent_dim, gen, zero_last=False)
        self.enc_y = EnsembleMLP(members, 16, hidden_y, latent_dim, gen, zero_last=False)
        self.dec_x = EnsembleMLP(members, latent_dim, hidden_x, 64, gen, zero_last=False)
        self.dec_y = EnsembleMLP(members, latent_dim, hidden_y, 16, gen, zero_last=False)

    def _batched(self, a: torch.Tensor) -> torch.Tensor:
        return a if a.ndim == 3 else a.expand(self.members, *a.shape)  # (N, D) -> (M, N, D)

    def encode_x(self, x: torch.Tensor) -> torch.Tensor:
        return sphere(self.enc_x(self._batched(x)))

    def encode_y(self, y: torch.Tensor) -> torch.Tensor:
        return sphere(self.enc_y(self._batched(y)))

    def decode_x(self, z: torch.Tensor) -> torch.Tensor:
        return self.dec_x(z)

    def decode_y(self, z: torch.Tensor) -> torch.Tensor:
        return self.dec_y(z)


class FrozenCodec(nn.Module):
    """The two pre-trained, frozen autoencoders shared by all M runs (separate latent spaces)."""

    joint = False

    def __init__(self, members: int, ae_x: AutoEncoder, ae_y: AutoEncoder):
        super().__init__()
        self.members, self.ae_x, self.ae_y = members, ae_x, ae_y

    def _batched(self, z: torch.Tensor) -> torch.Tensor:
        return z if z.ndim == 3 else z.expand(self.members, *z.shape)

    def encode_x(self, x: torch.Tensor) -> torch.Tensor:
        return self._batched(self.ae_x.encode(x))

    def encode_y(self, y: torch.Tensor) -> torch.Tensor:
        return self._batched(self.ae_y.encode(y))

    def decode_x(self, z: torch.Tensor) -> torch.Tensor:
        return self.ae_x.decode(z)

    def decode_y(self, z: torch.Tensor) -> torch.Tensor:
        return self.ae_y.decode(z)


def info_nce(
    za: torch.Tensor, zb: torch.Tensor, temperature: float = 0.07
) -> torch.Tensor:
    """LDDBM's contrastive alignment on pairs (CLIP-style, symmetric InfoNCE):
    row i of `za` should be closest (cosine) to row i of `zb` among the batch.
    (M, B, d) each -> (M,)."""
    if za.shape != zb.shape or za.ndim != 3:
        raise ValueError(f"expected two (M, B, d) batches of pairs, got {tuple(za.shape)}, {tuple(zb.shape)}")
    a, b = F.normalize(za, dim=-1), F.normalize(zb, dim=-1)
    logits = a @ b.transpose(1, 2) / temperature  # (M, B, B)
    target = (  # (M, B)
        torch.arange(za.shape[1], device=za.device).expand(za.shape[0], -1)
    )
    ce = lambda lg: F.cross_entropy(  # noqa: E731
        lg.reshape(-1, lg.shape[-1]), target.reshape(-1), reduction="none"
    )
    return 0.5 * (
        (ce(logits) + ce(logits.transpose(1, 2))).reshape(za.shape[:2]).mean(-1)
    )


def latent_mmd(
    za: torch.Tensor, zb: torch.Tensor, bandwidth: float | None = None
) -> torch.Tensor:
    """Unpaired alignment of the two encoders' latent distributions: biased
    RBF-MMD^2 between batches (M, B, d) and (M, B', d), bandwidth sqrt(d) (the
    latents' typical distance). (M,)."""
    if za.ndim != 3 or zb.ndim != 3 or za.shape[0] != zb.shape[0] or za.shape[2] != zb.shape[2]:
        raise ValueError(f"expected (M, B, d) and (M, B', d), got {tuple(za.shape)}, {tuple(zb.shape)}")
    bw = math.sqrt(za.shape[-1]) if bandwidth is None else bandwidth
    k = lambda u, v: torch.exp(  # noqa: E731
        -torch.cdist(u, v) ** 2 / (2 * bw ** 2)
    )
    return (
        k(za, za).mean((-1, -2))
        + k(zb, zb).mean((-1, -2))
        - 2 * k(za, zb).mean((-1, -2))
    )
