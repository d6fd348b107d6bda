"""The CuPy backend: the CUDA C kernels of `nbody.cu` (with a later version's, e.g. E's
`gpu_full/fused.cu`), compiled by NVRTC and launched by CuPy on `GpuEngine`'s slices.

The same algorithm, records and rules as the numba-cuda backend (`numba_cuda.py`).
`cupy.RawModule` compiles the source on first use, once per precision, tile and fused field,
with `options(...)`: the same options that `nbsymple gpu-asm` gives NVRTC to count the kernels'
instructions without a GPU. Host buffers are pinned (`cupyx.empty_pinned`), each slice has its
own non-blocking stream.

CuPy stays optional: nothing here imports it before an engine is built (`import cupy` works
without a GPU, but creating any array then raises), and without a GPU `availability()` gives
one sentence. The CuPy backend has no simulator: NUMBA_ENABLE_CUDASIM=1 runs the numba
backend only.
"""
from functools import lru_cache
from importlib import resources

import numpy as np

from ..core.vocabulary import check_precision
from .engine import GpuEngine
from .options import DEFAULT_TILE, PAIRWISE, check_tile, entry_name
from .simulator import cuda_simulator

UNAVAILABLE = "the CuPy backend needs a CUDA GPU, and CuPy sees none"
SIMULATOR = ("the CuPy backend needs a CUDA GPU: CuPy has no simulator (NUMBA_ENABLE_CUDASIM=1 runs the "
             "numba backend only)")
NOT_INSTALLED = "the CuPy backend needs CuPy (pip install 'nbsymple-versions[gpu]', which brings cupy-cuda13x)"

_PRECISION_CODE = {"sp": 0, "dp": 1, "dsp": 2}
# sp: numba-cuda's fastmath (flush to zero, approximate division and square root); dp and dsp:
# IEEE. Both compilers contract a * b + c into FMA by default.
_FAST = ("-ftz=true", "-prec-div=false", "-prec-sqrt=false")


@lru_cache(maxsize=1)
def _nbody_cu() -> str:
    return resources.files(__package__).joinpath("nbody.cu").read_text(encoding="utf-8")


def source(galaxy=None) -> str:
    """The CUDA C of C's kernels (package data `gpu_pairwise/nbody.cu`), followed by the
    kernels of the fused field `galaxy` (`engine.Galaxy`) where one is given."""
    return _nbody_cu() + (galaxy.cuda_c() if galaxy else "")


def options(precision: str, tile: int = DEFAULT_TILE, galaxy=None) -> tuple[str, ...]:
    """NVRTC options of the module of one precision, tile and fused field (the target is added
    by the caller: CuPy picks the GPU's, `gpu-asm` the one it counts for)."""
    check_precision(precision)
    check_tile(tile)
    return ("--std=c++14", f"-DPRECISION={_PRECISION_CODE[precision]}", f"-DTILE={tile}",
            *(galaxy.cuda_c_options() if galaxy else ()), *(_FAST if precision == "sp" else ()))


def availability() -> tuple[bool, str]:
    """(True, '') where CuPy sees a GPU (and the CUDA simulator is off); never called at import."""
    if cuda_simulator():
        return False, SIMULATOR
    try:
        import cupy
    except ImportError:
        return False, NOT_INSTALLED
    try:
        ok = bool(cupy.is_available())
    except Exception:   # noqa: BLE001 - a broken driver install reads as "no GPU"
        ok = False
    return (True, "") if ok else (False, UNAVAILABLE)


@lru_cache(maxsize=None)
def module(precision: str, tile: int, galaxy=None):
    """The cupy.RawModule of one precision, tile and fused field (compiled per device on first use)."""
    import cupy
    return cupy.RawModule(code=source(galaxy), options=options(precision, tile, galaxy))


class CupyPairwise(GpuEngine):
    """`GpuEngine` on CuPy: the CUDA C kernels, CuPy's devices, streams and arrays."""

    backend = "cupy"
    availability = staticmethod(availability)

    @staticmethod
    def device_count() -> int:
        import cupy
        return cupy.cuda.runtime.getDeviceCount()

    @staticmethod
    def device_names(ids) -> list[str]:
        import cupy
        names = [cupy.cuda.runtime.getDeviceProperties(g)["name"] for g in ids]
        return [n.decode() if isinstance(n, bytes) else str(n) for n in names]

    def on(self, gpu):
        import cupy
        return cupy.cuda.Device(gpu)

    def stream(self):
        import cupy
        return cupy.cuda.Stream(non_blocking=True)

    def device_array(self, shape, dtype):
        import cupy
        return cupy.empty(shape, dtype=dtype)

    def pinned_array(self, shape, dtype):
        import cupyx
        return cupyx.empty_pinned(shape, dtype=dtype)

    def load_kernel(self):
        name = entry_name(self.kernel_kind, self.galaxy.name if self.galaxy else PAIRWISE)
        return module(self.precision, self.tile, self.galaxy).get_function(name)   # loaded on this device

    def to_device(self, s):
        s.bodies.set(self.host_flat, stream=s.stream)

    def to_host(self, s):
        s.out.get(stream=s.stream, out=s.host_out, blocking=False)

    def launch_slice(self, s, grid):
        s.kernel((grid,), (self.tile,), (s.bodies, np.int32(self.npad), self.eps2, *self.scalars,
                                         np.int64(s.start), np.int64(s.stop), s.out), stream=s.stream)
