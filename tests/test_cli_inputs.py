"""Inputs a user can type: every mistake is one sentence and exit status 2 with nothing lost;
a property-based search over `run`, `check` and `profile` finds no traceback and no
non-JSON output under --json."""
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from hypothesis import given, strategies as st
import numpy as np
import pytest

from cli_call import call
from drawn import hostile
from nbsymple_versions.core.diagnostics import potential_energy
from nbsymple_versions.runs import driver, memory
from nbsymple_versions.runs.snapshots import SnapshotError, list_snapshots, read_snapshot, write_snapshot
from nbsymple_versions import make_cluster

HUGE = 10**13                       # bodies no machine holds: refused by the memory estimate


def assert_clean(argv, rc, out, err, statuses=(0, 2)):
    assert rc in statuses, (argv, rc, err)
    assert "Traceback" not in err, (argv, err)
    if rc != 0:
        assert len(err.strip().splitlines()) == 1, (argv, err)      # one sentence
    if "--json" in argv:
        if rc == 0:
            json.loads(out, parse_constant=lambda c: pytest.fail(f"{argv}: {c} is not JSON"))
        else:
            assert out == "", (argv, out)


def _junk():
    return st.sampled_from(["", "x", "1.5", "1e3", "--", "-", "0x10", "nan", "inf", "2**8", "--json"])


def _mostly(valid, invalid):
    """Valid values three times as often as mistakes, so that both paths are searched."""
    return st.one_of(valid, valid, valid, st.one_of(invalid, _junk()))


def _opt(name, values):
    return st.tuples(st.just(name), values)


N = _mostly(st.integers(2, 40), st.one_of(st.integers(-3, 1), st.just(HUGE), st.sampled_from([" 7", "١٢"])))
STEPS = _mostly(st.integers(0, 4), st.integers(-2, -1))
DT = _mostly(st.sampled_from(["5e-4", "1e-2", "1e-300"]), st.sampled_from(["0", "-1e-3", "nan", "inf", "1e300"]))
SEED = _mostly(st.integers(0, 2**64), st.integers(-2, -1))
SCHEME = _mostly(st.sampled_from(["leapfrog", "SI6A"]), st.just("rk4"))
PRECISION = _mostly(st.sampled_from(["sp", "DP", "dsp"]), st.just("qp"))
LETTER = _mostly(st.sampled_from(["A", "b"]), st.sampled_from(["C", "E", "Z", "AB"]))
FLAGS = st.lists(st.sampled_from(["--json", "--json", "--bogus"]), max_size=2, unique=True)


@st.composite
def run_argv(draw):
    options = draw(st.lists(st.one_of(
        _opt("--dt", DT), _opt("--seed", SEED), _opt("--scheme", SCHEME), _opt("--precision", PRECISION),
        _opt("--version", LETTER), _opt("--tile", N), _opt("--devices", N), _opt("--every", STEPS),
        _opt("--checkpoint-every", STEPS), _opt("--snapshots", st.sampled_from(["{tmp}/s", "{tmp}/s", "{tmp}/f/s"])),
        _opt("--checkpoint", st.sampled_from(["{tmp}/c.ck", "{tmp}/c.ck", "{tmp}/f/c.ck", "{tmp}"])),
        _opt("--resume", st.sampled_from(["{tmp}/none.ck", "{tmp}/f", "{tmp}"]))), max_size=3))
    argv = ["run", "--n", draw(N), "--steps", draw(STEPS)]
    for name, value in options:
        argv += [name, value]
    return argv + draw(FLAGS)


@st.composite
def check_argv(draw):
    argv = ["check", "--n", draw(N)]
    if draw(st.booleans()):
        argv += ["--seed", draw(SEED)]
    return argv + draw(FLAGS)


@st.composite
def profile_argv(draw):
    argv = ["profile", "--n", *draw(st.lists(N, min_size=1, max_size=2)), "--steps", draw(STEPS),
            "--versions", draw(LETTER)]
    for name, value in draw(st.lists(st.one_of(_opt("--scheme", SCHEME), _opt("--precision", PRECISION)), max_size=2)):
        argv += [name, value]
    return argv + draw(FLAGS)


@hostile(45, commands=False)
@given(st.one_of(run_argv(), run_argv(), check_argv(), profile_argv()))
def test_no_input_gives_a_traceback_or_non_json(argv):
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "f").write_text("a file, not a folder")
        argv = [str(a).replace("{tmp}", tmp) for a in argv]
        rc, out, err = call(argv)
    # 3: a run whose dt blows the cluster up stops at the first non-finite step
    assert_clean(argv, rc, out, err, statuses=(0, 2, 3))
    if rc == 3:
        assert "non-finite" in err


@pytest.mark.parametrize("command", [["run", "--steps", 1], ["check"], ["profile", "--n", 8]])
def test_a_huge_n_is_refused_with_the_memory_it_needs(command):
    argv = command[:1] + ["--n", HUGE] + command[1:] if command[0] != "profile" else ["profile", "--n", 8, HUGE]
    rc, out, err = call(argv)
    assert rc == 2 and out == "" and f"N = {HUGE} needs about" in err and "available" in err, err


def test_memory_estimate_grows_with_n_and_fits_small_runs():
    assert memory.memory_needed(10**9) > 100 * 10**9 > memory.memory_needed(10**6)
    assert memory.memory_problem(1024) is None


def test_the_initial_energy_reports_progress_and_slow_set_ups_say_how_long(capsys):
    seen = []
    x = make_cluster(300, seed=1).positions
    w = potential_energy(x, np.full(300, 1 / 300), 0.01, progress=lambda done, total: seen.append((done, total)))
    assert w < 0 and seen[-1] == (300, 300) and len(seen) >= 1
    memory.warn_if_slow(10**5)
    assert "O(N^2) potential energy takes about" in capsys.readouterr().err
    memory.warn_if_slow(1000)
    assert capsys.readouterr().err == ""


class _Terminal:
    """stderr on a pseudo-terminal `columns` wide: what is written is kept in `text`."""

    def __init__(self, columns: int):
        import fcntl
        import pty
        import struct
        import termios
        self.master, self.slave = pty.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
        self.text = ""

    def isatty(self):
        return True

    def fileno(self):
        return self.slave

    def write(self, text):
        self.text += text

    def flush(self):
        pass


@pytest.mark.parametrize("columns", [12, 30, 50, 80, 200])
def test_the_progress_line_fits_its_terminal_and_a_dumb_one_gets_whole_lines(monkeypatch, columns):
    """A redrawn line longer than the terminal wraps, and each redraw left a line behind (found in
    a terminal 50 columns wide); it is cut to the terminal's width, keeping the steps and the time
    left as long as they fit. A terminal that cannot redraw (TERM=dumb) gets a line per 10 %."""
    from nbsymple_versions.runs.progress import Progress
    monkeypatch.setenv("TERM", "xterm")
    terminal = _Terminal(columns)
    bar = Progress("tidal tails (N = 16384, version B, dp, resumed at step 123456)", 1234567, stream=terminal)
    bar.update(1)
    bar.update(1234567)
    drawn = [line.removesuffix("\033[K") for line in terminal.text.strip("\n").split("\r")[1:]]
    assert len(drawn) == 2 and all(len(line) < columns for line in drawn), drawn
    assert ("1234567/1234567 (100 %)" in drawn[1]) == (columns > 23), drawn
    monkeypatch.setenv("TERM", "dumb")
    dumb = _Terminal(columns)
    bar = Progress("version A", 100, stream=dumb)
    for done in range(1, 101):
        bar.update(done)
    assert "\r" not in dumb.text and dumb.text.count("\n") == 11, dumb.text   # the first, then each 10 %
    for fd in (terminal.master, terminal.slave, dumb.master, dumb.slave):
        os.close(fd)


def test_a_run_without_seed_draws_and_records_one_that_repeats_it(tmp_path):
    rc, out, err = call(["run", "--n", 16, "--steps", 3, "--json"])
    first = json.loads(out)
    assert rc == 0 and isinstance(first["seed"], int) and first["seed_chosen"] is True
    rc, out, _ = call(["run", "--n", 16, "--steps", 3, "--json", "--seed", first["seed"]])
    again = json.loads(out)
    assert again["seed_chosen"] is False
    assert (again["internal_energy_error"] == first["internal_energy_error"]
            and again["energy_error"] == first["energy_error"])
    rc, out, _ = call(["run", "--n", 16, "--steps", 0])
    assert "drawn at random; --seed" in out


def test_a_folder_with_another_runs_snapshots_is_refused_and_left_alone(tmp_path):
    folder = tmp_path / "snaps"
    rc, _, err = call(["run", "--n", 8, "--steps", 2, "--seed", 1, "--snapshots", folder])
    assert rc == 0, err
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    rc, out, err = call(["run", "--n", 8, "--steps", 4, "--seed", 1, "--snapshots", folder])
    assert rc == 2 and "already holds snapshots of another run" in err and out == ""
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


@pytest.mark.parametrize("seed", [[], ["--seed", 1]], ids=["drawn seed", "seed given"])
def test_a_killed_run_without_a_checkpoint_is_started_again_only_where_the_same_command_remakes_it(tmp_path, seed):
    """A hunt: a run of a drawn seed and no --checkpoint, killed, then given again, had its
    snapshots removed without a word: they can never be made again (the seed was not printed).
    Refused and kept; with its seed given, the same command writes the same snapshots again."""
    folder = tmp_path / "snaps"
    argv = ["run", "--n", 8, "--steps", 2, *seed, "--snapshots", folder]
    rc, _, err = call(argv)
    record = json.loads((folder / "nbsymple-run.json").read_text())
    (folder / "nbsymple-run.json").write_text(json.dumps({**record, "finished": False}))     # as a kill left it
    before, bodies = {p.name: p.read_bytes() for p in folder.iterdir()}, _snapshot_bodies(folder)
    rc, out, err = call(argv)
    if seed:
        assert rc == 0 and json.loads((folder / "nbsymple-run.json").read_text())["finished"] is True, err
        assert _snapshot_bodies(folder) == bodies
    else:
        assert rc == 2 and "already holds snapshots of another run" in err and out == ""
        assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_a_killed_run_is_started_again_only_by_its_own_command(tmp_path, monkeypatch):
    """A hunt: a killed run (no checkpoint) was started again, its snapshots removed, by a command
    with an `--ics` file of the same name and other bodies: they were another run's. Refused and
    kept now; the run's own command (its --steps aside) still starts it again."""
    from nbsymple_versions.runs.authors_format import format_lines
    monkeypatch.chdir(tmp_path)
    Path("ics.txt").write_text(format_lines(make_cluster(16, seed=1)))
    argv = ["run", "--ics", "ics.txt", "--ics-mass", "15360", "--steps", 4, "--snapshots", "s", "--every", 1]

    def killed():
        record = json.loads(Path("s/nbsymple-run.json").read_text())
        Path("s/nbsymple-run.json").write_text(json.dumps({**record, "finished": False}))
        return {p.name: p.read_bytes() for p in Path("s").iterdir()}
    assert call(argv)[0] == 0
    before = killed()
    Path("ics.txt").write_text(format_lines(make_cluster(16, seed=2)))      # the same name, other bodies
    rc, out, err = call(argv)
    assert rc == 2 and "already holds snapshots of another run" in err, (rc, err)
    assert {p.name: p.read_bytes() for p in Path("s").iterdir()} == before
    Path("ics.txt").write_text(format_lines(make_cluster(16, seed=1)))
    rc, out, err = call(argv)
    assert rc == 0 and json.loads(Path("s/nbsymple-run.json").read_text())["finished"] is True, err
    record = json.loads(Path("s/nbsymple-run.json").read_text())
    assert record["command"]["seed_chosen"] is False and record["command"]["seed"] is None   # no seed drew them
    Path("copy.txt").write_bytes(Path("ics.txt").read_bytes())
    for name in (tmp_path / "ics.txt", "copy.txt"):      # a hunt: the same bodies named another way were refused
        killed()
        rc, out, err = call([*argv[:2], name, *argv[3:]])
        assert rc == 0 and json.loads(Path("s/nbsymple-run.json").read_text())["finished"] is True, (name, err)


@pytest.mark.parametrize("record", [b"", b'{"run_id": "a', b"[1, 2]", b"\xff\xfe{\x00}\x00", "another run's"])
def test_a_resume_writes_its_snapshot_folders_run_record_anew_where_it_is_not_its_own(tmp_path, monkeypatch, record):
    """A hunt: a resume read the snapshot folder's `nbsymple-run.json` once its steps were done; one
    empty, cut short, not JSON or not an object ended the run in a traceback (status 1, no report),
    and one of another run (its snapshots removed) was kept, naming that run's id and seed beside
    this run's snapshots. Written anew now, the run's own."""
    monkeypatch.chdir(tmp_path)
    run = ["run", "--n", 16, "--steps", 2, "--snapshots", "s", "--every", 1]
    assert call([*run, "--seed", 3, "--checkpoint", "c.ck"])[0] == 0
    own = json.loads(Path("s/nbsymple-run.json").read_text())
    if record == "another run's":
        assert call([*run, "--seed", 5, "--snapshots", "other"])[0] == 0
        for snap in Path("other").glob("snap_*"):
            snap.unlink()
        record = Path("other/nbsymple-run.json").read_bytes()
        assert json.loads(record)["run_id"] != own["run_id"]
    Path("s/nbsymple-run.json").write_bytes(record)
    rc, out, err = call(["run", "--resume", "c.ck", "--steps", 4])
    assert rc == 0 and "energy error" in out and err == "", err
    written = json.loads(Path("s/nbsymple-run.json").read_text())
    assert (written["run_id"], written["seed"], written["finished"]) == (own["run_id"], 3, True)


@pytest.mark.parametrize("locked", [False, True])
@pytest.mark.parametrize("which", ["snapshot folder", "checkpoint's folder"])
def test_a_run_whose_folder_is_renamed_under_it_stops_and_writes_nothing_in_its_place(tmp_path, monkeypatch, which,
                                                                                       locked):
    """A hunt: a run holds the lock of the folder it started with, but wrote by name: its folder
    renamed (archived) mid-run, it went on writing into the folder that took the name, another
    run's locked one included (snapshots mixed, the other's checkpoint replaced, its record
    marked finished). Status 4 now, nothing written there, whether the folder in its place holds
    no lock file or one of its own (`locked`: another lock, not none, is a moved one too)."""
    monkeypatch.chdir(tmp_path)
    Path("ck").mkdir()
    name, writer = ("s", "write_snapshot") if which == "snapshot folder" else ("ck", "save")
    original = getattr(driver, writer)
    lock = Path(name) / (".lock" if name == "s" else ".c.ck.lock")

    def renaming(*args, **kwargs):
        written = original(*args, **kwargs)
        if not Path(f"{name}_old").exists():          # after the first write: archived, another in its place
            Path(name).rename(f"{name}_old")
            Path(name).mkdir()
            if locked:
                lock.write_text("1\n")
        return written
    monkeypatch.setattr(driver, writer, renaming)
    rc, _, err = call(["run", "--n", 16, "--seed", 1, "--steps", 4, "--every", 1, "--snapshots", "s",
                       "--checkpoint", "ck/c.ck", "--checkpoint-every", 1])
    assert rc == 4 and f"{tmp_path / name}, was renamed or replaced while the run held it" in err, err
    kept = ("with the folder (its checkpoint too: where the folder was renamed, resume the checkpoint there)"
            if name == "ck" else     # and where to resume from
            "what the run wrote there went with the folder; no checkpoint was written yet (ck/c.ck does not exist)")
    assert kept in err and len(err.strip().splitlines()) == 1, err
    assert list(Path(name).iterdir()) == ([lock] if locked else []) and list(Path(f"{name}_old").iterdir())


@pytest.mark.parametrize("case", ["the checkpoint's folder, before its first checkpoint", "the snapshot folder's lock",
                                  "a resume's new checkpoint folder"])
def test_what_a_folder_moved_under_a_run_leaves_to_resume_is_said_as_it_is(tmp_path, monkeypatch, case):
    """A review: a checkpoint's folder renamed before the run's first checkpoint was said to hold
    the checkpoint ("resume the checkpoint there": it held the lock file alone), a resume into a
    new file sent the user to it rather than to the checkpoint resumed (unchanged), and a lock
    file removed from a folder still in place was said to be the folder renamed. Each is said as
    it is, status 4."""
    monkeypatch.chdir(tmp_path)
    Path("ck").mkdir()
    argv = ["run", "--n", 16, "--seed", 1, "--steps", 6, "--every", 1, "--snapshots", "s", "--checkpoint", "ck/c.ck",
            "--checkpoint-every", 2]
    if case == "a resume's new checkpoint folder":
        assert call(["run", "--n", 16, "--seed", 1, "--steps", 2, "--checkpoint", "a.ck"])[0] == 0
        argv = ["run", "--resume", "a.ck", "--steps", 6, "--every", 1, "--snapshots", "s", "--checkpoint", "ck/b.ck"]
    original, done = driver.write_snapshot, []

    def moving(*args, **kwargs):
        written = original(*args, **kwargs)
        if not done:                                  # after the first snapshot, before any checkpoint here
            os.remove("s/.lock") if case == "the snapshot folder's lock" else Path("ck").rename("ck_old")
            done.append(True)
        return written
    monkeypatch.setattr(driver, "write_snapshot", moving)
    rc, _, err = call(argv)
    assert rc == 4 and len(err.strip().splitlines()) == 1 and "resume the checkpoint there" not in err, err
    said = {"the checkpoint's folder, before its first checkpoint":
            f"the folder of the checkpoint, {tmp_path / 'ck'}, was renamed or removed while the run held it, so "
            "nothing more is written under that name; what the run wrote there went with the folder; no checkpoint "
            "was written yet (ck/c.ck does not exist)",
            "the snapshot folder's lock":
            f"the snapshot folder, {tmp_path / 's'}, lost its lock file (removed or replaced by another process) "
            "while the run held it, so nothing more is written there (another run could take it now); no checkpoint "
            "was written yet (ck/c.ck does not exist)",
            "a resume's new checkpoint folder": "went with the folder; a.ck is unchanged; continue with: nbsymple run "
                                                "--resume a.ck"}[case]
    assert said in err, err


def test_a_resume_rewrites_its_record_and_snapshots_as_a_new_run_of_its_steps(tmp_path, monkeypatch):
    """Hunts: a resume with another --checkpoint, --every or --checkpoint-every left the run's
    record naming the first ones (a refusal then offered to resume the old checkpoint); a run
    without --every resumed to more steps kept its first --steps as its cadence (a snapshot at
    every step of a run of 1 step resumed to 10**6)."""
    monkeypatch.chdir(tmp_path)
    assert call(["run", "--n", 16, "--seed", 1, "--steps", 2, "--snapshots", "s", "--checkpoint", "a.ck"])[0] == 0
    rc, _, err = call(["run", "--resume", "a.ck", "--steps", 10, "--checkpoint", "b.ck", "--checkpoint-every", 3])
    assert rc == 0, err
    command = json.loads(Path("s/nbsymple-run.json").read_text())["command"]
    assert command["checkpoint"] == str(tmp_path / "b.ck") and command["checkpoint_every"] == 3, command
    assert [read_snapshot(p)[1] for p in list_snapshots("s")] == [0, 2, 10]      # as a run of 10 steps would
    rc, _, err = call(["run", "--n", 16, "--seed", 9, "--steps", 2, "--snapshots", "s"])
    assert rc == 2 and "b.ck" in err and "a.ck" not in err, err


def test_an_option_without_what_it_acts_on_is_refused_and_every_option_is_reported(tmp_path, monkeypatch):
    """Hunts: `--snapshot-format` without --snapshots (or a --checkpoint) did nothing, exit 0; the
    report named no option of the version (two runs of other --tile printed the same report), nor
    --mass-classes; a sidecar naming no constants was said to state the exact ones."""
    monkeypatch.chdir(tmp_path)
    rc, _, err = call(["run", "--n", 16, "--steps", 1, "--seed", 1, "--snapshot-format", "nbsymple"])
    assert rc == 2 and "--snapshot-format needs --snapshots DIR" in err, err
    rc, out, err = call(["run", "--version", "B", "--n", 16, "--steps", 1, "--seed", 1, "--json"])
    assert rc == 0 and json.loads(out)["options"] == {}, out          # B has none
    rc, out, err = call(["run", "--version", "F", "--n", 16, "--steps", 1, "--seed", 1, "--json"])
    assert rc == 0 and json.loads(out)["options"]["node_version"] in "BDE", out
    rc, out, err = call(["run", "--version", "F", "--n", 16, "--steps", 1, "--seed", 1, "--mass-classes", 3])
    assert rc == 0 and "options: " in out and "--node-version " in out and ", 3 mass classes" in out, out
    assert ("--tile" in out) == ("--node-version B" not in out), out    # B's CPU kernels use no GPU option
    from nbsymple_versions.runs.authors_format import format_lines
    Path("au").mkdir()
    Path("au/sixth0.txt").write_text(format_lines(make_cluster(16, seed=1)))
    Path("au/snapshots.json").write_text('{"r_cl_pc": 10, "mass_msun": 480}')
    rc, _, err = call(["run", "--ics", "au/sixth0.txt", "--constants", "authors", "--steps", 1])
    assert rc == 2 and "names no constants" in err and "as the snapshots.json beside it states" not in err, err


def test_snapshots_without_their_sidecar_and_a_finished_run_resumed_further(tmp_path):
    """Hunts: ASCII snapshots whose snapshots.json was removed made a resume refuse the folder as
    "another run's" and offer the very resume refused; a run resumed to fewer steps than its
    first total, then on to more and killed, kept "finished": true; the sidecar's and the run
    record's temporaries of a killed writer stayed for good."""
    folder, ck = tmp_path / "s", tmp_path / "k.ck"
    rc, _, err = call(["run", "--n", 16, "--seed", 1, "--steps", 4, "--snapshots", folder, "--every", 2,
                       "--snapshot-format", "nbsymple", "--checkpoint", ck])
    assert rc == 0 and json.loads((folder / "nbsymple-run.json").read_text())["finished"] is True, err
    (folder / ".snapshots.4242.x1.json.tmp").write_text("{")
    (folder / ".nbsymple-run.json.4242.x2.tmp").write_text("{")
    (folder / ".snap_00000006.txt.tmp").write_text("1 2")            # a snapshot cut short (a mutation hunt)
    (tmp_path / "kept.json").write_bytes((folder / "snapshots.json").read_bytes())
    (folder / "snapshots.json").unlink()
    rc, _, err = call(["run", "--resume", ck, "--steps", 6])
    assert rc == 2 and "without their snapshots.json, which keeps their times and scale" in err, err
    assert "--resume" not in err and len(err.strip().splitlines()) == 1, err
    (folder / "snapshots.json").write_bytes((tmp_path / "kept.json").read_bytes())
    original = driver.step_run

    def killed_after_the_claim(*a, **k):
        assert json.loads((folder / "nbsymple-run.json").read_text())["finished"] is False     # claimed: not yet
        return original(*a, **k)
    driver.step_run = killed_after_the_claim
    try:
        rc, _, err = call(["run", "--resume", ck, "--steps", 6])
    finally:
        driver.step_run = original
    assert rc == 0 and json.loads((folder / "nbsymple-run.json").read_text())["finished"] is True, err
    assert not list(folder.glob(".*.tmp")), list(folder.glob(".*"))


def _snapshot_bodies(folder) -> list:
    return [(read_snapshot(p)[1], read_snapshot(p)[0].x.tobytes()) for p in list_snapshots(folder)]


def test_a_resume_into_a_new_snapshot_folder_records_the_run_it_continues(tmp_path):
    """A hunt: the record of a resume into another --snapshots folder named the defaults (A,
    leapfrog, 5e-4), not the checkpoint's run; and a run of --steps 0 resumed to 300 wrote a
    snapshot at every step (its cadence frozen at 1), where a new run of 300 writes two."""
    ck = tmp_path / "c.ck"
    rc, _, err = call(["run", "--version", "B", "--scheme", "si6a", "--dt", "1e-3", "--n", 16, "--seed", 2,
                       "--steps", 4, "--checkpoint", ck, "--snapshots", tmp_path / "s1"])
    rc, _, err = call(["run", "--resume", ck, "--steps", 8, "--snapshots", tmp_path / "s2"])
    assert rc == 0, err
    command = json.loads((tmp_path / "s2" / "nbsymple-run.json").read_text())["command"]
    assert (command["version"], command["scheme"], command["dt"]) == ("B", "si6a", 1e-3), command
    rc, _, err = call(["run", "--n", 16, "--seed", 1, "--steps", 0, "--snapshots", tmp_path / "s3", "--checkpoint",
                       tmp_path / "z.ck"])
    rc, _, err = call(["run", "--resume", tmp_path / "z.ck", "--steps", 300])
    assert rc == 0 and [read_snapshot(p)[1] for p in list_snapshots(tmp_path / "s3")] == [0, 300], err


def test_the_same_run_resumed_cleans_stale_temporaries(tmp_path):
    folder, ck = tmp_path / "snaps", tmp_path / "run.ck"
    rc, _, err = call(["run", "--n", 8, "--steps", 2, "--seed", 1, "--snapshots", folder, "--checkpoint", ck])
    assert rc == 0, err
    (folder / ".snap_killed.npz.tmp").write_bytes(b"half a snapshot")
    (tmp_path / ".run.ck.99999.killed.tmp").write_bytes(b"half a checkpoint")
    (tmp_path / ".run.ck.v2.99999.other.tmp").write_bytes(b"another run's, in flight")
    rc, _, err = call(["run", "--resume", ck, "--steps", 4])
    assert rc == 0, err
    assert sorted(p.name for p in folder.glob("snap_*")) == [f"snap_{k:08d}.npz" for k in (0, 2, 4)]
    assert [p.name for p in tmp_path.glob(".*.tmp")] == [".run.ck.v2.99999.other.tmp"]     # not this run's


@pytest.mark.parametrize("data", [b"junk\n", b"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00K\x01.", b"{}"])
def test_a_snapshot_that_is_no_zip_archive_is_named_so_with_no_advice_to_unpickle_it(tmp_path, data):
    """numpy takes a file that is neither a zip archive nor a .npy for a pickle: a snapshot of text was "truncated
    or corrupted (ValueError: This file contains pickled (object) data. If you trust the file you can load it
    unsafely using the `allow_pickle=` keyword argument or `pickle.load()`.)", advice never to follow here."""
    bad = tmp_path / "snap_00000001.npz"
    bad.write_bytes(data)
    with pytest.raises(SnapshotError) as refusal:
        read_snapshot(bad)
    assert "not a zip archive" in str(refusal.value) and "pickle" not in str(refusal.value), refusal.value


def _repacked(tmp_path, name: str, **changes) -> Path:
    """A snapshot of ours written again by np.savez_compressed, its members replaced by `changes`."""
    with np.load(write_snapshot(tmp_path, make_cluster(64, seed=1), 0, "run")) as d:
        members = {key: d[key] for key in d.files}
    np.savez_compressed(tmp_path / name, **{**members, **changes})
    return tmp_path / name


def test_a_snapshot_that_unpacks_far_beyond_its_size_is_refused_before_it_is_unpacked(tmp_path):
    """A zip bomb: 50 kB whose members declare 50 MB (here zeros; any size up to the 16 GiB a snapshot
    may hold) were unpacked whole; an archive packed as bodies pack (np.savez_compressed) is read as before."""
    state, step = read_snapshot(_repacked(tmp_path, "repacked.npz"))
    assert state.n == 64 and step == 0
    bomb = _repacked(tmp_path, "snap_00000002.npz", positions=np.zeros((1 << 21, 3)))
    with pytest.raises(SnapshotError, match=r"unpacks to \d+ bytes from \d+, more than 100 times its size"):
        read_snapshot(bomb)
    spread = np.zeros((1 << 20, 3))           # about 190 times its packed size: UNPACK_RATIO, not zeros' 1000
    spread.flat[::300] = np.random.default_rng(0).random(spread.size // 300 + 1)
    with pytest.raises(SnapshotError, match=r"unpacks to \d+ bytes from \d+, more than 100 times its size"):
        read_snapshot(_repacked(tmp_path, "snap_00000003.npz", positions=spread))


def test_a_snapshot_whose_positions_are_one_number_names_its_shape(tmp_path):
    """0-d `positions` (one number) was said to have shape (1,) (np.ascontiguousarray made it 1-d; a
    hunt's leftover): its shape is () as it holds it, here and for any array `finite_array` checks."""
    bad = _repacked(tmp_path, "snap_00000000.npz", positions=np.array(1.0))
    with pytest.raises(SnapshotError, match=r"positions must have shape \(64, 3\), got \(\)$"):
        read_snapshot(bad)


def test_a_snapshot_holding_python_objects_is_named_so(tmp_path):
    """An object array (a pickle inside the archive) was "truncated or corrupted (ValueError: Object
    arrays cannot be loaded when allow_pickle=False)": the file is whole, and no snapshot holds one."""
    bad = _repacked(tmp_path, "snap_00000001.npz", masses=np.array([1.0, "x"], dtype=object))
    with pytest.raises(SnapshotError, match="holds Python objects .an object array., which are never unpickled"):
        read_snapshot(bad)


def test_a_truncated_snapshot_is_named_in_one_sentence(tmp_path):
    good = write_snapshot(tmp_path, make_cluster(8, seed=1), 0, "run")
    for cut in (0, 30, len(good.read_bytes()) // 2):
        bad = tmp_path / f"snap_{cut + 1:08d}.npz"
        bad.write_bytes(good.read_bytes()[:cut])
        with pytest.raises(SnapshotError, match=f"snapshot {bad} is truncated or corrupted"):
            read_snapshot(bad)
    folder = tmp_path / "other"
    folder.mkdir()
    (folder / "snap_00000005.npz").write_bytes(good.read_bytes()[:100])
    rc, _, err = call(["run", "--n", 8, "--steps", 1, "--snapshots", folder])
    assert rc == 2 and "snap_00000005.npz is truncated or corrupted" in err and len(err.splitlines()) == 1


def test_gpu_report_without_a_gpu_is_a_usage_error(monkeypatch):
    from nbsymple_versions.gpu_pairwise import backends
    monkeypatch.setattr(backends, "availability", lambda *args, **kwargs: (False, "no GPU here"))
    rc, out, err = call(["check", "--gpu-report"])
    assert rc == 2 and out == "" and "--gpu-report needs the GPU versions" in err and "no GPU here" in err


def test_gpu_report_takes_checks_n_and_seed_and_refuses_json(monkeypatch):
    """`check --gpu-report` ran its own validation size and a fresh cluster whatever `--n` and
    `--seed` said, and printed its report under `--json` (found by a search): `--n` and `--seed`
    are its validation runs', and `--json` is refused."""
    from nbsymple_versions.gpu_pairwise import backends
    from nbsymple_versions.instruments import gpu_report
    monkeypatch.setattr(backends, "availability", lambda *args, **kwargs: (True, ""))
    given = []
    monkeypatch.setattr(gpu_report, "main", lambda argv, **options: given.append(argv) or 0)
    assert call(["check", "--gpu-report", "--n", "64", "--seed", "7"])[0] == 0
    assert call(["check", "--gpu-report"])[0] == 0
    assert given == [["--validate-n", "64", "--seed", "7"], []]
    rc, out, err = call(["check", "--gpu-report", "--json"])
    assert rc == 2 and out == "" and "--json does not apply to --gpu-report" in err, err
    assert len(given) == 2


@pytest.mark.parametrize("simulator, sizes", [(True, [256]), (False, [2**14, 2**16, 2**17])])
def test_gpu_report_times_small_sizes_in_the_simulator(monkeypatch, simulator, sizes):
    """Under the CUDA simulator (~1e5 interactions per second) the report's default sizes were a
    GPU's, N = 2^14 to 2^17: days of work (found by a search). Its default sizes are now the
    simulator's; given sizes are kept."""
    from nbsymple_versions.gpu_pairwise import backends
    from nbsymple_versions.instruments import gpu_report
    asked = []
    monkeypatch.setattr(gpu_report, "cuda_simulator", lambda: simulator)
    monkeypatch.setattr(gpu_report, "memory_problem", lambda n, option: asked.append((option, n)))
    monkeypatch.setattr(backends, "availability", lambda *args, **kwargs: (False, "stopped here"))
    assert gpu_report.main([]) == 2
    assert [n for option, n in asked if option == "--sizes"] == sizes
    asked.clear()
    assert gpu_report.main(["--sizes", "512"]) == 2
    assert [n for option, n in asked if option == "--sizes"] == [512]


def test_gpu_report_steps_are_the_median_of_the_steps():
    """The report's step column is the median of --steps steps (the Simulation ran every kernel
    once when it was made), so that one stalled step moves nothing; it was their mean."""
    from types import SimpleNamespace
    from nbsymple_versions.instruments.gpu_report import step_seconds

    class Fake:
        def __init__(self, costs):
            self.costs, self.clock = iter(costs), SimpleNamespace(total=0.0)

        def step(self, n):
            for _ in range(n):
                self.clock.total += next(self.costs)

    assert step_seconds(Fake([1.0, 9.0, 2.0]), 3) == 2.0          # the mean would be 4
    assert step_seconds(Fake([1.5]), 1) == 1.5


# ------------------------------------------------------------------ found by a hunt for hostile inputs

def test_a_seed_is_below_2_to_the_128_and_a_longer_number_is_named_not_echoed():
    """A seed of 1e309 was taken, and the checkpoint that recorded it could not be resumed (JSON
    reads an integer beyond float64 as infinity); 5000 digits were echoed whole."""
    rc, out, err = call(["run", "--n", 8, "--steps", 1, "--seed", 10**309])
    assert rc == 2 and "argument --seed: must be below 2**128" in err and len(err) < 200, err
    rc, out, err = call(["run", "--n", 8, "--steps", 1, "--seed", "9" * 5000])
    assert rc == 2 and "a whole number of 5000 digits is more than it takes" in err and len(err) < 200, err
    rc, out, err = call(["run", "--n", 8, "--steps", 1, "--seed", 2**128 - 1])
    assert rc == 0 and f"seed {2**128 - 1}" in out, err
    with pytest.raises(ValueError, match=r"seed must be a whole number below 2\*\*128"):
        make_cluster(8, seed=2**128)
    from nbsymple_versions.runs.errors import RunStop
    from nbsymple_versions.runs.spec import RunSpec
    with pytest.raises(RunStop, match=r"--seed must be a whole number below 2\*\*128"):
        RunSpec(n=8, steps=1, seed=10**400)
    with pytest.raises(TypeError, match="options must be a dict of the version's options, got NoneType"):
        RunSpec(n=8, steps=1, options=None)


@pytest.mark.parametrize("argv, option", [(["run", "--dt", "-1e-3"], "--dt"), (["run", "--dt", "-1.5E-3"], "--dt"),
                                          (["run", "--dt", "-inf"], "--dt"), (["run", "--seed", "-1e3"], "--seed"),
                                          (["run", "--ics-mass", "-1e3"], "--ics-mass"),
                                          (["paper", "--tidal-dt", "-1e-3"], "--tidal-dt")])
def test_a_negative_number_in_any_form_is_refused_by_its_option(argv, option):
    """argparse reads '-1e-3' as an option ('expected one argument'), '-.001' as a value: every
    form is now the option's value, refused by its type."""
    rc, out, err = call(argv)
    assert rc == 2 and f"argument {option}: " in err and "expected one argument" not in err, err


def test_a_resume_whose_snapshot_folder_is_gone_is_refused_not_split(tmp_path, monkeypatch):
    """A run folder moved (or its snapshot folder removed) and resumed: the old path was made
    again and the run's snapshots split between two folders, in silence."""
    (tmp_path / "one").mkdir()
    monkeypatch.chdir(tmp_path / "one")
    assert call(["run", "--n", 8, "--steps", 4, "--checkpoint", "c.ck", "--snapshots", "S", "--every", 2])[0] == 0
    (tmp_path / "one").rename(tmp_path / "two")
    monkeypatch.chdir(tmp_path / "two")
    rc, out, err = call(["run", "--resume", "c.ck", "--steps", 8])
    assert rc == 2 and f"{tmp_path / 'one' / 'S'}, is gone (moved or removed)" in err and "--snapshots" in err, err
    assert not (tmp_path / "one").exists()
    rc, out, err = call(["run", "--resume", "c.ck", "--steps", 8, "--snapshots", "S"])
    assert rc == 0 and sorted(p.name for p in (tmp_path / "two" / "S").glob("snap_*")) == [
        f"snap_{k:08d}.npz" for k in (0, 2, 4, 6, 8)], err


@pytest.mark.parametrize("kind, said", [("a file", "is a file, not a folder"),
                                         ("a FIFO", "is a FIFO (named pipe), not a folder")])
def test_a_resume_whose_snapshot_folder_became_a_file_names_what_stands_there(tmp_path, monkeypatch, kind, said):
    """A file (or a FIFO) made where the run's snapshot folder was: the resume said the folder "is gone (moved or
    removed)"."""
    monkeypatch.chdir(tmp_path)
    assert call(["run", "--n", 8, "--steps", 2, "--checkpoint", "c.ck", "--snapshots", "S", "--every", 1])[0] == 0
    shutil.rmtree("S")
    Path("S").write_text("x\n") if kind == "a file" else os.mkfifo("S")
    rc, out, err = call(["run", "--resume", "c.ck", "--steps", 4])
    assert rc == 2 and f"{tmp_path / 'S'}, {said}; give --snapshots DIR" in err and "gone" not in err, err


def test_a_folder_of_another_run_offers_its_resume_only_where_it_left_a_checkpoint(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert call(["run", "--n", 8, "--steps", 2, "--snapshots", "K"])[0] == 0
    rc, out, err = call(["run", "--n", 8, "--steps", 2, "--snapshots", "K"])
    assert rc == 2 and err.rstrip().endswith("choose an empty folder"), err
    assert call(["run", "--n", 8, "--steps", 2, "--snapshots", "L", "--checkpoint", "l.ck"])[0] == 0
    rc, out, err = call(["run", "--n", 8, "--steps", 2, "--snapshots", "L"])
    assert rc == 2 and f"or resume that run: nbsymple run --resume {tmp_path / 'l.ck'}" in err, err


@pytest.mark.parametrize("kind", ["a FIFO", "a folder", "a file of another kind"])
def test_a_snapshot_it_cannot_read_in_its_own_folder_names_the_remedy_not_its_own_resume(tmp_path, monkeypatch,
                                                                                          kind):
    """A snapshot the run cannot read in the folder of the run it resumes: "... is a FIFO (named pipe), not a file,
    or resume that run: nbsymple run --resume c.ck", the command just given (and a sentence with no first choice)."""
    monkeypatch.chdir(tmp_path)
    assert call(["run", "--n", 8, "--steps", 2, "--snapshots", "S", "--every", 1, "--checkpoint", "c.ck"])[0] == 0
    bad = tmp_path / "S" / "snap_00000003.npz"
    os.mkfifo(bad) if kind == "a FIFO" else bad.mkdir() if kind == "a folder" else bad.write_text("junk\n")
    rc, out, err = call(["run", "--resume", "c.ck", "--steps", 4])
    assert rc == 2 and len(err.strip().splitlines()) == 1, err
    assert "resume that run" not in err and f"move it out of {tmp_path / 'S'}, or choose another folder" in err, err


@pytest.mark.parametrize("run_id", [None, "another run's"])
def test_a_snapshot_of_another_run_in_the_folder_of_the_run_resumed_names_no_resume_of_itself(tmp_path, monkeypatch,
                                                                                             run_id):
    """A hunt: a snapshot of another run (or of an older nbsymple, with no run id) in the folder of the run
    resumed was refused "..., or resume that run: nbsymple run --resume c.ck", the command just given."""
    monkeypatch.chdir(tmp_path)
    assert call(["run", "--n", 8, "--steps", 2, "--snapshots", "S", "--every", 1, "--checkpoint", "c.ck"])[0] == 0
    with np.load("S/snap_00000001.npz") as d:
        arrays = {k: d[k] for k in d.files if k != "run_id"}
    np.savez("S/snap_00000003.npz", **arrays, **({} if run_id is None else {"run_id": run_id}))
    rc, out, err = call(["run", "--resume", "c.ck", "--steps", 4])
    assert rc == 2 and err.strip().endswith("already holds snapshots of another run (snap_00000003.npz); "
                                            "choose an empty folder"), err


def test_a_time_below_ten_seconds_keeps_two_digits():
    from nbsymple_versions.core.work import duration
    assert [duration(s) for s in (0.0864, 0.864, 9.5, 42.0)] == ["0.086 s", "0.86 s", "9.5 s", "42 s"]


@pytest.mark.parametrize("machine", ["../results/m", "m/", "./m", ".."])
def test_paper_takes_a_machine_folder_by_its_name_alone(machine):
    """`paper --machine ../res/NAME` read a folder outside --results and printed the path as the
    machine's name in REPORT.md."""
    rc, out, err = call(["paper", "--no-science", "--machine", machine])
    assert rc == 2 and "argument --machine: " in err and "is a path" in err and out == "", err


def test_profile_refuses_an_option_no_version_takes_and_times_an_n_once():
    """`profile --versions A --gpu-kernel plain` ran A and ignored the option (run refuses it);
    `--n 64 64` printed two rows of one N."""
    rc, out, err = call(["profile", "--versions", "A", "--gpu-kernel", "plain", "--n", 64, "--steps", 2])
    assert rc == 2 and "--gpu-kernel: no version of --versions A takes it" in err and out == "", err
    rc, out, err = call(["profile", "--versions", "AA", "--n", 64, 64, "--steps", 2])
    assert rc == 0 and len(out.strip().splitlines()) == 3, out          # the scheme, the header, one row


def test_a_run_from_an_ics_file_names_no_seed(tmp_path, monkeypatch):
    """`run --ics F --json` reported a drawn seed with seed_chosen true, though no seed drew the
    bodies (found by a hunt)."""
    monkeypatch.chdir(tmp_path)
    assert call(["run", "--n", 8, "--steps", 2, "--snapshots", "T", "--snapshot-format", "nbsymple"])[0] == 0
    rc, out, err = call(["run", "--ics", "T/snap_00000002.txt", "--steps", 1, "--json"])
    assert rc == 0 and json.loads(out)["seed"] is None and json.loads(out)["seed_chosen"] is False, err


@pytest.mark.parametrize("option", ["--checkpoint-every", "--every", "--mass-classes"])
def test_a_count_a_checkpoint_keeps_is_below_2_to_the_63(tmp_path, option):
    """A hunt: `--checkpoint-every 2**63` (meant: only at the end) wrote a checkpoint that its own
    --resume refused ("field run.checkpoint_every ... is not of the expected type"): a count the
    checkpoint keeps is refused at 2**63, and 2**63 - 1 is taken and resumed."""
    snapshots = [] if option != "--every" else ["--snapshots", tmp_path / "s"]
    rc, _, err = call(["run", "--n", 8, "--steps", 1, "--checkpoint", tmp_path / "c.ck", *snapshots, option, 2**63])
    assert rc == 2 and f"argument {option}: must be below 2**63, got 9223372036854775808" in err, err
    if option == "--mass-classes":                 # K classes of 8 bodies: K = 2**63 - 1 is another refusal
        return
    rc, _, err = call(["run", "--n", 8, "--steps", 1, "--seed", 1, "--checkpoint", tmp_path / "c.ck", *snapshots,
                       option, 2**63 - 1])
    assert rc == 0, err
    rc, _, err = call(["run", "--resume", tmp_path / "c.ck", "--steps", 2])
    assert rc == 0, err


@pytest.mark.parametrize("name", [b"\xff.ck", "a\u2028b.ck".encode(), b"it's.ck", b"new\nline.ck", b"back\\slash.ck",
                                  b"-dash.ck", "caf\u00e9.ck".encode()])
def test_a_resume_hint_names_the_checkpoint_as_the_shell_reads_it(name):
    """A hunt: the hint after a stop, `continue with: nbsymple run --resume '\\xff.ck'`, showed the
    escape of a byte that is not UTF-8 inside plain quotes, which names another file (and so for
    U+2028 and a line feed): such a name is written in bash's $'...', read back as its bytes."""
    from nbsymple_versions.entry import printable
    from nbsymple_versions.runs.driver import resume_command
    hint = printable(resume_command(os.fsdecode(name)))
    word = hint.split("--resume ", 1)[1]
    assert hint.isprintable() and word.count(" ") == 0, hint
    said = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, check=True).stdout
    assert said == (b"./" + name if name.startswith(b"-") else name), (hint, said)


def test_a_bound_below_is_exclusive():
    """`--seed 2**128` is refused by the argument parser, as its help says ("below 2**128"); a
    mutation hunt: `>` for `>=` passed, the tests giving 2**128 - 1 and 10**309 but not the bound."""
    import argparse
    from nbsymple_versions.core.options import seed_argument, whole_number_argument
    with pytest.raises(argparse.ArgumentTypeError, match=r"must be below 2\*\*128, got"):
        seed_argument(str(2**128))
    assert seed_argument(str(2**128 - 1)) == 2**128 - 1
    with pytest.raises(argparse.ArgumentTypeError, match="must be below 10, got 10"):
        whole_number_argument(0, 10)("10")
    rc, out, err = call(["run", "--n", 8, "--steps", 1, "--seed", 2**128])
    assert rc == 2 and "argument --seed: must be below 2**128" in err, err


def test_memory_estimate_adds_a_row_per_body_beyond_one_chunk():
    """Above 2**21 bodies a chunk of the O(N^2) sums is one target's row of N (72 bytes a body:
    nine float64): the estimate adds it there and not below (a mutation hunt: dropping it passed,
    the tests comparing 1e9 bodies with 100 GB, which 1000 bytes a body already exceed)."""
    from nbsymple_versions.core.work import BYTES_FIXED, BYTES_PER_BODY
    below, above = 1 << 21, (1 << 21) + 1
    assert memory.memory_needed(below) == BYTES_PER_BODY * below + BYTES_FIXED
    assert memory.memory_needed(above) == (BYTES_PER_BODY + 72) * above + BYTES_FIXED


@pytest.mark.parametrize("option, kind", [("--resume", "checkpoint"), ("--ics", "initial-condition file")])
def test_a_file_named_in_another_unicode_form_is_named_not_opened(tmp_path, option, kind):
    """`--resume café.ck` typed in NFC where the file's name is in NFD (as macOS writes names) said
    only "does not exist" (a hunt's leftover): the file that is there is named, and not opened."""
    import unicodedata
    typed = tmp_path / unicodedata.normalize("NFC", "café")
    there = tmp_path / unicodedata.normalize("NFD", "café")
    there.write_text("x")
    rc, out, err = call(["run", option, str(typed), "--steps", "2"])
    assert rc == 2 and out == "", err
    assert err == (f"nbsymple run: {kind} {typed} does not exist, but {there} does, its name in another Unicode "
                   f"form (as macOS writes names): give its name as written there (Tab completion types it) or "
                   f"rename it\n"), err


def test_a_missing_file_of_one_unicode_form_does_not_list_its_folder(tmp_path, monkeypatch):
    """A review: every file not found (a code cache's miss, a run folder without its record, among
    100000 snapshots) listed its whole folder for a name in another Unicode form; a name that has
    only one form (ASCII) is said not to exist without it."""
    from nbsymple_versions import environment
    from nbsymple_versions.runs.paths import FileRefused, read_bytes
    listed = []
    monkeypatch.setattr(environment.os, "listdir", lambda folder: listed.append(folder) or [])
    with pytest.raises(FileRefused, match="does not exist$"):
        read_bytes(tmp_path / "nbsymple-run.json", "checkpoint")
    assert listed == []
