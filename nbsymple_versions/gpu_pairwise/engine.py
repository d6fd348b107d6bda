"""The host side of a GPU pairwise engine: targets split into slices (one per device), and the
upload / compute / download cycle timed as the paper's tasks. Pure NumPy: the backends
(`numba_cuda.py`, `cupy_cuda.py`) bring the device calls.
"""
import numpy as np

from ..core.vocabulary import check_precision
from .options import check_kernel, check_tile
from .records import WIDTH, padded, pack, real_type


def slices(n: int, devices: int) -> list[tuple[int, int]]:
    """`devices` contiguous slices [start, stop) of the n targets; empty ones are dropped."""
    bounds = [n * s // devices for s in range(devices + 1)]
    return [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def device_text(names: list[str], devices: int, used: int) -> str:
    """Where a backend runs, in words ('NVIDIA H200', 'NVIDIA H200 (2 slices on 1 device)')."""
    if devices == 1:
        return names[0]
    where = names[0] if len(set(names)) == 1 else " + ".join(names)
    return f"{where} ({devices} slices on {used} device{'s' if used > 1 else ''})"


class SlicedGpuBackend:
    """The host side of a GPU backend whose `slices` (each with `stream`, `start`, `stop` and a
    pinned `host_out`) hold the devices' shares of the targets. Subclasses provide
    `upload_bodies()` (pinned records -> every slice), `launch()` (start every slice's kernel,
    no wait) and `copy_out()` (every slice's forces -> its `host_out`, asynchronously), and set
    `host_bodies` and `precision`. Each public step ends synchronised."""

    def configure(self, m, eps, precision, tile, devices, galactic, units, kernel) -> tuple:
        """Check the options and set what both backends keep; returns the buffers' shape and
        types (npad, width, real type, output type). The caller checks availability first."""
        check_precision(precision)
        self.precision, self.tile, self.devices = precision, check_tile(tile), int(devices)
        self.kernel_kind = check_kernel(kernel)
        self.includes_galactic = bool(galactic)
        self.n = m.shape[0]
        self.npad = padded(self.n, self.tile)
        ftype = real_type(precision)
        self.eps2 = ftype(eps * eps)
        self.scales = ()
        if galactic:
            if units is None:
                raise ValueError("the fused galactic kernel needs the state's units")
            self.scales = (np.float64(units.galaxy_length_scale), np.float64(units.galaxy_acceleration_scale))
        return self.npad, WIDTH[precision], ftype, (np.float64 if galactic else ftype)

    def synchronize(self):
        for s in self.slices:
            s.stream.synchronize()

    def upload(self, x):
        """Positions (3, N) float64 -> the pinned records in the kernel's type -> every slice's device."""
        pack(x, self.host_bodies, self.precision)
        self.upload_bodies()

    def compute(self):
        self.launch()
        self.synchronize()

    def download(self, out):
        """Accelerations of every slice -> pinned buffers -> out (3, N) float64 (assigned)."""
        self.copy_out()
        self.synchronize()
        for s in self.slices:
            out[:, s.start:s.stop] = s.host_out

    def forces(self, x, out, clock):
        """The PairwiseBackend protocol: transfer, pairwise, transfer, each timed synchronised."""
        with clock.task("transfer", sync=self.synchronize):
            self.upload(x)
        with clock.task("pairwise", sync=self.synchronize):
            self.launch()
        with clock.task("transfer", sync=self.synchronize):
            self.download(out)
