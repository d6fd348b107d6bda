"""`nbsymple run --version F`: the fresh runs of `runner.run`, across MPI ranks.

    mpiexec -n 4 nbsymple run --version F --n 65536 --scheme si6a --steps 100 --snapshots out/

Every rank parses the same command line and makes the same calls; the seed and run id are
rank 0's, the snapshot folder is checked and written by rank 0 alone (its verdict is shared,
so every rank stops together on a refusal), and rank 0 alone prints the report, in the same
words and JSON fields as A-E. Checkpoints and `--resume` are not supported for F yet.
"""
from contextlib import redirect_stdout
import io
from pathlib import Path
import secrets
import sys
import uuid

from ..progress import Progress


def run(args, parser) -> int:
    """`nbsymple run` for version F; returns the exit status or raises runner.RunStop."""
    from .. import snapshots
    from ..core.ics import make_cluster
    from ..runner import DEFAULT_CHECKPOINT_EVERY, RunStop, memory_problem, report, user_values
    from ..simulation import NonFiniteState
    from .comm import world as _world
    from .simulation import MpiSimulation, write_snapshot

    given = [f"--{name.replace('_', '-')}" for name in ("checkpoint", "checkpoint_every", "resume")
             if getattr(args, name, None) is not None]
    if given:
        raise RunStop(f"version F does not write checkpoints or resume yet, so {', '.join(given)} cannot be given")
    if args.every is not None and args.snapshots is None:
        raise RunStop("--every needs --snapshots DIR")
    try:
        world = _world()
    except RuntimeError as e:
        raise RunStop(f"version F is not available: {e}") from None
    ok, reason = world.agree(not (problem := memory_problem(args.n)), problem or "")
    if not ok:
        raise RunStop(reason)
    seed = args.seed if args.seed is not None else world.broadcast_object(secrets.randbits(32))
    run_ = {"run_id": world.broadcast_object(uuid.uuid4().hex), "n": args.n, "seed": seed,
            "seed_chosen": args.seed is None, "steps": args.steps,
            "snapshots": None if args.snapshots is None else str(args.snapshots.resolve()),
            "every": args.every or args.steps or 1, "checkpoint_every": DEFAULT_CHECKPOINT_EVERY}
    folder = None if args.snapshots is None else Path(run_["snapshots"])
    if folder is not None:
        reason = ""
        if world.is_root:
            try:
                folder.mkdir(parents=True, exist_ok=True)
                snapshots.prepare_folder(folder, run_["run_id"])
            except OSError as e:
                reason = f"cannot write snapshots into {folder}: {e.strerror or e}"
            except snapshots.SnapshotError as e:
                reason = str(e)
        ok, reason = world.agree(not reason, reason)
        if not ok:
            raise RunStop(reason.split(": ", 1)[1])      # rank 0's sentence

    options = {"node_version": args.node_version} if getattr(args, "node_version", None) else {}
    progress = Progress("initial energy, O(N^2)", args.n, unit="body",
                        enabled=world.is_root and (sys.stderr.isatty() or args.n > 20000))
    with user_values():
        state = make_cluster(args.n, seed=seed)
        sim = MpiSimulation(state, "F", args.scheme, args.precision, args.dt,
                            progress=lambda done, total: progress(done), **options)

    total, every = run_["steps"], run_["every"]
    steps = Progress(f"version F, {world.size} rank{'s' if world.size > 1 else ''}", total,
                     enabled=world.is_root and sys.stderr.isatty())
    if folder is not None:
        write_snapshot(folder, sim.state, 0, run_["run_id"])

    def on_step(k):
        if folder is not None and (k % every == 0 or k == total):
            write_snapshot(folder, sim.state, k, run_["run_id"])
        steps(k)

    try:
        sim.step(total, on_step)
    except NonFiniteState as e:        # raised by every rank together (MpiSimulation._check_finite)
        raise RunStop(f"{e}, so the run stopped there", status=3) from None
    if world.is_root:
        return report(args, run_, sim, folder, None, 0)
    with redirect_stdout(io.StringIO()):     # the errors are collective: every rank computes them
        return report(args, run_, sim, folder, None, 0)
