"""Checkpoints for long `full` runs: atomic writes, safe loading, resume."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import torch


def save_checkpoint(path: str | Path, state: dict) -> Path:
    """Write `state` atomically: a crash mid-write never leaves a truncated file behind.

    `.safetensors` paths take a flat dict of tensors; any other path a `torch.save` dict
    of tensors, numbers, strings, lists and dicts (what `weights_only` loading accepts).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(handle)
    try:
        if path.suffix == ".safetensors":
            from safetensors.torch import save_file

            bad = [k for k, v in state.items() if not isinstance(v, torch.Tensor)]
            if bad:
                raise TypeError(f"safetensors holds tensors only; not tensors: {bad}")
            save_file({k: v.detach().cpu().contiguous() for k, v in state.items()}, temp_name)
        else:
            torch.save(state, temp_name)
        with open(temp_name, "rb") as written:
            os.fsync(written.fileno())
        os.replace(temp_name, path)
    finally:
        if os.path.exists(temp_name):
            os.remove(temp_name)
    return path


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu") -> dict:
    """Load a checkpoint without executing pickled code (`weights_only=True` or safetensors)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    if path.suffix == ".safetensors":
        from safetensors.torch import load_file

        return load_file(str(path), device=str(map_location))
    return torch.load(path, map_location=map_location, weights_only=True)


class Checkpointer:
    """Numbered checkpoints in one folder, keeping the newest `keep`; `latest()` resumes."""

    _NAME = re.compile(r"^step-(\d+)\.pt$")

    def __init__(self, folder: str | Path, keep: int = 2):
        if keep < 1:
            raise ValueError(f"keep must be at least 1, got {keep}")
        self.folder = Path(folder)
        self.keep = keep

    def _steps(self) -> list[int]:
        if not self.folder.is_dir():
            return []
        return sorted(int(m.group(1)) for p in self.folder.iterdir() if (m := self._NAME.match(p.name)))

    def save(self, step: int, state: dict) -> Path:
        path = save_checkpoint(self.folder / f"step-{step:08d}.pt", {"step": step, "state": state})
        for old in self._steps()[: -self.keep]:
            (self.folder / f"step-{old:08d}.pt").unlink(missing_ok=True)
        return path

    def latest(self, map_location: str | torch.device = "cpu") -> tuple[int, dict] | None:
        """The newest (step, state), or None when there is nothing to resume from."""
        steps = self._steps()
        if not steps:
            return None
        record = load_checkpoint(self.folder / f"step-{steps[-1]:08d}.pt", map_location)
        return record["step"], record["state"]
