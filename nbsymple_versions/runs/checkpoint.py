"""Checkpoints of `nbsymple run`: one file holding everything a run needs to go on bit for bit.

Layout of format 1 (integers little-endian):

    bytes 0-19    magic  b"NBSYMPLE-CHECKPOINT\\n"
    bytes 20-23   format version, uint32
    bytes 24-31   header length H, uint64
    next H bytes  header, a UTF-8 JSON object:
                    "run"         the run's header (N, seed, total steps, snapshot folder and
                                  cadence, checkpoint cadence, run id; a science run's session
                                  record), one schema for `nbsymple run` (`runs.driver`) and the
                                  paper's science runs (`paper.resumable`): `check_run`
                    "simulation"  `Simulation.record()`: version, scheme, precision, dt, options,
                                  steps done, time origin t0, accumulated clock, E0, L0 and the
                                  parts of E0 (`core.diagnostics.EnergyParts`)
                    "state"       softening, time t, units (r_cl in pc, M in Msun, and the name
                                  of their constants, `core.units.CONSTANTS`; absent: "exact")
                    "arrays"      [name, shape] of each array below, in order
    arrays        raw float64, little-endian, C order: x (3, N), v (3, N), m (N,)
    last 32 bytes SHA-256 of every byte before them

Floats in the header are JSON numbers written with Python's shortest round-trip repr, so they
read back to the same bits; the header is strict JSON (no NaN or Infinity: a figure that is
not finite, such as an L0 component beyond float64's range, is written as null). Every later
format keeps the magic, the version field at bytes 20-23 and the SHA-256 trailer, so a file
from a newer nbsymple is recognised as such.
A file is written to a temporary file in the same folder, fsynced and renamed over the old
one: a kill at any moment leaves the previous checkpoint or the new one, never a mix.
"""
import hashlib
import json
import math
import os
from pathlib import Path
import re
import struct

import numpy as np

from ..core.checks import COUNT_LIMIT, SEED_BOUND, as_float
from ..core.ics import State
from ..core.vocabulary import TASKS
from ..core.units import CONSTANTS, Units
from .paths import FileRefused, open_file, parse_json
from .paths import write_atomically
from .snapshots import SNAPSHOT_FORMATS

MAGIC = b"NBSYMPLE-CHECKPOINT\n"
FORMAT = 1
_PREFIX = struct.Struct("<IQ")                 # format version, header length
_TRAILER = 32                                  # SHA-256
ARRAYS = ("x", "v", "m")


class CheckpointError(ValueError):
    """A file that cannot be resumed from; the message is one sentence naming the file."""


def temporary_files(path) -> list[Path]:
    """Temporary files of checkpoint `path` (`.NAME.<pid>.<random>.tmp`, from `write_atomically`):
    only this name's, never those of a longer name such as `NAME.v2`. Remove them only while
    holding the checkpoint's lock (`runs.locks`): then their writers are dead."""
    path = Path(path)
    own = re.compile(rf"\.{re.escape(path.name)}\.\d+\.\w+\.tmp")
    try:                                 # matched by name, not by glob: a name may hold *, ? or [
        return sorted(p for p in path.parent.iterdir() if own.fullmatch(p.name))
    except OSError:                      # no folder, or none that can be listed: no temporaries
        return []


def save(path, run: dict, sim) -> Path:
    """Write `sim`'s state and record and the run's parameters to `path`, atomically. ValueError
    in one sentence, before anything is written, where `load` would refuse what it wrote (a `run`
    without the number of bodies, or not a dict: it wrote checkpoints nothing could read; a
    state holding a NaN or an infinity)."""
    path = Path(path)
    s = sim.state.check()                            # a NaN written is a checkpoint `load` refuses
    arrays = {"x": s.x, "v": s.v, "m": s.m}
    header = {"run": run, "simulation": sim.record(),
              "state": {"eps": s.eps, "t": s.t, "units": {"r_cl_pc": s.units.r_cl_pc, "mass_msun": s.units.mass_msun,
                                                        "constants": s.units.constants}},
              "arrays": [[k, list(a.shape)] for k, a in arrays.items()]}
    try:
        head = json.dumps(header, allow_nan=False).encode()
    except (TypeError, ValueError) as e:            # a NumPy integer, a NaN in `run`
        raise ValueError(f"checkpoint {path}: its run parameters are not JSON ({e})") from None
    written = json.loads(head)                       # as `load` will read it
    if problem := (_problem(written, _HEADER)
                   or _disagreement(written, {k: np.asarray(a, dtype=float) for k, a in arrays.items()})):
        raise ValueError(f"checkpoint {path} would not load ({problem}), so it was not written; `run` holds the "
                         f"run's parameters as `nbsymple run` records them (`check_run`: what a resume needs)")

    def write(f):
        digest = hashlib.sha256()
        for chunk in (MAGIC, _PREFIX.pack(FORMAT, len(head)), head,
                      *(np.ascontiguousarray(a, dtype="<f8").data for a in arrays.values())):
            digest.update(chunk)
            f.write(chunk)
        f.write(digest.digest())
    return write_atomically(path, write, f".{path.name}.")


def _number(v) -> bool:
    """A JSON number float64 holds (not a bool, not an integer beyond float64's range)."""
    return math.isfinite(as_float(v))


def _count(minimum, limit: int = COUNT_LIMIT):
    """An int of at least `minimum` that an int64 holds, as NumPy's and numba's counters do (a
    count of 400 digits would overflow where it meets a float: t0 + steps_done dt); below `limit`."""
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and minimum <= v < limit


# a count each session adds to (kernel calls, stops, sessions): below 2**53 it can grow for ever (9e15 calls of
# a microsecond are 285 years); one of 2**63 - 1 loaded, then grown, made the next checkpoint unwritable, a traceback
GROWING_LIMIT = 2**53


class _optional:
    """null, or what `schema` (a test or a dict schema) accepts."""

    def __init__(self, schema):
        self.schema = schema

    def __call__(self, value) -> bool:
        return _problem(value, self) is None


def _table(test):
    """A dict of task names (str) to values passing `test`."""
    return lambda v: isinstance(v, dict) and all(isinstance(k, str) and test(x) for k, x in v.items())


def _vector(test):
    return lambda v: isinstance(v, list) and len(v) == 3 and all(test(x) for x in v)


_STR, _BOOL = (lambda v: isinstance(v, str)), (lambda v: isinstance(v, bool))
# What resuming reads from the header (runs/driver.py, runs/report.py, Simulation.restore,
# EnergyParts.from_dict, State): a dict holds at least these keys, each of these types.
_PARTS = {"mass": _number, "base": _vector(_number), "velocity": _vector(_number), "kinetic_internal": _number,
          "potential": _number, "cross": _number, "tidal": _number, "total": _number}
_SCIENCE = {"params": lambda v: isinstance(v, dict), "wall_seconds": _number, "sessions": _count(1, GROWING_LIMIT),
            "interrupted": _count(0, GROWING_LIMIT), "written": lambda v: isinstance(v, list) and all(map(_STR, v))}
_POSITIVE = (lambda v: _number(v) and v > 0)
# a seed as --seed takes it (`core.checks.seed`: a report said "seed -5"); the constants, and an --ics file's digest
# and scale, as `nbsymple run` records them: each was read into the snapshot folder's record whatever it held
_RUN = {"run_id": _STR, "n": _count(1), "seed": _count(0, SEED_BOUND), "constants": _optional(lambda v: v in CONSTANTS),
        "ics_sha256": _optional(_STR), "ics_radius_pc": _optional(_POSITIVE), "ics_mass_msun": _optional(_POSITIVE),
        "seed_chosen": _BOOL, "steps": _count(0), "snapshots": _optional(_STR), "every": _optional(_count(1)),
        "checkpoint_every": _count(1), "ics": _optional(_STR), "mass_classes": _optional(_count(1)),
        "snapshot_format": lambda v: v in SNAPSHOT_FORMATS,
        # a science run's (paper/resumable.py): the steps it snapshots, its sessions; absent elsewhere
        "snapshot_steps": _optional(lambda v: isinstance(v, list) and all(map(_count(1), v))),
        "science": _optional(_SCIENCE),
        # `nbsymple run`'s sessions: their stops (SIGSTOP and SIGCONT) while stepping, their devices
        "stood_still": _optional(_count(0, GROWING_LIMIT)),
        "devices": _optional(lambda v: isinstance(v, list) and all(map(_STR, v)))}
_HEADER = {
    "run": lambda v: isinstance(v, dict),       # the run's header: `check_run`
    "simulation": {"version": _STR, "scheme": _STR, "precision": _STR, "dt": _number,
                   "options": _table(lambda v: True), "steps_done": _count(0), "t0": _number,
                   "clock": {"seconds": _table(_number), "calls": _table(_count(0, GROWING_LIMIT))},
                   "energy0": _optional(_number), "angular_momentum0": _optional(_vector(_optional(_number))),
                   "energy_parts0": _optional(_PARTS)},
    "state": {"eps": _number, "t": _number, "units": {"r_cl_pc": _number, "mass_msun": _number}},
    "arrays": lambda v: (isinstance(v, list) and [a[0] if isinstance(a, list) and a else None for a in v]
                         == list(ARRAYS) and all(len(a) == 2 and isinstance(a[1], list)
                                                 and all(_count(0)(d) for d in a[1]) for a in v)),
}


def _clock_ok(clock) -> bool:
    """The clock's tasks are the suite's, their seconds not negative nor beyond a lifetime."""
    seconds, calls = clock["seconds"], clock["calls"]
    return (set(seconds) <= set(TASKS) and set(calls) <= set(TASKS)
            and all(0 <= s <= MAX_CLOCK_SECONDS for s in seconds.values()))


def _same_mass(parts, m) -> bool:
    return parts is None or abs(parts["mass"] - float(m.sum())) <= 1e-9 * abs(parts["mass"])


MAX_CLOCK_SECONDS = 1e12          # 30 000 years of timed work: more is no clock reading
# What the header says that its arrays and its other fields must agree with, checked once
# both are read (`load`), before any value is used: (what must hold, its test of the header
# and the arrays {x, v, m}). The fields' types are `_HEADER`'s; a new field adds a row here.
AGREEMENTS = (
    ("the arrays x, v and m hold run.n bodies, of shapes [3, n], [3, n] and [n]",
     lambda h, a: a["m"].shape == (h["run"].get("n"),) and a["x"].shape == a["v"].shape == (3, a["m"].shape[0])),
    ("state.t is simulation.t0 + simulation.steps_done * simulation.dt, as every step sets it",
     lambda h, a: h["state"]["t"] == h["simulation"]["t0"] + h["simulation"]["steps_done"] * h["simulation"]["dt"]),
    ("simulation.steps_done is at most run.steps",
     lambda h, a: not isinstance(h["run"].get("steps"), int) or h["simulation"]["steps_done"] <= h["run"]["steps"]),
    ("simulation.energy0 is simulation.energy_parts0.total",
     lambda h, a: h["simulation"]["energy0"] is None or h["simulation"]["energy0"]
     == h["simulation"]["energy_parts0"]["total"]),
    ("simulation.energy_parts0.mass is the sum of the masses m",
     lambda h, a: _same_mass(h["simulation"]["energy_parts0"], a["m"])),
    ("simulation.clock names only the suite's tasks, with seconds between 0 and 1e12",
     lambda h, a: _clock_ok(h["simulation"]["clock"])),
    ("run.constants, where it is given, are state.units.constants",
     lambda h, a: h["run"].get("constants") in (None, h["state"]["units"].get("constants", "exact"))),
    ("not every body is at one point (no cluster is)",
     lambda h, a: a["x"].shape[1] < 2 or not (a["x"] == a["x"][:, :1]).all()),
)


def _disagreement(header: dict, arrays: dict) -> str | None:
    """The first of AGREEMENTS that `header` and `arrays` break, else None."""
    with np.errstate(all="ignore"):
        return next((f"its header disagrees with itself or its arrays: {what}" for what, holds in AGREEMENTS
                     if not holds(header, arrays)), None)


def check_run(path, run: dict):
    """CheckpointError unless `run` (as `load` returns it) holds every parameter a run resumes
    from (`runs.driver`, `paper.resumable`), each of its type."""
    older = {"snapshot_steps": None, "science": None, "stood_still": None, "devices": None,       # absent from older
             "constants": None, "ics_sha256": None, "ics_radius_pc": None, "ics_mass_msun": None}    # files
    if (problem := _problem({**older, **run}, _RUN, "run")) is not None:
        raise CheckpointError(f"{path} is not a valid checkpoint ({problem})")


def _problem(value, schema, where="header") -> str | None:
    """'field F: why' for the first part of `value` that `schema` (a dict of keys to schemas,
    or a test) refuses, else None."""
    if isinstance(schema, _optional):
        return None if value is None else _problem(value, schema.schema, where)
    if callable(schema):
        return None if schema(value) else f"field {where}: {_shown(value)} is not of the expected type"
    if not isinstance(value, dict):
        return f"field {where}: {_shown(value)} is not an object"
    for key, sub in schema.items():
        name = key if where == "header" else f"{where}.{key}"
        if key not in value:
            return f"field {name}: missing"
        if (problem := _problem(value[key], sub, name)) is not None:
            return problem
    return None


def _shown(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _refuse_constant(name: str):
    """The header is strict JSON (written with allow_nan=False; an undefined figure is null):
    NaN, Infinity or -Infinity in it is no checkpoint of ours."""
    raise ValueError(f"its header holds {name}, which JSON does not allow (undefined values are null)")


def _check(path: Path, f, size: int) -> int:
    """Magic, checksum and format of an open file; returns the header length."""
    start = f.read(len(MAGIC) + _PREFIX.size)
    if not start:                        # not `size == 0`: a file of the kernel's (/proc/self/environ) says 0
        raise CheckpointError(f"{path} is empty, not a checkpoint")
    if not (start.startswith(MAGIC) or MAGIC.startswith(start)):
        raise CheckpointError(f"{path} is not an nbsymple checkpoint")
    if size < len(MAGIC) + _PREFIX.size + _TRAILER:
        raise CheckpointError(f"{path} is truncated ({size} bytes, shorter than any checkpoint)")
    digest = hashlib.sha256(start)
    remaining = size - len(start) - _TRAILER
    while remaining > 0:
        chunk = f.read(min(remaining, 1 << 20))
        if not chunk:
            break
        digest.update(chunk)
        remaining -= len(chunk)
    if digest.digest() != f.read(_TRAILER):
        raise CheckpointError(f"{path} is truncated or corrupted: its SHA-256 checksum does not match")
    version, head_len = _PREFIX.unpack(start[len(MAGIC):])
    if version > FORMAT:
        raise CheckpointError(f"{path} is in checkpoint format {version}, newer than the format {FORMAT} "
                              f"this nbsymple reads; resume it with a newer nbsymple")
    if version < 1 or head_len > size:
        raise CheckpointError(f"{path} is not a valid checkpoint (format {version}, header of {head_len} bytes)")
    return head_len


def load(path) -> tuple[dict, dict, State]:
    """(run parameters, `Simulation.record()`, state) from checkpoint `path`; a file that is
    missing, truncated, corrupted, of a newer format or no checkpoint raises CheckpointError."""
    path = Path(path)
    try:
        with open_file(path, "checkpoint") as f:
            size = os.fstat(f.fileno()).st_size
            head_len = _check(path, f, size)
            f.seek(len(MAGIC) + _PREFIX.size)
            header = parse_json(f.read(head_len), "checkpoint", path, parse_constant=_refuse_constant)
            problem = _problem(header, _HEADER)
            sim = header.get("simulation") if problem is None else {}
            if problem is None and sim["energy0"] is not None:
                problem = next((f"field simulation.{k}: null although simulation.energy0 is not"
                                for k in ("angular_momentum0", "energy_parts0") if sim[k] is None), None)
            if problem is not None:
                raise CheckpointError(f"{path} is not a valid checkpoint ({problem})")
            arrays = {}
            for name, shape in header["arrays"]:
                count = math.prod(shape)
                if 8 * count > size - f.tell():
                    raise ValueError(f"array {name} of shape {shape} is larger than the file")
                arrays[name] = np.frombuffer(f.read(8 * count), dtype="<f8", count=count).reshape(shape)
            if f.tell() != size - _TRAILER:
                raise ValueError("the arrays do not fill the file")
            if (problem := _disagreement(header, arrays)) is not None:
                raise CheckpointError(f"{path} is not a valid checkpoint ({problem})")
    except FileRefused as e:
        raise CheckpointError(str(e)) from None
    except OSError as e:
        raise CheckpointError(f"cannot read checkpoint {path}: {e.strerror or e}") from None
    except (ValueError, KeyError, TypeError) as e:
        if isinstance(e, CheckpointError):
            raise
        raise CheckpointError(f"{path} is not a valid checkpoint ({type(e).__name__}: {e})") from None
    try:
        st, units = header["state"], header["state"]["units"]
        state = State(arrays["x"].astype(np.float64), arrays["v"].astype(np.float64),
                      arrays["m"].astype(np.float64), st["eps"], st["t"],
                      Units(units["r_cl_pc"], units["mass_msun"], units.get("constants", "exact")))
        return header["run"], header["simulation"], state
    except (ValueError, KeyError, TypeError) as e:
        raise CheckpointError(f"{path} is not a valid checkpoint ({type(e).__name__}: {e})") from None
