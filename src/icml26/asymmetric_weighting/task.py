"""A generated verifiable task: single-digit addition "a+b=" with an exact-match reward.

Tokens: digits 0-9 are ids 0-9, '+' = 10, '=' = 11, BOS = 12. A prompt is [BOS, a, +, b, =]; the
answer is the decimal string of a + b (1 or 2 digits). The environment fixes the answer length
(the format), and decoding is restricted to digit tokens (a logit mask), so a random policy succeeds
with probability 1/10 on one-digit sums and 1/100 on two-digit sums: a mixture of difficulties in
which most groups start with zero successes, the from-scratch regime in miniature.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

PLUS, EQUALS, BOS = 10, 11, 12
VOCAB_SIZE = 13
NUM_DIGITS = 10
PROMPT_LEN = 5
MAX_ANSWER_LEN = 2


@dataclass(frozen=True)
class AdditionTask:
    """All prompts a+b with min_operand <= a, b <= max_operand (single digits, so sums have <= 2 digits)."""

    prompts: torch.Tensor  # (N, PROMPT_LEN) token ids
    answers: torch.Tensor  # (N, MAX_ANSWER_LEN) digit ids, right-padded with 0
    lengths: torch.Tensor  # (N,) answer lengths in {1, 2}

    @property
    def size(self) -> int:
        return int(self.prompts.shape[0])

    def to(self, device) -> "AdditionTask":
        return AdditionTask(self.prompts.to(device), self.answers.to(device), self.lengths.to(device))


def make_task(min_operand: int = 3, max_operand: int = 7, device="cpu") -> AdditionTask:
    """Every pair (a, b) in {min_operand..max_operand}^2, in a fixed order. The default 3..7 gives
    25 prompts, 10 with one-digit and 15 with two-digit sums (initial success 0.1 and 0.01)."""
    if not 0 <= min_operand <= max_operand <= 9:
        raise ValueError(f"need 0 <= min_operand <= max_operand <= 9 (single-digit operands), got "
                         f"{min_operand}..{max_operand}")
    ops = torch.arange(min_operand, max_operand + 1)
    a, b = torch.meshgrid(ops, ops, indexing="ij")
    a, b = a.reshape(-1), b.reshape(-1)  # (N,)
    s = a + b
    prompts = torch.stack([torch.full_like(a, BOS), a, torch.full_like(a, PLUS), b, torch.full_like(a, EQUALS)], dim=1)
    two = s >= 10
    answers = torch.stack([torch.where(two, s // 10, s), torch.where(two, s % 10, torch.zeros_like(s))], dim=1)
    return AdditionTask(prompts.to(device), answers.to(device), (1 + two.long()).to(device))


def exact_match_reward(responses: torch.Tensor, answers: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """1.0 iff the first `length` response tokens equal the answer digits exactly, else 0.0.

    responses, answers: (B, MAX_ANSWER_LEN) token ids; lengths: (B,). Positions past the length
    are ignored. Any non-digit token in the answer span gives reward 0.
    """
    if responses.dim() != 2 or responses.shape != answers.shape or lengths.shape != responses.shape[:1]:
        raise ValueError(f"responses {tuple(responses.shape)}, answers {tuple(answers.shape)} and lengths "
                         f"{tuple(lengths.shape)} must be (B, L), (B, L) and (B,)")
    pos = torch.arange(responses.shape[1], device=responses.device)  # (L,)
    in_span = pos[None, :] < lengths[:, None]  # (B, L)
    ok = (responses == answers) & (responses < NUM_DIGITS)
    return (ok | ~in_span).all(dim=1).float()


def decode(tokens: torch.Tensor) -> str:
    """Token ids -> text (for display)."""
    table = [str(d) for d in range(10)] + ["+", "=", "^"]
    return "".join(table[int(t)] for t in tokens)
