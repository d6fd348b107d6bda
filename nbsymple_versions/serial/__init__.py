"""Version A: everything on one CPU core."""
from ..kernels.cpu import SERIAL, CpuPairwise
from ..versions import Version

VERSION = Version(
    "A", "serial", pairwise="1 CPU core", galactic="1 CPU core", integrate="1 CPU core",
    build=lambda state, precision: (CpuPairwise(SERIAL, state.m, state.eps, precision), SERIAL),
)
