"""Double-single (DSP) positions, as in Sapporo: x = hi + lo with hi = float32(x) and
lo = float32(x - hi). About 14 significant digits of a coordinate travel in two float32s,
so the separation x_j - x_i of two nearby bodies far from the origin survives:
dr = (hi_j - hi_i) + (lo_j - lo_i), each difference exact or nearly so in float32.
Kernels that use it must not reassociate that sum (no `reassoc` fastmath flag)."""
import numpy as np


def split(x, hi=None, lo=None):
    """Split float64 x into float32 (hi, lo); writes into hi, lo when given. A value beyond
    float32's range becomes inf, silently: the step it feeds leaves a non-finite state, which
    the simulation reports."""
    if hi is None:
        hi = np.empty(x.shape, dtype=np.float32)
    if lo is None:
        lo = np.empty(x.shape, dtype=np.float32)
    with np.errstate(over="ignore", invalid="ignore"):    # beyond float32: inf, found after the step
        np.copyto(hi, x, casting="same_kind")
        np.subtract(x, hi, out=lo, casting="same_kind")
    return hi, lo
