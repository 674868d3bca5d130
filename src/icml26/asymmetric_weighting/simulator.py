"""Part A: an exact simulator. K prompts, each a softmax policy over M answers (answer 0 is the
correct one) with its own logits; each step samples a group of n answers per prompt, scores them,
forms the scheme's advantages (`weighting.group_advantages`) and takes a gradient step on the logits.

The expected update given the logits is computed exactly by summing over the number of successes
k ~ Binomial(n, rho) (`expected_update`), so the mean-field trajectory (`mean_field`) is the
theory against which the Monte Carlo runs (`simulate`) are checked.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from icml26.common import progress

from .weighting import advantage_coefficients, check_scheme, group_advantages, informative_groups


def initial_logits(rho0: torch.Tensor, num_answers: int) -> torch.Tensor:
    """Logits (K, M) whose softmax puts probability rho0[k] on answer 0 and the rest uniformly."""
    rho0 = torch.as_tensor(rho0, dtype=torch.float64)
    if rho0.dim() != 1 or bool(((rho0 <= 0) | (rho0 >= 1)).any()):
        raise ValueError("rho0 must be a 1-D tensor of success probabilities in (0, 1)")
    if num_answers < 2:
        raise ValueError(f"need at least 2 answers, got {num_answers}")
    logits = torch.zeros(rho0.shape[0], num_answers, dtype=torch.float64, device=rho0.device)
    logits[:, 0] = torch.log(rho0 * (num_answers - 1) / (1 - rho0))
    return logits


def success(logits: torch.Tensor) -> torch.Tensor:
    """rho_k = softmax(logits_k)[0], (K, M) -> (K,)."""
    return torch.softmax(logits, dim=-1)[:, 0]


def sample_update(logits: torch.Tensor, scheme: str, n: int, generator: torch.Generator | None = None):
    """One stochastic update direction per prompt: (1/n) sum_i A_i grad log pi(y_i) = (1/n) sum_i A_i (e_{y_i} - pi).

    Returns (update (K, M), rewards (K, n)). DAPO's filter is applied by the caller.
    """
    pi = torch.softmax(logits, dim=-1)  # (K, M)
    y = torch.multinomial(pi, n, replacement=True, generator=generator)  # (K, n)
    rewards = (y == 0).to(logits.dtype)
    A = group_advantages(rewards, scheme)  # (K, n)
    counts = torch.zeros_like(pi).scatter_add_(1, y, A)  # sum_i A_i e_{y_i}, (K, M)
    update = (counts - A.sum(dim=1, keepdim=True) * pi) / n
    return update, rewards


def expected_update(logits: torch.Tensor, scheme: str, n: int) -> torch.Tensor:
    """E[(1/n) sum_i A_i (e_{y_i} - pi)] exactly, summing over k successes ~
    Binomial(n, rho):

        sum_k P(k) (1/n) [k a1(k/n) (e_0 - pi) - (n - k) a0(k/n) (q - pi)],
    q = E[e_y | y wrong] = pi restricted to wrong answers / (1 - rho). DAPO: see
    `dapo_expected`.
    """
    check_scheme(scheme)
    pi = torch.softmax(logits, dim=-1)  # (K, M)
    rho = pi[:, 0:1]  # (K, 1)
    k = torch.arange(n + 1, dtype=logits.dtype, device=logits.device)  # (n+1,)
    log_binom = (torch.lgamma(torch.tensor(n + 1.0, dtype=logits.dtype))
                 - torch.lgamma(k + 1) - torch.lgamma(n - k + 1))
    log_rho, log_wrong = (torch.log(rho.clamp_min(1e-300)),
                          torch.log((1 - rho).clamp_min(1e-300)))
    pmf = torch.exp(log_binom + k * log_rho + (n - k) * log_wrong)  # (K, n+1)
    a1, a0 = advantage_coefficients(scheme, k / n, n)  # (n+1,)
    coef_correct = (pmf * k * a1).sum(dim=1, keepdim=True) / n  # (K, 1)
    coef_wrong = (pmf * (n - k) * a0).sum(dim=1, keepdim=True) / n  # (K, 1)
    e0 = torch.zeros_like(pi)
    e0[:, 0] = 1.0
    q = pi.clone()
    q[:, 0] = 0.0
    q = q / (1 - rho).clamp_min(1e-300)
    return coef_correct * (e0 - pi) - coef_wrong * (q - pi)


def informative_prob(rho: torch.Tensor, n: int) -> torch.Tensor:
    """P(0 < rho_hat < 1) for a group of n responses."""
    return 1 - (1 - rho) ** n - rho**n


def dapo_expected(logits: torch.Tensor, n: int, max_rounds: int) -> tuple[torch.Tensor, torch.Tensor]:
    """DAPO with per-prompt dynamic sampling (resample a group until informative, at most
    `max_rounds` groups): the exact expected update and the expected number of responses."""
    rho = success(logits)
    p = informative_prob(rho, n).clamp_min(1e-300)
    p_any = 1 - (1 - p) ** max_rounds
    update = expected_update(logits, "grpo", n) / p[:, None] * p_any[:, None]  # E[update | informative] P(any)
    responses = n * (1 - (1 - p) ** max_rounds) / p
    return update, responses


@dataclass
class SimResult:
    """Mean success over prompts after each step, zero-group fraction, cumulative responses."""

    scheme: str
    accuracy: np.ndarray  # (steps + 1,)
    zero_frac: np.ndarray  # (steps,)
    responses: np.ndarray  # (steps + 1,) cumulative generated responses per prompt


def simulate(rho0: torch.Tensor, scheme: str, n: int, lr: float, steps: int, num_answers: int = 20,
             max_rounds: int = 4, seed: int = 0, show_progress: bool = False) -> SimResult:
    """Monte Carlo: every prompt samples a group each step; SGD on the logits with step `lr`.
    DAPO resamples a prompt's uninformative group up to `max_rounds` times (counting responses)."""
    check_scheme(scheme)
    if n < 2 or steps < 1 or lr <= 0 or max_rounds < 1:
        raise ValueError("need n >= 2, steps >= 1, lr > 0 and max_rounds >= 1")
    gen = torch.Generator(device=rho0.device).manual_seed(seed)
    logits = initial_logits(rho0, num_answers)
    acc, zero, resp = [float(success(logits).mean())], [], [0.0]
    for _ in progress(range(steps), desc=f"sim {scheme}", disable=not show_progress):
        if scheme == "dapo":
            update = torch.zeros_like(logits)
            todo = torch.ones(logits.shape[0], dtype=torch.bool, device=logits.device)
            used = 0.0
            for r in range(max_rounds):
                u, rewards = sample_update(logits, "grpo", n, gen)
                ok = informative_groups(rewards) & todo
                if r == 0:
                    zero.append(float((rewards.sum(1) == 0).double().mean()))
                used += n * float(todo.double().mean())
                update[ok] = u[ok]
                todo &= ~ok
            resp.append(resp[-1] + used)
        else:
            update, rewards = sample_update(logits, scheme, n, gen)
            zero.append(float((rewards.sum(1) == 0).double().mean()))
            resp.append(resp[-1] + n)
        logits = logits + lr * update
        acc.append(float(success(logits).mean()))
    return SimResult(scheme, np.array(acc), np.array(zero), np.array(resp))


def mean_field(rho0: torch.Tensor, scheme: str, n: int, lr: float, steps: int, num_answers: int = 20,
               max_rounds: int = 4) -> SimResult:
    """The theory's prediction: iterate logits <- logits + lr * E[update] (exact, finite n)."""
    check_scheme(scheme)
    logits = initial_logits(rho0, num_answers)
    acc, zero, resp = [float(success(logits).mean())], [], [0.0]
    for _ in range(steps):
        rho = success(logits)
        zero.append(float(((1 - rho) ** n).mean()))
        if scheme == "dapo":
            update, r = dapo_expected(logits, n, max_rounds)
            resp.append(resp[-1] + float(r.mean()))
        else:
            update = expected_update(logits, scheme, n)
            resp.append(resp[-1] + n)
        logits = logits + lr * update
        acc.append(float(success(logits).mean()))
    return SimResult(scheme, np.array(acc), np.array(zero), np.array(resp))


def time_to_target(curve: np.ndarray, target: float, clock: np.ndarray | None = None) -> float:
    """First clock value (step index by default) at which `curve` >= target; inf if never."""
    hit = np.nonzero(np.asarray(curve) >= target)[0]
    if hit.size == 0:
        return float("inf")
    i = int(hit[0])
    return float(i if clock is None else clock[i])
