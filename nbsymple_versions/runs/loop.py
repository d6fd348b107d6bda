"""The one loop of a run that survives interruption: `nbsymple run` (driver.py) and the paper's
science runs (paper/resumable.py) both step through `step_run`, driven by the run's header, the
`"run"` part of its checkpoint (its schema: `checkpoint.check_run`)."""
from pathlib import Path

from .snapshots import snapshot_path


class Stopped(Exception):
    """A stop asked for (a signal) ended the run after a whole step; its checkpoint is written."""


def cadence(run: dict) -> int:
    """The run's snapshot cadence: its `every`, or where none was given to a run of no steps yet
    (None), its steps (so that its resume to more steps snapshots as a new run of them would)."""
    return run["every"] or max(run["steps"], 1)


def snapshot_due(run: dict, step: int) -> bool:
    """Whether the run writes a snapshot of `step`: every `cadence` steps, at its last step and at
    each of its `snapshot_steps` (where it lists some), into its `snapshots` folder (if any)."""
    return run["snapshots"] is not None and (step % cadence(run) == 0 or step == run["steps"]
                                             or step in (run.get("snapshot_steps") or ()))


def snapshots_after(run: dict, start: int) -> int:
    """How many snapshots the run writes after step `start` (those `snapshot_due` says), counted
    without stepping."""
    if run["snapshots"] is None:
        return 0
    total, every = run["steps"], cadence(run)
    others = {s for s in (*(run.get("snapshot_steps") or ()), total) if start < s <= total and s % every}
    return max(total // every - start // every, 0) + len(others)


def step_run(sim, run: dict, *, fresh: bool, snapshot, checkpoint, stop_asked, progress):
    """Step `sim` to the run's total `run["steps"]`. First the snapshot of the step it starts from
    where one is due and not on disk, and a checkpoint of a `fresh` run; then after each step its
    snapshot where due (`snapshot(step)`), a checkpoint every `checkpoint_every` steps, at the end
    and when `stop_asked()` (`checkpoint(stopping)`), `progress(steps done here)`. A stop asked
    for (before the first step too) raises Stopped once its checkpoint is written."""
    start, total, every = sim.steps_done, run["steps"], run["checkpoint_every"]
    if snapshot_due(run, start) and not snapshot_path(Path(run["snapshots"]), start,
                                                      run.get("snapshot_format", "npz")).exists():
        snapshot(start)
    if fresh:
        checkpoint(False)
    if stop_asked():
        checkpoint(True)
        raise Stopped

    def on_step(k):
        step = sim.steps_done
        if snapshot_due(run, step):
            snapshot(step)
        stop = stop_asked()              # a signal during the snapshot's write too: this step is the last
        if stop or step % every == 0 or step == total:
            checkpoint(stop)
        progress(step - start)
        if stop:
            raise Stopped
    sim.step(total - start, on_step)
