"""What runs on this machine and grid: the fixed parameters and axes, the grids and their
budgets, the Table 1 facts the skips use, and the reason (one sentence) why a combination is
skipped.

Fixed parameters
----------------
Every benchmark takes its `params` from AXES, so they are the same on every machine, grid and
measured commit: all versions of `versions.TABLE`, every N of the largest grid, every
precision. asv keys a result by its parameter values, so a smoke run or a CPU-only machine
never hides the rows of another run. AXES and the Table 1 facts below are literal, not read from
the package: asv measures older commits with today's benchmarks, and a parameter list taken
from the measured commit would move the indices asv runs by (tests/test_benchmarks.py checks
them against the package). What should not run here is skipped, with one sentence saying why,
by `Benchmark.skip_reason` (raised in `setup` as NotImplementedError) or, for a skip that only
one method of a class has, by `method_skips` (raised inside that method as SkipNotImplemented).
`tools.tracking.selection()` turns the same reasons into asv's `-b` patterns, so that
`make bench` does not even fork a process per skipped combination.

Extending
---------
- A new value on an axis (version F in `versions.TABLE`, a larger N) keeps every committed
  result (asv matches rows by value): add it here, say in `skip_reason` when it cannot run,
  then `make benchmarks-json`.
- A new axis (GPU backend numba|cupy, kernel tiled|plain) changes every parameter tuple of a
  class that takes it: add it to AXES and give it to new GPU-only classes over GPU_VERSIONS (as
  `tasks.Transfer`), so the history of Tasks and Step stays; a value a machine lacks (no CuPy)
  is a skip reason. To add it to an existing class instead, rewrite the committed rows with
  `tools.migrate.reshape` (old rows take the axis' default value) and keep `version`.
- Bump a benchmark's `version` only when what it measures changes.

Environment variables (read at import, where a value the suite cannot take stops asv's discovery,
naming it; asv passes them on to the processes it starts):

    NBSYMPLE_BENCH_GRID      smoke | default | large   (default: default)
        smoke:   N = 256 (CI: `make bench-smoke`)
        default: N = 256, 1024, 4096, 16384; a timed call of A or B at most 16384^2 interactions
        large:   N = 1024 ... 2^18 (GPU machines); serial host kernels (A) up to 16384^2
                 interactions per timed call, threaded ones (B, F) up to 65536^2, GPU versions
                 (C, D, E) up to 7 * 2^36 (an SI6A step at N = 2^18)
    NBSYMPLE_BENCH_VERSIONS  letters to run, e.g. "AB" (default: A-E; GPU versions skip without
                             a GPU, which is looked for without touching a driver; F, across MPI
                             ranks, is one rank under asv and runs only when named)
    NBSYMPLE_BENCH_THREADS   numba threads for the threaded host kernels of B, D and E, 1 to the
                             threads numba starts (default: all cores); recorded by
                             `throughput.Threads.track_threads`
    NUMBA_CACHE_DIR          numba's on-disk cache of the compiled CPU kernels (default, for the
                             suite's processes: ~/.cache/nbsymple-versions/numba, or under
                             XDG_CACHE_HOME); a folder inside this checkout means no cache
"""
import os
import shutil

import numba

DT = 5e-4                            # the paper's time step, in cluster time units
CONSERVATION_N = 1024                # the conservation runs' N, on every grid

# budget: most pair interactions per timed call, by where the version's work runs: "gpu" for
# the GPU versions, else its host kernels, "serial" (one core) or "threaded" (all cores)
GRIDS = {
    "smoke": {"ns": (256,), "budget": {"serial": 7 * 256**2, "threaded": 7 * 256**2, "gpu": 7 * 256**2}},
    "default": {"ns": (256, 1024, 4096, 16384),
                "budget": {"serial": 16384**2, "threaded": 16384**2, "gpu": 7 * 16384**2}},
    "large": {"ns": (1024, 4096, 16384, 65536, 131072, 262144),
              "budget": {"serial": 16384**2, "threaded": 65536**2, "gpu": 7 * 262144**2}},
}
SIMULATOR_BUDGET = 256**2            # the CUDA simulator costs ~10 us per pair interaction

# Table 1 as the suite needs it (`versions.TABLE`: gpu, host_kernels, fused_galactic, distributed)
GPU_VERSIONS = ("C", "D", "E")       # the pairwise forces on a GPU
SERIAL_HOST = ("A", "C")             # the O(N) host kernels on one core (the others': all cores)
FUSED_GALACTIC = ("E",)              # the GPU kernel adds the Galaxy: no separate galactic task
DISTRIBUTED = ("F",)                 # across MPI ranks (one rank under asv)

# The parameter axes: each benchmark's params are a choice of these, on every machine and grid
# (`versions.LETTERS`, `vocabulary.PRECISIONS` and `TASKS`, `schemes`).
AXES = {
    "version": ("A", "B", "C", "D", "E", "F"),
    "gpu_version": GPU_VERSIONS,         # for what only a GPU version has (host-device transfer)
    "n": tuple(sorted({n for g in GRIDS.values() for n in g["ns"]})),
    "precision": ("sp", "dp", "dsp"),
    "task": ("pairwise", "galactic", "integrate", "transfer", "communicate"),
    "scheme": ("leapfrog", "si6a"),
}
# asv param_names (what results and the paper read) of the axes whose name differs
_PARAM_NAME = {"gpu_version": "version"}


def axes(*names) -> tuple[list, list]:
    """(params, param_names) for a class over the named AXES."""
    return [list(AXES[a]) for a in names], [_PARAM_NAME.get(a, a) for a in names]


def gpu_visible() -> bool:
    """A cheap look for a GPU that touches no driver: the simulator on (NUMBA_ENABLE_CUDASIM, as
    numba read it), or an NVIDIA driver present."""
    return bool(numba.config.ENABLE_CUDASIM) or os.path.exists("/proc/driver/nvidia/version") \
        or shutil.which("nvidia-smi") is not None


def grid_name() -> str:
    """The grid NBSYMPLE_BENCH_GRID chooses, by its own name (blanks and capitals as the check takes them)."""
    name = os.environ.get("NBSYMPLE_BENCH_GRID", "").strip().lower() or "default"
    if name not in GRIDS:
        raise ValueError(f"NBSYMPLE_BENCH_GRID={name!r}: choose one of {', '.join(GRIDS)}")
    return name


# versions that run by default: all but those across MPI ranks (F is one rank under asv,
# i.e. its node version again; NBSYMPLE_BENCH_VERSIONS=...F times it)
DEFAULT_VERSIONS = tuple(v for v in AXES["version"] if v not in DISTRIBUTED)


def _versions() -> tuple:
    chosen = os.environ.get("NBSYMPLE_BENCH_VERSIONS", "").strip().upper()
    if not chosen:
        return DEFAULT_VERSIONS
    letters = AXES["version"]
    bad = sorted(set(chosen) - set(letters) - set(", "))
    if bad or not set(chosen) - set(", "):       # ',' names none: only the peers would run
        what = f"unknown letters {bad}" if bad else "no letter"
        raise ValueError(f"NBSYMPLE_BENCH_VERSIONS={chosen!r}: {what}; use letters of {''.join(letters)}")
    return tuple(v for v in letters if v in chosen)


GRID = grid_name()
VERSIONS = _versions()               # the versions that run (the params always hold all)
NS = GRIDS[GRID]["ns"]               # the N that run on this grid


def budget(letter: str) -> float:
    """Most pair interactions one timed call (or the set-up's warm call) may do in this grid."""
    b = GRIDS[GRID]["budget"]
    if letter not in GPU_VERSIONS:      # the host's CPU (F: one rank of its threaded node version)
        return b["serial" if letter in SERIAL_HOST else "threaded"]
    return min(b["gpu"], SIMULATOR_BUDGET) if numba.config.ENABLE_CUDASIM else b["gpu"]


def over_budget(letter: str, n: int, evaluations: int = 1) -> bool:
    return evaluations * float(n) ** 2 > budget(letter)


def budget_reason(letter: str, n: int, evaluations: int = 1):
    """Why (letter, n) is over this grid's budget, or None."""
    if over_budget(letter, n, evaluations):
        return (f"version {letter} at N = {n}: {evaluations} x N^2 pair interactions exceed the "
                f"'{GRID}' grid's budget of {budget(letter):.3g} per timed call")
    return None


def version_reason(letter: str):
    """Why `letter` does not run here (left out, or a GPU version without a visible GPU), or None.
    Cheap: no driver is touched (`build_pipeline` asks the real availability later)."""
    if letter not in VERSIONS:
        chosen = os.environ.get("NBSYMPLE_BENCH_VERSIONS", "").strip()
        return (f"version {letter} is left out by NBSYMPLE_BENCH_VERSIONS={chosen}" if chosen else
                f"version {letter} runs only when NBSYMPLE_BENCH_VERSIONS names it (under asv it is one MPI rank)")
    if letter in GPU_VERSIONS and not gpu_visible():
        return f"version {letter} needs a GPU and none is visible (NUMBA_ENABLE_CUDASIM=1 runs the simulator)"
    return None


def left_out(letter: str):
    """Why `letter` is left out where NBSYMPLE_BENCH_VERSIONS names the letters to run (F's job
    across ranks and the peers' A-/B- candidates too: they run by default), or None."""
    chosen = os.environ.get("NBSYMPLE_BENCH_VERSIONS", "").strip()
    if chosen and letter in AXES["version"] and letter not in VERSIONS:
        return f"version {letter} is left out by NBSYMPLE_BENCH_VERSIONS={chosen}"
    return None


def galactic_reason(letter: str):
    """Why `letter` has no separate galactic task (its GPU kernel adds the Galaxy, E), or None."""
    if letter in FUSED_GALACTIC:
        return f"version {letter} has no separate galactic task (its GPU kernel adds the Galaxy)"
    return None


def grid_reason(letter: str, n: int | None = None):
    """Why (letter, n) does not run on this machine and grid, or None (it runs)."""
    reason = version_reason(letter)
    if reason or n is None:
        return reason
    if n not in NS:
        return f"N = {n} is not in the '{GRID}' grid (N = {', '.join(map(str, NS))}; NBSYMPLE_BENCH_GRID)"
    return budget_reason(letter, n)


def bench_threads() -> int | None:
    """The threads NBSYMPLE_BENCH_THREADS asks for ('+2' and ' 02' are 2, as the machine's name
    reads them), or None where it is not set. ValueError, naming it, for anything but a whole
    number in ASCII digits from 1 to the threads numba starts (`numba.set_num_threads` takes no more)."""
    text = os.environ.get("NBSYMPLE_BENCH_THREADS", "").strip()
    if not text:
        return None
    digits, most = text.removeprefix("+").lstrip("0"), numba.config.NUMBA_NUM_THREADS
    if not (digits.isascii() and digits.isdigit() and len(digits) <= len(str(most)) and int(digits) <= most):
        raise ValueError(f"NBSYMPLE_BENCH_THREADS={text!r}: choose a whole number of threads from 1 to {most} "
                         f"(the threads numba starts here)")
    return int(digits)


bench_threads()     # at import too, as the grid and the versions: a wrong value stops discovery, not every benchmark


def configure_threads() -> int:
    """Apply NBSYMPLE_BENCH_THREADS (if set) and return numba's thread count. Asking for more
    threads than numba started with is an error, not a silent fallback."""
    if (want := bench_threads()) is not None:
        numba.set_num_threads(want)
    return numba.get_num_threads()
