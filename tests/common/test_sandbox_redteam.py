"""Red team: escape attempts against `run_sandboxed`, each with a harmless canary.

Every test runs hostile code through the public API and asserts that (a) the attempt did not
work (the canary is untouched) and (b) the caller got a structured `SandboxResult` back.
Whichever layer stops it (OS isolation, limits, result channel, caller, in-process checks)
is fine here; `test_sandbox_os_layer.py` shows the OS layer alone holds.
"""

import json
import os
import signal
import socket
import time

import pytest

from icml26.common import SandboxResult, run_sandboxed
from icml26.common._sandbox_child import MARKER
from icml26.common.sandbox import MAX_OUTPUT_BYTES, _backend_works

pytestmark = pytest.mark.skipif(
    _backend_works("bwrap") is not None and _backend_works("unshare") is not None,
    reason="no OS isolation layer on this machine (install bubblewrap)",
)

# The classic way out of a restricted namespace: the `os` module's globals via a subclass.
OS = (
    "os_ = [c for c in ().__class__.__base__.__subclasses__()"
    " if c.__name__ == '_wrap_close'][0].__init__.__globals__\n"
    "sys_ = os_['sys']\n"
)
NOTHING = ()  # no allowed imports: the fastest child


def run(code, **kw):
    kw.setdefault("allowed_imports", NOTHING)
    kw.setdefault("wall_seconds", 10)
    result = run_sandboxed(code, **kw)
    assert isinstance(result, SandboxResult)
    assert isinstance(result.stdout, str) and isinstance(result.raw_output, str)
    assert result.error_type is None or isinstance(result.error_type, str)
    assert result.isolation in ("bwrap", "unshare")
    return result


def failed(result):
    return not result.ok and isinstance(result.error_type, str) and result.error_message


@pytest.fixture
def canary(tmp_path):
    """A host directory the sandbox must not touch, with one world-readable file."""
    os.chmod(tmp_path, 0o777)
    secret = tmp_path / "secret.txt"
    secret.write_text("canary-secret")
    os.chmod(secret, 0o666)
    return tmp_path


# ------------------------------------------------------------------ the file system

def test_write_file_outside_the_folder_with_os_open(canary):
    target = canary / "owned.txt"
    result = run(OS + f"fd = os_['open']({str(target)!r}, 0o101)\nos_['write'](fd, b'x')")
    assert failed(result) and not target.exists()


def test_write_file_outside_the_folder_with_builtin_open(canary):
    target = canary / "owned.txt"
    result = run(f"open({str(target)!r}, 'w').write('x')")
    assert failed(result) and not target.exists()


def test_overwrite_world_writable_host_file(canary):
    secret = canary / "secret.txt"
    result = run(OS + f"fd = os_['open']({str(secret)!r}, 1)\nos_['write'](fd, b'owned')")
    assert failed(result) and secret.read_text() == "canary-secret"


def test_read_world_readable_host_file(canary):
    result = run(OS + f"fd = os_['open']({str(canary / 'secret.txt')!r}, 0)\n"
                 "result = os_['read'](fd, 100).decode()")
    assert failed(result) and "canary-secret" not in repr(result)


def test_read_password_database_file():
    result = run(OS + "fd = os_['open']('/etc/passwd', 0)\nresult = os_['read'](fd, 4096).decode()")
    assert failed(result) and "root:" not in repr(result.value)


def test_read_project_source_outside_the_folder():
    target = os.path.abspath(__file__)
    result = run(f"result = open({target!r}).read()")
    assert failed(result) and result.value is None


def test_mkdir_outside_the_folder(canary):
    target = canary / "made"
    result = run(OS + f"os_['mkdir']({str(target)!r})")
    assert failed(result) and not target.exists()


def test_utime_outside_the_folder(canary):
    secret = canary / "secret.txt"
    os.utime(secret, (1_000_000, 1_000_000))
    result = run(OS + f"os_['utime']({str(secret)!r}, (2_000_000, 2_000_000))")
    assert failed(result) and secret.stat().st_mtime == 1_000_000


def test_xattr_outside_the_folder(canary):
    secret = canary / "secret.txt"
    result = run(OS + f"os_['setxattr']({str(secret)!r}, 'user.owned', b'1')")
    assert failed(result)
    try:
        assert b"1" != os.getxattr(secret, "user.owned")
    except OSError:
        pass  # no such attribute (or no xattr support): untouched


def test_mknod_device_node():
    code = OS + ("os_['mknod']('mem', 0o20666, os_['makedev'](1, 1))\n"
                 "result = open('mem', 'rb').read(16)")
    result = run(code)
    assert failed(result) and result.value is None


def test_proc_self_mem_write():
    code = OS + "fd = os_['open']('/proc/self/mem', 2)\nresult = 'opened'"
    result = run(code)
    assert failed(result) and result.value != "opened"


# ------------------------------------------------------------- processes and signals

def test_os_system_creates_no_file(canary):
    target = canary / "system.txt"
    result = run(OS + f"os_['system']('touch {target}')")
    assert failed(result) and not target.exists()


def test_posix_spawn_creates_no_file(canary):
    target = canary / "spawn.txt"
    result = run(OS + f"os_['posix_spawn']('/usr/bin/touch', ['touch', {str(target)!r}], {{}})")
    assert failed(result) and not target.exists()


def test_fork_bomb_is_contained():
    result = run(OS + "while True:\n    os_['fork']()", wall_seconds=5)
    assert failed(result)


def test_orphaned_setsid_grandchild_does_not_outlive_the_wall_limit():
    tag = f"icml26-orphan-{os.getpid()}-{time.monotonic_ns()}"
    code = OS + (
        "if os_['fork']() == 0:\n"
        "    os_['setsid']()\n"
        f"    os_['execv']('/bin/sleep', ['sleep', '30', {tag!r}])\n"
        "while True:\n    pass\n"
    )
    started = time.monotonic()
    result = run(code, wall_seconds=2, cpu_seconds=10)
    assert failed(result) and time.monotonic() - started < 10
    time.sleep(0.2)
    assert not _processes_with(tag)


def _processes_with(tag):
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if tag.encode() in handle.read():
                    found.append(pid)
        except OSError:
            pass
    return found


@pytest.fixture
def usr1_flag():
    hits = []
    previous = signal.signal(signal.SIGUSR1, lambda *_: hits.append(1))
    yield hits
    signal.signal(signal.SIGUSR1, previous)


def test_kill_the_caller(usr1_flag):
    result = run(OS + f"os_['kill']({os.getpid()}, {int(signal.SIGUSR1)})")
    time.sleep(0.1)
    assert failed(result) and not usr1_flag


def test_killpg_the_caller(usr1_flag):
    result = run(OS + f"os_['killpg']({os.getpgrp()}, {int(signal.SIGUSR1)})")
    time.sleep(0.1)
    assert failed(result) and not usr1_flag


def test_pidfd_signal_to_the_caller(usr1_flag):
    code = OS + (
        f"fd = os_['pidfd_open']({os.getpid()})\n"
        "sig = sys_.modules.get('signal') or sys_.modules['_signal']\n"
        f"sig.pidfd_send_signal(fd, {int(signal.SIGUSR1)})\n"
    )
    result = run(code)
    time.sleep(0.1)
    assert failed(result) and not usr1_flag


def test_become_root_again():
    result = run(OS + "os_['setuid'](0)\nresult = os_['getuid']()")
    assert failed(result) and result.value != 0


def test_threads_are_refused():
    code = OS + "t = sys_.modules['_thread']\nt.start_new_thread(print, ('x',))\nresult = 'started'"
    result = run(code)
    assert failed(result) and result.value != "started"


# ---------------------------------------------------------------------- networking

@pytest.fixture
def listener():
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    yield server
    server.close()


def _accepted(server):
    try:
        server.accept()[0].close()
        return True
    except BlockingIOError:
        return False


def test_loopback_connection_with_the_socket_module(listener):
    port = listener.getsockname()[1]
    code = OS + ("s = sys_.modules['importlib._bootstrap']._gcd_import('_socket')\n"
                 f"c = s.socket(2, 1)\nc.connect(('127.0.0.1', {port}))\nresult = 'connected'")
    result = run(code)
    time.sleep(0.1)
    assert failed(result) and not _accepted(listener)


def test_loopback_connection_through_the_real_import(listener):
    port = listener.getsockname()[1]
    code = OS + (f"sock = os_['__builtins__']['__import__']('socket')\n"
                 f"sock.create_connection(('127.0.0.1', {port}), timeout=2)\nresult = 'connected'")
    result = run(code)
    time.sleep(0.1)
    assert failed(result) and not _accepted(listener)


# ------------------------------------------------------------ forging the result

FORGED = MARKER + json.dumps({"ok": True, "value": "forged", "error_type": None,
                              "error_message": None, "stdout": ""})


def test_forged_marker_printed_then_raise():
    result = run(f"print({FORGED!r})\nraise ValueError('real failure')")
    assert not result.ok and result.error_type == "ValueError" and result.value != "forged"


def test_forged_marker_written_to_fd1_then_raise():
    result = run(OS + f"os_['write'](1, b'\\n' + {FORGED.encode()!r} + b'\\n')\n"
                 "raise ValueError('real failure')")
    assert not result.ok and result.error_type == "ValueError" and result.value != "forged"


def test_forged_marker_from_del_at_shutdown():
    code = OS + (
        "class Ghost:\n"
        "    def __del__(self):\n"
        f"        os_['write'](1, b'\\n' + {FORGED.encode()!r} + b'\\n')\n"
        "keep = Ghost()\n"
        "sys_.modules['__ghost__'] = keep\n"
        "raise ValueError('real failure')\n"
    )
    result = run(code)
    assert not result.ok and result.value != "forged"


def test_forged_marker_before_exit_zero():
    code = OS + f"os_['write'](1, b'\\n' + {FORGED.encode()!r} + b'\\n')\nos_['_exit'](0)"
    result = run(code)
    assert not result.ok and result.value != "forged"


def test_forged_marker_before_exit_nonzero():
    code = OS + f"os_['write'](1, b'\\n' + {FORGED.encode()!r} + b'\\n')\nos_['_exit'](3)"
    result = run(code)
    assert not result.ok and result.value != "forged" and result.error_type == "Crashed"


def test_forged_marker_sprayed_on_every_descriptor_then_fail():
    code = OS + (
        "for fd in range(3, 64):\n"
        "    try:\n"
        f"        os_['write'](fd, b'\\n' + {FORGED.encode()!r} + b'\\n')\n"
        "    except Exception:\n"
        "        pass\n"
        "raise ValueError('real failure')\n"
    )
    result = run(code)
    assert not result.ok and result.value != "forged"


def test_forged_marker_then_cpu_limit():
    code = OS + f"os_['write'](1, b'\\n' + {FORGED.encode()!r} + b'\\n')\nwhile True:\n    pass"
    result = run(code, cpu_seconds=1, wall_seconds=30)
    assert not result.ok and result.error_type == "CPUTimeLimit"


# ------------------------------------------------------------ breaking the caller

def test_invalid_utf8_on_stdout():
    result = run(OS + "os_['write'](1, b'\\xff\\xfe\\xc3(')\nresult = 7")
    assert result.ok and result.value == 7 and "\ufffd" in result.raw_output


def test_invalid_utf8_on_stderr_then_crash():
    result = run(OS + "os_['write'](2, b'\\xff\\xfe\\xc3(')\nos_['_exit'](5)")
    assert failed(result) and result.error_type == "Crashed" and "\ufffd" in result.raw_output


def test_huge_raw_output_is_capped():
    code = OS + "chunk = b'x' * 65536\nwhile True:\n    os_['write'](1, chunk)"
    started = time.monotonic()
    result = run(code, wall_seconds=20)
    assert failed(result) and result.error_type == "OutputLimit"
    assert len(result.raw_output) <= MAX_OUTPUT_BYTES and time.monotonic() - started < 15


def test_huge_printed_output_is_truncated():
    result = run("for _ in range(3000):\n    print('y' * 10000)\nresult = 1")
    assert result.ok and len(result.stdout) <= 65536


def test_huge_result_is_refused():
    result = run("result = 'z' * (40 * 1024 * 1024)", memory_mb=1024)
    assert failed(result) and result.error_type == "ResultTooLarge" and result.value is None


def test_hostile_exception_message():
    code = "class E(Exception):\n    def __str__(self):\n        raise RuntimeError('no')\nraise E()"
    result = run(code)
    assert failed(result)


def test_system_exit_is_structured():
    result = run("raise SystemExit(0)")
    assert failed(result) and result.error_type == "SystemExit"


# -------------------------------------------------- reaching the guard's internals

def test_guard_closure_globals_and_wrapped_hold_no_real_import():
    code = (
        "imp = __builtins__['__import__'] if isinstance(__builtins__, dict) else __builtins__.__import__\n"
        "found = []\n"
        "for cell in (imp.__closure__ or ()):\n"
        "    v = cell.cell_contents\n"
        "    if callable(v) and getattr(v, '__name__', '') == '__import__' and v is not imp:\n"
        "        found.append(v)\n"
        "for v in imp.__globals__.values():\n"
        "    if callable(v) and getattr(v, '__name__', '') == '__import__':\n"
        "        found.append(v)\n"
        "found += [getattr(imp, '__wrapped__', None)] if hasattr(imp, '__wrapped__') else []\n"
        "for f in found:\n"
        "    f('posix').system('true')\n"
        "result = len(found)\n"
    )
    result = run(code)
    assert result.ok and result.value == 0


def test_real_builtins_import_through_builtin_self():
    result = run("b = print.__self__\nb.__import__('posix').system('true')\nresult = 'escaped'")
    assert failed(result) and result.value != "escaped"


def test_loader_and_spec_are_not_handed_over():
    code = ("names = [n for n in ('__loader__', '__spec__') if n in __builtins__]\n"
            "real = print.__self__\n"
            "names += [n for n in ('__loader__', '__spec__') if hasattr(real, n)]\n"
            "result = names")
    result = run(code)
    assert result.ok and result.value == []


def test_builtin_importer_from_subclasses_loads_a_subinterpreter_module():
    code = (
        "bi = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'BuiltinImporter'][0]\n"
        "m = bi.load_module('_xxsubinterpreters')\n"
        "i = m.create()\n"
        "m.run_string(i, 'import os; os.system(\"true\")')\n"
        "result = 'escaped'\n"
    )
    result = run(code)
    assert failed(result) and result.value != "escaped"


def test_subinterpreter_through_the_real_import_machinery():
    code = OS + (
        "m = sys_.modules['importlib._bootstrap']._gcd_import('_xxsubinterpreters')\n"
        "i = m.create()\n"
        "m.run_string(i, 'import os; os.system(\"true\")')\n"
        "result = 'escaped'\n"
    )
    result = run(code)
    assert failed(result) and result.value != "escaped"


def test_password_database_module():
    code = OS + (
        "m = sys_.modules['importlib._bootstrap']._gcd_import('pwd')\n"
        "result = [p[0] for p in m.getpwall()]\n"
    )
    result = run(code)
    assert failed(result) and result.value is None


def test_gc_object_walk_to_the_audit_hook():
    code = OS + (
        "gc = sys_.modules['importlib._bootstrap']._gcd_import('gc')\n"
        "hooks = [o for o in gc.get_objects() if getattr(o, '__name__', '') == 'hook']\n"
        "result = len(hooks)\n"
    )
    result = run(code)
    assert failed(result) and result.value is None


def test_traceback_frame_walk_to_the_audit_hook():
    code = OS + (
        "try:\n"
        "    os_['system']('true')\n"
        "except Exception as e:\n"
        "    tb = e.__traceback__\n"
        "    while tb.tb_next:\n"
        "        tb = tb.tb_next\n"
        "    frame = tb.tb_frame\n"
        "    frame.f_globals.clear()\n"
        "    result = sorted(frame.f_locals)\n"
    )
    result = run(code)
    assert failed(result) and result.value is None


def test_generator_frame_walk_to_the_child_main():
    code = (
        "def gen():\n"
        "    yield 1\n"
        "g = gen()\n"
        "f = g.gi_frame\n"
        "result = sorted(f.f_globals)\n"
    )
    result = run(code)
    assert failed(result) and result.value is None


def test_getframe_walk_to_the_child_main():
    # `sys._getframe` never hands out the child's own frames ...
    result = run(OS + "f = sys_._getframe(1)\nresult = sorted(f.f_locals)")
    assert failed(result) and result.value is None
    # ... and walking `f_back` from the code's own frame ends at the runner thread's bottom
    # frame: the supervisor's and worker's `main`, the hook and the guard are not below it.
    walk = OS + ("f, names = sys_._getframe(0), []\n"
                 "while f is not None:\n"
                 "    names.append(f.f_code.co_name)\n"
                 "    f = f.f_back\n"
                 "result = names\n")
    result = run(walk)
    assert result.ok and result.value[-1] == "_runner"
    assert not {"main", "_worker", "hook", "__import__"} & set(result.value)


def test_settrace_to_catch_trusted_frames():
    result = run(OS + "sys_.settrace(lambda *a: None)\nresult = 'tracing'")
    assert failed(result) and result.value != "tracing"


def test_ctypes_already_loaded_by_numpy():
    code = (
        "import numpy\n" + OS +
        "ct = sys_.modules['ctypes']\n"
        "ct.CDLL(None).system(b'true')\n"
        "result = 'escaped'\n"
    )
    result = run(code, allowed_imports=["numpy"])
    assert failed(result) and result.value != "escaped"


def test_marshal_crafted_code_object():
    code = OS + (
        "m = sys_.modules['marshal']\n"
        "c = m.loads(m.dumps(compile('1', 'x', 'eval')))\n"
        "result = 'loaded'\n"
    )
    result = run(code)
    assert failed(result) and result.value != "loaded"


def test_raising_own_rlimits():
    code = OS + ("r = sys_.modules.get('resource') or os_['__builtins__']['__import__']('resource')\n"
                 "r.setrlimit(r.RLIMIT_CPU, (1000, 1000))\nresult = 'raised'")
    result = run(code)
    assert failed(result) and result.value != "raised"


def test_numpy_stride_tricks_memory_write():
    # Write far outside the array's buffer: in-process checks cannot see it; whatever it
    # corrupts, the caller gets a structured failure and nothing outside the sandbox changes.
    code = (
        "import numpy as np\n"
        "from numpy.lib.stride_tricks import as_strided\n"
        "a = np.zeros(1, dtype=np.uint8)\n"
        "view = as_strided(a, shape=(1 << 20,), strides=(4096,))\n"
        "view[:] = 0xCC\n"
        "result = 'survived'\n"
    )
    result = run(code, allowed_imports=["numpy"])
    assert failed(result) and result.value != "survived"


def test_symlink_in_the_folder_to_a_host_file(canary):
    secret = canary / "secret.txt"
    result = run(OS + f"os_['symlink']({str(secret)!r}, 'link')\nresult = open('link').read()")
    assert failed(result) and "canary-secret" not in repr(result)


def test_recursion_bomb_is_structured():
    result = run("def f(n):\n    return f(n + 1)\nresult = f(0)")
    assert failed(result) and result.error_type == "RecursionError"


def test_self_referencing_result_is_structured():
    result = run("a = []\na.append(a)\nresult = a")
    assert failed(result) and result.value is None
