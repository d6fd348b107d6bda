"""The asv suite as a tracking instrument: machine identity, what a grid runs, one environment
name for `--python=same` runs, provenance in the results, and scratch configurations so that
checks never rewrite committed data. The Makefile's bench targets call this module:

    python -m tools.tracking machine            register this machine with asv, print its name
    python -m tools.tracking run [OPTIONS]      asv run --python=same of HEAD on the grid
    python -m tools.tracking smoke              asv check, then the smoke grid (--quick, nothing saved)
    python -m tools.tracking benchmarks-json    rewrite results/benchmarks.json from discovery
    python -m tools.tracking select [--gate]    the -b patterns of this grid (or of the gate)
    python -m tools.tracking find GOOD..BAD BENCH   asv find, results kept out of results/
    python -m tools.tracking history [OPTIONS]  asv run of every commit since the reference that
                                                results/<machine>/ lacks (resumable)

It lies outside asv's `benchmark_dir` (benchmarks/), so asv never imports it; asv, the suite
and the package are imported where they are used (`machine` needs only the package's provenance).
"""
import argparse
import itertools
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import threading
import time
from contextlib import ExitStack, contextmanager, nullcontext
from pathlib import Path

from nbsymple_versions.entry import FAULT, WRITE_FAULTS, cannot_write, child_process, command
from nbsymple_versions.environment import misread_folder, os_reason, usable_cores
from nbsymple_versions.runs.errors import in_the_way_of, writable
from nbsymple_versions.runs.locks import PathBusy, hold
from nbsymple_versions.runs.paths import (FileRefused, KeyTwice, Unbounded, decode_json, not_a_folder, odd_kind,
                                          read_bytes, read_json, write_file)
from .arguments import Parser, commit, name as name_argument, regex

ROOT = Path(__file__).resolve().parents[1]
BENCH_DIR = ROOT / "benchmarks"
CONFIG = ROOT / "asv.conf.json"
SCRATCH = ROOT / ".asv"                     # git-ignored
ASV_COMMANDS = ("run", "smoke", "history", "find", "publish")   # the subcommands whose asv reads asv.conf.json
GIT_COMMANDS = ("run", "history", "find", "publish")             # and those that read the repository's commits
# the gate: every timed task, at the largest N the grid runs for each version; the O(N) host
# tasks on the versions whose host kernels are serial (A, C): threaded ones of ~30 us swing by
# 100x and more on a shared machine (a parallel region waits for a descheduled thread), and the
# kernels' source is the same
GATE_BENCHMARKS = ("tasks.Tasks.time_pairwise", "tasks.HostTasks.time_galactic",
                   "tasks.HostTasks.time_integrate", "tasks.Transfer.time_transfer")
GATE_SERIAL_HOST_ONLY = ("tasks.HostTasks.time_galactic", "tasks.HostTasks.time_integrate")
# a threaded kernel's timing at fewer bodies is tens of microseconds, where a busy core decides it
# (the smoke grid's B pairwise at N = 256 read 237x once, a hunt found): gated from this N on only
GATE_THREADED_LEAST_N = 1024


def log(msg: str):
    print(msg, file=sys.stderr, flush=True)


def git(*args, cwd=ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, errors="replace",
                          check=True).stdout.strip()


def commit_hash(name: str) -> str | None:
    """The hash of the commit `name` (a hash, a branch, HEAD~3) names in this repository, else None."""
    r = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}"], cwd=ROOT,
                       capture_output=True, text=True, errors="replace")
    return r.stdout.strip() if r.returncode == 0 else None


def not_a_commit(name: str, shown: str | None = None) -> str:
    """Why `name` (shown as `shown`) names no commit here: a short hash of several objects, or a
    shallow clone (`git clone --depth 1`) lacking the older ones."""
    shown = name if shown is None else shown
    said = subprocess.run(["git", "rev-parse", "--verify", f"{name}^{{commit}}"], cwd=ROOT, capture_output=True,
                          text=True, errors="replace").stderr
    if "is ambiguous" in said:
        return (f"{shown} is the start of the hashes of several objects of this repository, so it names none; "
                "give more of the commit's hash")
    return f"{shown} is not a commit of this repository" + (f"; {SHALLOW}" if shallow_clone() else "")


SHALLOW = ("this clone is shallow (git clone --depth), with only its newest commits: `git fetch --unshallow` "
           "fetches the others")


def shallow_clone() -> bool:
    return subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=ROOT, capture_output=True,
                          text=True, errors="replace").stdout.strip() == "true"


def ancestor_problem(older: str, newer: str) -> str | None:
    """Why the commits after `older` up to `newer` are no line of history to measure: the same
    commit, or `older` not in `newer`'s history (another branch); None where they are."""
    if commit_hash(older) == commit_hash(newer):
        return f"{older} and {newer} are the same commit, with no commit between them"
    if subprocess.run(["git", "merge-base", "--is-ancestor", older, newer], cwd=ROOT, capture_output=True).returncode:
        return f"{older} is not in the history of {newer} (another branch, or a later commit)"
    return None


def checkout_problem(root: Path = ROOT) -> str | None:
    """Why git cannot read this checkout's commits, which asv measures, in one sentence: no git, a
    folder that is no clone (a source archive, or GIT_DIR naming none), a clone another user owns
    (git's safe.directory: its hooks and settings would run as this user), no commit yet; None
    where it can."""
    try:
        r = subprocess.run(["git", "rev-parse", "--verify", "--quiet", "HEAD"], cwd=root, capture_output=True,
                           text=True, errors="replace")
    except OSError as e:
        return f"git cannot be run ({os_reason(e)}); asv reads the commits it measures with git: install git"
    if r.returncode == 0:
        return None
    said = r.stderr.strip().splitlines()
    if not said:                                # --quiet: a HEAD that names no commit yet
        return f"the checkout {root} has no commit yet; asv measures commits: commit first"
    reason = said[0].removeprefix("fatal: ") + "".join(f", {name}={os.environ[name]!r} being set"
                                                      for name in ("GIT_DIR", "GIT_WORK_TREE") if name in os.environ)
    if "dubious ownership" in reason:
        return (f"git refuses to read {root}, a clone another user owns (git's safe.directory: its settings "
                f"would run as you); if you trust it: `git config --global --add safe.directory {root}`")
    return (f"git cannot read the commits of {root} ({reason}); "
            "asv measures commits: run it in a clone of the repository")


def branch_problem(conf: dict) -> str | None:
    """Why asv publish cannot draw the line of asv.conf.json's branches here: a branch this clone
    has none of (`git clone -b other`, `--single-branch`: asv's ProcessError traceback); None where it can."""
    for branch in conf.get("branches") or []:
        if commit_hash(branch) is None:
            make = f"git branch {branch} origin/{branch}" if commit_hash(f"origin/{branch}") else \
                f"git fetch origin {branch}:{branch}"
            return (f"asv publish draws the history of the branch {branch!r} (asv.conf.json's branches), "
                    f"which this clone has no branch of: make it (`{make}`) and publish again")
    return None


# ---------------------------------------------------------------- machine identity

def machine_info() -> dict:
    """asv's machine description, with what changes the numbers and nothing that merely
    differs between two hosts of one kind (kernel build, a few MB of RAM): name
    (`provenance.machine_name`), architecture, CPU model, microarchitecture (`uarch`), vector ISA,
    cores, GPU model and count. asv keeps keys beyond its own (arch, cpu, machine, num_cpu, os,
    ram) in machine.json and in every result's params, where the dashboard offers them as selectors."""
    from nbsymple_versions.instruments import provenance
    names, _ = provenance.gpus()
    gpu = " + ".join(f"{names.count(m)} x {m}" for m in sorted(set(names))) or "none"
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        ram = 0
    return {"machine": provenance.machine_name(names), "arch": platform.machine(), "cpu": provenance.cpu_model(),
            "uarch": provenance.cpu_uarch(), "isa": provenance.vector_isa(),
            "num_cpu": provenance.cores_words(usable_cores(), os.cpu_count() or 0, "of"),
            "gpu": gpu, "os": platform.system(), "ram": f"{round(ram / 2**30)} GiB", "version": 1}


def register_machine() -> str:
    """Store this machine's description in asv's machine file (~/.asv-machine.json, asv's layout:
    one entry per machine and `version`) and return its name: `asv run --machine NAME` then
    neither asks questions nor stores a bare name. The file is read and written as every file of
    the suite (`runs.paths`: a regular file of bounded JSON, replaced whole; a link at ~ is
    followed to the file it names, as asv follows it); FileRefused, one sentence naming it, where
    it is not a machine file (a folder, a FIFO, text that is not asv's) or cannot be written
    (HOME naming a folder this user cannot write: asv raised a traceback, and waited for ever on a FIFO)."""
    from asv.machine import MachineCollection
    if (problem := home_problem()) is not None:
        raise FileRefused(problem)
    info = machine_info()
    name = MachineCollection.get_machine_file_path()
    path = os.path.realpath(name)
    machines = read_json(path, "asv machine file", name) if os.path.lexists(path) else {}   # a dangling link: none yet
    if not isinstance(machines, dict) or not all(isinstance(v, dict) for k, v in machines.items() if k != "version"):
        raise FileRefused(f"asv machine file {name} is not one asv writes (a JSON object of machines, each an "
                          f"object): move it away, and asv's next run writes a new one")
    machines.update({info["machine"]: {k: v for k, v in info.items() if k != "version"},
                     "version": MachineCollection.api_version})
    try:
        write_file(path, json.dumps(machines, indent=4, sort_keys=True))
    except OSError as e:
        if e.errno in WRITE_FAULTS:      # a full disk: the machine's fault, status 4 (a hunt: "give HOME a folder")
            raise
        raise FileRefused(f"asv machine file {name} cannot be written ({os_reason(e)}): give HOME a folder "
                          f"this user can write") from None
    return info["machine"]


def home_problem() -> str | None:
    """Why HOME names no folder for asv's machine file (~/.asv-machine.json), else None: empty (asv
    wrote /.asv-machine.json), a folder that is not there (asv made it, in silence), or one that
    is no folder or cannot be written (/proc: "No such file or directory" of a folder that exists)."""
    home = os.environ.get("HOME")
    if home is None:
        return None                              # asv takes the account's home folder
    if not home:
        return ("HOME is set but empty, and asv would keep its machine file (.asv-machine.json) at / instead; set HOME "
                "to your home folder")
    if (found := misread_folder("HOME", home, "asv (for its machine file, .asv-machine.json)",
                              "set HOME to your home folder")) is not None:
        return found
    remedy = "set HOME to your home folder"
    if (why := not_a_folder(home)) is not None:
        return f"HOME={home!r}, where asv keeps its machine file (.asv-machine.json), {why}; {remedy}"
    try:
        writable(Path(home), "asv's machine file (.asv-machine.json)", FileRefused)
    except FileRefused as e:
        return f"HOME={home!r}: {e}; {remedy}"
    return None


# ---------------------------------------------------------------- provenance of a run

def _cuda_runtime():
    try:
        from nbsymple_versions.instruments.provenance import cuda_driver
        if cuda_driver() is None:
            return None
        from numba import cuda
        return ".".join(map(str, cuda.runtime.get_version()))
    except Exception:   # noqa: BLE001 - no runtime: nothing to record
        return None


def run_provenance() -> dict:
    """What the results of one run need beside asv's own fields: library versions, threading
    layer and threads, GPUs, CUDA driver and runtime, the checkout's commit ('+dirty' where
    tracked files differ from it), the grid and the environment variables that choose it or
    change how the threads wait (OpenMP's: docs/how_fast.md, on a shared machine)."""
    from nbsymple_versions.instruments import provenance

    from benchmarks.grid import configure_threads, grid_name
    configure_threads()
    d = provenance.describe(gpu=True)
    d.pop("host", None)
    d["cuda_runtime"] = _cuda_runtime()
    d["grid"] = grid_name()             # (a hunt: ' Smoke' was recorded as typed, not as the grid that ran)
    d["env"] = {k: v for k, v in os.environ.items()
                if k.startswith(("NBSYMPLE_BENCH_", "OMP_", "GOMP_")) or k == "NUMBA_ENABLE_CUDASIM"}
    return d


class LoadSampler:
    """Samples the 1-minute load average every `interval` seconds while a run lasts: how quiet
    the machine was (a figure taken under a load above the core count is not a clean one)."""

    def __init__(self, interval: float = 5.0):
        self.interval, self.samples, self._stop = interval, [], threading.Event()

    def _loop(self):
        while True:
            self.samples.append(os.getloadavg()[0])
            if self._stop.wait(self.interval):
                return

    def __enter__(self):
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.samples.append(os.getloadavg()[0])

    def summary(self) -> dict:
        s = self.samples or [os.getloadavg()[0]]
        return {"min": round(min(s), 2), "median": round(statistics.median(s), 2), "max": round(max(s), 2),
                "samples": len(s), "interval_s": self.interval, "cores": os.cpu_count()}


# ---------------------------------------------------------------- results files

def write_results(path: Path, data: dict):
    """A results file as asv writes one (compact JSON), replaced whole (`runs.paths.write_file`): a
    link at its name is replaced, never written through (asv's `util.write_json` wrote through it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_file(path, json.dumps(data))


def fixed_env_name(python: str | None = None) -> str:
    """The environment name of every `--python=same` run: the same for every clone and for
    `python` or `python3` of one interpreter (asv takes it from the interpreter's path); that of
    Python `python` ("3.12"; default this interpreter's), where a machine runs another."""
    return f"existing-py{python or f'{sys.version_info.major}.{sys.version_info.minor}'}"


def history_env_name() -> str:
    """The environment name of a `history` run: asv's virtualenv, built per commit, for the Python
    of asv.conf.json. Its results carry the same parameters (machine and Python) as a
    `--python=same` run's, so the dashboard draws both as one series per machine."""
    from asv.environment import get_env_name
    return get_env_name("virtualenv", load_config()["pythons"][0], {}, {})


def _asv_env_name() -> str:
    from asv.environment import get_env_name
    return get_env_name("existing", sys.executable.replace(os.path.sep, "_"), {}, {})


UNRECORDED = ".unrecorded"     # a suffix asv does not read (it reads *.json): rows no run of the suite recorded


def _free_name(path: Path) -> Path:
    """`path`, or where a file holds it `path.2`, `path.3`, ...: the first free name (a second
    file moved aside replaced the first: a hunt's leftover)."""
    names = (path.with_name(f"{path.name}.{k}") if k > 1 else path for k in itertools.count(1))
    return next(p for p in names if not (p.exists() or p.is_symlink()))


@contextmanager
def fixed_environment(results_dir: Path, machine: str, commit: str, provenance: dict | None = None):
    """Around `asv run --python=same --set-commit-hash COMMIT`: asv reads and writes the
    results under its path-derived environment name; before, the fixed-name file (if any) is
    copied to that name so that asv merges the new rows into it; after, the file asv saved
    replaces the fixed-name one whole (which stays as it was until then), `python` the
    interpreter's version and `provenance` appended to its list of runs. Where asv saved
    nothing (a usage mistake, `--dry-run`, a stop before the first benchmark) the copy is removed
    and the file left as it was: no run is recorded that measured nothing. A file already under
    asv's name holds rows no run recorded (a plain `asv run --set-commit-hash`, a run killed before
    it saved): it is moved aside to `UNRECORDED` beside it (`.unrecorded.2`, ... where that is
    taken) and said so, never merged into the commit's results under this run's provenance (a hunt)."""
    from asv.results import get_filename
    fixed = results_dir / get_filename(machine, commit, fixed_env_name())
    asv_path = results_dir / get_filename(machine, commit, _asv_env_name())
    if asv_path.exists() or asv_path.is_symlink():
        aside = _free_name(asv_path.with_name(asv_path.name + UNRECORDED))
        os.replace(asv_path, aside)
        log(f"asv: {asv_path} held rows no run of this suite recorded (a plain asv run --set-commit-hash, or a "
            f"run killed before it saved); moved aside to {aside.name}, not taken into {fixed.name}")
    runs, handed = [], None
    if fixed.exists():
        runs = _recorded_runs(fixed)
        handed = fixed.read_bytes()
        asv_path.parent.mkdir(parents=True, exist_ok=True)
        # a copy: the fixed file stays as it was until the new one replaces it whole (moved away, a
        # kill -9 or a full disk while asv ran or saved left the commit's results under asv's name, or
        # cut short: a hunt)
        write_file(asv_path, handed)     # a file of its own: asv wrote through a link there
    try:
        yield
    finally:
        if handed is not None and asv_path.exists() and asv_path.read_bytes() == handed:
            asv_path.unlink()
        elif asv_path.exists():
            data = json.loads(asv_path.read_text())
            version = f"{sys.version_info.major}.{sys.version_info.minor}"
            data["env_name"], data["python"] = fixed_env_name(), version
            data.setdefault("params", {})["python"] = version
            data["provenance"] = runs + ([provenance] if provenance else [])
            write_results(fixed, data)
            asv_path.unlink()


# ---------------------------------------------------------------- configurations

def _recorded_runs(path: Path) -> list:
    """The provenance list of a results file this suite wrote, read as a regular file of bounded
    JSON (`runs.paths`: a FIFO in its place made `make bench` wait for ever); FileRefused for one
    that is not such a file."""
    data = read_json(path, "asv results file")
    runs = data.get("provenance", []) if isinstance(data, dict) else None
    if not isinstance(runs, list):
        raise FileRefused(f"asv results file {path} is not one this suite wrote (not a JSON object with a "
                          f"provenance list)")
    return runs


# what asv and this suite read of asv.conf.json: name -> (what it must be, the test); the folders
# may be left out (asv's defaults)
CONFIG_NEEDS = {"version": ("1", lambda v: v == 1), "repo": ("a path", lambda v: isinstance(v, str) and v),
                "environment_type": ("a name", lambda v: isinstance(v, str) and v),
                "pythons": ("a list of Python versions", lambda v: isinstance(v, list) and v
                            and all(isinstance(x, str) and x for x in v)),
                **{key: ("a path, if given", lambda v: v is None or isinstance(v, str) and v)
                   for key in ("benchmark_dir", "env_dir", "html_dir")},
                # the tools, `paper` and the gate read the results in results/ (asv's default)
                "results_dir": ('"results", if given', lambda v: v in (None, "results"))}


def load_config() -> dict:
    """asv.conf.json as asv reads it (JSON with comments), read as a regular file of bounded size
    (`runs.paths`); FileRefused, one sentence naming it, for one asv or this suite cannot use
    (asv's traceback from `make bench-smoke` before, found by hand: a file cut short, a list)."""
    import json5
    data = read_bytes(CONFIG, "asv configuration")
    try:                                         # bounded in depth too (json5's RecursionError was a traceback)
        conf = decode_json(data, "asv configuration", CONFIG.name, loads=json5.loads)
    except FileRefused as e:
        raise FileRefused(f"{e}; restore it: git checkout {CONFIG.name}") from None
    wrong = ([] if isinstance(conf, dict) else ["a JSON object"]) or \
        [f"{key} ({what})" for key, (what, ok) in CONFIG_NEEDS.items() if not ok(conf.get(key))]
    if wrong:
        raise FileRefused(f"asv configuration {CONFIG.name} is not one asv and this suite can use (it needs "
                          f"{', '.join(wrong)}); restore it: git checkout {CONFIG.name}")
    return conf


class Busy(FileRefused):
    """Another asv command of this checkout holds the results or scratch folder this one needs."""


@contextmanager
def exclusive(name: str, where: str):
    """Hold .asv/.NAME.lock for the block: two asv commands of one checkout that write the same
    results (`where`: results/ for `run`, `history` and `publish`; a scratch folder under .asv/
    for `run --results`, `smoke`, `find` and the gate) would write over each other's files, so
    the second is refused in one sentence (Busy) naming the first one's process. The lock is
    released however the holder ends (`runs.locks`). A .asv that is a file, or cannot be written,
    is refused in one sentence (FileRefused)."""
    writable(SCRATCH, "asv's scratch files", FileRefused)
    with ExitStack() as held:
        try:
            if (unlocked := held.enter_context(hold(SCRATCH / name, where))) is not None:
                log(f"asv: {unlocked}")
        except PathBusy as e:
            if e.holder is None:                # a lock file that is none: its own sentence
                raise Busy(str(e)) from None
            raise Busy(f"another asv command of this checkout (process {e.holder}) is using {where}; wait for "
                       f"it to end") from None
        yield


def results_lock(folder) -> tuple[str, str] | None:
    """(name, where) of the `exclusive` lock held by the asv commands of this checkout that write
    results folder `folder`: results/, or a scratch one (.asv/NAME/results, `run --results NAME`);
    None for a folder none of them writes."""
    folder = Path(folder).resolve()
    if folder == (ROOT / "results").resolve():
        return "results", "results/"
    if folder.name == "results" and folder.parent.parent == SCRATCH.resolve():
        return folder.parent.name, f".asv/{folder.parent.name}/results/"
    return None


def scratch_folder(name: str, what: str = "asv's scratch files") -> Path:
    """.asv/NAME, made if needed (`own_folder`)."""
    return own_folder(SCRATCH / name, what)


def own_folder(folder: Path, what: str) -> Path:
    """`folder`, made if needed, for asv to write `what` into; FileRefused, one sentence naming it,
    where a file or a link stands there (a link to a folder would have had asv's files written
    wherever it points; asv publish, which removes its folder first, ended in a traceback on a
    link, a file or a dangling link at html/, a hunt)."""
    if folder.is_symlink():
        raise FileRefused(f"cannot write {what} into {folder}: it is a symbolic link, not a folder; remove it")
    return writable(folder, what, FileRefused)


def scratch_config(name: str) -> Path:
    """A copy of asv.conf.json under .asv/<name>/ whose results (and benchmarks.json) and
    dashboard go there; every other path points back into the checkout (relative paths: asv
    reads them from the configuration's folder)."""
    conf = load_config()
    folder = scratch_folder(name)
    back = os.path.relpath(ROOT, folder)
    for key in ("repo", "benchmark_dir", "env_dir"):
        conf[key] = os.path.normpath(os.path.join(back, conf.get(key, ".")))
    conf["results_dir"], conf["html_dir"] = "results", "html"
    path = folder / "asv.conf.json"
    write_file(path, json.dumps(conf, indent=4))
    return path


# ---------------------------------------------------------------- what runs

def suite():
    """asv's own discovery of benchmarks/: (asv name, params as asv writes them, instance,
    method name, raw parameter tuples)."""
    from asv_runner.discovery import disc_benchmarks
    for b in disc_benchmarks(str(BENCH_DIR)):
        yield b.name, b.params, b.func.__self__ if hasattr(b.func, "__self__") else None, \
            b.func.__name__, list(itertools.product(*b._params))


def skip_reason(instance, method: str, params: tuple):
    """The class's reason (and the method's own) for not running `params` here, or None."""
    if instance is None or not hasattr(instance, "skip_reason"):
        return None
    reason = instance.skip_reason(*params)
    own = getattr(instance, "method_skips", {}).get(method)
    return reason or (own(instance, *params) if own else None)


def versions_problem() -> str | None:
    """Why the versions NBSYMPLE_BENCH_VERSIONS names cannot be timed here, where none of them runs
    (C without a GPU): the suite would time the peers alone (NumPy, REBOUND, Warp) and end with
    status 0 (a hunt); None where one runs, or where the variable is not set."""
    chosen = os.environ.get("NBSYMPLE_BENCH_VERSIONS", "").strip()
    if not chosen:
        return None
    from benchmarks.grid import VERSIONS, version_reason
    if not all(reasons := [version_reason(v) for v in VERSIONS]):
        return None
    return f"NBSYMPLE_BENCH_VERSIONS={chosen} names no version that runs here: {'; '.join(reasons)}; nothing was run"


def selection(gate: bool = False, bench: str | None = None) -> list[str]:
    """asv `-b` patterns naming exactly the combinations that run on this machine and grid (so
    the skipped ones cost no process); with `gate`, only GATE_BENCHMARKS at each version's
    largest running N; with `bench`, only names `name(params)` that this regex matches."""
    return [f"^{re.escape(name)}\\(({'|'.join(re.escape(i) for i in ids)})\\)$" for name, ids in selected(gate, bench)]


def selected(gate: bool = False, bench: str | None = None) -> list[tuple[str, list[str]]]:
    """[(benchmark name, the ids `a, b, c` of its parameter combinations that `selection` runs)]."""
    chosen = []
    for name, reprs, instance, method, raw in suite():
        ids = [", ".join(p) for p in itertools.product(*reprs)]
        keep = [(i, p) for i, p in zip(ids, raw) if skip_reason(instance, method, p) is None
                and (bench is None or re.search(bench, f"{name}({i})"))]
        if gate:
            if name not in GATE_BENCHMARKS:
                continue
            from benchmarks.grid import SERIAL_HOST
            if name in GATE_SERIAL_HOST_ONLY:
                keep = [(i, p) for i, p in keep if p[0] in SERIAL_HOST]
            keep = [(i, p) for i, p in keep if p[0] in SERIAL_HOST or p[1] >= GATE_THREADED_LEAST_N]
            largest = {}
            for _, p in keep:
                largest[p[0]] = max(largest.get(p[0], 0), p[1])     # (version, n, ...)
            keep = [(i, p) for i, p in keep if p[1] == largest[p[0]]]
        if keep:
            chosen.append((name, [i for i, _ in keep]))
    return chosen


# ---------------------------------------------------------------- running asv

# asv as `python -m asv`, but every JSON file it writes (results, machine.json, benchmarks.json, the
# dashboard's) written whole (`whole_writes`): asv's `util.write_json` wrote in place, and a kill or a
# full disk while it saved left the file cut short, the results it held before lost (a hunt)
ASV = [sys.executable, "-c", "import sys; sys.argv[0] = 'asv'; from tools.tracking import whole_writes; "
                             "whole_writes(); from asv.main import main; main()"]


def whole_writes():
    """Make asv write each JSON file as `runs.paths.write_file` does: through a temporary file
    renamed over it, so that a kill or a failed write leaves the file that was there, never half
    of one (and a link at its name is replaced, never written through). The same text as asv's.
    A write that fails (a full disk) ends asv with one sentence and status 4 (asv's traceback before)."""
    from asv import util
    from asv.console import log as asv_log

    def write_json(path, data, api_version=None, compact=False):
        path = os.path.abspath(path)
        if api_version is not None:
            data = dict(data, version=api_version)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            write_file(path, json.dumps(data) if compact else json.dumps(data, indent=4, sort_keys=True))
        except OSError as e:
            asv_log.error(cannot_write("asv", path, e))      # on a line of its own, as asv says its errors
            raise SystemExit(FAULT) from None
    util.write_json = write_json


def asv(*args, config: Path = CONFIG, env=None, log_file: Path | None = None) -> int:
    """Run `asv --config CONFIG ARGS` with this interpreter (`ASV`); return its exit status. With
    `log_file`, asv's output goes there (a file made anew, never written through a link at its
    name), and its tail to stderr if asv fails."""
    cmd = [*ASV, "--config", str(config), *args]
    if log_file is None:
        with child_process(cmd, cwd=ROOT, env=env) as proc:     # asv and its benchmarks end with us
            return proc.wait()
    Path(log_file).unlink(missing_ok=True)       # made anew ("x"): a link at its name was written through
    with open(log_file, "x") as f, child_process(cmd, cwd=ROOT, env=env, stdout=f, stderr=subprocess.STDOUT) as proc:
        rc = proc.wait()
    if rc:
        # its words are bytes of the benchmarks' own (a path of a checkout whose name is not UTF-8: a hunt, a
        # UnicodeDecodeError in place of the tail), read with replacements
        log("".join(Path(log_file).read_text(errors="replace").splitlines(keepends=True)[-30:]))
    return rc


# what `run` sets itself, which asv would take from ASV_ARGS instead: asv's name of each, as `asv run` parses it
ASV_SETS = {"range": "a commit range", "set_commit_hash": "--set-commit-hash", "machine": "--machine",
            "env_spec": "--python or -E"}


class _AsvParser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **{**kwargs, "add_help": False})

    def error(self, message):            # asv's own words come when asv parses it
        raise ValueError(message)


def taken_asv_arguments(extra) -> str | None:
    """Why asv arguments handed to `run` (ASV_ARGS) cannot be, before asv starts: one `asv run` does
    not take (its usage, three lines, after the run's set-up), or one that `run` sets itself, which
    asv took instead (the working tree's timings saved as another commit's, a range ignored,
    results under another machine's name or another Python's); None where none is."""
    from asv.commands.run import Run
    shown = f"ASV_ARGS ({' '.join(extra)})"
    try:
        given, rest = Run.setup_arguments(_AsvParser().add_subparsers(parser_class=_AsvParser)).parse_known_args(extra)
    except ValueError as e:
        return f"{shown} are not arguments `asv run` takes ({e}); correct them (asv run --help lists them)"
    if rest:
        return f"{shown}: `asv run` takes no {' '.join(rest)}; correct them (asv run --help lists its arguments)"
    taken = [what for key, what in ASV_SETS.items() if getattr(given, key, None)]
    return (f"{' and '.join(taken)} in {shown} cannot be given: `make bench` measures the "
            "working tree of HEAD in this Python and files it under HEAD and this machine's name itself; leave "
            "it out (`history --since` measures other commits)") if taken else None


def run(results: str | None = None, bench: str | None = None, quick: bool = False, extra=()) -> int:
    """`make bench` (results/) and `make paper`'s sweep (results=scratch name): asv run
    --python=same of HEAD on this grid's selection, then the fixed environment name and the
    run's provenance (load average included) in the results file."""
    machine = register_machine()
    where = "results/" if results is None else f".asv/{results}/results/"
    try:
        with exclusive(results or "results", where):        # before its scratch folder is made
            config = CONFIG if results is None else scratch_config(results)
            return _run(machine, config, config.parent / "results", bench, quick, extra)
    except Busy as e:
        log(f"asv: {e}; nothing was run")
        return 2


def _run(machine: str, config: Path, results_dir: Path, bench: str | None, quick: bool, extra) -> int:
    if (problem := special_results(results_dir)) is not None:
        log(f"asv: {problem}; nothing was run")
        return 2
    commit = git("rev-parse", "HEAD")
    patterns = selection(bench=bench)
    if not patterns:
        log(f"asv: --bench {bench!r} selects nothing that runs on this machine and grid (it is searched in "
            f"name(params), as in tasks.Tasks.time_pairwise('A', 4096, 'dp'))" if bench is not None and selection()
            else "asv: nothing of the suite runs on this machine and grid")
        return 2
    prov = run_provenance()
    dirty = prov["commit"].endswith("+dirty")
    log(f"asv: machine {machine}, grid {prov['grid']}, commit {prov['commit']}"
        + (" (the working tree differs from HEAD: the results say so)" if dirty else ""))
    start = time.monotonic()
    try:
        with fixed_environment(results_dir, machine, commit, prov):
            args = ["run", "--python=same", "--set-commit-hash", commit, "--machine", machine,
                    "--durations", "10", *(["--quick"] if quick else [])]
            for p in patterns:
                args += ["-b", p]
            with LoadSampler() as load:
                rc = asv(*args, *extra, config=config)
            prov["load_average"] = load.summary()
    except FileRefused as e:          # the commit's results file, before asv ran
        log(f"asv: {e}; nothing was run")
        return 2
    la = prov["load_average"]
    log(f"asv: wall time {time.monotonic() - start:.0f} s, exit status {rc}, load average (1 min) "
        f"{la['min']}-{la['max']} on {la['cores']} cores (results in {os.path.relpath(results_dir / machine, ROOT)}/)")
    return rc


def smoke() -> int:
    """CI: `asv check`, then every benchmark of the smoke grid once (--quick --dry-run) with a
    scratch configuration, so results/ is left as it is; any failure or timeout fails."""
    os.environ["NBSYMPLE_BENCH_GRID"] = "smoke"
    machine = register_machine()
    with exclusive("smoke", ".asv/smoke/"):
        return _smoke(machine, scratch_config("smoke"))


def _smoke(machine: str, config: Path) -> int:
    start = time.monotonic()
    rc = asv("check", "--python=same", config=config)
    if rc == 0:
        args = ["run", "--python=same", "--quick", "--dry-run", "--machine", machine]
        for p in selection():
            args += ["-b", p]
        cmd = [*ASV, "--config", str(config), *args]
        bad = False
        with child_process(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace") as proc:
            for line in proc.stdout:            # shown as it comes, and read for failures
                print(line, end="", flush=True)
                bad = bad or re.search(r"\bfailed\b|timed out", line) is not None
        rc = proc.returncode or int(bad)
    log(f"bench-smoke: {time.monotonic() - start:.0f} s, exit status {rc}")
    return rc


def matching(bench: str) -> list[str]:
    """The benchmarks of the working tree's suite (and the RETIRED ones) whose name, with the
    parameters of one combination (`name(a, b)`, as asv matches -b), the regex `bench` matches."""
    names = {name for name, reprs, *_ in suite()
             if any(re.search(bench, f"{name}({', '.join(p)})" if reprs else name) for p in itertools.product(*reprs))}
    return sorted(names | {name for name in RETIRED if re.search(bench, name)})


def find(commits: str, bench: str) -> int:
    """`asv find` (bisection over asv-built environments, one per commit) with a scratch
    configuration: results/ and its benchmarks.json are left alone. The commits and the one
    benchmark it bisects are checked first: asv would build an environment before it found out."""
    for side in commits.split(".."):
        if commit_hash(side) is None:
            log(f"find: {not_a_commit(side)}")
            return 2
    if (problem := ancestor_problem(*commits.split(".."))) is not None:
        log(f"find: {problem}; give GOOD..BAD, GOOD an older commit of BAD's history")
        return 2
    names = matching(bench)
    if not names or (len(names) > 1 and bench not in names):
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        log(f"find: {bench!r} matches " + (f"{len(names)} benchmarks ({shown}); asv find bisects one: give its name"
                                           if names else "no benchmark of the suite (benchmarks/)"))
        return 2
    good, bad = commits.split("..")
    first = git("rev-list", "--reverse", "--first-parent", f"{good}..{bad}").split()[:1]
    name = bench if bench in names else names[0]
    if name in RETIRED and not (first and _defined_at(first[0], name)):
        log(f"find: {name} was taken out of the suite ({RETIRED[name]}), and the range's first commit after "
            f"{good}, where asv looks for it, has it no longer; give a range in which it is still defined")
        return 2
    machine = register_machine()
    with exclusive("find", ".asv/find/"):
        return asv("find", "--machine", machine, "--skip-save", commits, bench, config=scratch_config("find"))


def _defined_at(commit: str, name: str) -> bool:
    """Whether the suite of `commit` defines the benchmark `name` (module.Class.method)."""
    module, method = name.split(".")[0], name.split(".")[-1]
    r = subprocess.run(["git", "show", f"{commit}:benchmarks/{module}.py"], cwd=ROOT, capture_output=True, text=True,
                       errors="replace")
    return r.returncode == 0 and re.search(rf"\bdef {re.escape(method)}\b", r.stdout) is not None


# ---------------------------------------------------------------- the history

HISTORY_BENCH = r"^(tasks|steps)\."          # the paper's task and step timings


def reference_commit(results_dir: Path = ROOT / "results", repo: Path = ROOT) -> str | None:
    """The committed reference commit: the oldest (by commit date) that results/ holds for any
    machine among the commits of HEAD's history (a results file of a fork's commit, or of one a
    rebase left behind, is passed over: no line of history starts there)."""
    ours = set(git("rev-list", "HEAD", cwd=repo).split())
    oldest = min((f for f in _result_files(results_dir.glob("*/*.json")) if f.commit in ours),
                 key=lambda f: f.date, default=None)
    return oldest.commit if oldest else None


def results_folder_problem(results_dir: Path) -> str | None:
    """Why asv cannot keep its results in `results_dir` (a file, a FIFO or a dangling link there, or on its
    path: asv's traceback, or its advice to run `asv run --bench just-discover`, a hunt), in a sentence; else None."""
    if (why := in_the_way_of(results_dir)) is None:
        return None
    return f"cannot keep asv's results in {os.path.relpath(results_dir, ROOT)}/: {why}"


def special_results(results_dir: Path) -> str | None:
    """`results_dir` where it is no folder (`results_folder_problem`), else the first file under it
    that asv reads (benchmarks.json and each machine's results) and that is no regular file, or one
    asv cannot pass over, in a sentence: a FIFO there made `make dashboard` wait for ever, JSON
    nested 100000 deep (`runs.paths.Unbounded`) and a results file whose fields are not of their
    types (`paper.results.ResultFile`: an env_name of 5, results or durations that are lists) or a
    machine.json without its machine's name or format version ended it in asv's traceback, and a key
    given twice (`runs.paths.KeyTwice`) had asv take its last value; else None.
    So is any other file the suite's reader refuses (not JSON, not UTF-8, a link loop)."""
    from nbsymple_versions.paper.results import ResultFile, ResultsError
    if (problem := results_folder_problem(results_dir)) is not None:
        return problem
    for path in sorted([results_dir / "benchmarks.json", *results_dir.glob("*/*.json")]):
        if not os.path.lexists(path):            # no benchmarks.json yet: asv's run writes it
            continue
        if (kind := odd_kind(path)) is not None:
            return f"{os.path.relpath(path, ROOT)} is {kind}, not a file of asv's: move it out of {results_dir.name}/"
        try:
            kind = f"asv {path.stem if path.name in ('benchmarks.json', 'machine.json') else 'results'} file"
            data = read_json(path, kind, os.path.relpath(path, ROOT))
            if kind == "asv results file":
                ResultFile.read(path)
            elif kind == "asv machine file" and not (isinstance(data, dict) and isinstance(data.get("machine"), str)
                                                     and type(data.get("version")) is int):   # asv's KeyError...
                return (f"{os.path.relpath(path, ROOT)} is not an asv machine file (a JSON object naming its machine, "
                        f"of a format version), which asv cannot read: move it out of {results_dir.name}/")
            elif kind == "asv benchmarks file" and not (isinstance(data, dict) and type(data.get("version")) is int
                                                        and all(isinstance(v, dict) for k, v in data.items()
                                                                if k != "version")):          # asv's TypeError
                return (f"{os.path.relpath(path, ROOT)} is not asv's benchmarks.json (a JSON object of benchmarks, "
                        f"each an object, of a format version), which asv cannot read: move it out of "
                        f"{results_dir.name}/ (`python -m tools.tracking benchmarks-json` writes results/'s again)")
        except Unbounded as e:
            return f"{e}, which asv cannot read: move it out of {results_dir.name}/"
        except KeyTwice as e:        # asv takes the last value, whatever it is (an env_name of 5: its traceback)
            return f"{e}: move it out of {results_dir.name}/"
        except ResultsError as e:
            return f"{str(e).rstrip('.')}, which asv cannot read: move it out of {results_dir.name}/"
        except FileRefused as e:     # (a hunt: a link loop and a byte not UTF-8 in a results file ended in asv's
            return f"{e}, which asv cannot read: move it out of {results_dir.name}/"    # traceback, a machine.json
    return None                                                                        # cut short in its stdout


def _result_files(paths):
    """The asv results files among `paths` that read as results (`ResultFile`), machine.json and
    unreadable ones left out."""
    from nbsymple_versions.paper.results import ResultsError, ResultFile
    for path in paths:
        if path.name == "machine.json":
            continue
        try:
            yield ResultFile.read(path)
        except ResultsError:
            continue


def commit_range_list(since: str, until: str = "HEAD", repo: Path = ROOT) -> list[str]:
    """The first-parent commits from `since` (included) to `until`, oldest first, as asv takes a range
    (an annotated tag `since` is its commit: its own hash was measured, and filed as no commit's)."""
    commits = git("rev-list", "--reverse", "--first-parent", f"{since}..{until}", cwd=repo).split()
    return [git("rev-parse", "--verify", f"{since}^{{commit}}", cwd=repo)] + commits


def missing_commits(since: str, machine: str, names: set, results_dir: Path = ROOT / "results",
                    until: str = "HEAD", repo: Path = ROOT) -> list[str]:
    """The commits from `since` to `until` (first parents, as asv takes a range; `since`
    included) whose results for `machine` do not hold every benchmark of `names` (a finite value;
    a commit asv stopped in the middle of counts as missing, and asv's --skip-existing-successful
    then runs only what it lacks)."""
    from nbsymple_versions.paper.results import held_benchmarks
    commits = commit_range_list(since, until, repo)
    by_commit: dict[str, list] = {}
    for f in _result_files((results_dir / machine).glob("*.json")):
        by_commit.setdefault(f.commit, []).append(f)
    return [c for c in commits if not set(names) <= held_benchmarks(by_commit.get(c, []))]


def spread(commits: list) -> list:
    """`commits` (oldest first) in the order that covers their range evenly at every stop: the
    newest and the oldest, then the middle, then the quarters, and so on (breadth-first halving),
    so a history stopped after k commits is already a line over the whole range, k points along it."""
    if len(commits) < 2:
        return list(commits)
    order, spans = [len(commits) - 1, 0], [(0, len(commits) - 1)]
    for lo, hi in spans:                         # spans grows while it is walked: breadth first
        if hi - lo > 1:
            mid = (lo + hi) // 2
            order.append(mid)
            spans += [(lo, mid), (mid, hi)]
    return [commits[i] for i in order]


def history(since: str | None = None, bench: str = HISTORY_BENCH, quick: bool = False, dry_run: bool = False,
            extra=()) -> int:
    """`asv run` (an asv-built environment per commit) of the benchmarks `bench` selects, at every
    commit from `since` (default: the committed reference commit) to HEAD that results/<machine>/
    lacks, into results/: the dashboard's history. asv saves each benchmark as it finishes, so an
    interrupted run resumes where it stopped when the same command is given again."""
    since = since or reference_commit()
    if since is None:
        log("history: results/ holds no commit of HEAD's history to start from" + (f": {SHALLOW}, or give --since "
            "COMMIT" if shallow_clone() else "; give --since COMMIT"))     # a shallow clone's: "holds no commit"
        return 2
    if commit_hash(since) is None:
        log(f"history: --since {not_a_commit(since)}")
        return 2
    if commit_hash(since) != commit_hash("HEAD") and (problem := ancestor_problem(since, "HEAD")) is not None:
        log(f"history: --since {problem}: the dashboard's line is HEAD's history")
        return 2
    if not dry_run and (problem := special_results(ROOT / "results")) is not None:
        log(f"history: {problem}")
        return 2
    patterns = selection(bench=bench)
    if not patterns:
        log(f"history: --bench {bench!r} selects nothing that runs on this machine and grid")
        return 2
    machine = register_machine()
    with nullcontext() if dry_run else exclusive("results", "results/"):   # a dry run only reads
        return _history(since, bench, patterns, machine, quick, dry_run, extra)


def _history(since: str, bench: str, patterns: list[str], machine: str, quick: bool, dry_run: bool, extra) -> int:
    names = {name for name, _ in selected(bench=bench)}
    missing = set(missing_commits(since, machine, names))
    todo = [c for c in spread(commit_range_list(since)) if c in missing]   # even coverage at every stop
    log(f"history: machine {machine}, {len(names)} benchmarks ({bench}), {len(todo)} commits from {since[:8]} to "
        f"HEAD lack them in results/{machine}/" + (":" if dry_run and todo else ""))
    if dry_run or not todo:
        print("\n".join(todo))
        return 0
    hashfile = scratch_folder("history") / "hashes.txt"
    write_file(hashfile, "\n".join(todo) + "\n")
    args = ["run", "--machine", machine, "--skip-existing-successful", "--durations", "10",
            *(["--quick"] if quick else [])]
    for p in patterns:
        args += ["-b", p]
    start = time.monotonic()
    with LoadSampler() as load:
        rc = asv(*args, *extra, f"HASHFILE:{hashfile}")
    la = load.summary()
    left = missing_commits(since, machine, names)
    log(f"history: wall time {time.monotonic() - start:.0f} s, exit status {rc}, load average (1 min) {la['min']}-"
        f"{la['max']} on {la['cores']} cores; {len(todo) - len(left)} of {len(todo)} commits measured"
        + (f", {len(left)} left: the same command goes on with them" if left else ""))
    return rc


# Benchmarks taken out of the suite, whose rows committed results keep (asv's dashboard and the
# paper's reader pass over rows of a benchmark that benchmarks.json no longer names): why each went
RATE = "a rate, which asv reads as lower-is-better and cannot be told otherwise (asv 0.6)"
RETIRED = {
    "throughput.Throughput.track_interactions_per_second": f"{RATE}: N^2 / tasks.Tasks.time_pairwise",
    "throughput.Throughput.track_gflops": f"{RATE}: 20 N^2 / tasks.Tasks.time_pairwise / 1e9",
    "peers.Peers.track_interactions_per_second": f"{RATE}: N^2 / peers.Peers.time_evaluation",
    "peers.Peers.track_pairs_evaluated_per_second": f"{RATE}: the candidate's pair count / peers.Peers.time_evaluation",
}


def discovered_benchmarks() -> dict:
    """What `asv run` writes to results/benchmarks.json for this working tree."""
    from asv_runner.discovery import list_benchmarks
    import io
    buf = io.StringIO()
    list_benchmarks(str(BENCH_DIR), buf)
    out = {b["name"]: b for b in json.loads(buf.getvalue())}
    out["version"] = 2
    return out


def write_benchmarks_json(path: Path = ROOT / "results" / "benchmarks.json", held: bool = False):
    """Rewrite the committed benchmarks.json from discovery, as asv writes it (indented, keys
    sorted), replaced whole (`runs.paths.write_file`) while no other asv command of this checkout
    writes results/ (`held`: the caller holds that lock already); FileRefused where a folder or a
    FIFO stands at its name."""
    if (problem := results_folder_problem(path.parent)) is not None:
        raise FileRefused(problem)
    if (kind := odd_kind(path)) is not None:
        raise FileRefused(f"{os.path.relpath(path, ROOT)} is {kind}, not asv's benchmarks.json: move it away")
    data = discovered_benchmarks()
    with nullcontext() if held else exclusive("results", "results/"):
        write_file(path, json.dumps(data, indent=4, sort_keys=True))


def commit_range(text):
    """argparse type of `find`: GOOD..BAD, two commits."""
    good, dots, bad = text.partition("..")
    try:
        commit(good), commit(bad)
    except argparse.ArgumentTypeError:
        dots = ""
    if not dots:
        raise argparse.ArgumentTypeError(f"expected GOOD..BAD (two commits), got {text!r}")
    return text


def main(argv=None) -> int:
    p = Parser(prog="python -m tools.tracking", doc=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("machine", help="register this machine with asv and print its name")
    r = sub.add_parser("run", help="asv run --python=same of HEAD on this grid", epilog="Other arguments go to asv "
                       "run (ASV_ARGS of make bench), except those run sets itself: --set-commit-hash, --machine, "
                       "--python, -E and a range of commits.")
    r.add_argument("--results", type=name_argument, help="a scratch results folder under .asv/ (its name) instead of "
                                                  "results/")
    r.add_argument("--bench", "-b", type=regex, action="append",
                   help="only benchmarks whose name(params) matches this regex (given again: any of them)")
    r.add_argument("--quick", action="store_true", help="each benchmark once (asv --quick)")
    sub.add_parser("smoke", help="asv check and the smoke grid, nothing saved")
    sub.add_parser("benchmarks-json", help="rewrite results/benchmarks.json from discovery")
    s = sub.add_parser("select", help="print the -b patterns, one a line")
    s.add_argument("--gate", action="store_true", help="the gate's timing benchmarks alone, each version at its "
                                                       "largest N running here")
    h = sub.add_parser("history", help="asv run of every commit since the reference that results/<machine>/ "
                                        "lacks (resumable: the same command goes on)")
    h.add_argument("--since", type=commit,
                   help="first commit (default: the oldest commit of HEAD's history results/ holds, the reference)")
    h.add_argument("--bench", "-b", type=regex, action="append",
                   help=f"benchmarks whose name(params) matches this regex (given again: any of them; default "
                        f"{HISTORY_BENCH})")
    h.add_argument("--quick", action="store_true", help="each benchmark once (asv --quick)")
    h.add_argument("--dry-run", action="store_true", help="print the commits it would measure, run nothing")
    sub.add_parser("publish", help="asv publish: the dashboard of results/ into html/ (`make dashboard`)")
    f = sub.add_parser("find", help="asv find GOOD..BAD BENCH with scratch results")
    f.add_argument("commits", type=commit_range)
    f.add_argument("bench", type=regex)
    args, extra = p.parse_known_args(argv)
    if args.cmd in ("run", "history"):          # several -b: any of them (the last alone was kept, a hunt found)
        args.bench = (HISTORY_BENCH if args.cmd == "history" else None) if not args.bench else \
            args.bench[0] if len(args.bench) == 1 else "|".join(f"(?:{b})" for b in args.bench)
    if extra and args.cmd != "run":             # `run` hands the rest to asv
        p.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        if args.cmd in GIT_COMMANDS and (problem := checkout_problem()) is not None:
            p.refuse(problem)                   # a CalledProcessError's traceback, or asv's, otherwise
        if args.cmd in ASV_COMMANDS:
            load_config()                       # asv's own error, or a traceback, otherwise
        if args.cmd == "run" and (problem := taken_asv_arguments(extra)) is not None:
            p.refuse(problem)                   # another commit, machine or Python filed as HEAD's
        if args.cmd in ("run", "smoke", "history") and (problem := versions_problem()) is not None:
            p.refuse(problem)
        return _subcommand(args, extra)
    except FileRefused as e:                    # asv's configuration or machine file, before asv ran
        p.refuse(str(e))


def _subcommand(args, extra) -> int:
    """Run the subcommand parsed into `args` (`extra`: what `run` hands asv); its exit status."""
    if args.cmd == "machine":
        print(register_machine())
    elif args.cmd == "run":
        return run(args.results, args.bench, args.quick, extra)
    elif args.cmd == "smoke":
        return smoke()
    elif args.cmd == "benchmarks-json":
        write_benchmarks_json()
    elif args.cmd == "history":
        return history(args.since, args.bench, args.quick, args.dry_run, extra)
    elif args.cmd == "find":
        return find(args.commits, args.bench)
    elif args.cmd == "publish":
        if (problem := special_results(ROOT / "results")) is not None:
            raise FileRefused(problem)
        own_folder(ROOT / (load_config().get("html_dir") or "html"), "the dashboard (asv publish)")
        with exclusive("results", "results/"):
            if (problem := branch_problem(load_config())) is not None:
                raise FileRefused(problem)
            return asv("publish")
    elif args.cmd == "select":
        print("\n".join(selection(gate=args.gate)))
    return 0


if __name__ == "__main__":
    sys.exit(command("python -m tools.tracking", main))
