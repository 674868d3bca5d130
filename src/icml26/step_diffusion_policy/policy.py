"""Training of the two networks and the closed-loop policies that compare them.

Every method uses the same trained denoiser; they differ only in where the reverse process
starts and how many steps it takes (`MethodSpec`):
  noise     -> A^T ~ N(0, I) then K steps (DDPM-100 reference, DDIM-2 baselines),
  predictor -> STEP: Â = f_phi(A_prev, o), perturb if stalled, noise to tau_1, K' steps
               (K'=0: the predictor alone, a one-shot policy); with the spatial-only
               predictor f(o) (no action history) this is the BRIDGER-like start,
  reuse     -> the previous chunk shifted by n_a, noise to tau_1, K' steps (action reuse).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from icml26.common import Timer, progress

from .config import StepConfig
from .data import LinearNormalizer, Windows, make_windows
from .env import ACTION_DIM, OBS_DIM, Layout, ObstacleReach2D, collect_demos, concat_layouts, sample_layouts
from .models import ActionPredictorTransformer, ConditionalMLPDenoiser, ConditionalTemporalDenoiser
from .sampling import make_scheduler, sample_from_noise, shift_chunk, stall_perturbation, warm_start_refine

STARTS = ("noise", "predictor", "reuse")
STARTUPS = ("predictor", "noise", "full")


def diffusion_loss(model, scheduler, batch_obs, batch_action,
                   generator) -> torch.Tensor:
    """L_DP = E_{k, eps} || eps - eps_theta(sqrt(abar_k) A^0
    + sqrt(1-abar_k) eps, k, o) ||^2."""
    B = batch_action.shape[0]
    k = torch.randint(0, scheduler.config.num_train_timesteps, (B,),
                      generator=generator, device=batch_action.device)
    eps = torch.randn(batch_action.shape, generator=generator,
                      device=batch_action.device)
    noisy = scheduler.add_noise(batch_action, eps, k)
    return F.mse_loss(model(noisy, k, batch_obs), eps)


def predictor_loss(model, batch_prev, batch_obs, batch_action) -> torch.Tensor:
    """L_pred = || f_phi(A^exp_{t-H_p:t}, o_t) - A^exp_{t:t+H} ||^2 (normalised space)."""
    return F.mse_loss(model(batch_prev, batch_obs), batch_action)


def _fit(loss_fn, model, n_data, steps, batch, lr, generator,
         desc) -> list[float]:
    """AdamW (wd 1e-4) with linear warm-up then cosine decay; minibatches drawn
    with `generator`."""
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    warm = max(1, min(500, steps // 10))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (min(1.0, (s + 1) / warm) * 0.5
                        * (1 + math.cos(math.pi * min(1.0, s / steps)))))
    model.train()
    losses = []
    dev = next(model.parameters()).device
    for _ in progress(range(steps), desc=desc, leave=False):
        idx = torch.randint(0, n_data, (batch,), generator=generator,
                            device=dev)
        loss = loss_fn(idx)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    model.eval()
    return losses


@dataclass
class TrainedPolicy:
    """The trained denoiser and predictor, their normalisers, and the training curves."""

    config: StepConfig
    denoiser: ConditionalTemporalDenoiser | ConditionalMLPDenoiser
    predictor: ActionPredictorTransformer
    spatial_predictor: ActionPredictorTransformer  # the same network without the action history
    obs_norm: LinearNormalizer
    act_norm: LinearNormalizer
    windows: Windows
    losses: dict = field(default_factory=dict)

    @property
    def device(self) -> torch.device:
        return next(self.denoiser.parameters()).device


def train_policy(config: StepConfig, seed: int, device: torch.device) -> TrainedPolicy:
    """Expert demos -> windows -> the diffusion policy's denoiser and (separately) the predictor."""
    g = torch.Generator(device=device).manual_seed(int(seed))
    torch.manual_seed(int(seed))  # network initialisation
    demos = collect_demos(config.n_demos, g, config.max_speed, config.goal_tol, config.obstacle_radius,
                          config.max_steps, device)
    valid = torch.arange(demos.actions.shape[1], device=device)[None] < demos.lengths[:, None]
    obs_norm, act_norm = LinearNormalizer(demos.obs[valid]), LinearNormalizer(demos.actions[valid])
    win = make_windows(demos, obs_norm, act_norm, config.obs_horizon, config.pred_horizon, config.prev_horizon)
    if config.denoiser == "conv":
        den = ConditionalTemporalDenoiser(ACTION_DIM, OBS_DIM, config.obs_horizon, config.denoiser_channels,
                                          config.denoiser_blocks).to(device)
    else:
        den = ConditionalMLPDenoiser(ACTION_DIM, OBS_DIM, config.obs_horizon, config.pred_horizon,
                                     config.denoiser_channels, config.denoiser_blocks).to(device)
    pred, spatial = [ActionPredictorTransformer(ACTION_DIM, OBS_DIM, config.obs_horizon, config.pred_horizon,
                                                config.prev_horizon, config.predictor_dim, config.predictor_heads,
                                                config.predictor_enc_layers, config.predictor_dec_layers,
                                                config.predictor_dropout, use_history=h).to(device)
                     for h in (True, False)]
    sched = make_scheduler("ddpm", config.num_train_timesteps)
    losses = {
        "denoiser": _fit(lambda i: diffusion_loss(den, sched, win.obs[i], win.action[i], g), den, len(win),
                         config.denoiser_steps, config.batch_size, config.lr, g, "denoiser"),
        "predictor": _fit(lambda i: predictor_loss(pred, win.prev_action[i], win.obs[i], win.action[i]), pred,
                          len(win), config.predictor_steps, config.predictor_batch_size, config.predictor_lr, g, "predictor"),
        "spatial predictor": _fit(lambda i: predictor_loss(spatial, win.prev_action[i], win.obs[i], win.action[i]),
                                  spatial, len(win), config.predictor_steps, config.predictor_batch_size,
                                  config.predictor_lr, g, "spatial predictor"),
    }
    return TrainedPolicy(config, den, pred, spatial, obs_norm, act_norm, win, losses)


@dataclass(frozen=True)
class MethodSpec:
    """One way of producing an action chunk from the shared denoiser (see the module doc)."""

    name: str
    start: str  # 'noise' | 'predictor' | 'reuse'
    steps: int  # reverse steps K (0 only with start='predictor': the predictor alone)
    sampler: str = "ddpm"
    spacing: str = "leading"
    perturb: bool = False  # the velocity-aware perturbation (STEP)
    predictor: str = "spatiotemporal"  # 'spatiotemporal' (STEP) or 'spatial' (no action history, BRIDGER-like)
    # The first decision of an episode, where no action has been executed yet. 'predictor': the
    # predictor's warm start from a zero history, as in the official code (STEP's method). The other
    # two are start-up *diagnostics* (not the paper's method): the first chunk from noise, either with
    # the same K DDIM steps (trailing spacing, as the reuse baseline starts) or with full DDPM.
    startup: str = "predictor"

    def __post_init__(self) -> None:
        if self.start not in STARTS:
            raise ValueError(f"unknown start {self.start!r}; valid: {', '.join(STARTS)}")
        if self.steps < 0 or (self.steps == 0 and self.start != "predictor"):
            raise ValueError(f"{self.name}: steps must be >= 1 (0 is allowed only for the predictor alone), got {self.steps}")
        if self.predictor not in ("spatiotemporal", "spatial"):
            raise ValueError(f"unknown predictor {self.predictor!r}; valid: spatiotemporal, spatial")
        if self.startup not in STARTUPS:
            raise ValueError(f"unknown startup {self.startup!r}; valid: {', '.join(STARTUPS)}")
        if self.startup != "predictor" and (self.start != "predictor" or self.steps == 0):
            raise ValueError(f"{self.name}: startup={self.startup!r} needs start='predictor' with steps >= 1")


def method_specs(config: StepConfig) -> dict[str, MethodSpec]:
    """The chapter's methods, side by side (all with the same denoiser). DDIM-K
    is the official evaluation's DDIM configuration (leading spacing: K=2 ->
    [50, 0]); the trailing spacing, the predictor alone and action reuse are
    extensions and diagnostics."""
    K, full, s = config.refine_steps, config.num_train_timesteps, config.sampler
    specs = [MethodSpec(f"DDPM-{full}", "noise", full, "ddpm"),
             MethodSpec(f"DDIM-{K}", "noise", K, "ddim", "leading"),
             MethodSpec(f"Spatial-only-{K}", "predictor", K, s, perturb=True,
                        predictor="spatial"),
             MethodSpec(f"STEP-{K}", "predictor", K, s, perturb=True),
             MethodSpec(f"DDIM-{K} trailing", "noise", K, "ddim", "trailing"),
             MethodSpec(f"Reuse-{K}", "reuse", K, s),
             MethodSpec("Predictor only", "predictor", 0)]
    return {m.name: m for m in specs}


class ChunkPolicy:
    """A closed-loop policy for B environments: keeps the last H_p executed actions
    (normalised; zeros before the episode start, as in training), the two latest output chunks
    (raw, for the stall test) and the last chunk (normalised, for reuse).

    STEP's first decision of an episode is warm-started like every other one: the predictor
    sees a zero history, as in the official `CombinedInferencePolicy`, and its chunk is refined
    with the same K' steps. The stall test compares the two latest chunks, ||A_cache - A_{t-2H}||
    < eps_a; before an episode has produced two chunks the missing ones are the zero fallback
    (the normalised zero chunk), so the first decision, at rest, counts as a stall.
    `MethodSpec.startup` swaps only the first chunk (a diagnostic)."""

    def __init__(self, trained: TrainedPolicy, spec: MethodSpec, batch: int, generator: torch.Generator):
        c, dev = trained.config, trained.device
        if spec.start != "noise" and spec.steps > c.num_train_timesteps:
            raise ValueError(f"K'={spec.steps} exceeds num_train_timesteps={c.num_train_timesteps}")
        self.trained, self.spec, self.g = trained, spec, generator
        self.predictor = trained.spatial_predictor if spec.predictor == "spatial" else trained.predictor
        self.scheduler = make_scheduler(spec.sampler, c.num_train_timesteps, spec.spacing) if spec.steps else None
        self.first = make_scheduler("ddim", c.num_train_timesteps, "trailing")  # reuse's first decision
        self.full = make_scheduler("ddpm", c.num_train_timesteps)  # startup='full' (diagnostic)
        self.prev_exec = torch.zeros(batch, c.prev_horizon, ACTION_DIM, device=dev)  # (B, H_p, d_a) normalised
        zero = trained.act_norm.unnormalize(torch.zeros(batch, c.pred_horizon, ACTION_DIM, device=dev))
        self.cache, self.older = zero, zero.clone()  # (B, H, d_a) raw: the two latest output chunks
        self.exec_raw: torch.Tensor | None = None  # (B, n_a, d_a)
        self.prev_chunk: torch.Tensor | None = None  # (B, H, d_a) normalised
        self.n_stalled = 0

    @torch.no_grad()
    def act(self, obs_hist: torch.Tensor) -> torch.Tensor:
        """obs_hist (B, T_o, 6) raw -> action chunk (B, H, 2) raw."""
        t, c, spec = self.trained, self.trained.config, self.spec
        obs = t.obs_norm.normalize(obs_hist)
        if spec.start == "noise":
            A = sample_from_noise(t.denoiser, self.scheduler, spec.steps, obs, c.pred_horizon, ACTION_DIM, self.g)
        elif spec.start == "predictor" and spec.startup != "predictor" and self.exec_raw is None:
            # start-up diagnostic: the first chunk from noise instead of the predictor's warm start
            full = spec.startup == "full"
            A = sample_from_noise(t.denoiser, self.full if full else self.first,
                                  c.num_train_timesteps if full else spec.steps, obs, c.pred_horizon, ACTION_DIM, self.g)
        elif spec.start == "predictor":
            # region: step decision
            A = self.predictor(self.prev_exec, obs)  # Â_t (B, H, d_a): the warm start
            if spec.steps:
                if spec.perturb:  # stall test on the two latest chunks (raw units)
                    A, stalled = stall_perturbation(
                        A, self.cache, self.older, c.stall_threshold,
                        c.sigma_scale, c.sigma_stall, self.g)
                    self.n_stalled += int(stalled.sum())
                # noise to tau_1, K' steps
                A = warm_start_refine(t.denoiser, self.scheduler, spec.steps,
                                      obs, A, self.g)
            # endregion
        elif self.prev_chunk is None:
            A = sample_from_noise(t.denoiser, self.first, spec.steps, obs, c.pred_horizon, ACTION_DIM, self.g)
        else:
            A = warm_start_refine(t.denoiser, self.scheduler, spec.steps, obs,
                                  shift_chunk(self.prev_chunk, c.action_horizon), self.g)
        A = A.clamp(-1.5, 1.5)
        self.prev_chunk = A
        raw = t.act_norm.unnormalize(A)
        self.older, self.cache = self.cache, raw
        return raw

    def executed(self, actions_raw: torch.Tensor) -> None:
        """Record the n_a actions just executed (B, n_a, 2), raw."""
        self.exec_raw = actions_raw
        new = self.trained.act_norm.normalize(actions_raw)
        self.prev_exec = torch.cat([self.prev_exec, new], 1)[:, -self.trained.config.prev_horizon:]


@dataclass
class Rollout:
    """Outcome per episode (B,), the paths (B, T+1, 2) and the policy's compute time."""

    success: torch.Tensor
    collided: torch.Tensor
    stalled: torch.Tensor
    paths: torch.Tensor
    decision_seconds: float
    n_decisions: int
    n_perturbed: int = 0

    @property
    def seconds_per_decision(self) -> float:
        return self.decision_seconds / max(1, self.n_decisions)


def rollout(trained: TrainedPolicy, spec: MethodSpec, layout: Layout, generator: torch.Generator,
            dead_band: float = 0.0) -> Rollout:
    """Closed-loop episodes in all environments of `layout` at once: every n_a steps the
    policy returns a chunk and actions [T_o-1, T_o-1+n_a) of it are executed."""
    c, dev = trained.config, trained.device
    env = ObstacleReach2D(layout, c.max_speed, c.goal_tol, c.obstacle_radius, c.max_steps, dead_band)
    policy = ChunkPolicy(trained, spec, layout.n, generator)
    hist = [env.observe()] * c.obs_horizon
    paths = [env.pos.clone()]
    seconds, n_dec = 0.0, 0
    while not bool(env.done.all()):
        with Timer(dev) as timer:
            chunk = policy.act(torch.stack(hist[-c.obs_horizon:], 1))  # (B, H, 2)
        seconds, n_dec = seconds + timer.seconds, n_dec + 1
        executed = chunk[:, c.obs_horizon - 1: c.obs_horizon - 1 + c.action_horizon]  # (B, n_a, 2)
        for j in range(c.action_horizon):
            env.step(executed[:, j])
            hist.append(env.observe())
            paths.append(env.pos.clone())
            if bool(env.done.all()):
                break
        policy.executed(executed)
    return Rollout(env.success.cpu(), env.collided.cpu(), env.stalled.cpu(), torch.stack(paths, 1).cpu(),
                   seconds, n_dec, policy.n_stalled)
