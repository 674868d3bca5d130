"""Synthetic videos and queries for the two task types of the reduced reproduction.

Task "counting" (spatial): 1-5 tiny 2x2 "birds" of random brightness sit still inside one
8x8-pixel patch of the frame; at 16x16 each bird is a distinct pixel, at 8x8 they fall into
at most 4 cells and only their (brightness-ambiguous) total remains.
Task "temporal": a 12x12 bright block flashes for `flash_len` consecutive frames; the answer
is the quarter of the video (0-3) holding the middle flash frame. Sparse frame sampling misses it.
"""

from __future__ import annotations

import random

import torch

from .config import TASKS, TAMConfig

TEMPLATES = {
    "counting": [
        "how many birds are in the clip",
        "count the birds in this video",
        "what is the number of small birds",
        "tell me how many tiny birds appear",
        "count how many birds you see",  # held out
        "the number of birds is what",  # held out
    ],
    "temporal": [
        "when does the flash happen",
        "in which quarter does the block flash",
        "at what time is the bright flash",
        "which part of the video shows the flash",
        "when is the bright block shown",  # held out
        "tell me at which quarter the flash appears",  # held out
    ],
}
N_TRAIN_TEMPLATES = 4  # the first 4 per task train the Inductor; the last 2 are held out
FILLER = ["please", "now", "quickly", "hey", "so", "video", "okay", "kindly", "clip", "look"]
SPECIAL = ["[PAD]", "[UNK]", "[CLS]"]


def build_vocab() -> dict[str, int]:
    """Word-level vocabulary over all *training* templates and fillers (held-out words -> [UNK])."""
    words = sorted({w for t in TASKS for s in TEMPLATES[t][:N_TRAIN_TEMPLATES] for w in s.split()} | set(FILLER))
    return {w: i for i, w in enumerate(SPECIAL + words)}


def sample_queries(tasks: list[int], split: str, rng: random.Random) -> list[str]:
    """One paraphrased query per task id, with 0-2 random filler words inserted."""
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    out = []
    for k in tasks:
        pool = TEMPLATES[TASKS[k]]
        pool = pool[:N_TRAIN_TEMPLATES] if split == "train" else pool[N_TRAIN_TEMPLATES:]
        words = rng.choice(pool).split()
        for _ in range(rng.randint(0, 2)):
            words.insert(rng.randint(0, len(words)), rng.choice(FILLER))
        out.append(" ".join(words))
    return out


def tokenize(queries: list[str], vocab: dict[str, int], max_len: int = 12,
             device: torch.device | str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """Word-level tokens `[CLS] w1 .. wn [PAD]...` -> (ids, lengths), ids of shape (B, max_len)."""
    if not queries:
        raise ValueError("tokenize needs at least one query")
    ids = torch.zeros(len(queries), max_len, dtype=torch.long)
    lens = torch.zeros(len(queries), dtype=torch.long)
    for i, q in enumerate(queries):
        toks = [vocab["[CLS]"]] + [vocab.get(w, vocab["[UNK]"]) for w in q.lower().split()]
        toks = toks[:max_len]
        ids[i, : len(toks)] = torch.tensor(toks)
        lens[i] = len(toks)
    return ids.to(device), lens.to(device)


def make_videos(tasks: torch.Tensor, config: TAMConfig, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Batched synthetic videos for task ids `tasks` (B,) -> (videos (B, T, S, S), answers (B,)).

    Generated on `tasks.device` without any loop over samples.
    """
    if tasks.dim() != 1:
        raise ValueError(f"tasks must be a 1-D tensor of task ids, got shape {tuple(tasks.shape)}")
    if tasks.numel() and (tasks.min() < 0 or tasks.max() >= len(TASKS)):
        raise ValueError(f"task ids must lie in [0, {len(TASKS)}), got {tasks.tolist()}")
    dev, c = tasks.device, config
    B, T, S = tasks.numel(), c.n_frames, c.size
    g = generator

    def rand(*shape):
        return torch.rand(*shape, generator=g, device=g.device).to(dev)

    # counting: choose n in 1..5 of the 16 even-pixel slots of a 8x8 patch (4x4 slots of 2x2 birds)
    n_birds = (rand(B) * 5).long() + 1  # (B,)
    order = rand(B, 16).argsort(1)  # random slot permutation
    on = torch.zeros(B, 16, device=dev)
    on.scatter_(1, order, (torch.arange(16, device=dev)[None] < n_birds[:, None]).float())
    bright = 0.25 + 0.75 * rand(B, 16)
    slots = (on * bright).view(B, 4, 4)  # (B, 4, 4)
    patch = slots.repeat_interleave(2, 1).repeat_interleave(2, 2)  # (B, 8, 8)
    oy = (rand(B) * (S // 8)).long() * 8  # patch origin, aligned to 8 (so 8x8 tiers merge birds)
    ox = (rand(B) * (S // 8)).long() * 8
    ys = torch.arange(S, device=dev)
    ry = (ys[None, :] - oy[:, None]).clamp(0, 7)  # (B, S)
    rx = (ys[None, :] - ox[:, None]).clamp(0, 7)
    iny = (ys[None, :] >= oy[:, None]) & (ys[None, :] < oy[:, None] + 8)
    inx = (ys[None, :] >= ox[:, None]) & (ys[None, :] < ox[:, None] + 8)
    img = patch[torch.arange(B, device=dev)[:, None, None], ry[:, :, None], rx[:, None, :]]  # (B, S, S)
    img = img * (iny[:, :, None] & inx[:, None, :]).float()
    count_vid = img[:, None].expand(B, T, S, S)

    # temporal: a flash_side block lit for flash_len frames starting at t0
    t0 = (rand(B) * (T - c.flash_len + 1)).long()  # (B,)
    quarter = ((t0 + c.flash_len // 2) * 4 // T).clamp(max=3)
    tt = torch.arange(T, device=dev)
    lit = ((tt[None] >= t0[:, None]) & (tt[None] < t0[:, None] + c.flash_len)).float()  # (B, T)
    by = (rand(B) * (S - c.flash_side + 1)).long()
    bx = (rand(B) * (S - c.flash_side + 1)).long()
    blk = (((ys[None] >= by[:, None]) & (ys[None] < by[:, None] + c.flash_side))[:, :, None]
           & ((ys[None] >= bx[:, None]) & (ys[None] < bx[:, None] + c.flash_side))[:, None, :]).float()
    temp_vid = lit[:, :, None, None] * blk[:, None]  # (B, T, S, S)

    video = torch.where((tasks == 0)[:, None, None, None], count_vid, temp_vid)  # (B, T, S, S)
    video = video.add_(torch.randn(B, T, S, S, generator=g, device=g.device).to(dev), alpha=c.noise)
    answers = torch.where(tasks == 0, n_birds - 1, quarter)
    return video, answers
