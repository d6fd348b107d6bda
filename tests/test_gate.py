"""The regression gate's self-test, in a scratch repository holding this working tree. Timing
tier: a commit whose kernels are deliberately slowed makes the gate exit 1 (and name every timed
task), and the same comparison the other way (a faster HEAD) exits 0 (small N, the smoke grid,
one round, version A: about a minute per gate run on a 2-core machine). Counts tier: one more
instruction in the pairwise loops makes it exit 1 on a machine kept busy, and the same commit
against itself 0 (about 20 s per gate run, the two trees counted at once)."""
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
SLOWDOWN = 20           # far beyond the gate's factors, busy machine included, at N = 256
GATE_BENCH = r"\('A', 256, 'dp'\)|\('A', 256\)"      # A's pairwise (dp), galactic and integrate

PAUSE_S = 0.002         # and every slowed kernel call waits this long: the integrate task, two
                        # ~1 us calls inside ~25 us of Python, is only 6x slower from SLOWDOWN,
                        # which asv's test could not tell from noise at a load of 40-80 (the CUDA
                        # simulator's threads); 2 ms per call makes it about 100x

# appended in the slowed commit to KERNELS, the module of the serial CPU kernels (version A's,
# which the gate times here): every kernel does its work SLOWDOWN times (the extra calls on
# scratch copies of what it writes), then waits PAUSE_S
KERNELS = Path("nbsymple_versions", "serial", "kernels.py")
SLOWED = f'''

# ---- the gate's self-test: deliberately slowed kernels ----
def _slowed(kernel, written):
    import time

    def slowed(*args):
        for _ in range({SLOWDOWN} - 1):
            kernel(*[a.copy() if i in written else a for i, a in enumerate(args)])
        time.sleep({PAUSE_S})
        return kernel(*args)
    return slowed


SERIAL.pairwise = {{p: _slowed(k, ()) for p, k in SERIAL.pairwise.items()}}
SERIAL.galactic = _slowed(SERIAL.galactic, (3, 4, 5))
SERIAL.axpy = _slowed(SERIAL.axpy, (0,))
'''


# the counts tier's change: one more vector instruction (a min) per loop iteration of every
# pairwise kernel, i.e. 1/8 to 1/32 of an instruction per interaction, a rise of 1.5 % or more
ONE_MORE = ("f = m[j] * inverse_cube(", "f = min(m[j], ftype(3e38)) * inverse_cube(")
# a spinning process at the lowest priority: its core never idles, and the tier's compilers (and,
# under `make test`, the other tests) take most of the cycles they need (not all: on two cores,
# one such process beside the tier cost it 1.25x its time, one on each core 1.5x)
LOAD = "import os, time\nos.nice(19)\nend = time.time() + 900\nwhile time.time() < end:\n    pass\n"


def _git(repo, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="gate", GIT_AUTHOR_EMAIL="gate@test", GIT_COMMITTER_NAME="gate",
               GIT_COMMITTER_EMAIL="gate@test")
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """A git repository of this working tree (tracked and untracked files, as committed by the
    next commit), commit `normal`, and on top of it commit `slowed`."""
    repo = tmp_path_factory.mktemp("gate") / "repo"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for f in filter(None, files):
        src = ROOT / f
        if src.is_file():
            (repo / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, repo / f)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "normal")
    normal = _git(repo, "rev-parse", "HEAD")
    with open(repo / KERNELS, "a") as f:
        f.write(SLOWED)
    _git(repo, "commit", "-q", "-am", "slowed")
    return repo, normal, _git(repo, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def counted(repo):
    """On top of `normal`, commit `one_more`: the pairwise kernels with one more instruction."""
    path, normal, _ = repo
    _git(path, "checkout", "-q", normal)
    source = (path / KERNELS).read_text()
    assert ONE_MORE[0] in source
    (path / KERNELS).write_text(source.replace(ONE_MORE[0], ONE_MORE[1]))
    _git(path, "commit", "-q", "-am", "one more instruction")
    return path, normal, _git(path, "rev-parse", "HEAD")


def _gate(repo, base, *args):
    env = dict(os.environ, NBSYMPLE_BENCH_GRID="smoke", NBSYMPLE_BENCH_VERSIONS="A", HOME=str(repo.parent))
    env.pop("PYTHONPATH", None)
    bench = [] if "counts" in args else ["--bench", GATE_BENCH]       # the timing tier's benchmarks
    return subprocess.run([sys.executable, "-m", "tools.gate", "--base", base, "--rounds", "1", *bench, *args],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=900)


def test_gate_fails_on_a_slowed_kernel(repo):
    """Beside other tests: the slowed kernels are 20-100x slower, beyond what a neighbour on the
    other core (or a load of 40-80) makes of a timing."""
    path, normal, slowed = repo
    _git(path, "checkout", "-q", slowed)
    r = _gate(path, normal, "--tiers", "timings")
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    for task in ("time_pairwise", "time_galactic", "time_integrate"):
        assert f"{task}" in out.split("REGRESSION", 1)[1], out


def test_gate_passes_a_faster_kernel(repo):
    path, normal, slowed = repo
    _git(path, "checkout", "-q", normal)
    r = _gate(path, slowed, "--tiers", "timings")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "no regression" in out, out


def _counts_tier_under_load(path, base):
    """The counts tier of HEAD against `base` on a busy machine: spinning processes (`LOAD`), one
    fewer than the cores (at least one), so that with the tier's two counting processes more are
    runnable than there are cores."""
    busy = [subprocess.Popen([sys.executable, "-c", LOAD]) for _ in range(max(1, (os.cpu_count() or 2) - 1))]
    try:
        return _gate(path, base, "--tiers", "counts")
    finally:
        for p in busy:
            p.kill()
            p.wait()


@pytest.mark.long
def test_counts_tier_fails_on_one_more_instruction_under_load(counted):
    """The deterministic tier fails on one more instruction in numba's pairwise loops, on a busy
    machine, and names only the kernels that changed: not the targets whose sp is the IR row
    (`ROW_CPUS`: znver4's)."""
    from nbsymple_versions.serial.kernels import ROW_CPUS
    path, normal, one_more = counted
    _git(path, "checkout", "-q", one_more)
    r = _counts_tier_under_load(path, normal)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    regressed = out.split("REGRESSION in the instruction counts", 1)[1]
    looped = [t for t in ("haswell", "skylake-avx512", "znver4") if "sp" not in ROW_CPUS.get(t, ())]
    assert looped, "no fixed target's sp is numba's loop: the added instruction would test nothing"
    for target in ("haswell", "skylake-avx512", "znver4"):   # (LLVM folds the min away in a few dp, dsp loops)
        assert (f"cpu-asm {target} pairwise sp rose" in regressed) == (target in looped), out
    assert "galactic" not in regressed and "axpy" not in regressed and "gpu-asm" not in regressed, out


@pytest.mark.long
def test_counts_tier_passes_a_commit_against_itself_under_load(counted):
    """The same commit on both sides, counted twice on a busy machine: no count rose (a separate
    test from the one above, so that xdist runs the two side by side)."""
    path, _, one_more = counted
    _git(path, "checkout", "-q", one_more)
    same = _counts_tier_under_load(path, one_more)
    assert same.returncode == 0 and "no count rose" in same.stdout + same.stderr, same.stdout + same.stderr


def test_counts_tier_fails_where_heads_kernels_of_a_kind_no_longer_compile(monkeypatch, tmp_path):
    """A hunt: with nbody.cu broken at HEAD, the counts tier logged "HEAD has no GPU counts:
    CompileFailed ...", listed BASE's 24 GPU kernels as "renamed or removed" and passed (0). The
    same tools count both trees, so a kind BASE's code gave and HEAD's does not fails the gate."""
    from tools import code_counts, gate
    base = {"cpu-asm znver4 pairwise sp": 1.0, "gpu-asm sm_90 numba tiled sp": 20.0}
    head = {"cpu-asm znver4 pairwise sp": 1.0}
    broken = {"gpu": "CompileFailed: NVRTC could not compile nbody.cu"}
    for missing_base, missing_head, status in (({}, broken, 1), ({}, {}, 0), (broken, broken, 0)):
        heads = head if missing_head else base
        counted = {k: v for k, v in base.items() if not (missing_base and k.startswith("gpu-asm"))}
        monkeypatch.setattr(code_counts, "count_trees", lambda *trees, c=counted, mb=missing_base, h=heads,
                            mh=missing_head, **_: [(c, mb), (h, mh)])
        assert gate.counts_tier(tmp_path, tmp_path, "HEAD against BASE") == status, (missing_base, missing_head)
    # a BASE from before the counts (or whose kernels none is HEAD's) compares nothing: a set-up problem, not a pass
    for counted in ({}, {"cpu-asm znver4 pairwise_old sp": 1.0}):
        monkeypatch.setattr(code_counts, "count_trees",
                            lambda *trees, c=counted, **_: [(c, {"cpu": "no cpu_asm"}), (head, {})])
        with pytest.raises(gate.GateError, match="nothing to compare") as refused:
            gate.counts_tier(tmp_path, tmp_path, "HEAD against BASE")
        assert refused.value.status == gate.SETUP
    # ... but where HEAD lost a kind BASE's code gave, and so compared nothing, that is HEAD's regression
    monkeypatch.setattr(code_counts, "count_trees", lambda *trees, **_: [({"gpu-asm sm_90 numba tiled sp": 20.0}, {}),
                                                                      (head, broken)])
    assert gate.counts_tier(tmp_path, tmp_path, "HEAD against BASE") == 1


def test_counts_tier_fails_on_one_instruction_a_trip_of_the_longest_loops(monkeypatch, tmp_path, capsys):
    """An audit: one more instruction a trip of a galactic loop (173 a trip of 8 elements: 0.6 %)
    or of a GPU loop (228 a trip of 32: 0.4 %) is a rise the tier's former 1 % tolerance let
    pass. A count is exact (the same code gives the same count), so any rise fails, and the same
    counts pass."""
    from tools import code_counts, gate
    base = {"cpu-asm znver4 galactic dp": 173 / 8, "gpu-asm sm_90 cuda-c fused dsp": 228 / 32}
    for name, trip in (("cpu-asm znver4 galactic dp", 8), ("gpu-asm sm_90 cuda-c fused dsp", 32)):
        head = {**base, name: base[name] + 1 / trip}
        assert code_counts.compare(base, head)[1] == [name]
        monkeypatch.setattr(code_counts, "count_trees", lambda *trees, h=head, **_: [(base, {}), (h, {})])
        assert gate.counts_tier(tmp_path, tmp_path, "HEAD against BASE") == 1
        assert f"REGRESSION in the instruction counts: {name} rose." in capsys.readouterr().err
    monkeypatch.setattr(code_counts, "count_trees", lambda *trees, **_: [(base, {}), (dict(base), {})])
    assert gate.counts_tier(tmp_path, tmp_path, "HEAD against BASE") == 0


def test_a_dry_run_of_make_gate_says_the_command_and_runs_nothing():
    """A hunt: `make -n gate` (a dry run) ran the whole gate while make read the Makefile, and
    `make venv` with it."""
    root = Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}   # (under make test)
    p = subprocess.run(["make", "--no-print-directory", "-n", "gate", "GATE_ARGS=--tiers counts", "BASE=HEAD~1"],
                       cwd=root, env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert p.stdout.strip().endswith("/python -m tools.gate --base 'HEAD~1' --tiers counts"), p.stdout



def test_make_gate_runs_the_gate_as_make_reads_the_makefile_and_keeps_its_status():
    """A hunt: a comment on the line of DRY_RUN left blanks in its value, never empty, so `make gate`
    ran the gate as its recipe, echoed, its status 1 (a regression) or 3 made make's 2, and without
    the venv of a fresh clone status 127. The gate runs while make reads the Makefile: its mistake
    here (an option it does not take) is make's sentence for a status other than 0 and 1."""
    root = Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "BASE")}
    p = subprocess.run(["make", "--no-print-directory", "gate", "GATE_ARGS=--bogus"],
                       cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and p.stdout == "", (p.stdout, p.stderr)
    assert "unrecognized arguments: --bogus" in p.stderr and "gate: no verdict (status 2)" in p.stderr, p.stderr


@pytest.mark.parametrize("given, said", [([], "--noise 3"), (["BASE="], "--base '' --noise 3"),
                                         (["BASE=v1"], "--base 'v1' --noise 3")])
def test_make_gate_passes_base_only_when_it_is_given(given, said):
    """`make gate GATE_ARGS='--noise 3'` was refused "--base cannot be given with it": make passed
    its default BASE=main, which the user never gave."""
    root = Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "BASE")}
    p = subprocess.run(["make", "--no-print-directory", "-n", "gate", "GATE_ARGS=--noise 3", *given],
                       cwd=root, env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and " ".join(p.stdout.split()).endswith(f"-m tools.gate {said}"), (p.stdout, p.stderr)

def test_gate_usage_and_setup_problems_have_their_own_status(repo):
    path, normal, _ = repo
    r = _gate(path, "no-such-commit")
    assert r.returncode == 2 and "is not a commit" in r.stderr, r.stderr
    r = _gate(path, normal, "--factor", "0.5")
    assert r.returncode == 2 and "--factor" in r.stderr, r.stderr
    r = _gate(path, normal, "--tiers", "counts,speed")
    assert r.returncode == 2 and "--tiers" in r.stderr, r.stderr


def test_the_factor_is_wider_only_for_pairwise_timings_on_all_cores():
    """THREADED_FACTOR for a pairwise kernel on all CPU cores (B), FACTOR for one core (A), a
    GPU (C, E) or a host task, BUSY_FACTOR for everything on a busy machine."""
    from tools import gate
    factor = {(v, task): gate.factor_for(f"tasks.{task}({v!r}, 16384{rest})", busy=False)
              for v in "ABCE" for task, rest in (("Tasks.time_pairwise", ", 'dp'"), ("HostTasks.time_galactic", ""))}
    assert factor.pop(("B", "Tasks.time_pairwise")) == gate.THREADED_FACTOR
    assert set(factor.values()) == {gate.FACTOR}, factor
    assert gate.factor_for("tasks.Tasks.time_pairwise('A', 16384, 'dp')", busy=True) == gate.BUSY_FACTOR


def _fake_tree(root: Path, name: str, package_init: str) -> Path:
    """A tree whose nbsymple_versions runs `package_init` when imported, and whose instruments
    count one CPU kernel (`name`'s count: its length) and no GPU kernel."""
    instruments = root / name / "nbsymple_versions" / "instruments"
    instruments.mkdir(parents=True)
    (instruments.parent / "__init__.py").write_text(package_init)
    (instruments / "__init__.py").write_text("")
    (instruments / "cpu_asm.py").write_text(
        "from types import SimpleNamespace\nFIXED_TARGETS = ('haswell',)\n"
        "def count_all(targets):\n"
        f"    return [SimpleNamespace(target=t, kernel='pairwise', precision='sp', instructions_per_interaction="
        f"{len(name)}.0) for t in targets]\n")
    return root / name


def test_trees_are_counted_at_once_and_a_failure_ends_the_others(tmp_path):
    """code_counts.count_trees gives each tree's counts in order (each tree's own package), and
    where one tree cannot be counted it says which, and ends the counts still running (here one
    that would never end) instead of waiting for them."""
    from tools import code_counts
    counted = code_counts.count_trees(_fake_tree(tmp_path, "base", ""), _fake_tree(tmp_path, "head-tree", ""))
    assert [c["cpu-asm haswell pairwise sp"] for c, _ in counted] == [4.0, 9.0], counted
    assert all(set(missing) == {"gpu"} for _, missing in counted), counted
    # a tree whose package lacks the instruments is counted as it is: the checkout's editable install
    # lent it this checkout's (a hunt: BASE was counted partly with HEAD's code)
    bare = tmp_path / "bare"
    (bare / "nbsymple_versions").mkdir(parents=True)
    (bare / "nbsymple_versions" / "__init__.py").write_text("")
    [(counts, missing)] = code_counts.count_trees(bare)
    assert counts == {} and "No module named 'nbsymple_versions.cpu_asm'" in missing["cpu"], missing
    # ... and one of before 8f81b92, its instruments at the package's root, is counted (a hunt: no BASE before
    # it gave counts), as a tree whose kernels do not compile gives no counts of that kind, a reason
    old = _fake_tree(tmp_path, "old", "")
    (old / "nbsymple_versions" / "instruments" / "cpu_asm.py").rename(old / "nbsymple_versions" / "cpu_asm.py")
    failing = _fake_tree(tmp_path, "failing", "")
    (failing / "nbsymple_versions" / "instruments" / "cpu_asm.py").write_text(
        "FIXED_TARGETS = ('haswell',)\ndef count_all(targets):\n    raise RuntimeError('no compile')\n")
    [(old_counts, _), (_, failed)] = code_counts.count_trees(old, failing)
    assert old_counts == {"cpu-asm haswell pairwise sp": 3.0} and failed["cpu"] == "RuntimeError: no compile"
    pid_file = tmp_path / "pid"
    broken = _fake_tree(tmp_path, "broken", f"import pathlib, time\n"
                                            f"while not pathlib.Path({str(pid_file)!r}).exists():\n"
                                            "    time.sleep(0.01)\nraise SystemExit('a broken package')\n")
    endless = _fake_tree(tmp_path, "endless", f"import os, pathlib, time\npathlib.Path({str(pid_file)!r})"
                                              ".write_text(str(os.getpid()))\ntime.sleep(3600)\n")

    def hang(signum, frame):
        raise TimeoutError("count_trees waits for a count that never ends")
    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(300)                         # a hang guard, not a timing
    try:
        with pytest.raises(code_counts.CountsFailed,
                           match=r"the kernels of broken could not be counted \(a broken package\)"):
            code_counts.count_trees(broken, endless)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


def test_the_verdict_sorts_slower_and_faster_and_the_load_says_busy():
    """`gate.verdict` with plain timings: 3x slower a regression, 3x faster an improvement, 1.1x
    neither, a result lost at HEAD a failure; busy is a median load above the cores (a mutation
    hunt: improvements never reported, or the busy test reversed, passed every test)."""
    from tools import gate
    base = {"slow": (1.0, None), "fast": (3.0, None), "same": (1.0, None), "lost": (1.0, None)}
    head = {"slow": (3.0, None), "fast": (1.0, None), "same": (1.1, None), "lost": (None, None)}
    compared, regressed, failed, improved = gate.verdict(base, head, lambda name: 1.5)
    assert sorted(compared) == ["fast", "same", "slow"]
    assert (regressed, failed, improved) == (["slow"], ["lost"], ["fast"])
    assert [gate.is_busy({"median": m, "cores": 2}) for m in (1.0, 2.0, 3.0)] == [False, False, True]


def test_the_table_marks_each_row_by_the_verdict_with_the_ratio_head_over_base(capsys):
    """`gate.table`: "+" a regression, "-" an improvement, the ratio HEAD / BASE (3.00 slower, 0.33 faster),
    each row's factor (a mutation hunt: the marks swapped, or the ratio inverted, passed every test)."""
    from tools import gate
    base = {"slow": (1.0, None), "fast": (3.0, None), "same": (1.0, None)}
    head = {"slow": (3.0, None), "fast": (1.0, None), "same": (1.1, None)}
    _, regressed, failed, improved = gate.verdict(base, head, lambda name: 1.5)
    gate.table(base, head, regressed, failed, improved, lambda name: 1.5)
    rows = {line.split()[-1]: (line[:2].strip(), line[2:].split()) for line in capsys.readouterr().out.splitlines()[1:]}
    assert {name: mark for name, (mark, _) in rows.items()} == {"slow": "+", "fast": "-", "same": ""}, rows
    for name, (_, cells) in rows.items():
        assert float(cells[2]) == pytest.approx(head[name][0] / base[name][0], abs=0.005) and float(cells[3]) == 1.5


def test_the_counts_table_marks_a_rise_and_a_fall_and_nothing_else():
    """`code_counts.table`: "+" a count that rose (the verdict's), "-" one that fell beyond the
    tolerance, no mark for one unchanged (a mutation hunt: every unchanged count marked fallen passed)."""
    import io
    from tools import code_counts
    out = io.StringIO()
    rows = [("same", 2.0, 2.0, 1.0), ("fell", 2.0, 1.8, 0.9), ("rose", 2.0, 2.2, 1.1)]
    code_counts.table(rows, ["rose"], out)
    marks = {line.split()[-1]: line[:2].strip() for line in out.getvalue().splitlines()[1:]}
    assert marks == {"same": "", "fell": "-", "rose": "+"}, out.getvalue()


def test_a_slowdown_only_a_busy_machines_factor_lets_pass_is_inconclusive():
    """2x slower passes the busy factor (3.0) but not the quiet one (1.5): on a busy machine the timing tier
    names it (`hidden_by_load`: status 3, "inconclusive"), not a pass; quiet, or with --factor given, the
    verdict stands (a mutation hunt: the check made with the busy factor, which can never fire, passed)."""
    from tools import gate
    base, head = {"x": (1.0, None)}, {"x": (2.0, None)}
    assert gate.verdict(base, head, lambda name: gate.factor_for(name, True))[1] == []
    assert gate.verdict(base, head, lambda name: gate.factor_for(name, False))[1] == ["x"]
    assert gate.hidden_by_load(base, head, busy=True, factor=None) == ["x"]
    assert gate.hidden_by_load(base, head, busy=False, factor=None) == []
    assert gate.hidden_by_load(base, head, busy=True, factor=2.5) == []


def test_the_load_of_a_run_is_the_median_of_its_samples():
    """`tracking.LoadSampler.summary`, which decides busy (`gate.is_busy`): one spike among quiet samples
    moves the median, not the verdict (a mutation hunt: the mean, 3.37 here, passed every test)."""
    from tools import tracking
    sampler = tracking.LoadSampler()
    sampler.samples = [0.5, 9.0, 0.6]
    summary = sampler.summary()
    assert (summary["min"], summary["median"], summary["max"], summary["samples"]) == (0.5, 0.6, 9.0, 3), summary


COUNTS_THEN_MORE = """
import sys
from tools import code_counts
from nbsymple_versions.entry import command
sys.exit(command("gate", lambda: code_counts.table([("cpu-asm A dp", 1.0, 1.0, 1.0)], []) or print("after") or 0))
"""


def test_the_counts_table_goes_to_the_commands_stdout_in_its_place():
    """`code_counts.table` printed to the stdout of its import (`out=sys.stdout` bound then), which
    `entry.command` no longer writes through (it waits on a slow reader with a stream of its own): into a
    pipe or a file, the gate's counts table came after everything the gate printed later, at exit."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}      # stdout buffered, as by default
    p = subprocess.run([sys.executable, "-c", COUNTS_THEN_MORE], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-1] == "after" and "cpu-asm A dp" in p.stdout.splitlines()[1], p.stdout


def test_a_full_disk_as_bases_tree_is_extracted_is_one_sentence(monkeypatch, tmp_path, capsys):
    """A hunt: a disk that filled while the gate extracted BASE's tree under .asv/ ended it in
    tarfile's OSError traceback. One sentence naming the folder and the cause, the gate's set-up
    status (3), nothing counted; the next gate removes what was extracted."""
    import errno
    import tarfile
    from tools import code_counts, gate, tracking

    def full(self, path, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(tracking, "SCRATCH", tmp_path / ".asv")
    monkeypatch.setattr(tarfile.TarFile, "extractall", full)
    monkeypatch.setattr(code_counts, "count_trees", lambda *trees, **_: pytest.fail("the trees were counted"))
    assert gate.main(["--base", "HEAD", "--tiers", "counts"]) == gate.SETUP
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[-1] == (f"gate: cannot write {tmp_path / '.asv' / 'gate-base-tree'}: {os.strerror(errno.ENOSPC)}; "
                         f"the gate stopped before its verdict."), lines


def test_an_error_of_the_gate_that_is_no_write_keeps_its_own_sentence(monkeypatch, tmp_path, capsys):
    """A review: every OSError of the gate was said as "gate: cannot write .asv: ...", status 3 (the
    current folder removed under it, a file it could not read: no write had failed). A write that
    fails is named so; any other error is said as every command says it (`entry.command`)."""
    import errno
    from nbsymple_versions.entry import FAULT, command
    from tools import code_counts, gate, tracking
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)

    def folder_removed(*trees, **_):
        here.rmdir()
        os.getcwd()                      # FileNotFoundError, no file named: what a relative path meets
    monkeypatch.setattr(tracking, "SCRATCH", tmp_path / ".asv")
    monkeypatch.setattr(gate, "_extract", lambda commit, dest: None)
    monkeypatch.setattr(code_counts, "count_trees", folder_removed)
    assert command("python -m tools.gate", lambda: gate.main(["--base", "HEAD", "--tiers", "counts"])) == FAULT
    err = capsys.readouterr().err
    assert "current folder" in err and "cannot write" not in err, err
    monkeypatch.setattr(code_counts, "count_trees",
                        lambda *trees, **_: (_ for _ in ()).throw(PermissionError(errno.EACCES, "Permission denied",
                                                                                  "x")))
    with pytest.raises(PermissionError):     # a read refused: not said to be a write
        gate.main(["--base", "HEAD", "--tiers", "counts"])


def test_the_timing_tier_says_the_versions_a_variable_leaves_it(monkeypatch, tmp_path, capsys):
    """NBSYMPLE_BENCH_VERSIONS=A left in the environment had the gate time A alone and pass, its
    line naming the grid but not the versions."""
    from tools import gate, tracking

    class Stop(Exception):
        pass

    monkeypatch.setenv("NBSYMPLE_BENCH_VERSIONS", "A")
    monkeypatch.setattr(tracking, "SCRATCH", tmp_path / ".asv")
    monkeypatch.setattr(tracking, "register_machine", lambda: "m")
    monkeypatch.setattr(gate, "gate_patterns", lambda bench: ["x"])
    monkeypatch.setattr(tracking, "scratch_config", lambda name: tmp_path / name)
    monkeypatch.setattr(tracking, "LoadSampler", lambda: (_ for _ in ()).throw(Stop()))
    with pytest.raises(Stop):
        gate.timing_tier("b", "h", tmp_path, "HEAD against BASE", None, 1, None)
    assert "versions A alone (NBSYMPLE_BENCH_VERSIONS)" in capsys.readouterr().err


def test_a_benchmark_that_failed_at_base_and_at_head_is_no_failure_of_head():
    """`gate.verdict`: a benchmark with no result on either side (failed or skipped at BASE too) is neither
    compared nor a failure of HEAD's; one BASE ran and HEAD did not is (a mutation hunt)."""
    from tools import gate
    base = {"both": (None, None), "skipped": (float("nan"), None), "lost": (1.0, None)}
    head = {"both": (None, None), "skipped": (None, None), "lost": (None, None)}
    assert gate.verdict(base, head, lambda name: 1.5) == ([], [], ["lost"], [])


def test_the_gate_s_table_leaves_out_a_benchmark_with_no_result_on_either_side(capsys):
    """`gate.table`: a benchmark that failed or was skipped at BASE and at HEAD has no row (nothing to
    compare); one that fails at HEAD alone is marked "!" (a mutation hunt)."""
    from tools import gate
    base = {"both": (None, None), "skipped": (float("nan"), None), "lost": (1.0, None)}
    head = {"both": (None, None), "skipped": (float("nan"), None), "lost": (None, None)}
    gate.table(base, head, [], ["lost"], [], lambda name: 1.5)
    rows = capsys.readouterr().out.splitlines()[1:]
    assert [(row[:2].strip(), row.split()[-1]) for row in rows] == [("!", "lost")], rows


def _stubbed_timing_tier(monkeypatch, tmp_path, results):
    """`gate.timing_tier` with asv, the machine and the load stood in for: each asv call is recorded as (side,
    its arguments, its ASV_PYTHONPATH), `results(commit)` is what asv saved for a commit, one benchmark of 1 s."""
    from tools import gate, tracking

    class Quiet:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            pass

        def summary(self):
            return {"min": 0.1, "median": 0.1, "max": 0.1, "cores": 2}
    calls = []
    monkeypatch.setattr(tracking, "SCRATCH", tmp_path / ".asv")
    monkeypatch.setattr(tracking, "register_machine", lambda: "m")
    monkeypatch.setattr(tracking, "LoadSampler", Quiet)
    monkeypatch.setattr(gate, "gate_patterns", lambda bench: ["x"])
    monkeypatch.setattr(tracking, "scratch_config", lambda name: tmp_path / name / "asv.conf.json")
    monkeypatch.setattr(tracking, "asv", lambda *args, config, env, log_file: calls.append(
        (config.parent.name, args, env["ASV_PYTHONPATH"])) or 0)
    monkeypatch.setattr(gate, "_results", lambda config, machine, commit: results(commit))
    monkeypatch.setattr(gate, "_unrolled", lambda rows: {"tasks.Tasks.time_pairwise('A', 256, 'dp')": (1.0, None)
                                                         for _ in rows})
    return calls


def test_the_timing_tier_times_each_side_with_its_tree_and_appends_the_later_rounds(monkeypatch, tmp_path):
    """`timing_tier`: BASE then HEAD each round, each with its own tree's package (ASV_PYTHONPATH: BASE's
    extracted tree, HEAD's checkout), each round after the first appending its samples to the first's; a
    side of which asv saved nothing in the first round stops the tier (status 3, naming it), not a pass
    (a mutation hunt)."""
    from tools import gate, tracking
    base, head, tree = "b" * 40, "c" * 40, tmp_path / "tree"
    calls = _stubbed_timing_tier(monkeypatch, tmp_path, lambda commit: [commit])
    assert gate.timing_tier(base, head, tree, "HEAD against BASE", None, 3, None) == 0
    sides = [("gate-base", str(tree)), ("gate-head", str(tracking.ROOT))]
    assert [(side, path) for side, _, path in calls] == sides * 3
    for i, (side, args, _) in enumerate(calls):
        assert args[args.index("--set-commit-hash") + 1] == (base if side == "gate-base" else head)
        assert ("--append-samples" in args) == (i >= 2), (i, args)
    _stubbed_timing_tier(monkeypatch, tmp_path, lambda commit: [commit] if commit == base else [])
    with pytest.raises(gate.GateError, match=r"asv saved no results for HEAD \(cccccccc\)") as stopped:
        gate.timing_tier(base, head, tree, "HEAD against BASE", None, 2, None)
    assert stopped.value.status == gate.SETUP


def test_report_timings_prints_a_timing_regression_without_failing_the_gate(monkeypatch, tmp_path, capsys):
    """`--report-timings` (a pull request's CI on a shared runner): a regression of the timing tier is
    printed and leaves the status the counts tier's; without it, it fails the gate (a mutation hunt)."""
    from tools import gate, tracking
    monkeypatch.setattr(tracking, "SCRATCH", tmp_path / ".asv")
    monkeypatch.setattr(gate, "_extract", lambda commit, dest: None)
    monkeypatch.setattr(gate, "timing_tier", lambda *args: 1)
    for counted in (0, 1):
        monkeypatch.setattr(gate, "counts_tier", lambda tree, root, label, c=counted: c)
        assert gate._tiers("b", "c", "HEAD against BASE", gate.TIERS, None, 1, None, True) == counted
        assert gate._tiers("b", "c", "HEAD against BASE", gate.TIERS, None, 1, None, False) == 1
    assert "the timing tier is reported, not gated (--report-timings)" in capsys.readouterr().err

    def busy(*args):                 # a hunt: the busy runner's "inconclusive" (status 3) failed hosted CI
        raise gate.Inconclusive("gate: inconclusive: 2 benchmarks slower ...")
    monkeypatch.setattr(gate, "timing_tier", busy)
    for counted in (0, 1):
        monkeypatch.setattr(gate, "counts_tier", lambda tree, root, label, c=counted: c)
        assert gate._tiers("b", "c", "HEAD against BASE", gate.TIERS, None, 1, None, True) == counted
        if counted:                  # a hunt: the counts' regression was lost to the timings' status 3
            assert gate._tiers("b", "c", "HEAD against BASE", gate.TIERS, None, 1, None, False) == 1
            continue
        with pytest.raises(gate.Inconclusive) as stopped:
            gate._tiers("b", "c", "HEAD against BASE", gate.TIERS, None, 1, None, False)
        assert stopped.value.status == gate.SETUP
    err = capsys.readouterr().err
    assert "gate: inconclusive: 2 benchmarks" in err and "reported, not gated (--report-timings)" in err, err


def test_the_counts_tier_names_the_kernels_counted_at_base_only_and_needs_head_s_counts(monkeypatch, tmp_path,
                                                                                         capsys):
    """`counts_tier`: the kernels BASE has and HEAD does not are named as renamed or removed (not HEAD's new
    ones); a HEAD whose kernels could not be counted at all, where BASE's were by the same tools, is HEAD's
    regression (a hunt: status 3 for CPU kernels that no longer compiled), and a set-up problem (status 3)
    where neither side was counted (a mutation hunt)."""
    from tools import code_counts, gate
    base = {"cpu-asm znver4 pairwise sp": 1.0, "cpu-asm znver4 old dp": 2.0}
    head = {"cpu-asm znver4 pairwise sp": 1.0, "cpu-asm znver4 new dp": 2.0}
    monkeypatch.setattr(code_counts, "count_trees", lambda *trees, **_: [(base, {}), (head, {})])
    assert gate.counts_tier(tmp_path, tmp_path, "HEAD against BASE") == 0
    assert "1 kernels compared in" in (err := capsys.readouterr().err), err
    assert "; counted at BASE only (renamed or removed): cpu-asm znver4 old dp\n" in err, err
    nothing = {"cpu": "RuntimeError: no LLVM", "gpu": "CompileFailed: no NVRTC"}
    monkeypatch.setattr(code_counts, "count_trees", lambda *trees, **_: [(base, {}), ({}, nothing)])
    assert gate.counts_tier(tmp_path, tmp_path, "HEAD against BASE") == 1
    assert "REGRESSION: HEAD's CPU kernels could not be counted, where BASE's were" in capsys.readouterr().err
    monkeypatch.setattr(code_counts, "count_trees", lambda *trees, **_: [({}, nothing), ({}, nothing)])
    with pytest.raises(gate.GateError, match="HEAD's kernels could not be counted") as stopped:
        gate.counts_tier(tmp_path, tmp_path, "HEAD against BASE")
    assert stopped.value.status == gate.SETUP
