"""One conformance battery for every version of Table 1 (as gala's `PotentialTestBase`).

`VersionBattery` holds the checks every version must pass, each precision of
`vocabulary.PRECISIONS`: agreement with the float64 reference at an awkward N (validation's
code path, tolerance and frame), and a pipeline that drops one body fails it; unequal masses
agree with it too; a single body feels no pairwise force; dsp beats sp far from the origin;
leapfrog and SI6A steps agree with version A; the clock counts each task; options and
precisions it does not take are refused.

A version is checked by one line, `class TestX(VersionBattery): letter = "X"` (its cheap
options, e.g. tile = 32, follow from `Version.option_names`); `test_every_version_has_a_battery`
fails until a new version of `versions.TABLE` has its line.

A class is collected only where its version is available (`Version.available()`): A, B and F
(one rank, B's engine) in this process; C, D, E on a GPU, or under NUMBA_ENABLE_CUDASIM=1,
which `test_gpu_versions_in_the_simulator` sets for a child pytest that runs just those classes
(the simulator is chosen when numba.cuda is imported, so this process stays free of it).
Unavailable classes are not collected at all: never a skip.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

from nbsymple_versions.core import reference
from nbsymple_versions.core.clock import TaskClock
from nbsymple_versions.core.ics import State, make_cluster
from nbsymple_versions.core.ranks import ONE_RANK
from nbsymple_versions.core.schemes import get_scheme
from nbsymple_versions.core.vocabulary import PRECISIONS
from nbsymple_versions.simulation import Simulation
from nbsymple_versions.validation import FRAME_KPC, TOLERANCE, check_pipeline, max_relative_error, validate
from nbsymple_versions.mpi.pipeline import default_node_version
from nbsymple_versions.versions import GPU_LETTERS, LETTERS, TABLE, get_version

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent

# Options that keep a GPU version cheap in the simulator (~10 us per pair interaction): a
# version gets those it takes. tile = 32 makes N = 97 four blocks, the last one part padding.
CHEAP_OPTIONS = {"tile": 32, "devices": 2}
# Values each option must refuse, with words of the ValueError; a new option needs its row.
BAD_VALUES = {
    "tile": [(48, "power of two"), (16, "power of two"), (2048, "power of two"), (256.0, "power of two"),
             (True, "power of two")],
    "devices": [(0, "from 1 to 1024"), (1.5, "from 1 to 1024"), (True, "from 1 to 1024"),
                (10**12, "from 1 to 1024")],       # a hunt: 10**12 slices of 8 bodies filled the memory
    "kernel": [("shared", "unknown GPU kernel"), (None, "unknown GPU kernel")],
    "backend": [("opencl", "unknown GPU backend"), (None, "unknown GPU backend")],
    "node_version": [("A", "node_version must be one of"), ("F", "node_version must be one of"),
                     (2, "node_version must be one of")],
}
OPTION_NAMES = sorted({name for version in TABLE for name in version.option_names})   # any version's options
# Steps of each scheme compared with version A (SI6A: 7 force evaluations per step).
STEPS = {"leapfrog": 3, "si6a": 1}

BATTERIES = []      # every class built on VersionBattery, available here or not


def rounding_floor(after, start, ulps=8):
    """The smallest relative change (as `relative_change`) float64 values of `after`'s size can
    resolve: `ulps` units in the last place of the largest value over the largest change."""
    return float(ulps * np.finfo(np.float64).eps * np.abs(after).max() / np.linalg.norm(after - start, axis=0).max())


def relative_change(after, before, start):
    """max_i |after_i - before_i| / max_i |before_i - start_i| over bodies (columns of (3, N))."""
    return float(np.linalg.norm(after - before, axis=0).max() / np.linalg.norm(before - start, axis=0).max())


class VersionBattery:
    """The checks every version passes; subclasses set `letter` (and may set `n`)."""

    letter: str = None
    n = 97              # awkward: prime, not a multiple of any tile (32 .. 1024)
    steps_n = 37        # steps and the clock: the same code at every N; at tile 32, two blocks
                        # (the second mostly padding), a quarter of the simulated interactions of n

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.version = get_version(cls.letter)
        cls.options = {k: v for k, v in CHEAP_OPTIONS.items() if k in cls.version.option_names}
        if cls.version.distributed and default_node_version(ONE_RANK) == "B":
            cls.options = {}            # F on B's cores: GPU options are refused there
        cls.__test__ = cls.version.available()[0]     # pytest collects only what can run here
        BATTERIES.append(cls)

    def pipeline(self, state, precision, clock=None):
        return self.version.pipeline(state, precision, clock, **self.options)

    def cluster(self, rng, precision, n=None):
        """A fresh random cluster where validation checks `precision` (8.5 kpc, or sp at the origin)."""
        return make_cluster(n or self.n, seed=int(rng.integers(2**32)), radius_kpc=FRAME_KPC[precision])

    # ------------------------------------------------------------------ forces

    @pytest.mark.parametrize("precision", PRECISIONS)
    def test_matches_reference(self, rng, precision):
        """`validate` (what `nbsymple check` runs) passes at the awkward N, and the same
        comparison rejects a pipeline that misses one body (an off-by-one in a tile loop)."""
        seed = int(rng.integers(2**32))
        check = validate(self.letter, precision, n=self.n, seed=seed, **self.options)
        print(check)
        assert check.passed and check.tolerance == TOLERANCE[precision], check

        state = make_cluster(self.n, seed=seed, radius_kpc=FRAME_KPC[precision])
        state.m[-1] *= 10           # missed, A's sp error in 20000 draws: at least 22x the tolerance (1.6x in
        #                             30000 where the body's mass was the others': a draw could pass it)
        missing = state.copy()
        missing.m[-1] = 0.0
        err, ok = check_pipeline(self.pipeline(missing, precision), state, TOLERANCE[precision])
        print(f"one body missing: max relative error {err:.2e}")
        assert not ok, err

    @pytest.mark.parametrize("precision", PRECISIONS)
    def test_each_source_pulls_with_its_own_mass(self, rng, precision):
        """A Salpeter cluster (5 mass classes, masses 20x apart) agrees with the float64 reference
        within the precision's tolerance: a_i sums m_j, the source's mass (a mutation hunt: the
        target's m_i in its place passed every test, whose clusters had equal masses; measured
        with the right masses: sp 3e-6, dsp 3e-7, dp 6e-16 over 40 seeds)."""
        state = make_cluster(self.n, seed=int(rng.integers(2**32)), radius_kpc=FRAME_KPC[precision], mass_classes=5)
        err, ok = check_pipeline(self.pipeline(state, precision), state, TOLERANCE[precision])
        print(f"max relative error {err:.2e}")
        assert ok, err

    @pytest.mark.parametrize("precision", PRECISIONS)
    def test_single_body_feels_no_pairwise_force(self, precision):
        """Exactly zero; a kernel that fuses the Galaxy (E) gives just the Galaxy's pull (float32
        position in sp), at a position whose float32 low words are not zero (a mutation hunt: E's
        dsp Galaxy of the high words alone passed at (850, 1, 2))."""
        s = State.from_arrays([[850.1, 1.1, 2.1]], [[0, 0, 0]], [1.0], eps=1e-3)
        forces = self.pipeline(s, precision)
        out = np.full_like(s.x, np.nan)
        forces.pairwise(s.x, out)
        if not forces.backend.includes_galactic:
            assert np.array_equal(out, np.zeros_like(out)), out
        else:
            galaxy = reference.galactic_acceleration(s.positions, s.units)
            assert max_relative_error(out.T, galaxy) <= (1e-6 if precision == "sp" else 1e-12), out.T - galaxy

    def test_dsp_beats_sp_far_from_origin(self, rng):
        """At 850 cluster radii float32 spacing (6e-5) is near the softening: sp loses the
        cluster, double-single keeps it. sp's error over dsp's, A in 100000 draws: median 3100,
        at least 62 (a CI run drew 98 against a bound of 100 here), so the bound is 20."""
        state = make_cluster(self.n, seed=int(rng.integers(2**32)), radius_kpc=8.5)
        err = {p: check_pipeline(self.pipeline(state, p), state, TOLERANCE[p])[0] for p in ("sp", "dsp")}
        print(err)
        assert err["dsp"] <= TOLERANCE["dsp"], err
        assert err["sp"] >= 20 * err["dsp"], err

    # ------------------------------------------------------------------ steps

    @pytest.mark.parametrize("scheme", list(STEPS))
    @pytest.mark.parametrize("precision", PRECISIONS)
    def test_steps_agree_with_version_a(self, rng, precision, scheme):
        """A few steps follow version A's: velocity and position changes within the
        precision's force tolerance (dp: 1e-12). At `steps_n` bodies: the forces at the awkward
        N are `test_matches_reference`'s, the steps compose them the same way at every N."""
        state = self.cluster(rng, precision, self.steps_n)
        runs = {}
        for version, options in (("A", {}), (self.letter, self.options)):
            sim = Simulation(state.copy(), version, scheme, precision, dt=5e-4, diagnostics=False, **options)
            sim.step(STEPS[scheme])
            runs[version] = sim.state
        a, mine = runs["A"], runs[self.letter]
        err_v = relative_change(mine.v, a.v, state.v)
        err_x = relative_change(mine.x, a.x, state.x)
        # a change far below the values themselves (the Galactic orbit's 220 km/s against a
        # few steps' kicks) resolves only to the values' float64 rounding: a few ulp of |v|
        floor_v, floor_x = rounding_floor(a.v, state.v), rounding_floor(a.x, state.x)
        print(f"velocity {err_v:.2e} (floor {floor_v:.1e}), position {err_x:.2e} (floor {floor_x:.1e})")
        assert err_v <= max(TOLERANCE[precision], floor_v), (err_v, floor_v)
        assert err_x <= max(TOLERANCE[precision], floor_x), (err_x, floor_x)

    # ------------------------------------------------------------------ clock

    @pytest.mark.parametrize("precision", PRECISIONS)
    def test_clock_counts_each_task(self, precision):
        """One force evaluation: pairwise, galactic (on the host, or none when the kernel fuses
        it), transfer (two copies, exactly where the engine is a GPU's), communicate (one
        exchange, exactly for a version across MPI ranks); then a Simulation's step adds up.
        The counts do not depend on N: `steps_n` bodies."""
        state = make_cluster(self.steps_n, seed=1, radius_kpc=FRAME_KPC[precision])
        clock = TaskClock()
        forces = self.pipeline(state, precision, clock)
        engine = get_version(getattr(forces, "node_version", self.letter))     # F: its node version
        gpu, fused, ranks = engine.gpu, forces.backend.includes_galactic, self.version.distributed

        def expected(evaluations, integrations):
            return {**dict.fromkeys(clock.calls, 0), "pairwise": evaluations,
                    "galactic": 0 if fused else evaluations, "integrate": integrations,
                    "transfer": 2 * evaluations if gpu else 0, "communicate": evaluations if ranks else 0}

        forces.accelerations(state.x, np.empty_like(state.x))
        assert clock.calls == expected(1, 0), clock.calls
        assert clock.seconds["pairwise"] > 0 and clock.seconds["integrate"] == 0
        assert (clock.seconds["galactic"] > 0) != fused and (clock.seconds["transfer"] > 0) == gpu, clock.seconds
        assert (clock.seconds["communicate"] > 0) == ranks, clock.seconds
        forces.kick(state.v.copy(), state.x, 0.0)
        assert clock.calls["integrate"] == 1 and clock.seconds["integrate"] > 0

        steps, scheme = 1, get_scheme("si6a")      # 8 drifts, 7 kicks and force evaluations
        sim = Simulation(state, self.letter, scheme.name, precision, 5e-4, diagnostics=False, **self.options)
        assert sim.clock.calls == dict.fromkeys(sim.clock.calls, 0)      # warm-up not counted
        sim.step(steps)
        evaluations = steps * scheme.force_evaluations
        assert sim.clock.calls == expected(evaluations, steps * (len(scheme.drift) + scheme.force_evaluations))
        assert (sim.clock.seconds["transfer"] > 0) == gpu and sim.seconds_per_step > 0
        assert sum(sim.clock.shares().values()) == pytest.approx(100.0)
        assert sim.threads == (1 if self.version.host_kernels == "serial" else numba.get_num_threads())

    # ------------------------------------------------------------------ refusals

    def test_refuses_options_it_does_not_take(self):
        state = make_cluster(8, seed=1)
        others = [name for name in OPTION_NAMES if name not in self.version.option_names] + ["colour"]
        for name in others:
            with pytest.raises(ValueError, match=rf"^version {self.letter} takes no option {name}( \(--[a-z-]+\))? "
                                                 rf"\(its options: "):     # the flag too, where another version has it
                self.version.pipeline(state, "dp", **{name: 1})
            with pytest.raises(ValueError, match=f"takes no option {name}"):
                Simulation(state, self.letter, diagnostics=False, **{name: 1})

    def test_refuses_bad_option_values(self):
        state = make_cluster(8, seed=1)
        for name in self.version.option_names:
            for value, words in BAD_VALUES[name]:
                with pytest.raises(ValueError, match=re.escape(words)):
                    self.version.pipeline(state, "dp", **{**self.options, name: value})

    def test_refuses_unknown_precision(self):
        state = make_cluster(8, seed=1)
        words = "unknown precision 'hp'; choose one of " + ", ".join(PRECISIONS)
        with pytest.raises(ValueError, match=words):
            self.pipeline(state, "hp")
        with pytest.raises(ValueError, match=words):
            Simulation(state, self.letter, precision="hp", diagnostics=False, **self.options)


# ---------------------------------------------------------------------- one line per version

class TestA(VersionBattery): letter = "A"       # noqa: E701
class TestB(VersionBattery): letter = "B"       # noqa: E701
class TestC(VersionBattery): letter = "C"       # noqa: E701
class TestD(VersionBattery): letter = "D"       # noqa: E701
class TestE(VersionBattery): letter = "E"       # noqa: E701
class TestF(VersionBattery): letter = "F"       # noqa: E701


# ---------------------------------------------------------------------- the battery itself

def test_every_version_has_a_battery():
    assert [cls.letter for cls in BATTERIES] == list(LETTERS)
    assert all(cls.__name__ == f"Test{cls.letter}" for cls in BATTERIES)


def test_every_package_is_a_version_package():
    """Each of the six packages is a `VersionPackage` (the registry's only view of it), its
    members of their types; `world`, where a package defines it, is callable; a module that
    lacks a member is not one."""
    import inspect
    import types
    from nbsymple_versions.core.options import NoOptions
    from nbsymple_versions.core.pipeline import VersionPackage
    for v in TABLE:
        p = v.package
        assert isinstance(p, VersionPackage), v.name
        assert issubclass(p.Options, NoOptions) and isinstance(p.GPU, bool) and isinstance(p.GALAXY_IN_KERNEL, bool)
        assert p.HOST_KERNELS in ("serial", "threaded"), v.name
        assert list(inspect.signature(p.build_pipeline).parameters) == ["state", "precision", "clock", "options"]
        assert list(inspect.signature(p.availability).parameters) == ["options"]
        assert callable(getattr(p, "world", lambda: None))
    fake = types.ModuleType("fake")
    fake.__dict__.update({name: getattr(TABLE[0].package, name) for name in
                          ("Options", "GPU", "HOST_KERNELS", "GALAXY_IN_KERNEL", "availability")})
    assert not isinstance(fake, VersionPackage)


def test_each_version_names_the_tasks_its_step_has():
    """Table 1's facts as tasks: E adds the Galaxy in its kernel, C-E move data to a GPU, F
    exchanges positions between ranks (what the paper's task shares may count as zero)."""
    cpu, gpu = ("pairwise", "galactic", "integrate"), ("pairwise", "galactic", "integrate", "transfer")
    assert {v.letter: v.tasks for v in TABLE} == {
        "A": cpu, "B": cpu, "C": gpu, "D": gpu, "E": ("pairwise", "integrate", "transfer"),
        "F": ("pairwise", "galactic", "integrate", "communicate")}


def battery_size() -> int:
    """Tests in one battery class (each method times its parametrisations)."""
    size = 0
    for name in dir(VersionBattery):
        if name.startswith("test_"):
            cases = 1
            for mark in getattr(getattr(VersionBattery, name), "pytestmark", []):
                if mark.name == "parametrize":
                    cases *= len(mark.args[1])
            size += cases
    return size


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "CUDA_VISIBLE_DEVICES")}
    env.update(extra)
    return env


GPU_BATTERIES = [cls.__name__ for cls in BATTERIES if cls.version.gpu]


def test_every_gpu_version_has_a_battery():
    assert [cls.letter for cls in BATTERIES if cls.version.gpu] == list(GPU_LETTERS)


@pytest.mark.long
@pytest.mark.parametrize("name", GPU_BATTERIES)
def test_gpu_versions_in_the_simulator(name):
    """The battery of each GPU version, in a child pytest of its own under NUMBA_ENABLE_CUDASIM=1
    (one per version, so that they run side by side under xdist): it runs all its tests, none
    skipped."""
    node = Path(__file__).resolve().relative_to(REPO).as_posix()
    p = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-rfE", f"{node}::{name}"],
                       cwd=REPO, env=_env(NUMBA_ENABLE_CUDASIM="1"), capture_output=True, text=True, timeout=600)
    print(p.stdout[-3000:], p.stderr[-2000:])
    assert p.returncode == 0, p.stdout[-6000:] + p.stderr[-3000:]
    assert " passed" in p.stdout and "skipped" not in p.stdout
    assert len(re.findall(rf"::{name}::\S+ PASSED", p.stdout)) == battery_size(), name


def test_the_clock_stops_after_the_sync(monkeypatch):
    """A fake clock: the body takes 1 s and the device sync 5 s more; the task counts all 6 (a
    mutation hunt: stopping the clock before the sync, which under-counts asynchronous GPU work,
    passed). Nothing here depends on this machine's speed."""
    from nbsymple_versions.core import clock as clock_module
    now = [0.0]
    monkeypatch.setattr(clock_module, "perf_counter", lambda: now[0])

    def sync():
        now[0] += 5.0

    clock = TaskClock()
    with clock.task("pairwise", sync=sync):
        now[0] += 1.0
    with clock.task("galactic"):
        now[0] += 2.0
    assert clock.seconds["pairwise"] == 6.0 and clock.seconds["galactic"] == 2.0
    assert clock.shares()["pairwise"] == 75.0 and clock.calls["pairwise"] == 1


@pytest.mark.parametrize("scheme", ["leapfrog", "si6a"])
@pytest.mark.parametrize("precision", PRECISIONS)
def test_b_is_a_bit_for_bit_on_any_number_of_threads(precision, scheme):
    """B is A's kernels in `prange` loops over targets (or elements): each target's sum is one
    thread's, in A's order, so B's bodies are A's to the last bit on any number of threads. It
    is what lets a science run be repeated digit for digit on another machine's cores (the
    committed runs, repeated on one thread beside five other jobs, ended with the same errors to
    the last digit). N = 203 (no multiple of a vector or a tile), five mass classes."""
    def stepped(letter: str, threads: int) -> np.ndarray:
        numba.set_num_threads(threads)
        sim = Simulation(make_cluster(203, seed=3, mass_classes=5), letter, scheme, precision, 1e-3,
                         diagnostics=False)
        sim.step(3)
        return np.concatenate([sim.state.x.ravel(), sim.state.v.ravel()])
    most, before = numba.config.NUMBA_NUM_THREADS, numba.get_num_threads()
    try:
        serial = stepped("A", 1)
        for threads in sorted({1, min(3, most), most}):
            assert np.array_equal(stepped("B", threads), serial), (threads, most)
    finally:
        numba.set_num_threads(before)
