"""Structured Diffusion Bridge objectives (see the chapter's deviations for what is the paper's and
what is ours): winner-takes-all marginal matching with a capacity constraint (the paper's form over
candidate conditions, and the earlier output-level reconstruction), endpoint and trajectory cycle
consistency, and the optional paired heuristic (LDDBM's bridge + predictive loss)."""

from __future__ import annotations

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment

from .bridge import bridge_mean_std, sample_bridge, sample_translation, time_grid

#: epsilon of the trajectory cycle's weight w(t) = 1 / (sigma_t^2 + eps) (not given in what we read; ours)
TRAJ_EPS = 0.1


def wta_capacity_assignment(cost: np.ndarray | torch.Tensor,
                            capacity: int = 1) -> np.ndarray:
    """pi* = argmin_{pi : |pi^{-1}(j)| <= kappa} sum_i C[i, pi(i)]
    (marginal matching, WTA).

    Every generated sample (row) wins exactly one real target (column); each
    target is won at most `capacity` times. Exact: the columns are repeated
    kappa times and the rectangular assignment problem is solved (Hungarian).
    Returns pi (n_rows,) of target indices.
    """
    c = (cost.detach().cpu().numpy() if isinstance(cost, torch.Tensor)
         else np.asarray(cost, dtype=float))
    if c.ndim != 2:
        raise ValueError(f"cost must be a matrix (n_gen, n_real), got shape {c.shape}")
    if not isinstance(capacity, (int, np.integer)) or capacity < 1:
        raise ValueError(f"capacity must be an integer >= 1, got {capacity}")
    n, m = c.shape
    if n > capacity * m:
        raise ValueError(f"infeasible: {n} samples cannot be assigned to {m} targets with capacity {capacity}")
    # (n, kappa m): column j + k m is copy k of target j
    rep = np.tile(c, (1, capacity))
    rows, cols = linear_sum_assignment(rep)
    pi = np.empty(n, dtype=np.int64)
    pi[rows] = cols % m
    return pi


def marginal_matching_loss(z_gen: torch.Tensor, z_real: torch.Tensor, capacity: int = 1) -> torch.Tensor:
    """Output-level marginal matching (our earlier reconstruction, `mm_form='output_ot'`):
    (1/B) sum_i ||z_gen_i - z_real_{pi*(i)}||^2 with pi* fixed (no gradient through the
    assignment). Inputs (M, B, d); returns (M,)."""
    if z_gen.ndim != 3 or z_real.ndim != 3 or z_gen.shape[0] != z_real.shape[0] or z_gen.shape[2] != z_real.shape[2]:
        raise ValueError(f"expected (M, B, d) and (M, B', d), got {tuple(z_gen.shape)}, {tuple(z_real.shape)}")
    with torch.no_grad():
        cost = torch.cdist(z_gen, z_real) ** 2  # (M, B, B')
        pis = [wta_capacity_assignment(cost[m], capacity) for m in range(cost.shape[0])]
        pi = torch.as_tensor(np.stack(pis), device=z_gen.device)  # (M, B)
    matched = torch.gather(z_real, 1, pi[..., None].expand(-1, -1, z_real.shape[2]))  # (M, B, d)
    return ((z_gen - matched) ** 2).sum(-1).mean(-1)


def wta_bridge_loss(denoiser, z0: torch.Tensor, zT_pool: torch.Tensor, n_candidates: int, capacity: int,
                    t_min: float, t_max: float, gen: torch.Generator | None = None) -> torch.Tensor:
    """Marginal matching in the paper's form (WTA over conditions, Eq. 10's L_DSM term).

    For each real target z0_j (unpaired) draw K candidate conditions from the unpaired source batch
    `zT_pool`, score every pseudo-pair (z0_j, z_T^k) by the bridge (denoising) loss with one shared
    (t, eps) per target, and keep the winner k* = argmin_k: the condition the bridge currently
    explains best. Capacity: one source may win at most `capacity` targets (C_y; stops a few
    conditions from explaining every target), solved exactly as an assignment. Only the winners'
    bridge loss carries gradient. z0 (M, B, d), zT_pool (M, B', d); returns (M,).
    """
    if z0.ndim != 3 or zT_pool.ndim != 3 or z0.shape[0] != zT_pool.shape[0] or z0.shape[2] != zT_pool.shape[2]:
        raise ValueError(f"expected (M, B, d) and (M, B', d), got {tuple(z0.shape)}, {tuple(zT_pool.shape)}")
    M, B, d = z0.shape
    Bs = zT_pool.shape[1]
    if not 1 <= n_candidates <= Bs:
        raise ValueError(f"n_candidates must lie in [1, {Bs}], got {n_candidates}")
    dev = z0.device
    # region: wta
    t = t_min + (t_max - t_min) * torch.rand(  # one t per target
        M, B, 1, generator=gen, device=dev)
    # one noise per target (common to its candidates)
    eps = torch.randn(M, B, d, generator=gen, device=dev)
    cand = (torch.rand(M, B, Bs, generator=gen, device=dev)
            .argsort(-1)[..., :n_candidates])  # (M, B, K) distinct
    with torch.no_grad():
        zT_c = torch.gather(  # (M, B, K, d)
            zT_pool[:, None].expand(M, B, Bs, d), 2,
            cand[..., None].expand(-1, -1, -1, d))
        z0_c, t_c = (z0[:, :, None].expand_as(zT_c),
                     t[:, :, None].expand(M, B, n_candidates, 1))
        mu, s = bridge_mean_std(z0_c, zT_c, t_c)
        zt_c = mu + s * eps[:, :, None]
        flat = lambda a: a.reshape(  # noqa: E731  (M, B, K, .) -> (M, B K, .)
            M, B * n_candidates, a.shape[-1])
        err = ((denoiser(flat(zt_c), flat(t_c), flat(zT_c))
                - flat(z0_c)) ** 2).sum(-1).reshape(M, B, n_candidates)
        # non-candidates: (almost) forbidden
        cost = torch.full((M, B, Bs), 1e6, device=dev)
        cost.scatter_(2, cand, err)
        cost = cost.cpu().numpy()
        win = torch.as_tensor(np.stack(  # (M, B)
            [wta_capacity_assignment(cost[m], capacity) for m in range(M)]
        ), device=dev)
    # (M, B, d) the winning conditions
    zT_w = torch.gather(zT_pool, 1, win[..., None].expand(-1, -1, d))
    mu, s = bridge_mean_std(z0, zT_w, t)
    z0_hat = denoiser(mu + s * eps, t, zT_w)
    # endregion
    return ((z0_hat - z0) ** 2).sum(-1).mean(-1)


def bridge_loss(
    denoiser, z0: torch.Tensor, zT: torch.Tensor, t_min: float, t_max: float,
    gen: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """L_br = E_t ||D(z_t, t, z_T) - z_0||^2, t ~ U(t_min, t_max), per member
    (M,). Also returns the one-step estimate z0_hat (for LDDBM's predictive
    loss)."""
    t = t_min + (t_max - t_min) * torch.rand(
        *z0.shape[:-1], 1, generator=gen, device=z0.device
    )
    zt = sample_bridge(z0, zT, t, gen)
    z0_hat = denoiser(zt, t, zT)
    return ((z0_hat - z0) ** 2).sum(-1).mean(-1), z0_hat


def endpoint_cycle_loss(den_yx, den_xy, zT: torch.Tensor, z0: torch.Tensor, steps: int, t_max: float, t_min: float,
                        x_hat: torch.Tensor | None = None, y_hat: torch.Tensor | None = None) -> torch.Tensor:
    """L_cyc^end = ||S_XY(S_YX(z_T)) - z_T||^2 + ||S_YX(S_XY(z_0)) - z_0||^2, per member (M,).
    Pass already sampled S_YX(z_T) / S_XY(z_0) as `x_hat` / `y_hat` to reuse them."""
    x_hat = sample_translation(den_yx, zT, steps, t_max, t_min) if x_hat is None else x_hat
    y_hat = sample_translation(den_xy, z0, steps, t_max, t_min) if y_hat is None else y_hat
    back_y = sample_translation(den_xy, x_hat, steps, t_max, t_min)
    back_x = sample_translation(den_yx, y_hat, steps, t_max, t_min)
    return ((back_y - zT) ** 2).sum(-1).mean(-1) + ((back_x - z0) ** 2).sum(-1).mean(-1)


def pseudo_pair_cycle_loss(den_yx, den_xy, zT: torch.Tensor, z0: torch.Tensor, x_hat: torch.Tensor, y_hat: torch.Tensor,
                          t_min: float, t_max: float, gen: torch.Generator | None = None) -> torch.Tensor:
    """The pseudo-pair trajectory cycle (an extension; our earlier reconstruction): each generated
    pair is a pseudo-pair, and the reverse bridge must denoise the
    states of that same bridge path back to its endpoint:
    E_t ||D_XY(z'_t, t, sg(x_hat)) - z_T||^2 (path from z_T at 0 to x_hat at T), and symmetrically
    E_t ||D_YX(z''_t, t, sg(y_hat)) - z_0||^2. Per member (M,)."""
    l1, _ = bridge_loss(den_xy, zT, x_hat.detach(), t_min, t_max, gen)
    l2, _ = bridge_loss(den_yx, z0, y_hat.detach(), t_min, t_max, gen)
    return l1 + l2


def cycle_paths(den_yx, den_xy, zT: torch.Tensor, z0: torch.Tensor, steps: int,
                t_max: float, t_lo: float) -> dict:
    """The four sampled trajectories the cycle terms compare (differentiable),
    on the grid t_max = t_0 > ... > t_{K-1} = t_lo with t_lo = T - t_max, so
    that T - t_i = t_{K-1-i}:
    Y->X from z_T (`x_hat`, `path_yx`), then X->Y back from x_hat (`back_y`,
    `path_xy_back`);
    X->Y from z_0 (`y_hat`, `path_xy`), then Y->X back from y_hat (`back_x`,
    `path_yx_back`).
    Each path lists the K states at t_0..t_{K-1} (its first state is its
    starting point)."""
    x_hat, path_yx = sample_translation(den_yx, zT, steps, t_max, t_lo,
                                        return_path=True)
    y_hat, path_xy = sample_translation(den_xy, z0, steps, t_max, t_lo,
                                        return_path=True)
    back_y, path_xy_back = sample_translation(den_xy, x_hat, steps, t_max, t_lo,
                                              return_path=True)
    back_x, path_yx_back = sample_translation(den_yx, y_hat, steps, t_max, t_lo,
                                              return_path=True)
    return {"x_hat": x_hat, "y_hat": y_hat, "back_y": back_y, "back_x": back_x,
            "path_yx": path_yx, "path_xy": path_xy,
            "path_xy_back": path_xy_back, "path_yx_back": path_yx_back,
            "times": time_grid(steps, t_max, t_lo, zT.device)}


def reversed_trajectory_cycle_loss(paths: dict, eps: float = TRAJ_EPS) -> torch.Tensor:
    """The paper's trajectory cycle: the state z_t of the X->Y bridge run back from a translation
    must coincide with the state z_{T-t} of the Y->X bridge that produced it (time reversed), and
    symmetrically, weighted by w(t) = 1 / (sigma_t^2 + eps) with sigma_t the bridge std:
    sum_i w(t_i) ||back[i] - fwd[K-1-i]||^2 / K over the K grid states (t_{K-1-i} = T - t_i).
    `paths` from `cycle_paths` (or any dict with the four paths and `times`). Per member (M,)."""
    times = paths["times"]
    # region: reversed_cycle
    total = 0.0
    for fwd, back in ((paths["path_yx"], paths["path_xy_back"]),
                      (paths["path_xy"], paths["path_yx_back"])):
        K = len(fwd)
        for i in range(K):
            # bridge variance at t_i (T = 1)
            sigma2 = times[i] ** 2 * (1 - times[i] ** 2)
            total = total + (
                ((back[i] - fwd[K - 1 - i]) ** 2).sum(-1).mean(-1)
                / (sigma2 + eps) / K
            )
    # endregion
    return total


def paired_loss(
    den_yx, den_xy, x: torch.Tensor, z0: torch.Tensor, zT: torch.Tensor,
    decoder_x, w_pred: float, t_min: float, t_max: float,
    gen: torch.Generator | None = None,
) -> torch.Tensor:
    """L_pair (LDDBM's paired heuristic): bridge loss
    + w_pred * ||D_X(z0_hat) - x||^2 for Y->X, plus the bridge loss for X->Y
    when `den_xy` is given. (InfoNCE is dropped: the encoders are frozen, so it
    has no gradient.) Per member (M,)."""
    l_yx, z0_hat = bridge_loss(den_yx, z0, zT, t_min, t_max, gen)
    pred = ((decoder_x(z0_hat) - x) ** 2).sum(-1).mean(-1)
    loss = l_yx + w_pred * pred
    if den_xy is not None:
        l_xy, _ = bridge_loss(den_xy, zT, z0, t_min, t_max, gen)
        loss = loss + l_xy
    return loss
