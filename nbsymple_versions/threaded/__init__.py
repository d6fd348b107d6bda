"""Version B, `threaded`: A's kernels on all CPU cores (numba `prange`, the paper's OpenMP).

Files: `kernels.py` (`THREADED`: A's kernel sources compiled with `parallel=True`; the thread
count follows numba: `NUMBA_NUM_THREADS`, `numba.set_num_threads`). B's pipeline is A's
(`serial.pairwise.cpu_pipeline`) with these kernels; B's host kernels also serve D, E and F.
"""
from ..serial import Options, availability  # noqa: F401  (B takes no options and runs anywhere)

GPU = False
HOST_KERNELS = "threaded"
GALAXY_IN_KERNEL = False


def build_pipeline(state, precision, clock, options: Options):
    from ..serial.pairwise import cpu_pipeline
    from .kernels import THREADED
    return cpu_pipeline(THREADED, state, precision, clock)
