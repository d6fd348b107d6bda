"""Version A, `serial`: the pairwise forces, the galactic force and the integration on one CPU
core (the paper's reference).

Files: `kernels.py` (the CPU kernels' sources, written once, and `SERIAL`, their serial build:
also C's host kernels), `avx512.py` (the dp loop over sources on AVX-512, in LLVM IR), `avx2.py`
(the loops over sources on AVX2, and sp's and dsp's on AVX-512's 16 lanes, in LLVM IR, where
`kernels.ROW_CPUS` takes them),
`ir_row.py` (the loops, reduction, series and numba call the IR rows share), `kernel_cache.py`
(numba's on-disk cache of every CPU kernel), `compile_lock.py` (one compile of each per machine:
the lock a compiling process holds, which the instruments' code cache takes too),
`pairwise.py` (`CpuPairwise`, the pairwise backend on the host, and
`cpu_pipeline`, which B reuses with its threaded build).
"""
from ..core.options import NoOptions

Options = NoOptions          # A takes no options
GPU = False                  # where the pairwise forces run: the host
HOST_KERNELS = "serial"      # the host kernels of the O(N) work
GALAXY_IN_KERNEL = False     # the galactic force: a host task (E: inside the GPU kernel)


def availability(options: Options) -> tuple[bool, str]:
    return True, ""


def build_pipeline(state, precision, clock, options: Options):
    from .kernels import SERIAL
    from .pairwise import cpu_pipeline
    return cpu_pipeline(SERIAL, state, precision, clock)
