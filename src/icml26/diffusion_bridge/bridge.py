"""The latent denoising diffusion bridge (DDBM, VE form with T = sigma_max = 1), the
DDBM preconditioning, an ensemble of MLP denoisers (one independent network per run, trained
in one batched pass) and the deterministic DBIM-style sampler."""

from __future__ import annotations

import math

import torch
from torch import nn

T = 1.0  # the bridge horizon T = sigma_max


def bridge_mean_std(
    z0: torch.Tensor, zT: torch.Tensor, t: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Marginal of the VE bridge (method eq. for z_t): mean
    t^2/T^2 zT + (1 - t^2/T^2) z0, std t sqrt(1 - t^2/T^2). `t` broadcasts
    against the latents (e.g. shape (..., 1))."""
    if z0.shape != zT.shape:
        raise ValueError(f"z0 and zT must have the same shape, got {tuple(z0.shape)} and {tuple(zT.shape)}")
    a = (t / T) ** 2
    return a * zT + (1 - a) * z0, t * torch.sqrt((1 - a).clamp(min=0.0))


def sample_bridge(
    z0: torch.Tensor,
    zT: torch.Tensor,
    t: torch.Tensor,
    gen: torch.Generator | None = None,
) -> torch.Tensor:
    """z_t = mu_t(z0, zT) + s_t * eps, eps ~ N(0, I)."""
    mu, s = bridge_mean_std(z0, zT, t)
    eps = torch.randn(mu.shape, generator=gen, device=mu.device, dtype=mu.dtype)
    return mu + s * eps


def precond(
    t: torch.Tensor,
    sigma0: float = 1.0,
    sigmaT: float = 1.0,
    sigma0T: float = 0.0,
    c: float = 1.0,
):
    """DDBM preconditioning (c_skip, c_out, c_in) for the VE bridge
    (method: denoiser eq.).

    A = a^2 sT^2 + (1-a)^2 s0^2 + 2 a (1-a) s0T + c^2 t^2 (1-a), a = t^2/T^2,
    c_in = A^{-1/2}, c_skip = ((1-a) s0^2 + a s0T) / A,
    c_out = sqrt(a^2 (s0^2 sT^2 - s0T^2) + s0^2 c^2 t^2 (1-a)) c_in.
    """
    a = (t / T) ** 2
    A = (
        a ** 2 * sigmaT ** 2
        + (1 - a) ** 2 * sigma0 ** 2
        + 2 * a * (1 - a) * sigma0T
        + c ** 2 * t ** 2 * (1 - a)
    )
    c_in = A.rsqrt()
    c_skip = ((1 - a) * sigma0 ** 2 + a * sigma0T) / A
    c_out = torch.sqrt(
        a ** 2 * (sigma0 ** 2 * sigmaT ** 2 - sigma0T ** 2)
        + sigma0 ** 2 * c ** 2 * t ** 2 * (1 - a)
    ) * c_in
    return c_skip, c_out, c_in


def time_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    """Sinusoidal features of the EDM noise label c_noise = log(t) / 4 (= 250 log t / 1000)."""
    half = dim // 2
    freqs = torch.exp(-math.log(100.0) * torch.arange(half, device=t.device, dtype=t.dtype) / max(half - 1, 1))
    arg = 0.25 * torch.log(t) * freqs * 10.0  # (..., half)
    return torch.cat([torch.sin(arg), torch.cos(arg)], dim=-1)


class EnsembleMLP(nn.Module):
    """`members` independent MLPs (in -> hidden -> hidden -> out, SiLU) evaluated in one
    batched matmul: input (M, B, in) -> output (M, B, out). Each member is its own network
    (own init, own Adam moments), so one pass trains M runs at once."""

    def __init__(self, members: int, d_in: int, hidden: int, d_out: int, gen: torch.Generator | None = None,
                 zero_last: bool = True):
        super().__init__()
        dims = [d_in, hidden, hidden, d_out]
        self.weights = nn.ParameterList()
        self.biases = nn.ParameterList()
        for k, (i, o) in enumerate(zip(dims[:-1], dims[1:])):
            w = torch.randn(members, i, o, generator=gen) / math.sqrt(i)
            if zero_last and k == len(dims) - 2:
                w = w * 0.0
            self.weights.append(nn.Parameter(w))
            self.biases.append(nn.Parameter(torch.zeros(members, 1, o)))
        self.members = members

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        if h.ndim != 3 or h.shape[0] != self.members:
            raise ValueError(f"expected input (members={self.members}, B, d), got {tuple(h.shape)}")
        n = len(self.weights)
        for k in range(n):
            h = torch.baddbmm(self.biases[k], h, self.weights[k])
            if k < n - 1:
                h = nn.functional.silu(h)
        return h


class BridgeDenoiser(nn.Module):
    """D(z_t, t, z_T) = c_skip z_t + c_out F([c_in z_t, z_T, emb(t)]) for M runs at once.
    Latents are (M, B, d); `t` is (M, B, 1)."""

    def __init__(self, members: int, latent_dim: int, hidden: int, t_emb_dim: int = 16,
                 gen: torch.Generator | None = None):
        super().__init__()
        self.latent_dim, self.t_emb_dim = latent_dim, t_emb_dim
        self.F = EnsembleMLP(members, 2 * latent_dim + t_emb_dim, hidden, latent_dim, gen)

    def forward(
        self, zt: torch.Tensor, t: torch.Tensor, zT: torch.Tensor
    ) -> torch.Tensor:
        if zt.shape != zT.shape or zt.shape[-1] != self.latent_dim:
            raise ValueError(f"z_t and z_T must be (M, B, {self.latent_dim}), got {tuple(zt.shape)}, {tuple(zT.shape)}")
        c_skip, c_out, c_in = precond(t)
        inp = torch.cat(  # (M, B, 2d + e)
            [c_in * zt, zT, time_embedding(t, self.t_emb_dim)], dim=-1
        )
        return c_skip * zt + c_out * self.F(inp)


def time_grid(steps: int, t_max: float, t_min: float, device=None) -> torch.Tensor:
    """Decreasing grid t_max = t_N > ... > t_1 = t_min of `steps` points."""
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    if steps == 1:
        return torch.tensor([t_max], device=device)
    return torch.linspace(t_max, t_min, steps, device=device)


def sample_translation(denoiser, zT: torch.Tensor, steps: int,
                       t_max: float = 0.999, t_min: float = 0.002,
                       return_path: bool = False):
    """Deterministic DBIM-style sampler S(z_T) (method: "Sampler").

    Start at z_T (t = t_max ~ T); at each t_i: z0_hat = D(z, t_i, z_T),
    eps_hat = (z - mu_{t_i}(z0_hat, z_T)) / s_{t_i},
    z <- mu_{t_{i+1}}(z0_hat, z_T) + s_{t_{i+1}} eps_hat. Returns the last
    z0_hat (and the visited states if `return_path`). Differentiable.
    """
    grid = time_grid(steps, t_max, t_min, zT.device)
    z = zT
    path = [z]
    z0_hat = zT
    for i in range(len(grid)):
        t = grid[i].expand(*zT.shape[:-1], 1)  # (..., 1)
        z0_hat = denoiser(z, t, zT)
        if i + 1 < len(grid):
            mu, s = bridge_mean_std(z0_hat, zT, t)
            eps_hat = (z - mu) / s
            mu_next, s_next = bridge_mean_std(
                z0_hat, zT, grid[i + 1].expand_as(t)
            )
            z = mu_next + s_next * eps_hat
            path.append(z)
    return (z0_hat, path) if return_path else z0_hat


class AutoEncoder(nn.Module):
    """MLP autoencoder d_in -> hidden -> d_z -> hidden -> d_in, with standardised latents
    (the encoder's output is whitened per dimension with statistics fixed after training)."""

    def __init__(self, d_in: int, hidden: int, d_z: int):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d_in, hidden), nn.SiLU(), nn.Linear(hidden, d_z))
        self.dec = nn.Sequential(nn.Linear(d_z, hidden), nn.SiLU(), nn.Linear(hidden, d_in))
        self.register_buffer("mu", torch.zeros(d_z))
        self.register_buffer("sd", torch.ones(d_z))

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return (self.enc(x) - self.mu) / self.sd

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        return self.dec(z * self.sd + self.mu)


def train_autoencoder(x: torch.Tensor, hidden: int, d_z: int, steps: int, lr: float, seed: int = 0) -> AutoEncoder:
    """Full-batch Adam on the reconstruction MSE, then fix the latent standardisation."""
    torch.manual_seed(seed)
    ae = AutoEncoder(x.shape[1], hidden, d_z).to(x.device)
    opt = torch.optim.Adam(ae.parameters(), lr=lr)
    for _ in range(steps):
        loss = ((ae.dec(ae.enc(x)) - x) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        h = ae.enc(x)
        ae.mu.copy_(h.mean(0))
        ae.sd.copy_(h.std(0) + 1e-4)
    ae.requires_grad_(False)
    return ae
