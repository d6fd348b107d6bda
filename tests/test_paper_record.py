"""`nbsymple paper` as a reader meets it: a clean clone stays clean in its stamps, the results of a
complete commit are chosen over a newer partial run, and REPORT.md concludes only what its
numbers' noise allows. No timing assertions."""
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nbsymple_versions import paper
from nbsymple_versions.instruments.provenance import git_commit, pin_commit

REPO = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).parent / "data" / "asv_fixture"


def _git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


# ----------------------------------------------------------------------------- a clean tree stays clean

def _one_commit(tmp_path: Path) -> tuple[Path, str]:
    """A git repository of one commit of f.txt ("one"), and that commit's short hash."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    (repo / "f.txt").write_text("one\n")
    _git("add", "f.txt", cwd=repo)
    _git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "one", cwd=repo)
    return repo, _git("rev-parse", "--short=8", "HEAD", cwd=repo)


def test_a_pinned_commit_names_the_tree_before_the_command_wrote(tmp_path):
    repo, head = _one_commit(tmp_path)
    assert pin_commit(repo) == head
    (repo / "f.txt").write_text("two\n")              # the command's own write
    assert git_commit(repo) == head
    assert pin_commit(repo) == head + "+dirty"        # a later command sees the change that existed before it


def test_an_untracked_file_leaves_the_commit_clean(tmp_path):
    """`git_commit`: "+dirty" only where tracked files differ from the commit; a file git does not track (a
    user's notes, a scratch output) leaves the commit clean (a mutation hunt)."""
    repo, head = _one_commit(tmp_path)
    (repo / "notes.txt").write_text("mine\n")
    assert git_commit(repo) == head
    (repo / "f.txt").write_text("two\n")
    assert git_commit(repo) == head + "+dirty"


def test_git_words_that_are_not_text_of_the_locale_leave_the_commit_unknown(tmp_path):
    """A hunt: git's words naming a path of bytes that are not UTF-8 (GIT_DIR then; a checkout's
    folder alike) ended `nbsymple info`, `paper` and every record in a UnicodeDecodeError."""
    folder = tmp_path / os.fsdecode(b"not-a-checkout-\xff")
    folder.mkdir()
    assert git_commit(folder) == "unknown"


def test_the_commit_is_the_checkouts_whatever_git_variables_name(tmp_path, monkeypatch):
    """A hunt: GIT_DIR recorded another repository's commit, GIT_INDEX_FILE=/dev/null (git's
    status failing) a changed checkout as clean, GIT_CONFIG_PARAMETERS of garbage no commit."""
    repo, head = _one_commit(tmp_path)
    (tmp_path / "other").mkdir()
    other, _ = _one_commit(tmp_path / "other")
    (other / "f.txt").write_text("three\n")
    _git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qam", "two", cwd=other)
    for name, value in (("GIT_DIR", str(other / ".git")), ("GIT_WORK_TREE", str(other)),
                        ("GIT_CONFIG_PARAMETERS", "garbage"), ("GIT_INDEX_FILE", "/dev/null")):
        monkeypatch.setenv(name, value)
        assert git_commit(repo) == head, name
    (repo / "f.txt").write_text("two\n")
    assert git_commit(repo) == head + "+dirty"


TINY_SCIENCE = ["--tidal-n", "48", "--tidal-dt", "0.125", "--tidal-orbits", "0.5", "--bh-n", "32",
                "--bh-dt", "0.0078125", "--bh-t-end", "2.0", "--bh-ratios", "1", "--science-version", "A"]


@pytest.mark.parametrize("science", [["--no-science"], TINY_SCIENCE], ids=["no-science", "tiny-science"])
def test_paper_on_a_clean_clone_stamps_the_clean_commit(tmp_path, science):
    """`python -m nbsymple_versions.paper` in a fresh clone of this checkout's HEAD rewrites plots/
    (the benchmark figures first, then the science runs); every commit it stamps (REPORT.md, the
    runs' run.json) is the clone's, without '+dirty': its own writes came after the commit was read."""
    clone = tmp_path / "clone"
    _git("clone", "-q", str(REPO), str(clone), cwd=tmp_path)
    head = _git("rev-parse", "--short=8", "HEAD", cwd=clone)
    # the committed records of earlier runs (the dt series' runs) keep the stamps they were made
    # with, and REPORT.md quotes them: those are not this command's to judge
    quoted = {s for p in (clone / "plots").glob("*_series.json")
              for s in re.findall(r'"commit": "([0-9a-f]{8,40}(?:\+dirty)?)"', p.read_text())}
    env = {**os.environ, "PYTHONPATH": str(clone)}          # the clone's package, not this checkout's
    proc = subprocess.run([sys.executable, "-m", "nbsymple_versions.paper", "--quiet", *science], cwd=clone,
                          env=env, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = (clone / "plots" / "REPORT.md").read_text()
    stamps = set(re.findall(r"commit ([0-9a-f]{8,40}(?:\+dirty)?)", report))
    stamps |= {json.loads(p.read_text())["provenance"]["commit"] for p in (clone / "plots" / "runs").glob("*/run.json")}
    assert stamps - quoted and not any(s.endswith("+dirty") for s in stamps - quoted), (stamps, quoted)
    if "predicted (" in report or science != ["--no-science"]:     # the prediction and the runs stamp the clone's
        assert head in stamps, (head, stamps)


# ----------------------------------------------------------------------------- the right results

BENCH_OUTPUTS = ["time_per_step.png", "speedup.png", "dp_vs_dsp.png", "task_shares.md", "task_shares.csv",
                 "task_shares.png", "conservation.md"]
PARTIAL = "b" * 40          # a later commit's partial run: the gate's pairwise timings only


def _with_partial_newer_run(tmp_path) -> tuple[Path, str]:
    """A copy of the fixture (one complete commit) beside a later commit's results file that holds
    only tasks.Tasks.time_pairwise, as `asv continuous` or a history run of a few benchmarks
    leaves it; returns (results folder, the complete commit)."""
    results = tmp_path / "results"
    shutil.copytree(FIXTURE, results)
    complete = next(p for p in results.glob("*/*.json") if p.name != "machine.json")
    data = json.loads(complete.read_text())
    data["commit_hash"] = PARTIAL
    data["date"] += 86_400_000
    data["results"] = {k: v for k, v in data["results"].items() if k == "tasks.Tasks.time_pairwise"}
    (complete.parent / f"{PARTIAL[:8]}-{data['env_name']}.json").write_text(json.dumps(data))
    return results, json.loads(complete.read_text())["commit_hash"]


def test_a_newer_partial_run_is_passed_over_for_the_complete_commit(tmp_path, capsys):
    results, good = _with_partial_newer_run(tmp_path)
    out = tmp_path / "plots"
    assert paper.main(["--results", str(results), "--out", str(out), "--no-science", "--quiet"]) == 0
    for name in BENCH_OUTPUTS:
        assert (out / name).exists(), name
    said = capsys.readouterr().out
    assert f"commit {good[:8]}" in said and f"{PARTIAL[:8]} (lacks " in said, said
    report = (out / "REPORT.md").read_text()
    assert f"| commit | {good} " in report and PARTIAL[:8] not in report.split("## Notes")[0]


def test_commit_names_the_partial_run_and_says_what_it_lacks(tmp_path, capsys):
    results, _ = _with_partial_newer_run(tmp_path)
    out = tmp_path / "plots"
    assert paper.main(["--results", str(results), "--out", str(out), "--no-science", "--quiet",
                       "--commit", PARTIAL[:8]]) == 1          # its figures cannot be drawn: status 1
    said = capsys.readouterr().out
    assert f"commit {PARTIAL[:8]}, as --commit named it; it lacks steps.Step.time_step_leapfrog" in said, said
    assert not (out / "time_per_step.png").exists()


def test_a_machine_with_only_a_newer_history_is_not_the_default(tmp_path):
    """Another machine whose results are a history run (task and step timings only) ran last: the
    default machine is still the one with a complete commit, and naming the other reads it."""
    from nbsymple_versions.paper.data import PAPER_NEEDS
    from nbsymple_versions.paper.results import load_results
    results, good = _with_partial_newer_run(tmp_path)
    complete = next(p for p in results.glob("*/*.json") if p.name not in ("machine.json",) and good[:8] in p.name)
    history = results / "amd-epyc-znver5-avx512-2cores-nogpu"
    history.mkdir()
    machine = json.loads((complete.parent / "machine.json").read_text())
    (history / "machine.json").write_text(json.dumps(dict(machine, machine=history.name, uarch="znver5")))
    partial = complete.parent / f"{PARTIAL[:8]}-{json.loads(complete.read_text())['env_name']}.json"
    data = json.loads(partial.read_text())
    at = data["result_columns"].index("started_at")
    for row in data["results"].values():                     # it ran a day later
        row[at] += 86_400_000
    (history / f"{PARTIAL[:8]}-env.json").write_text(json.dumps(data))
    partial.unlink()
    assert load_results(results, needs=PAPER_NEEDS).machine == complete.parent.name
    assert load_results(results, machine=history.name, needs=PAPER_NEEDS).machine == history.name


def test_without_a_complete_commit_the_least_incomplete_is_read():
    from nbsymple_versions.paper.results import ResultFile, choose_commit
    files = [ResultFile(Path(f"m/{c * 8}-env.json"), c * 40, date, "", "", {}, {}, rows)
             for c, date, rows in (("a", 1, {"x": {"result": [1.0]}}),
                                   ("b", 2, {"x": {"result": [None]}, "y": {"result": 2.0}}),
                                   ("c", 3, {}))]
    chosen, sentence = choose_commit(files, needs=(("x",), ("y", "z")))
    assert chosen == "b" * 40        # a and b lack one need each (b's x is all null); b is newer; c lacks two
    assert "lacks the fewest (x)" in sentence and "cccccccc (lacks x; y or z)" in sentence
    assert choose_commit(files)[0] == "c" * 40          # no needs: the newest


# ----------------------------------------------------------------------------- conclusions within the noise

def test_the_fastest_is_named_only_beyond_the_intervals():
    from nbsymple_versions.paper.report import fastest_sentence
    times = {"A": 0.38, "B": 0.24}
    assert fastest_sentence(times, {"A": (0.30, 0.45), "B": (0.23, 0.25)}) == \
        "version B is the fastest (its 99 % interval lies below the others')"
    assert fastest_sentence(times, {"A": (0.24, 0.45), "B": (0.23, 0.25)}) == \
        "versions A and B are tied for the fastest (their 99 % intervals overlap)"
    assert fastest_sentence({"A": 2.0, "B": 2.0}, {}).startswith("versions A and B are tied")   # no noise recorded
    assert fastest_sentence({"A": 2.0, "B": 1.0}, {}) == \
        "version B is the fastest (no noise recorded: by the values alone)"


def _zen3(**drop):
    """The committed Zen 3 results, with the dp leapfrog step of each (version, N) in `drop` emptied."""
    import itertools
    from nbsymple_versions.paper.data import PAPER_NEEDS, STEP
    from nbsymple_versions.paper.results import load_results
    res = load_results(REPO / "results", "amd-epyc-znver3-avx2-2cores-nogpu", needs=PAPER_NEEDS)
    row = res._rows[STEP["leapfrog"]]
    for i, combo in enumerate(itertools.product(*row["params"])):
        if (combo[0].strip("'"), int(combo[1])) in drop.get("steps", ()):
            for column in ("result", "stats_ci_99_a", "stats_ci_99_b"):
                if isinstance(row.get(column), list):
                    row[column][i] = None
    return res


def test_each_step_times_interval_is_the_one_its_results_file_recorded():
    """`Results.interval`, which decides every "faster", "tied" and "fastest" of REPORT.md: asv's 99 %
    interval of each step time as the results file holds it (`stats_ci_99_a`, `stats_ci_99_b`), around the
    time (a mutation hunt: every interval taken as the time alone, "no noise recorded", passed every test)."""
    from nbsymple_versions.paper.data import STEP
    res = _zen3()
    row = res._rows[STEP["leapfrog"]]
    spans = res.interval(STEP["leapfrog"])
    measured = [(i, key, t) for i, (key, t) in enumerate(res.get(STEP["leapfrog"], keep_missing=True).items())
                if math.isfinite(t)]
    assert measured and len(spans) == len(measured)
    for i, key, t in measured:
        assert spans[key] == (row["stats_ci_99_a"][i], row["stats_ci_99_b"][i]) and spans[key][0] < t < spans[key][1]


def test_no_version_is_called_fastest_alone_and_each_slope_names_its_n():
    """A hunt: with B's N = 16384 step missing, REPORT.md called A "the fastest" (the only one
    measured there), and B's slope, taken between 1024 and 4096, read as "between the two largest N"."""
    from nbsymple_versions.paper.report import findings
    text = " ".join(findings(_zen3(steps={("B", 16384)}), None))
    assert "(A); no other version was measured at this N, so none is ranked (B up to N = 4096)." in text, text
    assert "is the fastest" not in text and re.search(r"B: \d\.\d\d \(N = 1024 to 4096\)", text), text
    assert re.search(r"A: \d\.\d\d \(N = 4096 to 16384\)", text), text


def test_task_shares_missing_from_the_results_are_said_to_be_left_out():
    """A hunt: B's N = 16384 shares all null vanished from the table in silence, and A's N = 1024
    with its galactic share null showed a blank cell, its row no longer summing to 100 %."""
    import itertools
    from nbsymple_versions.paper.data import SHARE, task_share_table
    from nbsymple_versions.paper.results import load_results
    res = _zen3()
    row = res._rows[SHARE]
    for i, (v, n, task) in enumerate(itertools.product(*row["params"])):
        if (v, n) == ("'B'", "16384") or (v, n, task) == ("'A'", "1024", "'galactic'"):
            row["result"][i] = None
    table, origin = task_share_table(res)
    assert ("A", 1024) not in {(r["version"], r["n"]) for r in table} and ("A", 4096) in {
        (r["version"], r["n"]) for r in table}
    assert "A left out at N = 1024 (galactic): a share not measured" in origin, origin
    assert "B left out at N = 16384: not measured" in origin, origin
    zen4 = load_results(REPO / "results", "amd-epyc-znver4-avx512-2cores-nogpu")   # a TaskClock without
    table, origin = task_share_table(zen4)                  # communicate: a blank column, no row left out
    assert {r["version"] for r in table} == {"A", "B"} and "left out" not in origin, origin    # (a review)


def test_a_threaded_host_task_far_slower_than_the_serial_one_is_said_to_have_waited():
    """A hunt: the H200's D integrated 16384 bodies in 15.7 ms against C's serial 60 us (the same
    source), and its measured shares were shown as the kernels' without the caveat the
    prediction applies (it caps threaded host times at the serial ones)."""
    from nbsymple_versions.paper.data import task_share_table
    from nbsymple_versions.paper.results import load_results
    res = load_results(REPO / "results", "intel-r-xeon-r-processor-emeraldrapids-avx512-16cores-1x-nvidia-h200")
    origin = task_share_table(res)[1]
    assert re.search(r"D's threaded host tasks took more than the serial kernel's \(.*integrate at N = 16384 "
                     r"\d+x C's", origin), origin
    assert "C's threaded" not in origin and "shares measure the wait" in origin, origin
    table = task_share_table(res)[0]
    assert {(r["version"], r["n"]) for r in table if r.get("waited")} >= {("D", 262144), ("E", 262144)}
    assert not any(r.get("waited") for r in table if r["version"] == "C"), table


def test_the_findings_do_not_credit_the_o_n_work_with_a_parallel_regions_wait(tmp_path):
    """A hunt: the H200's REPORT.md said "C, D and E below it: the O(N) tasks still weigh more at
    these N", where D's and E's shares at that N measure their threads' wait (the task shares'
    source says so). The finding says it of C alone, and of D and E that they waited."""
    from nbsymple_versions.paper.main import main
    h200 = "intel-r-xeon-r-processor-emeraldrapids-avx512-16cores-1x-nvidia-h200"
    assert main(["--results", str(REPO / "results"), "--machine", h200, "--out", str(tmp_path), "--no-science",
                 "--quiet"]) in (0, 1)
    report = (tmp_path / "REPORT.md").read_text()
    assert "; C below it: the O(N) tasks still weigh more at these N; D and E below it too, where their threaded " \
           "host tasks waited for their threads (those shares measure the wait" in report, report


def test_paper_removes_what_a_killed_paper_left_in_out(tmp_path):
    """A hunt: `paper` killed while it wrote a figure left `.time_per_step.png.<pid>.<random>.tmp`
    in OUT for good (no lock guards OUT). A temporary of a process that is gone, a minute old, is
    removed at the start; a live writer's is kept."""
    import time
    from nbsymple_versions.paper.main import main
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f".time_per_step.png.{int(dead.stdout)}.p431bv8r.tmp"
    live = tmp_path / f".speedup.png.{os.getpid()}.q2xabcde.tmp"
    users = tmp_path / ".draft.2024.tmp"                   # not a writer's (a review: it was removed)
    beyond = tmp_path / f".task_shares.png.{10**20}.abcdefgh.tmp"     # no process's id: paper's OverflowError
    for path in (stale, live, users, beyond):
        path.write_bytes(b"cut short")
        os.utime(path, (time.time() - 3600,) * 2)
    assert main(["--results", str(FIXTURE), "--out", str(tmp_path), "--no-science", "--quiet"]) == 0
    assert not stale.exists() and live.exists() and users.exists() and not beyond.exists()


def test_a_need_named_alone_is_a_group_of_one_and_orbits_are_whole_snapshots():
    """Hunts: paper.md's `load_results("results", needs=("steps.Step.time_step_leapfrog",))` read
    the name as a group of its letters and chose a machine without that benchmark (KeyError);
    `--tidal-orbits 0.13` ran 0.25 orbits and recorded 0.13."""
    from nbsymple_versions.paper.results import load_results
    from nbsymple_versions.paper.science_runs import tidal_schedule
    res = load_results(REPO / "results", needs=("steps.Step.time_step_leapfrog",))
    assert res.get("steps.Step.time_step_leapfrog") and "s or t or e" not in res.choice, res.choice
    once = load_results(REPO / "results", needs=(n for n in ["steps.Step.time_step_leapfrog"]))   # a generator,
    assert once.machine == res.machine                      # used up by the first machine ranked (a hunt)
    for orbits, nearest in ((0.13, "choose --tidal-orbits 0.25"), (1.3, "choose --tidal-orbits 1.25 or 1.5")):
        with pytest.raises(ValueError, match=nearest):
            tidal_schedule(2.0 ** -11, orbits)
    every, total = tidal_schedule(2.0 ** -11, 0.75)
    assert total == 3 * every


def test_a_machine_with_a_gpu_and_no_gpu_results_is_not_said_to_have_none():
    """A hunt: "it has no GPU" beside a header naming the machine's H200 (C-E skipped there); and a
    GPU machine whose results hold only the task benchmarks was "no GPU (CPU only)"."""
    from nbsymple_versions.paper.data import describe_machine
    from nbsymple_versions.paper.report import findings
    from nbsymple_versions.paper.results import load_results
    res = _zen3()
    res.machine_info["gpu"] = "1 x NVIDIA H200"
    text = " ".join(findings(res, None))
    assert "it has a GPU (1 x NVIDIA H200), but their step benchmarks were skipped or failed there" in text, text
    gpu = load_results(REPO / "results", "intel-r-xeon-r-processor-emeraldrapids-avx512-16cores-1x-nvidia-h200")
    gpu.machine, gpu.machine_info, gpu.env_params = "gpuhost", {}, {}     # a plain `asv run`'s machine name
    assert describe_machine(gpu)["device"] == "GPU (model not recorded in machine.json)"


def test_a_thread_count_is_shown_as_recorded():
    """A results file whose recorded thread count was 2.5 (no count numba reports) was shown as 2
    threads: truncated in silence (a hunt of file contents)."""
    from nbsymple_versions.paper.data import THREADS, describe_machine
    res = _zen3()
    res._rows[THREADS] = {**res._rows[THREADS], "result": [2.5]}
    assert describe_machine(res)["threads"] == "2.5"
    res._rows[THREADS] = {**res._rows[THREADS], "result": [2.0]}
    assert describe_machine(res)["threads"] == "2"


@pytest.mark.parametrize("num_cpu, ram", [("-5", "-0"), (0, "0.5"), ("x", None), (math.nan, math.inf)])
def test_a_machine_s_count_that_is_none_is_shown_as_not_recorded(num_cpu, ram):
    """machine.json's num_cpu and ram shown as written: "-5 cores", "-0 GiB" (a hunt's leftover); a
    value that is no positive whole number is now "?" (not recorded), and a count as written."""
    from nbsymple_versions.paper.data import describe_machine
    res = _zen3()
    res.machine_info.update(num_cpu=num_cpu, ram=ram)
    res.env_params = {}
    m = describe_machine(res)
    assert (m["num_cpu"], m["ram"]) == ("?", "?"), m
    res.machine_info.update(num_cpu="16", ram=64)
    assert (describe_machine(res)["num_cpu"], describe_machine(res)["ram"]) == ("16", 64)


@pytest.mark.parametrize("num_cpu, ram, shown", [("2", "24 GiB", ("2", "24 GiB")), (16, "1.5 GB", (16, "1.5 GB")),
                                                  (10 ** 400, "-3 GiB", ("?", "?")), (True, "0 GiB", ("?", "?"))],
                         ids=["text", "unit", "huge", "true"])
def test_a_machine_s_ram_with_its_unit_is_shown_and_a_long_count_is_not_a_traceback(num_cpu, ram, shown):
    """A review: `_count` showed ram "24 GiB" (as this repository's machine.json files hold it) as "?",
    and a num_cpu of 400 digits was an OverflowError traceback; a positive number with its unit is
    shown as written, a count beyond any float is not recorded."""
    from nbsymple_versions.paper.data import describe_machine
    res = _zen3()
    res.machine_info.update(num_cpu=num_cpu, ram=ram)
    m = describe_machine(res)
    assert (m["num_cpu"], m["ram"]) == shown, m


def test_a_commit_s_results_of_two_pythons_are_not_mixed(tmp_path):
    """A hunt: one commit's results of Python 3.11 (A and B) and of 3.12 (B alone, later) were
    merged, B's 3.12 times compared with A's 3.11 ones under "Python 3.12"."""
    from nbsymple_versions.paper.results import load_results
    machine = "amd-epyc-znver3-avx2-2cores-nogpu"
    shutil.copytree(REPO / "results" / machine, tmp_path / machine)
    shutil.copy(REPO / "results" / "benchmarks.json", tmp_path)
    (first,) = [f for f in (tmp_path / machine).glob("*.json") if f.name != "machine.json"]
    d = json.loads(first.read_text())
    d["python"], d["env_name"] = "3.12", "virtualenv-py3.12"
    d["results"] = {k: v for k, v in d["results"].items() if k == "steps.Step.time_step_leapfrog"}
    (tmp_path / machine / (first.name.split("-")[0] + "-virtualenv-py3.12.json")).write_text(json.dumps(d))
    res = load_results(tmp_path, machine)
    assert res.python == "3.11" and [f for f in res.files if "py3.12" in f] == [], res.files
    assert any("those of Python 3.12 of the same commit are left out" in w for w in res.warnings), res.warnings


def test_a_version_against_another_is_faster_slower_or_tied_by_the_intervals():
    from nbsymple_versions.paper.report import against_sentence, fastest_sentence
    spans = {("B", 256): (1.0, 1.2), ("B", 1024): (4.0, 4.4), ("B", 4096): (16.0, 17.0),
             ("C", 256): (2.0, 2.5), ("C", 1024): (4.2, 4.6), ("C", 4096): (5.0, 6.0)}
    assert against_sentence("C", "B", spans) == \
        "Version C is faster than B (beyond their 99 % intervals) from N = 4096 on."
    spans["C", 4096] = (16.5, 18.0)
    assert against_sentence("C", "B", spans) == \
        "Version C against B: tied at N = 1024, 4096; slower at N = 256 (beyond their 99 % intervals)."
    tied = {("B", 256): (1.0, 2.0), ("C", 256): (1.5, 2.5)}
    assert against_sentence("C", "B", tied) == \
        "Version C is tied with B at every N measured (their 99 % intervals overlap)."
    # intervals that touch overlap, as `fastest_sentence` has it (a mutation hunt: "faster" passed)
    touching = {("B", 256): (1.0, 2.0), ("C", 256): (0.5, 1.0)}
    assert against_sentence("C", "B", touching) == \
        "Version C is tied with B at every N measured (their 99 % intervals overlap)."
    assert fastest_sentence({"B": 1.5, "C": 0.75}, {"B": (1.0, 2.0), "C": (0.5, 1.0)}).startswith("versions B and C")


def _prediction(host_shares: dict):
    """A stand-in `prediction.Prediction` whose host tasks take `host_shares` (%) at N = 16384."""
    from types import SimpleNamespace
    letters = tuple(host_shares)
    shares = {v: {"pairwise": 100 - h, "galactic": h * 0.8, "integrate": h * 0.2} for v, h in host_shares.items()}
    return SimpleNamespace(letters=letters, ns=lambda v: [16384], shares=lambda v, n: shares[v],
                           n_for_share=lambda v: 3.3e7, kernels={v: SimpleNamespace(tile=256) for v in letters},
                           gpu=SimpleNamespace(device=SimpleNamespace(clock_ghz=1.98, sms=132)))


def test_a_tie_in_the_predicted_host_share_is_named_and_load_draws_no_ranking():
    from nbsymple_versions.paper.report import prediction_findings
    tied = prediction_findings(_prediction({"C": 63.5, "D": 63.52, "E": 18.8}))[1]
    assert "C and D are tied at 63.5 %, the largest share outside task 1" in tied
    assert "spends the largest share" not in tied
    alone = prediction_findings(_prediction({"C": 63.5, "D": 50.9, "E": 18.8}))[1]
    assert "as in the paper, C (one core) spends the largest share outside task 1" in alone
    busy = prediction_findings(_prediction({"C": 63.5, "D": 50.9, "E": 18.8}), busy=True)[1]
    assert "no ranking is drawn" in busy and "largest" not in busy


def test_a_share_at_the_papers_threshold_to_the_digits_shown_is_not_called_below_it():
    from nbsymple_versions.paper.report import _side
    assert _side(99.7983, 99.8, 2) == 0 and _side(99.79, 99.8, 2) == -1 and _side(99.81, 99.8, 2) == 1
    from nbsymple_versions.paper.report import prediction_findings
    at = prediction_findings(_prediction({"C": 100 - 99.7983}))[0]     # task 1 shown as 99.80 %: not above 99.8
    assert "99.80 % (C, N = 16384)" in at and "not reproduced at these N (C not above it)" in at, at
    assert prediction_findings(_prediction({"C": 100 - 99.81}))[0].endswith("reproduced.")


def test_a_predicted_time_is_shown_in_the_unit_that_gives_it_1_to_999():
    """`report._t`, the seconds of the prediction's tables: each read back is the time to its digits, in s,
    ms or us, 1 to 999 of them (a mutation hunt: 4.2 ms shown as "4.2e+03 us" passed; and 0.9996 ms was
    "1e+03 us", 0.9996 s "1e+03 ms")."""
    from nbsymple_versions.paper.report import _t
    scale = {"s": 1.0, "ms": 1e-3, "us": 1e-6}
    for seconds in (2.5, 0.9996, 0.5, 0.0123, 4.2e-3, 0.9996e-3, 4.2e-4, 5e-6):
        number, unit = _t(seconds).split()
        assert float(number) * scale[unit] == pytest.approx(seconds, rel=5e-3) and 1 <= float(number) < 1000, \
            (seconds, _t(seconds))


def test_under_load_the_report_ranks_nothing(tmp_path):
    """The committed Zen 3 results with their load record pushed above the core count: REPORT.md
    says so, and no sentence ranks versions (fastest, tied for, largest share, faster than)."""
    from nbsymple_versions.paper.data import PAPER_NEEDS
    from nbsymple_versions.paper.main import _prediction
    from nbsymple_versions.paper.report import write_report
    from nbsymple_versions.paper.results import load_results
    res = load_results(REPO / "results", "amd-epyc-znver3-avx2-2cores-nogpu", needs=PAPER_NEEDS)
    for p in res.provenance:
        p["load_average"] = {"max": 5.0, "median": 4.0, "cores": 2}
    prediction = _prediction(res, "H200", lambda msg: None)
    text = write_report(tmp_path, res, {}, [], None, {}, (), prediction).read_text()
    assert "Figures taken under load." in text
    for ranking in ("is the fastest", "tied for the fastest", "spends the largest share", "faster than"):
        assert ranking not in text, ranking
    if prediction is not None:
        assert "no ranking is drawn" in text


# ----------------------------------------------------------------------------- figures that read at a glance

def _kept_figures(monkeypatch, module):
    """Figures `module` saves, kept open for inspection (drawn, as saving would)."""
    kept = []

    def keep(fig, path, source):
        fig.canvas.draw()
        kept.append(fig)
        return Path(path)
    monkeypatch.setattr(module, "save", keep)
    return kept


def _drawn_texts(fig, renderer) -> list:
    """(text, its box in pixels) of every text `fig` draws: titles, axis labels, the tick labels in
    view, legends, texts; not the NOT CONVERGED stamp, drawn across the panels on purpose."""
    texts = [*fig.texts, *([fig._suptitle] if fig._suptitle is not None else [])]
    legends = list(fig.legends)
    for ax in fig.axes:
        texts += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label, *ax.texts]
        legends += [ax.get_legend()] if ax.get_legend() is not None else []
        for axis in (ax.xaxis, ax.yaxis):
            texts += [label for tick in axis._update_ticks() for label in (tick.label1, tick.label2)]
    texts += [t for lg in legends for t in (*lg.get_texts(), lg.get_title())]
    return [(t, t.get_window_extent(renderer)) for t in {id(t): t for t in texts}.values()
            if t.get_visible() and t.get_text().strip() and t.get_gid() != "stamp"]


def unreadable(fig) -> list[str]:
    """What keeps `fig` from reading at a glance: a text on another or cut at the figure's edge, an
    inset reaching out of its panel, a panel whose x values are labelled with no x label on it or
    on a panel below it."""
    from matplotlib.transforms import Bbox
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts, found = _drawn_texts(fig, renderer), []
    for i, (a, box) in enumerate(texts):
        inside = Bbox.intersection(box, fig.bbox)
        if inside is None or inside.width < box.width - 1 or inside.height < box.height - 1:
            found.append(f"{a.get_text()!r} is cut at the figure's edge")
        for b, other in texts[i + 1:]:
            both = Bbox.intersection(box, other)
            if both is not None and both.width > 1 and both.height > 1:
                found.append(f"{a.get_text()!r} lies on {b.get_text()!r}")
    insets = [child for ax in fig.axes for child in ax.child_axes]
    for ax in fig.axes:
        panel = ax.get_window_extent(renderer)
        for child in ax.child_axes:
            tight = child.get_tightbbox(renderer)
            if tight.x0 < panel.x0 - 1 or tight.y0 < panel.y0 - 1 or tight.x1 > panel.x1 + 1 or tight.y1 > panel.y1 + 1:
                found.append(f"an inset of {ax.get_title()!r} reaches out of its panel")
        box = ax.get_position()
        below = [b for b in fig.axes if b is not ax and b.get_xlabel().strip() and b.get_position().y1 <= box.y0
                 and min(b.get_position().x1, box.x1) - max(b.get_position().x0, box.x0) > 0.5 * box.width]
        labelled = any(t.label1.get_visible() and t.label1.get_text().strip() for t in ax.xaxis._update_ticks())
        if ax not in insets and labelled and not ax.get_xlabel().strip() and not below:
            found.append(f"panel {ax.get_title()!r} has x values and no x label")
    return found


def test_no_benchmark_figure_of_any_committed_machine_has_a_text_on_another(tmp_path, monkeypatch):
    """A hunt: the H200's task shares labelled N = 16384, 65536, 131072, 262144 as one run of
    digits ("65536131072262144"), and their legend listed the MPI exchange, which no bar has. Every
    figure `paper` draws of each committed machine's results, and of the fixture's, reads at a
    glance (`unreadable`), and no legend names a task without a bar."""
    from nbsymple_versions import cli
    from nbsymple_versions.paper import figures
    from nbsymple_versions.paper.style import TASK_LABELS, plt
    kept = _kept_figures(monkeypatch, figures)
    folders = [(REPO / "results", p.name) for p in sorted((REPO / "results").iterdir()) if p.is_dir()]
    seen = set()
    for results, machine in [*folders, (FIXTURE, None)]:
        kept.clear()
        assert cli.main(["paper", "--results", str(results), *(["--machine", machine] if machine else []),
                         "--no-science", "--out", str(tmp_path / (machine or "fixture")), "--quiet"]) in (0, 1)
        assert kept, machine
        titles = [(fig._suptitle or fig.axes[0].title).get_text() for fig in kept]
        for fig, title in zip(kept, titles):
            assert not unreadable(fig), (machine, title, unreadable(fig))
        seen.update(titles)
        shares = next(fig for fig, title in zip(kept, titles) if title.startswith("Where a step's time goes"))
        named = {t.get_text() for lg in shares.legends for t in lg.get_texts()}
        assert TASK_LABELS["pairwise"] in named and TASK_LABELS["communicate"] not in named, (machine, named)
        for fig in kept:
            plt.close(fig)
        out = tmp_path / (machine or "fixture")
        notes = {line.split(" not written: ")[0]: line for line in (out / "REPORT.md").read_text().splitlines()
                 if " not written: " in line}     # each with the reason its data has (the H200's speedup.png:
        if "no step timings in dp" in notes.get("- time_per_step.png", ""):       # "no version besides A")
            assert "no step timings in dp" in notes["- speedup.png"], notes
        conservation = (out / "conservation.md").read_text() if (out / "conservation.md").exists() else ""
        if "the internal error measures the ratio" in conservation:      # (said where no such ratio followed)
            assert "conserves energy (internal)" in conservation, conservation
    assert len(seen) >= 4, seen


def test_no_science_figure_has_a_text_on_another(tmp_path, monkeypatch):
    """A hunt: the black-hole track's zoom drew its tick labels across the panel's x axis, and a
    tidal-tails run of 2 or 3 snapshots left panels with x values and no x label (the label was
    drawn on the second row alone), and its orbit panel drew the cluster after 1 orbit on the one
    at 0 (each snapshot's centre now has a ring, smaller for each later one). Runs of 0.25 to 1.5
    orbits and a black hole of two masses, each not converged (N = 32: their stamp lies across the
    panels on purpose)."""
    from nbsymple_versions.paper import science_plots
    from nbsymple_versions.paper.science_runs import run_black_hole, run_tidal_tails
    from nbsymple_versions.paper.style import plt
    kept = _kept_figures(monkeypatch, science_plots)
    for orbits in (0.25, 0.5, 1.0, 1.5):
        run_tidal_tails(tmp_path / f"t{orbits}", n=32, dt=0.25, orbits=orbits, version="A", progress=False)
        science_plots.plot_tidal_tails(tmp_path / f"t{orbits}", tmp_path / "t.png")
    run_black_hole(tmp_path / "bh", n=32, dt=2.0 ** -6, t_end=2.0, ratios=(1.0, 10.0), version="A", progress=False)
    science_plots.plot_black_hole(tmp_path / "bh", tmp_path / "bh.png")
    assert len(kept) == 5 and [len(fig.axes) for fig in kept[:4]] == [3, 3, 4, 5]        # 2, 2, 3, 4 snapshots
    for fig, snapshots in zip(kept, (2, 2, 3, 4)):      # (a hunt: after whole orbits a cluster hid another)
        rings = [line for line in fig.axes[0].lines if line.get_marker() == "o" and line.get_mfc() == "none"]
        sizes = [ring.get_markersize() for ring in rings]
        assert len(rings) == snapshots and sizes == sorted(sizes, reverse=True), sizes
        assert len(set(sizes)) == snapshots, sizes
    for fig in kept:
        assert not unreadable(fig), (fig._suptitle.get_text()[:60], unreadable(fig))
        plt.close(fig)


def test_benchmark_legends_lie_off_the_panels_and_coinciding_curves_stay_visible(tmp_path, monkeypatch):
    from nbsymple_versions.paper import figures
    from nbsymple_versions.paper.results import load_results
    from nbsymple_versions.paper.style import version_line
    kept = _kept_figures(monkeypatch, figures)
    res = load_results(FIXTURE)
    figures.time_per_step(res, tmp_path / "t.png")
    figures.speedup(res, tmp_path / "s.png")
    figures.dp_vs_dsp(res, tmp_path / "d.png")
    for fig in kept:
        renderer = fig.canvas.get_renderer()
        legends = [lg for ax in fig.axes for lg in ([ax.get_legend()] if ax.get_legend() else [])] + fig.legends
        assert legends
        for lg in legends:
            box = lg.get_window_extent(renderer)
            for ax in fig.axes:
                assert not box.overlaps(ax.get_window_extent(renderer)), "a legend lies on a panel"
    c, d = version_line("C"), version_line("D")      # one kernel: their curves can coincide
    assert c["marker"] != d["marker"] and c["lw"] > d["lw"] and c["ms"] > d["ms"] and c["zorder"] < d["zorder"]


def test_the_black_hole_track_is_drawn_to_one_scale(tmp_path, monkeypatch):
    from nbsymple_versions.paper import science_plots
    from nbsymple_versions.paper.science_runs import run_black_hole
    kept = _kept_figures(monkeypatch, science_plots)
    run_black_hole(tmp_path / "bh", n=32, dt=2.0 ** -7, t_end=2.0, ratios=(1.0, 10.0), version="A", progress=False)
    science_plots.plot_black_hole(tmp_path / "bh", tmp_path / "bh.png")
    track = kept[0].axes[0]
    assert track.get_aspect() == 1.0
    x0, x1 = track.get_xlim()
    y0, y1 = track.get_ylim()
    box = track.get_window_extent()
    assert abs((x1 - x0) / box.width - (y1 - y0) / box.height) < 1e-6 * (x1 - x0) / box.width   # pc per pixel alike


def test_the_black_hole_title_fits_the_figure_when_both_runs_are_not_converged(tmp_path, monkeypatch):
    """Two ratios not converged (N = 32, dt = 2^-7 T: internal errors of order 1): the third title
    line, "internal energy error at the end: M_BH/M_cl = 1: ... (largest ...: NOT CONVERGED); M_BH/M_cl
    = 10: ... NOT CONVERGED)", was one line wider than the 8.6-inch figure, and the verdict of the
    heavier hole was cut off at the right edge (and the line's start at the left)."""
    from nbsymple_versions.paper import science_plots
    from nbsymple_versions.paper.science_runs import run_black_hole
    kept = _kept_figures(monkeypatch, science_plots)
    run_black_hole(tmp_path / "bh", n=32, dt=2.0 ** -7, t_end=2.0, ratios=(1.0, 10.0), version="A", progress=False)
    _, summary = science_plots.plot_black_hole(tmp_path / "bh", tmp_path / "bh.png")
    assert [r["converged"] for r in summary["runs"]] == [False, False]
    fig = kept[0]
    title = fig._suptitle
    assert title.get_text().count("NOT CONVERGED") == 2
    box, inside = title.get_window_extent(fig.canvas.get_renderer()), fig.bbox
    assert inside.x0 <= box.x0 and box.x1 <= inside.x1, (box, inside)


def test_black_hole_runs_of_other_settings_redrawn_together_are_each_said(tmp_path, monkeypatch):
    """A hunt: `paper --no-science` redraws every finished run in the folder, and titled and summed
    them up with the first run's N and dt (a run of N = 16 at 2^-6 T said to be N = 32 at 2^-7 T).
    What they share is said once; what differs, for each run."""
    from nbsymple_versions.paper import science_plots
    from nbsymple_versions.paper.science_runs import run_black_hole
    kept = _kept_figures(monkeypatch, science_plots)
    run_black_hole(tmp_path / "bh", n=32, dt=2.0 ** -7, t_end=1.0, ratios=(1.0,), version="A", progress=False)
    run_black_hole(tmp_path / "bh", n=16, dt=2.0 ** -6, t_end=1.0, ratios=(3.0,), version="A", progress=False)
    _, summary = science_plots.plot_black_hole(tmp_path / "bh", tmp_path / "bh.png")
    text = summary["summary"]
    assert text.startswith("leapfrog, version A dp. M_BH/M_cl = 1 (N = 32, dt = 2^-7 T): "), text
    assert "; M_BH/M_cl = 3 (N = 16, dt = 2^-6 T): " in text, text
    assert kept[0]._suptitle.get_text().splitlines()[1].startswith("start 1 kpc with "), kept[0]._suptitle.get_text()
    _, alone = science_plots.plot_black_hole(tmp_path / "bh", tmp_path / "bh.png", ratios=(3.0,))
    assert alone["summary"].startswith("N = 16, dt = 2^-6 T, leapfrog, version A dp. M_BH/M_cl = 3: "), alone


def test_a_black_hole_run_that_recedes_from_the_start_is_no_passage(tmp_path, monkeypatch):
    """run_black_hole(speed_kms=300): above the 232 km/s circular speed at 1 kpc the cluster moves
    away from the black hole from the start, so its centre is closest at t = 0. The summary said
    "closest approach 998.8 pc at 0.0 Myr; ... 2.2e-06 just before the passage" and drew the
    pericentre's dot and line at the start: a passage that never happened."""
    from nbsymple_versions.paper import science_plots
    from nbsymple_versions.paper.science_runs import run_black_hole
    kept = _kept_figures(monkeypatch, science_plots)
    run_black_hole(tmp_path / "bh", n=16, dt=2.0 ** -7, t_end=2.0, ratios=(1.0,), speed_kms=300.0, version="A",
                   progress=False)
    _, summary = science_plots.plot_black_hole(tmp_path / "bh", tmp_path / "bh.png")
    text = summary["summary"]
    assert "closest approach" not in text and "passage;" not in text and "just before" not in text, text
    assert "no passage within the run: its centre was closest to the black hole at the start" in text, text
    assert "still falling" not in text
    energy = kept[0].axes[1]
    assert not [ln for ln in energy.get_lines() if ln.get_linestyle() == ":"]       # no pericentre line
    from matplotlib.legend import Legend
    labels = [t.get_text() for lg in energy.get_children() if isinstance(lg, Legend) for t in lg.get_texts()]
    assert any("no passage" in t and "at the start" in t for t in labels), labels


@pytest.mark.parametrize("versions, result, said", [
    (["'A'", "'A'"], None, "has the value .A. twice, so its values cannot be told apart"),
    (["'A'", '"A"'], None, "has the value .A. twice, so its values cannot be told apart"),
    (["'A'", "'B'"], 0.5, "holds one value, not a list, for its 6 combinations of parameters")])
def test_a_parameter_value_given_twice_is_refused(tmp_path, versions, result, said):
    """A hunt: a results file whose version axis named A twice (or as 'A' and "A") had B's times read as
    A's, in silence ("a dp leapfrog step takes 168 us (A)"): each combination is a key of one value; one
    value, not a list, of a benchmark with parameters was read as its first combination's."""
    from nbsymple_versions.paper.results import ResultFile, ResultsError
    source = next((FIXTURE / "fixture-2core-nogpu").glob("*-existing-*.json"))
    data = json.loads(source.read_text())
    data["results"]["steps.Step.time_step_leapfrog"][1][0] = versions
    if result is not None:
        data["results"]["steps.Step.time_step_leapfrog"][0] = result
    (path := tmp_path / source.name).write_text(json.dumps(data))
    with pytest.raises(ResultsError, match=r"is malformed \((a parameter of )?steps.Step.time_step_leapfrog " + said):
        ResultFile.read(path)


# ----------------------------------------------------------------------------- a mutation hunt's: choices, numbers

def test_an_interval_whose_end_is_its_time_is_the_one_recorded():
    """`Results.interval`: asv's 99 % interval is kept where the time lies on one of its ends (samples that
    agree put the median on a bound), not taken for "no noise recorded" (a mutation hunt)."""
    from nbsymple_versions.paper.results import Results
    row = {"params": [["'A'"], ["256", "1024"]], "result": [1.0, 2.0], "stats_ci_99_a": [1.0, 1.5],
           "stats_ci_99_b": [1.2, 2.0]}
    res = Results("m", "a" * 40, 0, "3.11", {}, _rows={"x": row})
    assert res.interval("x") == {("A", 256): (1.0, 1.2), ("A", 1024): (1.5, 2.0)}


def test_of_two_pythons_holding_as_many_values_the_later_run_is_read():
    """`one_python`: of one commit's results of two Pythons that hold as many values, those that ran last
    are read (a Python's latest file, though its first ran before the other's), whichever file comes first
    (a mutation hunt)."""
    from nbsymple_versions.paper.results import ResultFile, one_python

    def made(python, started, values):
        return ResultFile(Path(f"m/aaaaaaaa-py{python}-{started}.json"), "a" * 40, 1, python, "", {}, {},
                          {"x": {"result": values, "started_at": started}})
    files = [made("3.11", 3000, [1.0, 2.0]), made("3.12", 1000, [1.0]), made("3.12", 5000, [1.0])]
    for order in (files, files[::-1]):
        warnings = []
        assert {f.python for f in one_python(order, warnings)} == {"3.12"} and len(warnings) == 1, warnings


def test_a_results_file_ran_when_its_last_benchmark_started():
    """`ResultFile.run_date`, REPORT.md's "benchmarks run": the latest `started_at` of its rows, the file's
    date where none recorded one (a mutation hunt)."""
    from nbsymple_versions.paper.results import ResultFile
    rows = {"x": {"started_at": 7000}, "y": {"started_at": 9000}, "z": {"started_at": 8000}, "w": {}}
    assert ResultFile(Path("m/a.json"), "a" * 40, 1000, "", "", {}, {}, rows).run_date == 9000
    assert ResultFile(Path("m/a.json"), "a" * 40, 1000, "", "", {}, {}, {"w": {}}).run_date == 1000


def test_a_results_file_dated_at_the_epoch_is_read_with_its_date_unknown(tmp_path):
    """A results file whose date is 0 (milliseconds since the epoch, from 0 up, as the reader takes them) is
    read, its date said to be unknown, not refused as malformed (a mutation hunt)."""
    from nbsymple_versions.paper.results import ResultFile, Results
    source = next((FIXTURE / "fixture-2core-nogpu").glob("*-existing-*.json"))
    data = json.loads(source.read_text())
    data["date"] = 0
    (path := tmp_path / source.name).write_text(json.dumps(data))
    assert ResultFile.read(path).date == 0 and Results._text(0) == "unknown date"


def _fixture_run(folder: Path, name: str, started_at: int) -> Path:
    """The fixture's results file as `folder/name`, each benchmark started at `started_at` (ms), and its
    machine.json beside it."""
    source = next((FIXTURE / "fixture-2core-nogpu").glob("*-existing-*.json"))
    data = json.loads(source.read_text())
    column = data["result_columns"].index("started_at")
    for row in data["results"].values():
        row[column] = started_at
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURE / "fixture-2core-nogpu" / "machine.json", folder)
    (folder / name).write_text(json.dumps(data))
    return folder / name


def test_of_two_machines_holding_every_need_the_one_that_ran_last_is_read(tmp_path):
    """`load_results` without --machine: of machines whose chosen commits hold every need, the one whose
    benchmarks ran last (its latest run; here its first ran before the other machine's), whichever name sorts
    first (a mutation hunt)."""
    from nbsymple_versions.paper.data import PAPER_NEEDS
    from nbsymple_versions.paper.results import load_results
    for later, earlier in (("m1", "m2"), ("m2", "m1")):
        root = tmp_path / later
        _fixture_run(root / later, "f86a8e19-env-a.json", 1796011000000)
        _fixture_run(root / later, "f86a8e19-env-b.json", 1796012902025)
        _fixture_run(root / earlier, "f86a8e19-env.json", 1796012000000)
        assert load_results(root, needs=PAPER_NEEDS).machine == later


def test_the_benchmarks_of_a_commit_read_from_two_files_ran_when_the_later_did(tmp_path):
    """`Results.run_date` (REPORT.md's "benchmarks run") of a commit's two results files of one Python:
    the later run's (a mutation hunt)."""
    from nbsymple_versions.paper.results import load_results
    _fixture_run(tmp_path / "m", "f86a8e19-env-a.json", 1796012000000)
    _fixture_run(tmp_path / "m", "f86a8e19-env-b.json", 1796012902025)
    res = load_results(tmp_path, "m")
    assert len(res.files) == 2 and res.run_date == 1796012902025, res.files


def test_a_share_beyond_100_percent_by_more_than_its_rounding_is_no_measurement():
    """`results.measure` of a task share: 100 % and its rounding (1 ulp above, as a TaskClock's 100 * s / total
    gives) are shares, 100.00001 % is none (a mutation hunt: a tolerance a million times wider passed)."""
    from nbsymple_versions.paper.results import measure
    test, what = measure("steps.TaskShares.track_share")
    assert test(0.0) and test(100.0) and test(100.0 * (1 + 2.2e-16)) and test(100.0 + 1.5e-14)
    assert not test(100.00001) and not test(-1e-9) and what == "a share in % from 0 to 100"


def test_a_machine_s_ram_in_bytes_or_kib_is_shown_in_gib():
    """REPORT.md's RAM: asv's count of bytes (or a hand-entered one of KiB) in GiB, 2**30 bytes (a mutation
    hunt: 10**9 bytes, 26 GiB for a 24 GiB machine, passed)."""
    from nbsymple_versions.paper.report import _fmt_ram
    assert _fmt_ram(24 * 2 ** 30) == _fmt_ram(str(24 * 2 ** 30)) == _fmt_ram(24 * 2 ** 20) == "24 GiB"
    assert _fmt_ram("24 GiB") == "24 GiB"


def test_the_blocks_of_the_largest_n_and_the_sms_they_occupy_are_counted_whole():
    """`prediction_findings`' note: N / tile blocks rounded up (a last, partial block is one), occupying as
    many SMs, at most all of them (a mutation hunt: blocks rounded down, and more SMs than the GPU has,
    passed)."""
    from types import SimpleNamespace
    from nbsymple_versions.paper.report import prediction_findings
    for n, blocks, occupied in ((300, 2, 2), (2 ** 17, 512, 132)):
        prediction = SimpleNamespace(letters=("C",), ns=lambda v, n=n: [n],
                                     shares=lambda v, n: {"pairwise": 99.9, "galactic": 0.08, "integrate": 0.02},
                                     kernels={"C": SimpleNamespace(tile=256)},
                                     gpu=SimpleNamespace(device=SimpleNamespace(clock_ghz=1.98, sms=132)))
        note = prediction_findings(prediction)[-1]
        assert f"at N = {n} the {blocks} blocks of 256 threads occupy {occupied} of the 132 SMs" in note, note


def _two_versions():
    """Results of A and B's dp and dsp leapfrog steps at N = 256 and 1024 (no recorded noise)."""
    from nbsymple_versions.paper.results import Results
    row = {"params": [["'A'", "'B'"], ["256", "1024"], ["'dp'", "'dsp'"]],
           "result": [1e-3, 0.5e-3, 16e-3, 4e-3, 0.5e-3, 0.4e-3, 4e-3, 2e-3]}
    return Results("m-2cores-nogpu", "a" * 40, 0, "3.11", {}, _rows={"steps.Step.time_step_leapfrog": row})


def test_the_findings_pair_each_speed_up_and_dsp_ratio_with_its_n():
    """REPORT.md's findings: B's speed-up over A at each N, named by that N, and each version's dsp / dp
    ratio at the largest N both were measured at (a mutation hunt: the N reversed, and the smallest N's
    ratios, passed)."""
    from nbsymple_versions.paper.report import findings
    found = findings(_two_versions(), None)
    assert any(s.endswith("over A (1 thread): 2 at N = 256, 4 at N = 1024.") for s in found), found
    assert any(s.startswith("dsp / dp time per leapfrog step: A 0.25 (N = 1024), B 0.50 (N = 1024) (") for s in found)


def test_a_verdict_against_a_time_without_noise_is_by_the_values_alone():
    """`against_sentence`: where one of the two times has no recorded interval, its verdict is said to be by
    the values alone, not beyond the intervals (a mutation hunt: one recorded interval was taken for both)."""
    from nbsymple_versions.paper.report import against_sentence
    assert against_sentence("C", "B", {("B", 256): (1.0, 1.2), ("C", 256): (2.0, 2.0)}) == \
        "Version C is slower than B at every N measured (no noise recorded: by the values alone)."


def test_a_science_run_s_largest_error_is_named_only_where_it_is_not_the_last():
    """`science_record_line`: "(largest ...)" where the largest internal-energy error over the snapshots is
    not the one at the end (a mutation hunt: it was said of every run)."""
    from nbsymple_versions.paper.report import science_record_line
    run = {"internal_energy_error": 3.1e-3, "internal_energy_error_max": 3.1e-3, "energy_error_total": 2e-9,
           "converged": True}
    assert science_record_line(run) == "internal energy error 3.1e-03 at the end, total 2.0e-09"
    assert science_record_line({**run, "internal_energy_error_max": 4e-3}) == \
        "internal energy error 3.1e-03 at the end (largest 4.0e-03), total 2.0e-09"


def test_two_versions_at_the_largest_n_are_ranked_and_two_n_give_a_slope():
    """REPORT.md's findings with two versions, each measured at two N: the fastest named at the largest N, and
    each version's slope between its two N (a mutation hunt: "no other version was measured at this N" said
    beside A's time, and no slope for a version of exactly two N, passed every test)."""
    from nbsymple_versions.paper.report import findings
    text = " ".join(findings(_two_versions(), None))
    assert "16 ms (A), 4 ms (B); version B is the fastest (no noise recorded: by the values alone)." in text, text
    assert "(A: 2.00 (N = 256 to 1024), B: 1.50 (N = 256 to 1024); 2 is" in text, text


def test_a_predicted_host_share_tie_names_the_paper_s_version_only_where_it_is_in_the_tie():
    """`prediction_findings`: "(the paper has C, one core, alone there)" where C is among those tied for the
    largest host share, a plain full stop where it is not (a mutation hunt: the two swapped passed every test)."""
    from nbsymple_versions.paper.report import prediction_findings
    with_c = prediction_findings(_prediction({"C": 63.5, "D": 63.52, "E": 18.8}))[1]
    assert with_c.endswith("C and D are tied at 63.5 %, the largest share outside task 1 (the paper has C, one "
                           "core, alone there)."), with_c
    without_c = prediction_findings(_prediction({"C": 18.8, "D": 63.5, "E": 63.52}))[1]
    assert without_c.endswith("D and E are tied at 63.5 %, the largest share outside task 1."), without_c


def test_ram_in_bytes_or_in_kb_is_shown_in_gib():
    """REPORT.md's RAM: asv's byte count and a hand-entered kB count, each in GiB (a mutation hunt: the bytes of
    an 8 GiB machine read as kB, "8192 GiB", passed every test)."""
    from nbsymple_versions.paper.report import _fmt_ram
    assert _fmt_ram(8 * 1024 ** 3) == "8 GiB" and _fmt_ram(str(2 * 1024 ** 3)) == "2 GiB"
    assert _fmt_ram(16 * 1024 ** 2) == "16 GiB" and _fmt_ram("24 GiB") == "24 GiB"
    assert _fmt_ram(128 * 1024 ** 2) == "128 GiB" and _fmt_ram(512 * 1024 ** 2) == "512 GiB"   # a hunt: "0 GiB"
    assert _fmt_ram(2 * 1024 ** 4) == "2048 GiB"
