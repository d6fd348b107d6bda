"""`nbsymple paper`: the asv results reader, the tables and figures from a committed fixture of
real asv results (tests/data/asv_fixture/, produced by `asv run --quick` with the smoke grid),
broken results files, and the science runs at tiny N. No timing assertions."""
import ast
import csv
import importlib
import itertools
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nbsymple_versions import paper
from nbsymple_versions.paper.results import ResultsError, load_results
from nbsymple_versions import State
from nbsymple_versions.core.diagnostics import energy, potential_energy
from nbsymple_versions.instruments.provenance import machine_name
from nbsymple_versions.paper.science_plots import (_internal_energy_errors, density_centre, plot_black_hole,
                                                   plot_tidal_tails)
from nbsymple_versions.paper.science_runs import run_black_hole, run_tidal_tails
from nbsymple_versions.runs.snapshots import list_snapshots, read_snapshot

FIXTURE = Path(__file__).parent / "data" / "asv_fixture"
BENCH_OUTPUTS = ["time_per_step.png", "speedup.png", "dp_vs_dsp.png", "task_shares.md", "task_shares.csv",
                 "task_shares.png", "conservation.md"]
SCIENCE_OUTPUTS = ["tidal_tails.png", "black_hole_passage.png"]
TINY_SCIENCE = ["--tidal-n", "48", "--tidal-dt", "0.125", "--tidal-orbits", "0.5",
                "--bh-n", "32", "--bh-dt", "0.0078125", "--bh-t-end", "2.0", "--bh-ratios", "1", "10",
                "--science-version", "A"]   # serial: no thread contention at tiny N


def _results_file() -> Path:
    files = [p for p in FIXTURE.glob("*/*.json") if p.name != "machine.json"]
    assert len(files) == 1, files
    return files[0]


def _raw(name):
    """(params, results) of a benchmark straight from the fixture's JSON."""
    d = json.loads(_results_file().read_text())
    row = dict(zip(d["result_columns"], d["results"][name]))
    return row["params"], row["result"]


def _first_finite(name):
    params, values = _raw(name)
    for key, value in zip(itertools.product(*params), values):
        if value is not None and math.isfinite(value):
            return tuple(ast.literal_eval(k) for k in key), value  # repr strings from asv
    raise AssertionError(f"no finite value for {name} in the fixture")


@pytest.fixture(scope="module")
def science_runs(tmp_path_factory):
    """Finished tiny science runs (seconds), to copy into output folders and re-plot."""
    out = tmp_path_factory.mktemp("science")
    run_tidal_tails(out / "runs" / "tidal_tails", n=48, dt=0.125, orbits=0.5, version="A", progress=False)
    run_black_hole(out / "runs" / "black_hole", n=32, dt=2.0 ** -7, t_end=2.0, ratios=(1.0, 10.0),
                   version="A", progress=False)
    return out / "runs"


def _results_copy(tmp_path) -> Path:
    dst = tmp_path / "results"
    shutil.copytree(FIXTURE, dst)
    return dst


# ----------------------------------------------------------------------------- reader

def test_reader_reads_the_fixture():
    res = load_results(FIXTURE)
    assert res.machine == "fixture-2core-nogpu"
    assert len(res.commit) == 40 and res.date > 0 and res.python
    assert res.machine_info["cpu"] and int(res.machine_info["num_cpu"]) >= 1
    assert res.param_names("steps.Step.time_step_leapfrog") == ["version", "n", "precision"]
    key, value = _first_finite("steps.Step.time_step_leapfrog")
    got = res.get("steps.Step.time_step_leapfrog")
    assert got[key] == value
    assert isinstance(key[0], str) and isinstance(key[1], int)
    assert all(math.isfinite(v) for v in got.values())
    assert load_results(FIXTURE, commit=res.commit[:8]).commit == res.commit


def test_results_of_a_changed_working_tree_are_said_to_be(tmp_path):
    """A hunt: results `tools.tracking` filed from a working tree that differed from HEAD (their
    provenance's commit '+dirty') were stamped with the clean commit in REPORT.md and every figure."""
    import dataclasses
    from nbsymple_versions.paper.data import source_line
    from nbsymple_versions.paper.report import write_report
    res = load_results(FIXTURE)
    assert not res.changed and res.commit_label == res.commit[:8] and f"commit {res.commit[:8]};" in source_line(res)
    changed = dataclasses.replace(res, provenance=[*res.provenance, {"commit": res.commit[:8] + "+dirty"}])
    assert changed.changed and f"commit {res.commit[:8]} with uncommitted changes;" in source_line(changed)
    write_report(tmp_path, changed, {}, [], None, {})
    row = next(line for line in (tmp_path / "REPORT.md").read_text().splitlines() if line.startswith("| commit |"))
    assert row.endswith("with uncommitted changes: the working tree a run timed differed from it |"), row


def test_a_later_file_of_the_commit_fills_gaps_and_never_erases_a_value(tmp_path):
    """Found by a hunt: a later results file of the same commit whose row of a benchmark was all
    null (a run of a few other benchmarks) erased the measured values, and `paper` said the
    commit held every benchmark it needs. A later value wins; a later null keeps the earlier."""
    results = _results_copy(tmp_path)
    first = results / _results_file().parent.name / _results_file().name
    data = json.loads(first.read_text())
    name = "steps.Step.time_step_leapfrog"
    key, value = _first_finite(name)
    cols = data["result_columns"]
    row = dict(zip(cols, data["results"][name]))
    at = list(itertools.product(*row["params"])).index(tuple(map(repr, key)))
    later = [None] * len(row["result"])
    later[at + 1] = 123.0                                      # one combination measured again, after the rest
    last = max(dict(zip(cols, r)).get("started_at") or 0 for r in data["results"].values())
    data["results"] = {name: [{"result": later, "started_at": last + 1}.get(c, row.get(c)) for c in cols]}
    data["env_name"] = "later"
    (first.parent / first.name.replace("existing", "later")).write_text(json.dumps(data))
    got = load_results(results).get(name)
    assert got[key] == value and got[list(got)[list(got).index(key) + 1]] == 123.0, got
    assert len(load_results(results).files) == 2


def test_a_machine_named_in_another_unicode_form_is_found(tmp_path):
    """A machine folder written in NFD (e and its accent, as macOS writes names) and `--machine` typed
    in NFC: "has no machine 'café' (it has: café)" (a hunt); the folder is taken. Another name is not."""
    results = _results_copy(tmp_path)
    (results / _results_file().parent.name).rename(results / "cafe\u0301")
    assert load_results(results, machine="caf\u00e9").machine == "cafe\u0301"
    with pytest.raises(ResultsError, match="has no machine 'cafe'"):
        load_results(results, machine="cafe")


def test_a_commit_is_compared_in_any_case(tmp_path):
    """Git's hashes are read in either case: a results file's upper-case commit_hash (asv's are
    lower-case) was no match for a lower-case --commit prefix, nor an upper-case prefix for asv's."""
    results = _results_copy(tmp_path)
    path = results / _results_file().parent.name / _results_file().name
    full = load_results(results).commit
    assert load_results(results, commit=full[:8].upper()).commit == full
    data = json.loads(path.read_text())
    data["commit_hash"] = full.upper()
    path.write_text(json.dumps(data))
    assert load_results(results, commit=full[:8]).commit == full == load_results(results).commit


@pytest.mark.parametrize("typed, said", [
    ("f86a8e19 ", "expected a commit hash or its prefix (hexadecimal digits), got 'f86a8e19 '"),
    ("main", "expected a commit hash or its prefix (hexadecimal digits), got 'main'"),
    (os.fsdecode(b"f86a\xff"), "'f86a\\xff' is not UTF-8 text"),
    ("f86a\u2028", "'f86a\\u2028' holds a control character or a line break")])
def test_a_commit_that_is_no_hash_is_refused_as_typed(tmp_path, capsys, typed, said):
    """A hunt: `--commit 'f86a8e19 '` (a blank after it) was "no results for commit f86a8e19  (it
    has: f86a8e19)", the same on screen; bytes that are not UTF-8 were "a control character"."""
    out = tmp_path / "plots"
    assert paper.main(["--results", str(FIXTURE), "--out", str(out), "--no-science", "--commit", typed]) == 2
    line = _one_sentence(capsys.readouterr().err)
    assert f"argument --commit: {said}" in line, line
    assert not out.exists()


def test_reader_errors_name_the_file(tmp_path):
    results = _results_copy(tmp_path)
    bad = results / _results_file().parent.name / _results_file().name
    bad.write_text(bad.read_text()[:500])
    with pytest.raises(ResultsError, match=bad.name):
        load_results(results)
    with pytest.raises(ResultsError, match="no machine"):
        load_results(results, machine="nonesuch")
    with pytest.raises(ResultsError, match="does not exist"):
        load_results(tmp_path / "nowhere")


def test_a_machine_folder_given_as_the_results_folder_is_named_with_the_folder_above_it(tmp_path, monkeypatch):
    """`--results results/<machine>` (one level too deep) said only that it "holds no machine folder";
    the sentence now gives what to pass instead, relative to the current folder."""
    machine = _results_copy(tmp_path) / _results_file().parent.name
    monkeypatch.chdir(machine)
    with pytest.raises(ResultsError, match=f"it is a machine's folder itself: give --results the folder above it, "
                                           f"\\.\\., and --machine {machine.name}\\.$"):
        load_results(".")
    (machine.parent / "empty").mkdir()
    with pytest.raises(ResultsError, match="^results folder \\.\\./empty holds no machine folder with asv results\\.$"):
        load_results("../empty")         # named as given (a hunt: `--results /x/y` was "results folder y")
    with pytest.raises(ResultsError, match="^results folder \\.\\./none does not exist; "):
        load_results("../none")


def test_a_folder_of_other_json_files_is_no_machine_folder(tmp_path):
    """A run's snapshot folder (its nbsymple-run.json) given as --results was called "a machine's
    folder itself" (any *.json counted; a hunt's leftover): only asv's machine.json makes one."""
    (tmp_path / "snaps").mkdir()
    (tmp_path / "snaps" / "nbsymple-run.json").write_text("{}")
    with pytest.raises(ResultsError, match=f"^results folder {re.escape(str(tmp_path / 'snaps'))} holds no machine "
                                           f"folder with asv results\\.$"):
        load_results(tmp_path / "snaps")


# ----------------------------------------------------------------------------- main

def assert_tables_well_formed(text: str, what: str):
    """Every Markdown table in `text`: its header, its rule and each row have as many cells."""
    tables, current = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    for table in tables:
        cells = [len(row.strip().strip("|").split("|")) for row in table]
        assert len(table) >= 2 and set(table[1].replace("|", "").strip()) <= set("-: "), (what, table[:2])
        assert len(set(cells)) == 1, f"{what}: a table whose rows and header differ in length: {table[0]!r}, {cells}"


@pytest.mark.parametrize("path", sorted(Path(__file__).parents[1].joinpath("plots").glob("*.md")),
                         ids=lambda p: p.name)
def test_committed_tables_are_well_formed(path):
    assert_tables_well_formed(path.read_text(), path.name)


def test_table_check_can_fail():
    with pytest.raises(AssertionError, match="differ in length"):
        assert_tables_well_formed("| a | b |\n|---|---|\n| 1 | 2 | 3 |\n", "bad.md")


def test_main_writes_every_table_and_figure(tmp_path, science_runs, capsys):
    out = tmp_path / "plots"
    shutil.copytree(science_runs, out / "runs")
    full = Path(__file__).resolve().parents[1] / "plots" / "tidal_tails_n15360.md"   # an earlier `--full` run's
    shutil.copy(full, out)
    rc = paper.main(["--results", str(FIXTURE), "--out", str(out), "--no-science", "--quiet"])
    assert rc == 0, capsys.readouterr().err
    for name in BENCH_OUTPUTS + SCIENCE_OUTPUTS + ["REPORT.md"]:
        assert (out / name).stat().st_size > 0, name
    for png in out.glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # task shares: the fixture's number is in the CSV, in its row
    (version, n, task), share = _first_finite("steps.TaskShares.track_share")
    rows = list(csv.DictReader((out / "task_shares.csv").open()))
    row = next(r for r in rows if r["version"] == version and int(r["n"]) == n)
    assert row[f"{task}_percent"] == f"{share:.6g}"
    assert f"{share:.2f}" in (out / "task_shares.md").read_text()

    # conservation: SI6A dp per-step energy error, formatted as in the table
    params, values = _raw("accuracy.Conservation.track_energy_error_per_step")
    keys = [tuple(ast.literal_eval(k) for k in key) for key in itertools.product(*params)]
    value = values[keys.index(("si6a", "dp"))]
    conservation = (out / "conservation.md").read_text()
    assert (f"{value:.2e}" if value else "0 (below E's float64 resolution)") in conservation
    assert "1.4e-14 to 8.8e-14" in conservation and "exact to rounding" not in conservation
    # both energy figures, each said what it measures; the fixture predates the internal one
    assert "the definition the paper's code uses" in conservation and "|K_int0 + W0|" in conservation
    assert conservation.count("not measured in these results") == 7        # six rows and the sentence
    # like for like: each of the authors' builds named with the row of ours it corresponds to
    for build, ours in (("| L |", "| leapfrog sp |"), ('| S, their "double precision" |', "| SI6A dp |"),
                        ("| DS, double-single |", "| SI6A dsp |")):
        assert any(build in line and ours in line for line in conservation.splitlines()), build
    # and the constants each side uses: the authors' code's, and this suite's exact ones
    assert "| constants (theirs / ours) |" in conservation and conservation.count("| authors / exact |") == 3
    assert "`--constants authors`: G from SI constants, the Galaxy's mass unit 2.32e7 Msun" in conservation

    report = (out / "REPORT.md").read_text()
    res = load_results(FIXTURE)
    assert res.commit in report and res.machine in report and "AMD EPYC" in report
    for md in out.glob("*.md"):
        assert_tables_well_formed(md.read_text(), md.name)
    for name in ("time_per_step.png", "task_shares.png", "tidal_tails.png", "black_hole_passage.png"):
        assert f"]({name})" in report
    # the full-size section is copied in, and says it was not regenerated here
    assert "## Tidal tails at N = 15360" in report
    assert "*From `nbsymple paper --full` (tidal_tails_n15360.md), not regenerated by this command" in report


def test_main_runs_tiny_science(tmp_path, capsys):
    out = tmp_path / "plots"
    rc = paper.main(["--results", str(FIXTURE), "--out", str(out)] + TINY_SCIENCE)
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "tidal tails N=48: step" in err           # progress lines on stderr
    assert "tidal tails, N = 48: encounter time at the softening length sqrt(eps^3 / (G m)) = 0.00205 T" in err
    assert "(not used: dt = 0.125 T" in err           # the rule printed, and that --tidal-dt overrode it
    for name in SCIENCE_OUTPUTS:
        assert (out / name).stat().st_size > 0
    # every run's internal error: printed, in science_runs.json, and flagged in REPORT.md above 1e-2
    records = json.loads((out / "science_runs.json").read_text())
    runs = records["tidal_tails"]["runs"] + records["black_hole"]["runs"]
    assert [r["run"] for r in runs] == ["tidal tails", "black hole M_BH/M_cl = 1", "black hole M_BH/M_cl = 10"]
    report = (out / "REPORT.md").read_text()
    for r in runs:
        assert r["internal_energy_error"] > 0 and r["converged"] == (r["internal_energy_error_max"] <= 1e-2)
        assert r["provenance"]["machine"] == machine_name() and r["provenance"]["commit"]
        assert f"tidal_tails.png: {r['run']}," in err or f"black_hole_passage.png: {r['run']}," in err
        assert (f"> **Not converged: {r['run']}**" in report) == (not r["converged"])
    assert [r["seed"] for r in runs] == [1, 2, 2]    # where and from what each ran: a chaotic run repeats only so
    assert not runs[0]["converged"]                  # N = 48 at dt = T/8
    # a second call reuses the finished runs (no new snapshots) and re-plots
    before = {p: p.stat().st_mtime_ns for p in (out / "runs").rglob("snap_*.npz")}
    assert paper.main(["--results", str(FIXTURE), "--out", str(out), "--quiet"] + TINY_SCIENCE) == 0
    assert before == {p: p.stat().st_mtime_ns for p in (out / "runs").rglob("snap_*.npz")}


@pytest.mark.parametrize("failing, others", [("science_runs.json", ["tidal_tails.png", "black_hole_passage.png"]),
                                              ("tidal_tails.png", ["black_hole_passage.png", "science_runs.json"])])
def test_a_science_artefact_that_cannot_be_written_is_the_one_named(tmp_path, capsys, monkeypatch, failing, others):
    """A full disk at science_runs.json said "tidal_tails.png not written: OSError: [Errno 28] No
    space left on device." of a figure it had written (and so for black_hole_passage.png), and at a
    figure named no file (a hunt): now the file that failed is named, and the others are written."""
    import errno
    import tempfile
    real = tempfile.mkstemp

    def full(*args, prefix="", **kwargs):
        if prefix.startswith(f".{failing}."):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*args, prefix=prefix, **kwargs)
    monkeypatch.setattr(tempfile, "mkstemp", full)
    out = tmp_path / "plots"
    assert paper.main(["--results", str(FIXTURE), "--out", str(out), "--quiet"] + TINY_SCIENCE) == 1
    err = capsys.readouterr().err
    assert f"{failing} not written: {out / failing} cannot be written (No space left on device)." in err, err
    assert "OSError" not in err and not any(f"{name} not written" in err for name in others), err
    assert not (out / failing).exists() and all((out / name).stat().st_size > 0 for name in others)


def _one_sentence(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].rstrip().endswith(".") and lines[0].count(". ") == 0, err
    return lines[0]


@pytest.mark.parametrize("damage", ["truncated", "foreign", "empty", "nonexistent"])
def test_unreadable_results_are_one_sentence_status_2_and_nothing_is_overwritten(tmp_path, capsys, damage):
    results = _results_copy(tmp_path)
    bad = results / _results_file().parent.name / _results_file().name
    if damage == "truncated":
        bad.write_text(bad.read_text()[: len(bad.read_text()) // 2])
    elif damage == "foreign":
        bad.write_text(json.dumps({"name": "not an asv file", "values": [1, 2, 3]}))
    elif damage == "empty":
        bad.write_text("")
    else:
        results = tmp_path / "nonexistent"
    out = tmp_path / "plots"
    out.mkdir()
    (out / "REPORT.md").write_text("the committed report\n")
    rc = paper.main(["--results", str(results), "--out", str(out), "--quiet"] + TINY_SCIENCE)
    line = _one_sentence(capsys.readouterr().err)
    assert rc == 2 and (bad.name if damage != "nonexistent" else "nonexistent") in line
    assert (out / "REPORT.md").read_text() == "the committed report\n"
    assert sorted(p.name for p in out.iterdir()) == ["REPORT.md"]          # no run, no figure


@pytest.mark.parametrize("argv", [["--tidal-n", "1"], ["--tidal-n", "x"], ["--tidal-dt", "0"], ["--tidal-dt", "nan"],
                                  ["--tidal-orbits", "-1"], ["--bh-ratios", "0"], ["--bh-t-end", "inf"],
                                  ["--science-version", "Z"], ["--science-version", "C"], ["--machine", "nonesuch"],
                                  ["--commit", "ffffffff"], ["--tidal-precision", "quad"], ["--tidal-seed", "0"],
                                  ["--tidal-seed", str(2**128), "--no-science"],    # a hunt: "not written: ValueError"
                                  ["--frobnicate"]])
def test_bad_input_is_one_sentence_status_2_and_nothing_is_written(tmp_path, capsys, argv):
    out = tmp_path / "plots"
    rc = paper.main(["--results", str(FIXTURE), "--out", str(out), "--quiet"] + argv)
    _one_sentence(capsys.readouterr().err)
    assert rc == 2 and not out.exists()


def test_the_command_line_draws_nothing_before_it_draws():
    """paper's command line, and what REPORT.md and the tables are written with, import no matplotlib
    (a refused option answers at once); the modules that draw are imported where a figure is made."""
    code = ("import sys; import nbsymple_versions.paper.main, nbsymple_versions.paper.report, "
            "nbsymple_versions.paper.dt_series as d; print(sorted(m for m in sys.modules if 'matplotlib' in m))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "'matplotlib'" in done.stdout        # dt_series draws: the check can see matplotlib
    code = code.replace(", nbsymple_versions.paper.dt_series as d", "")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout[:300]


def test_out_that_is_a_file_is_refused(tmp_path, capsys):
    (tmp_path / "plots").write_text("a file\n")
    assert paper.main(["--results", str(FIXTURE), "--out", str(tmp_path / "plots"), "--no-science"]) == 2
    assert "is a file" in _one_sentence(capsys.readouterr().err)
    assert (tmp_path / "plots").read_text() == "a file\n"


def test_a_science_figure_or_record_that_cannot_be_written_is_said_as_a_benchmark_figure_is(tmp_path, monkeypatch):
    """A folder at tidal_tails.png was noted "IsADirectoryError: [Errno 21] Is a directory: '.tidal_tails.png.<pid>
    .<random>.tmp' -> ...", and one at science_runs.json had black_hole_passage.png, written, said "not written"
    and listed among the files written (a hunt): each file that could not be written is named as it is."""
    main = importlib.import_module("nbsymple_versions.paper.main")     # (paper.main is the function)
    from nbsymple_versions.runs.paths import write_file

    def plot(folder, path, *ratios):
        write_file(path, b"a figure")
        return None, {"summary": "a paragraph", "runs": []}
    for name in ("run_tidal_tails", "run_black_hole"):
        monkeypatch.setattr(main, name, lambda *args, **kwargs: None)
    science_plots = importlib.import_module("nbsymple_versions.paper.science_plots")      # main's when it draws
    monkeypatch.setattr(science_plots, "plot_tidal_tails", plot)
    monkeypatch.setattr(science_plots, "plot_black_hole", plot)
    for name in ("tidal_tails.png", "science_runs.json"):
        (tmp_path / name).mkdir()
    notes, written = [], {}
    args = main._parser().parse_args(["--quiet", "--out", str(tmp_path)])
    args.run_version = main._science_version(args)                                  # as main chooses it
    _, failed = main._science_artefacts(args, tmp_path, written, notes.append)
    assert failed == ["tidal_tails.png", "science_runs.json"] and written == {"black_hole": "black_hole_passage.png"}
    read, *said = notes                 # the folder is also no record to read (its own note, a hunt of contents)
    assert read.startswith(f"run record {tmp_path / 'science_runs.json'} is a folder") and "not kept" in read, read
    assert said == [f"{name} not written: {tmp_path / name} cannot be written (Is a directory)."
                    for name in failed], notes


@pytest.mark.parametrize("where", [".", "machine", "machine/plots"])
def test_out_inside_the_results_is_refused(tmp_path, capsys, where):
    """`--out results/<machine>` wrote science_runs.json among asv's results files, which paper then
    warned of at each start ("is not an asv results file") and asv read (a hunt): refused, nothing written."""
    results = _results_copy(tmp_path)
    before = sorted(results.rglob("*"))
    out = results / where.replace("machine", _results_file().parent.name)
    assert paper.main(["--results", str(results), "--out", str(out), "--no-science"]) == 2
    assert f"is inside --results {results}" in _one_sentence(capsys.readouterr().err)
    assert sorted(results.rglob("*")) == before


@pytest.mark.parametrize("name, text", [("REPORT.md", b"# My project\n"), ("conservation.md", b"# Notes\n"),
                                        ("task_shares.csv", b"a,b\n"), ("task_shares.md", b""),
                                        ("speedup.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR a photo"),
                                        ("science_runs.json", b"notes"), ("science_runs.json", b'{"mine": 1}'),
                                        ("tidal_tails.png", b"mine"), ("black_hole_passage.png", b"GIF89a")])
def test_a_file_paper_did_not_write_is_not_replaced(tmp_path, capsys, name, text):
    """`--out .` of a project's own folder replaced its REPORT.md, in silence (a hunt), and its
    conservation.md, task_shares.* or figures' names (a hunt's leftover), and the science figures'
    and their record's (a later hunt): refused, the file kept."""
    (tmp_path / name).write_bytes(text)
    assert paper.main(["--results", str(FIXTURE), "--out", str(tmp_path), "--no-science"]) == 2
    assert f"holds a {name} that nbsymple paper did not write" in _one_sentence(capsys.readouterr().err)
    assert sorted(tmp_path.iterdir()) == [tmp_path / name]
    assert (tmp_path / name).read_bytes() == text


@pytest.mark.parametrize("name", ["tidal_tails_n8_0.5orb_dp.md", "tidal_tails_n8_0.5orb_dp.png",
                                  "tidal_tails_n8_0.5orb_dp_dt_series.png"])
def test_a_file_paper_full_did_not_write_is_not_replaced(tmp_path, capsys, name):
    """A hunt: --full replaced a file of its table's or figures' names that paper had not written."""
    (tmp_path / name).write_bytes(b"mine")
    argv = ["--full", "--no-science", "--out", str(tmp_path), "--tidal-n", "8", "--tidal-dt", "0.25",
            "--tidal-orbits", "0.5", "--tidal-precision", "dp"]
    assert paper.main(argv) == 2
    assert f"holds a {name} that nbsymple paper did not write" in _one_sentence(capsys.readouterr().err)
    assert sorted(tmp_path.iterdir()) == [tmp_path / name] and (tmp_path / name).read_bytes() == b"mine"


def test_a_task_shares_csv_an_older_paper_wrote_is_replaced(tmp_path):
    """A review: the task_shares.csv of a paper before its source column ("version,n,pairwise_percent,
    ...,communicate_percent") was refused as one paper did not write; it is paper's, replaced."""
    from nbsymple_versions.paper.main import OWN_STARTS
    from nbsymple_versions.paper.report import foreign_file
    older = tmp_path / "task_shares.csv"
    older.write_text("version,n,pairwise_percent,galactic_percent,integrate_percent,transfer_percent,"
                     "communicate_percent\nA,256,83.0,12.1,4.8,0,0\n")
    assert foreign_file(older, OWN_STARTS["task_shares.csv"]) is None


def test_the_files_paper_wrote_are_replaced(tmp_path, capsys):
    """Paper's own files (every one of them, figures included) are rewritten by a second call."""
    for _ in range(2):
        assert paper.main(["--results", str(FIXTURE), "--out", str(tmp_path), "--no-science", "--quiet"]) == 0, \
            capsys.readouterr().err


def test_a_report_larger_than_a_table_that_paper_did_not_write_is_not_replaced(tmp_path, capsys):
    """A REPORT.md of more than 16 MiB (a Markdown table's limit) was taken as none to keep, and
    replaced in silence (a review): its first line alone is read, and it is refused and kept."""
    with open(tmp_path / "REPORT.md", "w") as f:
        f.write("# My project\n")
        f.truncate(17 << 20)              # sparse: no 17 MiB written
    assert paper.main(["--results", str(FIXTURE), "--out", str(tmp_path), "--no-science"]) == 2
    assert "holds a REPORT.md that nbsymple paper did not write" in _one_sentence(capsys.readouterr().err)
    assert sorted(tmp_path.iterdir()) == [tmp_path / "REPORT.md"]
    assert (tmp_path / "REPORT.md").stat().st_size == 17 << 20


def test_conservation_shows_the_internal_energy_error_where_measured(tmp_path):
    """The fixture with `track_internal_energy_error` added (its total errors times 4.3e4, plus 3e-14)."""
    results = _results_copy(tmp_path)
    path = results / _results_file().parent.name / _results_file().name
    d = json.loads(path.read_text())
    row = list(d["results"]["accuracy.Conservation.track_energy_error"])
    row[0] = [None if v is None else v * 4.3e4 + 3e-14 for v in row[0]]
    d["results"]["accuracy.Conservation.track_internal_energy_error"] = row
    path.write_text(json.dumps(d))
    out = tmp_path / "plots"
    assert paper.main(["--results", str(results), "--out", str(out), "--no-science", "--quiet"]) == 0
    text = (out / "conservation.md").read_text()
    assert "not measured" not in text
    params, values = _raw("accuracy.Conservation.track_energy_error")
    keys = [tuple(ast.literal_eval(k) for k in key) for key in itertools.product(*params)]
    internal = values[keys.index(("si6a", "dp"))] * 4.3e4 + 3e-14
    assert f"its internal-energy error after 1000 steps is {internal:.2e}" in text
    assert "orders of magnitude better than sp" in text
    assert "|K_int0 + W0|" in (out / "REPORT.md").read_text()


@pytest.mark.parametrize("which", ["machine.json", "benchmarks.json"])
def test_missing_or_truncated_side_file_still_writes_the_figures(tmp_path, capsys, which):
    results = _results_copy(tmp_path)
    path = results / which if which == "benchmarks.json" else next(results.glob(f"*/{which}"))
    if which == "machine.json":
        path.unlink()
    else:
        path.write_text(path.read_text()[:100])
    out = tmp_path / "plots"
    rc = paper.main(["--results", str(results), "--out", str(out), "--no-science", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 0
    assert len([ln for ln in err.splitlines() if which in ln]) == 1, err
    for name in BENCH_OUTPUTS:
        assert (out / name).exists(), name


# ----------------------------------------------------------------------------- science

def test_science_runs_at_tiny_n_and_snapshots_reload(tmp_path, science_runs):
    tidal = science_runs / "tidal_tails"
    snaps = list_snapshots(tidal)
    run = json.loads((tidal / "run.json").read_text())
    assert [p.name for p in snaps] == run["snapshots"] and len(snaps) == 3
    assert run["provenance"]["cpu"] and run["provenance"]["isa"]     # provenance.cpu_model, vector_isa
    times = []
    for p in snaps:
        state, step = read_snapshot(p)
        assert state.n == 48 and state.positions.shape == (48, 3)
        times.append(state.t)
    assert times == sorted(times) and times[-1] == pytest.approx(0.5 * run["orbital_period"], rel=0.05)
    # the cluster stays on its orbit at 8.5 kpc (in cluster radii: 850)
    state, _ = read_snapshot(snaps[-1])
    centre = density_centre(state.positions)
    assert math.hypot(centre[0], centre[1]) == pytest.approx(8.5 * state.units.kpc, rel=0.1)

    for ratio in ("1", "10"):
        folder = science_runs / "black_hole" / f"ratio_{ratio}"
        snaps = list_snapshots(folder)
        assert len(snaps) > 10
        state, _ = read_snapshot(snaps[0])
        assert state.n == 33 and state.m[-1] == pytest.approx(float(ratio))   # the black hole is body N
    path, record = plot_black_hole(science_runs / "black_hole", tmp_path / "bh.png")
    assert path.exists() and "closest approach" in record["summary"]
    assert record["summary"].count("internal energy error") == 2 and len(record["runs"]) == 2
    assert all(r["internal_energy_error"] > 0 and r["converged"] == (r["internal_energy_error_max"] <= 1e-2)
               and r["internal_energy_error_max"] >= r["internal_energy_error"] for r in record["runs"])
    # the internal error: the same |E - E0| over the stars' own |K_int + W|, not over |E0|
    states = [read_snapshot(p)[0] for p in list_snapshots(science_runs / "black_hole" / "ratio_10")]
    internal = _internal_energy_errors(states)
    stars = State(states[0].x[:, :-1], states[0].v[:, :-1], states[0].m[:-1], states[0].eps, 0.0, states[0].units)
    e = np.array([energy(s) for s in states])
    k_int = 0.5 * float(np.sum(stars.m * ((stars.v - (stars.v @ stars.m / stars.m.sum())[:, None]) ** 2).sum(axis=0)))
    scale = abs(k_int + potential_energy(stars.positions, stars.m, stars.eps))
    assert internal[0] == 0.0 and internal[-1] > 0
    assert internal[-1] == pytest.approx(abs(e[-1] - e[0]) / scale, rel=1e-3)
    assert internal[-1] > 10 * abs(e[-1] - e[0]) / abs(e[0])       # |E0| is mostly the orbit: it hides the error
    assert record["runs"][1]["internal_energy_error"] == pytest.approx(internal[-1], rel=1e-12)
    path, record = plot_tidal_tails(tidal, tmp_path / "tt.png")
    assert path.exists() and "Jacobi radius r_J = 37 pc" in record["summary"]
    # N = 48 at dt = T/8 heats the cluster far beyond 1e-2: marked, and its shares not called physical
    (run,) = record["runs"]
    assert run["internal_energy_error"] > 1e-2 and not run["converged"]
    assert "NOT CONVERGED" in record["summary"] and "not a physical result" in record["summary"]
    assert "encounter time at the softening length" in record["summary"]


def test_a_run_of_other_orbits_shows_its_end_and_a_fall_cut_short_no_passage(tmp_path, science_runs):
    """A hunt: a tidal run of 0.25 orbits showed t = 0 alone (the panels were taken at 0, 0.5, 1
    and 1.5 orbits), and a black-hole run that ended before its pericentre reported a "closest
    approach" and a "passage" at its last snapshot."""
    tidal = tmp_path / "tidal"
    shutil.copytree(science_runs / "tidal_tails", tidal)
    run = json.loads((tidal / "run.json").read_text())
    run["params"]["snapshots_per_orbit"] *= 2            # the same snapshots, read as a run of 0.25 orbits
    (tidal / "run.json").write_text(json.dumps(run))
    _, record = plot_tidal_tails(tidal, tmp_path / "tt.png")
    assert "at 0, 0.5 orbits:" in record["summary"], record["summary"]     # the end, at t = 0.5 T, shown
    bh = tmp_path / "bh" / "ratio_1"
    shutil.copytree(science_runs / "black_hole" / "ratio_1", bh)
    run = json.loads((bh / "run.json").read_text())
    for name in run["snapshots"][4:]:                     # the fall cut short, long before the pericentre
        (bh / name).unlink()
    run["snapshots"] = run["snapshots"][:4]
    run["steps"] = int(run["snapshots"][-1][len("snap_"):-len(".npz")])     # a run that ended there
    (bh / "run.json").write_text(json.dumps(run))
    _, record = plot_black_hole(tmp_path / "bh", tmp_path / "bh.png")
    assert "no passage within the run" in record["summary"] and "closest approach" not in record["summary"], \
        record["summary"]


def test_module_entry_point_help():
    out = subprocess.run([sys.executable, "-m", "nbsymple_versions.paper", "--help"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0 and "--no-science" in out.stdout and "--results" in out.stdout


def test_gpu_versions_are_drawn_and_compared_with_b(tmp_path, capsys):
    """Versions C-E (absent from the CPU fixture) derived in a tmp copy: B's numbers scaled by
    0.1, appended to every (version, ...) benchmark; the figures take five versions and the
    report says where they are faster than B."""
    results = _results_copy(tmp_path)
    path = results / _results_file().parent.name / _results_file().name
    d = json.loads(path.read_text())
    for name, row in d["results"].items():
        cols = dict(zip(d["result_columns"], row))
        params = cols["params"]
        if params and params[0] == ["'A'", "'B'"] and isinstance(cols["result"], list):
            block = len(cols["result"]) // 2
            b = cols["result"][block:]
            scale = 0.1 if name.split(".")[-1].startswith("time_") else 1.0
            extra = [None if v is None else v * scale for v in b]
            row[0] = cols["result"] + extra * 3
            row[1] = [params[0] + ["'C'", "'D'", "'E'"]] + params[1:]
            for k in range(2, len(row)):     # per-combination columns no longer line up: drop them
                if isinstance(row[k], list) and k != d["result_columns"].index("version"):
                    row[k] = None
    path.write_text(json.dumps(d))
    res = load_results(results)
    assert {k[0] for k in res.get("steps.Step.time_step_leapfrog")} == set("ABCDE")
    out = tmp_path / "plots"
    assert paper.main(["--results", str(results), "--out", str(out), "--no-science", "--quiet"]) == 0
    for name in BENCH_OUTPUTS:
        assert (out / name).exists(), name
    report = (out / "REPORT.md").read_text()
    assert "Version C is faster than B at every N measured (no noise recorded: by the values alone)." in report
    assert "| E | 256 |" in (out / "task_shares.md").read_text()


def test_a_figure_footer_says_the_load_its_timings_were_taken_under():
    """A figure travels without its report: its footer says quiet, loaded or not recorded."""
    from types import SimpleNamespace
    from nbsymple_versions.paper.data import load_phrase, load_problem, source_line

    def res(*loads):
        return SimpleNamespace(provenance=[{"load_average": la} for la in loads] + [{"threads": 2}])
    quiet, busy = {"max": 1.2, "median": 1.0, "cores": 2}, {"max": 4.5, "median": 3.0, "cores": 2}
    assert load_phrase(res(quiet)) == "quiet (1-min load up to 1.2 on 2 cores)" and load_problem(res(quiet)) is None
    assert load_phrase(res(quiet, busy)).startswith("TAKEN UNDER LOAD (1-min load up to 4.5 on 2 cores)")
    assert load_problem(res(quiet, busy)).startswith("Taken under load: the 1-minute load average reached 4.5")
    at = {"max": 2.0, "median": 1.5, "cores": 2}        # as many as the cores: above them is busy (a mutation hunt)
    assert load_problem(res(at)) is None and load_phrase(res(at)).startswith("quiet")
    assert load_phrase(res()) == "machine load not recorded"
    res_fixture = load_results(FIXTURE)
    assert source_line(res_fixture).endswith(load_phrase(res_fixture))


def test_a_load_value_the_results_do_not_know_is_passed_over():
    """A hunt: a load-average record of `"max": null` (the reader takes null as not known; the
    suite's record holds `"cores": null` where os.cpu_count() says None) ended paper in a TypeError
    in the footer ("unsupported format string passed to NoneType"), and beside a record of max 1.0
    in max()'s: a record without its max says nothing of the load, and an unknown median or core
    count is not written."""
    from types import SimpleNamespace
    from nbsymple_versions.paper.data import load_phrase, load_problem

    def res(*loads):
        return SimpleNamespace(provenance=[{"load_average": la} for la in loads])
    unknown, quiet = {"max": None, "cores": 2}, {"max": 1.0, "cores": 2}
    assert load_phrase(res(unknown)) == "machine load not recorded"
    assert load_problem(res(unknown)).startswith("These results do not record how busy the machine was")
    assert load_phrase(res(unknown, quiet)) == load_phrase(res(quiet, unknown)) \
        == "quiet (1-min load up to 1 on 2 cores)"
    assert load_problem(res(unknown, quiet)) is None
    busy = {"max": 4.5, "median": None, "cores": None}
    assert load_phrase(res(busy)).startswith("TAKEN UNDER LOAD (1-min load up to 4.5 on ? cores)")
    assert load_problem(res(busy)).startswith("Taken under load: the 1-minute load average reached 4.5 on ? cores ")


def test_paper_writes_its_report_where_a_load_record_holds_null(tmp_path):
    """The hunt's file, through `paper`: written, status 0, the load said not recorded."""
    results = tmp_path / "res"
    shutil.copytree(FIXTURE, results)
    path = next((results / "fixture-2core-nogpu").glob("*-existing-*.json"))
    d = json.loads(path.read_text())
    d["provenance"] = [{"load_average": {"max": None, "cores": 2}}]
    path.write_text(json.dumps(d))
    out = tmp_path / "plots"
    assert paper.main(["--results", str(results), "--out", str(out), "--no-science", "--quiet"]) == 0
    assert "These results do not record how busy the machine was" in (out / "REPORT.md").read_text()


@pytest.mark.parametrize("text", [
    "asv results: " + "; ".join(f"field{i} value{i}" for i in range(30)) + "\ndashed: predicted",
    "asv results: machine m (" + "W" * 250 + ", 2 threads)"])        # capitals, wider than the mean, unbroken
def test_a_long_footer_wraps_to_the_figure_instead_of_widening_it(tmp_path, text):
    """The provenance footer is wrapped to the figure's width, a word longer than a line too: the
    saved figure is as wide as it was made (4 inches at 200 dpi), the footer lies inside it and
    below the axes, and keeps every character."""
    import matplotlib.image
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from nbsymple_versions.paper import style
    with style.style():
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.plot([0, 1], [0, 1])
        path = style.save(fig, tmp_path / "f.png", text)
        label, renderer = fig.texts[-1], FigureCanvasAgg(fig).get_renderer()    # (save closed the figure)
        assert "".join(label.get_text().split()) == "".join(text.split())
        box, inside, axes = label.get_window_extent(renderer), fig.bbox, ax.get_tightbbox(renderer)
        assert inside.x0 <= box.x0 and box.x1 <= inside.x1 and inside.y0 <= box.y0 and box.y1 <= axes.y0, \
            (box, inside.bounds, axes)
    height, width = matplotlib.image.imread(path).shape[:2]
    assert width == 4 * style.DPI and height > 3 * style.DPI, (width, height)


def test_a_science_figure_whose_run_cannot_be_read_names_the_file(tmp_path, capsys, monkeypatch):
    """A review: a read of a run's file that failed (a snapshot this user may not read) said
    "tidal_tails.png not written: Permission denied." of no file (the exception's own words had
    named it): the file is named."""
    import errno
    import importlib
    module = importlib.import_module("nbsymple_versions.paper.science_plots")    # main's when it draws
    out = tmp_path / "plots"
    (out / "runs" / "tidal_tails").mkdir(parents=True)
    (out / "runs" / "tidal_tails" / "run.json").write_text("{}")     # a finished run (its record is not read here)
    snapshot = out / "runs" / "tidal_tails" / "snap_00000001.npz"

    def unreadable(folder, path):
        raise PermissionError(errno.EACCES, "Permission denied", str(snapshot))
    monkeypatch.setattr(module, "plot_tidal_tails", unreadable)
    assert paper.main(["--results", str(FIXTURE), "--out", str(out), "--quiet", "--no-science"]) == 1
    err = capsys.readouterr().err
    assert f"tidal_tails.png not written: Permission denied ({snapshot})." in err, err


def test_a_file_an_artefact_is_made_from_that_cannot_be_read_is_not_said_unwritable(tmp_path, capsys, monkeypatch):
    """A review: a file read for a benchmark artefact that could not be read was said to be one that
    "cannot be written" (`_why` named any OSError's file so): the reason and the file, as read."""
    import errno
    import importlib
    module = importlib.import_module("nbsymple_versions.paper.main")
    source = tmp_path / "source.json"

    def unreadable(*args):
        raise PermissionError(errno.EACCES, "Permission denied", str(source))
    monkeypatch.setattr(module, "write_conservation", unreadable)
    out = tmp_path / "plots"
    assert paper.main(["--results", str(FIXTURE), "--out", str(out), "--quiet", "--no-science"]) == 1
    err = capsys.readouterr().err
    assert f"conservation.md not written: Permission denied ({source})." in err, err


def test_a_figure_laid_out_then_drawn_once_has_savefigs_own_pixels(tmp_path, monkeypatch):
    """`style.save` lays a figure out, then draws it once, where savefig drew it twice (the first
    draw only to lay it out): the same bytes as savefig's own way, for the figure of most panels
    (shared log axes, notes, a legend beside, a footer)."""
    import io
    from nbsymple_versions.paper import figures, style
    res = load_results(FIXTURE)
    figures.dp_vs_dsp(res, tmp_path / "once.png")

    def savefigs_way(fig, path, source):
        with style.quiet_glyphs():
            style.footer(fig, source)
            image = io.BytesIO()
            fig.savefig(image, format="png", dpi=style.DPI)
        style.plt.close(fig)
        path.write_bytes(image.getvalue())
        return path
    monkeypatch.setattr(figures, "save", savefigs_way)
    figures.dp_vs_dsp(res, tmp_path / "savefig.png")
    assert (tmp_path / "once.png").read_bytes() == (tmp_path / "savefig.png").read_bytes()
