"""CUDA kernels with numba-cuda: pairwise forces (sp, dp, dsp), tiled or plain, and pairwise +
galactic (E).

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

Bodies are records (`records.py`): sp and dp (x, y, z, m), dsp (xh, yh, zh, m, xl, yl, zl,
0), padded to a multiple of TILE with zero-mass bodies at the origin (a finite position, so the
pair term is finite and times a zero mass gives exactly zero).

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

Version E's kernel adds the Allen & Santillan field (`core/as91.py`, float64, compiled as a device
function) at the target's position and writes float64 accelerations.

Nothing here touches a GPU at import: kernels are built on first use, buffers by `CudaPairwise`.
"""
import warnings

import numpy as np
from numba import cuda
from numba.cuda import float32, float64, int64, uint32

from ..core.vocabulary import check_precision
from ..core.as91 import as91_acceleration
from .engine import SlicedGpuBackend, device_text, slices
from .options import DEFAULT_TILE, check_kernel
from .records import fill_masses
from .simulator import cuda_simulator as simulator, gpu_name, lock_shared_arrays

UNAVAILABLE = "needs a CUDA GPU (or NUMBA_ENABLE_CUDASIM=1 for the simulator)"


def availability() -> tuple[bool, str]:
    """(True, '') where numba-cuda sees a GPU or the simulator is on; never called at import."""
    if simulator():
        return True, ""
    try:
        ok = cuda.is_available()
    except Exception:   # a broken driver install reads as "no GPU"
        ok = False
    return (True, "") if ok else (False, UNAVAILABLE)


def _rsqrt(ftype):
    """1/sqrt(x) for the kernels of `ftype`: libdevice on the device, NumPy in the simulator."""
    if simulator():
        one = ftype(1.0)
        # a plain function: the simulator runs device code as Python, and wrapping this in
        # cuda.jit(device=True) would swap module globals on every pair interaction
        return lambda r2: one / np.sqrt(r2)
    return cuda.libdevice.rsqrtf if ftype is np.float32 else cuda.libdevice.rsqrt


def _device(fn, fastmath=False):
    """A per-interaction helper as a device function (inlined by NVVM), or the plain Python
    function in the simulator."""
    return fn if simulator() else cuda.jit(device=True, fastmath=fastmath)(fn)


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
        s = float64(rsqrt(float32(r2)))
        s2 = s * s
        e = cuda.fma(-r2, s2, 1.0)
        return (s2 * s) * cuda.fma(e, cuda.fma(e, 1.875, 1.5), 1.0)
    return inverse_cube_dp


def _pair_source(inverse_cube):
    """The pull of body (bx, by, bz, bm) on target (xi, yi, zi), added to (ax, ay, az)."""

    def pair(bx, by, bz, bm, xi, yi, zi, eps2, ax, ay, az):
        dx = bx - xi                          # 3 (with dy, dz)
        dy = by - yi
        dz = bz - zi
        r2 = cuda.fma(dz, dz, cuda.fma(dy, dy, cuda.fma(dx, dx, eps2)))   # 6
        f = bm * inverse_cube(r2)             # 4 + 1
        return cuda.fma(f, dx, ax), cuda.fma(f, dy, ay), cuda.fma(f, dz, az)   # 6
    return pair


def _pair_dsp_source(inverse_cube):

    def pair_dsp(bxh, byh, bzh, bm, bxl, byl, bzl, xh, yh, zh, xl, yl, zl, eps2, ax, ay, az):
        dx = (bxh - xh) + (bxl - xl)          # order matters: no reassociation
        dy = (byh - yh) + (byl - yl)
        dz = (bzh - zh) + (bzl - zl)
        r2 = cuda.fma(dz, dz, cuda.fma(dy, dy, cuda.fma(dx, dx, eps2)))
        f = bm * inverse_cube(r2)
        return cuda.fma(f, dx, ax), cuda.fma(f, dy, ay), cuda.fma(f, dz, az)
    return pair_dsp


def _pair(ftype, rsqrt, dsp=False):
    fastmath = ftype is np.float32 and not dsp
    cube = _device(_inverse_cube_source(ftype, rsqrt), fastmath)
    return _device((_pair_dsp_source if dsp else _pair_source)(cube), fastmath)


# ---------------------------------------------------------------- sums over all sources
# `tiles*` (shared-memory tiles) and `plain*` (global memory) take the same arguments and sum
# the sources in the same order: the kernels below take either.

def _tiles_source(ftype, tile, rsqrt):
    """Sum over all sources of the pull on target (xi, yi, zi), tile by tile; sp and dp."""
    nbtype = float32 if ftype is np.float32 else float64
    zero, width, step = ftype(0.0), uint32(tile), uint32(tile)
    one, two, three = uint32(1), uint32(2), uint32(3)
    pair = _pair(ftype, rsqrt)

    def tiles(pos, eps2, xi, yi, zi):
        t = cuda.threadIdx.x
        sh = cuda.shared.array((tile, 4), nbtype, alignment=16)   # (x, y, z, m): one 128-bit load
        ax, ay, az = zero, zero, zero
        n = uint32(pos.shape[0] // 4)
        base = uint32(0)
        while base < n:
            j = uint32(4) * uint32(base + t)
            sh[t, 0] = pos[j]
            sh[t, 1] = pos[j + one]
            sh[t, 2] = pos[j + two]
            sh[t, 3] = pos[j + three]
            cuda.syncthreads()
            k = uint32(0)
            while k < width:
                ax, ay, az = pair(sh[k, 0], sh[k, 1], sh[k, 2], sh[k, 3], xi, yi, zi, eps2, ax, ay, az)
                k = uint32(k + one)
            cuda.syncthreads()
            base = uint32(base + step)
        return ax, ay, az
    return tiles


def _plain_source(ftype, tile, rsqrt):
    """The same sum read straight from global memory: no shared memory, no barrier."""
    zero, width, step = ftype(0.0), uint32(tile), uint32(tile)
    one, two, three = uint32(1), uint32(2), uint32(3)
    pair = _pair(ftype, rsqrt)

    def plain(pos, eps2, xi, yi, zi):
        ax, ay, az = zero, zero, zero
        n = uint32(pos.shape[0] // 4)
        base = uint32(0)
        while base < n:                       # n is a multiple of TILE: the inner loop unrolls
            k = uint32(0)
            while k < width:
                j = uint32(uint32(4) * uint32(base + k))
                ax, ay, az = pair(pos[j], pos[j + one], pos[j + two], pos[j + three], xi, yi, zi, eps2, ax, ay, az)
                k = uint32(k + one)
            base = uint32(base + step)
        return ax, ay, az
    return plain


def _tiles_dsp_source(tile, rsqrt):
    """dsp: records (xh, yh, zh, m, xl, yl, zl, 0); float32 throughout."""
    zero, width, step = np.float32(0.0), uint32(tile), uint32(tile)
    one, two, three, four, five, six = (uint32(c) for c in range(1, 7))
    pair = _pair(np.float32, rsqrt, dsp=True)

    def tiles_dsp(pos, eps2, xh, yh, zh, xl, yl, zl):
        t = cuda.threadIdx.x
        sh = cuda.shared.array((tile, 8), float32, alignment=16)   # hi and lo: two 128-bit loads
        ax, ay, az = zero, zero, zero
        n = uint32(pos.shape[0] // 8)
        base = uint32(0)
        while base < n:
            j = uint32(8) * uint32(base + t)
            for c in range(8):
                sh[t, c] = pos[j + uint32(c)]
            cuda.syncthreads()
            k = uint32(0)
            while k < width:
                ax, ay, az = pair(sh[k, 0], sh[k, 1], sh[k, 2], sh[k, 3], sh[k, 4], sh[k, 5], sh[k, 6],
                                  xh, yh, zh, xl, yl, zl, eps2, ax, ay, az)
                k = uint32(k + one)
            cuda.syncthreads()
            base = uint32(base + step)
        return ax, ay, az
    return tiles_dsp


def _plain_dsp_source(tile, rsqrt):
    zero, width, step = np.float32(0.0), uint32(tile), uint32(tile)
    one, two, three, four, five, six = (uint32(c) for c in range(1, 7))
    pair = _pair(np.float32, rsqrt, dsp=True)

    def plain_dsp(pos, eps2, xh, yh, zh, xl, yl, zl):
        ax, ay, az = zero, zero, zero
        n = uint32(pos.shape[0] // 8)
        base = uint32(0)
        while base < n:
            k = uint32(0)
            while k < width:
                j = uint32(uint32(8) * uint32(base + k))
                ax, ay, az = pair(pos[j], pos[j + one], pos[j + two], pos[j + three], pos[j + four], pos[j + five],
                                  pos[j + six], xh, yh, zh, xl, yl, zl, eps2, ax, ay, az)
                k = uint32(k + one)
            base = uint32(base + step)
        return ax, ay, az
    return plain_dsp


# ---------------------------------------------------------------- kernels
# Arguments: pos (Npad * 4 or Npad * 8,) the body records, flat (indexed by 32-bit offsets from one
# pointer), eps2, [length_scale, accel_scale,] start, stop, out (3, stop - start). Thread t of block b
# handles target i = start + b*TILE + t; targets i >= stop (padding of the slice) compute on body
# stop-1, take part in every barrier, write nothing.

def _kernel_sources(precision, tiles):
    """(pairwise, fused) kernels around a sum over sources (`tiles*` or `plain*`)."""
    if precision != "dsp":
        def pairwise(pos, eps2, start, stop, out):
            i = start + cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            it = min(i, stop - 1)
            ax, ay, az = tiles(pos, eps2, pos[4 * it], pos[4 * it + 1], pos[4 * it + 2])
            if i < stop:
                out[0, i - start] = ax
                out[1, i - start] = ay
                out[2, i - start] = az

        def fused(pos, eps2, length_scale, accel_scale, start, stop, out):
            i = start + cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            it = min(i, stop - 1)
            xi, yi, zi = pos[4 * it], pos[4 * it + 1], pos[4 * it + 2]
            ax, ay, az = tiles(pos, eps2, xi, yi, zi)
            if i < stop:
                gx, gy, gz = _as91(float64(xi), float64(yi), float64(zi), length_scale, accel_scale)
                out[0, i - start] = float64(ax) + gx
                out[1, i - start] = float64(ay) + gy
                out[2, i - start] = float64(az) + gz
        return pairwise, fused

    def pairwise_dsp(pos, eps2, start, stop, out):
        i = start + cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        it = min(i, stop - 1)
        ax, ay, az = tiles(pos, eps2, pos[8 * it], pos[8 * it + 1], pos[8 * it + 2],
                           pos[8 * it + 4], pos[8 * it + 5], pos[8 * it + 6])
        if i < stop:
            out[0, i - start] = ax
            out[1, i - start] = ay
            out[2, i - start] = az

    def fused_dsp(pos, eps2, length_scale, accel_scale, start, stop, out):
        i = start + cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        it = min(i, stop - 1)
        xh, yh, zh = pos[8 * it], pos[8 * it + 1], pos[8 * it + 2]
        xl, yl, zl = pos[8 * it + 4], pos[8 * it + 5], pos[8 * it + 6]
        ax, ay, az = tiles(pos, eps2, xh, yh, zh, xl, yl, zl)
        if i < stop:
            # the galaxy sees the full float64 position hi + lo
            gx, gy, gz = _as91(float64(xh) + float64(xl), float64(yh) + float64(yl),
                               float64(zh) + float64(zl), length_scale, accel_scale)
            out[0, i - start] = float64(ax) + gx
            out[1, i - start] = float64(ay) + gy
            out[2, i - start] = float64(az) + gz
    return pairwise_dsp, fused_dsp


_as91 = None            # the CUDA device function, built on first use
_KERNELS = {}


def _as91_device():
    global _as91
    if _as91 is None:
        _as91 = cuda.jit(device=True)(as91_acceleration)
    return _as91


def python_kernel(precision, tile=DEFAULT_TILE, galactic=False, kernel="tiled"):
    """The plain Python kernel function (for `cuda.compile_ptx`: tests, `nbsymple gpu-asm`) and
    its fastmath flag; `kernel` is "tiled" or "plain"."""
    check_precision(precision)
    check_kernel(kernel)
    _as91_device()
    if simulator():
        lock_shared_arrays()
    fastmath = precision == "sp"
    ftype = np.float64 if precision == "dp" else np.float32
    rsqrt = _rsqrt(np.float32)      # dp: the float32 seed of its r^-3
    if precision == "dsp":
        source = _tiles_dsp_source if kernel == "tiled" else _plain_dsp_source
        tiles = cuda.jit(device=True)(source(tile, rsqrt))
    else:
        source = _tiles_source if kernel == "tiled" else _plain_source
        tiles = cuda.jit(device=True, fastmath=fastmath)(source(ftype, tile, rsqrt))
    pairwise, fused = _kernel_sources(precision, tiles)
    return (fused if galactic else pairwise), fastmath


def compiled_kernel(precision, tile=DEFAULT_TILE, galactic=False, kind="tiled"):
    """The compiled (lazily, per argument types) kernel for precision x tile x galactic x kind."""
    key = (precision, tile, galactic, kind)
    if key not in _KERNELS:
        fn, fastmath = python_kernel(precision, tile, galactic, kind)
        # a block of more than 256 threads must fit the SM's 65536 registers
        limit = {} if tile <= 256 or simulator() else {"max_registers": 65536 // tile}
        _KERNELS[key] = cuda.jit(fastmath=fastmath, **limit)(fn)
    return _KERNELS[key]


def signature(precision, galactic=False):
    """The kernel's argument types, as launched by `CudaPairwise` (for compile_ptx)."""
    ft = float64 if precision == "dp" else float32
    args = [ft[::1], ft]
    if galactic:
        args += [float64, float64]
    out = float64 if galactic else ft
    return tuple(args + [int64, int64, out[:, ::1]])


# ---------------------------------------------------------------- the backend

def device_names(ids) -> list[str]:
    if simulator():
        return ["CUDA simulator" for _ in ids]
    return [gpu_name(cuda.gpus[d]) for d in ids]


def physical_devices() -> int:
    return 1 if simulator() else len(cuda.gpus)


class _Slice:
    """One device's share: targets [start, stop), all N bodies, its own stream and buffers."""

    def __init__(self, gpu_id, start, stop, npad, width, ftype, out_type):
        self.gpu_id, self.start, self.stop = gpu_id, start, stop
        self.gpu = cuda.gpus[gpu_id]
        with self.gpu:
            self.stream = cuda.stream()
            self.bodies = cuda.device_array(npad * width, dtype=ftype)     # flat records
            self.out = cuda.device_array((3, stop - start), dtype=out_type)
            self.host_out = cuda.pinned_array((3, stop - start), dtype=out_type)


class CudaPairwise(SlicedGpuBackend):
    """Pairwise backend on 1..k CUDA devices (`devices` = k slices of targets, round-robin over
    the physical GPUs); with `galactic`, E's fused kernel also adds the Galaxy; `kernel` is
    "tiled" (shared-memory tiles) or "plain" (global memory, no barrier).

    Buffers are allocated once here: a pinned host buffer of body records in the kernel's type
    (padded; masses written once), per slice a device copy of all bodies, a device and a pinned
    host buffer of its accelerations. `upload`, `compute`, `download` each end synchronised."""

    backend = "numba"

    def __init__(self, m, eps, precision, tile=DEFAULT_TILE, devices=1, galactic=False, units=None,
                 kernel="tiled"):
        npad, width, ftype, out_type = self.configure(m, eps, precision, tile, devices, galactic, units, kernel)
        ok, reason = availability()
        if not ok:
            raise RuntimeError(reason)
        n = self.n
        self.kernel = compiled_kernel(precision, tile, self.includes_galactic, kernel)

        # Small N means few blocks by design; numba-cuda would warn about occupancy on every launch.
        warnings.filterwarnings("ignore", message="Grid size .* will likely result in GPU under-utilization")
        ngpu = physical_devices()
        # one pinned buffer feeds every device: with unified addressing (64-bit Linux) host
        # memory pinned in one context counts as pinned in all of them
        with cuda.gpus[0]:
            self.host_flat = cuda.pinned_array(npad * width, dtype=ftype)
        self.host_bodies = self.host_flat.reshape(npad, width)     # a view: one record per row
        fill_masses(self.host_bodies, m)     # padding: zero-mass bodies at the origin
        self._buffers = (npad, width, ftype, out_type)
        self.slices = [_Slice(s % ngpu, a, b, *self._buffers) for s, (a, b) in enumerate(slices(n, devices))]
        used = sorted({s.gpu_id for s in self.slices})
        self.device = device_text(device_names(used), devices, len(used))

    def restrict(self, start: int, stop: int, gpu_id: int = 0):
        """Compute the targets [start, stop) only, on GPU `gpu_id` (one MPI rank's share); all N
        bodies still act as sources. An empty range leaves no slice (nothing is launched)."""
        self.slices = [_Slice(gpu_id, start, stop, *self._buffers)] if stop > start else []
        self.device = device_names([gpu_id])[0]

    def upload_bodies(self):
        """The pinned body records -> every slice's device."""
        for s in self.slices:
            with s.gpu:
                s.bodies.copy_to_device(self.host_flat, stream=s.stream)
        self.synchronize()

    def launch(self):
        """Start the kernel on every slice (all devices work at once); does not wait."""
        for s in self.slices:
            grid = -(-(s.stop - s.start) // self.tile)
            with s.gpu:
                self.kernel[grid, self.tile, s.stream](s.bodies, self.eps2, *self.scales, s.start, s.stop, s.out)

    def copy_out(self):
        """Every slice's accelerations -> its pinned buffer, all slices at once (no wait)."""
        for s in self.slices:
            with s.gpu:
                s.out.copy_to_host(s.host_out, stream=s.stream)
