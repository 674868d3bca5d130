"""The MARL learner: MAPPO-lite (parameter-shared actor, centralised critic, PPO-clip, GAE).

The paper trains QMIX agents on [o^i, m^{.->i}]; we use a MAPPO-style actor-critic that learns
faster on 2 CPU cores (see Deviations). Striker i acts from x^i = [o^i, onehot(i), m^{.->i}]
(NoComm: no messages; FullComm / LMAC: the compiled protocol; State: the global state s_t,
the upper bound). The critic V(s_t, t/T) sees the state (centralised training). The team
reward is shaped by the potential Phi(s) = -mean distance to the target (Ng et al., 1999):
r'_t = r_t + c (gamma Phi(s_{t+1}) - Phi(s_t)), with Phi = 0 after success.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from .env import OverseerEnv
from .protocol import CompiledProtocol


@dataclass
class TrainResult:
    arm: str
    seed: int
    curve: list[float]  # training success rate per iteration
    env_steps: list[int]  # cumulative env steps at the end of each iteration
    success: float  # greedy success rate on fresh evaluation episodes
    seconds: float = 0.0


ARMS = ("NoComm", "FullComm", "LMAC", "State", "TarMAC")
TARMAC_VALUE, TARMAC_KEY = 8, 4  # TarMAC-lite message: a value vector and a signature (key)


def mlp(inp: int, hidden: int, out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(inp, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                         nn.Linear(hidden, out))


class TarMACActor(nn.Module):
    """TarMAC-lite (Das et al., 2019), the learned-communication baseline: one round of
    targeted attention messages, trained end-to-end through the policy loss.

    Every agent j encodes [o^j, onehot(j)] into a value v_j and a key k_j; striker i forms a
    query q_i from [o^i, onehot(i)], attends over the other agents,
    a_ij = softmax_j(q_i . k_j / sqrt(d_k)), and acts on [o^i, onehot(i), sum_j a_ij v_j].
    Input x: (..., S, own_dim + S + N * sender_dim), as built by `ArmInputs("TarMAC")`.
    """

    def __init__(self, own_dim: int, n_strikers: int, n_agents: int, sender_dim: int, hidden: int):
        super().__init__()
        self.own_dim, self.n_strikers, self.n_agents, self.sender_dim = own_dim, n_strikers, n_agents, sender_dim
        self.encoder = nn.Sequential(nn.Linear(sender_dim, hidden // 2), nn.Tanh(),
                                     nn.Linear(hidden // 2, TARMAC_VALUE + TARMAC_KEY))
        self.query = nn.Linear(own_dim + n_strikers, TARMAC_KEY)
        self.policy = mlp(own_dim + n_strikers + TARMAC_VALUE, hidden, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        head = self.own_dim + self.n_strikers
        own = x[..., :head]  # (..., own_dim + S)
        # the senders' part is the same for every striker (dim -2): encode it once
        senders = x[..., :1, head:].reshape(*x.shape[:-2], 1, self.n_agents,
                                            self.sender_dim)  # (..., 1, N, sd)
        value, key = self.encoder(senders).split([TARMAC_VALUE, TARMAC_KEY],
                                                 dim=-1)  # (..., 1, N, dv/dk)
        scores = ((key @ self.query(own)[..., None]).squeeze(-1)
                  / TARMAC_KEY ** 0.5)  # (..., N)
        # a striker does not message itself: striker s is agent s + 1
        is_self = torch.cat([torch.zeros_like(own[..., :1]),
                             own[..., self.own_dim:]], dim=-1) > 0.5  # (..., N)
        attn = torch.softmax(scores.masked_fill(is_self, float("-inf")), dim=-1)
        agg = (attn[..., None] * value).sum(-2)  # (..., dv)
        return self.policy(torch.cat([own, agg], dim=-1))


class ArmInputs:
    """Builds the actor input x^i for every striker: (B, S, in_dim)."""

    def __init__(self, arm: str, protocol: CompiledProtocol | None, n_strikers: int, obs_dim: int, state_dim: int):
        if arm not in ARMS:
            raise ValueError(f"unknown arm {arm!r}; valid: {', '.join(ARMS)}")
        if arm in ("FullComm", "LMAC") and protocol is None:
            raise ValueError(f"arm {arm} needs a compiled protocol")
        self.arm, self.protocol, self.n_strikers = arm, protocol, n_strikers
        dims = protocol.message_dims()[1:] if (protocol is not None and arm != "NoComm") else [0]
        self.msg_dim = state_dim if arm == "State" else max(dims)
        self.sender_dim = 0
        if arm == "TarMAC":  # every agent's observation (padded) + its one-hot, for the attention actor
            self.sender_dim = (obs_dim + 2) + n_strikers + 1  # the overseer has 2 more features
            self.msg_dim = (n_strikers + 1) * self.sender_dim
        self.in_dim = obs_dim + n_strikers + self.msg_dim

    def __call__(self, obs: list[torch.Tensor],
                 state: torch.Tensor) -> torch.Tensor:
        batch, s = state.shape[0], self.n_strikers
        own = torch.stack(obs[1:], dim=1)  # (B, S, d)
        ids = torch.eye(s, device=state.device).expand(batch, s, s)  # (B, S, S)
        if self.arm == "State":
            extra = state[:, None].expand(batch, s, state.shape[1])  # (B, S, D)
        elif self.arm == "NoComm":
            extra = own[..., :0]
        elif self.arm == "TarMAC":
            n = len(obs)
            width = self.sender_dim - n
            padded = torch.stack(
                [nn.functional.pad(o, (0, width - o.shape[1])) for o in obs],
                dim=1)  # (B, N, w)
            tagged = torch.cat(
                [padded, torch.eye(n, device=state.device).expand(batch, n, n)],
                dim=-1)
            extra = tagged.reshape(batch, 1, -1).expand(
                batch, s, n * self.sender_dim)  # (B, S, N*sender_dim)
        else:
            msgs = self.protocol.receive(obs)[1:]
            extra = torch.stack(
                [nn.functional.pad(m, (0, self.msg_dim - m.shape[1]))
                 for m in msgs], dim=1)
        return torch.cat([own, ids, extra], dim=-1)  # (B, S, in_dim)


def _rollout(env, inputs, actor, critic, gen, greedy=False):
    """One batch of episodes; returns the tensors PPO needs and the success flags."""
    env.reset()
    horizon, batch = env.horizon, env.n_envs
    store = {k: [] for k in ("x", "act", "logp", "val", "rew", "active", "crit")}
    succeeded = torch.zeros(batch, dtype=torch.bool, device=env.device)
    for t in range(horizon):
        active = ~env.done
        obs, state = env.observations(), env.state()
        x = inputs(obs, state)
        crit_in = torch.cat([state, torch.full((batch, 1), t / horizon, device=env.device)], dim=1)
        with torch.no_grad():
            logits = actor(x)  # (B, S, 5)
            if greedy:
                act = logits.argmax(-1)
            else:
                probs = torch.softmax(logits, -1)
                act = torch.multinomial(probs.reshape(-1, 5), 1, generator=gen).reshape(batch, -1)
            logp = torch.log_softmax(logits, -1).gather(-1, act[..., None]).squeeze(-1)
            val = critic(crit_in).squeeze(-1)
        phi = env.potential()
        reward, _, success = env.step(act)
        succeeded |= success
        phi_next = torch.where(success, torch.zeros_like(phi), env.potential())
        shaped = reward + inputs.shaping * (inputs.gamma * phi_next - phi)
        for k, v in (("x", x), ("act", act), ("logp", logp), ("val", val), ("rew", shaped * active),
                     ("active", active), ("crit", crit_in)):
            store[k].append(v)
    return {k: torch.stack(v) for k, v in store.items()}, succeeded


def _gae(rew, val, active, gamma, lam):
    """Generalised advantage estimation over (T, B); an episode ends at its
    last active step."""
    horizon = rew.shape[0]
    adv = torch.zeros_like(rew)
    nxt_adv, nxt_val = torch.zeros_like(rew[0]), torch.zeros_like(rew[0])
    for t in reversed(range(horizon)):
        cont = (active[t + 1].float() if t + 1 < horizon
                else torch.zeros_like(rew[0]))
        delta = rew[t] + gamma * nxt_val * cont - val[t]
        nxt_adv = (delta + gamma * lam * cont * nxt_adv) * active[t]
        adv[t], nxt_val = nxt_adv, val[t]
    return adv, adv + val


def train_arm(arm: str, protocol: CompiledProtocol | None, config, seed: int, device) -> TrainResult:
    """Train one arm for `config.iterations` PPO iterations; evaluate greedily on fresh episodes."""
    import time

    started = time.perf_counter()
    torch.manual_seed(seed)
    env = OverseerEnv(config.n_envs, config.grid, config.n_strikers, config.n_distract, config.horizon, device,
                      seed=1000 + seed)
    proto = protocol.to(device) if protocol is not None else None
    inputs = ArmInputs(arm, proto, config.n_strikers, env.obs_dims[1], env.state_dim)
    inputs.shaping, inputs.gamma = config.shaping, config.gamma
    if arm == "TarMAC":
        actor = TarMACActor(env.obs_dims[1], config.n_strikers, env.n_agents, inputs.sender_dim, config.hidden)
    else:
        actor = mlp(inputs.in_dim, config.hidden, 5)
    actor = actor.to(device)
    critic = mlp(env.state_dim + 1, config.hidden, 1).to(device)
    opt = torch.optim.Adam(list(actor.parameters()) + list(critic.parameters()), lr=config.lr)
    gen = torch.Generator(device=device).manual_seed(seed)
    curve, steps = [], []
    for it in range(config.iterations):
        data, succ = _rollout(env, inputs, actor, critic, gen)
        curve.append(float(succ.float().mean()))
        steps.append((it + 1) * config.n_envs * config.horizon)
        adv, ret = _gae(data["rew"], data["val"], data["active"], config.gamma, config.gae_lambda)
        mask = data["active"].reshape(-1)
        x = data["x"].reshape(-1, *data["x"].shape[2:])[mask]  # (M, S, in)
        act = data["act"].reshape(-1, config.n_strikers)[mask]
        old = data["logp"].reshape(-1, config.n_strikers)[mask]
        crit, ret = data["crit"].reshape(-1, env.state_dim + 1)[mask], ret.reshape(-1)[mask]
        adv = adv.reshape(-1)[mask]
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        n = x.shape[0]
        # region: ppo_update
        for _ in range(config.ppo_epochs):
            perm = torch.randperm(n, generator=gen, device=device)
            for idx in perm.chunk(config.minibatches):
                logits = actor(x[idx])
                logp_all = torch.log_softmax(logits, -1)
                logp = logp_all.gather(-1, act[idx][..., None]).squeeze(-1)
                ratio = torch.exp(logp - old[idx])  # (m, S)
                a = adv[idx][:, None]
                pg = -torch.min(
                    ratio * a,
                    ratio.clamp(1 - config.clip, 1 + config.clip) * a).mean()
                ent = -(logp_all.exp() * logp_all).sum(-1).mean()
                vloss = ((critic(crit[idx]).squeeze(-1) - ret[idx]) ** 2).mean()
                loss = pg + 0.5 * vloss - config.entropy_coef * ent
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(
                    list(actor.parameters()) + list(critic.parameters()), 1.0)
                opt.step()
        # endregion
    eval_env = OverseerEnv(config.eval_episodes, config.grid, config.n_strikers, config.n_distract, config.horizon,
                           device, seed=10_000 + seed)
    _, succ = _rollout(eval_env, inputs, actor, critic, gen, greedy=True)
    return TrainResult(arm, seed, curve, steps, float(succ.float().mean()), time.perf_counter() - started)


def random_policy_success(config, seed: int, device) -> float:
    """Chance level of C3's competence checks: the success rate of strikers that move uniformly at
    random, on the same evaluation episodes the trained arms are scored on."""
    env = OverseerEnv(config.eval_episodes, config.grid, config.n_strikers, config.n_distract, config.horizon,
                      device, seed=10_000 + seed)
    gen = torch.Generator(device=env.device).manual_seed(20_000 + seed)
    env.reset()
    succeeded = torch.zeros(env.n_envs, dtype=torch.bool, device=env.device)
    for _ in range(env.horizon):
        act = torch.randint(0, 5, (env.n_envs, env.n_strikers), device=env.device, generator=gen)
        succeeded |= env.step(act)[2]
    return float(succeeded.float().mean())
