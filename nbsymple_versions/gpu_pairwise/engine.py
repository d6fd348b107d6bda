"""The GPU pairwise engine of both backends: targets in slices (one stream and set of buffers
each), and the upload / compute / download cycle timed as the paper's tasks. Pure NumPy: a
backend (`numba_cuda.py`, `cupy_cuda.py`) subclasses `GpuEngine` with the device calls.
"""
from typing import Protocol

import numpy as np

from ..core.vocabulary import check_precision
from .options import DEFAULT_TILE, check_kernel, check_tile
from .records import WIDTH, fill_masses, pack, padded, real_type

INDEX_LIMIT = 2**32 - 1      # the most values (bodies x WIDTH) a kernel's 32-bit index reaches


def slices(n: int, devices: int) -> list[tuple[int, int]]:
    """`devices` contiguous slices [start, stop) of the n targets, one body each at least: more
    slices than bodies give one per body."""
    k = min(devices, n)
    bounds = [n * s // k for s in range(k + 1)] if k else [0]
    return [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def device_text(names: list[str], devices: int, used: int) -> str:
    """Where an engine runs, in words ('NVIDIA H200', 'NVIDIA H200 (2 slices on 1 device)'): one
    slice, or none (an MPI rank without targets), is the device's name alone."""
    if devices <= 1:
        return names[0]
    where = names[0] if len(set(names)) == 1 else " + ".join(names)
    return f"{where} ({devices} slices on {used} device{'s' if used > 1 else ''})"


class Galaxy(Protocol):
    """A field added at each target inside the kernel, in float64, written as float64: what a
    later version hands the engine (E: `gpu_full.fused.GALAXY`, the Allen & Santillan field)."""

    name: str                   # entry-name prefix of its kernels: <name>_tiled, <name>_plain
    scalars: tuple[str, ...]    # its float64 kernel arguments after eps2

    def arguments(self, units) -> tuple:
        """The values of `scalars` for the state's units."""

    def numba_kernel(self, record, sources):
        """numba-cuda: the kernel function around `sources` (see `numba_cuda.kernel_source`)."""

    def cuda_c(self) -> str:
        """CUDA C: its kernels, compiled after `nbody.cu` (see `cupy_cuda.source`)."""

    def cuda_c_options(self) -> tuple[str, ...]:
        """CUDA C: the NVRTC -D options its kernels need."""


class Slice:
    """One device's share: targets [start, stop) on GPU `gpu`, with its own stream, a device
    copy of all N body records, its kernel, and a device and a pinned host buffer of its
    accelerations (3, stop - start)."""

    def __init__(self, engine: "GpuEngine", gpu: int, start: int, stop: int):
        self.gpu, self.start, self.stop = gpu, start, stop
        with engine.on(gpu):
            self.stream = engine.stream()
            self.bodies = engine.device_array(engine.host_flat.shape, engine.host_flat.dtype)
            self.out = engine.device_array((3, stop - start), engine.out_type)
            self.host_out = engine.pinned_array((3, stop - start), engine.out_type)
            self.kernel = engine.load_kernel()


class GpuEngine:
    """Softened pairwise accelerations G m_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^(3/2) of the
    targets [start, stop) (default all N) from all N bodies of masses m, in cluster units (G = 1),
    in `devices` slices round-robin over the GPUs `gpus` (default every GPU present); with
    `galaxy`, its field is added in the same kernel (version E). `kernel` is "tiled" (shared
    memory) or "plain" (global memory); `tile` is the block size and the padding unit.

    Allocated once: one pinned host buffer of body records in the kernel's type (padded with
    zero-mass bodies, masses written here) that feeds every slice, and each slice's buffers.
    `upload`, `compute` and `download` each end synchronised.

    A backend subclass sets `backend` and provides: `availability()`, `device_count()`,
    `device_names(ids)`, `on(gpu)` (a context making `gpu` current), `stream()`,
    `device_array(shape, dtype)`, `pinned_array(shape, dtype)`, `load_kernel()` (on the
    current GPU), `to_device(s)` and `to_host(s)` (slice s's records up, its forces down, on
    its stream, no wait), `launch_slice(s, grid)` (slice s's kernel, no wait).
    """

    backend: str

    def __init__(self, m, eps, precision, tile=DEFAULT_TILE, kernel="tiled", galaxy: Galaxy | None = None,
                 units=None, targets=None, devices=1, gpus=None):
        check_precision(precision)
        self.precision, self.tile, self.kernel_kind = precision, check_tile(tile), check_kernel(kernel)
        ok, reason = self.availability()
        if not ok:
            raise RuntimeError(reason)
        self.galaxy, self.includes_galactic = galaxy, galaxy is not None
        self.n = m.shape[0]
        self.npad = padded(self.n, self.tile)
        if self.npad * WIDTH[precision] > INDEX_LIMIT:       # (a hunt: numba's plain kernel wrapped to body 0)
            most = (INDEX_LIMIT // WIDTH[precision]) // self.tile * self.tile
            raise ValueError(f"N = {self.n} bodies are more than the GPU kernels can index (at most {most} in "
                             f"{precision} at tile {self.tile}: their indices into the bodies' values are 32-bit)")
        ftype = real_type(precision)
        self.eps2 = ftype(eps * eps)
        self.out_type = np.float64 if galaxy else ftype
        self.scalars = ()
        if galaxy:
            if units is None:
                raise ValueError("the fused galactic kernel needs the state's units")
            self.scalars = galaxy.arguments(units)
        start, stop = targets or (0, self.n)
        gpus = list(gpus if gpus is not None else range(self.device_count()))
        # one pinned buffer feeds every device: with unified addressing (64-bit Linux) host
        # memory pinned in one context counts as pinned in all of them
        with self.on(gpus[0]):
            self.host_flat = self.pinned_array(self.npad * WIDTH[precision], ftype)
        self.host_bodies = self.host_flat.reshape(self.npad, WIDTH[precision])   # a view: one record per row
        fill_masses(self.host_bodies, m)
        self.slices = [Slice(self, gpus[s % len(gpus)], start + a, start + b)
                       for s, (a, b) in enumerate(slices(stop - start, devices))]
        used = sorted({s.gpu for s in self.slices}) or gpus[:1]
        self.device = device_text(self.device_names(used), len(self.slices), len(used))

    def synchronize(self):
        for s in self.slices:
            s.stream.synchronize()

    def upload(self, x):
        """Positions (3, N) float64 -> the pinned records in the kernel's type -> every slice's device."""
        pack(x, self.host_bodies, self.precision)
        for s in self.slices:
            with self.on(s.gpu):
                self.to_device(s)
        self.synchronize()

    def launch(self):
        """Start the kernel on every slice (all devices work at once); does not wait."""
        for s in self.slices:
            with self.on(s.gpu):
                self.launch_slice(s, -(-(s.stop - s.start) // self.tile))

    def compute(self):
        self.launch()
        self.synchronize()

    def download(self, out):
        """Accelerations of every slice -> pinned buffers -> out (3, N) float64 (assigned)."""
        for s in self.slices:
            with self.on(s.gpu):
                self.to_host(s)
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
