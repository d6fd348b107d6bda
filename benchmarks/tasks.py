"""The paper's four tasks (Fig. 1, Tables 4-6), each timed warm and synchronised.

time_pairwise (task 1, O(N^2)), time_galactic (task 2), time_integrate (task 3: one drift and
one kick, the O(N) work of a leapfrog step), time_transfer (task 4, GPU versions only).
"""
import numpy as np

from .common import CPU_PAIRWISE, NS, PRECISIONS, VERSIONS, Benchmark, skip_list


class Tasks(Benchmark):
    """One task of one version at N bodies in one precision."""

    params = [list(VERSIONS), list(NS), list(PRECISIONS)]
    param_names = ["version", "n", "precision"]

    def setup(self, version, n, precision):
        forces = self.prepare(version, n, precision)
        self.x = self.state.x.copy()
        self.v = self.state.v.copy()
        self.out = np.zeros_like(self.x)
        if self.on_device:
            forces.backend.upload(self.x)      # time_pairwise then times the kernel alone

    def time_pairwise(self, version, n, precision):
        """Task 1: all N^2 pair accelerations. CPU versions: the kernel plus the conversion of
        positions to the precision's arrays; GPU versions: the kernel alone, positions already
        on the device, ending with a device synchronise (E's kernel includes the Galaxy)."""
        if self.on_device:
            self.forces.backend.compute()
        else:
            self.forces.pairwise(self.x, self.out)

    def time_galactic(self, version, n, precision):
        """Task 2: the Allen & Santillan (1991) acceleration on the host, float64 whatever the
        precision (so timed at dp only); E has no separate galactic task (inside task 1)."""
        self.forces.galactic(self.x, self.out)

    time_galactic.skip_params = skip_list(when=lambda v, n, p: p != "dp" or v == "E")

    def time_integrate(self, version, n, precision):
        """Task 3: one drift and one kick on the host in float64 (h = 0, so repeated calls keep
        the state); precision-independent, so timed at dp only."""
        self.forces.drift(self.x, self.v, 0.0)
        self.forces.kick(self.v, self.out, 0.0)

    time_integrate.skip_params = skip_list(when=lambda v, n, p: p != "dp")

    def time_transfer(self, version, n, precision):
        """Task 4: positions host -> device (in the precision's format) and accelerations
        device -> host, each ending synchronised. GPU versions only."""
        if not self.on_device:
            raise NotImplementedError(f"version {version} has no host-device transfer")
        backend = self.forces.backend
        backend.upload(self.x)
        backend.download(self.out)

    time_transfer.skip_params = skip_list(when=lambda v, n, p: v in CPU_PAIRWISE)
