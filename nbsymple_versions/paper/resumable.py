"""A science run that survives interruption: snapshots at chosen steps, a checkpoint
(`nbsymple_versions.runs.checkpoint`) every K steps, and
SIGINT/SIGTERM/SIGHUP/SIGXCPU/SIGUSR1/SIGUSR2/SIGALRM write a last checkpoint and stop with `Interrupted`,
all by `nbsymple run`'s loop (`runs.loop.step_run`) and its checkpoint header; a write that fails (a
full disk) stops it with `WriteFault`, naming the last good checkpoint. The same call then resumes
where the checkpoint left off, bit for bit (`Simulation.restore`), as long as the run's parameters
are unchanged; `rerun=True` starts afresh. A folder holding a run of other parameters (finished,
or stopped with its checkpoint) is refused with `OtherRun`: hours of a run of another version or
precision were removed in silence before; so is one whose run a new one would throw away
otherwise (`kept_problem`: a finished run lacking snapshots, a record or checkpoint that cannot be read).

A run folder holds `snap_<step>.npz`, `checkpoint.nbsc` while the run is unfinished, and
`run.json` once it is finished (its parameters, wall time summed over sessions, how many
sessions it took and how many of them a signal ended, and provenance).
"""
from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
import uuid

from ..environment import os_reason
from ..runs.checkpoint import CheckpointError, check_run, load, save, temporary_files
from ..runs.errors import writable
from ..runs.locks import PathBusy as Busy, hold, how_moved, identity, moved  # noqa: F401  (Busy: paper/main's)
from ..runs.loop import Stopped, step_run
from ..runs.paths import FileRefused, read_json, write_file
from ..runs.progress import Progress
from ..runs.signals import StopSignals
from ..runs.snapshots import list_snapshots, remove_temporaries, write_snapshot
from ..simulation import Simulation
from . import records

RUN_FILE = "run.json"
CHECKPOINT = "checkpoint.nbsc"
FINISHED = "a finished run"


class Interrupted(Exception):
    """A signal to stop (SIGINT, SIGTERM, SIGHUP, SIGXCPU, SIGUSR1, SIGUSR2, SIGALRM) stopped a run after a
    whole step; its checkpoint is written."""

    def __init__(self, message: str, signum: int):
        super().__init__(message)
        self.signum = signum


class OtherRun(ValueError):
    """The run's folder holds a run of other parameters, kept: `rerun=True` replaces it."""


class WriteFault(Exception):
    """A write failed (a full disk, a folder made read-only): the run stopped there; the message
    names the last good checkpoint, which the same call resumes."""


def _resumable(folder: Path, params: dict):
    """(run header, simulation) from the folder's checkpoint if it belongs to a run with these
    parameters, else None (a checkpoint that cannot be read is ignored: the run starts afresh)."""
    try:
        run, record, state = load(folder / CHECKPOINT)
        check_run(folder / CHECKPOINT, run)
    except CheckpointError:
        return None
    if run["science"] is None or run["science"]["params"] != json.loads(json.dumps(params)):
        return None
    try:
        return run, Simulation.restore(state, record)
    except ValueError:                   # a record this state cannot continue (`check_record`): afresh
        return None


def _header(folder: Path, params: dict, targets: list[int], checkpoint_every: int, sim) -> dict:
    """A fresh science run's header, in `nbsymple run`'s schema (`checkpoint.check_run`):
    snapshots at step 0, at `targets` and at the last; `science` its sessions."""
    return {"run_id": uuid.uuid4().hex, "n": sim.state.n, "seed": int(params["seed"]), "seed_chosen": False,
            "steps": targets[-1], "snapshots": str(folder.resolve()), "every": targets[-1],
            "snapshot_steps": targets, "checkpoint_every": checkpoint_every, "ics": None, "mass_classes": None,
            "snapshot_format": "npz",
            "science": {"params": params, "wall_seconds": 0.0, "sessions": 1, "interrupted": 0, "written": []}}


def run_record(folder) -> dict | None:
    """The run record (`RUN_FILE`) in `folder`, read through `runs.paths` (a regular file of
    bounded JSON, each field checked by `records.run_problem`); None where there is none,
    FileRefused (one sentence) for one that is no record."""
    path = Path(folder) / RUN_FILE
    if not os.path.lexists(path):
        return None
    run = read_json(path, "run record")
    if not isinstance(run, dict):
        raise FileRefused(f"run record {path} holds a JSON {type(run).__name__}, not an object")
    if (why := records.run_problem(run)) is not None:
        raise FileRefused(f"run record {path} is not one that nbsymple paper wrote: {why}")
    return run


def snapshots_lacking(folder: Path, run: dict) -> str | None:
    """What a finished run's folder lacks of the snapshots its record (`run_record`) lists, in
    words ("lacks 2 of the snapshots its run.json lists (snap_00000062.npz, ...)"); None where
    it has them all."""
    gone = [name for name in run["snapshots"] if not (Path(folder) / name).is_file()]
    return f"lacks {len(gone)} of the snapshots its {RUN_FILE} lists ({gone[0]}{', ...' if len(gone) > 1 else ''})" \
        if gone else None


def kept_params(folder: Path) -> tuple[dict | None, str]:
    """(parameters, what it is in words) of the science run kept in `folder`: a finished one's
    (its run.json), else a stopped one's (its checkpoint); (None, "") where it holds neither.
    FileRefused for a run.json that is no run record (`run_record`), CheckpointError for a
    checkpoint that cannot be read or is not a science run's."""
    if (record := run_record(folder)) is not None:
        return record["params"], FINISHED
    if os.path.lexists(folder / CHECKPOINT):
        run, record, _ = load(folder / CHECKPOINT)
        science = run.get("science")
        if not isinstance(science, dict) or not isinstance(science.get("params"), dict):
            raise CheckpointError(f"{folder / CHECKPOINT} is the checkpoint of a run that is not a science run")
        return science["params"], f"a run stopped at step {record['steps_done']} (its checkpoint)"
    return None, ""


def kept_problem(folder: Path, params: dict) -> str | None:
    """What `folder` holds that a run of `params` would throw away, in words: a run of other
    parameters (finished or stopped), a finished run of these lacking snapshots its run.json
    lists, a record or a checkpoint that cannot be read; None where it holds nothing, or this
    run (finished and whole: it is reused; stopped: it resumes). A hunt: the last three were
    removed in silence and the run made again (hours, at full size)."""
    try:
        held, what = kept_params(folder)
    except CheckpointError as e:
        return f"a checkpoint nbsymple cannot resume ({e})"
    except FileRefused as e:
        return f"a run record that cannot be read ({e})"
    wanted = json.loads(json.dumps(params))
    if held is None or held == wanted and what != FINISHED:
        return None
    if held == wanted:
        lacking = snapshots_lacking(folder, run_record(folder))
        return None if lacking is None else f"a finished run of these parameters that {lacking}"
    differs = [k for k in sorted(set(held) | set(wanted), key=str) if held.get(k) != wanted.get(k)]
    return f"{what} of {', '.join(f'{k} {held.get(k)!r}' for k in differs)} (asked: " \
           f"{', '.join(f'{k} {wanted.get(k)!r}' for k in differs)})"


def _clean(folder: Path):
    for old in list_snapshots(folder):
        old.unlink()
    for name in (RUN_FILE, CHECKPOINT):
        (folder / name).unlink(missing_ok=True)


def _add_session(science: dict, provenance, sim):
    """Record where this session runs as it starts: the code imported now, not at the end."""
    if provenance:
        science.setdefault("session_provenance", []).append(provenance(sim))


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
    folder = writable(Path(folder), "the science run", FileRefused)     # a file in its way: one sentence
    with hold(folder, "the science run's folder", folder=True) as unlocked:
        if unlocked is not None:
            print(f"{label}: {unlocked}", file=sys.stderr, flush=True)
        return _run(folder, build, params, snapshot_steps, label, progress, extra, checkpoint_every, rerun,
                    provenance)


def _run(folder, build, params, snapshot_steps, label, progress, extra, checkpoint_every, rerun, provenance):
    for tmp in temporary_files(folder / CHECKPOINT):
        tmp.unlink(missing_ok=True)
    remove_temporaries(folder)           # a killed session's snapshot in writing (a hunt: kept for good)
    taken = identity(folder, True)       # the lock `run` holds, checked before each write (`locks.moved`)
    targets = sorted({int(k) for k in snapshot_steps if k > 0})
    total = targets[-1]
    t0 = time.perf_counter()
    with StopSignals() as signals:
        found = None if rerun else _resumable(folder, params)
        if found is None and not rerun and (other := kept_problem(folder, params)) is not None:
            raise OtherRun(f"{label}: {folder} holds {other}, which is kept; give --rerun to replace it, or "
                           f"another --out")
        if found is None:
            _clean(folder)
            sim = build()
            run = _header(folder, params, targets, checkpoint_every, sim)
        else:
            run, sim = found
            run["science"]["sessions"] += 1
            if progress:
                print(f"{label}: resuming at step {sim.steps_done} of {total} from {folder.name}/{CHECKPOINT}",
                      file=sys.stderr, flush=True)
        science = run["science"]
        _add_session(science, provenance, sim)
        before, start = science["wall_seconds"], sim.steps_done
        bar = Progress(label if not start else f"{label} (resumed at step {start})", total - start,
                       enabled=progress)

        def stop_asked() -> bool:
            return signals.signum is not None and sim.steps_done < total

        def still_here():
            if moved(folder, True, taken):
                how, went = how_moved(folder, True, taken)
                raise WriteFault(f"{label} stopped after step {sim.steps_done} of {total}: its folder {folder} "
                                 f"{how} while the run held it, so nothing more is written " + (
                                     "under that name; what it wrote, its checkpoint too, went with the folder" if went
                                     else "there; its checkpoint is kept"))

        def snapshot(step):
            still_here()
            science["written"].append(write_snapshot(folder, sim.state, step).name)

        saved = [None if found is None else start]

        def checkpoint(stopping: bool):
            science["wall_seconds"] = round(before + time.perf_counter() - t0, 2)
            science["interrupted"] += int(stopping)
            still_here()
            save(folder / CHECKPOINT, run, sim)
            saved[0] = sim.steps_done

        def kept() -> str:
            return ("no checkpoint was written yet" if saved[0] is None else f"the last good checkpoint, "
                    f"{folder.name}/{CHECKPOINT} (step {saved[0]}), is kept; the same command resumes it")

        try:
            step_run(sim, run, fresh=found is None, snapshot=snapshot, checkpoint=checkpoint, stop_asked=stop_asked,
                     progress=bar.update)
        except OSError as e:             # the machine: a full disk, a folder made read-only
            raise WriteFault(f"{label} stopped after step {sim.steps_done} of {total}: {os_reason(e)}; "
                             f"{kept()}") from None
        except Stopped:
            step = sim.steps_done
            when = f"after step {step} of {total}" if step > start else f"at step {start} of {total} before stepping"
            raise Interrupted(f"{label} stopped by {signal.Signals(signals.signum).name} {when} (checkpoint "
                              f"{folder.name}/{CHECKPOINT}); the same command resumes it", signals.signum) from None
    result = {"params": params, "steps": total, "snapshots": sorted(set(science["written"])),
              "wall_seconds": science["wall_seconds"], "sessions": science["sessions"],
              "interrupted": science["interrupted"], "units": sim.state.units.as_dict(), "finished": True,
              **(_provenance(science["session_provenance"]) if provenance else {}), **(extra or {})}
    try:
        write_file(folder / RUN_FILE, json.dumps(result, indent=2) + "\n")
    except OSError as e:
        (folder / RUN_FILE).unlink(missing_ok=True)
        raise WriteFault(f"{label} finished its {total} steps, but {folder.name}/{RUN_FILE} could not be written: "
                         f"{os_reason(e)}; {kept()}") from None
    (folder / CHECKPOINT).unlink(missing_ok=True)
    return result
