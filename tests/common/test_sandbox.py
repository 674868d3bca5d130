"""The sandbox must stop hostile code with a clear, structured error while the caller survives."""

import os

import pytest

from icml26.common import SandboxError, run_sandboxed

SUBCLASS_TRICK = (
    "wrap = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close'][0]\n"
    "env = wrap.__init__.__globals__\n"
)


def test_well_behaved_code_returns_its_value_and_output():
    result = run_sandboxed("import numpy as np\nprint('hi')\nresult = np.arange(4) ** 2")
    assert result.ok and result.value == [0, 1, 4, 9] and result.stdout == "hi\n"


def test_a_named_function_is_called_with_json_arguments():
    result = run_sandboxed("def solve(a, b):\n    return {'sum': a + b}", call="solve", args=[2, 3])
    assert result.ok and result.value == {"sum": 5}


def test_exceptions_in_the_code_come_back_structured():
    result = run_sandboxed("x = 1\ny = x / 0")
    assert not result.ok and result.error_type == "ZeroDivisionError" and "line 2" in result.error_message
    with pytest.raises(SandboxError, match="ZeroDivisionError"):
        result.raise_for_error()


def test_infinite_loop_is_stopped_by_the_cpu_limit():
    result = run_sandboxed("while True:\n    pass", cpu_seconds=1, wall_seconds=10)
    assert not result.ok and result.error_type == "CPUTimeLimit"


def test_sleeping_forever_is_stopped_by_the_wall_clock():
    result = run_sandboxed("import time\ntime.sleep(60)", allowed_imports=["time"], wall_seconds=1)
    assert not result.ok and result.error_type == "WallTimeLimit" and result.seconds < 10


def test_huge_allocation_is_a_memory_error():
    result = run_sandboxed("block = bytearray(8 * 1024 ** 3)", memory_mb=256)
    assert not result.ok and result.error_type == "MemoryError" and "256 MB" in result.error_message


@pytest.mark.parametrize("code", [
    "import os\nos.system('echo owned')",
    "import subprocess\nsubprocess.run(['true'])",
    "import socket",
    "from os import path",
    "import importlib",
])
def test_imports_outside_the_allow_list_are_refused(code):
    result = run_sandboxed(code)
    assert not result.ok and result.error_type == "ImportError" and "not allowed" in result.error_message


def test_dunder_import_trick_is_refused():
    result = run_sandboxed("__import__('os').system('echo owned')")
    assert not result.ok and "not allowed" in result.error_message


def test_subclass_walk_to_os_system_is_blocked_by_the_audit_hook():
    result = run_sandboxed(SUBCLASS_TRICK + "env['system']('echo owned > /tmp/owned')")
    assert not result.ok and result.error_type == "SandboxViolation"
    assert "os.system" in result.error_message
    assert not os.path.exists("/tmp/owned")


def test_fork_bomb_is_blocked():
    result = run_sandboxed(SUBCLASS_TRICK + "while True:\n    env['fork']()", wall_seconds=10)
    assert not result.ok and result.error_type == "SandboxViolation" and "os.fork" in result.error_message


def test_reading_outside_the_sandbox_is_blocked():
    result = run_sandboxed("result = open('/etc/passwd').read()")
    assert not result.ok and result.error_type == "SandboxViolation" and "/etc/passwd" in result.error_message


def test_writing_outside_the_sandbox_is_blocked_but_its_own_folder_is_fine(tmp_path):
    target = tmp_path / "escape.txt"
    result = run_sandboxed(f"open({str(target)!r}, 'w').write('x')")
    assert not result.ok and result.error_type == "SandboxViolation" and not target.exists()
    inside = run_sandboxed("open('note.txt', 'w').write('ok')\nresult = open('note.txt').read()")
    assert inside.ok and inside.value == "ok"


def test_network_is_blocked_even_with_the_real_import_function():
    real_import = "env['__builtins__']['__import__']"
    result = run_sandboxed(SUBCLASS_TRICK + f"{real_import}('socket').create_connection(('127.0.0.1', 9))")
    # the real `builtins.__import__` is itself the guard inside the sandbox now
    assert not result.ok and result.error_type in ("ImportError", "SandboxViolation")
    assert "socket" in result.error_message


def test_native_code_loading_is_blocked():
    code = SUBCLASS_TRICK + "env['__builtins__']['__import__']('ctypes').CDLL(None).system(b'true')"
    result = run_sandboxed(code)
    assert not result.ok and result.error_type in ("ImportError", "SandboxViolation")
    assert "ctypes" in result.error_message


def test_bad_arguments_are_rejected_before_anything_runs():
    with pytest.raises(TypeError, match="code must be a str"):
        run_sandboxed(b"print(1)")
    with pytest.raises(ValueError, match="call must be a function name"):
        run_sandboxed("x=1", call="not a name")
    with pytest.raises(ValueError, match="cpu_seconds"):
        run_sandboxed("x=1", cpu_seconds=0)
    with pytest.raises(ValueError, match="allowed_imports"):
        run_sandboxed("x=1", allowed_imports=["os.path"])
