"""The force pipeline of a version: where each of the four tasks runs.

A pairwise *backend* computes the O(N^2) accelerations, on the host or on a device; it
times its own `pairwise` and `transfer` tasks on the clock, and for version E it adds the
galactic force in the same kernel (`includes_galactic`). *Host kernels* do the O(N) work
on the CPU, serial or threaded: the galactic acceleration and the drifts and kicks.
The two interfaces are the Protocols below; each version's package composes one of each, and
is itself a `VersionPackage`. The pipeline's `world` holds the collectives of the ranks it runs
on (`core.ranks`): none for A-E, MPI's for F.
"""
from contextlib import contextmanager
import time
from typing import Protocol, runtime_checkable

import numpy as np

from .clock import TaskClock
from .ranks import ONE_RANK


class VersionUnavailable(RuntimeError):
    """The version cannot run on this machine (one sentence says why)."""


class PairwiseBackend(Protocol):
    """O(N^2) accelerations of one precision, on the host or on devices."""

    precision: str               # "sp", "dp" or "dsp" (vocabulary.PRECISIONS)
    device: str                  # where it runs, in words ("CPU, 2 threads", "NVIDIA H200")
    includes_galactic: bool      # True when the kernel adds the Galaxy too (version E)

    def forces(self, x: np.ndarray, out: np.ndarray, clock: TaskClock) -> None:
        """Accelerations of positions x (3, N) float64 into out (3, N) float64 (assigned, not
        added), timing `pairwise` (and `transfer`, on a device) on `clock`."""


class HostKernels(Protocol):
    """O(N) work on the CPU: the Galaxy's pull, drifts and kicks."""

    threads: int
    device: str

    def galactic(self, x, y, z, ax, ay, az, length_scale: float, accel_scale: float) -> None:
        """Add the Allen & Santillan acceleration at (x, y, z) to (ax, ay, az), float64 rows."""

    def axpy(self, y: np.ndarray, x: np.ndarray, h: float) -> None:
        """y += h x on flat float64 arrays (a drift x += h v, or a kick v += h a)."""


@runtime_checkable
class VersionPackage(Protocol):
    """What a version's package (serial/ .. mpi/) provides; the registry (`versions.py`) reads
    only this. A package may also define `world()`, the ranks its pipeline runs on (F); without
    it, one process (`core.ranks.ONE_RANK`)."""

    Options: type                # its typed options: a `core.options.NoOptions` dataclass
    GPU: bool                    # the pairwise forces run on a GPU
    HOST_KERNELS: str            # the host kernels of its O(N) work: "serial" or "threaded"
    GALAXY_IN_KERNEL: bool       # the GPU kernel adds the galactic force (E): no galactic task

    def availability(self, options) -> tuple[bool, str]:
        """(True, '') or (False, why it cannot run here, in one sentence)."""

    def build_pipeline(self, state, precision: str, clock: TaskClock | None, options) -> "ForcePipeline":
        """A ready pipeline for `state` in `precision`, timed on `clock`."""


class ForcePipeline:
    """Accelerations, drifts and kicks of one version, each task timed on `clock`."""

    def __init__(self, backend: PairwiseBackend, host: HostKernels, units, clock: TaskClock | None = None,
                 world=ONE_RANK):
        self.backend = backend
        self.world = world
        self.host = host
        self.units = units
        self.clock = clock or TaskClock()
        self.clock.device = backend.device
        self.clock.threads = host.threads
        self.compile_seconds = None
        self.chosen = {}            # options chosen where none was given (F's node version): `Simulation` records them

    @contextmanager
    def off_the_clock(self):
        """Work inside is timed on a scratch clock: for diagnostics and validation calls, which
        are no steps and must not inflate the per-step times."""
        clock = self.clock
        self.clock = TaskClock(clock.device, clock.threads)
        try:
            yield
        finally:
            self.clock = clock

    def accelerations(self, x, out):
        """Total acceleration (pairwise + galactic) at positions x (3, N) into out (3, N)."""
        self.backend.forces(x, out, self.clock)
        if not self.backend.includes_galactic:
            with self.clock.task("galactic"):
                self.galactic(x, out)

    def pairwise(self, x, out):
        """Mutual accelerations only (for validation; E's fused kernel gives pairwise + galactic)."""
        self.backend.forces(x, out, self.clock)

    def galactic(self, x, out):
        """Add the galactic acceleration at x to out, on the host kernels."""
        u = self.units
        self.host.galactic(x[0], x[1], x[2], out[0], out[1], out[2],
                           u.galaxy_length_scale, u.galaxy_acceleration_scale)

    def drift(self, x, v, h):
        with self.clock.task("integrate"):
            self.host.axpy(x.reshape(-1), v.reshape(-1), h)

    def kick(self, v, a, h):
        with self.clock.task("integrate"):
            self.host.axpy(v.reshape(-1), a.reshape(-1), h)

    def warm_up(self, x):
        """Compile and run every kernel once on a copy of x, then zero the clock.
        Returns the seconds it took (compile time, on a cold process)."""
        start = time.perf_counter()
        xc, acc = x.copy(), np.empty_like(x)
        self.accelerations(xc, acc)
        self.drift(xc, acc, 0.0)
        self.compile_seconds = time.perf_counter() - start
        self.clock.reset()
        return self.compile_seconds
