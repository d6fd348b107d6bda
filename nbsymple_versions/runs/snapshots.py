"""Snapshots: one `.npz` file per saved state, written atomically.

Format (numbers float64 but `step`, an int64; cluster units G = M = r_cl = 1): `positions` (N, 3),
`velocities` (N, 3), `masses` (N,), `time` (), `softening` (), `step` (), the unit system
`r_cl_pc`, `mass_msun`, `velocity_kms`, `time_myr` (scalars) to convert to pc, Msun, km/s and
Myr, `constants` (a string: `core.units.CONSTANTS`, the ones they were computed with; absent in
older files, which are "exact") and `run_id` (a string naming the run that wrote it; absent in
older files). Files are
named `snap_<step:08d>.npz`; each is written to a temporary `.snap_*.npz.tmp` in the same
folder and renamed, so a run killed mid-write never leaves a truncated snapshot (a left-over
temporary is removed by `prepare_folder`).

`fmt="nbsymple"` writes the authors' ASCII layout instead (`authors_format`: `x y z vx vy vz m`
per line, cluster units, no header) as `snap_<step:08d>.txt`, with the folder's
`snapshots.json` holding what that layout has no room for: the run id, the unit system, the
softening and each snapshot's time. `read_snapshot` also reads the authors' own snapshots by
name, `sixth<q>.txt` and `leapfrog<q>.txt` (their frame q, written every n / FRAME steps; the
files hold no time), at the scale of a `snapshots.json` beside them, else this suite's `Units()`.
"""
from contextlib import contextmanager
import errno
import hashlib
import json
import lzma
import math
import os
from pathlib import Path
import re
import struct
import zipfile
import zlib

import numpy as np

from ..core.checks import COUNT_LIMIT, as_float, instance, whole_number
from ..core.ics import State
from ..core.units import Units
from .authors_format import FormatError, format_lines, read_nbsymple
from .paths import LIMITS, FileRefused, open_file, read_bytes, read_json, write_atomically

SNAPSHOT_FORMATS = ("npz", "nbsymple")
SIDECAR = "snapshots.json"          # for the nbsymple format
# ASCII snapshots read by name: ours, snap_<step>.txt, and the authors' frames, <scheme><q>.txt
SNAPSHOT_NAME = re.compile(r"(?:snap_|sixth|leapfrog)([0-9]+)\.txt")


class SnapshotError(ValueError):
    """A snapshot that cannot be read, or a folder that holds another run's; one sentence."""


class SidecarMissing(SnapshotError):
    """ASCII snapshots in a folder without the sidecar that holds their times and scale."""


class OtherRunsSnapshots(SnapshotError):
    """A folder that holds snapshots of another run (its record may name the checkpoint that resumes it)."""


def snapshot_path(folder, step: int, fmt: str = "npz") -> Path:
    return Path(folder) / f"snap_{step:08d}.{'txt' if fmt == 'nbsymple' else 'npz'}"


def least_bytes(n: int, fmt: str = "npz") -> int:
    """The least size of a snapshot of n bodies: 7 float64 a body (x, v, m) in `.npz`, 7 numbers of
    23 characters and a separator each in the authors' text layout."""
    return 7 * n * (24 if fmt == "nbsymple" else 8)


def write_snapshot(folder, state: State, step: int, run_id: str = "", fmt: str = "npz") -> Path:
    """Write `state` at `step` (a whole number from 0) into `folder`, which exists, atomically, as
    `.npz` or (`fmt="nbsymple"`) in the authors' ASCII layout; returns the file's path. TypeError
    or ValueError in one sentence for what is no state (a non-finite value too: no reader would
    take it back) or no step; FileNotFoundError naming the
    folder where it is gone (a run's folder removed mid-run is a fault that stops it)."""
    instance(state, State, "state", "a State")
    step = whole_number(step, "step", 0)            # snap_-0000001.npz could be listed, never read back
    state.check()                                   # a NaN written is a snapshot no reader takes back
    if not Path(folder).is_dir():                   # (tempfile named its own temporary file instead)
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(folder))
    if fmt == "nbsymple":
        return _write_nbsymple(folder, state, step, run_id)
    if fmt != "npz":
        raise ValueError(f"unknown snapshot format {fmt!r}; choose one of {', '.join(SNAPSHOT_FORMATS)}")

    def write(f):
        np.savez(f, positions=state.positions, velocities=state.velocities, masses=state.m,
                 time=state.t, softening=state.eps, step=step, run_id=run_id, **state.units.as_dict())
    return write_atomically(snapshot_path(folder, step), write, ".snap_", ".npz.tmp")


def _positive(value) -> float | None:
    number = _json_number(value)
    return number if number is not None and number > 0 else None


def _times(value) -> dict | None:
    if not isinstance(value, dict):
        return None
    times = {step: _json_number(t) for step, t in value.items()}
    return None if None in times.values() else times


# The fields of a sidecar: name -> (required in a non-empty sidecar, the value it holds or None
# where it is not one, what it must be). A new field adds a row.
SIDECAR_FIELDS = {
    "run_id": (False, lambda v: v if isinstance(v, str) else None, "a string"),
    "r_cl_pc": (True, _positive, "a positive finite number"),
    "mass_msun": (True, _positive, "a positive finite number"),
    "softening": (False, _positive, "a positive finite number"),
    "times": (False, _times, "an object of step: finite time"),
    "constants": (False, lambda v: v if isinstance(v, str) else None, "a name of constants"),
    "sha256": (False, lambda v: v if isinstance(v, dict) and all(isinstance(d, str) for d in v.values()) else None,
               "an object of step: SHA-256 digest"),      # each snapshot's, as written: one cut short is named
}


def _sidecar(folder) -> dict:
    """The folder's `snapshots.json` ({} when there is none), read through `paths.read_json`
    (a regular file, bounded in size and depth) and checked against SIDECAR_FIELDS, its units by
    `Units`. Anything else raises SnapshotError naming the file."""
    path = Path(folder) / SIDECAR
    if not os.path.lexists(path):
        return {}
    try:
        side = read_json(path, "snapshot sidecar")
    except FileRefused as e:
        raise SnapshotError(str(e)) from None

    def bad(what):
        return SnapshotError(f"{path} is not a snapshot sidecar: {what}")
    if not isinstance(side, dict):
        raise bad(f"it holds a JSON {type(side).__name__}, not an object")
    if not side:
        return side
    for key, (required, value_of, what) in SIDECAR_FIELDS.items():
        if key not in side:
            if required:
                raise bad(f"it lacks {key!r}")
            continue
        if (value := value_of(side[key])) is None:
            raise bad(f"its {key} {_shown(side[key])} is not {what}")
        side[key] = value
    try:
        Units(side["r_cl_pc"], side["mass_msun"], side.setdefault("constants", "exact"))
    except (ValueError, TypeError) as e:
        raise bad(_one_line(e)) from None
    return side


def names_constants(path) -> bool:
    """Whether the `snapshots.json` beside an ASCII snapshot names its constants (one that names
    none, hand-written, is read with the exact constants)."""
    try:
        return "constants" in read_json(Path(path).parent / SIDECAR, "snapshot sidecar")
    except (FileRefused, TypeError):
        return False


def _sidecar_units(side: dict) -> Units:
    """The unit system a checked sidecar states."""
    return Units(side["r_cl_pc"], side["mass_msun"], side["constants"])


def stated_units(path) -> Units | None:
    """The scale an ASCII file in the authors' layout states: that of the `snapshots.json` beside
    it where its name is a snapshot's (`snap_<step>.txt`, `sixth<q>.txt`, `leapfrog<q>.txt`),
    else None (the file itself holds no scale). A bad sidecar raises SnapshotError."""
    path = Path(path)
    if SNAPSHOT_NAME.fullmatch(path.name) is None:
        return None
    side = _sidecar(path.parent)
    return _sidecar_units(side) if side else None


def _json_number(value) -> float | None:
    """A JSON value as a finite float, or None when it is not a number (a bool, a string, an
    integer too large for a float, NaN or an infinity)."""
    number = as_float(value)
    return number if math.isfinite(number) else None


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _one_line(e) -> str:
    return " ".join(str(e).split()) or type(e).__name__


def _other_scale(folder, side: dict, state: State) -> str | None:
    """Why the snapshots in the authors' layout that sidecar `side` keeps the times of cannot be joined by
    `state`'s (another softening or scale, which the sidecar keeps for all of them), else None."""
    units = state.units.as_dict()                 # (time and velocity units follow from these)
    scale = {"softening": state.eps, **{k: units[k] for k in ("r_cl_pc", "mass_msun", "constants")}}
    if not side.get("times") or not (differs := sorted(k for k, v in scale.items() if side.get(k) != v)):
        return None
    return (f"{folder} holds snapshots in the authors' layout of another {', '.join(differs)} "
            f"({', '.join(f'{k} {side.get(k)!r}' for k in differs)}), which its {SIDECAR} keeps for "
            f"all of them: a state of {', '.join(f'{k} {scale[k]!r}' for k in differs)} would change "
            f"how they read; write it into another folder")


def _write_nbsymple(folder, state: State, step: int, run_id: str) -> Path:
    """The folder's sidecar with the snapshot's time, then the ASCII snapshot (both atomically). The sidecar
    is read and checked before anything is written, so a bad one leaves the folder as it was."""
    side = _sidecar(folder)
    if side.get("run_id") != run_id:
        if held := by_step(Path(folder).glob("snap_*.txt")):     # their times and scale are in `side` alone
            raise SnapshotError(f"{folder} holds snapshots of another run in the authors' layout ({held[0].name}), "
                                f"whose times and scale its {SIDECAR} keeps: write into another folder")
        side = {}
    if (problem := _other_scale(folder, side, state)) is not None:
        raise SnapshotError(problem)
    side.update(format="nbsymple", layout="x y z vx vy vz m, one body per line, cluster units "
                "(G = M = r_cl = 1), Galactic frame", run_id=run_id, softening=state.eps, **state.units.as_dict())
    side.setdefault("times", {})[str(step)] = state.t
    text = format_lines(state).encode("ascii")
    side.setdefault("sha256", {})[str(step)] = hashlib.sha256(text).hexdigest()
    body = (json.dumps(side, indent=1) + "\n").encode()
    # the sidecar first: a reader that lists the folder while a run writes it finds each snapshot's
    # time already kept (the other order failed ~1 read in 3 as "killed between the two": a hunt)
    write_atomically(Path(folder) / SIDECAR, lambda f: f.write(body), ".snapshots.", ".json.tmp")
    return write_atomically(snapshot_path(folder, step, "nbsymple"), lambda f: f.write(text), ".snap_", ".txt.tmp")


NPZ_MAGIC, NPY_MAGIC = b"PK\x03\x04", b"\x93NUMPY"    # how every .npz (a zip archive) and .npy begin
# What reading a hostile `.npz` can raise from numpy, zipfile and the decompressors.
_NPZ_ERRORS = (OSError, EOFError, ValueError, KeyError, TypeError, IndexError, OverflowError, MemoryError,
               RuntimeError, zipfile.BadZipFile, zlib.error, lzma.LZMAError, struct.error)


# How far a snapshot's members may unpack beyond the archive's size: `write_snapshot` stores them
# as they are, and np.savez_compressed of bodies packs float64 positions and velocities little (a
# cold start's zero velocities and equal masses at most 1000:1, the whole archive about 2.3:1).
# A zip bomb's few kilobytes declaring gigabytes were decompressed in full, up to LIMITS["snapshot"].
UNPACK_RATIO, UNPACK_FREE = 100, 1 << 20


def _unreadable(path, e) -> SnapshotError:
    if isinstance(e, ValueError) and "allow_pickle" in str(e):       # numpy's refusal of an object array
        return SnapshotError(f"snapshot {path} is not a snapshot: it holds Python objects (an object array), "
                             f"which are never unpickled; a snapshot holds numbers")
    return SnapshotError(f"snapshot {path} is truncated or corrupted ({type(e).__name__}: {_one_line(e)})")


@contextmanager
def _npz(path: Path):
    """The open archive of a `.npz` snapshot; what reading it raises (a bare `.npy` array, a missing,
    truncated or corrupted file) becomes one SnapshotError sentence naming it."""
    try:
        with open_file(path, "snapshot") as f:
            start = f.read(len(NPY_MAGIC))
            f.seek(0)
            if start == NPY_MAGIC:
                raise SnapshotError(f"snapshot {path} is a single array (.npy), not a .npz archive of a snapshot")
            if not start.startswith(NPZ_MAGIC):  # numpy takes any other file for a pickle: its error advised
                raise SnapshotError(f"snapshot {path} is truncated or corrupted ("        # loading it so, "if you
                                    f"{'empty' if not start else 'not a zip archive, as every .npz is'})")  # trust it"
            packed = os.fstat(f.fileno()).st_size
            d = np.load(f)
            with d:
                unpacked = sum(member.file_size for member in d.zip.infolist())
                if unpacked > LIMITS["snapshot"]:       # a few compressed bytes may unpack to terabytes
                    raise SnapshotError(f"snapshot {path} unpacks to {unpacked} bytes, more than any snapshot holds")
                if unpacked > UNPACK_FREE + UNPACK_RATIO * packed:
                    raise SnapshotError(f"snapshot {path} unpacks to {unpacked} bytes from {packed}, more than "
                                        f"{UNPACK_RATIO} times its size, as no snapshot of bodies does (a zip bomb?)")
                yield d
    except SnapshotError:
        raise
    except FileRefused as e:
        raise SnapshotError(str(e)) from None
    except _NPZ_ERRORS as e:
        raise _unreadable(path, e) from None


def _npz_number(d, key: str, path: Path, whole: bool = False):
    """The scalar `key` of a snapshot archive as a float (an int >= 0 with `whole`)."""
    a = d[key]
    if not (isinstance(a, np.ndarray) and a.shape == () and a.dtype.kind in "iuf"):
        raise SnapshotError(f"snapshot {path} is not a snapshot: its {key} is not a real number "
                            f"(a {getattr(a, 'dtype', type(a).__name__)} array of shape {getattr(a, 'shape', '?')})")
    value = a.item()
    if not whole:
        return float(value)
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise SnapshotError(f"snapshot {path} is not a snapshot: its step {value!r} is not a whole number")
    if not 0 <= int(value) < COUNT_LIMIT:           # an int64, as a checkpoint's counts (1e300 was a step)
        raise SnapshotError(f"snapshot {path} is not a snapshot: its step {value:.6g} is "
                            f"{'negative' if value < 0 else 'beyond an int64, no count of steps'}")
    return int(value)


def _npz_constants(d, path: Path) -> str:
    """The name of a snapshot archive's constants ("exact" where it has none: older files)."""
    if "constants" not in d.files:
        return "exact"
    a = d["constants"]
    if not (isinstance(a, np.ndarray) and a.shape == () and a.dtype.kind == "U"):
        raise SnapshotError(f"snapshot {path} is not a snapshot: its constants is not a string")
    return str(a.item())


def read_snapshot(path) -> tuple[State, int]:
    """Load a snapshot: (state, step); for the authors' `sixth<q>.txt` / `leapfrog<q>.txt`, (state,
    q). A file that is not a readable snapshot raises SnapshotError naming it."""
    path = Path(path)
    if path.suffix == ".txt":
        return _read_nbsymple(path)
    with _npz(path) as d:
        scale = _npz_number(d, "r_cl_pc", path), _npz_number(d, "mass_msun", path), _npz_constants(d, path)
        arrays = d["positions"], d["velocities"], d["masses"]
        eps, t = _npz_number(d, "softening", path), _npz_number(d, "time", path)
        step = _npz_number(d, "step", path, whole=True)
    if (named := step_of(path)) is not None and named != step:     # (a hunt: a renamed copy was read at its step)
        raise SnapshotError(f"snapshot {path} holds step {step}, not step {named} as its name says (renamed from "
                            f"another snapshot's name?)")
    try:                                 # read whole: what it holds is no state (a NaN, a scale of r_cl = inf pc or
        return State.from_arrays(*arrays, eps=eps, t=t, units=Units(*scale)), step   # unknown constants), not
    except ValueError as e:              # a damaged file (they were "truncated or corrupted" when read inside it)
        raise SnapshotError(f"snapshot {path} holds no state a run could have written: {_one_line(e)}") from None


def _read_nbsymple(path: Path) -> tuple[State, int]:
    """An ASCII snapshot, ours (`snap_<step>.txt`) or the authors' (`sixth<q>.txt`,
    `leapfrog<q>.txt`: frame q), with the number from its name and the unit system, softening and
    time from its folder's sidecar (checked by `_sidecar`); without one, this suite's scale,
    `Units()`, the authors' softening for N and t = 0."""
    match = SNAPSHOT_NAME.fullmatch(path.name)
    if match is None:
        raise SnapshotError(f"snapshot {path} is not named snap_<step>.txt, sixth<q>.txt or leapfrog<q>.txt, so its "
                            f"step is unknown (read_nbsymple reads a file of any name)")
    number = int(match.group(1))
    side = _sidecar(path.parent)
    if (digest := side.get("sha256", {}).get(str(number))) is not None:
        try:
            changed = hashlib.sha256(read_bytes(path, "snapshot")).hexdigest() != digest
        except FileRefused as e:
            raise SnapshotError(str(e)) from None
        if changed:                      # a line cut off, or a mass cut to fewer digits, read as bodies
            raise SnapshotError(f"snapshot {path} is not the file that was written (its {SIDECAR} holds another "
                                f"SHA-256 of it): cut short or changed since; copy it out of that folder to read it "
                                f"as an initial-condition file")
    times = side.get("times", {})
    if path.name.startswith("snap_") and side and str(number) not in times:    # its rename, not its sidecar's
        raise SnapshotError(f"snapshot {path} has no time in its folder's {SIDECAR} (copied in from another "
                            f"folder, or left by an older nbsymple killed between the two writes): copy it out of "
                            f"that folder to read it as an initial-condition file")
    try:
        units = _sidecar_units(side) if side else Units()
        state = read_nbsymple(path, units, eps=side.get("softening"), t=times.get(str(number), 0.0), kind="snapshot")
    except FormatError as e:
        raise SnapshotError(str(e)) from None
    except ValueError as e:
        raise SnapshotError(f"snapshot {path} cannot be read: {_one_line(e)}") from None
    return state, number


def snapshot_run_id(path) -> str:
    """The run id a snapshot was written with ('' for files from before run ids)."""
    path = Path(path)
    with _npz(path) as d:
        if "run_id" not in d.files:
            return ""
        run_id = d["run_id"]
        if not (isinstance(run_id, np.ndarray) and run_id.shape == () and run_id.dtype.kind == "U"):
            raise SnapshotError(f"snapshot {path} is not a snapshot: its run_id is not a string")
        return str(run_id.item())


def list_snapshots(folder) -> list[Path]:
    """The folder's snapshots, `snap_<step>.npz` and (`--snapshot-format nbsymple`) `snap_<step>.txt`,
    in step order (by number: step 10**8 after 99999999)."""
    folder = Path(folder)
    return by_step([*folder.glob("snap_*.npz"), *folder.glob("snap_*.txt")])


def step_of(path: Path) -> int | None:
    """The step a snapshot's name `snap_<step>` gives, else None: its digits ASCII ones (`str.isdigit`
    takes 'snap_²', which `int` cannot read: a hunt, a traceback at the resume of its folder)."""
    digits = path.stem[5:]
    return int(digits) if path.stem.startswith("snap_") and digits.isascii() and digits.isdigit() else None


def by_step(paths) -> list[Path]:
    """Snapshot files in the order of their steps; a name that is no step's last."""
    def step(path: Path):
        return (1, 0, path.name) if (k := step_of(path)) is None else (0, k, path.name)
    return sorted(paths, key=step)


def prepare_folder(folder, run_id: str, state: State | None = None) -> list[Path]:
    """Make `folder` ready for run `run_id`: refuse it if it holds snapshots of another run (or
    unreadable ones, or a `snapshots.json` that is not a valid sidecar, or one of another scale than
    `state`, the resumed run's: its first snapshot was refused after the steps to it, a traceback), then
    remove temporaries left by a killed writer; returns those removed."""
    text = by_step(Path(folder).glob("snap_*.txt"))
    side = _sidecar(folder)              # checked now, before anything is written (SnapshotError)
    if text and not side:                # their times and scale are gone: read back, they would be wrong
        raise SidecarMissing(f"{folder} holds snapshots in the authors' layout ({text[0].name}) without their "
                             f"{SIDECAR}, which keeps their times and scale, so no run can go on in it: move them "
                             f"out, or choose another folder")
    ascii_run = side.get("run_id") if text else run_id
    for path in [p for p in list_snapshots(folder) if p.suffix == ".npz"] + text[:1]:
        try:
            other = ascii_run if path.suffix == ".txt" else snapshot_run_id(path)
        except SnapshotError as e:       # one that cannot be read, this run's or another's: its own remedy
            raise SnapshotError(f"{e}; move it out of {folder}, or choose another folder") from None
        if other != run_id:
            raise OtherRunsSnapshots(f"{folder} already holds snapshots of another run ({path.name}); "
                                     f"choose an empty folder")
    if text and state is not None and (problem := _other_scale(folder, side, state)) is not None:
        raise SnapshotError(problem)
    return remove_temporaries(folder)


def remove_temporaries(folder) -> list[Path]:
    """Remove what a killed writer left in a snapshot folder whose lock the caller holds (so no
    writer is alive): the temporaries of `write_atomically` (snapshots, the sidecar, the driver's
    nbsymple-run.json); returns them."""
    stale = [p for pattern in (".snap_*.npz.tmp", ".snap_*.txt.tmp", f".{Path(SIDECAR).stem}.*.json.tmp",
                               ".nbsymple-run.json.*.tmp") for p in sorted(Path(folder).glob(pattern))]
    for path in stale:
        path.unlink(missing_ok=True)
    return stale
