"""Scale presets: `smoke` (seconds, unit tests), `reduced` (default, ~90 s on 2 CPU cores)
and `full` (as close to the paper as one GPU allows)."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Mapping, TypeVar

PRESET_NAMES = ("smoke", "reduced", "full")

T = TypeVar("T")


def select_preset(presets: Mapping[str, T], name: str, **overrides) -> T:
    """Return the config registered under `name`, optionally with some fields replaced.

    An unknown preset name or an unknown override field raises `ValueError` listing
    what is allowed.
    """
    if name not in presets:
        raise ValueError(f"unknown preset {name!r}; valid presets: {', '.join(presets)}")
    config = presets[name]
    if overrides:
        allowed = {f.name for f in fields(config)}
        unknown = sorted(set(overrides) - allowed)
        if unknown:
            raise ValueError(
                f"unknown config field(s) {unknown} for preset {name!r}; "
                f"valid fields: {', '.join(sorted(allowed))}"
            )
        config = replace(config, **overrides)
    return config
