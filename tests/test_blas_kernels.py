"""The package pins OpenBLAS's kernels on x86-64 with AVX2 (pushbench/__init__.py): ACG's float32
mat-vecs then round the same on every such CPU, so its episodes do not depend on the machine."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

PROBE = ("import pushbench, numpy\n"
         "from threadpoolctl import threadpool_info\n"
         "print(*[i.get('architecture') for i in threadpool_info() if i['internal_api'] == 'openblas'])")


def blas_kernels(**env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    out = subprocess.run([sys.executable, "-c", PROBE], env={**clean, **env}, capture_output=True, text=True,
                         check=True)
    return out.stdout.strip()


def avx2_fma() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            flags = next((line.split(":", 1)[1].split() for line in cpuinfo if line.startswith("flags")), [])
    except OSError:
        return False
    return "avx2" in flags and "fma" in flags


@pytest.mark.skipif(platform.machine() != "x86_64" or not avx2_fma(), reason="an x86-64 CPU with AVX2 and FMA")
def test_openblas_uses_the_haswell_kernels_and_an_explicit_choice_wins() -> None:
    assert blas_kernels() == "Haswell"
    assert blas_kernels(OPENBLAS_CORETYPE="Sandybridge") == "Sandybridge"
