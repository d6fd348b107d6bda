"""CPU kernels with numba: pairwise (sp, dp, dsp), galactic, and y += h x for drifts and kicks.

One Python source per kernel, compiled twice: `njit` (serial, version A and C) and
`njit(parallel=True)` with `prange` over targets (threaded, versions B, D and E); the thread
count follows numba (`NUMBA_NUM_THREADS`, `numba.set_num_threads`).

Pairwise kernels take positions as separate x, y, z rows (what lets LLVM vectorise the inner
loop) and write float64 accelerations. sp: float32 terms and accumulators; dp: float64
throughout; dsp: float32 hi/lo positions (see `dsp.py`), float32 terms and accumulators.
fastmath: sp and dp allow every flag (reassociation only reorders the sum over sources);
dsp leaves out `reassoc`, which could fold (hi_j - hi_i) + (lo_j - lo_i) back into
(hi_j + lo_j) - (hi_i + lo_i) and lose the low word.
"""
import math

import numba
import numpy as np
from numba import njit, prange

from . import dsp
from .as91 import as91_acceleration

FASTMATH_ALL = True
FASTMATH_NO_REASSOC = {"nnan", "ninf", "nsz", "arcp", "contract", "afn"}
_OPTS = dict(error_model="numpy", cache=False)


def _pairwise_source(ftype):
    one, zero = ftype(1.0), ftype(0.0)

    def pairwise(x, y, z, m, eps2, ax, ay, az):
        n = x.shape[0]
        for i in prange(n):
            xi, yi, zi = x[i], y[i], z[i]
            sx, sy, sz = zero, zero, zero
            for j in range(n):
                dx = x[j] - xi
                dy = y[j] - yi
                dz = z[j] - zi
                r2 = dx * dx + dy * dy + dz * dz + eps2
                rinv = one / math.sqrt(r2)
                f = m[j] * rinv * rinv * rinv
                sx += f * dx
                sy += f * dy
                sz += f * dz
            ax[i] = sx
            ay[i] = sy
            az[i] = sz
    return pairwise


def _pairwise_dsp_source():
    one, zero = np.float32(1.0), np.float32(0.0)

    def pairwise_dsp(xh, yh, zh, xl, yl, zl, m, eps2, ax, ay, az):
        n = xh.shape[0]
        for i in prange(n):
            xhi, yhi, zhi = xh[i], yh[i], zh[i]
            xli, yli, zli = xl[i], yl[i], zl[i]
            sx, sy, sz = zero, zero, zero
            for j in range(n):
                dx = (xh[j] - xhi) + (xl[j] - xli)
                dy = (yh[j] - yhi) + (yl[j] - yli)
                dz = (zh[j] - zhi) + (zl[j] - zli)
                r2 = dx * dx + dy * dy + dz * dz + eps2
                rinv = one / math.sqrt(r2)
                f = m[j] * rinv * rinv * rinv
                sx += f * dx
                sy += f * dy
                sz += f * dz
            ax[i] = sx
            ay[i] = sy
            az[i] = sz
    return pairwise_dsp


def _galactic_source(as91):
    def galactic(x, y, z, ax, ay, az, length_scale, accel_scale):
        for i in prange(x.shape[0]):
            gx, gy, gz = as91(x[i], y[i], z[i], length_scale, accel_scale)
            ax[i] += gx
            ay[i] += gy
            az[i] += gz
    return galactic


def _axpy(y, x, h):
    """y += h x: a drift (x += h v) or a kick (v += h a) on flat float64 arrays."""
    for i in prange(y.shape[0]):
        y[i] += h * x[i]


class CpuKernels:
    """The CPU kernels, serial (`parallel=False`) or threaded (`parallel=True`)."""

    def __init__(self, parallel: bool):
        self.parallel = parallel
        jit = lambda fastmath: njit(parallel=parallel, fastmath=fastmath, **_OPTS)  # noqa: E731
        self.pairwise = {
            "sp": jit(FASTMATH_ALL)(_pairwise_source(np.float32)),
            "dp": jit(FASTMATH_ALL)(_pairwise_source(np.float64)),
            "dsp": jit(FASTMATH_NO_REASSOC)(_pairwise_dsp_source()),
        }
        self.galactic = jit(False)(_galactic_source(njit(as91_acceleration)))
        self.axpy = jit(FASTMATH_ALL)(_axpy)

    @property
    def threads(self) -> int:
        return numba.get_num_threads() if self.parallel else 1

    @property
    def device(self) -> str:
        return f"CPU, {self.threads} thread{'s' if self.threads > 1 else ''}"


SERIAL = CpuKernels(parallel=False)
THREADED = CpuKernels(parallel=True)


class CpuPairwise:
    """Pairwise backend on the host: converts positions to the precision's arrays (part of the
    pairwise task, as on a CPU there is no transfer) and runs the kernel."""

    includes_galactic = False

    def __init__(self, kernels: CpuKernels, m, eps, precision):
        self.kernels = kernels
        self.precision = precision
        self.device = kernels.device
        n = m.shape[0]
        if precision == "dp":
            self.m, self.eps2 = np.ascontiguousarray(m, dtype=np.float64), np.float64(eps * eps)
        else:
            self.m, self.eps2 = m.astype(np.float32), np.float32(eps * eps)
            self.hi = np.empty((3, n), dtype=np.float32)
            self.lo = np.empty((3, n), dtype=np.float32) if precision == "dsp" else None
        self.kernel = kernels.pairwise[precision]

    def forces(self, x, out, clock):
        with clock.task("pairwise"):
            if self.precision == "dp":
                self.kernel(x[0], x[1], x[2], self.m, self.eps2, out[0], out[1], out[2])
            elif self.precision == "sp":
                h = self.hi
                np.copyto(h, x, casting="same_kind")
                self.kernel(h[0], h[1], h[2], self.m, self.eps2, out[0], out[1], out[2])
            else:
                h, lo = dsp.split(x, self.hi, self.lo)
                self.kernel(h[0], h[1], h[2], lo[0], lo[1], lo[2], self.m, self.eps2,
                            out[0], out[1], out[2])
