"""Part B: weak-to-strong training on scikit-learn's bundled digits (paper Sec. 6, scaled down).

Weak teacher: multinomial logistic regression on average-pooled images (it sees a coarse
view). Strong student: a one-hidden-layer MLP on all 64 pixels, trained full-batch on the
teacher's soft labels with one of the W2S losses. Strong ceiling: the same student trained
on the true labels of the same split. Every (seed, temperature, loss) student is one slice
of a batch of weights, trained together with ``torch.bmm``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression

from icml26.common import progress

from .losses import LOSS_NAMES, check_temperature, confidence_threshold, teacher_probs, w2s_loss

N_CLASSES = 10


@dataclass(frozen=True)
class DigitSplit:
    """One seed's disjoint splits: teacher (ground truth), w2s (teacher-labelled), test."""

    x_teacher: np.ndarray
    y_teacher: np.ndarray
    x_w2s: np.ndarray
    y_w2s: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray


def load_digit_split(n_teacher: int, n_w2s: int, seed: int) -> DigitSplit:
    """Shuffle the 1797 digits with ``seed`` and cut disjoint splits; pixels scaled to [0, 1]."""
    x, y = load_digits(return_X_y=True)
    if n_teacher < N_CLASSES or n_w2s < 1 or n_teacher + n_w2s >= len(y) - 50:
        raise ValueError(f"need n_teacher >= {N_CLASSES}, n_w2s >= 1 and at least 50 test digits "
                         f"(got n_teacher={n_teacher}, n_w2s={n_w2s}, {len(y)} digits)")
    order = np.random.default_rng(seed).permutation(len(y))
    x = (x / 16.0).astype(np.float32)
    a, b = n_teacher, n_teacher + n_w2s
    t, w, s = order[:a], order[a:b], order[b:]
    return DigitSplit(x[t], y[t], x[w], y[w], x[s], y[s])


def pool_images(x: np.ndarray, block: int) -> np.ndarray:
    """Average-pool flattened 8x8 images over ``block`` x ``block`` patches: (N, 64) -> (N, (8/block)^2)."""
    if x.ndim != 2 or x.shape[1] != 64:
        raise ValueError(f"expected flattened 8x8 digits of shape (N, 64), got {x.shape}")
    if block not in (1, 2, 4, 8):
        raise ValueError(f"block must divide 8 (1, 2, 4 or 8), got {block}")
    side = 8 // block
    # (N, 64) -> (N, side, block, side, block), averaged over the two block axes
    return x.reshape(-1, side, block, side, block).mean(axis=(2, 4)).reshape(len(x), side * side)


def teacher_view(x: np.ndarray, block: int, noise: float, rng: np.random.Generator) -> np.ndarray:
    """What the weak teacher sees: pixels plus fresh Gaussian noise (std ``noise``, one draw
    per image, invisible to the student), average-pooled to a coarse grid."""
    if noise < 0:
        raise ValueError(f"teacher noise must be >= 0, got {noise}")
    return pool_images(x + noise * rng.standard_normal(x.shape).astype(x.dtype), block)


def weak_teacher_logits(split: DigitSplit, block: int, noise: float, seed: int,
                        C: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Fit the weak teacher on its corrupted view of the ground-truth digits; return its
    logits on (its view of) the w2s and test digits."""
    rng = np.random.default_rng(20_000 + seed)
    model = LogisticRegression(C=C, max_iter=2000)
    model.fit(teacher_view(split.x_teacher, block, noise, rng), split.y_teacher)
    return (model.decision_function(teacher_view(split.x_w2s, block, noise, rng)),
            model.decision_function(teacher_view(split.x_test, block, noise, rng)))


def init_mlp(n_models: int, d_in: int, hidden: int, n_out: int, generator: torch.Generator,
             device: torch.device) -> list[torch.Tensor]:
    """Batched MLP weights [W1 (B, D, H), b1 (B, 1, H), W2 (B, H, K), b2 (B, 1, K)], PyTorch-style init."""
    def uniform(shape, fan_in):
        bound = 1 / np.sqrt(fan_in)
        return ((torch.rand(shape, generator=generator, dtype=torch.float32) * 2 - 1) * bound).to(device)
    return [uniform((n_models, d_in, hidden), d_in), uniform((n_models, 1, hidden), d_in),
            uniform((n_models, hidden, n_out), hidden), uniform((n_models, 1, n_out), hidden)]


def mlp_logits(params: list[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """Batched forward pass: x (B, N, D) -> logits (B, N, K)."""
    w1, b1, w2, b2 = params
    return torch.bmm(torch.relu(torch.bmm(x, w1) + b1), w2) + b2


def train_students(x: torch.Tensor, targets: torch.Tensor, loss_names: list[str], *, hidden: int,
                   steps: int, lr: float, weight_decay: float, eps: float, beta: float,
                   cace_quantile: float, init: list[torch.Tensor], desc: str = "students") -> list[torch.Tensor]:
    """Train B independent students full-batch with Adam, student b on loss ``loss_names[b]``.

    x (B, N, D), targets (B, N, K) teacher probabilities (one-hot for a ceiling). Adam is
    elementwise, so summing the B mean losses trains the B students independently.
    """
    if len(loss_names) != x.shape[0] or targets.shape[:2] != x.shape[:2]:
        raise ValueError(f"need one loss name and one target set per student: x {tuple(x.shape)}, "
                         f"targets {tuple(targets.shape)}, {len(loss_names)} names")
    unknown = sorted(set(loss_names) - set(LOSS_NAMES))
    if unknown:
        raise ValueError(f"unknown w2s loss(es) {unknown}; valid: {', '.join(LOSS_NAMES)}")
    params = [p.clone().requires_grad_(True) for p in init]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    groups = {name: torch.tensor([i for i, n in enumerate(loss_names) if n == name], device=x.device)
              for name in dict.fromkeys(loss_names)}
    thresholds = torch.stack([confidence_threshold(t, cace_quantile) for t in targets])  # (B,)
    # region: training step
    for step in progress(range(steps), desc=desc):
        z = mlp_logits(params, x)  # (B, N, K)
        total = z.new_zeros(())
        for name, idx in groups.items():
            per_example = w2s_loss(name, z[idx], targets[idx], eps=eps,
                                   beta=beta,
                                   threshold=thresholds[idx][:, None],
                                   step_frac=step / steps)
            total = total + per_example.mean(-1).sum()
        opt.zero_grad(set_to_none=True)
        total.backward()
        opt.step()
    # endregion
    return [p.detach() for p in params]


def predictive_entropy(logits: torch.Tensor) -> torch.Tensor:
    """Mean entropy (nats) of softmax(logits) over the example axis: (B, N, K) -> (B,)."""
    return -(torch.softmax(logits, -1) * F.log_softmax(logits, -1)).sum(-1).mean(-1)


def performance_gap_recovered(acc_student, acc_teacher, acc_ceiling):
    """PGR = (acc_student - acc_weak) / (acc_ceiling - acc_weak)  (Burns et al. 2023)."""
    return (acc_student - acc_teacher) / (acc_ceiling - acc_teacher)


def run_digits(cfg, seeds: list[int], temperatures=None, losses=None, hidden=None,
               device: torch.device | str = "cpu") -> list[dict]:
    """Run the temperature x loss sweep over ``seeds``; one result row per student.

    Rows hold seed, temperature, loss, and the test accuracy and mean predictive entropy of
    the student, the teacher (at that temperature) and the ceiling, plus PGR.
    """
    device = torch.device(device)
    temperatures = tuple(cfg.b_temperatures if temperatures is None else temperatures)
    losses = tuple(cfg.b_losses if losses is None else losses)
    hidden = cfg.b_hidden if hidden is None else int(hidden)
    for t in temperatures:
        check_temperature(t)
    if hidden < 1:
        raise ValueError(f"student width must be >= 1, got {hidden}")
    xs, targets, names, meta, tests, gens = [], [], [], [], [], []
    for seed in seeds:
        split = load_digit_split(cfg.b_n_teacher, cfg.b_n_w2s, seed)
        logit_w2s, logit_test = weak_teacher_logits(split, cfg.b_pool, cfg.b_teacher_noise, seed,
                                                   cfg.b_teacher_C)
        logit_w2s = torch.as_tensor(logit_w2s, dtype=torch.float32, device=device)
        x_w2s = torch.as_tensor(split.x_w2s, device=device)
        y_test = torch.as_tensor(split.y_test, device=device)
        teacher_acc = float((logit_test.argmax(1) == split.y_test).mean())
        for temp in temperatures:
            p_t = teacher_probs(logit_w2s, temp)
            teacher_ent = float(predictive_entropy(torch.as_tensor(logit_test / temp)[None])[0])
            for loss in losses:
                xs.append(x_w2s); targets.append(p_t); names.append(loss)
                meta.append(dict(seed=seed, temperature=temp, loss=loss, teacher_acc=teacher_acc,
                                 teacher_entropy=teacher_ent))
        # the strong ceiling: the same student on the true labels of the w2s split
        xs.append(x_w2s); names.append("ce")
        targets.append(F.one_hot(torch.as_tensor(split.y_w2s, device=device), N_CLASSES).float())
        meta.append(dict(seed=seed, temperature=float("nan"), loss="ceiling", teacher_acc=teacher_acc,
                         teacher_entropy=float("nan")))
        tests.append((torch.as_tensor(split.x_test, device=device), y_test))
        gens.append(torch.Generator().manual_seed(10_000 + seed))
    per_seed = len(temperatures) * len(losses) + 1
    # every student of a seed starts from that seed's initial weights (paired comparison)
    init = [torch.cat(ps) for ps in zip(*[
        [p.expand(per_seed, *p.shape[1:]).clone() for p in init_mlp(1, 64, hidden, N_CLASSES, g, device)]
        for g in gens])]
    params = train_students(torch.stack(xs), torch.stack(targets), names, hidden=hidden,
                            steps=cfg.b_steps, lr=cfg.b_lr, weight_decay=cfg.b_weight_decay,
                            eps=cfg.b_rce_eps, beta=cfg.b_sl_beta, cace_quantile=cfg.b_cace_quantile,
                            init=init, desc="digits students")
    # every seed has the same number of test digits: (S, N_test, 64) -> (B, N_test, 64)
    x_test = torch.stack([t[0] for t in tests]).repeat_interleave(per_seed, dim=0)
    y_test = torch.stack([t[1] for t in tests]).repeat_interleave(per_seed, dim=0)  # (B, N_test)
    with torch.no_grad():
        z = mlp_logits(params, x_test)
        acc = (z.argmax(-1) == y_test).float().mean(-1).cpu().numpy()
        ent = predictive_entropy(z).cpu().numpy()
    rows = []
    for i, m in enumerate(meta):
        ceiling = acc[(i // per_seed + 1) * per_seed - 1]
        rows.append(dict(m, student_acc=float(acc[i]), student_entropy=float(ent[i]),
                         ceiling_acc=float(ceiling),
                         pgr=float(performance_gap_recovered(acc[i], m["teacher_acc"], ceiling))))
    return rows
