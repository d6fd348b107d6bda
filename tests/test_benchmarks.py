"""The asv suite (benchmarks/): it holds benchmarks only (its tooling is tools/), asv's own
discovery loads it with the same parameters on every grid and machine, skips say why, every
figure that can gate reads lower-is-better, machine names tell machines apart, every class
validates before it times (a wrong kernel makes `setup` raise), and every track_ gives a finite
number of the right sign at a tiny configuration. No timing assertions (the gate's self-test is
tests/test_gate.py)."""
import ast
import errno
import itertools
import json
import math
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import common, grid, package, validation  # noqa: E402
from benchmarks.accuracy import Conservation  # noqa: E402
from benchmarks.package import build_pipeline  # noqa: E402
from benchmarks.validation import ValidationError  # noqa: E402
from benchmarks.compile import Compile  # noqa: E402
from benchmarks.steps import Step, TaskShares  # noqa: E402
from benchmarks.tasks import HostTasks, Tasks, Transfer  # noqa: E402
from wrong_host import with_galaxy_twice  # noqa: E402
from benchmarks.throughput import Threads  # noqa: E402
import nbsymple_versions  # noqa: E402
from nbsymple_versions.core.pipeline import ForcePipeline  # noqa: E402
from nbsymple_versions.core.vocabulary import PRECISIONS, TASKS  # noqa: E402
from nbsymple_versions.versions import CPU_LETTERS, GPU_LETTERS, LETTERS, TABLE  # noqa: E402
from tools import tracking  # noqa: E402

N = 64          # tiny N for every direct call (put into the grid by the fixture below)


@pytest.fixture(autouse=True)
def tiny_n_in_the_grid(monkeypatch):
    monkeypatch.setattr(grid, "NS", (N, *grid.NS))


def _run(cmd, **kw):
    env = dict(os.environ)
    env.pop("NBSYMPLE_BENCH_GRID", None)
    env.update(kw.pop("env", {}))
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, **kw)


# ---------------------------------------------------------------- discovery

def test_asv_check_loads_every_benchmark():
    """`asv check --python=same`: asv imports the whole suite (peers included) and checks
    every benchmark's signature; an import error or a bad signature fails."""
    r = _run([sys.executable, "-m", "asv", "check", "--python=same"])
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "No problems found" in out, out


def _discover(**env):
    """asv_runner's discovery (what `asv run` uses) in a fresh process with `env`."""
    code = textwrap.dedent("""
        import io, json, sys
        from asv_runner.discovery import list_benchmarks
        buf = io.StringIO()
        list_benchmarks(sys.argv[1], buf)
        print("BENCHMARKS" + buf.getvalue())
    """)
    r = _run([sys.executable, "-c", code, str(ROOT / "benchmarks")], env=env)
    assert r.returncode == 0, r.stderr
    return {b["name"]: b for b in json.loads(r.stdout.split("BENCHMARKS", 1)[1])}


def test_asv_discovery_finds_the_contract():
    """The names, parameters and units that the paper scripts read from the results."""
    found = _discover()
    vnp = ["version", "n", "precision"]
    expected = {
        "tasks.Tasks.time_pairwise": (vnp, "seconds"),
        "tasks.HostTasks.time_galactic": (["version", "n"], "seconds"),
        "tasks.HostTasks.time_integrate": (["version", "n"], "seconds"),
        "tasks.Transfer.time_transfer": (vnp, "seconds"),
        "steps.Step.time_step_leapfrog": (vnp, "seconds"),
        "steps.Step.time_step_si6a": (vnp, "seconds"),
        "steps.TaskShares.track_share": (["version", "n", "task"], "%"),
        "throughput.Threads.track_threads": (["version"], "threads"),
        "accuracy.Conservation.track_energy_error": (["scheme", "precision"], "relative"),
        "accuracy.Conservation.track_energy_error_per_step": (["scheme", "precision"], "relative"),
        "accuracy.Conservation.track_angular_momentum_error": (["scheme", "precision"], "relative"),
        "compile.Compile.track_compile_seconds": (["version", "precision"], "s"),
    }
    for name, (param_names, unit) in expected.items():
        assert name in found, f"{name} not discovered; found {sorted(found)}"
        assert found[name]["param_names"] == param_names, name
        assert found[name]["unit"] == unit, name
    assert found["tasks.Tasks.time_pairwise"]["params"][0] == [repr(v) for v in LETTERS]
    assert found["tasks.Transfer.time_transfer"]["params"][0] == [repr(v) for v in GPU_LETTERS]
    assert found["steps.TaskShares.track_share"]["params"][2] == [repr(t) for t in TASKS]
    assert found["accuracy.Conservation.track_energy_error"]["params"][1] == ["'sp'", "'dp'", "'dsp'"]


# what a benchmark module may import: what asv's benchmark processes have (the standard library,
# the package with its `bench` extra, asv's runner) and the suite's own modules (relative imports)
SUITE_IMPORTS = frozenset(sys.stdlib_module_names) | {"numpy", "numba", "asv_runner", "nbsymple_versions"}


def foreign_imports(folder: Path) -> list[str]:
    """'file:line name' of every import in the modules of `folder` (functions too) from outside
    SUITE_IMPORTS: the tooling (tools/), tests, anything else."""
    found = []
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module]
            else:
                continue
            found += [f"{path.name}:{node.lineno} {n}" for n in names if n.split(".")[0] not in SUITE_IMPORTS]
    return found


def test_benchmarks_holds_benchmarks():
    """Every module of benchmarks/ but the shared ones (`common`, `grid`, `package`, `validation`)
    defines benchmarks asv discovers, and none imports from outside the suite, the package and what asv's processes
    have: the tooling in tools/ drives the suite, never the other way round."""
    modules = {p.stem for p in (ROOT / "benchmarks").glob("*.py")} - {"__init__"}
    assert {name.split(".")[0] for name in _discover()} == modules - {"common", "grid", "package", "validation"}
    assert foreign_imports(ROOT / "benchmarks") == []


def test_the_import_check_catches_a_foreign_import(tmp_path):
    (tmp_path / "fine.py").write_text("import json\nimport numpy as np\nfrom nbsymple_versions import TaskClock\n"
                                      "from .common import Benchmark\n")
    (tmp_path / "bad.py").write_text("import os\n\n\ndef f():\n    from tools import tracking\n")
    assert foreign_imports(tmp_path) == ["bad.py:5 tools"]


def non_public_uses(folder: Path, public_names) -> list[str]:
    """'file:line what' for every way the modules of `folder` reach the package other than its
    public names: a submodule imported, a name outside `public_names` imported, read as an
    attribute of the package or of `package.public`, or given to `public.has` / `public.load`."""
    found = []
    for path in sorted(folder.glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        package = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                   for a in node.names if a.name == "nbsymple_versions"}
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names if a.name.startswith("nbsymple_versions.")]
            elif (isinstance(node, ast.ImportFrom) and not node.level
                  and (node.module or "").startswith("nbsymple_versions")):
                names = [node.module] if node.module != "nbsymple_versions" else \
                    [a.name for a in node.names if a.name not in public_names]
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                if node.value.id in package | {"public"} and node.attr not in public_names | {"has", "load", "__all__"}:
                    names = [f"{node.value.id}.{node.attr}"]
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr in ("has", "load")
                  and isinstance(node.func.value, ast.Name) and node.func.value.id == "public"):
                names = [f"public.{node.func.attr}({a.value!r})" for a in node.args
                         if not (isinstance(a, ast.Constant) and a.value in public_names)]
            found += [f"{path.name}:{node.lineno} {n}" for n in names]
    return found


def test_benchmarks_reach_the_package_only_through_its_public_names():
    """asv measures older commits with today's benchmarks: what they use of the package is in
    its public table (`nbsymple_versions.__all__`), reached through `package.public`, so that a
    name an older commit lacks is a skip with a reason, never an import error."""
    assert non_public_uses(ROOT / "benchmarks", set(nbsymple_versions.__all__)) == []


def test_the_public_name_check_catches_an_internal_use(tmp_path):
    (tmp_path / "fine.py").write_text("import nbsymple_versions\nfrom nbsymple_versions import TaskClock\n"
                                      "x = public.make_cluster, public.has('advance'), nbsymple_versions.__all__\n")
    (tmp_path / "bad.py").write_text("import nbsymple_versions.versions\nfrom nbsymple_versions.core import ics\n"
                                     "from nbsymple_versions import versions\nimport nbsymple_versions as nb\n"
                                     "x = nb.validation, public.LETTERS, public.load('make_cluster', 'TABLE')\n")
    assert non_public_uses(tmp_path, {"TaskClock", "make_cluster", "advance"}) == [
        "bad.py:1 nbsymple_versions.versions", "bad.py:2 nbsymple_versions.core", "bad.py:3 versions",
        "bad.py:5 nb.validation", "bad.py:5 public.LETTERS", "bad.py:5 public.load('TABLE')"]


def test_a_name_the_measured_commit_lacks_is_a_skip_with_its_reason(monkeypatch):
    monkeypatch.setattr(nbsymple_versions, "__all__", [n for n in nbsymple_versions.__all__ if n != "energy_parts"])
    assert not package.public.has("energy_parts") and package.public.has("make_cluster")
    with pytest.raises(package.SkipNotImplemented, match="this commit's nbsymple_versions has no public energy_parts"):
        package.public.energy_parts
    bench = Conservation()
    bench.params = [["leapfrog"], ["dp"]]
    cache = bench.setup_cache()
    with pytest.raises(NotImplementedError, match="no public energy_parts"):
        bench.setup(cache, "leapfrog", "dp")


# the public names of 2528594a, the committed reference run's commit
REFERENCE_COMMIT_NAMES = ["Simulation", "State", "TaskClock", "Units", "VersionUnavailable", "add_black_hole",
                          "all_versions", "get_version", "make_cluster", "place_on_orbit", "uniform_sphere"]


def test_the_pairwise_and_step_benchmarks_run_with_the_reference_commits_names(monkeypatch):
    """With only what 2528594a made public, validation falls back to the float64 direct sum (with
    that commit's tolerances, today's) and a step to `Simulation.step`; a wrong kernel is still
    refused."""
    from nbsymple_versions.validation import FRAME_KPC, TOLERANCE
    assert (validation.LEGACY_TOLERANCE, validation.LEGACY_FRAME_KPC) == (TOLERANCE, FRAME_KPC)
    monkeypatch.setattr(nbsymple_versions, "__all__", REFERENCE_COMMIT_NAMES)
    assert validation.validation_rules()[2] is validation._legacy_check
    tasks = Tasks()
    tasks.setup("A", N, "dp")
    tasks.time_pairwise("A", N, "dp")
    step = Step()
    step.setup("B", N, "dsp")
    t0 = step.state.t
    step.time_step_leapfrog("B", N, "dsp")
    assert step.state.t == pytest.approx(t0 + grid.DT)
    monkeypatch.setattr(common.Benchmark, "make_pipeline", _wrong_factory(1.01))
    with pytest.raises(ValidationError, match="refusing to time"):
        Tasks().setup("A", N, "dp")


def test_the_timing_state_is_the_packages_and_an_older_commits(monkeypatch):
    """One timing state: the package's public `timing_state`, which F's timing job and gpu_report
    use too; at a commit that does not make it public, the suite builds the same bits."""
    from nbsymple_versions.core import ics
    assert (ics.TIMING_SEED == package.LEGACY_TIMING["seed"]
            and ics.EXACT_IC_MAX_N == package.LEGACY_TIMING["exact_max_n"])
    for n in (64, ics.EXACT_IC_MAX_N + 1):
        today = package.timing_state(n)
        with monkeypatch.context() as m:
            m.setattr(nbsymple_versions, "__all__", REFERENCE_COMMIT_NAMES)
            older = package.timing_state(n)
        for name in ("x", "v", "m"):
            assert (getattr(today, name) == getattr(older, name)).all(), (n, name)


def test_the_literal_axes_and_version_facts_are_the_packages():
    """AXES and the Table 1 facts are literal in the suite (a measured commit must not move the
    parameter indices asv runs by); they are the package's own."""
    from benchmarks import gpu, peers
    from nbsymple_versions.instruments import gpu_asm, peers as package_peers
    from nbsymple_versions.gpu_pairwise.options import BACKENDS, KERNEL_KINDS
    assert grid.AXES["version"] == LETTERS and grid.AXES["gpu_version"] == GPU_LETTERS
    assert grid.AXES["precision"] == PRECISIONS and grid.AXES["task"] == TASKS
    assert grid.SERIAL_HOST == tuple(v.letter for v in TABLE if v.host_kernels == "serial")
    assert grid.FUSED_GALACTIC == tuple(v.letter for v in TABLE if v.fused_galactic)
    assert grid.DISTRIBUTED == tuple(v.letter for v in TABLE if v.distributed)
    assert (gpu.GPU_BACKENDS, gpu.GPU_KERNELS, gpu.COUNTED_KERNELS) == (BACKENDS, KERNEL_KINDS, tuple(gpu_asm.KINDS))
    assert peers.CANDIDATES == tuple(c.key for c in package_peers.candidates())


def test_importing_the_suite_touches_no_gpu_and_caches_outside_the_checkout():
    """asv's fork server imports the suite once and forks every benchmark from it: nothing of
    CUDA (numba-cuda, CuPy, Warp) may be loaded there, so that each benchmark initialises its
    own; numba's kernel cache lies outside this checkout."""
    code = textwrap.dedent(f"""
        import sys
        from asv_runner.discovery import disc_benchmarks
        assert list(disc_benchmarks({str(ROOT / "benchmarks")!r}))
        import numba
        print([m for m in sys.modules if m.split(".")[0] in ("cupy", "warp", "mpi4py") or m.startswith("numba.cuda")])
        print(numba.config.CACHE_DIR)
    """)
    r = _run([sys.executable, "-c", code])
    assert r.returncode == 0, r.stderr
    loaded, folder = r.stdout.strip().splitlines()[-2:]
    assert loaded == "[]"
    assert folder and not Path(folder).resolve().is_relative_to(ROOT)


def test_kernels_compile_once_per_machine(tmp_path):
    """With NUMBA_CACHE_DIR a second process loads every kernel it compiled (serial and threaded
    builds apart, as two entries each); without it, or with one numba cannot write in, nothing is
    written beside the sources (numba's own next choice for a folder it cannot use)."""
    code = textwrap.dedent("""
        import json
        import nbsymple_versions as nb
        stats = {}
        for letter in "AB":
            state = nb.make_cluster(64, seed=1)
            forces = nb.get_version(letter).pipeline(state, "dp")
            forces.warm_up(state.x)
            for name, d in (("pairwise", forces.backend.kernel), ("axpy", forces.host.axpy)):
                stats[f"{letter} {name}"] = [sum(d.stats.cache_hits.values()), sum(d.stats.cache_misses.values())]
        print(json.dumps(stats))
    """)
    cache = tmp_path / "cache"
    runs = [json.loads(_run([sys.executable, "-c", code], env={"NUMBA_CACHE_DIR": str(cache)}).stdout)
            for _ in range(2)]
    assert all(hits == 0 and misses == 1 for hits, misses in runs[0].values()), runs[0]
    assert all(hits == 1 and misses == 0 for hits, misses in runs[1].values()), runs[1]
    assert len(list(cache.rglob("*axpy*.nbc"))) == 2                 # serial and threaded builds
    before = set((ROOT / "nbsymple_versions").rglob("*.nb[ic]"))
    r = _run([sys.executable, "-c", code], env={"NUMBA_CACHE_DIR": ""})
    assert r.returncode == 0 and json.loads(r.stdout)["A pairwise"] == [0, 1], r.stdout + r.stderr
    assert set((ROOT / "nbsymple_versions").rglob("*.nb[ic]")) == before == set()
    axpy = "import numpy as np\nfrom nbsymple_versions.serial.kernels import SERIAL\ny = np.ones(8)\n" \
           "SERIAL.axpy(y, y, 0.5)\nassert y[0] == 1.5"
    r = _run([sys.executable, "-c", axpy], env={"NUMBA_CACHE_DIR": "/dev/null"})   # a file: numba cannot use it
    assert r.returncode == 0, r.stderr
    assert set((ROOT / "nbsymple_versions").rglob("*.nb[ic]")) == set()          # (numba's own fallback)


def test_parameters_are_the_same_on_every_grid_and_machine():
    """A smoke run, a GPU machine (the simulator stands in), a restricted version set: the
    same parameters and versions, so no run hides another's rows on the dashboard."""
    def key(found):
        return {k: (b["params"], b["version"]) for k, b in found.items()}
    default = key(_discover())
    for env in ({"NBSYMPLE_BENCH_GRID": "smoke"}, {"NBSYMPLE_BENCH_GRID": "large", "NBSYMPLE_BENCH_VERSIONS": "A"},
                {"NUMBA_ENABLE_CUDASIM": "1"}):
        assert key(_discover(**env)) == default, env


NEUTRAL = ("steps.TaskShares.track_share", "throughput.Threads.track_threads",   # neither way is worse
           "mpi.MpiStep.track_communicate_share")      # (a faster kernel raises it: a hunt found it searched)
LOWER_IS_BETTER_UNITS = ("seconds", "s", "relative", "relative error", "%",
                         "instructions")   # instructions per interaction


def test_every_figure_that_can_gate_is_lower_is_better():
    """asv reads every figure as lower-is-better: rates (a unit per second) and neutral figures
    are kept out of the dashboard's regression search (asv.conf.json), and the gate times only."""
    from asv import util
    conf = util.load_json(str(ROOT / "asv.conf.json"), js_comments=True)
    excluded = [re.compile(r) for r, start in conf.get("regressions_first_commits", {}).items() if start is None]
    for name, b in _discover().items():
        if "/s" in b["unit"] or name in NEUTRAL:
            assert any(r.match(name) for r in excluded), f"{name} ({b['unit']}) would read backwards as a regression"
        else:
            assert b["unit"] in LOWER_IS_BETTER_UNITS, f"{name}: is {b['unit']} lower-is-better?"
            assert not any(r.match(name) for r in excluded), name
    gate = tracking.selection(gate=True)
    assert gate and all(p.startswith(("^tasks\\.Tasks\\.time_", "^tasks\\.HostTasks\\.time_")) for p in gate), gate


def test_the_grid_is_a_selection_with_reasons():
    """What does not run is a skip with a sentence; `selection` names exactly what runs."""
    assert "not in the 'default' grid" in Tasks().skip_reason("A", 262144, "dp")
    assert "budget" in Step().method_skips["time_step_si6a"](Step(), "A", 16384, "dp")
    assert "no separate galactic task" in HostTasks().method_skips["time_galactic"](HostTasks(), "E", 256)
    if not grid.gpu_visible():
        assert "needs a GPU" in Transfer().skip_reason("C", 256, "dp")
    assert "NBSYMPLE_BENCH_VERSIONS" in Tasks().skip_reason("F", 256, "dp")
    pattern = next(p for p in tracking.selection() if p.startswith("^tasks\\.Tasks\\.time_pairwise"))
    ran = [f"tasks.Tasks.time_pairwise({v!r}, {n}, 'dp')" for v in LETTERS for n in grid.AXES["n"]
           if re.match(pattern, f"tasks.Tasks.time_pairwise({v!r}, {n}, 'dp')")]
    grid_ns = grid.GRIDS[grid.GRID]["ns"]
    want = len(grid_ns) * (len(CPU_LETTERS) + (len(GPU_LETTERS) if grid.gpu_visible() else 0))
    assert len(ran) == want, ran
    gate = tracking.selection(gate=True)
    pairwise = next(p for p in gate if "time_pairwise" in p)
    assert "16384" in pairwise and "4096" not in pairwise, gate            # the largest N of the grid
    host = [p for p in gate if "HostTasks" in p]
    assert len(host) == 2 and all("'A'" in p and "'B'" not in p for p in host), gate   # serial host kernels


def test_threads_asked_wrongly_stop_discovery_naming_the_variable(monkeypatch):
    """A hunt: under plain asv, NBSYMPLE_BENCH_THREADS=abc (int's ValueError) or more threads than
    numba starts (numba's, naming no variable) failed every benchmark, a traceback each, and '1_0'
    or an Arabic-Indic 2 were read by int; the value is now checked as the machine's name reads
    it, and at import, so that asv's discovery stops once, naming it."""
    most = numba.config.NUMBA_NUM_THREADS
    for typed in ("abc", "0", "-1", "2.0", "1_0", "\u0662", str(most + 1), "9" * 5000):
        monkeypatch.setenv("NBSYMPLE_BENCH_THREADS", typed)
        with pytest.raises(ValueError, match=f"^NBSYMPLE_BENCH_THREADS=.*from 1 to {most} "):
            grid.bench_threads()
    r = _run([sys.executable, "-m", "asv", "check", "--python=same"], env={"NBSYMPLE_BENCH_THREADS": "abc"})
    assert r.returncode != 0 and "NBSYMPLE_BENCH_THREADS='abc': choose a whole number" in r.stdout + r.stderr


def test_letters_to_run_that_name_no_version_stop_discovery(monkeypatch):
    """A hunt: NBSYMPLE_BENCH_VERSIONS=',' (which `environment` refuses) ran no version under plain
    asv, only the peers, and asv ended with status 0."""
    for typed in (",", " , ,"):
        monkeypatch.setenv("NBSYMPLE_BENCH_VERSIONS", typed)
        with pytest.raises(ValueError, match="^NBSYMPLE_BENCH_VERSIONS=.*: no letter; use letters of ABCDEF"):
            grid._versions()
    monkeypatch.setenv("NBSYMPLE_BENCH_VERSIONS", "a, b")
    assert grid._versions() == ("A", "B")


def test_machine_names_tell_machines_apart(monkeypatch):
    from nbsymple_versions.instruments import provenance
    monkeypatch.delenv("BENCH_MACHINE", raising=False)
    monkeypatch.delenv("NBSYMPLE_BENCH_THREADS", raising=False)
    monkeypatch.setattr(provenance, "cpu_model", lambda: "AMD EPYC 9R14")
    monkeypatch.setattr(provenance, "cpu_uarch", lambda: "znver4")
    monkeypatch.setattr(provenance, "gpus", lambda: ([], ""))
    names = {}
    for isa in ("avx512", "avx2"):
        monkeypatch.setattr(provenance, "vector_isa", lambda isa=isa: isa)
        names[isa] = tracking.machine_info()
    assert names["avx512"]["machine"] != names["avx2"]["machine"]
    assert names["avx2"]["machine"].startswith("amd-epyc-9r14-znver4-avx2-") and names["avx2"]["isa"] == "avx2"
    assert names["avx2"]["uarch"] == "znver4"
    monkeypatch.setattr(provenance, "gpus", lambda: (["NVIDIA H200"] * 2, ""))
    two = tracking.machine_info()
    assert two["machine"].endswith("-2x-nvidia-h200") and two["gpu"] == "2 x NVIDIA H200"
    monkeypatch.setenv("NBSYMPLE_BENCH_THREADS", "1")
    assert tracking.machine_info()["machine"].endswith("-1threads")


def test_the_tail_of_a_failed_asv_is_shown_whatever_bytes_it_holds(tmp_path, monkeypatch, capsys):
    """A hunt: asv's log holding bytes that are not UTF-8 (a benchmark's traceback naming a checkout
    folder of such a name) ended `make bench` and the gate in a UnicodeDecodeError, not its tail."""
    failing = [sys.executable, "-c", "import sys; sys.stdout.buffer.write(b'bench in /x\\xff failed\\n'); sys.exit(1)"]
    started = tracking.child_process
    monkeypatch.setattr(tracking, "child_process", lambda cmd, **kw: started(failing, **kw))
    assert tracking.asv("run", log_file=tmp_path / "asv.log") == 1
    assert "bench in /x\ufffd failed" in capsys.readouterr().err


def test_a_runs_provenance_keeps_the_variables_that_choose_the_grid_or_the_threads_wait(monkeypatch):
    for name in [n for n in os.environ if n.startswith(("NBSYMPLE_BENCH_", "OMP_", "GOMP_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("NBSYMPLE_BENCH_GRID", "smoke")
    monkeypatch.setenv("OMP_WAIT_POLICY", "passive")
    monkeypatch.setenv("GOMP_SPINCOUNT", "10k")
    monkeypatch.setenv("NBSYMPLE_TEST_UNRELATED", "x")
    d = tracking.run_provenance()
    assert d["grid"] == "smoke"
    monkeypatch.setenv("NBSYMPLE_BENCH_GRID", " Smoke ")        # a hunt: recorded as typed, not the grid that ran
    assert tracking.run_provenance()["grid"] == "smoke"
    assert {k: v for k, v in d["env"].items() if k != "NUMBA_ENABLE_CUDASIM"} == {
        "NBSYMPLE_BENCH_GRID": "smoke", "OMP_WAIT_POLICY": "passive", "GOMP_SPINCOUNT": "10k"}


def test_one_environment_name_and_provenance_in_the_results(tmp_path):
    """asv writes under a name taken from the interpreter's path; the file gets the fixed name,
    keeps its rows across runs and lists every run's provenance; a run in which asv saved
    nothing (a mistyped option in ASV_ARGS, --dry-run) leaves the file as it was (a hunt found
    one provenance entry more per such run)."""
    from asv.results import get_filename
    commit = "0123456789abcdef0123456789abcdef01234567"
    asv_file = tmp_path / get_filename("m", commit, tracking._asv_env_name())
    fixed = tmp_path / get_filename("m", commit, tracking.fixed_env_name())
    for run in (1, 2):
        kept = fixed.read_bytes() if run > 1 else None
        with tracking.fixed_environment(tmp_path, "m", commit, {"run": run}):
            # asv merges into its copy; the fixed file stays whole until the new one replaces it
            assert (fixed.exists(), asv_file.exists()) == (run > 1, run > 1)
            assert run == 1 or fixed.read_bytes() == asv_file.read_bytes() == kept
            asv_file.parent.mkdir(parents=True, exist_ok=True)
            asv_file.write_text(json.dumps({"env_name": "x", "python": sys.executable, "params": {"python": "x"},
                                            "results": {}, "version": 2}))
        data = json.loads(fixed.read_text())
        assert not asv_file.exists() and data["env_name"] == tracking.fixed_env_name()
        assert data["params"]["python"] == data["python"] == f"{sys.version_info.major}.{sys.version_info.minor}"
        assert [p["run"] for p in data["provenance"]] == list(range(1, run + 1))
    held = fixed.read_bytes()
    with tracking.fixed_environment(tmp_path, "m", commit, {"run": 3}):
        assert asv_file.read_bytes() == fixed.read_bytes() == held
    assert fixed.read_bytes() == held and not asv_file.exists()      # asv saved nothing: no run recorded


@pytest.mark.parametrize("kept", [False, True], ids=["first run", "results kept"])
def test_rows_no_run_recorded_are_set_aside_not_taken_under_this_runs_provenance(tmp_path, capsys, kept):
    """A file under asv's own name before the run (a plain `asv run --set-commit-hash` of this
    interpreter, or a run killed before it saved) holds rows that no provenance names: asv merged
    the new run into it and the commit's results took them all under the new run's provenance (a
    hunt). It is moved aside, named, and the results hold only what was recorded; a second such
    file goes beside the first, which stays (it replaced it: a hunt's leftover)."""
    from asv.results import get_filename
    commit = "0123456789abcdef0123456789abcdef01234567"
    asv_file = tmp_path / get_filename("m", commit, tracking._asv_env_name())
    fixed = tmp_path / get_filename("m", commit, tracking.fixed_env_name())
    asv_file.parent.mkdir(parents=True)
    if kept:
        fixed.write_text(json.dumps({"env_name": "x", "python": "3", "params": {}, "results": {"a": [1]},
                                     "version": 2, "provenance": [{"run": 1}]}))
    plain = json.dumps({"env_name": "y", "python": sys.executable, "params": {}, "results": {"plain": [9]},
                        "version": 2})
    asv_file.write_text(plain)
    with tracking.fixed_environment(tmp_path, "m", commit, {"run": 2}):
        held = json.loads(asv_file.read_text()) if asv_file.exists() else {"results": {}}   # as asv merges
        asv_file.write_text(json.dumps({**held, "results": {**held["results"], "b": [2]}}))
    data = json.loads(fixed.read_text())
    assert data["results"] == ({"a": [1], "b": [2]} if kept else {"b": [2]})
    assert [p["run"] for p in data["provenance"]] == ([1, 2] if kept else [2])
    aside = asv_file.with_name(asv_file.name + tracking.UNRECORDED)
    assert aside.read_text() == plain and not asv_file.exists()
    assert f"moved aside to {aside.name}, not taken into {fixed.name}" in capsys.readouterr().err
    asv_file.write_text(plain.replace("9", "8"))        # another, later: beside the first, which stays
    with tracking.fixed_environment(tmp_path, "m", commit, {"run": 3}):
        pass
    second = aside.with_name(aside.name + ".2")
    assert aside.read_text() == plain and second.read_text() == plain.replace("9", "8")
    assert f"moved aside to {second.name}" in capsys.readouterr().err


def test_a_kill_or_a_full_disk_while_asv_runs_or_saves_leaves_the_results_as_they_were(tmp_path, monkeypatch,
                                                                                       caplog):
    """`make bench` killed (kill -9) while asv ran, or a disk full as asv saved: the commit's
    results had been moved to asv's own name for the run and were then left there, or cut short
    by asv's `util.write_json`, which wrote in place (a hunt). The fixed file stays as it was while
    asv runs, a killed run's copy is replaced at the next, and asv (`tracking.ASV`) writes each
    file whole (`whole_writes`): shown by a link at asv's machine file, replaced, not written through."""
    from asv import util
    from asv.results import get_filename
    commit = "0123456789abcdef0123456789abcdef01234567"
    asv_file = tmp_path / get_filename("m", commit, tracking._asv_env_name())
    fixed = tmp_path / get_filename("m", commit, tracking.fixed_env_name())
    fixed.parent.mkdir(parents=True)
    fixed.write_text(json.dumps({"env_name": "x", "python": "3", "params": {}, "results": {"a": [1]}, "version": 2,
                                 "provenance": [{"run": 1}]}))
    held = fixed.read_bytes()
    asv_file.write_text('{"results": {"a": [1], "b"')          # what a killed run's asv left, cut short
    with monkeypatch.context() as m:
        m.setattr(util, "write_json", util.write_json)          # asv's own again after the block
        tracking.whole_writes()
        with pytest.raises(TypeError):
            with tracking.fixed_environment(tmp_path, "m", commit, {"run": 2}):
                assert fixed.read_bytes() == held == asv_file.read_bytes()      # as a kill here would leave it
                util.write_json(str(asv_file), {"results": {"a": [1], "b": object()}}, compact=True)  # fails midway
        assert fixed.read_bytes() == held and not asv_file.exists()
        m.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))))
        with pytest.raises(SystemExit) as stop:       # a full disk: one sentence, status 4 (asv's traceback before)
            util.write_json(str(fixed), {"results": {}}, compact=True)
    assert stop.value.code == 4 and fixed.read_bytes() == held
    assert f"asv: cannot write {fixed}: {os.strerror(errno.ENOSPC)}" in caplog.text
    outside = tmp_path / "outside.json"
    outside.write_text('{"version": 1}')
    (tmp_path / ".asv-machine.json").symlink_to(outside)
    r = subprocess.run([*tracking.ASV, "--config", str(tracking.CONFIG), "machine", "--yes", "--machine", "m"],
                       cwd=tracking.ROOT, env=dict(os.environ, HOME=str(tmp_path)), capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert outside.read_text() == '{"version": 1}' and not (tmp_path / ".asv-machine.json").is_symlink()


def test_a_results_file_that_is_a_link_is_replaced_never_written_through(tmp_path):
    """A results file of the fixed name that is a link to a file elsewhere: asv merges into the rows it names and
    the file written replaces the link; the file it named is left as it was (asv's `util.write_json` wrote the
    run's rows through it, and so did `write_results`)."""
    from asv import util
    from asv.results import get_filename
    commit = "0123456789abcdef0123456789abcdef01234567"
    asv_file = tmp_path / get_filename("m", commit, tracking._asv_env_name())
    fixed = tmp_path / get_filename("m", commit, tracking.fixed_env_name())
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"env_name": "x", "python": "3", "params": {}, "results": {"a": [1]},
                                     "version": 2, "provenance": [{"run": 1}]}))
    before = elsewhere.read_bytes()
    fixed.parent.mkdir(parents=True)
    fixed.symlink_to(elsewhere)
    with tracking.fixed_environment(tmp_path, "m", commit, {"run": 2}):
        held = json.loads(asv_file.read_text())          # as asv reads it, and writes it back with a new row
        util.write_json(str(asv_file), {**held, "results": {**held["results"], "b": [2]}}, compact=True)
    assert elsewhere.read_bytes() == before and not fixed.is_symlink()
    data = json.loads(fixed.read_text())
    assert data["results"] == {"a": [1], "b": [2]} and [p["run"] for p in data["provenance"]] == [1, 2]


# ---------------------------------------------------------------- validation before timing

class _WrongBackend:
    """A backend whose forces are wrong: scaled by `factor`, or (factor None) missing z."""

    def __init__(self, inner, factor):
        self._inner, self._factor = inner, factor

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def forces(self, x, out, clock):
        self._inner.forces(x, out, clock)
        if self._factor is None:
            out[2] = 0.0
        else:
            out *= self._factor


def _wrong_factory(factor):
    def make_pipeline(self, letter, state, precision, clock=None):
        good = build_pipeline(letter, state, precision, clock)
        return ForcePipeline(_WrongBackend(good.backend, factor), good.host, good.units, good.clock)
    return make_pipeline


def _wrong_host_factory(self, letter, state, precision, clock=None):
    return with_galaxy_twice(build_pipeline(letter, state, precision, clock))


def _setups(letter, precision):
    """(class, callable running that class's setup at a tiny configuration)."""
    def cached(cls, params, args, **attrs):
        def run():
            bench = cls()
            bench.params = params
            for k, v in attrs.items():
                setattr(bench, k, v)
            bench.setup(bench.setup_cache(), *args)
            return bench
        return run

    return [
        (Tasks, lambda: Tasks().setup(letter, N, precision)),
        (HostTasks, lambda: HostTasks().setup(letter, N)),      # validates the dp pipeline
        (Step, lambda: Step().setup(letter, N, precision)),
        (Threads, lambda: Threads().setup(letter)),
        (Compile, lambda: _compile(letter, precision)),
        (TaskShares, cached(TaskShares, [[letter], [N], list(TASKS)], (letter, N, "pairwise"),
                            min_seconds=0.0)),
        (Conservation, cached(Conservation, [["leapfrog"], [precision]], ("leapfrog", precision),
                              n=N, steps=3)),
    ]


def _compile(letter, precision):
    bench = Compile()
    bench.n = N
    bench.setup(letter, precision)
    return bench


@pytest.mark.parametrize("factor", [1.01, None], ids=["scaled-1.01", "missing-z"])
@pytest.mark.parametrize("letter,precision", [("A", "dp"), ("B", "sp"), ("A", "dsp")])
def test_setup_rejects_a_wrong_kernel(monkeypatch, letter, precision, factor):
    monkeypatch.setattr(common.Benchmark, "make_pipeline", _wrong_factory(factor))
    for cls, run in _setups(letter, precision):
        with pytest.raises(ValidationError, match="refusing to time"):
            run()


def test_setup_rejects_a_wrong_host_kernel(monkeypatch):
    """A hunt: `validate` checked the pairwise forces alone, and HostTasks and Step timed a galactic
    kernel off by 2x (the gate passed it). The host tasks are checked too (`check_host_tasks`)."""
    monkeypatch.setattr(common.Benchmark, "make_pipeline", _wrong_host_factory)
    for cls, run in _setups("A", "dp"):
        with pytest.raises(ValidationError, match="of the host tasks .* refusing to time"):
            run()


def test_the_mpi_step_validates_f_before_any_job_is_timed(monkeypatch):
    """A hunt: `MpiStep` timed version F under mpiexec without checking it (a wrong F was
    recorded where `Step` refused it); now its cache validates F first, and no job starts."""
    from benchmarks import mpi
    monkeypatch.setattr(mpi.MpiStep, "make_pipeline", _wrong_factory(1.01))
    monkeypatch.setattr(mpi.MpiStep, "skip_reason", lambda self, ranks, n: None)
    monkeypatch.setattr(mpi.MpiStep, "measure", lambda self, ranks, n: pytest.fail("a job was timed"))
    with pytest.raises(ValidationError, match="version F dp: .* refusing to time"):
        mpi.MpiStep().setup_cache()


def test_setup_accepts_the_right_kernel():
    """The same set-ups pass with the real pipelines (the rejection above is the kernel's)."""
    for cls, run in _setups("A", "dp"):
        run()


def test_unavailable_or_oversized_combinations_are_skipped():
    with pytest.raises(NotImplementedError, match="grid"):
        Step().setup("A", 262144, "dp")            # refused before anything is built
    with pytest.raises(NotImplementedError, match="not available|needs a GPU"):
        if package.public.get_version("C").available()[0]:
            raise NotImplementedError("needs a GPU")   # a GPU is here: nothing to check
        Tasks().setup("C", N, "dp")
    step = Step()
    step.setup("A", N, "dp")
    step.method_skip["time_step_si6a"] = "over budget"
    with pytest.raises(package.SkipNotImplemented, match="over budget"):
        step.time_step_si6a("A", N, "dp")


# ---------------------------------------------------------------- the figures at tiny N

def _finite_nonneg(x):
    return isinstance(x, (int, float)) and math.isfinite(x) and x >= 0


@pytest.mark.parametrize("letter", ["A", "B"])
def test_time_benchmarks_run_at_tiny_n(letter):
    tasks = Tasks()
    tasks.setup(letter, N, "dp")
    tasks.time_pairwise(letter, N, "dp")
    host = HostTasks()
    host.setup(letter, N)
    host.time_galactic(letter, N)
    host.time_integrate(letter, N)
    step = Step()
    step.setup(letter, N, "dsp")
    t0 = step.state.t
    step.time_step_leapfrog(letter, N, "dsp")
    step.time_step_si6a(letter, N, "dsp")
    assert step.state.t == pytest.approx(t0 + 2 * grid.DT)


def test_asv_times_each_call_after_one_validation_and_build_per_process(monkeypatch):
    """A hunt: asv_runner >= 0.3 runs `setup` before every timed call (asv#966, one call a sample),
    and each validated against the NumPy reference and built the pipeline anew, so every sample
    was the first call after that work (A's integrate task 1.3-4.6x its time inside a step). Driven
    as asv drives it, the benchmark validates and builds once per process, whatever asv_runner
    does between its samples, and each timed call does the same work."""
    from asv_runner.benchmarks.time import TimeBenchmark
    import benchmarks.tasks as tasks
    validated, built = [], []
    monkeypatch.setattr(common.Benchmark, "validate", lambda self, letter, precision: validated.append(letter))
    made = common.timing_state
    monkeypatch.setattr(common, "timing_state", lambda n: built.append(n) or made(n))
    host = HostTasks()
    host.repeat, host.warmup_time = (4, 4, 10.0), 0.0          # four samples, no warm-up calls
    timed = TimeBenchmark("tasks.HostTasks.time_integrate", host.time_integrate, [host.time_integrate, host, tasks])
    timed.set_param_idx(next(i for i, p in enumerate(itertools.product(*timed._params)) if p == ("A", 256)))
    timed.do_setup()
    result = timed.run(*timed._current_params)
    assert len(result["samples"]) == 4 and validated == ["A"] and built == [256], (result, validated, built)


def test_threads_are_recorded():
    for letter, want in (("A", 1), ("B", numba.get_num_threads())):
        bench = Threads()
        bench.setup(letter)
        assert bench.track_threads(letter) == want


def test_task_shares_sum_to_100():
    bench = TaskShares()
    bench.params = [list(CPU_LETTERS), [N], list(TASKS)]
    bench.min_seconds = 0.01
    cache = bench.setup_cache()
    for letter in CPU_LETTERS:
        shares = []
        for task in TASKS:
            bench.setup(cache, letter, N, task)
            shares.append(bench.track_share(cache, letter, N, task))
        assert all(_finite_nonneg(s) and s <= 100 for s in shares), shares
        assert shares[0] > 0 and shares[3] == 0.0       # pairwise work, no transfer on the CPU
        assert sum(shares) == pytest.approx(100.0)


def test_conservation_errors_are_finite():
    bench = Conservation()
    bench.n, bench.steps = N, 5
    cache = bench.setup_cache()
    for scheme in bench.params[0]:
        for precision in bench.params[1]:
            bench.setup(cache, scheme, precision)
            e = bench.track_energy_error(cache, scheme, precision)
            e1 = bench.track_energy_error_per_step(cache, scheme, precision)
            lerr = bench.track_angular_momentum_error(cache, scheme, precision)
            # relative to E, which includes the Galactic potential (|E| >> cluster energy):
            # SI6A in dp can conserve it to the last bit, so 0.0 is a legal value
            assert _finite_nonneg(e) and _finite_nonneg(e1) and _finite_nonneg(lerr)
            assert e < 1e-3 and lerr < 1e-3


def test_compile_seconds_is_positive():
    bench = _compile("A", "sp")
    s = bench.track_compile_seconds("A", "sp")
    assert _finite_nonneg(s) and s > 0


# ---------------------------------------------------------------- GPU versions in the simulator

def test_gpu_versions_through_the_suite_in_the_simulator():
    """C, D, E under NUMBA_ENABLE_CUDASIM=1 at N = 64: validation, transfer, the kernel and a
    step through the same benchmark classes (the simulator must be on before numba loads)."""
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from benchmarks import common, grid
        from benchmarks.steps import Step
        from benchmarks.tasks import Tasks, Transfer
        from nbsymple_versions.versions import GPU_LETTERS
        common.Benchmark.validation_n = 64
        grid.NS = (64,)
        assert set(GPU_LETTERS) <= set(grid.VERSIONS), grid.VERSIONS
        for letter in GPU_LETTERS:
            t = Tasks()
            t.setup(letter, {N}, "dsp")
            assert t.on_device
            t.time_pairwise(letter, {N}, "dsp")
            tr = Transfer()
            tr.setup(letter, {N}, "dsp")
            tr.time_transfer(letter, {N}, "dsp")
            st = Step()
            st.setup(letter, {N}, "sp")
            st.time_step_leapfrog(letter, {N}, "sp")
        from benchmarks import mpi, package         # a hunt: F's validation took E (simulated), its
        class Done:                                # jobs, without the simulator, ran B: B in both now
            returncode, stdout, stderr = 0, '{{"seconds_per_step": 1}}', ""
        commands = []
        mpi.subprocess.run = lambda cmd, **kw: commands.append(cmd) or Done
        mpi.MpiStep.skip_reason = lambda self, ranks, n: None
        assert mpi.MpiStep().make_pipeline("F", package.timing_state({N}), "dp").node_version == "B"
        mpi.MpiStep().measure(2, {N})
        assert "--node-version=B" in commands[0], commands
        print("ok")
    """)
    r = _run([sys.executable, "-c", code], env={"NUMBA_ENABLE_CUDASIM": "1"})
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr


def test_the_letters_to_run_hold_for_the_peers_and_fs_job_too(monkeypatch):
    """NBSYMPLE_BENCH_VERSIONS=C still timed the peers' A- and B- candidates and F's job across
    ranks (found by a hunt); a peer's own candidates (NumPy, REBOUND, Warp) are no version's."""
    from benchmarks.mpi import MpiStep
    from benchmarks.peers import Peers
    monkeypatch.setenv("NBSYMPLE_BENCH_VERSIONS", "C")
    monkeypatch.setattr(grid, "VERSIONS", ("C",))
    assert "left out by NBSYMPLE_BENCH_VERSIONS=C" in Peers().skip_reason("A-dp", 4096)
    assert "left out" not in (Peers().skip_reason("NumPy-dp", 4096) or "")
    assert "left out by NBSYMPLE_BENCH_VERSIONS=C" in MpiStep().skip_reason(2, 256)
    monkeypatch.delenv("NBSYMPLE_BENCH_VERSIONS")
    assert "left out" not in (MpiStep().skip_reason(2, 256) or "")                  # by default F's job runs


def test_a_wrong_or_failing_kernel_of_the_suite_fails_its_peers_benchmark(monkeypatch):
    """A hunt: a candidate of the suite's own versions (A-dp) whose forces disagreed with the
    reference, or that raised, was a skip (n/a) in asv, where docs/tracking_performance.md says a
    wrong kernel is a failed benchmark: it fails now; a peer that cannot run here stays a skip."""
    from benchmarks import peers
    from benchmarks.validation import ValidationError
    from nbsymple_versions.instruments import peers as package_peers
    n = peers.GRID_PEER_NS[0]
    for status, raised in (("disagrees: max relative error 1.00e-02 > 1e-12", ValidationError),
                           ("skipped: A failed: ZeroDivisionError: no", RuntimeError)):
        monkeypatch.setattr(package_peers, "prepare", lambda c, state, s=status: (None, s, math.nan))
        with pytest.raises(raised, match=f"A-dp at N = {n}: {status}"):
            peers.Peers().setup("A-dp", n)
    monkeypatch.setattr(package_peers, "prepare", lambda c, state: (None, "skipped: NumPy failed: MemoryError: x",
                                                                    math.nan))
    with pytest.raises(NotImplementedError, match="NumPy failed"):
        peers.Peers().setup("NumPy-dp", n)


def test_the_letters_to_run_leave_out_the_conservation_runs_of_b(monkeypatch):
    """A hunt: NBSYMPLE_BENCH_VERSIONS=C still ran `accuracy.Conservation`'s six runs of B."""
    from benchmarks.accuracy import Conservation
    monkeypatch.setenv("NBSYMPLE_BENCH_VERSIONS", "C")
    monkeypatch.setattr(grid, "VERSIONS", ("C",))
    assert "version B is left out by NBSYMPLE_BENCH_VERSIONS=C" in Conservation().skip_reason("leapfrog", "dp")
    with pytest.raises(NotImplementedError, match="left out"):
        Conservation().integrate("leapfrog", "dp")
    monkeypatch.delenv("NBSYMPLE_BENCH_VERSIONS")
    assert Conservation().skip_reason("leapfrog", "dp") is None


def test_make_clean_keeps_the_papers_measured_results():
    """A hunt: `make clean` removed .asv whole, `make paper`'s measured results (.asv/paper) too."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}   # (under make test)
    p = subprocess.run(["make", "--no-print-directory", "-n", "clean"], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.startswith("rm -rf .venv html"), p.stdout + p.stderr
    words = p.stdout.split()
    assert ".asv" not in words and ".asv/paper" not in words and ".asv/" not in words, p.stdout


def test_gpu_kernels_that_do_not_compile_fail_the_gpu_counts(monkeypatch):
    """A hunt: GPU kernels broken at the commit measured (`CompileFailed`) made every `GpuCode`
    row a skip, as if the CUDA tools were missing; a failure now. Missing tools stay a skip."""
    from benchmarks.gpu import GpuCode
    from nbsymple_versions.instruments import gpu_asm

    def broken(arch):
        raise gpu_asm.CompileFailed("NVRTC could not compile nbody.cu (sp, sm_90): error")
    monkeypatch.setattr(gpu_asm, "count_all", broken)
    counts = GpuCode().setup_cache()
    with pytest.raises(RuntimeError, match="the GPU kernels could not be compiled: NVRTC could not compile"):
        GpuCode().setup(counts, "numba", "sp", "tiled")

    def missing(arch):
        raise gpu_asm.ToolMissing("ptxas is not installed")
    monkeypatch.setattr(gpu_asm, "count_all", missing)
    with pytest.raises(NotImplementedError, match="ptxas is not installed"):
        GpuCode().setup(GpuCode().setup_cache(), "numba", "sp", "tiled")


def test_the_package_s_own_broken_import_fails_the_gpu_counts_never_skips(monkeypatch):
    """A hunt: an ImportError raised by the package's own modules (a name renamed) was read as
    "the CUDA tools are missing" and every `GpuCode` row skipped; a failure now. A missing
    third-party module stays a skip."""
    from benchmarks.gpu import GpuCode
    from nbsymple_versions.instruments import gpu_asm

    def raising(error):
        def count_all(arch):
            raise error
        return count_all
    own = ImportError("cannot import name 'renamed_helper'", name="nbsymple_versions.gpu_pairwise.options")
    monkeypatch.setattr(gpu_asm, "count_all", raising(own))
    with pytest.raises(RuntimeError, match="the GPU kernels could not be imported: cannot import name") as e:
        GpuCode().setup(GpuCode().setup_cache(), "numba", "sp", "tiled")
    assert not isinstance(e.value, NotImplementedError)          # asv's skip is a NotImplementedError
    monkeypatch.setattr(gpu_asm, "count_all", raising(ModuleNotFoundError("No module named 'cuda'", name="cuda")))
    with pytest.raises(NotImplementedError, match="No module named 'cuda'"):
        GpuCode().setup(GpuCode().setup_cache(), "numba", "sp", "tiled")


def test_cpu_kernels_that_do_not_compile_fail_the_cpu_counts(monkeypatch):
    """A hunt: CPU kernels broken at the commit measured made every `CpuCode` row a skip (n/a),
    as `GpuCode` did; compiling for the CPU needs no other tool, so it is a failure."""
    from benchmarks.cpu_code import CpuCode
    from nbsymple_versions.instruments import cpu_asm

    def broken(targets):
        raise cpu_asm.CompileFailed("compiling the CPU kernels for skylake-avx512 failed: type inference")
    monkeypatch.setattr(cpu_asm, "count_all", broken)
    with pytest.raises(RuntimeError, match="could not be compiled for the fixed targets: compiling the CPU") as e:
        CpuCode().setup(CpuCode().setup_cache(), "haswell", "axpy dp")
    assert not isinstance(e.value, NotImplementedError)          # asv's skip is a NotImplementedError


def test_a_broken_import_of_the_gpu_backend_is_raised_not_called_not_installed(monkeypatch):
    """A hunt: `availability` read an ImportError of the package's own numba-cuda module (a name
    renamed) as "numba-cuda not installed", so the GPU versions' benchmarks skipped."""
    import sys
    from nbsymple_versions.gpu_pairwise import backends
    monkeypatch.setattr(backends, "no_driver", lambda: False)
    own = ImportError("cannot import name 'renamed_helper'", name="nbsymple_versions.gpu_pairwise.options")
    assert backends.package_defect(own)
    assert not backends.package_defect(ModuleNotFoundError("No module named 'numba.cuda'", name="numba.cuda"))
    import nbsymple_versions.gpu_pairwise as package
    monkeypatch.delattr(package, "numba_cuda", raising=False)
    monkeypatch.setitem(sys.modules, "nbsymple_versions.gpu_pairwise.numba_cuda", None)   # import fails: ours
    with pytest.raises(ImportError):
        backends.availability("numba")


def test_the_gate_times_threaded_kernels_only_where_they_take_long_enough(monkeypatch):
    """A hunt: on the smoke grid (N = 256) the gate timed B's pairwise task, tens of microseconds,
    and failed HEAD against itself (237x once). Threaded timings are gated from
    `GATE_THREADED_LEAST_N` bodies on; A's, serial, at any N."""
    def versions():
        return {i.split(", ")[0] for name, ids in tracking.selected(gate=True) if name == "tasks.Tasks.time_pairwise"
                for i in ids}
    assert {"'A'", "'B'"} <= versions()
    monkeypatch.setattr(tracking, "GATE_THREADED_LEAST_N", 10**9)      # beyond every N of the grid
    assert "'A'" in versions() and "'B'" not in versions()


def test_each_conservation_track_reports_its_own_error():
    """Four distinct errors in the cache: each track returns its own (a mutation hunt: the per-step
    track returning the 1000-step error passed, the tests checking only that they are finite)."""
    errors = {"energy": 1e-8, "energy_per_step": 1e-12, "internal_energy": 1e-5, "angular_momentum": 1e-14}
    bench = Conservation()
    args = ("leapfrog", "dp")
    bench.setup({args: ("ok", errors)}, *args)
    cache = None
    assert [bench.track_energy_error(cache, *args), bench.track_energy_error_per_step(cache, *args),
            bench.track_internal_energy_error(cache, *args), bench.track_angular_momentum_error(cache, *args)] \
        == [1e-8, 1e-12, 1e-5, 1e-14]


def test_a_conservation_run_of_one_step_ends_with_its_first_steps_error():
    """`Conservation` integrates `steps` steps in all, the first one's error recorded on the way: a run of one
    step ends with the error of its first (a mutation hunt: a step too many after the first passed)."""
    bench = Conservation()
    bench.n, bench.steps = N, 1
    errors = bench.integrate("leapfrog", "sp")
    assert errors["energy"] == errors["energy_per_step"] > 0, errors


def test_the_task_shares_are_taken_over_at_least_their_least_seconds():
    """`TaskShares.measure` steps until the clock holds `min_seconds`, past `min_steps` (here within its
    `max_steps`; a mutation hunt: stopping at whichever came first passed)."""
    bench = TaskShares()
    bench.min_seconds, bench.max_steps = 0.01, 10 ** 6
    clocks = []
    stepper = bench.stepper

    def kept(*args, **kwargs):
        step, clock = stepper(*args, **kwargs)
        clocks.append(clock)
        return step, clock
    bench.stepper = kept
    bench.measure("A", N)
    assert clocks[0].total >= bench.min_seconds


def test_in_the_cuda_simulator_a_gpu_version_is_timed_only_up_to_its_budget(monkeypatch):
    """Under the CUDA simulator (about 10 us a pair interaction) a GPU version's timed call is held to 256^2
    interactions, whatever the grid's GPU budget (a mutation hunt: the grid's budget passed)."""
    monkeypatch.setattr(numba.config, "ENABLE_CUDASIM", 1)
    assert grid.budget_reason("C", 256) is None
    assert "exceed the 'default' grid's budget of 6.55e+04 per timed call" in grid.budget_reason("C", 512)


def test_the_mpi_jobs_share_the_threads_asked_among_their_ranks(monkeypatch):
    """`MpiStep.measure` under NBSYMPLE_BENCH_THREADS=k (the machine's `-<k>threads`): the k threads are
    shared by a job's ranks, k / ranks each (a mutation hunt: every rank taking all k passed)."""
    from types import SimpleNamespace
    from benchmarks import mpi
    threads = {}

    def job(cmd, env, **kwargs):
        threads[int(cmd[2])] = env["NUMBA_NUM_THREADS"]
        return SimpleNamespace(returncode=0, stdout='{"seconds_per_step": 1.0}\n', stderr="")
    monkeypatch.setattr(mpi.MpiStep, "skip_reason", lambda self, ranks, n: None)
    monkeypatch.setattr(mpi, "bench_threads", lambda: 4)
    monkeypatch.setattr(mpi.subprocess, "run", job)
    for ranks in (1, 2):
        assert mpi.MpiStep().measure(ranks, N) == {"seconds_per_step": 1.0}
    assert threads == {1: "4", 2: "2"}


def test_a_job_of_as_many_ranks_as_threads_asked_is_not_skipped(monkeypatch):
    """`MpiStep.skip_reason` under NBSYMPLE_BENCH_THREADS=k: k ranks run, a thread each; more ranks than k
    would not (a mutation hunt: k ranks skipped passed)."""
    from benchmarks import mpi
    monkeypatch.setattr(mpi, "mpi_reason", lambda: None)
    monkeypatch.setattr(mpi, "bench_threads", lambda: 2)
    n = mpi.NS[0]
    assert mpi.MpiStep().skip_reason(1, n) is None and mpi.MpiStep().skip_reason(2, n) is None
    monkeypatch.setattr(mpi, "bench_threads", lambda: 1)
    assert "2 ranks run 2 threads at least, more than NBSYMPLE_BENCH_THREADS=1" in mpi.MpiStep().skip_reason(2, n)


@pytest.mark.parametrize("link", ["symbolic", "hard"])
def test_asvs_log_file_is_made_anew_never_written_through_a_link(tmp_path, link):
    """The gate's logs of asv's output (`.asv/gate-*/round<k>.log`, `run.log`): a link at the name had asv's
    output written into the file it names (`tracking.asv`, opened "w")."""
    victim, log = tmp_path / "victim.txt", tmp_path / "run.log"
    victim.write_text("precious\n")
    log.symlink_to(victim) if link == "symbolic" else os.link(victim, log)
    assert tracking.asv("--version", log_file=log) == 0
    assert victim.read_text() == "precious\n" and not log.is_symlink() and "asv" in log.read_text()


def test_the_gate_times_a_threaded_kernel_at_gate_threaded_least_n_itself(monkeypatch):
    """`selected(gate=True)`: a threaded kernel is gated from `GATE_THREADED_LEAST_N` bodies on, that N
    included: with it set to B's largest N, B is still timed there (a mutation hunt: "from" read as "beyond",
    which dropped B from the gate, passed every test)."""
    def ns(version):
        return {int(i.split(", ")[1]) for name, ids in tracking.selected(gate=True)
                if name == "tasks.Tasks.time_pairwise" for i in ids if i.startswith(version)}
    [largest] = ns("'B'")
    monkeypatch.setattr(tracking, "GATE_THREADED_LEAST_N", largest)
    assert ns("'B'") == {largest}


def test_a_benchmark_pattern_matches_anywhere_in_a_name_and_a_retired_one_is_matched_too():
    """`selected(bench=...)` and `matching`: the pattern is searched in `name(params)`, as asv's -b does, not
    anchored at its start; a benchmark taken out of the suite (RETIRED) is still matched, so `find` can bisect
    its recorded history (a mutation hunt: re.match for re.search, and the retired names left out, passed)."""
    chosen = tracking.selected(bench=r"time_pairwise\('A'")
    assert [name for name, _ in chosen] == ["tasks.Tasks.time_pairwise"]
    assert chosen[0][1] and all(i.startswith("'A', ") for i in chosen[0][1])
    name = "throughput.Throughput.track_gflops"
    assert name in tracking.RETIRED and tracking.matching(r"\.track_gflops$") == [name]
