"""Hostile files and paths (issue 32, classes 1, 2 and 10), each as a user would meet it: the
command runs in its own process under a generous timeout (a hang guard, never a measurement)
and must end with exit status 2 (or the documented one) in at most 3 lines on stderr that name
the option or file, no traceback, and nothing previously written lost or overwritten.

1. Special files and odd paths: every path read is opened by `runs.paths.open_file` (a regular
   file only, checked before any call that could block; bounded in size).
2. Every field of every file read is checked: `runs.checkpoint.AGREEMENTS` (a checkpoint's
   header against its arrays), `runs.paths.parse_json` (depth), `paper.results.RESULTS_FIELDS`,
   `MACHINE_FIELDS` and `_row_problem` (asv files, their text one printable line), `paper.records`
   (what `paper` reads back: run.json, science_runs.json, the dt series), `tools.migrate`'s
   machine file.
10. Writes that follow a path out of where they belong: `runs.paths.open_lock` (O_NOFOLLOW,
   O_EXCL), `runs.paths.resolved` (one lock for two names), the checkpoint refused inside its
   snapshot folder, `tools.migrate`'s machine folder kept inside the results folder.
"""
import errno
import hashlib
import json
import math
import os
import re
from pathlib import Path
import argparse
import contextlib
import importlib
import io
import shutil
import socket
import subprocess
import sys

import numpy as np
import pytest

from nbsymple_versions.instruments import mpi_model
from nbsymple_versions.runs import locks
from nbsymple_versions.runs.paths import LIMITS, FileRefused, write_file

from test_hostile import FIXTURE, MACHINE, REPO, call, hang_guard, seal, split_checkpoint
from tools import gate, migrate, tracking

RESULTS = f"{MACHINE}/f86a8e19-existing-py_tmp_nbsymple_venv_bin_python.json"


def nbsymple(cwd: Path, *argv, module: str = "nbsymple_versions.cli") -> tuple[object, str, str]:
    """(exit status, stdout, stderr) of `nbsymple ARGV` (or `python -m tools.migrate|tracking ARGV`) run
    in this process (`test_hostile.call`) in `cwd`, under `test_hostile.hang_guard`."""
    with hang_guard(), pytest.MonkeyPatch.context() as mp:
        mp.chdir(cwd)
        if module in ("tools.migrate", "tools.tracking"):
            err = io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()) as out:
                try:
                    rc = (migrate if module == "tools.migrate" else tracking).main([str(a) for a in argv])
                except SystemExit as e:          # argparse's refusal of an option
                    rc = e.code
            return rc, out.getvalue(), err.getvalue()
        return call(argv)


def tree(root: Path) -> dict:
    """Every path under `root` -> its SHA-256 (a file; size and time of one too large to read),
    'folder', or where a link points."""
    seen = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if path.is_symlink():
                seen[str(path)] = "-> " + os.readlink(path)
            elif path.is_file() and path.stat().st_size > 1 << 26:     # a sparse giant: never read
                seen[str(path)] = (path.stat().st_size, path.stat().st_mtime_ns)
            elif path.is_file():
                seen[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                seen[str(path)] = "folder" if path.is_dir() else "special"
    return seen


def refused(cwd: Path, argv, names, status=2, module="nbsymple_versions.cli"):
    """Run the case; check its refusal: `status`, at most 3 lines on stderr naming each of
    `names`, no traceback, and nothing that was there before changed (new lock files aside)."""
    before = tree(cwd)
    rc, out, err = nbsymple(cwd, *argv, module=module)
    after = tree(cwd)
    lines = err.strip().splitlines()
    assert rc == status, f"status {rc}, stderr {err!r}"
    assert "Traceback" not in err + out and "Warning" not in err, err
    assert 1 <= len(lines) <= 3, err
    for name in names:
        assert str(name) in err, f"{name} not named in {err!r}"
    changed = [p for p in before if after.get(p) != before[p]]
    assert not changed, f"written or lost: {changed}"
    return err


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> dict:
    """Bytes of a valid checkpoint (8 bodies, 2 of 4 steps done)."""
    root = tmp_path_factory.mktemp("base")
    rc, _, err = nbsymple(root, "run", "--n", 8, "--steps", 2, "--seed", 1, "--checkpoint", "c.ck")
    assert rc == 0, err
    data = (root / "c.ck").read_bytes()
    version, header, arrays = split_checkpoint(data)
    header["run"]["steps"] = 4                # a run of 4 steps, 2 done: resumable
    return {"checkpoint": seal(version, json.dumps(header).encode(), arrays)}


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _socket(path: Path) -> Path:
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))
    s.close()
    return path


def _loop(path: Path) -> Path:
    path.symlink_to(path.name)
    return path


def _sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as f:
        f.truncate(size)
    return path


SPECIAL = {"fifo": _fifo, "folder": lambda p: (p.mkdir(), p)[1], "socket": _socket, "loop": _loop,
           "device": lambda p: (p.symlink_to("/dev/zero"), p)[1], "null": lambda p: (p.symlink_to("/dev/null"), p)[1]}


# ============================================================================== 1. special files and odd paths

@pytest.mark.parametrize("kind", sorted(SPECIAL))
def test_resume_from_a_special_file_is_refused_at_once(tmp_path, kind):
    """The issue's `--resume FIFO` (it hung), and every other kind of file that is no checkpoint."""
    SPECIAL[kind](tmp_path / "c.ck")
    refused(tmp_path, ["run", "--resume", "c.ck"], ["c.ck"])


@pytest.mark.skipif(not os.access("/proc/self/environ", os.R_OK), reason="no /proc/self/environ to read")
def test_resume_from_a_kernel_file_of_size_0_is_no_checkpoint_not_an_empty_one(tmp_path):
    """A file of the kernel's says it holds 0 bytes whatever it holds: `--resume /proc/self/environ` was
    refused as "empty"."""
    err = refused(tmp_path, ["run", "--resume", "/proc/self/environ"], ["/proc/self/environ"])
    assert "is not an nbsymple checkpoint" in err and "empty" not in err, err


@pytest.mark.parametrize("kind", ["fifo", "device", "loop", "socket", "null"])
def test_initial_conditions_from_a_special_file_are_refused_at_once(tmp_path, kind):
    """The issue's `--ics FIFO` (it hung) and `--ics /dev/zero` (read forever)."""
    SPECIAL[kind](tmp_path / "bodies.txt")
    refused(tmp_path, ["run", "--ics", "bodies.txt", "--ics-mass", 480, "--steps", 1], ["bodies.txt"])


def test_ics_dev_zero_itself_is_refused(tmp_path):
    refused(tmp_path, ["run", "--ics", "/dev/zero", "--ics-mass", 480, "--steps", 1], ["/dev/zero"])


@pytest.mark.parametrize("kind,option", [("checkpoint", "--resume"), ("initial-condition file", "--ics")])
def test_a_file_larger_than_any_of_its_kind_is_refused_before_it_is_read(tmp_path, kind, option):
    """A sparse file beyond LIMITS (no disk used) is refused by its size, not read for minutes."""
    _sparse(tmp_path / "big", LIMITS[kind] + 1)
    argv = ["run", option, "big", "--ics-mass", 480, "--steps", 1] if option == "--ics" else ["run", option, "big"]
    err = refused(tmp_path, argv, ["big"])
    assert "larger than" in err


def test_a_file_of_its_kinds_limit_is_read_and_a_byte_more_is_refused_naming_the_limit(tmp_path):
    """LIMITS[kind] is the most a file of that kind holds: an asv machine file of exactly 1 MiB is read
    whole, by its size and by what was read; one of a byte more is refused, the sentence giving the limit
    as 1 MiB (1024 KiB is said in the larger unit)."""
    from nbsymple_versions.runs.paths import Unbounded, read_bytes
    path = tmp_path / "machine.json"
    path.write_bytes(b" " * LIMITS["asv machine file"])
    assert len(read_bytes(path, "asv machine file")) == 1 << 20
    with open(path, "ab") as f:
        f.write(b" ")
    with pytest.raises(Unbounded) as refusal:
        read_bytes(path, "asv machine file")
    assert str(refusal.value) == f"asv machine file {path} holds 1 MiB; no asv machine file is larger than 1 MiB"


KERNEL_FILE_READ = """
import resource
from nbsymple_versions.runs import paths
paths.LIMITS["initial-condition file"] = 256 << 20
held = int(open("/proc/self/status").read().split("VmSize:")[1].split()[0]) << 10
resource.setrlimit(resource.RLIMIT_AS, (held + (384 << 20),) * 2)
try:
    paths.read_bytes("/proc/self/pagemap", "initial-condition file")
except paths.FileRefused as e:
    print(e)
"""


@pytest.mark.skipif(not os.access("/proc/self/pagemap", os.R_OK), reason="no /proc/self/pagemap to read")
def test_a_kernel_file_without_end_is_refused_holding_its_limit_once(tmp_path):
    """A file of the kernel's that says it holds 0 bytes and reads without end (`--ics /proc/self/pagemap`,
    terabytes) is refused once LIMITS[kind] bytes are read, holding them once: each chunk was copied with all
    those before it (read for 90 s and 4 GiB at the 2 GiB limit of an initial-condition file). Here at a limit
    of 256 MiB, in a child that may map 384 MiB more than it has."""
    p = subprocess.run([sys.executable, "-c", KERNEL_FILE_READ], cwd=REPO, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert p.stdout.strip() == ("initial-condition file /proc/self/pagemap holds more than 256 MiB; no "
                                "initial-condition file is larger than 256 MiB"), p.stdout


@pytest.mark.parametrize("by", ["file", "fifo", "larger"])
def test_a_file_replaced_between_its_checks_and_its_open(tmp_path, monkeypatch, by):
    """A writer's atomic rename between `open_file`'s checks and its open (a running job replacing
    its checkpoint while another process reads it) gives the new file whole; was "replaced while
    it was opened; try again" (a race in tests/test_run_paths.py); what is no such file is named."""
    from nbsymple_versions.runs import paths
    path, opened = tmp_path / "c.ck", os.open
    path.write_bytes(b"old")

    def renamed_first(name, *args):
        other = tmp_path / "other"
        if by == "fifo":
            os.mkfifo(other)
        else:
            other.write_bytes(b"new")
            os.truncate(other, LIMITS["checkpoint"] + 1 if by == "larger" else 3)      # sparse
        os.replace(other, name)
        return opened(name, *args)
    monkeypatch.setattr(paths.os, "open", renamed_first)
    if by == "file":
        assert paths.read_bytes(path, "checkpoint") == b"new"
        return
    with pytest.raises(FileRefused, match=f"checkpoint {re.escape(str(path))} " + (
            "was replaced by a FIFO .* while it was opened" if by == "fifo" else "holds 16 GiB; no checkpoint")):
        paths.read_bytes(path, "checkpoint")


def test_a_lock_path_that_is_a_folder_is_one_sentence(tmp_path):
    """The issue's `mkdir .run.ck.lock` (a 36-line IsADirectoryError)."""
    (tmp_path / ".run.ck.lock").mkdir()
    refused(tmp_path, ["run", "--n", 8, "--steps", 1, "--checkpoint", "run.ck"], [".run.ck.lock"])
    assert not (tmp_path / "run.ck").exists()


@pytest.mark.parametrize("option", ["--checkpoint", "--snapshots"])
def test_a_symlink_loop_to_write_is_refused(tmp_path, option):
    """The issue's `--checkpoint loop` (it exited 0, replacing the link)."""
    _loop(tmp_path / "loop")
    refused(tmp_path, ["run", "--n", 8, "--steps", 1, option, "loop"], [option, "loop"])
    assert os.readlink(tmp_path / "loop") == "loop"


@pytest.mark.parametrize("option", ["--resume", "--ics"])
def test_a_symlink_loop_to_read_is_named_as_one(tmp_path, option):
    """A file to read that is a symbolic-link loop is said to be one, not the system's words for it
    ("cannot be read (Too many levels of symbolic links)")."""
    _loop(tmp_path / "loop")
    argv = ["run", option, "loop"] + (["--ics-mass", 480, "--steps", 1] if option == "--ics" else [])
    assert "loop is a symbolic-link loop, not a file" in refused(tmp_path, argv, ["loop"])


@pytest.mark.parametrize("kind", ["fifo", "folder", "loop", "device"])
def test_a_snapshot_sidecar_that_is_a_special_file_is_refused(tmp_path, kind):
    (tmp_path / "s").mkdir()
    SPECIAL[kind](tmp_path / "s" / "snapshots.json")
    refused(tmp_path, ["run", "--n", 8, "--steps", 1, "--snapshots", "s", "--snapshot-format", "nbsymple"],
            ["snapshots.json"])


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_run_record_that_is_a_special_file_is_not_read(tmp_path, kind):
    """A snapshot folder's `nbsymple-run.json` is read to restart a killed run: a FIFO there
    must not hang it (the run starts, and writes its own record in its place)."""
    (tmp_path / "s").mkdir()
    SPECIAL[kind](tmp_path / "s" / "nbsymple-run.json")
    rc, _, err = nbsymple(tmp_path, "run", "--n", 8, "--steps", 1, "--snapshots", "s")
    assert rc == 0 and "Traceback" not in err, err
    assert json.loads((tmp_path / "s" / "nbsymple-run.json").read_text())["finished"] is True


@pytest.mark.long            # each makes the paper's figures
@pytest.mark.parametrize("where", [RESULTS, f"{MACHINE}/machine.json", f"{MACHINE}/other.json"])
@pytest.mark.parametrize("kind", ["fifo", "device", "loop"])
def test_paper_skips_a_special_results_file(tmp_path, where, kind):
    """Results that are FIFOs or devices hung `nbsymple paper`: now each is skipped in one
    sentence naming it (and the paper is made from the rest, or refused when nothing is left)."""
    shutil.copytree(FIXTURE, tmp_path / "res")
    (tmp_path / "res" / where).unlink(missing_ok=True)
    SPECIAL[kind](tmp_path / "res" / where)
    _paper(tmp_path, Path(where).name)


def _paper(root: Path, named: str):
    """`nbsymple paper` on `res`: status 0, 1 or 2, each line one sentence of its own, `named` in one."""
    rc, out, err = nbsymple(root, "paper", "--results", "res", "--no-science", "--out", "out", "--quiet")
    assert rc in (0, 1, 2), err
    assert "Traceback" not in err + out and "Warning" not in err, err
    assert all(line.startswith("nbsymple paper: ") for line in err.strip().splitlines()), err
    assert named in err, err
    return rc, err


# ============================================================================== 2. every field of every file

def _header_case(base, change) -> bytes:
    version, header, arrays = split_checkpoint(base["checkpoint"])
    change(header)
    return seal(version, json.dumps(header).encode(), arrays)


def _set(*keys, value=None):
    def change(header):
        d = header
        for k in keys[:-1]:
            d = d[k]
        d[keys[-1]] = value
    return change


def _all_at_one_point(base) -> bytes:
    version, header, arrays = split_checkpoint(base["checkpoint"])
    x = bytearray(arrays)
    x[:3 * 8 * 8] = b"\x00" * (3 * 8 * 8)           # x (3, 8): every body at the origin
    return seal(version, json.dumps(header).encode(), bytes(x))


HEADERS = {   # the issue's N, t, E0, clock and one point, and others of the class
    "n": lambda b: _header_case(b, _set("run", "n", value=9)),
    "t": lambda b: _header_case(b, _set("state", "t", value=123.0)),
    "t0": lambda b: _header_case(b, _set("simulation", "t0", value=-1.0)),
    "E0": lambda b: _header_case(b, _set("simulation", "energy0", value=-1e6)),
    "mass": lambda b: _header_case(b, _set("simulation", "energy_parts0", "mass", value=2.0)),
    "clock-negative": lambda b: _header_case(b, _set("simulation", "clock", "seconds", "pairwise", value=-1.0)),
    "clock-task": lambda b: _header_case(b, _set("simulation", "clock", "seconds", "sleeping", value=1.0)),
    "clock-1e308": lambda b: _header_case(b, _set("simulation", "clock", "seconds", "pairwise", value=1e308)),
    "steps-done": lambda b: _header_case(b, _set("simulation", "steps_done", value=7)),
    "dt-1e308": lambda b: _header_case(b, _set("simulation", "dt", value=1e308)),
    "one-point": _all_at_one_point,
    "deep": lambda b: seal(1, b"[" * 5000 + b"]" * 5000, split_checkpoint(b["checkpoint"])[2]),
    "deep-run": lambda b: _header_case(b, _set("run", "science", value=json.loads("[" * 500 + "]" * 500))),
    # each loaded, then grown by the run, made its next checkpoint unwritable: a traceback after the steps
    "calls-int64": lambda b: _header_case(b, _set("simulation", "clock", "calls", "pairwise", value=2**63 - 1)),
    "stops-int64": lambda b: _header_case(b, _set("run", "stood_still", value=2**63 - 1)),
    # a science run's checkpoint of `nbsymple paper` (made without diagnostics): the report raised at the end
    "no-E0": lambda b: _header_case(b, lambda h: h["simulation"].update(energy0=None, angular_momentum0=None,
                                                                         energy_parts0=None)),
}


@pytest.mark.parametrize("case", sorted(HEADERS))
def test_a_checkpoint_whose_header_disagrees_is_refused(tmp_path, base, case):
    """It resumed with exit 0 (or a RecursionError traceback for a deep header)."""
    (tmp_path / "c.ck").write_bytes(HEADERS[case](base))
    refused(tmp_path, ["run", "--resume", "c.ck"], ["c.ck"])


@pytest.mark.parametrize("field", ["devices", "ics"])
def test_text_a_checkpoint_holds_is_printed_as_one_line_that_redraws_nothing(tmp_path, base, field):
    """A checkpoint's earlier sessions' devices (or its file of bodies) holding a terminal's escape sequence, a line
    feed and a carriage return were printed as they are in the report of its resume: the text turned red and was
    split over two lines (`runs.report._line`; a path the user typed alike)."""
    text = "CPU\x1b[31mRED\nsecond line\r"
    held = [text] if field == "devices" else text
    (tmp_path / "c.ck").write_bytes(_header_case(base, _set("run", field, value=held)))
    rc, out, err = nbsymple(tmp_path, "run", "--resume", "c.ck")
    assert rc == 0, err
    line, = [line for line in out.splitlines() if line.startswith("device:" if field == "devices" else "bodies from")]
    assert "\x1b" not in out and "\r" not in out and "second line" in line and "CPU\\x1b[31mRED\\nsecond" in line, out


def test_the_valid_checkpoint_of_these_cases_resumes(tmp_path, base):
    """The cases above differ from a checkpoint that resumes by their one field."""
    (tmp_path / "c.ck").write_bytes(base["checkpoint"])
    rc, _, err = nbsymple(tmp_path, "run", "--resume", "c.ck")
    assert rc == 0, err


@pytest.mark.parametrize("text", ["[" * 5000 + "]" * 5000, '{"r_cl_pc": ' * 3000 + "1" + "}" * 3000,
                                  '{"r_cl_pc": 1e308, "mass_msun": null}', '{"r_cl_pc": null}', '{"mass_msun": 480}',
                                  '{"r_cl_pc": 10, "mass_msun": 480, "softening": 0}',
                                  '{"r_cl_pc": 10, "mass_msun": 480, "times": {"0": "x"}}'])
def test_a_hostile_sidecar_is_refused(tmp_path, text):
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "snapshots.json").write_text(text)
    refused(tmp_path, ["run", "--n", 8, "--steps", 1, "--snapshots", "s", "--snapshot-format", "nbsymple"],
            ["snapshots.json"])


def test_json_nested_to_its_limit_is_read_and_a_level_more_is_refused():
    """MAX_DEPTH levels of lists and objects are the most a file may nest: a document of exactly that
    many is read, one a level deeper is refused as Unbounded (depths json's parser itself takes, far
    below the RecursionError of the 3000 and 5000 levels above)."""
    from nbsymple_versions.runs.paths import MAX_DEPTH, Unbounded, parse_json
    deepest = "[" * (MAX_DEPTH - 1) + '{"r_cl_pc": 1}' + "]" * (MAX_DEPTH - 1)
    assert parse_json(deepest, "snapshot sidecar", "s.json") is not None
    with pytest.raises(Unbounded, match=f"s.json is nested more than {MAX_DEPTH} levels deep"):
        parse_json(f"[{deepest}]", "snapshot sidecar", "s.json")


def test_json_integers_beyond_float64_are_infinities_of_their_sign_and_those_within_are_exact():
    """An integer float64 holds is read as that int, 10**308 too (FLOAT64_DIGITS digits, the most
    converted); one beyond float64 is an infinity of its own sign, as json reads -1e400, whether it
    has that many digits (-2 * 10**308) or more (-10**400, not converted at all)."""
    from nbsymple_versions.runs.paths import FLOAT64_DIGITS, parse_json
    assert len(str(10**308)) == FLOAT64_DIGITS and parse_json(str(10**308), "run record", "r.json") == 10**308
    assert parse_json(f"[{-2 * 10**308}, {2 * 10**308}, {-10**400}, {10**400}]", "run record", "r.json") == [
        -math.inf, math.inf, -math.inf, math.inf]


def test_an_empty_sidecar_is_taken_as_none(tmp_path):
    """A `snapshots.json` holding {} is as none (no field is required of a sidecar that holds none):
    the run writes its snapshots into the folder, their times into that file."""
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "snapshots.json").write_text("{}")
    rc, _, err = nbsymple(tmp_path, "run", "--n", 8, "--steps", 1, "--snapshots", "s", "--snapshot-format", "nbsymple")
    assert rc == 0 and err == "" and "1" in json.loads((tmp_path / "s" / "snapshots.json").read_text())["times"], err


# a field of an .npz snapshot that no run writes -> what the refusal says of it
SNAPSHOT_FIELDS = {"r_cl_pc": (np.inf, "holds no state a run could have written"),
                   "mass_msun": (-0.0, "holds no state a run could have written"),
                   "time_scale": (("r_cl_pc", 5e-324), "holds no state a run could have written"),
                   "constants": ("weird", "holds no state a run could have written: unknown constants 'weird'"),
                   "step": (1e300, "its step 1e+300 is beyond an int64"),
                   "step_uint64": (("step", np.uint64(2**64 - 1)), "its step 1.84467e+19 is beyond an int64"),
                   "step_at_2_63": (("step", np.uint64(2**63)), "its step 9.22337e+18 is beyond an int64"),
                   "time_array": (("time", np.array([0.5])), "its time is not a real number (a float64 array of shape")}


@pytest.mark.parametrize("case", sorted(SNAPSHOT_FIELDS))
def test_a_snapshot_field_no_run_writes_is_named_not_called_a_damaged_file(tmp_path, case):
    """A scale that gives no unit system (r_cl = inf pc, M = -0.0, r_cl = 5e-324 pc) or constants of no name
    in an intact `.npz` was "truncated or corrupted" (its Units were made while the archive was read, whose
    errors say that); a step beyond an int64 (1e300) was read as one."""
    from nbsymple_versions import make_cluster
    from nbsymple_versions.runs.snapshots import SnapshotError, read_snapshot
    value, said = SNAPSHOT_FIELDS[case]
    key, value = value if isinstance(value, tuple) else (case, value)
    good = make_cluster(8, seed=1)
    fields = dict(positions=good.positions, velocities=good.velocities, masses=good.m, time=0.0,
                  softening=good.eps, step=3, run_id="", **good.units.as_dict())
    np.savez(tmp_path / "snap_00000003.npz", **{**fields, key: value})
    with pytest.raises(SnapshotError) as refusal:
        read_snapshot(tmp_path / "snap_00000003.npz")
    assert said in str(refusal.value) and "truncated or corrupted" not in str(refusal.value), refusal.value


def _results(change):
    def write(res: Path):
        path = res / RESULTS
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data))
    return write


LEAP = "steps.Step.time_step_leapfrog"
SHARE, ENERGY, THREADS = ("steps.TaskShares.track_share", "accuracy.Conservation.track_energy_error",
                          "throughput.Threads.track_threads")


def _many_n(d, count=25):
    """LEAP at `count` values of N, a value for each combination: more than a figure can show
    (20000 of them kept paper drawing for hours)."""
    row = d["results"][LEAP]
    row[1][1] = [str(256 + i) for i in range(count)]
    row[:] = [[1e-4] * (len(row[1][0]) * count * len(row[1][2])), row[1], *row[2:5]]
RESULTS_CASES = {   # the issue's params null, 1e308 and deep nesting, and others of the class
    "params-null": _results(lambda d: d["results"][LEAP].__setitem__(1, None)),
    "value-1e308": _results(lambda d: d["results"][LEAP][0].__setitem__(1, 1e308)),
    "value-denormal": _results(lambda d: d["results"][LEAP][0].__setitem__(1, 1e-320)),
    "value-text": _results(lambda d: d["results"][LEAP][0].__setitem__(1, "fast")),
    "values-short": _results(lambda d: d["results"][LEAP][0].pop()),
    "n-negative": _results(lambda d: d["results"][LEAP][1].__setitem__(1, ["-256"])),
    "env-vars": _results(lambda d: d.__setitem__("env_vars", {"NUMBA_NUM_THREADS": [2]})),
    "n-axis-long": _results(_many_n),
    # values outside what their benchmark measures (a hunt: a share of 1e7 % ended the figure in a traceback,
    # one of 150 % was tabled; N = 2**64 in a traceback; a negative time was called none, a negative error tabled)
    "share-1e7": _results(lambda d: d["results"][SHARE][0].__setitem__(0, 1e7)),
    "share-150": _results(lambda d: d["results"][SHARE][0].__setitem__(0, 150)),
    "share-negative": _results(lambda d: d["results"][SHARE][0].__setitem__(0, -50)),
    "n-2**64": _results(lambda d: d["results"][LEAP][1].__setitem__(1, ["100000000000000000000"])),
    "time-negative": _results(lambda d: d["results"][LEAP][0].__setitem__(1, -1e-4)),
    "time-zero": _results(lambda d: d["results"][LEAP][0].__setitem__(1, 0.0)),
    "error-negative": _results(lambda d: d["results"][ENERGY][0].__setitem__(1, -1e-5)),
    "threads-0": _results(lambda d: d["results"][THREADS].__setitem__(0, [0, 2])),
    "load-negative": _results(lambda d: d.__setitem__("provenance", [{"load_average": {"max": -1.0, "cores": 2}}])),
    "load-cores-0": _results(lambda d: d.__setitem__("provenance", [{"load_average": {"max": 1.0, "cores": 0}}])),
    "load-text": _results(lambda d: d.__setitem__("provenance", [{"load_average": {"median": "high"}}])),
    "load-list": _results(lambda d: d.__setitem__("provenance", [{"load_average": [1.0]}])),
    "deep": lambda res: (res / RESULTS).write_text("[" * 100000 + "]" * 100000),
    "deep-object": lambda res: (res / RESULTS).write_text('{"a": ' * 2000 + "1" + "}" * 2000),
}


@pytest.mark.parametrize("case", sorted(RESULTS_CASES))
def test_paper_refuses_a_hostile_results_file(tmp_path, case):
    """The fixture holds one results file: a hostile one leaves nothing, so `paper` refuses in
    one sentence naming it (it printed a 32-line traceback, or 19 lines of warnings)."""
    shutil.copytree(FIXTURE, tmp_path / "res")
    RESULTS_CASES[case](tmp_path / "res")
    err = refused(tmp_path, ["paper", "--results", "res", "--no-science", "--out", "out", "--quiet"],
                  [Path(RESULTS).name])
    assert not (tmp_path / "out").exists() and "nothing was written" in err


@pytest.mark.parametrize("bench, column, value, said", [
    (SHARE, 0, 100.5, "a share in % from 0 to 100, 0 or of magnitude"),
    (SHARE, 0, -1e-3, "a share in % from 0 to 100, 0 or of magnitude"),
    (LEAP, 1, -1e-4, "a time in seconds above 0, of magnitude"),
    (LEAP, 1, 0, "a time in seconds above 0, of magnitude"),
    ("tasks.Tasks.time_pairwise", 1, -1e-4, "a time in seconds above 0"),
    ("compile.Compile.track_compile_seconds", 1, -1.0, "a time in seconds above 0"),
    (ENERGY, 1, -1e-5, "a relative error of at least 0"),
    ("accuracy.Conservation.track_angular_momentum_error", 1, -1e-8, "a relative error of at least 0"),
    (THREADS, 1, 2.5, "a whole number of threads of at least 1"),
    ("throughput.Throughput.track_gflops", 1, -3.0, "a number above 0"),
    ("throughput.Throughput.track_interactions_per_second", 1, 0, "a number above 0"),
    (LEAP, "n", 2**63, "a value of parameter n of " + LEAP + " is not a whole number from 1 to 2**63 - 1")])
def test_a_value_outside_what_its_benchmark_measures_is_refused_saying_what_it_must_be(tmp_path, bench, column,
                                                                                       value, said):
    """Each value is checked for what its benchmark measures (`results.MEASURES`), the N of a
    benchmark's parameters below 2**63 (`core.checks.COUNT_LIMIT`): the sentence says what it must be."""
    from nbsymple_versions.paper.results import ResultFile, ResultsError

    def change(d):
        if column == "n":
            d["results"][bench][1][1] = [str(value)]
        else:
            d["results"][bench][0][column] = value
    shutil.copytree(FIXTURE, tmp_path / "res")
    _results(change)(tmp_path / "res")
    with pytest.raises(ResultsError, match=re.escape("is malformed (") + ".*" + re.escape(said)):
        ResultFile.read(tmp_path / "res" / RESULTS)


def test_the_ends_of_what_a_benchmark_measures_are_read(tmp_path):
    """0 and 100 % (and 100 % and its rounding, one ulp above, as the TaskClock writes it), an error of
    0, a time of 1e-30 s and N = 2**63 - 1 are measurements."""
    from nbsymple_versions.paper.results import ResultFile

    def change(d):
        d["results"][SHARE][0][:3] = [0.0, 100.0, math.nextafter(100.0, 200.0)]
        d["results"][ENERGY][0][1] = 0.0
        d["results"][LEAP][0][1] = 1e-30
        d["results"][LEAP][1][1] = [str(2**63 - 1)]
    shutil.copytree(FIXTURE, tmp_path / "res")
    _results(change)(tmp_path / "res")
    rows = ResultFile.read(tmp_path / "res" / RESULTS).rows
    assert rows[SHARE]["result"][:2] == [0.0, 100.0] and rows[ENERGY]["result"][1] == 0.0
    assert rows[LEAP]["params"][1] == [str(2**63 - 1)] and rows[LEAP]["result"][1] == 1e-30


TEXT_CASES = {   # text of a results file that would be printed, tabled or drawn: (change, the reason given)
    "name-line-feed": (lambda d: d["results"].__setitem__("evil\nname", d["results"][LEAP]), "a benchmark's name"),
    "name-long": (lambda d: d["results"].__setitem__("b" * 300, d["results"][LEAP]), "a benchmark's name"),
    "version-unknown": (lambda d: d["results"][LEAP][1].__setitem__(0, ["'A'", "'Z'"]), "the suite's versions"),
    "param-long": (lambda d: d["results"][LEAP][1][0].__setitem__(0, "'" + "A" * 300 + "'"), "params of " + LEAP),
    "commit-line-feed": (lambda d: d.__setitem__("commit_hash", "f86a8e19\nx"), "commit_hash"),
    "python-line-feed": (lambda d: d.__setitem__("python", "3.11\nx"), "python"),
    "cpu-long": (lambda d: d["params"].__setitem__("cpu", "W" * 300), "params"),
    "format-version-text": (lambda d: d.__setitem__("version", "2\nx" * 100), "version other than a number"),
}


@pytest.mark.parametrize("case", sorted(TEXT_CASES))
def test_text_from_a_results_file_is_one_printable_line(tmp_path, case):
    """Every text a results file holds is printed, tabled or drawn: a line feed split the
    sentence naming a benchmark in two, and a version's or a CPU's name of 300 characters made a
    figure 6000 pixels wide with its panels collapsed (and matplotlib's warning). Such a file is
    refused in one line that says why without repeating the text."""
    change, reason = TEXT_CASES[case]
    shutil.copytree(FIXTURE, tmp_path / "res")
    _results(change)(tmp_path / "res")
    err = refused(tmp_path, ["paper", "--results", "res", "--no-science", "--out", "out", "--quiet"],
                  [Path(RESULTS).name, reason])
    assert len(err.strip().splitlines()) == 1 and "nothing was written" in err, err
    assert "evil" not in err and "AAAAAAAA" not in err and "WWWWWWWW" not in err, err


@pytest.mark.long            # each makes the paper's figures
@pytest.mark.parametrize("text", ['{"machine": "m", "cpu": ["a", "b"]}', '{"cpu": "x"}', "[" * 5000 + "]" * 5000,
                                  '{"machine": "m", "num_cpu": {"n": 2}}', '{"machine": "m", "cpu": "A\\nB"}',
                                  '{"machine": "m", "os": "' + "W" * 300 + '"}'])
def test_paper_skips_a_hostile_machine_file(tmp_path, text):
    shutil.copytree(FIXTURE, tmp_path / "res")
    (tmp_path / "res" / MACHINE / "machine.json").write_text(text)
    _paper(tmp_path, "machine.json")


MARKUP = "AMD $\\frac{1}{$ EPYC | <!-- *x* _y_ x86_64 `z` [l](u) &amp; ~~s~~ \\"    # mathtext's and Markdown's marks


@pytest.mark.long            # makes the paper's figures
def test_a_name_in_the_results_is_drawn_and_tabled_as_written(tmp_path):
    """A CPU's or GPU's name in machine.json holding marks mathtext or Markdown act on is the
    machine's own text: the figures draw it (a '$\\frac{$' in a footer ended in mathtext's
    traceback) and REPORT.md's table shows it in its one cell, as written ('|' split the cell,
    '<!--' hid the rest of the report)."""
    shutil.copytree(FIXTURE, tmp_path / "res")
    path = tmp_path / "res" / MACHINE / "machine.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "cpu": MARKUP, "gpu": "H|200 <b>"}))
    rc, _ = _paper(tmp_path, "wrote")
    assert rc == 0 and (tmp_path / "out" / "time_per_step.png").is_file()
    rows = (tmp_path / "out" / "REPORT.md").read_text().splitlines()
    for name, text in (("CPU", MARKUP), ("GPU", "H|200 <b>")):
        row = next(r for r in rows if r.startswith(f"| {name} |"))
        cells = re.split(r"(?<!\\)\|", row)           # GitHub ends a cell at each '|' not escaped
        assert len(cells) == 4, row
        shown = re.sub(r"\\(.)", r"\1", cells[2])     # what a reader sees: each escape its character
        assert shown.strip().startswith(text), row


@pytest.mark.long            # makes the paper's figures
def test_a_file_name_in_a_note_of_the_report_hides_nothing(tmp_path):
    """A results file named '<!-- $x$.json' that cannot be read is named in REPORT.md's notes:
    as written, where it opened an HTML comment that hid the rest of the report."""
    shutil.copytree(FIXTURE, tmp_path / "res")
    (tmp_path / "res" / MACHINE / "<!-- $x$.json").write_text("garbage")
    rc, _ = _paper(tmp_path, "is not valid JSON")
    notes = (tmp_path / "out" / "REPORT.md").read_text().split("## Notes", 1)[1]
    line = next(ln for ln in notes.splitlines() if "valid JSON" in ln)
    assert rc == 0 and "\\<!-- \\$x\\$.json" in line and not re.search(r"(?<!\\)[<$]", line), line


def test_a_terminal_escape_in_a_note_of_the_report_is_written_as_its_escape():
    """`paper --out` holding ESC (a title escape, `e\\x1b]0;x\\x07`) was named raw in REPORT.md's
    notes, escaped on stderr alone: `cat REPORT.md` set the terminal's title (a hunt)."""
    from nbsymple_versions.paper.records import markdown_note
    note = markdown_note("no finished run in e\x1b]0;x\x07/runs/ and\r\n<b>")
    assert note == "no finished run in e\\x1b]0;x\\x07/runs/ and\\r\\n\\<b\\>" and note.isprintable(), note


@pytest.mark.parametrize("text", [MARKUP, "", "x86_64", "\\`|", "_a_b_", "```"])
def test_markdown_text_and_code_spans_show_the_text_as_written(text):
    """Each mark escaped, nothing else changed: undoing the escapes gives the text back, and no
    mark is left unescaped; a code span's fence is longer than any run of backticks in it."""
    from nbsymple_versions.paper.records import MARKDOWN_MARKS, code_span, markdown_text
    shown = markdown_text(text)
    assert re.sub(r"\\(.)", r"\1", shown) == text
    assert not MARKDOWN_MARKS.search(re.sub(r"\\.", "", shown)), shown
    span = code_span(text)
    fence = re.match("`+", span).group(0)
    assert span.endswith(fence) and fence not in text and "|" not in span.replace("\\|", ""), span


@pytest.mark.long            # makes the paper's figures
def test_paper_names_a_line_feed_in_a_results_name_in_one_line(tmp_path):
    """A machine folder whose name holds a line feed (asv writes none) is skipped in one
    sentence; a damaged results file with one in its name is named with the escape; the
    figures come from the other machine. `--machine` with one is refused."""
    shutil.copytree(FIXTURE, tmp_path / "res")
    shutil.copytree(FIXTURE / MACHINE, tmp_path / "res" / "m\nx")
    (tmp_path / "res" / MACHINE / "bad\nname.json").write_text("garbage")
    rc, err = _paper(tmp_path, "machine folder 'm\\nx' skipped: its name holds a control character or a line break, "
                               "which no name asv writes has.\n")
    assert rc == 0 and f"res/{MACHINE}/bad\\nname.json is not valid JSON" in err, err
    assert (tmp_path / "out" / "speedup.png").is_file()
    err = refused(tmp_path, ["paper", "--results", "res", "--machine", "m\nx", "--no-science"], ["argument --machine"])
    assert "'m\\nx' holds a control character or a line break" in err, err


@pytest.mark.long            # makes the paper's figures
def test_paper_names_a_machine_folder_whose_name_is_not_utf8_as_such(tmp_path):
    """A hunt: a machine folder named in bytes that are not UTF-8 was said to hold "a control
    character or a line break" (and shown as '\\udcff'); it is skipped saying its name is not
    UTF-8, its byte as `ls -b` writes it, the sentence ended as paper's others; `--machine` so
    typed is refused alike."""
    shutil.copytree(FIXTURE, tmp_path / "res")
    shutil.copytree(FIXTURE / MACHINE, tmp_path / "res" / os.fsdecode(b"m\xff"))
    rc, err = _paper(tmp_path, "machine folder 'm\\xff' skipped: its name is not UTF-8 text, as every name asv "
                               "writes is.\n")
    assert rc == 0 and "control character" not in err, err
    err = refused(tmp_path, ["paper", "--results", "res", "--machine", os.fsdecode(b"m\xff"), "--no-science"],
                  ["argument --machine"])
    assert "'m\\xff' is not UTF-8 text" in err, err


# ============================================================================== 10. writes stay where they belong

@pytest.mark.parametrize("link", ["symbolic", "hard"])
@pytest.mark.parametrize("option, lock", [("--snapshots", "S/.lock"), ("--checkpoint", ".c.ck.lock")])
def test_a_lock_file_link_is_never_written_through(tmp_path, link, option, lock):
    """The issue's `ln -s ../victim.txt S/.lock; nbsymple run --snapshots S` (it wrote a process id); a hard link
    there (`ln victim.txt S/.lock`) had the victim's text replaced by the process id too."""
    (tmp_path / "victim.txt").write_text("precious\n")
    (tmp_path / "S").mkdir()
    if link == "symbolic":
        (tmp_path / lock).symlink_to(os.path.relpath(tmp_path / "victim.txt", (tmp_path / lock).parent))
    else:
        os.link(tmp_path / "victim.txt", tmp_path / lock)
    err = refused(tmp_path, ["run", "--n", 8, "--steps", 1, option, "S" if option == "--snapshots" else "c.ck"],
                  [lock])
    assert (tmp_path / "victim.txt").read_text() == "precious\n"
    assert link == "symbolic" or "is a hard link, one of 2 names of one file" in err, err


def test_a_lock_held_by_a_file_of_another_program_names_no_holder(tmp_path):
    """A lock file held by another program (`flock .c.ck.lock CMD`) whose text is no process id: the
    refusal says the holder is unknown, never that text (here two lines, which would split the
    sentence)."""
    import fcntl
    lock = tmp_path / ".c.ck.lock"
    lock.write_text("held by\nsomeone\n")
    with open(lock) as other:
        fcntl.flock(other, fcntl.LOCK_EX)
        with pytest.raises(locks.PathBusy) as busy, locks.hold(tmp_path / "c.ck", "the checkpoint"):
            pass
    assert busy.value.holder == "unknown" and "(process unknown)" in str(busy.value), str(busy.value)


@pytest.mark.parametrize("target", ["victim.txt", "nowhere/new.txt", "/dev/null"])
def test_a_checkpoint_lock_symlink_is_never_written_through(tmp_path, target):
    """A link to a file, a link to nowhere (it would be created), a link to a device."""
    (tmp_path / "victim.txt").write_text("precious\n")
    (tmp_path / ".c.ck.lock").symlink_to(target)
    refused(tmp_path, ["run", "--n", 8, "--steps", 1, "--checkpoint", "c.ck"], [".c.ck.lock"])
    assert (tmp_path / "victim.txt").read_text() == "precious\n" and not (tmp_path / "nowhere").exists()


def test_two_names_of_one_checkpoint_take_one_lock(tmp_path):
    """The issue's two names (a symlink) of one checkpoint took two locks: now the second name
    finds the first's lock, held here, and is refused naming this process."""
    (tmp_path / "link.ck").symlink_to("real.ck")
    with locks.hold(tmp_path / "real.ck", "the checkpoint"):
        err = refused(tmp_path, ["run", "--n", 8, "--steps", 1, "--checkpoint", "link.ck"], [str(os.getpid())])
    assert "in use by another run" in err


@pytest.mark.parametrize("code", [errno.ENOLCK, errno.ENOSYS, errno.EOPNOTSUPP])     # (NFS's nolock: ENOLCK)
def test_a_file_system_that_takes_no_locks_runs_unlocked_and_says_so(tmp_path, monkeypatch, code):
    """A cluster's shared file system may take no locks (NFS with `nolock`, Lustre without
    `flock`): every checkpoint there was refused as "cannot write .c.ck.lock: No locks
    available". The run goes on, resumes, and says once per lock that nothing stops another
    process; the code cache compiles instead of keeping; any other error of flock still refuses."""
    def flock(fd, operation):
        raise OSError(code, os.strerror(code))
    monkeypatch.setattr(locks.fcntl, "flock", flock)
    rc, _, err = nbsymple(tmp_path, "run", "--n", 8, "--steps", 2, "--checkpoint", "c.ck", "--snapshots", "S")
    said = err.strip().splitlines()
    assert rc == 0 and len(said) == 2 and all("takes no locks" in line for line in said), err
    assert "the checkpoint" in said[0] and "the snapshot folder" in said[1] and os.strerror(code) in said[0], err
    rc, _, err = nbsymple(tmp_path, "run", "--resume", "c.ck", "--steps", 4)
    assert rc == 0 and "takes no locks" in err and (tmp_path / "S" / "snap_00000004.npz").is_file(), err
    from nbsymple_versions.instruments import code_cache
    with code_cache.entry("test-no-locks", {"a": 1}) as kept:
        assert kept.path is None
    monkeypatch.setattr(locks.fcntl, "flock", lambda fd, operation: (_ for _ in ()).throw(OSError(5, "I/O error")))
    refused(tmp_path, ["run", "--n", 8, "--steps", 1, "--checkpoint", "d.ck"], ["I/O error"], status=4)   # a fault


@pytest.mark.parametrize("call, code", [("fchmod", errno.EPERM), ("fchmod", errno.EOPNOTSUPP),
                                        ("fsync", errno.EINVAL), ("fsync", errno.ENOSYS)])
def test_a_file_system_without_modes_or_sync_takes_the_files_all_the_same(tmp_path, monkeypatch, call, code):
    """vfat, SMB and some FUSE mounts keep no Unix modes (fchmod: EPERM) or cannot sync (EINVAL,
    ENOSYS): every checkpoint, snapshot and figure written there was a fault (status 4). Now the
    file is written without that call; an I/O error of fsync is still a fault."""
    def not_here(*args):
        raise OSError(code, os.strerror(code))
    monkeypatch.setattr(os, call, not_here)
    rc, _, err = nbsymple(tmp_path, "run", "--n", 8, "--steps", 2, "--checkpoint", "c.ck", "--snapshots", "S")
    assert rc == 0 and err == "", err
    rc, _, err = nbsymple(tmp_path, "run", "--resume", "c.ck", "--steps", 4)
    assert rc == 0 and err == "" and (tmp_path / "S" / "snap_00000004.npz").is_file(), err
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(errno.EIO, os.strerror(errno.EIO))))
    refused(tmp_path, ["run", "--n", 8, "--steps", 1, "--checkpoint", "d.ck"], [os.strerror(errno.EIO)], status=4)


def test_a_file_written_takes_the_mode_the_umask_leaves(tmp_path):
    """`write_atomically` gives what it writes 0666 less the umask, as a plain open() would, not its
    temporary's 0600: under umask 002 (a group's shared folder) 0664, which a fixed 0644 would not be."""
    mask = os.umask(0o002)
    try:
        written = write_file(tmp_path / "f.json", "{}")
    finally:
        os.umask(mask)
    assert written.stat().st_mode & 0o777 == 0o664


def _another_users(monkeypatch, name: str, readable: bool):
    """Open lock file `name` as a user other than its owner would, the file being 0644 (readable) or
    0600: PermissionError for writing it, and for reading it too unless `readable`. (This suite
    runs as root, whom the kernel lets open any file; found as user nobody.)"""
    real = os.open

    def opener(path, flags, *args, **kw):
        if os.path.basename(os.fspath(path)) == name and not flags & os.O_CREAT and \
                (flags & os.O_ACCMODE != os.O_RDONLY or not readable):
            raise PermissionError(13, os.strerror(13), os.fspath(path))
        return real(path, flags, *args, **kw)
    monkeypatch.setattr(os, "open", opener)


def test_a_lock_file_another_user_left_is_taken_for_reading(tmp_path, monkeypatch):
    """Found as user nobody resuming, in a folder both may write, a checkpoint that root's run had
    written: its lock file, root's and 0644, was refused as "not a regular file, not a lock
    file". A lock file this user can read is locked through a descriptor open for reading
    (`flock` takes it) and the run goes on, the other run's process id left in it."""
    rc, _, err = nbsymple(tmp_path, "run", "--n", 8, "--steps", 2, "--checkpoint", "c.ck", "--snapshots", "S")
    assert rc == 0, err
    before = (tmp_path / ".c.ck.lock").read_bytes()
    _another_users(monkeypatch, ".c.ck.lock", readable=True)
    rc, _, err = nbsymple(tmp_path, "run", "--resume", "c.ck", "--steps", 4)
    assert rc == 0 and "Traceback" not in err, err
    assert (tmp_path / ".c.ck.lock").read_bytes() == before
    assert (tmp_path / "S" / "snap_00000004.npz").is_file()
    monkeypatch.undo()
    with locks.hold(tmp_path / "c.ck", "the checkpoint"):          # and it still locks: a holder refuses
        _another_users(monkeypatch, ".c.ck.lock", readable=True)
        err = refused(tmp_path, ["run", "--resume", "c.ck", "--steps", 6], [str(os.getpid())])
    assert "in use by another run" in err


@pytest.mark.parametrize("text, taken", [(b"", True), (b"4242\n", True), (b"my notes\n", False),
                                         (b"1" * 80, False)])
def test_a_file_at_a_lock_files_name_that_holds_no_process_id_is_kept(tmp_path, text, taken):
    """A hunt: a user's OUT/.lock was replaced by a process id. A lock file of nbsymple's holds one (or
    nothing yet); another file at its name is named and kept."""
    (tmp_path / "P").mkdir()
    (tmp_path / "P" / ".lock").write_bytes(text)
    if taken:
        with locks.hold(tmp_path / "P", "--out", folder=True):
            assert (tmp_path / "P" / ".lock").read_bytes() == f"{os.getpid()}\n".encode()
        return
    with pytest.raises(locks.PathBusy, match=r"--out .*P holds \.lock, which is not a lock file of nbsymple's"):
        with locks.hold(tmp_path / "P", "--out", folder=True):
            pytest.fail("held")
    assert (tmp_path / "P" / ".lock").read_bytes() == text


def test_a_lock_file_on_a_read_only_file_system_is_taken_for_reading(tmp_path, monkeypatch):
    """A lock file that cannot be opened for writing because its file system is read-only (EROFS, a
    review) was "not a regular file, not a lock file"; it is opened for reading, and `flock` locks it."""
    import errno
    import fcntl
    from nbsymple_versions.runs.paths import open_lock
    lock = tmp_path / ".c.ck.lock"
    lock.write_text("123\n")
    real = os.open

    def opener(path, flags, *args, **kw):
        if os.fspath(path) == str(lock) and not flags & os.O_CREAT and flags & os.O_ACCMODE != os.O_RDONLY:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(path))
        return real(path, flags, *args, **kw)
    monkeypatch.setattr(os, "open", opener)       # (O_CREAT | O_EXCL of a file there: EEXIST, as Linux says)
    fd = open_lock(lock)
    try:
        assert os.fstat(fd).st_ino == lock.stat().st_ino
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)
    assert lock.read_text() == "123\n"


def test_a_lock_file_another_user_left_unreadable_is_named_with_its_owner(tmp_path, monkeypatch):
    """A lock file this user can neither read nor write (another user's, 0600): one sentence
    naming it and its owner, nothing written."""
    rc, _, err = nbsymple(tmp_path, "run", "--n", 8, "--steps", 2, "--checkpoint", "c.ck")
    assert rc == 0, err
    _another_users(monkeypatch, ".c.ck.lock", readable=False)
    import pwd
    owner = pwd.getpwuid(os.getuid()).pw_name
    refused(tmp_path, ["run", "--resume", "c.ck", "--steps", 4],
            [".c.ck.lock", f"cannot be read by this user (it belongs to user {owner})"])


def _unlistable(monkeypatch, *names: str):
    """Listing a folder named one of `names` fails as it does for a user who may not read it
    (root, who runs this suite, may list any folder; found as user nobody)."""
    import pathlib
    real_listdir, real_scandir, real_iterdir = os.listdir, os.scandir, pathlib.Path.iterdir

    def check(path):
        if os.path.basename(os.path.normpath(os.fspath(path))) in names:
            raise PermissionError(13, os.strerror(13), os.fspath(path))

    def listdir(path="."):
        check(path)
        return real_listdir(path)

    def scandir(path="."):              # a glob's: a folder it cannot scan yields nothing, in silence
        check(path)
        return real_scandir(path)

    def iterdir(self):
        check(self)
        return real_iterdir(self)
    monkeypatch.setattr(os, "listdir", listdir)
    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(pathlib.Path, "iterdir", iterdir)


def test_a_results_folder_or_machine_folder_this_user_cannot_read_is_named(tmp_path, monkeypatch):
    """`nbsymple paper --results /root` as a user who may not list it ended in a PermissionError
    traceback; a machine folder that could not be listed was passed over in silence (a glob finds
    nothing there). Now the results folder is refused in one sentence, and a machine folder is
    skipped with a sentence where others remain, refused where it is the one asked for."""
    shutil.copytree(FIXTURE, tmp_path / "res")
    locked = tmp_path / "res" / "zzz-locked"
    locked.mkdir()
    shutil.copy(FIXTURE / MACHINE / "machine.json", locked / "machine.json")
    _unlistable(monkeypatch, "res")
    refused(tmp_path, ["paper", "--results", "res", "--no-science", "--out", "out"],
            ["results folder res cannot be read (Permission denied)"])
    monkeypatch.undo()
    _unlistable(monkeypatch, "zzz-locked")
    refused(tmp_path, ["paper", "--results", "res", "--machine", "zzz-locked", "--no-science", "--out", "out"],
            ["machine folder 'zzz-locked' skipped: it cannot be read (Permission denied)"])
    rc, _, err = nbsymple(tmp_path, "paper", "--results", "res", "--no-science", "--out", "out")
    assert rc == 0 and "Traceback" not in err, err
    assert (tmp_path / "out" / "speedup.png").is_file()
    said = err + (tmp_path / "out" / "REPORT.md").read_text()
    assert "machine folder 'zzz-locked' skipped: it cannot be read (Permission denied).\n" in said, said


def test_a_folder_this_user_may_write_but_not_read_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    """Found as user nobody: a snapshot folder of mode 0333 (written, not listed) held another
    run's snapshots, which a second run wrote over (its check for them found none), and `paper
    --full` with such an OUT/runs ran its whole science run before its figure failed. Now the
    folder is refused in one sentence before anything is written (`runs.errors.writable`)."""
    rc, _, err = nbsymple(tmp_path, "run", "--n", 8, "--steps", 2, "--seed", 1, "--snapshots", "S")
    assert rc == 0, err
    (tmp_path / "O" / "runs").mkdir(parents=True)
    before = tree(tmp_path)
    _unlistable(monkeypatch, "S", "runs")
    said = "it cannot be read (Permission denied), so what it holds cannot be checked"
    refused(tmp_path, ["run", "--n", 8, "--steps", 2, "--seed", 2, "--snapshots", "S"], ["S", said])
    refused(tmp_path, ["paper", "--full", "--tidal-n", 8, "--out", "O", "--results", str(FIXTURE)],
            ["O/runs", said])
    monkeypatch.undo()
    assert tree(tmp_path) == before                  # the first run's snapshots as they were


def test_a_checkpoint_through_a_symlink_is_written_to_its_target(tmp_path):
    """What a link names is written, under its lock: the link stays, the file it names is the checkpoint."""
    (tmp_path / "link.ck").symlink_to("real.ck")
    rc, _, err = nbsymple(tmp_path, "run", "--n", 8, "--steps", 1, "--checkpoint", "link.ck")
    assert rc == 0, err
    assert (tmp_path / "link.ck").is_symlink() and (tmp_path / "real.ck").is_file()
    assert (tmp_path / ".real.ck.lock").exists() and not (tmp_path / ".link.ck.lock").exists()


@pytest.mark.parametrize("name", ["S/snap_00000001.npz", "S/c.ck", "S/sub/c.ck", "S/nbsymple-run.json"])
def test_a_checkpoint_inside_its_snapshot_folder_is_refused(tmp_path, name):
    """The issue's checkpoint named inside its own snapshot folder (it replaced a snapshot)."""
    (tmp_path / "S").mkdir()
    refused(tmp_path, ["run", "--n", 8, "--steps", 2, "--snapshots", "S", "--checkpoint", name],
            ["--checkpoint", "snapshot folder"])
    assert not list((tmp_path / "S").glob("snap_*"))


@pytest.mark.parametrize("isa", ["../../x", "..", "a/b", "", "x\ny"])
def test_migrate_refuses_an_isa_that_is_no_name(tmp_path, isa):
    """The issue's `tools.migrate --isa '../../x'` (it wrote outside the results folder)."""
    shutil.copytree(FIXTURE, tmp_path / "res")
    refused(tmp_path, ["res/" + MACHINE, "--isa", isa, "--uarch", "znver4"], ["--isa"] if isa else [],
            module="tools.migrate")


def test_migrate_keeps_a_machine_folder_inside_the_results_folder(tmp_path):
    """A machine.json whose fields build a path out of the folder (its num_cpu) is refused too."""
    shutil.copytree(FIXTURE, tmp_path / "res")
    machine = tmp_path / "res" / MACHINE / "machine.json"
    machine.write_text(json.dumps({**json.loads(machine.read_text()), "num_cpu": "2/../../../escape"}))
    refused(tmp_path, ["res/" + MACHINE, "--isa", "avx2", "--uarch", "znver4"], ["machine.json"],
            module="tools.migrate")


@pytest.mark.parametrize("change, field", [   # each returns the document written
    (lambda d: {k: v for k, v in d.items() if k != "arch"}, "its arch is missing"),
    (lambda d: {**d, "os": 6}, "its os is not one line"),
    (lambda d: {**d, "cpu": "AMD\nEPYC"}, "its cpu is not one line"),
    (lambda d: [1, 2], "not a JSON object")])
def test_migrate_refuses_a_machine_file_without_what_it_renames(tmp_path, change, field):
    """machine.json without its arch (or its os a number) ended `tools.migrate` in a traceback."""
    shutil.copytree(FIXTURE, tmp_path / "res")
    machine = tmp_path / "res" / MACHINE / "machine.json"
    machine.write_text(json.dumps(change(json.loads(machine.read_text()))))
    refused(tmp_path, ["res/" + MACHINE, "--isa", "avx2", "--uarch", "znver4"], ["machine.json", field],
            module="tools.migrate")


@pytest.mark.parametrize("kind", ["fifo", "garbage"])
def test_migrate_refuses_a_results_file_it_cannot_read(tmp_path, kind):
    """A FIFO among the results files made `tools.migrate` wait for ever; one that asv cannot
    read is one sentence naming it, and nothing is written."""
    shutil.copytree(FIXTURE, tmp_path / "res")
    bad = tmp_path / "res" / MACHINE / "deadbeef-other.json"
    _fifo(bad) if kind == "fifo" else bad.write_text('{"commit_hash": "deadbeef"}')
    refused(tmp_path, ["res/" + MACHINE, "--isa", "avx2", "--uarch", "znver4"], ["deadbeef-other.json"],
            module="tools.migrate")


def _results_file(folder: Path) -> Path:
    return next(p for p in sorted(folder.glob("*.json")) if p.name != "machine.json")


@pytest.mark.parametrize("change, said", [
    (lambda d: d.__setitem__("result_columns", ["params", "result", *d["result_columns"][2:]]), "is malformed"),
    (lambda d: d.__setitem__("provenance", {"a": 1}), "provenance"),
    (lambda d: d.__setitem__("commit_hash", "d59f\x1b[31m\nzz"), "commit_hash"),
    (lambda d: d.__setitem__("date", "yesterday"), "date"),
])
def test_migrate_refuses_a_results_file_paper_refuses(tmp_path, change, said):
    """A hunt: results in the wrong columns and a provenance that is no list ended `tools.migrate` in
    tracebacks; a commit hash holding an escape and a line feed, and a date of "yesterday", passed
    and were renamed into the new machine's folder, where `paper` refuses them."""
    folder = tmp_path / "res" / "fixture-2core-nogpu"
    shutil.copytree(REPO / "tests" / "data" / "asv_fixture" / "fixture-2core-nogpu", folder)
    first = next(p for p in sorted(folder.glob("*.json")) if p.name != "machine.json")
    data = json.loads(first.read_text())
    change(data)
    first.write_text(json.dumps(data))
    before = sorted(p.name for p in folder.iterdir())
    refused(tmp_path, [f"res/{folder.name}", "--uarch", "znver3b", "--isa", "avx2"], [first.name, said],
            module="tools.migrate")
    assert sorted(p.name for p in folder.iterdir()) == before and sorted(p.name for p in (tmp_path / "res").iterdir()) \
        == [folder.name]


@pytest.mark.parametrize("case", ["two environments", "into another machine's file", "a row cut short",
                                  "onto another machine.json", "a link to the folder"])
def test_migrate_refuses_what_would_lose_or_shift_results(tmp_path, case):
    """Found by hunts: one commit's results of two environments were written to one name (the
    first lost), a folder migrated onto a machine folder that holds the same commit replaced its
    file, and a row of 41 values for 42 combinations was written shifted (paper then reported
    each N's time as the next N's); a folder migrated onto one whose machine.json says more
    replaced it, and a link to the folder had its results written beside the link, out of the
    results folder, the originals removed. Each is refused naming the files, the dry run too;
    nothing is written."""
    shutil.copytree(FIXTURE, tmp_path / "res")
    folder, args = tmp_path / "res" / MACHINE, ["--isa", "avx2", "--uarch", "znver4"]
    first = _results_file(folder)
    data = json.loads(first.read_text())
    if case == "two environments":
        (folder / first.name.replace("existing", "virtualenv")).write_text(json.dumps({**data, "env_name": "venv"}))
        named = ["would both become"]
    elif case == "into another machine's file":
        shutil.copytree(folder, tmp_path / "res" / "again")
        rc, _, err = nbsymple(tmp_path, "res/" + MACHINE, *args, module="tools.migrate")     # the first of two
        assert rc == 0, err
        folder = tmp_path / "res" / "again"
        named = ["already holds", "would replace"]
    elif case == "onto another machine.json":
        shutil.copytree(folder, tmp_path / "res" / "again")
        rc, out, err = nbsymple(tmp_path, "res/" + MACHINE, *args, module="tools.migrate")
        assert rc == 0, err
        target = tmp_path / "res" / out.split(" -> ")[1].split()[0]        # "old -> new (...)"
        for path in target.glob("*.json"):
            path.unlink() if path.name != "machine.json" else path.write_text(
                json.dumps({**json.loads(path.read_text()), "ram": "512 GiB", "note": "keep"}))
        folder = tmp_path / "res" / "again"
        named = [f"{target.name}/machine.json", "otherwise"]
    elif case == "a link to the folder":
        (tmp_path / "res" / "link").symlink_to(MACHINE)
        folder = tmp_path / "res" / "link"
        named = ["res/link is a symbolic link", "give the machine folder it names"]
    else:
        name = next(k for k, row in data["results"].items() if isinstance(row[0], list) and len(row[0]) > 2)
        data["results"][name][0] = data["results"][name][0][1:]
        first.write_text(json.dumps(data))
        named = [name, "values for", "combinations"]      # (`paper`'s reader says it first now)
    for dry in ([], ["--dry-run"]):
        refused(tmp_path, [f"res/{folder.name}", *args, *dry], named, module="tools.migrate")


def test_migrate_moves_the_dp_host_tasks_and_drops_empty_rows(tmp_path):
    """What `tools.migrate` writes, not only what it refuses (a mutation hunt: keeping the dsp row of
    a host task, which then overwrote dp's, flooring the RAM and writing an all-NaN row each passed).
    The fixture's old `tasks.Tasks.time_galactic` holds dp values only (sp and dsp NaN); its
    `time_transfer` is NaN throughout (CPU rows); its machine.json says 25276514304 bytes."""
    import itertools
    shutil.copytree(FIXTURE, tmp_path / "res")
    first = _results_file(tmp_path / "res" / MACHINE)
    old = json.loads(first.read_text())["results"]
    rc, out, err = nbsymple(tmp_path, "res/" + MACHINE, "--isa", "avx2", "--uarch", "znver4", module="tools.migrate")
    assert rc == 0, err
    target = tmp_path / "res" / out.split(" -> ")[1].split()[0]
    # the fixture's Python is a path (an old asv's): the file keeps its name, not one of folders
    # "existing-py" + the path as folders (found by the same hunt)
    new = json.loads((target / first.name).read_text())["results"]
    for task in ("galactic", "integrate"):
        values, params = new[f"tasks.HostTasks.time_{task}"][:2]
        got = dict(zip(itertools.product(*params), values))
        assert [got["'A'", "256"], got["'B'", "256"]] == [old[f"tasks.Tasks.time_{task}"][0][i] for i in (1, 4)]
    assert "tasks.Transfer.time_transfer" not in new and "tasks.Tasks.time_transfer" not in new
    assert json.loads((target / "machine.json").read_text())["ram"] == "24 GiB"        # 23.5 GiB rounded


def test_migrate_replaces_links_at_the_names_it_writes_never_writes_through_them(tmp_path):
    """A machine folder migrated again (already of today's name) whose machine.json and results file are links
    to files outside the results folder: the links are replaced by the files written, the files they named
    are left as they were (asv's `util.write_json` wrote through both, and in place: half a file on a kill)."""
    shutil.copytree(FIXTURE, tmp_path / "res")
    rc, out, err = nbsymple(tmp_path, "res/" + MACHINE, "--isa", "avx2", "--uarch", "znver4", module="tools.migrate")
    assert rc == 0, err
    target = tmp_path / "res" / out.split(" -> ")[1].split()[0]
    outside = {}
    for path in (target / "machine.json", _results_file(target)):
        outside[path] = tmp_path / f"outside-{path.name}"
        path.rename(outside[path])
        path.symlink_to(outside[path])
    before = {p: o.read_bytes() for p, o in outside.items()}
    rc, _, err = nbsymple(tmp_path, f"res/{target.name}", module="tools.migrate")
    assert rc == 0, err
    for path, o in outside.items():
        assert o.read_bytes() == before[path], f"written through the link {path.name}"
        assert not path.is_symlink() and json.loads(path.read_text()), path


def test_migrate_of_a_machine_folder_holding_no_results_makes_its_new_folder(tmp_path):
    """A machine folder of machine.json alone (its results moved out) migrated to a new name: machine.json
    is written into the new folder, made for it, and the old folder goes (asv's `util.write_json` made the
    folder; `write_file`, which replaced it, does not, and the migration ended in a FileNotFoundError)."""
    shutil.copytree(FIXTURE, tmp_path / "res")
    for path in (tmp_path / "res" / MACHINE).glob("*.json"):
        if path.name != "machine.json":
            path.unlink()
    rc, out, err = nbsymple(tmp_path, "res/" + MACHINE, "--isa", "avx2", "--uarch", "znver4", module="tools.migrate")
    assert rc == 0, err
    target = tmp_path / "res" / out.split(" -> ")[1].split()[0]
    assert json.loads((target / "machine.json").read_text())["machine"] == target.name
    assert not (tmp_path / "res" / MACHINE).exists()


def test_migrate_refuses_a_special_machine_file(tmp_path):
    shutil.copytree(FIXTURE, tmp_path / "res")
    (tmp_path / "res" / MACHINE / "machine.json").unlink()
    _fifo(tmp_path / "res" / MACHINE / "machine.json")
    refused(tmp_path, ["res/" + MACHINE, "--isa", "avx2", "--uarch", "znver4"], ["machine.json"],
            module="tools.migrate")


NOT_A_FOLDER = {"a file": lambda p: (p.write_text("x\n"), p)[1], "a link to a file": lambda p: (
    p.with_name("target.txt").write_text("x\n"), p.symlink_to("target.txt"), p)[1], "a FIFO": _fifo,
    "a character device": SPECIAL["null"], "nothing": lambda p: p,
    "a folder this user may not read": lambda p: p.mkdir(),
    "a dangling link": lambda p: (p.symlink_to("gone"), p)[1],
    "a symbolic-link loop": lambda p: (p.symlink_to(p.name), p)[1]}
WHY_NOT_A_FOLDER = {"a file": "is a file, not a folder", "a link to a file": "is a file, not a folder",
                    "a FIFO": "is a FIFO (named pipe), not a folder",
                    "a character device": "is a character device, not a folder", "nothing": "does not exist",
                    "a folder this user may not read": "cannot be read (Permission denied)",
                    "a dangling link": "is a dangling symbolic link to gone, not a folder",
                    "a symbolic-link loop": "is a symbolic-link loop, not a folder"}


@pytest.mark.parametrize("kind", sorted(NOT_A_FOLDER))
@pytest.mark.parametrize("argv", [["paper", "--no-science", "--results"], ["--dry-run"]], ids=["paper", "migrate"])
def test_a_folder_to_read_that_is_no_folder_is_named_as_what_it_is(tmp_path, monkeypatch, kind, argv):
    """`paper --results /dev/null` (or a file, a link to one) said that the results folder "does
    not exist", and `tools.migrate /dev/null` that it "holds no machine.json" (found by hand); as
    user nobody, `tools.migrate` on a folder it may not list ended in a PermissionError traceback
    and on /root said it "holds no machine.json": what the path is instead, in one sentence
    (`runs.paths.not_a_folder`)."""
    NOT_A_FOLDER[kind](tmp_path / "given")
    if kind == "a folder this user may not read":
        _unlistable(monkeypatch, "given")
    err = refused(tmp_path, [*argv, "given"], ["given", WHY_NOT_A_FOLDER[kind]],
                  module="tools.migrate" if argv == ["--dry-run"] else "nbsymple_versions.cli")
    assert "holds no" not in err, err


@pytest.mark.parametrize("kind", ["a file", "a FIFO", "a character device", "a dangling link", "a symbolic-link loop"])
@pytest.mark.parametrize("where", ["given", "given/sub"])
def test_a_folder_to_write_that_is_no_folder_is_named_as_what_it_is(tmp_path, kind, where):
    """`paper --out FIFO` (or a device, or one on the path of --out) was "a file", as `run --snapshots FIFO`
    was (`runs.errors.writable`, `runs.paths.blocking`); so was a dangling link or a link loop (a
    hunt), and `given/sub` below either was "it is a file" or the system's "Too many levels of
    symbolic links" (`runs.paths.dead_link`)."""
    NOT_A_FOLDER[kind](tmp_path / "given")
    why = WHY_NOT_A_FOLDER[kind]
    why = why if where == "given" else f"a folder on its path {why.removesuffix(', not a folder')} (given)"
    refused(tmp_path, ["paper", "--no-science", "--results", FIXTURE, "--out", where], [where, why])


SCIENCE = ["--tidal-n", "64", "--bh-n", "64", "--tidal-orbits", "0.25", "--bh-t-end", "0.1", "--quiet"]


@pytest.mark.parametrize("argv, in_the_way, said", [
    (["--results", FIXTURE, *SCIENCE], "runs", "o/runs/tidal_tails: a folder on its path is a file (o/runs)"),
    (["--results", FIXTURE, *SCIENCE], "runs/black_hole/ratio_10", "o/runs/black_hole/ratio_10: it is a file"),
    (["--full", "--tidal-n", "64", "--science-version", "A", "--quiet"], "runs",
     "o/runs/tidal_tails_n64_dt2^-10: a folder on its path is a file (o/runs)")], ids=["runs", "ratio", "full"])
def test_a_file_in_a_science_runs_way_is_refused_before_anything_is_written(tmp_path, argv, in_the_way, said):
    """`paper --full` where OUT/runs was a file ended in a NotADirectoryError traceback, and `paper`
    drew the benchmark figures, then noted each science figure "not written: NotADirectoryError:
    [Errno 20] ..." with status 1 (a hunt): refused before anything is written (`paper.main._science_runs`,
    `runs.errors.in_the_way_of`)."""
    (tmp_path / "o" / in_the_way).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "o" / in_the_way).write_text("x\n")
    refused(tmp_path, ["paper", *argv, "--out", "o"], [f"cannot write the science run into {said}"])


def test_a_science_run_whose_folder_cannot_be_made_is_one_sentence(tmp_path):
    """A file put in a science run's way after paper's check (`paper.resumable.run`): FileRefused,
    which paper says in one sentence, where mkdir's NotADirectoryError was a traceback of `--full`."""
    from nbsymple_versions.paper import resumable
    (tmp_path / "runs").write_text("x\n")
    with pytest.raises(FileRefused, match=r"a folder on its path is a file \(.*runs\)"):
        resumable.run(tmp_path / "runs" / "tidal", None, {}, [1], "tidal tails")


MACHINE_FILE = ".asv-machine.json"        # asv's, in HOME: `make bench`, `make gate` write this machine into it
HOSTILE_MACHINE_FILES = {
    **SPECIAL,
    "not JSON": lambda p: p.write_bytes(b"\xff{"),
    "a list": lambda p: p.write_text("[1, 2]"),
    "an entry that is no object": lambda p: p.write_text('{"version": 1, "m": "x"}'),
    "too large": lambda p: _sparse(p, 4 << 20),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE_MACHINE_FILES))
def test_an_asv_machine_file_that_is_not_one_is_refused_before_asv_runs(tmp_path, monkeypatch, kind):
    """`make bench` and `make gate` store this machine's description in ~/.asv-machine.json; asv did,
    and waited for ever on a FIFO there, raised a traceback on a folder or on text that is not its
    JSON, and read a device to its end. Refused in one sentence naming the file, nothing written."""
    monkeypatch.setenv("HOME", str(tmp_path))
    HOSTILE_MACHINE_FILES[kind](tmp_path / MACHINE_FILE)
    refused(tmp_path, ["machine"], [MACHINE_FILE], module="tools.tracking")


@pytest.mark.parametrize("code, refused", [("ENOSPC", False), ("EDQUOT", False), ("EACCES", True)])
def test_a_machine_file_on_a_full_disk_is_the_machines_fault(tmp_path, monkeypatch, code, refused):
    """A hunt: HOME on a full disk was refused as the user's mistake (status 2, "give HOME a folder
    this user can write"); a write the machine refuses is its fault (`entry.command`: status 4)."""
    monkeypatch.setenv("HOME", str(tmp_path))

    def full(path, text):
        raise OSError(getattr(errno, code), os.strerror(getattr(errno, code)))
    monkeypatch.setattr(tracking, "write_file", full)
    with pytest.raises(FileRefused if refused else OSError) as raised:
        tracking.register_machine()
    assert isinstance(raised.value, FileRefused) == refused


HOSTILE_CONFIGS = {
    **SPECIAL,
    "cut short": (lambda p: p.write_text("{"), "is not valid JSON"),
    "empty": (lambda p: p.write_text(""), "is not valid JSON"),
    "not UTF-8": (lambda p: p.write_bytes(b"\xff{}"), "is not UTF-8 text"),
    "nested deep": (lambda p: p.write_text("[" * 100000 + "]" * 100000), "nested more than 64 levels deep"),
    "an integer of 5000 digits": (lambda p: p.write_text(json.dumps({**_repo_config(), "version": 0})
                                                         .replace('"version": 0', '"version": ' + "1" * 5000)),
                                  "version (1)"),
    "a list": (lambda p: p.write_text("[]"), "a JSON object"),
    "a version alone": (lambda p: p.write_text('{"version": 1}'), "repo (a path), environment_type (a name)"),
    "another version": (lambda p: p.write_text(json.dumps({**_repo_config(), "version": 2})), "version (1)"),
    "pythons as text": (lambda p: p.write_text(json.dumps({**_repo_config(), "pythons": "3.11"})),
                        "pythons (a list of Python versions)"),
    "too large": (lambda p: _sparse(p, 4 << 20), "larger than"),
}


def _repo_config() -> dict:
    return tracking.load_config()


def test_an_asv_configuration_without_its_folders_takes_asvs_defaults(tmp_path, monkeypatch):
    """The folders (benchmark_dir, env_dir, results_dir, html_dir) may be left out, as asv allows;
    given, each must be a path, and results_dir the results/ the tools read."""
    conf = {k: v for k, v in _repo_config().items() if not k.endswith("_dir")}
    (tmp_path / "asv.conf.json").write_text(json.dumps(conf))
    monkeypatch.setattr(tracking, "CONFIG", tmp_path / "asv.conf.json")
    assert tracking.load_config() == conf
    (tmp_path / "asv.conf.json").write_text(json.dumps({**conf, "env_dir": 5}))
    with pytest.raises(FileRefused, match=r"env_dir \(a path, if given\)"):
        tracking.load_config()
    for other in (5, "results-alt"):       # asv wrote there, while the tools said results/ (found by a hunt)
        (tmp_path / "asv.conf.json").write_text(json.dumps({**conf, "results_dir": other}))
        with pytest.raises(FileRefused, match=r'results_dir \("results", if given\)'):
            tracking.load_config()


@pytest.mark.parametrize("kind", sorted(HOSTILE_CONFIGS))
def test_an_asv_configuration_asv_cannot_use_is_refused_before_asv_runs(tmp_path, monkeypatch, kind):
    """asv.conf.json cut short or turned into a list ended `make bench-smoke` (and the gate's
    timing tier, `history`, `make dashboard`'s `asv publish`) in asv's traceback, found by hand:
    refused in one sentence naming the file and what it lacks, before asv runs; the repository's
    own configuration loads, comments and all."""
    assert _repo_config()["pythons"] and "//" in tracking.CONFIG.read_text()
    make = HOSTILE_CONFIGS[kind]
    make, said = (make, None) if kind in SPECIAL else make
    make(tmp_path / "asv.conf.json")
    monkeypatch.setattr(tracking, "CONFIG", tmp_path / "asv.conf.json")
    for argv in (["smoke"], ["history", "--dry-run"], ["find", "HEAD~1..HEAD", "x"], ["publish"]):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as stop:
            tracking.main(argv)
        lines = err.getvalue().strip().splitlines()
        assert stop.value.code == 2 and len(lines) == 1 and "asv configuration" in lines[0], err.getvalue()
        assert "asv.conf.json" in lines[0] and (said is None or said in lines[0]), lines[0]
    monkeypatch.setattr(gate, "_extract", lambda *a: pytest.fail("the base tree was extracted before asv.conf.json "
                                                                  "was read"))
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert gate.main(["--tiers", "timings"]) == gate.SETUP           # its set-up status, before any work
    assert "asv configuration" in err.getvalue() and len(err.getvalue().strip().splitlines()) == 1, err.getvalue()


def test_a_second_asv_command_on_the_same_results_is_refused_before_it_writes(tmp_path, monkeypatch):
    """Two gates at once in one checkout (found by hand): the second extracted BASE's tree into
    the folder the first was timing and ended in a FileExistsError traceback; two `make bench`
    (or `history`) runs would merge into one results file. Each asv command of `tools.tracking`
    and the gate holds the lock of what it writes (`tracking.exclusive`): a second one on the same
    results is refused in one sentence naming the first one's process, before it writes anything
    (the tree, a results file, asv started); a lock file that is not one is named, and so is a
    .asv that is a file; the lock is free again when its holder ends."""
    scratch = tmp_path / ".asv"
    monkeypatch.setattr(tracking, "SCRATCH", scratch)
    for name, value in {"register_machine": lambda: "m", "selection": lambda **kw: ["tasks"],
                        "selected": lambda **kw: [("tasks.Tasks.time_pairwise", None)],
                        "missing_commits": lambda *a: ["0" * 40], "commit_range_list": lambda since: ["0" * 40],
                        "matching": lambda bench: [bench], "run_provenance": lambda: {"commit": "c", "grid": "smoke"},
                        "asv": lambda *a, **kw: pytest.fail("asv was started")}.items():
        monkeypatch.setattr(tracking, name, value)
    monkeypatch.setattr(gate, "_extract", lambda *a: pytest.fail("BASE's tree was extracted"))
    commands = {"results": [["run"], ["history", "--since", "HEAD"], ["publish"]], "smoke": [["smoke"]],
                "find": [["find", "HEAD~1..HEAD", "tasks.Tasks.time_pairwise"]],
                "gate": [["gate", "--tiers", "counts"], ["gate", "--noise", "2"]]}
    for lock, argvs in commands.items():
        for argv in argvs:
            with tracking.exclusive(lock, "held by this test"):
                before = sorted(p.name for p in scratch.iterdir())
                rc, err = _tool_in_process(argv)
                assert sorted(p.name for p in scratch.iterdir()) == before, (argv, before)
            lines = err.strip().splitlines()
            assert rc == (gate.SETUP if argv[0] == "gate" else 2) and len(lines) == 1, (argv, err)
            assert f"another asv command of this checkout (process {os.getpid()}) is using" in lines[0], (argv, err)
            assert ("results/" if lock == "results" else f".asv/{lock}") in lines[0], (argv, err)
        with tracking.exclusive(lock, "free again"):
            pass
        os.unlink(scratch / f".{lock}.lock")
        (scratch / f".{lock}.lock").mkdir()                  # a lock file that is a folder
        rc, err = _tool_in_process(argvs[0])
        assert rc in (2, gate.SETUP) and "is a folder, not a lock file" in err and "Traceback" not in err, err
    shutil.rmtree(scratch)
    scratch.write_text("x\n")                               # .asv a file: it ended in a FileExistsError
    for argvs in commands.values():
        rc, err = _tool_in_process(argvs[0])
        assert rc in (2, gate.SETUP) and ".asv: it is a file, not a folder" in err and "Traceback" not in err, err


def _tool_in_process(argv) -> tuple[int, str]:
    """(exit status, stderr) of `python -m tools.tracking ARGV` (or `tools.gate` for ["gate", ...]),
    run in this process: its exit status, or the code of argparse's refusal."""
    err = io.StringIO()
    with hang_guard(), contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = gate.main(argv[1:]) if argv[0] == "gate" else tracking.main(argv)
        except SystemExit as e:
            rc = e.code
    return rc, err.getvalue()


@pytest.mark.parametrize("home, why", [("/proc", "a virtual file system"), ("a file", "is a file, not a folder"),
                                       ("nowhere/at/all", "does not exist"), ("", "set but empty"),
                                       (" ", "blanks alone")])     # a hunt: said empty, put at /
def test_a_home_where_the_machine_file_cannot_be_written_is_named(tmp_path, monkeypatch, home, why):
    """HOME naming a folder this user cannot write (/proc, for root too), a file, or nothing:
    asv's traceback (FileNotFoundError); then (a hunt) /proc said "No such file or directory", a
    missing HOME was made in silence and an empty one put the file at /. One sentence asking
    for a HOME, saying why."""
    (tmp_path / "a file").write_text("x")
    monkeypatch.setenv("HOME", home if home.startswith("/") or not home.strip() else str(tmp_path / home))
    err = refused(tmp_path, ["machine"], [MACHINE_FILE, "HOME", why], module="tools.tracking")
    assert "set HOME to your home folder" in err and not (tmp_path / "nowhere").exists()


def test_the_machine_file_keeps_other_machines_and_is_written_through_a_link_in_home(tmp_path, monkeypatch):
    """The description is added to what the file holds (asv's layout: one entry per machine and
    `version`), and a link at ~/.asv-machine.json (dotfiles kept elsewhere) is followed as asv
    follows it: the file it names is replaced whole, the link stays; a link to a file not made yet
    is asv's first run, not "does not exist" (a hunt)."""
    (tmp_path / "dotfiles").mkdir()
    (tmp_path / "dotfiles" / "asv.json").write_text('{"version": 1, "other": {"machine": "other"}}')
    (tmp_path / MACHINE_FILE).symlink_to("dotfiles/asv.json")
    monkeypatch.setenv("HOME", str(tmp_path))
    rc, out, err = nbsymple(tmp_path, "machine", module="tools.tracking")
    assert rc == 0 and not err, err
    name = out.strip()
    assert (tmp_path / MACHINE_FILE).is_symlink()
    written = json.loads((tmp_path / "dotfiles" / "asv.json").read_text())
    assert set(written) == {"version", "other", name} and written["version"] == 1, written
    assert written["other"] == {"machine": "other"} and written[name]["machine"] == name, written

    from asv.machine import Machine               # asv reads it back as `asv run --machine NAME` does
    assert Machine.load(machine_name=name).machine == name
    (tmp_path / "dotfiles" / "asv.json").unlink()   # a link to a file not made yet: it was "does not exist"
    rc, _, err = nbsymple(tmp_path, "machine", module="tools.tracking")
    assert rc == 0 and not err and set(json.loads((tmp_path / "dotfiles" / "asv.json").read_text())) == {
        "version", name}, err


@pytest.mark.long            # each makes the paper's figures
def test_paper_replaces_a_link_in_its_output_folder_never_writes_through_it(tmp_path):
    """Every file `paper` writes goes through `paths.write_file`: a link planted at a figure's or
    the report's name is replaced by the file, and what it pointed at is left as it was."""
    shutil.copytree(FIXTURE, tmp_path / "res")
    (tmp_path / "victim.txt").write_text("precious\n")
    (tmp_path / "out").mkdir()
    for name in ("speedup.png", "REPORT.md", "task_shares.csv"):
        (tmp_path / "out" / name).symlink_to("../victim.txt")
    rc, err = _paper(tmp_path, "wrote")
    assert rc in (0, 1), err
    assert (tmp_path / "victim.txt").read_text() == "precious\n"
    assert not any((tmp_path / "out" / name).is_symlink() for name in ("speedup.png", "REPORT.md", "task_shares.csv"))


@pytest.mark.parametrize("command, module", [("cpu-asm", "cpu_asm"), ("gpu-asm", "gpu_asm")])
def test_a_keep_file_that_cannot_be_written_is_one_sentence(tmp_path, monkeypatch, command, module):
    """`--keep DIR`: a file in it that cannot be written (a folder in its place) ends the command
    with one sentence naming it and what was kept, status 2 (the counting itself stands in: it
    writes each file as `count_all` does)."""
    keep = tmp_path / "k"
    (keep / "haswell_pairwise_sp.s").mkdir(parents=True)
    instrument = importlib.import_module(f"nbsymple_versions.instruments.{module}")
    monkeypatch.setattr(instrument, "main", lambda *args: write_file(keep / "haswell_pairwise_sp.s", "asm") and 0)
    rc, _, err = call([command, "--keep", keep])
    assert rc == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert f"cannot write {keep / 'haswell_pairwise_sp.s'}: Is a directory" in err, err
    assert f"none was written into {keep}" in err, err       # (a hunt: "the assembly written before it" of nothing)


LONG_NAME = "n" * 300          # more bytes than any common file system takes in one name (255)
DEEP = "/".join(["d" * 200] * 25)   # more than a whole path may have (4096)


@pytest.mark.parametrize("argv, option", [
    (["run", "--n", "8", "--steps", "1", "--checkpoint", LONG_NAME + ".ck"], "--checkpoint"),   # a traceback before
    (["run", "--n", "8", "--steps", "1", "--checkpoint", "n" * 240], "--checkpoint"),  # its lock's name: 246
    (["run", "--n", "8", "--steps", "1", "--snapshots", LONG_NAME], "--snapshots"),
    (["run", "--ics", LONG_NAME], "--ics"), (["run", "--resume", DEEP], "--resume"),
    (["paper", "--no-science", "--out", LONG_NAME], "--out"),                            # a traceback before
    (["paper", "--results", LONG_NAME], "--results"), (["cpu-asm", "--keep", LONG_NAME], "--keep"),
    (["run", "--n", "8", "--steps", "1", "--checkpoint", DEEP + "/x.ck"], "--checkpoint"),
])
def test_a_name_longer_than_the_file_system_takes_is_one_sentence(tmp_path, argv, option):
    """A name no file system here holds (or too long for the lock and temporary file the
    command puts beside it), or a path longer than the system takes: refused with the option,
    before anything is made."""
    rc, out, err = nbsymple(tmp_path, *argv)
    assert rc == 2 and "Traceback" not in err and f"argument {option}:" in err and "bytes long" in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == []


def test_a_name_of_the_most_bytes_a_command_can_use_is_taken_and_a_byte_more_refused(tmp_path):
    """The file system's NAME_MAX less NAME_MARGIN (its lock's and temporary's additions) is the longest
    last name a path option takes, and NAME_MAX itself the longest folder on its way."""
    from nbsymple_versions.arguments import NAME_MARGIN, _name_max, path_argument
    longest = _name_max(tmp_path)
    fits = f"{tmp_path}/{'d' * longest}/{'f' * (longest - NAME_MARGIN)}"
    assert path_argument(fits) == Path(fits)
    with pytest.raises(argparse.ArgumentTypeError, match=f"is {longest - NAME_MARGIN + 1} bytes long"):
        path_argument(fits + "f")


def test_names_are_bounded_as_most_file_systems_bound_them_where_the_file_system_cannot_be_asked(monkeypatch):
    """Where pathconf cannot say the file system's NAME_MAX, it is taken as 255 bytes (ext4's, XFS's,
    Btrfs's): a last name of 255 - NAME_MARGIN bytes is taken, one a byte longer refused."""
    from nbsymple_versions.arguments import NAME_MARGIN, path_argument
    monkeypatch.setattr(os, "pathconf", lambda *args: (_ for _ in ()).throw(OSError(errno.EINVAL, "not here")))
    assert path_argument("f" * (255 - NAME_MARGIN)) == Path("f" * (255 - NAME_MARGIN))
    with pytest.raises(argparse.ArgumentTypeError, match=f"is {256 - NAME_MARGIN} bytes long"):
        path_argument("f" * (256 - NAME_MARGIN))


@pytest.mark.parametrize("argv, option", [(["run", "--n", "8", "--steps", "1", "--every", "1", "--snapshots"],
                                           "--snapshots"), (["paper", "--no-science", "--results", FIXTURE, "--out"],
                                                            "--out"),
                                          (["cpu-asm", "--target", "host", "--keep"], "--keep"),
                                          (["--dry-run"], "folder")], ids=["snapshots", "out", "keep", "migrate"])
def test_a_folder_too_long_for_the_files_written_in_it_is_one_sentence(tmp_path, argv, option):
    """A folder of 4063 bytes (from /) passed, and the files written in it did not fit PATH_MAX: the
    run ended at its first file ("File name too long"), `paper` wrote 2 of its 8 files and
    `cpu-asm --keep` failed after compiling (a hunt). Refused before anything is made
    (`arguments.folder_argument`); one of FOLDER_MARGIN bytes less is taken."""
    from nbsymple_versions.arguments import NAME_MARGIN, PATH_MAX
    start, size = len(os.fsencode(str(tmp_path))) + 1, PATH_MAX - NAME_MARGIN - 1      # a path option's longest
    folder = "/".join(["d" * 200] * ((size - start) // 201))
    folder += "/" + "e" * (size - start - len(folder) - 1)
    module = "tools.migrate" if option == "folder" else "nbsymple_versions.cli"
    rc, out, err = nbsymple(tmp_path, *argv, folder, module=module)
    assert rc == 2 and f"argument {option}: the path is {size} bytes long" in err, err
    assert len(err.strip().splitlines()) == 1 and list(tmp_path.iterdir()) == [], err
    from nbsymple_versions.arguments import FOLDER_MARGIN, folder_argument
    fits = f"{tmp_path}/{folder[:PATH_MAX - FOLDER_MARGIN - start - 1]}x"      # (no '/' at its end)
    assert folder_argument(fits) == Path(fits)
    with pytest.raises(argparse.ArgumentTypeError, match="bytes long"):
        folder_argument(fits + "x")


@pytest.mark.parametrize("argv, option", [
    (["run", "--n", "8", "--steps", "1", "--checkpoint", "no\ndir/x.ck"], "--checkpoint"),  # its summary split
    (["run", "--ics", "a\nb.npz"], "--ics"), (["run", "--n", "8", "--steps", "1", "--snapshots", "s\n"], "--snapshots"),
    (["paper", "--results", "r\nx", "--no-science"], "--results"),      # "results folder r", then "x does not exist"
    (["paper", "--no-science", "--out", "o\nut"], "--out"), (["gpu-asm", "--keep", "k\n"], "--keep"),
])
def test_a_line_feed_in_a_path_is_refused_in_one_sentence(tmp_path, argv, option):
    """A path with a line feed would split every sentence naming it in two (a file or folder
    may have one): refused with the option, the name shown escaped, before anything is made."""
    rc, out, err = nbsymple(tmp_path, *argv)
    assert rc == 2 and f"argument {option}:" in err and "holds a line feed" in err and "\\n" in err, err
    assert len(err.strip().splitlines()) == 1 and out == "", err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, option", [
    (["run", "--n", "8", "--steps", "1", "--checkpoint", "-"], "--checkpoint"),    # wrote a file named '-'
    (["run", "--resume", "-"], "--resume"), (["run", "--ics", "-"], "--ics"),
    (["run", "--n", "8", "--steps", "1", "--snapshots", "-"], "--snapshots"),
    (["paper", "--results", "-", "--no-science"], "--results"), (["paper", "--no-science", "--out", "-"], "--out"),
    (["gpu-asm", "--keep", "-"], "--keep")])
def test_a_dash_for_a_path_is_refused_and_dot_slash_dash_taken(tmp_path, argv, option):
    """'-' is standard input or output to other commands; these read and write files only."""
    rc, out, err = nbsymple(tmp_path, *argv)
    assert rc == 2 and f"argument {option}: '-' stands for standard input" in err and "'./-'" in err, err
    assert len(err.strip().splitlines()) == 1 and out == "", err
    assert list(tmp_path.iterdir()) == []
    if option == "--checkpoint":
        rc, out, err = nbsymple(tmp_path, *argv[:-1], "./-")
        assert rc == 0 and (tmp_path / "-").is_file(), err


@pytest.mark.parametrize("on_path", ["a file", "a symbolic-link loop", "a dangling symbolic link to gone"])
@pytest.mark.parametrize("argv, module", [(["run", "--resume"], "nbsymple_versions.cli"),
                                          (["run", "--ics-mass", "1", "--ics"], "nbsymple_versions.cli"),
                                          (["paper", "--no-science", "--results"], "nbsymple_versions.cli"),
                                          (["--dry-run"], "tools.migrate")],
                         ids=["resume", "ics", "results", "migrate"])
def test_a_file_or_a_loop_on_the_path_of_what_is_read_is_named(tmp_path, argv, module, on_path):
    """`--resume x/c.ck` where x is a file said "cannot be read (Not a directory)", and where x is a
    link loop "x/c.ck is a symbolic-link loop, not a file" (a hunt): the folder on its path is named
    as what it is (`runs.paths._os_error`, `not_a_folder`). So is x a dangling link (a disk not mounted
    here), where "x/c.ck does not exist" left it unnamed (a review)."""
    if on_path == "a file":
        (tmp_path / "x").write_text("x\n")
    else:
        (tmp_path / "x").symlink_to("x" if on_path == "a symbolic-link loop" else "gone")
    err = refused(tmp_path, [*argv, "x/c.ck"], [f"x/c.ck cannot be read: a folder on its path is {on_path} (x)"],
                  module=module)
    assert "x/c.ck is a symbolic-link loop" not in err, err


@pytest.mark.parametrize("argv, text, said", [
    (["run", "--n", "8", "--steps", "1", "--checkpoint"], "~/c.ck", "write $HOME/c.ck, or ./~/c.ck"),
    (["paper", "--no-science", "--out"], "~", "write $HOME, or ./~"),
    (["cpu-asm", "--keep"], "~nobody/k", "write the full path of nobody's home folder, then /k, or ./~nobody/k")])
def test_a_path_that_starts_with_a_tilde_no_shell_expanded_is_refused(tmp_path, argv, text, said):
    """`--out '~/plots'` (quoted, or from a program) made a folder '~' in the current folder, in silence
    (a hunt; `rm -rf ~` would then remove the home folder): refused, the home folder's path given,
    './~' taken (`environment.unexpanded_home`)."""
    rc, out, err = nbsymple(tmp_path, *argv, text)
    assert rc == 2 and f"starts with {text.split('/')[0]!r}, which no shell expanded" in err and said in err, err
    assert len(err.strip().splitlines()) == 1 and list(tmp_path.iterdir()) == [], err
    if argv[0] == "run":
        rc, out, err = nbsymple(tmp_path, *argv, "./" + text)
        assert rc == 0 and (tmp_path / "~" / "c.ck").is_file(), err


@pytest.mark.parametrize("name", ["NUMBA_CACHE_DIR", "MPLCONFIGDIR", "XDG_CACHE_HOME", "HOME"])
def test_a_folder_variable_that_starts_with_a_tilde_is_refused(tmp_path, name):
    """NUMBA_CACHE_DIR='~/cache' (set by a program, or quoted) made numba's cache in a folder '~' of the
    current folder (a hunt): one sentence naming the variable."""
    from nbsymple_versions import environment
    found = environment.problem({"HOME": str(tmp_path), name: "~/x"}, draws=True)
    assert found is not None and found.startswith(f"{name}='~/x' starts with '~', which no shell expanded"), found


@pytest.mark.parametrize("argv", [["run", "--n", "8", "--steps", "1", "--checkpoint"],
                                  ["--rate", "1e9", "--plot"], ["--measure"]], ids=["checkpoint", "plot", "measure"])
def test_an_output_that_is_a_link_to_an_open_stream_is_refused(tmp_path, capsys, argv):
    """`mpi_model --plot /dev/stdout > fig.png` wrote the figure beside the link and renamed it over
    it: as root, the machine's /dev/stdout was replaced by a PNG (a hunt). Refused as '-' is, the
    link left as it was (`arguments.output_file_argument`)."""
    (tmp_path / "out").symlink_to("/proc/self/fd/1")
    (tmp_path / "chain").symlink_to("out")
    for name in ("out", "chain"):
        if argv[0] == "run":
            rc, _, err = nbsymple(tmp_path, *argv, name)
        else:
            with pytest.raises(SystemExit) as stop, pytest.MonkeyPatch.context() as mp:
                mp.chdir(tmp_path)
                mpi_model.main([*argv, name])
            rc, err = stop.value.code, capsys.readouterr().err
        assert rc == 2 and f"{name} is a link to an open stream (/proc/self/fd/1)" in err, err
    assert os.readlink(tmp_path / "out") == "/proc/self/fd/1" and os.readlink(tmp_path / "chain") == "out"


@pytest.mark.parametrize("argv, given, known", [
    (["run", "--n", "8", "--steps", "1", "--checkpoint", "-x.ck"], "--checkpoint=-x.ck or --checkpoint ./-x.ck",
     "--json"),
    (["paper", "--no-science", "--out", "-o"], "--out=-o or --out ./-o", "--no-science"),
    (["profile", "--versions", "-A"], "--versions=-A", "--json"),          # no path: no ./
    (["--dry-run", "-x"], "-- -x or ./-x", "--dry-run"),
    (["run", "--checkpoint", "a.ck", "--checkpoint", "-x.ck"], "--checkpoint=-x.ck or --checkpoint ./-x.ck", "--json")],
    ids=["run", "paper", "profile", "migrate", "given twice"])
def test_a_value_that_starts_with_a_dash_is_said_to_be_taken_for_an_option(tmp_path, argv, given, known):
    """`--checkpoint -x.ck` said only "expected one argument", and `tools.migrate -x` "the following
    arguments are required: folder", where each was typed (a hunt): the word is named, with how to
    give it (`arguments.Parser._taken_for_an_option`); an option of the command there is not."""
    module = "tools.migrate" if argv[0] == "--dry-run" else "nbsymple_versions.cli"
    rc, out, err = nbsymple(tmp_path, *argv, module=module)
    assert rc == 2 and f"{argv[-1]!r} is no option of" in err and f"write {given} (see" in err, err
    assert len(err.strip().splitlines()) == 1 and out == "", err
    assert list(tmp_path.iterdir()) == []
    rc, out, err = nbsymple(tmp_path, *argv[:-1], known, module=module)
    assert rc == 2 and "no option of" not in err, err


def test_a_missing_command_is_not_said_to_be_a_value_taken_for_an_option(tmp_path):
    """`nbsymple -x` (a mistyped option, no command) was told "'-x' is no option of nbsymple, so it was
    not taken as a value: write -- -x", which names no command either (a review): the command is
    said to be missing, as `nbsymple` alone says it."""
    rc, out, err = nbsymple(tmp_path, "-x")
    assert rc == 2 and "arguments are required: command" in err and "no option of" not in err, err


@pytest.mark.parametrize("argv, option", [
    (["run", "--n", "8", "--steps", "1", "--checkpoint", "runs/"], "--checkpoint"),    # wrote a file named 'runs'
    (["run", "--n", "8", "--steps", "1", "--checkpoint", "."], "--checkpoint"),
    (["run", "--n", "8", "--steps", "1", "--checkpoint", "c.ck/.."], "--checkpoint"),
    (["run", "--resume", "c.ck/"], "--resume"), (["run", "--ics", "bodies.txt/.", "--ics-mass", "1"], "--ics")])
def test_a_file_option_ending_in_a_slash_is_refused_as_a_folder(tmp_path, argv, option):
    """`--checkpoint runs/` wrote a checkpoint file named `runs` (Path drops the slash), so that a later
    `--snapshots runs` found a file; a name that ends in '/' names a folder (`arguments.file_argument`)."""
    (tmp_path / "c.ck").write_bytes(b"")
    (tmp_path / "bodies.txt").write_text("0 0 0 0 0 0 1\n1 0 0 0 0 0 1\n")
    rc, out, err = nbsymple(tmp_path, *argv)
    assert rc == 2 and f"argument {option}: {argv[argv.index(option) + 1]!r} names a folder, not a file" in err, err
    assert len(err.strip().splitlines()) == 1 and out == "", err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bodies.txt", "c.ck"]


def test_the_tools_refuse_a_line_feed_in_a_path(tmp_path, capsys):
    module = importlib.import_module("tools.dashboard.views")
    rc, err = module.main([str(tmp_path / "h\ntml")]), capsys.readouterr().err
    first, *rest = err.strip().splitlines()        # the sentence alone
    assert rc == 2 and first.startswith("views.py: ") and "holds a line feed" in first and rest == [], err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("tool", ["migrate", "views", "offline"])
def test_the_tools_refuse_a_name_longer_than_the_file_system_takes(tmp_path, capsys, tool):
    if tool == "migrate":
        rc, _, err = nbsymple(tmp_path, LONG_NAME, module="tools.migrate")   # a traceback before
    else:
        module = importlib.import_module(f"tools.dashboard.{tool}")
        rc, err = module.main([str(tmp_path / LONG_NAME)]), capsys.readouterr().err    # a traceback before
    assert rc == 2 and "Traceback" not in err and "300 bytes long" in err, err
    assert list(tmp_path.iterdir()) == []


# ============================================================================== 2. the science records paper reads back

@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """OUT of `nbsymple paper` with finished tiny science runs (a second or two) and their figures' record."""
    from nbsymple_versions.paper.science_runs import run_black_hole, run_tidal_tails
    root = tmp_path_factory.mktemp("finished")
    runs = root / "out" / "runs"
    run_tidal_tails(runs / "tidal_tails", n=8, dt=0.5, orbits=0.25, version="A", progress=False)
    run_black_hole(runs / "black_hole", n=8, dt=0.5, t_end=1.0, ratios=(1.0,), version="A", progress=False)
    shutil.copytree(FIXTURE, root / "res")
    return root


RUN_CASES = {   # a run.json changed where paper reads it: (change, the field named)
    "params-missing": (lambda d: d.pop("params"), "lacks params"),
    "n-text": (lambda d: d["params"].__setitem__("n", "eight"), "params.n"),
    "dt-negative": (lambda d: d["params"].__setitem__("dt", -0.5), "params.dt"),
    "version-unknown": (lambda d: d["params"].__setitem__("version", "Z"), "params.version"),
    "scheme-long": (lambda d: d["params"].__setitem__("scheme", "W" * 300), "params.scheme"),
    "per-orbit-zero": (lambda d: d["params"].__setitem__("snapshots_per_orbit", 0), "params.snapshots_per_orbit"),
    "period-text": (lambda d: d.__setitem__("orbital_period", "x"), "orbital_period"),
    "period-missing": (lambda d: d.pop("orbital_period"), "lacks orbital_period"),
    "steps-float": (lambda d: d.__setitem__("steps", 2.5), "steps"),
    "machine-line-feed": (lambda d: d["provenance"].__setitem__("machine", "m\nx"), "provenance"),
    "provenance-list": (lambda d: d.__setitem__("provenance", [1, 2]), "provenance"),
    "snapshots-object": (lambda d: d.__setitem__("snapshots", {"a": 1}), "snapshots"),
    "snapshot-outside": (lambda d: d["snapshots"].append("../other/snap_00000009.npz"), "snapshots"),
}


def _changed_run(root: Path, change, kind: str = "tidal_tails") -> Path:
    path = root / "out" / "runs" / kind / ("ratio_1" if kind == "black_hole" else "") / "run.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
    return path.parent


@pytest.mark.parametrize("case", sorted(RUN_CASES))
def test_a_run_record_that_paper_did_not_write_is_refused_naming_its_field(tmp_path, finished, case):
    """A run.json whose field is not what paper wrote ended in a traceback's last line ("KeyError:
    'params'", "TypeError: can't multiply sequence") or was drawn: a version Z or a scheme of 300
    characters in a figure's title. `run_record` refuses it in one sentence naming the field."""
    from nbsymple_versions.paper.science_runs import run_record
    from nbsymple_versions.runs.paths import FileRefused
    change, field = RUN_CASES[case]
    shutil.copytree(finished / "out", tmp_path / "out")
    folder = _changed_run(tmp_path, change)
    with pytest.raises(FileRefused, match="is not one that nbsymple paper wrote") as refusal:
        run_record(folder)
    assert field in str(refusal.value) and "\n" not in str(refusal.value) and "WWWW" not in str(refusal.value)


def test_a_stray_snapshot_in_a_finished_runs_folder_is_not_read_as_the_runs(tmp_path, finished):
    """A hunt: `load_run` read every snapshot in the folder, so one of another cluster dropped there (a step
    beyond the run's last) was read among the run's, and drawn as its last state; it reads those its run.json
    lists now."""
    from nbsymple_versions import make_cluster
    from nbsymple_versions.paper.science_runs import load_run
    from nbsymple_versions.runs.snapshots import write_snapshot
    shutil.copytree(finished / "out", tmp_path / "out")
    folder = tmp_path / "out" / "runs" / "tidal_tails"
    listed = json.loads((folder / "run.json").read_text())["snapshots"]
    write_snapshot(folder, make_cluster(8, seed=99), 10**6)
    run, snaps = load_run(folder)
    assert [f"snap_{step:08d}.npz" for _, step in snaps] == listed and len(listed) >= 2


@pytest.mark.parametrize("change, said", [
    (lambda d: d.__setitem__("snapshots", [d["snapshots"][0]] * 3), "lists a snapshot twice"),
    (lambda d: d["params"].__setitem__("n", 10 ** 20), "holds 8 bodies, not the 100000000000000000000 its run.json"),
    (lambda d: d.__setitem__("steps", d["steps"] + 1), "but its last snapshot is of step"),
])
def test_a_run_record_that_its_snapshots_contradict_is_refused(tmp_path, finished, change, said):
    """A hunt: a run.json listing its first snapshot three times was drawn "converged, internal
    error 0.0e+00", and one of N = 10^20 as "N = 100000000000000000000 stars": the snapshots it
    lists are checked to be the run's (each once, of its N bodies, the last at its last step)."""
    from nbsymple_versions.paper.science_runs import load_run
    from nbsymple_versions.runs.paths import FileRefused
    shutil.copytree(finished / "out", tmp_path / "out")
    folder = _changed_run(tmp_path, change)
    with pytest.raises(FileRefused, match=re.escape(said)):
        load_run(folder)


@pytest.mark.parametrize("damage, said", [
    (lambda x: x.__setitem__((0, 3), 1e300), "beyond the"),
    (lambda x: x.__setitem__(slice(None), x[:, :1]), "bodies stand at one point, which is no cluster"),
])
def test_a_snapshot_of_bodies_no_run_steps_to_is_refused(tmp_path, finished, damage, said):
    """A hunt: a snapshot with a coordinate of 1e300 was drawn, with NumPy's overflow warnings on
    stderr, and one of every body at one point hung `paper` in Agg for ever (SIGTERM unanswered)."""
    from nbsymple_versions.paper.science_runs import load_run
    from nbsymple_versions.runs.paths import FileRefused
    from nbsymple_versions.runs.snapshots import read_snapshot, write_snapshot
    shutil.copytree(finished / "out", tmp_path / "out")
    folder = tmp_path / "out" / "runs" / "tidal_tails"
    last = json.loads((folder / "run.json").read_text())["snapshots"][-1]
    state, step = read_snapshot(folder / last)
    damage(state.x)
    write_snapshot(folder, state, step)
    with pytest.raises(FileRefused, match=re.escape(f"snapshot tidal_tails/{last}: ")) as refusal:
        load_run(folder)
    assert said in str(refusal.value) and str(refusal.value).endswith("; no run of nbsymple writes it")


def test_the_run_records_paper_writes_pass_its_checks(finished):
    from nbsymple_versions.paper.science_runs import run_record
    assert run_record(finished / "out" / "runs" / "tidal_tails")["params"]["kind"] == "tidal_tails"
    assert run_record(finished / "out" / "runs" / "black_hole" / "ratio_1")["params"]["ratio"] == 1.0


@pytest.mark.long            # makes the paper's figures
@pytest.mark.parametrize("kind", ["tidal_tails", "black_hole"])
def test_paper_names_a_run_record_it_did_not_write_and_draws_the_rest(tmp_path, finished, kind):
    shutil.copytree(finished, tmp_path, dirs_exist_ok=True)
    _changed_run(tmp_path, lambda d: d["params"].__setitem__("version", "Z"), kind)
    rc, err = _paper(tmp_path, "run.json is not one that nbsymple paper wrote: its params.version is not one of")
    figure = {"tidal_tails": "tidal_tails.png", "black_hole": "black_hole_passage.png"}[kind]
    assert rc == 1 and f"{figure} not written: run record" in err, err
    assert not (tmp_path / "out" / figure).exists() and (tmp_path / "out" / "speedup.png").is_file()


@pytest.mark.long            # makes the paper's figures
def test_a_run_records_machine_and_cpu_are_drawn_as_written(tmp_path, finished):
    """The science figures' footers show the runs' provenance: a CPU's name with '$\\frac{$'
    ended in mathtext's traceback, and the figures were lost."""
    shutil.copytree(finished, tmp_path, dirs_exist_ok=True)
    for kind in ("tidal_tails", "black_hole"):
        _changed_run(tmp_path, lambda d: d["provenance"].update(machine="m|$x$", cpu=MARKUP), kind)
    rc, err = _paper(tmp_path, "wrote")
    assert rc == 0 and "tidal_tails.png" in err and "black_hole_passage.png" in err, err


def test_a_dt_series_row_shows_its_machine_in_one_cell():
    """The full-size series table: a machine's name with '|' or '<!--' stays in its cell."""
    from nbsymple_versions.paper import dt_series
    entry = next(iter(json.loads((REPO / "plots" / "tidal_tails_n4096_series.json").read_text()).values()))
    entry = {**entry, "provenance": {**entry["provenance"], "machine": "a|b <!-- c"}}
    head, _, row = dt_series.table([entry])
    cells = re.split(r"(?<!\\)\|", row)
    assert len(cells) == len(re.split(r"(?<!\\)\|", head)), row
    assert re.sub(r"\\(.)", r"\1", cells[-2]).strip() == "a|b <!-- c", row


@pytest.mark.long            # makes the paper's figures
@pytest.mark.parametrize("record, why", [
    ({"summary": "x", "runs": [{"internal_energy_error": "big", "converged": "yes"}]}, "its runs[0] lacks run"),
    ({"summary": 5, "runs": 7}, "its summary is not one printable line"),
    ({"summary": "a\nb", "runs": []}, "its summary is not one printable line"),
])
def test_a_science_record_that_paper_did_not_write_is_not_kept(tmp_path, record, why):
    """OUT/science_runs.json keeps a science figure's record for `--no-science`: one that is not
    what paper wrote ended in a traceback from REPORT.md's writing; now it is named and not kept."""
    shutil.copytree(FIXTURE, tmp_path / "res")
    (tmp_path / "out").mkdir()
    earlier = b"\x89PNG\r\n\x1a\n tEXtSoftware\x00Matplotlib: an earlier figure"    # as paper's begin
    (tmp_path / "out" / "tidal_tails.png").write_bytes(earlier)
    (tmp_path / "out" / "science_runs.json").write_text(json.dumps({"tidal_tails": record}))
    rc, err = _paper(tmp_path, f"the record of tidal_tails in out/science_runs.json is not one that nbsymple paper "
                               f"wrote ({why}")
    assert rc == 0 and "tidal_tails.png not written: no finished run" in err, err
    assert (tmp_path / "out" / "tidal_tails.png").read_bytes() == earlier


@pytest.mark.parametrize("data, said", [(b"\xef\xbb\xbf{}", "is not valid JSON (Unexpected UTF-8 BOM"),
                                       (b'{"tidal_tails": {}', "is not valid JSON"),
                                       (b"[1]", "is not one that nbsymple paper wrote (not a JSON object)")])
def test_science_records_paper_cannot_read_are_named(tmp_path, data, said):
    """A hunt: an OUT/science_runs.json that could not be read as a whole (an editor's byte-order mark, cut
    short, a list) dropped the science figures from REPORT.md with "not written: no finished run" alone;
    now a note names the file and why."""
    from nbsymple_versions.paper.main import SCIENCE_SUMMARIES, _read_science_summaries
    (tmp_path / SCIENCE_SUMMARIES).write_bytes(data)
    notes = []
    assert _read_science_summaries(tmp_path, notes.append) == {}
    assert len(notes) == 1 and said in notes[0] and SCIENCE_SUMMARIES in notes[0], notes
    assert notes[0].endswith("so the records of the science figures in it are not kept."), notes


def test_a_dt_series_entry_that_paper_did_not_write_is_not_drawn_and_kept(tmp_path):
    """The full-size dt series (`tidal_tails_n<N>_series.json`): an entry that is not what paper
    wrote is left out of what is drawn, and kept as it was in the file when others are added."""
    from nbsymple_versions.paper import dt_series
    path = tmp_path / "tidal_tails_n4096_series.json"
    stored = json.loads((REPO / "plots" / path.name).read_text())
    good = dict(stored)
    bad = {"bad n": {**next(iter(stored.values())), "params": {**next(iter(stored.values()))["params"], "n": "x"}},
           "bad rows": {**next(iter(stored.values())), "rows": [{"orbits": "half"}]}, "a list": [1, 2],
           "no orbits": {**next(iter(stored.values())), "params": {k: v for k, v in
                                                                   next(iter(stored.values()))["params"].items()
                                                                   if k != "orbits"}}}
    path.write_text(json.dumps({**good, **bad}))
    assert dt_series.read(path) == good
    entry = next(iter(good.values()))
    assert dt_series.update(path, [entry]) == good
    assert json.loads(path.read_text()) == {**good, **bad}


@pytest.mark.long            # makes the paper's figures
def test_a_full_size_table_that_is_no_file_is_named_not_read(tmp_path):
    """REPORT.md shows the full-size tables in OUT (`tidal_tails_n<N>.md`): a FIFO there made
    `paper` wait for ever, a file that is not one paper wrote (empty) ended in a traceback; each is
    now named in one sentence and left out."""
    shutil.copytree(FIXTURE, tmp_path / "res")
    (tmp_path / "out").mkdir()
    os.mkfifo(tmp_path / "out" / "tidal_tails_n64.md")
    (tmp_path / "out" / "tidal_tails_n65.md").write_text("")
    rc, err = _paper(tmp_path, "tidal_tails_n64.md is not in REPORT.md: Markdown table out/tidal_tails_n64.md is "
                               "a FIFO")
    assert rc == 0 and "tidal_tails_n65.md is not in REPORT.md: it does not begin with the title" in err, err
    assert "From `nbsymple paper --full`" not in (tmp_path / "out" / "REPORT.md").read_text()


def test_full_with_a_table_that_is_no_file_is_one_sentence(tmp_path):
    """`paper --full --no-science` redraws the dt series and rewrites the table's series section:
    a FIFO in the table's place made it wait for ever."""
    (tmp_path / "out").mkdir()
    shutil.copy(REPO / "plots" / "tidal_tails_n4096_series.json", tmp_path / "out")
    os.mkfifo(tmp_path / "out" / "tidal_tails_n4096_0.5orb_dp.md")
    err = refused(tmp_path, ["paper", "--full", "--no-science", "--tidal-n", "4096", "--tidal-orbits", "0.5",
                             "--tidal-precision", "dp", "--out", "out"],
                  ["out/tidal_tails_n4096_0.5orb_dp.md is a FIFO"],
                  status=1)
    assert err.startswith("nbsymple paper: the full-size figure was not written"), err


@pytest.mark.long            # makes the paper's figures
def test_a_black_hole_run_in_a_folder_of_another_name_is_drawn(tmp_path, finished):
    """The black-hole runs were ordered by their folders' names (`ratio_<r>`): one named
    `ratio_x` ended the figure with "ValueError: could not convert string to float"."""
    shutil.copytree(finished, tmp_path, dirs_exist_ok=True)
    black_hole = tmp_path / "out" / "runs" / "black_hole"
    shutil.copytree(black_hole / "ratio_1", black_hole / "ratio_x")
    rc, err = _paper(tmp_path, "black_hole_passage.png: black hole M_BH/M_cl = 1")
    assert rc == 0 and (tmp_path / "out" / "black_hole_passage.png").is_file(), err


@pytest.mark.parametrize("kind", ["fifo", "garbage", "list", "provenance-text"])
def test_bench_refuses_a_results_file_it_cannot_read_before_asv_runs(tmp_path, monkeypatch, capsys, kind):
    """`make bench` hands asv the commit's results file to merge its new rows into: a FIFO in its
    place made it wait for ever, a file that is not a JSON object ended in a traceback. Now one
    sentence naming it, status 2, asv not started, the file as it was."""
    import stat
    from asv.results import get_filename
    from tools import tracking
    commit = "0123456789abcdef0123456789abcdef01234567"
    fixed = tmp_path / "results" / get_filename("m", commit, tracking.fixed_env_name())   # m/<commit>-<env>.json
    fixed.parent.mkdir(parents=True)
    if kind == "fifo":
        _fifo(fixed)
    else:
        fixed.write_text({"garbage": "{x", "list": "[1, 2]", "provenance-text": '{"provenance": "x"}'}[kind])
    monkeypatch.setattr(tracking, "register_machine", lambda: "m")
    monkeypatch.setattr(tracking, "git", lambda *args, **kw: commit)
    monkeypatch.setattr(tracking, "scratch_config", lambda name: tmp_path / "asv.conf.json")
    monkeypatch.setattr(tracking, "selection", lambda **kw: ["tasks"])
    monkeypatch.setattr(tracking, "run_provenance", lambda: {"commit": commit, "grid": "smoke"})
    monkeypatch.setattr(tracking, "asv", lambda *args, **kw: pytest.fail("asv was started"))
    monkeypatch.setattr(tracking, "SCRATCH", tmp_path / ".asv")         # its lock, not the checkout's
    with hang_guard():
        rc = tracking.run(results="scratch")
    err = capsys.readouterr().err
    assert rc == 2 and fixed.name in err and err.rstrip().endswith("nothing was run"), err
    assert "Traceback" not in err and len(err.strip().splitlines()) in (1, 2), err   # (the run's heading,) the refusal
    assert stat.S_ISFIFO(fixed.lstat().st_mode) if kind == "fifo" else fixed.is_file()


@pytest.mark.parametrize("fault", [errno.ENOSPC, errno.EROFS])
def test_a_write_of_the_tools_that_fails_is_one_sentence_and_keeps_the_file(tmp_path, monkeypatch, fault):
    """A full disk or a read-only folder under `tools.migrate` (or `tools.tracking benchmarks-json`,
    the results files, the machine file: every `runs.paths.write_atomically` that no caller
    answers) ended in an OSError traceback: now one sentence naming the file, status 4, the files
    as they were and no temporary left (`entry.command`, `runs.paths.failed_write`)."""
    from nbsymple_versions.entry import command
    shutil.copytree(FIXTURE, tmp_path / "res")
    before = tree(tmp_path)
    real = os.fsync

    def failing(fd):
        if os.path.isfile(f"/proc/self/fd/{fd}"):          # a file's flush, not its folder's
            raise OSError(fault, os.strerror(fault))
        return real(fd)
    monkeypatch.setattr(os, "fsync", failing)
    monkeypatch.chdir(tmp_path)
    err = io.StringIO()
    with hang_guard(), contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = command("python -m tools.migrate",
                     lambda: migrate.main([f"res/{MACHINE}", "--isa", "avx2", "--uarch", "znver4"]))
    lines = err.getvalue().strip().splitlines()
    assert rc == 4 and len(lines) == 1, err.getvalue()
    assert lines[0].startswith("python -m tools.migrate: cannot write ") and os.strerror(fault) in lines[0]
    files = {p: h for p, h in tree(tmp_path).items() if h != "folder"}      # (the new machine folder, empty)
    assert files == {p: h for p, h in before.items() if h != "folder"}     # nothing half written, no temporary


def test_a_killed_writers_temporary_is_removed_by_the_next_write_of_its_file(tmp_path):
    """`make bench`, `tools.migrate` or `make dashboard` killed while it wrote a file left
    `.NAME.<pid>.<random>.tmp` in results/ (committed with it) or html/ for good: `paper --out`
    alone removed them. The next `runs.paths.write_file` of NAME removes those of a writer that is
    gone; a live writer's, another file's and a user's stay."""
    import time
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    name = "0123abcd-existing-py3.11.json"
    stale = tmp_path / f".{name}.{int(dead.stdout)}.p431bv8r.tmp"
    live = tmp_path / f".{name}.{os.getpid()}.q2xabcde.tmp"
    other = tmp_path / f".machine.json.{int(dead.stdout)}.p431bv8r.tmp"
    users = tmp_path / f".{name}.draft.tmp"
    for path in (stale, live, other, users):
        path.write_bytes(b"cut short")
        os.utime(path, (time.time() - 3600,) * 2)
    write_file(tmp_path / name, "{}")
    assert not stale.exists() and live.exists() and other.exists() and users.exists()
    assert (tmp_path / name).read_text() == "{}"


def test_a_temporary_of_a_writer_gone_less_than_a_minute_ago_is_kept(tmp_path):
    """A temporary whose process is not on this machine is removed only once it is a minute old
    (STALE_S): a younger one may be a live writer's on another machine that shares the folder.
    Half a minute old it stays; two minutes old it goes."""
    import time
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    young = tmp_path / f".f.json.{int(dead.stdout)}.p431bv8r.tmp"
    old = tmp_path / f".f.json.{int(dead.stdout)}.q2xabcde.tmp"
    for path, age in ((young, 30), (old, 120)):
        path.write_bytes(b"cut short")
        os.utime(path, (time.time() - age,) * 2)
    write_file(tmp_path / "f.json", "{}")
    assert young.exists() and not old.exists()


def test_a_second_paper_into_one_folder_is_refused_before_it_writes(tmp_path):
    """Two `nbsymple paper` into one --out at once (of two machines' results) mixed their figures,
    REPORT.md and science_runs.json in silence: the second is refused, nothing written. `--full`
    writes its own files and run folder alone (locked), beside a paper into the same folder."""
    (tmp_path / "P").mkdir()
    with locks.hold(tmp_path / "P", "--out", folder=True):       # as a paper under way holds it
        refused(tmp_path, ["paper", "--results", FIXTURE, "--out", "P", "--no-science", "--quiet"],
                ["--out", "in use by another run", "nothing was written"])


def test_migrate_beside_an_asv_command_writing_results_is_refused_before_it_writes(tmp_path, monkeypatch):
    """`tools.migrate` beside `make bench` (found by a hunt): it rewrote and moved the results files,
    then was refused at benchmarks.json, its last write, saying another command was using results/
    (status 2, as if nothing was written; the run then merged the old files back). It holds the
    lock of the results folder it migrates (`tracking.results_lock`: results/, or a scratch one's
    of `run --results NAME`; a folder no asv command writes, none) from its first read to its last write."""
    monkeypatch.setattr(tracking, "SCRATCH", tmp_path / "w" / ".asv")
    shutil.copytree(FIXTURE, tmp_path / "w" / ".asv" / "bench" / "results")     # `run --results bench`'s
    argv = [f".asv/bench/results/{MACHINE}", "--isa", "avx2", "--uarch", "znver4"]
    with tracking.exclusive("bench", ".asv/bench/results/"):              # as that run holds it
        refused(tmp_path / "w", argv, ["another asv command", ".asv/bench/results/"], module="tools.migrate")
    rc, out, err = nbsymple(tmp_path / "w", *argv, module="tools.migrate")
    assert rc == 0 and " -> " in out, err                          # free again: it migrates
    assert tracking.results_lock(tracking.ROOT / "results") == ("results", "results/")   # `make bench`'s
