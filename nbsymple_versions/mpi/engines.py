"""F's node versions: the pairwise forces on one rank's slice of targets, against
all N sources, with the engines of B (threaded CPU) or of D/E (GPU).

CPU: B's own threaded kernels (`serial.pairwise.CpuPairwise` over `THREADED`, with a target
range [start, stop)): the same compiled code, so each target's sum runs over the same sources
in the same order and every precision gives B's numbers bit for bit (a test).

GPU: the GPU engines take a target range (E's multi-device slices are ranges too); a rank's
engine keeps one slice, its own, built on the GPU `local_rank % GPUs` of its node (one rank
per GPU; or give each rank one GPU with CUDA_VISIBLE_DEVICES). All N positions are uploaded,
only the slice's forces come back.
"""
from numba import njit, prange

from ..serial.kernel_cache import on_disk
from ..serial.kernels import FASTMATH_ALL, JIT_OPTIONS
from ..serial.pairwise import CpuPairwise
from ..threaded.kernels import THREADED


def _axpy_columns(y, x, h, start, stop):
    """y[:, start:stop] += h x[:, start:stop] on (3, N) float64 arrays, in one parallel region
    (a drift or a kick of this rank's slice; the same contracted y + h x as B's `axpy`)."""
    for i in prange(start, stop):
        for c in range(3):
            y[c, i] += h * x[c, i]


axpy_columns = on_disk(njit(parallel=True, fastmath=FASTMATH_ALL, **JIT_OPTIONS)(_axpy_columns), "axpy columns", True)


def cpu_slice_pairwise(m, eps, precision, start, stop):
    """B's threaded pairwise forces on targets [start, stop) of all N bodies."""
    return CpuPairwise(THREADED, m, eps, precision, start, stop)


def gpu_slice_pairwise(m, eps, precision, start, stop, local_rank, galactic, units, options):
    """The GPU engine of D (galactic=False) or E (galactic=True, E's fused kernel) on targets
    [start, stop), built on this node's GPU `local_rank % GPUs`, with the node version's
    `options` (tile, kernel, backend)."""
    from ..gpu_full.fused import GALAXY
    from ..gpu_pairwise.backends import engine_class
    engine = engine_class(options.backend)
    return engine(m, eps, precision, tile=options.tile, kernel=options.kernel, galaxy=GALAXY if galactic else None,
                  units=units, targets=(start, stop), gpus=[local_rank % engine.device_count()])
