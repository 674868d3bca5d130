"""Perception stand-ins: a mini-CLIP for `ImageSearch` and attribute heads for `ViewPhotos`.

The paper's agent uses a multimodal embedding index for semantic retrieval and an MLLM that looks at the
photos for fine-grained confirmation. Here one small CNN image tower feeds (a) a projection trained with the
symmetric InfoNCE loss against a bag-of-words text tower on auto-generated captions (CLIP-style),
    L = 1/2 [CE(s/tau, diag) + CE(s^T/tau, diag)],   s_ij = <f(I_i), g(T_j)>  (unit vectors),
and (b) four classification heads (digit, colour, scene, marker) whose *predictions* are what ViewPhotos
reports. It is trained on a separate random photo set, never on the test albums.
"""

from __future__ import annotations

import re

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from icml26.common import progress

from .album import COLOURS, DIGITS, MARKERS, SCENES, marker_name, render_photos, subject_name

VOCAB = tuple(sorted(set(COLOURS) | set(DIGITS) | set(SCENES) | {w for m in MARKERS for w in m.split()}))
WORD_ID = {w: i for i, w in enumerate(VOCAB)}


def tokenize(texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """Bag-of-words over the caption vocabulary; unknown words are dropped.

    Returns (ids (T,), offsets (B,)) for `nn.EmbeddingBag`; a text with no known word gets a zero vector.
    """
    if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
        raise TypeError("tokenize expects a list of strings")
    ids, offsets = [], []
    for t in texts:
        offsets.append(len(ids))
        ids += [WORD_ID[w] for w in re.findall(r"[a-z0-9]+", t.lower()) if w in WORD_ID]
    return torch.tensor(ids, dtype=torch.long), torch.tensor(offsets, dtype=torch.long)


def caption(subject: int, scene: int, marker: int, rng: np.random.Generator) -> str:
    """Auto-generated training caption in random word order: the marker (if any) with probability 0.9, the
    subject always when there is no marker and with probability 0.6 otherwise, the scene with probability 1/2."""
    words = []
    if marker and rng.random() < 0.9:
        words.append(marker_name(marker))
    if not words or rng.random() < 0.6:
        words.append(subject_name(subject))
    if rng.random() < 0.5:
        words.append(SCENES[scene])
    order = rng.permutation(len(words))
    return " ".join(words[i] for i in order)


class MiniCLIP(nn.Module):
    """Image tower (a small CNN on the 2x-downsampled photo) + text tower (bag of words) into a shared unit sphere, plus attribute heads."""

    HEADS = {"digit": len(DIGITS), "colour": len(COLOURS), "scene": len(SCENES), "marker": len(MARKERS) + 1}

    def __init__(self, emb_dim: int = 32):
        super().__init__()
        self.cnn = nn.Sequential(
            nn.AvgPool2d(2),  # (B, 3, 16, 16): glyphs are drawn at 2x, so little is lost
            nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # (B, 16, 8, 8)
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # (B, 32, 4, 4)
            nn.Flatten(), nn.Linear(32 * 16, 128), nn.ReLU())  # (B, 512) -> (B, 128)
        self.img_proj = nn.Linear(128, emb_dim)
        self.heads = nn.ModuleDict({k: nn.Linear(128, n) for k, n in self.HEADS.items()})
        self.text = nn.EmbeddingBag(len(VOCAB), 64, mode="sum")
        self.text_proj = nn.Sequential(nn.ReLU(), nn.Linear(64, emb_dim))

    def features(self, images: torch.Tensor) -> torch.Tensor:
        if images.dim() != 4 or images.shape[1:] != (3, 32, 32):
            raise ValueError(f"images must be (B, 3, 32, 32), got {tuple(images.shape)}")
        return self.cnn(images)

    def encode_images(self, images: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.img_proj(self.features(images)), dim=-1)  # (B, D)

    def encode_texts(self, texts: list[str]) -> torch.Tensor:
        ids, offsets = tokenize(texts)
        dev = self.text.weight.device
        return F.normalize(self.text_proj(self.text(ids.to(dev), offsets.to(dev))), dim=-1)  # (B, D)

    @torch.no_grad()
    def embed_album(self, images: torch.Tensor, batch: int = 512) -> torch.Tensor:
        dev = self.text.weight.device
        return torch.cat([self.encode_images(images[i:i + batch].to(dev)) for i in range(0, len(images), batch)])

    @torch.no_grad()
    def predict_attributes(self, images: torch.Tensor) -> dict[str, torch.Tensor]:
        """Predicted (not true) digit, colour, scene and marker indices, each (B,)."""
        dev = self.text.weight.device
        h = self.features(images.to(dev))
        return {k: head(h).argmax(-1).cpu() for k, head in self.heads.items()}


def info_nce(img: torch.Tensor, txt: torch.Tensor, temperature: float,
             positives: torch.Tensor | None = None) -> torch.Tensor:
    """Symmetric InfoNCE over a batch of (image, caption) pairs; img, txt (B, D)
    unit vectors.

    With `positives` (B, B) bool (P_ij: caption j describes image i; the
    diagonal must be True) it is the multi-positive form
    -log sum_{j in P_i} softmax_j(s_ij / tau), so that two photos of the same
    red 7 are not pushed apart. positives=None is plain CLIP (P = identity).
    """
    if img.shape != txt.shape or img.dim() != 2:
        raise ValueError(f"image and text embeddings must be equal (B, D) shapes, got {tuple(img.shape)} vs {tuple(txt.shape)}")
    if positives is None:
        positives = torch.eye(len(img), dtype=torch.bool, device=img.device)
    if positives.shape != (len(img), len(img)) or not bool(positives.diagonal().all()):
        raise ValueError("positives must be (B, B) with a True diagonal")
    logits = img @ txt.T / temperature  # (B, B)
    neg_inf = torch.finfo(logits.dtype).min
    i2t = (torch.logsumexp(logits.masked_fill(~positives, neg_inf), 1)
           - torch.logsumexp(logits, 1))
    t2i = (torch.logsumexp(logits.T.masked_fill(~positives.T, neg_inf), 1)
           - torch.logsumexp(logits.T, 1))
    return -0.5 * (i2t.mean() + t2i.mean())


def attribute_words(subject: np.ndarray, scene: np.ndarray, marker: np.ndarray) -> torch.Tensor:
    """(N, V) binary bag of the words that truly describe each photo."""
    out = torch.zeros(len(subject), len(VOCAB))
    for i, (s, sc, m) in enumerate(zip(subject, scene, marker)):
        words = subject_name(s).split() + [SCENES[sc]] + (marker_name(m).split() if m else [])
        out[i, [WORD_ID[w] for w in words]] = 1.0
    return out


def train_perception(config, seed: int, device) -> tuple[MiniCLIP, list[float]]:
    """Train mini-CLIP + heads on `train_photos` random photos (seed-specific, disjoint from the albums)."""
    rng = np.random.default_rng(10_000 + seed)
    n = config.train_photos
    subject, scene = rng.integers(0, 40, n), rng.integers(0, len(SCENES), n)
    marker = np.where(rng.random(n) < 0.5, rng.integers(1, len(MARKERS) + 1, n), 0)
    images = render_photos(subject, scene, marker, rng).to(device)
    targets = {"digit": subject // 4, "colour": subject % 4, "scene": scene, "marker": marker}
    targets = {k: torch.as_tensor(v, device=device) for k, v in targets.items()}
    words = attribute_words(subject, scene, marker).to(device)  # (n, V)
    torch.manual_seed(seed)
    model = MiniCLIP(config.emb_dim).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    losses = []
    for _ in progress(range(config.train_steps), desc=f"perception (seed {seed})"):
        idx = rng.choice(n, min(config.batch, n), replace=False)
        caps = [caption(subject[i], scene[i], marker[i], rng) for i in idx]
        idx_t = torch.as_tensor(idx, device=device)
        cap_bow = torch.zeros(len(idx), len(VOCAB), device=device)
        ids, offsets = tokenize(caps)
        rows = torch.repeat_interleave(torch.arange(len(idx)), torch.diff(offsets, append=torch.tensor([len(ids)])))
        cap_bow[rows.to(device), ids.to(device)] = 1.0
        positives = (cap_bow @ (1 - words[idx_t]).T).T == 0  # (B, B): all words of caption j describe image i
        h = model.features(images[idx_t])
        img = F.normalize(model.img_proj(h), dim=-1)
        loss = info_nce(img, model.encode_texts(caps), config.temperature, positives)
        loss = loss + sum(F.cross_entropy(head(h), targets[k][idx_t]) for k, head in model.heads.items())
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return model.eval(), losses
