"""Cold compile time: JIT compilation and first call of a version's pipeline."""
import os
import subprocess
import sys

from .common import Benchmark
from .grid import axes, configure_threads
from .package import LEGACY_TIMING

# A cold start, as a user's first run: a fresh interpreter, no on-disk cache of the kernels, the
# pipeline for the timing state (`package.timing_state`), and its warm-up, timed (compilation
# dominates). argv: version, precision, N, numba threads.
COLD_START = """
import sys
import numba
import nbsymple_versions as nb
version, precision, n, threads = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:5])
numba.set_num_threads(threads)
state = (nb.timing_state(n) if "timing_state" in nb.__all__
         else nb.make_cluster(n, seed=%(seed)d, exact_potential=n <= %(exact_max_n)d))
print(nb.get_version(version).pipeline(state, precision, nb.TaskClock()).warm_up(state.x))
""" % LEGACY_TIMING


def cold_start_seconds(version: str, precision: str, n: int, threads: int) -> float:
    """Seconds of `ForcePipeline.warm_up` (compile + first call of every kernel of a step) in a
    fresh interpreter without numba's on-disk cache."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    args = [version, precision, str(n), str(threads)]
    p = subprocess.run([sys.executable, "-c", COLD_START, *args], capture_output=True, text=True, errors="replace",
                       env=env, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"the cold start of version {version} {precision} exited with {p.returncode}: "
                           f"{p.stderr[-2000:]}")
    return float(p.stdout.split()[-1])


class Compile(Benchmark):
    """asv forks each combination from a process that has numba set up and the kernels' cache at
    hand, so the cold start runs in an interpreter of its own (`cold_start_seconds`), as it did
    when asv spawned every benchmark: the figure is the warm-up of the pipeline at N = `n`. The
    same factory's pipeline is validated here first."""

    version = "1"
    params, param_names = axes("version", "precision")
    n = 1024

    def setup(self, version, precision):
        self.check_params(version, precision)
        self.validate(version, precision)
        self.seconds = cold_start_seconds(version, precision, self.n, configure_threads())

    def track_compile_seconds(self, version, precision):
        """Seconds of the cold warm-up call (compilation dominates)."""
        return self.seconds

    track_compile_seconds.unit = "s"
