"""Version A's pairwise backend: the O(N^2) forces with the CPU kernels, on the host."""
import numpy as np

from ..core import dsp
from ..core.pipeline import ForcePipeline
from .kernels import CpuKernels


class CpuPairwise:
    """Pairwise backend on the host: converts positions to the precision's arrays (part of the
    pairwise task, as on a CPU there is no transfer) and runs the kernel for targets
    [start, stop) (default all; version F's ranks each take a slice) against all N sources,
    writing out[:, start:stop] and leaving the other columns alone."""

    includes_galactic = False

    def __init__(self, kernels: CpuKernels, m, eps, precision, start: int = 0, stop: int | None = None):
        self.kernels = kernels
        self.precision = precision
        self.device = kernels.device
        n = m.shape[0]
        self.start, self.stop = start, n if stop is None else stop
        if precision == "dp":
            self.m, self.eps2 = np.ascontiguousarray(m, dtype=np.float64), np.float64(eps * eps)
        else:
            with np.errstate(over="ignore"):       # beyond float32: inf, found after the step
                self.m, self.eps2 = m.astype(np.float32), np.float32(eps * eps)
            self.hi = np.empty((3, n), dtype=np.float32)
            self.lo = np.empty((3, n), dtype=np.float32) if precision == "dsp" else None
        self.kernel = kernels.pairwise[precision]

    def forces(self, x, out, clock):
        a, b = self.start, self.stop
        with clock.task("pairwise"):
            if self.precision == "dp":
                hi = lo = x
            elif self.precision == "sp":
                with np.errstate(over="ignore", invalid="ignore"):
                    np.copyto(self.hi, x, casting="same_kind")
                hi = lo = self.hi
            else:
                hi, lo = dsp.split(x, self.hi, self.lo)
            self.kernel(hi[0], hi[1], hi[2], lo[0], lo[1], lo[2], self.m, self.eps2, a,
                        out[0, a:b], out[1, a:b], out[2, a:b])


def cpu_pipeline(kernels: CpuKernels, state, precision, clock) -> ForcePipeline:
    """Every task on the host with `kernels` (A: `SERIAL`, B: `threaded.kernels.THREADED`)."""
    return ForcePipeline(CpuPairwise(kernels, state.m, state.eps, precision), kernels, state.units, clock)
