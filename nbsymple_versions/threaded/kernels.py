"""B's build of A's CPU kernels: `prange` loops over targets (or elements) on all cores."""
from ..serial.kernels import CpuKernels

THREADED = CpuKernels(parallel=True)

