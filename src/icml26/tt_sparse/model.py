"""The TT-Sparse layer, its task head, training, freezing and magnitude pruning.

A node j reads exactly k binary inputs I_j = TopK(C_j, k) and outputs one bit

    z_j = 1[ h_j > 0 ],   h_j = sum_{i in I_j} W_ji x_i + b_j,

a Boolean function of k bits, i.e. a truth table with 2^k rows. The node bits (and the
optional standardized skip features) go through a linear head, so the model's score is a
weighted sum of Boolean rules.
"""

from __future__ import annotations

import copy

import numpy as np
import torch
from torch import nn
from sklearn.metrics import accuracy_score, r2_score, roc_auc_score

from icml26.common import resolve_device

from .topk import hard_topk, heaviside_st, straight_through_weights, temperature_schedule

TASKS = ("binary", "multiclass", "regression")


def _check_task(task: str) -> None:
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; valid tasks: {', '.join(TASKS)}")


class TTSparseLayer(nn.Module):
    """M learnable-truth-table nodes over F binary inputs (training form, soft TopK + STE).

    Parameters: connection scores C (M, F), logic weights W (M, F), both N(0, 0.1^2), and
    biases b (M,) = 0. With `learn_connections=False` the scores stay at their random
    initial values: the random fixed k-sparse ablation.
    """

    def __init__(self, n_inputs: int, n_nodes: int, k: int, learn_connections: bool = True,
                 generator: torch.Generator | None = None, device="cpu"):
        super().__init__()
        if not isinstance(k, int) or not 1 <= k <= n_inputs:
            raise ValueError(f"k={k!r} must be an int between 1 and the number of inputs ({n_inputs})")
        if n_nodes < 1:
            raise ValueError(f"n_nodes must be >= 1, got {n_nodes}")
        self.n_inputs, self.n_nodes, self.k = n_inputs, n_nodes, k
        init = lambda: 0.1 * torch.randn(n_nodes, n_inputs, generator=generator).to(device)
        self.scores = nn.Parameter(init(), requires_grad=learn_connections)
        self.weights = nn.Parameter(init())
        self.bias = nn.Parameter(torch.zeros(n_nodes, device=device))
        self.tau = 0.1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(N, F) bits -> (N, M) node bits; exactly k inputs per node in the
        forward pass."""
        # (M, F)
        w_eff, _ = straight_through_weights(self.weights, self.scores, self.k,
                                            self.tau)
        return heaviside_st(x @ w_eff.T + self.bias)

    def selected(self) -> torch.Tensor:
        """(M, k) indices of each node's selected inputs, ascending."""
        return hard_topk(self.scores, self.k).nonzero()[:, 1].view(self.n_nodes, self.k)


def node_preactivation(x_sel: torch.Tensor, w: torch.Tensor,
                       b: torch.Tensor) -> torch.Tensor:
    """h = sum_s x_s w_s + b over the last axis (k slots), summed slot by slot
    in a fixed order.

    The network and the truth-table enumeration both call this, so they round
    identically and the strict threshold h > 0 gives the same bit: the rules
    are *exactly* the network.
    """
    h = x_sel[..., 0] * w[..., 0]
    for s in range(1, x_sel.shape[-1]):
        h = h + x_sel[..., s] * w[..., s]
    return h + b


class TTSparseModel(nn.Module):
    """TT-Sparse layer + head: Dropout -> Linear -> BatchNorm1d -> Linear (no biases).

    `n_outputs` is 1 for binary and regression, C for multiclass. `n_skip` raw standardized
    features can be fed to the head beside the node bits (linear skip terms).
    """

    def __init__(self, n_inputs: int, n_outputs: int, n_nodes: int = 16, k: int = 4,
                 n_skip: int = 0, learn_connections: bool = True, dropout: float = 0.0,
                 seed: int = 0, device="auto"):
        super().__init__()
        device = resolve_device(device)
        gen = torch.Generator().manual_seed(seed)
        self.layer = TTSparseLayer(n_inputs, n_nodes, k, learn_connections, gen, device)
        width = n_nodes + n_skip
        hidden = max(32, width // 4)
        self.n_outputs, self.n_skip = n_outputs, n_skip
        self.head = nn.Sequential(nn.Dropout(dropout), nn.Linear(width, hidden, bias=False),
                                  nn.BatchNorm1d(hidden), nn.Linear(hidden, n_outputs, bias=False)).to(device)
        with torch.no_grad():
            for lin in (self.head[1], self.head[3]):
                lin.weight.copy_(nn.init.kaiming_uniform_(torch.empty_like(lin.weight, device="cpu"), a=5 ** 0.5,
                                                          generator=gen))

    def forward(self, x: torch.Tensor, skip: torch.Tensor | None = None) -> torch.Tensor:
        z = self.layer(x)  # (N, M)
        feats = z if skip is None else torch.cat([z, skip], dim=1)  # (N, M + S)
        return self.head(feats)

    @torch.no_grad()
    def fold_head(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Fold the eval-mode head into one affine map: score = A [z, s] + c.

        A = W2 diag(gamma / sqrt(var + eps)) W1 and
        c = W2 (beta - gamma mean / sqrt(var + eps)).
        """
        lin1, bn, lin2 = self.head[1], self.head[2], self.head[3]
        scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)  # (H,)
        A = lin2.weight @ (scale[:, None] * lin1.weight)  # (out, M + S)
        c = lin2.weight @ (bn.bias - scale * bn.running_mean)  # (out,)
        return A, c

    @torch.no_grad()
    def freeze(self) -> "FrozenTTSparse":
        """Fix each node's k connections (hard TopK) and fold the head: the sparse model."""
        idx = self.layer.selected()  # (M, k)
        A, c = self.fold_head()
        frozen = FrozenTTSparse(idx, self.layer.weights.gather(1, idx), self.layer.bias.clone(), A, c)
        frozen.y_mean.copy_(self.y_mean) if hasattr(self, "y_mean") else None
        frozen.y_std.copy_(self.y_std) if hasattr(self, "y_std") else None
        return frozen.to(idx.device)


class FrozenTTSparse(nn.Module):
    """The frozen, sparse TT-Sparse model: node j reads inputs idx[j] (some pruned away by
    `edge_mask`), the head is one affine map (some entries pruned by `head_mask`)."""

    def __init__(self, idx: torch.Tensor, w: torch.Tensor, b: torch.Tensor, A: torch.Tensor,
                 c: torch.Tensor):
        super().__init__()
        self.register_buffer("idx", idx.clone())  # (M, k) input indices
        self.register_buffer("edge_mask", torch.ones_like(w))  # (M, k)
        self.w = nn.Parameter(w.clone())
        self.b = nn.Parameter(b.clone())
        self.head_weight = nn.Parameter(A.clone())  # (out, M + S)
        self.head_bias = nn.Parameter(c.clone())  # (out,)
        self.register_buffer("head_mask", torch.ones_like(A))
        self.register_buffer("y_mean", torch.zeros((), device=A.device))
        self.register_buffer("y_std", torch.ones((), device=A.device))

    @property
    def n_nodes(self) -> int:
        return int(self.idx.shape[0])

    def nodes(self, x: torch.Tensor) -> torch.Tensor:
        """(N, F) bits -> (N, M) node bits, z_j = 1[h_j > 0] via `node_preactivation`."""
        x_sel = x[:, self.idx]  # (N, M, k): each node's inputs
        return heaviside_st(node_preactivation(x_sel, self.w * self.edge_mask, self.b))

    def forward(self, x: torch.Tensor, skip: torch.Tensor | None = None) -> torch.Tensor:
        z = self.nodes(x)
        feats = z if skip is None else torch.cat([z, skip], dim=1)  # (N, M + S)
        return feats @ (self.head_weight * self.head_mask).T + self.head_bias

    @torch.no_grad()
    def prune_smallest(self, fraction: float) -> None:
        """Magnitude pruning: drop the `fraction` smallest |w| of the active node
        edges and of the active head weights (each at least one)."""
        for weight, mask in ((self.w, self.edge_mask),
                             (self.head_weight, self.head_mask)):
            active = mask.bool()
            n = int(active.sum())
            n_drop = min(max(1, int(round(fraction * n))), n)
            if n == 0:
                continue
            mags = torch.where(active, weight.abs(),
                               torch.full_like(weight, float("inf")))
            drop = mags.flatten().argsort()[:n_drop]
            mask.view(-1)[drop] = 0.0

    def n_active_edges(self) -> int:
        return int(self.edge_mask.sum())


# ----------------------------------------------------------------------------- training
def _tensors(X, y, S, task, device):
    X = torch.as_tensor(np.asarray(X), dtype=torch.float32, device=device)
    ydt = torch.long if task == "multiclass" else torch.float32
    y = torch.as_tensor(np.asarray(y), dtype=ydt, device=device)
    S = None if S is None else torch.as_tensor(np.asarray(S), dtype=torch.float32, device=device)
    return X, y, S


def task_loss(task: str, out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """BCE-with-logits (binary), cross-entropy (multiclass) or MSE (regression)."""
    if task == "binary":
        return nn.functional.binary_cross_entropy_with_logits(out[:, 0], y)
    if task == "multiclass":
        return nn.functional.cross_entropy(out, y)
    return nn.functional.mse_loss(out[:, 0], y)


def task_metric(task: str, y: np.ndarray, scores: np.ndarray) -> float:
    """The chapter's one metric per task: AUC, macro one-vs-rest AUC, or R^2."""
    _check_task(task)
    scores = np.asarray(scores, dtype=np.float64)
    if task == "binary":
        return float(roc_auc_score(y, scores.reshape(len(y), -1)[:, 0]))
    if task == "multiclass":
        p = np.exp(scores - scores.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        return float(roc_auc_score(y, p, multi_class="ovr", average="macro"))
    return float(r2_score(y, scores.reshape(len(y), -1)[:, 0]))


def task_accuracy(task: str, y: np.ndarray, scores: np.ndarray) -> float:
    scores = np.asarray(scores).reshape(len(y), -1)
    pred = (scores[:, 0] > 0).astype(int) if task == "binary" else scores.argmax(1)
    return float(accuracy_score(y, pred))


@torch.no_grad()
def predict_scores(model: nn.Module, X, S=None) -> np.ndarray:
    """Raw scores (logits, or the prediction in target units for regression), (N, out)."""
    model.eval()
    device = next(model.parameters()).device
    X = torch.as_tensor(np.asarray(X), dtype=torch.float32, device=device)
    S = None if S is None else torch.as_tensor(np.asarray(S), dtype=torch.float32, device=device)
    out = model(X, S).double()
    if isinstance(model, FrozenTTSparse):
        out = out * model.y_std.double() + model.y_mean.double()
    elif hasattr(model, "y_mean"):
        out = out * model.y_std.double() + model.y_mean.double()
    return out.cpu().numpy()


def train_tt_sparse(model: TTSparseModel, X, y, task: str, X_val, y_val, cfg, S=None, S_val=None,
                    seed: int = 0) -> list[float]:
    """Train with AdamW, gradient clipping 1.0, ReduceLROnPlateau and early stopping on the
    validation loss; the soft TopK temperature follows `temperature_schedule`. Returns the
    validation-loss curve; the model keeps its best-validation weights."""
    _check_task(task)
    device = next(model.parameters()).device
    if task == "regression":
        y_arr = np.asarray(y, dtype=np.float64)
        model.register_buffer("y_mean", torch.tensor(float(y_arr.mean()), device=device))
        model.register_buffer("y_std", torch.tensor(float(y_arr.std() or 1.0), device=device))
        y = (y_arr - y_arr.mean()) / (y_arr.std() or 1.0)
        y_val = (np.asarray(y_val, dtype=np.float64) - y_arr.mean()) / (y_arr.std() or 1.0)
    X, y, S = _tensors(X, y, S, task, device)
    Xv, yv, Sv = _tensors(X_val, y_val, S_val, task, device)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=5, min_lr=1e-7)
    gen = torch.Generator().manual_seed(seed)
    best, best_state, wait, curve = float("inf"), None, 0, []
    n = X.shape[0]
    # region: training epoch
    for epoch in range(cfg.epochs):
        model.layer.tau = temperature_schedule(epoch, cfg.epochs, cfg.tau_start,
                                               cfg.tau_end)
        model.train()
        perm = torch.randperm(n, generator=gen).to(device)
        for start in range(0, n, cfg.batch_size):
            batch = perm[start:start + cfg.batch_size]
            if batch.numel() < 2:  # BatchNorm needs two rows
                continue
            out = model(X[batch], None if S is None else S[batch])
            loss = task_loss(task, out, y[batch])
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
    # endregion
        model.eval()
        with torch.no_grad():
            val = float(task_loss(task, model(Xv, Sv), yv))
        curve.append(val)
        sched.step(val)
        if val < best - 1e-6:
            best, best_state, wait = val, copy.deepcopy(model.state_dict()), 0
        else:
            wait += 1
            if wait > cfg.patience:
                break
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    return curve


def finetune(frozen: FrozenTTSparse, X, y, task: str, epochs: int, lr: float, S=None) -> None:
    """Masked fine-tuning of a frozen model (full batch Adam; pruned entries stay zero)."""
    device = frozen.idx.device
    if task == "regression":
        y = (np.asarray(y, dtype=np.float64) - float(frozen.y_mean)) / float(frozen.y_std)
    X, y, S = _tensors(X, y, S, task, device)
    opt = torch.optim.Adam(frozen.parameters(), lr=lr)
    frozen.train()
    for _ in range(epochs):
        loss = task_loss(task, frozen(X, S), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    frozen.eval()


def prune(frozen: FrozenTTSparse, X, y, task: str, X_val, y_val, cfg, S=None,
          S_val=None) -> tuple[FrozenTTSparse, list[dict]]:
    """Magnitude-based pruning with fine-tuning (the paper's variant).

    Each round removes the `prune_fraction` smallest-magnitude active node edges
    and head weights, fine-tunes, and is kept only if the validation metric
    stays within `max_drop` of the unpruned model's; a rejected round halves
    the fraction. Returns the pruned model and the history of rounds.
    """
    _check_task(task)
    base = task_metric(task, y_val, predict_scores(frozen, X_val, S_val))
    current, frac = frozen, cfg.prune_fraction
    history = [dict(round=0, val=base, edges=frozen.n_active_edges(),
                    kept=True)]
    for r in range(1, cfg.prune_rounds + 1):
        cand = copy.deepcopy(current)
        cand.prune_smallest(frac)
        finetune(cand, X, y, task, cfg.finetune_epochs, cfg.finetune_lr, S)
        val = task_metric(task, y_val, predict_scores(cand, X_val, S_val))
        kept = val >= base - cfg.max_drop
        history.append(dict(round=r, val=val, edges=cand.n_active_edges(),
                            kept=kept))
        if kept:
            current = cand
        else:
            frac /= 2
            if frac < 0.02:
                break
    return current, history
