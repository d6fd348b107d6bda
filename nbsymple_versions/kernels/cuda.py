"""CUDA kernels with numba-cuda: tiled pairwise forces (sp, dp, dsp) and pairwise + galactic (E).

The tiling follows GPU Gems 3, ch. 31 and the paper: one thread per target body, blocks of
TILE threads; for each tile of TILE source bodies every thread of the block loads one body
into shared memory, the block synchronises, every thread sums the tile's pull on its target,
and the block synchronises again before the next tile overwrites shared memory. Every thread
reaches every barrier: threads past the end of a slice still load, wait and compute (on a
clamped target), they only skip the final write.

Padding: the N sources are padded to a multiple of TILE with zero-mass bodies at the origin
(a finite position, so the pair term is finite and times a zero mass gives exactly zero).

Precisions (accumulators and pair terms):
  sp   float32 positions, masses, pair terms and accumulators;
  dp   float64 throughout;
  dsp  float32 hi/lo positions (see `dsp.py`), dr = (hi_j - hi_i) + (lo_j - lo_i) in float32,
       then the pair term in float32.
Float32 kernels use float32 constants only (a bare Python float literal would be float64 on
the device and promote the arithmetic); `tests/test_gpu.py` checks the PTX for that.

fastmath: the sp kernel allows it (numba-cuda's fastmath is all-or-nothing: ftz, approximate
div/sqrt, contraction *and reassociation*, which only reorders the sum over sources). dsp must
not reassociate (it could fold (hi_j - hi_i) + (lo_j - lo_i) into (hi_j + lo_j) - (hi_i + lo_i)
and lose the low word) and dp must stay IEEE, so both compile without fastmath; the fast
1/sqrt they need comes explicitly from libdevice (rsqrtf: the MUFU reciprocal square root,
about 2 ulp; rsqrt for float64: 1 ulp). In the simulator (NUMBA_ENABLE_CUDASIM=1), which has
no libdevice, NumPy's 1/sqrt of the same type stands in.

Version E's kernel adds the Allen & Santillan field (`as91.py`, float64, compiled as a device
function) at the target's position and writes float64 accelerations.

Nothing here touches a GPU at import: kernels are built on first use, buffers by `CudaPairwise`.
"""
import sys
import threading
import warnings

import numpy as np
from numba import cuda
from numba.cuda import float32, float64, int64
from numba.cuda.core import config as _cuda_config

from . import dsp
from .as91 import as91_acceleration

UNAVAILABLE = "needs a CUDA GPU (or NUMBA_ENABLE_CUDASIM=1 for the simulator)"
DEFAULT_TILE = 256
PRECISIONS = ("sp", "dp", "dsp")


def simulator() -> bool:
    return bool(_cuda_config.ENABLE_CUDASIM)


def availability() -> tuple[bool, str]:
    """(True, '') where numba-cuda sees a GPU or the simulator is on; never called at import."""
    if simulator():
        return True, ""
    try:
        ok = cuda.is_available()
    except Exception:   # a broken driver install reads as "no GPU"
        ok = False
    return (True, "") if ok else (False, UNAVAILABLE)


def check_tile(tile) -> int:
    if isinstance(tile, bool) or not isinstance(tile, (int, np.integer)) \
            or not 32 <= tile <= 1024 or tile & (tile - 1):
        raise ValueError(f"tile must be a power of two between 32 and 1024 (threads per block), got {tile!r}")
    return int(tile)


def check_devices(devices) -> int:
    if isinstance(devices, bool) or not isinstance(devices, (int, np.integer)) or devices < 1:
        raise ValueError(f"devices must be a whole number >= 1 (slices of targets, one per device), got {devices!r}")
    return int(devices)


def _lock_simulator_shared_arrays():
    """Make the simulator's `cuda.shared.array` hand every thread of a block the same array.

    numba-cuda's simulator runs each CUDA thread as a Python thread, and `FakeCUDAShared.array`
    looks up its per-call-site array and creates it when missing without a lock; a thread switch
    between the two lets two threads each create their own "shared" array, and the tile loop
    then reads uninitialised memory (garbage forces, now and then a NaN). Serialising the lookup
    fixes it. Simulator only; applied once.
    """
    from numba.cuda import types
    from numba.cuda.np import numpy_support
    from numba.cuda.simulator.kernelapi import FakeCUDAShared
    if getattr(FakeCUDAShared.array, "locked", False):
        return
    unlocked, lock = FakeCUDAShared.array, threading.Lock()

    def array(self, shape, dtype, alignment=None):
        if shape == 0 or alignment is not None:     # dynamic shared memory has no lookup
            return unlocked(self, shape, dtype, alignment)
        caller = sys._getframe(1)                   # keyed by call site, as the simulator does
        key = (caller.f_code.co_filename, caller.f_lineno)
        with lock:
            if key not in self._allocations:
                self._allocations[key] = np.empty(shape, numpy_support.as_dtype(dtype)
                                                  if isinstance(dtype, types.Type) else dtype)
            return self._allocations[key]
    array.locked = True
    FakeCUDAShared.array = array


def _rsqrt(ftype):
    """1/sqrt(x) for the kernels of `ftype`: libdevice on the device, NumPy in the simulator."""
    if simulator():
        one = ftype(1.0)
        # a plain function: the simulator runs device code as Python, and wrapping this in
        # cuda.jit(device=True) would swap module globals on every pair interaction
        return lambda r2: one / np.sqrt(r2)
    return cuda.libdevice.rsqrtf if ftype is np.float32 else cuda.libdevice.rsqrt


# ---------------------------------------------------------------- tile loops (device functions)

def _tiles_source(ftype, tile, rsqrt):
    """Sum over all sources of the pull on target (xi, yi, zi); sp and dp."""
    nbtype = float32 if ftype is np.float32 else float64
    zero = ftype(0.0)

    def tiles(pos, m, eps2, xi, yi, zi):
        tid = cuda.threadIdx.x
        sh = cuda.shared.array((4, tile), nbtype)
        ax, ay, az = zero, zero, zero
        for base in range(0, pos.shape[1], tile):
            j = base + tid
            sh[0, tid] = pos[0, j]
            sh[1, tid] = pos[1, j]
            sh[2, tid] = pos[2, j]
            sh[3, tid] = m[j]
            cuda.syncthreads()
            for k in range(tile):
                dx = sh[0, k] - xi
                dy = sh[1, k] - yi
                dz = sh[2, k] - zi
                r2 = dx * dx + dy * dy + dz * dz + eps2
                rinv = rsqrt(r2)
                f = sh[3, k] * rinv * rinv * rinv
                ax += f * dx
                ay += f * dy
                az += f * dz
            cuda.syncthreads()
        return ax, ay, az
    return tiles


def _tiles_dsp_source(tile, rsqrt):
    """dsp: pos rows 0-2 are hi, rows 3-5 lo; float32 throughout."""
    zero = np.float32(0.0)

    def tiles_dsp(pos, m, eps2, xh, yh, zh, xl, yl, zl):
        tid = cuda.threadIdx.x
        sh = cuda.shared.array((7, tile), float32)
        ax, ay, az = zero, zero, zero
        for base in range(0, pos.shape[1], tile):
            j = base + tid
            for c in range(6):
                sh[c, tid] = pos[c, j]
            sh[6, tid] = m[j]
            cuda.syncthreads()
            for k in range(tile):
                dx = (sh[0, k] - xh) + (sh[3, k] - xl)   # order matters: no reassociation
                dy = (sh[1, k] - yh) + (sh[4, k] - yl)
                dz = (sh[2, k] - zh) + (sh[5, k] - zl)
                r2 = dx * dx + dy * dy + dz * dz + eps2
                rinv = rsqrt(r2)
                f = sh[6, k] * rinv * rinv * rinv
                ax += f * dx
                ay += f * dy
                az += f * dz
            cuda.syncthreads()
        return ax, ay, az
    return tiles_dsp


# ---------------------------------------------------------------- kernels
# Arguments: pos (3 or 6, Npad), m (Npad,), eps2, [length_scale, accel_scale,] start, stop,
# out (3, stop - start). Thread t of block b handles target i = start + b*TILE + t; targets
# i >= stop (padding of the slice) load body stop-1, take part in every barrier, write nothing.

def _kernel_sources(precision, tiles):
    if precision != "dsp":
        def pairwise(pos, m, eps2, start, stop, out):
            i = start + cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            it = min(i, stop - 1)
            ax, ay, az = tiles(pos, m, eps2, pos[0, it], pos[1, it], pos[2, it])
            if i < stop:
                out[0, i - start] = ax
                out[1, i - start] = ay
                out[2, i - start] = az

        def fused(pos, m, eps2, length_scale, accel_scale, start, stop, out):
            i = start + cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            it = min(i, stop - 1)
            xi, yi, zi = pos[0, it], pos[1, it], pos[2, it]
            ax, ay, az = tiles(pos, m, eps2, xi, yi, zi)
            if i < stop:
                gx, gy, gz = _as91(float64(xi), float64(yi), float64(zi), length_scale, accel_scale)
                out[0, i - start] = float64(ax) + gx
                out[1, i - start] = float64(ay) + gy
                out[2, i - start] = float64(az) + gz
        return pairwise, fused

    def pairwise_dsp(pos, m, eps2, start, stop, out):
        i = start + cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        it = min(i, stop - 1)
        ax, ay, az = tiles(pos, m, eps2, pos[0, it], pos[1, it], pos[2, it],
                           pos[3, it], pos[4, it], pos[5, it])
        if i < stop:
            out[0, i - start] = ax
            out[1, i - start] = ay
            out[2, i - start] = az

    def fused_dsp(pos, m, eps2, length_scale, accel_scale, start, stop, out):
        i = start + cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        it = min(i, stop - 1)
        xh, yh, zh = pos[0, it], pos[1, it], pos[2, it]
        xl, yl, zl = pos[3, it], pos[4, it], pos[5, it]
        ax, ay, az = tiles(pos, m, eps2, xh, yh, zh, xl, yl, zl)
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


def python_kernel(precision, tile=DEFAULT_TILE, galactic=False):
    """The plain Python kernel function (for `cuda.compile_ptx` in tests) and its fastmath flag."""
    _as91_device()
    if simulator():
        _lock_simulator_shared_arrays()
    fastmath = precision == "sp"
    ftype = np.float64 if precision == "dp" else np.float32
    rsqrt = _rsqrt(ftype)
    if precision == "dsp":
        tiles = cuda.jit(device=True)(_tiles_dsp_source(tile, rsqrt))
    else:
        tiles = cuda.jit(device=True, fastmath=fastmath)(_tiles_source(ftype, tile, rsqrt))
    pairwise, fused = _kernel_sources(precision, tiles)
    return (fused if galactic else pairwise), fastmath


def kernel(precision, tile=DEFAULT_TILE, galactic=False):
    """The compiled (lazily, per argument types) kernel for precision x tile x galactic."""
    key = (precision, tile, galactic)
    if key not in _KERNELS:
        fn, fastmath = python_kernel(precision, tile, galactic)
        _KERNELS[key] = cuda.jit(fastmath=fastmath)(fn)
    return _KERNELS[key]


def signature(precision, galactic=False):
    """The kernel's argument types, as launched by `CudaPairwise` (for compile_ptx)."""
    ft = float64 if precision == "dp" else float32
    args = [ft[:, ::1], ft[::1], ft]
    if galactic:
        args += [float64, float64]
    out = float64 if galactic else ft
    return tuple(args + [int64, int64, out[:, ::1]])


# ---------------------------------------------------------------- the backend

def device_names(ids) -> list[str]:
    if simulator():
        return ["CUDA simulator" for _ in ids]
    names = []
    for d in ids:
        name = cuda.gpus[d].name
        names.append(name.decode() if isinstance(name, bytes) else str(name))
    return names


def physical_devices() -> int:
    return 1 if simulator() else len(cuda.gpus)


class _Slice:
    """One device's share: targets [start, stop), all N positions, its own stream and buffers."""

    def __init__(self, gpu_id, start, stop, rows, npad, ftype, out_type, m):
        self.gpu_id, self.start, self.stop = gpu_id, start, stop
        self.gpu = cuda.gpus[gpu_id]
        with self.gpu:
            self.stream = cuda.stream()
            self.pos = cuda.device_array((rows, npad), dtype=ftype)
            self.m = cuda.to_device(m)
            self.out = cuda.device_array((3, stop - start), dtype=out_type)
            self.host_out = cuda.pinned_array((3, stop - start), dtype=out_type)


class CudaPairwise:
    """Pairwise backend on 1..k CUDA devices (`devices` = k slices of targets, round-robin over
    the physical GPUs); with `galactic`, E's fused kernel also adds the Galaxy.

    Buffers are allocated once here: a pinned host buffer of positions in the kernel's type
    (padded), per slice a device copy of all positions and masses, a device and a pinned host
    buffer of its accelerations. `upload`, `compute`, `download` each end synchronised."""

    def __init__(self, m, eps, precision, tile=DEFAULT_TILE, devices=1, galactic=False, units=None):
        if precision not in PRECISIONS:
            raise ValueError(f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}")
        tile, devices = check_tile(tile), check_devices(devices)
        ok, reason = availability()
        if not ok:
            raise RuntimeError(reason)
        self.precision, self.tile, self.devices = precision, tile, devices
        self.includes_galactic = bool(galactic)
        n = m.shape[0]
        self.n = n
        self.npad = npad = -(-n // tile) * tile
        ftype = np.float64 if precision == "dp" else np.float32
        rows = 6 if precision == "dsp" else 3
        self.eps2 = ftype(eps * eps)
        self.scales = ()
        if galactic:
            if units is None:
                raise ValueError("the fused galactic kernel needs the state's units")
            self.scales = (np.float64(units.galaxy_length_scale), np.float64(units.galaxy_acceleration_scale))
        out_type = np.float64 if galactic else ftype
        self.kernel = kernel(precision, tile, self.includes_galactic)

        # Small N means few blocks by design; numba-cuda would warn about occupancy on every launch.
        warnings.filterwarnings("ignore", message="Grid size .* will likely result in GPU under-utilization")
        ngpu = physical_devices()
        # one pinned buffer feeds every device: with unified addressing (64-bit Linux) host
        # memory pinned in one context counts as pinned in all of them
        with cuda.gpus[0]:
            self.host_pos = cuda.pinned_array((rows, npad), dtype=ftype)
        self.host_pos[...] = 0          # padding: zero-mass bodies at the origin
        mpad = np.zeros(npad, dtype=ftype)
        mpad[:n] = m
        bounds = [n * s // devices for s in range(devices + 1)]
        self.slices = [_Slice(s % ngpu, a, b, rows, npad, ftype, out_type, mpad)
                       for s, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])) if b > a]
        used = sorted({s.gpu_id for s in self.slices})
        names = device_names(used)
        if devices == 1:
            self.device = names[0]
        else:
            where = names[0] if len(set(names)) == 1 else " + ".join(names)
            self.device = f"{where} ({devices} slices on {len(used)} device{'s' if len(used) > 1 else ''})"

    def synchronize(self):
        for s in self.slices:
            s.stream.synchronize()

    def upload(self, x):
        """Positions (3, N) float64 -> the pinned buffer in the kernel's type -> every slice's device."""
        n, h = self.n, self.host_pos
        if self.precision == "dsp":
            dsp.split(x, h[0:3, :n], h[3:6, :n])
        else:
            np.copyto(h[:, :n], x, casting="same_kind")
        for s in self.slices:
            with s.gpu:
                s.pos.copy_to_device(h, stream=s.stream)
        self.synchronize()

    def launch(self):
        """Start the kernel on every slice (all devices work at once); does not wait."""
        for s in self.slices:
            grid = -(-(s.stop - s.start) // self.tile)
            with s.gpu:
                self.kernel[grid, self.tile, s.stream](s.pos, s.m, self.eps2, *self.scales,
                                                       s.start, s.stop, s.out)

    def compute(self):
        self.launch()
        self.synchronize()

    def download(self, out):
        """Accelerations of every slice -> pinned buffers -> out (3, N) float64 (assigned)."""
        for s in self.slices:
            with s.gpu:
                s.out.copy_to_host(s.host_out, stream=s.stream)
        self.synchronize()
        for s in self.slices:
            out[:, s.start:s.stop] = s.host_out

    def forces(self, x, out, clock):
        with clock.task("transfer", sync=self.synchronize):
            self.upload(x)
        with clock.task("pairwise", sync=self.synchronize):
            self.launch()
        with clock.task("transfer", sync=self.synchronize):
            self.download(out)


def build(state, precision, host, galactic=False, tile=DEFAULT_TILE, devices=1):
    """(backend, host kernels) for a GPU version; options checked before anything is allocated."""
    check_tile(tile)
    check_devices(devices)
    if not galactic and devices != 1:
        raise ValueError(f"devices={devices}: only version E splits the work over several devices")
    backend = CudaPairwise(state.m, state.eps, precision, tile=tile, devices=devices,
                           galactic=galactic, units=state.units)
    return backend, host
