"""The paper's Table 1: which package each version letter is, and where each task runs.

Each version is a package beside `core/` that holds the code it introduces and builds on the
earlier ones (A `serial`, B `threaded`, C `gpu_pairwise`, D `gpu_threaded`, E `gpu_full`,
beyond the paper F `mpi`). A package is a `core.pipeline.VersionPackage`: its typed `Options`,
`availability(options)`, `build_pipeline(state, precision, clock, options)`, and `GPU`,
`HOST_KERNELS` and `GALAXY_IN_KERNEL` (where its pairwise forces, its O(N) host work and its
galactic force run). This registry only names them; nothing below it imports it.
"""
from dataclasses import dataclass
from types import ModuleType

from . import gpu_full, gpu_pairwise, gpu_threaded, mpi, serial, threaded
from .core.checks import instance, named, one_of
from .core.clock import TaskClock
from .core.ics import State
from .core.pipeline import ForcePipeline, VersionUnavailable
from .core.ranks import ONE_RANK
from .core.vocabulary import TASKS, precision_name
from .gpu_pairwise.simulator import cuda_simulator

__all__ = ["TABLE", "LETTERS", "GPU_LETTERS", "CPU_LETTERS", "Version", "VersionUnavailable", "get_version",
           "all_versions", "option_flags", "simulated"]


@dataclass(frozen=True)
class Version:
    letter: str
    package: ModuleType
    pairwise: str        # where each task runs, in Table 1's words
    galactic: str
    integrate: str

    @property
    def name(self) -> str:
        return self.package.__name__.rsplit(".", 1)[1]

    @property
    def Options(self):
        return self.package.Options

    @property
    def option_names(self) -> tuple[str, ...]:
        """Names of the keyword options the version takes (its `Options`' fields)."""
        return self.Options.names()

    @property
    def gpu(self) -> bool:
        """The pairwise forces run on a GPU (C, D, E)."""
        return self.package.GPU

    @property
    def host_kernels(self) -> str:
        """The host kernels of the O(N) work: "serial" or "threaded"."""
        return self.package.HOST_KERNELS

    @property
    def fused_galactic(self) -> bool:
        """The GPU kernel adds the galactic force itself (E): there is no separate galactic task."""
        return self.package.GALAXY_IN_KERNEL

    @property
    def distributed(self) -> bool:
        """Across MPI ranks (F): each rank owns a slice of the bodies."""
        return self.package is mpi

    @property
    def tasks(self) -> tuple[str, ...]:
        """The tasks (`vocabulary.TASKS`) a step of this version has: no galactic task where the
        kernel adds it (E), transfers on a GPU version only, the MPI exchange on F only."""
        has = {"galactic": not self.fused_galactic, "transfer": self.gpu, "communicate": self.distributed}
        return tuple(t for t in TASKS if has.get(t, True))

    @property
    def where(self) -> dict:
        """Table 1's row: task -> where it runs, in words."""
        return {"pairwise": self.pairwise, "galactic": self.galactic, "integrate": self.integrate}

    @property
    def description(self) -> str:
        return f"pairwise: {self.pairwise}; galactic: {self.galactic}; integration: {self.integrate}"

    def world(self):
        """The ranks this version runs on: MPI's for a package that spreads over ranks (it
        declares `world()`, F), else one process (`core.ranks.ONE_RANK`)."""
        return getattr(self.package, "world", lambda: ONE_RANK)()

    def options_from(self, given: dict):
        """This version's typed options from keyword values (ValueError for a bad or unknown one,
        each named as in Python and on the command line: `kernel (--gpu-kernel)`)."""
        if unknown := sorted(set(given) - set(self.option_names), key=str):
            flags = option_flags()

            def shown(name):
                return f"{name} ({flags[name][0]['flag']})" if name in flags else named(name)
            raise ValueError(f"version {self.letter} takes no option {', '.join(map(shown, unknown))} (its options: "
                             f"{', '.join(map(shown, self.option_names)) or 'none'})")
        return self.Options.from_dict(given, self.letter)

    def available(self, backend: str | None = None) -> tuple[bool, str]:
        """(True, '') or (False, the reason in one sentence); a GPU version on its GPU `backend`
        ("numba" or "cupy", default numba)."""
        given = {"backend": backend} if backend is not None and "backend" in self.option_names else {}
        return self.package.availability(self.options_from(given))

    def pipeline(self, state, precision: str = "dp", clock: TaskClock | None = None, **options) -> ForcePipeline:
        """A ready force pipeline for `state` (masses, softening, units) in `precision`; it keeps
        copies of them, and says what it was built for (`built_for`: N, softening, units, masses), which
        `advance` and `check_pipeline` compare with the state they are given. `precision` in any
        case ("DP")."""
        instance(state, State, "state", "a State (make_cluster, State.from_arrays)")
        if clock is not None:
            instance(clock, TaskClock, "clock", "a TaskClock or None")
        precision = precision_name(precision)
        typed = self.options_from(options)
        ok, reason = self.package.availability(typed)
        if not ok:
            raise VersionUnavailable(f"version {self.letter} is not available: {reason}")
        forces = self.package.build_pipeline(state, precision, clock, typed)
        forces.built_for = (state.n, state.eps, state.units, state.m.copy())
        return forces


ONE, ALL = "1 CPU core", "all CPU cores"
TABLE = (
    #       letter  package        pairwise forces, O(N^2)   galactic force, O(N)     time integration, O(N)
    Version("A", serial,        ONE,                       ONE,                     ONE),
    Version("B", threaded,      ALL,                       ALL,                     ALL),
    Version("C", gpu_pairwise,  "GPU",                     ONE,                     ONE),
    Version("D", gpu_threaded,  "GPU",                     ALL,                     ALL),
    Version("E", gpu_full,      "1..n GPUs",               "GPU (same kernel)",     ALL),
    # beyond the paper: A-E's pipeline across MPI ranks (docs/mpi.md)
    Version("F", mpi,           "MPI ranks, each B's cores or its GPU (D, E)", "each rank, its slice",
            "each rank, its slice"),
)
LETTERS = tuple(v.letter for v in TABLE)
GPU_LETTERS = tuple(v.letter for v in TABLE if v.gpu)
CPU_LETTERS = tuple(v.letter for v in TABLE if not v.gpu and not v.distributed)   # one machine's CPU
_BY_LETTER = {v.letter: v for v in TABLE}


def get_version(letter: str) -> Version:
    """The version `letter` names in any case ('b' -> B); a ValueError lists them."""
    return _BY_LETTER[one_of(letter, LETTERS, "version")]


def simulated(letter: str, options=None) -> bool:
    """Whether version `letter`'s pairwise forces run in numba's CUDA simulator here: a GPU
    version (C, D, E; F on a GPU node version, D or E) while NUMBA_ENABLE_CUDASIM is on, where
    a step takes about ten million times a GPU's time (`core.work.SIMULATOR_RATE`). F's default
    node version there is E (every rank sees the simulator's GPU), as `Simulation` records it."""
    version = get_version(letter)
    node = str((options or {}).get("node_version") or "E").upper()
    return cuda_simulator() and (version.gpu or (version.distributed and node in ("D", "E")))


def all_versions() -> list[Version]:
    return list(TABLE)


def option_flags() -> dict:
    """Every version option, once: name -> (its description, the letters that take it), from the
    versions' typed `Options` (core/options.py): the flags of `nbsymple` and of gpu_report."""
    flags = {}
    for v in TABLE:
        for d in v.Options.describe():
            flags.setdefault(d["name"], (d, []))[1].append(v.letter)
    return flags
