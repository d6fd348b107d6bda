"""Checkpoint and resume: bit-for-bit continuation for every CPU version, precision and scheme,
signals, refusal of damaged files, and a non-finite value stopping the run at its step."""
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from nbsymple_versions import cli, make_cluster
from nbsymple_versions.runs.checkpoint import FORMAT, MAGIC, CheckpointError, load, save
from nbsymple_versions.core.pipeline import ForcePipeline
from nbsymple_versions.core.vocabulary import PRECISIONS
from nbsymple_versions.simulation import NonFiniteState, Simulation
from nbsymple_versions.runs.snapshots import list_snapshots, read_snapshot
from nbsymple_versions.versions import CPU_LETTERS


def main(capsys, *args):
    """`nbsymple` in this process: (exit status, stdout, stderr)."""
    rc = cli.main([str(a) for a in args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def same_state(a, b):
    """Two checkpoints hold the same bits: arrays, time and step count."""
    (_, rec_a, sa), (_, rec_b, sb) = load(a), load(b)
    assert rec_a["steps_done"] == rec_b["steps_done"]
    for name in ("x", "v", "m"):
        np.testing.assert_array_equal(getattr(sa, name), getattr(sb, name))
    assert sa.t == sb.t and rec_a["energy0"] == rec_b["energy0"]


@pytest.mark.parametrize("scheme", ["leapfrog", "si6a"])
@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("version", CPU_LETTERS)
def test_resume_after_a_crash_ends_bit_for_bit(tmp_path, capsys, monkeypatch, version, precision, scheme):
    """A run that dies at step 6 (checkpoints at 0, 4, 8) and is resumed ends where the
    uninterrupted run ends: state, time, snapshots and the reported errors."""
    common = ["run", "--version", version, "--precision", precision, "--scheme", scheme, "--n", 24,
              "--seed", 4, "--steps", 9, "--every", 3, "--json"]
    rc, out, err = main(capsys, *common, "--checkpoint", tmp_path / "full.ck", "--snapshots", tmp_path / "full")
    assert rc == 0, err
    whole = json.loads(out)

    check = Simulation._check_finite

    def dies_at_step_6(self):
        check(self)
        if self.steps_done == 6:
            raise KeyboardInterrupt          # as a kill: no last checkpoint
    with monkeypatch.context() as m:
        m.setattr(Simulation, "_check_finite", dies_at_step_6)
        rc, _, err = main(capsys, *common, "--checkpoint", tmp_path / "part.ck", "--checkpoint-every", 4,
                          "--snapshots", tmp_path / "part")
    assert rc == 130 and load(tmp_path / "part.ck")[1]["steps_done"] == 4
    rc, out, err = main(capsys, "run", "--resume", tmp_path / "part.ck", "--json")
    assert rc == 0, err
    resumed = json.loads(out)
    same_state(tmp_path / "full.ck", tmp_path / "part.ck")
    for key in ("energy_error", "internal_energy_error", "angular_momentum_error", "seed", "steps", "n"):
        assert resumed[key] == whole[key], key
    assert resumed["resumed_from_step"] == 4
    full, part = list_snapshots(tmp_path / "full"), list_snapshots(tmp_path / "part")
    assert [p.name for p in part] == [p.name for p in full] == [f"snap_{k:08d}.npz" for k in (0, 3, 6, 9)]
    for a, b in zip(full, part):
        (sa, ka), (sb, kb) = read_snapshot(a), read_snapshot(b)
        assert ka == kb and sa.t == sb.t
        np.testing.assert_array_equal(sa.x, sb.x)
        np.testing.assert_array_equal(sa.v, sb.v)


def test_a_resumed_run_checkpoints_at_the_steps_an_uninterrupted_one_does(tmp_path, capsys, monkeypatch):
    """--checkpoint-every 4 checkpoints at steps 4, 8, 12 in every session: a run resumed at step 6 and
    killed in step 10 goes on from 8, as a run never stopped would (a mutation hunt: counted from the
    resume, 10 and 14, the checkpoint of 8 was never written, and that passed every test)."""
    ck = tmp_path / "run.ck"
    rc, _, err = main(capsys, "run", "--n", 16, "--seed", 4, "--steps", 6, "--checkpoint", ck)
    assert rc == 0 and load(ck)[1]["steps_done"] == 6, err
    check = Simulation._check_finite

    def dies_at_step_10(self):
        check(self)
        if self.steps_done == 10:
            raise KeyboardInterrupt          # as a kill: no last checkpoint
    monkeypatch.setattr(Simulation, "_check_finite", dies_at_step_10)
    rc, _, err = main(capsys, "run", "--resume", ck, "--steps", 12, "--checkpoint-every", 4)
    assert rc == 130 and load(ck)[1]["steps_done"] == 8, err


def test_time_is_never_a_running_sum():
    """t after k steps is t0 + k dt however the steps are split."""
    a = Simulation(make_cluster(8, seed=1), "A", dt=0.1, diagnostics=False)
    b = Simulation(make_cluster(8, seed=1), "A", dt=0.1, diagnostics=False)
    a.step(30)
    for _ in range(30):
        b.step(1)
    assert a.state.t == b.state.t == 30 * 0.1
    np.testing.assert_array_equal(a.state.x, b.state.x)


# ------------------------------------------------------------------ signals (subprocesses)

def _spawn(tmp_path, *args):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    return subprocess.Popen([sys.executable, "-m", "nbsymple_versions.cli", *map(str, args)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)


def _wait_for_progress(path, proc, past=0, timeout=120):
    """Wait until checkpoint `path` holds a step beyond `past`."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        assert proc.poll() is None, proc.communicate()
        try:
            if load(path)[1]["steps_done"] > past:
                return
        except CheckpointError:
            pass
        time.sleep(0.05)
    pytest.fail("the run made no progress")


@pytest.mark.parametrize("how, run", [
    ("SIGTERM", ["--version", "B", "--precision", "dsp", "--scheme", "si6a", "--n", 96]),
    ("SIGKILL", ["--version", "A", "--precision", "sp", "--scheme", "leapfrog", "--n", 128]),
])
def test_a_signalled_run_resumes_bit_for_bit(tmp_path, capsys, how, run):
    """SIGTERM: a last checkpoint at the step under way, exit 143 and a sentence saying how to
    go on; SIGKILL: the last periodic checkpoint. Either resumed lands on the bits of a run
    that was never interrupted."""
    ck = tmp_path / "run.ck"
    proc = _spawn(tmp_path, "run", *run, "--seed", 7, "--steps", 10**6, "--checkpoint", ck, "--checkpoint-every", 40)
    try:
        _wait_for_progress(ck, proc)
        proc.send_signal(getattr(signal, how))
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    stopped = load(ck)[1]["steps_done"]
    if how == "SIGTERM":
        assert proc.returncode == 128 + signal.SIGTERM
        assert f"stopped by SIGTERM after step {stopped} of 1000000" in err and "--resume" in err
        assert len(err.strip().splitlines()) == 1, err
    else:
        assert proc.returncode == -signal.SIGKILL and stopped % 40 == 0
    assert not list(tmp_path.glob(".run.ck.*.tmp")) or how == "SIGKILL"
    total = stopped + 30
    rc, _, err = main(capsys, "run", "--resume", ck, "--steps", total, "--json")
    assert rc == 0, err
    rc, _, err = main(capsys, "run", *run, "--seed", 7, "--steps", total, "--checkpoint", tmp_path / "ref.ck")
    assert rc == 0, err
    same_state(ck, tmp_path / "ref.ck")


def test_an_alarm_the_caller_set_for_itself_stays_its_own_during_a_run():
    """A review: since SIGALRM stops a run after its step, a run's `StopSignals` took over an alarm that
    code around it had set (a timeout around `driver.run` in Python, the tests' `hang_guard`): a hang
    in a step was waited out for ever. Such a handler is left to answer its alarm; a default one (the
    `nbsymple run` of a shell) is still taken over."""
    from nbsymple_versions.runs.signals import StopSignals

    def hang(signum, frame):
        raise TimeoutError("the caller's own timeout")
    previous = signal.signal(signal.SIGALRM, hang)
    try:
        with pytest.raises(TimeoutError, match="the caller's own timeout"), StopSignals() as stops:
            signal.raise_signal(signal.SIGALRM)          # within a checkpointed run's step
        assert stops.signum is None
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        with StopSignals() as stops:
            signal.raise_signal(signal.SIGALRM)
        assert stops.signum == signal.SIGALRM
    finally:
        signal.signal(signal.SIGALRM, previous)


def test_a_run_stops_for_the_first_of_the_signals_held_while_its_ranks_joined(monkeypatch):
    """Under an MPI launcher `hold_signals` records the signals that come before the run's
    `StopSignals` takes them over (a rank that ended alone would leave the others in `MPI_Init` for
    ever); the run then stops for the first of them, as it would had it caught them itself: SIGTERM
    then SIGINT held is a stop by SIGTERM."""
    from nbsymple_versions.runs import signals
    monkeypatch.setattr(signals, "_HELD", [])
    before = {sig: signal.getsignal(sig) for sig in signals.STOPPING}
    try:
        signals.hold_signals()
        signal.raise_signal(signal.SIGTERM)
        signal.raise_signal(signal.SIGINT)
        with signals.StopSignals() as stops:
            assert stops.signum == signal.SIGTERM
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGINT, signal.SIGTERM, signal.SIGXCPU, signal.SIGUSR1,
                                    signal.SIGUSR2, signal.SIGALRM])
@pytest.mark.parametrize("ignored", [False, True])
def test_a_signal_stops_a_checkpointed_run_after_its_step_unless_the_run_was_started_ignoring_it(
        tmp_path, capsys, monkeypatch, signum, ignored):
    """SIGHUP (a closed terminal, a dropped ssh session), SIGXCPU (a CPU-time limit's soft
    limit), SIGUSR1 and SIGUSR2 (a batch system's warning before the job's time is up: they
    killed the run without its last checkpoint, found by hand) and SIGALRM (`timeout -s ALRM`, a
    scheduler's end of time: the same, a hunt's leftover) stop a checkpointed run as SIGINT
    and SIGTERM do: after the step under way (here
    step 6 of 9), a last checkpoint of that step, status 128 + the signal and one sentence
    saying how to go on. SIGXCPU comes again every CPU second until the hard limit: sent twice
    here, the repeat is not a second signal (which would stop at once, without that checkpoint).
    A run started ignoring the signal (`nohup`, a background job of a script) keeps ignoring it
    and runs to its end."""
    from nbsymple_versions.runs import driver
    write = driver.write_snapshot

    def write_then_signal(folder, state, step, *a):
        path = write(folder, state, step, *a)
        if step == 6:
            for _ in range(2 if signum == signal.SIGXCPU else 1):
                signal.raise_signal(signum)
        return path
    monkeypatch.setattr(driver, "write_snapshot", write_then_signal)
    ck = tmp_path / "run.ck"
    previous = signal.signal(signum, signal.SIG_IGN if ignored else signal.SIG_DFL)   # as a terminal's process has it
    try:
        if signum == signal.SIGINT and not ignored:
            signal.signal(signum, signal.default_int_handler)
        rc, out, err = main(capsys, "run", "--n", 24, "--seed", 4, "--steps", 9, "--every", 3, "--snapshots",
                            tmp_path / "snaps", "--checkpoint", ck, "--checkpoint-every", 4)
        assert signal.getsignal(signum) is (signal.SIG_IGN if ignored else
                                            signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL)
    finally:
        signal.signal(signum, previous)
    if ignored:
        assert rc == 0 and load(ck)[1]["steps_done"] == 9, err
    else:
        name = signal.Signals(signum).name
        assert rc == 128 + signum and load(ck)[1]["steps_done"] == 6, err
        assert err == f"nbsymple run: stopped by {name} after step 6 of 9; checkpoint written to {ck}; " \
                      f"continue with: nbsymple run --resume {ck}\n", err


def test_a_second_signal_stops_a_checkpointed_run_at_once_keeping_its_last_checkpoint(tmp_path, capsys, monkeypatch):
    """The first SIGTERM waits for the end of the step under way; a second, before the run stops (here
    both in step 6's snapshot), stops it at once, without the checkpoint of that step: the one of step 4
    is kept and named (a mutation hunt: a second signal that waited like the first passed every test)."""
    from nbsymple_versions.runs import driver
    write = driver.write_snapshot

    def write_then_signal_twice(folder, state, step, *a):
        path = write(folder, state, step, *a)
        if step == 6:
            signal.raise_signal(signal.SIGTERM)
            signal.raise_signal(signal.SIGTERM)
        return path
    monkeypatch.setattr(driver, "write_snapshot", write_then_signal_twice)
    ck = tmp_path / "run.ck"
    previous = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        rc, out, err = main(capsys, "run", "--n", 24, "--seed", 4, "--steps", 9, "--every", 3, "--snapshots",
                            tmp_path / "snaps", "--checkpoint", ck, "--checkpoint-every", 4)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert rc == 128 + signal.SIGTERM and load(ck)[1]["steps_done"] == 4, err
    assert err.startswith("nbsymple run: stopped by SIGTERM after step 6 of 9, while its output was written; "
                          f"the last good checkpoint, {ck} (step 4), is kept"), err       # not "during step 7"


def _signalled_in_step_6(capsys, monkeypatch, signals: int, *argv):
    """(status, stdout, stderr) of `nbsymple run --n 24 --seed 4 --steps 9 ARGV` with `signals`
    SIGTERMs raised inside step 6's force evaluation (leapfrog: one a step, after the warm-up's)."""
    accelerations, calls = ForcePipeline.accelerations, [0]

    def signalled(self, x, out):
        accelerations(self, x, out)
        calls[0] += 1
        if calls[0] == 1 + 6:
            for _ in range(signals):
                signal.raise_signal(signal.SIGTERM)
    monkeypatch.setattr(ForcePipeline, "accelerations", signalled)
    previous = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        return main(capsys, "run", "--n", 24, "--seed", 4, "--steps", 9, *argv)
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_second_signal_inside_a_step_names_that_step(tmp_path, capsys, monkeypatch):
    """Two SIGTERMs inside step 6's force evaluation: the run stops at once, during step 6, and
    keeps the checkpoint of step 4 (beside the test above, whose stop came after step 6, in its
    snapshot)."""
    ck = tmp_path / "run.ck"
    rc, out, err = _signalled_in_step_6(capsys, monkeypatch, 2, "--checkpoint", ck, "--checkpoint-every", 4)
    assert rc == 128 + signal.SIGTERM and load(ck)[1]["steps_done"] == 4, err
    assert err.startswith(f"nbsymple run: stopped by SIGTERM during step 6 of 9; the last good checkpoint, {ck} "
                          "(step 4), is kept"), err


def test_one_signal_inside_a_step_of_a_run_without_a_checkpoint_stops_it_at_once(tmp_path, capsys, monkeypatch):
    """A run without --checkpoint has nothing to write on a signal: the first SIGTERM, inside
    step 6, stops it at once, during that step, saying that it cannot be resumed (a mutation
    hunt: one that waited, as in a checkpointed run, ran every step and stopped the report)."""
    rc, out, err = _signalled_in_step_6(capsys, monkeypatch, 1)
    assert rc == 128 + signal.SIGTERM and out == "", err
    assert err == "nbsymple run: stopped by SIGTERM during step 6 of 9 (no --checkpoint: it cannot be resumed)\n", err


def test_a_resumed_runs_progress_counts_the_steps_left(tmp_path, capsys):
    """`--progress` of a run resumed at step 4 of 10: 6 steps to go, counted 1 to 6 and ending at 100 %
    (a mutation hunt: counted from step 0, it said 10/6 (167 %), and passed every test)."""
    ck = tmp_path / "run.ck"
    rc, _, err = main(capsys, "run", "--n", 16, "--seed", 4, "--steps", 4, "--checkpoint", ck)
    assert rc == 0, err
    rc, _, err = main(capsys, "run", "--resume", ck, "--steps", 10, "--progress")
    counts = [tuple(map(int, m)) for m in re.findall(r"step (\d+)/(\d+) \(", err)]
    assert rc == 0 and counts and all(done <= total == 6 for done, total in counts), err
    assert counts[-1] == (6, 6) and "(100 %)" in err, err


def test_a_run_that_was_stopped_and_continued_says_its_times_include_the_stop(tmp_path, capsys, monkeypatch):
    """Ctrl-Z and `fg`, `kill -STOP` and `-CONT`, a batch system suspending the job: the run's
    seconds per step are wall-clock time and include the time it stood still (0.28 ms against
    0.18 ms, stopped 3 s, found by hand), which the report gave as the run's speed. Now the text
    says so beside them, and the JSON counts the stops (`stopped_and_continued`; 0 for a run never
    stopped). The SIGCONT is raised here after step 3, as the kernel delivers it."""
    from nbsymple_versions.runs import driver
    write = driver.write_snapshot

    def write_then_continue(folder, state, step, *a):
        path = write(folder, state, step, *a)
        if step == 3:
            signal.raise_signal(signal.SIGCONT)
        return path
    monkeypatch.setattr(driver, "write_snapshot", write_then_continue)
    rc, out, err = main(capsys, "run", "--n", 16, "--seed", 4, "--steps", 6, "--every", 3, "--snapshots",
                        tmp_path / "a")
    assert rc == 0 and "(it was stopped and continued 1 time: its times include the time it stood still)" in out, out
    rc, out, err = main(capsys, "run", "--n", 16, "--seed", 4, "--steps", 6, "--every", 3, "--snapshots",
                        tmp_path / "b", "--json")
    assert rc == 0 and json.loads(out)["stopped_and_continued"] == 1, out
    monkeypatch.undo()
    rc, out, err = main(capsys, "run", "--n", 16, "--seed", 4, "--steps", 6, "--json")
    assert rc == 0 and json.loads(out)["stopped_and_continued"] == 0, out
    assert signal.getsignal(signal.SIGCONT) is signal.SIG_DFL          # the command's handler is gone with it


def test_a_resumed_run_reports_every_sessions_stops_and_devices(tmp_path, capsys, monkeypatch):
    """A hunt: a run stopped and continued, then resumed, reported 0 stops though its times (kept
    by the checkpoint) held the stop; a stop during the set-up was said to be in the times; a run
    resumed on other threads named only the last session's; the JSON gave no final time nor
    scale, `--steps 0` shares summing to 0, and a drawn seed was written to no file."""
    from nbsymple_versions.runs import driver
    write, build = driver.write_snapshot, driver.Simulation.restore

    def write_then_continue(folder, state, step, *a):
        path = write(folder, state, step, *a)
        if step == 3:
            signal.raise_signal(signal.SIGCONT)          # while stepping: in the times
        return path
    from nbsymple_versions.instruments.provenance import code_version
    from nbsymple_versions.serial.kernels import compiled_for
    made = Simulation(make_cluster(8, seed=1), "A", diagnostics=False)
    code = f"; code for {compiled_for()}; {code_version()}"     # the commit: another may round otherwise
    now, before = f"{made.device}; threads: {made.threads}{code}", f"{made.device}; threads: 7{code}"
    monkeypatch.setattr(driver, "write_snapshot", write_then_continue)
    monkeypatch.setattr(Simulation, "threads", property(lambda self: 7))
    ck = tmp_path / "a.ck"
    rc, out, err = main(capsys, "run", "--n", 16, "--seed", 4, "--steps", 3, "--every", 3, "--snapshots",
                        tmp_path / "a", "--checkpoint", ck, "--json")
    first = json.loads(out)
    assert rc == 0 and first["stopped_and_continued"] == 1 and first["devices_by_session"] == [before]
    monkeypatch.undo()

    def continue_then_build(*a):
        signal.raise_signal(signal.SIGCONT)              # during the set-up: not in the times
        return build(*a)
    monkeypatch.setattr(driver.Simulation, "restore", continue_then_build)
    rc, out, err = main(capsys, "run", "--resume", ck, "--steps", 6)
    assert rc == 0 and "(it was stopped and continued 1 time: its times include the time it stood still)" in out
    assert f"device: {now} (earlier sessions: {before})" in out, out
    rc, out, err = main(capsys, "run", "--resume", ck, "--steps", 6, "--json")
    resumed = json.loads(out)
    assert resumed["devices_by_session"] == [before, now] and resumed["code"] == code_version(), resumed
    assert resumed["code"].startswith("commit ") and resumed["code"] != "commit unknown"      # a git checkout
    assert resumed["t"] == 6 * resumed["dt"] and resumed["t_myr"] > 0, resumed
    assert (resumed["r_cl_pc"], resumed["mass_msun"]) == (10.0, 15360.0), resumed
    rc, out, err = main(capsys, "run", "--n", 16, "--steps", 0, "--snapshots", tmp_path / "drawn", "--json")
    drawn = json.loads(out)
    assert rc == 0 and drawn["task_shares"] is None and drawn["seconds_per_step"] is None, drawn
    record = json.loads((tmp_path / "drawn" / "nbsymple-run.json").read_text())
    assert drawn["seed_chosen"] and record["seed"] == drawn["seed"] is not None, record


def test_a_run_resumed_by_another_commit_names_both(tmp_path, capsys, monkeypatch):
    """Another commit may round otherwise (470da02's halo pull moved velocities by an ulp, and the
    chaotic default tidal run then ended at a tenth of the former error): a run it resumes goes on
    within rounding, not bit for bit, and the report names each session's commit as it names
    their CPUs."""
    from nbsymple_versions.runs import report as run_report
    ck = tmp_path / "a.ck"
    rc, out, err = main(capsys, "run", "--n", 16, "--seed", 4, "--steps", 2, "--checkpoint", ck, "--json")
    first = json.loads(out)
    assert rc == 0 and first["devices_by_session"][0].endswith("; " + first["code"]), first
    monkeypatch.setattr(run_report, "code_version", lambda: "commit 0badc0de")
    rc, out, err = main(capsys, "run", "--resume", ck, "--steps", 4)
    assert rc == 0 and "; commit 0badc0de (earlier sessions: " in out and f"; {first['code']})" in out, out


# ------------------------------------------------------------------ damaged files

@pytest.fixture
def small_checkpoint(tmp_path):
    sim = Simulation(make_cluster(2, seed=1), "A", "leapfrog", "dp", 1e-3)
    sim.step(3)
    return save(tmp_path / "small.ck", {"run_id": "x", "n": 2, "steps": 3}, sim)


def test_a_checkpoint_reads_back_what_was_written(small_checkpoint):
    run, record, state = load(small_checkpoint)
    assert run == {"run_id": "x", "n": 2, "steps": 3} and record["steps_done"] == 3 and state.n == 2
    assert state.t == 3e-3 and state.x.flags.writeable and state.x.flags.c_contiguous
    assert small_checkpoint.read_bytes().startswith(MAGIC)


def test_every_truncation_and_every_flipped_byte_is_refused(small_checkpoint, tmp_path):
    data = small_checkpoint.read_bytes()
    bad = tmp_path / "bad.ck"
    for cut in range(len(data)):
        bad.write_bytes(data[:cut])
        with pytest.raises(CheckpointError, match="bad.ck"):
            load(bad)
    for i in range(len(data)):
        flipped = bytearray(data)
        flipped[i] ^= 0x40
        bad.write_bytes(bytes(flipped))
        with pytest.raises(CheckpointError, match="bad.ck"):
            load(bad)


def test_future_format_and_other_files_are_refused(small_checkpoint, tmp_path):
    data = bytearray(small_checkpoint.read_bytes()[:-32])
    data[len(MAGIC):len(MAGIC) + 4] = (FORMAT + 1).to_bytes(4, "little")
    future = tmp_path / "future.ck"
    future.write_bytes(bytes(data) + hashlib.sha256(data).digest())
    with pytest.raises(CheckpointError, match=f"format {FORMAT + 1}, newer"):
        load(future)
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    for path, words in [(text, "not an nbsymple checkpoint"), (tmp_path / "nowhere.ck", "does not exist"),
                        (tmp_path, "is a folder"), (small_checkpoint.with_name("empty.ck"), "empty")]:
        if path.name == "empty.ck":
            path.write_bytes(b"")
        with pytest.raises(CheckpointError, match=words):
            load(path)


def test_the_command_refuses_a_damaged_checkpoint_and_overwrites_nothing(small_checkpoint, tmp_path, capsys):
    data = small_checkpoint.read_bytes()
    bad = tmp_path / "bad.ck"
    for cut in (0, 10, 40, len(data) // 2, len(data) - 1):
        bad.write_bytes(data[:cut])
        rc, out, err = main(capsys, "run", "--resume", bad, "--snapshots", tmp_path / "snaps", "--json")
        assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and "bad.ck" in err, err
        assert bad.read_bytes() == data[:cut] and not (tmp_path / "snaps").exists()
    rc, _, err = main(capsys, "run", "--n", 8, "--steps", 1, "--checkpoint", small_checkpoint)
    assert rc == 2 and "already exists" in err and small_checkpoint.read_bytes() == data
    rc, _, err = main(capsys, "run", "--resume", small_checkpoint, "--n", 16)
    assert rc == 2 and "--n cannot be given" in err
    rc, _, err = main(capsys, "run", "--n", 8, "--checkpoint-every", 3)
    assert rc == 2 and "needs --checkpoint" in err


# ------------------------------------------------------------------ non-finite values

def test_a_nan_stops_the_run_at_its_step_and_keeps_the_last_good_checkpoint(tmp_path, capsys, monkeypatch):
    """NaN in body 5's acceleration at step 7 (leapfrog: one force evaluation per step, after
    the warm-up's one): exit 3 naming step 7 and body 5; the checkpoint of step 6 is intact;
    no snapshot holds a bad state."""
    accelerations = ForcePipeline.accelerations
    calls = {"n": 0}

    def poisoned(self, x, out):
        accelerations(self, x, out)
        calls["n"] += 1
        if calls["n"] == 1 + 7:
            out[:, 5] = np.nan
    monkeypatch.setattr(ForcePipeline, "accelerations", poisoned)
    ck = tmp_path / "run.ck"
    rc, out, err = main(capsys, "run", "--n", 16, "--seed", 1, "--steps", 20, "--checkpoint", ck,
                        "--checkpoint-every", 2, "--snapshots", tmp_path / "s", "--every", 1, "--json")
    assert rc == 3 and out == ""
    assert "step 7 " in err and "body 5" in err and "acceleration" in err and "run.ck (step 6)" in err, err
    assert len(err.strip().splitlines()) == 1
    _, record, state = load(ck)
    assert record["steps_done"] == 6 and np.isfinite(state.x).all() and np.isfinite(state.v).all()
    assert [read_snapshot(p)[1] for p in list_snapshots(tmp_path / "s")] == list(range(7))


def test_the_simulation_names_the_step_and_the_bodies():
    sim = Simulation(make_cluster(16, seed=2), "B", "leapfrog", "dp", 1e-3, diagnostics=False)
    accelerations, calls = sim.forces.accelerations, []

    def overflowing(x, out):
        accelerations(x, out)
        calls.append(1)
        if len(calls) == 4:
            out[0, [2, 9]] = np.inf
    sim.forces.accelerations = overflowing
    with pytest.raises(NonFiniteState, match=r"step 4 left a non-finite position, velocity and acceleration "
                                             r"in bodies 2, 9$") as e:
        sim.step(10)
    assert e.value.step == 4 and e.value.bodies == [2, 9] and sim.steps_done == 4


def test_a_checkpoint_that_disagrees_with_itself_in_either_direction_is_refused(small_checkpoint, tmp_path):
    """Format 0 (no format this suite wrote), E0's mass below the masses' sum (not only above
    it) or above it by 1e-6, velocities of another shape than the positions, a negative task time
    and more steps done than the run's: each is refused by `load`, under a matching checksum (a
    mutation hunt: a one-sided mass check, format 0 read as 1 and a negative clock passed every
    test; a later one: a mass check of 1e-3 and no check of the steps)."""
    from test_hostile import seal, split_checkpoint
    version, header, arrays = split_checkpoint(small_checkpoint.read_bytes())
    state = load(small_checkpoint)[2]

    def lighter(h):
        h["simulation"]["energy_parts0"]["mass"] *= 0.5

    def a_body_heavier(h):           # one body of a thousand 0.1 % heavier: E0 of another cluster
        h["simulation"]["energy_parts0"]["mass"] *= 1 + 1e-6

    def ahead(h):                    # more steps done than the run has
        h["run"]["steps"] = h["simulation"]["steps_done"] - 1

    def negative(h):
        h["simulation"]["clock"]["seconds"]["pairwise"] = -1.0

    def short_v(h):
        h["arrays"] = [["x", list(state.x.shape)], ["v", [3, 1]], ["m", list(state.m.shape)]]
    short = b"".join(np.ascontiguousarray(a, "<f8").tobytes() for a in (state.x, state.v[:, :1], state.m))
    for case, fmt, change, body in (("format-0", 0, None, arrays), ("lighter", version, lighter, arrays),
                                    ("heavier", version, a_body_heavier, arrays), ("ahead", version, ahead, arrays),
                                    ("negative", version, negative, arrays), ("short-v", version, short_v, short)):
        h = json.loads(json.dumps(header))
        if change is not None:
            change(h)
        (made := tmp_path / f"{case}.ck").write_bytes(seal(fmt, json.dumps(h).encode(), body))
        with pytest.raises(CheckpointError, match=f"{case}.ck"):
            load(made)


def test_a_checkpoint_whose_two_bodies_are_at_one_point_is_refused(small_checkpoint, tmp_path):
    """Two bodies at one point are no cluster, as no N bodies at one point are: `load` refuses it under a
    matching checksum (a mutation hunt: the check began at three bodies)."""
    from test_hostile import seal, split_checkpoint
    version, header, _ = split_checkpoint(small_checkpoint.read_bytes())
    state = load(small_checkpoint)[2]
    x = np.repeat(state.x[:, :1], 2, axis=1)
    body = b"".join(np.ascontiguousarray(a, "<f8").tobytes() for a in (x, state.v, state.m))
    (made := tmp_path / "one-point.ck").write_bytes(seal(version, json.dumps(header).encode(), body))
    with pytest.raises(CheckpointError, match=r"one-point.ck .*not every body is at one point"):
        load(made)


def test_a_run_of_seed_0_checkpoints_and_resumes(tmp_path, capsys):
    """Seed 0 is a seed (`--seed` takes a whole number from 0): a run of it checkpoints and resumes (a
    mutation hunt: the checkpoint's seed checked from 1 passed)."""
    ck = tmp_path / "a.ck"
    rc, _, err = main(capsys, "run", "--n", 8, "--seed", 0, "--steps", 2, "--checkpoint", ck)
    assert rc == 0, err
    rc, _, err = main(capsys, "run", "--resume", ck, "--steps", 4)
    assert rc == 0 and load(ck)[1]["steps_done"] == 4 and load(ck)[0]["seed"] == 0, err


def test_a_checkpoint_whose_header_is_longer_than_the_file_is_refused_in_one_sentence(small_checkpoint, tmp_path):
    """A header length beyond the file's size, under a matching checksum, is refused before anything is read
    (a mutation hunt: read as it said, 2**40 bytes ended `load` in a MemoryError)."""
    from test_hostile import seal, split_checkpoint
    version, header, arrays = split_checkpoint(small_checkpoint.read_bytes())
    long = tmp_path / "long.ck"
    long.write_bytes(seal(version, json.dumps(header).encode(), arrays, head_len=2 ** 40))
    with pytest.raises(CheckpointError, match=r"long.ck is not a valid checkpoint \(format 1, header of 1099511627776 "
                                              r"bytes\)"):
        load(long)


def test_a_checkpoint_whose_run_lacks_its_snapshot_cadence_is_refused(tmp_path, capsys):
    """run.every, which every checkpoint of this suite holds (null where no --every was given), missing is no
    run a resume can step: refused in one sentence, under a matching checksum (a mutation hunt: it was taken
    as null, as a field older files lack is)."""
    from test_hostile import seal, split_checkpoint
    ck = tmp_path / "a.ck"
    rc, _, err = main(capsys, "run", "--n", 8, "--seed", 4, "--steps", 2, "--checkpoint", ck)
    assert rc == 0, err
    version, header, arrays = split_checkpoint(ck.read_bytes())
    run = {k: v for k, v in header["run"].items() if k != "every"}
    ck.write_bytes(seal(version, json.dumps({**header, "run": run}).encode(), arrays))
    rc, out, err = main(capsys, "run", "--resume", ck, "--steps", 4)
    assert rc == 2 and out == "" and f"{ck} is not a valid checkpoint (field run.every: missing)" in err, err


@pytest.mark.parametrize("field, value", [("seed", -5), ("seed", 2**128), ("constants", "authors"), ("constants", 5),
                                          ("ics_sha256", [1]), ("ics_radius_pc", "10"), ("ics_mass_msun", -480.0),
                                          ("checkpoint_every", 0)])
def test_a_run_field_the_record_takes_is_checked_on_resume(tmp_path, capsys, field, value):
    """A hunt: a checkpoint's run.seed (-5: "seed -5" reported, which --seed refuses), run.constants (other
    than its state's) and an --ics file's digest and scale were taken whatever they held, into the report
    and the snapshot folder's record; each is refused now, under a matching checksum. So is a checkpoint
    cadence of 0, which --checkpoint-every refuses (a mutation hunt: taken, then divided by)."""
    from test_hostile import seal, split_checkpoint
    ck = tmp_path / "a.ck"
    rc, _, err = main(capsys, "run", "--n", 8, "--seed", 4, "--steps", 2, "--checkpoint", ck)
    assert rc == 0, err
    version, header, arrays = split_checkpoint(ck.read_bytes())
    ck.write_bytes(seal(version, json.dumps({**header, "run": {**header["run"], field: value}}).encode(), arrays))
    rc, out, err = main(capsys, "run", "--resume", ck, "--steps", 4)
    assert rc == 2 and out == "" and f"{ck} is not a valid checkpoint (" in err and f"run.{field}" in err, err


def test_a_resume_takes_a_new_snapshot_and_checkpoint_cadence(tmp_path, capsys):
    """`--resume FILE --every K --checkpoint-every J` changes the cadences for the rest of the run
    (a mutation hunt: ignoring either given on a resume passed, no test resuming with them)."""
    ck, snaps = tmp_path / "a.ck", tmp_path / "snaps"
    rc, _, err = main(capsys, "run", "--n", 16, "--seed", 4, "--steps", 3, "--every", 3, "--snapshots", snaps,
                      "--checkpoint", ck)
    assert rc == 0, err
    rc, _, err = main(capsys, "run", "--resume", ck, "--steps", 6, "--every", 1, "--checkpoint-every", 2)
    assert rc == 0, err
    assert [read_snapshot(p)[1] for p in list_snapshots(snaps)] == [0, 3, 4, 5, 6]
    run = load(ck)[0]
    assert (run["every"], run["checkpoint_every"], run["steps"]) == (1, 2, 6), run
