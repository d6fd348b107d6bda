"""Shared base of the asv suite: the parameter grid, building and validating a version's
force pipeline, and skipping what this machine cannot run.

Nothing here is a benchmark (no `time_` / `track_` names), so asv discovers nothing in this
module; the benchmark modules import `Benchmark` and the grid from it.

Environment variables (read once, at import; asv passes the environment on to the
benchmark processes it spawns):

    NBSYMPLE_BENCH_GRID      smoke | default | large   (default: default)
        smoke:   N = 256 only (CI: `make bench-smoke`)
        default: N = 256, 1024, 4096, 16384; a timed call of A or B is limited to 16384^2
                 interactions (so SI6A steps, 7 force evaluations, stop at N = 4096 for A, B)
        large:   N = 1024 ... 2^18 (GPU machines); A up to 16384^2 interactions per timed
                 call, B up to 65536^2, C, D, E up to 7 * 2^36 (an SI6A step at N = 2^18)
    NBSYMPLE_BENCH_VERSIONS  letters to put in the grid, e.g. "AB" (default: A and B, plus C, D,
                             E where an NVIDIA driver is visible or NUMBA_ENABLE_CUDASIM=1;
                             no GPU is touched at import)
    NBSYMPLE_BENCH_THREADS   numba threads for the threaded host kernels of B, D and E (default:
                             numba's default, all cores). Recorded per run by
                             `throughput.Threads.track_threads`.

Every benchmark's `setup` validates the version x precision against the float64 reference
(at N = 256, on fresh random inputs, with the same pipeline factory and hence the same
compiled kernels it then times) before anything is timed; a wrong kernel raises
`ValidationError`, which asv reports as a failure. Combinations the machine cannot run raise
`NotImplementedError`, which asv records as skipped.
"""
import itertools
import os
import shutil
import statistics
import time

import numba
import numpy as np

from nbsymple_versions import TaskClock, VersionUnavailable, get_version, make_cluster
from nbsymple_versions.core.ics import State
from nbsymple_versions.validation import FRAME_KPC, TOLERANCE, check_pipeline

LETTERS = ("A", "B", "C", "D", "E")
CPU_PAIRWISE = ("A", "B")            # versions whose O(N^2) task runs on the CPU
PRECISIONS = ("sp", "dp", "dsp")
TASKS = ("pairwise", "galactic", "integrate", "transfer")
FLOPS_PER_INTERACTION = 20           # the usual convention of GPU N-body papers
DT = 5e-4                            # the paper's time step, in cluster time units
BENCH_SEED = 2011                    # timed states are reproducible; validation inputs are fresh
VALIDATION_N = 256
EXACT_IC_MAX_N = 4096                # above this, timed states use the analytic virial scaling

GRIDS = {
    "smoke": {"ns": (256,), "budget": {"cpu": 7 * 256**2, "gpu": 7 * 256**2},
              "conservation_n": 256},
    "default": {"ns": (256, 1024, 4096, 16384), "budget": {"cpu": 16384**2, "gpu": 7 * 16384**2},
                "conservation_n": 1024},
    "large": {"ns": (1024, 4096, 16384, 65536, 131072, 262144),
              "budget": {"A": 16384**2, "B": 65536**2, "gpu": 7 * 262144**2},
              "conservation_n": 1024},
}
SIMULATOR_BUDGET = 256**2            # the CUDA simulator costs ~10 us per pair interaction


class ValidationError(RuntimeError):
    """The pipeline about to be timed does not reproduce the float64 reference forces."""


def _simulator() -> bool:
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def _gpu_visible() -> bool:
    """A cheap look for a GPU that touches no driver: simulator on, or an NVIDIA driver present."""
    return _simulator() or os.path.exists("/proc/driver/nvidia/version") or shutil.which("nvidia-smi") is not None


def _grid_name() -> str:
    name = os.environ.get("NBSYMPLE_BENCH_GRID", "").strip().lower() or "default"
    if name not in GRIDS:
        raise ValueError(f"NBSYMPLE_BENCH_GRID={name!r}: choose one of {', '.join(GRIDS)}")
    return name


def _versions() -> tuple:
    chosen = os.environ.get("NBSYMPLE_BENCH_VERSIONS", "").strip().upper()
    if chosen:
        bad = sorted(set(chosen) - set(LETTERS) - set(", "))
        if bad:
            raise ValueError(f"NBSYMPLE_BENCH_VERSIONS={chosen!r}: unknown letters {bad}; use A-E")
        return tuple(v for v in LETTERS if v in chosen)
    return LETTERS if _gpu_visible() else CPU_PAIRWISE


GRID = _grid_name()
VERSIONS = _versions()
NS = GRIDS[GRID]["ns"]
CONSERVATION_N = GRIDS[GRID]["conservation_n"]


def budget(letter: str) -> float:
    """Most pair interactions one timed call (or the set-up's warm call) may do in this grid."""
    b = GRIDS[GRID]["budget"]
    if letter in CPU_PAIRWISE:
        return b.get(letter, b.get("cpu"))
    return min(b["gpu"], SIMULATOR_BUDGET) if _simulator() else b["gpu"]


def over_budget(letter: str, n: int, evaluations: int = 1) -> bool:
    return evaluations * float(n) ** 2 > budget(letter)


def check_budget(letter: str, n: int, evaluations: int = 1):
    if over_budget(letter, n, evaluations):
        raise NotImplementedError(
            f"version {letter} at N = {n}: {evaluations} x N^2 pair interactions exceed the "
            f"'{GRID}' grid's budget of {budget(letter):.3g} per timed call "
            "(NBSYMPLE_BENCH_GRID=large raises it on GPU machines)")


def skip_list(*, evaluations: int = 1, when=None, params=None) -> list:
    """Parameter tuples (version, n, x) to skip without running setup at all (asv's
    `skip_params`): those over the grid's budget, and those for which `when(*p)` is true."""
    params = params or (VERSIONS, NS, PRECISIONS)
    return [p for p in itertools.product(*params)
            if over_budget(p[0], p[1], evaluations) or (when is not None and when(*p))]


def configure_threads() -> int:
    """Apply NBSYMPLE_BENCH_THREADS (if set) and return numba's thread count. Asking for more
    threads than numba started with is an error, not a silent fallback."""
    want = os.environ.get("NBSYMPLE_BENCH_THREADS", "").strip()
    if want:
        numba.set_num_threads(int(want))
    return numba.get_num_threads()


def timing_state(n: int, seed: int = BENCH_SEED) -> State:
    """The paper's set-up (uniform sphere, Q = 0.3, on its orbit at 8.5 kpc) for timing. Above
    EXACT_IC_MAX_N bodies the O(N^2) NumPy potential energy would dominate the set-up (2 s at
    N = 16384, ~9 min at 2^18), so velocities are scaled with the continuous sphere's W instead
    (same positions, masses and softening; timings do not depend on the velocity scale)."""
    return make_cluster(int(n), seed=seed, exact_potential=int(n) <= EXACT_IC_MAX_N)


def build_pipeline(letter: str, state: State, precision: str, clock=None):
    """`get_version(letter).pipeline(...)`, with 'unavailable here' turned into an asv skip."""
    version = get_version(letter)
    ok, reason = version.available()
    if not ok:
        raise NotImplementedError(f"version {letter} is not available: {reason}")
    try:
        return version.pipeline(state, precision, clock)
    except VersionUnavailable as e:
        raise NotImplementedError(str(e)) from None


def median_call_seconds(fn, min_seconds: float = 0.3, min_calls: int = 3, max_calls: int = 100000) -> float:
    """Median wall time of repeated calls of `fn` (each call ends synchronised)."""
    times = []
    start = time.perf_counter()
    while len(times) < max_calls and (len(times) < min_calls or time.perf_counter() - start < min_seconds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


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
    """Base of the suite's classes (like numpy's and scipy's `Benchmark`): asv settings, the
    injectable pipeline factory, validation, and `prepare` for (version, N, precision)."""

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

    # ---- the hook tests override to inject a wrong kernel
    def make_pipeline(self, letter, state, precision, clock=None):
        """A ready ForcePipeline of `letter` for `state`. Both the validation and the timed
        pipeline come from here, so what is validated is what is timed."""
        return build_pipeline(letter, state, precision, clock)

    def validate(self, letter: str, precision: str) -> float:
        """Check the pipeline factory's forces against the float64 reference on a fresh cluster
        of `validation_n` bodies (dp, dsp far from the origin, sp near it); raise on failure."""
        state = make_cluster(self.validation_n, seed=None, radius_kpc=FRAME_KPC[precision])
        forces = self.make_pipeline(letter, state, precision)
        tol = TOLERANCE[precision]
        err, ok = check_pipeline(forces, state, tol)
        if not ok:
            raise ValidationError(
                f"version {letter} {precision}: max relative pairwise-force error {err:.3g} at "
                f"N = {self.validation_n} exceeds the tolerance {tol:.0e}; refusing to time a wrong kernel")
        return err

    def prepare(self, letter: str, n: int, precision: str, evaluations: int = 1):
        """Skip if over budget or unavailable, validate, build the timed state and pipeline,
        and make one warm call (compiles everything). Sets state, clock, forces, acc, threads."""
        check_budget(letter, n, evaluations)
        self.threads = configure_threads()
        self.validate(letter, precision)
        self.state = timing_state(n)
        self.clock = TaskClock()
        self.forces = self.make_pipeline(letter, self.state, precision, self.clock)
        self.compile_seconds = self.forces.warm_up(self.state.x)
        self.acc = np.zeros_like(self.state.x)
        return self.forces

    @property
    def on_device(self) -> bool:
        """True for GPU backends (upload / compute / download)."""
        return hasattr(self.forces.backend, "upload")


# ---------------------------------------------------------------- used by `make bench`

def detect_machine() -> tuple[str, str]:
    """(asv machine name, GPU description): `<arch>-<cores>cores-<gpu>` such as
    `x86_64-2cores-nogpu` or `x86_64-16cores-nvidia-h200` (`2x-...` for two GPUs); the
    environment variable BENCH_MACHINE overrides the name. Asks nvidia-smi, never the driver."""
    import platform
    import re
    import subprocess
    gpus = []
    if shutil.which("nvidia-smi"):
        try:
            out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                                 capture_output=True, text=True, timeout=30).stdout
            gpus = [line.strip() for line in out.splitlines() if line.strip()]
        except (OSError, subprocess.SubprocessError):
            gpus = []
    if gpus:
        slug = re.sub(r"[^a-z0-9]+", "-", gpus[0].lower()).strip("-")
        gpu_slug = slug if len(gpus) == 1 else f"{len(gpus)}x-{slug}"
        gpu = gpus[0] if len(gpus) == 1 else f"{len(gpus)} x {gpus[0]}"
    else:
        gpu_slug, gpu = "nogpu", ""
    name = os.environ.get("BENCH_MACHINE", "").strip() or \
        f"{platform.machine()}-{os.cpu_count()}cores-{gpu_slug}"
    return name, gpu


def register_machine(name: str, gpu: str = ""):
    """Write asv's machine entry (~/.asv-machine.json) for `name` with the full description
    (OS, architecture, CPU model, cores, RAM, GPU): `asv machine --yes --machine NAME` alone
    stores only the name."""
    from asv.machine import Machine, MachineCollection
    info = Machine.get_defaults()
    info.update(machine=name, gpu=gpu or "none")
    MachineCollection.save(name, info)


def portable_results(directory: str, root: str = "."):
    """asv names a `--python=same` environment after the interpreter's absolute path; make the
    results in `directory` independent of where the checkout lives: the path becomes relative
    to the repository `root` (or the interpreter's file name if outside it), in the file name,
    `env_name` and `python`. Results already there for the same commit are merged (new wins)."""
    import glob
    import json
    root = os.path.abspath(root)
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        if os.path.basename(path) == "machine.json":
            continue
        with open(path) as f:
            data = json.load(f)
        python = data.get("python", "")
        if not os.path.isabs(python):
            continue
        rel = os.path.relpath(python, root)
        new_python = os.path.basename(python) if rel.startswith("..") else rel
        old_env = data["env_name"]
        new_env = old_env.replace(python.replace(os.sep, "_"), new_python.replace(os.sep, "_"))
        data["python"] = new_python
        data.setdefault("params", {})["python"] = new_python
        data["env_name"] = new_env
        target = os.path.join(directory, f"{data['commit_hash'][:8]}-{new_env}.json")
        if os.path.exists(target) and os.path.abspath(target) != os.path.abspath(path):
            with open(target) as f:
                old = json.load(f)
            for key in ("results", "durations"):
                merged = dict(old.get(key, {}))
                merged.update(data.get(key, {}))
                data[key] = merged
        with open(target, "w") as f:
            json.dump(data, f)
        if os.path.abspath(target) != os.path.abspath(path):
            os.remove(path)


if __name__ == "__main__":
    import sys
    usage = "python -m benchmarks.common machine | portable-results DIR"
    if sys.argv[1:] == ["machine"]:            # register this machine with asv, print its name
        machine, gpu_name = detect_machine()
        register_machine(machine, gpu_name)
        print(machine)
    elif len(sys.argv) == 3 and sys.argv[1] == "portable-results":
        portable_results(sys.argv[2])
    else:
        sys.exit(usage)
