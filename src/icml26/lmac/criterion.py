"""The state-awareness criterion (LMAC, Sec. 3.2, as in the official release's learner).

On offline transitions (s_t, o_t^{1:N}) each agent i gets a reconstructor
f_i([o_t^i, m_t^{.->i}]) -> s_hat_t of the important state dims (encoder, a `latent_dim`
bottleneck with dropout, decoder), trained with MSE on a train split. On the held-out split,
    SR_{i,d} = P((s_hat_{t,d} - s_{t,d})^2 < mse_thres),      SR_i = mean_d SR_{i,d},
with the official mse_thres = 0.05 on the normalised state. Accuracy A = min_i SR_i, balance
Delta = max_i SR_i - min_i SR_i. All N reconstructors are trained at once (torch.baddbmm).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .env import OverseerEnv, important_state
from .protocol import CompiledProtocol


@dataclass
class Dataset:
    """Offline transitions, flattened over (time, env): obs[i] (M, d_i), state (M, D)."""

    obs: list[torch.Tensor]
    state: torch.Tensor
    train_idx: torch.Tensor
    test_idx: torch.Tensor
    grid: int
    important: list[int]  # indices of the important state dims the criterion scores


@dataclass
class Awareness:
    """The criterion's output for one protocol."""

    sr: torch.Tensor  # (N, D_imp) per-agent, per-important-dim recovery success on the held-out split
    per_agent: torch.Tensor  # (N,) SR_i
    accuracy: float  # A = min_i SR_i
    gap: float  # Delta = max_i SR_i - min_i SR_i


def collect_dataset(config, device, seed: int = 0) -> Dataset:
    """Roll out the uniform random policy in `data_steps // horizon` parallel episodes."""
    n_envs = max(1, config.data_steps // config.horizon)
    env = OverseerEnv(n_envs, config.grid, config.n_strikers, config.n_distract, config.horizon, device, seed)
    gen = torch.Generator(device=device).manual_seed(seed + 1)
    obs, states = [[] for _ in range(env.n_agents)], []
    for _ in range(config.horizon):
        for i, o in enumerate(env.observations()):
            obs[i].append(o)
        states.append(env.state())
        actions = torch.randint(0, 5, (n_envs, config.n_strikers), device=device, generator=gen)
        env.step(actions)
    obs = [torch.cat(o) for o in obs]  # (T*B, d_i)
    state = torch.cat(states)  # (T*B, D)
    # split by episode, so held-out transitions come from unseen episodes
    episode = torch.arange(state.shape[0], device=device) % n_envs
    test_ep = torch.randperm(n_envs, generator=torch.Generator().manual_seed(seed + 2))[: max(1, int(config.test_frac * n_envs))]
    is_test = torch.isin(episode, test_ep.to(device))
    return Dataset(obs, state, torch.nonzero(~is_test).flatten(), torch.nonzero(is_test).flatten(), config.grid,
                   important_state(config.n_strikers))


def agent_inputs(protocol: CompiledProtocol | None, obs: list[torch.Tensor], state: torch.Tensor | None = None,
                 give_state: bool = False) -> list[torch.Tensor]:
    """Receiver inputs [o^i, m^{.->i}] (or [o^i, s] for the State upper bound)."""
    if give_state:
        return [torch.cat([o, state], dim=1) for o in obs]
    msgs = protocol.receive(obs) if protocol is not None else [o[:, :0] for o in obs]
    return [torch.cat([o, m], dim=1) for o, m in zip(obs, msgs)]


def pad_stack(inputs: list[torch.Tensor]) -> torch.Tensor:
    """(N agents) x (M, p_i) -> (N, M, max p) with zero padding."""
    width = max(x.shape[1] for x in inputs)
    return torch.stack([torch.nn.functional.pad(x, (0, width - x.shape[1])) for x in inputs])


def recovery_success(pred: torch.Tensor, state: torch.Tensor,
                     mse_thres: float) -> torch.Tensor:
    """SR_{i,d}: pred (N, M, D), state (M, D) -> (N, D); success = squared
    error < mse_thres."""
    if pred.shape[1:] != state.shape:
        raise ValueError(f"pred {tuple(pred.shape)} does not match state {tuple(state.shape)}")
    if not 0.0 < mse_thres:
        raise ValueError(f"mse_thres must be positive, got {mse_thres}")
    sq_err = (pred - state[None]) ** 2  # (N, M, D)
    # (N, D): fraction of held-out steps recovered
    return (sq_err < mse_thres).float().mean(dim=1)


def summarize(sr: torch.Tensor) -> Awareness:
    """A = min_i SR_i and Delta = max_i SR_i - min_i SR_i from the (N, D) success table."""
    if sr.dim() != 2:
        raise ValueError(f"sr must be (agents, state dims), got shape {tuple(sr.shape)}")
    per_agent = sr.mean(dim=1)
    return Awareness(sr, per_agent, float(per_agent.min()), float(per_agent.max() - per_agent.min()))


def state_awareness(protocol: CompiledProtocol | None, data: Dataset, config, seed: int = 0,
                    give_state: bool = False) -> Awareness:
    """Train the N reconstructors (batched, MSE) and score them on the held-out split."""
    device = data.state.device
    proto = protocol.to(device) if protocol is not None else None
    x = pad_stack(agent_inputs(proto, data.obs, data.state, give_state))  # (N, M, P)
    y = data.state[:, data.important]  # (M, D_imp): only the important dims are scored
    n, _, p = x.shape
    d, h, z = y.shape[1], config.recon_hidden, config.latent_dim
    gen = torch.Generator(device="cpu").manual_seed(seed)

    def init(fan_in, fan_out):
        return (torch.randn(n, fan_in, fan_out, generator=gen) / fan_in ** 0.5).to(device).requires_grad_()

    def bias(width):
        return torch.zeros(n, 1, width, device=device, requires_grad=True)

    params = [init(p, h), bias(h), init(h, z), bias(z), init(z, h), bias(h), init(h, d), bias(d)]

    # region: reconstructor
    # (N, m, P) -> (N, m, D_imp): encoder -> latent -> decoder
    def forward(inp, train=False):
        e = torch.relu(torch.baddbmm(params[1], inp, params[0]))
        latent = torch.baddbmm(params[3], e, params[2])  # (N, m, latent_dim)
        u = torch.relu(torch.baddbmm(params[5], latent, params[4]))
        if train and config.recon_dropout > 0:  # dropout drawn from `gen`
            keep = torch.rand(u.shape, generator=gen) >= config.recon_dropout
            u = u * keep.to(device) / (1 - config.recon_dropout)
        return torch.baddbmm(params[7], u, params[6])

    opt = torch.optim.Adam(params, lr=config.recon_lr)
    train = data.train_idx
    for _ in range(config.recon_steps):
        batch = train[torch.randint(0, train.numel(), (config.recon_batch,),
                                    generator=gen).to(device)]
        loss = ((forward(x[:, batch], train=True) - y[batch][None]) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        pred = forward(x[:, data.test_idx])
    return summarize(recovery_success(pred, y[data.test_idx], config.mse_thres))
    # endregion
