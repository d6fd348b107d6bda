"""Options of the GPU versions C and D (E adds `devices`): tile, kernel and backend."""
from dataclasses import dataclass

import numpy as np

from ..core.options import NoOptions, option

DEFAULT_TILE = 256
BACKENDS = ("numba", "cupy")        # GPU backends: numba-cuda Python kernels, CuPy + CUDA C
NO_GPU = "needs a CUDA GPU (or NUMBA_ENABLE_CUDASIM=1 for the simulator)"     # numba: why not available
KERNEL_KINDS = ("tiled", "plain")   # shared-memory tiles with barriers, or straight from global memory
PAIRWISE = "pairwise"               # C's kernels; E's fused ones are named by E (`gpu_full/fused.py`)


def entry_name(kind: str, prefix: str = PAIRWISE) -> str:
    """A kernel's entry name in both backends (`nbody.cu` pastes the same): pairwise_tiled,
    pairwise_plain; E's fused_tiled, fused_plain."""
    return f"{prefix}_{check_kernel(kind)}"


def check_tile(tile) -> int:
    if isinstance(tile, bool) or not isinstance(tile, (int, np.integer)) \
            or not 32 <= tile <= 1024 or tile & (tile - 1):
        raise ValueError(f"tile must be a power of two between 32 and 1024 (threads per block), got {tile!r}")
    return int(tile)


def check_backend(backend) -> str:
    """The backend `backend` names in any case ("CuPy" -> "cupy"), else ValueError."""
    if not isinstance(backend, str) or backend.lower() not in BACKENDS:
        raise ValueError(f"unknown GPU backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    return backend.lower()


def check_kernel(kernel) -> str:
    """The kernel kind `kernel` names in any case ("TILED" -> "tiled", as --gpu-kernel takes it), else ValueError."""
    if not isinstance(kernel, str) or kernel.lower() not in KERNEL_KINDS:
        raise ValueError(f"unknown GPU kernel {kernel!r}; choose one of {', '.join(KERNEL_KINDS)}")
    return kernel.lower()


@dataclass(frozen=True)
class GpuOptions(NoOptions):
    """Versions C and D: the GPU kernel's block size, its kind and the backend that runs it."""

    tile: int = option(DEFAULT_TILE, "--tile", "GPU threads per block and bodies per shared-memory tile "
                       "(a power of two, 32..1024; default 256)", check_tile)
    kernel: str = option("tiled", "--gpu-kernel", "tiled (shared memory, default) or plain (global memory)",
                         check_kernel, KERNEL_KINDS)
    backend: str = option("numba", "--gpu-backend", "numba (numba-cuda, default) or cupy (CuPy + CUDA C)",
                          check_backend, BACKENDS)
