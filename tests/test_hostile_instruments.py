"""Hostile options and files for the instruments' command lines, which docs/how_fast.md, docs/mpi.md
and docs/gpu.md tell users to run (`python -m nbsymple_versions.instruments.peers`, `mpi_timing`,
`mpi_model`, `gpu_report`), under test_hostile.py's rules: every case ends with a documented
status (0, or 2 for a mistake), at most 3 lines on stderr and no control character there, no
traceback, no hang (`hang_guard`), and nothing changed outside the paths it names. Each refusal
is one sentence naming the option or the file (and the line of a measured-runs file).

The valid values are drawn small (N <= 48, a few rounds and steps; `peers` always with `--only`,
with `--no-bound`, without which it would compile every kernel for this CPU in a child, and with
`--quiet`, without which its progress takes a line per candidate); `mpi_model --measure`, which
would time F under mpiexec for minutes, is tried with what it must refuse before it starts, and
with a job that fails."""
from __future__ import annotations

import errno
import json
import os
import re
from pathlib import Path
import socket

import pytest
from hypothesis import example, given, note, strategies as st

from nbsymple_versions.entry import command
from nbsymple_versions.instruments import gpu_report, mpi_model, mpi_timing, peers

from test_hostile import (FLAG, _named, allowed_paths, argv_text, call, count_text, everything, file_bytes,
                          float_text, hang_guard, json_bytes, mutated_json, one, opt, options, path_opt,
                          path_text, problems, run_case, sandbox, valid_float)
from drawn import hostile


def entry(module):
    """`python -m MODULE ARGV` in this process: `entry.command` around the module's `main`."""
    name = f"python -m {module.__name__}"
    return lambda argv: command(name, lambda: module.main(argv))


RUN = {"peers": entry(peers), "mpi_timing": entry(mpi_timing), "mpi_model": entry(mpi_model),
       "gpu_report": entry(gpu_report)}
# one valid run of F (1 rank) as `mpi_timing` prints it, the line `mpi_model` reads
MEASURED_RUN = {"ranks": 1, "n": 1024, "scheme": "leapfrog", "precision": "dp", "steps": 22,
                "seconds_per_step": 0.0407, "task_seconds": {"pairwise": 0.187, "galactic": 0.17, "integrate": 0.5384,
                                                             "transfer": 0.0, "communicate": 0.0},
                "task_shares": {"pairwise": 20.884521, "galactic": 18.985928, "integrate": 60.129551, "transfer": 0.0,
                                "communicate": 0.0}, "threads_per_rank": 2, "device": None, "node_version": "B"}


@pytest.fixture
def one_thread():
    """F's node loop in this process (B's kernels) on one numba thread. On two, 1003 steps at
    N = 8 took 0.2 to 40 s beside two CPU-bound processes (libgomp's threads spin at the end of
    each parallel region while the partner they wait for is off its core: docs/how_fast.md, On a
    shared machine), and these tests 5 to 45 s under `make test`; on one, 0.1 s. What they check
    (options, step counts) does not depend on the threads."""
    import numba
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    yield
    numba.set_num_threads(before)


def populate(root: Path):
    """What the instruments' path options may meet: a valid measured-runs file, a damaged one,
    a folder, a FIFO, a socket, a symbolic-link loop."""
    (root / "runs.jsonl").write_text(json.dumps(MEASURED_RUN) + "\n" + json.dumps({**MEASURED_RUN, "ranks": 2}) + "\n")
    (root / "bad.jsonl").write_bytes(b'{"ranks": 1, "n": \xff}\n')
    (root / "slow.jsonl").write_text(json.dumps({**MEASURED_RUN, "task_seconds": {"pairwise": 1e300}}) + "\n")
    (root / "si6a.jsonl").write_text(json.dumps({**MEASURED_RUN, "scheme": "si6a"}) + "\n")
    (root / "sp.jsonl").write_text(json.dumps({**MEASURED_RUN, "precision": "sp"}) + "\n")
    (root / "gpu.jsonl").write_text(json.dumps({**MEASURED_RUN, "node_version": "E"}) + "\n")   # a hunt: taken as B
    (root / "folder").mkdir()
    os.mkfifo(root / "fifo")
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(root / "socket"))
    (root / "loop").symlink_to("loop")


SPECIAL = one("folder", "fifo", "socket", "loop", "folder/", "nowhere/", "bad.jsonl")

# --------------------------------------------------------------------------------- each refusal named

REFUSED = [   # (instrument, argv, what the sentence names)
    ("peers", ["--n", "0"], "--n"), ("peers", ["--n", "1.5"], "--n"), ("peers", ["--n", "99999999999"], "--n"),
    ("peers", ["--repeats", "0"], "--repeats"), ("peers", ["--seed", "-1"], "--seed"),
    ("peers", ["--n", "1000000", "--repeats", "100000000"], "--repeats"),    # 116 days even at 1e13 /s
    ("peers", ["--only", "nobody", "A-sp"], "'nobody'"),
    ("mpi_timing", ["--n", "1"], "--n"), ("mpi_timing", ["--n", "99999999999"], "--n"),
    ("mpi_timing", ["--scheme", "rk4"], "--scheme"), ("mpi_timing", ["--precision", "fp16"], "--precision"),
    ("mpi_timing", ["--min-steps", "0"], "--min-steps"),
    ("mpi_timing", ["--n", "8", "--min-steps", "10**16"], "--min-steps"),
    ("mpi_timing", ["--n", "8", "--min-steps", "10000000000000000"], "--min-steps"),
    ("mpi_timing", ["--min-seconds", "nan"], "--min-seconds"),
    ("mpi_timing", ["--min-seconds", "inf"], "--min-seconds"),
    ("mpi_timing", ["--min-seconds", "-1"], "--min-seconds"), ("mpi_timing", ["--node-version", "Z"], "--node-version"),
    ("mpi_timing", ["--n", "8", "--node-version", "D"], "node version D"),
    ("mpi_model", ["--rate", "nan"], "--rate"), ("mpi_model", ["--rate", "-1"], "--rate"),
    ("mpi_model", ["--rate", "0"], "--rate"), ("mpi_model", ["--rate", "inf"], "--rate"),
    ("mpi_model", ["--rate", "1e-300"], "--rate"), ("mpi_model", ["--rate", "1e300"], "--rate"),
    ("mpi_model", ["--measured", "slow.jsonl"], "slow.jsonl"),
    ("mpi_model", [], "--rate"), ("mpi_model", ["--measured", ""], "--measured"),
    ("mpi_model", ["--measured", "nope.jsonl"], "nope.jsonl"), ("mpi_model", ["--measured", "bad.jsonl"], "bad.jsonl"),
    ("mpi_model", ["--measured", "folder"], "folder"), ("mpi_model", ["--measured", "fifo"], "fifo"),
    ("mpi_model", ["--measured", "socket"], "socket"), ("mpi_model", ["--measured", "loop"], "loop"),
    ("mpi_model", ["--measure", "folder"], "--measure folder"), ("mpi_model", ["--measure", "fifo"], "--measure fifo"),
    ("mpi_model", ["--measure", "bad.jsonl"], "bad.jsonl"), ("mpi_model", ["--measure", "file.txt/x"], "file.txt"),
    ("mpi_model", ["--rate", "1e9", "--plot", "folder"], "--plot folder"),
    ("mpi_model", ["--rate", "1e9", "--plot", "fifo"], "--plot fifo"),
    ("mpi_model", ["--rate", "1e9", "--plot", "file.txt/m.png"], "file.txt"),
    ("mpi_model", ["--rate", "1e9", "--plot", "m.pdf"], "--plot m.pdf does not end in .png"),   # a hunt: a PNG
    ("mpi_model", ["--rate", "1e9", "--plot", "m"], "--plot m does not end in .png"),           # named m.pdf
    ("gpu_report", ["--sizes", "1"], "--sizes"), ("gpu_report", ["--validate-n", "0"], "--validate-n"),
    ("gpu_report", ["--steps", "0"], "--steps"), ("gpu_report", ["--min-seconds", "nan"], "--min-seconds"),
    ("gpu_report", ["--sizes", "99999999999"], "--sizes"),
    # found by a hunt: the measured runs replaced by the figure; an si6a run's rate read 16 times too
    # low (several force evaluations a step), an sp run's as dp; an empty table; a report without end
    ("mpi_model", ["--measured", "runs.jsonl", "--plot", "runs.jsonl"], "--plot runs.jsonl names the measured-runs"),
    ("mpi_model", ["--measured", "si6a.jsonl"], "has no valid scheme (leapfrog"),
    ("mpi_model", ["--measured", "sp.jsonl"], "has no valid precision (dp"),
    ("mpi_model", ["--measured", "gpu.jsonl"], "has no valid node_version (B, the CPU node"),
    ("peers", ["--only", "C-dp", "--no-gpu", "--n", "32"], "which --no-gpu leaves out"),
    ("gpu_report", ["--sizes", "32", "--min-seconds", "1e300"], "--min-seconds 1e+300 times at least 6"),
]


@pytest.mark.parametrize("instrument, argv, named", REFUSED, ids=[f"{i}-{' '.join(a)}" for i, a, _ in REFUSED])
def test_a_mistake_is_one_sentence_naming_it(instrument, argv, named):
    """Status 2 and one sentence naming the option or file, before any work (a refused
    `--measure` never starts mpiexec: nothing is written)."""
    with sandbox() as root:
        populate(root)
        (root / "file.txt").write_text("a file, not a folder\n")
        before = everything(root)
        with hang_guard():
            rc, out, err = call(argv, RUN[instrument])
        found = problems(argv, rc, out, err, before, everything(root), allowed_paths(root, []), False, statuses=(2,))
        assert not found and named in err and len(err.strip().splitlines()) == 1, (found, rc, err)


def test_mpi_timing_keeps_min_steps_beyond_its_usual_cap(one_thread):
    """--min-steps is the least number of steps timed, also above the 1000 steps that
    --min-seconds asks for at most: never cut silently; a --min-seconds of 1e308 asks the 1000
    (an OverflowError's traceback before: a hunt)."""
    result = mpi_timing.measure(8, min_steps=1003, min_seconds=0.0)
    assert result["steps"] == 1003
    assert mpi_timing.measure(8, min_steps=1, min_seconds=1e308)["steps"] == 1000


def test_work_the_cuda_simulator_cannot_end_is_refused_by_every_instrument(monkeypatch, capsys):
    """A hunt: `gpu_report --validate-n`, `peers --gpu` and `nbsymple check` ran GPU versions in
    the CUDA simulator at any N (killed at a timeout), where `profile` refused what it cannot end."""
    from nbsymple_versions import cli
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    monkeypatch.setenv("NBSYMPLE_MAX_DAYS", "0.0001")
    for run, argv, named in ((RUN["gpu_report"], ["--sizes", "32", "--validate-n", "4096"], "--validate-n 4096"),
                             (RUN["peers"], ["--gpu", "--only", "C-dp", "--n", "4096", "--no-bound"], "--repeats"),
                             (cli.main, ["check", "--n", "4096"], "--n 4096 for version C"),
                             (cli.main, ["check", "--gpu-report", "--n", "4096"], "nbsymple check --gpu-report: --n "
                              "4096"),        # a hunt: it named --validate-n, which `check` does not take
                             (cli.main, ["run", "--version", "F", "--n", "4096", "--steps", "1000"], "--steps 1000")):
        # (F's default node version in the simulator, E, was recorded after the run's own check: a traceback)
        with hang_guard():
            rc, out, err = call(argv, run)
        assert rc == 2 and named in err and "CUDA simulator" in err and len(err.strip().splitlines()) == 1, err
        assert "--validate-n" not in err or run is RUN["gpu_report"], err


def test_peers_says_why_there_is_no_bound_where_the_code_has_no_vector_loop(monkeypatch):
    """A hunt: with NUMBA_CPU_NAME=x86-64 (no AVX: the setting peers' own sentence offers) the
    table printed, then a ValueError's traceback from counting the loops, status 1."""
    from nbsymple_versions.instruments import cpu_asm

    def no_loop(*args, **kwargs):
        raise ValueError("no loop with a square root or its reciprocal in this function: not a pairwise kernel")
    monkeypatch.setattr(cpu_asm, "count_all", no_loop)
    row = peers.Row("A", "dp", 64, 1e8, 1.0, "ok", 2.7e-16, 1e-12, 1, 1e-5)
    assert peers._pipe_bound([row]).startswith("No pipe bound: the pairwise loops of the code timed")


def test_mpi_model_reads_a_measured_run_and_names_a_bad_line(tmp_path):
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(MEASURED_RUN) + "\n\n" + json.dumps({**MEASURED_RUN, "task_shares": {}}) + "\n")
    with pytest.raises(ValueError, match=r"runs.jsonl: the run on line 3 has no valid task_shares.communicate"):
        mpi_model.read_measured(path)
    path.write_text(json.dumps(MEASURED_RUN) + "\n")
    assert mpi_model.read_measured(path) == [MEASURED_RUN]
    assert mpi_model.cpu_rate([{**MEASURED_RUN, "ranks": 2}]) is None       # no 1-rank run: no rate


@pytest.mark.parametrize("change, said", [
    ({"seconds_per_step": 1e-300}, "gives 1e-300 s per step where its task times sum to 0.0407 s per step"),
    ({"task_seconds": {**MEASURED_RUN["task_seconds"], "galactic": -0.17}}, "not one number from 0 up"),
    ({"task_seconds": {**MEASURED_RUN["task_seconds"], "galactic": "0.17"}}, "not one number from 0 up"),
    ({"task_shares": {**MEASURED_RUN["task_shares"], "galactic": {}}}, "not one number from 0 up"),
    ({"task_shares": {**MEASURED_RUN["task_shares"], "pairwise": 90.0}}, "task shares that are not its task times'")])
def test_a_measured_run_whose_times_disagree_is_refused(tmp_path, change, said):
    """A hunt of file contents: a run of 1e-300 s per step, its task times those of seconds, was taken as the
    fastest of its ranks and N; its shares were taken whatever they said."""
    (path := tmp_path / "runs.jsonl").write_text(json.dumps({**MEASURED_RUN, **change}) + "\n")
    with pytest.raises(ValueError, match=rf"runs.jsonl: the run on line 1 .*{re.escape(said)}"):
        mpi_model.read_measured(path)


def test_mpi_model_reads_a_measured_run_whose_text_holds_a_line_separator(tmp_path):
    """A hunt: the measured-runs file was split into lines by `str.splitlines`, which also ends one at U+2028
    (or U+0085, a form feed), valid inside a JSON string: a run whose device was named with one was "not
    valid JSON (Unterminated string)"; lines end at line feeds and carriage returns alone now (`text_lines`)."""
    run = {**MEASURED_RUN, "device": "CPU\u2028\x85\x0cnode"}
    (path := tmp_path / "runs.jsonl").write_text(json.dumps(run, ensure_ascii=False) + "\r\n", encoding="utf-8")
    assert mpi_model.read_measured(path) == [run]


# --------------------------------------------------------------------------------- searched by hypothesis

CHEAP_CANDIDATES = ["A-sp", "A-dp", "B-dsp", "NumPy", "A", "B-sp"]     # the kernels the suite compiles anyway
PEERS_TABLE = {
    "--n": opt(st.lists(st.integers(2, 48).map(str), min_size=1, max_size=2),
               st.lists(count_text(48, refused=10**12), min_size=1, max_size=2)),
    "--repeats": opt(st.integers(1, 2).map(str), count_text(2)),
    "--seed": opt(st.integers(0, 2**40).map(str), count_text(10**9, low=0)),
    "--only": (st.lists(st.sampled_from(CHEAP_CANDIDATES), min_size=1, max_size=2),
               st.lists(st.one_of(argv_text(), one("C", "Warp-GPU-tile", "E-sp")), min_size=1, max_size=2)),
    "--no-bound": FLAG, "--no-gpu": FLAG,
}


@hostile(25)
@given(case=options(PEERS_TABLE, always=("--n", "--only", "--no-bound"), at_most=4))
def test_peers_options(case):
    pieces, given = case
    if "--only" not in given or not any(v in CHEAP_CANDIDATES for v in given["--only"]):
        pieces += ["--only", "A-sp"]        # without it every peer would run (Warp, REBOUND: seconds)
    with sandbox() as root:
        run_case("peers options", root, pieces + ["--no-bound", "--quiet"], main=RUN["peers"])


TIMING_TABLE = {
    "--n": opt(st.integers(2, 32).map(str), count_text(32, refused=10**12)),
    "--scheme": opt(one("leapfrog", "si6a", "SI6A")), "--precision": opt(one("sp", "dp", "dsp", "DP")),
    "--min-steps": opt(st.integers(1, 3).map(str), count_text(3, refused=10**13)),
    "--min-seconds": opt(one("0", "0.001", "1e-9", "0.01"), float_text()),
    "--node-version": opt(one("B", "b"), one("D", "E", "F", "Z", "")),
}


@hostile(25)
@given(case=options(TIMING_TABLE, always=("--n",), at_most=5))
@example(case=(["--n=23", "--scheme=--"], {"--n": ["23"], "--scheme": ["--"]}))       # random search: [] past choices
def test_mpi_timing_options(one_thread, case):
    pieces, given = case
    with sandbox() as root:
        rc, out, _ = run_case("mpi_timing options", root, pieces, main=RUN["mpi_timing"])
        if rc == 0:
            assert json.loads(out)["steps"] >= 1


MODEL_TABLE = {
    "--rate": opt(valid_float(), float_text()),
    "--measured": (one("runs.jsonl"), st.one_of(SPECIAL, path_text())),
    "--plot": path_opt(one("m.png", "d/m.png", "folder/m.png")),
}


@hostile(25)
@given(case=options(MODEL_TABLE, at_most=3))
@example(case=(["--rate", "1e-300", "--plot=d/m.png"], {"--rate": ["1e-300"], "--plot": ["d/m.png"]}))   # random search
def test_mpi_model_options(case):
    pieces, given = case
    with sandbox() as root:
        populate(root)
        run_case("mpi_model options", root, pieces, named=_named(given, ("--plot",)), main=RUN["mpi_model"])


@hostile(30)
@given(data=file_bytes(json_bytes(MEASURED_RUN) + b"\n",
                       mutated_json(MEASURED_RUN, times=3).map(lambda d: json_bytes(d) + b"\n")),
       more=st.sampled_from([b"", b"\n", json_bytes(MEASURED_RUN) + b"\n"]))
def test_mpi_model_reads_any_measured_runs_file(data, more):
    """Any bytes in the measured-runs file: the tables from its runs (status 0), or one sentence
    naming the file and the line (status 2)."""
    note(f"file = {more + data!r}")
    with sandbox() as root:
        (root / "m.jsonl").write_bytes(more + data)
        run_case("mpi_model --measured", root, ["--measured", "m.jsonl"], main=RUN["mpi_model"])


def test_mpi_model_measure_appends_after_a_last_line_without_its_line_feed(tmp_path, monkeypatch):
    """A measured-runs file whose last line has no line feed (written by hand, or by an editor that adds none):
    --measure joined its first new run to that line, and the file was no longer read ("not valid JSON")."""
    import subprocess
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps(MEASURED_RUN))
    monkeypatch.setattr(mpi_model, "mpiexec", lambda: "mpiexec")
    monkeypatch.setattr(mpi_model.subprocess, "run",
                        lambda argv, **kw: subprocess.CompletedProcess(argv, 0, json.dumps(MEASURED_RUN) + "\n", ""))
    rc, _, err = call(["--measure", runs], RUN["mpi_model"])
    assert rc == 0, err
    assert mpi_model.read_measured(runs) == [MEASURED_RUN] * (1 + 3 * 3 * 2)      # 3 repeats of 3 N and 2 ranks


def test_mpi_model_measure_names_a_missing_mpiexec_and_a_failed_job(tmp_path, monkeypatch):
    """--measure without mpiexec: one sentence naming the extra, nothing written (status 2); a
    timing job that fails: one sentence with its status and last line, the runs measured before
    it kept in the file (status 1); a full disk while it measures: status 4, the file kept."""
    import subprocess
    runs = tmp_path / "runs.jsonl"
    monkeypatch.setattr(mpi_model, "mpiexec", lambda: None)
    rc, _, err = call(["--measure", runs], RUN["mpi_model"])
    assert rc == 2 and "install the MPI extra" in err and not runs.exists(), err
    jobs = iter([json.dumps(MEASURED_RUN), None])

    def job(argv, **kw):
        out = next(jobs)
        if out is None:
            raise subprocess.CalledProcessError(1, argv, "", "mpiexec: rank 1 died\n")
        return subprocess.CompletedProcess(argv, 0, out + "\n", "")
    monkeypatch.setattr(mpi_model, "mpiexec", lambda: "mpiexec")
    monkeypatch.setattr(mpi_model.subprocess, "run", job)
    rc, _, err = call(["--measure", runs], RUN["mpi_model"])
    assert rc == 1 and "status 1 (mpiexec: rank 1 died)" in err and len(err.strip().splitlines()) == 1, err
    assert mpi_model.read_measured(runs) == [MEASURED_RUN]
    jobs = iter([json.dumps(MEASURED_RUN)])          # a full disk while it measures: status 4, the file kept

    def full(path, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
    monkeypatch.setattr(mpi_model.subprocess, "run",
                        lambda argv, **kw: subprocess.CompletedProcess(argv, 0, next(jobs)))
    monkeypatch.setattr(mpi_model, "write_file", full)
    rc, _, err = call(["--measure", runs], RUN["mpi_model"])
    assert rc == 4 and "No space left on device" in err and len(err.strip().splitlines()) == 1, err
    assert mpi_model.read_measured(runs) == [MEASURED_RUN]


def test_mpi_model_measure_into_a_file_another_measure_writes_is_refused(tmp_path, monkeypatch):
    """Two `--measure` into one file at once (a hunt): each wrote the file whole with its own runs
    after those it had read, so the last one's alone were kept, and each timed under the other's
    load. The second is refused, nothing measured, the file as it was; the lock is free after."""
    import subprocess
    from nbsymple_versions.runs import locks
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps(MEASURED_RUN) + "\n")
    monkeypatch.setattr(mpi_model, "mpiexec", lambda: "mpiexec")
    monkeypatch.setattr(mpi_model.subprocess, "run",
                        lambda argv, **kw: subprocess.CompletedProcess(argv, 0, json.dumps(MEASURED_RUN) + "\n", ""))
    with locks.hold(runs, "the measured-runs file (--measure)"):         # as a --measure under way holds it
        rc, _, err = call(["--measure", runs], RUN["mpi_model"])
    assert rc == 2 and "in use by another run" in err and "nothing was measured" in err, err
    assert len(err.strip().splitlines()) == 1 and mpi_model.read_measured(runs) == [MEASURED_RUN]
    rc, _, err = call(["--measure", runs], RUN["mpi_model"])
    assert rc == 0 and len(mpi_model.read_measured(runs)) == 1 + 3 * 3 * 2, err


def test_mpi_model_measure_on_a_disk_that_fills_at_a_flush_names_its_file(tmp_path, monkeypatch):
    """A disk that filled as `--measure` flushed its file said "--measure stopped: No space left on
    device (None)" (a hunt): the file it was writing is named (`runs.paths.written_name`), kept."""
    import subprocess
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps(MEASURED_RUN) + "\n")
    real = os.fsync

    def full(fd):
        if os.path.isfile(f"/proc/self/fd/{fd}"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd)
    monkeypatch.setattr(mpi_model, "mpiexec", lambda: "mpiexec")
    monkeypatch.setattr(mpi_model.subprocess, "run",
                        lambda argv, **kw: subprocess.CompletedProcess(argv, 0, json.dumps(MEASURED_RUN) + "\n", ""))
    monkeypatch.setattr(os, "fsync", full)
    rc, _, err = call(["--measure", runs], RUN["mpi_model"])
    assert rc == 4 and f"No space left on device ({runs})" in err and "None" not in err, err
    assert mpi_model.read_measured(runs) == [MEASURED_RUN]
