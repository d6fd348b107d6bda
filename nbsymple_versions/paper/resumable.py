"""A science run that survives interruption: snapshots at chosen steps, a checkpoint
(`nbsymple_versions.runs.checkpoint`) every K steps, and SIGINT/SIGTERM write a last checkpoint
and stop with `Interrupted`. The same call then resumes where the checkpoint left off, bit for
bit (`Simulation.restore`), as long as the run's parameters are unchanged; other parameters,
or `rerun=True`, start afresh.

A run folder holds `snap_<step>.npz`, `checkpoint.nbsc` while the run is unfinished, and
`run.json` once it is finished (its parameters, wall time summed over sessions, how many
sessions it took and how many of them a signal ended, and provenance).
"""
from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

from ..runs.checkpoint import CheckpointError, load, save, temporary_files
from ..runs.progress import Progress
from ..runs.locks import PathBusy as Busy, hold  # noqa: F401  (Busy: what paper/main catches)
from ..runs.signals import StopSignals
from ..simulation import Simulation
from ..runs.snapshots import list_snapshots, write_snapshot

RUN_FILE = "run.json"
CHECKPOINT = "checkpoint.nbsc"


class Interrupted(Exception):
    """SIGINT or SIGTERM stopped a run after a whole step; its checkpoint is written."""

    def __init__(self, message: str, signum: int):
        super().__init__(message)
        self.signum = signum


def _resumable(folder: Path, params: dict):
    """(header, simulation) from the folder's checkpoint if it belongs to a run with these
    parameters, else None (a checkpoint that cannot be read is ignored: the run starts afresh)."""
    try:
        header, record, state = load(folder / CHECKPOINT)
    except CheckpointError:
        return None
    if header.get("params") != json.loads(json.dumps(params)):
        return None
    return header, Simulation.restore(state, record)


def _clean(folder: Path):
    for old in list_snapshots(folder):
        old.unlink()
    for name in (RUN_FILE, CHECKPOINT):
        (folder / name).unlink(missing_ok=True)


def _add_session(header: dict, provenance, sim):
    """Record where this session runs as it starts: the code imported now, not at the end."""
    if provenance:
        header.setdefault("session_provenance", []).append(provenance(sim))


def _provenance(sessions: list[dict]) -> dict:
    """run.json's provenance: the first session's, each field that later sessions changed (a
    resume at another commit or on another machine) written as 'a then b'; every session's
    record under `session_provenance`."""
    merged = dict(sessions[0])
    for key in merged.keys() - {"date"}:
        values = list(dict.fromkeys(str(p.get(key, "?")) for p in sessions))
        if len(values) > 1:
            merged[key] = " then ".join(values)
    return {"provenance": merged, "session_provenance": sessions}


def run(folder, build, params: dict, snapshot_steps, label: str, progress: bool = True, extra=None,
        checkpoint_every: int = 500, rerun: bool = False, provenance=None) -> dict:
    """Step the simulation `build()` makes to the last of `snapshot_steps`, writing a snapshot at
    step 0 and at each of them and a checkpoint every `checkpoint_every` steps; resume from the
    folder's checkpoint when it has the same `params` (unless `rerun`). Returns run.json's
    content. `provenance(sim)`, called as each session starts, says where it ran."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with hold(folder, "the science run's folder", folder=True):
        return _run(folder, build, params, snapshot_steps, label, progress, extra, checkpoint_every, rerun,
                    provenance)


def _run(folder, build, params, snapshot_steps, label, progress, extra, checkpoint_every, rerun, provenance):
    for tmp in temporary_files(folder / CHECKPOINT):
        tmp.unlink(missing_ok=True)
    targets = sorted({int(k) for k in snapshot_steps if k > 0})
    total = targets[-1]
    t0 = time.perf_counter()
    with StopSignals() as signals:
        found = None if rerun else _resumable(folder, params)
        if found is None:
            _clean(folder)
            sim = build()
            header = {"params": params, "wall_seconds": 0.0, "sessions": 1, "interrupted": 0,
                      "snapshots": [write_snapshot(folder, sim.state, 0).name]}
            _add_session(header, provenance, sim)
            save(folder / CHECKPOINT, header, sim)
        else:
            header, sim = found
            header["sessions"] += 1
            _add_session(header, provenance, sim)
            if progress:
                print(f"{label}: resuming at step {sim.steps_done} of {total} from {folder.name}/{CHECKPOINT}",
                      file=sys.stderr, flush=True)
        before, start = header["wall_seconds"], sim.steps_done
        bar = Progress(label if not start else f"{label} (resumed at step {start})", total - start,
                       enabled=progress)
        wanted = set(targets)

        def on_step(k):
            step = sim.steps_done
            if step in wanted:
                header["snapshots"].append(write_snapshot(folder, sim.state, step).name)
            bar.update(step - start)
            stop = signals.signum is not None and step < total
            if stop or step % checkpoint_every == 0 or step == total:
                header["wall_seconds"] = round(before + time.perf_counter() - t0, 2)
                header["interrupted"] += int(stop)
                save(folder / CHECKPOINT, header, sim)
            if stop:
                name = signal.Signals(signals.signum).name
                raise Interrupted(f"{label} stopped by {name} after step {step} of {total} (checkpoint "
                                  f"{folder.name}/{CHECKPOINT}); the same command resumes it", signals.signum)

        if signals.signum is not None and start < total:
            header["interrupted"] += 1
            save(folder / CHECKPOINT, header, sim)
            raise Interrupted(f"{label} stopped at step {start} of {total} before stepping (checkpoint "
                              f"{folder.name}/{CHECKPOINT}); the same command resumes it", signals.signum)
        sim.step(total - start, on_step)
    result = {"params": params, "steps": total, "snapshots": sorted(set(header["snapshots"])),
              "wall_seconds": header["wall_seconds"], "sessions": header["sessions"],
              "interrupted": header["interrupted"], "units": sim.state.units.as_dict(), "finished": True,
              **(_provenance(header["session_provenance"]) if provenance else {}), **(extra or {})}
    (folder / RUN_FILE).write_text(json.dumps(result, indent=2) + "\n")
    (folder / CHECKPOINT).unlink(missing_ok=True)
    return result
