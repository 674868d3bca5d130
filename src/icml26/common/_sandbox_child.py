"""The child side of `icml26.common.sandbox`, run as `python -I -c <this file's text>`.

It is started inside the operating-system isolation layer (see `sandbox.py`) and runs as two
processes:

* the **supervisor** (trusted, tiny): reads the JSON request from fd 0, makes itself
  non-dumpable (so the worker cannot ptrace it or open its descriptors), forks the worker,
  reads the worker's outcome from a private pipe (size-capped), waits for it, and writes
  exactly one framed result line to the *result descriptor*, a pipe only it holds, then
  exits at once with status 0. A worker that died, was killed by a limit or exited with a
  non-zero status never comes back as a success, whatever it printed or wrote.
* the **worker** (runs the untrusted code): closes the result descriptor, lowers its
  resource limits (CPU, address space, file size, no core files, no new processes),
  preloads the allowed modules, replaces the import machinery's entry point with a guard
  that only hands out modules already loaded, installs an audit hook (second line of
  defence; the OS layer is the first), runs the code in a thread started beforehand (so
  walking frames from the code never reaches the worker's or supervisor's own), sends the
  outcome to the supervisor, then leaves with `os._exit(0)` (no `__del__`, no `atexit`).
"""

import builtins
import json
import os
import resource
import signal
import sys

MARKER = "@@ICML26-SANDBOX-RESULT@@"  # prefix of the framed result line (kept for compatibility)
OUTPUT_TAIL_CHARS = 65536

# Audit events that no model-generated code may raise (prefix match).
BLOCKED_EVENTS = (
    "os.system", "os.exec", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn",
    "os.kill", "os.killpg", "os.remove", "os.rename", "os.rmdir", "os.unlink",
    "os.chmod", "os.chown", "os.symlink", "os.link", "os.truncate", "os.putenv",
    "os.unsetenv", "os.chdir", "os.chroot", "os.setuid", "os.setgid", "os.chflags",
    "os.setxattr", "os.removexattr", "os.mkdir", "os.utime", "os.mkfifo", "os.mknod",
    "os.startfile", "os.add_dll_directory",
    "subprocess.", "socket.", "ctypes.", "resource.setrlimit", "resource.prlimit", "pty.",
    "signal.", "sys.addaudithook", "sys.settrace", "sys.setprofile",
    "sys._current_frames", "sys._current_exceptions", "sys.setrecursionlimit",
    "shutil.", "webbrowser.", "urllib.", "http.", "ftplib.", "smtplib.", "telnetlib.",
    "imaplib.", "poplib.", "nntplib.", "_posixsubprocess.", "syslog.", "mmap.", "fcntl.",
    "gc.", "cpython.", "_thread.", "_xxsubinterpreters.", "_interpreters.", "code.__new__",
    "function.__new__", "marshal.", "pickle.find_class", "sqlite3.", "winreg.", "msvcrt.",
    "builtins.input", "builtins.breakpoint",
)
# Code of the child itself (`python -c`), its guard and its hook: frames never handed out.
TRUSTED_FILES = frozenset({"<string>", "<sandbox-hook>", "<sandbox-guard>", __file__
                           if "__file__" in globals() else "<string>"})
# Attributes whose reading hands out a frame (the way to the guard's and the child's state).
FRAME_ATTRIBUTES = ("tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back")
# Modules whose import alone hands out one of those powers.
BLOCKED_MODULES = (
    "ctypes", "_ctypes", "cffi", "subprocess", "_posixsubprocess", "multiprocessing",
    "_multiprocessing", "socket", "_socket", "ssl", "_ssl", "pty", "resource", "signal", "mmap",
    "fcntl", "gc", "pwd", "grp", "spwd", "_xxsubinterpreters", "_interpreters",
    "_xxinterpchannels", "_interpchannels", "_interpqueues", "_xxinterpqueues", "_testcapi",
    "_testinternalcapi", "_posixshmem", "termios", "tty", "_thread", "threading",
    "faulthandler", "tracemalloc", "inspect", "importlib", "imp", "zipimport", "_imp",
    "marshal", "pickle", "_pickle", "shelve", "sqlite3", "_sqlite3", "select", "selectors",
    "asyncio", "readline", "code", "codeop", "pdb", "bdb", "sys", "os", "posix", "nt",
    "builtins", "io", "_io", "pathlib", "shutil", "tempfile", "glob", "urllib", "http",
)


class SandboxViolation(PermissionError):
    """Raised inside the child when untrusted code attempts a forbidden operation."""


# ----------------------------------------------------------------------------- worker side

def _apply_limits(request):
    cpu = int(request["cpu_seconds"])
    memory = int(request["memory_mb"]) * 2**20
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_FSIZE, (16 * 2**20, 16 * 2**20))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    try:  # binds every non-root user; the OS layer runs us as one
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    except (ValueError, OSError):
        pass


def _make_guarded_import(allowed):
    """An `__import__` that only hands out modules loaded before the untrusted code ran.

    It never loads anything, and it holds no reference to the real import machinery: its
    globals are a fresh dict with empty builtins, and its free variables are two read-only
    snapshots of `sys.modules` (the allowed packages, and everything) plus a few builtins.
    The untrusted code (globals named `__sandbox__`) gets only the allowed packages.
    Library code that imports inside a function (numpy's `import warnings`, a relative
    import) gets what was already loaded, checked by identity of its module's globals.
    """
    from types import MappingProxyType

    snapshot = {name: module for name, module in sys.modules.items() if module is not None}
    loaded = MappingProxyType({name: module for name, module in snapshot.items()
                               if name.split(".")[0] in allowed})
    everything = MappingProxyType(snapshot)
    listing = ", ".join(repr(name) for name in sorted(allowed))
    source = (
        "def make(loaded, everything, listing, ImportError, str, int, dict, isinstance, vars, repr):\n"
        "    def refuse(name):\n"
        "        return ImportError('sandbox: import of ' + repr(name) + ' is not allowed;'\n"
        "                           ' allowed modules: [' + listing + ']')\n"
        "    def __import__(name, globals=None, locals=None, fromlist=(), level=0):\n"
        "        if not isinstance(name, str) or not isinstance(level, int) or level < 0:\n"
        "            raise refuse(name)\n"
        "        library = False\n"
        "        if isinstance(globals, dict):\n"
        "            owner = dict.get(globals, '__name__')\n"
        "            if isinstance(owner, str) and owner != '__sandbox__' and owner in everything:\n"
        "                library = vars(everything[owner]) is globals\n"
        "        full = name\n"
        "        if level:\n"
        "            package = dict.get(globals, '__package__') if library else None\n"
        "            if not isinstance(package, str) or not package:\n"
        "                raise refuse(name)\n"
        "            base = package.rsplit('.', level - 1)[0] if level > 1 else package\n"
        "            full = base + '.' + name if name else base\n"
        "        if full in loaded:\n"
        "            table = loaded\n"
        "        elif library and full in everything:\n"
        "            table = everything\n"
        "        else:\n"
        "            raise refuse(full)\n"
        "        if fromlist or level:\n"
        "            return table[full]\n"
        "        return table[full.partition('.')[0]]\n"
        "    return __import__\n"
    )
    scope = {"__builtins__": {}}
    exec(compile(source, "<sandbox-guard>", "exec"), scope)
    guard = scope.pop("make")(loaded, everything, listing, ImportError, str, int, dict,
                              isinstance, vars, repr)
    scope.clear()
    return guard


def _make_hook(workdir, readable):
    """The audit hook. Everything it uses is bound in its closure when it is built.

    The hook's globals are a throw-away dict without builtins, so code that reaches them
    (it should not: frame access is itself refused) cannot shadow what the hook calls.
    """
    source = (
        "def make(blocked, frame_attrs, blocked_modules, readable, writable, Violation,\n"
        "         realpath, fsdecode, isinstance, int, str, bytes, any, sep, write_flags,\n"
        "         len, repr, bool, trusted_files):\n"
        "    def inside(path, folders):\n"
        "        real = realpath(path)\n"
        "        for f in folders:\n"
        "            if real == f or real.startswith(f + sep):\n"
        "                return True\n"
        "        return False\n"
        "    gate = [False]\n"
        "    def open_frames(value):\n"
        "        gate[0] = value is True\n"
        "    def hook(event, args):\n"
        "        if event == 'sys._getframe':\n"
        "            if gate[0] or args[0].f_code.co_filename not in trusted_files:\n"
        "                return\n"
        "            raise Violation('sandbox: sys._getframe may not return the sandbox own frames')\n"
        "        if event.startswith(blocked):\n"
        "            raise Violation('sandbox: ' + event + ' is not allowed')\n"
        "        if event == 'object.__getattr__' and len(args) > 1 and args[1] in frame_attrs\\\n"
        "                and not gate[0]:\n"
        "            raise Violation('sandbox: reading ' + str(args[1]) + ' is not allowed')\n"
        "        if event == 'import':\n"
        "            name = args[0]\n"
        "            if isinstance(name, str) and name.partition('.')[0] in blocked_modules:\n"
        "                raise Violation('sandbox: importing ' + name + ' is not allowed')\n"
        "        elif event == 'open':\n"
        "            path, mode, flags = args\n"
        "            if path is None or isinstance(path, int):\n"
        "                return\n"
        "            path = fsdecode(path)\n"
        "            wants_write = any(m in (mode or '') for m in 'wax+') or bool((flags or 0) & write_flags)\n"
        "            if wants_write and not inside(path, writable):\n"
        "                raise Violation('sandbox: writing ' + repr(path) + ' is not allowed')\n"
        "            if not inside(path, readable):\n"
        "                raise Violation('sandbox: reading ' + repr(path) + ' is not allowed')\n"
        "        elif event in ('os.listdir', 'os.scandir', 'glob.glob') and args and args[0] is not None:\n"
        "            if not isinstance(args[0], int) and not inside(fsdecode(args[0]), writable):\n"
        "                raise Violation('sandbox: listing ' + repr(args[0]) + ' is not allowed')\n"
        "    return hook, open_frames\n"
    )
    scope = {"__builtins__": {}}
    exec(compile(source, "<sandbox-hook>", "exec"), scope)
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
    hook = scope.pop("make")(
        BLOCKED_EVENTS, frozenset(FRAME_ATTRIBUTES), frozenset(BLOCKED_MODULES),
        tuple(readable), (os.path.realpath(workdir),), SandboxViolation,
        os.path.realpath, os.fsdecode, isinstance, int, str, bytes, any, os.sep, write_flags,
        len, repr, bool, TRUSTED_FILES,
    )
    scope.clear()
    return hook


class _Tail:
    """A text sink that keeps only the last `limit` characters written to it."""

    def __init__(self, limit):
        self._parts, self._size, self._limit = [], 0, limit

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._parts.append(text)
        self._size += len(text)
        if self._size > 2 * self._limit:
            joined = "".join(self._parts)[-self._limit:]
            self._parts, self._size = [joined], len(joined)
        return len(text)

    def flush(self):
        pass

    def getvalue(self):
        return "".join(self._parts)[-self._limit:]


def _jsonable(value, depth=0):
    """Plain JSON data of exact builtin types (subclasses are converted here, in the thread
    that runs the untrusted code, so nothing hostile runs later in the trusted thread)."""
    if depth > 100:
        raise ValueError("result is nested too deeply")
    if value is None or type(value) in (bool, int, float, str):
        return value
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {str.__str__(str(k)): _jsonable(v, depth + 1) for k, v in value.items()}
    if hasattr(value, "tolist"):
        return _jsonable(value.tolist(), depth + 1)
    raise TypeError(f"result of type {type(value).__name__} is not JSON-serialisable")


def _default_message(error, job):
    if isinstance(error, MemoryError):
        return f"allocation exceeded the memory limit of {job['memory_mb']} MB"
    return "raised without a message"


def _sandboxed_line(tb):
    """The last line of the traceback that lies in the untrusted code (needs frame access)."""
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<sandboxed>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _runner(box):
    """Runs the untrusted code in its own thread, so that no trusted frame lies below it:
    walking `f_back` from the untrusted code ends here, never at `_worker` or `main`.
    Everything that may call untrusted code (its `__str__`, `tolist`, ...) happens here."""
    box["start"].acquire()
    job = box.pop("job")
    captured = job["captured"]
    try:
        with job["redirect_stdout"](captured), job["redirect_stderr"](captured):
            namespace = {"__builtins__": job["builtins"], "__name__": "__sandbox__"}
            exec(job["compiled"], namespace)
            if job["call"] is not None:
                function = namespace.get(job["call"])
                if not callable(function):
                    raise NameError(f"the code defines no function named {job['call']!r}")
                value = function(*job["args"])
            else:
                value = namespace.get("result")
            box["value"] = _jsonable(value)
            box["ok"] = True
    except BaseException as error:  # noqa: BLE001 - every failure becomes a structured result
        box["trace"] = sys.exc_info()[2]  # the real traceback, whatever the class pretends
        try:
            message = str(error) or _default_message(error, job)
            kind = str(type(error).__name__)
        except BaseException:  # noqa: BLE001 - a hostile __str__ or metaclass
            message, kind = "raised an exception whose message could not be read", "Exception"
        box["error"] = (kind, message)
    finally:
        try:
            box["stdout"] = _Tail.getvalue(captured)
        except BaseException:  # noqa: BLE001
            box["stdout"] = ""
        box["done"].release()


def _text(value, limit):
    return value[:limit] if type(value) is str else ""


def _worker(request, outcome_fd):
    import _thread
    import contextlib
    import types  # noqa: F401 - preloaded for the guard

    # The thread is started before the limits (RLIMIT_NPROC=0 forbids new threads too) and
    # before the audit hook (which refuses `_thread.start_new_thread`); it waits for its job.
    box = {"start": _thread.allocate_lock(), "done": _thread.allocate_lock()}
    box["start"].acquire()
    box["done"].acquire()
    _thread.start_new_thread(_runner, (box,))
    _apply_limits(request)
    allowed = frozenset(request["allowed_imports"])
    for module in sorted(allowed):
        try:
            __import__(module)
        except ImportError:
            pass
    readable = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    readable |= {os.path.realpath(p) for p in sys.path if p and os.path.isdir(p)}
    readable.add(os.path.realpath(request["workdir"]))
    try:
        compiled = compile(request["code"], "<sandboxed>", "exec")
    except SyntaxError as error:
        _send(outcome_fd, {"ok": False, "value": None, "error_type": type(error).__name__,
                           "error_message": f"{error.msg} (line {error.lineno})", "stdout": ""})

    safe = dict(vars(builtins))
    for name in ("breakpoint", "input", "help", "exit", "quit", "copyright", "credits",
                 "license", "__loader__", "__spec__", "__import__", "__package__"):
        safe.pop(name, None)
    guard = _make_guarded_import(allowed)
    safe["__import__"] = guard
    # Builtin functions expose the real `builtins` module through `__self__`: its import
    # entry point becomes the guard too, and it loses its importer objects.
    builtins.__import__ = guard
    for name in ("__loader__", "__spec__"):
        vars(builtins).pop(name, None)
    hook, open_frames = _make_hook(request["workdir"], readable)
    sys.addaudithook(hook)
    del hook

    box["job"] = {
        "compiled": compiled, "call": request["call"], "args": request["args"],
        "builtins": safe, "captured": _Tail(OUTPUT_TAIL_CHARS), "memory_mb": request["memory_mb"],
        "redirect_stdout": contextlib.redirect_stdout, "redirect_stderr": contextlib.redirect_stderr,
    }
    box["start"].release()
    box["done"].acquire()
    # Only plain data of exact builtin types is read from here on.
    outcome = {"ok": False, "value": None, "error_type": None, "error_message": None,
               "stdout": _text(box.get("stdout"), OUTPUT_TAIL_CHARS)}
    error, trace = box.get("error"), box.get("trace")
    if box.get("ok") is True and error is None:
        outcome.update(ok=True, value=box.get("value"))
    else:
        kind, message = error if type(error) is tuple and len(error) == 2 else ("Exception", "")
        outcome.update(error_type=_text(kind, 200) or "Exception",
                       error_message=_text(message, 4000))
        if type(trace) is types.TracebackType:
            open_frames(True)  # only builtin traceback, frame and code objects are touched
            try:
                line = _sandboxed_line(trace)
            finally:
                open_frames(False)
            outcome["error_message"] += f" (line {line})" if line else ""
    _send(outcome_fd, outcome)


def _send(fd, outcome):
    try:
        data = json.dumps(outcome).encode()
    except (TypeError, ValueError) as error:
        data = json.dumps({"ok": False, "value": None, "error_type": "TypeError",
                           "error_message": f"result could not be encoded: {error}",
                           "stdout": str(outcome.get("stdout", ""))}).encode()
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
    os._exit(0)


# ------------------------------------------------------------------------- supervisor side

def _no_ptrace():
    """Make the supervisor non-dumpable: nobody without CAP_SYS_PTRACE may trace it, read
    its memory or open its descriptors through /proc."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    except Exception:  # noqa: BLE001 - best effort; the result rule still holds
        pass


def _read_capped(fd, cap):
    chunks, size = [], 0
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks), False
        size += len(chunk)
        if size > cap:
            return b"", True
        chunks.append(chunk)


def _clean(raw):
    """Keep only the outcome fields, with the types the caller expects."""
    outcome = json.loads(raw)
    if not isinstance(outcome, dict) or not isinstance(outcome.get("ok"), bool):
        raise ValueError("outcome is not a dict with a boolean 'ok'")
    clean = {"ok": outcome["ok"], "value": outcome.get("value")}
    for key in ("error_type", "error_message"):
        value = outcome.get(key)
        clean[key] = None if value is None else str(value)
    clean["stdout"] = str(outcome.get("stdout") or "")[-OUTPUT_TAIL_CHARS:]
    return clean


def _failure(error_type, message):
    return {"ok": False, "value": None, "error_type": error_type, "error_message": message,
            "stdout": ""}


def main():
    chunks = []
    while True:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    request = json.loads(b"".join(chunks))
    os.chdir(request["workdir"])
    result_fd = int(request["result_fd"])
    cap = int(request["result_cap"])
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    _no_ptrace()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            os.close(result_fd)
            _worker(request, write_end)
        finally:
            os._exit(70)
    os.close(write_end)
    raw, too_big = _read_capped(read_end, cap)
    if too_big:
        os.kill(pid, signal.SIGKILL)
    _, status, usage = os.wait4(pid, 0)
    cpu = usage.ru_utime + usage.ru_stime
    if too_big:
        outcome = _failure("ResultTooLarge", f"the result exceeded {cap} bytes")
    elif os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu >= 0.9 * request["cpu_seconds"]):
            outcome = _failure("CPUTimeLimit", f"stopped after {request['cpu_seconds']} s of CPU time")
        else:
            outcome = _failure("Crashed", f"the code was killed by signal {signal.Signals(sig).name}")
    elif os.WEXITSTATUS(status) != 0:
        outcome = _failure("Crashed", f"the code exited with status {os.WEXITSTATUS(status)}")
    else:
        try:
            outcome = _clean(raw)
        except (ValueError, TypeError) as error:
            outcome = _failure("MalformedOutput", f"could not read the worker's outcome: {error}")
    data = (MARKER + json.dumps(outcome) + "\n").encode()
    view = memoryview(data)
    while view:
        view = view[os.write(result_fd, view):]
    os._exit(0)


if __name__ == "__main__":
    main()
