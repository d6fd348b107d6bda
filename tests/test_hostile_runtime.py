"""Issue 32, the classes answered at run time, each by one function, each tried on the issue's
example and others of its kind, through the command line in a process of its own:

3. impossible work refused before it starts (`core.work`: memory, least time);
4. the environment checked at start-up (`environment.problem`, from `entry.command`);
5. streams: a closed stdout ends with 141 and nothing said, a full one with 4 and one sentence
   (`entry.command`'s guard on stdout);
6. write faults after the start stop the run with status 4, naming the last good checkpoint
   (`runs.errors.stop_on_write_fault` and `runs.driver._steps`), injected by tests/write_faults.py;
11. children end with the command (`entry.command`'s `Terminated`, `entry.child_process`);

and every refusal names the option at fault. A user mistake: exit status 2, at most 3 lines on
stderr naming the option, variable or file, no traceback. Timeouts are hang guards only."""
import contextlib
import errno
import json
import os
from pathlib import Path
import signal
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

from nbsymple_versions import Simulation, environment, make_cluster
from nbsymple_versions.core import work
from nbsymple_versions.paper.science_runs import run_black_hole, run_tidal_tails
from nbsymple_versions.runs.checkpoint import load
from nbsymple_versions.runs.driver import run
from nbsymple_versions.runs.errors import RunStop
from nbsymple_versions.runs.spec import RunSpec
from nbsymple_versions.versions import LETTERS

from cli_call import signals_default

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "data" / "asv_fixture"
HANG_GUARD = 600                   # seconds: a process still running then hangs
NBSYMPLE = [sys.executable, "-m", "nbsymple_versions.cli"]
PAPER = [sys.executable, "-m", "nbsymple_versions.paper"]
FAULTS = [sys.executable, str(REPO / "tests" / "write_faults.py")]


def launch(argv, cwd=None, env=None, **kw) -> subprocess.CompletedProcess:
    """`argv` run to its end, with the suite's environment and `env` (a value None: left out)."""
    environ = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    environ.update(env or {})
    environ = {k: v for k, v in environ.items() if v is not None}
    environ["PYTHONPATH"] = os.pathsep.join(filter(None, (str(REPO), environ.get("PYTHONPATH"))))
    kw.setdefault("capture_output", True)
    return subprocess.run(argv, cwd=cwd, env=environ, text=True, timeout=HANG_GUARD, **kw)


def assert_refused(p, *named, status=2):
    """Exit `status`, at most 3 lines on stderr naming each of `named`, no traceback, nothing on stdout."""
    lines = p.stderr.strip().splitlines()
    assert p.returncode == status, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr and 1 <= len(lines) <= 3, p.stderr
    assert all(name in p.stderr for name in named), (named, p.stderr)
    assert p.stdout == "", p.stdout


# ------------------------------------------------------------------ 3. impossible work

PAPER_BASE = ["--results", str(FIXTURE), "--quiet"]


@pytest.mark.parametrize("argv, named", [
    (["paper", "--tidal-dt", "1e-300"], ["--tidal-dt", "steps", "years"]),              # the issue's
    (["paper", "--tidal-orbits", "1e12"], ["--tidal-orbits", "steps", "years"]),
    (["paper", "--bh-t-end", "1e300"], ["--bh-t-end", "steps", "years"]),
    (["paper", "--tidal-n", str(10**12)], ["--tidal-n", "of memory"]),
    (["paper", "--bh-n", str(10**12)], ["--bh-n", "of memory"]),
    (["paper", "--full", "--tidal-dt", "1e-12"], ["--tidal-dt", "steps", "years"]),
    (["paper", "--full", "--tidal-orbits", "0.25"], ["--tidal-orbits", "at least 0.5"]),     # no figure to draw
    (["run", "--steps", str(10**13)], ["--steps", "steps of N = 1024", "days"]),
    (["run", "--n", str(10**12), "--steps", "1"], ["--n", "of memory"]),
    (["profile", "--n", "64", "--steps", str(10**14)], ["--steps", "years"]),
    (["check", "--n", str(10**12)], ["--n", "of memory"]),
])
def test_impossible_work_is_refused_with_its_estimate(tmp_path, argv, named):
    out = tmp_path / "plots"
    extra = PAPER_BASE + ["--out", str(out)] if argv[0] == "paper" else []
    p = launch(NBSYMPLE + argv + extra, cwd=tmp_path)
    assert_refused(p, *named)
    assert not out.exists() and sorted(tmp_path.iterdir()) == []          # nothing written


def test_the_limit_is_named_and_can_be_lowered_or_raised(tmp_path, monkeypatch):
    p = launch(NBSYMPLE + ["run", "--n", "64", "--steps", "100"], cwd=tmp_path, env={"NBSYMPLE_MAX_DAYS": "1e-12"})
    assert_refused(p, "--steps", "NBSYMPLE_MAX_DAYS")
    monkeypatch.setenv("NBSYMPLE_MAX_DAYS", "1e9")
    work.check_time(4096, 8e15, "a tidal-tail run", "fewer --tidal-orbits")             # 679 years: allowed now
    monkeypatch.delenv("NBSYMPLE_MAX_DAYS")
    with pytest.raises(ValueError, match="beyond the limit of 30 days"):
        work.check_time(4096, 8e15, "a tidal-tail run", "fewer --tidal-orbits")


def test_a_refusal_for_memory_names_the_limit_that_binds_and_what_to_change(monkeypatch):
    """The free memory binds: a smaller N. An address-space, data or cgroup limit binds: that limit,
    or a smaller N. Not even the fewest bodies fit (the interpreter and numba alone): the limit
    or other programs, never "a smaller N" (it said that of N = 16 under `ulimit -v 800000`)."""
    def limits(left, which):
        return [work._Limit(20 << 30, "this machine has 21.5 GB available", "", ""),
                {"free": work._Limit(left, "this machine has X available", "", ""),
                 "as": work._Limit(left, "this process may map X more (ulimit -v 2000000)", "", "raise that limit"),
                 "cgroup": work._Limit(left, "this process's cgroup leaves X (its memory.max)", "",
                                       "raise that limit"),
                 "data": work._Limit(left, "this process may allocate X more (ulimit -d 2000000)", "",
                                     "raise that limit")}[which]]
    for which, wanted in (("free", "available; choose a smaller --n"),
                          ("as", "(ulimit -v 2000000); raise that limit or choose a smaller --n"),
                          ("data", "(ulimit -d 2000000); raise that limit or choose a smaller --n"),
                          ("cgroup", "(its memory.max); raise that limit or choose a smaller --n")):
        monkeypatch.setattr(work, "_memory_limits", lambda: limits(1 << 30, which))
        assert work.memory_problem(10**6).endswith(wanted), work.memory_problem(10**6)
        assert work.memory_problem(10**5) is None
        monkeypatch.setattr(work, "_memory_limits", lambda: limits(100 << 20, which))
        found = work.memory_problem(16)
        assert "of it whatever N" in found and "smaller" not in found, found
        assert found.endswith(("close other programs" if which == "free" else "raise that limit")
                              + " and run the command again"), found
    monkeypatch.undo()
    import resource                     # the data limit read from this process (it blamed the free memory)
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    used = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmData:"))
    resource.setrlimit(resource.RLIMIT_DATA, (used + (1 << 30), hard))
    try:
        found = work.memory_problem(10**7)
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))
    assert f"(ulimit -d {(used + (1 << 30)) // 1024}); raise that limit or choose a smaller --n" in found, found


def test_the_api_refuses_impossible_work_with_the_estimate(tmp_path):
    with pytest.raises(ValueError, match=r"N = 1000000000000 needs about .* of memory .* n \(the number of bodies\)"):
        make_cluster(10**12)                                                              # the issue's
    with pytest.raises(ValueError, match=r"--tidal-dt 1e-300 .* steps of N = 64"):
        run_tidal_tails(tmp_path / "t", n=64, dt=1e-300, progress=False)
    with pytest.raises(ValueError, match=r"--bh-t-end 1e\+300"):
        run_black_hole(tmp_path / "b", n=64, t_end=1e300, progress=False)
    with pytest.raises(RunStop, match=r"--steps 10000000000000: 1e\+13 steps"):
        run(RunSpec(n=64, steps=10**13))
    sim = Simulation(make_cluster(64, seed=1), version="A")
    with pytest.raises(ValueError, match=r"Simulation.step: 1e\+15 steps of N = 64, at least .* years"):
        sim.step(10**15)
    assert sim.steps_done == 0
    assert sorted(tmp_path.iterdir()) == []


SIMULATED = {"NUMBA_ENABLE_CUDASIM": "1"}


@pytest.mark.parametrize("argv, named", [
    (["run", "--version", "C", "--n", "4096", "--steps", "200000"], ["--steps 200000", "CUDA simulator", "days"]),
    (["profile", "--versions", "AC", "--n", "4096", "--steps", "200000"], ["version C", "CUDA simulator"]),
    (["paper", "--science-version", "C", "--tidal-n", "8192", "--tidal-dt", "0.0005"],
     ["--tidal-dt", "CUDA simulator", "days"]),
])
def test_work_the_cuda_simulator_cannot_end_is_refused_at_its_pace(tmp_path, argv, named):
    """A GPU version in numba's CUDA simulator does ~1e5 interactions per second, not a GPU's
    1e12: work the least-time estimate let through there ran for weeks (found by a search:
    `check --gpu-report`, `paper --full` on C). At the simulator's pace (`SIMULATOR_RATE`) it is
    refused before anything is built; the same work on version A is a fraction of a second at
    the fastest machine's pace."""
    out = tmp_path / "plots"
    extra = PAPER_BASE + ["--out", str(out)] if argv[0] == "paper" else []
    p = launch(NBSYMPLE + argv + extra, cwd=tmp_path, env=SIMULATED)
    assert_refused(p, *named)
    assert sorted(tmp_path.iterdir()) == []
    assert work.least_seconds(4096, 200000) < 1


def test_only_gpu_versions_run_at_the_simulators_pace(monkeypatch, capsys):
    """`versions.simulated`: C, D, E (and F on a GPU node) while NUMBA_ENABLE_CUDASIM is on; the
    instruments and `paper --full`'s choice of version follow it."""
    import importlib
    from nbsymple_versions.instruments import gpu_report, mpi_timing
    from nbsymple_versions.versions import simulated
    paper_main = importlib.import_module("nbsymple_versions.paper.main")     # the module, not paper's `main`
    monkeypatch.setattr(paper_main, "_available", lambda letter: (True, ""))
    full = SimpleNamespace(science_version=None, full=True, science=True, tidal_n=None, tidal_dt=None,
                           tidal_orbits=None, tidal_precision=None)
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)
    assert not any(simulated(v) for v in LETTERS)
    assert paper_main._science_version(full) == paper_main.FULL_N_VERSIONS[0]           # a GPU's
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    assert [v for v in LETTERS if simulated(v)] == ["C", "D", "E", "F"]      # F's default node there: E
    assert simulated("F", {"node_version": "d"}) and not simulated("F", {"node_version": "B"})
    assert paper_main._science_version(full) == "B"
    assert "the CUDA simulator is not one" in capsys.readouterr().err
    for main, argv in ((mpi_timing.main, ["--n", "4096", "--min-steps", "200000", "--node-version", "D"]),
                       (gpu_report.main, ["--sizes", "131072", "--steps", "20"])):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 2 and "CUDA simulator" in capsys.readouterr().err


# ------------------------------------------------------------------ 4. the environment

@pytest.mark.parametrize("variables, argv", [
    ({"NUMBA_NUM_THREADS": ""}, ["run", "--n", "16", "--steps", "1"]),                  # the issue's
    ({"MPLBACKEND": "bogus"}, ["paper", "--no-science"]),                               # the issue's
    ({"PMI_SIZE": "abc"}, ["run", "--version", "F", "--n", "16", "--steps", "1"]),      # the issue's
    ({"NUMBA_NUM_THREADS": "0"}, ["run", "--n", "16", "--steps", "1"]),
    ({"NUMBA_OPT": "9"}, ["check", "--n", "16"]),
    ({"NUMBA_DEBUG": "yes"}, ["info"]),
    ({"NUMBA_THREADING_LAYER": "bogus"}, ["run", "--version", "B", "--n", "16", "--steps", "1"]),
    ({"OMP_NUM_THREADS": "abc"}, ["run", "--n", "16", "--steps", "1"]),
    ({"OPENBLAS_NUM_THREADS": "-2"}, ["info"]),
    ({"PMI_RANK": "2", "PMI_SIZE": "2"}, ["run", "--version", "F", "--n", "16", "--steps", "1"]),
    ({"MPLBACKEND": ""}, ["paper", "--no-science"]),
    ({"NBSYMPLE_MAX_DAYS": "nan"}, ["run", "--n", "16", "--steps", "1"]),
    ({"NBSYMPLE_MAX_DAYS": "1_0"}, ["info"]),            # a hunt: read as 10 days, as '١٠' and '１０'
    ({"NBSYMPLE_MAX_DAYS": "\u0661\u0660"}, ["info"]),
    ({"NBSYMPLE_BENCH_GRID": "huge"}, ["info"]),
    ({"NBSYMPLE_BENCH_VERSIONS": "XYZ"}, ["cpu-asm", "--target", "host"]),
    ({"NBSYMPLE_BENCH_THREADS": "all"}, ["gpu-asm"]),
    ({"BENCH_MACHINE": "../../elsewhere"}, ["info"]),
    ({"BENCH_MACHINE": "a" * 300}, ["info"]),           # a hunt: an OSError (name too long) in `make bench`
    ({"BENCH_MACHINE": "benchmarks.json"}, ["info"]),   # asv's NotADirectoryError: results/benchmarks.json/
    ({"NBSYMPLE_WARP_CACHE": "/dev/null"}, ["info"]),   # a hunt: peers' Warp rows skipped with an exception's repr
    ({"NUMBA_CACHE_DIR": "/dev/null"}, ["run", "--n", "16", "--steps", "1"]),
    ({"NUMBA_CACHE_DIR": "/dev/null/cache"}, ["check", "--n", "16"]),
    ({"MPLCONFIGDIR": "/dev/null"}, ["paper", "--no-science"]),           # matplotlib's warning, a new font cache
    ({"NUMBA_CACHE_DIR": "/proc/nbsymple-cache"}, ["info"]),   # os.access says yes to root: unchecked before
    ({"MPLCONFIGDIR": "/proc/nbsymple-mpl"}, ["paper", "--no-science"]),   # matplotlib's warning there
    ({"NUMBA_DISABLE_JIT": "1"}, ["run", "--n", "16", "--steps", "1", "--precision", "dsp"]),   # a traceback
    ({"NUMBA_CPU_NAME": "host"}, ["run", "--n", "16", "--steps", "1"]),   # LLVM's warning at every compile
    ({"NUMBA_CPU_FEATURES": "+avx2,+bogus"}, ["info"]),
    ({"NUMBA_CPU_FEATURES": "ignore"}, ["info"]),          # found by a random search: LLVM's assertion, SIGABRT
    ({"NUMBA_CPU_NAME": os.fsdecode(b"\xff")}, ["info"]),  # a hunt: bytes that are not UTF-8, llvmlite's traceback
    ({"NUMBA_CPU_FEATURES": os.fsdecode(b"+avx2,+\xff")}, ["info"]),
    ({"NUMBA_CPU_FEATURES": "+avx2, +fma"}, ["run", "--n", "16", "--steps", "1"]),
    ({"NUMBA_CPU_FEATURES": "-sse2"}, ["run", "--n", "16", "--steps", "1"]),      # a hunt: LLVM's assertion, SIGABRT
    ({"NUMBA_CPU_FEATURES": "+16bit-mode"}, ["run", "--n", "16", "--steps", "1"]),    # a hunt: SIGSEGV
    ({"OMP_WAIT_POLICY": "fast"}, ["run", "--version", "B", "--n", "16", "--steps", "1"]),   # libgomp's warning
    ({"GOMP_SPINCOUNT": "abc"}, ["info"]),
    ({"OMP_STACKSIZE": "1"}, ["run", "--version", "B", "--n", "16", "--steps", "1"]),         # "less than 16k"
    ({"OMP_PLACES": "{0:x}"}, ["check", "--n", "16"]),
    ({"MPIR_CVAR_NOLOCAL": "abc"}, ["run", "--version", "F", "--n", "16", "--steps", "1"]),   # MPI's error stack
    ({"UCX_TLS": "garbage"}, ["run", "--version", "F", "--n", "16", "--steps", "1"]),         # UCX's, then MPI's
    ({"MPIR_CVAR_CH4_NETMOD": "garbage"}, ["info"]),                                           # MPI_Init crashes
    ({"MPI4PY_RC_INITIALIZE": "false"}, ["run", "--version", "F", "--n", "16", "--steps", "1"]),   # a hunt: MPICH's
    ({"MPI4PY_RC_THREAD_LEVEL": "bogus"}, ["info"]),     # abort ("before initializing"); a warning, then the default
    ({"XDG_CONFIG_HOME": "/dev/null"}, ["paper", "--no-science"]),       # matplotlib's warning, a temporary folder
    ({"XDG_CACHE_HOME": "/dev/null/cache"}, ["info"]),
    ({"NUMBA_NUM_THREADS": "100000000"}, ["run", "--version", "B", "--n", "16", "--steps", "1"]),   # SIGSEGV
    ({"OMP_STACKSIZE": "100000G"}, ["run", "--version", "B", "--n", "16", "--steps", "1"]),         # SIGSEGV
    ({"OMP_STACKSIZE": "1" + "0" * 400}, ["run", "--n", "16", "--steps", "1"]),      # beyond the int64 libgomp reads
    ({"NBSYMPLE_BENCH_THREADS": "100000"}, ["info"]),       # numba.set_num_threads raises in every benchmark
    ({"NUMBA_CACHE_DIR": " "}, ["run", "--n", "16", "--steps", "1"]),   # a hunt: numba's cache in a folder ' ' here
    ({"MPLCONFIGDIR": "  "}, ["paper", "--no-science"]),
    ({"XDG_CACHE_HOME": " "}, ["paper", "--no-science"]),
    ({"NUMBA_CACHE_DIR": "~/numba"}, ["run", "--n", "16", "--steps", "1"]),   # a hunt: a folder '~' made here
    ({"MPLCONFIGDIR": "~/mpl"}, ["paper", "--no-science"]),
    ({"NUMBA_CACHE_DIR": "c" * 300}, ["check", "--n", "16"]),   # a hunt: a name too long, numba cached elsewhere
    ({"MPLCONFIGDIR": "m" * 300}, ["paper", "--no-science"]),    # matplotlib's warning, a temporary folder
    ({"NUMBA_NUM_THREADS": "9" * 5000}, ["info"]),   # a hunt: beyond Python's 4300 digits, int's ValueError
    ({"GOMP_STACKSIZE": "1" * 5000 + "M"}, ["info"]),   # a hunt: the stack's size read by int, its ValueError
    ({"PMI_SIZE": "2" * 19}, ["info"]),              # beyond an int64
    ({"PMI_PORT": "x", "PMI_RANK": "\u00b2"}, ["info"]),   # a hunt: '²'.isdigit(), int('²') a traceback
    ({"OPENBLAS_NUM_THREADS": "\u0663"}, ["info"]),         # a hunt: Arabic-Indic 3, which OpenBLAS's atoi reads as 0
])
def test_a_variable_set_to_garbage_is_named(tmp_path, variables, argv):
    extra = PAPER_BASE + ["--out", str(tmp_path / "plots")] if argv[0] == "paper" else []
    p = launch(NBSYMPLE + argv + extra, cwd=tmp_path, env=variables)
    assert_refused(p, sorted(variables)[-1] if len(variables) == 1 else "PMI_RANK")
    assert sorted(tmp_path.iterdir()) == []


def test_a_variables_bounds_are_where_its_readers_take_them(tmp_path, monkeypatch):
    """Each bound of a checked variable lets its last value pass and refuses the next: a launcher's
    size from 1, a machine name of 128 characters, as many benchmark threads as numba starts, Open
    MPI's rank below its size (a mutation hunt: each moved by one, or the last unchecked, passed)."""
    monkeypatch.chdir(tmp_path)                    # (no numba settings file of the suite's folder)
    cores = environment.usable_cores()
    for variables, refused in (({"PMI_SIZE": "1"}, None), ({"PMI_SIZE": "0"}, "PMI_SIZE='0' is not a whole number"),
                               ({"BENCH_MACHINE": "m" * 128}, None), ({"BENCH_MACHINE": "m" * 129}, "BENCH_MACHINE="),
                               ({"NBSYMPLE_MAX_DAYS": "1e-300"}, None),
                               ({"NBSYMPLE_MAX_DAYS": "0"}, "NBSYMPLE_MAX_DAYS='0' is not a positive number"),
                               ({"NBSYMPLE_BENCH_THREADS": str(cores)}, None),
                               ({"NBSYMPLE_BENCH_THREADS": str(cores + 1)}, "NBSYMPLE_BENCH_THREADS="),
                               ({"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2"}, None),
                               ({"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "2"},
                                "OMPI_COMM_WORLD_RANK=2 is not below OMPI_COMM_WORLD_SIZE=2")):
        found = environment.problem(variables)
        assert (found is None) if refused is None else (found or "").startswith(refused), (variables, found)


@pytest.mark.parametrize("unit, factor", [("", 1024), ("B", 1), ("b", 1), ("K", 1024), ("k", 1024), ("M", 1 << 20),
                                          ("m", 1 << 20), ("G", 1 << 30)])
def test_a_stack_size_is_read_in_libgomps_units(tmp_path, monkeypatch, unit, factor):
    """OMP_STACKSIZE in each of libgomp's units, B, K, M, G of 1024 (K where none is given): the
    largest stack all of numba's threads can have in this machine's memory passes, one unit more is
    refused (a mutation hunt: bytes for the default K, 1000 for 1024 and no upper-case B each passed)."""
    monkeypatch.chdir(tmp_path)
    memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    most = memory // (factor * environment.usable_cores())
    assert environment.problem({"OMP_STACKSIZE": f"{most}{unit}"}) is None
    found = environment.problem({"OMP_STACKSIZE": f" {most + 1} {unit}"})
    assert (found or "").startswith(f"OMP_STACKSIZE=' {most + 1} {unit}' asks a stack of "), found


def test_a_stack_size_of_as_many_digits_as_its_readers_take_is_read_as_a_size(tmp_path, monkeypatch):
    """OMP_STACKSIZE of WHOLE_DIGITS digits is read as a size (this one more than the machine's memory,
    said so); one a digit longer is refused for its digits."""
    from nbsymple_versions.core.ranks import WHOLE_DIGITS
    monkeypatch.chdir(tmp_path)
    assert "asks a stack of" in environment.problem({"OMP_STACKSIZE": "9" * WHOLE_DIGITS})
    said = environment.problem({"OMP_STACKSIZE": "9" * (WHOLE_DIGITS + 1)})
    assert f"holds a number of {WHOLE_DIGITS + 1} digits" in said, said


@pytest.mark.parametrize("variables, refused", [
    ({"OMP_THREAD_LIMIT": "1"}, "OMP_THREAD_LIMIT"), ({"OMP_DYNAMIC": " True"}, "OMP_DYNAMIC"),
    ({"OMP_THREAD_LIMIT": "1", "NUMBA_THREADING_LAYER": "omp"}, "OMP_THREAD_LIMIT"),
    ({"OMP_THREAD_LIMIT": "2"}, None), ({"OMP_DYNAMIC": "false"}, None),
    ({"OMP_THREAD_LIMIT": "1", "NUMBA_THREADING_LAYER": "workqueue"}, None),       # numba's own threads: not OpenMP's
    ({"OMP_DYNAMIC": "true", "NUMBA_THREADING_LAYER_PRIORITY": "workqueue omp tbb"}, None),
    ({"OMP_DYNAMIC": "true", "NUMBA_NUM_THREADS": "1"}, None),            # one thread: none fewer to run
    ({"OMP_THREAD_LIMIT": "1", "NUMBA_THREADING_LAYER": "threadsafe"}, "OMP_THREAD_LIMIT"),   # omp before workqueue
    ({"OMP_THREAD_LIMIT": "1", "NUMBA_THREADING_LAYER": "threadsafe",       # a hunt: threadsafe is numba's tbb, else
      "NUMBA_THREADING_LAYER_PRIORITY": "workqueue omp tbb"}, "OMP_THREAD_LIMIT"),   # omp, whatever the priority says
    ({"GOMP_CPU_AFFINITY": "0"}, "GOMP_CPU_AFFINITY"), ({"OMP_PROC_BIND": "primary"}, "OMP_PROC_BIND"),
    ({"OMP_PLACES": "{0}", "OMP_PROC_BIND": "close"}, "OMP_PLACES"),          # both named: libgomp binds by both
    ({"OMP_PROC_BIND": "primary", "NUMBA_THREADING_LAYER": "workqueue"}, None),
    ({"OMP_PROC_BIND": "false", "OMP_PLACES": "{0}"}, None),                   # places, no binding
])
def test_openmp_settings_that_run_fewer_threads_than_numba_reports_are_named(tmp_path, variables, refused):
    """A hunt: under OMP_THREAD_LIMIT=1 or OMP_DYNAMIC=true libgomp ran one of numba's two threads,
    and under OMP_PROC_BIND=primary or GOMP_CPU_AFFINITY=0 bound both to one CPU, while version B
    said "threads: 2" (its times recorded as two threads' times)."""
    p = launch(NBSYMPLE + ["info"], cwd=tmp_path, env={"NUMBA_NUM_THREADS": "2", **variables})
    if refused is None:
        assert p.returncode == 0 and p.stderr == "", p.stderr
    else:
        assert_refused(p, refused)


def test_a_binding_to_fewer_cpus_names_them_and_the_threads_that_fit(tmp_path, monkeypatch):
    """A binding of numba's two threads to CPU 0 names the CPU and the threads that fit on it (a
    mutation hunt: the threads numba starts given as the remedy passed)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GOMP_CPU_AFFINITY", "0")                  # (libgomp's child reads the process's own)
    found = environment.problem({"GOMP_CPU_AFFINITY": "0", "NUMBA_NUM_THREADS": "2"})
    assert found.startswith("GOMP_CPU_AFFINITY='0' binds the 2 threads numba starts and reports (version B's) to "
                            "1 CPU (0), where they would share it"), found
    assert found.endswith("unset it, bind to at least 2 CPUs, or set NUMBA_NUM_THREADS=1"), found


@pytest.mark.parametrize("variables", [{"MPI_LOCALNRANKS": "\u00b2"}, {"PMI_FD": "\u2460"}, {"PMI_FD": "7" * 5000}])
def test_a_launcher_variable_of_digits_int_cannot_read_is_no_traceback(tmp_path, variables):
    """A launcher's variable that is not a number in ASCII digits ('²' and '①' pass str.isdigit,
    not int) or of more digits than an int64 is read as not set, as any other text there: it ended
    every command in a ValueError (int reads at most 4300 digits)."""
    p = launch(NBSYMPLE + ["info"], cwd=tmp_path, env=variables)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr


def test_a_signal_the_process_was_started_blocking_still_stops_it(tmp_path):
    """A hunt: started with SIGTERM blocked (a signal mask a launcher's thread leaked across exec),
    a checkpointed run never saw the batch system's SIGTERM and stepped on to its SIGKILL. The
    signal, sent here before the command began, is answered as the command starts."""
    environ = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})     # inherited by the child
    try:
        p = subprocess.Popen(NBSYMPLE + ["run", "--n", "16", "--steps", "50", "--checkpoint", "c.ck"], cwd=tmp_path,
                             env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=HANG_GUARD)
    assert p.returncode == 143 and err == "nbsymple run: stopped by SIGTERM\n" and out == "", (p.returncode, err)


def test_a_child_that_fails_is_seen_to_fail_where_the_process_was_started_ignoring_sigchld(tmp_path):
    """A hunt: started with SIGCHLD ignored (a launcher's or a daemon's SIG_IGN, kept across exec),
    the kernel reaped every child at once and each read as status 0: the check of MPI's start, whose
    child crashes on this setting, passed it."""
    p = launch(NBSYMPLE + ["info"], cwd=tmp_path, env={"MPIR_CVAR_CH4_NETMOD": "garbage"},
               preexec_fn=lambda: signal.signal(signal.SIGCHLD, signal.SIG_IGN))
    assert_refused(p, "MPIR_CVAR_CH4_NETMOD")


@pytest.mark.parametrize("argv, variables", [
    (PAPER + ["--no-science"], {"MPLBACKEND": "bogus"}),
    ([sys.executable, "-m", "tools.tracking", "select"], {"NBSYMPLE_BENCH_GRID": "huge"}),
    ([sys.executable, "-m", "tools.gate", "--help"], {"NUMBA_NUM_THREADS": "many"}),
    ([sys.executable, "-m", "tools.migrate", "--help"], {"NBSYMPLE_BENCH_VERSIONS": ""}),
    ([sys.executable, "-m", "nbsymple_versions.instruments.peers", "--help"], {"NUMBA_OPT": "9"}),
    ([sys.executable, "-m", "nbsymple_versions.instruments.mpi_model", "--help"], {"OMP_NUM_THREADS": "abc"}),
    ([sys.executable, "-m", "nbsymple_versions.instruments.gpu_report", "--help"], {"NUMBA_DEBUG": "yes"}),
    ([sys.executable, "-m", "nbsymple_versions.instruments.mpi_timing", "--help"], {"PMI_SIZE": "abc"}),
])
def test_every_entry_point_checks_the_environment(tmp_path, argv, variables):
    p = launch(argv, cwd=REPO, env=variables)
    assert_refused(p, *variables)


OPENMP_BINDS_ITS_LOADER = """
import os
from nbsymple_versions import environment
from nbsymple_versions.instruments import provenance
cpus = os.sched_getaffinity(0)
assert environment.problem() is None
with open("/proc/self/maps") as maps:
    assert "libgomp" not in maps.read(), "the check loaded libgomp here"
d = provenance.describe(gpu=False)
assert d["threading_layer"] == "omp", d["threading_layer"]
assert os.sched_getaffinity(0) == cpus and d["usable_cores"] == len(cpus), (os.sched_getaffinity(0), cpus)
"""


def test_openmp_binding_leaves_the_commands_own_cpus_as_they_were(tmp_path):
    """A hunt: libgomp binds the thread that loads it to its first place (OMP_PROC_BIND,
    OMP_PLACES): loaded by the start-up check, or by `provenance.threading` naming numba's layer,
    it left the process on one CPU, so the machine was named "1of2cores" and the asv that
    `make bench` starts inherited that CPU (B timed there with one thread). The check asks libgomp
    in a child; `threading` gives the process its CPUs back."""
    p = launch([sys.executable, "-c", OPENMP_BINDS_ITS_LOADER], cwd=tmp_path,
               env={"OMP_PROC_BIND": "true", "OMP_PLACES": "cores", "NUMBA_THREADING_LAYER": "omp"})
    assert p.returncode == 0, p.stderr


def test_openmp_settings_libgomp_can_use_pass_and_what_it_shows_on_request_is_shown(tmp_path):
    """Valid OpenMP settings (a passive wait, a spin count, a stack size) run version B; what
    libgomp prints when asked (OMP_DISPLAY_ENV) reaches stderr as it would without the check."""
    p = launch(NBSYMPLE + ["run", "--version", "B", "--n", "16", "--steps", "1"], cwd=tmp_path,
               env={"OMP_WAIT_POLICY": "passive", "GOMP_SPINCOUNT": "10k", "OMP_STACKSIZE": "4M",
                    "OMP_DISPLAY_ENV": "true"})
    assert p.returncode == 0, p.stderr
    assert "OPENMP DISPLAY ENVIRONMENT BEGIN" in p.stderr and "OMP_STACKSIZE = '4194304'" in p.stderr, p.stderr


def test_matplotlib_takes_mplconfigdir_before_the_xdg_folders(tmp_path):
    """Where MPLCONFIGDIR names a writable folder, matplotlib never looks under XDG_CONFIG_HOME,
    XDG_CACHE_HOME or the home folder: they are not checked."""
    (tmp_path / "mpl").mkdir()
    p = launch(NBSYMPLE + ["paper", "--no-science", *PAPER_BASE, "--out", str(tmp_path / "plots")], cwd=tmp_path,
               env={"MPLCONFIGDIR": str(tmp_path / "mpl"), "XDG_CONFIG_HOME": "/dev/null",
                    "XDG_CACHE_HOME": "/dev/null", "HOME": "/dev/null"})
    assert p.returncode == 0 and "matplotlib" not in p.stderr.replace(str(tmp_path), "").lower(), p.stderr
    assert (tmp_path / "plots" / "speedup.png").is_file()


@pytest.mark.parametrize("text, named", [
    ("disable_jit: 1\n", ["NUMBA_DISABLE_JIT", "disable_jit in .numba_config.yaml"]),   # dsp: numba's traceback
    ("num_threads: 0\n", ["NUMBA_NUM_THREADS", "num_threads in .numba_config.yaml"]),
    ("num_threads: [\n", [".numba_config.yaml", "is not YAML"]),                        # yaml's traceback
    ("- 1\n", [".numba_config.yaml", "not a mapping"]),
    ("opt: 3\n", ["NUMBA_OPT", "a YAML int", "opt: '3'"]),     # a hunt: refused as '3', which numba reads
])
def test_numbas_settings_file_in_the_current_folder_is_checked_as_its_variables(tmp_path, text, named):
    """A hunt: numba reads `.numba_config.yaml` in the current folder as NUMBA_* variables, which
    the start-up check did not: `disable_jit: 1` there ended `run --precision dsp` in numba's
    NotImplementedError, YAML cut short every command in yaml's traceback."""
    (tmp_path / ".numba_config.yaml").write_text(text)
    p = launch(NBSYMPLE + ["run", "--n", "16", "--steps", "1", "--precision", "dsp"], cwd=tmp_path)
    assert_refused(p, *named)


@pytest.mark.parametrize("text", ["threading_layer: workqueue\n", "num_threads: 1\n"])
def test_a_binding_that_numbas_settings_file_makes_fit_passes(tmp_path, text):
    """A hunt: the check of OpenMP's binding read numba's threads and layer from the variables
    alone: OMP_PROC_BIND=primary was refused as two threads on one CPU where numba's settings file
    starts one thread, or numba's own threads (workqueue), as the same variables pass."""
    (tmp_path / ".numba_config.yaml").write_text(text)
    p = launch(NBSYMPLE + ["info"], cwd=tmp_path, env={"OMP_PROC_BIND": "primary"})
    assert p.returncode == 0 and p.stderr == "", p.stderr


@pytest.mark.parametrize("kind", ["not UTF-8", "FIFO", "device"])
def test_a_matplotlib_settings_file_that_cannot_be_read_is_named_where_it_draws(tmp_path, kind):
    """A hunt: matplotlib reads its settings file as it is imported (a matplotlibrc in the current
    folder first, then MATPLOTLIBRC's, MPLCONFIGDIR's...): one not UTF-8 ended `paper` in a
    UnicodeDecodeError traceback, a FIFO or MATPLOTLIBRC=/dev/zero hung it for ever."""
    environ = {"MATPLOTLIBRC": "/dev/zero"} if kind == "device" else {}
    if kind == "not UTF-8":
        (tmp_path / "matplotlibrc").write_bytes(b"lines.linewidth: 2 # \xff\n")
    elif kind == "FIFO":
        os.mkfifo(tmp_path / "matplotlibrc")
    p = launch(PAPER + ["--no-science", *PAPER_BASE, "--out", str(tmp_path / "plots")], cwd=tmp_path, env=environ)
    assert_refused(p, "MATPLOTLIBRC" if environ else "matplotlibrc in the current folder")
    assert not (tmp_path / "plots").exists()


@pytest.mark.parametrize("where, make, said", [
    ("config", lambda f: os.mkfifo(f / "stylelib" / "x.mplstyle"), "the style "),
    ("config", lambda f: (f / "stylelib" / "y.mplstyle").write_bytes(b"lines.linewidth: \xff\xfe\n"),
     "is not UTF-8 text"),
    ("cache", lambda f: os.mkfifo(f / "fontlist-v390.json"), "font cache"),
    ("cache", lambda f: (f / "fontlist-v390.json").mkdir(), "is a folder"),
])
def test_a_file_matplotlib_reads_as_it_starts_that_cannot_be_read_is_named(tmp_path, monkeypatch, where, make, said):
    """A hunt: a FIFO for a style of matplotlib's stylelib or for its font cache hung `paper` and
    `mpi_model --plot` for ever, a style not UTF-8 ended them in a traceback, a folder at the
    font cache's name printed matplotlib's warning: in MPLCONFIGDIR, or matplotlib/ under the XDG
    folders."""
    monkeypatch.chdir(tmp_path)
    for environ, folder in (({"MPLCONFIGDIR": str(tmp_path / "mpl")}, tmp_path / "mpl"),
                            ({"XDG_CONFIG_HOME": str(tmp_path / "c"), "XDG_CACHE_HOME": str(tmp_path / "k")},
                             tmp_path / ("c" if where == "config" else "k") / "matplotlib")):
        (folder / "stylelib").mkdir(parents=True)
        assert environment.problem(environ, draws=True) is None
        make(folder)
        found = environment.problem(environ, draws=True) or ""
        assert said in found and str(folder) in found, found


def test_matplotlibs_words_on_the_users_settings_are_left_out(tmp_path):
    """A hunt: a bad value or key in MPLCONFIGDIR's matplotlibrc or a style of its stylelib
    printed matplotlib's warnings (five lines each), which the figures leave out anyway."""
    (tmp_path / "mpl" / "stylelib").mkdir(parents=True)
    (tmp_path / "mpl" / "matplotlibrc").write_text("lines.linewidth: abc\nnot.a.key: 1\n")
    (tmp_path / "mpl" / "stylelib" / "z.mplstyle").write_text("lines.linewidth: abc\nfoo.bar: 1\n")
    p = launch([sys.executable, "-m", "nbsymple_versions.instruments.mpi_model", "--plot", str(tmp_path / "m.png"),
                "--rate", "1e9"], cwd=tmp_path, env={"MPLCONFIGDIR": str(tmp_path / "mpl")})
    assert p.returncode == 0 and p.stderr == "" and (tmp_path / "m.png").stat().st_size > 0, p.stderr


def test_a_matplotlib_settings_file_larger_than_any_is_named(tmp_path, monkeypatch):
    """A matplotlibrc of MATPLOTLIBRC_BYTES is read; one a byte larger is named for its size (a
    mutation hunt: with the check of its size gone, every test passed)."""
    monkeypatch.chdir(tmp_path)
    rc = tmp_path / "matplotlibrc"
    for size in (environment.MATPLOTLIBRC_BYTES, environment.MATPLOTLIBRC_BYTES + 1):
        rc.write_text("#" * (size - 1) + "\n")
        found = environment.problem({"HOME": str(tmp_path)}, draws=True)
        if size == environment.MATPLOTLIBRC_BYTES:
            assert found is None, found
        else:
            assert found is not None and found.startswith("the file matplotlibrc in the current folder "
                                                          "('matplotlibrc'), which matplotlib reads") and \
                "larger than any settings file" in found, found


def test_the_figures_leave_out_the_users_matplotlib_settings(tmp_path, monkeypatch):
    """A hunt: a matplotlibrc in the current folder (or MATPLOTLIBRC's, MPLCONFIGDIR's) with
    `text.usetex: True` ended `nbsymple paper` in matplotlib's RuntimeError where LaTeX is not
    installed, and changed the figures where it is: `paper.style.style` and `mpi_model.plot` draw
    with matplotlib's own defaults."""
    import matplotlib
    import matplotlib.pyplot as plt
    from nbsymple_versions.instruments import mpi_model
    from nbsymple_versions.paper import style
    users = {"text.usetex": True, "axes.facecolor": "black"}
    seen = []
    subplots = plt.subplots
    monkeypatch.setattr(plt, "subplots", lambda *a, **kw: (seen.append(matplotlib.rcParams["text.usetex"]),
                                                           subplots(*a, **kw))[1])
    with matplotlib.rc_context(users):
        with style.style():
            assert not matplotlib.rcParams["text.usetex"] and matplotlib.rcParams["axes.facecolor"] == "white"
            assert matplotlib.rcParams["savefig.dpi"] == style.DPI
        mpi_model.plot(tmp_path / "m.png", [], 1e9)
    assert seen == [False] and (tmp_path / "m.png").stat().st_size > 0


@pytest.mark.parametrize("home, argv", [
    ("/dev/null", NBSYMPLE + ["paper", "--no-science"]),     # found by a search: matplotlib's warning
    ("file.txt", PAPER + ["--no-science"]),
    ("/proc/nbsymple-home", NBSYMPLE + ["paper", "--no-science"]),
    ("", PAPER + ["--no-science"]),                # matplotlib would take / (and make /.config as root)
    (" ", PAPER + ["--no-science"]),               # a hunt: said to be empty; matplotlib makes ' /.config' here
    ("~", PAPER + ["--no-science"]),               # a hunt: matplotlib makes '~/.config' here
    ("file.txt", [sys.executable, "-m", "nbsymple_versions.instruments.mpi_model", "--rate", "1e9", "--plot", "m.png"]),
])
def test_a_home_folder_matplotlib_cannot_use_is_named_where_it_draws(tmp_path, monkeypatch, home, argv):
    """Where neither MPLCONFIGDIR nor the XDG variables name a folder, matplotlib keeps its
    settings and cache under the home folder: a HOME it cannot write under is named by the
    commands that draw, before matplotlib warns and falls back to a temporary folder. The others
    never import matplotlib, and run."""
    for name in ("MPLCONFIGDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "file.txt").write_text("not a folder\n")
    extra = PAPER_BASE + ["--out", str(tmp_path / "plots")] if "--no-science" in argv else []
    p = launch(argv + extra, cwd=tmp_path, env={"HOME": home})
    assert_refused(p, "HOME", "MPLCONFIGDIR")
    assert sorted(tmp_path.iterdir()) == [tmp_path / "file.txt"]
    p = launch(NBSYMPLE + ["run", "--n", "16", "--steps", "1"], cwd=tmp_path, env={"HOME": home})
    assert p.returncode == 0 and "energy error" in p.stdout and p.stderr == "", p.stderr


def test_a_folder_variable_that_is_no_folder_says_what_it_is(tmp_path):
    """MPLCONFIGDIR (or NUMBA_CACHE_DIR, ...) naming a file, a dangling link or a link loop said "it
    is not a folder", on its path too (a hunt): what it is, as `paper --out` says it."""
    (tmp_path / "file").write_text("x\n")
    (tmp_path / "dangling").symlink_to("gone")
    (tmp_path / "loop").symlink_to("loop")
    for name, said in (("file", "it is a file"), ("dangling", "it is a dangling symbolic link to gone"),
                       ("loop", "it is a symbolic-link loop"), ("dangling/sub", f"{tmp_path / 'dangling'} is a "
                                                                               f"dangling symbolic link to gone")):
        found = environment.problem({"HOME": str(tmp_path), "MPLCONFIGDIR": str(tmp_path / name)}, draws=True)
        assert f"({said}, not a folder)" in found, found


@pytest.mark.parametrize("name", ["MPLCONFIGDIR", "NUMBA_CACHE_DIR"])
def test_a_folder_variable_too_long_for_the_files_kept_in_it_is_refused(tmp_path, name):
    """A folder of 4063 bytes (from /) passed: numba cached nothing, in silence, and matplotlib warned
    "Could not save font_manager cache [Errno 36] File name too long" at each start (a hunt)."""
    from nbsymple_versions.arguments import PATH_MAX
    start = len(os.fsencode(str(tmp_path))) + 1
    folder = tmp_path / "/".join(["d" * 200] * ((PATH_MAX - 33 - start) // 201))
    found = environment.problem({"HOME": str(tmp_path), name: str(folder)}, draws=True)
    assert found is not None and f"its path is {len(os.fsencode(str(folder)))} bytes long" in found, found
    from nbsymple_versions.arguments import FOLDER_MARGIN
    fits = str(folder)[:PATH_MAX - FOLDER_MARGIN - 1] + "x"
    assert environment.problem({"HOME": str(tmp_path), name: fits}, draws=True) is None


def test_the_home_folder_is_checked_only_where_matplotlib_would_use_it(tmp_path, monkeypatch):
    """XDG folders (each for its own kind) or MPLCONFIGDIR take the home folder's place; where
    HOME is not set, the account's home folder is checked, and named as such."""
    base = {"HOME": "/dev/null"}
    assert environment.problem(dict(base, MPLCONFIGDIR=str(tmp_path)), draws=True) is None
    assert environment.problem(dict(base, XDG_CONFIG_HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path)),
                               draws=True) is None
    found = environment.problem(dict(base, XDG_CONFIG_HOME=str(tmp_path)), draws=True)
    assert found.startswith("HOME='/dev/null' is not a folder under which matplotlib can keep its cache"), found
    assert environment.problem({"HOME": str(tmp_path)}, draws=True) is None
    assert environment.problem(base) is None                    # a command that never draws
    import pwd
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: SimpleNamespace(pw_dir="/dev/null"))
    found = environment.problem({}, draws=True)
    assert found.startswith("HOME is not set, and the home folder '/dev/null' is not a folder"), found


def test_a_threading_layer_numba_cannot_load_is_named_and_one_it_can_runs(tmp_path):
    """NUMBA_THREADING_LAYER=tbb where Intel TBB is not installed (numba's traceback from `info`
    before, found by a search): one sentence naming the layers that load here. Layers that load,
    in any case, and an order of preference run version B."""
    try:
        import numba.np.ufunc.tbbpool  # noqa: F401
        tbb = True
    except ImportError:
        tbb = False
    for layer in ("tbb", "safe"):
        p = launch(NBSYMPLE + ["info"], cwd=tmp_path, env={"NUMBA_THREADING_LAYER": layer})
        if tbb:
            assert p.returncode == 0, p.stderr
        else:
            assert_refused(p, f"NUMBA_THREADING_LAYER='{layer}'", "Intel TBB", "workqueue")
    run = NBSYMPLE + ["run", "--version", "B", "--n", "16", "--steps", "1"]
    p = launch(run, cwd=tmp_path, env={"NUMBA_THREADING_LAYER": "OMP",
                                       "NUMBA_THREADING_LAYER_PRIORITY": "workqueue omp tbb"})
    assert p.returncode == 0 and "energy error" in p.stdout, p.stderr
    p = launch(run, cwd=tmp_path, env={"NUMBA_THREADING_LAYER_PRIORITY": "omp tbb"})     # numba's own words before
    assert_refused(p, "NUMBA_THREADING_LAYER_PRIORITY='omp tbb'", "tbb, omp, workqueue")
    assert sorted(tmp_path.iterdir()) == []


def test_mpich_settings_it_can_use_pass_and_one_it_cannot_is_refused_once_under_mpiexec(tmp_path):
    """Valid MPICH settings run F; a value MPICH cannot use, under mpiexec, is one sentence from
    rank 0 and status 2 (each rank asks MPICH alone, never joining the job to do it)."""
    run = NBSYMPLE + ["run", "--version", "F", "--n", "16", "--steps", "1"]
    p = launch(run, cwd=tmp_path, env={"MPIR_CVAR_NOLOCAL": "1", "MPICH_ASYNC_PROGRESS": "0"})
    assert p.returncode == 0 and "energy error" in p.stdout, p.stderr
    mpiexec = str(Path(sys.executable).with_name("mpiexec"))
    p = launch([mpiexec, "-n", "2", *run], cwd=tmp_path, env={"MPIR_CVAR_NOLOCAL": "abc"})
    assert_refused(p, "MPIR_CVAR_NOLOCAL='abc'", "MPICH cannot start")
    assert p.stderr.count("nbsymple run:") == 1, p.stderr
    assert sorted(tmp_path.iterdir()) == []


def test_an_mpi_that_cannot_start_at_all_is_not_blamed_on_the_settings(tmp_path, monkeypatch):
    """Where MPI fails to start without the user's MPICH variables too (a broken install), they
    are not named: version F says what is wrong when it starts."""
    fake = tmp_path / "mpi4py"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "MPI.py").write_text("import sys\nsys.exit(15)\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("MPIR_CVAR_NOLOCAL", "abc")
    assert environment._mpi_problem(["MPIR_CVAR_NOLOCAL"]) is None
    (fake / "MPI.py").write_text("import os, sys, types\nCOMM_WORLD = types.SimpleNamespace(Get_size=lambda: 1)\n"
                                 "if os.environ.get('MPIR_CVAR_NOLOCAL'):\n    sys.exit(15)\n")
    assert "MPIR_CVAR_NOLOCAL='abc': MPICH cannot start" in environment._mpi_problem(["MPIR_CVAR_NOLOCAL"])


# LLVM's reading of two CPUs' features, for the checks of the code NUMBA_CPU_* make numba compile
AVX512_HOST = {**dict.fromkeys(environment.ISA_PROBES, True), "fma4": False, "xop": False}     # a Zen 4's
AVX2_HOST = {**AVX512_HOST, "avx512f": False}                                                 # a Zen 3's


def test_llvm_is_asked_which_cpus_and_features_it_knows():
    """What the check of NUMBA_CPU_NAME and NUMBA_CPU_FEATURES accepts: the names numba's users
    give (the fixed targets of `nbsymple cpu-asm`, generic) and known features; a name or a
    feature LLVM would ignore is named."""
    for name, features in (("znver3", ""), ("haswell", "+avx512f"), ("skylake-avx512", ""), ("generic", ""),
                           ("", "+avx2,+fma"), ("znver4", None), (None, "-avx512f")):
        assert environment._llvm_cpu_problem(name, features, AVX512_HOST) is None, (name, features)
    assert "NUMBA_CPU_NAME='zen9'" in environment._llvm_cpu_problem("zen9", "")
    assert "'+fast'" in environment._llvm_cpu_problem("znver3", "+avx2,+fast")
    assert "' +fma', which is not +FEATURE" in environment._llvm_cpu_problem("", "+avx2, +fma")


def test_code_the_cpu_cannot_run_is_refused():
    """A hunt: NUMBA_CPU_NAME=skylake-avx512 NUMBA_CPU_FEATURES="" on an AVX2 machine, and
    NUMBA_CPU_FEATURES="" alone on a virtual machine hiding its Zen 4's AVX-512, ended by SIGILL
    with nothing said; -sse2 in LLVM's assertion. Each probe finds its feature in a CPU that has
    it, where this one lacks it alone, and not in x86-64's baseline."""
    for name, features in (("znver3", ""), ("haswell", ""), ("x86-64", ""), (None, "-avx512f"), ("znver4", None),
                           ("skylake-avx512", "-avx512f"), ("znver3", "+avx2,+prefer-128-bit")):
        assert environment._llvm_cpu_problem(name, features, AVX2_HOST) is None, (name, features)
    for name, features, said in (("skylake-avx512", "", "avx512f among them"), ("znver4", "", "avx512f among them"),
                                 ("bdver2", "", "fma4 among them"), (None, "+avx512f", "asks for avx512f"),
                                 ("haswell", "+avx2,+avx512f", "asks for avx512f"), (None, "-sse2", "removes sse2"),
                                 (None, "+fma,-x87", "removes x87"), ("x86-64", "+soft-float", "asks for soft-float")):
        assert said in (environment._llvm_cpu_problem(name, features, AVX2_HOST) or ""), (name, features)
    owner = {"avx512f": "znver4", "fma4": "bdver2", "xop": "bdver2"}
    for feature in environment.ISA_PROBES:
        host = {**AVX512_HOST, "fma4": True, "xop": True, feature: False}
        found = environment._llvm_cpu_problem(owner.get(feature, "haswell"), "", host) or ""
        assert f"{feature} among them" in found, (feature, found)
        assert environment._llvm_cpu_problem("x86-64", "", host) is None, feature


def test_a_cpu_setting_whose_code_this_machine_cannot_run_is_named(tmp_path):
    """End to end on this machine: a feature it lacks, asked for by name or brought by a CPU's
    own features, is refused before any code runs (the run ended by SIGILL before)."""
    import llvmlite.binding as llvm
    host = llvm.get_host_cpu_features()
    lacking = next(f for f in ("fma4", "avx512f", "egpr") if not host.get(f))    # no CPU has all three
    cpu = {"fma4": "bdver2", "avx512f": "skylake-avx512", "egpr": "diamondrapids"}[lacking]
    for variables in ({"NUMBA_CPU_FEATURES": f"+{lacking}"}, {"NUMBA_CPU_NAME": cpu, "NUMBA_CPU_FEATURES": ""}):
        p = launch(NBSYMPLE + ["run", "--n", "16", "--steps", "1"], cwd=tmp_path, env=variables)
        assert_refused(p, "NUMBA_CPU_FEATURES", lacking, "SIGILL")
    assert sorted(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "NBSYMPLE_MAX_DAYS", "PMI_RANK"])
def test_a_variable_of_blanks_alone_is_said_to_be_empty(tmp_path, monkeypatch, name):
    """A checked variable set to blanks alone is said to be set but empty, with what it should hold,
    not shown as a value (a mutation hunt: with that check gone, every test passed)."""
    monkeypatch.chdir(tmp_path)
    found = environment.problem({name: " "})
    assert (found or "").startswith(f"{name} is set but empty; unset it or set it to "), found


def test_the_environment_tables_match_what_they_describe():
    sys.path.insert(0, str(REPO))
    try:
        from benchmarks.grid import GRIDS
    finally:
        sys.path.remove(str(REPO))
    assert environment.BENCH_GRIDS == tuple(GRIDS) and environment.VERSION_LETTERS == "".join(LETTERS)
    assert environment.problem({}) is None
    assert environment.problem({"NBSYMPLE_BENCH_GRID": "Smoke", "OMP_NUM_THREADS": "4,2", "PMI_RANK": "1",
                                "PMI_SIZE": "2", "NBSYMPLE_MAX_DAYS": "0.5"}) is None



# Python's own switches, as a user's environment may set them: -OO drops every docstring (each
# command's --help took its description from its module's: an AttributeError traceback, found by
# hand), -X dev and -W error turn what a run leaves unclosed or deprecated into output or errors
PYTHONS_SWITCHES = {"PYTHONOPTIMIZE": "2", "PYTHONDEVMODE": "1", "PYTHONWARNINGS": "error"}
EVERY_HELP = """
import runpy, sys
for module in sys.argv[1:]:
    sys.argv = [module, "--help"]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as e:
        assert e.code == 0, (module, e.code)
    else:
        raise AssertionError(module + ": --help did not exit")
"""
COMMAND_LINES = ("nbsymple_versions.cli", "nbsymple_versions.paper", "nbsymple_versions.instruments.peers",
                 "nbsymple_versions.instruments.mpi_model", "nbsymple_versions.instruments.mpi_timing",
                 "nbsymple_versions.instruments.gpu_report", "tools.tracking", "tools.migrate", "tools.gate")
# (each before any that imports it: runpy warns of running a module already imported)


def test_pythons_own_switches_leave_every_command_working(tmp_path):
    """Under -OO, -X dev and -W error at once: every command line's --help (status 0, its usage),
    the dashboard check's usage, and a run checkpointed and resumed, with nothing on stderr."""
    p = launch([sys.executable, "-c", EVERY_HELP, *COMMAND_LINES], cwd=tmp_path, env=PYTHONS_SWITCHES)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert p.stdout.count("usage: ") >= len(COMMAND_LINES), p.stdout
    p = launch([sys.executable, str(REPO / "tools" / "dashboard" / "screenshot.py")], env=PYTHONS_SWITCHES)
    assert p.returncode == 2 and p.stderr.startswith("usage: python tools/dashboard/screenshot.py"), p.stderr
    for more in (["--n", "16", "--steps", "2", "--checkpoint", "ck"], ["--resume", "ck", "--steps", "4"]):
        p = launch(NBSYMPLE + ["run", *more], cwd=tmp_path, env=PYTHONS_SWITCHES)
        assert p.returncode == 0 and p.stderr == "" and "checkpoint ck (step" in p.stdout, p.stderr
    assert load(tmp_path / "ck")[1]["steps_done"] == 4


ENTRY_POINTS = [NBSYMPLE + ["run", "--n", "16", "--steps", "1"], NBSYMPLE + ["paper", "--no-science", *PAPER_BASE],
                NBSYMPLE + ["check", "--n", "16"], PAPER + ["--no-science"],
                [sys.executable, "-m", "nbsymple_versions.instruments.peers", "--n", "64", "--only", "A"],
                [sys.executable, "-m", "tools.gate", "--help"]]


@pytest.mark.parametrize("argv", ENTRY_POINTS, ids=lambda argv: " ".join(Path(a).name for a in argv[1:4]))
def test_a_current_folder_that_no_longer_exists_is_named(tmp_path, argv):
    """A shell left in a folder that was then removed (found by hand: `paper`, `check` and
    `peers` ended in a FileNotFoundError from `os.path.abspath`): one sentence, status 2, from
    every entry point (`environment.process_problem`)."""
    gone = tmp_path / "gone"
    gone.mkdir()
    p = launch(["sh", "-c", 'cd "$0" && rmdir "$0" && exec "$@"', str(gone), *argv])
    assert_refused(p, "the current folder no longer exists")
    assert sorted(tmp_path.iterdir()) == []


def _limited(which: str, soft: int, hard: int):
    """A child's `preexec_fn` setting resource limit RLIMIT_`which` to (soft, hard)."""
    import resource
    return lambda: resource.setrlimit(getattr(resource, f"RLIMIT_{which}"), (soft, hard))


LIMITS = {"NOFILE": ("-n", environment.OPEN_FILES, 1, 16), "AS": ("-v", environment.ADDRESS_SPACE, 1024, 800 << 20),
          "DATA": ("-d", environment.DATA_MEMORY, 1024, 200 << 20),
          "FSIZE": ("-f", environment.FILE_SIZE, 1024, 100 << 10),
          "STACK": ("-s", environment.STACK, 1024, 128 << 10)}


@pytest.mark.parametrize("which", sorted(LIMITS))
@pytest.mark.parametrize("argv", ENTRY_POINTS, ids=lambda argv: " ".join(Path(a).name for a in argv[1:4]))
def test_a_limit_below_what_numba_mpi_and_matplotlib_need_is_named(tmp_path, argv, which):
    """Found by hand: under `ulimit -n 16` `check`'s MPI start aborted with MPICH's and UCX's
    error stack, and `paper` and `peers` ended in an OSError (EMFILE) at 10 or fewer; under
    `ulimit -v 600000` `paper` ended in a MemoryError, and at 300000 numba's library could not
    be loaded (`nbsymple run`); under `ulimit -d 200000` `paper` and `run` blamed the machine's
    free memory (22 GB free), at 100000 an import ended in a MemoryError and at 50000 OpenBLAS
    aborted; under `ulimit -f 4000` F's start on 4 ranks aborted with MPI's error stack (MPICH's
    shared memory is a file of about 1 MB a rank) and at 10 numba's cache ended in an OSError
    (EFBIG) traceback; under `ulimit -s 128` F's ranks crashed in MPI's start (SIGSEGV, mpiexec's
    "BAD TERMINATION" banner). Now one sentence, status 2, saying how to raise the limit: with
    `ulimit` where the hard limit allows, else from another shell."""
    option, least, unit, low = LIMITS[which]
    p = launch(argv, cwd=tmp_path, preexec_fn=_limited(which, low, low))
    assert_refused(p, f"ulimit {option} {low // unit}", "its hard limit is", "too")
    p = launch(argv, cwd=tmp_path, preexec_fn=_limited(which, least - unit, 10 * least))
    assert_refused(p, f"ulimit {option} {least // unit - 1}", f"raise it, e.g. ulimit {option} {10 * least // unit}")
    assert sorted(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv", ENTRY_POINTS, ids=lambda argv: " ".join(Path(a).name for a in argv[1:4]))
def test_a_umask_that_takes_the_owners_rights_is_named(tmp_path, argv):
    """Found by hand as a user other than root under `umask 0777`: a run wrote its checkpoint and
    numba's cache folder with mode 000, and the next run blamed NUMBA_CACHE_DIR ("cannot be
    written"). Now one sentence, status 2, naming the umask and the rights it takes; a umask
    that takes only others' rights (077) is no problem."""
    p = launch(argv, cwd=tmp_path, preexec_fn=lambda: os.umask(0o577))
    assert_refused(p, "umask 0577", "right to read and enter it", "umask 022")
    assert sorted(tmp_path.iterdir()) == []
    mask = os.umask(0o077)
    try:
        assert environment.process_problem() is None
    finally:
        os.umask(mask)


def test_each_right_of_the_owner_a_umask_takes_is_named():
    """Each of the owner's rights a umask takes, alone or all three, is named; those of the group
    and others are no problem (a mutation hunt: a umask taking the right to write alone passed)."""
    for taken, rights in ((0o200, "write"), (0o400, "read"), (0o100, "enter"), (0o700, "read, write and enter"),
                          (0o077, None), (0o022, None)):
        mask = os.umask(taken)
        try:
            found = environment.process_problem()
        finally:
            os.umask(mask)
        if rights is None:
            assert found is None, (oct(taken), found)
        else:
            assert f"umask {taken:04o} would write" in found and f"owner's right to {rights} it," in found, found


def test_a_hard_limit_at_what_nbsymple_asks_for_is_raised_to(monkeypatch):
    """A soft limit below OPEN_FILES under a hard limit of OPEN_FILES can be raised in this shell;
    one below it too cannot (a mutation hunt: a hard limit of just enough said to start elsewhere)."""
    import resource
    least, limits = environment.OPEN_FILES, resource.getrlimit
    for hard, said in ((least, f"raise it, e.g. ulimit -n {least}"),
                       (least - 1, f"its hard limit is {least - 1} too: start the command from a shell without "
                                   f"that limit")):
        monkeypatch.setattr(resource, "getrlimit", lambda which, hard=hard: (least - 2, hard)
                            if which == resource.RLIMIT_NOFILE else limits(which))
        found = environment.process_problem()
        assert found is not None and found.endswith(said) and f"(ulimit -n {least - 2})" in found, found


def test_the_file_size_a_rank_needs_grows_with_the_ranks_on_its_node(monkeypatch):
    """MPICH's shared memory for the ranks of a node is one file of about 1 MB a rank (4.2 MB for 4
    ranks, 16.9 MB for 16, measured): under mpiexec the least file size is twice that where it
    exceeds FILE_SIZE (`MPI_LOCALNRANKS`, which mpiexec sets in each rank)."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (environment.FILE_SIZE, hard))
    try:
        monkeypatch.setenv("MPI_LOCALNRANKS", "4")
        assert environment.process_problem() is None
        monkeypatch.setenv("MPI_LOCALNRANKS", "40")
        found = environment.process_problem()
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert found is not None and "fewer than the 84.8 MB nbsymple asks for" in found, found


@pytest.mark.unshared
def test_what_mpi_numba_and_matplotlib_need_fits_in_the_least_limits(tmp_path):
    """At the least limits (`environment.OPEN_FILES`: 64 open files, `ADDRESS_SPACE`: 2 GB of
    address space, `DATA_MEMORY`: 2 GB of data, `FILE_SIZE`: 64 MB in a file, `STACK`: 1 MB of
    stack) every rank of a
    4-rank job of F starts MPI (a rank took 32 open files alone, 40 with 4 to 16 ranks), `check`
    (F in one rank beside A..E; it ran in 1 GB) passes and `paper` draws."""
    mpiexec = str(Path(sys.executable).with_name("mpiexec"))
    files, space, data, size, stack = (_limited(which, LIMITS[which][1], LIMITS[which][1]) for which in LIMITS)

    def least():
        files()
        space()
        data()
        size()
        stack()

    def launcher():                                       # mpiexec's own memory is not nbsymple's
        files()
        size()
        stack()
    blas = {"OPENBLAS_NUM_THREADS": None}                 # a thread per core, each with its buffers, as a user's
    for argv in (NBSYMPLE + ["check", "--n", "16"], PAPER + ["--no-science", *PAPER_BASE, "--out", "plots"]):
        p = launch(argv, cwd=tmp_path, env=blas, preexec_fn=least)
        assert p.returncode in (0, 1) and "Traceback" not in p.stderr, p.stdout + p.stderr
    assert (tmp_path / "plots" / "speedup.png").is_file()
    p = launch([mpiexec, "-n", "4", *NBSYMPLE, "run", "--version", "F", "--n", "16", "--steps", "1"],
               cwd=tmp_path, env=blas, preexec_fn=launcher)   # after `check`: its ranks load F's kernels
    assert p.returncode == 0 and "energy error" in p.stdout, p.stderr


def test_a_write_over_the_file_size_limit_names_the_limit(tmp_path):
    """A limit on a file's size (`ulimit -f`; Python ignores the kernel's SIGXFSZ) above the 64 MB
    the start asks for and below a run's checkpoint (N in the millions): the write's EFBIG said
    only "File too large", as if the file system could not hold it. Now the sentence names the
    limit and how to raise it, the run stopped as for a full disk (status 4). Here through the API,
    whose start does not check the limits, under a soft limit of 64 KB."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, hard))
    try:
        with pytest.raises(RunStop) as stop:
            run(RunSpec(n=2048, steps=2, seed=1, checkpoint=tmp_path / "run.ck"))
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    raise_it = "raise it, e.g. ulimit -f " + ("unlimited" if hard == resource.RLIM_INFINITY else str(hard // 1024))
    assert stop.value.status == 4 and "run.ck" in str(stop.value), stop.value
    assert (f"File too large: over this process's limit on a file's size, 65.5 kB (ulimit -f 64); {raise_it}"
            in str(stop.value)), stop.value


def test_a_run_that_cannot_fit_is_told_what_would_make_it_fit(tmp_path, monkeypatch):
    """Fewer snapshots where the run would write some; a checkpoint alone, a folder with more room
    (a hunt: "write fewer snapshots" to a run that wrote none)."""
    import types
    from nbsymple_versions.runs import driver
    monkeypatch.setattr(driver.os, "statvfs", lambda where: types.SimpleNamespace(f_bavail=1, f_frsize=512))
    run_ = {"n": 4096, "steps": 10, "every": 5, "snapshots": str(tmp_path)}
    alone = driver._room_problem({**run_, "snapshots": None}, 0, None, tmp_path / "c.ck") or ""
    both = driver._room_problem(run_, 0, tmp_path, tmp_path / "c.ck") or ""
    assert alone.startswith("the run would write a checkpoint into ") and "snapshots" not in alone, alone
    assert "choose a folder with more room" in alone
    assert both.startswith("the run would write 2 snapshots of N = 4096 (npz, ") and " and a checkpoint" in both
    assert "; write fewer snapshots (a larger --every, fewer --steps) or choose a folder with more room" in both


def test_a_keep_or_measure_that_failed_says_what_it_wrote_before(tmp_path):
    """A hunt: `cpu-asm --keep` and `gpu-asm --keep` on a full disk said "the assembly written
    before it is in K" of an empty K, `mpi_model --measure` "the runs before it are in F" of no F."""
    from nbsymple_versions import cli
    from nbsymple_versions.instruments import mpi_model
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    for first, said in ((False, "none was written into"), (True, "the assembly written before it is in")):
        keep = tmp_path / f"k{first}"
        keep.mkdir()
        (keep / "old.s").write_text("an earlier call's\n")
        with pytest.raises(RunStop) as stop, cli._kept_into(keep, "assembly"):
            if first:
                (keep / "host_pairwise_sp.s").write_text("vfmadd231ps\n")
            raise full
        assert stop.value.status == 4 and str(stop.value).endswith(f"; {said} {keep}"), stop.value
    measured = tmp_path / "m.jsonl"
    assert mpi_model._kept(measured) == f"no run was written to {measured}"
    measured.write_text("{}\n")
    assert mpi_model._kept(measured) == f"the runs before it are in {measured}"


def test_a_lock_whose_process_id_cannot_be_written_is_held_and_let_go_quietly(tmp_path):
    """A hunt: on a full disk a run's lock file took its process id into a buffer, whose write failed
    (quietly: the id only names a holder), and failed again when the file was closed, where its
    OSError took the place of the run's own sentence ("... its file system has 0 B free"): a
    traceback. Now nothing is kept to be written again. Here a soft limit of 0 bytes on a file's size."""
    import resource
    from nbsymple_versions.runs import locks
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, hard))
    try:
        with locks.hold(tmp_path, "the folder", folder=True) as unlocked:
            held = unlocked is None
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert held and (tmp_path / ".lock").read_bytes() == b""


def test_a_cpu_time_limit_stops_a_run_with_a_last_checkpoint(tmp_path):
    """`ulimit -St 6` (a batch system's CPU-time limit, found by hand): the kernel's SIGXCPU at the
    soft limit killed the run, losing the steps since its last periodic checkpoint. Now it
    stops after the step under way with a checkpoint of that step and status 152 (128 +
    SIGXCPU), as for SIGTERM, however many times the kernel sends it again before the hard limit;
    the checkpoint resumes. (A limit of 3 s: the run's start took about 0.5 s of it on a Zen 5,
    and a second of steps is as good a test as five.)"""
    run = NBSYMPLE + ["run", "--n", "2048", "--seed", "3", "--steps"]
    p = launch(run + ["1"], cwd=tmp_path)              # the kernels compiled (the session's cache) before the clock
    assert p.returncode == 0, p.stderr
    p = launch(run + [str(10**6), "--checkpoint", "c.ck", "--checkpoint-every", "1000"], cwd=tmp_path,
               preexec_fn=_limited("CPU", 3, 600))
    assert p.returncode == 128 + signal.SIGXCPU, p.stderr
    stopped = load(tmp_path / "c.ck")[1]["steps_done"]
    assert p.stderr == (f"nbsymple run: stopped by SIGXCPU after step {stopped} of 1000000; checkpoint written to "
                        f"c.ck; continue with: nbsymple run --resume c.ck\n"), p.stderr
    p = launch(NBSYMPLE + ["run", "--resume", "c.ck", "--steps", str(stopped + 2)], cwd=tmp_path)
    assert p.returncode == 0 and "energy error" in p.stdout, p.stderr


@pytest.mark.parametrize("fault, memory, said", [
    ("files = []\n    while True:\n        files.append(open(os.devnull))", "AS", "ran out of open files"),   # EMFILE
    ("raise OSError(errno.ENFILE, os.strerror(errno.ENFILE), 'out')", "AS", "table of open files is full"),
    ("bytearray(3 * 10**9)", "AS", "ran out of memory: its address-space limit of 2.5 GB (ulimit -v 2441406)"),
    ("bytearray(3 * 10**9)", "DATA", "ran out of memory: its data limit of 2.5 GB (ulimit -d 2441406)"),
])
def test_running_out_of_files_or_memory_after_the_start_is_one_sentence(tmp_path, fault, memory, said):
    """A command that runs out of descriptors (real opens up to the limit, EMFILE; the system's
    table full, ENFILE, raised as the kernel would) or of memory (a real allocation beyond the
    address-space or the data limit: the data limit's was blamed on the machine's free memory)
    after the start ends with one sentence naming the limit and status 4, not a traceback
    (`entry.command`)."""
    code = ("import errno, os, sys\nfrom nbsymple_versions.entry import command\n"
            f"def body():\n    {fault}\n"
            "sys.exit(command('nbsymple paper', body))\n")

    def limits():
        _limited("NOFILE", 64, 64)()
        _limited(memory, int(2.5e9), int(2.5e9))()
    p = launch([sys.executable, "-c", code], cwd=tmp_path, preexec_fn=limits)
    assert_refused(p, "nbsymple paper:", said, status=4)
    assert p.stderr.count("\n") == 1, p.stderr


def test_the_package_runs_from_a_folder_whose_name_is_not_utf8(tmp_path):
    """A checkout in a folder named with a byte that is not UTF-8 (b'\\xff'): numba's cache
    locator hashed the sources' folder as UTF-8 text, and every command that compiles a kernel
    ended in a UnicodeEncodeError (`serial.kernel_cache._CacheFolder`)."""
    import shutil
    folder = tmp_path / os.fsdecode(b"checkout-\xff")
    shutil.copytree(REPO / "nbsymple_versions", folder / "nbsymple_versions",
                    ignore=shutil.ignore_patterns("__pycache__"))
    environ = {**os.environ, "PYTHONPATH": str(folder)}
    p = subprocess.run(NBSYMPLE + ["run", "--n", "8", "--steps", "1"], cwd=tmp_path, env=environ,
                       capture_output=True, text=True, timeout=HANG_GUARD)
    assert p.returncode == 0 and "Traceback" not in p.stderr and "seconds per step" in p.stdout, p.stderr

# ------------------------------------------------------------------ 5. streams

def _closed_pipe_run(argv, cwd):
    """`argv` writing into a pipe whose reader has gone (`| head -1` once head has ended)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return launch(argv, cwd=cwd, stdout=write, stderr=subprocess.PIPE, capture_output=False)
    finally:
        os.close(write)


@pytest.mark.parametrize("argv", [
    NBSYMPLE + ["run", "--n", "16", "--steps", "2", "--json"],
    NBSYMPLE + ["info"],
    NBSYMPLE + ["check", "--n", "16", "--json"],
    NBSYMPLE + ["run", "--help"],
    [sys.executable, "-m", "tools.tracking", "select"],
])
def test_a_closed_stdout_ends_quietly_with_141(tmp_path, argv):
    p = _closed_pipe_run(argv, REPO if "tools.tracking" in argv else tmp_path)
    assert p.returncode == 141 and p.stderr == "", (p.returncode, p.stderr)


@pytest.mark.parametrize("argv", [
    ["run", "--n", "16", "--steps", "2", "--json"],                                      # the issue's
    ["run", "--n", "16", "--steps", "2"],
    ["info"],
    ["check", "--n", "16", "--json"],
])
def test_a_full_stdout_is_one_sentence_and_status_4(tmp_path, argv):
    with open("/dev/full", "w") as full:
        p = launch(NBSYMPLE + argv, cwd=tmp_path, stdout=full, stderr=subprocess.PIPE, capture_output=False)
    assert p.returncode == 4 and "Traceback" not in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "stdout" in p.stderr and "No space left" in p.stderr


def test_a_full_stdout_keeps_the_checkpoint_and_names_it(tmp_path):
    with open("/dev/full", "w") as full:                                                 # the issue's
        p = launch(NBSYMPLE + ["run", "--n", "16", "--steps", "4", "--json", "--checkpoint", "run.ck"], cwd=tmp_path,
                   stdout=full, stderr=subprocess.PIPE, capture_output=False)
    assert p.returncode == 4 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "run.ck (step 4) is written" in p.stderr
    assert load(tmp_path / "run.ck")[1]["steps_done"] == 4


def _closing(*fds):
    """The child's `preexec_fn`: it starts with these standard descriptors closed (`>&-`, `2>&-`)."""
    def close():
        for fd in fds:
            os.close(fd)
    return close


@pytest.mark.parametrize("argv", [
    ["run", "--n", "16", "--steps", "2", "--json", "--checkpoint", "run.ck"],
    ["info"],
    ["check", "--n", "16", "--json"],
])
def test_a_closed_stdout_is_one_sentence_and_status_4(tmp_path, argv):
    """`>&-`: every write to stdout fails as one to a closed descriptor (EBADF), as a full disk's
    does: one sentence, status 4, the checkpoint written named (there was a traceback, status 1)."""
    p = launch(NBSYMPLE + argv, cwd=tmp_path, preexec_fn=_closing(1), stderr=subprocess.PIPE, capture_output=False)
    assert p.returncode == 4 and "Traceback" not in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "stdout: Bad file descriptor" in p.stderr, p.stderr
    if "run.ck" in argv:
        assert "run.ck (step 2) is written" in p.stderr and load(tmp_path / "run.ck")[1]["steps_done"] == 2


def test_a_closed_stderr_sends_nothing_to_stdout(tmp_path):
    """`2>&-`: what would have gone to stderr is lost, never written to stdout instead (Python
    leaves sys.stderr None, and print(file=None) writes to stdout): a refused run prints nothing,
    a finished one its JSON alone."""
    argv = NBSYMPLE + ["run", "--n", "16", "--steps", "2", "--json", "--checkpoint", "run.ck"]
    first = launch(argv, cwd=tmp_path, preexec_fn=_closing(2), stderr=None)
    assert first.returncode == 0 and json.loads(first.stdout)["steps"] == 2, first.stdout
    again = launch(argv, cwd=tmp_path, preexec_fn=_closing(2), stderr=None)     # run.ck exists: refused
    assert again.returncode == 2 and again.stdout == "", again.stdout
    garbage = launch(NBSYMPLE + ["info"], cwd=tmp_path, env={"NUMBA_OPT": "9"}, preexec_fn=_closing(2), stderr=None)
    assert garbage.returncode == 2 and garbage.stdout == "", garbage.stdout           # refused before numba loads


@pytest.mark.parametrize("argv, made", [
    (["run", "--n", "64", "--steps", "400", "--progress", "--json", "--checkpoint", "run.ck"], "run.ck"),
    (["paper", "--results", str(FIXTURE), "--no-science", "--out", "out"], "out/REPORT.md"),
])
def test_a_full_stderr_loses_what_goes_to_it_and_the_command_goes_on(tmp_path, argv, made):
    """`2>/dev/full`: what goes to stderr is lost, as on a closed one, and the command does its
    work: a run's first progress line stopped it (status 1), paper's first note stopped it before
    it wrote a file. Its status and stdout are as on a quiet terminal."""
    with open("/dev/full", "w") as full:
        p = launch(NBSYMPLE + argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=full, capture_output=False)
    assert p.returncode == 0 and (tmp_path / made).is_file(), (p.returncode, p.stdout)
    if "--json" in argv:
        assert json.loads(p.stdout)["steps"] == 400, p.stdout
    else:
        assert p.stdout.startswith("nbsymple paper: results of machine"), p.stdout


def test_what_libgomp_shows_on_request_into_a_full_stderr_is_lost_and_the_command_goes_on(tmp_path):
    """A hunt: OMP_DISPLAY_ENV=true with `2>/dev/full` ended every command with status 1 before
    it began (the environment's check passes libgomp's words on to stderr, and that write failed)."""
    with open("/dev/full", "w") as full:
        p = launch(NBSYMPLE + ["run", "--version", "B", "--n", "16", "--steps", "2", "--json"], cwd=tmp_path,
                   env={"OMP_DISPLAY_ENV": "true"}, stdout=subprocess.PIPE, stderr=full, capture_output=False)
    assert p.returncode == 0 and json.loads(p.stdout)["steps"] == 2, (p.returncode, p.stdout)


def test_a_non_blocking_stderr_full_for_now_loses_that_text_not_the_stream(monkeypatch):
    """EAGAIN (a non-blocking stderr whose pipe is full for the moment) loses what was written,
    and the stream stays: only a stderr that cannot be written at all goes to /dev/null."""
    from nbsymple_versions import entry
    moved = []
    monkeypatch.setattr(entry, "_send_nowhere", moved.append)

    class Busy:
        def write(self, text):
            raise BlockingIOError(errno.EAGAIN, "try again", 0)

        def flush(self):
            raise BlockingIOError(errno.EAGAIN, "try again", 0)

    stream = entry._ShownStderr(Busy())
    assert stream.write("a sentence\n") == len("a sentence\n") and stream.flush() is None and moved == []

    class Full(Busy):
        def write(self, text):
            raise OSError(errno.ENOSPC, "full")

    full = Full()
    assert entry._ShownStderr(full).write("x") == 1 and moved == [full]


@pytest.mark.parametrize("unbuffered", [True, False])
def test_a_non_blocking_stdout_full_for_now_waits_for_its_reader(monkeypatch, unbuffered):
    """A hunt: stdout a pipe whose O_NONBLOCK a process sharing it set, full while its reader is
    busy: the output was lost in silence with status 0 (PYTHONUNBUFFERED=1, common in batch jobs),
    else ended "cannot write its output to stdout: Resource temporarily unavailable", status 4. The
    write waits for the reader, as on a blocking pipe: the reader here drains the pipe only once the
    command waits (select.select) or has ended."""
    import fcntl
    import io
    import select
    import threading
    from nbsymple_versions.entry import command
    r, w = os.pipe()
    fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 4096)
    fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)
    filled = 0
    with contextlib.suppress(BlockingIOError):
        while True:
            filled += os.write(w, b"x" * 512)
    raw = io.FileIO(w, "w", closefd=True)
    stdout = io.TextIOWrapper(raw if unbuffered else io.BufferedWriter(raw), write_through=unbuffered)
    monkeypatch.setattr(sys, "stdout", stdout)
    monkeypatch.setattr(sys, "__stdout__", stdout)          # Python's own stdout, as in a command
    waits, read = threading.Event(), []
    waited = select.select
    monkeypatch.setattr(select, "select", lambda *a: waits.set() or waited(*a))

    def reader():
        waits.wait(HANG_GUARD)
        while chunk := os.read(r, 1 << 16):
            read.append(chunk)
    drain = threading.Thread(target=reader)
    drain.start()
    text = "".join(f"line {i} of the report\n" for i in range(2000))
    try:
        status = command("nbsymple info", lambda: print(text, end="") or 0)
    finally:
        waits.set()
        sys.stdout.close()
        drain.join(HANG_GUARD)
        os.close(r)
    assert status == 0 and b"".join(read)[filled:].decode() == text


CLOSED_DESCRIPTORS = """
import os, sys, tempfile
from nbsymple_versions.entry import command

def body():
    with tempfile.TemporaryFile() as f:
        os.write(2, b"to stderr at C level\\n")        # as a library or a child does
        f.seek(0)
        print(f.fileno(), len(f.read()), file=sys.__stdout__)
    return 0

sys.exit(command("closed", body))
"""


def test_no_file_takes_the_number_of_a_closed_standard_descriptor(tmp_path):
    """With stdin and stderr closed at the start, a file the command opens gets a descriptor above
    2, and a write to descriptor 2 goes to /dev/null, not into that file."""
    p = launch([sys.executable, "-c", CLOSED_DESCRIPTORS], cwd=tmp_path, preexec_fn=_closing(0, 2), stderr=None)
    assert p.returncode == 0, p.stdout
    fileno, size = map(int, p.stdout.split())
    assert fileno > 2 and size == 0, p.stdout


# ------------------------------------------------------------------ 6. faults after the start

RUN = ["run", "--n", "16", "--steps", "10", "--seed", "1", "--checkpoint-every", "2"]


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*.tmp"))


@pytest.mark.parametrize("where, name, k, code, kept", [
    ("fsync", ".run.ck.", 3, "ENOSPC", 2),            # the disk fills at the third checkpoint (step 4)
    ("create", ".run.ck.", 2, "EROFS", 0),            # the folder is made read-only before the second
    ("create", ".run.ck.", 4, "EACCES", 4),
    ("fsync", "snap_", 4, "ENOSPC", 2),               # a snapshot fills the disk after step 3
])
def test_a_later_write_fault_stops_with_the_last_good_checkpoint(tmp_path, where, name, k, code, kept):
    p = launch(FAULTS + [where, name, str(k), code] + RUN + ["--checkpoint", "run.ck", "--snapshots", "S",
                                                              "--every", "1"], cwd=tmp_path)
    assert_refused(p, "run.ck (step", "nbsymple run --resume run.ck", os.strerror(getattr(errno, code)), status=4)
    assert f"run.ck (step {kept})" in p.stderr
    # the file that failed, whole (a hunt: a fault at a flush named none, at a creation the temporary)
    failed = tmp_path / ("S/snap_00000003.npz" if name == "snap_" else "run.ck")
    assert f"{os.strerror(getattr(errno, code))} ({failed})" in p.stderr, p.stderr
    assert load(tmp_path / "run.ck")[1]["steps_done"] == kept and _leftovers(tmp_path) == []
    again = launch(NBSYMPLE + ["run", "--resume", "run.ck", "--json"], cwd=tmp_path)
    assert again.returncode == 0 and load(tmp_path / "run.ck")[1]["steps_done"] == 10, again.stderr


def test_resume_on_a_full_disk_keeps_the_checkpoint_and_names_it(tmp_path):
    assert launch(NBSYMPLE + RUN[:4] + ["4", "--checkpoint", "run.ck"], cwd=tmp_path).returncode == 0
    before = (tmp_path / "run.ck").read_bytes()
    p = launch(FAULTS + ["fsync", ".run.ck.", "1", "ENOSPC", "run", "--resume", "run.ck", "--steps", "10"],
               cwd=tmp_path)
    assert_refused(p, "run.ck (step 4)", "No space left on device", status=4)
    assert (tmp_path / "run.ck").read_bytes() == before and _leftovers(tmp_path) == []


def test_a_fault_when_the_run_is_marked_finished_names_the_written_checkpoint(tmp_path):
    p = launch(FAULTS + ["fsync", "nbsymple-run.json", "2", "ENOSPC"] + RUN + ["--checkpoint", "run.ck",
                                                                               "--snapshots", "S"], cwd=tmp_path)
    assert_refused(p, "run.ck (step 10) is written", "nbsymple-run.json", status=4)
    assert load(tmp_path / "run.ck")[1]["steps_done"] == 10


def test_a_full_disk_at_the_set_up_is_a_fault_and_leaves_nothing(tmp_path):
    p = launch(FAULTS + ["fsync", "nbsymple-run.json", "1", "ENOSPC"] + RUN + ["--checkpoint", "run.ck",
                                                                               "--snapshots", "S"], cwd=tmp_path)
    assert_refused(p, f"cannot write {tmp_path / 'S' / 'nbsymple-run.json'}: No space left on device",
                   "no step had run", status=4)          # the file named (a hunt: "a write failed")
    assert not (tmp_path / "run.ck").exists() and not (tmp_path / ".run.ck.lock").exists()


@pytest.mark.parametrize("code, filename", [("ENOSPC", None), ("EROFS", "/ro/loop.s"), ("EIO", None)])
def test_a_write_the_machine_refuses_outside_the_commands_files_is_one_sentence(capsys, code, filename):
    """A hunt: TMPDIR on a full disk ended `gpu-asm`, `cpu-asm` and `peers` in an OSError's
    traceback (the compilers' and llvm-mca's temporary files), status 1."""
    from nbsymple_versions import entry

    def body():
        raise OSError(getattr(errno, code), os.strerror(getattr(errno, code)), filename)
    assert entry.command("nbsymple gpu-asm", body) == entry.FAULT
    said = capsys.readouterr().err
    start = f"cannot write {filename}" if filename else "a write failed"
    assert said.startswith(f"nbsymple gpu-asm: {start}: {os.strerror(getattr(errno, code))} (temporary files go to ")
    assert "TMPDIR" in said and said.count("\n") == 1 and "Traceback" not in said


def test_a_full_disk_during_a_science_run_of_paper_names_its_checkpoint(tmp_path):
    argv = ["paper", "--full", "--out", "plots", "--tidal-n", "64", "--tidal-dt", "0.0625",
            "--science-version", "A", "--quiet"]
    p = launch(FAULTS + ["fsync", "checkpoint.nbsc", "2", "ENOSPC"] + argv, cwd=tmp_path)
    assert_refused(p, "checkpoint.nbsc (step 0), is kept", "No space left on device", status=4)
    again = launch(NBSYMPLE + argv, cwd=tmp_path)                   # the same command resumes it
    assert again.returncode == 0 and "resuming at step 0" not in again.stderr, again.stderr
    assert (tmp_path / "plots" / "tidal_tails_n64.png").exists()


# ------------------------------------------------------------------ 11. children

def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            stat = (Path("/proc") / entry / "stat").read_text()
        except (OSError, ValueError):
            continue
        if entry.isdigit() and int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry))
    return found


def _running(pids) -> list[int]:
    alive = []
    for pid in pids:
        try:
            state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.append(pid)
    return alive


def _wait_for(test, what: str):
    start = time.monotonic()
    while not (found := test()):
        assert time.monotonic() - start < HANG_GUARD, f"hang guard: {what}"
        time.sleep(0.05)
    return found


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])     # SIGTERM: the issue's
def test_a_signal_to_cpu_asm_ends_its_compilers(tmp_path, signum):
    """Its four compilers (the host and the fixed targets: none kept, no NUMBA_CACHE_DIR) end with it."""
    environ = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "NUMBA_CACHE_DIR")}
    proc = subprocess.Popen(NBSYMPLE + ["cpu-asm", "--target", "all"], cwd=tmp_path, env=environ,
                            preexec_fn=signals_default, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        children = _wait_for(lambda: len(_children(proc.pid)) >= 4 and _children(proc.pid), "four compilers")
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=HANG_GUARD)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signum and "Traceback" not in err, (proc.returncode, err)
    assert err.strip() == f"nbsymple cpu-asm: stopped by {signal.Signals(signum).name}" and out == ""
    assert _running(children) == []


STOPPED_IN_THE_CHECK = """
import os, signal, sys
from nbsymple_versions import entry, environment
environment.problem = lambda draws=False: os.kill(os.getpid(), signal.SIG{0})   # the check starts children for seconds
sys.exit(entry.command("nbsymple info", lambda: print("the command ran") or 0))
"""


@pytest.mark.parametrize("name", ["INT", "TERM", "HUP"])
def test_a_signal_while_the_environment_is_checked_is_one_sentence(name):
    """A hunt: the environment's check runs children (MPI's start, numba's threads: up to a second
    each) before `command` answered signals, and a Ctrl-C there was KeyboardInterrupt's traceback
    (a SIGTERM ended the process without a word)."""
    p = subprocess.run([sys.executable, "-c", STOPPED_IN_THE_CHECK.format(name)], cwd=REPO, capture_output=True,
                       text=True, timeout=HANG_GUARD, preexec_fn=signals_default)
    signum = getattr(signal, "SIG" + name)
    assert p.returncode == 128 + signum and p.stderr == f"nbsymple info: stopped by SIG{name}\n", p.stderr
    assert p.stdout == ""


def test_a_ctrl_c_while_the_modules_load_ends_quietly():
    """The `nbsymple` script loads the command's modules after `loading.quiet_while_loading`: a
    Ctrl-C then is status 130 and no traceback from inside an import; an ignored SIGINT stays ignored."""
    from importlib.metadata import entry_points
    from nbsymple_versions import loading
    assert entry_points(group="console_scripts")["nbsymple"].value == "nbsymple_versions.__main__:nbsymple"
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)     # as a terminal's process has it
    try:
        loading.quiet_while_loading()
        with pytest.raises(SystemExit) as stopped:
            signal.raise_signal(signal.SIGINT)
        assert stopped.value.code == 130
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        loading.quiet_while_loading()
        signal.raise_signal(signal.SIGINT)                                  # ignored, as the process asked
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


# a CPU-time limit's SIGXCPU during the interpreter's exit, after the command: from an exit handler that
# runs after those of the command (registered before it: the last registered runs first)
CPU_LIMIT_AT_EXIT = """
import atexit, os, resource, signal, sys
resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
atexit.register(lambda: os.kill(os.getpid(), signal.SIGXCPU))
from nbsymple_versions.entry import command
sys.exit(command("nbsymple x", lambda: print("done") or 0))
"""


def test_a_cpu_time_limit_reached_as_a_finished_command_exits_leaves_its_status():
    """A hunt: `paper` said "wrote 11 files", then a CPU-time limit's SIGXCPU during the interpreter's
    exit (its handlers given back) ended it by the signal, status -24 and a core dump of 276 MB. The
    work done and said, the limit's SIGXCPU is ignored from there (`entry._ignore_cpu_limit`)."""
    p = subprocess.run([sys.executable, "-c", CPU_LIMIT_AT_EXIT], cwd=REPO, capture_output=True, text=True,
                       timeout=HANG_GUARD, preexec_fn=signals_default)
    assert (p.returncode, p.stdout, p.stderr) == (0, "done\n", ""), (p.returncode, p.stderr)


# a Ctrl-C as the command's modules load: raised when `entry`'s first import is looked for (Python's
# site imports sitecustomize before the command's own code)
CTRL_C_WHILE_LOADING = """
import signal, sys

class CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name == "nbsymple_versions.environment":
            sys.meta_path.remove(self)
            signal.raise_signal(signal.SIGINT)

sys.meta_path.insert(0, CtrlC())
"""


@pytest.mark.parametrize("argv", [
    [sys.executable, "-c", "import sys; from nbsymple_versions.__main__ import nbsymple; sys.exit(nbsymple())", "info"],
    [sys.executable, "-m", "nbsymple_versions.instruments.mpi_timing", "--help"],
    [sys.executable, "-m", "tools.migrate", "--help"],
    [sys.executable, "-Bmtools.migrate", "--help"],          # '-m' among other options, the name joined to it
])
def test_a_ctrl_c_while_any_entry_point_loads_ends_quietly(tmp_path, argv):
    """A hunt: `python -m nbsymple_versions.instruments.*` and `python -m tools.*` import their
    modules before any code of theirs runs, and the `nbsymple` script imported `entry` before it
    answered a Ctrl-C: a KeyboardInterrupt traceback from inside an import. The packages answer it
    as Python's `-m` locates the module, the script first of all: 130, nothing said."""
    (tmp_path / "sitecustomize.py").write_text(CTRL_C_WHILE_LOADING)
    p = subprocess.run(argv, cwd=REPO, env=dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{REPO}"),
                       capture_output=True, text=True, timeout=HANG_GUARD, preexec_fn=signals_default)
    assert (p.returncode, p.stderr, p.stdout) == (130, "", ""), p.stderr


def test_a_program_of_its_own_that_imports_the_package_keeps_its_ctrl_c(tmp_path):
    """A hunt: `python -m mytool`, whose package imports nbsymple_versions as Python's `-m` locates
    `mytool`, ran with the quiet handler of a command's loading all its life: its Ctrl-C an exit
    (130), never its KeyboardInterrupt, and `Simulation.step` no longer ending the step under way.
    Only a module of nbsymple_versions or tools that `-m` runs gets it."""
    (tmp_path / "mytool").mkdir()
    (tmp_path / "mytool" / "__init__.py").write_text("import nbsymple_versions\nimport tools\n")
    (tmp_path / "mytool" / "__main__.py").write_text(
        "import signal\nprint(signal.getsignal(signal.SIGINT) is signal.default_int_handler)\n")
    p = subprocess.run([sys.executable, "-m", "mytool"], cwd=tmp_path, capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{REPO}"), timeout=HANG_GUARD,
                       preexec_fn=signals_default)
    assert (p.returncode, p.stdout, p.stderr) == (0, "True\n", ""), (p.stdout, p.stderr)


@pytest.mark.parametrize("argv, orig_argv, located", [
    (["-m", "--help"], ["python", "-m", "tools.gate", "--help"], True),
    (["-m"], ["python", "-B", "-m", "tools"], True),
    (["-m"], ["python", "-m", "toolsmith"], False),           # a package whose name starts with 'tools'
    (["-m", "--help"], ["python", "-mtoolsmith.x", "--help"], False),
    (["-m", "a", "b"], ["python"], False),                   # sys.argv longer than the command line: not -m's
    (["tool.py"], ["python", "tool.py"], False),
])
def test_only_a_module_of_the_package_that_python_m_runs_is_taken_for_one_of_its_commands(
        monkeypatch, argv, orig_argv, located):
    """`loading.located_by_python_m("tools")`: `-m tools` and its modules, as Python's `-m` locates
    them, are a command starting; a package whose name merely starts with 'tools' is another
    program (its Ctrl-C its own), and so is a script, or a sys.argv that is no longer the command line's."""
    from nbsymple_versions import loading
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.setattr(sys, "orig_argv", orig_argv)
    assert loading.located_by_python_m("tools") is located


def test_modules_loaded_in_another_thread_leave_sigint_as_it_was():
    """A command's modules imported in a thread other than the main one (a notebook's worker), where no
    handler can be set: `quiet_while_loading` leaves SIGINT as it was and raises nothing."""
    import threading
    from nbsymple_versions import loading
    previous, errors = signal.signal(signal.SIGINT, signal.default_int_handler), []

    def load():
        try:
            loading.quiet_while_loading()
        except Exception as e:     # noqa: BLE001 - what it raised there is the failure
            errors.append(e)
    try:
        thread = threading.Thread(target=load)
        thread.start()
        thread.join()
        assert errors == [] and signal.getsignal(signal.SIGINT) is signal.default_int_handler, errors
    finally:
        signal.signal(signal.SIGINT, previous)


def test_an_interrupt_swallowed_on_its_way_still_ends_the_command(capsys):
    """A Ctrl-C raised where Python cannot pass it on (a callback from C, such as numba's
    compiler's: here a `__del__`) is neither printed as 'Exception ignored' nor lost: the command
    ends with 130 and its one sentence once its body returns."""
    from nbsymple_versions import entry

    class Swallows:
        def __del__(self):
            signal.raise_signal(signal.SIGINT)

    def body():
        Swallows()                       # dropped at once: its __del__ takes the Ctrl-C
        print("done")
        return 0
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)     # as a terminal's process has it
    try:
        assert entry.command("nbsymple check", body) == 130
    finally:
        signal.signal(signal.SIGINT, previous)
    out, err = capsys.readouterr()
    assert err == "nbsymple check: stopped by SIGINT\n" and out == "done\n"


GROUP = """
import sys
from nbsymple_versions.entry import child_process, command

def body():
    with child_process(["sh", "-c", "sleep 300 & sleep 300"]) as proc:
        print(proc.pid, flush=True)
        proc.wait()
    return 0

sys.exit(command("group", body))
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_a_childs_whole_process_group(tmp_path, signum):
    """What `tools.tracking` runs asv with: the child and its own children end with the command."""
    environ = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-c", GROUP], cwd=tmp_path, env=environ,
                            preexec_fn=signals_default, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        shell = int(proc.stdout.readline())
        grandchildren = _wait_for(lambda: _children(shell), "the shell's sleeps")
        proc.send_signal(signum)
        proc.wait(timeout=HANG_GUARD)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signum
    _wait_for(lambda: not _running([shell, *grandchildren]), "the group to end")


ORPHAN = """
import sys
from nbsymple_versions.entry import child_process, command

def body():
    with child_process(["sleep", "300"]) as proc:
        print(proc.pid, flush=True)
        proc.wait()
    return 0

sys.exit(command("orphan", body))
"""


def test_a_child_ends_with_a_command_killed_by_sigkill(tmp_path):
    """`kill -9` of `make bench` (no exception to end its children) left asv measuring and writing
    results/ after the lock on them was gone, beside the next `make bench` (a hunt): the child
    now gets SIGTERM when its command ends (`entry._ends_with_parent`)."""
    environ = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-c", ORPHAN], cwd=tmp_path, env=environ, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        child = int(proc.stdout.readline())
        proc.kill()
        proc.wait(timeout=HANG_GUARD)
        _wait_for(lambda: not _running([child]), "the child to end")
    finally:
        proc.kill()
        with contextlib.suppress(ProcessLookupError, NameError):
            os.kill(child, signal.SIGKILL)


# ------------------------------------------------------------------ every refusal names its option

@pytest.mark.parametrize("argv, named", [
    (["run", "--seed", "-1"], "--seed"),                                                 # the issue's
    (["check", "--seed=-1"], "--seed"),
    (["run", "--n", "x"], "--n"),
    (["run", "--n", "\u00b2"], "--n: expected a whole number"),     # a hunt: said to have too many digits
    (["run", "--dt", "nan"], "--dt"),
    (["run", "--steps", "-3"], "--steps"),
    (["run", "--every", "0", "--snapshots", "S"], "--every"),
    (["run", "--checkpoint-every", "0", "--checkpoint", "c"], "--checkpoint-every"),
    (["run", "--mass-classes", "0"], "--mass-classes"),
    (["run", "--ics-mass", "-1"], "--ics-mass"),
    (["run", "--tile", "3", "--version", "C"], "--tile"),
    (["run", "--checkpoint", ""], "--checkpoint"),
    (["profile", "--n", "1"], "--n"),
    (["profile", "--steps", "0"], "--steps"),
    (["gpu-asm", "--tile", "48"], "--tile"),
    (["run", "--version", "E", "--devices", "0"], "--devices"),
    (["profile", "--versions", "XYZ"], "--versions"),
    (["gpu-asm", "--arch", "hopper"], "--arch"),
    (["gpu-asm", "--arch", "sm_\u0669\u0660"], "--arch: unknown architecture"),     # a hunt: a traceback
    (["paper", "--machine", ""], "--machine"),
    (["paper", "--tidal-n", "1"], "--tidal-n"),
    (["paper", "--bh-ratios", "0"], "--bh-ratios"),
])
def test_every_refusal_names_its_option(tmp_path, argv, named):
    p = launch(NBSYMPLE + argv, cwd=tmp_path)
    assert_refused(p, named)


@pytest.mark.parametrize("argv", [["run", "--scheme"], ["run", "--dt"], ["gpu-asm", "--arch"]])
def test_a_value_typed_at_length_is_echoed_short(tmp_path, argv):
    """A hunt: a value of 100000 characters was echoed whole, a refusal of 100 kB on one line."""
    p = launch(NBSYMPLE + argv + ["x" * 100000], cwd=tmp_path)
    assert_refused(p, argv[-1], "x" * 80 + "..." + "x" * 20 + " (100000 characters)")
    assert len(p.stderr) < 400, len(p.stderr)


# ------------------------------------------------------------ a hunt of streams and signals in the tools

@contextlib.contextmanager
def _default_handlers():
    """SIGINT and SIGTERM as a fresh process has them, which `entry.command` answers."""
    kept = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        yield
    finally:
        for sig, handler in kept.items():
            signal.signal(sig, handler)


def test_a_signal_swallowed_by_a_callback_stops_a_long_command_between_its_parts():
    """A SIGTERM raised inside a weakref's callback (where Python cannot pass it on) was left for
    the end of the command: `paper` ran its next science run whole, drew every figure, then said
    it stopped. `stop_pending`, asked between the parts, stops it there."""
    import weakref
    from nbsymple_versions.entry import command, stop_pending
    went_on = []

    def body():
        class Held:
            pass
        held = Held()
        ref = weakref.ref(held, lambda r: os.kill(os.getpid(), signal.SIGTERM))
        del held                                   # the callback runs: the signal raises inside it, lost
        stop_pending()                             # between two parts
        went_on.append(ref)
        return 0
    with _default_handlers():
        assert command("nbsymple paper", body) == 128 + signal.SIGTERM
    assert went_on == []
    stop_pending()                                 # outside a command: that command's stop is not this caller's


def test_an_error_after_a_stop_or_with_the_folder_gone_is_said_in_one_sentence(tmp_path, monkeypatch, capsys):
    """A Ctrl-C lost inside numba's compiler ended `check` in numba's RuntimeError ("no compiled
    object yet"); the current folder removed while a command ran ended it in a FileNotFoundError
    traceback. Both are one sentence now: the stop (128 + n), the folder (status 4)."""
    from nbsymple_versions import entry
    from nbsymple_versions.entry import command

    def lost_then_failed():
        entry._STOPS.append(signal.SIGINT)
        raise RuntimeError("no compiled object yet for <Library 'pairwise'>")
    with _default_handlers():
        assert command("nbsymple check", lost_then_failed) == 130
    assert capsys.readouterr().err == "nbsymple check: stopped by SIGINT\n"
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)

    def folder_removed():
        gone.rmdir()
        os.path.relpath("x")                      # numba's `_get_path`
    with _default_handlers():
        assert command("nbsymple check", folder_removed) == 4
    assert "nbsymple check: the current folder no longer exists" in capsys.readouterr().err


def test_closed_streams_and_a_narrow_encoding_are_no_traceback():
    """`cli.main` with `sys.stdout` a closed file raised Python's ValueError; every `python -m`
    entry point (`peers`) failed on an em dash under a Latin-1 or ASCII locale after all its work."""
    code = ("import sys; from nbsymple_versions.entry import command; from nbsymple_versions.cli import main\n"
            "f = open('/dev/null', 'w'); f.close(); out = sys.stdout; sys.stdout = f; rc = main(['info'])\n"
            "sys.stdout = out; e = open('/dev/null', 'w'); e.close(); sys.stderr = e\n"
            "try:\n    main(['info', 'x'])\nexcept SystemExit as usage:\n    refused = usage.code\n"
            "print(rc, refused, command('x', lambda: print('\\u2014') or 0), file=out)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert p.returncode == 0 and p.stdout.split() == ["\\u2014", "4", "2", "0"], p.stdout + p.stderr


SIGNAL_ON_ANOTHER_THREAD = """
import signal, sys, threading, time
import numba, numpy as np
from nbsymple_versions import entry

@numba.njit(nogil=True)
def spin(flag):                 # C code that never takes the GIL, as a thread of OpenBLAS waits
    while flag[0] == 0:
        pass

def body():
    flag = np.zeros(1, np.int64)
    spin(flag + 1)                                         # compiled before the thread starts
    worker = threading.Thread(target=spin, args=(flag,), daemon=True)
    worker.start()
    time.sleep(0.5)
    signal.pthread_kill(worker.ident, signal.SIGTERM)      # its C handler runs on that thread
    while True:                                            # the main thread's loop, waiting on nothing
        sum(x for x in range(100))

sys.exit(entry.command("probe", body))
"""


def test_a_signal_caught_on_another_thread_stops_the_command():
    """A hunt: `timeout` (SIGTERM, then SIGCONT) did not stop `nbsymple run` or `profile` in 6 of 10
    tries. The kernel gave one of the signals to a thread of OpenBLAS, where Python 3.11 marks it
    pending without waking the main thread's loop, which ran on. `entry._signal_watch` wakes it.
    Here the signal is sent to a thread of the command's own; the timeout is a hang guard."""
    p = subprocess.run([sys.executable, "-c", SIGNAL_ON_ANOTHER_THREAD], capture_output=True, text=True,
                       timeout=HANG_GUARD, cwd=REPO)
    assert p.returncode == 128 + signal.SIGTERM and "probe: stopped by SIGTERM" in p.stderr, (p.returncode, p.stderr)
