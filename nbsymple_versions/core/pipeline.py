"""The force pipeline of a version: where each of the four tasks runs.

A pairwise *backend* computes the O(N^2) accelerations, on the host or on a device; it
times its own `pairwise` and `transfer` tasks on the clock, and for version E it adds the
galactic force in the same kernel (`includes_galactic`). *Host kernels* do the O(N) work
on the CPU, serial or threaded: the galactic acceleration and the drifts and kicks.

Backend protocol: `forces(x, out, clock)` writes accelerations of positions x (3, N) float64
into out (3, N) float64; attributes `includes_galactic`, `device`, `precision`.
Host-kernel protocol: `galactic(x, y, z, ax, ay, az, length_scale, accel_scale)` adds the
Galaxy's pull; `axpy(y, x, h)` does y += h x on flat float64 arrays; attribute `threads`.
"""
import time

import numpy as np

from .clock import TaskClock

PRECISIONS = ("sp", "dp", "dsp")


def check_precision(precision: str) -> str:
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}")
    return precision


class ForcePipeline:
    """Accelerations, drifts and kicks of one version, each task timed on `clock`."""

    def __init__(self, backend, host, units, clock: TaskClock | None = None):
        self.backend = backend
        self.host = host
        self.units = units
        self.clock = clock or TaskClock()
        self.clock.device = backend.device
        self.clock.threads = host.threads
        self.compile_seconds = None

    @property
    def precision(self) -> str:
        return self.backend.precision

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
