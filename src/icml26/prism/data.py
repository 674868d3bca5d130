"""The synthetic masked-token task: a hidden topic plus a topic-specific Markov chain.

Each sequence draws a topic t. Its tokens follow a first-order Markov chain over a shared
set of "ambiguous" tokens whose transition matrix T_t depends on the topic, and at each
position, with probability `p_private`, the chain is interrupted by a private token of
topic t (the global cue). A masked ambiguous token is best predicted from its neighbours
(local context) *and* the topic, which only the rest of the sequence reveals (global
context). Token ids: 0 = [MASK], 1..A = ambiguous, A+1.. = private (n_private per topic).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch.nn import functional as F

MASK_ID = 0


@dataclass
class TopicMarkovTask:
    """Generated data: token ids (N, L) and topics (N,) for train and test, plus the
    fixed test masks (N_test, L) and the ground-truth transition matrices (K, A, A)."""

    train: torch.Tensor
    test: torch.Tensor
    train_topics: torch.Tensor
    test_topics: torch.Tensor
    test_mask: torch.Tensor
    transitions: torch.Tensor
    vocab_size: int
    n_ambiguous: int
    n_private: int = 1
    p_private: float = 0.0

    @property
    def chance(self) -> float:
        """Accuracy of always predicting the most frequent training token at the masked
        test positions (the "chance" level of the reproduction check)."""
        counts = torch.bincount(self.train.reshape(-1), minlength=self.vocab_size)
        top = int(counts.argmax())
        return float((self.test[self.test_mask] == top).float().mean())

    def bayes_accuracy(self, chunk: int = 512) -> float:
        """Accuracy of the Bayes-optimal predictor at the masked test positions: the ceiling
        that no model can beat on this test set (see `bayes_posterior`). Computed `chunk`
        sequences at a time: the posterior holds several (N, L, K, A) float64 tensors, about
        8 GB at the full preset's 2000 test sequences."""
        correct, total = 0, 0
        for i in range(0, self.test.shape[0], chunk):
            tokens, mask = self.test[i:i + chunk], self.test_mask[i:i + chunk]
            post = bayes_posterior(tokens, mask, self.transitions, self.n_private, self.p_private)
            correct += int((post.argmax(-1)[mask] == tokens[mask]).sum())
            total += int(mask.sum())
        return correct / total


def vocab_size(n_topics: int, n_ambiguous: int, n_private: int) -> int:
    return 1 + n_ambiguous + n_topics * n_private


def sample_sequences(transitions: torch.Tensor, n: int, seq_len: int, n_private: int, p_private: float,
                     generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Sample n sequences (batched over sequences; the loop runs over positions only)."""
    K, A, _ = transitions.shape
    topics = torch.randint(K, (n,), generator=generator)
    state = torch.randint(A, (n,), generator=generator)
    out = torch.empty(n, seq_len, dtype=torch.long)
    for pos in range(seq_len):
        rows = transitions[topics, state]  # (n, A)
        state = torch.multinomial(rows, 1, generator=generator).squeeze(1)
        private = 1 + A + topics * n_private + torch.randint(n_private, (n,), generator=generator)
        use_private = torch.rand(n, generator=generator) < p_private
        out[:, pos] = torch.where(use_private, private, 1 + state)
    return out, topics


def make_task(n_topics: int = 4, n_ambiguous: int = 24, n_private: int = 3, p_private: float = 0.12,
              dirichlet_alpha: float = 0.15, seq_len: int = 32, n_train: int = 8192, n_test: int = 1024,
              mask_prob: float = 0.15, seed: int = 0) -> TopicMarkovTask:
    """Build the task on the CPU (deterministic in `seed`); move batches to the device later."""
    if n_topics < 2 or n_ambiguous < 2 or n_private < 1 or seq_len < 2:
        raise ValueError("need n_topics >= 2, n_ambiguous >= 2, n_private >= 1, seq_len >= 2")
    g = torch.Generator().manual_seed(int(seed))
    rng = np.random.default_rng(int(seed))
    rows = rng.dirichlet(np.full(n_ambiguous, float(dirichlet_alpha)), size=(n_topics, n_ambiguous)) + 1e-6
    gamma = torch.as_tensor(rows, dtype=torch.float32)  # (K, A, A)
    transitions = gamma / gamma.sum(-1, keepdim=True)  # (K, A, A), rows sum to 1
    train, train_topics = sample_sequences(transitions, n_train, seq_len, n_private, p_private, g)
    test, test_topics = sample_sequences(transitions, n_test, seq_len, n_private, p_private, g)
    test_mask = torch.rand(n_test, seq_len, generator=g) < mask_prob
    return TopicMarkovTask(train, test, train_topics, test_topics, test_mask, transitions,
                           vocab_size(n_topics, n_ambiguous, n_private), n_ambiguous, n_private, p_private)


def bayes_posterior(tokens: torch.Tensor, mask: torch.Tensor, transitions: torch.Tensor, n_private: int,
                    p_private: float) -> torch.Tensor:
    """Exact posterior p(x_l = v | all unmasked tokens) of the generating process, for every
    position: forward-backward over the joint hidden state (topic k, chain state a), batched
    over sequences and topics. A masked position emits nothing (its likelihood is 1 for every
    state); an ambiguous token a' has likelihood (1 - p) [a = a']; a private token of topic k'
    has likelihood p / n_private [k = k']. Returns (N, L, V) float64 probabilities."""
    if tokens.shape != mask.shape or tokens.dim() != 2:
        raise ValueError(f"tokens and mask must both have shape (N, L), got {tuple(tokens.shape)}, {tuple(mask.shape)}")
    T = transitions.double()  # (K, A, A)
    K, A, _ = T.shape
    N, L = tokens.shape
    p = float(p_private)
    amb = (tokens >= 1) & (tokens <= A)  # (N, L)
    onehot = F.one_hot((tokens - 1).clamp(0, A - 1), A).double() * (1 - p)  # (N, L, A)
    own = (tokens - 1 - A).div(n_private, rounding_mode="floor")[..., None] == torch.arange(K)  # (N, L, K)
    lik = torch.where(amb[..., None, None], onehot[:, :, None, :], (own & ~amb[..., None]).double()[..., None]
                      * (p / n_private))  # (N, L, K, A)
    lik = torch.where(mask[..., None, None], torch.ones_like(lik), lik)
    start = T.mean(1)  # (K, A): uniform initial state, one transition before position 0
    alpha = torch.empty(N, L, K, A, dtype=torch.float64)
    beta = torch.ones(N, L, K, A, dtype=torch.float64)
    a = start[None] * lik[:, 0]
    alpha[:, 0] = a / a.sum((1, 2), keepdim=True)
    for t in range(1, L):  # forward, normalised per step (the topic prior is uniform)
        a = torch.einsum("nka,kab->nkb", alpha[:, t - 1], T) * lik[:, t]
        alpha[:, t] = a / a.sum((1, 2), keepdim=True)
    for t in range(L - 2, -1, -1):  # backward
        b = torch.einsum("kab,nkb->nka", T, beta[:, t + 1] * lik[:, t + 1])
        beta[:, t] = b / b.sum((1, 2), keepdim=True)
    joint = alpha * beta  # p(k, a_l | all observed), up to a constant per (n, l)
    joint = joint / joint.sum((2, 3), keepdim=True)  # (N, L, K, A)
    probs = torch.zeros(N, L, 1 + A + K * n_private, dtype=torch.float64)
    probs[..., 1:1 + A] = (1 - p) * joint.sum(2)
    probs[..., 1 + A:] = (p / n_private) * joint.sum(3).repeat_interleave(n_private, dim=-1)
    return probs


def mask_tokens(tokens: torch.Tensor, mask_prob: float, generator: torch.Generator | None = None,
                mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """MLM corruption: replace the masked positions by [MASK]. Returns (inputs, mask)."""
    if tokens.dim() != 2:
        raise ValueError(f"tokens must have shape (batch, length), got {tuple(tokens.shape)}")
    if mask is None:
        mask = torch.rand(tokens.shape, generator=generator, device=tokens.device) < mask_prob
    return tokens.masked_fill(mask, MASK_ID), mask
