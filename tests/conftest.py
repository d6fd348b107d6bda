"""The suite's session: one numba kernel cache for every process it starts, one OpenBLAS thread
in each, no two MPI jobs at once, no wall-clock limit on hypothesis, reproducible seeds.

`make test` runs the suite on every core with pytest-xdist (`-n auto`); a plain `python -m
pytest` runs it in one process. Either way the CPU kernels compile once per session: this module
names a fresh folder for numba's on-disk cache (`NUMBA_CACHE_DIR`, keyed by each kernel's build
and its sources' digest; `serial/kernel_cache.py`) before numba is imported, and every process the
suite starts inherits it (xdist workers, `nbsymple` CLI runs, mpiexec ranks, CUDA-simulator child
pytests, asv benchmark processes). A test of compilation itself (`cpu-asm`'s children,
`benchmarks/compile.py`, the cache's own test) sets or drops the variable, and compiles.

No two tests marked `unshared` (MPI jobs of 2 to 4 ranks, which poll the cores while they wait)
run at once: `test_mpi.py`'s are dealt to one worker, one after another, beside the rest of the
suite on the other cores; tests marked `long` start first.
"""
import atexit
import contextlib
import fcntl
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]
SESSION_FOLDER = "NBSYMPLE_TEST_SESSION"       # the session's folder, inherited by its processes
UNSHARED = "unshared"                          # MPI jobs: never two at once
LONG = "long"                                  # tests of tens of seconds: started first
# modules whose costly module fixture (every kernel compiled for every target, C++ compiles, Warp's
# kernel cache) is much of the module's time: under xdist one worker runs each whole, so that the
# fixture is made once; and test_mpi.py, whose `unshared` jobs then run one after another on one
# worker while the other workers run the rest, not alone with them waiting (docs/testing.md)
WHOLE_MODULES = ("tests/test_mpi.py", "tests/test_cpu_asm.py", "tests/test_gpu_asm.py", "tests/test_cupy.py",
                 "tests/test_peers_warp.py")


def _session_folder() -> str:
    """This test session's folder (numba's cache in `numba/`, the machine lock): made by the
    session's first process (the xdist controller, or the only one) and removed when it ends;
    found in the environment by every process started under it."""
    folder = os.environ.get(SESSION_FOLDER)
    if not folder:
        folder = tempfile.mkdtemp(prefix="nbsymple-test-")
        os.environ[SESSION_FOLDER] = folder
        owner = os.getpid()
        atexit.register(lambda: os.getpid() == owner and shutil.rmtree(folder, ignore_errors=True))
    return folder


def _bytecode_for_the_session():
    """The session's first process compiles this checkout's modules into their `__pycache__`
    folders, where every later process reads them. Where Python writes no bytecode
    (PYTHONDONTWRITEBYTECODE, -B), each of the suite's processes compiled them from source again
    (0.1 s of a child's 0.4-0.5 s): there what was written is removed when the session ends."""
    if os.environ.get(SESSION_FOLDER):
        return
    import compileall
    import importlib.util
    packages = ("nbsymple_versions", "tools", "benchmarks")
    sources = [p for d in packages for p in sorted((ROOT / d).rglob("*.py"))]
    written = [cached for p in sources if not os.path.exists(cached := importlib.util.cache_from_source(str(p)))]
    for package in packages:
        compileall.compile_dir(ROOT / package, quiet=2)
    if not sys.flags.dont_write_bytecode:
        return                                  # as Python would have kept them
    owner = os.getpid()

    def remove():
        if os.getpid() != owner:
            return
        for cached in written:
            with contextlib.suppress(OSError):
                os.remove(cached)
        for folder in {os.path.dirname(c) for c in written}:
            with contextlib.suppress(OSError):
                os.rmdir(folder)                # only where nothing else is in it
    atexit.register(remove)


_bytecode_for_the_session()                                                  # before the session's folder is named
os.environ["NUMBA_CACHE_DIR"] = os.path.join(_session_folder(), "numba")     # before any import of numba
# OpenBLAS starts a thread per core as numpy loads, each spinning for about 0.1 s of CPU before it
# sleeps, in every process the suite starts (a refused `nbsymple run` took 0.32 s of CPU, 0.23 s on
# one thread); nothing in the package needs BLAS's threads. One thread unless the caller chose
# otherwise; the test of the least limits runs OpenBLAS's default, as a user does.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# No wall-clock limit on a generated example (hypothesis's default deadline is 200 ms) or on
# generating one: a busy machine must not fail a property.
settings.register_profile("nbsymple", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("nbsymple")


def pytest_configure(config):
    seed = os.environ.get("NBSYMPLE_TEST_SEED", "")
    if seed and not (seed.isdigit() and int(seed) < 2**32):
        raise pytest.UsageError(f"NBSYMPLE_TEST_SEED must be a whole number below 2**32 (a printed seed), got {seed!r}")
    _refuse_a_checkout_without_commits()
    config.addinivalue_line("markers", f"{UNSHARED}: an MPI job (2 to 4 ranks that poll the cores): never beside "
                                       "another one")
    config.addinivalue_line("markers", f"{LONG}: takes tens of seconds (a child pytest in the CUDA simulator, "
                                       "the gate): started first, so that no worker is left with it at the end")


def _refuse_a_checkout_without_commits():
    """The suite tests the tools that measure commits (the gate, asv's history, the paper's stamp)
    on this checkout's own: in a source archive (no .git) or a clone git will not read, 29 of its
    tests failed, each with git's words; one sentence instead, before any test runs."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tools.tracking import checkout_problem
    if (problem := checkout_problem(ROOT)) is not None:
        raise pytest.UsageError(f"the suite tests the tools that measure this checkout's commits, and {problem}")


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(config, items):
    """The `unshared` tests first (their worker starts with its long module), then the `long`
    ones, then `WHOLE_MODULES`, then the rest as collected: the order in which xdist deals them
    (`pytest_xdist_make_scheduler`)."""
    items.sort(key=lambda item: (item.get_closest_marker(UNSHARED) is None, item.get_closest_marker(LONG) is None,
                                 _module(item.nodeid) not in WHOLE_MODULES))


@pytest.hookimpl(optionalhook=True)          # a hook of xdist's: unknown in a run without it
def pytest_xdist_make_scheduler(config, log):
    """xdist's scope scheduling in the order above (not reordered by size): each test is dealt
    alone, each of `WHOLE_MODULES` whole to one worker; a worker is given more when it has two
    or fewer tests left. (xdist's own `--dist loadgroup` cannot group under pytest 9.2, whose
    nodes no longer take the group's suffix.) Another `--dist` asked for is xdist's own."""
    if config.getvalue("dist") != "load":                  # what -n gives unless told otherwise
        return None
    from xdist.scheduler import LoadScopeScheduling

    class InOrder(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _module(nodeid) if _module(nodeid) in WHOLE_MODULES else nodeid

    config.option.loadscopereorder = False
    return InOrder(config, log)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Under xdist, a test marked `unshared` holds the session's jobs lock (a file in its folder),
    so that no two run at once: an MPI job beside another slows both, and their ranks poll the
    cores while they wait. Beside the rest of the suite they run: on two cores, the jobs alone
    left the other worker idle (docs/testing.md). Taken around the whole test, so a wait is not
    counted in its durations."""
    if not hasattr(item.config, "workerinput") or item.get_closest_marker(UNSHARED) is None:
        yield                        # a plain run or a child pytest (no worker), or any other test
        return
    with open(os.path.join(os.environ[SESSION_FOLDER], "jobs.lock"), "a") as jobs:
        fcntl.flock(jobs, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(jobs, fcntl.LOCK_UN)


@pytest.fixture
def rng():
    """A fresh random generator per test, its seed printed (shown when the test fails);
    NBSYMPLE_TEST_SEED=<seed> replays a failure."""
    seed = int(os.environ.get("NBSYMPLE_TEST_SEED") or np.random.SeedSequence().entropy % (2**32))
    print(f"random seed {seed} (replay with NBSYMPLE_TEST_SEED={seed})")
    return np.random.default_rng(seed)
