"""What the two GPU backends (numba-cuda `cuda.py`, CuPy `cupy_backend.py`) share on the host:
the options, the body records the kernels read, padding, the split of targets into slices, and
`SlicedGpuBackend`, the upload / compute / download cycle timed as the paper's tasks.
Pure NumPy: importing it loads neither numba-cuda nor CuPy.

Body records, one per source, padded to a multiple of TILE with zero-mass bodies at the origin
(finite, so a padded pair term is finite, and times a zero mass exactly zero):
  sp   float32 (x, y, z, m)                    one 16-byte record (one 128-bit shared load)
  dp   float64 (x, y, z, m)                    two 128-bit loads
  dsp  float32 (xh, yh, zh, m, xl, yl, zl, 0)  hi and lo halves (`dsp.py`), two 128-bit loads
The mass sits in the record, so one upload carries everything a kernel reads.
"""
import numpy as np

from ..core.vocabulary import check_precision
from . import dsp

DEFAULT_TILE = 256
BACKENDS = ("numba", "cupy")        # GPU backends: numba-cuda Python kernels, CuPy + CUDA C
KERNEL_KINDS = ("tiled", "plain")   # shared-memory tiles with barriers, or straight from global memory
WIDTH = {"sp": 4, "dp": 4, "dsp": 8}   # values per body record


def check_tile(tile) -> int:
    if isinstance(tile, bool) or not isinstance(tile, (int, np.integer)) \
            or not 32 <= tile <= 1024 or tile & (tile - 1):
        raise ValueError(f"tile must be a power of two between 32 and 1024 (threads per block), got {tile!r}")
    return int(tile)


def check_devices(devices) -> int:
    if isinstance(devices, bool) or not isinstance(devices, (int, np.integer)) or devices < 1:
        raise ValueError(f"devices must be a whole number >= 1 (slices of targets, one per device), got {devices!r}")
    return int(devices)


def check_backend(backend) -> str:
    if backend not in BACKENDS:
        raise ValueError(f"unknown GPU backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    return backend


def check_kernel(kernel) -> str:
    if kernel not in KERNEL_KINDS:
        raise ValueError(f"unknown GPU kernel {kernel!r}; choose one of {', '.join(KERNEL_KINDS)}")
    return kernel


def real_type(precision: str):
    """NumPy type of the kernel's positions, pair terms and sums."""
    return np.float64 if precision == "dp" else np.float32


def padded(n: int, tile: int) -> int:
    return -(-n // tile) * tile


def fill_masses(bodies: np.ndarray, m: np.ndarray) -> None:
    """Zero every record of `bodies` (npad, WIDTH), then write the n masses (column 3)."""
    bodies[...] = 0
    bodies[:m.shape[0], 3] = m


def pack(x: np.ndarray, bodies: np.ndarray, precision: str) -> None:
    """Positions x (3, N) float64 into the first N records of `bodies` (masses untouched)."""
    n = x.shape[1]
    if precision == "dsp":      # straight into the records' hi and lo columns: no temporaries
        dsp.split(x.T, bodies[:n, 0:3], bodies[:n, 4:7])
    else:
        np.copyto(bodies[:n, 0:3], x.T, casting="same_kind")


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
        self.precision, self.tile, self.devices = precision, check_tile(tile), check_devices(devices)
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
