"""PRISM's building blocks: the phase embedding (DynamicRoSE), the two normalisation modes,
the gated harmonic convolution (GHC) and the complex-to-real bridge.

All complex tensors are complex64 of shape (B, L, d): batch, sequence, channels.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from .config import FILTER_KINDS, NORM_MODES


def _check_complex(z: torch.Tensor, d: int | None = None) -> None:
    if not torch.is_complex(z):
        raise TypeError(f"expected a complex tensor, got dtype {z.dtype}")
    if z.dim() != 3 or (d is not None and z.shape[-1] != d):
        raise ValueError(f"expected shape (batch, length, {d or 'd'}), got {tuple(z.shape)}")


def project_unit(z: torch.Tensor, eps: float = 1e-12) -> torch.Tensor:
    """The strict constraint |z_j| = 1 of the paper: z -> z / |z| elementwise
    (phase only). The eps keeps the gradient finite at z = 0 (torch.abs has
    none there)."""
    return z * torch.rsqrt(z.real.square() + z.imag.square() + eps)


def static_rotation(seq_len: int, d: int, device=None) -> torch.Tensor:
    """Phase position code s_{p,j} = exp(i p w_j), w_j = 10000^(-j/d),
    j = 0..d-1. (L, d)."""
    # (L, 1)
    p = torch.arange(seq_len, device=device, dtype=torch.float32)[:, None]
    # (d,)
    w = 10000.0 ** (-torch.arange(d, device=device, dtype=torch.float32) / d)
    return torch.polar(torch.ones(seq_len, d, device=device), p * w)


class DynamicRoSE(nn.Module):
    """Token -> complex wave (summary "Embedding (DynamicRoSE)").

    e = E[x] (real "particle", tied to the output head); content z_c = A e split into Re/Im
    halves; dynamic unit rotation rho = (R e) / |R e|; output z = z_c * s_p * rho.
    """

    def __init__(self, vocab_size: int, d: int):
        super().__init__()
        self.d = d
        self.embed = nn.Embedding(vocab_size, d)
        self.content = nn.Linear(d, 2 * d)
        self.rotation = nn.Linear(d, 2 * d)
        nn.init.normal_(self.embed.weight, std=d ** -0.5)
        nn.init.xavier_uniform_(self.content.weight)
        nn.init.zeros_(self.content.bias)
        nn.init.normal_(self.rotation.weight, std=0.01)
        with torch.no_grad():  # bias 1 on the real half, 0 on the imaginary half: rho ~ 1 at init
            self.rotation.bias.copy_(torch.cat([torch.ones(d), torch.zeros(d)]))

    def token_phase(self, tokens: torch.Tensor) -> torch.Tensor:
        """Position-free part z_c * rho of each token (used for the phase
        plots). (B, L, d)."""
        e = self.embed(tokens)
        u = self.content(e)  # (B, L, 2d)
        zc = torch.complex(u[..., : self.d], u[..., self.d:])
        r = self.rotation(e)  # (B, L, 2d)
        rho = torch.complex(r[..., : self.d], r[..., self.d:])
        rho = rho * torch.rsqrt(
            r[..., : self.d].square() + r[..., self.d:].square() + 1e-6
        )
        return zc * rho

    def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, L) ids -> (z complex (B, L, d), e real (B, L, d))."""
        if tokens.dim() != 2 or tokens.dtype != torch.long:
            raise ValueError(f"tokens must be a (batch, length) long tensor, got {tuple(tokens.shape)} {tokens.dtype}")
        z = self.token_phase(tokens) * static_rotation(
            tokens.shape[1], self.d, tokens.device
        )
        return z, self.embed(tokens)


class RobustPhaseNorm(nn.Module):
    """The official code's normalisation: x / sqrt(mean_j |x_j|^2 + eps) * s, s in R^d
    learned (init 1). Per-token unit RMS energy; the per-element moduli stay free."""

    def __init__(self, d: int, eps: float = 1e-5):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # (B, L, 1)
        energy = (x.real.square() + x.imag.square()).mean(-1, keepdim=True)
        return x * torch.rsqrt(energy + self.eps) * self.scale


class UnitNorm(nn.Module):
    """The paper's strict mode: project every element onto the unit circle (no parameters)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return project_unit(x)


class PhasePreservingLayerNorm(nn.Module):
    """The WMT14 code's normalisation (the model behind the paper's mechanistic analyses):
    a LayerNorm over the channels of the moduli, y = LN(|x|) * x / (|x| + eps). The phase is
    kept (flipped by pi where the normalised modulus is negative); the relative moduli are
    standardised, not removed, so they stay free to carry information."""

    def __init__(self, d: int, eps: float = 1e-5):
        super().__init__()
        self.layernorm = nn.LayerNorm(d, eps=eps)
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # (B, L, d), finite gradient at 0
        mod = torch.sqrt(x.real.square() + x.imag.square() + 1e-12)
        return self.layernorm(mod) * (x / (mod + self.eps))


def make_norm(mode: str, d: int) -> nn.Module:
    """`unit` (the paper's |z| = 1), `rms` (RobustPhaseNorm, newest official code) or `layer`
    (PhasePreservingLayerNorm, the official WMT14 code)."""
    if mode not in NORM_MODES:
        raise ValueError(f"unknown norm mode {mode!r}; valid: {NORM_MODES}")
    if mode == "unit":
        return UnitNorm()
    return RobustPhaseNorm(d) if mode == "rms" else PhasePreservingLayerNorm(d)


class ComplexLinear(nn.Module):
    """(W_r + i W_i) z + (b_r + i b_i) with two real nn.Linear(d, d):
    Re = W_r Re z - W_i Im z, Im = W_r Im z + W_i Re z (GHC step 4)."""

    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.re, self.im = nn.Linear(d_in, d_out), nn.Linear(d_in, d_out)
        for lin in (self.re, self.im):
            nn.init.xavier_uniform_(lin.weight)
            nn.init.zeros_(lin.bias)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        a, b = z.real, z.imag
        return torch.complex(self.re(a) - F.linear(b, self.im.weight), F.linear(b, self.re.weight) + self.im(a))


class ModReLU(nn.Module):
    """ModReLU(z) = ReLU(|z| + b) z / (|z| + 1e-6): changes the modulus, keeps the phase."""

    def __init__(self, d: int):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(d))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        mod = torch.sqrt(z.real.square() + z.imag.square() + 1e-12)
        return z * (F.relu(mod + self.bias) / (mod + 1e-6))


def complex_dropout(z: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    """Dropout with one mask shared by the real and imaginary parts (the phase survives)."""
    if not training or p == 0.0:
        return z
    keep = (torch.rand(z.shape, device=z.device) >= p).to(z.real.dtype) / (1.0 - p)
    return z * keep


class ImplicitFilter(nn.Module):
    """Hyena-style implicit spectral filter h in C^{L x d}: an MLP (SiLU) applied to
    [sin(2 pi f t), cos(2 pi f t)], t = linspace(0, 1, L), f = 1..n_freqs (GHC step 2)."""

    def __init__(self, d: int, hidden: int = 64, n_freqs: int = 32):
        super().__init__()
        self.d, self.n_freqs = d, n_freqs
        self.mlp = nn.Sequential(nn.Linear(2 * n_freqs, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(),
                                 nn.Linear(hidden, 2 * d))

    def forward(self, seq_len: int, device=None) -> torch.Tensor:
        t = torch.linspace(0, 1, seq_len, device=device)[:, None]  # (L, 1)
        f = 2 * math.pi * torch.arange(
            1, self.n_freqs + 1, device=device, dtype=torch.float32
        )  # (F,)
        # (L, 2d)
        out = self.mlp(torch.cat([torch.sin(t * f), torch.cos(t * f)], -1))
        return torch.complex(out[:, : self.d], out[:, self.d:])


class ExplicitFilter(nn.Module):
    """Directly learned complex filter (the WMT14 variant), max_len x d, init N(0, 0.02^2)."""

    def __init__(self, d: int, max_len: int):
        super().__init__()
        self.max_len = max_len
        self.re = nn.Parameter(0.02 * torch.randn(max_len, d))
        self.im = nn.Parameter(0.02 * torch.randn(max_len, d))

    def forward(self, seq_len: int, device=None) -> torch.Tensor:
        if seq_len > self.max_len:
            raise ValueError(f"sequence length {seq_len} exceeds the explicit filter's max_len {self.max_len}")
        return torch.complex(self.re[:seq_len], self.im[:seq_len])


def harmonic_conv(x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """Global mixing along the sequence: IFFT(FFT(x) * h) (ortho norms cancel),
    i.e. the circular convolution of x with the kernel IFFT(h).
    x (B, L, d) complex, h (L, d)."""
    # (B, L, d), frequency along dim 1
    X = torch.fft.fft(x, dim=1, norm="ortho")
    return torch.fft.ifft(X * h, dim=1, norm="ortho")


class GatedHarmonicConv(nn.Module):
    """One PRISM layer (summary "Gated Harmonic Convolution layer").

    rms / layer mode (official code): y = x + f(norm(x)) (pre-norm residual), norm =
    RobustPhaseNorm (WikiText code) or PhasePreservingLayerNorm (WMT14 code).
    unit mode (paper):        y = P(x + f(P(x))), P(z) = z/|z|, so |y_j| = 1 after every layer.
    f: FFT filter -> gate sigma(W_g [Re; Im]) on Re/Im -> ComplexLinear -> ModReLU -> ComplexLinear -> dropout.
    """

    def __init__(self, d: int, norm: str = "unit", filter_kind: str = "implicit", filter_hidden: int = 64,
                 filter_freqs: int = 32, max_len: int = 512, dropout: float = 0.0):
        super().__init__()
        if filter_kind not in FILTER_KINDS:
            raise ValueError(f"unknown filter kind {filter_kind!r}; valid: {FILTER_KINDS}")
        self.d, self.mode, self.dropout = d, norm, dropout
        self.norm = make_norm(norm, d)
        self.filter = (ImplicitFilter(d, filter_hidden, filter_freqs) if filter_kind == "implicit"
                       else ExplicitFilter(d, max_len))
        self.gate = nn.Linear(2 * d, 2 * d)
        nn.init.xavier_uniform_(self.gate.weight)
        nn.init.zeros_(self.gate.bias)
        self.lin1, self.act, self.lin2 = ComplexLinear(d, d), ModReLU(d), ComplexLinear(d, d)

    def mix(self, xn: torch.Tensor) -> torch.Tensor:
        """f(x_hat): the gated harmonic convolution without the residual."""
        xt = harmonic_conv(xn, self.filter(xn.shape[1], xn.device))  # interference
        # (B, L, 2d)
        g = torch.sigmoid(self.gate(torch.cat([xn.real, xn.imag], -1)))
        xg = torch.complex(g[..., : self.d] * xt.real, g[..., self.d:] * xt.imag)
        return complex_dropout(
            self.lin2(self.act(self.lin1(xg))), self.dropout, self.training
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_complex(x, self.d)
        # keep the FFT path in complex64
        with torch.autocast(device_type=x.device.type, enabled=False):
            y = x + self.mix(self.norm(x))
            return project_unit(y) if self.mode == "unit" else y


class Bridge(nn.Module):
    """Complex -> real: LayerNorm(W_b [Re z; Im z]), 2d -> d."""

    def __init__(self, d: int):
        super().__init__()
        self.proj, self.ln = nn.Linear(2 * d, d), nn.LayerNorm(d)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.ln(self.proj(torch.cat([z.real, z.imag], -1)))
