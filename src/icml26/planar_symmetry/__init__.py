"""Planar Symmetric Pattern Generation (ICML 2026): exact, continuous symmetrization of 2D
continuous representations for the 17 wallpaper groups and the rosette groups (Eq. 3)."""

from .config import EXPECTED_TIME, PRESETS, PlanarSymmetryConfig, get_config
from .fields import (GroupAveragedField, FourierMLP, MultiResGrid, NaiveWrapField, PixelBase, SymmetrizedField,
                     make_base, make_field)
from .experiment import run_experiment
from .groups import WALLPAPER_GROUPS, Lattice, PlanarGroup, get_group, rosette_group, wallpaper_group

__all__ = ["EXPECTED_TIME", "PRESETS", "PlanarSymmetryConfig", "get_config", "GroupAveragedField", "FourierMLP",
           "MultiResGrid", "NaiveWrapField", "PixelBase", "SymmetrizedField", "make_base", "make_field",
           "run_experiment", "WALLPAPER_GROUPS", "Lattice", "PlanarGroup", "get_group", "rosette_group", "wallpaper_group"]
