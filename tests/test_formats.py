"""The authors' ASCII layout (x y z vx vy vz m per line, cluster units): snapshots written in it
read back bit for bit, `nbsymple run --ics FILE` starts from it, and a bad file is one
sentence naming the line, exit status 2."""
import json
from pathlib import Path

import numpy as np
import pytest

from cli_call import call
from test_hostile import hang_guard
from nbsymple_versions import make_cluster
from nbsymple_versions.runs.authors_format import FormatError, format_lines, read_nbsymple, write_nbsymple
from nbsymple_versions.core.units import Units
from nbsymple_versions.runs.snapshots import SnapshotError, prepare_folder, read_snapshot, write_snapshot

# one line as the authors' Particles::print writes it (scientific, showpos, setprecision(8))
AUTHORS_LINE = "+8.50123456e+02 -1.23456789e-01 +4.00000000e-03 +1.00000000e-02 +8.56000000e+01 -3.00000000e-02 " \
               "+2.08333333e-03\n"


def test_a_file_round_trips_bit_for_bit_and_reads_the_authors_lines(tmp_path):
    state = make_cluster(40, seed=3, mass_classes=3)
    path = write_nbsymple(tmp_path / "ExtData.txt", state)
    lines = path.read_text().splitlines()
    assert len(lines) == 40 and all(len(ln.split()) == 7 for ln in lines)
    back = read_nbsymple(path)
    assert np.array_equal(back.x, state.x) and np.array_equal(back.v, state.v) and np.array_equal(back.m, state.m)
    assert back.eps == state.eps                        # the authors' softening, from N
    (tmp_path / "authors.txt").write_text("# a comment\n" + AUTHORS_LINE * 3 + "\n")
    three = read_nbsymple(tmp_path / "authors.txt", units=Units(10.0, 480.0))
    assert three.n == 3 and three.positions[0, 0] == 850.123456 and three.units.mass_msun == 480.0


def test_nbsymple_snapshots_carry_time_and_units_in_their_sidecar(tmp_path):
    state = make_cluster(16, seed=1, units=Units(5.0, 1000.0))
    state.t = 0.375
    path = write_snapshot(tmp_path, state, 12, "run-a", fmt="nbsymple")
    assert path.name == "snap_00000012.txt" and (tmp_path / "snapshots.json").exists()
    back, step = read_snapshot(path)
    assert step == 12 and back.t == 0.375 and back.units == state.units and back.eps == state.eps
    assert np.array_equal(back.x, state.x)
    assert prepare_folder(tmp_path, "run-a") == []
    with pytest.raises(SnapshotError, match="another run"):
        prepare_folder(tmp_path, "run-b")
    with pytest.raises(ValueError, match="unknown snapshot format"):
        write_snapshot(tmp_path, state, 13, fmt="hdf5")


def test_a_run_writes_no_ascii_snapshot_among_another_run_s(tmp_path):
    """`write_snapshot` in the authors' layout into a folder holding another run's: refused, the folder and
    its sidecar as they were (their times and scale are that run's); a sidecar of another run with no
    snapshot left is begun anew (a mutation hunt: the snapshot was added to the other run's sidecar)."""
    state = make_cluster(16, seed=1)
    write_snapshot(tmp_path, state, 0, "run-a", fmt="nbsymple")
    sidecar = (tmp_path / "snapshots.json").read_text()
    with pytest.raises(SnapshotError, match=r"holds snapshots of another run in the authors' layout \(snap_00000000"):
        write_snapshot(tmp_path, state, 1, "run-b", fmt="nbsymple")
    assert (tmp_path / "snapshots.json").read_text() == sidecar and not (tmp_path / "snap_00000001.txt").exists()
    (tmp_path / "snap_00000000.txt").unlink()
    write_snapshot(tmp_path, state, 1, "run-b", fmt="nbsymple")
    side = json.loads((tmp_path / "snapshots.json").read_text())
    assert side["run_id"] == "run-b" and list(side["times"]) == list(side["sha256"]) == ["1"], side


def test_a_snapshot_of_ours_read_by_ics_keeps_its_softening_and_time_and_one_cut_short_is_named(tmp_path):
    """A hunt: `--ics` of a snapshot this suite wrote in the authors' layout took N's default
    softening and t = 0 where read_snapshot took its sidecar's; and one cut short by a line (or
    its last mass cut to fewer digits) was read as fewer bodies (or a mass 100 times larger).
    Its sidecar keeps each snapshot's SHA-256; a file that differs is named."""
    state = make_cluster(16, seed=1, eps=0.05)
    state.t = 0.375
    path = write_snapshot(tmp_path, state, 12, "run-a", fmt="nbsymple")
    from nbsymple_versions.runs.checkpoint import load
    rc, _, err = call(["run", "--ics", path, "--steps", 0, "--checkpoint", tmp_path / "c.ck"])
    assert rc == 0 and (load(tmp_path / "c.ck")[2].eps, load(tmp_path / "c.ck")[2].t) == (0.05, 0.375), err
    for cut in (lambda b: b[: b.rindex(b"\n", 0, -1) + 1], lambda b: b[:-5]):     # a line; a mass's exponent
        path.write_bytes(cut(format_lines(state).encode()))
        with pytest.raises(SnapshotError, match="is not the file that was written .* cut short or changed"):
            read_snapshot(path)
        rc, out, err = call(["run", "--ics", path, "--steps", 1])
        assert rc == 2 and "is not the file that was written" in err and out == "", err


@pytest.mark.parametrize("body, where", [
    ("1 2 3 4 5 6\n", "line 2: expected 7 numbers"),
    ("1 2 3 4 5 6 x7\n", "line 2: 'x7' is not a number"),
    ("1 2 3 4 5 6 1_0\n", "line 2: '1_0' is not a number"),     # Python's float() read 10, the authors' reader 1
    ("1 2 3 4 5 nan 7\n", "line 2: holds a value that is not finite"),
    ("1 2 3 4 5 6 inf\n", "line 2: holds a value that is not finite"),        # the mass too
    ("1 2 3 4 5 6 7 8\n", "line 2: expected 7 numbers .x y z vx vy vz m., found 8"),
    ("1 2 3 4 5 6 -1e-3\n", "line 2: the mass -1e-3 is not positive"),
    ("1 2 3 4 5 6 0\n", "line 2: the mass 0 is not positive"),        # (a mutation hunt: a mass of 0 was taken)
    # a hunt: float() reads these as 0, a mass then "not positive", a position moved to 0 in silence
    ("1 2 3 4 5 6 1e-400\n", "line 2: 1e-400 is too small for a float64, which reads it as 0"),
    ("-2.5E-999 2 3 4 5 6 7\n", "line 2: -2.5E-999 is too small for a float64"),
    ("1 2 3 0.09e-400 5 6 7\n", "line 2: 0.09e-400 is too small for a float64"),     # (a 9 alone is not 0 either)
    ("# a comment only\n", "holds 0 bodies;"),
])
def test_a_bad_file_names_its_line(tmp_path, body, where):
    path = tmp_path / "ExtData.txt"
    path.write_text((AUTHORS_LINE if "comment" not in body else "") + body)
    with pytest.raises(FormatError, match=where):
        read_nbsymple(path)


def test_a_lone_body_written_in_the_authors_layout_is_read_back_and_run_on_its_galactic_orbit(tmp_path):
    """A hunt: a state of one body (a test body in the Galaxy), which `Simulation` steps and
    `write_snapshot` wrote in the authors' layout, was refused by `read_snapshot` and `--ics` ("a
    cluster needs at least 2"). Read back, `nbsymple run --ics` steps it where the API does, bit
    for bit, conserving E = K + m Phi_gal (SI6A: 1e-13 over 200 steps; a lost Galaxy or a wrong
    kick moves E by 1e-4 or more), with the internal error undefined (no K_int0 + W0)."""
    from nbsymple_versions import Simulation, State
    u = Units()
    one = State.from_arrays([[8.0 * u.kpc, 0.5 * u.kpc, 0.2 * u.kpc]], [[10.0, u.from_kms(200), 5.0]], [1.0])
    path = write_snapshot(tmp_path, one, 0, "run-a", fmt="nbsymple")
    back, _ = read_snapshot(path)
    assert back.n == 1 and np.array_equal(back.x, one.x) and np.array_equal(back.v, one.v)
    sim = Simulation(one, "A", "si6a", "dp", 0.05)
    sim.step(200)                                                # 10 T, a sixth of an orbit
    assert np.abs(sim.state.x - back.x).max() > 100              # it moved along its orbit
    assert sim.energy_error() < 1e-13 and sim.internal_energy_error() is None
    rc, out, err = call(["run", "--ics", path, "--scheme", "si6a", "--dt", 0.05, "--steps", 200, "--json",
                         "--snapshots", tmp_path / "b", "--every", 200])
    assert rc == 0, err
    report = json.loads(out)
    assert report["n"] == 1 and report["energy_error"] == sim.energy_error(), report
    assert report["internal_energy_error"] is None
    assert report["undefined"] == {"internal_energy_error": "K_int0 + W0 = 0"}
    end, step = read_snapshot(tmp_path / "b" / "snap_00000200.npz")
    assert step == 200 and np.array_equal(end.x, sim.state.x) and np.array_equal(end.v, sim.state.v)
    rc, out, err = call(["run", "--ics", path, "--steps", 1])
    lines = out.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("internal energy error"))
    assert rc == 0 and lines[i].endswith("undefined (K_int0 + W0 = 0)"), out      # its label below it
    assert lines[i + 1].strip().startswith("|E - E0| / |K_int0 + W0|") and len(lines[i + 1]) <= 120, out


def test_binary_missing_and_folder_are_refused(tmp_path):
    (tmp_path / "bin.txt").write_bytes(AUTHORS_LINE.encode() + b"\x00\xff\xfe")
    with pytest.raises(FormatError, match="line 2: not plain ASCII"):
        read_nbsymple(tmp_path / "bin.txt")
    # lines that end at "\r" are lines, as they are read (a review: the byte was said to be on line 1)
    (tmp_path / "cr.txt").write_bytes(AUTHORS_LINE.replace("\n", "\r").encode() * 2 + b"\xe9")
    with pytest.raises(FormatError, match="line 3: not plain ASCII"):
        read_nbsymple(tmp_path / "cr.txt")
    # and "\r\n" (a Windows editor's) ends one line, not two (a mutation hunt: "line 5" passed)
    (tmp_path / "crlf.txt").write_bytes(AUTHORS_LINE.replace("\n", "\r\n").encode() * 2 + b"\xe9")
    with pytest.raises(FormatError, match="line 3: not plain ASCII"):
        read_nbsymple(tmp_path / "crlf.txt")
    with pytest.raises(FormatError, match="does not exist"):
        read_nbsymple(tmp_path / "none.txt")
    with pytest.raises(FormatError, match="is a folder"):
        read_nbsymple(tmp_path)


def test_run_from_an_ics_file_writes_nbsymple_snapshots(tmp_path):
    state = make_cluster(24, seed=5)
    ics = write_nbsymple(tmp_path / "ExtData.txt", state)
    snaps = tmp_path / "snaps"
    rc, out, err = call(["run", "--ics", ics, "--ics-mass", "15360", "--steps", "4", "--dt", "0.01", "--json",
                         "--snapshots", snaps, "--every", "2", "--snapshot-format", "nbsymple"])
    assert rc == 0, err
    result = json.loads(out)
    assert result["n"] == 24 and result["ics"] == str(ics)
    assert sorted(p.name for p in snaps.glob("snap_*")) == ["snap_00000000.txt", "snap_00000002.txt",
                                                            "snap_00000004.txt"]
    first, _ = read_snapshot(snaps / "snap_00000000.txt")
    assert np.array_equal(first.x, state.x) and np.array_equal(first.m, state.m)
    last, step = read_snapshot(snaps / "snap_00000004.txt")
    assert step == 4 and last.t == pytest.approx(0.04) and not np.array_equal(last.x, state.x)


@pytest.mark.parametrize("extra, says", [(["--n", "30"], "--n cannot be given"),
                                         (["--mass-classes", "3"], "--mass-classes cannot be given"),
                                         (["--version", "F", "--seed", "2"], "--seed cannot be given")])
def test_ics_conflicts_are_one_sentence(tmp_path, extra, says):
    ics = write_nbsymple(tmp_path / "ExtData.txt", make_cluster(8, seed=1))
    rc, out, err = call(["run", "--ics", ics, "--steps", "1", "--json"] + extra)
    assert rc == 2 and out == "" and says in err and len(err.strip().splitlines()) == 1, err


def test_bad_ics_file_is_one_sentence_exit_2_nothing_written(tmp_path):
    path = tmp_path / "ExtData.txt"
    path.write_text(AUTHORS_LINE * 2 + "1 2 3\n")
    snaps = tmp_path / "snaps"
    rc, out, err = call(["run", "--ics", path, "--ics-mass", "480", "--snapshots", snaps, "--checkpoint",
                         tmp_path / "c.nbsc", "--json"])
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert f"{path} line 3: expected 7 numbers" in err
    assert not snaps.exists() and not (tmp_path / "c.nbsc").exists()


# ============================================================================== the authors' scale

AUTHORS = Units(10.0, 480.0)        # their input.txt: "Cluster Radius": 10 (pc), "Total mass of the sys.": 480 (Msun)


def _authors_lines(state) -> str:
    """`state` as the authors' Particles::print writes it (scientific, showpos, setprecision(8))."""
    table = np.column_stack([state.positions, state.velocities, state.m])
    return "".join(" ".join(f"{v:+.8e}" for v in row) + "\n" for row in table)


def _speed_kms(state) -> float:
    """The centre of mass's speed in km/s."""
    return float(np.linalg.norm(state.center_of_mass()[1])) * state.units.velocity_kms


def test_a_file_of_another_kind_is_named_so_before_its_scale_is_asked(tmp_path):
    """An .npz snapshot (or any binary file) given to --ics without --ics-mass: the sentence says
    it is not a file in the authors' layout; it asked for the mass the file is in, and only with
    it said what the file is."""
    (tmp_path / "s").mkdir()
    snap = write_snapshot(tmp_path / "s", make_cluster(8, seed=1), 2)
    for extra in ([], ["--ics-mass", "480"]):
        rc, out, err = call(["run", "--ics", snap, "--steps", "1", *extra])
        assert rc == 2 and out == "" and "is a zip archive (an .npz snapshot" in err, err
        assert "--ics-mass" not in err, err


@pytest.mark.parametrize("data, said", [
    (b"\xef\xbb\xbf" + AUTHORS_LINE.encode() + AUTHORS_LINE.replace("+8.5", "-8.5").encode(), None),
    (AUTHORS_LINE.encode("utf-16"), "is UTF-16 text"),
    (b"\xfe\xff" + AUTHORS_LINE.encode("utf-16-be"), "is UTF-16 text"),         # big-endian, as some editors save it
    (AUTHORS_LINE.encode() + b"\0" * 5000 + b"\n", "line 2: longer than 4096 characters"),
    (b"\0" * 5000 + b"\n" + AUTHORS_LINE.encode(), "line 1: longer than 4096 characters"),
    (AUTHORS_LINE.encode() + AUTHORS_LINE.replace("+8.5", "-8.5").rstrip("\n").ljust(4096).encode() + b"\n", None)])
def test_a_byte_order_mark_utf16_and_a_line_longer_than_any_are_taken_as_what_they_are(tmp_path, data, said):
    """A hunt: a UTF-8 byte-order mark (an editor's) made a file in the authors' layout "not
    plain ASCII"; UTF-16 text was "line 1: not plain ASCII"; a sparse file of NULs was read whole
    (1.9 GB: 6 GB and 42 s) before its line 1 was refused. The mark is passed over, the others
    named at once; a line of 4096 characters, the longest, is read."""
    (tmp_path / "ic.txt").write_bytes(data)
    rc, out, err = call(["run", "--ics", tmp_path / "ic.txt", "--ics-mass", 480, "--steps", 1])
    assert (rc, said is None or said in err) == ((0, True) if said is None else (2, True)), err


def test_lines_just_short_of_the_longest_are_refused_at_once(tmp_path):
    """A hunt: the search for a line longer than 4096 characters was tried at every byte, each try
    scanning to its line's end: a file of 4096-character lines (6 MB) took minutes before its line 1
    was refused; now the search starts at line ends only (the alarm is a hang guard, not a timing)."""
    (tmp_path / "ic.txt").write_bytes((b"1" * 4095 + b"\n") * 1536)
    with hang_guard(60):
        rc, out, err = call(["run", "--ics", tmp_path / "ic.txt", "--ics-mass", 480, "--steps", 1])
    assert rc == 2 and out == "" and "ic.txt line 1: expected 7 numbers (x y z vx vy vz m), found 1" in err, err


@pytest.mark.parametrize("when", ["before the resume", "during the run"])
def test_a_sidecar_of_another_scale_is_refused_before_the_steps_and_named_during_them(tmp_path, monkeypatch, when):
    """A hunt: the snapshots.json of a resumed run's folder stating another scale (constants, softening) let the
    run step to its first snapshot, then end in a ValueError traceback; one changed under a run did too. Now
    refused at the set-up (nothing changed), and during the run one sentence naming the last checkpoint."""
    from nbsymple_versions.runs import driver
    monkeypatch.chdir(tmp_path)
    argv = ["run", "--n", 8, "--seed", 1, "--snapshots", "s", "--every", 2, "--snapshot-format", "nbsymple",
            "--checkpoint", "c.ck", "--checkpoint-every", 2]

    def other_scale():
        side = json.loads(Path("s/snapshots.json").read_text())
        Path("s/snapshots.json").write_text(json.dumps({**side, "constants": "authors"}))
    if when == "before the resume":
        assert call([*argv, "--steps", 2])[0] == 0
        other_scale()
        before = {p.name: p.read_bytes() for p in [*Path("s").iterdir(), Path("c.ck")]}
        rc, out, err = call(["run", "--resume", "c.ck", "--steps", 4])
        assert {p.name: p.read_bytes() for p in [*Path("s").iterdir(), Path("c.ck")]} == before
    else:
        write = driver.write_snapshot

        def changed_under_the_run(folder, state, step, *rest):
            if step == 4:
                other_scale()
            return write(folder, state, step, *rest)
        monkeypatch.setattr(driver, "write_snapshot", changed_under_the_run)
        rc, out, err = call([*argv, "--steps", 6])
        assert "the run stopped after step 4 of 6: " in err and "c.ck (step 2), is kept" in err, err
    assert rc == 2 and out == "" and len(err.splitlines()) == 1, err
    assert "holds snapshots in the authors' layout of another constants (constants 'authors')" in err, err


def test_a_key_given_twice_in_a_json_file_is_refused(tmp_path, monkeypatch):
    """A hunt: json keeps the last value of a key given twice, in silence: a snapshots.json whose softening
    came twice started `--ics` of its snapshot at the second one. Every JSON file read is refused so now
    (`runs.paths.parse_json`), naming the key."""
    monkeypatch.chdir(tmp_path)
    assert call(["run", "--n", 8, "--seed", 1, "--steps", 2, "--snapshots", "s", "--every", 2,
                 "--snapshot-format", "nbsymple"])[0] == 0
    side = Path("s/snapshots.json").read_text().rstrip().removesuffix("}")
    Path("s/snapshots.json").write_text(side + ', "softening": 1.0}')
    rc, out, err = call(["run", "--ics", "s/snap_00000002.txt", "--steps", 1])
    assert rc == 2 and out == "" and 'is not valid JSON (the key "softening" is given twice in one object' in err, err


def test_a_file_of_line_ends_is_read_a_chunk_at_a_time(tmp_path, monkeypatch):
    """A hunt: `str.splitlines` listed every line at once, 8 bytes a line: 2 GB of line ends (the largest file
    --ics takes) took 19 GB before "holds 0 bodies". The lines are split a chunk at a time now (the chunk made
    small here), so what is held is the file and its text; a form feed separates numbers, as the authors'
    reader takes it, and ends no line."""
    import tracemalloc
    from nbsymple_versions.runs import authors_format, paths
    monkeypatch.setattr(paths, "LINES_CHUNK", 4096, raising=False)
    read = authors_format.read_bytes

    def read_then_measure(*args):      # from the file read on (its reader's 16 MiB buffer for more is not this)
        data = read(*args)
        tracemalloc.reset_peak()
        return data
    monkeypatch.setattr(authors_format, "read_bytes", read_then_measure)
    (tmp_path / "ends.txt").write_bytes(b"\n" * 400_000)
    tracemalloc.start()
    try:
        with pytest.raises(FormatError, match="holds 0 bodies"):
            read_nbsymple(tmp_path / "ends.txt")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * 400_000, peak
    (tmp_path / "ff.txt").write_text(AUTHORS_LINE + "1 2 3\f4 5 6 7\n")
    assert read_nbsymple(tmp_path / "ff.txt").n == 2


def test_a_snapshot_whose_name_says_another_step_is_refused(tmp_path):
    """A hunt: a snapshot copied under another step's name (`snap_00000009.npz` holding step 4) was read as
    the step it holds, listed and ordered by the step its name says; refused now, naming both."""
    written = write_snapshot(tmp_path, make_cluster(8, seed=1), 4)
    renamed = written.rename(tmp_path / "snap_00000009.npz")
    with pytest.raises(SnapshotError, match=r"snap_00000009.npz holds step 4, not step 9 as its name says"):
        read_snapshot(renamed)
    assert read_snapshot(renamed.rename(tmp_path / "kept.npz"))[1] == 4      # a name that says no step


def test_the_authors_cluster_read_at_their_scale_starts_on_its_220_kms_orbit(tmp_path):
    """Their N = 480 cluster (480 Msun, 10 pc) read with --ics-mass 480 starts at 220 km/s, read at
    15360 Msun at 220 sqrt(15360 / 480) = 1244.5 km/s; without --ics-mass it is refused (the file does
    not say); the scale is in the snapshots and the run record, and a resumed run keeps it."""
    ics = write_nbsymple(tmp_path / "sixth0.txt", make_cluster(480, seed=2, units=AUTHORS))
    rc, out, err = call(["run", "--ics", ics, "--steps", "2", "--snapshots", tmp_path / "none"])
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and not (tmp_path / "none").exists()
    assert "does not state the cluster mass its units are in" in err and "--ics-mass MSUN" in err, err
    assert "the authors' files are in units of the total mass of their input.txt" in err and "--ics-mass 480" in err
    speeds = {}
    for mass in (15360, 480):
        rc, _, err = call(["run", "--ics", ics, "--ics-mass", mass, "--scheme", "si6a", "--dt", "1e-3", "--steps", "2",
                           "--json", "--snapshots", tmp_path / f"snaps{mass}", "--checkpoint", tmp_path / f"{mass}.ck"])
        assert rc == 0, err
        first, _ = read_snapshot(tmp_path / f"snaps{mass}" / "snap_00000000.npz")
        speeds[mass] = _speed_kms(first)
    assert speeds[480] == pytest.approx(220.0, rel=1e-2) and speeds[15360] == pytest.approx(1244.5, rel=1e-2)
    command = json.loads((tmp_path / "snaps480" / "nbsymple-run.json").read_text())["command"]
    assert (command["ics_radius_pc"], command["ics_mass_msun"]) == (10.0, 480.0)
    rc, _, err = call(["run", "--resume", tmp_path / "480.ck", "--steps", "3", "--json"])
    assert rc == 0, err
    last, step = read_snapshot(tmp_path / "snaps480" / "snap_00000003.npz")
    assert step == 3 and last.units == AUTHORS and _speed_kms(last) == pytest.approx(220.0, rel=1e-3)


@pytest.mark.parametrize("argv, says", [
    (["--ics-mass", "480"], "--ics-mass gives the scale of an initial-condition file, so it needs --ics FILE"),
    (["--ics-radius", "10", "--ics-mass", "480"], "--ics-radius and --ics-mass give the scale"),
    (["--ics", "ICS", "--ics-mass", "0"], "argument --ics-mass: must be positive and finite, got 0"),
    (["--ics", "ICS", "--ics-radius", "1e300", "--ics-mass", "1e-300"],
     "at that scale: cluster radius and mass of 1e+300 pc"),
    (["--resume", "CK", "--ics-mass", "480"], "so --ics-mass cannot be given with it"),
])
def test_a_scale_without_ics_or_of_no_size_is_one_sentence_nothing_written(tmp_path, argv, says):
    ics = write_nbsymple(tmp_path / "ExtData.txt", make_cluster(8, seed=1))
    argv = [{"ICS": ics, "CK": tmp_path / "c.ck"}.get(a, a) for a in argv]
    rc, out, err = call(["run", *argv, "--steps", "1", "--json", "--snapshots", tmp_path / "snaps"])
    assert rc == 2 and out == "" and says in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "snaps").exists()


def test_read_snapshot_reads_the_authors_frames_by_name_at_the_sidecar_scale(tmp_path):
    """`sixth<q>.txt` / `leapfrog<q>.txt` give frame q; the scale is this suite's unless a
    `snapshots.json` beside them says theirs; a file in their layout at their scale round-trips."""
    state = make_cluster(480, seed=4, units=AUTHORS)
    (tmp_path / "sixth10.txt").write_text(_authors_lines(state))
    at_default, q = read_snapshot(tmp_path / "sixth10.txt")
    assert q == 10 and at_default.units == Units() and at_default.t == 0.0
    assert _speed_kms(at_default) == pytest.approx(1244.5, rel=1e-3)
    (tmp_path / "snapshots.json").write_text(json.dumps({"r_cl_pc": 10, "mass_msun": 480}))
    theirs, q = read_snapshot(tmp_path / "sixth10.txt")
    assert q == 10 and theirs.units == AUTHORS and _speed_kms(theirs) == pytest.approx(220.0, rel=1e-6)
    assert np.allclose(theirs.x, state.x, rtol=1e-8, atol=0) and np.allclose(theirs.v, state.v, rtol=1e-8, atol=0)
    back, q = read_snapshot(write_nbsymple(tmp_path / "leapfrog3.txt", state))
    assert q == 3 and back.units == AUTHORS and back.eps == state.eps
    assert np.array_equal(back.x, state.x) and np.array_equal(back.v, state.v) and np.array_equal(back.m, state.m)
    for name in ("ExtData.txt", "sixth.txt", "frame3.txt"):
        (tmp_path / name).write_text(_authors_lines(state))
        with pytest.raises(SnapshotError, match=f"{name} is not named snap_<step>.txt, sixth<q>.txt or "
                                                f"leapfrog<q>.txt, so its step is unknown"):
            read_snapshot(tmp_path / name)


@pytest.mark.parametrize("fmt", ["npz", "nbsymple"])
def test_a_snapshot_reads_back_bit_for_bit(tmp_path, fmt):
    """Every float64 of a state (positions, velocities, masses, time, softening) and its step come
    back from a snapshot exactly, in either format: a run continued from one lands where the run
    that wrote it does (a mutation hunt: the time kept as float32 passed every test)."""
    state = make_cluster(16, seed=2, mass_classes=3)
    state.t, state.eps = 1.0 / 3.0, 2.0 / 3.0 * 1e-3
    back, step = read_snapshot(write_snapshot(tmp_path, state, 7, "r", fmt))
    assert step == 7 and back.t == state.t and back.eps == state.eps and back.units == state.units
    for a, b in ((back.x, state.x), (back.v, state.v), (back.m, state.m)):
        assert np.array_equal(a, b)
