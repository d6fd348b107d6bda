"""The versions of the paper's Table 1, as data: where each task runs.

A version is a composition: a pairwise *engine* (the O(N^2) forces: serial or threaded CPU
kernels, or a GPU backend) and *host kernels* (serial or threaded) for the O(N) galactic
force and integration; version E's GPU kernel adds the Galaxy itself (`fused_galactic`).
Version F (`pairwise="mpi"`, package `mpi/`) is A-E's pipeline across MPI ranks: each rank
runs a *node engine* (B, D or E: `node_version`) on its slice of the targets.
The interfaces are `core.pipeline.PairwiseBackend` and `core.pipeline.HostKernels`; engines
are imported on first use (GPU engines pull in numba-cuda, never a GPU at import).
"""
from dataclasses import dataclass

from .core.clock import TaskClock
from .core.pipeline import ForcePipeline, HostKernels, PairwiseBackend
from .core.vocabulary import check_precision

WHERE = {"serial": "1 CPU core", "threaded": "all CPU cores", "cuda": "GPU",   # Table 1's words
         "mpi": "MPI ranks, each B's cores or its GPU (D, E)"}


class VersionUnavailable(RuntimeError):
    """The version cannot run on this machine (one sentence says why)."""


@dataclass(frozen=True)
class Version:
    letter: str
    name: str
    pairwise: str                  # engine of the O(N^2) forces: "serial", "threaded", "cuda" or "mpi"
    host: str                      # host kernels of the O(N) work: "serial" or "threaded"
    fused_galactic: bool = False   # the pairwise engine adds the Galaxy in the same kernel (E)
    options: tuple = ()            # keyword options the engine takes ("tile", "devices", "node_version")

    @property
    def gpu(self) -> bool:
        return self.pairwise == "cuda"

    @property
    def distributed(self) -> bool:
        """Across MPI ranks (F): each rank owns a slice of the bodies."""
        return self.pairwise == "mpi"

    @property
    def where(self) -> dict:
        """Table 1's row: task -> where it runs, in words."""
        if self.distributed:
            return {"pairwise": WHERE["mpi"], "galactic": "each rank, its slice", "integrate": "each rank, its slice"}
        pairwise = "1..n GPUs" if "devices" in self.options else WHERE[self.pairwise]
        galactic = "GPU (same kernel)" if self.fused_galactic else WHERE[self.host]
        return {"pairwise": pairwise, "galactic": galactic, "integrate": WHERE[self.host]}

    @property
    def description(self) -> str:
        w = self.where
        return f"pairwise: {w['pairwise']}; galactic: {w['galactic']}; integration: {w['integrate']}"

    def available(self, backend: str = "numba") -> tuple[bool, str]:
        """(True, '') or (False, the reason in one sentence); a GPU version on its GPU `backend`
        ("numba" or "cupy")."""
        if self.distributed:
            from .mpi import comm
            return comm.availability()
        return _cuda_availability(backend) if self.gpu else (True, "")

    def pipeline(self, state, precision: str = "dp", clock: TaskClock | None = None, **options) -> ForcePipeline:
        """A ready force pipeline for `state` (masses, softening, units) in `precision`."""
        check_precision(precision)
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            takes = ", ".join(self.options) if self.options else "none"
            raise ValueError(f"version {self.letter} takes no option {', '.join(unknown)} (its options: {takes})")
        ok, reason = self.available(options.get("backend", "numba"))
        if not ok:
            raise VersionUnavailable(f"version {self.letter} is not available: {reason}")
        if self.distributed:
            return self._distributed_pipeline(state, precision, clock, **options)
        host = host_kernels(self.host)
        return ForcePipeline(self._backend(state, precision, options), host, state.units, clock)

    def _distributed_pipeline(self, state, precision, clock, node_version=None) -> ForcePipeline:
        """F: this rank's slice of the node engine's pipeline (mpi/pipeline.py). The node engine
        must be available on every rank: all ranks raise together, with the failing rank's reason."""
        from .mpi import comm, pipeline
        if node_version is not None and (not isinstance(node_version, str)
                                         or node_version.upper() not in pipeline.NODE_VERSIONS):
            raise ValueError(f"node_version must be one of {', '.join(pipeline.NODE_VERSIONS)} (the engine each "
                             f"rank runs), got {node_version!r}")
        node = get_version(node_version or default_node_version())
        try:
            world = comm.world()
        except RuntimeError as e:       # launched by mpiexec, but no MPI library to load
            raise VersionUnavailable(f"version {self.letter} is not available: {e}") from None
        ok, reason = world.agree(*node.available())
        if not ok:
            raise VersionUnavailable(f"version {self.letter} is not available: node engine {node.letter} on {reason}")
        return pipeline.build(node, state, precision, clock, world, host_kernels(node.host))

    def _backend(self, state, precision, options) -> PairwiseBackend:
        if self.gpu:       # options: tile, kernel ("tiled" | "plain"), backend, devices (E)
            options = dict(options)
            if options.pop("backend", "numba") == "cupy":
                from .kernels.cupy_backend import CupyPairwise as GpuPairwise
            else:
                from .kernels.cuda import CudaPairwise as GpuPairwise
            return GpuPairwise(state.m, state.eps, precision, galactic=self.fused_galactic, units=state.units,
                               **options)
        from .kernels.cpu import CpuPairwise
        return CpuPairwise(host_kernels(self.pairwise), state.m, state.eps, precision)


# The paper's Table 1 (and the package names of the paper's code versions).
TABLE = (
    Version("A", "serial", pairwise="serial", host="serial"),
    Version("B", "threaded", pairwise="threaded", host="threaded"),
    Version("C", "gpu_pairwise", pairwise="cuda", host="serial", options=("tile", "kernel", "backend")),
    Version("D", "gpu_threaded", pairwise="cuda", host="threaded", options=("tile", "kernel", "backend")),
    Version("E", "gpu_full", pairwise="cuda", host="threaded", fused_galactic=True,
            options=("tile", "devices", "kernel", "backend")),
    # beyond the paper: A-E's pipeline across MPI ranks (docs/mpi.md)
    Version("F", "mpi", pairwise="mpi", host="threaded", options=("node_version",)),
)
LETTERS = tuple(v.letter for v in TABLE)
GPU_LETTERS = tuple(v.letter for v in TABLE if v.gpu)
CPU_LETTERS = tuple(v.letter for v in TABLE if v.pairwise in ("serial", "threaded"))   # one machine's CPU
_BY_LETTER = {v.letter: v for v in TABLE}


def host_kernels(kind: str) -> HostKernels:
    """The serial or threaded CPU kernels (compiled on first call of each kernel)."""
    from .kernels.cpu import SERIAL, THREADED
    return {"serial": SERIAL, "threaded": THREADED}[kind]


def _cuda_availability(backend: str = "numba") -> tuple[bool, str]:
    """numba: numba-cuda must see a GPU, or NUMBA_ENABLE_CUDASIM=1 must be set; cupy: CuPy must
    see a GPU (it has no simulator). An unknown backend is a ValueError."""
    from .kernels.gpu_layout import check_backend
    if check_backend(backend) == "cupy":
        from .kernels import cupy_backend
        return cupy_backend.availability()
    try:
        from .kernels import cuda
    except ImportError as e:    # numba-cuda (the `gpu` extra) is not installed
        return False, ("needs a CUDA GPU (or NUMBA_ENABLE_CUDASIM=1 for the simulator) and numba-cuda "
                       f"(pip install 'nbsymple-versions[gpu]'): {e}")
    return cuda.availability()


def default_node_version() -> str:
    """F's node engine where none is asked for: E when this rank sees a GPU (or the CUDA
    simulator is on), else B."""
    return "E" if _cuda_availability()[0] else "B"


def get_version(letter: str) -> Version:
    key = str(letter).upper()
    if key not in _BY_LETTER:
        raise ValueError(f"unknown version {letter!r}; choose one of {', '.join(LETTERS)}")
    return _BY_LETTER[key]


def all_versions() -> list[Version]:
    return list(TABLE)
