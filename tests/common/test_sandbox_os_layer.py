"""The operating-system layer alone holds: unrestricted Python inside bwrap / unshare.

These tests run raw `python -I -c CODE` inside the same isolation command `run_sandboxed`
uses, *without* the in-process checks (no audit hook, no import guard, no rlimits), i.e.
as if every Python-level defence had been bypassed. Plus: the refusal when no isolation is
available, and the documented opt-out.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

from icml26.common import SandboxError, run_sandboxed
from icml26.common import sandbox as sb

BACKENDS = [pytest.param(b, marks=pytest.mark.skipif(sb._backend_works(b) is not None,
                                                     reason=str(sb._backend_works(b))))
            for b in ("bwrap", "unshare")]


def raw(backend, code, wall=15):
    """Run unrestricted `code` inside the OS layer; return (returncode, parsed last line)."""
    private = tempfile.mkdtemp(prefix="icml26-raw-")
    work = os.path.join(private, "work")
    os.mkdir(work, 0o700)
    if os.geteuid() == 0:
        os.chown(work, sb.SANDBOX_UID, sb.SANDBOX_UID)
    code = f"import os\nos.chdir({sb._inside(backend, work)!r})\n" + code
    cmd = sb._isolated_command(backend, [sys.executable, "-I", "-c", code], work,
                               dict(sb._CHILD_ENV))
    process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd="/",
                               env=dict(sb._CHILD_ENV), start_new_session=True)
    try:
        out, err = process.communicate(timeout=wall)
    except subprocess.TimeoutExpired:
        sb._kill_tree(process)
        return None, None
    finally:
        subprocess.run(["rm", "-rf", private], check=False)
    lines = out.decode(errors="replace").strip().splitlines()
    assert lines, err.decode(errors="replace")
    return process.returncode, json.loads(lines[-1])


TRY = (
    "import json, os, sys\n"
    "def attempt(fn):\n"
    "    try:\n"
    "        fn()\n"
    "        return 'succeeded'\n"
    "    except BaseException as e:\n"
    "        return type(e).__name__\n"
)


@pytest.mark.parametrize("backend", BACKENDS)
def test_identity_unprivileged_no_caps_no_new_privs(backend):
    code = TRY + (
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "nnp = libc.prctl(39, 0, 0, 0, 0)\n"  # PR_GET_NO_NEW_PRIVS
        "caps = [libc.prctl(23, c, 0, 0, 0) for c in range(41)]\n"  # PR_CAPBSET_READ
        "print(json.dumps({'uid': os.getuid(), 'euid': os.geteuid(), 'gid': os.getgid(),\n"
        "  'groups': os.getgroups(), 'nnp': nnp, 'bounding': sum(c == 1 for c in caps),\n"
        "  'setuid0': attempt(lambda: os.setuid(0)), 'chown': attempt(lambda: os.chown('.', 0, 0))}))\n"
    )
    rc, facts = raw(backend, code)
    assert rc == 0
    assert facts["uid"] == facts["euid"] == sb.SANDBOX_UID and facts["gid"] == sb.SANDBOX_UID
    assert facts["nnp"] == 1 and facts["setuid0"] != "succeeded" and facts["chown"] != "succeeded"
    if os.geteuid() == 0:  # setpriv emptied the bounding set too
        assert facts["bounding"] == 0 and facts["groups"] in ([], [sb.SANDBOX_UID])


@pytest.mark.parametrize("backend", BACKENDS)
def test_file_system_is_read_only_outside_the_folder_and_tmp(backend, tmp_path):
    os.chmod(tmp_path, 0o777)
    canary = tmp_path / "canary.txt"
    canary.write_text("untouched")
    os.chmod(canary, 0o666)
    venv = sys.prefix
    code = TRY + (
        f"canary, venv = {str(canary)!r}, {venv!r}\n"
        "def write_canary():\n"
        "    with open(canary, 'w') as f: f.write('owned')\n"
        "def write_here():\n"
        "    with open('here.txt', 'w') as f: f.write('ok')\n"
        "def write_tmp():\n"
        "    with open('/tmp/t.txt', 'w') as f: f.write('ok')\n"
        "print(json.dumps({\n"
        "  'canary': attempt(write_canary),\n"
        "  'venv_file': attempt(lambda: open(os.path.join(venv, 'owned'), 'w')),\n"
        "  'mkdir': attempt(lambda: os.mkdir(os.path.join(venv, 'made'))),\n"
        "  'utime': attempt(lambda: os.utime(venv, (1, 1))),\n"
        "  'xattr': attempt(lambda: os.setxattr(venv, 'user.x', b'1')),\n"
        "  'usr': attempt(lambda: open('/usr/owned', 'w')),\n"
        "  'mknod': attempt(lambda: os.mknod('mem', 0o20666, os.makedev(1, 1))),\n"
        "  'here': attempt(write_here), 'tmp': attempt(write_tmp)}))\n"
    )
    rc, facts = raw(backend, code)
    assert rc == 0 and canary.read_text() == "untouched"
    for key in ("venv_file", "mkdir", "utime", "xattr", "usr", "mknod"):
        assert facts[key] != "succeeded", key
    assert facts["here"] == "succeeded" and facts["tmp"] == "succeeded"
    assert not os.path.exists(os.path.join(venv, "made"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_host_secrets_or_password_database_visible(backend):
    code = TRY + (
        "import pwd\n"
        "print(json.dumps({'passwd': os.path.exists('/etc/passwd'),\n"
        "  'users': [p.pw_name for p in pwd.getpwall()], 'root_home': os.path.exists('/root/.bashrc'),\n"
        f"  'project': os.path.exists({os.path.abspath(__file__)!r})}}))\n"
    )
    rc, facts = raw(backend, code)
    assert rc == 0
    if backend == "bwrap":  # a fresh root: only /usr, the linker cache and Python
        assert not facts["passwd"] and facts["users"] == [] and not facts["project"]
    assert not facts["root_home"] or os.geteuid() != 0 or backend == "unshare"


@pytest.mark.parametrize("backend", BACKENDS)
def test_network_namespace_has_no_way_out(backend):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.setblocking(False)
    port = server.getsockname()[1]
    code = TRY + (
        "import socket\n"
        "def connect():\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
        "def outside():\n"
        "    socket.create_connection(('10.0.0.1', 80), timeout=2)\n"
        "print(json.dumps({'loopback': attempt(connect), 'outside': attempt(outside),\n"
        "  'interfaces': [n for _, n in socket.if_nameindex()]}))\n"
    )
    try:
        rc, facts = raw(backend, code)
        time.sleep(0.1)
        with pytest.raises(BlockingIOError):
            server.accept()
    finally:
        server.close()
    assert rc == 0 and facts["loopback"] != "succeeded" and facts["outside"] != "succeeded"
    assert set(facts["interfaces"]) <= {"lo"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_caller_is_invisible_to_signals_and_pidfds(backend):
    hits = []
    previous = signal.signal(signal.SIGUSR1, lambda *_: hits.append(1))
    me = os.getpid()
    code = TRY + (
        "import signal\n"
        f"print(json.dumps({{'kill': attempt(lambda: os.kill({me}, signal.SIGUSR1)),\n"
        f"  'killpg': attempt(lambda: os.killpg({os.getpgrp()}, signal.SIGUSR1)),\n"
        f"  'pidfd': attempt(lambda: os.pidfd_open({me})), 'pid': os.getpid()}}))\n"
    )
    try:
        rc, facts = raw(backend, code)
        time.sleep(0.1)
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert rc == 0 and not hits
    assert facts["kill"] != "succeeded" and facts["killpg"] != "succeeded"
    assert facts["pidfd"] != "succeeded" and facts["pid"] < 10  # its own PID namespace


@pytest.mark.parametrize("backend", BACKENDS)
def test_setsid_grandchild_dies_with_the_sandbox(backend):
    tag = f"icml26-raw-orphan-{os.getpid()}-{time.monotonic_ns()}"
    code = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        f"        os.execv('/bin/sleep', ['sleep', '60', {tag!r}])\n"
        "    os._exit(0)\n"
        "time.sleep(60)\n"
    )
    started = time.monotonic()
    rc, _ = raw(backend, code, wall=2)
    assert rc is None and time.monotonic() - started < 10
    deadline = time.monotonic() + 5
    while _alive(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(tag)


def _alive(tag):
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if tag.encode() in handle.read():
                    return True
        except OSError:
            pass
    return False


def test_full_stack_uses_the_os_layer_and_numpy_imports():
    if sb._backend_works("bwrap") is not None and sb._backend_works("unshare") is not None:
        pytest.skip("no OS isolation layer on this machine")
    result = run_sandboxed("import numpy as np\nresult = float(np.linalg.norm(np.ones(4)))")
    assert result.ok and result.value == 2.0 and result.isolation in ("bwrap", "unshare")


@pytest.mark.parametrize("backend", BACKENDS)
def test_each_backend_runs_a_normal_program_with_limits(backend):
    ok = run_sandboxed("def f(x):\n    return sum(range(x))", call="f", args=[10], isolation=backend,
                       allowed_imports=())
    assert ok.ok and ok.value == 45 and ok.isolation == backend
    mem = run_sandboxed("b = bytearray(2 * 1024 ** 3)", memory_mb=256, isolation=backend,
                        allowed_imports=())
    assert not mem.ok and mem.error_type == "MemoryError"
    cpu = run_sandboxed("while True:\n    pass", cpu_seconds=1, wall_seconds=30, isolation=backend,
                        allowed_imports=())
    assert not cpu.ok and cpu.error_type == "CPUTimeLimit"


def test_refuses_without_isolation_and_names_what_to_install(monkeypatch):
    monkeypatch.setattr(sb, "_backend_works", lambda backend: f"{backend} is missing")
    monkeypatch.delenv(sb.ISOLATION_ENV, raising=False)
    with pytest.raises(sb.SandboxUnavailable, match="bubblewrap") as info:
        run_sandboxed("result = 1")
    assert isinstance(info.value, SandboxError) and "isolation='none'" in str(info.value)


def test_explicit_opt_out_runs_in_process_checks_only(monkeypatch):
    monkeypatch.setattr(sb, "_backend_works", lambda backend: f"{backend} is missing")
    result = run_sandboxed("import os", isolation="none")
    assert not result.ok and result.error_type == "ImportError" and result.isolation == "none"
    monkeypatch.setenv(sb.ISOLATION_ENV, "none")
    result = run_sandboxed("result = 2", allowed_imports=())
    assert result.ok and result.value == 2 and result.isolation == "none"
    with pytest.raises(ValueError, match="isolation"):
        run_sandboxed("result = 1", isolation="docker")
