"""The thread count of each run. (The pairwise rates, interactions per second and GFLOP/s, are
N^2 / `tasks.Tasks.time_pairwise` (x 20 flops): asv reads every figure as lower-is-better and has
no way to say otherwise, so the suite records the time and the paper and the report derive the
rates.)"""
from .common import Benchmark
from .grid import axes


class Threads(Benchmark):
    """The host threads a version's O(N) kernels (and B's pairwise kernel) ran on in this run:
    numba's thread count for the threaded versions B, D, E (set by NBSYMPLE_BENCH_THREADS,
    default all cores), 1 for A and C. Recorded so that B and D timings are never read without
    their thread count."""

    version = "1"
    params, param_names = axes("version")

    def setup(self, version):
        self.check_params(version)
        self.prepare(version, 256, "dp")

    def track_threads(self, version):
        return self.forces.host.threads

    track_threads.unit = "threads"
