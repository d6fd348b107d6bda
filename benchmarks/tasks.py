"""The paper's four tasks (Fig. 1, Tables 4-6), each timed warm and synchronised.

Tasks.time_pairwise (task 1, O(N^2); N^2 / this time is the interactions-per-second rate),
HostTasks.time_galactic (task 2) and .time_integrate (task 3: one drift and one kick), which
are float64 on the host whatever the precision and so take no precision parameter, and
Transfer.time_transfer (task 4), which only the GPU versions have.
"""
import numpy as np

from .common import Benchmark
from .grid import axes, galactic_reason
from .package import SkipNotImplemented


class Tasks(Benchmark):
    """The O(N^2) task of one version at N bodies in one precision."""

    version = "1"
    params, param_names = axes("version", "n", "precision")

    def setup(self, version, n, precision):
        self.check_params(version, n, precision)
        forces = self.prepare(version, n, precision)
        self.x = self.state.x.copy()
        self.out = np.zeros_like(self.x)
        if self.on_device:
            forces.backend.upload(self.x)      # time_pairwise then times the kernel alone

    def time_pairwise(self, version, n, precision):
        """Task 1: all N^2 pair accelerations. CPU versions: the kernel plus the conversion of
        positions to the precision's arrays; GPU versions: the kernel alone, positions already
        on the device, ending with a device synchronise (E's kernel includes the Galaxy).
        Rate: N^2 / this time interactions per second (x 20 flops: GFLOP/s)."""
        if self.on_device:
            self.forces.backend.compute()
        else:
            self.forces.pairwise(self.x, self.out)


class HostTasks(Benchmark):
    """The O(N) host tasks of one version at N bodies, float64 (the dp pipeline's host kernels)."""

    version = "1"
    params, param_names = axes("version", "n")
    method_skips = {"time_galactic": lambda self, version, n: galactic_reason(version)}

    def setup(self, version, n):
        self.check_params(version, n)
        self.prepare(version, n, "dp")
        self.x = self.state.x.copy()
        self.v = self.state.v.copy()
        self.out = np.zeros_like(self.x)

    def time_galactic(self, version, n):
        """Task 2: the Allen & Santillan (1991) acceleration on the host."""
        if self.method_skip["time_galactic"]:
            raise SkipNotImplemented(self.method_skip["time_galactic"])
        self.forces.galactic(self.x, self.out)

    def time_integrate(self, version, n):
        """Task 3: one drift and one kick on the host (h = 0, so repeated calls keep the state)."""
        self.forces.drift(self.x, self.v, 0.0)
        self.forces.kick(self.v, self.out, 0.0)


class Transfer(Benchmark):
    """Task 4 of the GPU versions: host <-> device copies at N bodies in one precision."""

    version = "1"
    params, param_names = axes("gpu_version", "n", "precision")

    def setup(self, version, n, precision):
        self.check_params(version, n, precision)
        forces = self.prepare(version, n, precision)
        if not self.on_device:
            raise NotImplementedError(f"version {version} has no host-device transfer")
        self.backend = forces.backend
        self.x = self.state.x.copy()
        self.out = np.zeros_like(self.x)

    def time_transfer(self, version, n, precision):
        """Positions host -> device (in the precision's format) and accelerations device -> host,
        each ending synchronised."""
        self.backend.upload(self.x)
        self.backend.download(self.out)
