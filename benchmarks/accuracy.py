"""Conservation of energy and angular momentum (paper Tables 2 and 7): version B, the paper's
set-up (uniform sphere, Q = 0.3, on its orbit at 8.5 kpc) at a fixed small N and seed,
1000 steps of dt = 5e-4, leapfrog and SI6A, in sp, dp and dsp."""
import itertools

import numba
import numpy as np

from .common import Benchmark, cached_result, measure_each
from .grid import AXES, CONSERVATION_N, DT, configure_threads, left_out
from .package import public


class Conservation(Benchmark):
    """Relative errors |E - E0| / |E0| (the paper's: E = cluster + Galaxy), |E - E0| / |K_int0 + W0|
    (the same change in units of the cluster's internal energy, which the orbital term hides
    in the first; `diagnostics.internal_energy_error`) and |L_z - L_z0| / |L0| (L about the
    Galactic centre; `diagnostics.angular_momentum_error`, as `Simulation.angular_momentum_error`).
    The six runs happen once, in `setup_cache` (about 20 s at N = 1024 on one core)."""

    version = "1"         # explicit: refactoring this class keeps its history (bump if what it measures changes)
    params = [list(AXES["scheme"]), list(AXES["precision"])]
    param_names = ["scheme", "precision"]
    letter = "B"
    n = CONSERVATION_N
    seed = 1
    steps = 1000
    run_threads = 1     # B's kernels on one thread: each target's sum is serial, so the errors
    #                     are the same on any thread count, and the run does not stall on a busy
    #                     shared machine (parallel regions wait for descheduled threads)

    def skip_reason(self, scheme, precision):
        """Where NBSYMPLE_BENCH_VERSIONS leaves out B, whose runs these are (a hunt: it ran them)."""
        return left_out(self.letter)

    def setup_cache(self):
        return measure_each(itertools.product(self.params[0], self.params[1]), self.integrate)

    setup_cache.timeout = 1200

    def integrate(self, scheme, precision) -> dict:
        if reason := self.skip_reason(scheme, precision):
            raise NotImplementedError(reason)
        configure_threads()
        previous = numba.get_num_threads()
        numba.set_num_threads(min(self.run_threads, previous))
        try:
            return self._integrate(scheme, precision)
        finally:
            numba.set_num_threads(previous)

    def _integrate(self, scheme, precision) -> dict:
        self.validate(self.letter, precision)
        state = public.make_cluster(self.n, seed=self.seed)
        forces = self.make_pipeline(self.letter, state, precision)
        forces.warm_up(state.x)
        p0, l0 = public.energy_parts(state), public.angular_momentum(state)
        acc, sch = np.zeros_like(state.x), public.get_scheme(scheme)
        public.advance(state, forces, sch, DT, 1, acc)
        first = public.relative_error(public.energy_parts(state).total, p0.total)
        public.advance(state, forces, sch, DT, self.steps - 1, acc)
        p = public.energy_parts(state)
        return {"energy": public.relative_error(p.total, p0.total), "energy_per_step": first,
                "internal_energy": public.internal_energy_error(p, p0, state.units),
                "angular_momentum": public.angular_momentum_error(public.angular_momentum(state), l0)}

    def setup(self, results, scheme, precision):
        self.errors = cached_result(results, (scheme, precision))

    def track_energy_error(self, results, scheme, precision):
        """Relative energy error after 1000 steps."""
        return self.errors["energy"]

    track_energy_error.unit = "relative"

    def track_energy_error_per_step(self, results, scheme, precision):
        """Relative energy error after the first step."""
        return self.errors["energy_per_step"]

    track_energy_error_per_step.unit = "relative"

    def track_internal_energy_error(self, results, scheme, precision):
        """|E - E0| / |K_int0 + W0| after 1000 steps: the same change of the total energy, in
        units of the cluster's own (binding) energy."""
        return self.errors["internal_energy"]

    track_internal_energy_error.unit = "relative"

    def track_angular_momentum_error(self, results, scheme, precision):
        """|L_z - L_z0| / |L0| after 1000 steps (the axisymmetric Galaxy conserves L_z; its
        torque changes L_x, L_y for real)."""
        return self.errors["angular_momentum"]

    track_angular_momentum_error.unit = "relative"
