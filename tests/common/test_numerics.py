"""Portable numerics (icml26.numerics): the pin is set before torch, repeats bit for bit, and can be opted out of."""

import os
import subprocess
import warnings
import sys

import pytest

from icml26 import numerics


def _probe(extra_env):
    env = {k: v for k, v in os.environ.items() if k not in numerics.PINNED_ENVIRONMENT
           and k not in ("NPY_DISABLE_CPU_FEATURES", numerics.OPT_OUT_VARIABLE)}
    env.update(extra_env)
    run = subprocess.run([sys.executable, "-m", "icml26.numerics", "--probe"], capture_output=True, text=True,
                         env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    assert not run.stderr.strip(), f"the pinned settings made a library complain: {run.stderr}"
    return run.stdout


def test_pinned_runs_repeat_bit_for_bit_on_the_avx2_path():
    first, second = _probe({}), _probe({})
    assert first == second
    assert "cpu capability  AVX2" in first and "threads         2" in first


def test_the_pinned_probe_prints_the_reference_digests_of_both_cpu_vendors():
    """The reference digests were printed alike by an AMD EPYC (AVX2) and an Intel Xeon (AVX-512)
    under the pin; a machine whose probe differs would not reproduce the stored outputs."""
    printed = {line[:15].strip(): line[15:].strip() for line in _probe({}).splitlines()}
    differing = {k: (printed.get(k), v) for k, v in numerics.REFERENCE_PROBE.items() if printed.get(k) != v}
    assert not differing, f"probe differs from the reference (this machine, reference): {differing}"


def test_the_opt_out_sets_nothing_and_bad_values_are_refused(monkeypatch):
    monkeypatch.setenv(numerics.OPT_OUT_VARIABLE, "native")
    assert numerics.pinned_environment() == {}
    monkeypatch.setenv(numerics.OPT_OUT_VARIABLE, "fast")
    with pytest.raises(ValueError, match="must be 'pinned' or 'native'"):
        numerics.pinned_environment()


def test_pinning_after_torch_with_other_settings_warns_and_still_sets(monkeypatch):
    import torch  # noqa: F401  (already imported by the test session)

    monkeypatch.delenv(numerics.OPT_OUT_VARIABLE, raising=False)
    monkeypatch.setenv("MKL_CBWR", "AUTO")
    with pytest.warns(RuntimeWarning, match="imported before pin_cpu_numerics"):
        numerics.pin_cpu_numerics()
    assert os.environ["MKL_CBWR"] == "COMPATIBLE"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        numerics.pin_cpu_numerics()  # same settings again: silent


def test_makefile_lines_export_every_setting():
    run = subprocess.run([sys.executable, "-m", "icml26.numerics"], capture_output=True, text=True, timeout=60)
    lines = run.stdout.splitlines()
    assert "export MKL_CBWR := COMPATIBLE" in lines and "export ATEN_CPU_CAPABILITY := avx2" in lines
    assert any(line.startswith("export NPY_DISABLE_CPU_FEATURES := ") for line in lines)
