"""Samplers over the trained denoiser, all with the `diffusers` schedulers: full DDPM and
few-step DDIM from noise (the baselines), and STEP's warm-started refinement with the
velocity-aware (stall) perturbation."""

from __future__ import annotations

import torch
from diffusers import DDIMScheduler, DDPMScheduler

SPACINGS = ("leading", "trailing")


def make_scheduler(kind: str, num_train_timesteps: int = 100,
                   spacing: str = "leading"):
    """The paper's noise schedule: `DDPMScheduler(num_train_timesteps=100,
    beta_schedule='squaredcos_cap_v2', clip_sample=True,
    prediction_type='epsilon')`, or the DDIM scheduler on the same betas
    (deterministic, eta=0). `spacing` places the K' inference timesteps
    ('leading': K'=2 -> [50, 0]; 'trailing': [99, 49])."""
    if spacing not in SPACINGS:
        raise ValueError(f"unknown timestep spacing {spacing!r}; valid: {', '.join(SPACINGS)}")
    common = dict(num_train_timesteps=num_train_timesteps,
                  beta_schedule="squaredcos_cap_v2", clip_sample=True,
                  prediction_type="epsilon", timestep_spacing=spacing)
    if kind == "ddpm":
        return DDPMScheduler(**common)
    if kind == "ddim":
        # the official evaluation's DDIM: set_alpha_to_one=True,
        # steps_offset=0, default (leading) spacing
        return DDIMScheduler(**common, set_alpha_to_one=True, steps_offset=0)
    raise ValueError(f"unknown sampler {kind!r}; valid samplers: ddpm, ddim")


def set_steps(scheduler, steps: int) -> torch.Tensor:
    """`scheduler.set_timesteps(steps)` with a clear error for impossible step counts."""
    n = scheduler.config.num_train_timesteps
    if not isinstance(steps, int) or not 1 <= steps <= n:
        raise ValueError(f"the number of denoising steps must be an integer in [1, {n}], got {steps!r}")
    scheduler.set_timesteps(steps)
    return scheduler.timesteps


@torch.no_grad()
def denoise(model, scheduler, sample: torch.Tensor, obs: torch.Tensor, generator: torch.Generator | None = None,
            keep: bool = False):
    """Run the reverse process over `scheduler.timesteps` from `sample` (already at the first
    timestep): eps = eps_theta(A, tau, o); A <- scheduler.step(eps, tau, A).prev_sample.
    With `keep`, also return the list of intermediate samples [A_tau1, ..., A_0-output]."""
    states = [sample]
    for t in scheduler.timesteps:
        eps = model(sample, t.to(sample.device), obs)
        if isinstance(scheduler, DDIMScheduler):
            sample = scheduler.step(eps, t, sample, eta=0.0).prev_sample
        else:
            sample = scheduler.step(eps, t, sample, generator=generator).prev_sample
        states.append(sample)
    return (sample, states) if keep else sample


def sample_from_noise(model, scheduler, steps: int, obs: torch.Tensor, horizon: int, action_dim: int,
                      generator: torch.Generator | None = None) -> torch.Tensor:
    """The baseline diffusion policy: A^T ~ N(0, I) of shape (B, H, d_a), then `steps` reverse
    steps (DDPM with all 100 steps is the quality reference; DDIM-2 the fast baseline)."""
    set_steps(scheduler, steps)
    x = torch.randn(obs.shape[0], horizon, action_dim, generator=generator, device=obs.device)
    return denoise(model, scheduler, x, obs, generator)


def warm_start_refine(model, scheduler, steps: int, obs: torch.Tensor,
                      warm: torch.Tensor,
                      generator: torch.Generator | None = None,
                      keep: bool = False, noise: torch.Tensor | None = None):
    """STEP's warm-started refinement: with K'=`steps` inference timesteps
    tau_1 > ... , noise the warm start to tau_1,
    A^{tau_1} = sqrt(abar_{tau_1}) Ã + sqrt(1 - abar_{tau_1}) eps
    (`scheduler.add_noise`), then run the K' reverse steps from there."""
    timesteps = set_steps(scheduler, steps)
    if noise is None:
        noise = torch.randn(warm.shape, generator=generator, device=warm.device)
    x = scheduler.add_noise(warm, noise, timesteps[:1].to(warm.device))
    return denoise(model, scheduler, x, obs, generator, keep=keep)


def chunk_change(cache: torch.Tensor, older: torch.Tensor) -> torch.Tensor:
    """||A_cache - A_{t-2H}||: the Frobenius norm of the difference between the two latest action
    chunks (B, H, d_a), unnormalised; (B,)."""
    if cache.shape != older.shape or cache.dim() != 3:
        raise ValueError(f"the two chunks must be equal (B, H, d_a) shapes, got {tuple(cache.shape)}, {tuple(older.shape)}")
    return (cache - older).flatten(1).norm(dim=1)


def stall_perturbation(warm: torch.Tensor, cache: torch.Tensor,
                       older: torch.Tensor, eps_a: float, sigma: float,
                       sigma_stall: float,
                       generator: torch.Generator | None = None):
    """STEP's velocity-aware perturbation: stall if
    ||A_cache - A_{t-2H}|| < eps_a (the two latest action chunks barely
    differ); then the warm start is A~ = sigma * Â + sigma_t * xi with
    (sigma, sigma_t) = (sigma, sigma_stall) when stalled and (1, 0) otherwise,
    xi ~ N(0, I). warm (B, H, d_a) normalised; cache, older (B, H, d_a) raw.
    Returns (A~, stalled (B,))."""
    stalled = chunk_change(cache, older) < eps_a  # (B,)
    xi = torch.randn(warm.shape, generator=generator, device=warm.device)
    m = stalled[:, None, None].to(warm.dtype)  # (B, 1, 1)
    return (m * sigma + (1 - m)) * warm + m * sigma_stall * xi, stalled


def shift_chunk(chunk: torch.Tensor, n_exec: int) -> torch.Tensor:
    """Action reuse: the previous chunk (B, H, d_a) advanced by the n_a executed actions and
    padded with its last action, aligned with the next decision's chunk."""
    if not 0 < n_exec < chunk.shape[1]:
        raise ValueError(f"n_exec must lie in (0, H={chunk.shape[1]}), got {n_exec}")
    return torch.cat([chunk[:, n_exec:], chunk[:, -1:].expand(-1, n_exec, -1)], 1)
