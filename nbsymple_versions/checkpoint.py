"""Checkpoints of `nbsymple run`: one file holding everything a run needs to go on bit for bit.

Layout of format 1 (integers little-endian):

    bytes 0-19    magic  b"NBSYMPLE-CHECKPOINT\\n"
    bytes 20-23   format version, uint32
    bytes 24-31   header length H, uint64
    next H bytes  header, a UTF-8 JSON object:
                    "run"         the run's parameters (N, seed, total steps, snapshot folder and
                                  cadence, checkpoint cadence, run id), from `runner`
                    "simulation"  `Simulation.record()`: version, scheme, precision, dt, options,
                                  steps done, time origin t0, accumulated clock, E0, L0 and the
                                  parts of E0 (`core.diagnostics.EnergyParts`)
                    "state"       softening, time t, units (r_cl in pc, M in Msun)
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
import os
from pathlib import Path
import re
import struct

import numpy as np

from .core.ics import State
from .core.units import Units
from .snapshots import write_atomically

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
    return sorted(p for p in path.parent.glob(f".{path.name}.*.tmp") if own.fullmatch(p.name))


def save(path, run: dict, sim) -> Path:
    """Write `sim`'s state and record and the run's parameters to `path`, atomically."""
    path = Path(path)
    s = sim.state
    arrays = {"x": s.x, "v": s.v, "m": s.m}
    header = {"run": run, "simulation": sim.record(),
              "state": {"eps": s.eps, "t": s.t, "units": {"r_cl_pc": s.units.r_cl_pc, "mass_msun": s.units.mass_msun}},
              "arrays": [[k, list(a.shape)] for k, a in arrays.items()]}
    head = json.dumps(header, allow_nan=False).encode()

    def write(f):
        digest = hashlib.sha256()
        for chunk in (MAGIC, _PREFIX.pack(FORMAT, len(head)), head,
                      *(np.ascontiguousarray(a, dtype="<f8").data for a in arrays.values())):
            digest.update(chunk)
            f.write(chunk)
        f.write(digest.digest())
    return write_atomically(path, write, f".{path.name}.")


def _refuse_constant(name: str):
    """The header is strict JSON (written with allow_nan=False; an undefined figure is null):
    NaN, Infinity or -Infinity in it is no checkpoint of ours."""
    raise ValueError(f"its header holds {name}, which JSON does not allow (undefined values are null)")


def _check(path: Path, f, size: int) -> int:
    """Magic, checksum and format of an open file; returns the header length."""
    start = f.read(len(MAGIC) + _PREFIX.size)
    if size == 0:
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
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            head_len = _check(path, f, size)
            f.seek(len(MAGIC) + _PREFIX.size)
            header = json.loads(f.read(head_len), parse_constant=_refuse_constant)
            arrays = {}
            for name, shape in header["arrays"]:
                count = int(np.prod(shape))
                arrays[name] = np.frombuffer(f.read(8 * count), dtype="<f8", count=count).reshape(shape)
            if f.tell() != size - _TRAILER:
                raise ValueError("the arrays do not fill the file")
    except FileNotFoundError:
        raise CheckpointError(f"checkpoint {path} does not exist") from None
    except IsADirectoryError:
        raise CheckpointError(f"{path} is a folder, not a checkpoint") from None
    except OSError as e:
        raise CheckpointError(f"cannot read checkpoint {path}: {e.strerror or e}") from None
    except (ValueError, KeyError, TypeError) as e:
        if isinstance(e, CheckpointError):
            raise
        raise CheckpointError(f"{path} is not a valid checkpoint ({type(e).__name__}: {e})") from None
    try:
        st, units = header["state"], header["state"]["units"]
        state = State(arrays["x"].astype(np.float64), arrays["v"].astype(np.float64),
                      arrays["m"].astype(np.float64), st["eps"], st["t"], Units(units["r_cl_pc"], units["mass_msun"]))
        return header["run"], header["simulation"], state
    except (ValueError, KeyError, TypeError) as e:
        raise CheckpointError(f"{path} is not a valid checkpoint ({type(e).__name__}: {e})") from None
