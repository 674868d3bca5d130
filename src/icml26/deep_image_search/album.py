"""MiniAlbum: a synthetic visual history with the structure of DISBench (Sec. 3 of the paper; our analogue).

Each user owns a corpus C = {I_1..I_N} with metadata m_i = (timestamp_i, GPS_i) and a hidden partition
into events. A photo (3, 32, 32) shows a place's scene (background colour + texture), a subject (a
scikit-learn `load_digits` glyph upscaled x2 and tinted: 10 digits x 4 colours = 40 identities) and, in
rare photos of one event, a 6x6 marker (4 shapes x 3 colours) in the top-right corner. GPS is a 2-D
position in km. Queries are templated:
  intra-event: "photos of the red 7 from the trip where I saw the yellow triangle"
  inter-event: "photos of the red 7 taken where I saw the yellow triangle, but on other visits"
The event ids are kept for building queries and scoring only; no tool ever sees them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import torch

DIGITS = tuple(str(d) for d in range(10))
COLOURS = ("red", "green", "blue", "purple")
COLOUR_RGB = np.array([[0.95, 0.1, 0.1], [0.1, 0.8, 0.15], [0.15, 0.25, 0.95], [0.6, 0.1, 0.75]])
SCENES = ("beach", "forest", "city", "snow", "lake", "desert")
SCENE_RGB = np.array([[0.93, 0.85, 0.6], [0.2, 0.45, 0.2], [0.5, 0.5, 0.55], [0.9, 0.92, 0.97],
                      [0.45, 0.7, 0.85], [0.8, 0.6, 0.35]])
SHAPES = ("triangle", "square", "disc", "cross")
MARKER_COLOURS = ("yellow", "white", "cyan")
MARKER_RGB = np.array([[1.0, 0.9, 0.0], [1.0, 1.0, 1.0], [0.0, 0.95, 0.95]])
MARKERS = tuple(f"{c} {s}" for c in MARKER_COLOURS for s in SHAPES)  # 12 kinds; index 0 in heads = none
INTRA, INTER = "intra", "inter"


@lru_cache(maxsize=1)
def digit_glyphs() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's 8x8 digits (bundled with the package, nothing downloaded): images in [0,1], labels."""
    from sklearn.datasets import load_digits

    d = load_digits()
    return (d.images / 16.0).astype(np.float32), d.target.astype(np.int64)


def _marker_mask(shape: int) -> np.ndarray:
    yy, xx = np.mgrid[0:6, 0:6]
    masks = [yy >= np.abs(xx - 2.5) * 2 - 0.5,  # triangle
             np.ones((6, 6), bool),  # square
             (yy - 2.5) ** 2 + (xx - 2.5) ** 2 <= 7.0,  # disc
             (np.abs(yy - 2.5) < 1.1) | (np.abs(xx - 2.5) < 1.1)]  # cross
    return masks[shape]


@lru_cache(maxsize=1)
def _textures() -> np.ndarray:
    """One (32, 32) texture per scene, as an (S, 8, 8, 32, 32) bank of shifted copies (random phase)."""
    yy, xx = np.mgrid[0:40, 0:40].astype(np.float32)
    noise = np.random.default_rng(12345).standard_normal((40, 40)).astype(np.float32)
    base = [np.sin(yy / 2.0), np.sin(xx / 2.0), np.sin((xx + yy) / 3.0),
            np.sign(np.sin(xx / 3.0) * np.sin(yy / 3.0)), noise, np.sin(np.hypot(xx - 20, yy - 20) / 2.0)]
    return np.stack([np.stack([np.stack([b[dy:dy + 32, dx:dx + 32] for dx in range(8)]) for dy in range(8)])
                     for b in base])


def render_photos(subject: np.ndarray, scene: np.ndarray, marker: np.ndarray, rng: np.random.Generator) -> torch.Tensor:
    """Render photos from attributes: subject in [0,40) (digit*4+colour), scene in [0,6), marker in [0,12] (0 = none).

    Returns a float tensor (n, 3, 32, 32) in [0, 1]; glyph samples, positions, texture phase and noise are random.
    """
    subject, scene, marker = (np.asarray(a, dtype=np.int64) for a in (subject, scene, marker))
    if not (subject.shape == scene.shape == marker.shape) or subject.ndim != 1:
        raise ValueError("subject, scene and marker must be 1-D arrays of equal length")
    if subject.size and (subject.min() < 0 or subject.max() >= 40 or scene.min() < 0 or scene.max() >= len(SCENES)
                         or marker.min() < 0 or marker.max() > len(MARKERS)):
        raise ValueError("attribute out of range: subject in [0,40), scene in [0,6), marker in [0,12]")
    n = subject.size
    glyphs, labels = digit_glyphs()
    img = np.empty((n, 32, 32, 3), dtype=np.float32)
    textures = _textures()
    for i in range(n):
        s = scene[i]
        phase = rng.uniform(0, 2 * np.pi)
        img[i] = SCENE_RGB[s] + 0.08 * textures[s][(rng.integers(0, 8), rng.integers(0, 8))][..., None]
        digit, colour = divmod(int(subject[i]), 4)
        pool = np.flatnonzero(labels == digit)
        glyph = np.kron(glyphs[rng.choice(pool)], np.ones((2, 2), np.float32))  # (16, 16) upscaled x2
        y0, x0 = 12, int(rng.integers(7, 10))  # glyph in the lower middle, slight jitter
        patch = img[i, y0:y0 + 16, x0:x0 + 16]
        img[i, y0:y0 + 16, x0:x0 + 16] = (1 - glyph[..., None]) * patch + glyph[..., None] * COLOUR_RGB[colour]
        if marker[i]:
            c, shape = divmod(int(marker[i]) - 1, 4)
            m = _marker_mask(shape)
            corner = img[i, 1:7, 25:31]
            corner[m] = MARKER_RGB[c]
    img += 0.04 * rng.standard_normal(img.shape).astype(np.float32)
    return torch.from_numpy(np.clip(img, 0, 1)).permute(0, 3, 1, 2).contiguous()  # (n, 32, 32, 3) -> (n, 3, 32, 32)


def subject_name(subject: int) -> str:
    digit, colour = divmod(int(subject), 4)
    return f"{COLOURS[colour]} {DIGITS[digit]}"


def marker_name(marker: int) -> str:
    return MARKERS[int(marker) - 1] if marker else "none"


@dataclass
class Album:
    """One user's visual history. `event` is hidden ground truth (queries and scoring only)."""

    user: int
    images: torch.Tensor  # (N, 3, 32, 32)
    time: np.ndarray  # (N,) days since the album's start
    gps: np.ndarray  # (N, 2) km
    subject: np.ndarray  # (N,) ground-truth subject id
    scene: np.ndarray  # (N,)
    marker: np.ndarray  # (N,) 0 = none
    event: np.ndarray  # (N,) hidden event id
    event_place: np.ndarray  # (E,)
    places: np.ndarray  # (P, 2) km

    def __len__(self) -> int:
        return len(self.time)


@dataclass(frozen=True)
class Query:
    """A templated query with its ground-truth set G (photo ids of one user's album)."""

    user: int
    kind: str  # "intra" | "inter"
    text: str
    subject: int
    marker: int
    targets: frozenset = field(default_factory=frozenset)


def make_album(config, user: int, rng: np.random.Generator) -> Album:
    """Events in 10-day slots (so any two events are >= 4 days apart), 1-3 days long, at one place each."""
    n_ev, n_pl = config.n_events, config.n_places
    angle = rng.uniform(0, 2 * np.pi) + np.arange(n_pl) * 2 * np.pi / n_pl
    places = np.stack([np.cos(angle), np.sin(angle)], 1) * rng.uniform(30, 60, (n_pl, 1))  # >= 30 km apart
    scene_of_place = rng.permutation(len(SCENES))[:n_pl]
    slots = np.sort(rng.choice(int(config.years * 365) // 10, n_ev, replace=False))
    start = slots * 10 + rng.uniform(0, 3, n_ev)
    duration = rng.integers(1, 4, n_ev)
    event_place = rng.integers(0, n_pl, n_ev)
    cast = rng.choice(40, config.cast, replace=False)
    marker_of_event = np.zeros(n_ev, np.int64)
    marker_of_event[rng.choice(n_ev, config.marker_events, replace=False)] = rng.permutation(len(MARKERS))[
        : config.marker_events] + 1
    subj, ev, t, mk = [], [], [], []
    for e in range(n_ev):
        n = int(rng.integers(config.photos_min, config.photos_max + 1))
        who = rng.choice(cast, config.subjects_per_event, replace=False)
        subj.append(rng.choice(who, n))
        ev.append(np.full(n, e))
        t.append(np.sort(start[e] + rng.uniform(0, duration[e], n)))
        m = np.zeros(n, np.int64)
        if marker_of_event[e]:
            m[rng.choice(n, int(rng.integers(1, 3)), replace=False)] = marker_of_event[e]
        mk.append(m)
    subject, event, time, marker = (np.concatenate(a) for a in (subj, ev, t, mk))
    place = event_place[event]
    gps = places[place] + rng.normal(0, 0.3, (len(time), 2))
    scene = scene_of_place[place]
    images = render_photos(subject, scene, marker, rng)
    return Album(user, images, time, gps, subject, scene, marker, event, event_place, places)


def intra_text(subject: int, marker: int) -> str:
    return f"photos of the {subject_name(subject)} from the trip where I saw the {marker_name(marker)}"


def inter_text(subject: int, marker: int) -> str:
    return f"photos of the {subject_name(subject)} taken where I saw the {marker_name(marker)}, but on other visits"


def make_queries(album: Album, max_size: int = 6) -> list[Query]:
    """All valid queries of one album (constraints: 2 <= |G| <= 6, the subject also appears in
    >= 2 other events (distractors), the marker belongs to one event)."""
    out = []
    for e in np.unique(album.event[album.marker > 0]):
        in_e = album.event == e
        m = int(album.marker[in_e & (album.marker > 0)][0])
        same_place = album.event_place[album.event] == album.event_place[e]
        for s in np.unique(album.subject[in_e]):
            has_s = album.subject == s
            if len(np.unique(album.event[has_s & ~in_e])) < 2:
                continue
            intra = np.flatnonzero(has_s & in_e)
            if 2 <= intra.size <= max_size:
                out.append(Query(album.user, INTRA, intra_text(s, m), int(s), m, frozenset(intra.tolist())))
            inter = np.flatnonzero(has_s & same_place & ~in_e)
            if 2 <= inter.size <= max_size and (has_s & ~same_place).any():
                out.append(Query(album.user, INTER, inter_text(s, m), int(s), m, frozenset(inter.tolist())))
    return out


def make_benchmark(config, seed: int) -> tuple[list[Album], list[Query]]:
    """Albums for `n_users` users and up to `queries_per_seed` queries, balanced intra/inter."""
    rng = np.random.default_rng(seed)
    albums = [make_album(config, u, rng) for u in range(config.n_users)]
    pool = [q for a in albums for q in make_queries(a)]
    half = config.queries_per_seed // 2
    chosen = []
    for kind in (INTRA, INTER):
        qs = [q for q in pool if q.kind == kind]
        idx = rng.permutation(len(qs))[:half]
        chosen += [qs[i] for i in sorted(idx)]
    return albums, chosen
