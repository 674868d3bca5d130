"""The chapter's experiment: train once, roll out every method on the same start states,
time the decisions, measure the contraction of the action error during refinement and the
stall rate with and without the perturbation; the claims are decided in `claims.py`."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import torch

from icml26.common import progress, resolve_device

from .config import StepConfig
from .data import make_windows
from .env import collect_demos, concat_layouts, sample_layouts
from .policy import MethodSpec, Rollout, TrainedPolicy, decision_latency, method_specs, rollout, train_policy
from .sampling import make_scheduler, warm_start_refine


def eval_layouts(config: StepConfig, device) -> "Layout":  # noqa: F821
    """The evaluation start states: `episodes_per_seed` scenes per evaluation seed (same for all methods)."""
    return concat_layouts([sample_layouts(config.episodes_per_seed, torch.Generator(device=device).manual_seed(1000 + s),
                                          device) for s in config.eval_seeds])


@torch.no_grad()
def measure_contraction(trained: TrainedPolicy, n: int = 256, seed: int = 0) -> dict[str, np.ndarray]:
    """Empirical contraction of the action error during refinement (the proof's c_k).

    On held-out expert states with a full action history, the warm start Â = f_phi(A_prev, o)
    and the expert chunk A* are noised to the first of K=`contraction_steps` DDIM timesteps
    with the same noise and refined by the same deterministic DDIM steps. e_k = ||Ã_k - A*_k||
    per state; c_k = e_{k-1} / e_k (median over states). c_k < 1 means the error shrinks.
    """
    c, dev = trained.config, trained.device
    g = torch.Generator(device=dev).manual_seed(10_000 + seed)
    demos = collect_demos(max(8, n // 16), g, c.max_speed, c.goal_tol, c.obstacle_radius, c.max_steps, dev)
    w = make_windows(demos, trained.obs_norm, trained.act_norm, c.obs_horizon, c.pred_horizon, c.prev_horizon)
    full = (w.prev_action.abs().sum(-1) > 0).all(1)  # states with a complete executed history
    idx = torch.nonzero(full).squeeze(1)[:n]
    obs, prev, ref = w.obs[idx], w.prev_action[idx], w.action[idx]
    warm = trained.predictor(prev, obs)  # (N, H, d_a)
    sched = make_scheduler("ddim", c.num_train_timesteps, "leading")
    noise = torch.randn(warm.shape, generator=g, device=dev)
    _, s_warm = warm_start_refine(trained.denoiser, sched, c.contraction_steps, obs, warm, keep=True, noise=noise)
    _, s_ref = warm_start_refine(trained.denoiser, sched, c.contraction_steps, obs, ref, keep=True, noise=noise)
    err = torch.stack([(a - b).flatten(1).norm(dim=1) for a, b in zip(s_warm, s_ref)], 1)  # (N, K+1)
    ratios = (err[:, 1:] / err[:, :-1].clamp_min(1e-12)).median(0).values
    return {"timesteps": sched.timesteps.cpu().numpy(), "error": err.mean(0).cpu().numpy(),
            "ratio": ratios.cpu().numpy(), "per_state_error": err.cpu().numpy(),  # (N, K+1)
            "predictor_mse": float((warm - ref).pow(2).mean())}


@dataclass
class ExperimentResult:
    config: StepConfig
    trained: TrainedPolicy
    specs: dict[str, MethodSpec]
    rollouts: dict[str, Rollout]
    latency_batch1: dict[str, float]
    contraction: dict
    startup: dict[str, Rollout] = field(default_factory=dict)  # start-up diagnostics (not in the ledger)
    stall: dict[str, Rollout] = field(default_factory=dict)  # C4: STEP with / without the perturbation, dead band

    def success(self, name: str) -> np.ndarray:
        """Success rate per evaluation seed, (n_seeds,)."""
        return self.rollouts[name].success.float().reshape(len(self.config.eval_seeds), -1).mean(1).numpy()

    def episodes(self, name: str) -> np.ndarray:
        """Success per episode (0/1), (n_episodes,): the items of the paired tests (same start states)."""
        return self.rollouts[name].success.float().numpy()

    def collision(self, name: str) -> np.ndarray:
        return self.rollouts[name].collided.float().reshape(len(self.config.eval_seeds), -1).mean(1).numpy()


def run_experiment(config: StepConfig, seed: int = 0) -> ExperimentResult:
    """Train the denoiser and the predictor once (seed `seed`), then run every method of
    `method_specs` on the same evaluation scenes with the same sampling seed."""
    device = resolve_device(config.device)
    trained = train_policy(config, seed, device)
    specs = method_specs(config)
    layout = eval_layouts(config, device)
    rollouts, latency = {}, {}
    for name, spec in progress(specs.items(), desc="methods"):
        rollouts[name] = rollout(trained, spec, layout, torch.Generator(device=device).manual_seed(seed + 7))
        obs1 = torch.cat([layout.start[:1], layout.goal[:1], layout.center[:1]], -1)  # (1, 6)
        latency[name] = decision_latency(trained, spec, obs1[:, None].expand(1, config.obs_horizon, -1),
                                         config.latency_repeats)
    startup = startup_diagnostics(trained, layout, seed, rollouts[method_names(config)["step"]])
    stall = stall_experiment(trained, layout, seed)
    return ExperimentResult(config, trained, specs, rollouts, latency, measure_contraction(trained, seed=seed),
                            startup, stall)


def stall_experiment(trained: TrainedPolicy, layout, seed: int = 0) -> dict[str, Rollout]:
    """C4: STEP-K' with and without the velocity-aware perturbation on the same scenes in an
    environment with a dead band (static friction: commanded moves shorter than
    `stall_dead_band` do not move the point), where a policy whose chunks stop changing stalls."""
    c = trained.config
    out = {}
    for name, perturb in (("with perturbation", True), ("without perturbation", False)):
        spec = MethodSpec(f"STEP-{c.refine_steps}", "predictor", c.refine_steps, c.sampler, perturb=perturb)
        out[name] = rollout(trained, spec, layout, torch.Generator(device=trained.device).manual_seed(seed + 11),
                            dead_band=c.stall_dead_band)
    return out


def startup_specs(config: StepConfig) -> dict[str, MethodSpec]:
    """STEP-K' with its three start-ups: the first decision (no executed action yet) from the
    predictor's warm start (the paper's code), or, as diagnostics only, from noise with the same
    K' DDIM steps (trailing spacing, as the reuse baseline starts) or with full DDPM."""
    K, full = config.refine_steps, config.num_train_timesteps
    return {f"STEP-{K} (predictor start, the method)": MethodSpec(f"STEP-{K}", "predictor", K, config.sampler, perturb=True),
            f"STEP-{K}, first chunk DDIM-{K} trailing": MethodSpec(f"STEP-{K}", "predictor", K, config.sampler,
                                                                   perturb=True, startup="noise"),
            f"STEP-{K}, first chunk DDPM-{full}": MethodSpec(f"STEP-{K}", "predictor", K, config.sampler,
                                                             perturb=True, startup="full")}


def startup_diagnostics(trained: TrainedPolicy, layout, seed: int = 0, step_rollout: Rollout | None = None) -> dict[str, Rollout]:
    """Where does STEP lose success? The same STEP-K' policy, rolled out on the same scenes with
    the same sampling seed, differing only in how the first chunk of an episode is produced
    (`startup_specs`). If the diagnostics recover the full-step success, the refinement works and
    the loss sits in the start-up. `step_rollout` (the main run's STEP rollout) is reused as the
    first entry when given."""
    out = {}
    for name, spec in startup_specs(trained.config).items():
        if spec.startup == "predictor" and step_rollout is not None:
            out[name] = step_rollout
        else:
            out[name] = rollout(trained, spec, layout, torch.Generator(device=trained.device).manual_seed(seed + 7))
    return out


def first_chunk_commitment(ro: Rollout, n_exec: int) -> float:
    """Mean sideways displacement |x_{n_a} - x_0| after the first executed chunk: how far an
    episode has committed to a detour after one decision (the expert: about 0.15)."""
    return float((ro.paths[:, n_exec, 0] - ro.paths[:, 0, 0]).abs().mean())


def startup_table(result: "ExperimentResult") -> str:
    """Markdown table of the start-up diagnostics: success, commitment after the first chunk,
    and time per decision (same run, same batch)."""
    c = result.config
    rows = ["| variant | success (mean over seeds) | sideways move after the first chunk | ms per decision (batch of all episodes) |",
            "|---|---|---|---|"]
    for name, ro in result.startup.items():
        succ = ro.success.float().reshape(len(c.eval_seeds), -1).mean(1).mean()
        rows.append(f"| {name} | {succ:.2f} | {first_chunk_commitment(ro, c.action_horizon):.3f} | "
                    f"{ro.seconds_per_decision * 1e3:.0f} |")
    full = method_names(c)["full"]
    if full in result.rollouts:  # the reference, same run
        ro = result.rollouts[full]
        rows.append(f"| {full} (reference, from noise) | {result.success(full).mean():.2f} | "
                    f"{first_chunk_commitment(ro, c.action_horizon):.3f} | {ro.seconds_per_decision * 1e3:.0f} |")
    return "\n".join(rows)


def method_names(config: StepConfig) -> dict[str, str]:
    """Roles -> method names of `method_specs`."""
    K, full = config.refine_steps, config.num_train_timesteps
    return {"full": f"DDPM-{full}", "ddim": f"DDIM-{K}", "ddim_trail": f"DDIM-{K} trailing",
            "spatial": f"Spatial-only-{K}", "pred": "Predictor only", "reuse": f"Reuse-{K}", "step": f"STEP-{K}"}


def explore_rollouts(trained: TrainedPolicy, steps: int, warm_start: bool, n: int = 12, seed: int = 0,
                     sampler: str = "ddpm") -> dict[str, Rollout]:
    """The widget's cheap re-run: on `n` fixed scenes, the K-step policy with the warm start
    (STEP-K) or without it (DDIM-K trailing, from noise), next to the predictor alone."""
    c, dev = trained.config, trained.device
    if not isinstance(steps, int) or not 1 <= steps <= c.num_train_timesteps:
        raise ValueError(f"steps must be an integer in [1, {c.num_train_timesteps}], got {steps!r}")
    layout = sample_layouts(n, torch.Generator(device=dev).manual_seed(5000 + seed), dev)
    spec = (MethodSpec(f"STEP-{steps}", "predictor", steps, sampler, perturb=True) if warm_start
            else MethodSpec(f"DDIM-{steps} trailing", "noise", steps, "ddim", "trailing"))
    out = {}
    for s in (spec, MethodSpec("Predictor only", "predictor", 0)):
        out[s.name] = rollout(trained, s, layout, torch.Generator(device=dev).manual_seed(seed + 7))
    return out
