"""The two GPU backends by name: numba-cuda's Python kernels, or CUDA C launched by CuPy."""
import ctypes
import sys

from .options import NO_GPU, check_backend
from .simulator import cuda_simulator

INSTALL = "pip install 'nbsymple-versions[gpu]'"
# the CUDA driver library as numba-cuda looks for it (cudadrv/driver.py, locate_driver_and_loader)
DRIVER_LIBRARIES = tuple(f"{folder}libcuda.so{version}" for folder in ("", "/usr/lib/", "/usr/lib64/")
                         for version in ("", ".1"))


def no_driver() -> bool:
    """True where no CUDA driver library loads and the simulator is off (Linux): no GPU can be
    seen, said without importing numba-cuda, which takes 0.3 s (a CPU-only start of F asks, on
    every rank, whether its node engine can be a GPU's)."""
    if not sys.platform.startswith("linux") or cuda_simulator():
        return False
    for library in DRIVER_LIBRARIES:
        try:
            ctypes.CDLL(library)
        except OSError:
            continue
        return False
    return True


def package_defect(error: ImportError) -> bool:
    """True where `error` was raised by this package's own imports (a name renamed or removed):
    a defect to raise, never to be read as "numba-cuda is not installed"."""
    return (getattr(error, "name", None) or "").partition(".")[0] == __name__.partition(".")[0]


def availability(backend: str = "numba") -> tuple[bool, str]:
    """numba: numba-cuda must see a GPU, or NUMBA_ENABLE_CUDASIM=1 must be set; cupy: CuPy must
    see a GPU (it has no simulator). An unknown backend is a ValueError."""
    if check_backend(backend) == "cupy":
        from . import cupy_cuda
        return cupy_cuda.availability()
    if no_driver():
        return False, NO_GPU
    try:
        from . import numba_cuda
    except ImportError as e:    # numba-cuda (the `gpu` extra) is not installed
        if package_defect(e):
            raise
        return False, ("needs a CUDA GPU (or NUMBA_ENABLE_CUDASIM=1 for the simulator) and numba-cuda "
                       f"({INSTALL}): {e}")
    return numba_cuda.availability()


def engine_class(backend: str):
    """The engine class of `backend` (imports numba-cuda or the CuPy module, not CuPy itself)."""
    if check_backend(backend) == "cupy":
        from .cupy_cuda import CupyPairwise
        return CupyPairwise
    from .numba_cuda import CudaPairwise
    return CudaPairwise
