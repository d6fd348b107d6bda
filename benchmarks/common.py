"""Shared base of the asv suite: the fixed parameters, the grids, the package's public names,
building and validating a version's force pipeline, and skipping (with a reason) what this
machine, grid or measured commit does not run.

Nothing here is a benchmark (no `time_` / `track_` names); the benchmark modules import
`Benchmark`, `axes` and the helpers from it.

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

The package through its public names
------------------------------------
The suite reaches the package only through `public`, which looks a name of
`nbsymple_versions.__all__` up when it is used: a name the measured commit does not make public
is asv's skip (SkipNotImplemented) saying so, not an import error that loses the whole module.
Where the commit predates a name but had the same thing under another (validation, the stepping
loop), the fallback below keeps the pairwise and step benchmarks measurable back to 2528594a.
Importing the suite loads nothing that touches a GPU (a test checks): asv's fork server imports
it once, with the package's modules the benchmarks use and numba's CPU target set up, and forks
every benchmark from it, each to initialise CUDA itself. The CPU kernels compile once per machine
into numba's on-disk cache (`kernel_cache_folder`); validation still runs in every `setup`.

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

Environment variables (read once, at import; asv passes them on to the processes it starts):

    NBSYMPLE_BENCH_GRID      smoke | default | large   (default: default)
        smoke:   N = 256 (CI: `make bench-smoke`)
        default: N = 256, 1024, 4096, 16384; a timed call of A or B at most 16384^2 interactions
        large:   N = 1024 ... 2^18 (GPU machines); serial host kernels (A) up to 16384^2
                 interactions per timed call, threaded ones (B, F) up to 65536^2, GPU versions
                 (C, D, E) up to 7 * 2^36 (an SI6A step at N = 2^18)
    NBSYMPLE_BENCH_VERSIONS  letters to run, e.g. "AB" (default: A-E; GPU versions skip without
                             a GPU, which is looked for without touching a driver; F, across MPI
                             ranks, is one rank under asv and runs only when named)
    NBSYMPLE_BENCH_THREADS   numba threads for the threaded host kernels of B, D and E (default:
                             all cores); recorded by `throughput.Threads.track_threads`
    NUMBA_CACHE_DIR          numba's on-disk cache of the compiled CPU kernels (default, for the
                             suite's processes: ~/.cache/nbsymple-versions/numba, or under
                             XDG_CACHE_HOME); a folder inside this checkout means no cache

Every `setup` validates the version x precision against the float64 reference (N = 256, fresh
random inputs, the same pipeline factory and hence the same compiled kernels it then times)
before anything is timed; a wrong kernel raises `ValidationError`, a failure in asv's report.
"""
import os
from pathlib import Path
import shutil

import numba
import numpy as np

import nbsymple_versions  # reached through `public` only

try:                                    # asv_runner (with asv) skips a combination on this
    from asv_runner.benchmarks.mark import SkipNotImplemented
except ImportError:                     # pragma: no cover - asv not installed
    class SkipNotImplemented(NotImplementedError):
        pass

CHECKOUT = Path(__file__).resolve().parents[1]


def kernel_cache_folder() -> str:
    """numba's on-disk cache for the suite's kernels: NUMBA_CACHE_DIR if set, else
    ~/.cache/nbsymple-versions/numba (XDG_CACHE_HOME), per user and machine; "" (no cache: every
    process compiles) where that folder lies inside this checkout."""
    given = numba.config.CACHE_DIR
    base = Path(given or os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser().resolve()
    folder = base if given else base / "nbsymple-versions" / "numba"
    return "" if folder.is_relative_to(CHECKOUT) else str(folder)


# every process of the suite compiles each kernel once per machine, not once per process: the
# package's CPU kernels take numba's cache folder when they load (after this, in setup)
numba.config.CACHE_DIR = kernel_cache_folder()


class _Public:
    """The package's public names (`nbsymple_versions.__all__`), looked up when used."""

    def has(self, name: str) -> bool:
        """Whether the measured commit's package makes `name` public."""
        return name in getattr(nbsymple_versions, "__all__", ())

    def __getattr__(self, name: str):
        if not self.has(name):
            raise SkipNotImplemented(f"this commit's nbsymple_versions has no public {name}")
        return getattr(nbsymple_versions, name)

    def load(self, *names):
        """Import now the modules of those of `names` the measured commit makes public."""
        for name in filter(self.has, names):
            getattr(self, name)


public = _Public()

# Done once here, in the process asv forks every benchmark from, rather than in each: loading the
# package's modules that the benchmarks use (none touches a GPU, nor compiles) and numba's one-time
# set-up of its CPU target (0.3 s). The compile benchmark times a fresh interpreter of its own.
public.load("get_version", "make_cluster", "TaskClock", "check_pipeline", "advance", "get_scheme", "energy_parts")
numba.njit(lambda: 0)()

DT = 5e-4                            # the paper's time step, in cluster time units
VALIDATION_N = 256
# the timing state at commits whose package does not make `timing_state` public (validation
# inputs are fresh: no seed)
LEGACY_TIMING = {"seed": 2011, "exact_max_n": 4096}
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

# Table 1 as the suite needs it (`versions.TABLE`: gpu, host, fused_galactic, distributed)
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


class ValidationError(RuntimeError):
    """The pipeline about to be timed does not reproduce the float64 reference forces."""


def gpu_visible() -> bool:
    """A cheap look for a GPU that touches no driver: the simulator on (NUMBA_ENABLE_CUDASIM, as
    numba read it), or an NVIDIA driver present."""
    return bool(numba.config.ENABLE_CUDASIM) or os.path.exists("/proc/driver/nvidia/version") \
        or shutil.which("nvidia-smi") is not None


def _grid_name() -> str:
    name = os.environ.get("NBSYMPLE_BENCH_GRID", "").strip().lower() or "default"
    if name not in GRIDS:
        raise ValueError(f"NBSYMPLE_BENCH_GRID={name!r}: choose one of {', '.join(GRIDS)}")
    return name


# versions that run by default: all but those across MPI ranks (F is one rank under asv,
# i.e. its node engine again; NBSYMPLE_BENCH_VERSIONS=...F times it)
DEFAULT_VERSIONS = tuple(v for v in AXES["version"] if v not in DISTRIBUTED)


def _versions() -> tuple:
    chosen = os.environ.get("NBSYMPLE_BENCH_VERSIONS", "").strip().upper()
    if not chosen:
        return DEFAULT_VERSIONS
    letters = AXES["version"]
    bad = sorted(set(chosen) - set(letters) - set(", "))
    if bad:
        raise ValueError(f"NBSYMPLE_BENCH_VERSIONS={chosen!r}: unknown letters {bad}; use letters of {''.join(letters)}")
    return tuple(v for v in letters if v in chosen)


GRID = _grid_name()
VERSIONS = _versions()               # the versions that run (the params always hold all)
NS = GRIDS[GRID]["ns"]               # the N that run on this grid


def budget(letter: str) -> float:
    """Most pair interactions one timed call (or the set-up's warm call) may do in this grid."""
    b = GRIDS[GRID]["budget"]
    if letter not in GPU_VERSIONS:      # the host's CPU (F: one rank of its threaded node engine)
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


def galactic_reason(letter: str):
    """Why `letter` has no separate galactic task (its GPU kernel adds the Galaxy, E), or None."""
    if letter in FUSED_GALACTIC:
        return f"version {letter} has no separate galactic task (its GPU kernel adds the Galaxy)"
    return None


def grid_reason(letter: str, n: int | None = None, evaluations: int = 1):
    """Why (letter, n) does not run on this machine and grid, or None (it runs)."""
    reason = version_reason(letter)
    if reason or n is None:
        return reason
    if n not in NS:
        return f"N = {n} is not in the '{GRID}' grid (N = {', '.join(map(str, NS))}; NBSYMPLE_BENCH_GRID)"
    return budget_reason(letter, n, evaluations)


def configure_threads() -> int:
    """Apply NBSYMPLE_BENCH_THREADS (if set) and return numba's thread count. Asking for more
    threads than numba started with is an error, not a silent fallback."""
    want = os.environ.get("NBSYMPLE_BENCH_THREADS", "").strip()
    if want:
        numba.set_num_threads(int(want))
    return numba.get_num_threads()


def timing_state(n: int):
    """The package's public `timing_state` (the paper's set-up, seed 2011, the exact potential up
    to N = 4096); at a commit from before it was public, the same state from `make_cluster`."""
    if public.has("timing_state"):
        return public.timing_state(int(n))
    return public.make_cluster(int(n), seed=LEGACY_TIMING["seed"],
                               exact_potential=int(n) <= LEGACY_TIMING["exact_max_n"])


def build_pipeline(letter: str, state, precision: str, clock=None, **options):
    """`get_version(letter).pipeline(...)`, with 'unavailable here' turned into an asv skip."""
    version = public.get_version(letter)
    ok, reason = version.available(options["backend"]) if "backend" in options else version.available()
    if not ok:
        raise NotImplementedError(f"version {letter} is not available: {reason}")
    try:
        return version.pipeline(state, precision, clock, **options)
    except public.VersionUnavailable as e:
        raise NotImplementedError(str(e)) from None


# Validation at a commit whose package does not make it public (check_pipeline, TOLERANCE and
# FRAME_KPC became public names with this suite): the float64 direct sum below, with the
# tolerances and frames of that commit's validation.py, the same from 2528594a on
LEGACY_TOLERANCE = {"dp": 1e-12, "dsp": 1e-5, "sp": 1e-4}
LEGACY_FRAME_KPC = {"dp": 8.5, "dsp": 8.5, "sp": None}


def _legacy_check(forces, state, tolerance) -> tuple[float, bool]:
    """`validation.check_pipeline` for a commit that does not make it public."""
    if forces.backend.includes_galactic:
        raise SkipNotImplemented("this commit's nbsymple_versions has no public float64 Galaxy to validate "
                                 "a kernel that adds it")
    out = np.zeros_like(state.x)
    forces.pairwise(state.x, out)
    pos = state.positions
    d = pos[None, :, :] - pos[:, None, :]                      # x_j - x_i
    r2 = (d * d).sum(axis=2) + state.eps * state.eps
    ref = ((state.m[None, :] / (r2 * np.sqrt(r2)))[:, :, None] * d).sum(axis=1)
    err = float(np.linalg.norm(out.T - ref, axis=1).max() / np.linalg.norm(ref, axis=1).max())
    return err, bool(np.isfinite(err) and err <= tolerance)


def validation_rules() -> tuple[dict, dict, object]:
    """(tolerance and frame by precision, check(forces, state, tolerance) -> (error, ok)) of
    the measured commit: its public ones, else the legacy ones above."""
    if public.has("check_pipeline"):
        return public.TOLERANCE, public.FRAME_KPC, public.check_pipeline
    return LEGACY_TOLERANCE, LEGACY_FRAME_KPC, _legacy_check


def measure_each(keys, measure) -> dict:
    """For asv's `setup_cache`: {key: ("ok", measure(*key)) | ("skip", why) | ("error", what)}
    over every key, so one unrunnable combination does not lose the others."""
    results = {}
    for key in keys:
        try:
            results[key] = ("ok", measure(*key))
        except NotImplementedError as e:
            results[key] = ("skip", str(e))
        except Exception as e:      # reported per combination by `cached_result`
            results[key] = ("error", f"{type(e).__name__}: {e}")
    return results


def cached_result(results: dict, key):
    """The value `measure_each` stored for `key`; a skip or an error is raised again (in `setup`)."""
    kind, value = results[key]
    if kind == "skip":
        raise NotImplementedError(value)
    if kind == "error":
        raise (ValidationError if value.startswith("ValidationError") else RuntimeError)(value)
    return value


class Benchmark:
    """Base of the suite's classes (like numpy's and scipy's `Benchmark`): asv settings, the skip
    reasons, the injectable pipeline factory, validation, and `prepare` for (version, N, precision)."""

    # asv settings for time_ benchmarks: 3 to 10 samples within ~2 s after a 0.1 s warm-up,
    # `number` chosen by asv so that a sample lasts >= 10 ms; one round (one process per
    # combination). timeout is per combination (set-up included).
    timeout = 180
    repeat = (3, 10, 2.0)
    number = 0
    rounds = 1
    min_run_count = 2
    warmup_time = 0.1

    validation_n = VALIDATION_N
    # {method name: reason(*params) or None}: skips that only one method of the class has
    method_skips = {}

    def skip_reason(self, *params):
        """Why these params do not run on this machine and grid (None: they run). Cheap: it
        builds nothing, so `tools.tracking.selection()` can ask it for every combination."""
        p = dict(zip(self.param_names, params))
        return grid_reason(p["version"], p.get("n")) if "version" in p else None

    def check_params(self, *params):
        """In `setup`: raise NotImplementedError if the class skips `params`, and keep each
        method's own reason in `self.method_skip` (the method raises SkipNotImplemented)."""
        reason = self.skip_reason(*params)
        if reason:
            raise NotImplementedError(reason)
        self.method_skip = {m: f(self, *params) for m, f in self.method_skips.items()}

    # ---- the hook tests override to inject a wrong kernel
    def make_pipeline(self, letter, state, precision, clock=None):
        """A ready ForcePipeline of `letter` for `state`. Both the validation and the timed
        pipeline come from here, so what is validated is what is timed."""
        return build_pipeline(letter, state, precision, clock)

    def validate(self, letter: str, precision: str) -> float:
        """Check the pipeline factory's forces against the float64 reference on a fresh cluster
        of `validation_n` bodies (dp, dsp far from the origin, sp near it); raise on failure."""
        tolerance, frame_kpc, check = validation_rules()
        state = public.make_cluster(self.validation_n, seed=None, radius_kpc=frame_kpc[precision])
        forces = self.make_pipeline(letter, state, precision)
        tol = tolerance[precision]
        err, ok = check(forces, state, tol)
        if not ok:
            raise ValidationError(
                f"version {letter} {precision}: max relative pairwise-force error {err:.3g} at "
                f"N = {self.validation_n} exceeds the tolerance {tol:.0e}; refusing to time a wrong kernel")
        return err

    def prepare(self, letter: str, n: int, precision: str, evaluations: int = 1):
        """Skip if over budget or unavailable, validate, build the timed state and pipeline,
        and make one warm call (compiles everything). Sets state, clock, forces, acc, threads."""
        reason = budget_reason(letter, n, evaluations)
        if reason:
            raise NotImplementedError(reason)
        self.threads = configure_threads()
        self.validate(letter, precision)
        self.state = timing_state(n)
        self.clock = public.TaskClock()
        self.forces = self.make_pipeline(letter, self.state, precision, self.clock)
        self.compile_seconds = self.forces.warm_up(self.state.x)
        self.acc = np.zeros_like(self.state.x)
        return self.forces

    def stepper(self, letter: str, precision: str, scheme: str):
        """(one step of dt = DT with `scheme`, the TaskClock that times it) on the prepared state:
        `advance` with the timed pipeline, the loop of `Simulation.step` (which also checks the
        state after each step); where the measured commit does not make `advance` public, its
        `Simulation.step` (that loop alone then) on a simulation of the same version and precision."""
        if public.has("advance"):
            advance, chosen = public.advance, public.get_scheme(scheme)
            return (lambda: advance(self.state, self.forces, chosen, DT, 1, self.acc)), self.clock
        sim = public.Simulation(self.state, letter, scheme, precision, DT, diagnostics=False)
        return (lambda: sim.step(1)), sim.clock

    @property
    def on_device(self) -> bool:
        """True for GPU backends (upload / compute / download)."""
        return hasattr(self.forces.backend, "upload")
