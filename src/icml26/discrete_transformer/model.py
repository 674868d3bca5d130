"""A Discrete-Transformer-style model (Sec. 3 of the paper, reconstructed on the Transformer
Programs design; see the chapter's deviations box).

The residual stream is a list of named scalar *slots*, one per variable: V = [x, pos, 1] at
the start; every module reads a few slots through a *constrained read* and writes one new
slot, so variables never share directions (no superposition).

* Constrained read:   pi = GumbelSoftmax(w, tau),  v~ = sum_k pi_k v^(k)  (hard: v^(argmax w)).
* Numerical attention (routing only):
      S_ij = theta_pos[i - j] + theta_qk q_i k_j  (j <= i),   A = softmax_j(S / tau),
      o_i = sum_j A_ij u_j.
* Numerical MLP (element-wise arithmetic only): y_i = MLP(v^(a)_i, v^(b)_i).
* Readout: y_hat = sum_k c_k v^(k) + beta, linear over the named slots (as the linear
  classifier over the disentangled stream in Transformer Programs).
The same annealed temperature tau drives the reads and the attention softmax.
"""

from __future__ import annotations


import torch
from torch import nn

BASE_SLOTS = ("x", "pos", "one")
THETA_INIT = 0.1  # std of the noise on the initial relative-position biases


def temperature(step: int, total: int, tau_start: float,
                tau_end: float) -> float:
    """Geometric annealing tau_t = tau_0 (tau_1 / tau_0)^(t / T)
    (Sec. 3, training)."""
    if total < 1 or not 0 < tau_end <= tau_start:
        raise ValueError("need total >= 1 and 0 < tau_end <= tau_start")
    frac = min(max(step / total, 0.0), 1.0)
    return float(tau_start * (tau_end / tau_start) ** frac)


def gumbel_softmax(logits: torch.Tensor, tau: float,
                   generator: torch.Generator | None = None,
                   noise: bool = True) -> torch.Tensor:
    """pi = softmax((w + g) / tau), g ~ Gumbel(0, 1) (no noise when `noise` is
    False)."""
    if tau <= 0:
        raise ValueError(f"temperature must be positive, got {tau}")
    if noise:
        u = torch.rand(
            logits.shape, generator=generator, device="cpu"
        ).to(logits.device)
        logits = logits - torch.log(-torch.log(u.clamp(1e-10, 1 - 1e-10)))
    return torch.softmax(logits / tau, dim=-1)


def normalized_entropy(p: torch.Tensor, dim: int = -1, support: torch.Tensor | None = None) -> torch.Tensor:
    """H(p) / log(n) along `dim` (n = `support` if given, the number of allowed entries)."""
    h = -(p * torch.log(p.clamp_min(1e-30))).sum(dim)
    n = torch.as_tensor(p.shape[dim], dtype=p.dtype, device=p.device) if support is None else support.to(p.dtype)
    return torch.where(n > 1, h / torch.log(n.clamp_min(2.0)), torch.zeros_like(h))


class ConstrainedRead(nn.Module):
    """Reads one of `n_slots` slots: soft (Gumbel-softmax) in training, argmax
    when hard."""

    def __init__(self, n_slots: int):
        super().__init__()
        self.logits = nn.Parameter(0.01 * torch.randn(n_slots))

    # set by the trainer: hard forward, soft (Gumbel-softmax) gradient
    straight_through = False
    # set by the trainer: Gumbel noise on the read when a generator is given
    noise = True

    def weights(self, tau: float, hard: bool, generator=None,
                noise: bool = True) -> torch.Tensor:
        if hard:
            return nn.functional.one_hot(
                self.logits.argmax(), self.logits.numel()
            ).to(self.logits.dtype)
        soft = gumbel_softmax(self.logits, tau, generator, noise)
        if self.straight_through:
            one_hot = nn.functional.one_hot(
                soft.argmax(), soft.numel()).to(soft.dtype)
            return one_hot - soft.detach() + soft
        return soft

    def forward(self, slots: torch.Tensor, tau: float, hard: bool,
                generator=None) -> torch.Tensor:
        """slots (B, N, S) -> (B, N). Gumbel noise is drawn only when a
        generator is given."""
        if slots.shape[-1] != self.logits.numel():
            raise ValueError(f"expected {self.logits.numel()} slots, "
                             f"got {slots.shape[-1]}")
        return slots @ self.weights(tau, hard, generator,
                                    noise=self.noise and generator is not None)

    @property
    def choice(self) -> int:
        return int(self.logits.argmax())


class NumericalAttention(nn.Module):
    """One routing head: S_ij = theta_pos[i-j] + theta_qk q_i k_j, A = softmax_j(S / tau)."""

    def __init__(self, n_slots: int, max_len: int, slope: float = 0.0):
        super().__init__()
        self.q, self.k, self.u = ConstrainedRead(n_slots), ConstrainedRead(n_slots), ConstrainedRead(n_slots)
        # bias per relative offset i - j; ALiBi-style init -slope * (i - j) plus small noise
        offsets = torch.arange(max_len, dtype=torch.float32)
        self.theta_pos = nn.Parameter(-slope * offsets + THETA_INIT * torch.randn(max_len))
        self.theta_qk = nn.Parameter(torch.zeros(()))

    def scores(self, slots: torch.Tensor, tau: float, hard: bool,
               generator=None) -> torch.Tensor:
        B, N, _ = slots.shape
        q, k = (self.q(slots, tau, hard, generator),  # (B, N) each
                self.k(slots, tau, hard, generator))
        i = torch.arange(N, device=slots.device)
        rel = (i[:, None] - i[None, :]).clamp_min(0)  # (N, N) offsets i - j
        s = (self.theta_pos[rel][None]  # (B, N, N)
             + self.theta_qk * q[:, :, None] * k[:, None, :])
        causal = i[None, :] <= i[:, None]  # (N, N)
        return s.masked_fill(~causal, float("-inf"))

    gumbel = False  # Gumbel noise on the attention scores during training (a design choice; see DTConfig)

    def forward(self, slots: torch.Tensor, tau: float, hard: bool,
                generator=None):
        """Returns the written slot o (B, N) and the attention A (B, N, N).
        With `gumbel` set and a `generator` given (training), Gumbel(0, 1)
        noise is added to the scores before the softmax."""
        s = self.scores(slots, tau, hard, generator)
        if self.gumbel and generator is not None:
            u = (torch.rand(s.shape, generator=generator).to(s.device)
                 .clamp(1e-10, 1 - 1e-10))
            s = s - torch.log(-torch.log(u))  # masked (-inf) positions stay -inf
        A = torch.softmax(s / tau, dim=-1)
        u = self.u(slots, tau, hard, generator)  # (B, N)
        return (A @ u[..., None])[..., 0], A


class NumericalMLP(nn.Module):
    """Element-wise arithmetic on m read slots: y_i = MLP(v^(a)_i, v^(b)_i)."""

    def __init__(self, n_slots: int, m_in: int, hidden: int):
        super().__init__()
        self.reads = nn.ModuleList(
            [ConstrainedRead(n_slots) for _ in range(m_in)])
        self.net = nn.Sequential(nn.Linear(m_in, hidden), nn.SiLU(),
                                 nn.Linear(hidden, hidden), nn.SiLU(),
                                 nn.Linear(hidden, 1))

    def forward(self, slots: torch.Tensor, tau: float, hard: bool,
                generator=None):
        """Returns the written slot (B, N) and the MLP's inputs (B, N, m)."""
        inp = torch.stack(  # (B, N, m)
            [r(slots, tau, hard, generator) for r in self.reads], -1)
        return self.net(inp)[..., 0], inp


class DiscreteTransformer(nn.Module):
    """Layers of (numerical heads, then one numerical MLP) on a slot stream, then a readout."""

    def __init__(self, max_len: int, n_layers: int = 2, n_heads: int = 2, mlp_vars_in: int = 2,
                 mlp_hidden: int = 16, gumbel_attention: bool = False):
        super().__init__()
        if n_layers < 1 or n_heads < 1 or mlp_vars_in < 1:
            raise ValueError("n_layers, n_heads and mlp_vars_in must be positive")
        self.max_len, self.n_layers, self.n_heads = max_len, n_layers, n_heads
        self.slot_names = list(BASE_SLOTS)
        self.heads, self.mlps = nn.ModuleList(), nn.ModuleList()
        for layer in range(n_layers):
            s = len(self.slot_names)
            slopes = [2.0 ** (-2 * h) for h in range(n_heads)]  # ALiBi-like: one recency scale per head
            self.heads.append(nn.ModuleList([NumericalAttention(s, max_len, sl) for sl in slopes]))
            for h in self.heads[-1]:
                h.gumbel = bool(gumbel_attention)
            self.slot_names += [f"a{layer + 1}{h + 1}" for h in range(n_heads)]
            self.mlps.append(NumericalMLP(len(self.slot_names), mlp_vars_in, mlp_hidden))
            self.slot_names.append(f"m{layer + 1}")
        self.readout = nn.Parameter(0.01 * torch.randn(len(self.slot_names)))  # c_k, one per slot
        self.beta = nn.Parameter(torch.zeros(()))

    def base_slots(self, x: torch.Tensor) -> torch.Tensor:
        """x (B, N) -> initial stream (B, N, 3) = [x, pos, 1]."""
        if x.dim() != 2 or x.shape[1] > self.max_len:
            raise ValueError(f"x must have shape (B, N) with N <= {self.max_len}, got {tuple(x.shape)}")
        pos = torch.arange(x.shape[1], device=x.device, dtype=x.dtype).expand_as(x)
        return torch.stack([x, pos, torch.ones_like(x)], -1)

    def forward(self, x: torch.Tensor, tau: float, hard: bool = False,
                generator=None, trace: bool = False):
        """Predictions (B, N); with `trace`, also every slot, attention matrix
        and MLP input."""
        slots = self.base_slots(x)
        attn, mlp_in = [], []
        for heads, mlp in zip(self.heads, self.mlps):
            outs = [h(slots, tau, hard, generator) for h in heads]
            attn.append([a for _, a in outs])
            slots = torch.cat(  # (B, N, S + H)
                [slots, torch.stack([o for o, _ in outs], -1)], -1)
            m, inp = mlp(slots, tau, hard, generator)
            mlp_in.append(inp)
            slots = torch.cat([slots, m[..., None]], -1)  # (B, N, S + H + 1)
        y = slots @ self.readout + self.beta  # (B, N)
        if trace:
            return y, {"slots": slots, "attn": attn, "mlp_in": mlp_in}
        return y

    def reads(self):
        """All constrained reads, in order."""
        return [m for m in self.modules() if isinstance(m, ConstrainedRead)]

    def selection_entropy(self, tau: float, slots: torch.Tensor) -> dict[str, float]:
        """Mean normalised entropy of the read distributions softmax(w / tau) and of the
        attention rows (rows with >= 2 allowed positions) on inputs `slots` (B, N)."""
        with torch.no_grad():
            h_read = torch.stack([normalized_entropy(torch.softmax(r.logits / tau, -1)) for r in self.reads()]).mean()
            _, tr = self.forward(slots, tau, hard=True, trace=True)  # argmax reads, soft attention
            N = slots.shape[1]
            support = torch.arange(1, N + 1, device=slots.device)  # row i has i + 1 allowed positions
            rows = [normalized_entropy(a, -1, support)[:, 1:].mean() for layer in tr["attn"] for a in layer]
            h_attn = torch.stack(rows).mean()
        return {"read": float(h_read), "attn": float(h_attn), "mean": float((h_read + h_attn) / 2)}

