"""Progress bars: `tqdm.auto` (a widget in notebooks), silent when `TQDM_DISABLE=1`."""

from __future__ import annotations

import os
from typing import Iterable, TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")


def progress_disabled() -> bool:
    """True when the environment asks for silence (`TQDM_DISABLE` set to a true value)."""
    return os.environ.get("TQDM_DISABLE", "").strip().lower() in {"1", "true", "yes", "on"}


def progress(iterable: Iterable[T] | None = None, **kwargs) -> "tqdm[T]":
    """A `tqdm.auto` bar that respects `TQDM_DISABLE`; keyword arguments go to tqdm.

    TQDM_DISABLE=1 silences every bar, whatever `disable` the caller passes (stored outputs hold
    no bar remnants).
    """
    if progress_disabled():
        kwargs["disable"] = True
    kwargs.setdefault("disable", False)
    kwargs.setdefault("leave", True)  # a finished bar stays visible in stored outputs
    return tqdm(iterable, **kwargs)
