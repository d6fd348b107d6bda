"""Snapshots: one `.npz` file per saved state, written atomically.

Format (all arrays float64, cluster units G = M = r_cl = 1): `positions` (N, 3),
`velocities` (N, 3), `masses` (N,), `time` (), `softening` (), `step` (), the unit system
`r_cl_pc`, `mass_msun`, `velocity_kms`, `time_myr` (scalars) to convert to pc, Msun, km/s and
Myr, and `run_id` (a string naming the run that wrote it; absent in older files). Files are
named `snap_<step:08d>.npz`; each is written to a temporary `.snap_*.npz.tmp` in the same
folder and renamed, so a run killed mid-write never leaves a truncated snapshot (a left-over
temporary is removed by `prepare_folder`).

`fmt="nbsymple"` writes the authors' ASCII layout instead (`authors_format`: `x y z vx vy vz m`
per line, cluster units, no header) as `snap_<step:08d>.txt`, with the folder's
`snapshots.json` holding what that layout has no room for: the run id, the unit system, the
softening and each snapshot's time.
"""
import json
import os
from pathlib import Path
import tempfile
import zipfile

import numpy as np

from .authors_format import FormatError, format_lines, read_nbsymple
from .core.ics import State
from .core.units import Units

FORMATS = ("npz", "nbsymple")
SIDECAR = "snapshots.json"          # for the nbsymple format


class SnapshotError(ValueError):
    """A snapshot that cannot be read, or a folder that holds another run's; one sentence."""


def snapshot_path(folder, step: int, fmt: str = "npz") -> Path:
    return Path(folder) / f"snap_{step:08d}.{'txt' if fmt == 'nbsymple' else 'npz'}"


def write_atomically(path, write, prefix: str, suffix: str = ".tmp") -> Path:
    """Call `write(file)` on a temporary file `prefix<pid>.<random>suffix` in `path`'s folder (the
    writer's process id in its name), fsync it, give it
    the usual permissions (0666 less the umask), rename it to `path` and fsync the folder; the
    temporary is removed if anything fails. A kill at any moment leaves the old file or the new."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f"{prefix}{os.getpid()}.", suffix=suffix, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fchmod(f.fileno(), 0o666 & ~_umask())
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    try:                                   # make the rename itself durable
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
    except OSError:
        pass
    return path


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_snapshot(folder, state: State, step: int, run_id: str = "", fmt: str = "npz") -> Path:
    """Write `state` at `step` into `folder` atomically, as `.npz` or (`fmt="nbsymple"`) in the
    authors' ASCII layout; returns the file's path."""
    if fmt == "nbsymple":
        return _write_nbsymple(folder, state, step, run_id)
    if fmt != "npz":
        raise ValueError(f"unknown snapshot format {fmt!r}; choose one of {', '.join(FORMATS)}")

    def write(f):
        np.savez(f, positions=state.positions, velocities=state.velocities, masses=state.m,
                 time=state.t, softening=state.eps, step=step, run_id=run_id, **state.units.as_dict())
    return write_atomically(snapshot_path(folder, step), write, ".snap_", ".npz.tmp")


def _sidecar(folder) -> dict:
    try:
        return json.loads((Path(folder) / SIDECAR).read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise SnapshotError(f"{Path(folder) / SIDECAR} cannot be read ({type(e).__name__}: {e})") from None


def _write_nbsymple(folder, state: State, step: int, run_id: str) -> Path:
    """The ASCII snapshot, then the folder's sidecar with its time (both atomically)."""
    text = format_lines(state).encode("ascii")
    path = write_atomically(snapshot_path(folder, step, "nbsymple"), lambda f: f.write(text), ".snap_", ".txt.tmp")
    side = _sidecar(folder)
    if side.get("run_id") != run_id:
        side = {}
    side.update(format="nbsymple", layout="x y z vx vy vz m, one body per line, cluster units "
                "(G = M = r_cl = 1), Galactic frame", run_id=run_id, softening=state.eps, **state.units.as_dict())
    side.setdefault("times", {})[str(step)] = state.t
    body = (json.dumps(side, indent=1) + "\n").encode()
    write_atomically(Path(folder) / SIDECAR, lambda f: f.write(body), ".snapshots.", ".json.tmp")
    return path


def _unreadable(path, e) -> SnapshotError:
    return SnapshotError(f"snapshot {path} is truncated or corrupted ({type(e).__name__}: {e})")


def read_snapshot(path) -> tuple[State, int]:
    """Load a snapshot: (state, step). A file that is not a readable snapshot raises
    SnapshotError naming it."""
    path = Path(path)
    if path.suffix == ".txt":
        return _read_nbsymple(path)
    try:
        with np.load(path) as d:
            units = Units(float(d["r_cl_pc"]), float(d["mass_msun"]))
            state = State.from_arrays(d["positions"], d["velocities"], d["masses"], eps=float(d["softening"]),
                                      t=float(d["time"]), units=units)
            return state, int(d["step"])
    except FileNotFoundError:
        raise SnapshotError(f"snapshot {path} does not exist") from None
    except (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile) as e:
        raise _unreadable(path, e) from None


def _read_nbsymple(path: Path) -> tuple[State, int]:
    """An ASCII snapshot with the unit system, softening and time from its folder's sidecar."""
    side = _sidecar(path.parent)
    try:
        step = int(path.stem.split("_", 1)[1])
        units = Units(side["r_cl_pc"], side["mass_msun"]) if side else Units()
        state = read_nbsymple(path, units, eps=side.get("softening"), t=side.get("times", {}).get(str(step), 0.0))
    except FileNotFoundError:
        raise SnapshotError(f"snapshot {path} does not exist") from None
    except (IndexError, ValueError, FormatError) as e:
        raise SnapshotError(f"snapshot {path} cannot be read: {e}") from None
    return state, step


def snapshot_run_id(path) -> str:
    """The run id a snapshot was written with ('' for files from before run ids)."""
    try:
        with np.load(path) as d:
            return str(d["run_id"]) if "run_id" in d.files else ""
    except (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile) as e:
        raise _unreadable(path, e) from None


def list_snapshots(folder) -> list[Path]:
    return sorted(Path(folder).glob("snap_*.npz"))


def prepare_folder(folder, run_id: str) -> list[Path]:
    """Make `folder` ready for run `run_id`: refuse it if it holds snapshots of another run (or
    unreadable ones), then remove temporaries left by a killed writer; returns those removed."""
    text = sorted(Path(folder).glob("snap_*.txt"))
    ascii_run = _sidecar(folder).get("run_id") if text else run_id
    for path in list_snapshots(folder) + text[:1]:
        other = ascii_run if path.suffix == ".txt" else snapshot_run_id(path)
        if other != run_id:
            raise SnapshotError(f"{folder} already holds snapshots of another run ({path.name}); "
                                f"choose an empty folder, or resume that run with its checkpoint")
    stale = sorted(Path(folder).glob(".snap_*.npz.tmp")) + sorted(Path(folder).glob(".snap_*.txt.tmp"))
    for path in stale:
        path.unlink(missing_ok=True)
    return stale
