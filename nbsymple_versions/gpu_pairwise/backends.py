"""The two GPU backends by name: numba-cuda's Python kernels, or CUDA C launched by CuPy."""
from .options import check_backend

INSTALL = "pip install 'nbsymple-versions[gpu]'"


def availability(backend: str = "numba") -> tuple[bool, str]:
    """numba: numba-cuda must see a GPU, or NUMBA_ENABLE_CUDASIM=1 must be set; cupy: CuPy must
    see a GPU (it has no simulator). An unknown backend is a ValueError."""
    if check_backend(backend) == "cupy":
        from . import cupy_cuda
        return cupy_cuda.availability()
    try:
        from . import numba_cuda
    except ImportError as e:    # numba-cuda (the `gpu` extra) is not installed
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
