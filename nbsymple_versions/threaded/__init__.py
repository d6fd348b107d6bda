"""Version B: everything on all CPU cores (the paper's OpenMP; here numba prange)."""
from ..kernels.cpu import THREADED, CpuPairwise
from ..versions import Version

VERSION = Version(
    "B", "threaded", pairwise="all CPU cores", galactic="all CPU cores", integrate="all CPU cores",
    build=lambda state, precision: (CpuPairwise(THREADED, state.m, state.eps, precision), THREADED),
)
