"""Every hint `nbsymple` prints (a command to type, or flags to add: "--seed N draws these bodies again",
"continue with: nbsymple run --resume FILE", "resume it with: ...", "(see nbsymple run --help)",
"(--ics-mass 480)") is a command the parser accepts in the situation it is printed in: the
hints of each command path are collected from what it printed and each is run, for real, with a
few bodies. A line that names a command but is not a hint the collector knows fails the test, so
a new hint cannot slip by unchecked."""
import json
from pathlib import Path
import re
import shlex
import signal
import threading

import numpy as np
import pytest

from cli_call import call
from nbsymple_versions import cli, make_cluster
from nbsymple_versions.core.pipeline import ForcePipeline
from nbsymple_versions.core.units import Units
from nbsymple_versions.runs.authors_format import write_nbsymple
from nbsymple_versions.runs.snapshots import read_snapshot

# (pattern, kind): "command" is a whole command line; "add" flags to append to the command that printed it
HINTS = [(re.compile(r"--seed (\d+) draws these bodies again"), "add"),
         (re.compile(r"(?:continue with|resume it with|continue from the last checkpoint written): "
                     r"(nbsymple .+?)(?:, or |; |$)", re.M), "command"),
         (re.compile(r"\(see (nbsymple[a-z -]*? --help)\)"), "command"),
         (re.compile(r"\((--ics-mass \d+)\)"), "add")]
COMMAND_LIKE = re.compile(r"nbsymple [a-z-]+ -|--[a-z-]+ [^ ]+ repeats")     # what a hint looks like


def collect(text: str) -> list[tuple[str, list[str]]]:
    """(kind, words) of every hint in `text`; an AssertionError for a command-like phrase no
    pattern explains."""
    found, spans = [], []
    for pattern, kind in HINTS:
        for m in pattern.finditer(text):
            words = ["--seed", m.group(1)] if pattern is HINTS[0][0] else shlex.split(m.group(1))
            found.append((kind, words[1:] if kind == "command" else words))      # "nbsymple" dropped
            spans.append(m.span())
    for m in COMMAND_LIKE.finditer(text):
        assert any(a <= m.start() < b for a, b in spans), f"a hint the test does not know: {text!r}"
    return found


def parses(argv) -> bool:
    """`nbsymple ARGV` passes the parser (and, for run, RunSpec's checks of its values)."""
    if "--help" in argv:
        return call(argv)[0] == 0
    try:
        args = cli._parser().parse_args([str(a) for a in argv])
        if args.command == "run":
            cli.run_spec(args)
    except SystemExit:
        return False
    return True


def follow(argv, printed: str, expect: int) -> list[list[str]]:
    """The commands the hints in `printed` (by `nbsymple ARGV`) stand for, each checked by the parser."""
    hints = collect(printed)
    assert len(hints) == expect, (printed, hints)
    commands = [words if kind == "command" else [*map(str, argv), *words] for kind, words in hints]
    for command in commands:
        assert parses(command), (printed, command)
    return commands


def test_a_fresh_run_names_the_seed_that_repeats_it_and_the_repeat_is_the_same_run(tmp_path):
    for version in ("A", "F"):                      # F on one process prints the same report
        argv = ["run", "--version", version, "--n", 16, "--steps", 2, "--snapshots", tmp_path / version]
        rc, out, err = call(argv)
        assert rc == 0, err
        (again,) = follow(argv, out + err, 1)
        again[again.index(str(tmp_path / version))] = str(tmp_path / f"{version}2")   # a fresh folder to repeat into
        rc, out2, err = call(again)
        assert rc == 0 and collect(out2 + err) == [], err
        first = read_snapshot(tmp_path / version / "snap_00000002.npz")[0]
        second = read_snapshot(tmp_path / f"{version}2" / "snap_00000002.npz")[0]
        assert np.array_equal(first.x, second.x) and np.array_equal(first.v, second.v)


def test_an_ics_run_offers_no_seed_and_a_file_without_its_mass_names_ics_mass(tmp_path):
    ics = write_nbsymple(tmp_path / "ExtData.txt", make_cluster(12, seed=1, units=Units(10.0, 480.0)))
    argv = ["run", "--ics", ics, "--steps", 1]
    rc, out, err = call(argv)
    assert rc == 2 and out == ""
    (with_mass,) = follow(argv, err, 1)
    rc, out, err = call(with_mass)
    assert rc == 0 and "--seed" not in out + err and collect(out + err) == [], out + err
    assert f"bodies from {ics} (r_cl = 10 pc, M = 480 Msun, exact constants)" in out


def test_a_checkpoint_in_the_way_is_resumed_as_the_hint_says(tmp_path):
    ck = tmp_path / "run.ck"
    argv = ["run", "--n", 16, "--seed", 2, "--steps", 2, "--checkpoint", ck]
    assert call(argv)[0] == 0
    rc, out, err = call(argv)
    assert rc == 2 and f"{ck} already exists" in err
    (resume,) = follow(argv, err, 1)
    assert resume == ["run", "--resume", str(ck)]
    rc, out, err = call([*resume, "--steps", 3])
    assert rc == 0, err
    junk = tmp_path / "junk.ck"
    junk.write_text("not a checkpoint")
    rc, out, err = call(["run", "--n", 16, "--steps", 1, "--checkpoint", junk])
    assert rc == 2 and "it is not a checkpoint nbsymple can resume, so choose another file" in err, err
    assert collect(err) == [] and junk.read_text() == "not a checkpoint"


def test_a_checkpoint_whose_name_starts_with_a_dash_is_resumed_as_the_hint_says(tmp_path, monkeypatch):
    """`--checkpoint=-x.ck`: the hint said `nbsymple run --resume -x.ck`, which the parser takes for an option."""
    monkeypatch.chdir(tmp_path)
    argv = ["run", "--n", 16, "--seed", 2, "--steps", 2, "--checkpoint=-x.ck"]
    assert call(argv)[0] == 0
    rc, out, err = call(argv)
    assert rc == 2 and "-x.ck already exists" in err, err
    (resume,) = follow(argv, err, 1)
    assert resume == ["run", "--resume", "./-x.ck"]
    rc, out, err = call([*resume, "--steps", 3])
    assert rc == 0, err


@pytest.mark.parametrize("stop", ["nan", "signal"])
def test_a_stopped_run_is_continued_as_the_hint_says(tmp_path, monkeypatch, stop):
    """A NaN in step 3 (exit 3) or SIGTERM during step 3 (exit 143): the hint resumes the run."""
    assert threading.current_thread() is threading.main_thread()       # the run's handler catches the signal
    accelerations, calls = ForcePipeline.accelerations, {"n": 0}

    def spoiled(self, x, out):
        accelerations(self, x, out)
        calls["n"] += 1
        if calls["n"] == 1 + 3:                        # the warm-up's, then one per leapfrog step
            if stop == "nan":
                out[:, 0] = np.nan
            else:
                signal.raise_signal(signal.SIGTERM)
    monkeypatch.setattr(ForcePipeline, "accelerations", spoiled)
    ck = tmp_path / "run.ck"
    argv = ["run", "--n", 16, "--seed", 1, "--steps", 6, "--checkpoint", ck, "--checkpoint-every", 1]
    rc, out, err = call(argv)
    assert rc == (3 if stop == "nan" else 128 + signal.SIGTERM), err
    assert ("start anew with a smaller --dt" in err) == (stop == "nan"), err      # where the step made them
    (resume,) = follow(argv, err, 1)
    assert resume == ["run", "--resume", str(ck)]
    rc, out, err = call([*resume, "--json"])
    assert rc == 0 and json.loads(out)["resumed_from_step"] == (2 if stop == "nan" else 3), err


@pytest.mark.parametrize("argv", [["run", "--n", "x"], ["run", "--bogus"], ["check", "--bogus"], ["--bogus"],
                                  ["paper", "--bogus"]])
def test_a_parser_refusal_points_to_a_help_that_works(argv):
    rc, out, err = call(argv)
    assert rc == 2
    (help_,) = follow(argv, err, 1)
    assert help_[-1] == "--help"


def test_the_paper_prints_no_hint_it_would_refuse(tmp_path):
    """`nbsymple paper` on the committed fixture without the simulations: whatever it says about
    what it could not write, no command-like phrase in it goes unchecked."""
    fixture = Path(__file__).parent / "data" / "asv_fixture"
    argv = ["paper", "--results", fixture, "--out", tmp_path / "plots", "--no-science"]
    rc, out, err = call(argv)
    assert rc in (0, 1), err
    follow(argv, out + err, len(collect(out + err)))
