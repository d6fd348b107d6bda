"""Version F's force pipeline: one rank's slice of A-E's pipeline, with the exchange timed.

Per force evaluation each rank (1) sends its slice of the positions to every rank and
receives theirs (`World.exchange`, an in-place `MPI_Allgatherv`; task `communicate`), (2)
computes the pairwise forces on its targets against all N sources with its node version
(task `pairwise`, and `transfer` on a GPU), (3) adds the Galaxy's pull on its targets
(`galactic`; inside E's kernel when that is the node version). Drifts and kicks touch only the
rank's own slice (`integrate`). The other ranks' columns of the positions are current only
right after an exchange, those of the velocities and accelerations never: the driver gathers
the state (`world.exchange`) before diagnostics, snapshots and checkpoints.

Diagnostic calls (`pairwise`, `galactic`, and `accelerations` inside `off_the_clock`, as
`Simulation.accelerations` makes them) gather the result too, so they return all N bodies on
every rank, as A-E do.
"""
from contextlib import contextmanager
import os
import sys

import numba

from ..core.pipeline import ForcePipeline, VersionUnavailable
from .engines import axpy_columns, cpu_slice_pairwise, gpu_slice_pairwise

from ..threaded.kernels import THREADED


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
        super().__init__(backend, host, units, clock, world)
        self.n, self.node_version = n, node_version
        self.chosen = {"node_version": node_version}
        self.start, self.stop = world.slice(n)
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

    def warm_up(self, x):
        """A-E's warm-up on this rank, then every rank waits for the others, off the clock: a rank
        that compiled sooner would otherwise count the others' compilation as the first step's
        `communicate` (a timing job that starts stepping at once, `mpi_timing`, timed it)."""
        seconds = super().warm_up(x)
        self.world.any(False)
        return seconds

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
        with self.clock.task("integrate"):
            axpy_columns(y, x, h, self.start, self.stop)

    def drift(self, x, v, h):
        self._axpy_slice(x, v, h)

    def kick(self, v, a, h):
        self._axpy_slice(v, a, h)


_SAID: set[str] = set()                # the sentences `build` has said in this process


def default_node_version(world, backend: str = "numba") -> str:
    """F's node version where none is asked for: E when every rank sees a GPU through `backend`
    (or the CUDA simulator is on), else B; the same on every rank (collective)."""
    from ..gpu_pairwise.backends import availability
    return "E" if world.agree(availability(backend)[0])[0] else "B"


def build(state, precision, clock, world, options) -> MpiPipeline:
    """F's pipeline on this rank of `world`, with node version `options.node_version` (B, D or E;
    default as `default_node_version`, which the pipeline's `chosen` records, so that a resumed
    run takes it again) and those of F's `options` that version takes; it must be available on
    every rank: all ranks raise together (`VersionUnavailable`), with the failing rank's reason.
    GPU options given with node version B asked for are refused (it has no GPU to use them on);
    where B is the default (no GPU on some rank), rank 0 says they are not used: a checkpoint of
    an earlier version that recorded them resumes."""
    from .. import gpu_full, gpu_threaded, threaded
    node = options.node_version or default_node_version(world, options.backend)
    package = {"B": threaded, "D": gpu_threaded, "E": gpu_full}[node]
    if not package.GPU and (unused := {k: v for k, v in options.asked().items() if k != "node_version"}):
        flags = {d["name"]: d["flag"] for d in options.describe()}
        given = [f"{flags[k]} {v}" for k, v in unused.items()]
        given = ", ".join(given[:-1]) + " and " + given[-1] + " are" if len(given) > 1 else given[0] + " is"
        if options.node_version:
            raise VersionUnavailable(f"version F is not available: {given} for a GPU node version (D, E), and "
                                     f"--node-version B has none")
        said = (f"version F: {given} for a GPU node version (D, E), not used: not every rank can run one "
                f"({options.backend} backend), so each runs node version B")    # (not "sees a GPU": the simulator
        if world.is_root and said not in _SAID:                                  # sees one, CuPy runs none)
            _SAID.add(said)              # once per process: `check` builds F once per precision (a hunt: thrice)
            print(said, file=sys.stderr, flush=True)
    node_options = package.Options(**{name: getattr(options, name) for name in package.Options.names()
                                      if name in options.names()})
    ok, reason = world.agree(*package.availability(node_options))
    if not ok:
        raise VersionUnavailable(f"version F is not available: node version {node} on {reason}")
    threads_per_rank(world)
    start, stop = world.slice(state.n)
    if package.GPU:
        backend = gpu_slice_pairwise(state.m, state.eps, precision, start, stop, world.local_rank,
                                     galactic=package is gpu_full, units=state.units, options=node_options)
    else:
        backend = cpu_slice_pairwise(state.m, state.eps, precision, start, stop)
    return MpiPipeline(backend, THREADED, state.units, clock, world, state.n, node)

