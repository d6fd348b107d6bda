"""`nbsymple run` from Python: `runs.driver.run(RunSpec(...))` runs a checkpointed job without
argparse, resumes it bit for bit, and refuses what the CLI refuses with the same sentence
(`RunStop`, status 2); the CLI parses its flags into the same frozen `RunSpec`."""
import dataclasses
import errno
import json
import os
import re
import signal

import numpy as np
import pytest

from nbsymple_versions import cli
from nbsymple_versions.runs.checkpoint import load
from nbsymple_versions.runs import driver
from nbsymple_versions.runs.driver import run
from nbsymple_versions.runs.errors import RunStop
from nbsymple_versions.runs.snapshots import list_snapshots
from nbsymple_versions.runs.spec import RunSpec

from cli_call import call

SMALL = dict(version="B", n=24, seed=4, steps=9, every=3, json=True)


def test_a_checkpointed_run_from_python_is_the_clis_and_resumes_bit_for_bit(tmp_path, capsys, monkeypatch):
    """The same run from Python and from the CLI; stopped by SIGTERM (RunStop, status 143) and
    resumed from Python, it lands on the bits of the whole run."""
    assert run(RunSpec(**SMALL, checkpoint=tmp_path / "py.ck", snapshots=tmp_path / "py")) == 0
    from_python = json.loads(capsys.readouterr().out)
    rc, out, err = call(["run", "--version", "B", "--n", 24, "--seed", 4, "--steps", 9, "--every", 3, "--json",
                         "--checkpoint", tmp_path / "cli.ck", "--snapshots", tmp_path / "cli"])
    assert rc == 0, err
    from_cli = json.loads(out)
    for key in ("version", "n", "seed", "steps", "energy_error", "internal_energy_error", "angular_momentum_error"):
        assert from_cli[key] == from_python[key], key

    write = driver.write_snapshot

    def write_then_signal(folder, state, step, *a):
        path = write(folder, state, step, *a)
        if step == 6:
            signal.raise_signal(signal.SIGTERM)          # stops the run after this step, checkpointed
        return path
    monkeypatch.setattr(driver, "write_snapshot", write_then_signal)
    part = tmp_path / "part.ck"
    stopped = f"stopped by SIGTERM after step 6 of 9; checkpoint written to {part}"
    with pytest.raises(RunStop, match=re.escape(stopped)) as e:
        run(RunSpec(**SMALL, checkpoint=part, checkpoint_every=4, snapshots=tmp_path / "part"))
    assert e.value.status == 128 + signal.SIGTERM
    monkeypatch.setattr(driver, "write_snapshot", write)
    assert load(part)[1]["steps_done"] == 6
    capsys.readouterr()
    assert run(RunSpec(resume=part, json=True)) == 0
    resumed = json.loads(capsys.readouterr().out)
    assert resumed["resumed_from_step"] == 6 and resumed["energy_error"] == from_python["energy_error"]
    (_, _, a), (_, _, b) = load(tmp_path / "py.ck"), load(part)
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_array_equal(a.v, b.v)
    assert [p.name for p in list_snapshots(tmp_path / "part")] == [p.name for p in list_snapshots(tmp_path / "py")]


@pytest.mark.parametrize("spec, argv, sentence", [
    (dict(every=3), ["--every", 3], "--every needs --snapshots DIR"),
    (dict(checkpoint_every=3), ["--checkpoint-every", 3], "--checkpoint-every needs --checkpoint FILE"),
    (dict(ics_mass=480.0), ["--ics-mass", 480], "--ics-mass gives the scale of an initial-condition file, so it "
                                                 "needs --ics FILE"),
    (dict(resume="x.ck", n=64, seed=1), ["--resume", "x.ck", "--n", 64, "--seed", 1],
     "--resume takes the run's settings from its checkpoint, so --n, --seed cannot be given with it"),
    (dict(resume="x.ck", n=64, options={"kernel": "plain", "backend": "numba"}),     # their flags, not "--kernel"
     ["--resume", "x.ck", "--n", 64, "--gpu-kernel", "plain", "--gpu-backend", "numba"],
     "--resume takes the run's settings from its checkpoint, so --gpu-backend, --gpu-kernel, --n cannot be given "
     "with it"),
])
def test_python_and_the_cli_refuse_alike(tmp_path, monkeypatch, spec, argv, sentence):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RunStop) as e:
        run(RunSpec(**{"n": 16, "steps": 1, **spec}))
    assert str(e.value) == sentence and e.value.status == 2
    rc, out, err = call(["run", "--n", 16, "--steps", 1, *argv] if "resume" not in spec else ["run", *argv])
    assert rc == 2 and err == f"nbsymple run: {sentence}\n" and out == ""
    assert list(tmp_path.iterdir()) == []                 # nothing written


@pytest.mark.parametrize("spec, said", [
    (dict(checkpoint="-"), "--checkpoint: '-' stands for standard input or output"),
    (dict(checkpoint="~/x.ck"), "--checkpoint: '~/x.ck' starts with '~', which no shell expanded"),
    (dict(checkpoint="nodir/"), "--checkpoint 'nodir/' ends in '/', which names a folder, not a file"),
    (dict(checkpoint="a\nb.ck"), "--checkpoint: 'a\\nb.ck' holds a line feed"),
    (dict(snapshots="-", every=1), "--snapshots: '-' stands for standard input or output"),
    (dict(snapshots="~snap", every=1), "--snapshots: '~snap' starts with '~snap', which no shell expanded"),
    (dict(checkpoint="a" * 250), "--checkpoint: a name in the path is 250 bytes long"),
    (dict(snapshots="a\0b", every=1), "--snapshots holds a NUL byte, which no file name can"),
    (dict(resume="x.ck/"), "--resume 'x.ck/' ends in '/', which names a folder, not a file"),
    (dict(given="nsteps"), "given must be a set of the names of the fields and options set"),
])
def test_a_path_the_command_line_refuses_python_refuses_too(tmp_path, monkeypatch, spec, said):
    """A hunt: `run(RunSpec(checkpoint='-'))` wrote a file '-', '~/x.ck' made a folder '~',
    'nodir/' wrote a file 'nodir', a name too long raised OSError, a NUL byte ValueError from
    os.stat; `given='nsteps'` was taken as the letters n, s, t, e, p."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RunStop) as e:
        run(RunSpec(**{"n": 8, "steps": 1, **spec}))
    assert str(e.value).startswith(said) and e.value.status == 2, str(e.value)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(RunStop, match="run needs a RunSpec, got NoneType"):
        run(None)


def test_a_checkpoint_replaced_while_the_run_stepped_is_not_offered_to_resume(tmp_path, monkeypatch):
    """A hunt: the checkpoint replaced by a folder while the run stepped, the next write's fault
    said "the last good checkpoint, t.ck (step 4700), is kept; continue with: nbsymple run --resume
    t.ck", which refused it ("is a folder, not a file")."""
    real, calls = driver.save, []
    ck = tmp_path / "t.ck"

    def save(target, run_, sim):
        calls.append(sim.steps_done)
        if len(calls) == 1:
            return real(target, run_, sim)
        ck.unlink()
        ck.mkdir()
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(ck))
    monkeypatch.setattr(driver, "save", save)
    with pytest.raises(RunStop) as e:
        run(RunSpec(n=8, steps=3, seed=1, checkpoint=ck, checkpoint_every=1))
    assert e.value.status == 4 and str(e.value).endswith(
        f"; the last good checkpoint, {ck} (step 0), is no longer there (a folder stands there now): nothing is "
        f"left to continue from"), str(e.value)


@pytest.mark.parametrize("field, value, sentence", [
    ("n", 1, "--n must be a whole number of at least 2, got 1"),
    ("dt", float("nan"), "--dt must be a positive finite number, got nan"),
    ("steps", True, "--steps must be a whole number of at least 0, got True"),
    ("version", "G", "unknown version 'G'; choose one of A, B, C, D, E, F (any case)"),
    ("checkpoint", " ", "--checkpoint needs a file or folder name, got ' '"),
    # each count from its least and each scale positive (a mutation hunt: a count of 0 and a radius of -1 passed)
    ("every", 0, "--every must be a whole number of at least 1, got 0"),
    ("checkpoint_every", 0, "--checkpoint-every must be a whole number of at least 1, got 0"),
    ("mass_classes", 0, "--mass-classes must be a whole number of at least 1, got 0"),
    ("ics_radius", -1.0, "--ics-radius must be a positive finite number, got -1.0"),
    # a value of 40 characters is said whole, a longer one cut to 40 (a mutation hunt: the bound moved)
    ("version", "x" * 38, f"unknown version '{'x' * 38}'; choose one of A, B, C, D, E, F (any case)"),
    ("version", "x" * 39, f"unknown version '{'x' * 36}...; choose one of A, B, C, D, E, F (any case)"),
])
def test_a_spec_is_checked_as_it_is_built(field, value, sentence):
    with pytest.raises(RunStop, match=f"^{re.escape(sentence)}$"):
        RunSpec(**{field: value})


@pytest.mark.parametrize("checkpointed", [False, True])
def test_a_signal_during_the_report_says_the_run_finished(tmp_path, capsys, monkeypatch, checkpointed):
    """A hunt: a signal after the last step, while the report computed its O(N^2) errors, was
    said to have stopped the run "during the set-up, before the first step; no step had run" (or,
    resumed, that the checkpoint was unchanged), though every step ran and the run was marked
    finished; a checkpointed run swallowed the first. Now it stops at once and says so."""
    made = driver.report

    def report_then_signal(*a):
        signal.raise_signal(signal.SIGTERM)
        return made(*a)
    monkeypatch.setattr(driver, "report", report_then_signal)
    ck = tmp_path / "r.ck"
    spec = RunSpec(**{**SMALL, "steps": 1, "every": 1}, snapshots=tmp_path / "snaps",
                   **({"checkpoint": ck} if checkpointed else {}))
    with pytest.raises(RunStop) as e:
        run(spec)
    kept = f"; its checkpoint {ck} (step 1) is written" if checkpointed else ""
    assert str(e.value) == f"the run finished its 1 step{kept}; stopped by SIGTERM before its report was printed"
    assert e.value.status == 128 + signal.SIGTERM and capsys.readouterr().out == ""
    assert json.loads((tmp_path / "snaps" / "nbsymple-run.json").read_text())["finished"] is True
    if checkpointed:
        assert load(ck)[1]["steps_done"] == 1
        with pytest.raises(RunStop) as e:
            run(RunSpec(resume=ck, steps=3, json=True))
        assert str(e.value) == (f"the run finished its 3 steps; its checkpoint {ck} (step 3) is written; stopped by "
                                f"SIGTERM before its report was printed")
        assert load(ck)[1]["steps_done"] == 3


def test_a_spec_is_frozen_and_knows_what_was_given(tmp_path):
    """What is passed by name is given, a default's value too (a hunt: `RunSpec(resume=ck,
    steps=1000)`, the default, stopped at the checkpoint's step 200 and said nothing); a checkpoint
    without `checkpoint_every` records the default, 100 (a mutation hunt)."""
    spec = RunSpec(version="b", n=2048, steps=1000, scheme="LEAPFROG", options={"tile": 128})
    assert spec.version == "B" and spec.given == {"version", "n", "steps", "scheme", "tile"}
    assert RunSpec("B", 2048).given == {"version", "n"}           # positional: those not at their defaults
    ck = tmp_path / "b.ck"
    assert run(RunSpec(n=16, seed=1, steps=3, checkpoint=ck)) == 0
    assert load(ck)[0]["checkpoint_every"] == 100      # the documented default cadence, kept for --resume
    with pytest.raises(RunStop, match="--n cannot be given with it"):
        run(RunSpec(resume=ck, n=1024))
    with pytest.raises(RunStop, match="runs with the exact constants, so it cannot go on with --constants authors"):
        run(RunSpec(resume=ck, constants="authors"))
    assert run(RunSpec(resume=ck, steps=1000, json=True)) == 0 and load(ck)[1]["steps_done"] == 1000
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.n = 4
    with pytest.raises(TypeError):
        spec.options["tile"] = 64


def test_the_cli_parses_into_one_spec_with_the_flags_typed():
    args = cli._parser().parse_args(["run", "--vers", "c", "--steps", "1000", "--tile", "128", "--checkpoint", "a.ck"])
    spec = cli.run_spec(args)
    assert spec == RunSpec(version="C", steps=1000, options={"tile": 128}, checkpoint="a.ck", given=spec.given)
    assert spec.given == {"version", "steps", "tile", "checkpoint"}                # typed, even at its default
