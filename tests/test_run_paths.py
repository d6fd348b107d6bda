"""A run owns its paths and every failure ends in one sentence, losing nothing: empty paths,
two runs on one path, a run killed before its first checkpoint, a full disk, a folder removed
mid-run, a broken pipe. Runs go through `nbsymple run` (in this process where nothing kills it,
else a child)."""
import errno
import json
import os
from pathlib import Path
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from cli_call import call
from nbsymple_versions.runs.checkpoint import load, temporary_files
from nbsymple_versions.runs.snapshots import list_snapshots, read_snapshot, snapshot_run_id

REPO = Path(__file__).resolve().parents[1]
RUN = [sys.executable, "-m", "nbsymple_versions.cli", "run"]
LONG = ["--n", "64", "--steps", "2000000", "--seed", "3"]     # minutes at least: ended by the tests, never done


def one_sentence(err: str) -> bool:
    return len(err.strip().splitlines()) == 1 and "Traceback" not in err


def start(args, cwd) -> subprocess.Popen:
    return subprocess.Popen(RUN + [str(a) for a in args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def wait_for(condition, seconds=120):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


def checkpoint_step(path: Path) -> int:
    try:
        return int(load(path)[1]["steps_done"])
    except Exception:       # noqa: BLE001 - not written yet
        return -1


@pytest.mark.parametrize("option", ["--snapshots", "--checkpoint", "--resume", "--ics"])
def test_an_empty_path_is_refused_not_taken_as_none_or_here(tmp_path, option, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, out, err = call(["run", "--n", 8, "--steps", 1, option, ""])
    assert rc == 2 and out == "" and one_sentence(err) and "needs a file or folder name, got ''" in err
    assert list(tmp_path.iterdir()) == []


def test_checkpoint_and_snapshots_on_one_path_is_one_sentence(tmp_path):
    same = tmp_path / "same"
    rc, out, err = call(["run", "--n", 8, "--steps", 1, "--snapshots", same, "--checkpoint", same])
    assert rc == 2 and one_sentence(err) and "names a folder (the snapshot folder)" in err, err
    assert not same.exists()


@pytest.mark.parametrize("kind", ["a file", "a FIFO (named pipe)"])
@pytest.mark.parametrize("option, path", [("--snapshots", "file.txt"), ("--checkpoint", "file.txt/c.ck"),
                                          ("--snapshots", "file.txt/s")])
def test_a_file_where_a_folder_is_wanted_is_named_as_one(tmp_path, option, path, kind):
    """`--snapshots file.txt` and `--checkpoint file.txt/c.ck` said "File exists" (mkdir's EEXIST,
    found by hand), `--snapshots file.txt/s` "Not a directory". The file is left as it was. A FIFO
    there was "a file" too."""
    if kind == "a file":
        (tmp_path / "file.txt").write_text("a file\n")
    else:
        os.mkfifo(tmp_path / "file.txt")
    rc, out, err = call(["run", "--n", 8, "--steps", 1, option, tmp_path / path])
    assert rc == 2 and one_sentence(err), err
    assert (f"it is {kind}, not a folder" if path.count("/") == 0 or option == "--checkpoint"
            else f"a folder on its path is {kind} ({tmp_path / 'file.txt'})") in err, err
    assert sorted(tmp_path.iterdir()) == [tmp_path / "file.txt"]
    assert kind != "a file" or (tmp_path / "file.txt").read_text() == "a file\n"


@pytest.mark.parametrize("option", ["--snapshots", "--checkpoint"])
def test_a_dangling_link_to_a_folder_not_there_is_refused(tmp_path, option):
    """`--snapshots data`, data a link to a disk not mounted here (/scratch/run1), made the link's
    whole path on this disk and wrote the run there in silence, as did `--checkpoint` through such a
    link (a hunt): refused, nothing made. A link to a checkpoint not yet written, in a folder that is
    there, is written through as before."""
    target = tmp_path / "unmounted" / "run1" / ("c.ck" if option == "--checkpoint" else "snaps")
    (tmp_path / "link").symlink_to(target)
    more = ["--every", "1"] if option == "--snapshots" else []
    rc, out, err = call(["run", "--n", "8", "--steps", "1", *more, option, tmp_path / "link"])
    assert rc == 2 and one_sentence(err) and f"is a dangling symbolic link to {target}" in err, err
    assert not (tmp_path / "unmounted").exists()
    if option == "--checkpoint":
        target.parent.mkdir(parents=True)
        rc, out, err = call(["run", "--n", "8", "--steps", "1", option, tmp_path / "link"])
        assert rc == 0 and target.is_file(), err


@pytest.mark.parametrize("option, name", [("--snapshots", "link/snaps"), ("--checkpoint", "link/c.ck")])
def test_a_dangling_link_on_the_path_of_a_folder_made_is_refused(tmp_path, option, name):
    """`--snapshots data/run1` or `--checkpoint data/c.ck`, data a link to a disk not mounted here,
    made the link's whole path on this disk and wrote the run there in silence, where `--snapshots
    data` was refused (a review): refused, naming the link, nothing made."""
    target = tmp_path / "unmounted" / "run1"
    (tmp_path / "link").symlink_to(target)
    more = ["--every", "1"] if option == "--snapshots" else []
    rc, out, err = call(["run", "--n", "8", "--steps", "1", *more, option, tmp_path / name])
    assert rc == 2 and one_sentence(err) and f"({tmp_path / 'link'}) is a dangling symbolic link to {target}" in err
    assert not (tmp_path / "unmounted").exists()


def test_two_runs_on_one_folder_and_checkpoint_never_both_succeed(tmp_path):
    folder, ck = tmp_path / "snaps", tmp_path / "run.ck"
    first = start([*LONG, "--every", "50", "--snapshots", folder, "--checkpoint", ck, "--checkpoint-every", "50"],
                  tmp_path)
    wait_for(lambda: checkpoint_step(ck) >= 0)
    for clash in (["--snapshots", folder], ["--checkpoint", ck], ["--resume", ck]):
        args = clash if clash[0] == "--resume" else ["--n", "64", "--steps", "10", "--seed", "4", *clash]
        rc, out, err = call(["run", *args])
        assert rc == 2 and out == "" and one_sentence(err), (clash, err)
        assert f"is in use by another run (process {first.pid})" in err, (clash, err)
    first.send_signal(signal.SIGTERM)
    _, err = first.communicate(timeout=120)
    assert first.returncode == 143 and "continue with: nbsymple run --resume" in err, err
    run_id = load(ck)[0]["run_id"]
    assert all(snapshot_run_id(p) == run_id for p in list_snapshots(folder))      # whole, and all the first run's
    assert not temporary_files(ck)


def test_a_lock_file_left_by_a_longer_process_id_names_its_holder_alone(tmp_path):
    """A lock file holds its holder's process id alone, whatever an ended holder of a longer id left in it: a
    second taker is refused naming the holder (a mutation hunt: the old id's tail, kept after the new one,
    made the holder "unknown")."""
    from nbsymple_versions.runs.locks import PathBusy, hold, lock_file
    path = tmp_path / "run.ck"
    lock_file(path, False).write_text("123456789012\n")
    with hold(path, "checkpoint") as unlocked:
        assert unlocked is None and lock_file(path, False).read_text() == f"{os.getpid()}\n"
        with pytest.raises(PathBusy, match=rf"checkpoint {path} is in use by another run \(process {os.getpid()}\)"):
            with hold(path, "checkpoint"):
                pass


def test_temporaries_of_a_longer_checkpoint_name_are_not_this_runs(tmp_path):
    (tmp_path / ".c1.ck.v2.123.abc.tmp").write_text("another run's, in flight")
    (tmp_path / ".c1.ck.456.def.tmp").write_text("this name's")
    assert [p.name for p in temporary_files(tmp_path / "c1.ck")] == [".c1.ck.456.def.tmp"]


def test_a_run_killed_before_its_first_checkpoint_restarts_with_the_same_command(tmp_path):
    folder = tmp_path / "snaps"
    args = [*LONG, "--every", "20", "--snapshots", folder]
    killed = start(args, tmp_path)
    wait_for(lambda: len(list_snapshots(folder)) >= 2)
    killed.kill()
    killed.wait(timeout=60)
    rc, out, err = call(["run", "--n", "64", "--steps", "40", "--seed", "3", "--snapshots", folder])  # not the same
    assert rc == 2 and "already holds snapshots of another run" in err
    args[args.index(LONG[3])] = "40"         # the same command but for how far it goes
    rc, out, err = call(["run", *[str(a) for a in args]])
    assert rc == 0, err
    steps = [read_snapshot(p)[1] for p in list_snapshots(folder)]
    assert steps == [0, 20, 40]
    assert json.loads((folder / "nbsymple-run.json").read_text())["finished"] is True


def test_bodies_from_files_that_differ_in_anything_are_another_runs():
    """`State.digest`, by which a killed run from --ics FILE is restarted by the same command (its
    snapshots replaced) and `Simulation.restore` knows its state: files of one name holding other positions,
    velocities, masses, softening, time or scale are other runs (a mutation hunt: a digest without the
    velocities passed every test)."""
    import dataclasses
    from nbsymple_versions import Units, make_cluster
    state = make_cluster(8, seed=1)
    others = [dataclasses.replace(state.copy(), **change) for change in
              ({"x": state.x * (1 + 1e-15)}, {"v": state.v * (1 + 1e-15)}, {"m": state.m * (1 + 1e-15)},
               {"eps": state.eps * 2}, {"t": 0.5}, {"units": Units(10, 480)})]
    digests = [s.digest() for s in (state, state.copy(), *others)]
    assert digests[0] == digests[1] and len(set(digests)) == len(others) + 1


def _fault_run(tmp_path, folder, steps=200000):
    """A long run writing a snapshot every step into `folder`, its checkpoint beside the test."""
    ck = tmp_path / "run.ck"
    return ck, start([*LONG[:2], "--steps", steps, *LONG[4:], "--every", "1", "--snapshots", folder, "--checkpoint",
                      ck, "--checkpoint-every", "25"], tmp_path)


def _assert_fault_sentence(job, ck, expect, then=""):
    _, err = job.communicate(timeout=120)
    assert job.returncode == 4 and one_sentence(err), (job.returncode, err)
    done = checkpoint_step(ck)
    assert any(e in err for e in expect) and f"the last good checkpoint, {ck} (step {done}), is kept" in err, err
    assert f"continue with: nbsymple run --resume {ck}{then}" in err and done >= 25
    assert not temporary_files(ck)
    return done


def test_a_snapshot_folder_removed_mid_run_ends_in_one_sentence(tmp_path):
    folder = tmp_path / "snaps"
    ck, job = _fault_run(tmp_path, folder)
    wait_for(lambda: checkpoint_step(ck) >= 25)
    folder.rename(tmp_path / "gone")          # atomic: the run's folder is gone at once
    shutil.rmtree(tmp_path / "gone", ignore_errors=True)
    # seen before a write (`locks.moved`), or by the write itself where the rename came between
    done = _assert_fault_sentence(job, ck, ["was renamed or removed while the run held it",
                                            "No such file or directory"],
                                  then=" --snapshots DIR (where the folder is now")
    rc, out, err = call(["run", "--resume", ck, "--steps", done + 30])      # (a hunt: the hint said this alone)
    assert rc == 2 and "give --snapshots DIR for the rest of its snapshots" in err, err
    rc, out, err = call(["run", "--resume", ck, "--steps", done + 30, "--snapshots", tmp_path / "again"])
    assert rc == 0, err


def test_a_full_disk_ends_in_one_sentence_naming_the_checkpoint(tmp_path):
    """Snapshots into a 100 MB tmpfs (root: a real ENOSPC from the kernel), with room for the
    run's 20000 snapshots (72 MB) when it starts, filled by another file once it has
    checkpointed (a run that cannot fit is refused at the start)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=100m", "tmpfs", str(disk)], capture_output=True)
    assert mounted.returncode == 0, f"this test mounts a tmpfs and needs root: {mounted.stderr.decode()}"
    try:
        ck, job = _fault_run(tmp_path, disk / "snaps", steps=20000)
        wait_for(lambda: checkpoint_step(ck) >= 25)
        with open(disk / "another", "wb", buffering=0) as other:      # another process fills the disk
            try:
                while True:
                    other.write(bytes(1 << 20))
            except OSError:
                pass
        done = _assert_fault_sentence(job, ck, ["No space left on device"])
        assert not [p for p in (disk / "snaps").iterdir() if p.name.endswith(".tmp")]     # nothing partial
        ok = list_snapshots(disk / "snaps")
        assert ok and all(read_snapshot(p)[1] >= 0 for p in ok)
        state, _ = read_snapshot(ok[-1])
        assert np.isfinite(state.x).all()
    finally:
        subprocess.run(["umount", str(disk)], check=True)
    rc, _, err = call(["run", "--resume", ck, "--steps", done + 10, "--snapshots", tmp_path / "roomy"])
    assert rc == 0, err


@pytest.mark.parametrize("argv", [["info"], ["run", "--n", "16", "--steps", "2", "--json"]])
def test_a_broken_pipe_is_quiet(argv):
    reader = subprocess.Popen(["head", "-c", "1"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    p = subprocess.run([sys.executable, "-m", "nbsymple_versions.cli", *argv], cwd=REPO, stdout=reader.stdin,
                       stderr=subprocess.PIPE, text=True, timeout=300)
    reader.stdin.close()
    reader.wait()
    assert p.stderr == "" and p.returncode in (0, 141), (p.returncode, p.stderr)


def _free(monkeypatch, free_bytes):
    """os.statvfs answering that `free_bytes` may still be written on every file system (or, for
    None, that it cannot say: an OSError)."""
    real = os.statvfs

    def statvfs(path):
        if free_bytes is None:
            raise OSError(38, "Function not implemented")
        info = real(path)
        return os.statvfs_result((info.f_bsize, 1, info.f_blocks, free_bytes, free_bytes, *info[5:]))
    monkeypatch.setattr(os, "statvfs", statvfs)


def test_snapshots_that_cannot_fit_on_their_disk_are_refused_before_anything_is_written(tmp_path, monkeypatch):
    """`--every 1` over 2e6 steps of N = 16384 (1.8 TB of snapshots on a disk of 72 GB free) would have run
    until the disk was full, hours later. The least size of what a run still writes (its
    snapshots after the step it starts from, less those it replaces, and a checkpoint) is
    compared with the room on each file system first: N = 16 in npz takes 896 bytes a snapshot."""
    monkeypatch.chdir(tmp_path)
    _free(monkeypatch, 3 * 896 - 1)             # three snapshots (steps 2, 4, 6) and no more
    rc, out, err = call(["run", "--n", 16, "--steps", 6, "--every", 2, "--snapshots", "S"])
    assert rc == 2 and one_sentence(err) and out == "", err
    assert "3 snapshots of N = 16 (npz, one every 2 steps to step 6)" in err and "2.69 kB free" in err, err
    assert sorted(tmp_path.iterdir()) == []
    _free(monkeypatch, 3 * 896)
    rc, _, err = call(["run", "--n", 16, "--steps", 6, "--every", 2, "--snapshots", "S"])
    assert rc == 0, err
    _free(monkeypatch, 2 * 896 - 1)            # then a checkpoint and one snapshot (step 8), on one disk
    shutil.rmtree("S")
    assert call(["run", "--n", 16, "--steps", 6, "--every", 2, "--snapshots", "S", "--checkpoint", "c.ck"])[0] == 2
    _free(monkeypatch, 10**6)
    assert call(["run", "--n", 16, "--steps", 6, "--every", 2, "--snapshots", "S", "--checkpoint", "c.ck"])[0] == 0
    _free(monkeypatch, 2 * 896 - 1)
    rc, _, err = call(["run", "--resume", "c.ck", "--steps", 8])
    assert rc == 2 and "1 snapshot of N = 16" in err and "and a checkpoint" in err, err
    _free(monkeypatch, None)                   # a file system that does not say: the run goes on
    rc, _, err = call(["run", "--resume", "c.ck", "--steps", 8])
    assert rc == 0 and (tmp_path / "S" / "snap_00000008.npz").is_file(), err


@pytest.mark.parametrize("option, path", [("--snapshots", "/proc"), ("--snapshots", "/proc/nbsymple-x"),
                                          ("--checkpoint", "/proc/nbsymple-x.ck")])
def test_a_virtual_file_system_is_named_as_one(option, path):
    """/proc makes no file and says ENOENT: "No such file or directory" of a folder that exists."""
    rc, out, err = call(["run", "--n", 8, "--steps", 1, option, path])
    assert rc == 2 and one_sentence(err) and "a virtual file system, such as /proc" in err, err


@pytest.mark.parametrize("every", [None, 1, 2, 3, 7])
@pytest.mark.parametrize("steps", [0, 1, 5, 6, 20])
def test_the_snapshots_due_are_those_counted_and_the_last_step_has_one(every, steps):
    """`runs.loop`: the steps `snapshot_due` names after any start are `snapshots_after` of them
    (the disk check counts with it), and the run's last step always has its snapshot, a multiple
    of --every or not (a mutation hunt: a run's last snapshot left out passed every test)."""
    from nbsymple_versions.runs.loop import snapshot_due, snapshots_after
    for extra in ((), (4,)):
        run = {"snapshots": "snaps", "every": every, "steps": steps, "snapshot_steps": list(extra) or None}
        assert snapshot_due(run, steps)
        for start in range(steps + 1):
            due = [s for s in range(start + 1, steps + 1) if snapshot_due(run, s)]
            assert len(due) == snapshots_after(run, start), (run, start, due)
            assert all(s % (every or max(steps, 1)) == 0 or s == steps or s in extra for s in due)


@pytest.mark.parametrize("code, k, status, said", [
    ("EACCES", 2, 4, "the run finished its 2 steps"),       # its folder made read-only once the steps ran
    ("EACCES", 1, 2, "no step had run"),                    # at the set-up: a folder the user gave
    ("EDQUOT", 1, 4, "no step had run"),                    # a quota met at the set-up: as a full disk
])
def test_a_failed_write_of_the_run_record_is_a_fault_after_the_start_or_of_the_machine(tmp_path, monkeypatch,
                                                                                       code, k, status, said):
    """A write of the run's record that fails is status 4 once the steps ran, or for a fault of the
    machine (a quota, as a full disk) at any time; else, at the set-up, 2 (a mutation hunt)."""
    from nbsymple_versions.runs import driver
    real, calls, errno_ = driver._write_record, [], getattr(errno, code)

    def failing(folder, record):
        calls.append(record)
        if len(calls) >= k:
            raise OSError(errno_, os.strerror(errno_), str(folder / driver.RUN_RECORD))
        return real(folder, record)
    monkeypatch.setattr(driver, "_write_record", failing)
    rc, out, err = call(["run", "--n", 16, "--steps", 2, "--seed", 1, "--snapshots", tmp_path / "S", "--json"])
    assert rc == status and out == "" and one_sentence(err), err
    assert f"cannot write {tmp_path / 'S' / driver.RUN_RECORD}: {os.strerror(errno_)}" in err and said in err, err
