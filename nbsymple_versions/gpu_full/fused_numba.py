"""Version E's fused kernel for numba-cuda: C's sum over sources (`gpu_pairwise/numba_cuda.py`)
plus the Allen & Santillan field (`core/as91.py`, compiled as a float64 device function) at the
target's position, written as float64. Imported by `fused.GALAXY` when a kernel is built.
"""
from numba import cuda
from numba.cuda import float64

from ..core.as91 import as91_acceleration
from ..gpu_pairwise.numba_cuda import device_function

_as91 = cuda.jit(device=True)(as91_acceleration)


def _position(t):
    return float64(t[0]), float64(t[1]), float64(t[2])


def _position_dsp(t):
    return float64(t[0]) + float64(t[3]), float64(t[1]) + float64(t[4]), float64(t[2]) + float64(t[5])


def fused_source(record, sources):
    """The fused kernel of `record`'s precision around `sources`; the galaxy sees the target's
    full position in float64 (dsp: hi + lo)."""
    target_of = record.target
    position = device_function(_position_dsp if record.precision == "dsp" else _position)

    def fused(pos, eps2, length_scale, accel_scale, start, stop, out):
        i = start + cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        target = target_of(pos, min(i, stop - 1))
        ax, ay, az = sources(pos, eps2, target)
        if i < stop:
            x, y, z = position(target)
            gx, gy, gz = _as91(x, y, z, length_scale, accel_scale)
            out[0, i - start] = float64(ax) + gx
            out[1, i - start] = float64(ay) + gy
            out[2, i - start] = float64(az) + gz
    return fused
