"""The ASCII files of the authors' code (NBSymple v1.0, github.com/alessandramb/NBSymple), so that
runs of the two codes can be compared directly.

Layout, as read from that repository's README, const.h and particle.{h,cu} (Particles::print,
readExtData, normalization): one body per line, seven numbers separated by blanks,

    x y z vx vy vz m

in cluster units (G = 1, length = the cluster radius r_cl, mass = the cluster's total mass M,
velocity = sqrt(G M / r_cl), time = the internal crossing time), in the Galactic frame (the
cluster's centre near (8.5 kpc / r_cl, 0, 0), moving at +220 km/s in y), masses as fractions of M
(they sum to 1). No header and no time: the authors' reader takes exactly N lines with `>>`.
Their initial conditions are `Data/ExtData.txt` (read when EXT_DATA is defined) and their
snapshots `Data/leapfrog<q>.txt` / `Data/sixth<q>.txt`, written `%+.8e` (Particles::print): frame
0 the initial state (only when their code draws it, not with EXT_DATA), frame q = 1..FRAME after
step q n / FRAME ("Number of steps" n = 1000 in their input.txt, FRAME = 10 in const.h). This
module writes `%+.16e` (17 digits: float64 round-trips; their reader reads either).

r_cl and M are not in the file. Their input.txt holds them ("Cluster Radius": 10, in pc; "Total
mass of the sys.": 480, in Msun, for the N = 480 of const.h); when their code draws the cluster
it sets M to the sum of the masses drawn, N - 1 stars of 1 Msun and a "black hole" of "Black Hole
Mass" (1 Msun): 480 Msun again. `read_nbsymple` reads a file at the scale it is given,
by default this suite's, `Units()` (10 pc, 15360 Msun): their own files at theirs with `Units(10, 480)`
(`nbsymple run --ics FILE --ics-mass 480`, which needs the mass: the file does not state it). Their
G (SI constants) differs from ours by 6e-5, a 3e-5 change of the velocity unit, and their Galaxy's
mass unit (2.32e7 Msun) from ours ((10 km/s)^2 kpc / G = 2.3251e7 Msun) by 0.2 %, 219.75 instead
of 220.0 km/s at 8.5 kpc: `Units(10, 480, "authors")` (`--constants authors`) evaluates with
theirs. Files are not converted.

Checked against the repository's files and against a run of their code ported to a CPU (their
N = 480 example from their `sixth0.txt`: tests/data/authors), not against their binary.
"""
from __future__ import annotations

import array
import math
from pathlib import Path
import re

import numpy as np

from ..core.ics import State
from ..core.units import Units
from .paths import FileRefused, read_bytes, text_lines, write_file

COLUMNS = ("x", "y", "z", "vx", "vy", "vz", "m")
LONGEST_LINE = 4096          # seven numbers of 17 digits and their exponents take about 170 characters
# A line longer than LONGEST_LINE, tried at the start of the file and after each line end only: tried
# at every byte, each start scanned to its line's end (a file of 4096-character lines: 8 minutes for 20 MB)
LONG_FIRST_LINE = re.compile(rb"[^\n\r]{%d}" % (LONGEST_LINE + 1))
LONG_LINE = re.compile(rb"[\n\r][^\n\r]{%d}" % (LONGEST_LINE + 1))
UTF8_BOM = b"\xef\xbb\xbf"
NOT_TEXT = {b"PK\x03\x04": "a zip archive (an .npz snapshot of nbsymple run --snapshots is read with "
                          "read_snapshot; --snapshot-format nbsymple writes text --ics reads)",
            b"\xff\xfe": "UTF-16 text (save it as plain ASCII)", b"\xfe\xff": "UTF-16 text (save it as plain ASCII)"}


class FormatError(ValueError):
    """A file that is not in the authors' layout: one sentence naming the file and the line."""


def format_lines(state: State) -> str:
    """The state as the authors' layout, one body per line (17 significant digits)."""
    table = np.column_stack([state.positions, state.velocities, state.m])
    return "".join(" ".join(f"{v:+.16e}" for v in row) + "\n" for row in table)


def write_nbsymple(path, state: State) -> Path:
    """Write `state` to `path` in the authors' layout (atomically, never through a link: `paths.write_file`)."""
    return write_file(path, format_lines(state))


def read_nbsymple(path, units: Units = Units(), eps=None, t: float = 0.0,
                  kind: str = "initial-condition file") -> State:
    """A state from a file in the authors' layout (`read_table`), at the scale `units`."""
    return state_of(read_table(path, kind), units, eps, t)


def state_of(table: np.ndarray, units: Units, eps=None, t: float = 0.0) -> State:
    """The state of `read_table`'s rows (x y z vx vy vz m, cluster units) at the scale `units`."""
    return State.from_arrays(table[:, 0:3], table[:, 3:6], table[:, 6], eps=eps, t=t, units=units)


def read_table(path, kind: str = "initial-condition file") -> np.ndarray:
    """The bodies of a file in the authors' layout, one float64 row x y z vx vy vz m each. Blank
    lines and lines starting with `#` are skipped (the authors' reader skips blank lines only).
    A line without exactly seven finite numbers, a mass that is not positive, no body at all (one
    is a test body on its Galactic orbit, as a `State` of one is) or a file that cannot be read
    (no regular file, or larger than any: `paths.read_bytes`, `kind` naming it) raises
    FormatError naming the line; so does a line longer than any of seven numbers (`LONGEST_LINE`),
    found before any is read. A UTF-8 byte-order mark (an editor's) is passed over; a zip archive
    (a `.npz` snapshot) or UTF-16 text is named as what it is. The rows are kept as float64, 56
    bytes a body (a list of Python floats took 27 times the file's size)."""
    path = Path(path)
    try:
        data = read_bytes(path, kind)
    except FileRefused as e:
        raise FormatError(str(e)) from None
    for start, what in NOT_TEXT.items():
        if data.startswith(start):
            raise FormatError(f"{path} is {what}, not a text file in the authors' layout (x y z vx vy vz m)")
    data = data.removeprefix(UTF8_BOM)
    if (line := _long_line(data)) is not None:
        raise FormatError(f"{path} line {line}: longer than {LONGEST_LINE} characters, which no line of seven "
                          f"numbers is")
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError as e:
        line = _line_number(data[:e.start])
        raise FormatError(f"{path} line {line}: not plain ASCII text, so not an NBSymple file") from None
    del data
    rows = array.array("d")
    for number, line in enumerate(text_lines(text), start=1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if len(words) != len(COLUMNS):
            raise FormatError(f"{path} line {number}: expected 7 numbers (x y z vx vy vz m), found {len(words)}")
        try:
            row = [_float(w) for w in words]
        except ValueError:
            bad = next(w for w in words if not _is_float(w))
            raise FormatError(f"{path} line {number}: {bad[:40]!r} is not a number") from None
        if not all(math.isfinite(v) for v in row):
            raise FormatError(f"{path} line {number}: holds a value that is not finite")
        if (tiny := next((w for w, v in zip(words, row) if v == 0 and _nonzero(w)), None)) is not None:
            raise FormatError(f"{path} line {number}: {tiny[:40]} is too small for a float64, which reads it as 0")
        if row[6] <= 0:
            raise FormatError(f"{path} line {number}: the mass {words[6]} is not positive")
        rows.extend(row)
    bodies = len(rows) // len(COLUMNS)
    if bodies == 0:        # (a hunt: one body, which the API steps and write_snapshot writes, was refused)
        raise FormatError(f"{path} holds 0 bodies; a state needs at least 1 (one line each: x y z vx vy vz m)")
    return np.frombuffer(rows, dtype=np.float64).reshape(bodies, len(COLUMNS))


def _long_line(data: bytes) -> int | None:
    """The number of the first line of `data` longer than LONGEST_LINE, else None."""
    if LONG_FIRST_LINE.match(data):
        return 1
    if (long := LONG_LINE.search(data)) is None:
        return None
    return _line_number(data[:long.start() + 1])


def _line_number(before: bytes) -> int:
    """The number of the line that follows `before`, whose lines end at "\n", "\r" or "\r\n", as
    `text_lines` splits them (a byte not ASCII on line 3 of a file of "\r" line ends was said on line 1)."""
    return before.count(b"\n") + before.count(b"\r") - before.count(b"\r\n") + 1


def _nonzero(word: str) -> bool:
    """Whether the number `word` is not 0 (a digit of its mantissa is not: "1e-400" is not, though float() reads
    it as 0.0, a mass refused as "not positive", a position moved to 0 in silence)."""
    return any(c in "123456789" for c in word.lower().partition("e")[0])


def _float(word: str) -> float:
    """A number as the authors' C++ reader takes it: Python's float() less its digits grouped by
    `_` ("1_0" was read as 10, where their `>>` reads 1 and fails on the rest)."""
    if "_" in word:
        raise ValueError(f"{word!r} is not a number")
    return float(word)


def _is_float(word: str) -> bool:
    try:
        _float(word)
        return True
    except ValueError:
        return False
