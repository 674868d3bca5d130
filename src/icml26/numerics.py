"""Portable CPU numerics: one code path for the math libraries on every x86-64 machine.

The stored outputs of the chapters are compared by nbval on other machines. Floating-point
results depend on which vector instructions a library picks at run time (AVX2 or AVX-512
kernels sum in a different order), so every execution path pins them *before* torch or numpy
is imported: the Makefile, the chapter runner, and each notebook's setup cell, so that a
reader's own run matches the stored one.

This module imports nothing heavy; call :func:`pin_cpu_numerics` first.
"""

from __future__ import annotations

import os
import sys

#: The fixed thread count of the stored runs (intra-op reductions depend on it).
THREADS = 2

#: What each library is pinned to: the AVX2 code path, which every x86-64 machine the book runs
#: on has. MKL (inside the torch wheel), oneDNN, ATen's own kernels, OpenBLAS (inside numpy and
#: scipy) and numpy's own SIMD loops each choose their kernels separately. MKL takes its
#: COMPATIBLE branch: its AVX2 branch is reproducible only among Intel processors (measured: torch
#: matmul's digest differs between an AMD EPYC and an Intel Xeon under AVX2,STRICT and agrees
#: under COMPATIBLE; CONTRIBUTING.md, section 5). It costs speed: a 512 x 512 matmul takes about
#: 3.3 times as long on one thread of the book's EPYC.
PINNED_ENVIRONMENT = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "MKL_CBWR": "COMPATIBLE",
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "DNNL_MAX_CPU_ISA": "AVX2",
    "OPENBLAS_CORETYPE": "Haswell",
    "OMP_NUM_THREADS": str(THREADS),
    "MKL_NUM_THREADS": str(THREADS),
    "OPENBLAS_NUM_THREADS": str(THREADS),
}

# numpy's own SIMD loops: the names of the AVX-512 targets it dispatches changed in numpy 2.4
# (grouped as X86_V4), and numpy complains about a name it does not dispatch.
_NUMPY_AVX512 = {
    "new": "X86_V4 AVX512_ICL AVX512_SPR",
    "old": "AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR",
}

#: Set ICML26_NUMERICS=native to let every library pick its widest kernels (faster on some
#: machines; the printed figures may then differ from the stored ones in the last digits).
OPT_OUT_VARIABLE = "ICML26_NUMERICS"


def pinned_environment() -> dict[str, str]:
    """The variables to set, or none when the reader opted out with ICML26_NUMERICS=native."""
    choice = os.environ.get(OPT_OUT_VARIABLE, "pinned")
    if choice not in ("pinned", "native"):
        raise ValueError(f"{OPT_OUT_VARIABLE} must be 'pinned' or 'native', got {choice!r}")
    if choice == "native":
        return {}
    return {**PINNED_ENVIRONMENT, "NPY_DISABLE_CPU_FEATURES": _numpy_avx512_names()}


def _numpy_avx512_names() -> str:
    """The AVX-512 dispatch targets of the installed numpy, read without importing it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        major, minor = (int(part) for part in version("numpy").split(".")[:2])
    except (PackageNotFoundError, ValueError):
        return _NUMPY_AVX512["new"]
    return _NUMPY_AVX512["new" if (major, minor) >= (2, 4) else "old"]


def pin_cpu_numerics() -> dict[str, str]:
    """Pin the CPU math libraries to one code path; return what was set.

    Must run before torch or numpy is imported (their kernels are chosen at import). Called
    again after the import with the same settings it does nothing. Called after an import
    *without* them (some notebook front ends import numpy before the first cell), it still sets
    the variables for the libraries not yet loaded and warns that the loaded ones follow this
    machine: the run works, but its last digits may differ from the stored outputs.
    """
    wanted = pinned_environment()
    late = [name for name in ("torch", "numpy") if name in sys.modules]
    differing = {k: v for k, v in wanted.items() if os.environ.get(k) != v}
    os.environ.update(wanted)
    if late and differing:
        import warnings

        warnings.warn(
            f"{' and '.join(late)} was imported before pin_cpu_numerics(), so its kernels follow this "
            f"machine; figures may differ from the stored ones in their last digits (restart the kernel "
            f"and run the setup cell first to pin them)", RuntimeWarning, stacklevel=2)
    return wanted


def probe() -> dict[str, str]:
    """Hash, bit for bit, ten seeded operations the chapters rely on (after pinning, unless opted out).

    Run it pinned and with ICML26_NUMERICS=native to see which libraries follow the machine's ISA.
    """
    import hashlib

    pin_cpu_numerics()
    import numpy as np
    import scipy.linalg
    import torch

    def digest(x) -> str:
        array = x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)
        return hashlib.sha1(np.ascontiguousarray(array).tobytes()).hexdigest()[:10]

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    a, b = torch.randn(257, 263), torch.randn(263, 129)
    conv, image = torch.nn.Conv2d(3, 16, 3), torch.randn(4, 3, 33, 33)
    gru, sequence = torch.nn.GRU(16, 32, batch_first=True), torch.randn(4, 20, 16)
    logits, long = torch.randn(64, 1000) * 3, torch.randn(1_000_003)
    x, v = rng.standard_normal((300, 300)), rng.standard_normal(100_003)
    return {
        "cpu capability": torch.backends.cpu.get_cpu_capability(), "threads": str(torch.get_num_threads()),
        "torch matmul": digest(a @ b), "torch conv2d": digest(conv(image)), "torch GRU": digest(gru(sequence)[0]),
        "torch softmax": digest(torch.softmax(logits, -1)), "torch sum": digest(long.sum()),
        "numpy dot": digest(x @ x), "numpy exp": digest(np.exp(v)), "numpy sum": digest(np.sum(v)),
        "numpy sin": digest(np.sin(v)), "scipy eigh": digest(scipy.linalg.eigh(x + x.T)[0]),
    }


#: The probe's digests under the pin, the same on the book's AMD EPYC (AVX2) and on an Intel Xeon
#: (AVX-512): tests/common/test_numerics.py fails when this machine's probe differs.
REFERENCE_PROBE = {
    "cpu capability": "AVX2", "threads": "2",
    "torch matmul": "b8c4092430", "torch conv2d": "d55d682639", "torch GRU": "0464c3bbe0",
    "torch softmax": "3014fbf70f", "torch sum": "fc019e5a19", "numpy dot": "469e02d47a",
    "numpy exp": "7eb3b290d6", "numpy sum": "e082af10d0", "numpy sin": "d880205cfd", "scipy eigh": "c16dd0e9bc",
}


if __name__ == "__main__":
    if sys.argv[1:] == ["--probe"]:
        for name, value in probe().items():
            print(f"{name:15s} {value}")
    else:  # the Makefile includes these lines (make exports them to every recipe)
        for name, value in pinned_environment().items():
            print(f"export {name} := {value}")
