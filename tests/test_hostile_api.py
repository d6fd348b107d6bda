"""Issue 32, classes 8 and 9: hostile values handed to the Python API and to the tools.

Class 8: every public function of the API checks its arguments (`core/checks.py`) and refuses a
bad one with a TypeError (not the kind of object wanted: a State, a record, a callback) or a
ValueError (a bad value), in one sentence that names the argument; hypothesis draws hostile
values of each argument (None, strings, NaN, inf, bools, negative and fractional numbers, lists,
complex numbers) and each is either taken (it happens to mean something) or refused so.
`Simulation.restore` refuses a record taken of another cluster (other N, other masses, another
time, other positions or velocities) or one that is not a record. Class 9: `tools.gate`,
`tools.tracking` and `tools.migrate` take only values that mean something; a refusal is exit
status 2 and one sentence naming the option, never a traceback (subprocesses under a generous
hang guard; hypothesis in process).
"""
import contextlib
from fractions import Fraction
import io
import json
import math
import numbers
import os
import shutil
import subprocess
import sys
from pathlib import Path
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

from nbsymple_versions import (Simulation, State, TaskClock, Units, VersionUnavailable, add_black_hole, advance,
                               angular_momentum, angular_momentum_error, check_pipeline, energy_parts, get_scheme,
                               get_version, internal_energy_error, make_cluster, place_on_orbit, relative_error,
                               timing_state, uniform_sphere)

from drawn import hostile

REPO = Path(__file__).resolve().parents[1]
HANG_GUARD = 300                      # seconds: a tool that hangs fails instead of blocking the suite
SETTINGS = hostile(40, commands=False)

# hostile values of any argument: nothing here is a State, a record or a callback
HOSTILE = st.one_of(st.none(), st.booleans(), st.text(max_size=6), st.just(math.nan), st.just(math.inf),
                    st.just(-math.inf), st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**30, 64),
                    st.sampled_from([10**400, -10**400, Fraction(10**400, 3)]),     # beyond float64's range
                    st.complex_numbers(max_magnitude=10), st.lists(st.integers(-3, 3), max_size=3),
                    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2), st.just(object()))

# ... and for a count (bodies, steps): no large number that means something, which would start work
# that takes long (its refusal, when beyond memory or time, is class 3's, not this module's)
NOT_A_LARGE_COUNT = HOSTILE.filter(lambda v: not (isinstance(v, numbers.Real) and not isinstance(v, bool)
                                                  and 64 < v < math.inf))


def refused(call, kind, *words) -> str:
    """`call()` raises `kind` (TypeError or ValueError) in one sentence holding every word."""
    with pytest.raises(kind) as info:
        call()
    assert type(info.value) in (TypeError, ValueError), repr(info.value)
    text = str(info.value)
    assert text and "\n" not in text, text
    for word in words:
        assert word in text, (word, text)
    return text


def taken_or_refused(call, *words):
    """`call()` either returns (the value means something) or refuses in one sentence naming the
    argument; never another exception (AttributeError, a numba TypingError, MemoryError...). A
    version this machine cannot run ('C' without a GPU) is refused with `VersionUnavailable`."""
    try:
        call()
    except (TypeError, ValueError, VersionUnavailable) as e:
        text = str(e)
        assert type(e) in (TypeError, ValueError, VersionUnavailable) and text and "\n" not in text, repr(e)
        assert any(word in text for word in words), (words, text)


@pytest.fixture(scope="module")
def small():
    """A small cluster and a version A simulation of it (compiled once for the module)."""
    state = make_cluster(16, seed=3)
    return state, Simulation(state.copy(), "A", dt=1e-3)


# --------------------------------------------------------------------- the issue's examples

def test_the_issues_examples():
    refused(lambda: Simulation(None), TypeError, "state", "NoneType")
    state = make_cluster(16, seed=1)
    state.x.setflags(write=False)
    refused(lambda: Simulation(state), ValueError, "state.x", "read-only")
    refused(lambda: make_cluster(16, seed="x"), ValueError, "seed", "'x'")
    sim = Simulation(make_cluster(16, seed=1), "A")
    refused(lambda: Simulation.restore(make_cluster(32, seed=1), sim.record()), ValueError, "16 bodies", "32")


# --------------------------------------------------------------- hostile values, each argument

MAKE_CLUSTER_WORDS = {"n": "n (the number of bodies)", "seed": "seed", "virial_ratio": "virial_ratio",
                      "eps": "eps", "units": "units", "radius_kpc": "radius_kpc", "speed_kms": "speed_kms",
                      "exact_potential": "exact_potential", "mass_classes": "mass_classes"}


@SETTINGS
@given(data=st.data(), argument=st.sampled_from(sorted(MAKE_CLUSTER_WORDS)))
def test_make_cluster_takes_or_refuses_each_argument(data, argument):
    value = data.draw(NOT_A_LARGE_COUNT if argument in ("n", "mass_classes") else HOSTILE, label=argument)
    kwargs = {"n": 16, argument: value}
    n = kwargs.pop("n")
    taken_or_refused(lambda: make_cluster(n, **kwargs), MAKE_CLUSTER_WORDS[argument])


@SETTINGS
@given(value=HOSTILE, count=NOT_A_LARGE_COUNT)
def test_the_other_builders_take_or_refuse_each_argument(value, count):
    state = make_cluster(8, seed=1)
    taken_or_refused(lambda: uniform_sphere(count), "n (the number of bodies)")
    taken_or_refused(lambda: timing_state(count), "n (the number of bodies)")
    refused(lambda: place_on_orbit(value), TypeError, "state")
    taken_or_refused(lambda: place_on_orbit(state, radius_kpc=value), "radius_kpc")
    refused(lambda: add_black_hole(value, 1.0), TypeError, "state")
    taken_or_refused(lambda: add_black_hole(state, value), "mass")
    taken_or_refused(lambda: add_black_hole(state, 1.0, position=value), "position")
    taken_or_refused(lambda: State(value, state.v, state.m, state.eps), "x")
    taken_or_refused(lambda: State(state.x, state.v, value, state.eps), "m")
    taken_or_refused(lambda: State(state.x, state.v, state.m, value), "eps")
    taken_or_refused(lambda: State(state.x, state.v, state.m, state.eps, t=value), "t")
    taken_or_refused(lambda: State.from_arrays(value, state.velocities, state.m), "positions")
    taken_or_refused(lambda: Units(value), "r_cl_pc", "cluster radius")
    taken_or_refused(lambda: Units(10.0, value), "mass_msun", "cluster radius and mass")
    taken_or_refused(lambda: TaskClock(threads=value), "threads")
    taken_or_refused(lambda: TaskClock(device=value), "device")


SIMULATION_WORDS = {"version": "version", "scheme": "scheme", "precision": "precision", "dt": "dt",
                    "diagnostics": "diagnostics", "progress": "progress"}


@SETTINGS
@given(data=st.data(), argument=st.sampled_from(sorted(SIMULATION_WORDS)))
def test_simulation_takes_or_refuses_each_argument(data, argument):
    value = data.draw(HOSTILE, label=argument)
    taken_or_refused(lambda: Simulation(make_cluster(8, seed=2), **{"version": "A", argument: value}),
                     SIMULATION_WORDS[argument])


@SETTINGS
@given(value=HOSTILE)
def test_the_state_handed_to_simulation(value):
    refused(lambda: Simulation(value), TypeError, "state must be a State")
    state = make_cluster(8, seed=2)
    state.x = value                          # a State whose bodies were replaced after it was made
    taken_or_refused(lambda: Simulation(state, "A"), "x")


@pytest.mark.parametrize("array", ["x", "v"])
def test_a_read_only_array_is_refused_before_anything_is_compiled(array):
    state = make_cluster(8, seed=2)
    getattr(state, array).setflags(write=False)
    refused(lambda: Simulation(state, "B"), ValueError, f"state.{array}", "read-only", "copy()")


@SETTINGS
@given(value=HOSTILE, steps=NOT_A_LARGE_COUNT)
def test_the_methods_take_or_refuse_each_argument(small, value, steps):
    _, sim = small
    taken_or_refused(lambda: sim.step(steps), "steps")
    taken_or_refused(lambda: sim.step(1, on_step=value), "on_step")
    taken_or_refused(lambda: sim.accelerations(value), "acceleration kind")
    taken_or_refused(lambda: sim.undefined_reasons(value), "errors")


@SETTINGS
@given(value=HOSTILE)
def test_the_diagnostics_take_or_refuse_each_argument(value):
    state = make_cluster(8, seed=2)
    parts = energy_parts(state)
    refused(lambda: energy_parts(value), TypeError, "state")
    refused(lambda: angular_momentum(value), TypeError, "state")
    taken_or_refused(lambda: relative_error(value, 1.0), "value")
    taken_or_refused(lambda: relative_error(1.0, value), "initial")
    taken_or_refused(lambda: angular_momentum_error(value, [0.0, 0.0, 1.0]), "value")
    refused(lambda: internal_energy_error(value, parts, state.units), TypeError, "parts")
    taken_or_refused(lambda: internal_energy_error(parts, parts, value), "units")
    taken_or_refused(lambda: get_version(value), "version")
    taken_or_refused(lambda: get_scheme(value), "scheme")


def test_the_stepping_loop_and_the_validation_check_theirs(small):
    state, sim = small
    acc = np.zeros_like(sim.state.x)
    scheme = get_scheme("leapfrog")
    for dt in (math.nan, -1.0, 0.0, "1e-3", None):
        refused(lambda: advance(sim.state, sim.forces, scheme, dt, 1, acc), ValueError, "dt")
    refused(lambda: advance(sim.state, sim.forces, scheme, 1e-3, 2.5, acc), ValueError, "steps")
    refused(lambda: advance(sim.state, sim.forces, "leapfrog", 1e-3, 1, acc), TypeError, "scheme")
    refused(lambda: advance(sim.state, sim.forces, scheme, 1e-3, 1, acc[:, :3]), ValueError, "acc")
    refused(lambda: advance(sim.state, sim.forces, scheme, 1e-3, 1, acc.astype(np.float32)), ValueError, "acc")
    for tolerance in (math.nan, -1.0, "x"):
        refused(lambda: check_pipeline(sim.forces, state, tolerance), ValueError, "tolerance")
    refused(lambda: check_pipeline(sim.forces, None, 1e-12), TypeError, "state")
    for forces in (None, "x"):             # a hunt: AttributeError
        refused(lambda: check_pipeline(forces, state, 1e-12), TypeError, "forces", "force pipeline")


def test_what_step_refuses_of_a_changed_cluster_the_others_refuse_too():
    """A hunt: after the masses changed, `step` refused to go on, while `record`, `errors` and
    `accelerations` went on with the old cluster (dp's forces of the new masses, sp's of the old;
    errors of 2 and 10 against E0; a record that `restore` took), and after state.t was set,
    `record` gave what its own `restore` refused."""
    state = make_cluster(16, seed=1)
    sim = Simulation(state, "A", dt=1e-3)
    sim.step(2)
    state.m[:] *= 3
    for call in (sim.record, sim.errors, sim.energy_error, lambda: sim.accelerations("pairwise"), lambda: sim.step(1)):
        refused(call, ValueError, "state.masses changed since the Simulation was built")
    state.m[:] /= 3
    assert sim.errors()["energy_error"] < 1e-6
    state.t = 7.0
    refused(sim.record, ValueError, "state.t = 7.0 is not this simulation's t0 + steps_done * dt")


def test_a_simulation_is_stepped_from_one_thread_and_not_copied():
    """A hunt: a second thread stepping a Simulation while another stepped it was told it called
    `step` from its own `on_step`; a copy or a pickle of one failed with "cannot pickle 'module'"."""
    import copy
    import pickle
    import threading
    sim = Simulation(make_cluster(16, seed=2), "A", dt=1e-3)
    said = []

    def other():
        try:
            sim.step(1)
        except RuntimeError as e:
            said.append(str(e))

    def on_step(k):
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
        with pytest.raises(RuntimeError, match="from its own on_step"):
            sim.step(1)
    sim.step(1, on_step)
    assert said == ["Simulation.step was called from another thread while this Simulation steps; step one "
                    "Simulation from one thread at a time"] and sim.steps_done == 1
    for call in (copy.copy, copy.deepcopy, pickle.dumps):
        refused(lambda: call(sim), TypeError, "a Simulation cannot be copied or pickled", "Simulation.restore")


def test_arrays_that_share_memory_are_refused_not_integrated():
    """A hunt: State(a, a, ...) was integrated, its x and v one array, and drifted 0.036 in three
    steps in silence; so did v assigned x between steps, and advance with x as its scratch (852
    units off). Arrays that share memory are refused naming both; ones that only interleave in one
    buffer, or lie side by side, are separate and taken."""
    a = np.random.default_rng(1).random((3, 4))
    refused(lambda: State(a, a, np.ones(4), 0.01), ValueError, "x and v share memory", "v.copy()")
    buf = np.arange(20.0)
    refused(lambda: State(buf[0:12].reshape(3, 4), buf[4:16].reshape(3, 4), np.ones(4), 0.01), ValueError, "x and v")
    refused(lambda: State(a, a.copy(), a[0], 0.01), ValueError, "x and m")
    sim = Simulation(make_cluster(8, seed=1), "A", dt=1e-3)
    sim.step(1)
    sim.state.v = sim.state.x
    refused(lambda: sim.step(1), ValueError, "x and v share memory")
    state = make_cluster(8, seed=1)
    forces, scheme = get_version("A").pipeline(state, "dp"), get_scheme("leapfrog")
    for scratch in ("x", "v"):
        refused(lambda: advance(state, forces, scheme, 1e-3, 1, getattr(state, scratch)), ValueError,
                f"state.{scratch} and acc share memory")

    def swap(k):                              # an on_step that hands the loop one array for both
        state.v = state.x
    refused(lambda: advance(state, forces, scheme, 1e-3, 2, np.zeros_like(state.x), swap), ValueError, "share memory")
    interleaved, halves = np.zeros((3, 16)), np.zeros((6, 8))
    for x, v in ((interleaved[:, 0::2], interleaved[:, 1::2]), (halves[:3], halves[3:])):
        apart = make_cluster(8, seed=1)
        x[...], v[...] = apart.x, apart.v
        apart.x, apart.v = x, v
        alone = make_cluster(8, seed=1)
        advance(apart, forces, scheme, 1e-3, 2, np.zeros((3, 8)))
        advance(alone, forces, scheme, 1e-3, 2, np.zeros((3, 8)))
        assert np.array_equal(apart.x, alone.x) and np.array_equal(apart.v, alone.v)


def test_what_a_hunt_found_taken_or_misnamed_is_refused_naming_it():
    """A hunt: a pipeline built of None or with a clock of 5 ended in AttributeError; w = NaN gave
    energy parts of NaN; sim.dt = NaN was blamed on state.t; a dt set after steps was too."""
    refused(lambda: get_version("A").pipeline(None, "dp"), TypeError, "state", "NoneType")
    refused(lambda: get_version("A").pipeline(make_cluster(8, seed=1), "dp", clock=5), TypeError, "clock", "int")
    refused(lambda: energy_parts(make_cluster(8, seed=1), w=math.nan), ValueError, "w (the potential energy)")
    sim = Simulation(make_cluster(8, seed=1), "A", dt=1e-3)
    with pytest.raises(ValueError, match=r"dt \(the time step\)"):
        sim.dt = math.nan
    sim.dt = 2e-3                                          # before the first step: the step of the run
    sim.step(1)
    with pytest.raises(ValueError, match="dt cannot change once the run has stepped"):
        sim.dt = 1e-3
    assert sim.dt == 2e-3 and sim.state.t == 2e-3


# ------------------------------------------------------------------ a record of another cluster

def _taken_of(seed: int):
    """(the state after 3 steps, its record, the simulation) of a 16-body version A run."""
    sim = Simulation(make_cluster(16, seed=seed), "A", dt=1e-3)
    sim.step(3)
    return sim.state.copy(), sim.record(), sim


@pytest.fixture(scope="module")
def taken():
    return _taken_of(5)


def _nudged(state):
    nudged = state.copy()
    nudged.v[1, 7] = np.nextafter(nudged.v[1, 7], np.inf)
    return nudged


def test_a_record_without_the_bodies_digest_restores_its_state(taken):
    """A record written before it held `bodies_sha256` is taken (its N, masses and time still
    checked), and one with it restores the state it was taken of: the check refuses no true pair."""
    state, record, _ = taken
    older = {k: v for k, v in record.items() if k != "bodies_sha256"}
    assert Simulation.restore(_nudged(state), older).steps_done == 3
    again = Simulation.restore(state.copy(), record)
    again.step(1)
    assert again.record()["bodies_sha256"] == _stepped(state, 1).digest() != record["bodies_sha256"]


def _changed(record, **changes):
    return {**record, **changes}


@pytest.mark.parametrize("case", ["other N", "other masses", "other time", "the initial state", "version Z",
                                  "precision xx", "negative dt", "fractional steps", "NaN t0", "no version",
                                  "clock of another task", "options it does not take", "steps beyond int64",
                                  "steps of 2**63", "seconds beyond float64", "L0 not numbers",
                                  "energy parts of another kind", "energy parts not numbers",
                                  "options not named by text", "another seed", "a velocity one ulp apart"])
def test_restore_refuses_a_record_of_another_cluster_or_none(taken, case):
    """... and a record whose values are not what `record()` writes: each refused naming its field
    (integers of 400 digits and the energy parts' and L0's components were tracebacks). Another seed's
    cluster, stepped alike, has the same N, masses and time: only the bodies' digest tells it."""
    state, record, _ = taken
    parts = record["energy_parts0"]
    other = {"other N": (make_cluster(17, seed=5), record),
             "other masses": (make_cluster(16, seed=5, mass_classes=3), record),
             "other time": (_stepped(state, 1), record),
             "the initial state": (make_cluster(16, seed=5), record),
             "version Z": (state, _changed(record, version="Z")),
             "precision xx": (state, _changed(record, precision="xx")),
             "negative dt": (state, _changed(record, dt=-1e-3)),
             "fractional steps": (state, _changed(record, steps_done=2.5)),
             "NaN t0": (state, _changed(record, t0=math.nan)),
             "no version": (state, {k: v for k, v in record.items() if k != "version"}),
             "clock of another task": (state, _changed(record, clock={"seconds": {"warp": 1.0}, "calls": {}})),
             "options it does not take": (state, _changed(record, options={"tile": 64})),
             "steps beyond int64": (state, _changed(record, steps_done=10**400)),
             "steps of 2**63": (state, _changed(record, steps_done=2**63)),    # the first beyond (a mutation hunt)
             "seconds beyond float64": (state, _changed(record, clock={"seconds": {"pairwise": 10**400}, "calls": {}})),
             "L0 not numbers": (state, _changed(record, angular_momentum0=["x", 10**400, None])),
             "energy parts of another kind": (state, _changed(record, energy_parts0={**parts, 1: 1})),
             "energy parts not numbers": (state, _changed(record, energy_parts0={**parts, "base": [1, "2", 3]})),
             "options not named by text": (state, _changed(record, options={1: 2, "a\nb": 3})),
             "another seed": (_taken_of(6)[0], record),
             "a velocity one ulp apart": (_nudged(state), record)}[case]
    word = {"steps beyond int64": "record['steps_done']", "steps of 2**63": "record['steps_done']",
            "seconds beyond float64": "record['clock']['seconds']",
            "L0 not numbers": "record['angular_momentum0'][0]",
            "energy parts of another kind": "record['energy_parts0']",
            "energy parts not numbers": "record['energy_parts0']['base'][1]",
            "options not named by text": "'a\\nb'", "another seed": "other positions or velocities",
            "a velocity one ulp apart": "other positions or velocities"}.get(case, "")
    refused(lambda: Simulation.restore(*other), ValueError, word)


def test_values_a_random_search_found_are_refused_naming_their_argument(small):
    """Numbers beyond float64's range (an int or a fraction of 400 digits: OverflowError before),
    finite ones that put the bodies beyond it, a key with a newline (it reached the message), and a
    version this machine cannot run: each refused in one sentence that names the argument."""
    state, sim = small
    for value in (10**400, Fraction(10**400, 3), -10**5000):
        refused(lambda: Simulation(make_cluster(8, seed=2), "A", dt=value), ValueError, "dt")
        for call, word in ((lambda: make_cluster(value), "n (the number of bodies)"),
                           (lambda: sim.step(value), "steps")):
            with pytest.raises(ValueError) as info:      # 10**400: WorkRefused, a ValueError (beyond any machine)
                call()
            assert word in str(info.value) and "\n" not in str(info.value), info.value
        refused(lambda: State.from_arrays(state.x, state.v, [value] + [1.0] * 15, eps=1e-3), ValueError, "m")
        refused(lambda: Units(10.0, value), ValueError, "cluster radius and mass")   # 4300 digits: repr's own error
    refused(lambda: make_cluster(8, seed=2, radius_kpc=1e307), ValueError, "radius_kpc")
    refused(lambda: make_cluster(8, seed=2, units=Units(10.0, 1e-20), speed_kms=1e300), ValueError, "speed_kms")
    refused(lambda: make_cluster(8, seed=2, virial_ratio=9.56e307), ValueError, "virial_ratio")
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # float32 scales multiplied in float32 warned of an overflow
        assert Units(np.float32(1e30), np.float32(1e30)).velocity_kms > 0
    refused(lambda: sim.undefined_reasons({"a\nb": None}), ValueError, "'a\\nb'")
    taken_or_refused(lambda: Simulation(make_cluster(8, seed=2), "C"), "version")


@pytest.mark.parametrize("state_or_record", ["state", "record"])
def test_restore_refuses_what_is_not_a_state_or_a_record(taken, state_or_record):
    state, record, _ = taken
    for value in (None, "record", [record], 3):
        args = (value, record) if state_or_record == "state" else (state, value)
        refused(lambda: Simulation.restore(*args), TypeError, state_or_record)


def test_restore_of_its_own_record_continues_bit_for_bit(taken):
    state, record, sim = taken
    restored = Simulation.restore(state.copy(), record)
    sim_copy = Simulation.restore(state.copy(), record)
    restored.step(2)
    sim_copy.step(2)
    assert np.array_equal(restored.state.x, sim_copy.state.x) and restored.steps_done == 5


def _stepped(state, steps):
    sim = Simulation(state.copy(), "A", dt=1e-3, diagnostics=False)
    sim.step(steps)
    return sim.state


# ---------------------------------------------------------------------------------- the tools

def _tool(module, *args, cwd=REPO, env=None):
    return subprocess.run([sys.executable, "-m", f"tools.{module}", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=HANG_GUARD, env=None if env is None else {**os.environ, **env})


def _one_sentence(p, *words):
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert p.returncode == 2 and len(lines) == 1 and "Traceback" not in p.stderr, (p.returncode, p.stderr)
    for word in words:
        assert word in lines[0], (word, p.stderr)


@pytest.mark.parametrize("args, named", [
    (["--factor", "nan"], "--factor"), (["--factor", "inf"], "--factor"), (["--factor", "0"], "--factor"),
    (["--factor=-2"], "--factor"), (["--factor", "1"], "--factor"), (["--factor", "x"], "--factor"),
    (["--noise=-3"], "--noise"), (["--noise", "1"], "--noise"), (["--noise", "2.5"], "--noise"),
    (["--rounds", "0"], "--rounds"), (["--rounds", "nan"], "--rounds"), (["--bench", "("], "--bench"),
    (["--bench", "nomatch"], "matches none"), (["--bench", "nomatch", "--noise", "2"], "matches none"),
    (["--bench", "x", "--tiers", "counts"], "--bench"),
    (["--base", "a..b"], "--base"), (["--base="], "--base"), (["--tiers", "bogus"], "--tiers"),
    (["--noise", "2", "--tiers", "counts"], "so --tiers cannot be given with it"),      # it timed all the same
    (["--noise", "2", "--base", "HEAD~1", "--factor", "2", "--rounds", "3", "--report-timings"],
     "so --base, --factor, --rounds, --report-timings cannot be given with it")])
def test_gate_refuses_values_that_mean_nothing(args, named):
    """Each before asv starts: a --bench that matches no gate benchmark ran the whole suite
    under --noise, and the counts tier's minute before the timing tier said so."""
    _one_sentence(_tool("gate", *args), named)


@pytest.mark.parametrize("args, named", [
    (["bogus"], "invalid choice: 'bogus'"), ([], "cmd"), (["find", "abc", "x"], "commits"),
    (["find", "a..b", "("], "bench"), (["select", "--gate", "extra"], "extra"), (["run", "-b", "("], "--bench"),
    (["machine", "--bogus"], "--bogus"), (["history", "--bench", "(", "--dry-run"], "--bench"),
    (["history", "--bench", "nomatch", "--dry-run"], "selects nothing"), (["run", "--results", "../x"], "--results"),
    (["run", "--results", ""], "--results"), (["find", "nosuch..HEAD", "tasks"], "nosuch is not a commit"),
    (["find", "HEAD~1..HEAD", "nomatch"], "matches no benchmark"), (["find", "HEAD~1..HEAD", "time_"], "bisects one"),
    (["find", "HEAD..HEAD~1", "tasks"], "HEAD is not in the history of HEAD~1"),       # asv: "No commit hashes
    (["find", "HEAD..HEAD", "tasks"], "the same commit"),                               # selected", status 1
    (["find", "HEAD~1..HEAD", "throughput.Throughput.track_gflops"], "taken out of the suite"),  # asv built an
    (["history", "--since=", "--dry-run"], "--since"), (["history", "--since=a\nb", "--dry-run"], "--since")])
def test_tracking_refuses_an_unknown_command_or_value_in_one_sentence(args, named):
    """Each before asv starts: a history or find of a pattern that selects nothing, or a commit
    that is none, went on to build environments (minutes) or ended in asv's traceback; a
    scratch results name of '../x' wrote outside .asv/; a find of a retired benchmark built an
    environment, then said it found none (status 1); an empty --since was ignored, and one
    holding a line feed split the sentence."""
    _one_sentence(_tool("tracking", *args), named)


@pytest.mark.parametrize("command", [["run"], ["smoke"], ["history", "--dry-run"]])
def test_versions_of_which_none_runs_here_are_refused_before_asv(monkeypatch, capsys, command):
    """A hunt: NBSYMPLE_BENCH_VERSIONS=C make bench-smoke on a machine without a GPU timed the peers
    (NumPy, REBOUND, Warp) alone and ended with status 0. (The machine's GPU is hidden here.)"""
    from benchmarks import grid
    from tools import tracking
    monkeypatch.setenv("NBSYMPLE_BENCH_VERSIONS", "C")
    monkeypatch.setattr(grid, "VERSIONS", ("C",))
    monkeypatch.setattr(grid, "gpu_visible", lambda: False)
    monkeypatch.setattr(tracking, "asv", lambda *args, **kwargs: pytest.fail("asv started"))
    with pytest.raises(SystemExit) as stopped:
        tracking.main(command)
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and len(err.strip().splitlines()) == 1, err
    assert "NBSYMPLE_BENCH_VERSIONS=C names no version that runs here: version C needs a GPU" in err, err
    monkeypatch.setattr(grid, "VERSIONS", ("A", "C"))         # one of them runs: the run goes on
    assert tracking.versions_problem() is None


def _home(tmp_path) -> dict:
    """HOME for a tool that registers the machine (asv's ~/.asv-machine.json): the test's own."""
    (tmp_path / "home").mkdir(exist_ok=True)
    return {"HOME": str(tmp_path / "home")}


def test_a_bench_pattern_that_selects_nothing_is_named(tmp_path):
    """`make bench ASV_ARGS='-b time_pairwise$'` said that nothing of the suite runs on this
    machine and grid (a hunt): the pattern is named, with what it is searched in."""
    _one_sentence(_tool("tracking", "run", "--results", "t", "-b", "time_pairwise$", env=_home(tmp_path)),
                  "--bench 'time_pairwise$' selects nothing", "name(params)")


def test_every_bench_pattern_given_is_kept(monkeypatch):
    """`tools.tracking run -b X -b Y` (and `make bench ASV_ARGS='-b X -b Y'`, `history`) ran what
    the last pattern selects alone, in silence (a hunt): any of them is selected now."""
    import re
    from tools import tracking
    seen = []
    monkeypatch.setattr(tracking, "run", lambda results, bench, quick, extra: seen.append(bench) or 0)
    monkeypatch.setattr(tracking, "history", lambda since, bench, *a: seen.append(bench) or 0)
    for argv in (["run", "-b", "Threads", "-b", "Compile"], ["run", "-b", "Threads"], ["run"],
                 ["history", "-b", "^tasks", "-b", "^steps", "--dry-run"], ["history", "--dry-run"]):
        assert tracking.main(argv) == 0
    assert seen == ["(?:Threads)|(?:Compile)", "Threads", None, "(?:^tasks)|(?:^steps)", tracking.HISTORY_BENCH]
    assert re.search(seen[0], "compile.Compile.track_compile_seconds('A', 'dp')") and re.search(seen[0], "Threads.x")
    assert re.search(seen[3], "steps.Step.time_step_leapfrog('A', 256, 'dp')")


@pytest.mark.parametrize("kind", ["a file", "a link to a folder"])
@pytest.mark.parametrize("args, status, scratch", [
    (["tracking", "run", "--results", "t"], 2, "t"), (["tracking", "smoke"], 2, "smoke"),
    (["gate", "--base", "HEAD~1", "--tiers", "counts"], 3, "gate-base-tree")])
def test_a_scratch_folder_that_is_a_file_or_a_link_is_named(tmp_path, kind, args, status, scratch):
    """A file at .asv/NAME (a tool's scratch folder) ended in a FileExistsError traceback (the
    gate's with status 1, its "regression"), and a link there had asv's files written where it
    points (a hunt): one sentence, nothing written through the link."""
    root, outside = _checkout_of_tools(tmp_path, 2), tmp_path / "outside"
    outside.mkdir()
    (root / ".asv").mkdir()
    if kind == "a file":
        (root / ".asv" / scratch).write_text("x\n")
    else:
        (root / ".asv" / scratch).symlink_to(outside, target_is_directory=True)
    p = _tool(*args, cwd=root, env=_home(tmp_path))
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert p.returncode == status and len(lines) == 1 and "Traceback" not in p.stderr, (p.returncode, p.stderr)
    assert f".asv/{scratch}" in lines[0] and ("is a file" if kind == "a file" else "symbolic link") in lines[0], lines
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("args, place, kind", [
    (["publish"], "results/m/0123abcd-existing-py3.11.json", "a FIFO"),
    (["history", "--since", "HEAD~1"], "results/m/0123abcd-existing-py3.11.json", "a FIFO"),
    (["run", "--results", "t"], ".asv/t/results/benchmarks.json", "a FIFO"),
    (["benchmarks-json"], "results/benchmarks.json", "a FIFO"),
    (["benchmarks-json"], "results/benchmarks.json", "a folder"),
    (["publish"], "results/m/0123abcd-existing-py3.11.json", "nested more than 64 levels deep"),
    (["history", "--since", "HEAD~1"], "results/benchmarks.json", "nested more than 64 levels deep"),
    (["publish"], "results/m/0123abcd-existing-py3.11.json", "malformed (its env_name is not text)"),
    (["publish"], "results/m/0123abcd-existing-py3.11.json", "malformed (its durations is not an object of numbers)"),
    (["publish"], "results/m/0123abcd-existing-py3.11.json", 'not valid JSON (the key "env_name" is given twice'),
    (["publish"], "results/m/machine.json", "not an asv machine file"),
    (["publish"], "results/benchmarks.json", "not asv's benchmarks.json"),
    (["publish"], "results/m/0123abcd-existing-py3.11.json", "not UTF-8 text"),       # a hunt: asv's traceback
    (["publish"], "results/m/machine.json", "not valid JSON"),                        # a hunt: said on stdout alone
    (["publish"], "results/m/loop-existing-py3.11.json", "a symbolic-link loop")])    # a hunt: asv's traceback
def test_a_special_file_where_asv_reads_results_is_named_before_it_runs(tmp_path, args, place, kind):
    """A FIFO among the results made `make dashboard` (asv publish) and `benchmarks-json` wait
    for ever, and a folder at benchmarks.json ended in a traceback (a hunt): one sentence naming
    it, before asv runs. So do JSON nested 100000 deep there and a results file whose fields are not
    of their types (an env_name of 5, durations that are a list): asv's RecursionError, TypeError."""
    root = _checkout_of_tools(tmp_path, 2)
    (root / place).parent.mkdir(parents=True)
    if kind == "a FIFO":
        os.mkfifo(root / place)
    elif kind == "a folder":
        (root / place).mkdir()
    elif kind.startswith("nested"):
        (root / place).write_text("[" * 100000 + "]" * 100000)
    elif kind == "not an asv machine file":
        (root / place).write_text('{"version": 1, "cpu": "x"}')        # no machine: asv's KeyError
    elif kind == "not asv's benchmarks.json":
        (root / place).write_text('{"version": 2, "tasks.Tasks.time_pairwise": 5}')      # asv's TypeError
    elif kind == "not UTF-8 text":
        (root / place).write_bytes(b'{"version": 2, "\xff": 1}')
    elif kind == "not valid JSON":
        (root / place).write_text('{"version": 1, "m')
    elif kind == "a symbolic-link loop":
        (root / place).symlink_to(root / place)
    else:
        fixture = REPO / "tests" / "data" / "asv_fixture" / "fixture-2core-nogpu"
        data = json.loads(next(p for p in fixture.glob("*.json") if p.name != "machine.json").read_text())
        if "given twice" in kind:       # asv takes the last: 5 (`paper` and the tools refuse a key given twice)
            (root / place).write_text(json.dumps(data)[:-1] + ', "env_name": 5}')
        else:
            data.update({"env_name": 5} if "env_name" in kind else {"durations": []})
            (root / place).write_text(json.dumps(data))
    _one_sentence(_tool("tracking", *args, cwd=root, env=_home(tmp_path)), place, f"is {kind}")


@pytest.mark.parametrize("kind", ["a file", "a dangling link", "a link to a folder", "a FIFO"])
def test_a_dashboard_folder_that_is_none_is_named_before_asv_publishes(tmp_path, kind):
    """`make dashboard` where html/ was a file, a FIFO or a link (asv publish removes the folder
    first): asv's NotADirectoryError or FileExistsError traceback (a hunt). One sentence naming
    it, before asv runs (`tools.tracking.own_folder`); a folder elsewhere behind a link is untouched."""
    root = _checkout_of_tools(tmp_path, 2)
    (tmp_path / "elsewhere").mkdir()
    {"a file": lambda p: p.write_text("x\n"), "a dangling link": lambda p: p.symlink_to("gone"),
     "a link to a folder": lambda p: p.symlink_to(tmp_path / "elsewhere"), "a FIFO": os.mkfifo}[kind](root / "html")
    said = {"a file": "is a file", "a FIFO": "is a FIFO"}.get(kind, "is a symbolic link")
    _one_sentence(_tool("tracking", "publish", cwd=root, env=_home(tmp_path)), "html", said)
    assert list((tmp_path / "elsewhere").iterdir()) == []


@pytest.mark.parametrize("args", [["publish"], ["benchmarks-json"], ["run", "--bench", "nomatch"],
                                  ["history", "--since", "HEAD~1"]], ids=lambda a: a[0])
@pytest.mark.parametrize("kind", ["a file", "a dangling link"])
def test_a_results_folder_that_is_none_is_named_before_asv_runs(tmp_path, args, kind):
    """results/ a file or a dangling link: `benchmarks-json` ended in a NotADirectoryError traceback,
    `make dashboard` in asv's advice to run `asv run --bench just-discover` (a hunt): one sentence
    naming it (`tools.tracking.results_folder_problem`), before asv runs."""
    root = _checkout_of_tools(tmp_path, 2)
    shutil.copytree(REPO / "benchmarks", root / "benchmarks", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "results").write_text("x\n") if kind == "a file" else (root / "results").symlink_to("gone")
    said = "it is a file, not a folder" if kind == "a file" else "it is a dangling symbolic link to gone"
    _one_sentence(_tool("tracking", *args, cwd=root, env=_home(tmp_path)), "cannot keep asv's results in results/",
                  said)


def _git(root, *args):
    author = {f"GIT_{who}_{what}": "test" for who in ("AUTHOR", "COMMITTER") for what in ("NAME", "EMAIL")}
    subprocess.run(["git", *args], cwd=root, env={**os.environ, **author}, capture_output=True, check=True)


def _checkout_of_tools(tmp_path, commits: int) -> Path:
    """A checkout of this suite's tools/ and asv.conf.json alone (asv's and the gate's ROOT; the
    package is the installed one) with `commits` commits, or no repository where None (a source archive)."""
    root = tmp_path / "checkout"
    shutil.copytree(REPO / "tools", root / "tools", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "asv.conf.json", root)
    if commits is not None:
        _git(root, "init", "-q")
        for k in range(commits):
            (root / "VERSION").write_text(str(k))
            _git(root, "add", "-A")
            _git(root, "commit", "-q", "-m", str(k))
    return root


COMMANDS_OF_COMMITS = [("tracking", "run"), ("tracking", "history", "--dry-run"), ("tracking", "publish"),
                       ("tracking", "find", "HEAD..HEAD", "tasks"), ("gate", "--tiers", "counts")]


@pytest.mark.parametrize("commits, env, named", [
    (None, {}, ["not a git repository", "clone"]),                         # a source archive
    (0, {}, ["no commit yet"]),
    (1, {"GIT_TEST_ASSUME_DIFFERENT_OWNER": "1"}, ["another user", "safe.directory"]),   # git's own stand-in
    (1, {"GIT_DIR": "/nonexistent"}, ["GIT_DIR='/nonexistent'"]),
    (1, {"GIT_DIR": os.fsdecode(b"/nonexistent-\xff")}, ["not a git repository", "GIT_DIR="]),   # a hunt: git's words
    (1, {"PATH": "/nonexistent"}, ["git cannot be run", "install git"])])
def test_a_checkout_whose_commits_git_cannot_read_is_named_before_asv_starts(tmp_path, commits, env, named):
    """Every command that measures commits (`make bench`, `history`, `find`, `dashboard`, `gate`)
    in a folder git cannot read: a CalledProcessError's traceback (run), asv's (publish), "not a
    commit" (find, history) or "not a git checkout" (gate, for another user's clone) before."""
    root = _checkout_of_tools(tmp_path, commits)
    before = sorted(root.rglob("*"))
    for module, *args in COMMANDS_OF_COMMITS:
        _one_sentence(_tool(module, *args, cwd=root, env=env), *named)
    assert sorted(root.rglob("*")) == before            # nothing written


def test_a_history_since_a_commit_of_another_branch_is_refused(tmp_path):
    """`history --since side`, a commit off HEAD's line, listed side itself among the commits to
    measure into the dashboard's line of HEAD."""
    root = _checkout_of_tools(tmp_path, 2)
    _git(root, "checkout", "-q", "-b", "side", "HEAD~1")
    (root / "SIDE").write_text("x")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "side")
    _git(root, "checkout", "-q", "-")
    _one_sentence(_tool("tracking", "history", "--dry-run", "--since", "side", cwd=root),
                  "--since side is not in the history of HEAD")


def test_the_suite_refuses_a_checkout_whose_commits_git_cannot_read(tmp_path, monkeypatch):
    """`make test` in a source archive: 29 tests failed with git's words; one sentence now."""
    import conftest
    monkeypatch.setattr(sys, "path", list(sys.path))
    conftest._refuse_a_checkout_without_commits()                      # this checkout: a clone
    monkeypatch.setattr(conftest, "ROOT", tmp_path)
    with pytest.raises(pytest.UsageError, match=r"not a git repository.*run it in a clone of the repository"):
        conftest._refuse_a_checkout_without_commits()


def test_a_commit_a_shallow_clone_lacks_is_said_to_be_missing_from_it(tmp_path):
    full = _checkout_of_tools(tmp_path, 2)
    _git(tmp_path, "clone", "-q", "--depth", "1", full.as_uri(), "shallow")
    for module, *args in [("tracking", "find", "HEAD~1..HEAD", "tasks"), ("gate", "--base", "HEAD~1")]:
        _one_sentence(_tool(module, *args, cwd=tmp_path / "shallow"), "HEAD~1", "is not a commit",
                      "git fetch --unshallow")


def test_a_history_of_a_shallow_clone_says_the_reference_is_missing_from_it(tmp_path):
    """`history` in a `git clone --depth 1`: "results/ holds no commit to start from", of a
    results/ that held the reference commit, which the clone lacks."""
    full = _checkout_of_tools(tmp_path, 2)
    older = subprocess.run(["git", "rev-parse", "HEAD~1"], cwd=full, capture_output=True, text=True).stdout.strip()
    _git(tmp_path, "clone", "-q", "--depth", "1", full.as_uri(), "shallow")
    (tmp_path / "shallow" / "results" / "m").mkdir(parents=True)
    data = {"commit_hash": older, "date": 1, "env_name": "env", "python": "3.11", "version": 2,
            "result_columns": ["result", "params"], "results": {}}
    (tmp_path / "shallow" / "results" / "m" / f"{older[:8]}-env.json").write_text(json.dumps(data))
    _one_sentence(_tool("tracking", "history", "--dry-run", cwd=tmp_path / "shallow"), "shallow",
                  "git fetch --unshallow", "--since")


def test_a_branch_of_any_name_git_allows_is_taken_as_base(tmp_path):
    """A branch named 'café' or holding ' and $ (which `make gate BASE=` passes as typed) was
    refused as "expected a commit"; git's names are git's to judge."""
    root = _checkout_of_tools(tmp_path, 2)
    shutil.copytree(REPO / "benchmarks", root / "benchmarks", ignore=shutil.ignore_patterns("__pycache__"))
    for branch in ("café", "it's-$x", "feat/a+b"):
        _git(root, "branch", branch, "HEAD~1")
        p = _tool("tracking", "history", "--dry-run", "--since", branch, cwd=root)
        assert p.returncode == 0 and "Traceback" not in p.stderr, (branch, p.stderr)
    _one_sentence(_tool("tracking", "history", "--dry-run", "--since", "a b", cwd=root), "--since", "a b")


@pytest.mark.parametrize("extra, named", [(["--set-commit-hash", "HEAD~1"], "--set-commit-hash"),
                                          (["--mach", "other"], "--machine"), (["HEAD~1..HEAD"], "a commit range"),
                                          (["--python=/usr/bin/python3"], "--python"), (["-E", "existing"], "-E")])
def test_asv_arguments_that_make_bench_sets_itself_are_refused(tmp_path, extra, named):
    """`make bench ASV_ARGS=...` handed them to asv after its own, and asv took the last: the
    working tree's timings saved as HEAD~1's, a range ignored, results under another machine."""
    root = _checkout_of_tools(tmp_path, 1)
    _one_sentence(_tool("tracking", "run", "-b", "tasks", *extra, cwd=root), named, "ASV_ARGS", "leave it out")


@pytest.mark.parametrize("extra, named", [(["--bogus"], "takes no --bogus"), (["-a"], "--attribute")])
def test_asv_arguments_asv_run_does_not_take_are_one_sentence(tmp_path, extra, named):
    """`make bench ASV_ARGS=--bogus` printed asv's usage (three lines) after the run's set-up."""
    root = _checkout_of_tools(tmp_path, 1)
    _one_sentence(_tool("tracking", "run", "-b", "tasks", *extra, cwd=root), named, "ASV_ARGS", "asv run --help")


@pytest.mark.parametrize("remote", [False, True])
def test_a_dashboard_of_a_clone_without_the_branch_asv_draws_is_refused(tmp_path, remote):
    """`make dashboard` in a `git clone -b other` (or `--single-branch`) clone, without asv.conf.json's
    branch 'main': asv's ProcessError traceback ("git rev-list --first-parent main")."""
    root = _checkout_of_tools(tmp_path, 1)
    _git(root, "branch", "-M", "other")
    if remote:
        _git(root, "update-ref", "refs/remotes/origin/main", "HEAD")
    _one_sentence(_tool("tracking", "publish", cwd=root), "'main'",
                  "git branch main origin/main" if remote else "git fetch origin main:main")


def test_a_short_hash_of_several_objects_is_said_to_be_ambiguous(tmp_path):
    """A prefix that starts several objects' hashes was "not a commit of this repository"."""
    root = _checkout_of_tools(tmp_path, 1)
    (root / "blobs").mkdir()
    for k in range(1500):                      # fixed contents, so fixed hashes: some share 4 digits
        (root / "blobs" / str(k)).write_text(str(k))
    hashes = subprocess.run(["git", "hash-object", "-w", "--stdin-paths"], cwd=root, capture_output=True, text=True,
                            input="\n".join(f"blobs/{k}" for k in range(1500)), check=True).stdout.split()
    prefix = next(h[:4] for h in hashes if sum(other.startswith(h[:4]) for other in hashes) > 1)
    for module, *args in [("tracking", "history", "--dry-run", "--since", prefix), ("gate", "--base", prefix),
                          ("tracking", "find", f"{prefix}..HEAD", "tasks")]:
        _one_sentence(_tool(module, *args, cwd=root), prefix, "several objects", "more of the commit's hash")


@pytest.mark.parametrize("args, named", [(["--isa", "../../x"], "--isa"), (["--isa="], "--isa"),
                                         (["--uarch", "a/b"], "--uarch"), (["--bogus"], "--bogus")])
def test_migrate_refuses_names_that_are_not_one(tmp_path, args, named):
    _one_sentence(_tool("migrate", str(tmp_path), *args), named)


@pytest.mark.parametrize("text", ["..", ".", ".x", "-x", "+x", "_x", ""])
def test_a_name_of_the_tools_starts_with_a_letter_or_digit(text):
    """`tools.arguments.name` (an ISA, a CPU, `tracking run --results`' folder under .asv/): '..' and '.'
    name the folder above or the folder itself, '.x' a hidden one, and '-x' reads as an option."""
    import argparse
    from tools.arguments import name
    assert name("x.y_z+1-2") == "x.y_z+1-2"
    with pytest.raises(argparse.ArgumentTypeError, match="expected a name of letters, digits"):
        name(text)


def test_a_pattern_of_the_tools_is_a_regular_expression():
    """`tools.arguments.regex` (-b, asv's benchmark pattern): what Python cannot compile is refused as the
    option's value, not handed to asv, whose own compile of it ends in a traceback."""
    import argparse
    from tools.arguments import regex
    assert regex("time_.*[AB]$") == "time_.*[AB]$"
    with pytest.raises(argparse.ArgumentTypeError, match="is not a regular expression"):
        regex("time_[")


@pytest.mark.parametrize("text", ["", "-x", "--all", "HEAD~1..HEAD", "a b", "a\tb", "x\x7f"])
def test_a_commit_of_the_tools_is_no_option_range_or_blank(text):
    """`tools.arguments.commit` takes any name git allows, but not what git would read as an option
    ('--all': the word handed to git), a range ('..', which `tracking find` takes apart) or a blank
    or control character, which no name of git's holds."""
    import argparse
    from tools.arguments import commit
    assert [commit(t) for t in ("origin/main", "HEAD~3", "café", "it's-$x")] == ["origin/main", "HEAD~3", "café",
                                                                                "it's-$x"]
    with pytest.raises(argparse.ArgumentTypeError, match="expected a commit"):
        commit(text)


def _valid_factor(text: str) -> bool:
    try:
        value = float(text)
    except ValueError:
        return False
    return math.isfinite(value) and value > 1


@hostile(60, commands=False)
@given(value=st.one_of(st.floats(max_value=1.0), st.just(math.nan), st.just(math.inf), st.just(-math.inf),
                       st.text(max_size=8).filter(lambda t: not _valid_factor(t))))
def test_gate_factor_takes_only_a_finite_number_above_one(value):
    from tools import gate
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = gate.main([f"--factor={value}", "--tiers", "counts"])
    assert status == 2 and err.getvalue().count("\n") == 1 and "--factor" in err.getvalue(), err.getvalue()


@hostile(60, commands=False)
@given(option=st.sampled_from(["--noise", "--rounds"]), value=st.one_of(
    st.integers(max_value=0), st.floats(allow_nan=True, allow_infinity=True).map(repr), st.text(max_size=6)))
def test_gate_whole_numbers_take_only_whole_numbers_that_mean_something(option, value):
    from tools import gate
    err = io.StringIO()
    with contextlib.redirect_stderr(err):      # a bad --tiers too: a count that means something runs nothing
        status = gate.main([f"{option}={value}", "--tiers", "bogus"])
    assert status == 2 and err.getvalue().count("\n") == 1, err.getvalue()
    assert option in err.getvalue() or "--tiers" in err.getvalue(), err.getvalue()


def _parsers(main) -> list:
    """Every parser `main(["--help"])` makes (its subcommands' too), as built for the user."""
    import argparse
    made, init = [], argparse.ArgumentParser.__init__

    def recording(self, *args, **kwargs):
        init(self, *args, **kwargs)
        made.append(self)
    with pytest.MonkeyPatch.context() as m, contextlib.redirect_stdout(io.StringIO()):
        m.setattr(argparse.ArgumentParser, "__init__", recording)
        with contextlib.suppress(SystemExit):           # (tools.gate returns its status)
            main(["--help"])
    return made


COMMAND_LINES = ["nbsymple_versions.cli", "nbsymple_versions.paper.main", "nbsymple_versions.instruments.peers",
                 "nbsymple_versions.instruments.mpi_timing", "nbsymple_versions.instruments.mpi_model",
                 "nbsymple_versions.instruments.gpu_report", "tools.gate", "tools.migrate", "tools.tracking"]


@pytest.mark.parametrize("module", COMMAND_LINES)
def test_an_option_given_a_double_dash_gets_it_as_its_value(module):
    """`--n=--` (found by a random search: `mpi_timing --scheme=--`, then `nbsymple check --n=--`
    ended in a traceback): Python 3.11's argparse drops the '--' and gives the option [], past its
    type and choices. Every option of every command line that takes a value gets '--' through
    its type, or is refused in a sentence naming it (`arguments.Parser`)."""
    import argparse
    import importlib
    parsers = _parsers(importlib.import_module(module).main)
    options = [(p, a) for p in parsers for a in p._actions if a.option_strings and a.nargs != 0]
    assert parsers and options
    for parser, action in options:
        try:
            value = parser._get_values(action, ["--"])
        except argparse.ArgumentError as e:
            assert "'--'" in str(e), (parser.prog, action.option_strings, str(e))
        else:
            expected = (action.type or str)("--")
            assert value in (expected, [expected]), (parser.prog, action.option_strings, value)


LINE_FEEDS = ["x\ny", "1\n", "inf\n", "\n"]


@pytest.mark.parametrize("module", COMMAND_LINES)
def test_a_line_feed_typed_anywhere_stays_inside_one_sentence(module):
    """`nbsymple info $'\\n'` (found by a random search) printed argparse's "unrecognized
    arguments" over two lines, and `nbsymple run --dt $'inf\\n'` its refusal, the second line
    looking like a sentence of its own. Every option of every command line given a value holding
    a line feed, and a stray argument holding one, is taken or refused in one line (the line feed
    shown as its escape: `entry.sentence`)."""
    import importlib
    main = importlib.import_module(module).main
    parsers = _parsers(main)
    cases = [(p, [a.option_strings[0], value]) for p in parsers for a in p._actions
             if a.option_strings and a.nargs != 0 for value in LINE_FEEDS]
    cases += [(p, ["stray\nargument"]) for p in parsers]
    refused = 0
    for parser, argv in cases:
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                parser.parse_args(argv)
                continue
            except SystemExit as e:
                status = e.code
            except Exception:              # noqa: BLE001 - a parser whose command says its refusal (paper's)
                status = main(argv)        # refused while parsing: nothing runs
        refused += 1
        assert status == 2 and err.getvalue().count("\n") == 1 and err.getvalue().startswith(parser.prog), \
            (parser.prog, argv, status, err.getvalue())
    assert refused >= len(parsers), (module, refused)        # every stray argument at least


def test_a_double_dash_still_ends_the_options():
    from nbsymple_versions.arguments import Parser
    p = Parser(prog="p")
    p.add_argument("--name")
    p.add_argument("rest", nargs="*")
    assert vars(p.parse_args(["--name=--", "--", "--name", "x"])) == {"name": "--", "rest": ["--name", "x"]}


def test_help_describes_a_command_by_its_docstrings_first_paragraph_ending_a_sentence():
    """--help's description is the module docstring's first paragraph, and one that opens a list (it
    ends with ':', the list cut off) ends with a full stop instead: "Runs things:" would be a sentence
    cut short."""
    from nbsymple_versions.arguments import Parser
    assert Parser(prog="p", doc="Runs things:\n\n- one\n- two\n").description == "Runs things."
    assert Parser(prog="p", doc="Runs things.\nTwo lines.\n\nMore.").description == "Runs things.\nTwo lines."


def test_snapshots_of_another_run_keep_their_times_and_scale(tmp_path):
    """A hunt: `write_snapshot(..., fmt="nbsymple")` with another run id (the default "" too)
    started the folder's sidecar afresh, so the snapshots of the run already there read back at
    the new state's units, softening and t = 0; a snapshot whose time the sidecar lacks (a run
    killed between the file's rename and the sidecar's) was read at t = 0. Both refused."""
    from nbsymple_versions.runs.snapshots import SnapshotError, list_snapshots, read_snapshot, write_snapshot
    a = make_cluster(16, seed=2)
    a.t = 0.25
    write_snapshot(tmp_path, a, 5, "run-1", fmt="nbsymple")
    kept = (tmp_path / "snapshots.json").read_bytes()
    other = make_cluster(16, seed=9, units=Units(20, 480, "authors"))
    for run_id in ("", "run-2"):
        with pytest.raises(ValueError, match=r"holds snapshots of another run in the authors' layout "
                                             r"\(snap_00000005.txt\), whose times and scale its snapshots.json keeps"):
            write_snapshot(tmp_path, other, 99, run_id, fmt="nbsymple")
    assert (tmp_path / "snapshots.json").read_bytes() == kept
    state = read_snapshot(tmp_path / "snap_00000005.txt")[0]
    assert state.t == 0.25 and state.units == a.units and state.eps == a.eps
    (tmp_path / "snap_00000007.txt").write_bytes((tmp_path / "snap_00000005.txt").read_bytes())
    assert [p.name for p in list_snapshots(tmp_path)] == ["snap_00000005.txt", "snap_00000007.txt"]   # it listed none
    with pytest.raises(SnapshotError, match="snap_00000007.txt has no time in its folder's snapshots.json"):
        read_snapshot(tmp_path / "snap_00000007.txt")
    empty = tmp_path / "empty"
    empty.mkdir()
    write_snapshot(empty, other, 3, fmt="nbsymple")          # a folder without another run's: as before
    assert read_snapshot(empty / "snap_00000003.txt")[0].units == other.units


def test_snapshot_and_checkpoint_writers_refuse_what_could_not_be_read_back(tmp_path, monkeypatch):
    """Found by a hunt, through the API: snapshots in the authors' layout of another scale
    rewrote the folder's snapshots.json, so an earlier one read back at the new units and
    softening; `write_snapshot` into no folder, of step -1 (listed, never read), 2.5 or True,
    or of None ended in tracebacks or wrote what could not be read (a folder that is gone is
    named, not the temporary file that could not be made in it); `checkpoint.save` with a run
    of no bodies wrote checkpoints nothing could load. A run of bodies all at one point is
    refused at its start (its checkpoint could not be loaded)."""
    from nbsymple_versions.runs import checkpoint
    from nbsymple_versions.runs.snapshots import read_snapshot, write_snapshot
    from cli_call import call
    monkeypatch.chdir(tmp_path)
    a, b = make_cluster(16, seed=2), make_cluster(64, seed=2, units=Units(5, 1000))
    Path("e").mkdir()
    Path("d").mkdir()
    write_snapshot("e", a, 1, fmt="nbsymple")
    with pytest.raises(ValueError, match=r"another mass_msun, r_cl_pc, softening .* write it into another folder"):
        write_snapshot("e", b, 2, fmt="nbsymple")
    assert read_snapshot("e/snap_00000001.txt")[0].eps == a.eps
    with pytest.raises(FileNotFoundError, match="No such file or directory: 'new/deep'"):
        write_snapshot("new/deep", a, 4)
    for step in (-1, 2.5, True):
        with pytest.raises(ValueError, match="step must be a whole number of at least 0"):
            write_snapshot("d", a, step)
    with pytest.raises(TypeError, match="state must be a State, got NoneType"):
        write_snapshot("d", None, 5)
    sim = Simulation(make_cluster(32, seed=2), "A", "leapfrog", "dp", 1e-3)
    sim.step(2)
    for run, why in (({}, "hold run.n bodies"), (None, "field run: null")):
        with pytest.raises(ValueError, match=rf"would not load \(.*{why}.*\), so it was not written"):
            checkpoint.save("api.ck", run, sim)
    assert not Path("api.ck").exists()
    Path("same.txt").write_text("0 0 0 0 0 0 0.5\n0 0 0 0 0 0 0.5\n")
    rc, out, err = call(["run", "--ics", "same.txt", "--ics-mass", 480, "--steps", 1, "--checkpoint", "s.ck"])
    assert rc == 2 and "all 2 bodies stand at one point" in err and not Path("s.ck").exists(), err


def test_writers_refuse_a_state_that_is_not_finite_and_snapshots_list_by_step(tmp_path, monkeypatch):
    """A second hunt: `write_snapshot` and `checkpoint.save` wrote a state holding a NaN, which
    their readers refuse (a snapshot's as "truncated or corrupted"); `list_snapshots` put step
    10**8 before step 99999999 (sorted by name), the order `paper` reads a run in."""
    from nbsymple_versions.runs import checkpoint
    from nbsymple_versions.runs.snapshots import SnapshotError, list_snapshots, read_snapshot, write_snapshot
    monkeypatch.chdir(tmp_path)
    sim = Simulation(make_cluster(16, seed=1), "A", "leapfrog", "dp", 1e-3)
    sim.state.x[0, 3] = np.nan
    run = {"run_id": "x", "n": 16, "seed": 1, "seed_chosen": False, "steps": 1, "snapshots": None, "every": 1,
           "checkpoint_every": 1, "ics": None, "mass_classes": None, "snapshot_format": "npz"}
    for write in (lambda: checkpoint.save("nan.ck", run, sim), lambda: write_snapshot(".", sim.state, 1),
                  lambda: write_snapshot(".", sim.state, 2, fmt="nbsymple")):
        with pytest.raises(ValueError, match="x must be finite"):
            write()
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    good = make_cluster(4, seed=1)
    np.savez("snap_00000003.npz", positions=good.positions * np.nan, velocities=good.velocities, masses=good.m,
             time=0.0, softening=good.eps, step=3, run_id="", **good.units.as_dict())
    with pytest.raises(SnapshotError, match="holds no state a run could have written: positions must be finite"):
        read_snapshot("snap_00000003.npz")
    for step in (5, 100000000, 99999999, 1000000000):
        write_snapshot(".", good, step)
    assert [p.name[5:-4] for p in list_snapshots(".")] == ["00000003", "00000005", "99999999", "100000000",
                                                           "1000000000"]


def test_a_snapshot_name_that_gives_no_step_is_listed_after_every_step():
    """`by_step`: snapshots in the order of their steps, by number; a name that gives none (snap_x, or
    snap_ with a digit that is not ASCII, which int cannot read) after them all, not among step 0's."""
    from nbsymple_versions.runs.snapshots import by_step
    names = ["snap_x.npz", "snap_00000010.npz", "snap_\u00b2.npz", "snap_00000000.npz", "snap_00000002.npz"]
    assert [p.name for p in by_step(map(Path, names))] == ["snap_00000000.npz", "snap_00000002.npz",
                                                           "snap_00000010.npz", "snap_x.npz", "snap_\u00b2.npz"]


@pytest.mark.parametrize("text", ["5", "null", "{\"constants\": \"exact\"}"])
def test_a_sidecar_names_its_constants_only_as_an_object_holding_them(tmp_path, text):
    """`names_constants` of an ASCII snapshot: its sidecar names constants where it is an object with
    that key; a number or null there (no sidecar a run wrote) names none, and raises nothing."""
    from nbsymple_versions.runs.snapshots import names_constants
    (tmp_path / "snapshots.json").write_text(text)
    assert names_constants(tmp_path / "snap_00000000.txt") is text.startswith("{")


def test_what_killed_writers_left_in_a_snapshot_folder_is_removed_and_nothing_else(tmp_path):
    """`remove_temporaries`: the temporaries of a snapshot, of either format, of the sidecar and of the
    run record go (as `write_atomically` names them: prefix, process id, random part, suffix); a
    user's files stay."""
    from nbsymple_versions.runs.snapshots import remove_temporaries
    left = [".nbsymple-run.json.123.abcd_1x8.tmp", ".snap_123.abcd_1x8.npz.tmp", ".snap_123.abcd_1x8.txt.tmp",
            ".snapshots.123.abcd_1x8.json.tmp"]
    for name in left + ["notes.tmp", ".draft.tmp", "snap_00000001.npz"]:
        (tmp_path / name).write_bytes(b"x")
    assert sorted(p.name for p in remove_temporaries(tmp_path)) == sorted(left)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".draft.tmp", "notes.tmp", "snap_00000001.npz"]


def test_reading_a_small_file_maps_no_buffer_of_the_largest_one_allowed(tmp_path):
    """A hunt: `paths.read_bytes` asked for LIMITS[kind] + 1 bytes at once, a buffer of 2 GB (an
    initial-condition file's limit) for a file of two bodies: under a `ulimit -v` that the run
    itself fits in (2.3 GB), `--ics` of two bodies ran out of memory."""
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29)); "
            "from nbsymple_versions.runs.paths import read_bytes; "
            "print(len(read_bytes(sys.argv[1], 'initial-condition file')))")
    (tmp_path / "ic.txt").write_text("1 0 0 0 0 0 1\n")
    p = subprocess.run([sys.executable, "-c", code, str(tmp_path / "ic.txt")], capture_output=True, text=True,
                       timeout=HANG_GUARD, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})  # (its buffers: per core)
    assert p.returncode == 0 and p.stdout.strip() == "14", p.stderr


def test_a_state_changed_or_shared_under_its_simulation_is_refused_or_followed():
    """A hunt: the force pipeline keeps copies of the masses, softening and units, so a state
    changed under its Simulation was stepped with the old ones (differently per precision); a
    state shared by two simulations ended with t saying half the steps its bodies made; a
    transposed view assigned to x stood still in sp (stepped as a copy); a record restored onto
    a state of another softening or units gave garbage errors; a pipeline of 8 bodies stepped a
    state of 512 reading masses out of bounds, and check_pipeline called a right kernel wrong."""
    import dataclasses
    for precision in ("sp", "dp"):
        state = make_cluster(64, seed=1)
        reference = state.copy()
        sim, ref = (Simulation(s, "A", precision=precision, dt=1e-3) for s in (state, reference))
        sim.step(1), ref.step(1)
        state.x = np.ascontiguousarray(state.positions).T         # the same values, Fortran-ordered
        sim.step(5), ref.step(5)
        assert np.array_equal(state.x, reference.x), precision
    for change, named in ((lambda s: setattr(s, "eps", 0.05), "state.eps"), (lambda s: s.m.__imul__(3), "masses"),
                          (lambda s: setattr(s, "units", Units(10, 480, "authors")), "state.units")):
        state = make_cluster(16, seed=1)
        sim = Simulation(state, "A", dt=1e-3)
        change(state)
        with pytest.raises(ValueError, match=f"{named}.* changed since the Simulation was built for it"):
            sim.step(1)
    state = make_cluster(16, seed=1)
    a, b = Simulation(state, "A", dt=1e-3), Simulation(state, "A", dt=1e-3)
    a.step(2)
    with pytest.raises(ValueError, match=r"another Simulation stepped the state, or t was set"):
        b.step(2)
    record = a.record()
    for other, named in ((dataclasses.replace(state.copy(), eps=state.eps * 2), "softening"),
                         (dataclasses.replace(state.copy(), units=Units(10, 480, "authors")), "units")):
        with pytest.raises(ValueError, match=f"the record was taken .*{named}|the record was taken in the {named}"):
            Simulation.restore(other, record)
    small, big = make_cluster(8, seed=2), make_cluster(512, seed=3)
    forces = get_version("A").pipeline(small, "dp")
    with pytest.raises(ValueError, match="forces was built for N = 8, .* not this state's N = 512"):
        advance(big, forces, get_scheme("leapfrog"), 1e-3, 1, np.zeros_like(big.x))
    with pytest.raises(ValueError, match="forces was built for N = 8"):
        check_pipeline(forces, big, 1e-12)
    acc = np.zeros_like(small.x)
    for bad in ({"t0": math.nan}, {"step0": -1}, {"step0": 2.5}, {"step0": True}, {"step0": "3"}):
        with pytest.raises(ValueError, match="(t0|step0) must be"):
            advance(small, forces, get_scheme("leapfrog"), 1e-3, 1, acc, None, **bad)
    for w in ("x", True, [1.0]):
        with pytest.raises(ValueError, match="w \\(the potential energy\\) must be a real number"):
            energy_parts(small, w=w)


def test_the_errors_of_a_simulation_without_diagnostics_say_why_there_are_none():
    """A hunt: `energy_error()` of a Simulation made with diagnostics=False said that "initial
    must be a real number" and `internal_energy_error()` that "parts0 must be EnergyParts":
    arguments the caller never passed."""
    sim = Simulation(make_cluster(16, seed=1), "A", dt=1e-3, diagnostics=False)
    sim.step(1)
    for error in (sim.energy_error, sim.internal_energy_error, sim.angular_momentum_error, sim.errors):
        with pytest.raises(ValueError, match="made with diagnostics=False, so it has no initial energy"):
            error()


def test_a_step_from_its_own_callback_is_refused(small):
    """A hunt: `sim.step(4, lambda k: sim.step(2))` moved the bodies six steps while steps_done
    said 4 and t 4 dt (and a checkpoint of it would have said so too)."""
    state = small[0]
    sim = Simulation(state.copy(), "A", "leapfrog", "dp", 1e-3)
    with pytest.raises(RuntimeError, match="Simulation.step was called from its own on_step"):
        sim.step(4, lambda k: sim.step(2))
    assert sim.steps_done == 1
    sim.step(3)                            # stepping again after it returned
    reference = Simulation(state.copy(), "A", "leapfrog", "dp", 1e-3)
    reference.step(4)
    assert sim.steps_done == 4 and np.array_equal(sim.state.x, reference.state.x)


def test_an_ascii_snapshot_is_listed_only_once_its_time_is_kept(tmp_path, monkeypatch):
    """A hunt: read while a run wrote, about 1 read in 3 of the newest ASCII snapshot failed as
    "killed between the two": the file was renamed in before its sidecar kept its time. The
    sidecar goes first now: whenever the file is there, it reads back."""
    import json
    from nbsymple_versions.runs import snapshots
    from nbsymple_versions.runs.snapshots import read_snapshot, write_snapshot
    original, seen = snapshots.write_atomically, []

    def watching(path, write, *args):
        if path.suffix == ".txt":                     # the snapshot's turn: its time is kept already
            seen.append(json.loads((tmp_path / "snapshots.json").read_text())["times"].get("3"))
        return original(path, write, *args)
    monkeypatch.setattr(snapshots, "write_atomically", watching)
    state = make_cluster(16, seed=2)
    state.t = 0.75
    write_snapshot(tmp_path, state, 3, "run-1", fmt="nbsymple")
    assert seen == [0.75] and read_snapshot(tmp_path / "snap_00000003.txt")[0].t == 0.75

