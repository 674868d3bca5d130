"""Optimal prompt weights: the time to raise success from rho0 to a target under a fixed budget.

The paper states the two optima (regular time: omega ~ 1/sqrt(rho(1-rho)), i.e. GRPO; effective
time: omega ~ 1/(rho sqrt(1-rho)), i.e. Sqrt-R) but its derivation was not available to us. This
module is our reconstruction of a policy-dynamics model that yields exactly those optima:

* progress per update (one prompt, logit parameterisation, expected update of Sec. 2):
  d rho = eta * omega(rho) * rho^2 (1-rho)^2;
* budget spent per update: the noise energy of the stochastic update,
  eta^2 * omega(rho)^2 * rho (1-rho) (the variance of omega (r - rho_hat) g);
* clock cost per update: c(rho) = 1 ("regular" time, counting updates) or c(rho) = 1/rho
  ("effective" time: a successful, informative response costs ~1/rho generated responses).

Time T = int c / (eta omega rho^2 (1-rho)^2) d rho, budget B = int eta omega / (rho(1-rho)) d rho.
Their product J = T B does not depend on eta or on the scale of omega; by Cauchy-Schwarz it is
minimised by omega* ~ sqrt(c(rho)/(rho(1-rho))), with J* = (int sqrt(c) (rho(1-rho))^(-3/2) d rho)^2.
"""

from __future__ import annotations

import math

import torch

from .weighting import check_scheme, prompt_weight

CLOCKS = ("updates", "responses")


def check_clock(clock: str) -> str:
    if clock not in CLOCKS:
        raise ValueError(f"unknown clock {clock!r}; valid clocks: {', '.join(CLOCKS)}")
    return clock


def clock_cost(rho: torch.Tensor, clock: str) -> torch.Tensor:
    """c(rho): 1 per update ("updates") or 1/rho generated responses per informative one ("responses")."""
    check_clock(clock)
    return torch.ones_like(rho) if clock == "updates" else 1 / rho


def optimal_weight(rho: torch.Tensor, clock: str) -> torch.Tensor:
    """omega*(rho) ~ sqrt(c(rho)/(rho(1-rho))), written in the GRPO / Sqrt-R
    forms.

    updates:   1/sqrt(rho(1-rho))   (GRPO's weight);
    responses: 1/(rho sqrt(1-rho))  (Sqrt-R's weight).
    """
    rho = torch.as_tensor(rho, dtype=torch.float64)
    return torch.sqrt(clock_cost(rho, clock) / (rho * (1 - rho)))


def rho_grid(rho0: float, target: float, points: int = 2001) -> torch.Tensor:
    """A log-spaced grid on [rho0, target] (the integrands blow up like rho^-3 near 0)."""
    if not 0.0 < rho0 < target < 1.0:
        raise ValueError(f"need 0 < rho0 < target < 1, got rho0={rho0}, target={target}")
    return torch.logspace(math.log10(rho0), math.log10(target), points, dtype=torch.float64)


def time_and_budget(omega: torch.Tensor, rho: torch.Tensor,
                    clock: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(T, B) at eta = 1 for weights `omega` on the grid `rho` (trapezoid
    rule)."""
    c = clock_cost(rho, clock)
    T = torch.trapezoid(c / (omega * rho**2 * (1 - rho) ** 2), rho)
    B = torch.trapezoid(omega / (rho * (1 - rho)), rho)
    return T, B


def normalized_time(omega: torch.Tensor, rho: torch.Tensor,
                    clock: str) -> torch.Tensor:
    """J = T * B: the time to target at a fixed budget B = 1 (invariant to the
    scale of omega)."""
    T, B = time_and_budget(omega, rho, clock)
    return T * B


def scheme_time(scheme: str, rho0: float, target: float, clock: str, points: int = 2001) -> float:
    """Predicted time to target of a scheme (large-n weight) relative to the optimum (1 = optimal)."""
    check_scheme(scheme)
    rho = rho_grid(rho0, target, points)
    J = normalized_time(prompt_weight(scheme, rho), rho, clock)
    return float(J / normalized_time(optimal_weight(rho, clock), rho, clock))


def optimal_weight_numeric(rho0: float, target: float, clock: str, points: int = 201, steps: int = 300) -> tuple[torch.Tensor, torch.Tensor]:
    """Minimise J over *all* positive weights on a grid (log-parameterised, L-BFGS), without the
    closed form; returns (rho, omega) normalised to omega[0] = 1. Checks the Cauchy-Schwarz optimum."""
    rho = rho_grid(rho0, target, points)
    log_omega = torch.zeros(points, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([log_omega], lr=1.0, max_iter=steps, line_search_fn="strong_wolfe",
                            tolerance_grad=1e-12, tolerance_change=1e-14)

    def closure():
        opt.zero_grad()
        loss = torch.log(normalized_time(torch.exp(log_omega), rho, clock))
        loss.backward()
        return loss

    opt.step(closure)
    omega = torch.exp(log_omega.detach())
    return rho, omega / omega[0]
