"""The chapter's runs: the training loop (collect -> world-model updates -> imagination updates),
the model-free baseline, decentralized evaluation in the real environment, the linear probe of the
follower's latent, and the convergence rule that sets every method's budget."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from icml26.common import progress, resolve_device, seed_everything

from .behavior import Actor, Critic, actor_critic_losses, imagine
from .config import ALL_METHODS, METHODS, DMAWMConfig
from .env import N_ACTIONS, OBS_DIM, FollowTheScout
from .model import ModelState, WorldModel, sample_onehot, world_model_loss


def make_env(config: DMAWMConfig, n_envs: int, device) -> FollowTheScout:
    return FollowTheScout(n_envs, config.grid_width, config.grid_height, config.episode_len, config.shaping, device)


def make_agents(config: DMAWMConfig, method: str, device) -> tuple[WorldModel, Actor, Critic]:
    """World model (DMAWM or the joint-latent baseline), decentralized actor, centralized critic."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; valid: {', '.join(METHODS)}")
    wm = WorldModel(config.n_agents, config.hidden, config.n_cat, config.n_classes, config.attn_heads,
                    config.attn_layers, joint_posterior=(method == "joint")).to(device)
    return wm, Actor(wm.x_dim, config.n_agents, config.hidden).to(device), Critic(wm.x_dim, config.hidden).to(device)


@torch.no_grad()
def rollout(env: FollowTheScout, wm: WorldModel, actor: Actor | None, generator: torch.Generator,
            greedy: bool = False) -> dict:
    """Run one batch of real episodes. Each agent filters its own latent online with its agent module;
    the joint baseline must zero the others' encodings (`decentralized=True`): no peeking at execution.
    `actor=None` acts uniformly at random. Returns obs (E, T+1, N, D), prev_act (E, T+1, N),
    reward/cont (E, T+1), goal (E,), success (E,), positions (E, T+1, N, 2) and the t=0 states."""
    obs = env.reset(generator)
    E, N = obs.shape[:2]
    state = wm.initial_state(E, obs.device)
    prev = torch.zeros(E, N, dtype=torch.long, device=obs.device)
    out = {"obs": [obs], "prev_act": [prev], "reward": [torch.zeros(E, device=obs.device)], "pos": [env.pos.clone()]}
    for t in range(env.episode_len):
        a_prev = F.one_hot(prev, N_ACTIONS).float() * (t > 0)
        h = wm.recurrent(state, a_prev)
        lg = wm.posterior_logits(h, wm.encode(obs), decentralized=True)
        z = (F.one_hot(lg.argmax(-1), wm.n_classes).float() if greedy else sample_onehot(lg)).flatten(-2)
        state = ModelState(h, z)
        if actor is None:
            a = torch.randint(0, N_ACTIONS, (E, N), generator=generator).to(obs.device)
        else:
            dist = actor(state.x)
            a = dist.probs.argmax(-1) if greedy else dist.sample()
        obs, r, _ = env.step(a)
        prev = a
        for k, v in (("obs", obs), ("prev_act", a), ("reward", r), ("pos", env.pos.clone())):
            out[k].append(v)
    batch = {k: torch.stack(v, 1) for k, v in out.items()}
    cont = torch.ones_like(batch["reward"])
    cont[:, -1] = 0.0
    batch["cont"] = cont
    batch["goal"] = env.goal.clone()
    batch["success"] = env.on_goal().all(-1).float()
    return batch


@dataclass
class Replay:
    """Fixed-length episodes stored as one tensor per field (E_total, T+1, ...)."""

    data: dict = field(default_factory=dict)

    def add(self, batch: dict) -> None:
        keys = ("obs", "prev_act", "reward", "cont")
        self.data = {k: batch[k] if k not in self.data else torch.cat([self.data[k], batch[k]]) for k in keys}

    def __len__(self) -> int:
        return 0 if not self.data else self.data["obs"].shape[0]

    def sample(self, n: int, generator: torch.Generator) -> dict:
        idx = torch.randint(0, len(self), (n,), generator=generator).to(self.data["obs"].device)
        return {k: v[idx] for k, v in self.data.items()}


@torch.no_grad()
def probe_accuracy(wm: WorldModel, batch: dict, agent: int = 1, t: int = 0) -> float:
    """Linear probe (ridge least squares on +-1 labels, half train / half test) from agent `agent`'s
    training-time model state x^i_t = [h, q-probs] to the active-goal bit (summary, claim 1). At t=0
    no agent has moved, so only information copied from another agent can make it decodable."""
    h, _, post = wm.observe(batch["obs"], batch["prev_act"])
    feat = torch.cat([h[:, t, agent], post[:, t, agent].softmax(-1).flatten(-2)], -1)  # (E, hidden+z_dim)
    feat = torch.cat([feat, torch.ones_like(feat[:, :1])], -1).double()
    y = batch["goal"].double() * 2 - 1
    n = feat.shape[0] // 2
    A = feat[:n]
    w = torch.linalg.solve(A.T @ A + 1e-3 * torch.eye(A.shape[1], dtype=A.dtype, device=A.device), A.T @ y[:n])
    return float(((feat[n:] @ w).sign() == y[n:]).double().mean())


@torch.no_grad()
def evaluate(config: DMAWMConfig, wm: WorldModel, actor: Actor, generator: torch.Generator, device) -> dict:
    """Real decentralized success / return (greedy actions) and the imagined return from the same
    episodes' initial model states (training-time representation), for the dream-vs-reality gap."""
    env = make_env(config, config.n_eval, device)
    batch = rollout(env, wm, actor, generator, greedy=True)
    h, z, _ = wm.observe(batch["obs"][:, :1], batch["prev_act"][:, :1], sample=False)
    traj = imagine(wm, actor, ModelState(h[:, 0], z[:, 0]), config.episode_len, greedy=True)
    alive = torch.cumprod(torch.cat([torch.ones_like(traj["cont"][:1]), traj["cont"][:-1]]), 0)
    imag = (alive * traj["reward"]).sum(0)
    real = batch["reward"].sum(1)  # (E,)
    return {"success": batch["success"].mean().item(), "real_return": real.mean().item(),
            "imagined_return": imag.mean().item(), "probe": probe_accuracy(wm, batch), "batch": batch,
            "success_items": batch["success"].cpu().tolist(), "gap_items": (imag - real).abs().cpu().tolist()}


def converged_now(values: list, patience: int, min_delta: float) -> bool:
    """The convergence rule: no gain of at least `min_delta` over the best
    earlier value in the last `patience` evaluations."""
    if patience < 1 or min_delta < 0:
        raise ValueError("patience must be >= 1 and min_delta >= 0")
    if len(values) <= patience:
        return False
    return max(values[-patience:]) < max(values[:-patience]) + min_delta


def _snapshot(*modules) -> list[dict]:
    return [{k: v.detach().clone() for k, v in m.state_dict().items()} for m in modules]


def train_method(config: DMAWMConfig, method: str, seed: int = 0, device=None, show_progress: bool = True) -> dict:
    """Algorithm loop (summary, "Behaviour learning"): each round collects `n_envs` real episodes with
    the decentralized actors, updates the world model on replay, then the actor/critic in imagination.
    Every method stops by the same convergence rule on the real validation success (or at the cap
    `rounds`); the weights of the best round are kept."""
    if method == "model_free":
        return train_model_free(config, seed, device, show_progress)
    device = resolve_device(config.device if device is None else device)
    seed_everything(seed + (0 if method == "dmawm" else 1000))
    gen = torch.Generator().manual_seed(seed)  # same real episodes (goals, starts) for every method
    wm, actor, critic = make_agents(config, method, device)
    opt_wm = torch.optim.Adam(wm.parameters(), lr=config.lr_wm)
    opt_a = torch.optim.Adam(actor.parameters(), lr=config.lr_actor)
    opt_c = torch.optim.Adam(critic.parameters(), lr=config.lr_critic)
    env, replay, history, best = make_env(config, config.n_envs, device), Replay(), [], (-1.0, None)
    bar = progress(range(config.rounds), desc=f"{method} seed {seed}", disable=not show_progress or None)
    for r in bar:
        replay.add(rollout(env, wm, actor if r > 0 else None, gen))
        # a fixed world-model warm-up on the first (random-action) data, before any behaviour update
        # and before the convergence rule can stop the run
        for _ in range(config.wm_updates + (config.wm_warmup if r == 0 else 0)):
            # region: world-model update
            loss, logs = world_model_loss(wm, replay.sample(config.batch_size, gen),
                                          config.kl_scale, config.kl_balance,
                                          config.free_nats)
            opt_wm.zero_grad(); loss.backward()
            torch.nn.utils.clip_grad_norm_(wm.parameters(), 100.0); opt_wm.step()
            # endregion
        wm.requires_grad_(False)
        for _ in range(config.ac_updates):
            # region: behaviour update in imagination
            b = replay.sample(max(1, config.imag_starts // config.episode_len), gen)
            with torch.no_grad():
                h, z, _ = wm.observe(b["obs"], b["prev_act"])
            # start from every non-terminal real step t = 0..T-1 (a dream from
            # the last step runs past the end)
            start = ModelState(h[:, :-1].flatten(0, 1),
                               z[:, :-1].flatten(0, 1))  # (B*T, N, .)
            traj = imagine(wm, actor, start, config.horizon)
            a_loss, c_loss, ac_logs = actor_critic_losses(traj, critic, config.gamma,
                                                          config.lam, config.entropy)
            opt_a.zero_grad(); opt_c.zero_grad(); (a_loss + c_loss).backward()
            torch.nn.utils.clip_grad_norm_(actor.parameters(), 100.0)
            torch.nn.utils.clip_grad_norm_(critic.parameters(), 100.0)
            opt_a.step(); opt_c.step()
            # endregion
        wm.requires_grad_(True)
        ev = evaluate(config, wm, actor, torch.Generator().manual_seed(10_000 + seed), device)
        for k in ("batch", "success_items", "gap_items"):
            ev.pop(k)
        history.append({"round": r + 1, "env_steps": len(replay) * config.episode_len, **logs, **ev})
        if ev["success"] > best[0]:
            best = (ev["success"], _snapshot(wm, actor))
        if r + 1 >= config.min_rounds and converged_now([h_["success"] for h_ in history], config.patience,
                                                        config.min_delta):
            break
    converged = converged_now([h_["success"] for h_ in history], config.patience, config.min_delta)
    wm.load_state_dict(best[1][0]); actor.load_state_dict(best[1][1])
    final = evaluate(config, wm, actor, torch.Generator().manual_seed(20_000 + seed), device)
    return {"method": method, "seed": seed, "wm": wm, "actor": actor, "critic": critic, "history": history,
            "final": final, "converged": converged}


def _mf_features(obs: torch.Tensor, prev_obs: torch.Tensor) -> torch.Tensor:
    """The model-free agent's input: its own last two observations, (B, N, 2 * OBS_DIM)."""
    return torch.cat([obs, prev_obs], -1)


@torch.no_grad()
def evaluate_model_free(config: DMAWMConfig, actor: Actor, generator: torch.Generator, device) -> dict:
    """Real decentralized success / return of the model-free actors (greedy), like `evaluate`."""
    env = make_env(config, config.n_eval, device)
    obs = env.reset(generator)
    prev, rewards = obs, []
    for _ in range(config.episode_len):
        a = actor(_mf_features(obs, prev)).probs.argmax(-1)
        prev, (obs, r, _) = obs, env.step(a)
        rewards.append(r)
    success = env.on_goal().all(-1).float()
    return {"success": success.mean().item(), "real_return": torch.stack(rewards, 1).sum(1).mean().item(),
            "success_items": success.cpu().tolist()}


def train_model_free(config: DMAWMConfig, seed: int = 0, device=None, show_progress: bool = True) -> dict:
    """Model-free baseline: the same decentralized actor / centralized critic / lambda-return REINFORCE
    loss as behaviour learning, on real episodes instead of dreams. Each actor reads its own last two
    observations. Same env-step budget per round (`n_envs` episodes, split into `mf_updates` fresh
    on-policy batches) and the same convergence rule as the world-model methods."""
    device = resolve_device(config.device if device is None else device)
    seed_everything(seed + 2000)
    gen = torch.Generator().manual_seed(seed)
    actor = Actor(2 * OBS_DIM, config.n_agents, config.hidden).to(device)
    critic = Critic(2 * OBS_DIM, config.hidden).to(device)
    opt_a = torch.optim.Adam(actor.parameters(), lr=config.lr_actor)
    opt_c = torch.optim.Adam(critic.parameters(), lr=config.lr_critic)
    per_update = max(1, config.n_envs // config.mf_updates)
    env, history, best, steps = make_env(config, per_update, device), [], (-1.0, None), 0
    bar = progress(range(config.rounds), desc=f"model_free seed {seed}", disable=not show_progress or None)
    for r in bar:
        for _ in range(config.mf_updates):
            # region: model-free update
            obs = env.reset(gen)
            prev, xs, logps, ents, rewards = obs, [], [], [], []
            for _ in range(config.episode_len):
                x = _mf_features(obs, prev)
                dist = actor(x)
                a = dist.sample()
                xs.append(x); logps.append(dist.log_prob(a)); ents.append(dist.entropy())
                prev, (obs, rew, _) = obs, env.step(a)
                rewards.append(rew)
            xs.append(_mf_features(obs, prev))
            cont = torch.ones(config.episode_len, per_update, device=device)
            cont[-1] = 0.0
            traj = {"x": torch.stack(xs), "logp": torch.stack(logps),
                    "entropy": torch.stack(ents), "reward": torch.stack(rewards),
                    "cont": cont}
            a_loss, c_loss, _ = actor_critic_losses(traj, critic, config.gamma,
                                                    config.lam, config.entropy)
            opt_a.zero_grad(); opt_c.zero_grad(); (a_loss + c_loss).backward()
            opt_a.step(); opt_c.step()
            # endregion
            steps += per_update * config.episode_len
        ev = evaluate_model_free(config, actor, torch.Generator().manual_seed(10_000 + seed), device)
        ev.pop("success_items")
        history.append({"round": r + 1, "env_steps": steps, **ev})
        if ev["success"] > best[0]:
            best = (ev["success"], _snapshot(actor))
        if r + 1 >= config.min_rounds and converged_now([h_["success"] for h_ in history], config.patience,
                                                        config.min_delta):
            break
    converged = converged_now([h_["success"] for h_ in history], config.patience, config.min_delta)
    actor.load_state_dict(best[1][0])
    final = evaluate_model_free(config, actor, torch.Generator().manual_seed(20_000 + seed), device)
    return {"method": "model_free", "seed": seed, "actor": actor, "critic": critic, "history": history,
            "final": final, "converged": converged}


def train_all(config: DMAWMConfig, seed: int = 0, device=None) -> dict[str, list[dict]]:
    """Every method, `config.n_seeds` independently trained seeds each (seed, seed+1, ...), same
    rule and cap. Returns the trained modules too (for the diagnostics)."""
    return {m: [train_method(config, m, seed + s, device) for s in range(config.n_seeds)] for m in ALL_METHODS}


def _plain(x):
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().tolist()
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


DREAM_SEEDS = 3  # precomputed episodes per (method, goal) for the page's dream-vs-reality view


def run_experiment(config: DMAWMConfig, seed: int = 0, device=None) -> dict:
    """The whole experiment behind the ledger, as plain data: per method, one entry per
    independently trained seed with its validation history, whether the convergence rule stopped
    it, its final test figures (success and gap per episode, the probe) and, for the world models,
    the reward head's held-out R^2 and the imagination diagnostic; plus precomputed dream-vs-reality
    views of the first seed's world models (every goal, DREAM_SEEDS episodes)."""
    from dataclasses import asdict, replace

    dev = resolve_device("auto" if device is None else device)
    config = replace(config, device=str(dev))
    runs = train_all(config, seed, dev)
    out = {"config": asdict(config), "seeds": [seed + s for s in range(config.n_seeds)], "rounds_cap": config.rounds,
           "methods": {}}
    for m, rs in runs.items():
        out["methods"][m] = []
        for k, r in enumerate(rs):
            entry = {"seed": r["seed"], "history": _plain(r["history"]), "converged": bool(r["converged"]),
                     "final": {key: _plain(v) for key, v in r["final"].items() if key != "batch"}}
            if m in METHODS:
                entry["diagnostic"] = imagination_diagnostic(config, r, seed=seed + k)
            out["methods"][m].append(entry)
    out["dreams"] = [{"method": m, "goal": g, "episode_seed": e,
                      **_plain(dream_vs_reality(config, runs[m][0], goal=g, seed=e))}
                     for m in METHODS for g in (0, 1) for e in range(DREAM_SEEDS)]
    return out


def dream_view(results: dict, method: str, goal: int, episode_seed: int) -> dict:
    """One precomputed dream-vs-reality view, as numpy arrays (for `plots.plot_dream`)."""
    import numpy as np

    for d in results["dreams"]:
        if (d["method"], d["goal"], d["episode_seed"]) == (method, goal, episode_seed):
            return {k: np.asarray(v) if isinstance(v, list) else v for k, v in d.items()}
    raise ValueError(f"no precomputed view for method={method!r}, goal={goal}, episode_seed={episode_seed}")


def most_informative_view(results: dict) -> tuple[str, int, int]:
    """The (method, goal, episode_seed) whose mean attention is farthest from uniform (the page's
    default view: a uniform map would show nothing)."""
    import numpy as np

    def spread(d):
        a = np.asarray(d["attention"]).mean(0)
        return float(np.abs(a - 1.0 / a.shape[-1]).max())

    best = max(results["dreams"], key=spread)
    return best["method"], best["goal"], best["episode_seed"]


def summarize(results: dict) -> dict[str, dict[str, float]]:
    """Mean over seeds of the final figures for each method (from `run_experiment`'s results)."""
    out = {}
    for m, runs in results["methods"].items():
        f = [r["final"] for r in runs]
        out[m] = {k: sum(x[k] for x in f) / len(f) for k in ("success", "real_return") }
        out[m]["rounds"] = sum(len(r["history"]) for r in runs) / len(runs)
        out[m]["converged"] = all(r["converged"] for r in runs)
        if "probe" in f[0]:
            for k in ("imagined_return", "probe"):
                out[m][k] = sum(x[k] for x in f) / len(f)
            out[m]["gap"] = sum(abs(x["imagined_return"] - x["real_return"]) for x in f) / len(f)
    return out


SCRIPTS = ("toward", "away", "stay")  # open-loop team moves used by `imagination_diagnostic`


@torch.no_grad()
def imagination_diagnostic(config: DMAWMConfig, run: dict, n: int = 512, seed: int = 0) -> dict:
    """Does the world model's imagination know where the goal is? (A diagnosis of the control half of
    the check, not part of the paper's method.) From the t=0 model states of `n` real episodes (the
    training-time representation, as in `evaluate`), both agents repeat one scripted move for T steps,
    open loop: horizontally "toward" the active site, "away" from it, or "stay". Returns, per script,
    the mean imagined return (reward head along the dream) and the mean real return of the same moves
    from the same start, plus the reward head's R^2 on real random-action episodes
    (1 - MSE / Var(r), steps 1..T). A model that carries the scout's private goal must rank
    toward > away in imagination as the real environment does."""
    if n < 2:
        raise ValueError(f"n must be >= 2 episodes, got {n}")
    wm = run["wm"]
    device = next(wm.parameters()).device
    gen = torch.Generator().manual_seed(seed)
    batch = rollout(make_env(config, n, device), wm, None, gen)  # random actions: broad state coverage
    h, z, _ = wm.observe(batch["obs"], batch["prev_act"])
    r_hat = wm.reward(torch.cat([h, z], -1))[:, 1:]  # (n, T)
    r = batch["reward"][:, 1:]
    out = {"reward_r2": float(1.0 - (r_hat - r).pow(2).mean() / r.var())}
    toward = torch.where(batch["goal"] == 0, 1, 2)  # (n,): move left to site A, right to site B
    moves = {"toward": toward, "away": 3 - toward, "stay": torch.zeros_like(toward)}
    for name in SCRIPTS:
        a = moves[name][:, None].expand(n, 2)  # (n, N): both agents make the same move
        state = ModelState(h[:, 0], z[:, 0])
        env = make_env(config, n, device)
        env.reset(torch.Generator().manual_seed(seed))  # same goals and starts as `batch`
        imag = real = torch.zeros(n, device=device)
        for _ in range(config.episode_len):
            state = wm.imagine_step(state, F.one_hot(a, N_ACTIONS).float())
            imag = imag + wm.reward(state.x)
            real = real + env.step(a)[1]
        out[f"imagined {name}"] = imag.mean().item()
        out[f"real {name}"] = real.mean().item()
    return out


@torch.no_grad()
def dream_vs_reality(config: DMAWMConfig, run: dict, goal: int = 1, seed: int = 0) -> dict:
    """One real episode with a chosen goal (decentralized, greedy) and the world model's imagined
    continuation from the same initial state: agent x-positions over time, real and decoded-from-dream,
    plus the interaction predictor's attention along the dream."""
    if goal not in (0, 1):
        raise ValueError(f"goal must be 0 (left) or 1 (right), got {goal}")
    wm, actor = run["wm"], run["actor"]
    device = next(wm.parameters()).device
    env = make_env(config, 1, device)
    gen = torch.Generator().manual_seed(seed)
    env.reset(gen)
    # restart with the chosen goal (same starting rows)
    env.goal = torch.tensor([goal], device=device)
    real_pos, obs, state = [], env.observe(), wm.initial_state(1, device)
    prev = torch.zeros(1, 2, dtype=torch.long, device=device)
    start = None
    for t in range(config.episode_len + 1):
        real_pos.append(env.pos[0, :, 0].float().clone())
        if t == config.episode_len:
            break
        h = wm.recurrent(state, F.one_hot(prev, N_ACTIONS).float() * (t > 0))
        lg = wm.posterior_logits(h, wm.encode(obs), decentralized=True)
        state = ModelState(h, F.one_hot(lg.argmax(-1), wm.n_classes).float().flatten(-2))
        if t == 0:
            lg_train = wm.posterior_logits(h, wm.encode(obs))  # training-time representation
            start = ModelState(h, F.one_hot(lg_train.argmax(-1), wm.n_classes).float().flatten(-2))
        prev = actor(state.x).probs.argmax(-1)
        obs, _, _ = env.step(prev)
    traj = imagine(wm, actor, start, config.episode_len, greedy=True)
    x = traj["x"][:, 0]  # (T+1, N, x_dim)
    ids = wm.agent_ids(x.shape[:-2], device)
    decoded = wm.decoder(torch.cat([x, ids], -1))[..., 0]  # (T+1, N): own x coordinate in [-1, 1]
    dream_pos = (decoded + 1) / 2 * (config.grid_width - 1)
    _, attn = wm.interaction_tokens(x[..., : wm.hidden], return_attention=True)  # (T+1, N, N)
    return {"real": torch.stack(real_pos).cpu(), "dream": dream_pos.cpu(), "attention": attn.cpu(),
            "goal_x": 0 if goal == 0 else config.grid_width - 1}
