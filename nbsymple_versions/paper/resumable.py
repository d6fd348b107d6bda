"""A science run that survives interruption: snapshots at chosen steps, a checkpoint
(`nbsymple_versions.runs.checkpoint`) every K steps, and
SIGINT/SIGTERM/SIGHUP/SIGXCPU/SIGUSR1/SIGUSR2/SIGALRM write a last checkpoint and stop with `Interrupted`,
all by `nbsymple run`'s loop (`runs.loop.step_run`) and its checkpoint header; a write that fails (a
full disk) stops it with `WriteFault`, naming the last good checkpoint. The same call then resumes
where the checkpoint left off, bit for bit (`Simulation.restore`), as long as the run's parameters
are unchanged; `rerun=True` starts afresh. A folder holding a run of other parameters (finished,
or stopped with its checkpoint) is refused with `OtherRun`: hours of a run of another version or
precision were removed in silence before.

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

RUN_FILE = "run.json"
CHECKPOINT = "checkpoint.nbsc"


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


def kept_params(folder: Path) -> tuple[dict | None, str]:
    """(parameters, what it is in words) of the science run kept in `folder`: a finished one's
    (its run.json), else a stopped one's (its checkpoint); (None, "") where it holds neither.
    FileRefused, CheckpointError, KeyError or TypeError where what it holds cannot be read."""
    record = read_json(folder / RUN_FILE, "run record") if (folder / RUN_FILE).exists() else None
    if isinstance(record, dict) and isinstance(record.get("params"), dict):
        return record["params"], "a finished run"
    if (folder / CHECKPOINT).exists():
        run, record, _ = load(folder / CHECKPOINT)
        return run["science"]["params"], f"a run stopped at step {record['steps_done']} (its checkpoint)"
    return None, ""


def _other_run(folder: Path, params: dict) -> str | None:
    """What `folder` holds of a run with other parameters than `params`, in words; None where it
    holds none (or one nothing can read: that is no run to keep)."""
    try:
        held, what = kept_params(folder)
    except CheckpointError as e:        # the run it holds is not thrown away in silence
        return f"a checkpoint nbsymple cannot resume ({e})"
    except (FileRefused, KeyError, TypeError):
        return None
    wanted = json.loads(json.dumps(params))
    if not isinstance(held, dict) or held == wanted:
        return None
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
        if found is None and not rerun and (other := _other_run(folder, params)) is not None:
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
