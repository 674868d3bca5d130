"""The chapter's experiment: per independently trained seed, train the networks, roll out every
method on the same start states, time the decisions (batch 1 and a batch of robots), measure
the contraction of the action error along STEP's own refinement and the stall rate with and
without the perturbation. `run_experiment` returns plain data; the claims are decided from it
in `claims.py` (`build_ledger`)."""

from __future__ import annotations

import numpy as np
import torch

from icml26.common import Timer, progress, resolve_device

from .config import StepConfig
from .data import make_windows
from .env import ObstacleReach2D, collect_demos, concat_layouts, sample_layouts
from .policy import ChunkPolicy, MethodSpec, Rollout, TrainedPolicy, method_specs, rollout, train_policy
from .sampling import make_scheduler, warm_start_refine


def eval_layouts(config: StepConfig, device) -> "Layout":  # noqa: F821
    """The evaluation start states: `episodes_per_seed` scenes per evaluation seed (same for all methods)."""
    return concat_layouts([sample_layouts(config.episodes_per_seed, torch.Generator(device=device).manual_seed(1000 + s),
                                          device) for s in config.eval_seeds])


@torch.no_grad()
def held_out_windows(trained: TrainedPolicy, n: int = 256, seed: int = 0):
    """Held-out expert windows with a complete executed history (fresh demos, seed 10_000 + seed):
    (obs (N, T_o, 6), prev (N, H_p, 2), expert chunk (N, H, 2)), normalised, and the generator."""
    c, dev = trained.config, trained.device
    g = torch.Generator(device=dev).manual_seed(10_000 + seed)
    demos = collect_demos(max(8, n // 16), g, c.max_speed, c.goal_tol, c.obstacle_radius, c.max_steps, dev)
    w = make_windows(demos, trained.obs_norm, trained.act_norm, c.obs_horizon, c.pred_horizon, c.prev_horizon)
    full = (w.prev_action.abs().sum(-1) > 0).all(1)  # states with a complete executed history
    idx = torch.nonzero(full).squeeze(1)[:n]
    return w.obs[idx], w.prev_action[idx], w.action[idx], g


@torch.no_grad()
def predictor_r2(trained: TrainedPolicy, n: int = 256, seed: int = 0) -> dict[str, float]:
    """The predictors' training criterion on held-out expert windows: R^2 = 1 - MSE / Var of the
    expert chunk (normalised units), for the STEP predictor and the spatial-only one."""
    obs, prev, ref, _ = held_out_windows(trained, n, seed)
    var = float((ref - ref.mean(0)).pow(2).mean())
    out = {}
    for name, net in (("spatiotemporal", trained.predictor), ("spatial", trained.spatial_predictor)):
        out[name] = 1.0 - float((net(prev, obs) - ref).pow(2).mean()) / var
    return out


@torch.no_grad()
def measure_contraction(trained: TrainedPolicy, n: int = 256, seed: int = 0) -> dict[str, np.ndarray]:
    """Empirical contraction of the action error during STEP's own refinement (the proof's c_k).

    On held-out expert states with a full action history, the warm start Â = f_phi(A_prev, o)
    and the expert chunk A* are noised to STEP's first timestep tau_1 (K'=`refine_steps` DDIM
    steps, the official leading spacing: K'=2 -> tau_1 = 50) with the same noise and refined by
    the same deterministic DDIM steps. e_k = ||Ã_k - A*_k|| per state; the ratio e_{k+1} / e_k
    (median over states) below 1 means the error shrinks at that step.
    """
    c = trained.config
    obs, prev, ref, g = held_out_windows(trained, n, seed)
    warm = trained.predictor(prev, obs)  # (N, H, d_a)
    sched = make_scheduler("ddim", c.num_train_timesteps, "leading")
    noise = torch.randn(warm.shape, generator=g, device=warm.device)
    _, s_warm = warm_start_refine(trained.denoiser, sched, c.refine_steps, obs, warm, keep=True, noise=noise)
    _, s_ref = warm_start_refine(trained.denoiser, sched, c.refine_steps, obs, ref, keep=True, noise=noise)
    err = torch.stack([(a - b).flatten(1).norm(dim=1) for a, b in zip(s_warm, s_ref)], 1)  # (N, K'+1)
    ratios = (err[:, 1:] / err[:, :-1].clamp_min(1e-12)).median(0).values
    return {"timesteps": sched.timesteps.cpu().numpy(), "error": err.mean(0).cpu().numpy(),
            "ratio": ratios.cpu().numpy(), "per_state_error": err.cpu().numpy(),  # (N, K'+1)
            "predictor_mse": float((warm - ref).pow(2).mean())}


def straight_line_success(config: StepConfig, layout, device) -> float:
    """The trivial baseline of the competence checks: command the goal at every step (no detour)."""
    env = ObstacleReach2D(layout, config.max_speed, config.goal_tol, config.obstacle_radius, config.max_steps)
    while not bool(env.done.all()):
        env.step(layout.goal)
    return float(env.success.float().mean())


def timed_calls(trained: TrainedPolicy, spec: MethodSpec, obs_hist: torch.Tensor, repeats: int) -> list[float]:
    """Seconds of `repeats` timed decisions at the batch size of `obs_hist` (after a warm-up call
    that fills the history, so STEP and reuse take their warm path)."""
    g = torch.Generator(device=trained.device).manual_seed(0)
    policy = ChunkPolicy(trained, spec, obs_hist.shape[0], g)
    chunk = policy.act(obs_hist)
    policy.executed(chunk[:, :trained.config.action_horizon])
    out = []
    for _ in range(max(1, repeats)):
        with Timer(trained.device) as timer:
            policy.act(obs_hist)
        out.append(timer.seconds)
    return out


def _paths(ro: Rollout, n: int) -> np.ndarray:
    return np.round(ro.paths[:n].numpy(), 3)  # (n, T+1, 2)


def run_seed(config: StepConfig, seed: int, device, keep_paths: bool = False) -> dict:
    """One independently trained seed: train the denoiser and both predictors afresh (seed
    `seed`), then run every method of `method_specs` on the same evaluation scenes with the same
    sampling seed; time the decisions, measure the contraction, the stalls and the start-up
    diagnostics. Returns plain data."""
    trained = train_policy(config, seed, device)
    specs = method_specs(config)
    names = method_names(config)
    layout = eval_layouts(config, device)
    rollouts, lat1 = {}, {}
    obs1 = torch.cat([layout.start[:1], layout.goal[:1], layout.center[:1]], -1)  # (1, 6)
    for name, spec in progress(specs.items(), desc="methods", leave=False):
        rollouts[name] = rollout(trained, spec, layout, torch.Generator(device=device).manual_seed(seed + 7))
        lat1[name] = timed_calls(trained, spec, obs1[:, None].expand(1, config.obs_horizon, -1), config.latency_repeats)
    nb = min(config.latency_batch, layout.n)
    obs_b = torch.cat([layout.start[:nb], layout.goal[:nb], layout.center[:nb]], -1)  # (nb, 6)
    lat_b = {names[k]: timed_calls(trained, specs[names[k]], obs_b[:, None].expand(nb, config.obs_horizon, -1),
                                   config.latency_repeats) for k in ("step", "full")}
    startup = startup_diagnostics(trained, layout, seed, rollouts[names["step"]])
    stall = stall_experiment(trained, layout, seed)
    contraction = measure_contraction(trained, seed=seed)
    out = {
        "seed": int(seed),
        "success": {k: ro.success.float().numpy() for k, ro in rollouts.items()},  # per episode (0/1)
        "collided": {k: ro.collided.float().numpy() for k, ro in rollouts.items()},
        "ms_per_decision_rollout": {k: 1e3 * ro.seconds_per_decision for k, ro in rollouts.items()},
        "latency_batch1_s": lat1, "latency_batch_s": lat_b, "latency_batch_size": nb,
        "contraction": contraction, "predictor_r2": predictor_r2(trained, seed=seed),
        "straight_line_success": straight_line_success(config, layout, device),
        "stall": {k: {"stalled": ro.stalled.float().numpy(), "success": float(ro.success.float().mean()),
                      "n_perturbed": int(ro.n_perturbed)} for k, ro in stall.items()},
        "startup": {k: {"success": float(ro.success.float().mean()),
                        "commitment": first_chunk_commitment(ro, config.action_horizon),
                        "ms_per_decision": 1e3 * ro.seconds_per_decision} for k, ro in startup.items()},
        "losses": {k: np.asarray(v, dtype=float)[:: max(1, len(v) // 200)] for k, v in trained.losses.items()},
    }
    if keep_paths:  # the page's figures: paths of the first 20 episodes and the precomputed Explore views
        out["paths"] = {k: _paths(ro, 20) for k, ro in rollouts.items()}
        out["startup_paths"] = {k: {"paths": _paths(ro, 20), "success": ro.success[:20].float().numpy()}
                                for k, ro in startup.items()}
        out["explore"] = explore_views(trained, config.explore_episodes, seed)
    return out


def run_experiment(config: StepConfig, seed: int = 0, device=None) -> dict:
    """The chapter's experiment: `config.train_seeds` independently trained seeds (seed, seed+1,
    ...), each training every network afresh and running every method on the same evaluation
    scenes (`run_seed`). Plain data: per seed, the per-episode outcomes the ledger decides on,
    the timings at batch 1 and at `latency_batch`, the contraction errors, the stalls; the first
    seed also keeps the paths and the Explore views for the page's figures."""
    device = resolve_device("auto") if device is None else resolve_device(device)
    seeds = [int(seed) + i for i in range(config.train_seeds)]
    per_seed = [run_seed(config, s, device, keep_paths=(i == 0)) for i, s in
                enumerate(progress(seeds, desc="training seeds"))]
    return {"seeds": seeds, "methods": list(method_specs(config)), "roles": method_names(config),
            "refine_steps": config.refine_steps, "episodes": len(config.eval_seeds) * config.episodes_per_seed,
            "per_seed": per_seed}


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


def startup_table(results: dict) -> str:
    """Markdown table of the start-up diagnostics (first training seed): success, commitment
    after the first chunk, and time per decision (same run, batch of all episodes)."""
    r = results["per_seed"][0]
    rows = ["| variant | success | sideways move after the first chunk | ms per decision (batch of all episodes) |",
            "|---|---|---|---|"]
    for name, d in r["startup"].items():
        rows.append(f"| {name} | {d['success']:.2f} | {d['commitment']:.3f} | {d['ms_per_decision']:.0f} |")
    full = results["roles"]["full"]
    rows.append(f"| {full} (reference, from noise) | {np.mean(r['success'][full]):.2f} | – | "
                f"{r['ms_per_decision_rollout'][full]:.0f} |")
    return "\n".join(rows)


def method_names(config: StepConfig) -> dict[str, str]:
    """Roles -> method names of `method_specs`."""
    K, full = config.refine_steps, config.num_train_timesteps
    return {"full": f"DDPM-{full}", "ddim": f"DDIM-{K}", "ddim_trail": f"DDIM-{K} trailing",
            "spatial": f"Spatial-only-{K}", "pred": "Predictor only", "reuse": f"Reuse-{K}", "step": f"STEP-{K}"}


EXPLORE_STEPS = (1, 2, 4, 8)


def explore_rollouts(trained: TrainedPolicy, steps: int, warm_start: bool, n: int = 12, seed: int = 0,
                     sampler: str = "ddim") -> dict[str, Rollout]:
    """A cheap re-run on `n` fixed scenes: the K-step policy with the warm start (STEP-K) or
    without it (DDIM-K trailing, from noise), next to the predictor alone."""
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


def explore_views(trained: TrainedPolicy, n: int = 12, seed: int = 0) -> dict:
    """The Explore section's precomputed views (plain data): for K' in `EXPLORE_STEPS`, with and
    without the warm start, the paths and successes on `n` fixed scenes, next to the predictor alone."""
    views = {}
    for steps in EXPLORE_STEPS:
        if steps > trained.config.num_train_timesteps:
            continue
        for warm in (True, False):
            runs = explore_rollouts(trained, steps, warm, n, seed, trained.config.sampler)
            views[f"{steps}-{'warm' if warm else 'noise'}"] = {
                name: {"paths": _paths(ro, n), "success": ro.success.float().numpy()} for name, ro in runs.items()}
    return views
