"""Cold compile time: JIT compilation and first call of a version's pipeline."""
from nbsymple_versions import TaskClock

from .common import Benchmark, axes, configure_threads, timing_state


class Compile(Benchmark):
    """asv runs each combination in a freshly spawned process, so the kernels are cold:
    `ForcePipeline.warm_up` (compile + first call of every kernel of a step, at N = `n`)
    measures the compile time. The pipeline is validated afterwards (validating first would
    compile the kernels before the measurement)."""

    version = "1"
    params, param_names = axes("version", "precision")
    n = 1024

    def setup(self, version, precision):
        self.check_params(version, precision)
        configure_threads()
        state = timing_state(self.n)
        forces = self.make_pipeline(version, state, precision, TaskClock())
        self.seconds = forces.warm_up(state.x)
        self.validate(version, precision)

    def track_compile_seconds(self, version, precision):
        """Seconds of the cold warm-up call (compilation dominates)."""
        return self.seconds

    track_compile_seconds.unit = "s"
