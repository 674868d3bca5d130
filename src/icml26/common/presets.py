"""Scale presets: `smoke` (seconds, unit tests), `reduced` (the page's run, at most 120 s on 2 CPU
cores), `evidence` (the smallest scale that decides the claims under the ledger's rules, at most
15 minutes on 2 CPU cores; CLAIMS.md rule 9) and `full` (as close to the paper as one GPU allows).

Every package states how long each preset takes in one place, ``EXPECTED_TIME`` (preset -> words):
the chapter's Time section, its banner and the scoreboard read it."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Mapping, TypeVar

PRESET_NAMES = ("smoke", "reduced", "evidence", "full")

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


def check_expected_time(expected_time: Mapping[str, str], presets: Mapping[str, object]) -> dict[str, str]:
    """A package's ``EXPECTED_TIME``, checked: one non-empty line per preset, no other keys."""
    if not isinstance(expected_time, Mapping):
        raise TypeError(f"EXPECTED_TIME must map preset -> words, got {type(expected_time).__name__}")
    if set(expected_time) != set(presets):
        raise ValueError(f"EXPECTED_TIME covers {sorted(expected_time)}; the presets are {sorted(presets)}")
    for name, words in expected_time.items():
        if not isinstance(words, str) or not words.strip() or "\n" in words:
            raise ValueError(f"EXPECTED_TIME[{name!r}] must be one line of words, got {words!r}")
    return dict(expected_time)
