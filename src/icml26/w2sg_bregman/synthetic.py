"""Part A: the theory made visible on synthetic data with a known target (paper Secs. 3-4).

* Inputs x ~ N(0, I_d); the target is g(x) = softmax(s * B tanh(A x)) for cross-entropy
  (KL) or g(x) = c . tanh(A x) for squared loss.
* The weak teacher sees a corrupted view z = x + sigma * xi, fresh xi per query, that the
  student cannot see; it is a linear(-softmax) model fit on a small labelled sample.
  Its posterior mean given x is the dual mean over xi (computed by Monte Carlo).
* Students of growing width m are random-ReLU-feature models on the clean x, fit to one
  teacher label per input by minimising the empirical misfit E D(f_s, f_w) (squared error,
  or KL(p_s || p_w)) with a small ridge penalty.

Everything is batched over seeds and teacher noise levels; widths share nested features.
"""

from __future__ import annotations

import numpy as np
import torch
from sklearn.linear_model import LogisticRegression

from icml26.common import progress

from .bregman import BREGMAN_LOSSES, misfit_decomposition

DTYPE = torch.float64
TARGET_SCALE = 2.0


def make_task(dim: int, classes: int, gen: torch.Generator) -> dict[str, torch.Tensor]:
    """Draw the hidden target: A (d, d), B (K, d), c (d,)."""
    return {"A": torch.randn(dim, dim, generator=gen, dtype=DTYPE) / dim ** 0.5,
            "B": torch.randn(classes, dim, generator=gen, dtype=DTYPE),
            "c": torch.randn(dim, generator=gen, dtype=DTYPE)}


def target(x: torch.Tensor, task: dict, loss: str) -> torch.Tensor:
    """The true regression function / class-probability vector g(x): (..., d) -> (..., C)."""
    u = torch.tanh(x @ task["A"].T.to(x))
    if loss == "kl":
        return torch.softmax(TARGET_SCALE * u @ task["B"].T.to(x), dim=-1)
    return (u @ task["c"].to(x))[..., None]


def fit_teacher(x: np.ndarray, y: np.ndarray, loss: str, ridge: float = 1e-2) -> tuple[np.ndarray, np.ndarray]:
    """Fit the weak teacher on its corrupted views ``x`` (n, d): multinomial logistic
    regression on sampled labels (KL) or ridge regression on noisy targets (squared).
    Returns weights (C, d) and bias (C,)."""
    if loss == "kl":
        model = LogisticRegression(C=1.0, max_iter=1000).fit(x, y)
        return model.coef_, model.intercept_
    xc, yc = x - x.mean(0), y - y.mean()
    w = np.linalg.solve(xc.T @ xc + ridge * len(x) * np.eye(x.shape[1]), xc.T @ yc)
    return w[None, :], np.array([y.mean() - x.mean(0) @ w])


def teacher_predict(z: torch.Tensor, weights: torch.Tensor, bias: torch.Tensor, loss: str) -> torch.Tensor:
    """Teacher outputs on views z (..., d) with weights (..., C, d) broadcast over leading axes."""
    out = torch.einsum("...d,...cd->...c", z, weights) + bias
    return torch.softmax(out, dim=-1) if loss == "kl" else out


def teacher_views(x: torch.Tensor, sigma: torch.Tensor, draws: int, gen: torch.Generator) -> torch.Tensor:
    """M corrupted views z = x + sigma * xi of each input, per noise level: x (T, d) and
    sigma (L, 1, 1) -> (L, T, M, d)."""
    noise = torch.randn(sigma.shape[0], *x.shape[:-1], draws, x.shape[-1], generator=gen, dtype=x.dtype)
    return x[None, :, None] + sigma[..., None] * noise  # (1, T, 1, d) + (L, 1, 1, 1) * (L, T, M, d)


def seedwise_decomposition(g: torch.Tensor, student: torch.Tensor, teacher: torch.Tensor,
                           loss: str) -> dict[str, torch.Tensor]:
    """`misfit_decomposition` per input, one seed at a time to bound memory (its (N, M, C)
    intermediates are several times the teacher draws): g (S, T, C), student (S, L, T, C),
    teacher (S, L, T, M, C) -> {term: (S, L, T)}."""
    S, L, T, C = student.shape
    M = teacher.shape[3]
    per_seed = [misfit_decomposition(g[s, None].expand(L, T, C).reshape(-1, C), student[s].reshape(-1, C),
                                     teacher[s].reshape(-1, M, C), loss) for s in range(S)]  # (L*T,) each
    return {k: torch.stack([t[k] for t in per_seed]).reshape(S, L, T) for k in per_seed[0]}


def random_features(x: torch.Tensor, proj: torch.Tensor, offset: torch.Tensor) -> torch.Tensor:
    """Random ReLU features plus a constant: x (S, N, d), proj (S, d, m) -> (S, N, m + 1)."""
    h = torch.relu(x @ proj + offset) / proj.shape[-1] ** 0.5
    return torch.cat([h, torch.ones_like(h[..., :1])], dim=-1)


def fit_students(feats: torch.Tensor, labels: torch.Tensor, loss: str, ridge: float,
                 steps: int, lr: float) -> torch.Tensor:
    """Fit linear heads on features (S, N, m+1) to teacher labels (S, L, N, C), one head
    per (seed, noise level): returns W (S, L, m+1, C). Squared loss: closed-form ridge.
    KL: L-BFGS on the empirical misfit mean_i KL(p_s(x_i) || p_w(z_i)) + ridge ||W||^2."""
    n, width = feats.shape[1], feats.shape[2]
    if loss == "squared":
        gram = feats.transpose(1, 2) @ feats + ridge * n * torch.eye(width, dtype=feats.dtype, device=feats.device)  # (S, m+1, m+1)
        rhs = torch.einsum("snm,slnc->slmc", feats, labels)
        chol = torch.linalg.cholesky(gram)[:, None]  # (S, 1, m+1, m+1), broadcast over L
        return torch.cholesky_solve(rhs, chol)
    S, L, _, C = labels.shape
    f32 = feats.float()
    log_q = torch.log(labels.clamp_min(1e-12)).float().permute(0, 2, 1, 3)  # (S, L, N, C) -> (S, N, L, C)
    w = torch.zeros(S, width, L * C, dtype=torch.float32, device=feats.device, requires_grad=True)  # all L heads side by side
    # full-batch L-BFGS on the sum of the S*L independent (separable) objectives
    opt = torch.optim.LBFGS([w], lr=lr, max_iter=steps, history_size=20,
                            tolerance_grad=1e-9, tolerance_change=1e-12, line_search_fn="strong_wolfe")

    def closure():
        logp = torch.log_softmax(torch.bmm(f32, w).reshape(S, n, L, C), dim=-1)  # (S, N, L*C) -> (S, N, L, C)
        misfit = (logp.exp() * (logp - log_q)).sum(-1).mean(1)  # (S, L)
        obj = misfit.sum() + ridge * (w ** 2).sum()
        opt.zero_grad(set_to_none=True)
        obj.backward()
        return obj

    opt.step(closure)
    # (S, m+1, L*C) -> (S, m+1, L, C) -> (S, L, m+1, C), back in the evaluation precision
    return w.detach().reshape(S, width, L, C).permute(0, 2, 1, 3).to(feats.dtype)


def run_synthetic(cfg, loss: str, seed0: int = 0, device: torch.device | str = "cpu") -> list[dict]:
    """Run Part A for one Bregman loss; one row per (seed, noise level, width) with the
    teacher/student risks, gain, misfit, cross term, identity residuals and D(f_bar, f_s).

    Random numbers are drawn on the CPU from a seeded generator (identical on every device);
    the student fits and the evaluation then run on ``device`` in float64 (CPU or CUDA)."""
    device = torch.device(device)
    if loss not in BREGMAN_LOSSES:
        raise ValueError(f"unknown Bregman loss {loss!r}; valid: {', '.join(BREGMAN_LOSSES)}")
    if any(w < 1 for w in cfg.a_widths) or any(s < 0 for s in cfg.a_noise_levels):
        raise ValueError("widths must be >= 1 and noise levels >= 0")
    S, L, d, M = cfg.seeds, len(cfg.a_noise_levels), cfg.a_dim, cfg.a_mc_draws
    sig = torch.tensor(cfg.a_noise_levels, dtype=DTYPE)[None, :, None, None]  # (1, L, 1, 1)
    gen = torch.Generator().manual_seed(1000 + seed0)
    tasks = [make_task(d, cfg.a_classes, gen) for _ in range(S)]
    # teacher fit on its own corrupted, labelled sample (one teacher per seed and noise level)
    tw, tb = [], []
    for s in range(S):
        x = torch.randn(cfg.a_n_teacher, d, generator=gen, dtype=DTYPE)
        g = target(x, tasks[s], loss)
        if loss == "kl":
            y = torch.multinomial(g, 1, generator=gen)[:, 0].numpy()
        else:
            y = (g[:, 0] + 0.3 * torch.randn(len(x), generator=gen, dtype=DTYPE)).numpy()
        for sigma in cfg.a_noise_levels:
            z = x + sigma * torch.randn(x.shape, generator=gen, dtype=DTYPE)
            w, b = fit_teacher(z.numpy(), y, loss)
            tw.append(torch.as_tensor(w)); tb.append(torch.as_tensor(b))
    C = tw[0].shape[0]
    tw = torch.stack(tw).reshape(S, L, 1, C, d)   # (S*L, C, d) -> (S, L, 1, C, d)
    tb = torch.stack(tb).reshape(S, L, 1, C)
    # student data: clean x, one teacher label per x from a fresh corrupted view
    x_tr = torch.randn(S, cfg.a_n_student, d, generator=gen, dtype=DTYPE)
    z_tr = x_tr[:, None] + sig * torch.randn(S, L, *x_tr.shape[1:], generator=gen, dtype=DTYPE)
    labels = teacher_predict(z_tr, tw, tb, loss)  # (S, L, N, C)
    # test: M teacher draws per clean test input. The views are drawn one seed at a time (the same
    # random stream as one (S, L, T, M, d) draw whenever L*T*M*d is a multiple of 16, as in every
    # preset), so that they never sit in memory at once (8 GB at the full preset, 20 GB at its first size).
    x_te = torch.randn(S, cfg.a_n_test, d, generator=gen, dtype=DTYPE)
    g_te = torch.stack([target(x_te[s], tasks[s], loss) for s in range(S)])  # (S, T, C)
    teach_te = torch.stack([teacher_predict(teacher_views(x_te[s], sig[0], M, gen), tw[s, :, :, None],
                                            tb[s, :, :, None], loss) for s in range(S)])  # (S, L, T, M, C)
    m_max = max(cfg.a_widths)
    proj = torch.randn(S, d, m_max, generator=gen, dtype=DTYPE).to(device)
    offset = torch.randn(S, 1, m_max, generator=gen, dtype=DTYPE).to(device)
    x_tr, labels, x_te, g_te, teach_te = (t.to(device) for t in (x_tr, labels, x_te, g_te, teach_te))
    rows = []
    for width in progress(cfg.a_widths, desc=f"students ({loss})"):
        f_tr = random_features(x_tr, proj[..., :width], offset[..., :width])
        f_te = random_features(x_te, proj[..., :width], offset[..., :width])
        w = fit_students(f_tr, labels, loss, cfg.a_ridge, cfg.a_steps, cfg.a_lr)
        out = torch.einsum("stm,slmc->sltc", f_te, w)
        student = torch.softmax(out, -1) if loss == "kl" else out  # (S, L, T, C)
        per = seedwise_decomposition(g_te, student, teach_te, loss)  # each (S, L, T)
        for s in range(S):
            for li, sigma in enumerate(cfg.a_noise_levels):
                row = {"loss": loss, "seed": s, "noise": sigma, "width": width}
                for key in ("teacher_risk", "student_risk", "gain", "misfit", "cross",
                            "to_posterior_mean", "variance"):
                    row[key] = float(per[key][s, li].mean())
                row["identity_residual"] = float(per["residual"][s, li].abs().max())
                row["bv_residual"] = float(per["bv_residual"][s, li].abs().max())
                rows.append(row)
    return rows
