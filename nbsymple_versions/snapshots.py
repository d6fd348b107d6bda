"""Snapshots: one `.npz` file per saved state, written atomically.

Format (all arrays float64, cluster units G = M = r_cl = 1): `positions` (N, 3),
`velocities` (N, 3), `masses` (N,), `time` (), `softening` (), `step` (), and the unit
system `r_cl_pc`, `mass_msun`, `velocity_kms`, `time_myr` (scalars) to convert to pc, Msun,
km/s and Myr. Files are named `snap_<step:08d>.npz`; each is written to a temporary file
in the same folder and renamed, so a run killed mid-write never leaves a truncated file.
"""
import os
from pathlib import Path
import tempfile

import numpy as np

from .core.ics import State
from .core.units import Units


def snapshot_path(folder, step: int) -> Path:
    return Path(folder) / f"snap_{step:08d}.npz"


def write_snapshot(folder, state: State, step: int) -> Path:
    """Write `state` at `step` into `folder` atomically; returns the file's path."""
    path = snapshot_path(folder, step)
    fd, tmp = tempfile.mkstemp(prefix=".snap_", suffix=".npz.tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, positions=state.positions, velocities=state.velocities, masses=state.m,
                     time=state.t, softening=state.eps, step=step, **state.units.as_dict())
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_snapshot(path) -> tuple[State, int]:
    """Load a snapshot: (state, step)."""
    with np.load(path) as d:
        units = Units(float(d["r_cl_pc"]), float(d["mass_msun"]))
        state = State.from_arrays(d["positions"], d["velocities"], d["masses"], eps=float(d["softening"]),
                                  t=float(d["time"]), units=units)
        return state, int(d["step"])


def list_snapshots(folder) -> list[Path]:
    return sorted(Path(folder).glob("snap_*.npz"))
