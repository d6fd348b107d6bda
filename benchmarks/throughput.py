"""Pairwise throughput (interactions per second, GFLOP/s) and the thread count of each run.

Rates read the wrong way for asv, which takes every figure as lower-is-better: these are for
people and the paper; the gate times `tasks.Tasks.time_pairwise` instead (the same call), and
`asv.conf.json` keeps these out of the dashboard's regression search."""
import numpy as np

from nbsymple_versions.core.vocabulary import FLOPS_PER_INTERACTION

from .common import Benchmark, axes, median_call_seconds


class Throughput(Benchmark):
    """Rate of the O(N^2) task: N^2 pair interactions per pairwise evaluation (all N sources
    for every target, as the paper's GPU code does; the self term adds zero) over the median
    wall time of one evaluation (CPU: kernel plus conversion of positions; GPU: the kernel
    alone, synchronised). Each figure measures for at least `min_seconds`."""

    version = "1"
    params, param_names = axes("version", "n", "precision")
    min_seconds = 0.3

    def setup(self, version, n, precision):
        self.check_params(version, n, precision)
        forces = self.prepare(version, n, precision)
        self.x = self.state.x.copy()
        self.out = np.zeros_like(self.x)
        if self.on_device:
            forces.backend.upload(self.x)
            self.call = forces.backend.compute
        else:
            self.call = lambda: forces.pairwise(self.x, self.out)

    def rate(self, n) -> float:
        return float(n) * float(n) / median_call_seconds(self.call, self.min_seconds)

    def track_interactions_per_second(self, version, n, precision):
        """Pair interactions per second: N^2 / (median seconds per pairwise evaluation)."""
        return self.rate(n)

    track_interactions_per_second.unit = "interactions/s"

    def track_gflops(self, version, n, precision):
        """GFLOP/s at 20 flops per pair interaction (the usual convention of GPU N-body papers,
        e.g. Nyland, Harris & Prins, GPU Gems 3 ch. 31), i.e. 20 x interactions/s / 1e9."""
        return FLOPS_PER_INTERACTION * self.rate(n) / 1e9

    track_gflops.unit = "GFLOP/s"


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
