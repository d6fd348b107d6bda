"""Time version F's steps across the ranks of this job: one JSON line from rank 0.

    mpiexec -n 2 python -m nbsymple_versions.instruments.mpi_timing --n 16384 --scheme leapfrog --precision dp

The cluster is the package's `timing_state` (core/ics.py), the asv suite's. After
the warm-up (compilation), one step is timed; rank 0 then chooses how many more make at
least `--min-seconds` (and `--min-steps`) and tells every rank, so all ranks step alike. The
result is rank 0's TaskClock: seconds per step and the share of each task, communicate
included. `benchmarks/mpi.py` launches this for asv; docs/mpi.md uses its numbers.
"""
import json
import math
import sys

from ..arguments import Parser, number_above, whole_number_argument
from ..core.ics import timing_state
from ..core.options import add_option_arguments
from ..core.schemes import SCHEMES
from ..core.vocabulary import PRECISIONS
from ..core.work import WorkRefused, check_time, memory_problem
from ..simulation import Simulation
from ..versions import VersionUnavailable, get_version, option_flags, simulated


def measure(n: int, scheme: str = "leapfrog", precision: str = "dp", min_steps: int = 3,
            min_seconds: float = 1.0, max_steps: int = 1000, node_version=None) -> dict:
    """Collective: every rank calls it; rank 0's clock is returned (on every rank)."""
    options = {"node_version": node_version} if node_version else {}
    state = timing_state(n)
    sim = Simulation(state, "F", scheme, precision, diagnostics=False, **options)
    sim.step(1)
    first = sim.clock.total
    more = max(min_steps, math.ceil(min(max_steps, min_seconds / max(first, 1e-9)))) - 1    # (1e308 s: inf)
    sim.step(sim.world.broadcast_object(more))
    return {"ranks": sim.world.size, "n": n, "scheme": scheme, "precision": precision, "steps": sim.steps_done,
            "seconds_per_step": sim.seconds_per_step, "task_seconds": dict(sim.clock.seconds),
            "task_shares": sim.clock.shares(), "threads_per_rank": sim.threads, "device": sim.device,
            "node_version": sim.forces.node_version, "compile_seconds": sim.compile_seconds,
            "mpi": sim.world.library}


def main(argv=None) -> int:
    p = Parser(prog="python -m nbsymple_versions.instruments.mpi_timing", doc=__doc__)
    p.add_argument("--n", type=whole_number_argument(2), default=16384, help="number of bodies (default 16384)")
    p.add_argument("--scheme", type=str.lower, choices=SCHEMES, default="leapfrog", help="leapfrog or si6a")
    p.add_argument("--precision", type=str.lower, choices=PRECISIONS, default="dp", help="sp, dp or dsp")
    p.add_argument("--min-steps", type=whole_number_argument(1), default=3, help="least steps timed (default 3)")
    p.add_argument("--min-seconds", type=number_above(0, or_equal=True), default=1.0,
                   help="least seconds timed (default 1), in at most 1000 steps or --min-steps")
    add_option_arguments(p.add_argument, option_flags(), ("node_version",))
    a = p.parse_args(argv)
    if (problem := memory_problem(a.n, "--n")) is not None:
        p.refuse(problem)
    try:
        check_time(a.n, a.min_steps, "--min-steps", "a smaller --n or --min-steps",
                   simulated("F", {"node_version": a.node_version}))
    except WorkRefused as e:
        p.refuse(str(e))
    try:
        result = measure(a.n, a.scheme, a.precision, a.min_steps, a.min_seconds, node_version=a.node_version)
    except VersionUnavailable as e:         # a node version this machine cannot run (D, E without a GPU)
        p.refuse(str(e))
    if get_version("F").world().is_root:
        print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    from ..entry import command
    sys.exit(command("python -m nbsymple_versions.instruments.mpi_timing", main, ranks=True))
