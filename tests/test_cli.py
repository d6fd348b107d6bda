"""The `nbsymple` command: JSON output, snapshots, and one clear sentence for every user mistake."""
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from nbsymple_versions import check_pipeline, cli, get_version, make_cluster
from nbsymple_versions.core.vocabulary import PRECISIONS
from nbsymple_versions.simulation import Simulation
from nbsymple_versions.versions import CPU_LETTERS
from nbsymple_versions.runs.snapshots import list_snapshots, read_snapshot, write_snapshot

RUN_FIELDS = {"energy_error", "angular_momentum_error", "seconds_per_step", "task_seconds", "version", "n",
              "scheme", "precision", "threads", "device"}


def nbsymple(*args, env=None):
    environment = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    environment.update(env or {})
    return subprocess.run([sys.executable, "-m", "nbsymple_versions.cli", *args], capture_output=True,
                          text=True, env=environment, timeout=600)


@pytest.mark.parametrize("version, precision", [("A", "dp"), ("B", "dsp")])
def test_run_json(version, precision):
    p = nbsymple("run", "--version", version, "--n", "64", "--steps", "5", "--scheme", "si6a",
                 "--precision", precision, "--seed", "1", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert RUN_FIELDS <= set(out)
    assert set(out["task_seconds"]) == {"pairwise", "galactic", "integrate", "transfer", "communicate"}
    assert out["version"] == version and out["n"] == 64 and out["precision"] == precision
    assert 0 <= out["energy_error"] < 1e-6 and out["seconds_per_step"] > 0
    assert out["task_seconds"]["transfer"] == 0.0 and out["task_seconds"]["communicate"] == 0.0


def test_run_text_and_snapshots(tmp_path):
    folder = tmp_path / "snaps"
    p = nbsymple("run", "--n", "32", "--steps", "7", "--every", "3", "--snapshots", str(folder), "--seed", "2")
    assert p.returncode == 0, p.stderr
    assert "energy error" in p.stdout and "seconds per step" in p.stdout
    files = list_snapshots(folder)
    assert [f.name for f in files] == [f"snap_{k:08d}.npz" for k in (0, 3, 6, 7)]
    first, step0 = read_snapshot(files[0])
    assert step0 == 0 and first.n == 32
    np.testing.assert_array_equal(first.x, make_cluster(32, seed=2).x)
    last, step = read_snapshot(files[-1])
    assert step == 7 and last.t == pytest.approx(7 * 5e-4)
    assert not list(folder.glob(".snap_*"))               # no temporary left behind


def test_snapshot_write_is_atomic(tmp_path, monkeypatch):
    """A write that dies half-way leaves neither a truncated snapshot nor a temporary file."""
    s = make_cluster(10, seed=1)
    write_snapshot(tmp_path, s, 0)

    def die(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(np, "savez", die)
    with pytest.raises(KeyboardInterrupt):
        write_snapshot(tmp_path, s, 1)
    assert [f.name for f in tmp_path.iterdir()] == ["snap_00000000.npz"]


def test_a_snapshot_name_of_digits_int_cannot_read_is_listed_last(tmp_path):
    """`snap_².npz` in a snapshot folder ('²' passes str.isdigit, not int) is listed after the
    steps, as any other name that is no step's: listing the folder ended in a ValueError."""
    s = make_cluster(10, seed=1)
    write_snapshot(tmp_path, s, 3)
    write_snapshot(tmp_path, s, 10)
    (tmp_path / "snap_\u00b2.npz").write_bytes(b"")
    assert [p.name for p in list_snapshots(tmp_path)] == ["snap_00000003.npz", "snap_00000010.npz", "snap_\u00b2.npz"]


@pytest.mark.parametrize("args, words", [
    (["run", "--n", "1"], "at least 2"),
    (["run", "--dt", "0"], "positive"),
    (["run", "--dt", "-0.001"], "positive"),
    (["run", "--dt=-1e-3"], "positive"),
    (["run", "--dt", "nan"], "positive"),
    (["run", "--version", "Z"], "invalid choice"),
    (["run", "--scheme", "rk4"], "invalid choice"),
    (["run", "--precision", "qp"], "invalid choice"),
    (["run", "--version", "C", "--n", "16", "--steps", "1"], "needs a CUDA GPU"),
    (["run", "--version", "E", "--n", "16", "--steps", "1"], "needs a CUDA GPU"),
    (["run", "--every", "3", "--steps", "1"], "--snapshots"),
    (["run", "--n", "8", "--steps", "1", "--seed", "-1"], "--seed"),
    (["run", "--n", "8", "--steps", "-1"], "at least 0"),
    (["run", "--n", "8", "--steps", "1", "--tile", "0"], "at least 1"),
    (["bogus"], "invalid choice"),
])
def test_user_mistakes_get_one_sentence(args, words):
    p = nbsymple(*args)
    assert p.returncode == 2
    assert words in p.stderr and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert p.stdout == ""


@pytest.mark.parametrize("argv", [["run", "--n", "1"], ["run", "--help"], ["cpu-asm", "--target", "nope"], ["bogus"]])
def test_a_command_refused_for_its_arguments_leaves_numba_unloaded(argv):
    """Parsing names cpu-asm's targets without loading numba (`cpu_asm`'s names load with their
    module), so that a refusal or a --help answers at once: on a Zen 3 0.3 s, 0.7 s with numba."""
    code = ("import sys\nfrom nbsymple_versions import cli\ntry:\n    status = cli.main(sys.argv[1:])\n"
            "except SystemExit as e:\n    status = e.code\nprint(status, sorted({m.split('.')[0] for m in sys.modules} "
            "& {'numba', 'llvmlite', 'matplotlib'}))")
    environment = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    p = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=environment,
                       timeout=600)
    assert p.stdout.splitlines()[-1] == ("0 []" if "--help" in argv else "2 []"), p.stdout + p.stderr


def test_unwritable_snapshot_folder(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    p = nbsymple("run", "--n", "8", "--steps", "1", "--snapshots", str(blocker / "snaps"))
    assert p.returncode == 2 and "cannot write snapshots" in p.stderr and "Traceback" not in p.stderr


def test_check_json_and_table():
    """Every check of one call takes one seed, drawn where --seed is not given and said, so that a
    failed check is repeated (a hunt: each drew its own, and none was said)."""
    p = nbsymple("check", "--n", "64", "--json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    assert {(r["version"], r["precision"]) for r in rows} >= {(v, q) for v in CPU_LETTERS for q in PRECISIONS}
    for r in rows:
        assert set(r) >= {"version", "precision", "max_relative_error", "tolerance", "pass", "seed"}
        assert r["pass"] and r["max_relative_error"] <= r["tolerance"]
    seed = rows[0]["seed"]
    assert isinstance(seed, int) and {r["seed"] for r in rows} == {seed}
    again = json.loads(nbsymple("check", "--n", "64", "--json", "--seed", str(seed)).stdout)
    assert [r["max_relative_error"] for r in again] == [r["max_relative_error"] for r in rows]
    p = nbsymple("check", "--n", "64")
    assert p.returncode == 0 and "max rel. error" in p.stdout and "(drawn; --seed repeats it)" in p.stdout


def test_check_fails_a_galactic_kernel_off_by_2x(monkeypatch, capsys):
    """A hunt's leftover: `nbsymple check` compared the pairwise forces alone, and a galactic
    kernel adding the Galaxy twice passed in every version. Each check takes the host tasks too
    (`check_host_tasks`: the galactic acceleration, a drift and a kick, float64 in every precision)."""
    from nbsymple_versions.validation import HOST_TOLERANCE, validate
    from nbsymple_versions.versions import Version
    from wrong_host import with_galaxy_twice
    good = Version.pipeline

    def wrong(self, *args, **kwargs):
        return with_galaxy_twice(good(self, *args, **kwargs))

    assert cli.main(["check", "--n", "32", "--seed", "1"]) == 0
    right = capsys.readouterr().out
    assert f"tolerance {HOST_TOLERANCE:.0e}" in right and " NO" not in right, right
    monkeypatch.setattr(Version, "pipeline", wrong)
    assert cli.main(["check", "--n", "32", "--seed", "1"]) == 1
    rows = [line.split() for line in capsys.readouterr().out.splitlines() if line[:1] in CPU_LETTERS]
    assert rows and all(row[-1] == "NO" and float(row[-2]) > 0.5 for row in rows), rows
    check = validate("A", "sp", n=32, seed=1)
    assert not check.passed and check.max_relative_error <= check.tolerance and check.host_tasks_error > 0.5


def test_dsp_is_checked_where_float32_positions_lose_the_cluster(monkeypatch):
    """A mutation hunt: `validate` building every cluster at the origin passed every test, its rows
    still saying "8.5 kpc". At the origin a dsp kernel fallen back to sp passes dsp's 1e-5 (sp's
    forces are good to 1e-6 there); at 8.5 kpc, where dsp is checked, it fails by far."""
    from nbsymple_versions.validation import TOLERANCE, validate
    from nbsymple_versions.versions import Version
    good = Version.pipeline

    def sp_for_dsp(self, state, precision="dp", **options):
        return good(self, state, "sp" if precision == "dsp" else precision, **options)

    assert validate("A", "dsp", n=256, seed=1).passed
    monkeypatch.setattr(Version, "pipeline", sp_for_dsp)
    check = validate("A", "dsp", n=256, seed=1)
    assert not check.passed and check.max_relative_error > 100 * TOLERANCE["dsp"], check


def test_info():
    """What `nbsymple info` says, OpenMP's settings with numba's threads (they change how B waits)."""
    p = nbsymple("info", env={"OMP_WAIT_POLICY": "passive"})
    assert p.returncode == 0, p.stderr
    assert "threads, OMP_WAIT_POLICY=passive\n" in p.stdout, p.stdout
    assert "threading layer" in p.stdout and "A  serial        pairwise: 1 CPU core" in p.stdout
    assert "options: --tile (tile), --gpu-kernel (kernel), --gpu-backend (backend), --devices (devices)" in p.stdout


def test_info_names_the_cores_this_process_may_use_and_counts_threads(monkeypatch, capsys):
    """A hunt: under `taskset -c 0` `info` said "2 logical CPUs" beside a machine name of
    "1of2cores", and with one numba thread "1 threads"."""
    from nbsymple_versions import cli
    describe = cli.provenance.describe
    monkeypatch.setattr(cli.provenance, "describe", lambda: {**describe(), "cores": 2, "usable_cores": 1, "threads": 1})
    assert cli.cmd_info(None) == 0
    out = capsys.readouterr().out
    assert ", 1 of 2 logical CPUs," in out and ", 1 thread" in out and "1 threads" not in out, out


def test_info_shows_openmps_settings_on_their_line_as_text(monkeypatch, capsys):
    """A hunt: `info` printed each OMP_* variable as set, so a line feed in one started a line of
    its own (a forged `commit` line) and an escape sequence acted on the terminal (colours, a
    cleared screen); now written as their escapes, inside numba's line."""
    from nbsymple_versions import cli
    monkeypatch.setenv("OMP_NBSYMPLE_TEST", "a\x1b[2J\ncommit          forged")
    assert cli.cmd_info(None) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and len([line for line in out.splitlines() if line.startswith("commit ")]) == 1, out
    assert "OMP_NBSYMPLE_TEST=a\\x1b[2J\\ncommit          forged\n" in out, out


@pytest.mark.parametrize("module", ["nbsymple_versions.instruments.cpu_asm.report",
                                    "nbsymple_versions.instruments.gpu_asm.report"])
def test_a_kept_folder_is_named_on_its_line_as_text(monkeypatch, module):
    """A hunt: `cpu-asm --keep DIR` and `gpu-asm --keep DIR` printed the folder as given, so an
    escape sequence or a carriage return in its name acted on the terminal (`entry.printable`)."""
    import importlib
    import io
    from pathlib import Path
    report = importlib.import_module(module)
    monkeypatch.setattr(report, "count_all", lambda *a, **kw: [])
    out = io.StringIO()
    assert report.main(keep=Path("kept\x1b[2J\rhere"), out=out) == 0
    assert "kept\\x1b[2J\\rhere/" in out.getvalue() and "\x1b" not in out.getvalue(), out.getvalue()


def test_a_name_that_is_not_utf8_is_shown_by_its_bytes(tmp_path):
    """A hunt: a path holding a byte that is not UTF-8 was written `\\udcff` (Python's surrogate,
    which names no byte), on stderr and on stdout, and under an ASCII locale (PYTHONUTF8=0
    LC_ALL=C) a folder 'é' as `\\udcc3\\udca9`; now `\\xff`, `\\xc3\\xa9`, as `ls -b` and bash's
    $'...' name them."""
    p = nbsymple("run", "--ics", os.fsdecode(b"s\xff.txt"), "--ics-mass", "480")
    assert p.returncode == 2 and "file s\\xff.txt does not exist" in p.stderr, p.stderr
    snapshots = os.fsencode(tmp_path) + "/sé".encode()
    p = subprocess.run([sys.executable, "-m", "nbsymple_versions.cli", "run", "--n", "16", "--steps", "1", "--seed",
                        "1", "--snapshots", snapshots], capture_output=True, timeout=600,
                       env=dict(os.environ, PYTHONUTF8="0", LC_ALL="C"))
    assert p.returncode == 0 and b"snapshots in " + os.fsencode(tmp_path) + b"/s\\xc3\\xa9\n" in p.stdout, p.stdout


def test_profile_json():
    p = nbsymple("profile", "--versions", "AB", "--n", "64", "--steps", "2", "--json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    assert [(r["version"], r["n"]) for r in rows] == [("A", 64), ("B", 64)]
    for r in rows:
        assert sum(r["task_shares"].values()) == pytest.approx(100.0) and r["seconds_per_step"] > 0
    p = nbsymple("profile", "--versions", "AQ")
    assert p.returncode == 2 and "unknown version" in p.stderr


def test_profile_and_peers_that_were_stopped_and_continued_say_so(monkeypatch):
    """`nbsymple profile` (the paper's per-task tables) and `peers` report wall-clock times and
    rates too: a stop between their first and last timing is said after their table (on stderr
    beside `--json`, whose stdout is one JSON list)."""
    import contextlib
    import io
    import signal
    from cli_call import call
    from nbsymple_versions.entry import command
    from nbsymple_versions.instruments import peers
    from nbsymple_versions.simulation import Simulation
    step = Simulation.step

    def step_then_continue(self, *a, **kw):
        out = step(self, *a, **kw)
        signal.raise_signal(signal.SIGCONT)
        return out
    monkeypatch.setattr(Simulation, "step", step_then_continue)
    said = "was stopped and continued 1 time: its times include the time it stood still"
    rc, out, err = call(["profile", "--versions", "A", "--n", 16, "--steps", 1])
    assert rc == 0 and f"This profile {said}." in out, out
    rc, out, err = call(["profile", "--versions", "A", "--n", 16, "--steps", 1, "--json"])
    assert rc == 0 and json.loads(out)[0]["version"] == "A" and "nbsymple profile: stopped and" in err, err
    monkeypatch.undo()
    rc, out, err = call(["profile", "--versions", "A", "--n", 16, "--steps", 1])
    assert rc == 0 and "stood still" not in out + err, out
    table = peers.table

    def table_then_continue(*a, **kw):
        rows = table(*a, **kw)
        signal.raise_signal(signal.SIGCONT)
        return rows
    monkeypatch.setattr(peers, "table", table_then_continue)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        rc = command("peers", lambda: peers.main(["--n", "64", "--only", "A", "--quiet", "--no-bound"]))
    assert rc == 0 and f"This measurement {said}; take the rates again." in out.getvalue(), out.getvalue()


def test_options_a_version_does_not_take():
    p = nbsymple("run", "--version", "A", "--tile", "64", "--n", "8", "--steps", "1")
    assert p.returncode == 2 and "takes no option tile" in p.stderr and "Traceback" not in p.stderr


def test_zero_steps_give_json_without_nan():
    p = nbsymple("run", "--n", "16", "--steps", "0", "--seed", "1", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout, parse_constant=lambda c: pytest.fail(f"{c} is not JSON"))
    assert out["seconds_per_step"] is None and out["steps"] == 0


def test_an_internal_value_error_is_a_bug_not_a_user_mistake(monkeypatch, capsys):
    """Only the user's values become 'one sentence, exit 2'; a ValueError raised while stepping
    keeps its traceback (exit status 1 from Python), so bugs are not reported as user mistakes."""
    def broken(self, steps=1, on_step=None):
        raise ValueError("an internal inconsistency")
    monkeypatch.setattr(Simulation, "step", broken)
    with pytest.raises(ValueError, match="internal inconsistency"):
        cli.main(["run", "--n", "8", "--steps", "1", "--seed", "1"])
    assert cli.main(["run", "--n", "8", "--steps", "1", "--version", "C", "--tile", "48"]) == 2   # the user's value
    assert "--tile" in capsys.readouterr().err


def test_run_reports_both_energy_errors(capsys):
    """`internal_energy_error` beside `energy_error`: the same change of E, divided by the
    cluster's internal energy (~0.42) instead of the total (~1.8e4), each named in the text."""
    assert cli.main(["run", "--n", "32", "--steps", "20", "--seed", "1", "--precision", "sp", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    ratio = out["internal_energy_error"] / out["energy_error"]
    assert 3e4 < ratio < 6e4, ratio
    assert cli.main(["run", "--n", "32", "--steps", "20", "--seed", "1", "--precision", "sp"]) == 0
    text = capsys.readouterr().out
    assert "internal energy error" in text and "the paper's definition" in text and "|K_int0 + W0|" in text
    # each figure of the text is the JSON's, on its own line (a mutation hunt: the two swapped passed)
    shown = dict(re.findall(r"^((?:internal )?energy error) +(\S+)", text, re.M))
    assert {k: float(v) for k, v in shown.items()} == {
        "energy error": pytest.approx(out["energy_error"], rel=1e-3),
        "internal energy error": pytest.approx(out["internal_energy_error"], rel=1e-3)}, text


def test_a_total_energy_error_at_es_rounding_is_said_so(capsys):
    """SI6A in dp at N = 32 over 20 steps: |E - E0| / |E0| is 0 (the change is below one float64
    rounding of E0 = -1.8e4) while the internal error is ~1e-13. The text printed "energy error
    0.000e+00" as a measured figure; now it says that it is E's rounding, which the internal error
    measures, as conservation.md does. A figure far above it (leapfrog sp) is printed as before."""
    assert cli.main(["run", "--n", "32", "--steps", "20", "--seed", "1", "--scheme", "si6a", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["energy_error"] <= 2 * 2.0 ** -52 < out["internal_energy_error"], out
    assert cli.main(["run", "--n", "32", "--steps", "20", "--seed", "1", "--scheme", "si6a"]) == 0
    lines = capsys.readouterr().out.splitlines()
    i = next(k for k, x in enumerate(lines) if x.startswith("energy error"))
    assert "within two float64 roundings of E: the internal error below measures the change" in lines[i + 1], lines
    assert lines[i + 2].startswith("internal energy error") and max(map(len, lines)) <= 120
    assert cli.main(["run", "--n", "32", "--steps", "20", "--seed", "1", "--precision", "sp"]) == 0
    lines = capsys.readouterr().out.splitlines()
    i = next(k for k, x in enumerate(lines) if x.startswith("energy error"))
    assert lines[i].endswith("(the paper's definition)") and lines[i + 1].startswith("internal energy error"), lines


def test_check_says_where_each_precision_was_checked():
    """`nbsymple check` passes sp on a cluster at the origin and dp, dsp at 8.5 kpc, where sp's
    forces, from float32 positions, are off by a few 1e-3 (1.5e-3 to 6e-3 at N = 1000 and 4096): the
    table printed "sp 3.9e-06 yes" beside "dsp 1.6e-07 yes" with nothing saying the frames differ, so
    sp read as fit for the paper's cluster. Each row names its frame. (A hunt: the line said sp's
    positions are off by a few 1e-3; float32 holds them to 3.1e-5 there, half its spacing of 2^-14.)"""
    p = nbsymple("check", "--n", "64")
    assert p.returncode == 0, p.stderr
    rows = {tuple(line.split()[:3]) for line in p.stdout.splitlines() if line[:1] in CPU_LETTERS}
    assert {("A", "sp", "origin"), ("A", "dp", "8.5"), ("A", "dsp", "8.5")} <= rows, p.stdout
    assert "the cluster at the origin (sp) or at 8.5 kpc (dp, dsp" in p.stdout
    assert "where sp's forces are off by a few 1e-3" in p.stdout, p.stdout
    state = make_cluster(1000, seed=1)
    rounded = np.abs(state.x.astype(np.float32) - state.x).max()
    error, _ = check_pipeline(get_version("A").pipeline(state, "sp"), state, 1.0)
    assert rounded <= 2.0 ** -15 < 1e-3 < error < 1e-2, (rounded, error)        # the forces, not the positions
    assert max(map(len, p.stdout.splitlines())) <= 120, p.stdout
