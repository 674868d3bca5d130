"""Presets (CONTRIBUTING.md, section 1): `smoke` (seconds, unit tests), `reduced` (the page's
run), `evidence` (the stored evidence record: C3's base sweep on all 17 wallpaper groups, C4's
design over 3 seeds) and `full` (one GPU). The claims' thresholds are named constants in
`claims.py`."""

from __future__ import annotations

from dataclasses import dataclass

from icml26.common import select_preset

from .groups import WALLPAPER_GROUPS

FIT_RESOLUTIONS = ("params", "lattice", "box")
ROSETTES = ("C2", "C3", "C4", "C5", "C6", "D2", "D3", "D4", "D5", "D6")


@dataclass(frozen=True)
class PlanarSymmetryConfig:
    """All knobs of the chapter's experiments."""

    # invariance and continuity (random-init bases, every group)
    groups: tuple[str, ...] = WALLPAPER_GROUPS + ROSETTES
    invariance_points: int = 2048
    continuity_pairs: int = 20000
    continuity_step: float = 5e-3  # h; the fine step is h / continuity_factor
    continuity_factor: float = 10.0
    # fitting symmetric targets (pattern design)
    fit_groups: tuple[str, ...] = ("pg", "p2mm", "p4", "p3", "p6")
    image: str = "camera"  # skimage.data image (bundled in the wheel)
    fit_res: int = 48  # training pixels per cell side
    eval_res: int = 61  # held-out evaluation grid per cell side
    fit_steps: int = 1000
    fit_lr: float = 0.3  # Adam, cosine decay to 0 over fit_steps: every construction converges (see `fit`)
    lr: float = 1e-2  # paper cutting (times 5)
    grid_levels: int = 4
    grid_base_res: int = 4
    grid_max_res: int = 32
    # how Eq. 3's base reads grid_base_res / grid_max_res: "params" = the lattice reading refined
    # until Eq. 3's grid has the baselines' parameter count (the same network size); "lattice" = the
    # same feature spacing in lattice units as the baselines' base on the unit cell (an earlier
    # setting); "box" = the full resolution over the alcove's bounding box (the first setting)
    grid_resolution: str = "params"
    # paper cutting with VTM, binarised by a Heaviside projection with continuation (C4)
    topo_group: str = "p4mm"
    topo_n: int = 32
    topo_steps: int = 200
    topo_weight: float = 0.05
    topo_seeds: int = 3  # independently initialised designs
    topo_beta_max: float = 32.0  # projection sharpness: beta doubles from 1 up to this over the run
    # C3: Eq. 3 fitted with growing bases (levels, finest resolution), smallest to largest; the
    # largest is the comparison's grid read in lattice units (the equal-spacing ablation)
    base_sizes: tuple[tuple[int, int], ...] = ((1, 4), (2, 8), (3, 16), (4, 32))
    sweep_groups: tuple[str, ...] = ("pg", "p2mm", "p4", "p3", "p6")  # groups of C3's base sweep
    device: str = "auto"

    def __post_init__(self) -> None:
        if not self.groups or not self.fit_groups:
            raise ValueError("groups and fit_groups must be non-empty")
        if self.fit_res < 8 or self.eval_res < 8:
            raise ValueError(f"fit_res and eval_res must be >= 8, got {self.fit_res}, {self.eval_res}")
        if self.fit_steps < 1 or self.topo_steps < 0 or self.lr <= 0 or self.fit_lr <= 0:
            raise ValueError("fit_steps must be >= 1, topo_steps >= 0, and lr, fit_lr > 0")
        if not 0 < self.continuity_step < 0.1 or self.continuity_factor <= 1:
            raise ValueError("continuity_step must lie in (0, 0.1) and continuity_factor > 1")
        if self.grid_resolution not in FIT_RESOLUTIONS:
            raise ValueError(f"grid_resolution must be one of {', '.join(FIT_RESOLUTIONS)}, got {self.grid_resolution!r}")
        if len(self.base_sizes) < 2 or any(l < 1 or m < self.grid_base_res for l, m in self.base_sizes):
            raise ValueError(f"base_sizes needs >= 2 (levels >= 1, max_res >= grid_base_res) sizes, got {self.base_sizes}")
        if self.topo_n < 8:
            raise ValueError(f"topo_n must be >= 8, got {self.topo_n}")
        if self.topo_seeds < 1 or self.topo_beta_max < 1:
            raise ValueError(f"topo_seeds must be >= 1 and topo_beta_max >= 1, got {self.topo_seeds}, {self.topo_beta_max}")
        if not self.sweep_groups or any(g not in WALLPAPER_GROUPS for g in self.sweep_groups):
            raise ValueError(f"sweep_groups must be wallpaper groups ({', '.join(WALLPAPER_GROUPS)}), got {self.sweep_groups}")
        if self.invariance_points < 1 or self.continuity_pairs < 1:
            raise ValueError("invariance_points and continuity_pairs must be >= 1")


PRESETS: dict[str, PlanarSymmetryConfig] = {
    "smoke": PlanarSymmetryConfig(groups=WALLPAPER_GROUPS + ("C5", "D3"), invariance_points=256,
                                  continuity_pairs=2000, fit_groups=("p4", "pg"), fit_res=16, eval_res=17,
                                  fit_steps=30, topo_n=16, topo_steps=20, base_sizes=((1, 4), (2, 8)),
                                  sweep_groups=("p4", "pg")),
    "reduced": PlanarSymmetryConfig(fit_steps=500),
    # C3 on every wallpaper group, C4 over 3 seeds (the default sizes otherwise, 1,000 fitting steps)
    "evidence": PlanarSymmetryConfig(sweep_groups=WALLPAPER_GROUPS),
    "full": PlanarSymmetryConfig(invariance_points=65536, continuity_pairs=200000, fit_groups=WALLPAPER_GROUPS,
                                 fit_res=256, eval_res=301, fit_steps=3000, grid_levels=16, grid_base_res=16,
                                 grid_max_res=256, topo_n=128, topo_steps=800, topo_seeds=5,
                                 base_sizes=((4, 32), (8, 64), (12, 128), (16, 256)), sweep_groups=WALLPAPER_GROUPS),
}

EXPECTED_TIME = {"smoke": "about 10 s on 2 CPU cores", "reduced": "about 100 s on 2 CPU cores (500 fitting steps)",
                 "evidence": "about 3 minutes on 2 CPU cores", "full": "tens of minutes on one GPU"}


def get_config(name: str = "reduced", **overrides) -> PlanarSymmetryConfig:
    """The preset `name` ('smoke', 'reduced', 'evidence', 'full') with optional field overrides."""
    return select_preset(PRESETS, name, **overrides)
