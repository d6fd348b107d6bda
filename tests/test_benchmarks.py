"""The asv suite (benchmarks/): asv's own discovery loads it, every class validates before it
times (a wrong kernel makes `setup` raise), and every track_ gives a finite number of the
right sign at a tiny configuration. No timing assertions."""
import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import common  # noqa: E402
from benchmarks.accuracy import Conservation  # noqa: E402
from benchmarks.common import TASKS, ValidationError, build_pipeline  # noqa: E402
from benchmarks.compile import Compile  # noqa: E402
from benchmarks.steps import Step, TaskShares  # noqa: E402
from benchmarks.tasks import Tasks  # noqa: E402
from benchmarks.throughput import Threads, Throughput  # noqa: E402
from nbsymple_versions.core.pipeline import ForcePipeline  # noqa: E402

N = 64          # tiny N for every direct call


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


def test_asv_discovery_finds_the_contract():
    """asv_runner's discovery (what `asv run` uses) lists the names, parameters and units that
    the paper scripts read from the results."""
    code = textwrap.dedent("""
        import io, json, sys
        from asv_runner.discovery import list_benchmarks
        buf = io.StringIO()
        list_benchmarks(sys.argv[1], buf)
        print("BENCHMARKS" + buf.getvalue())
    """)
    r = _run([sys.executable, "-c", code, str(ROOT / "benchmarks")])
    assert r.returncode == 0, r.stderr
    found = {b["name"]: b for b in json.loads(r.stdout.split("BENCHMARKS", 1)[1])}
    vnp = ["version", "n", "precision"]
    expected = {
        "tasks.Tasks.time_pairwise": (vnp, "seconds"),
        "tasks.Tasks.time_galactic": (vnp, "seconds"),
        "tasks.Tasks.time_integrate": (vnp, "seconds"),
        "tasks.Tasks.time_transfer": (vnp, "seconds"),
        "steps.Step.time_step_leapfrog": (vnp, "seconds"),
        "steps.Step.time_step_si6a": (vnp, "seconds"),
        "steps.TaskShares.track_share": (["version", "n", "task"], "%"),
        "throughput.Throughput.track_interactions_per_second": (vnp, "interactions/s"),
        "throughput.Throughput.track_gflops": (vnp, "GFLOP/s"),
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
    versions = found["tasks.Tasks.time_pairwise"]["params"][0]
    assert "'A'" in versions and "'B'" in versions
    assert found["steps.TaskShares.track_share"]["params"][2] == [repr(t) for t in TASKS]
    assert found["accuracy.Conservation.track_energy_error"]["params"][1] == ["'sp'", "'dp'", "'dsp'"]


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
        (Step, lambda: Step().setup(letter, N, precision)),
        (Throughput, lambda: Throughput().setup(letter, N, precision)),
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


def test_setup_accepts_the_right_kernel():
    """The same set-ups pass with the real pipelines (the rejection above is the kernel's)."""
    for cls, run in _setups("A", "dp"):
        run()


def test_unavailable_or_oversized_combinations_are_skipped():
    with pytest.raises(NotImplementedError, match="budget"):
        Step().setup("A", 10**6, "dp")             # refused before anything is built
    ok, _ = common.get_version("C").available()
    if not ok:
        with pytest.raises(NotImplementedError, match="not available"):
            Tasks().setup("C", N, "dp")


def test_precision_independent_tasks_are_skipped_cheaply():
    for p in Tasks.time_galactic.skip_params + Tasks.time_integrate.skip_params:
        assert p[2] != "dp" or p[0] == "E" or common.over_budget(p[0], p[1])
    assert all(v in common.CPU_PAIRWISE or common.over_budget(v, n)
               for v, n, _ in Tasks.time_transfer.skip_params)
    assert all(common.over_budget(v, n, 7) for v, n, _ in Step.time_step_si6a.skip_params)


# ---------------------------------------------------------------- the figures at tiny N

def _finite_nonneg(x):
    return isinstance(x, (int, float)) and math.isfinite(x) and x >= 0


@pytest.mark.parametrize("letter", ["A", "B"])
def test_time_benchmarks_run_at_tiny_n(letter):
    tasks = Tasks()
    tasks.setup(letter, N, "dp")
    tasks.time_pairwise(letter, N, "dp")
    tasks.time_galactic(letter, N, "dp")
    tasks.time_integrate(letter, N, "dp")
    step = Step()
    step.setup(letter, N, "dsp")
    t0 = step.state.t
    step.time_step_leapfrog(letter, N, "dsp")
    step.time_step_si6a(letter, N, "dsp")
    assert step.state.t == pytest.approx(t0 + 2 * common.DT)


@pytest.mark.parametrize("letter,precision", [("A", "sp"), ("B", "dp"), ("B", "dsp")])
def test_throughput_is_positive(letter, precision):
    bench = Throughput()
    bench.min_seconds = 0.01
    bench.setup(letter, N, precision)
    rate = bench.track_interactions_per_second(letter, N, precision)
    gflops = bench.track_gflops(letter, N, precision)
    assert _finite_nonneg(rate) and rate > 0
    assert _finite_nonneg(gflops) and gflops > 0


def test_threads_are_recorded():
    for letter, want in (("A", 1), ("B", numba.get_num_threads())):
        bench = Threads()
        bench.setup(letter)
        assert bench.track_threads(letter) == want


def test_task_shares_sum_to_100():
    bench = TaskShares()
    bench.params = [["A", "B"], [N], list(TASKS)]
    bench.min_seconds = 0.01
    cache = bench.setup_cache()
    for letter in ("A", "B"):
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
    """C, D, E under NUMBA_ENABLE_CUDASIM=1 at N = 64: validation, transfer and the kernel
    through the same benchmark classes (the simulator must be on before numba loads)."""
    pytest.importorskip("numba.cuda")
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from benchmarks import common
        from benchmarks.tasks import Tasks
        from benchmarks.throughput import Throughput
        common.Benchmark.validation_n = 64
        assert common.VERSIONS == ("A", "B", "C", "D", "E"), common.VERSIONS
        for letter in "CDE":
            t = Tasks()
            t.setup(letter, {N}, "dsp")
            assert t.on_device
            t.time_pairwise(letter, {N}, "dsp")
            t.time_transfer(letter, {N}, "dsp")
            th = Throughput()
            th.min_seconds = 0.0
            th.setup(letter, {N}, "sp")
            assert th.track_interactions_per_second(letter, {N}, "sp") > 0
        print("ok")
    """)
    r = _run([sys.executable, "-c", code], env={"NUMBA_ENABLE_CUDASIM": "1"})
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr
