"""Prompt weightings for group-based policy gradients with 0/1 rewards (paper, Sec. 2-3).

Every estimator of the family is one prompt-level weight omega(rho_hat) applied to the same
direction (the paper's gradient decomposition):

    G_x = omega(rho_hat)/n * sum_i (r_i - rho_hat) g_i = omega(rho_hat) rho_hat (1 - rho_hat) (gbar_1 - gbar_0),

so a scheme is fully described by its *effective weight* w(rho) = omega(rho) rho (1 - rho), and
the advantage of a response is A_i = omega(rho_hat) (r_i - rho_hat), i.e.

    A_i = r_i * a1(rho_hat) - (1 - r_i) * a0(rho_hat),   a1 = w/rho_hat,  a0 = w/(1 - rho_hat).

We evaluate a1 and a0 in closed form (never omega * (r - rho_hat)), so rho_hat in {0, 1} needs no
division by zero: at rho_hat = 0 there is no correct sample and a1 is never used.
"""

from __future__ import annotations

import torch

SYMMETRIC = ("rloo", "grpo", "dapo")
ASYMMETRIC = ("linear", "sqrt", "uniform", "plateau")
SCHEMES = SYMMETRIC + ASYMMETRIC
LABELS = {"rloo": "RLOO", "grpo": "GRPO", "dapo": "DAPO (dyn. sampling)", "linear": "Linear-R",
          "sqrt": "Sqrt-R", "uniform": "Uniform-R", "plateau": "Plateau-R"}
GRPO_EPS = 1e-6  # tiny, so GRPO's std normalisation does not become "accidentally asymmetric"
PLATEAU_P0 = 0.5  # Plateau-R (our reconstruction): flat effective weight up to p0, then linear decay


def check_scheme(scheme: str) -> str:
    """Return `scheme` if it is known, else raise a ValueError naming the valid ones."""
    if scheme not in SCHEMES:
        raise ValueError(f"unknown weighting scheme {scheme!r}; valid schemes: {', '.join(SCHEMES)}")
    return scheme


def effective_weight(scheme: str, rho: torch.Tensor, n: int | None = None) -> torch.Tensor:
    """w(rho) = omega(rho) rho (1 - rho), the weight on the direction (gbar_1 - gbar_0).

    RLOO: c rho(1-rho) with c = n/(n-1) (c = 1 when n is None, the large-n limit);
    GRPO/DAPO: sqrt(rho(1-rho)) (without eps); Linear-R: 1 - rho; Sqrt-R: sqrt(1 - rho);
    Uniform-R: 1; Plateau-R: min(1, (1 - rho)/(1 - p0)).
    """
    check_scheme(scheme)
    rho = torch.as_tensor(rho, dtype=torch.float64) if not torch.is_tensor(rho) else rho
    if scheme == "rloo":
        c = 1.0 if n is None else n / (n - 1)
        return c * rho * (1 - rho)
    if scheme in ("grpo", "dapo"):
        return torch.sqrt(rho * (1 - rho))
    if scheme == "linear":
        return 1 - rho
    if scheme == "sqrt":
        return torch.sqrt(1 - rho)
    if scheme == "uniform":
        return torch.ones_like(rho)
    return torch.clamp((1 - rho) / (1 - PLATEAU_P0), max=1.0)  # plateau


def prompt_weight(scheme: str, rho: torch.Tensor, n: int | None = None) -> torch.Tensor:
    """omega(rho) = w(rho) / (rho (1 - rho)) on the open interval 0 < rho < 1 (Table of schemes).

    RLOO n/(n-1); GRPO 1/sqrt(rho(1-rho)); Linear-R 1/rho; Sqrt-R 1/(rho sqrt(1-rho));
    Uniform-R 1/(rho(1-rho)). Used for plots and for the theory, not for advantages.
    """
    rho = torch.as_tensor(rho, dtype=torch.float64) if not torch.is_tensor(rho) else rho
    if bool(((rho <= 0) | (rho >= 1)).any()):
        raise ValueError("prompt_weight is defined for 0 < rho < 1; use group_advantages at rho_hat in {0, 1}")
    return effective_weight(scheme, rho, n) / (rho * (1 - rho))


def advantage_coefficients(scheme: str, rho_hat: torch.Tensor,
                           n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(a1, a0): the advantage of a correct response is +a1, of a wrong one -a0
    (closed forms).

    | scheme  | a1 (correct)            | a0 (wrong)           |
    | RLOO    | c (1 - rho)             | c rho, c = n/(n-1)   |
    | GRPO    | (1 - rho)/(sigma + eps) | rho/(sigma + eps)    |
    | Linear  | (1 - rho)/rho           | 1                    |
    | Sqrt    | sqrt(1 - rho)/rho       | 1/sqrt(1 - rho)      |
    | Uniform | 1/rho                   | 1/(1 - rho)          |
    | Plateau | w/rho                   | w/(1 - rho)          |
    with GRPO's sigma = sqrt(rho(1-rho)), Plateau's w = min(1, (1-rho)/(1-p0)).
    """
    check_scheme(scheme)
    eps = 1e-6
    # a1 is only used where a correct sample exists (rho_hat >= 1/n)
    rho_c = rho_hat.clamp(min=eps)
    # a0 is only used where a wrong sample exists
    one_minus = (1 - rho_hat).clamp(min=eps)
    if scheme == "rloo":
        c = n / (n - 1)
        return c * (1 - rho_hat), c * rho_hat
    if scheme in ("grpo", "dapo"):
        sigma = torch.sqrt(rho_hat * (1 - rho_hat))
        return (1 - rho_hat) / (sigma + GRPO_EPS), rho_hat / (sigma + GRPO_EPS)
    if scheme == "linear":
        return (1 - rho_hat) / rho_c, torch.ones_like(rho_hat)
    # unclamped 1 - rho_hat in a1: w(1) = 0, an all-correct group gets no push
    if scheme == "sqrt":
        return torch.sqrt(1 - rho_hat) / rho_c, 1 / torch.sqrt(one_minus)
    if scheme == "uniform":
        return 1 / rho_c, 1 / one_minus
    w = torch.clamp((1 - rho_hat) / (1 - PLATEAU_P0), max=1.0)
    return w / rho_c, w / one_minus


def check_rewards(rewards: torch.Tensor) -> torch.Tensor:
    """Validate a (P, n) tensor of 0/1 rewards with group size n >= 2; returns it as float."""
    if not torch.is_tensor(rewards) or rewards.dim() != 2:
        raise ValueError(f"rewards must be a (num_prompts, group_size) tensor, got shape "
                         f"{tuple(rewards.shape) if torch.is_tensor(rewards) else type(rewards).__name__}")
    if rewards.shape[1] < 2:
        raise ValueError(f"group size must be at least 2 (a baseline needs a second response), got {rewards.shape[1]}")
    r = rewards.float() if not rewards.is_floating_point() else rewards
    if bool(((r != 0) & (r != 1)).any()):
        raise ValueError("rewards must be binary (0 or 1): the weightings are defined for verifiable 0/1 rewards")
    return r


def group_advantages(rewards: torch.Tensor, scheme: str) -> torch.Tensor:
    """Per-response advantages A_i = omega(rho_hat)(r_i - rho_hat) for each
    group (Sec. 2).

    rewards: (P, n) in {0, 1}; returns (P, n). DAPO's advantages are GRPO's; its
    dynamic sampling (dropping groups with rho_hat in {0, 1}) is
    `informative_groups`.
    """
    check_scheme(scheme)
    r = check_rewards(rewards)
    n = r.shape[1]
    rho_hat = r.mean(dim=1, keepdim=True)  # (P, 1)
    a1, a0 = advantage_coefficients(scheme, rho_hat, n)
    return r * a1 - (1 - r) * a0


def informative_groups(rewards: torch.Tensor) -> torch.Tensor:
    """DAPO's dynamic-sampling filter: True for groups with 0 < rho_hat < 1.
    (P, n) -> (P,)."""
    r = check_rewards(rewards)
    rho_hat = r.mean(dim=1)
    return (rho_hat > 0) & (rho_hat < 1)
