"""Run model-generated code safely: never `exec` it in the notebook's own process.

`run_sandboxed(code)` runs `code` in a fresh interpreter and always returns a structured
`SandboxResult`. Python's audit hooks are documented (PEP 578) as *not* a sandbox, so the
security boundary is the operating system; the in-process checks are a second line.

Layers, from the outside in, and the attack classes each one stops
----------------------------------------------------------------------
1. **Operating-system isolation** (`isolation="bwrap"`, or `"unshare"` as a fallback).
   The child runs under bubblewrap (`bwrap`; Debian/Ubuntu package `bubblewrap`). As an
   ordinary user, bwrap is unprivileged and maps the caller to uid 65534 inside a new user
   namespace. As root, bwrap runs privileged and hands over to util-linux's `setpriv`,
   which becomes uid/gid 65534 (nobody) at once; either way the code's real uid on the host
   is never 0. Inside:
   * an unprivileged uid with every capability dropped (bounding set included) and
     `no_new_privs` (no further user namespaces where bwrap >= 0.8 runs unprivileged):
     stops privilege use (mknod of devices, chown, mounts, setuid, raw sockets) and makes
     `RLIMIT_NPROC` bind (it does not bind root), so forking and new threads fail;
   * new network namespace with no interface but its own loopback: stops every connection
     to the host or beyond, the host's loopback included, whatever check was bypassed;
   * new PID namespace with bwrap as its init, `--die-with-parent` and a new session:
     nothing started inside (a `setsid` grandchild included) outlives the run, and the
     caller's and host's processes are invisible, so signals and pidfds cannot reach them;
   * a fresh root file system holding only read-only binds of /usr, the dynamic linker's
     cache, the Python installation and its virtual environment; the work folder
     (`/sandbox`, read-write) and a private tmpfs `/tmp` are the only writable places; no
     /proc, no /etc/passwd, no home directories, no project files: stops file canaries,
     `mkdir`/`utime`/xattr outside the folder, reads of secrets and the password database,
     and writes through `/proc/<pid>/mem`;
   * new IPC and UTS namespaces (no shared memory or message queues with the host).
   The fallback for root without a usable bwrap uses util-linux: `unshare` (mount, PID,
   network, IPC, UTS namespaces; every mount re-mounted read-only, so the host's world-
   readable files stay visible but nothing is writable; tmpfs on /tmp, the work folder at
   /tmp/sandbox) and `setpriv` (user 65534, groups cleared, all capability sets and the
   bounding set empty, `no_new_privs`). Where neither works, `run_sandboxed` raises `SandboxUnavailable`
   naming what to install, unless the caller opts out with `isolation="none"` (or the
   environment variable `ICML26_SANDBOX_ISOLATION=none`), which keeps layers 2-4 only and
   is **not** a security boundary.
2. **Resource limits, applied inside the child** (worker process): CPU seconds, address
   space, file size, open files, no core files, no new processes (`RLIMIT_NPROC=0`).
3. **A trustworthy result channel.** A small trusted supervisor inside the sandbox forks
   the worker that runs the code (in a thread of its own, so no trusted frame lies below
   the untrusted ones). The worker never holds the result descriptor; it sends its
   outcome to the supervisor over a private pipe, and the supervisor (non-dumpable, so the
   worker cannot ptrace it or open its descriptors) writes exactly one framed line to the
   result pipe only after the worker has exited with status 0. The caller accepts it only
   if the whole sandbox exits with status 0 and exactly one frame arrived. Markers printed
   to fd 1, from `__del__`, or before a self-inflicted exit are therefore just output.
4. **A robust caller.** stdout/stderr and the result are read as bytes, capped (the child
   is killed at the cap) and decoded with `errors="replace"`; every wait has a deadline; at
   the wall limit the sandbox's whole process tree is killed (killing bwrap kills its PID
   namespace). Invalid UTF-8, floods of output and never-ending grandchildren cannot break
   or stall the caller.
5. **In-process hardening (defence in depth only).** An import guard that never loads
   anything: the code gets only allowed packages loaded before it ran (library code may
   re-import what was already loaded); it references no real `__import__` through
   `__closure__`, `__globals__` or `__wrapped__`, its tables are read-only snapshots, and
   the real `builtins.__import__` is replaced by it too, with `__loader__`/`__spec__`
   removed. An audit hook whose decisions depend only on constants bound in its closure
   (no globals, no builtins) refuses process creation, signals, networking, native code
   (`ctypes`), sub-interpreters (`cpython.PyInterpreterState_New`, `_xxsubinterpreters`),
   the password database modules (`pwd`, `grp`), `gc` object walks, frame access
   (`tb_frame`, `gi_frame`, `cr_frame`, tracing; `sys._getframe` never returns the child's
   own frames), `marshal`, code-object construction, threads, and file access outside the
   work folder. Operations that raise no audit event (`mknod`, writes through NumPy stride
   tricks) and anything that gets past this layer are stopped by layers 1-4.

The chapters' own static checks (lmac's protocol check, grasp's vocabulary) come before all
of this and stay.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import selectors
import shutil
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
ISOLATION_MODES = ("auto", "bwrap", "unshare", "none")
ISOLATION_ENV = "ICML26_SANDBOX_ISOLATION"
SANDBOX_UID = 65534  # nobody
INSIDE_WORKDIR = "/sandbox"
MAX_OUTPUT_BYTES = 1 << 20  # raw bytes on the child's fd 1 + fd 2
MAX_RESULT_BYTES = 16 << 20  # the framed result
TMPFS_BYTES = 64 << 20
_CHILD = Path(__file__).with_name("_sandbox_child.py")
_KILL_GRACE_SECONDS = 5.0


class SandboxError(RuntimeError):
    """Raised by `SandboxResult.raise_for_error` when sandboxed code failed."""


class SandboxUnavailable(SandboxError):
    """No operating-system isolation is available and the caller did not opt out."""


@dataclass(frozen=True)
class SandboxResult:
    """The outcome of one sandboxed run.

    `error_type` is the exception's name raised inside (e.g. `ImportError`,
    `SandboxViolation`, `MemoryError`) or one of `CPUTimeLimit`, `WallTimeLimit`,
    `OutputLimit`, `ResultTooLarge`, `Crashed`, `MalformedOutput` when the child itself was
    stopped. `stdout` is what the code printed (last 64 KiB); `raw_output` is whatever
    reached the process's own stdout/stderr (decoded with replacement, capped);
    `isolation` names the OS layer used (`bwrap`, `unshare` or `none`).
    """

    ok: bool
    value: Any = None
    stdout: str = ""
    error_type: str | None = None
    error_message: str | None = None
    seconds: float = 0.0
    raw_output: str = ""
    isolation: str = ""

    def raise_for_error(self) -> "SandboxResult":
        if not self.ok:
            raise SandboxError(f"{self.error_type}: {self.error_message}")
        return self


def _validate(code, call, args, cpu_seconds, memory_mb, wall_seconds, allowed_imports, isolation):
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
    if isolation is not None and isolation not in ISOLATION_MODES:
        raise ValueError(f"isolation must be one of {ISOLATION_MODES}, got {isolation!r}")


# ----------------------------------------------------------------------- the OS layer

def _real_dirs() -> list[str]:
    """Directories of the Python installation the child needs (read-only, same paths)."""
    import site

    candidates = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    candidates |= set(site.getsitepackages())
    out = set()
    for path in candidates:
        for variant in (os.path.abspath(path), os.path.realpath(path)):
            if os.path.isdir(variant):
                out.add(variant)
    # keep only the outermost of nested folders; /usr is bound separately
    outer = []
    for path in sorted(out, key=len):
        if path == "/usr" or path.startswith("/usr/"):
            continue
        if not any(path == o or path.startswith(o + "/") for o in outer):
            outer.append(path)
    return outer


def _system_binds() -> list[tuple[str, str]]:
    """(kind, path) for the system parts of the fresh root: ro-bind or symlink."""
    items = [("bind", "/usr")]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            items.append(("symlink", top))
        elif os.path.isdir(top):
            items.append(("bind", top))
    for path in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime"):
        if os.path.exists(path):
            items.append(("bind", path))
    return items


@functools.lru_cache(maxsize=1)
def _bwrap_features() -> frozenset[str]:
    exe = shutil.which("bwrap")
    if exe is None:
        return frozenset()
    try:
        text = subprocess.run([exe, "--help"], capture_output=True, timeout=10).stdout.decode(
            errors="replace")
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    return frozenset(f for f in ("--disable-userns", "--size") if f in text) | {"present"}


# setpriv (util-linux) drops root for good: user and group 65534, no supplementary groups,
# every capability set and the bounding set emptied, no_new_privs.
_SETPRIV = ["setpriv", f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_UID}", "--clear-groups",
            "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]


def _bwrap_command(argv: list[str], workdir: str, env: dict, as_root: bool) -> list[str]:
    """The bwrap command line.

    As an ordinary user, bwrap is unprivileged: a new user namespace maps the caller to uid
    65534 inside, with no capabilities and (bwrap >= 0.8) no further user namespaces. As
    root, bwrap runs privileged (no user namespace, so the code would keep uid 0): it keeps
    only CAP_SETUID/SETGID/SETPCAP, which `setpriv` uses at once to become 65534 with
    empty capability and bounding sets. Either way the code's real uid on the host is not 0.
    """
    features = _bwrap_features()
    cmd = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
           "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--hostname", "sandbox",
           "--clearenv"]
    if as_root:
        cmd += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
                "--cap-add", "CAP_SETPCAP"]
    else:
        cmd += ["--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
        if "--disable-userns" in features:
            cmd.append("--disable-userns")
    cmd += ["--dev", "/dev"]
    if "--size" in features:
        cmd += ["--size", str(TMPFS_BYTES)]
    cmd += ["--tmpfs", "/tmp"]  # first, so that a virtual environment under /tmp stays visible
    for kind, path in _system_binds():
        if kind == "symlink":
            cmd += ["--symlink", os.readlink(path), path]
        else:
            cmd += ["--ro-bind", path, path]
    parents = set()
    for path in _real_dirs():
        cmd += ["--ro-bind", path, path]
        parents |= {str(p) for p in Path(path).parents if str(p) not in ("/", "/tmp")}
    for parent in sorted(parents):  # bwrap creates mount points' parents with mode 0700
        cmd += ["--chmod", "0755", parent]
    cmd += ["--chmod", "1777", "/tmp", "--bind", workdir, INSIDE_WORKDIR]
    for key, value in env.items():
        cmd += ["--setenv", key, value]
    return cmd + ["--"] + (_SETPRIV if as_root else []) + list(argv)


# The unshare fallback (root only): a shell inside new mount/PID/net/IPC/UTS namespaces makes
# every mount read-only and puts a private tmpfs on /tmp; a root file system it cannot write
# has no room for /sandbox, so the work folder is bound on /tmp/sandbox. Python folders that
# lie under /tmp (a virtual environment there) are held open first and bound back, read-only.
_UNSHARE_SCRIPT = r"""
set -e
work=$1; size=$2; shift 2
n=0
while [ "$1" != "--" ]; do
    n=$((n + 1)); eval "exec $((n + 2))<\"\$1\""; eval "keep_$n=\$1"; shift
done
shift
cd "$work"
mount --make-rprivate /
while read -r _ _ _ _ mp _; do
    mp=$(printf '%b' "$mp")
    mount -o remount,bind,ro "$mp" 2>/dev/null || true
done < /proc/self/mountinfo
mount -t tmpfs -o "size=$size,nosuid,nodev,mode=1777" tmpfs /tmp
i=0
while [ "$i" -lt "$n" ]; do
    i=$((i + 1)); eval "dir=\$keep_$i"
    mkdir -p "$dir"
    mount --no-canonicalize --bind "/proc/self/fd/$((i + 2))" "$dir"
    mount -o remount,bind,ro,nosuid,nodev "$dir"
    eval "exec $((i + 2))<&-"
done
mkdir /tmp/sandbox
mount --no-canonicalize --bind . /tmp/sandbox
mount -o remount,bind,rw,nosuid,nodev /tmp/sandbox
cd /tmp/sandbox
exec "$@"
"""


def _unshare_command(argv: list[str], workdir: str) -> list[str]:
    return ["unshare", "--mount", "--pid", "--fork", "--kill-child", "--net", "--ipc", "--uts",
            "--mount-proc", "/bin/sh", "-c", _UNSHARE_SCRIPT, "sh", workdir, str(TMPFS_BYTES),
            *[d for d in _real_dirs() if d.startswith("/tmp/")][:6], "--", *_SETPRIV, *argv]


def _isolated_command(backend: str, argv: list[str], workdir: str, env: dict) -> list[str]:
    """`argv` wrapped in the OS layer `backend`; the work folder appears at `_inside(backend)`."""
    if backend == "bwrap":
        return _bwrap_command(argv, workdir, env, os.geteuid() == 0)
    if backend == "unshare":
        return _unshare_command(argv, workdir)
    return list(argv)


def _inside(backend: str, workdir: str) -> str:
    return {"bwrap": INSIDE_WORKDIR, "unshare": "/tmp/sandbox"}.get(backend, workdir)


_PROBE_CODE = "result = 1"
_CHILD_ENV = {
    "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0", "HOME": "/tmp",
    "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
}


@functools.lru_cache(maxsize=None)
def _backend_works(backend: str) -> str | None:
    """None if `backend` isolates on this machine, else why not (cached per process)."""
    if backend == "bwrap":
        if "present" not in _bwrap_features():
            return "bwrap (Debian/Ubuntu package 'bubblewrap') is not installed"
    if backend == "unshare" and os.geteuid() != 0:
        return "the unshare/setpriv fallback needs root"
    if os.geteuid() == 0 or backend == "unshare":
        missing = [t for t in (["setpriv"] if backend == "bwrap" else ["unshare", "setpriv"])
                   if shutil.which(t) is None]
        if missing:
            return f"{' and '.join(missing)} (util-linux) not found"
    probe = _run(_PROBE_CODE, None, [], (), 2, 256, 20, backend)
    if probe.ok and probe.value == 1:
        return None
    return f"{backend} could not start a sandbox: {probe.error_type}: {probe.error_message}"


def _choose_backend(isolation: str | None) -> str:
    requested = isolation or os.environ.get(ISOLATION_ENV, "").strip() or "auto"
    if requested not in ISOLATION_MODES:
        raise ValueError(f"{ISOLATION_ENV} must be one of {ISOLATION_MODES}, got {requested!r}")
    if requested == "none":
        return "none"
    candidates = ["bwrap", "unshare"] if requested == "auto" else [requested]
    reasons = []
    for backend in candidates:
        reason = _backend_works(backend)
        if reason is None:
            return backend
        reasons.append(reason)
    raise SandboxUnavailable(
        "no operating-system isolation for sandboxed code: " + "; ".join(reasons) + ". "
        "Install bubblewrap (`apt-get install bubblewrap`; on Colab: "
        "`!apt-get -qq install bubblewrap`), or run as root with util-linux's unshare and "
        "setpriv. To run with the in-process checks only (NOT a security boundary), pass "
        f"isolation='none' or set {ISOLATION_ENV}=none."
    )


# ----------------------------------------------------------------------- the caller

def run_sandboxed(
    code: str,
    *,
    call: str | None = None,
    args: Sequence = (),
    allowed_imports: Sequence[str] = DEFAULT_ALLOWED_IMPORTS,
    cpu_seconds: float = 5,
    memory_mb: int = 1024,
    wall_seconds: float = 10,
    isolation: str | None = None,
) -> SandboxResult:
    """Execute `code` in an isolated child process and return what happened.

    Without `call`, the value is the variable `result` the code leaves behind; with it,
    the return value of `call(*args)`. `args` and the value travel as JSON (NumPy arrays
    come back as lists). The caller never sees an exception from the untrusted code.

    `isolation` picks the operating-system layer: `"auto"` (default; bubblewrap, else the
    root-only unshare/setpriv fallback, else `SandboxUnavailable` is raised), `"bwrap"`,
    `"unshare"`, or `"none"`: an explicit opt-out that keeps only the in-process checks and
    is not a security boundary. Without the argument, the environment variable
    `ICML26_SANDBOX_ISOLATION` is used when set.
    """
    _validate(code, call, args, cpu_seconds, memory_mb, wall_seconds, allowed_imports, isolation)
    backend = _choose_backend(isolation)
    return _run(code, call, list(args), tuple(allowed_imports), cpu_seconds, memory_mb,
                wall_seconds, backend)


def _run(code, call, args, allowed_imports, cpu_seconds, memory_mb, wall_seconds, backend):
    started = time.perf_counter()
    deadline = time.monotonic() + wall_seconds
    env = dict(_CHILD_ENV)
    as_root = os.geteuid() == 0
    process = None
    result_read = result_write = None
    with tempfile.TemporaryDirectory(prefix="icml26-sandbox-",
                                     ignore_cleanup_errors=True) as private:
        workdir = os.path.join(private, "work")
        os.mkdir(workdir, 0o700)
        if as_root and backend in ("bwrap", "unshare"):
            os.chown(workdir, SANDBOX_UID, SANDBOX_UID)
        inside = _inside(backend, workdir)
        try:
            result_read, result_write = os.pipe()
            os.set_inheritable(result_write, True)
            request = json.dumps({
                "code": code, "call": call, "args": list(args), "workdir": inside,
                "allowed_imports": list(allowed_imports), "cpu_seconds": int(max(1, cpu_seconds)),
                "memory_mb": int(memory_mb), "result_fd": result_write,
                "result_cap": MAX_RESULT_BYTES,
            }).encode()
            stdin = tempfile.TemporaryFile(dir=private)
            stdin.write(request)
            stdin.seek(0)
            cmd = _isolated_command(backend, [sys.executable, "-I", "-c", _CHILD.read_text()],
                                    workdir, env)
            try:
                process = subprocess.Popen(
                    cmd, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    cwd=workdir if backend == "none" else "/", env=env,
                    start_new_session=True, pass_fds=[result_write])
            finally:
                stdin.close()
                os.close(result_write)
                result_write = None
            streams = _collect(process, result_read, deadline)
        finally:
            if process is not None:
                _kill_tree(process)
            if result_read is not None:
                os.close(result_read)
            if result_write is not None:
                os.close(result_write)
        seconds = time.perf_counter() - started
        return _outcome(process, streams, wall_seconds, seconds, backend)


def _collect(process: subprocess.Popen, result_fd: int, deadline: float) -> dict:
    """Read stdout, stderr and the result pipe until EOF, a cap or the deadline."""
    sel = selectors.DefaultSelector()
    names = {process.stdout.fileno(): "output", process.stderr.fileno(): "output",
             result_fd: "result"}
    caps = {"output": MAX_OUTPUT_BYTES, "result": MAX_RESULT_BYTES + 4096}
    data = {"output": bytearray(), "result": bytearray()}
    for fd in names:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
    stopped = None
    try:
        while sel.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                stopped = "wall"
                break
            for key, _ in sel.select(timeout=min(remaining, 1.0)):
                try:
                    chunk = os.read(key.fd, 1 << 16)
                except BlockingIOError:
                    continue
                except OSError as error:
                    if error.errno != errno.EIO:
                        raise
                    chunk = b""
                if not chunk:
                    sel.unregister(key.fd)
                    continue
                kind = names[key.fd]
                data[kind] += chunk
                if len(data[kind]) > caps[kind]:
                    stopped = kind
                    break
            if stopped:
                break
        if stopped is None:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                stopped = "wall"
    finally:
        sel.close()
    return {"output": bytes(data["output"][:MAX_OUTPUT_BYTES]), "result": bytes(data["result"]),
            "stopped": stopped}


def _kill_tree(process: subprocess.Popen) -> None:
    """Kill the sandbox's process group (bwrap/unshare: its PID namespace dies with it)."""
    try:  # also when the leader has exited: an isolation="none" run may leave its group behind
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if process.poll() is None:
        try:
            process.kill()
        except (ProcessLookupError, PermissionError):
            pass
    try:
        process.wait(timeout=_KILL_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        pass
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def _outcome(process, streams, wall_seconds, seconds, backend) -> SandboxResult:
    raw = streams["output"].decode("utf-8", errors="replace")
    common = {"seconds": seconds, "raw_output": raw, "isolation": backend}
    stopped = streams["stopped"]
    if stopped == "wall":
        return SandboxResult(False, error_type="WallTimeLimit",
                             error_message=f"stopped after {wall_seconds} s of wall-clock time",
                             **common)
    if stopped == "output":
        return SandboxResult(False, error_type="OutputLimit",
                             error_message=f"the code wrote more than {MAX_OUTPUT_BYTES} bytes "
                                           "to its stdout/stderr and was stopped", **common)
    if stopped == "result":
        return SandboxResult(False, error_type="ResultTooLarge",
                             error_message=f"the result exceeded {MAX_RESULT_BYTES} bytes",
                             **common)
    returncode = process.returncode
    frame = streams["result"]
    text = frame.decode("utf-8", errors="replace")
    if returncode == 0 and text.startswith(MARKER) and text.endswith("\n") \
            and text.count("\n") == 1:
        try:
            outcome = json.loads(text[len(MARKER):])
            if not isinstance(outcome, dict) or not isinstance(outcome.get("ok"), bool):
                raise ValueError("not an outcome")
            return SandboxResult(
                ok=outcome["ok"], value=outcome.get("value"),
                stdout=str(outcome.get("stdout") or ""),
                error_type=None if outcome.get("error_type") is None else str(outcome["error_type"]),
                error_message=(None if outcome.get("error_message") is None
                               else str(outcome["error_message"])),
                **common)
        except (ValueError, TypeError) as error:
            return SandboxResult(False, error_type="MalformedOutput",
                                 error_message=f"could not read the child's result: {error}",
                                 **common)
    if returncode == 0 and frame:
        return SandboxResult(False, error_type="MalformedOutput",
                             error_message="the result channel did not hold exactly one result",
                             **common)
    tail = raw.strip().splitlines()[-1:] or [""]
    return SandboxResult(False, error_type="Crashed",
                         error_message=f"sandbox exited with status {returncode} without a "
                                       f"result: {tail[0][:500]}", **common)
