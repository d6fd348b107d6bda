"""Hostile inputs, searched by hypothesis (issue 17, item 6): arbitrary bytes for every file the
program reads (initial conditions, checkpoints, snapshots and their `snapshots.json`, a snapshot
folder's run record, asv results files, `benchmarks.json`, `machine.json`) and arbitrary strings
and numbers for every option of every subcommand. Every case runs in a fresh temporary folder
(the current directory) and must end

- with a documented exit status: 0 or 2 everywhere, 3 for a run that reached a non-finite state,
  1 for `check` failures and for `paper` artefacts that could not be made (docs/cli.md, paper.md);
- with at most 3 lines on stderr, each a sentence of its own that starts with the command's name
  (`paper` with status 0 or 1 prints one sentence per artefact it could not make, as
  docs/paper.md documents); a line feed in user text never starts a line;
- without a traceback, and with one JSON document on stdout when `--json` was asked for and the
  status is 0;
- within `hang_guard`'s generous alarm (a FIFO, a device or a socket may stand where a file is
  read or written: `test_special_files`);
- having created, changed or removed nothing but the paths named in the command (and what lies
  under them, the folders above them, and the lock file `.NAME.lock` of a named checkpoint), in
  the temporary folder or in the repository's `plots/` and `results/`.

The commands run in this process (no interpreter start, kernels stay compiled), from a fresh
chunk of CPython's frame stack as in their own process (`cli_call.on_a_fresh_stack`); stdout is a
strict UTF-8 stream, as a pipe or terminal in an en_US.UTF-8 locale is, stderr is backslash-escaped
as Python's own. Files that must pass a checksum (checkpoints) are also drawn resealed: any header,
format field or arrays, with a matching SHA-256. The cases that would be slow when valid (many
bodies, many steps, a valid GPU architecture to compile for) are drawn small or not at all;
everything else is drawn without bounds. A path option never gets a value that leaves the case's
folder (the cases write what they are given). The number of cases each property ran is printed at
the end of the module (the terminal summary).

The README's test command draws the same cases on every run; NBSYMPLE_HOSTILE_RANDOM=1 searches
for new ones, NBSYMPLE_HOSTILE_SCALE=K draws K times as many, NBSYMPLE_HOSTILE_SHRINK=1 shrinks a
failing case to a minimal one (`drawn.hostile`, the settings of every property of the suite)."""
from __future__ import annotations

import contextlib
import functools
from collections import Counter
import hashlib
import io
import json
import math
import os
from pathlib import Path
import re
import shutil
import signal
import socket
import stat
import struct
import tempfile
import time
import traceback
import warnings

import numpy as np
import pytest
from hypothesis import assume, example, given, note, strategies as st
from hypothesis.extra import numpy as hnp

from nbsymple_versions import cli
from nbsymple_versions.entry import shown
from nbsymple_versions.core.ics import State
from nbsymple_versions.paper import style
from nbsymple_versions.runs.snapshots import SnapshotError, read_snapshot

from cli_call import on_a_fresh_stack
from drawn import hostile

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "data" / "asv_fixture"
MACHINE = "fixture-2core-nogpu"
WATCHED = (REPO / "plots", REPO / "results")      # the repository's own outputs: never touched
HUGE = 10**13                                      # bodies no machine holds: refused up front
RAN: Counter = Counter()                           # cases run, per property and exit status
STARTED = time.perf_counter()


@pytest.fixture(scope="module", autouse=True)
def _count_cases(request):
    """Print how many generated cases each property ran (for the closing note of issue 17)."""
    yield
    per_test = Counter()
    for (name, _), n in RAN.items():
        per_test[name] += n
    lines = [f"test_hostile: {sum(per_test.values())} generated cases in {time.perf_counter() - STARTED:.0f} s"]
    for name in sorted(per_test):
        statuses = ", ".join(f"{rc}: {n}" for (t, rc), n in sorted(RAN.items(), key=str) if t == name)
        lines.append(f"  {name}: {per_test[name]} cases (exit status: count = {statuses})")
    reporter = request.config.pluginmanager.getplugin("terminalreporter")
    for line in lines:
        if reporter is not None:
            reporter.write_line(line)
        else:
            print(line)


# ------------------------------------------------------------------------------ running a case

DRAFT_DPI = 50           # the figures of `call`'s `paper`: a sixteenth of the pixels, a quarter less time a case


def call(argv, main=None) -> tuple[object, str, str]:
    """(exit status, stdout, stderr) of `nbsymple ARGV` (or of `main(ARGV)`, another command's
    entry) in this process, like tests/cli_call.py,
    but stdout is a strict UTF-8 stream (what a pipe or terminal in a UTF-8 locale is), an
    exception that escapes `main` comes back as its traceback on stderr with status None, and
    the Python warnings it raised are on stderr as a user's interpreter prints them. A `paper`
    draws at `DRAFT_DPI`: its cases check what is written and said, not the figures' resolution
    (tests/test_paper.py and tests/test_paper_record.py check the figures at the paper's own)."""
    out_b, err_b = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(out_b, encoding="utf-8", errors="strict", write_through=True)
    err = io.TextIOWrapper(err_b, encoding="utf-8", errors="backslashreplace", write_through=True)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            warnings.catch_warnings(record=True) as caught, pytest.MonkeyPatch.context() as mp:
        mp.setattr(style, "DPI", DRAFT_DPI)
        warnings.simplefilter("default")   # what a user's interpreter prints, once per place
        try:
            rc = on_a_fresh_stack(main or cli.main, [str(a) for a in argv])
        except SystemExit as e:
            rc = e.code
        except Exception:                  # noqa: BLE001 - what a user would see: a traceback
            rc = None
            err.write(traceback.format_exc())
        for w in caught:                   # on a user's stderr, two lines each
            err.write(warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line))
    out.flush()
    err.flush()
    return rc, out_b.getvalue().decode("utf-8", "backslashreplace"), err_b.getvalue().decode("utf-8")


def _digest(path: Path) -> str:
    """A regular file's SHA-256, else what it is (a FIFO or a device is never read: it could block)."""
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            return f"special ({stat.S_IFMT(mode):o})"
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as e:
        return f"unreadable ({e.errno})"


HANG_GUARD = 300                     # seconds: a guard against a hang, far beyond any case's time


@contextlib.contextmanager
def hang_guard(seconds: int = HANG_GUARD):
    """Fail what does not end within `seconds` (a hang, never a timing): SIGALRM interrupts a
    blocking call (an open of a FIFO, a read of /dev/zero) with TimeoutError."""
    def hang(signum, frame):
        raise TimeoutError(f"no answer within {seconds} s: the command hangs")
    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def tree(root: Path, content: bool = True) -> dict:
    """Every path under `root` -> what it is (a file's SHA-256, or its size, inode and mtime)."""
    seen = {}
    if not root.exists():
        return seen
    for dirpath, dirnames, filenames in os.walk(root):
        folder = Path(dirpath)
        for name in dirnames:
            path = folder / name
            seen[str(path)] = "link" if path.is_symlink() else "folder"
        for name in filenames:
            path = folder / name
            if content:
                seen[str(path)] = _digest(path)
            else:
                st_ = path.lstat()
                seen[str(path)] = (st_.st_size, st_.st_ino, st_.st_mtime_ns)
    return seen


def everything(root: Path) -> dict:
    state = tree(root)
    for folder in WATCHED:
        state.update(tree(folder, content=False))
    return state


@contextlib.contextmanager
def sandbox():
    """A fresh temporary folder, made the current directory for the case (monkeypatch.chdir)."""
    with tempfile.TemporaryDirectory(prefix="hostile-") as tmp, pytest.MonkeyPatch.context() as mp:
        root = Path(tmp).resolve()
        mp.chdir(root)
        yield root


def allowed_paths(root: Path, named, checkpoints=()) -> list[str]:
    """Absolute names of what a case may write: the named paths, the folders above them and, for a
    checkpoint, its lock file beside it (runs/locks.py)."""
    allowed = []
    for text in list(named) + list(checkpoints):
        if not str(text).strip():
            continue
        path = os.path.abspath(os.path.join(root, str(text)))
        allowed.append(path)
    for text in checkpoints:
        if str(text).strip():
            path = Path(os.path.abspath(os.path.join(root, str(text))))
            allowed.append(str(path.parent / f".{path.name}.lock"))
    return allowed


def problems(argv, rc, out: str, err: str, before: dict, after: dict, allowed, json_asked: bool,
             statuses=(0, 2)) -> list[str]:
    """What is wrong with a case's outcome (the module's docstring), one short phrase each."""
    found = []
    if "Traceback" in err or "Traceback" in out:
        found.append("traceback")
    if rc not in statuses:
        found.append(f"exit status {rc!r}")
    if rc == 3 and "non-finite" not in err:
        found.append("status 3 without naming the non-finite state")
    if shown(err) != err:                 # user text must not break a sentence or redraw the terminal
        found.append("a control character on stderr")
    lines = err.strip().splitlines()
    if argv and argv[0] == "paper" and rc in (0, 1):
        # docs/paper.md: one sentence per artefact not written and per file skipped, then the summary
        if not all(line.startswith("nbsymple paper: ") for line in lines):
            found.append("a paper line that is not its own sentence")
    elif len(lines) > 3:
        found.append(f"{len(lines)} lines on stderr")
    elif lines and not all(line.startswith(lines[0].split()[0]) for line in lines):
        found.append("a line on stderr that is not its own sentence (user text holding a line feed)")
    if json_asked and rc == 0 and not out.startswith("usage: "):
        try:
            json.loads(out, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(f"{c} is not JSON")))
        except ValueError as e:
            found.append(f"stdout is not one JSON document ({e})")
    changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))

    def ok(path: str) -> bool:
        if after.get(path) == "folder" and path not in before and any(a.startswith(path + os.sep) for a in allowed):
            return True                   # a folder above a named path, made to hold it
        return any(path == a or path.startswith(a.rstrip(os.sep) + os.sep) for a in allowed)
    stray = [p for p in changed if not ok(p)]
    if stray:
        found.append(f"changed outside the command's paths: {stray} (allowed: {allowed})")
    return found


def verify(test: str, argv, rc, out: str, err: str, found: list[str]):
    RAN[(test, rc)] += 1
    assert not found, f"{'; '.join(found)}\nargv={argv!r}\nstatus={rc!r}\nstderr={err[-4000:]}\nstdout={out[-1500:]}"


def run_case(test: str, root: Path, argv, named=(), checkpoints=(), json_asked=False, statuses=(0, 2),
             kept_on_refusal=(), main=None):
    """Run one case in `root` and verify it; `kept_on_refusal`: paths that a refusal (status 2)
    must leave as they were ("nothing written", docs/cli.md and docs/paper.md); `main`: another
    command's entry than `nbsymple`'s (`call`)."""
    assume(not writes_outside(argv))
    before = everything(root)
    note(f"argv = {argv!r}")
    with hang_guard():
        rc, out, err = call(argv, main)
    after = everything(root)
    found = problems(argv, rc, out, err, before, after, allowed_paths(root, named, checkpoints), json_asked, statuses)
    if rc == 2:
        for text in kept_on_refusal:
            path = str(root / text)
            touched = [p for p in before.keys() | after.keys()        # the lock files (runs/locks.py) aside
                       if (p == path or p.startswith(path + os.sep)) and before.get(p) != after.get(p)
                       and not (Path(p).name.startswith(".") and Path(p).name.endswith(".lock"))]
            if touched:
                found.append(f"refused, yet written: {touched}")
    verify(test, argv, rc, out, err, found)
    return rc, out, err


# ------------------------------------------------------------------------------ strategies

NO_NUL = st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",))
JUNK = ["", " ", "-", "--", "-1", "0", "1", "2", "nan", "NaN", "inf", "-inf", "1e309", "1e-320", "0x10",
        "1_000", "\u0663", "\uff11\uff12", " 7 ", "7.0", "2**8", "1e3", "None", "true", "\n", "\t5", "+3",
        "--json", "-x", "A", "b", "sm_90", "\udcff", "é", "٣٣", "999999999999999999999999",
        "1" + "0" * 400]                                 # beyond float64: an OverflowError where it met a float


def argv_text(max_size: int = 24):
    """What a shell can pass: any text without NUL, undecodable bytes included (surrogateescape)."""
    return st.one_of(st.sampled_from(JUNK), st.text(NO_NUL, max_size=max_size),
                     st.binary(max_size=max_size).filter(lambda b: b"\x00" not in b).map(os.fsdecode))


def _as_int(text):
    try:
        return int(text)
    except (ValueError, TypeError):
        return None


def count_text(cheap: int, refused: int | None = None, low: int = 2):
    """A whole number as typed, refused or not: below `low`, so large it is refused (`refused`),
    or any text; text that parses to an affordable count is drawn, an expensive one is not (one
    beyond float64's range is refused by every command, before any work)."""
    def affordable(text):
        v = _as_int(text)
        return v is None or v <= cheap or (refused is not None and v >= refused) or v > 10**308
    parts = [st.integers(max_value=low - 1).map(str), argv_text().filter(affordable),
             st.sampled_from(["1.5", "1e1", "0x10", "\u0663", "\uff12", " 2 ", "2_0", "+2"]).filter(affordable)]
    if refused is not None:
        parts.append(st.integers(min_value=refused).map(str))
    return st.one_of(*parts)


def float_text():
    return st.one_of(st.floats().map(repr), st.sampled_from(["-1e-3", "0", "-0", "nan", "inf", "1e309", "1e-400",
                     " 1e-2", "\u0660.\u0661", "0x1p-3", "1_0.5"]), argv_text())


def valid_float():
    return st.one_of(st.floats(1e-6, 1.0).map(repr), st.sampled_from(["5e-4", "0.01", "1e-300", "1e300", "0.5", "10",
                                                                     "1E-2", "5e-324"]))


def opt(valid, hostile_=None):
    """An option's values: (what it takes, what it should refuse or survive)."""
    return valid, argv_text() if hostile_ is None else st.one_of(hostile_, argv_text())


def one(*values):
    return st.sampled_from(values)


def _safe(text: str) -> bool:
    """A path that stays inside the case's folder (nothing above it, nothing absolute)."""
    return "\x00" not in text and not os.path.isabs(text) and ".." not in Path(text).parts and \
        not text.startswith("~")


PATH_NAMES = ["out", "d/sub/x", "file.txt", "folder", "folder/", ".", "./", "file.txt/x", "good.ck", "good.ics",
              "bad.ics", "snaps", "x" * 300, "a/" + "y" * 256, " ", "-", "x\ny", "", "folder/new", "é/ü", "\udcff",
              "snaps/./", "folder//x", "-x", "out/.", ".lock"]


def path_text():
    return st.one_of(st.sampled_from(PATH_NAMES), st.sampled_from(PATH_NAMES), argv_text(40).filter(_safe))


def path_opt(valid):
    """A path option's values: the hostile ones stay inside the case's folder (a path outside it
    would be written to: the cases run as whoever runs the tests)."""
    return valid, path_text()


def writes_outside(argv) -> bool:
    """True if a path option (or an abbreviation argparse would take for one) gets a value that
    leaves the case's folder; such a case is not run."""
    argv = [str(a) for a in argv]
    for i, token in enumerate(argv):
        if not token.startswith("--") or token == "--":
            continue
        flag, eq, value = token.partition("=")
        if any(p.startswith(flag) for p in PATH_FLAGS) and len(flag) > 2:
            if not eq:
                value = argv[i + 1] if i + 1 < len(argv) else ""
            if not _safe(value):
                return True
    return False


@st.composite
def options(draw, table: dict, always=(), at_most: int = 6):
    """argv pieces: the `always` options and a few more of `table`'s, each `--flag value` or
    `--flag=value`, in any order, each value valid or (with a chance drawn per case: never, now
    and then, often, always) hostile; returns (pieces, {flag: [values]})."""
    names = list(always) + draw(st.lists(st.sampled_from(sorted(table)), max_size=at_most))
    names = draw(st.permutations(names))
    hostility = draw(st.sampled_from([0, 0, 1, 3, 10]))          # in tenths
    pieces, given = [], {}
    for flag in names:
        valid, bad = table[flag]
        value = draw(bad if draw(st.integers(0, 9)) < hostility else valid)
        values = value if isinstance(value, list) else [value]
        given.setdefault(flag, []).extend(values)
        if len(values) == 1 and draw(st.booleans()):
            pieces.append(f"{flag}={values[0]}")
        else:
            pieces += [flag, *values]
    return pieces, given


FLAG = (st.just([]), st.just([]))
EXTRA_FLAGS = st.one_of(st.just([]), st.just([]), st.just([]),
                        st.lists(st.sampled_from(["--bogus", "-x", "stray", "--json", "--"]), min_size=1, max_size=2))


# ------------------------------------------------------------------------------ files made once

@functools.cache
def base_files():
    """Bytes of a valid checkpoint (8 bodies, 2 steps, no snapshots), a valid .npz snapshot, a
    valid ASCII snapshot folder and a valid initial-condition file, made by the program itself."""
    with sandbox() as root:
        rc, _, err = call(["run", "--n", 8, "--steps", 2, "--seed", 1, "--checkpoint", "c.ck",
                           "--checkpoint-every", 1])
        assert rc == 0, err
        rc, _, err = call(["run", "--n", 8, "--steps", 1, "--seed", 1, "--snapshots", "s"])
        assert rc == 0, err
        rc, _, err = call(["run", "--n", 8, "--steps", 1, "--seed", 2, "--snapshots", "t",
                           "--snapshot-format", "nbsymple"])
        assert rc == 0, err
        rc, _, err = call(["run", "--n", 8, "--steps", 0, "--seed", 3, "--checkpoint", "bare.ck"])
        assert rc == 0, err
        files = {"checkpoint": (root / "bare.ck").read_bytes(),
                 "checkpoint_stepped": (root / "c.ck").read_bytes(),
                 "npz": (root / "s" / "snap_00000001.npz").read_bytes(),
                 "txt": (root / "t" / "snap_00000000.txt").read_bytes(),
                 "sidecar": (root / "t" / "snapshots.json").read_bytes(),
                 "record": (root / "s" / "nbsymple-run.json").read_bytes()}
    files["ics"] = files["txt"]
    version, header, arrays = split_checkpoint(files["checkpoint_stepped"])
    header["run"].update(snapshots="snaps", every=1)   # a folder in the case's own folder, by a relative name
    files["checkpoint_snaps"] = seal(version, json_bytes(header), arrays)
    return files


def populate(root: Path):
    """What every case's folder holds before the command: a file, an empty folder, a valid
    checkpoint and initial conditions, and a file that is none."""
    base = base_files()
    (root / "file.txt").write_text("a file, not a folder\n")
    (root / "folder").mkdir()
    (root / "good.ck").write_bytes(base["checkpoint"])
    (root / "good.ics").write_bytes(base["ics"])
    (root / "bad.ics").write_bytes(b"1 2 3\n")


# ------------------------------------------------------------------------------ JSON mutations

SAFE_TEXT = st.text(NO_NUL, max_size=12).filter(_safe)
JSON_LEAF = st.one_of(st.none(), st.booleans(), st.integers(), st.sampled_from([0, -1, 1, 2**64, 10**400, -(10**400)]),
                      st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([1e308, -1e308, 5e-324, 0.0]),
                      SAFE_TEXT)
JSON_VALUE = st.recursive(JSON_LEAF, lambda c: st.lists(c, max_size=3) | st.dictionaries(SAFE_TEXT, c, max_size=3),
                          max_leaves=6)


def json_paths(value, prefix=()):
    """Every key path into a JSON value (lists by index)."""
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from json_paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from json_paths(v, prefix + (i,))


@st.composite
def mutated_json(draw, original, value=JSON_VALUE, times: int = 2):
    """`original` with up to `times` values replaced by arbitrary JSON, or keys removed."""
    doc = json.loads(json.dumps(original))
    for _ in range(draw(st.integers(1, times))):
        paths = list(json_paths(doc))
        path = draw(st.sampled_from(paths))
        if not path:
            doc = draw(value)
            continue
        parent = doc
        for k in path[:-1]:
            parent = parent[k]
        if isinstance(parent, dict) and draw(st.integers(0, 4)) == 0:
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(value)
    return doc


def json_bytes(doc) -> bytes:
    return json.dumps(doc, allow_nan=True).encode()


@st.composite
def file_bytes(draw, original: bytes, structured=None):
    """Arbitrary bytes for a file whose valid content is `original`: anything, a cut, flipped or
    extended copy, or (with `structured`, a strategy) contents that are valid in form only."""
    kinds = ["raw", "cut", "flip", "extend"] + (["structured"] * 3 if structured is not None else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "raw":
        return draw(st.binary(max_size=400))
    if kind == "cut":
        return original[:draw(st.integers(0, max(len(original) - 1, 0)))]
    if kind == "flip":
        data = bytearray(original)
        for _ in range(draw(st.integers(1, 3))):
            if data:
                i = draw(st.integers(0, len(data) - 1))
                data[i] = draw(st.integers(0, 255))
        return bytes(data)
    if kind == "extend":
        return original + draw(st.binary(min_size=1, max_size=40))
    return draw(structured)


# ============================================================================== run: every option

GPU_TABLE = {                        # the versions' options: only some versions take each
    "--tile": opt(one("32", "256", "1024"), one("33", "0", "2048", "-32")),
    "--gpu-kernel": opt(one("tiled", "plain", "PLAIN")),
    "--gpu-backend": opt(one("numba", "cupy")),
    "--devices": opt(one("1", "2"), one("0", "-1")),
    "--node-version": opt(one("B", "D", "E", "b")),
}
RUN_TABLE = {
    "--version": opt(one("A", "B", "b", "F"), one("C", "D", "E", "AB", "Z", "a ")),
    "--n": opt(st.integers(2, 64).map(str), count_text(64, HUGE)),
    "--scheme": opt(one("leapfrog", "si6a", "SI6A")),
    "--precision": opt(one("sp", "dp", "dsp", "DP")),
    "--dt": opt(valid_float(), float_text()),
    "--steps": opt(st.integers(0, 3).map(str), count_text(3, low=0)),
    "--seed": opt(st.integers(0, 2**70).map(str), st.integers(-2**70, -1).map(str)),
    "--snapshots": path_opt(one("snaps", "out/s", "folder", "snaps/")),
    "--snapshot-format": opt(one("npz", "nbsymple", "NPZ")),
    "--ics": path_opt(one("good.ics")),
    "--ics-mass": opt(valid_float(), float_text()),
    "--ics-radius": opt(valid_float(), float_text()),
    "--constants": opt(one("exact", "authors", "AUTHORS"), one("theirs", "exact ", "")),
    "--mass-classes": opt(st.integers(1, 64).map(str), st.one_of(one("1000000000000", str(2**63), "1" + "0" * 30),
                                                                 count_text(64, low=1))),
    "--every": opt(st.integers(1, 5).map(str), count_text(5, low=1)),
    "--checkpoint": path_opt(one("c.ck", "d/c.ck", "good.ck", "folder/c.ck")),
    "--checkpoint-every": opt(st.integers(1, 5).map(str), count_text(5, low=1)),
    "--resume": path_opt(one("good.ck")),
    "--json": FLAG,
}
PATH_FLAGS = ("--snapshots", "--ics", "--checkpoint", "--resume", "--keep", "--out", "--results", "--measure",
              "--measured", "--plot")


@st.composite
def run_argv(draw):
    pieces, given = draw(options(RUN_TABLE, always=("--steps",), at_most=6))     # default N = 1024: cheap
    if draw(st.integers(0, 3)) == 0:
        more, more_given = draw(options(GPU_TABLE, at_most=2))
        pieces += more
        given.update(more_given)
    return ["run", *pieces, *draw(EXTRA_FLAGS)], given


def _named(given, flags=PATH_FLAGS):
    return [v for flag in flags for v in given.get(flag, [])]


@hostile(90)
@given(case=run_argv())
@example(case=(["run", "--steps", "0", "--n", "8", "--mass-classes", "1000000000000"],      # rarely drawn
               {"--mass-classes": ["1000000000000"]}))
@example(case=(["run", "--steps", "1", "--ics", "good.ics", "--ics-mass", "1e-300", "--ics-radius", "1e300"],
               {"--ics": ["good.ics"], "--ics-mass": ["1e-300"], "--ics-radius": ["1e300"]}))   # a scale of no size
def test_run_options(case):
    argv, given = case
    json_asked = "--json" in given or "--json" in argv[-2:]
    with sandbox() as root:
        populate(root)
        run_case("run options", root, argv, _named(given), _named(given, ("--checkpoint", "--resume")), json_asked,
                 statuses=(0, 2, 3))


@hostile(30)
@given(where=st.sampled_from(["--snapshots", "--checkpoint", "--ics"]), name=argv_text(30).filter(_safe),
       text=st.booleans(), fmt=st.sampled_from(["npz", "nbsymple"]))
@example(where="--snapshots", name=os.fsdecode(b"s\xff"), text=True, fmt="npz")       # an undecodable name
@example(where="--checkpoint", name="2**8", text=False, fmt="npz")      # glob's own characters in a name
@example(where="--snapshots", name="s[1]*?", text=True, fmt="nbsymple")
def test_run_path_names(where, name, text, fmt):
    """Any name a shell can pass (undecodable bytes, newlines, spaces, long names) for the file or
    folder a run writes or reads; a valid run with it reports as usual, on a strict UTF-8 stdout."""
    argv = ["run", "--n", 8, "--steps", 1, "--seed", 1, where, name, "--snapshot-format", fmt]
    if where == "--ics":
        argv = ["run", "--steps", 1, "--ics", name, "--ics-mass", 15360]
    if not text:
        argv.append("--json")
    with sandbox() as root:
        populate(root)
        if where == "--ics" and _safe(name) and name.strip():
            with contextlib.suppress(OSError):
                target = root / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(base_files()["ics"])
        run_case("run path names", root, argv, [name], [name] if where == "--checkpoint" else [], not text,
                 statuses=(0, 2))


# ============================================================================== run --ics FILE

NUMBER_WORDS = st.one_of(st.floats().map(repr), st.floats(-2.0, 2.0).map(repr), st.floats(1e-3, 1.0).map(repr),
                         st.sampled_from(["1", "-0", "1e-320", "1e308", "-1e308", "nan", "inf", "1_0", "0x1p3",
                                          "\uff11", "+.5e-3", "1e400", "850", "85.6", "0.125", "1e200", "3e153"]),
                         st.text(NO_NUL, min_size=1, max_size=6).filter(lambda t: t.strip() == t and " " not in t))


FINITE = st.floats(allow_nan=False, allow_infinity=False)
NEAR = st.tuples(st.floats(849.0, 851.0), st.floats(-1.0, 1.0), st.floats(-1.0, 1.0),
                 st.floats(-1.0, 1.0), st.floats(84.0, 87.0), st.floats(-1.0, 1.0), st.floats(1e-3, 0.2))
WILD = st.tuples(FINITE, FINITE, FINITE, FINITE, FINITE, FINITE, st.floats(5e-324, 1.7e308))
ROWS = {"near": NEAR, "wild": WILD, "mixed": st.one_of(NEAR, NEAR, WILD)}


@st.composite
def ics_text(draw):
    """An initial-condition file in form: N lines of seven numbers (near the paper's cluster, or
    any finite values), and, in a dirty file, the faults a hand-made file has (a missing or extra
    column, words that are no numbers, a header line, CRLF, tabs, vertical tabs, non-ASCII)."""
    n = draw(st.integers(0, 24))
    clean = draw(st.booleans())
    rows = ROWS[draw(st.sampled_from(sorted(ROWS)))]
    lines = []
    for _ in range(n):
        if clean or draw(st.integers(0, 5)):
            row = [draw(st.sampled_from(["{!r}", "{:+.16e}", "{:.9e}", "{:g}"])).format(v) for v in draw(rows)]
        else:
            row = draw(st.lists(NUMBER_WORDS, min_size=5, max_size=8))
        sep = " " if clean else draw(st.sampled_from([" ", " ", "\t", "  ", " \x0b "]))
        lines.append(sep.join(row))
    inserts = ["", "# comment", "   "] + ([] if clean else ["\x0c", "x y z vx vy vz m", "\ufeff1 2 3"])
    for _ in range(draw(st.integers(0, 2))):
        lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(inserts)))
    end = draw(st.sampled_from(["\n", "\r\n"] if clean else ["\n", "\r\n", "\r", "\n\n"]))
    text = end.join(lines) + draw(st.sampled_from(["", end]))
    encoding = "ascii" if clean else draw(st.sampled_from(["ascii", "utf-8", "utf-16", "latin-1"]))
    return text.encode(encoding, errors="replace")


@hostile(50)
@given(data=st.one_of(st.binary(max_size=300), ics_text(), ics_text()),
       version=st.sampled_from(["A", "B", "F"]), scheme=st.sampled_from(["leapfrog", "si6a"]),
       precision=st.sampled_from(["sp", "dp", "dsp"]), steps=st.integers(0, 3),
       dt=st.sampled_from(["5e-4", "0.01", "1", "1e5"]), extra=st.lists(st.sampled_from(
           ["--json", "--snapshots=snaps", "--snapshot-format=nbsymple", "--checkpoint=c.ck", "--every=1"]),
           unique=True, max_size=3))
# drawn rarely: a body whose energy float64 cannot hold (refused after --snapshots' folder was made?),
# and masses whose sum overflows (a numpy warning on stderr?)
@example(data=b"850 0 0 0 85.6 0 0.5\n851 0 0 0 85.6 0 0.5\n1e200 0 0 0 0 0 0.25\n", version="A",
         scheme="leapfrog", precision="dp", steps=0, dt="5e-4", extra=["--snapshots=snaps"])
@example(data=b"1e300 0 0 0 0 0 1e308\n0 0 0 0 0 0 1e308\n", version="A", scheme="leapfrog", precision="dp",
         steps=0, dt="5e-4", extra=[])
# found by CI: a state the simulation's float64 energy split refuses after the O(N) checks passed
# (refused, yet its snapshot folder was made), with float32 casts warning on stderr
@example(data=b"1.18859e-270 -5.38521e-109 -2.6302264450103916e+16 +4.2413782160154432e+16 4.57176e+16 "
              b"7.771886383338799e+52 5e-324\r\n+8.4999999999999998e-01 +2.0059225287410136e+16 -1.605203871e+143 "
              b"1.343719490e-86 -1.4739853974762358e+16 -5.4048194379076352e+16 6.708708309860127e+273",
         version="B", scheme="si6a", precision="sp", steps=1, dt="1e5",
         extra=["--snapshots=snaps", "--every=1", "--checkpoint=c.ck"])
def test_run_initial_conditions(data, version, scheme, precision, steps, dt, extra):
    note(f"ic.txt = {data!r}")
    argv = ["run", "--ics", "ic.txt", "--ics-mass", "15360", "--version", version, "--scheme", scheme,
            "--precision", precision, "--steps", steps, "--dt", dt, *extra]
    named = ["ic.txt"] + [e.split("=", 1)[1] for e in extra if e.split("=")[0] in ("--snapshots", "--checkpoint")]
    with sandbox() as root:
        populate(root)
        (root / "ic.txt").write_bytes(data)
        run_case("run --ics", root, argv, named, ["c.ck"] if "--checkpoint=c.ck" in extra else [],
                 "--json" in extra, statuses=(0, 2, 3), kept_on_refusal=named)


# ============================================================================== run --resume FILE

MAGIC = b"NBSYMPLE-CHECKPOINT\n"
PREFIX = struct.Struct("<IQ")


def split_checkpoint(data: bytes):
    version, head_len = PREFIX.unpack(data[len(MAGIC):len(MAGIC) + PREFIX.size])
    start = len(MAGIC) + PREFIX.size
    return version, json.loads(data[start:start + head_len]), data[start + head_len:-32]


def seal(version: int, head: bytes, arrays: bytes, head_len: int | None = None) -> bytes:
    """A checkpoint of these parts with a matching SHA-256 trailer."""
    body = MAGIC + PREFIX.pack(version, len(head) if head_len is None else head_len) + head + arrays
    return body + hashlib.sha256(body).digest()


def _number(value, default):
    """`value` where it is a count a checkpoint can hold (an int64's range; beyond it, or not a
    number, it is refused at once), else `default`. (math.isfinite overflowed on 10**400.)"""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and -2**63 < value < 2**63
    return value if ok else default


def _long_run(header) -> bool:
    """A header that would make a valid run of many steps (kept out: the case must stay cheap)."""
    def get(*keys):
        value = header
        for k in keys:
            if not isinstance(value, dict) or k not in value:
                return None
            value = value[k]
        return value
    total = max(_number(get("run", "steps"), 0), 3)
    return total - min(_number(get("simulation", "steps_done"), 0), 0) > 6


@st.composite
def checkpoint_bytes(draw, original: bytes):
    """Arbitrary bytes, a damaged copy, or a checkpoint whose checksum matches but whose format
    field, header or arrays are anything."""
    version, header, arrays = split_checkpoint(original)
    kind = draw(st.sampled_from(["bytes", "bytes", "header", "header", "header", "header", "garbage-header",
                                 "arrays", "version"]))
    if kind == "bytes":
        return draw(file_bytes(original)), None
    if kind == "header":
        header = draw(mutated_json(header, times=3))
        assume(not _long_run(header))
        return seal(version, json_bytes(header), arrays), header
    if kind == "garbage-header":
        return seal(version, draw(st.binary(max_size=200)), arrays), None
    if kind == "arrays":
        cut = draw(st.integers(0, len(arrays)))
        return seal(version, json_bytes(header), arrays[:cut] + draw(st.binary(max_size=64))), header
    return seal(draw(st.integers(0, 2**32 - 1)), json_bytes(header), arrays,
                draw(st.one_of(st.none(), st.integers(0, 2**64 - 1)))), header


RESUME_EXTRA = st.lists(st.sampled_from(["--json", "--steps=0", "--steps=1", "--steps=3", "--snapshots=snaps",
                                         "--every=1", "--checkpoint-every=1", "--every=0"]), unique=True, max_size=3)


@hostile(90)
@given(case=st.data(), extra=RESUME_EXTRA)
def test_run_resume_checkpoint(case, extra):
    base = base_files()
    data, _ = case.draw(st.one_of(checkpoint_bytes(base["checkpoint"]), checkpoint_bytes(base["checkpoint_stepped"]),
                                       checkpoint_bytes(base["checkpoint_snaps"])))
    note(f"c.ck = {data!r}")
    argv = ["run", "--resume", "c.ck", *extra]
    named = ["c.ck"] + (["snaps"] if "--snapshots=snaps" in extra else [])
    try:                                # the snapshot folder the checkpoint names is the run's own too
        folder = split_checkpoint(data)[1]["run"]["snapshots"]
        if isinstance(folder, str):
            named.append(folder)
    except (TypeError, KeyError, IndexError, ValueError, struct.error):
        pass
    with sandbox() as root:
        populate(root)
        (root / "c.ck").write_bytes(data)
        run_case("run --resume", root, argv, named, ["c.ck"], "--json" in extra, statuses=(0, 2, 3),
                 kept_on_refusal=named)


NO_SCALE = [(10.0, 5e-324), (1e-300, 1e300), (1e300, 1e-300)]      # r_cl in pc, M in Msun


@hostile(len(NO_SCALE))
@given(units=st.sampled_from(NO_SCALE))
@example(units=NO_SCALE[0])
@example(units=NO_SCALE[1])
@example(units=NO_SCALE[2])
def test_a_checkpoint_whose_units_have_no_scale_is_refused(units):
    """Found by a random search: a resealed checkpoint of 5e-324 Msun (positive and finite, but a
    velocity unit that underflows to 0) ended in a ZeroDivisionError; `Units` now refuses it."""
    r_cl_pc, mass_msun = units
    version, header, arrays = split_checkpoint(base_files()["checkpoint"])
    header["state"]["units"].update(r_cl_pc=r_cl_pc, mass_msun=mass_msun)
    with sandbox() as root:
        populate(root)
        (root / "c.ck").write_bytes(seal(version, json_bytes(header), arrays))
        rc, _, err = run_case("run --resume", root, ["run", "--resume", "c.ck"], ["c.ck"], ["c.ck"], statuses=(2,),
                              kept_on_refusal=["c.ck"])
        assert "zero or not finite" in err, err


BEYOND_FLOAT64 = {          # where a resealed checkpoint holds what record() never writes -> the word refusing it
    ("simulation", "clock", "calls", "galactic"): "simulation.clock.calls",     # found by a random search
    ("simulation", "steps_done"): "simulation.steps_done",
    ("run", "steps"): "run.steps",
    ("simulation", "energy_parts0", "foo"): "energy_parts0",                    # a key EnergyParts has not
}


@hostile(len(BEYOND_FLOAT64))
@given(where=st.sampled_from(sorted(BEYOND_FLOAT64)))
@example(where=("simulation", "clock", "calls", "galactic"))
@example(where=("simulation", "steps_done"))
@example(where=("run", "steps"))
@example(where=("simulation", "energy_parts0", "foo"))
def test_a_checkpoint_holding_integers_of_400_digits_is_refused(where):
    """Found by a random search: a resealed checkpoint whose call count was an integer of 400
    digits ended in an OverflowError where it met a float (and a key the energy parts do not have,
    in a TypeError). JSON's integers beyond float64 are read as +-inf, as 1e400 is, and refused."""
    version, header, arrays = split_checkpoint(base_files()["checkpoint"])
    parent = header
    for key in where[:-1]:
        parent = parent[key]
    parent[where[-1]] = 10**400 if where[-1] != "foo" else 1
    with sandbox() as root:
        populate(root)
        (root / "c.ck").write_bytes(seal(version, json_bytes(header), arrays))
        rc, _, err = run_case("run --resume", root, ["run", "--resume", "c.ck", "--steps", "9"], ["c.ck"], ["c.ck"],
                              statuses=(2,), kept_on_refusal=["c.ck"])
        assert BEYOND_FLOAT64[where] in err, err


@hostile(2)
@given(digits=st.sampled_from([400, 5000]))
@example(digits=5000)
def test_paper_reads_a_results_file_holding_an_integer_of_400_digits(digits):
    """A measurement of 10**400 in an asv results file (an OverflowError where it was checked): the
    file is malformed, said in one sentence. One of 5000 digits, beyond Python's int-string limit,
    is the same number (it was "not valid JSON", with the advice to raise sys.set_int_max_str_digits)."""
    with sandbox() as root:
        res = copy_fixture(root, "res")
        path = res / MACHINE / "f86a8e19-existing-py_tmp_nbsymple_venv_bin_python.json"
        text = path.read_text()
        first = re.search(r"\d\.\d+e-\d+", text)
        path.write_text(text[:first.start()] + "1" + "0" * digits + text[first.end():])
        argv = ["paper", "--results", "res", "--no-science", "--out", "out", "--quiet"]
        rc, _, err = run_case("paper --results", root, argv, ["out"], statuses=(0, 1, 2), kept_on_refusal=["out"])
        assert "malformed" in err, err


# ============================================================================== run --snapshots DIR holding files

@st.composite
def npz_bytes(draw, original: bytes):
    """A `.npz` snapshot: arbitrary bytes, a damaged copy, a bare `.npy`, or an archive whose
    arrays are anything (any dtype and shape), missing or extra."""
    kind = draw(st.sampled_from(["bytes", "npy", "arrays", "arrays", "arrays"]))
    if kind == "bytes":
        return draw(file_bytes(original))
    if kind == "npy":
        buf = io.BytesIO()
        np.save(buf, draw(hnp.arrays(np.float64, hnp.array_shapes(max_dims=2, max_side=4))))
        return buf.getvalue()
    with np.load(io.BytesIO(original)) as d:
        arrays = {k: d[k] for k in d.files}
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from(sorted(arrays) + ["extra"]))
        if draw(st.integers(0, 3)) == 0:
            arrays.pop(key, None)
            continue
        dtype = draw(st.sampled_from([np.float64, np.float32, np.int64, np.bool_, np.complex128, "U3", np.uint8]))
        arrays[key] = draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=9)))
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


@st.composite
def sidecar_bytes(draw, original: bytes):
    return draw(file_bytes(original, mutated_json(json.loads(original)).map(json_bytes)))


@st.composite
def snapshot_folder(draw, base):
    """Files for a snapshot folder: .npz and .txt snapshots, snapshots.json and the run record,
    each valid, absent or hostile."""
    files = {}
    if draw(st.booleans()):
        files["snap_00000000.npz"] = draw(npz_bytes(base["npz"]))
    if draw(st.booleans()):
        files[draw(st.sampled_from(["snap_00000000.txt", "snap_00000003.txt", "snap_x.txt", "snap_.txt"]))] = \
            draw(st.one_of(st.just(base["txt"]), file_bytes(base["txt"], ics_text())))
    if draw(st.booleans()):
        files["snapshots.json"] = draw(st.one_of(st.just(base["sidecar"]), sidecar_bytes(base["sidecar"])))
    if draw(st.booleans()):
        files["nbsymple-run.json"] = draw(file_bytes(base["record"],
                                                     mutated_json(json.loads(base["record"])).map(json_bytes)))
    if draw(st.integers(0, 3)) == 0:
        files[draw(st.sampled_from([".lock", ".snap_1.npz.tmp", "other.txt"]))] = draw(st.binary(max_size=40))
    return files


@hostile(60)
@given(case=st.data(), extra=st.lists(st.sampled_from(["--json", "--snapshot-format=nbsymple", "--every=1",
                                                       "--checkpoint=c.ck", "--seed=1"]), unique=True, max_size=3),
       steps=st.integers(0, 2))
def test_run_into_a_snapshot_folder_holding_anything(case, extra, steps):
    files = case.draw(snapshot_folder(base_files()))
    note(f"snaps/ = {files!r}")
    argv = ["run", "--n", 8, "--steps", steps, "--snapshots", "snaps", *extra]
    named = ["snaps"] + (["c.ck"] if "--checkpoint=c.ck" in extra else [])
    with sandbox() as root:
        populate(root)
        (root / "snaps").mkdir()
        for name, data in files.items():
            (root / "snaps" / name).write_bytes(data)
        run_case("run --snapshots", root, argv, named, ["c.ck"] if "--checkpoint=c.ck" in extra else [],
                 "--json" in extra, statuses=(0, 2, 3), kept_on_refusal=named)


# ============================================================================== read_snapshot (Python API)

@hostile(150)
@given(case=st.data())
def test_read_snapshot_reads_a_snapshot_or_names_it(case):
    """`read_snapshot` returns a checked (State, step) or raises SnapshotError in one sentence."""
    base = base_files()
    ascii_ = case.draw(st.booleans())
    with sandbox() as root:
        if ascii_:
            name = case.draw(st.sampled_from(["snap_00000000.txt", "snap_00000007.txt", "snap_x.txt", "snap.txt"]))
            data = case.draw(st.one_of(st.just(base["txt"]), file_bytes(base["txt"], ics_text())))
            (root / name).write_bytes(data)
            side = case.draw(st.one_of(st.none(), st.just(base["sidecar"]), sidecar_bytes(base["sidecar"])))
            if side is not None:
                (root / "snapshots.json").write_bytes(side)
            note(f"{name} = {data!r}\nsnapshots.json = {side!r}")
        else:
            name = "snap_00000001.npz"
            data = case.draw(npz_bytes(base["npz"]))
            (root / name).write_bytes(data)
            note(f"{name} = {data!r}")
        argv = ["read_snapshot", name]
        outcome, details = read_outcome(root / name)
        verify("read_snapshot " + ("txt" if ascii_ else "npz"), argv, outcome, "", details[0], details[1:])


def read_outcome(path: Path) -> tuple[str, list[str]]:
    """('read' | 'SnapshotError' | 'other exception', [traceback or message, problems...])."""
    try:
        state, step = read_snapshot(path)
    except SnapshotError as e:
        text = str(e)
        return "SnapshotError", [text] + (["a message of more than one line"] if "\n" in text or not text else [])
    except Exception:                   # noqa: BLE001
        return "other exception", [traceback.format_exc(), "read_snapshot raised something other than SnapshotError"]
    found = []
    n = state.m.shape[0]
    if not (isinstance(state, State) and type(step) is int):
        found.append(f"returned {type(state).__name__}, {type(step).__name__}")
    if not (n >= 1 and state.x.shape == (3, n) and state.v.shape == (3, n)):
        found.append("arrays of inconsistent shapes")
    if not (np.isfinite(state.x).all() and np.isfinite(state.v).all() and (state.m > 0).all()):
        found.append("non-finite positions or velocities, or non-positive masses")
    if not (math.isfinite(state.t) and state.eps > 0 and math.isfinite(state.eps)):
        found.append(f"time {state.t!r} or softening {state.eps!r} not finite (and positive)")
    try:
        if not (state.units.r_cl_pc > 0 and math.isfinite(state.units.velocity_kms)):
            found.append(f"units {state.units!r}")
    except Exception as e:              # noqa: BLE001
        found.append(f"units {state.units!r} unusable ({type(e).__name__})")
    return "read", [""] + found


# ============================================================================== check, profile, info, gpu-asm

def _gpu_here() -> bool:
    from nbsymple_versions.versions import get_version
    try:
        return get_version("C").available()[0]
    except Exception:                   # noqa: BLE001
        return False


CHECK_TABLE = {"--n": opt(st.integers(2, 64).map(str), count_text(64, HUGE)),
               "--seed": opt(st.integers(0, 2**70).map(str), st.integers(-2**70, -1).map(str)),
               "--json": FLAG, "--gpu-kernel": opt(one("tiled", "plain")),
               "--gpu-backend": opt(one("numba", "cupy")), "--gpu-report": FLAG}


@hostile(30)
@given(case=options(CHECK_TABLE, at_most=4), extra=EXTRA_FLAGS)
def test_check_options(case, extra):
    pieces, given = case
    assume(not ("--gpu-report" in given and _gpu_here()))       # a GPU's report times N = 2^17: not here
    argv = ["check", *pieces, *extra]
    with sandbox() as root:
        run_case("check", root, argv, json_asked="--json" in given or "--json" in extra, statuses=(0, 1, 2))


PROFILE_TABLE = {"--versions": opt(one("A", "AB", "B", "F", "ab", "AAB", "BF"), one("", "Z", "CDE", "A B", "-")),
                 "--n": opt(st.lists(st.integers(2, 64).map(str), min_size=1, max_size=3),
                            st.lists(count_text(64, HUGE), min_size=1, max_size=3)),
                 "--scheme": opt(one("leapfrog", "si6a")), "--precision": opt(one("sp", "dp", "dsp")),
                 "--steps": opt(st.integers(1, 3).map(str), count_text(3, low=1)), "--json": FLAG,
                 "--gpu-kernel": opt(one("tiled", "plain")), "--gpu-backend": opt(one("numba", "cupy"))}


@hostile(40)
@given(case=options(PROFILE_TABLE, always=("--n", "--steps")), extra=EXTRA_FLAGS)
def test_profile_options(case, extra):
    pieces, given = case
    argv = ["profile", *pieces, *extra]
    if "--versions" not in given:
        argv += ["--versions", "AB"]          # all available versions, under a GPU the GPU ones too
    with sandbox() as root:
        run_case("profile", root, argv, json_asked="--json" in given or "--json" in extra)


@hostile(10)
@given(extra=st.lists(argv_text(), max_size=3))
@example(extra=["\xb9\r\xcc", "\x85\"\x0eu", "a\u2028b\x1b[2J"])     # found by a random search: 4 lines
@example(extra=["\n", "\n", "\n"])        # found by a random search: argparse's sentence broken over 4 lines
def test_info_options(extra):
    with sandbox() as root:
        run_case("info", root, ["info", *extra])


UNKNOWN_ARCHS = ("sm_12", "sm_999", "sm_10", "sm_99", "sm_91", "sm_01")     # ptxas refuses them at once
GPU_ASM_TABLE = {"--arch": opt(one(*UNKNOWN_ARCHS), one("SM_91", "sm_9", "sm_1000", "compute_90", "sm_90a", "",
                                                        "sm_\u0669\u0660")),
                 "--tile": opt(one("32", "256"), one("33", "0", "2048", "-32", "48")),
                 "--keep": path_opt(one("sass", "folder", "d/sass")), "--json": FLAG}


@hostile(25)
@given(case=options(GPU_ASM_TABLE, always=("--arch",)), extra=EXTRA_FLAGS)
def test_gpu_asm_options(case, extra):
    """Hostile values only (a valid architecture compiles every kernel: 20-30 s, test_gpu_asm.py's job);
    `--arch sm_12` and the like reach the compiler and are refused by it."""
    pieces, given = case
    arch = given["--arch"][-1].lower()
    tile = _as_int(given.get("--tile", ["256"])[-1])
    tile_ok = tile is not None and 32 <= tile <= 1024 and tile & (tile - 1) == 0
    real = re.fullmatch(r"sm_\d{2,3}", arch) and arch not in UNKNOWN_ARCHS and arch.isascii()
    assume(not (real and tile_ok))
    argv = ["gpu-asm", *pieces, *extra]
    with sandbox() as root:
        populate_simple(root)
        run_case("gpu-asm", root, argv, _named(given), json_asked="--json" in given or "--json" in extra)


def populate_simple(root: Path):
    (root / "file.txt").write_text("a file, not a folder\n")
    (root / "folder").mkdir()


# ============================================================================== special files anywhere (issue 32)

def _special(root: Path, place: str, kind: str):
    """Put a `kind` of special file or odd path at `root / place` (its folder made)."""
    path = root / place
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "socket":
        with socket.socket(socket.AF_UNIX) as s:
            s.bind(str(path))
    elif kind == "loop":
        path.symlink_to(path.name)
    else:                                # a link: to a device, nowhere, or a file of the case's
        path.symlink_to({"dev-zero": "/dev/zero", "dev-null": "/dev/null", "dangling": "nowhere/x",
                         "victim": os.path.relpath(root / "victim.txt", path.parent)}[kind])


SPECIAL_KINDS = ("fifo", "folder", "socket", "loop", "dev-zero", "dev-null", "dangling", "victim")
PAPER = ["paper", "--results", "res", "--no-science", "--out", "out", "--quiet"]
RUN8 = ["run", "--n", "8", "--steps", "1"]
# where a special file goes -> (the command that reads or writes that path, the paths it names, its checkpoints)
SPECIAL_PLACES = {
    "c.ck": (["run", "--resume", "c.ck"], ["c.ck"], ["c.ck"]),
    "ic.txt": (["run", "--ics", "ic.txt", "--steps", "1"], ["ic.txt"], []),
    "s/snapshots.json": (RUN8 + ["--snapshots", "s", "--snapshot-format", "nbsymple"], ["s"], []),
    "s/nbsymple-run.json": (RUN8 + ["--snapshots", "s"], ["s"], []),
    "s/snap_00000001.npz": (RUN8 + ["--snapshots", "s"], ["s"], []),
    "s/.lock": (RUN8 + ["--snapshots", "s"], ["s"], []),
    ".new.ck.lock": (RUN8 + ["--checkpoint", "new.ck"], ["new.ck"], ["new.ck"]),
    "new.ck": (RUN8 + ["--checkpoint", "new.ck"], ["new.ck"], ["new.ck"]),
    f"res/{MACHINE}/f86a8e19-existing-py_tmp_nbsymple_venv_bin_python.json": (PAPER, ["out"], []),
    f"res/{MACHINE}/machine.json": (PAPER, ["out"], []),
    f"res/{MACHINE}/deadbeef-other.json": (PAPER, ["out"], []),
    "res/benchmarks.json": (PAPER, ["out"], []),
    "out/speedup.png": (PAPER, ["out"], []),
    "out/REPORT.md": (PAPER, ["out"], []),
}


@pytest.mark.long
@hostile(40)
@given(place=st.sampled_from(sorted(SPECIAL_PLACES)), kind=st.sampled_from(SPECIAL_KINDS))
@example(place="out/speedup.png", kind="folder")      # found by a random search: a traceback before
@example(place="out/REPORT.md", kind="folder")
def test_special_files(place, kind):
    """A FIFO, a folder, a socket, a symbolic-link loop or a link (to a device, to nowhere, to a
    file of the case's) wherever a file is read or written: the command ends (under
    `hang_guard`) with a documented status in one sentence, never writes through the link, and
    leaves the case's `victim.txt` as it was."""
    argv, named, checkpoints = SPECIAL_PLACES[place]
    with sandbox() as root:
        populate(root)
        copy_fixture(root, "res")
        (root / "victim.txt").write_text("precious\n")
        _special(root, place, kind)
        if place == "new.ck" and kind == "dangling":      # a checkpoint named through a link is its target's
            named, checkpoints = named + ["nowhere/x"], checkpoints + ["nowhere/x"]
        run_case("special files", root, argv, named, checkpoints, statuses=(0, 1, 2) if argv[0] == "paper" else (0, 2))
        assert (root / "victim.txt").read_text() == "precious\n"


# ============================================================================== paper: options and files

def copy_fixture(root: Path, name: str = "res") -> Path:
    shutil.copytree(FIXTURE, root / name)
    return root / name


CHEAP_SCIENCE = ["--tidal-n", "8", "--tidal-dt", "0.5", "--tidal-orbits", "0.25", "--bh-n", "8", "--bh-dt", "0.5",
                 "--bh-t-end", "1", "--bh-ratios", "1"]
def test_the_cheap_science_settings_run():
    """What `test_paper_options` appends to its `--science` cases is valid and is run: its science
    figures are written (a quarter orbit; 0.05 orbits took no snapshot, so every such case was refused
    before any science ran)."""
    with sandbox() as root:
        copy_fixture(root, "res")
        rc, out, err = call(["paper", "--results", "res", "--out", "out", "--science", *CHEAP_SCIENCE, "--quiet"])
        assert rc == 0, err
        assert (root / "out" / "tidal_tails.png").is_file() and (root / "out" / "black_hole_passage.png").is_file()


PAPER_TABLE = {
    "--results": (one("res", "results"), st.one_of(one("folder", "file.txt", "res/" + MACHINE, "nope"), path_text())),
    "--machine": opt(one(MACHINE), one("nope", "", ".", "/", "../res", MACHINE + "/")),
    "--commit": opt(one("f86a8e19", "f", "f86a8e190e2fffa60d3e535d16c856206cbb7f01"),
                    one("", "0000", "f86a8e190e2fffa60d3e535d16c856206cbb7f01x", "F86A")),
    "--out": path_opt(one("out", "d/out", "folder", "res")),
    "--science-version": opt(one("A", "B", "b"), one("C", "F", "Z")),
    "--tidal-n": opt(st.integers(2, 64).map(str), count_text(64)),
    "--tidal-dt": opt(valid_float(), float_text()), "--tidal-orbits": opt(valid_float(), float_text()),
    "--tidal-precision": opt(one("sp", "dp", "dsp")),
    "--bh-n": opt(st.integers(2, 64).map(str), count_text(64)),
    "--bh-ratios": opt(st.lists(valid_float(), min_size=1, max_size=3), st.lists(float_text(), min_size=1, max_size=3)),
    "--bh-dt": opt(valid_float(), float_text()), "--bh-t-end": opt(valid_float(), float_text()),
    "--rerun": FLAG, "--full": FLAG, "--quiet": FLAG,
}


@pytest.mark.long
@hostile(45)
@given(case=options(PAPER_TABLE, at_most=6), science=st.sampled_from(["--no-science"] * 6 + ["--science"]),
       extra=st.one_of(st.just([]), st.just([]), st.just([]), st.lists(st.sampled_from(["--bogus", "stray", "--json"]),
                                                                       min_size=1, max_size=1)))
@example(case=(["--tidal-n", "1" + "0" * 400], {"--tidal-n": ["1" + "0" * 400]}), science="--science", extra=[])
@example(case=(["--out", "\udcff", "--bh-dt=10"], {"--out": ["\udcff"], "--bh-dt": ["10"]}),   # random search: a
         science="--no-science", extra=[])          # UnicodeEncodeError writing the path into REPORT.md
def test_paper_options(case, science, extra):
    pieces, given = case
    argv = ["paper", *pieces, science, *extra]
    if science == "--science":
        argv += CHEAP_SCIENCE + ["--quiet"]       # the last of a repeated option counts: these run, in seconds
    named = _named(given, ("--out",)) or ["plots"]   # the default --out, in the case's folder
    with sandbox() as root:
        populate_simple(root)
        copy_fixture(root, "res")
        copy_fixture(root, "results")
        run_case("paper options", root, argv, named, statuses=(0, 1, 2))


@st.composite
def results_folder(draw):
    """What to do to a copy of the asv fixture: a hostile results file, machine.json or
    benchmarks.json (any bytes, damaged, or JSON with values of any type), more files, more machines."""
    result = (FIXTURE / MACHINE / "f86a8e19-existing-py_tmp_nbsymple_venv_bin_python.json").read_bytes()
    machine = (FIXTURE / MACHINE / "machine.json").read_bytes()
    bench = (FIXTURE / "benchmarks.json").read_bytes()
    changes = {}
    for name, original in draw(st.lists(st.sampled_from([
            (f"{MACHINE}/f86a8e19-existing-py_tmp_nbsymple_venv_bin_python.json", result),
            (f"{MACHINE}/machine.json", machine), ("benchmarks.json", bench)]), min_size=1, max_size=3, unique=True)):
        changes[name] = draw(file_bytes(original, mutated_json(json.loads(original), times=3).map(json_bytes)))
    if draw(st.integers(0, 3)) == 0:
        changes[f"{MACHINE}/deadbeef-other.json"] = draw(file_bytes(result,
                                                                   mutated_json(json.loads(result)).map(json_bytes)))
    if draw(st.integers(0, 4)) == 0:
        changes["second-machine/machine.json"] = draw(st.one_of(st.just(machine), st.binary(max_size=40)))
    return changes


@pytest.mark.long
@hostile(40)
@given(changes=results_folder(), extra=st.lists(st.sampled_from(["--machine=" + MACHINE, "--commit=f86a"]),
                                                 unique=True, max_size=1))
def test_paper_reads_any_results_folder(changes, extra):
    note(f"results files = {changes!r}")
    argv = ["paper", "--results", "res", "--no-science", "--out", "out", "--quiet", *extra]
    with sandbox() as root:
        res = copy_fixture(root, "res")
        for name, data in changes.items():
            (res / name).parent.mkdir(parents=True, exist_ok=True)
            (res / name).write_bytes(data)
        run_case("paper --results", root, argv, ["out"], statuses=(0, 1, 2), kept_on_refusal=["out"])
