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

    @property
    def chance(self) -> float:
        """Accuracy of always predicting the most frequent training token at the masked
        test positions (the "chance" level of the reproduction check)."""
        counts = torch.bincount(self.train.reshape(-1), minlength=self.vocab_size)
        top = int(counts.argmax())
        return float((self.test[self.test_mask] == top).float().mean())


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
                           vocab_size(n_topics, n_ambiguous, n_private), n_ambiguous)


def mask_tokens(tokens: torch.Tensor, mask_prob: float, generator: torch.Generator | None = None,
                mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """MLM corruption: replace the masked positions by [MASK]. Returns (inputs, mask)."""
    if tokens.dim() != 2:
        raise ValueError(f"tokens must have shape (batch, length), got {tuple(tokens.shape)}")
    if mask is None:
        mask = torch.rand(tokens.shape, generator=generator, device=tokens.device) < mask_prob
    return tokens.masked_fill(mask, MASK_ID), mask
