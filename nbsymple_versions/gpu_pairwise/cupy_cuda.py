"""The CuPy backend: the CUDA C kernels of `nbody.cu`, launched with CuPy (versions C, D, E).

The same algorithm, layout and rules as the numba-cuda backend (`numba_cuda.py`): body records
padded with zero-mass bodies to a multiple of TILE (`records.py`), one thread per target,
blocks of TILE threads, every thread at every barrier, targets of `devices` contiguous slices
round-robin over the GPUs present. Kernels: `tiled` (shared-memory tiles, GPU Gems 3 ch. 31)
or `plain` (sources straight from global memory, no shared memory, no barrier); E's fused
kernels add the Allen & Santillan field in float64.

`cupy.RawModule` compiles the source with NVRTC on first use, once per precision and tile,
with `options(precision, tile)`: the same options that `nbsymple gpu-asm` gives NVRTC to count
the kernels' instructions without a GPU. Host buffers are pinned (`cupyx.empty_pinned`), each
slice has its own non-blocking stream, device arrays and pinned output buffer, all allocated
once; `upload`, `compute` and `download` each end synchronised.

CuPy stays optional: nothing here imports it before a backend is built (`import cupy` works
without a GPU, but creating any array then raises), and without a GPU `availability()` gives
one sentence. The CuPy backend has no simulator: NUMBA_ENABLE_CUDASIM=1 runs the numba
backend only.
"""
from functools import lru_cache
from importlib import resources

import numpy as np

from ..core import galaxy
from ..core.vocabulary import check_precision
from .engine import SlicedGpuBackend, device_text, slices
from .options import DEFAULT_TILE, check_tile
from .records import fill_masses
from .simulator import cuda_simulator

UNAVAILABLE = "the CuPy backend needs a CUDA GPU, and CuPy sees none"
SIMULATOR = ("the CuPy backend needs a CUDA GPU: CuPy has no simulator (NUMBA_ENABLE_CUDASIM=1 runs the "
             "numba backend only)")
NOT_INSTALLED = "the CuPy backend needs CuPy (pip install 'nbsymple-versions[gpu]', which brings cupy-cuda13x)"

_PRECISION_CODE = {"sp": 0, "dp": 1, "dsp": 2}
# sp: numba-cuda's fastmath (flush to zero, approximate division and square root); dp and dsp:
# IEEE. Both compilers contract a * b + c into FMA by default.
_FAST = ("-ftz=true", "-prec-div=false", "-prec-sqrt=false")
KERNEL_NAMES = {("tiled", False): "pairwise_tiled", ("plain", False): "pairwise_plain",
                ("tiled", True): "fused_tiled", ("plain", True): "fused_plain"}


@lru_cache(maxsize=1)
def source() -> str:
    """The CUDA C of all kernels (package data `gpu_pairwise/nbody.cu`)."""
    return resources.files(__package__).joinpath("nbody.cu").read_text(encoding="utf-8")


def _as91_defines() -> tuple[str, ...]:
    """The Allen & Santillan constants, from core/galaxy.py (one definition for all kernels)."""
    names = ("M1", "B1", "M2", "A2", "B2", "M3", "A3", "HALO_GAMMA", "HALO_CUTOFF")
    return tuple(f"-DAS91_{n}=({float(getattr(galaxy, n))!r})" for n in names)


def options(precision: str, tile: int = DEFAULT_TILE) -> tuple[str, ...]:
    """NVRTC options of the module of one precision and tile (the target is added by the caller:
    CuPy picks the GPU's, `gpu-asm` the one it counts for)."""
    check_precision(precision)
    check_tile(tile)
    return ("--std=c++14", f"-DPRECISION={_PRECISION_CODE[precision]}", f"-DTILE={tile}",
            *_as91_defines(), *(_FAST if precision == "sp" else ()))


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
def module(precision: str, tile: int):
    """The cupy.RawModule of one precision and tile (compiled per device on first use)."""
    import cupy
    return cupy.RawModule(code=source(), options=options(precision, tile))


def _device_name(cupy, gpu_id: int) -> str:
    name = cupy.cuda.runtime.getDeviceProperties(gpu_id)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


class _Slice:
    """One device's share: targets [start, stop), all bodies, its own stream and buffers."""

    def __init__(self, cupy, cupyx, gpu_id, start, stop, npad, width, ftype, out_type, function):
        self.gpu_id, self.start, self.stop = gpu_id, start, stop
        self.device = cupy.cuda.Device(gpu_id)
        with self.device:
            self.stream = cupy.cuda.Stream(non_blocking=True)
            self.bodies = cupy.zeros((npad, width), dtype=ftype)
            self.out = cupy.empty((3, stop - start), dtype=out_type)
            self.host_out = cupyx.empty_pinned((3, stop - start), dtype=out_type)
            self.function = function


class CupyPairwise(SlicedGpuBackend):
    """Pairwise backend on 1..k CUDA devices with CuPy (`devices` = k slices of targets,
    round-robin over the physical GPUs); with `galactic`, E's fused kernel adds the Galaxy."""

    backend = "cupy"

    def __init__(self, m, eps, precision, tile=DEFAULT_TILE, devices=1, galactic=False, units=None,
                 kernel="tiled"):
        npad, width, ftype, out_type = self.configure(m, eps, precision, tile, devices, galactic, units, kernel)
        ok, reason = availability()
        if not ok:
            raise RuntimeError(reason)
        import cupy
        import cupyx

        n = self.n
        raw = module(precision, tile)
        name = KERNEL_NAMES[kernel, self.includes_galactic]

        # one pinned buffer of body records feeds every device
        self.host_bodies = cupyx.empty_pinned((npad, width), dtype=ftype)
        fill_masses(self.host_bodies, m)
        ngpu = cupy.cuda.runtime.getDeviceCount()
        self.slices = []
        for s, (a, b) in enumerate(slices(n, devices)):
            gpu = s % ngpu
            with cupy.cuda.Device(gpu):
                function = raw.get_function(name)      # compiled and loaded for this device
            self.slices.append(_Slice(cupy, cupyx, gpu, a, b, npad, width, ftype, out_type, function))
        used = sorted({s.gpu_id for s in self.slices})
        self.device = device_text([_device_name(cupy, g) for g in used], devices, len(used))
        self.upload_bodies()

    def upload_bodies(self):
        """The pinned body records -> every slice's device."""
        for s in self.slices:
            with s.device:
                s.bodies.set(self.host_bodies, stream=s.stream)
        self.synchronize()

    def launch(self):
        """Start the kernel on every slice (all devices work at once); does not wait."""
        for s in self.slices:
            grid = -(-(s.stop - s.start) // self.tile)
            with s.device:
                s.function((grid,), (self.tile,), (s.bodies, np.int32(self.npad), self.eps2, *self.scales,
                                                   np.int64(s.start), np.int64(s.stop), s.out), stream=s.stream)

    def copy_out(self):
        """Every slice's accelerations -> its pinned buffer, all slices at once (no wait)."""
        for s in self.slices:
            with s.device:
                s.out.get(stream=s.stream, out=s.host_out, blocking=False)
