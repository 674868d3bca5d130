"""The generated role-play corpus (CPU-sized stand-in for the paper's 130K persona mixture).

Every item is one fixed-length sequence (18 tokens):

    <role> [name style forbidden f f] </role> <user> [topic emotion f f] </user> <resp> r1 r2 r3 <eos>

where the bracketed spans are shuffled. The three response slots need different perspectives:

* r1 = the style marker of the persona            (character only),
* r2 = the answer to the user's topic, or an in-character refusal (one per style) when the user
       asks about the persona's forbidden topic    (both: the "relationship" slot, with conflicts),
* r3 = an empathy marker for the user's emotion     (user only).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

N_NAMES, N_STYLES, N_TOPICS, N_EMOTIONS, N_FILLERS = 32, 4, 6, 3, 200
SPECIALS = ("<role>", "</role>", "<user>", "</user>", "<resp>", "<eos>")
STYLES = ("formal", "pirate", "poet", "cheerful")
TOPICS = ("food", "sport", "music", "money", "war", "travel")
EMOTIONS = ("sad", "angry", "happy")


def _build_vocab() -> list[str]:
    v = list(SPECIALS)
    v += [f"name{i}" for i in range(N_NAMES)]
    v += [f"style:{s}" for s in STYLES]
    v += [f"hates:{t}" for t in TOPICS]
    v += [f"ask:{t}" for t in TOPICS]
    v += [f"feels:{e}" for e in EMOTIONS]
    v += [f"r1:{s}" for s in STYLES]
    v += [f"answer:{t}" for t in TOPICS]
    v += [f"refuse:{s}" for s in STYLES]
    v += [f"r3:comfort-{e}" for e in EMOTIONS]
    v += [f"w{i}" for i in range(N_FILLERS)]
    return v


VOCAB = tuple(_build_vocab())
TOK = {t: i for i, t in enumerate(VOCAB)}
VOCAB_SIZE = len(VOCAB)
ROLE_OPEN, ROLE_CLOSE, USER_OPEN, USER_CLOSE, RESP, EOS = (TOK[s] for s in SPECIALS)
NAME0, STYLE0, HATES0, ASK0, FEELS0 = TOK["name0"], TOK["style:formal"], TOK["hates:food"], TOK["ask:food"], TOK["feels:sad"]
R1_0, ANSWER0, REFUSE0, R3_0, FILL0 = TOK["r1:formal"], TOK["answer:food"], TOK["refuse:formal"], TOK["r3:comfort-sad"], TOK["w0"]
ROLE_LEN, USER_LEN = 5, 4
SEQ_LEN = 1 + ROLE_LEN + 1 + 1 + USER_LEN + 1 + 1 + 4
SLOT_POS = {"r1": 14, "r2": 15, "r3": 16}  # token positions of the response slots
PROMPT_LEN = 14  # everything before r1
USER_CLOSE_POS = 1 + ROLE_LEN + 1 + 1 + USER_LEN  # position of </user>: from here on both spans have been read


@dataclass
class RolePlayData:
    """A batch of items: token ids, CLM labels, the latent attributes and the conflict flag."""

    input_ids: torch.Tensor  # (N, SEQ_LEN) long
    labels: torch.Tensor  # (N, SEQ_LEN) long, -100 outside the response
    style: torch.Tensor  # (N,) persona style in [0, 4)
    forbidden: torch.Tensor  # (N,) persona's forbidden topic in [0, 6)
    topic: torch.Tensor  # (N,) user's topic in [0, 6)
    emotion: torch.Tensor  # (N,) user's emotion in [0, 3)
    conflict: torch.Tensor  # (N,) bool: topic == forbidden

    def __len__(self) -> int:
        return self.input_ids.shape[0]

    def subset(self, idx: torch.Tensor) -> "RolePlayData":
        return RolePlayData(*(getattr(self, f)[idx] for f in self.__dataclass_fields__))

    def to(self, device) -> "RolePlayData":
        return RolePlayData(*(getattr(self, f).to(device) for f in self.__dataclass_fields__))


def _shuffle_rows(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Independent random permutation of each row of x (N, L), batched via argsort."""
    perm = torch.rand(x.shape, generator=gen).argsort(dim=1)
    return x.gather(1, perm)


def make_roleplay_data(n: int, conflict_rate: float = 0.3, seed: int = 0) -> RolePlayData:
    """Generate `n` role-play items (batched; no loop over items)."""
    if n < 1:
        raise ValueError(f"n must be positive, got {n}")
    if not 0.0 <= conflict_rate <= 1.0:
        raise ValueError(f"conflict_rate must lie in [0, 1], got {conflict_rate}")
    g = torch.Generator().manual_seed(int(seed))
    style = torch.randint(N_STYLES, (n,), generator=g)
    forbidden = torch.randint(N_TOPICS, (n,), generator=g)
    conflict = torch.rand(n, generator=g) < conflict_rate
    other = (forbidden + 1 + torch.randint(N_TOPICS - 1, (n,), generator=g)) % N_TOPICS  # any topic but forbidden
    topic = torch.where(conflict, forbidden, other)
    emotion = torch.randint(N_EMOTIONS, (n,), generator=g)
    name = torch.randint(N_NAMES, (n,), generator=g)
    fill = FILL0 + torch.randint(N_FILLERS, (n, 4), generator=g)
    role = _shuffle_rows(torch.stack([NAME0 + name, STYLE0 + style, HATES0 + forbidden, fill[:, 0], fill[:, 1]], 1), g)
    user = _shuffle_rows(torch.stack([ASK0 + topic, FEELS0 + emotion, fill[:, 2], fill[:, 3]], 1), g)
    r1 = R1_0 + style
    r2 = torch.where(conflict, REFUSE0 + style, ANSWER0 + topic)
    r3 = R3_0 + emotion
    col = lambda v: torch.full((n, 1), v, dtype=torch.long)  # noqa: E731
    ids = torch.cat([col(ROLE_OPEN), role, col(ROLE_CLOSE), col(USER_OPEN), user, col(USER_CLOSE), col(RESP),
                     r1[:, None], r2[:, None], r3[:, None], col(EOS)], dim=1)  # (n, SEQ_LEN)
    labels = torch.full_like(ids, -100)
    labels[:, PROMPT_LEN:] = ids[:, PROMPT_LEN:]  # CLM on response tokens only
    return RolePlayData(ids, labels, style, forbidden, topic, emotion, conflict)


def span_mask(input_ids: torch.Tensor, open_id: int, close_id: int) -> torch.Tensor:
    """1 for tokens strictly between the first `open_id` and the next `close_id`, else 0.

    The marker tokens themselves get 0 (paper §3.2). A missing or empty span gives an all-zero
    row, which the mean pools below handle without dividing by zero.
    """
    if input_ids.dim() != 2:
        raise ValueError(f"input_ids must be (batch, time), got shape {tuple(input_ids.shape)}")
    is_open = (input_ids == open_id).long()
    is_close = (input_ids == close_id).long()
    opened = is_open.cumsum(1) > 0  # at or after the opening marker
    closed = is_close.cumsum(1) > 0  # at or after the closing marker
    inside = opened & ~closed & (is_open == 0)
    return inside.float()


def context_masks(input_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(role_mask, user_mask), each (batch, time) float, marker tokens excluded."""
    return span_mask(input_ids, ROLE_OPEN, ROLE_CLOSE), span_mask(input_ids, USER_OPEN, USER_CLOSE)


def extraction_masks(input_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The input-processing step of App. B.1 on this corpus: which span tokens are *extracted*
    into R_proc = [trait; knowledge; temporal] and U_proc = [intent; emotion; directive].

    The paper extracts these spans with spaCy / a BERT intent classifier (the release ships a
    keyword heuristic); here the extraction is exact: the persona's name, style and forbidden
    topic, and the user's request (intent) and emotion. The filler tokens `w*` carry no content
    and are not extracted. Returns (role_extract, user_extract), (batch, time) float, each a
    subset of the matching span mask.
    """
    role, user = context_masks(input_ids)
    content = ((input_ids < FILL0) | (input_ids >= FILL0 + N_FILLERS)).float()  # not a filler
    return role * content, user * content


def model_inputs(input_ids: torch.Tensor) -> dict[str, torch.Tensor]:
    """Everything a KSKT model needs besides the token ids: the span masks (for the stream biases)
    and the extraction masks (for R_proc, U_proc), as keyword arguments of `KSKTForCausalLM`."""
    role, user = context_masks(input_ids)
    role_x, user_x = extraction_masks(input_ids)
    return {"role_mask": role, "user_mask": user, "role_extract": role_x, "user_extract": user_x}


def decode(ids) -> list[str]:
    """Token ids -> token strings."""
    return [VOCAB[int(i)] for i in ids]
