"""CUDA kernels with numba-cuda: pairwise forces (sp, dp, dsp), tiled or plain, and the engine
`CudaPairwise` that runs them (or a later version's fused kernel, given as `galaxy`).

tiled   GPU Gems 3, ch. 31 and the paper: one thread per target body, blocks of TILE threads;
        for each tile of TILE source bodies every thread of the block loads one body into
        shared memory, the block synchronises, every thread sums the tile's pull on its target,
        and the block synchronises again before the next tile overwrites shared memory. Every
        thread reaches every barrier: threads past the end of a slice still load, wait and
        compute (on a clamped target), they only skip the final write.
plain   the baseline the tiling improves on: one thread per target reading every source
        straight from global memory (through L1), in the same order; no shared memory, no
        barrier.
The CuPy backend (`cupy_cuda.py`) runs the same algorithm written in CUDA C (`nbody.cu`).

A kernel is assembled from parts written once each:
  record   how one precision's body records (`records.py`) are read (`Record`): a target's
           position, a body of the shared tile or of global memory, body minus target;
  pair     one interaction: the precision's r^-3 and the pull, accumulated with fma;
  sources  the sum over all sources, tiled or plain, of `pair`;
  kernel   C's pairwise kernel around `sources` (`pairwise_source`), or E's fused one.

Precisions (accumulators and pair terms):
  sp   float32 throughout;
  dp   float64 throughout; r^-3 from a float32 1/sqrt seed and one third-order float64 step,
       as the CPU kernel does (relative error ~1e-21: float64 rounding; needs softening > 0);
  dsp  float32 hi/lo positions (see `core/dsp.py`), dr = (hi_j - hi_i) + (lo_j - lo_i) in float32,
       then the pair term in float32.
Float32 kernels use float32 constants only (a bare Python float literal would be float64 on
the device and promote the arithmetic); tests check the PTX and SASS for that.

Machine code (`nbsymple gpu-asm` counts it): numba's `range` makes 64-bit induction variables
and signed indices, whose negative-index wraparound costs selects on every shared-memory
access (numba issue 4647); the loops here are `while` loops over `uint32` counters, kept 32-bit
by casting after each increment, so that LLVM unrolls the inner loop and indexes shared memory
with constant offsets. Each tile is a (TILE, 4) or (TILE, 8) shared array aligned to 16 bytes,
so one body is one 128-bit shared load (two for dp and dsp), as with CUDA C's float4.

fastmath: the sp kernel allows it (numba-cuda's fastmath is all-or-nothing: ftz, approximate
div/sqrt, contraction *and reassociation*, which only reorders the sum over sources). dsp must
not reassociate (it could fold (hi_j - hi_i) + (lo_j - lo_i) into (hi_j + lo_j) - (hi_i + lo_i)
and lose the low word) and dp must stay IEEE, so both compile without fastmath; the fast
1/sqrt they need comes explicitly from libdevice (rsqrtf: the MUFU reciprocal square root,
about 2 ulp). Multiply-adds are written as `cuda.fma`, so both backends round alike. In the
simulator (NUMBA_ENABLE_CUDASIM=1), which has no libdevice, NumPy stands in (and a * b + c for
fma).

Nothing here touches a GPU at import: kernels are built on first use, buffers by `CudaPairwise`.
"""
from functools import lru_cache
import importlib
from typing import Callable, NamedTuple
import warnings

import numpy as np
from numba import cuda
from numba.cuda import float32, float64, int64, uint32

from ..core.vocabulary import check_precision
from .engine import GpuEngine
from .options import DEFAULT_TILE, NO_GPU, check_kernel
from .records import WIDTH, real_type
from .simulator import cuda_simulator as simulator, gpu_name, prepare as prepare_simulator


# The casts inside the kernels: numba's types, for the compiler. The simulator runs the kernels
# as Python, where a numba type casts through a generic path (about 1 us a call, half of a
# simulated pair interaction) that ends in NumPy's scalar type of the same name: there, that type
# casts directly, to the same values.
to_uint32, to_float32, to_float64 = (np.uint32, np.float32, np.float64) if simulator() else (uint32, float32, float64)


# what numba-cuda imports to compile its first kernel (its typing of NumPy's functions included)
COMPILER_MODULE = "numba.cuda.cudaimpl"
# small N means few blocks by design, and numba-cuda warns about occupancy on every such launch;
# its message may start with a terminal's bold code
OCCUPANCY_WARNING = r"(\x1b\[1m)?Grid size \d+ will likely result in GPU under-utilization"


def availability() -> tuple[bool, str]:
    """(True, '') where numba-cuda sees a GPU and can compile for it, or the simulator is on;
    never called at import."""
    if simulator():
        return True, ""
    try:
        ok = cuda.is_available()
    except Exception:   # a broken driver install reads as "no GPU"
        ok = False
    if not ok:
        return False, NO_GPU
    try:        # numba-cuda 0.30 cannot: NumPy 2.5 removed np.row_stack, which it types on import
        importlib.import_module(COMPILER_MODULE)
    except Exception as e:      # noqa: BLE001 - any failure there means no kernel compiles
        return False, (f"numba-cuda cannot compile kernels beside NumPy {np.__version__} "
                       f"({type(e).__name__}: {e}); install a NumPy release that numba-cuda supports, "
                       f"or choose the CuPy backend (--gpu-backend cupy)")
    return True, ""


def quiet_occupancy_warnings():
    """No warning about a small grid's occupancy (`OCCUPANCY_WARNING`); other warnings stay."""
    warnings.filterwarnings("ignore", message=OCCUPANCY_WARNING)


def _rsqrt():
    """The float32 1/sqrt of every precision (dp: its seed): libdevice on the device, NumPy in
    the simulator."""
    if simulator():
        one = np.float32(1.0)
        # a plain function: the simulator runs device code as Python, and wrapping this in
        # cuda.jit(device=True) would swap module globals on every pair interaction
        return lambda r2: one / np.sqrt(r2)
    return cuda.libdevice.rsqrtf


def device_function(fn, fastmath=False):
    """A per-interaction helper as a device function (inlined by NVVM), or the plain Python
    function in the simulator."""
    return fn if simulator() else cuda.jit(device=True, fastmath=fastmath)(fn)


# ---------------------------------------------------------------- the records

class Record(NamedTuple):
    """How the kernels read one precision's body records; the callables are device functions."""
    precision: str
    width: int              # values per record (records.py WIDTH)
    target: Callable        # (pos, i) -> target i's position: (x, y, z); dsp (xh, yh, zh, xl, yl, zl)
    shared: Callable        # (sh, k) -> row k of a shared tile: (x, y, z, m); dsp (xh, yh, zh, m, xl, yl, zl)
    stored: Callable        # (pos, j) -> the same, from global memory at flat offset j
    separation: Callable    # (body, target) -> (dx, dy, dz), body minus target


def _record(precision) -> Record:
    one, two, three, four, five, six = (to_uint32(c) for c in range(1, 7))
    if precision == "dsp":
        def target(pos, i):
            return pos[8 * i], pos[8 * i + 1], pos[8 * i + 2], pos[8 * i + 4], pos[8 * i + 5], pos[8 * i + 6]

        def shared(sh, k):
            return sh[k, 0], sh[k, 1], sh[k, 2], sh[k, 3], sh[k, 4], sh[k, 5], sh[k, 6]

        def stored(pos, j):
            return pos[j], pos[j + one], pos[j + two], pos[j + three], pos[j + four], pos[j + five], pos[j + six]

        def separation(b, t):       # order matters (no reassociation): hi and lo differences first
            return (b[0] - t[0]) + (b[4] - t[3]), (b[1] - t[1]) + (b[5] - t[4]), (b[2] - t[2]) + (b[6] - t[5])
    else:
        def target(pos, i):
            return pos[4 * i], pos[4 * i + 1], pos[4 * i + 2]

        def shared(sh, k):
            return sh[k, 0], sh[k, 1], sh[k, 2], sh[k, 3]

        def stored(pos, j):
            return pos[j], pos[j + one], pos[j + two], pos[j + three]

        def separation(b, t):
            return b[0] - t[0], b[1] - t[1], b[2] - t[2]
    fastmath = precision == "sp"
    return Record(precision, WIDTH[precision],
                  *(device_function(f, fastmath) for f in (target, shared, stored, separation)))


# ---------------------------------------------------------------- one pair interaction
# flops per interaction: core/vocabulary.py FLOPS_PER_LINE (20)

def _inverse_cube_source(ftype, rsqrt):
    """r2^(-3/2): sp rinv^3; dp from the float32 seed `rsqrt` (libdevice rsqrtf) and one
    third-order step, e = 1 - r2 s^2, r^-3 = s^3 (1 + 3/2 e + 15/8 e^2) (see serial/kernels.py)."""
    if ftype is np.float32:
        def inverse_cube(r2):
            rinv = rsqrt(r2)                  # 2 (rsqrt) + 2 (r^-3)
            return rinv * rinv * rinv
        return inverse_cube

    def inverse_cube_dp(r2):
        s = to_float64(rsqrt(to_float32(r2)))
        s2 = s * s
        e = cuda.fma(-r2, s2, 1.0)
        return (s2 * s) * cuda.fma(e, cuda.fma(e, 1.875, 1.5), 1.0)
    return inverse_cube_dp


def _pair_source(separation, inverse_cube):
    """The pull of body b (mass b[3]) on target t, added to (ax, ay, az)."""

    def pair(b, t, eps2, ax, ay, az):
        dx, dy, dz = separation(b, t)         # 3 (dsp: 9)
        r2 = cuda.fma(dz, dz, cuda.fma(dy, dy, cuda.fma(dx, dx, eps2)))   # 6
        f = b[3] * inverse_cube(r2)           # 4 + 1
        return cuda.fma(f, dx, ax), cuda.fma(f, dy, ay), cuda.fma(f, dz, az)   # 6
    return pair


# ---------------------------------------------------------------- sums over all sources
# tiled (shared-memory tiles) and plain (global memory) take the same arguments and sum the
# sources in the same order: every kernel takes either.

def _sources_source(record, tile, kernel, pair):
    """Sum over all sources of the pull on `target`: tile by tile, or straight from global memory."""
    ftype = real_type(record.precision)
    zero, width, size, one = ftype(0.0), record.width, to_uint32(tile), to_uint32(1)
    wide = to_uint32(width)
    if kernel == "plain":
        body = record.stored

        def plain(pos, eps2, target):
            ax, ay, az = zero, zero, zero
            n = to_uint32(pos.shape[0] // width)
            base = to_uint32(0)
            while base < n:                   # n is a multiple of TILE: the inner loop unrolls
                k = to_uint32(0)
                while k < size:
                    ax, ay, az = pair(body(pos, to_uint32(wide * to_uint32(base + k))), target, eps2, ax, ay, az)
                    k = to_uint32(k + one)
                base = to_uint32(base + size)
            return ax, ay, az
        return plain

    nbtype = float32 if ftype is np.float32 else float64
    body = record.shared

    def tiles(pos, eps2, target):
        t = cuda.threadIdx.x
        sh = cuda.shared.array((tile, width), nbtype, alignment=16)   # one record a row: 128-bit loads
        ax, ay, az = zero, zero, zero
        n = to_uint32(pos.shape[0] // width)
        base = to_uint32(0)
        while base < n:
            j = wide * to_uint32(base + t)
            for c in range(width):
                sh[t, c] = pos[j + to_uint32(c)]
            cuda.syncthreads()
            k = to_uint32(0)
            while k < size:
                ax, ay, az = pair(body(sh, k), target, eps2, ax, ay, az)
                k = to_uint32(k + one)
            cuda.syncthreads()
            base = to_uint32(base + size)
        return ax, ay, az
    return tiles


# ---------------------------------------------------------------- kernels
# Arguments: pos (Npad * WIDTH,) the body records, flat (indexed by 32-bit offsets from one
# pointer), eps2, [a fused field's float64 scalars,] start, stop, out (3, stop - start). Thread t
# of block b handles target i = start + b*TILE + t; targets i >= stop (padding of the slice)
# compute on body stop-1, take part in every barrier, write nothing.

def pairwise_source(record, sources):
    """C's kernel: the pairwise accelerations of the slice's targets, in the precision's type."""
    target = record.target

    def pairwise(pos, eps2, start, stop, out):
        i = start + cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        ax, ay, az = sources(pos, eps2, target(pos, min(i, stop - 1)))
        if i < stop:
            out[0, i - start] = ax
            out[1, i - start] = ay
            out[2, i - start] = az
    return pairwise


class KernelSource(NamedTuple):
    function: Callable      # the Python kernel, for cuda.jit or cuda.compile_ptx
    signature: tuple        # its argument types, as `CudaPairwise` launches it
    fastmath: bool


def kernel_source(precision, tile=DEFAULT_TILE, kernel="tiled", galaxy=None) -> KernelSource:
    """The kernel of precision x tile x kernel ("tiled" or "plain"), C's or, with `galaxy`
    (`engine.Galaxy`), its fused one; uncompiled (tests and `nbsymple gpu-asm` compile it)."""
    check_precision(precision)
    kernel = check_kernel(kernel)
    if simulator():
        prepare_simulator()
    record, sources = _device_functions(precision, tile, kernel)
    function = galaxy.numba_kernel(record, sources) if galaxy else pairwise_source(record, sources)
    return KernelSource(function, signature(precision, galaxy), precision == "sp")


@lru_cache(maxsize=None)
def _device_functions(precision, tile, kernel) -> tuple[Record, Callable]:
    """The record reader and the sum over sources of precision x tile x kernel, built once per
    process: C's and E's kernels share them, and numba-cuda types and lowers them once."""
    fastmath = precision == "sp"
    record = _record(precision)
    cube = device_function(_inverse_cube_source(real_type(precision), _rsqrt()), fastmath)
    pair = device_function(_pair_source(record.separation, cube), fastmath)
    return record, cuda.jit(device=True, fastmath=fastmath)(_sources_source(record, tile, kernel, pair))


def signature(precision, galaxy=None) -> tuple:
    ft = float64 if precision == "dp" else float32
    scalars = (float64,) * len(galaxy.scalars) if galaxy else ()
    out = float64 if galaxy else ft
    return (ft[::1], ft, *scalars, int64, int64, out[:, ::1])


_KERNELS = {}


def compiled_kernel(precision, tile=DEFAULT_TILE, kernel="tiled", galaxy=None):
    """The compiled (lazily, per argument types) kernel for precision x tile x kernel x galaxy."""
    key = (precision, tile, kernel, galaxy)
    if key not in _KERNELS:
        source = kernel_source(precision, tile, kernel, galaxy)
        # a block of more than 256 threads must fit the SM's 65536 registers
        limit = {} if tile <= 256 or simulator() else {"max_registers": 65536 // tile}
        _KERNELS[key] = cuda.jit(fastmath=source.fastmath, **limit)(source.function)
    return _KERNELS[key]


# ---------------------------------------------------------------- the engine

class CudaPairwise(GpuEngine):
    """`GpuEngine` on numba-cuda: the kernels above, numba-cuda's devices, streams and arrays."""

    backend = "numba"
    availability = staticmethod(availability)

    @staticmethod
    def device_count() -> int:
        return 1 if simulator() else len(cuda.gpus)

    @staticmethod
    def device_names(ids) -> list[str]:
        return ["CUDA simulator" if simulator() else gpu_name(cuda.gpus[g]) for g in ids]

    def on(self, gpu):
        return cuda.gpus[gpu]

    def stream(self):
        return cuda.stream()

    def device_array(self, shape, dtype):
        return cuda.device_array(shape, dtype=dtype)

    def pinned_array(self, shape, dtype):
        return cuda.pinned_array(shape, dtype=dtype)

    def load_kernel(self):
        quiet_occupancy_warnings()
        return compiled_kernel(self.precision, self.tile, self.kernel_kind, self.galaxy)

    def to_device(self, s):
        s.bodies.copy_to_device(self.host_flat, stream=s.stream)

    def to_host(self, s):
        s.out.copy_to_host(s.host_out, stream=s.stream)

    def launch_slice(self, s, grid):
        s.kernel[grid, self.tile, s.stream](s.bodies, self.eps2, *self.scalars, s.start, s.stop, s.out)
