"""Version F across MPI ranks: seconds per dp leapfrog step and the share of `communicate`,
with 1 and 2 ranks (`mpiexec -n 1`, `-n 2`) at every N of the grid.

MPI cannot start inside asv's benchmark process, so `setup_cache` launches one job per
(ranks, N): `mpiexec -n RANKS python -m <the public mpi_timing> --n N` (the timing state
of this suite, seed 2011; warm steps until the clock holds a second or 1000 steps are done,
at least 3, rank 0's TaskClock) and
keeps its JSON line; the `track_` methods report it. Seconds per step are lower-is-better; the
communicate share reads neither way (a faster kernel raises it: asv.conf.json keeps it out of the
regression search). Ranks share the machine's cores (numba threads = cores / ranks on a node,
`mpi.pipeline`), so the two rows compare one rank with all cores against two ranks with half
each, plus the exchange.

Skipped, with the reason, where mpi4py or `mpiexec` (the `mpi` extra: mpi4py and MPICH) is
missing, for an N outside this grid, and over the grid's budget for F (that of its host kernels).
"""
import itertools
import json
import os
from pathlib import Path
import shutil
import subprocess
import sys
from importlib.util import find_spec

import numba

from .common import Benchmark, cached_result, measure_each
from .grid import AXES, NS, bench_threads, budget_reason, left_out
from .package import build_pipeline, public

RANKS = (1, 2)
LAUNCH_TIMEOUT = 900            # seconds for one mpiexec job (start, compile, steps)


def mpiexec() -> str | None:
    """The `mpiexec` next to this interpreter (the mpich wheel installs it there), else on PATH."""
    here = Path(sys.executable).parent / "mpiexec"
    return str(here) if here.exists() else shutil.which("mpiexec")


LEGACY_JOB = "nbsymple_versions.runs.mpi_timing"     # the job's path at commits before it was public


def job() -> str | None:
    """The module path of F's timing job (docs/mpi.md) at the measured commit, run with -m: its
    public name's module, else its old path where that commit has it, else None."""
    if public.has("mpi_timing"):
        return public.mpi_timing.__name__
    parent = LEGACY_JOB.rsplit(".", 1)[0]
    return LEGACY_JOB if find_spec(parent) is not None and find_spec(LEGACY_JOB) is not None else None


def mpi_reason():
    """Why F's MPI benchmarks cannot run here, or None."""
    if find_spec("mpi4py") is None:
        return "mpi4py is not installed (pip install 'nbsymple-versions[mpi]': mpi4py and MPICH)"
    if mpiexec() is None:
        return "no mpiexec next to this Python or on PATH (pip install mpich)"
    if job() is None:
        return "this commit has no MPI timing job"
    return None


class MpiStep(Benchmark):
    """F's dp leapfrog step across `ranks` MPI ranks at N bodies."""

    version = "1"
    params = [list(RANKS), list(AXES["n"])]
    param_names = ["ranks", "n"]
    timeout = 120

    def skip_reason(self, ranks, n):
        """Why (ranks, n) does not run on this machine and grid, or None (cheap, builds nothing)."""
        if reason := left_out("F"):
            return reason
        reason = mpi_reason()
        if reason:
            return f"version F: {reason}"
        if n not in NS:
            return f"N = {n} is not in this grid (N = {', '.join(map(str, NS))}; NBSYMPLE_BENCH_GRID)"
        threads = bench_threads()            # a hunt: '+2' failed isdigit, and F ran more threads than it asks
        if threads is not None and threads < ranks:      # each rank runs one thread at least: more than k
            return f"{ranks} ranks run {ranks} threads at least, more than NBSYMPLE_BENCH_THREADS={threads}"
        return budget_reason("F", n)

    def setup_cache(self):
        if any(self.skip_reason(*p) is None for p in itertools.product(*self.params)):
            self.validate("F", "dp")      # as every setup: a wrong F was timed (found by a hunt); one rank is B's bits
        return measure_each(itertools.product(*self.params), self.measure)

    setup_cache.timeout = 3600

    def node_options(self) -> dict:
        """F's options as the timed jobs run it: the jobs' ranks start without the CUDA simulator,
        so under it both they and the validation take node version B (a hunt: E, simulated, was
        validated and B timed); elsewhere F's default, the same in both."""
        return {"node_version": "B"} if numba.config.ENABLE_CUDASIM else {}

    def make_pipeline(self, letter, state, precision, clock=None):
        return build_pipeline(letter, state, precision, clock, **self.node_options())

    def measure(self, ranks, n) -> dict:
        reason = self.skip_reason(ranks, n)
        if reason:
            raise NotImplementedError(reason)
        cmd = [mpiexec(), "-n", str(ranks), sys.executable, "-m", job(), "--n", str(n),
               *(f"--{k.replace('_', '-')}={v}" for k, v in self.node_options().items())]
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
        env["NUMBA_CACHE_DIR"] = numba.config.CACHE_DIR           # the ranks load the suite's kernels
        if (threads := bench_threads()) is not None:                       # the machine's `-<k>threads`:
            env["NUMBA_NUM_THREADS"] = str(max(1, threads // ranks))        # k threads shared by the ranks
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace",
                           timeout=LAUNCH_TIMEOUT, env=env)    # mpiexec passes its stdin on: data there ended the job
        if p.returncode != 0:
            raise RuntimeError(f"mpiexec -n {ranks} (N = {n}) exited with {p.returncode}: {p.stderr[-2000:]}")
        return json.loads(p.stdout.strip().splitlines()[-1])

    def setup(self, results, ranks, n):
        self.result = cached_result(results, (ranks, n))

    def track_seconds_per_step(self, results, ranks, n):
        """Wall seconds of one warm dp leapfrog step of F (rank 0's clock, all five tasks)."""
        return self.result["seconds_per_step"]

    track_seconds_per_step.unit = "seconds"

    def track_communicate_share(self, results, ranks, n):
        """Percentage of that step in the ranks' blocking collectives (`communicate`): the exchange
        of positions at each force evaluation and the finite check's one-flag Allreduce, each with
        the wait for the slower rank."""
        return self.result["task_shares"]["communicate"]

    track_communicate_share.unit = "%"
