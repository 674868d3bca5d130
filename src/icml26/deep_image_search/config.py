"""Presets for the DeepImageSearch chapter: `smoke` (seconds, unit tests), `reduced` (the page's run,
about 2 minutes on 2 CPU cores), `evidence` (the stored record: five seeds, a longer-trained policy)
and `full` (a GPU and, optionally, a real LLM policy).

The claims' thresholds are named constants in `claims.py`, fixed before the run.
"""

from __future__ import annotations

from dataclasses import dataclass

from icml26.common import select_preset

POLICIES = ("learned", "scripted", "openai")


@dataclass(frozen=True)
class DISConfig:
    """All knobs of the chapter's experiment."""

    # MiniAlbum (synthetic visual histories; Sec. "DISBench construction", our analogue)
    n_users: int = 4
    n_events: int = 24  # events (photosets) per user over `years`
    years: float = 3.0
    photos_min: int = 12
    photos_max: int = 25
    n_places: int = 5
    cast: int = 10  # recurring subjects per user (of 40 = 10 digits x 4 colours)
    subjects_per_event: int = 4
    marker_events: int = 12  # events that hold one unique marker (12 marker kinds)
    queries_per_seed: int = 150  # half intra-event, half inter-event
    # perception stand-ins: mini-CLIP + attribute heads, trained on a separate random photo set
    train_photos: int = 3000
    train_steps: int = 600
    batch: int = 128
    emb_dim: int = 32
    lr: float = 3e-3
    temperature: float = 0.1
    # agent (ImageSeeker-style loop; max_steps and memory window are reconstructions)
    # "learned": a small network trained on the scripted planner's traces (offline, `learned.py`);
    # "scripted": the hand-written planner itself (a stand-in); "openai[:model]": an LLM endpoint
    policy: str = "learned"
    policy_steps: int = 400  # imitation steps of the learned policy (batches of 64 calls)
    policy_hidden: int = 32
    policy_lr: float = 3e-3
    max_steps: int = 30
    memory_window: int = 2  # working memory: observations kept verbatim in the context
    view_limit: int = 16  # ViewPhotos shows at most this many photos per call
    radius_km: float = 3.0  # planner's spatial radius for "the same place"
    window_days: float = 3.0  # planner's temporal window for "the same trip"
    seeds: tuple[int, ...] = (0, 1, 2)  # each seed trains its perception stand-ins afresh and draws its albums

    def __post_init__(self) -> None:
        for name in ("n_users", "n_events", "photos_min", "n_places", "cast", "subjects_per_event",
                     "queries_per_seed", "train_photos", "train_steps", "batch", "emb_dim", "max_steps",
                     "view_limit", "policy_steps", "policy_hidden"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if self.photos_max < self.photos_min:
            raise ValueError(f"photos_max ({self.photos_max}) must be >= photos_min ({self.photos_min})")
        if not 2 <= self.n_places <= 6:
            raise ValueError(f"n_places must lie in [2, 6] (one scene per place), got {self.n_places}")
        if self.cast > 40 or self.subjects_per_event > self.cast:
            raise ValueError("need subjects_per_event <= cast <= 40 subjects")
        if not 1 <= self.marker_events <= min(12, self.n_events):
            raise ValueError(f"marker_events must lie in [1, min(12, n_events)], got {self.marker_events}")
        if self.n_events * 10 > self.years * 365:
            raise ValueError("events need 10-day slots: n_events * 10 must be <= years * 365")
        if self.policy.split(":")[0] not in POLICIES:
            raise ValueError(f"policy must be 'learned', 'scripted' or 'openai[:model]', got {self.policy!r}")
        if self.memory_window < 0:
            raise ValueError(f"memory_window must be >= 0, got {self.memory_window}")
        if len(self.seeds) < 3 or len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"seeds must be at least 3 distinct seeds (rule 1), got {self.seeds!r}")
        if self.radius_km <= 0 or self.window_days <= 0 or self.temperature <= 0 or self.policy_lr <= 0:
            raise ValueError("radius_km, window_days, temperature and policy_lr must be positive")


PRESETS: dict[str, DISConfig] = {
    "smoke": DISConfig(n_users=2, n_events=16, queries_per_seed=30, train_photos=600, train_steps=40,
                       policy_steps=40, seeds=(0, 1, 2)),
    "reduced": DISConfig(),
    "evidence": DISConfig(seeds=(0, 1, 2, 3, 4), policy_steps=800),
    "full": DISConfig(n_users=16, n_events=60, years=5.0, queries_per_seed=600, train_photos=20000,
                      train_steps=3000, emb_dim=64, seeds=(0, 1, 2, 3, 4), policy="openai"),
}

EXPECTED_TIME = {"smoke": "a few seconds", "reduced": "about 2 minutes on 2 CPU cores",
                 "evidence": "about 5 minutes on 2 CPU cores",
                 "full": "10-20 minutes on one GPU, plus about 40 000 sequential LLM calls "
                         "(hours at 1-2 s each; policy='scripted' skips them)"}


def get_config(name: str = "reduced", **overrides) -> DISConfig:
    """The preset `name` ('smoke', 'reduced', 'evidence', 'full') with optional field overrides."""
    return select_preset(PRESETS, name, **overrides)
