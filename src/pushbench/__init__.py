"""PushBench: measuring and enforcing quantitative goal persistence in long-horizon LLM agents."""

import os as _os
import platform as _platform

__version__ = "0.1.0"


def _pin_blas_kernels() -> None:
    """ACG ranks float32 mat-vecs (retrieval scores, the similarity graph), and OpenBLAS picks its
    kernels by CPU (Haswell on AVX2, SkylakeX on AVX-512, ...), whose last bits differ: enough to
    flip a tie and so an episode (seen: the same DataOps ACG grid gave different episodes under the
    two). Every x86-64 CPU with AVX2 and FMA is told to use the Haswell kernels, before numpy loads
    OpenBLAS; an explicit ``OPENBLAS_CORETYPE`` wins. Other CPUs keep OpenBLAS's own choice."""
    if "OPENBLAS_CORETYPE" in _os.environ or _platform.machine().lower() not in ("x86_64", "amd64"):
        return
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            flags = next((line.split(":", 1)[1].split() for line in cpuinfo if line.startswith("flags")), [])
    except OSError:
        return
    if "avx2" in flags and "fma" in flags:
        _os.environ["OPENBLAS_CORETYPE"] = "Haswell"


_pin_blas_kernels()
