"""Version F's force pipeline: one rank's slice of A-E's pipeline, with the exchange timed.

Per force evaluation each rank (1) sends its slice of the positions to every rank and
receives theirs (`World.exchange`, an in-place `MPI_Allgatherv`; task `communicate`), (2)
computes the pairwise forces on its targets against all N sources with its node engine
(task `pairwise`, and `transfer` on a GPU), (3) adds the Galaxy's pull on its targets
(`galactic`; inside E's kernel when that is the engine). Drifts and kicks touch only the
rank's own slice (`integrate`). The other ranks' columns of the positions are current only
right after an exchange, those of the velocities and accelerations never: read the state
through `MpiSimulation`, which gathers it.

Diagnostic calls (`pairwise`, `galactic`, and `accelerations` inside `off_the_clock`, as
`Simulation.accelerations` makes them) gather the result too, so they return all N bodies on
every rank, as A-E do.
"""
from contextlib import contextmanager
from contextvars import ContextVar
import os

import numba

from ..core.pipeline import ForcePipeline
from .engines import axpy_columns

NODE_VERSIONS = ("B", "D", "E")     # node engines: B's threaded CPU kernels, D's or E's GPU kernels
OWNED = ContextVar("mpi_simulation_owns_the_pipeline", default=False)   # set by MpiSimulation


def threads_per_rank(world) -> int:
    """Share this node's cores between the ranks on it, unless NUMBA_NUM_THREADS says otherwise
    (one rank per node keeps all cores; two ranks on a 2-core machine get one thread each)."""
    if "NUMBA_NUM_THREADS" not in os.environ and world.local_size > 1:
        cores = min(numba.config.NUMBA_NUM_THREADS, len(os.sched_getaffinity(0)))
        numba.set_num_threads(max(1, cores // world.local_size))
    return numba.get_num_threads()


class MpiPipeline(ForcePipeline):
    """A-E's `ForcePipeline` on this rank's slice [start, stop) of the N bodies."""

    def __init__(self, backend, host, units, clock, world, n: int, node_version: str):
        super().__init__(backend, host, units, clock)
        self.world, self.n, self.node_version = world, n, node_version
        self.start, self.stop = world.slice(n)
        self.owned = OWNED.get()
        self.clock.device = f"{world.size} MPI rank{'s' if world.size > 1 else ''} x {backend.device}"
        self._gather = False        # diagnostics: also gather the accelerations

    @contextmanager
    def off_the_clock(self):
        with super().off_the_clock():
            gather, self._gather = self._gather, True
            try:
                yield
            finally:
                self._gather = gather

    def exchange(self, a):
        """All ranks' slices of the (3, N) array `a` to every rank, timed as `communicate`."""
        with self.clock.task("communicate"):
            self.world.exchange(a)

    def _galactic_slice(self, x, out):
        a, b, u = self.start, self.stop, self.units
        self.host.galactic(x[0, a:b], x[1, a:b], x[2, a:b], out[0, a:b], out[1, a:b], out[2, a:b],
                           u.galaxy_length_scale, u.galaxy_acceleration_scale)

    def accelerations(self, x, out):
        """Exchange the positions, then the total acceleration of this rank's targets into
        out[:, start:stop] (all of out when called for diagnostics)."""
        self.exchange(x)
        self.backend.forces(x, out, self.clock)
        if not self.backend.includes_galactic:
            with self.clock.task("galactic"):
                self._galactic_slice(x, out)
        if self._gather:
            self.exchange(out)

    def pairwise(self, x, out):
        """Mutual accelerations of all N bodies on every rank (validation)."""
        self.exchange(x)
        self.backend.forces(x, out, self.clock)
        self.exchange(out)

    def galactic(self, x, out):
        """Add the Galaxy's pull at x to out, all N bodies on every rank (each rank its slice)."""
        self.exchange(x)
        self._galactic_slice(x, out)
        self.exchange(out)

    def _axpy_slice(self, y, x, h):
        if self.world.size > 1 and not self.owned:
            raise RuntimeError("version F across MPI ranks integrates each rank's slice only: step it through "
                               "nbsymple_versions.mpi.MpiSimulation (or `nbsymple run --version F`), which "
                               "gathers the state for diagnostics and output; a plain Simulation cannot")
        with self.clock.task("integrate"):
            axpy_columns(y, x, h, self.start, self.stop)

    def warm_up(self, x):
        owned, self.owned = self.owned, True       # the warm-up's zero drift of a copy is fine
        try:
            return super().warm_up(x)
        finally:
            self.owned = owned

    def drift(self, x, v, h):
        self._axpy_slice(x, v, h)

    def kick(self, v, a, h):
        self._axpy_slice(v, a, h)


def build(node, state, precision, clock, world, host):
    """F's pipeline on this rank: `node` is the node engine's Version (B, D or E), `host` its
    host kernels; the node engine must be available on every rank (checked by the caller)."""
    threads_per_rank(world)
    start, stop = world.slice(state.n)
    if node.gpu:
        from .engines import cuda_slice_pairwise
        backend = cuda_slice_pairwise(state.m, state.eps, precision, start, stop, world.local_rank,
                                      galactic=node.fused_galactic, units=state.units)
    else:
        from .engines import cpu_slice_pairwise
        backend = cpu_slice_pairwise(state.m, state.eps, precision, start, stop)
    return MpiPipeline(backend, host, state.units, clock, world, state.n, node.letter)
