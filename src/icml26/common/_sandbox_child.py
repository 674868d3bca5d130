"""The child side of `icml26.common.sandbox`: run as a script in a fresh interpreter.

It reads one JSON request on stdin, lowers its own resource limits, installs an audit
hook that refuses process creation, networking, foreign native code and file access
outside its temporary folder, then runs the untrusted code with a restricted `__import__`
and prints one JSON line (prefixed by a marker) with the outcome.
"""

import builtins
import contextlib
import io
import json
import os
import resource
import sys
import traceback

MARKER = "@@ICML26-SANDBOX-RESULT@@"

# Audit events that no model-generated code may raise (prefix match).
BLOCKED_EVENTS = (
    "os.system", "os.exec", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn",
    "os.kill", "os.killpg", "os.remove", "os.rename", "os.rmdir", "os.unlink",
    "os.chmod", "os.chown", "os.symlink", "os.link", "os.truncate", "os.putenv",
    "os.unsetenv", "os.chdir", "os.chroot", "os.setuid", "os.setgid",
    "subprocess.", "socket.", "ctypes.", "resource.setrlimit", "pty.", "signal.",
    "sys.addaudithook", "shutil.", "webbrowser.", "urllib.", "http.", "ftplib.",
    "smtplib.", "_posixsubprocess.", "syslog.", "mmap.", "fcntl.",
)
# Modules whose import alone hands out one of those powers.
BLOCKED_MODULES = {
    "ctypes", "_ctypes", "cffi", "subprocess", "_posixsubprocess", "multiprocessing",
    "socket", "_socket", "ssl", "pty", "resource", "signal", "mmap", "fcntl",
}


class SandboxViolation(PermissionError):
    """Raised inside the child when untrusted code attempts a forbidden operation."""


def _apply_limits(request):
    cpu = int(request["cpu_seconds"])
    memory = int(request["memory_mb"]) * 2**20
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_FSIZE, (16 * 2**20, 16 * 2**20))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))


def _inside(path, folders):
    real = os.path.realpath(path)
    return any(real == f or real.startswith(f + os.sep) for f in folders)


def _install_audit_hook(workdir):
    readable = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, workdir)}
    readable |= {os.path.realpath(p) for p in sys.path if p and os.path.isdir(p)}
    writable = {os.path.realpath(workdir)}
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

    def hook(event, args):
        if event.startswith(BLOCKED_EVENTS):
            raise SandboxViolation(f"sandbox: {event} is not allowed")
        if event == "import" and args[0].split(".")[0] in BLOCKED_MODULES:
            raise SandboxViolation(f"sandbox: importing {args[0]} is not allowed")
        if event == "open":
            path, mode, flags = args
            if path is None or isinstance(path, int):
                return
            path = os.fsdecode(path)
            wants_write = any(m in (mode or "") for m in "wax+") or bool((flags or 0) & write_flags)
            if wants_write and not _inside(path, writable):
                raise SandboxViolation(f"sandbox: writing {path!r} is not allowed")
            if not _inside(path, readable):
                raise SandboxViolation(f"sandbox: reading {path!r} is not allowed")
        if event in {"os.listdir", "os.scandir", "glob.glob"} and args and args[0] is not None:
            if not isinstance(args[0], int) and not _inside(os.fsdecode(args[0]), writable):
                raise SandboxViolation(f"sandbox: listing {args[0]!r} is not allowed")

    sys.addaudithook(hook)


def _restricted_builtins(allowed):
    real_import = builtins.__import__

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        top = name.split(".")[0]
        if level != 0 or top not in allowed:
            raise ImportError(
                f"sandbox: import of {name!r} is not allowed; allowed modules: {sorted(allowed)}"
            )
        return real_import(name, globals, locals, fromlist, level)

    safe = dict(vars(builtins))
    for name in ("breakpoint", "input", "help", "exit", "quit", "copyright", "credits", "license"):
        safe.pop(name, None)
    safe["__import__"] = guarded_import
    return safe


def _jsonable(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if hasattr(value, "tolist"):
        return _jsonable(value.tolist())
    raise TypeError(f"result of type {type(value).__name__} is not JSON-serialisable")


def _default_message(error, request):
    if isinstance(error, MemoryError):
        return f"allocation exceeded the memory limit of {request['memory_mb']} MB"
    return "raised without a message"


def main():
    request = json.loads(sys.stdin.read())
    real_stdout = sys.stdout
    os.chdir(request["workdir"])
    _apply_limits(request)
    allowed = set(request["allowed_imports"])
    for module in sorted(allowed):
        with contextlib.suppress(ImportError):
            __import__(module)
    _install_audit_hook(request["workdir"])

    captured = io.StringIO()
    outcome = {"ok": False, "value": None, "error_type": None, "error_message": None}
    try:
        with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
            namespace = {"__builtins__": _restricted_builtins(allowed), "__name__": "__sandbox__"}
            exec(compile(request["code"], "<sandboxed>", "exec"), namespace)
            if request["call"] is not None:
                function = namespace.get(request["call"])
                if not callable(function):
                    raise NameError(f"the code defines no function named {request['call']!r}")
                value = function(*request["args"])
            else:
                value = namespace.get("result")
            outcome.update(ok=True, value=_jsonable(value))
    except BaseException as error:  # noqa: BLE001 - every failure becomes a structured result
        frames = traceback.extract_tb(error.__traceback__)
        line = next((f.lineno for f in reversed(frames) if f.filename == "<sandboxed>"), None)
        message = str(error) or _default_message(error, request)
        message += f" (line {line})" if line else ""
        outcome.update(ok=False, error_type=type(error).__name__, error_message=message)
    outcome["stdout"] = captured.getvalue()[-65536:]
    real_stdout.write("\n" + MARKER + json.dumps(outcome) + "\n")
    real_stdout.flush()


if __name__ == "__main__":
    main()
