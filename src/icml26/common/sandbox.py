"""Run model-generated code safely: never `exec` it in the notebook's own process.

`run_sandboxed` starts a fresh interpreter (`python -I`) in its own session and temporary
folder, with limits on CPU time, address space and wall-clock time. Inside, an audit hook
refuses process creation, networking, native-code loading, file writes outside the
folder and reads outside it and the Python installation; imports are checked against an
allow-list. Every outcome, success or failure, comes back as a `SandboxResult`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ._sandbox_child import MARKER

DEFAULT_ALLOWED_IMPORTS = (
    "math", "cmath", "random", "statistics", "itertools", "functools", "operator",
    "collections", "heapq", "bisect", "fractions", "decimal", "re", "string", "typing",
    "dataclasses", "json", "copy", "numpy",
)
_CHILD = Path(__file__).with_name("_sandbox_child.py")


class SandboxError(RuntimeError):
    """Raised by `SandboxResult.raise_for_error` when sandboxed code failed."""


@dataclass(frozen=True)
class SandboxResult:
    """The outcome of one sandboxed run.

    `error_type` is the exception's name raised inside (e.g. `ImportError`,
    `SandboxViolation`, `MemoryError`) or one of `CPUTimeLimit`, `WallTimeLimit`,
    `Crashed`, `MalformedOutput` when the child itself was stopped.
    """

    ok: bool
    value: Any = None
    stdout: str = ""
    error_type: str | None = None
    error_message: str | None = None
    seconds: float = 0.0

    def raise_for_error(self) -> "SandboxResult":
        if not self.ok:
            raise SandboxError(f"{self.error_type}: {self.error_message}")
        return self


def _validate(code, call, args, cpu_seconds, memory_mb, wall_seconds, allowed_imports):
    if not isinstance(code, str):
        raise TypeError(f"code must be a str, got {type(code).__name__}")
    if call is not None and (not isinstance(call, str) or not call.isidentifier()):
        raise ValueError(f"call must be a function name (an identifier), got {call!r}")
    if not isinstance(args, (list, tuple)):
        raise TypeError(f"args must be a list or tuple, got {type(args).__name__}")
    for name, value, low, high in (
        ("cpu_seconds", cpu_seconds, 1, 600),
        ("memory_mb", memory_mb, 64, 65536),
        ("wall_seconds", wall_seconds, 1, 3600),
    ):
        if not isinstance(value, (int, float)) or not low <= value <= high:
            raise ValueError(f"{name} must be a number in [{low}, {high}], got {value!r}")
    bad = [m for m in allowed_imports if not isinstance(m, str) or not m.isidentifier()]
    if bad:
        raise ValueError(f"allowed_imports must be top-level module names, got {bad}")


def run_sandboxed(
    code: str,
    *,
    call: str | None = None,
    args: Sequence = (),
    allowed_imports: Sequence[str] = DEFAULT_ALLOWED_IMPORTS,
    cpu_seconds: float = 5,
    memory_mb: int = 1024,
    wall_seconds: float = 10,
) -> SandboxResult:
    """Execute `code` in an isolated child process and return what happened.

    Without `call`, the value is the variable `result` the code leaves behind; with it,
    the return value of `call(*args)`. `args` and the value travel as JSON (NumPy arrays
    come back as lists). The caller never sees an exception from the untrusted code.
    """
    _validate(code, call, args, cpu_seconds, memory_mb, wall_seconds, allowed_imports)
    env = {
        "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0",
        "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
    }
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="icml26-sandbox-") as workdir:
        request = json.dumps({
            "code": code, "call": call, "args": list(args), "workdir": workdir,
            "allowed_imports": list(allowed_imports), "cpu_seconds": int(max(1, cpu_seconds)),
            "memory_mb": int(memory_mb),
        })
        process = subprocess.Popen(
            [sys.executable, "-I", str(_CHILD)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, cwd=workdir, env=env, start_new_session=True, text=True,
        )
        try:
            stdout, stderr = process.communicate(request, timeout=wall_seconds)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            process.communicate()
            return SandboxResult(False, error_type="WallTimeLimit",
                                 error_message=f"stopped after {wall_seconds} s of wall-clock time",
                                 seconds=time.perf_counter() - started)
        finally:
            _kill_group(process)
    seconds = time.perf_counter() - started
    return _parse(process.returncode, stdout, stderr, cpu_seconds, seconds)


def _kill_group(process: subprocess.Popen) -> None:
    """Kill the child and anything it managed to start in its session."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _parse(returncode, stdout, stderr, cpu_seconds, seconds) -> SandboxResult:
    if MARKER in stdout:
        try:
            outcome = json.loads(stdout.rsplit(MARKER, 1)[1].strip().splitlines()[0])
            return SandboxResult(seconds=seconds, **outcome)
        except (ValueError, TypeError, IndexError) as error:
            return SandboxResult(False, error_type="MalformedOutput",
                                 error_message=f"could not read the child's result: {error}",
                                 seconds=seconds)
    if returncode in (-signal.SIGXCPU, -signal.SIGKILL) and seconds >= 0.5 * cpu_seconds:
        return SandboxResult(False, error_type="CPUTimeLimit",
                             error_message=f"stopped after {cpu_seconds} s of CPU time",
                             seconds=seconds)
    tail = (stderr or "").strip().splitlines()[-1:] or [""]
    return SandboxResult(False, error_type="Crashed",
                         error_message=f"child exited with status {returncode}: {tail[0][:500]}",
                         seconds=seconds)
