"""Suite-wide pytest options.

`--device NAME` (or ICML26_TEST_DEVICE): the device handed to every test that takes the
`device` fixture (default `cpu`). Such tests are marked `device` automatically, so
`pytest tests -m device --device cuda` runs exactly the unit tests that can run on a GPU;
`make gpu-check` does that. Asking for a device this machine lacks is an error, not a skip.

The CPU math libraries are pinned (icml26.numerics) before anything imports torch or numpy, so a
bare `pytest` computes what `make unit` computes: the smoke-status tests pin figures of the pinned
code path.
"""

from __future__ import annotations

import os

from icml26.numerics import pin_cpu_numerics

pin_cpu_numerics()

import pytest  # noqa: E402


def pytest_addoption(parser):
    parser.addoption(
        "--device", default=os.environ.get("ICML26_TEST_DEVICE", "cpu"),
        help="device for tests that take the `device` fixture: cpu (default), cuda, cuda:N, mps",
    )


def pytest_configure(config):
    config.addinivalue_line("markers", "device: the test takes the `device` fixture (runs on --device; make gpu-check)")
    # The whole run's thread policy, once (the book's policy lives in resolve_device; no test module
    # sets threads at import).
    import torch

    from icml26.common.device import CPU_THREADS

    torch.set_num_threads(CPU_THREADS)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "device" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.device)


@pytest.fixture(scope="session")
def device(pytestconfig):
    """The torch.device named by --device; an unavailable one fails the session's tests loudly."""
    from icml26.common import resolve_device

    name = pytestconfig.getoption("--device")
    try:
        return resolve_device(name)
    except (ValueError, RuntimeError) as error:
        pytest.fail(f"--device {name}: {error}", pytrace=False)
