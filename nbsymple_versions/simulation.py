"""`Simulation`: one cluster, one version, one scheme, in the spirit of REBOUND's API.

    sim = Simulation(make_cluster(1024, seed=1), version="B", scheme="si6a", precision="dp", dt=5e-4)
    sim.step(100)
    sim.energy_error(), sim.angular_momentum_error(), sim.clock.shares()
"""
import math

import numpy as np

from .core.clock import TaskClock
from .core.diagnostics import angular_momentum, angular_momentum_error, energy, relative_error
from .core.integrator import advance
from .core.schemes import get_scheme
from .versions import get_version

ACCELERATION_KINDS = ("total", "pairwise", "galactic")


class Simulation:
    """Integrates `state` in place with a version's force pipeline.

    `options` go to the version (e.g. `tile`, `devices` for GPU versions). The pipeline is
    compiled and warmed before the first step; `clock` then holds warm per-task times.
    With `diagnostics=False` the O(N^2) initial energy is not computed (for timing runs)."""

    def __init__(self, state, version="A", scheme="leapfrog", precision="dp", dt=5e-4,
                 diagnostics=True, **options):
        dt = float(dt)
        if not (dt > 0 and math.isfinite(dt)):
            raise ValueError(f"time step must be positive and finite, got dt = {dt}")
        self.state = state
        self.version = get_version(version)
        self.scheme = get_scheme(scheme)
        self.precision = precision
        self.dt = dt
        self.clock = TaskClock()
        self.forces = self.version.pipeline(state, precision, self.clock, **options)
        self.compile_seconds = self.forces.warm_up(state.x)
        self.steps_done = 0
        self._acc = np.empty_like(state.x)
        self.energy0 = energy(state) if diagnostics else None
        self.angular_momentum0 = angular_momentum(state) if diagnostics else None

    def step(self, steps: int = 1, on_step=None):
        """Advance by `steps` steps of dt; `on_step(k)` after each (k counts from 1)."""
        steps = int(steps)
        if steps < 0:
            raise ValueError(f"number of steps must be >= 0, got {steps}")
        advance(self.state, self.forces, self.scheme, self.dt, steps, self._acc, on_step)
        self.steps_done += steps

    def accelerations(self, kind: str = "total") -> np.ndarray:
        """Accelerations (N, 3) float64 of the current state, in the simulation's precision,
        on the version's devices: 'total', 'pairwise' or 'galactic' (E's fused kernel makes its
        'pairwise' include the Galaxy)."""
        out = np.zeros_like(self.state.x)
        x = self.state.x
        if kind == "total":
            self.forces.accelerations(x, out)
        elif kind == "pairwise":
            self.forces.pairwise(x, out)
        elif kind == "galactic":
            self.forces.galactic(x, out)
        else:
            raise ValueError(f"unknown acceleration kind {kind!r}; choose one of {', '.join(ACCELERATION_KINDS)}")
        return out.T

    def energy(self) -> float:
        return energy(self.state)

    def angular_momentum(self) -> np.ndarray:
        return angular_momentum(self.state)

    def energy_error(self) -> float:
        """|E - E0| / |E0| since the simulation was created."""
        return relative_error(self.energy(), self.energy0)

    def angular_momentum_error(self) -> float:
        """|L_z - L_z0| / |L0| since the simulation was created (see `diagnostics`)."""
        return angular_momentum_error(self.angular_momentum(), self.angular_momentum0)

    @property
    def seconds_per_step(self) -> float:
        return self.clock.total / self.steps_done if self.steps_done else math.nan

    @property
    def threads(self) -> int:
        return self.clock.threads

    @property
    def device(self) -> str:
        return self.clock.device
