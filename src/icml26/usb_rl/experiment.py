"""The chapter's experiment: one model-based pipeline, several scalarisations, several seeds;
evaluation in the real environment; the reproduction check; the widget's cheap re-runs."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import torch

from icml26.common import progress, resolve_device

from .agent import PolicyPopulation, dual_ascent, imagine, linear_objective, score_objective
from .config import USBConfig
from .env import HazardNav, rollout, waypoint_explorer
from .score import MonotoneScore, effective_multiplier, fit_score, return_slope
from .world_model import WorldModel, fit_world_model, transitions

def method_names(config: USBConfig) -> list[str]:
    """Population order: unconstrained, each fixed lambda, Lagrangian, USB-RL."""
    return ["unconstrained"] + [f"linear {lam:g}" for lam in config.lambdas] + ["lagrangian", "usb"]


@dataclass
class SeedResult:
    """One seed: every method's real (return, cost), the trained parts and the training logs."""

    names: list[str]
    returns: np.ndarray  # (P,) mean real episode return over n_eval test episodes
    costs: np.ndarray  # (P,) mean real episode cost
    policy: PolicyPopulation
    model: WorldModel
    score: MonotoneScore
    score_batch: tuple[torch.Tensor, torch.Tensor]  # the last outcome batch the score was fit on
    lambda_eff: list[float] = field(default_factory=list)  # USB's mean exchange rate at each refit
    lambda_lagrange: list[float] = field(default_factory=list)
    return_slope: list[float] = field(default_factory=list)  # USB's mean dS/dG^r at each refit


def _starts(config: USBConfig, shape: tuple[int, ...], generator: torch.Generator, device) -> torch.Tensor:
    """Start states (0, U(-j, j)) of shape (*shape, 2), as HazardNav.reset draws them."""
    y = (torch.rand(shape, generator=generator) * 2 - 1) * config.start_jitter
    return torch.stack([torch.zeros_like(y), y], -1).to(device)


def _population_rollout(config: USBConfig, policy: PolicyPopulation, n_per: int, noise: float,
                        generator: torch.Generator, device) -> dict[str, torch.Tensor]:
    """Real episodes of every policy at once: one HazardNav with P * n_per environments;
    environment block p is driven by policy p. Outcomes come back as (P, n_per)."""
    p = policy.n_policies
    env = HazardNav(p * n_per, config.horizon, config.step_size, config.hazard_half_width, config.hazard_apex,
                    config.start_jitter, device)

    def act(obs: torch.Tensor, t: int) -> torch.Tensor:
        with torch.no_grad():
            a = policy(obs.reshape(p, n_per, 2)).reshape(p * n_per, 2)  # (P*n, 2)
        if noise > 0:
            a = a + noise * torch.randn(a.shape, generator=generator).to(device)
        return a

    ep = rollout(env, act, generator)
    ep["G_r_p"], ep["G_c_p"] = ep["G_r"].reshape(p, n_per), ep["G_c"].reshape(p, n_per)  # (P, n)
    return ep


def run_seed(config: USBConfig, seed: int = 0, show_progress: bool = True) -> SeedResult:
    """Train all agents on one seed (the outer loop of the chapter).

    1. exploration data (waypoint explorer) -> fit the world model;
    2. for each round: `policy_steps` steps of policy optimisation in imagination for all
       agents at once, USB's score refit every `score_every` steps on a batch of outcomes
       (real episodes + imagined rollouts of its current policy), the Lagrangian's lambda
       updated by dual ascent; then every agent collects real episodes, which join the
       shared replay, and the world model is refit;
    3. evaluation: `n_eval` noise-free real episodes per agent.
    """
    device = resolve_device(config.device)
    gen = torch.Generator().manual_seed(int(seed))
    torch.manual_seed(int(seed))
    names = method_names(config)
    n_pol, usb, lag = len(names), len(names) - 1, len(names) - 2
    lam_fixed = torch.tensor([0.0, *config.lambdas, 0.0, 0.0], device=device)  # (P,); lag/usb slots unused

    env = HazardNav(config.n_envs, config.horizon, config.step_size, config.hazard_half_width, config.hazard_apex,
                    config.start_jitter, device)
    explore = rollout(env, waypoint_explorer(env, gen, config.collect_noise), gen)
    data = transitions(explore)
    real_r, real_c = explore["G_r"], explore["G_c"]  # the agent's own real outcomes (score data)

    model = WorldModel(2, 2, config.wm_hidden, config.ensemble, config.step_size, gen).to(device)
    wm_opt = torch.optim.Adam(model.parameters(), lr=config.wm_lr)
    fit_world_model(model, data, config.wm_steps_initial, config.wm_batch, generator=gen, optimizer=wm_opt)

    policy = PolicyPopulation(n_pol, 2, 2, config.policy_hidden, gen).to(device)
    pol_opt = torch.optim.Adam(policy.parameters(), lr=config.policy_lr)
    score = MonotoneScore(config.score_hidden, gen).to(device)
    sc_opt = torch.optim.Adam(score.parameters(), lr=config.score_lr)
    res = SeedResult(names, np.zeros(n_pol), np.zeros(n_pol), policy, model, score, (real_r, real_c))
    lam_lag = 0.0
    total = (config.rounds + 1) * config.policy_steps
    bar = progress(range(total), desc=f"seed {seed}", disable=None if show_progress else True)
    for it in bar:
        # region: score refit
        # refit the score on fresh outcomes: dynamic balancing
        if it % config.score_every == 0:
            n_real = int(round(config.score_real_frac * config.score_batch))
            n_im = config.score_batch - n_real
            with torch.no_grad():
                start = _starts(config, (n_pol, n_im), gen, device)
                sig = torch.zeros(n_pol, n_im, 1, device=device)
                sig[usb] = (torch.rand(n_im, 1, generator=gen).to(device)
                            * config.outcome_noise_max)
                im = imagine(policy, model, start, config.horizon, sig, gen)
            pick = torch.randint(0, real_r.numel(), (n_real,), generator=gen).to(device)
            g_r = torch.cat([real_r[pick], im["G_r"][usb]])
            g_c = torch.cat([real_c[pick], im["G_c"][usb]])
            fit_score(score, g_r, g_c, config.score_steps,
                      beta_bt=config.beta_bt, tol=config.dominance_tol,
                      optimizer=sc_opt)
            res.score_batch = (g_r, g_c)
            with torch.no_grad():
                clean = imagine(policy, model, start, config.horizon)
            res.lambda_eff.append(float(effective_multiplier(
                score, clean["G_r"][usb], clean["G_c"][usb]).mean()))
            slope = float(return_slope(
                score, clean["G_r"][usb], clean["G_c"][usb]).mean())
            res.return_slope.append(slope)
        # endregion
        # region: policy step
        start = _starts(config, (n_pol, config.imagined_rollouts), gen, device)
        im = imagine(policy, model, start, config.horizon, config.policy_noise, gen)
        lam = lam_fixed.clone()
        lam[lag] = lam_lag
        objective = linear_objective(im["G_r"], im["G_c"], lam[:, None])  # (P, M)
        objective = torch.cat([objective[:usb], score_objective(
            score, im["G_r"][usb:], im["G_c"][usb:], max(slope, 1e-6),
            config.usb_objective == "score_of_mean")])
        # agents share no parameters: each follows its own objective; the
        # same small pre-tanh penalty for all keeps the actions out of tanh
        # saturation (gradients vanish there)
        loss = (-objective.mean(1).sum()
                + config.action_reg * im["saturation"].mean(1).sum())
        pol_opt.zero_grad()
        loss.backward()
        pol_opt.step()
        lam_lag = dual_ascent(lam_lag, float(im["G_c"][lag].detach().mean()),
                              config.cost_budget, config.dual_lr)
        res.lambda_lagrange.append(lam_lag)
        # endregion
        if (it + 1) % config.policy_steps == 0 and (it + 1) < total:  # end of a round: real data, refit model
            ep = _population_rollout(config, policy, config.n_envs, config.collect_noise, gen, device)
            new = transitions(ep)
            data = {k: torch.cat([data[k], new[k]]) for k in data}
            real_r = torch.cat([real_r, ep["G_r_p"][usb]])
            real_c = torch.cat([real_c, ep["G_c_p"][usb]])
            fit_world_model(model, data, config.wm_steps_refit, config.wm_batch, generator=gen, optimizer=wm_opt)
    ev = _population_rollout(config, policy, config.n_eval, 0.0, gen, device)
    res.returns = ev["G_r_p"].mean(1).cpu().numpy()
    res.costs = ev["G_c_p"].mean(1).cpu().numpy()
    return res


def run_seeds(config: USBConfig, seed: int = 0) -> list[SeedResult]:
    """`run_seed` for seeds seed, seed+1, ..., seed+n_seeds-1 (each trains every agent afresh)."""
    return [run_seed(config, seed + k) for k in range(config.n_seeds)]


def seed_summary(res: SeedResult, n_grid: int = 41) -> dict:
    """One trained seed as plain data: outcomes, training logs, the score's monotonicity counts
    (C1's sanity check), its last outcome batch and its values on a grid over that batch."""
    from .claims import monotonicity_violations

    g_r, g_c = res.score_batch
    with torch.no_grad():
        r = torch.linspace(float(g_r.min()), float(g_r.max()), n_grid, device=g_r.device)
        c = torch.linspace(float(g_c.min()), float(g_c.max()), n_grid, device=g_c.device)
        R, C = torch.meshgrid(r, c, indexing="ij")  # (n, n)
        grid = res.score(R, C)  # (n, n)
    return {"returns": res.returns, "costs": res.costs, "lambda_eff": list(res.lambda_eff),
            "lambda_lagrange": list(res.lambda_lagrange), "return_slope": list(res.return_slope),
            "monotonicity": monotonicity_violations(res.score, g_r, g_c),
            "score_batch": {"g_r": g_r.cpu().numpy(), "g_c": g_c.cpu().numpy()},
            "score_grid": {"g_r": r.cpu().numpy(), "g_c": c.cpu().numpy(), "score": grid.cpu().numpy()}}


def run_experiment(config: USBConfig, seed: int = 0, device=None, trained: list | None = None) -> dict:
    """The whole experiment behind the ledger (CONTRIBUTING.md, section 1), as plain data.

    Seeds seed, ..., seed + n_seeds - 1, each training every agent afresh (world model, score,
    policies); per seed every agent's real (return, cost) over `n_eval` test episodes, the
    training logs and the score's checks. `device=None` means `resolve_device("auto")`.
    `trained`: a list that, when given, receives the trained `SeedResult`s (models, policies and
    score, for the page's figures and widget); they are not part of the results."""
    config = replace(config, device=str(resolve_device(config.device if device is None else device)))
    runs = run_seeds(config, seed)
    if trained is not None:
        trained.extend(runs)
    per_seed = [seed_summary(r) for r in runs]
    return {"seeds": [seed + k for k in range(config.n_seeds)], "names": list(runs[0].names),
            "horizon": config.horizon, "step_size": config.step_size,
            "returns": np.stack([r.returns for r in runs]), "costs": np.stack([r.costs for r in runs]),
            "monotonicity": [p["monotonicity"] for p in per_seed], "per_seed": per_seed}


def outcome_table(results: dict) -> dict[str, np.ndarray]:
    """Per-seed points of `run_experiment`'s results: returns, costs (S, P) and the method names."""
    return {"names": np.array(results["names"]), "returns": np.asarray(results["returns"], float),
            "costs": np.asarray(results["costs"], float)}


def linear_frontier(model: WorldModel, config: USBConfig, lambdas: np.ndarray, steps: int = 60,
                    seed: int = 0, device=None) -> dict[str, np.ndarray]:
    """The cheap re-run behind the widget: train one fresh policy per lambda in `lambdas`
    (batched as one population) in the given world model and evaluate them in the real
    environment; returns the (return, cost) frontier of fixed linear penalties and paths."""
    device = device or next(model.parameters()).device
    lambdas = np.asarray(lambdas, float)
    if lambdas.ndim != 1 or lambdas.size < 1 or (lambdas < 0).any():
        raise ValueError("lambdas must be a non-empty 1-D array of non-negative weights")
    gen = torch.Generator().manual_seed(int(seed))
    policy = PolicyPopulation(len(lambdas), 2, 2, config.policy_hidden, gen).to(device)
    opt = torch.optim.Adam(policy.parameters(), lr=config.policy_lr)
    lam = torch.tensor(lambdas, dtype=torch.float32, device=device)[:, None]
    for p in model.parameters():
        p.requires_grad_(False)
    try:
        for _ in range(steps):
            im = imagine(policy, model, _starts(config, (len(lambdas), config.imagined_rollouts), gen, device),
                         config.horizon, config.policy_noise, gen)
            loss = (-linear_objective(im["G_r"], im["G_c"], lam).mean(1).sum()
                    + config.action_reg * im["saturation"].mean(1).sum())
            opt.zero_grad()
            loss.backward()
            opt.step()
    finally:
        for p in model.parameters():
            p.requires_grad_(True)
    ev = _population_rollout(config, policy, 64, 0.0, gen, device)
    paths = ev["obs"].reshape(config.horizon + 1, len(lambdas), 64, 2)[:, :, :8]  # (T+1, L, 8, 2)
    return {"lambdas": lambdas, "returns": ev["G_r_p"].mean(1).cpu().numpy(),
            "costs": ev["G_c_p"].mean(1).cpu().numpy(), "paths": paths.cpu().numpy()}


def policy_paths(result: SeedResult, config: USBConfig, n: int = 8, seed: int = 0) -> np.ndarray:
    """Real noise-free paths of every agent of one seed: (P, n, T+1, 2)."""
    gen = torch.Generator().manual_seed(int(seed))
    device = next(result.policy.parameters()).device
    ev = _population_rollout(config, result.policy, n, 0.0, gen, device)
    return ev["obs"].reshape(config.horizon + 1, result.policy.n_policies, n, 2).permute(1, 2, 0, 3).cpu().numpy()


def imagined_paths(result: SeedResult, config: USBConfig, n: int = 8, seed: int = 0) -> np.ndarray:
    """Imagined (world-model) paths of every agent of one seed: (P, n, T+1, 2)."""
    gen = torch.Generator().manual_seed(int(seed))
    device = next(result.policy.parameters()).device
    with torch.no_grad():
        im = imagine(result.policy, result.model, _starts(config, (result.policy.n_policies, n), gen, device),
                     config.horizon)
    return im["states"].permute(1, 2, 0, 3).cpu().numpy()  # (T+1, P, n, 2) -> (P, n, T+1, 2)
