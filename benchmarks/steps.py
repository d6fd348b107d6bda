"""Whole integration steps (paper Fig. 2, Fig. 5) and the per-task shares of a step
(paper Tables 4-6), through the same stepping loop as `Simulation.step`."""
import itertools

from .common import Benchmark, cached_result, measure_each
from .grid import axes, budget_reason
from .package import SkipNotImplemented


class Step(Benchmark):
    """One step of dt = 5e-4 of the cluster on its orbit (drifts and kicks on the host in
    float64, forces on the version's devices in the precision)."""

    version = "1"
    params, param_names = axes("version", "n", "precision")
    method_skips = {"time_step_si6a": lambda self, version, n, precision: budget_reason(version, n, 7)}

    def setup(self, version, n, precision):
        self.check_params(version, n, precision)
        self.prepare(version, n, precision)
        self.leapfrog, _ = self.stepper(version, precision, "leapfrog")
        self.si6a, _ = self.stepper(version, precision, "si6a")

    def time_step_leapfrog(self, version, n, precision):
        """Leapfrog (drift-kick-drift): one force evaluation per step."""
        self.leapfrog()

    def time_step_si6a(self, version, n, precision):
        """SI6A (6th order): seven force evaluations per step."""
        if self.method_skip["time_step_si6a"]:
            raise SkipNotImplemented(self.method_skip["time_step_si6a"])
        self.si6a()


class TaskShares(Benchmark):
    """Share of each task in a dp leapfrog step, from the TaskClock over warm steps (at least
    `min_steps`, and until the clock holds `min_seconds`). All four shares of a (version, N)
    come from one measurement (in `setup_cache`, one process for the grid), so they sum to 100."""

    version = "1"
    params, param_names = axes("version", "n", "task")
    min_steps = 3
    min_seconds = 0.5
    max_steps = 2000

    def setup_cache(self):
        return measure_each(itertools.product(self.params[0], self.params[1]), self.measure)

    setup_cache.timeout = 1800

    def measure(self, version, n) -> dict:
        reason = self.skip_reason(version, n)
        if reason:
            raise NotImplementedError(reason)
        self.prepare(version, n, "dp")
        step, clock = self.stepper(version, "dp", "leapfrog")
        steps = 0
        while steps < self.max_steps and (steps < self.min_steps or clock.total < self.min_seconds):
            step()
            steps += 1
        return clock.shares()

    def setup(self, shares, version, n, task):
        self.shares = cached_result(shares, (version, n))

    def track_share(self, shares, version, n, task):
        """Percentage of a dp leapfrog step spent in `task` (0 where the version has no such
        task: transfer on the CPU versions, galactic on E)."""
        if task not in self.shares:
            raise SkipNotImplemented(f"this commit's TaskClock has no {task} task")
        return self.shares[task]

    track_share.unit = "%"
