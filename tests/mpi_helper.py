"""Run by tests/test_mpi.py under `mpiexec -n K python tests/mpi_helper.py COMMAND ...`.

    compare OUT N SEED STEPS [NODE [PRECISIONS [SCHEMES]]]
                                      F's `Simulation` in each precision x scheme (comma lists;
                                      default all);
                                      rank 0 saves the gathered final states to OUT (.npz) and
                                      what the ranks saw to OUT.json
    fail RANK CALL -- RUN-ARGS...     `nbsymple run RUN-ARGS` in which rank RANK raises at
                                      its CALL-th kick (a bug in one rank, mid-run)
    differ OUT                        F's `Simulation` with rank 1 given another dt, precision,
                                      scheme, then steps: rank R writes what it raised to OUT.R
"""
import json
import sys
import time

import numpy as np

from nbsymple_versions.core.ics import make_cluster
from nbsymple_versions.core.vocabulary import PRECISIONS
from nbsymple_versions.simulation import Simulation
from nbsymple_versions.mpi import world
from nbsymple_versions.mpi.pipeline import MpiPipeline

SCHEMES = ("leapfrog", "si6a")


def compare(out, n, seed, steps, node="", precisions=",".join(PRECISIONS), schemes=",".join(SCHEMES)):
    w = world()
    options = {"node_version": node} if node else {}
    arrays, info = {}, {}
    for precision in precisions.split(","):
        for scheme in schemes.split(","):
            sim = Simulation(make_cluster(int(n), seed=int(seed)), "F", scheme, precision, **options)
            sim.step(int(steps))
            errors = sim.errors()                      # collective: gathers the state
            key = f"{precision}_{scheme}"
            arrays[f"{key}_x"], arrays[f"{key}_v"] = sim.state.x.copy(), sim.state.v.copy()
            info[key] = {"errors": errors, "calls": sim.clock.calls, "seconds": sim.clock.seconds,
                         "device": sim.device, "node_version": sim.forces.node_version,
                         "slice": [sim.forces.start, sim.forces.stop], "steps_done": sim.steps_done}
    slices = (w.comm.gather(info["dp_leapfrog"]["slice"], root=0) if w.comm is not None
              else [info["dp_leapfrog"]["slice"]])
    if w.is_root:
        np.savez(out, **arrays)
        with open(str(out) + ".json", "w") as f:
            json.dump({"size": w.size, "slices": slices, "runs": info}, f)


def fail(rank, call, run_args):
    from nbsymple_versions.cli import main
    kick, calls = MpiPipeline.kick, [0]

    def failing_kick(self, v, a, h):
        calls[0] += 1
        if self.world.rank == rank and calls[0] == call:
            print(f"raising at {time.time()!r}", file=sys.stderr, flush=True)
            raise RuntimeError(f"injected failure on rank {rank} at kick {call}")
        return kick(self, v, a, h)

    MpiPipeline.kick = failing_kick
    return main(["run", *run_args])


def differ(out):
    other = {"dt": {"dt": 2e-3}, "precision": {"precision": "sp"}, "scheme": {"scheme": "si6a"}, "steps": {}}
    rank, said = world().rank, []
    for what, settings in other.items():
        try:
            sim = Simulation(make_cluster(8, seed=4), "F", **{"dt": 1e-3, **(settings if rank == 1 else {})})
            sim.step(5 if rank == 1 else 4)
            said.append(f"{what}: stepped")
        except ValueError as e:
            said.append(f"{what}: {e}")
    with open(f"{out}.{rank}", "w") as f:          # (lines the ranks print to one stdout interleave)
        f.write("\n".join(said) + "\n")


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "compare":
        compare(*args)
    elif command == "differ":
        differ(*args)
    elif command == "fail":
        split = args.index("--")
        sys.exit(fail(int(args[0]), int(args[1]), args[split + 1:]))
    else:
        sys.exit(f"unknown command {command!r}")
