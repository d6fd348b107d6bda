"""`Simulation` and `ForcePipeline` bookkeeping: diagnostics stay off the clock, importing the
core leaves global state alone."""
import subprocess
import sys

import numpy as np
import pytest

from nbsymple_versions import Simulation, make_cluster


def test_accelerations_are_not_charged_to_the_steps():
    sim = Simulation(make_cluster(128, seed=3), "A", "leapfrog", "dp", diagnostics=False)
    sim.step(2)
    seconds, calls = dict(sim.clock.seconds), dict(sim.clock.calls)
    per_step = sim.seconds_per_step
    for kind in ("total", "pairwise", "galactic"):
        for _ in range(5):
            a = sim.accelerations(kind)
        assert a.shape == (128, 3) and np.isfinite(a).all() and np.abs(a).max() > 0
    assert sim.clock.seconds == seconds and sim.clock.calls == calls
    assert sim.seconds_per_step == per_step
    sim.step(1)                                          # the clock still runs for steps
    assert sim.clock.calls["pairwise"] == calls["pairwise"] + 1


def test_seconds_per_step_times_the_steps_is_the_clocks_time():
    """What a run reports as its speed (a mutation hunt: a count off by one passed every test); none before a step."""
    sim = Simulation(make_cluster(16, seed=3), "A", diagnostics=False)
    assert np.isnan(sim.seconds_per_step)
    sim.step(3)
    assert sim.clock.total > 0 and sim.seconds_per_step * 3 == pytest.approx(sim.clock.total, rel=1e-12)


def test_off_the_clock_restores_the_clock_on_error():
    sim = Simulation(make_cluster(16, seed=3), "A", diagnostics=False)
    clock = sim.forces.clock
    with pytest.raises(RuntimeError):
        with sim.forces.off_the_clock():
            assert sim.forces.clock is not clock
            raise RuntimeError("boom")
    assert sim.forces.clock is clock


def test_importing_the_schemes_leaves_the_decimal_context_alone():
    code = ("import decimal; before = decimal.getcontext().prec; "
            "import nbsymple_versions.core.schemes as s; "
            "assert s.SI6A.order == 6; print(before, decimal.getcontext().prec)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    before, after = out.stdout.split()
    assert before == after == "28"


# ------------------------------------------------------------------ a hunt of the API's valid edges

def _stepped(steps, **kwargs):
    sim = Simulation(make_cluster(64, seed=3), "A", "si6a", "dp", 1e-3)
    sim.step(steps, **kwargs)
    return sim


def _ctrl_c_inside_step_four(sim, on_step=None):
    """`sim.step(10, on_step)` (SI6A: 7 force evaluations a step) with a SIGINT sent from inside
    the fourth step's fourth evaluation; KeyboardInterrupt expected. The forces are `sim`'s again after."""
    import os
    import signal
    calls, forces = [0], sim.forces.accelerations

    def interrupted(x, acc):
        calls[0] += 1
        if calls[0] == 24:
            os.kill(os.getpid(), signal.SIGINT)
        forces(x, acc)
    sim.forces.accelerations = interrupted
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            sim.step(10, on_step)
    finally:
        signal.signal(signal.SIGINT, previous)
        sim.forces.accelerations = forces


def _cut_short_by_an_error(sim):
    """`sim.step(1)` whose first force evaluation raises (a device's error): the step is cut short.
    The forces are `sim`'s again after."""
    forces = sim.forces.accelerations

    def failing(x, acc):
        raise RuntimeError("a device's error")
    sim.forces.accelerations = failing
    try:
        with pytest.raises(RuntimeError):
            sim.step(1)
    finally:
        sim.forces.accelerations = forces


def test_a_ctrl_c_inside_a_step_stops_at_its_end_and_a_step_cut_short_goes_no_further():
    """A Ctrl-C in a notebook inside `step` left the bodies partway through a step, and the next
    `step` carried on from there (0.037 r_cl off after 5 steps). It now lands at the end of the
    step under way; a step cut short (an error inside it) is refused to go on."""
    sim = Simulation(make_cluster(64, seed=3), "A", "si6a", "dp", 1e-3)
    _ctrl_c_inside_step_four(sim)
    assert sim.steps_done == 4 and np.array_equal(sim.state.x, _stepped(4).state.x)
    sim.step(1)
    assert np.array_equal(sim.state.x, _stepped(5).state.x) and np.array_equal(sim.state.v, _stepped(5).state.v)
    _cut_short_by_an_error(sim)
    with pytest.raises(ValueError, match="step 6 was cut short"):
        sim.step(1)


def test_a_ctrl_c_lands_after_the_on_step_of_the_step_it_waited_for():
    """A Ctrl-C inside step 4 ended it and raised before its `on_step(4)`: stepping on, `on_step`
    saw steps 1, 2, 3, 5, 6, ... and never the fourth, which the bodies had made."""
    sim, seen = Simulation(make_cluster(64, seed=3), "A", "si6a", "dp", 1e-3), []
    _ctrl_c_inside_step_four(sim, lambda k: seen.append(sim.steps_done))
    sim.step(2, lambda k: seen.append(sim.steps_done))
    assert seen == [1, 2, 3, 4, 5, 6] and sim.steps_done == 6


def test_a_ctrl_c_after_the_last_step_before_its_handler_is_put_back_is_not_lost(monkeypatch):
    """A SIGINT that arrived after `step`'s last step, before the handler it had replaced was put
    back, was taken by the handler that holds Ctrl-C to the end of a step, and lost: `step`
    returned as if none came. It is raised, the steps whole."""
    import signal
    put_back = signal.signal

    def arriving_first(signum, handler):            # the signal lands just before the handler goes back
        if signum == signal.SIGINT and handler is signal.default_int_handler:
            signal.getsignal(signal.SIGINT)(signal.SIGINT, None)
        return put_back(signum, handler)
    sim = Simulation(make_cluster(64, seed=3), "A", "si6a", "dp", 1e-3)
    previous = put_back(signal.SIGINT, signal.default_int_handler)     # Python's own, as in a notebook
    monkeypatch.setattr(signal, "signal", arriving_first)
    try:
        with pytest.raises(KeyboardInterrupt):
            sim.step(3)
    finally:
        monkeypatch.undo()
        put_back(signal.SIGINT, previous)
    assert sim.steps_done == 3 and np.array_equal(sim.state.x, _stepped(3).state.x)
    sim.step(1)
    assert np.array_equal(sim.state.x, _stepped(4).state.x)


def test_no_record_is_taken_after_a_step_cut_short():
    """`record()` after a step cut short gave the count of the last whole step while the bodies
    stood partway through the next (SI6A: between two of its drifts), and `restore` took it: the
    run went on from there, off the uninterrupted one, with no error."""
    sim = _stepped(3)
    _cut_short_by_an_error(sim)
    with pytest.raises(ValueError, match="step 4 was cut short .* no record of a whole step can be taken"):
        sim.record()
    with pytest.raises(ValueError, match="step 4 was cut short"):
        sim.step(1)


def test_arrays_on_step_assigns_are_refused_between_steps_not_as_a_step_cut_short():
    """`on_step` assigning arrays the loop refuses (x and v one array) was refused inside the next
    step's call, which marked that step cut short though it never began: with the bodies put back,
    `step` still refused to go on, saying they stood partway through it."""
    sim = Simulation(make_cluster(64, seed=3), "A", "si6a", "dp", 1e-3)
    kept = {}

    def merge(k):
        if k == 2:
            kept["x"], sim.state.x = sim.state.x, sim.state.v
    with pytest.raises(ValueError, match="share memory"):
        sim.step(5, merge)
    assert sim.steps_done == 2
    sim.state.x = kept["x"]
    sim.step(3)
    assert np.array_equal(sim.state.x, _stepped(5).state.x) and np.array_equal(sim.state.v, _stepped(5).state.v)


def test_arrays_assigned_by_on_step_or_of_another_order_are_stepped_on():
    """`on_step` assigning a new `state.x` froze it for the rest of the call while t went on; a
    Fortran-ordered x or v given to `advance` stood still (sp) or raised numba's TypingError (dp)."""
    from nbsymple_versions import advance, get_scheme, get_version
    sim = Simulation(make_cluster(64, seed=3), "A", "si6a", "dp", 1e-3)
    sim.step(10, on_step=lambda k: setattr(sim.state, "x", sim.state.x.copy()) if k == 5 else None)
    assert np.array_equal(sim.state.x, _stepped(10).state.x)
    for precision in ("sp", "dp"):
        plain, odd = make_cluster(64, seed=1), make_cluster(64, seed=1)
        odd.x, odd.v = np.asfortranarray(odd.x), np.asfortranarray(odd.v)
        for s in (plain, odd):
            advance(s, get_version("A").pipeline(s, precision), get_scheme("leapfrog"), 1e-3, 10, np.zeros((3, 64)))
        assert np.array_equal(odd.x, plain.x) and np.array_equal(odd.v, plain.v), precision


def test_a_pipeline_of_other_masses_is_refused_and_precision_and_kernel_in_any_case():
    """`advance` took a pipeline built for other masses (same N, eps, units) in silence; the
    Python API refused "DP" and kernel "TILED", which the docs say it takes in any case.
    (`check_pipeline` compares such a pipeline's forces, which fail: tests/test_versions.py.)"""
    from nbsymple_versions import advance, get_scheme, get_version
    from nbsymple_versions.gpu_pairwise.options import check_backend, check_kernel
    a, c = make_cluster(64, seed=1), make_cluster(64, seed=1, mass_classes=5)
    with pytest.raises(ValueError, match=r"forces was built for N = 64, .*\(other masses\)"):
        advance(c, get_version("A").pipeline(a, "DP"), get_scheme("leapfrog"), 1e-3, 1, np.zeros((3, 64)))
    assert check_kernel("TILED") == "tiled" and check_backend("CuPy") == "cupy"


def test_a_pipeline_whose_state_had_its_masses_changed_in_place_is_refused():
    """A pipeline keeps copies of the masses it was built for; masses changed in the state's own
    array afterwards are other masses, and `advance` refuses the pipeline for them (a mutation
    hunt: the pipeline's record of its masses being the state's array itself passed every test,
    and the forces went on with the old masses in silence)."""
    from nbsymple_versions import advance, get_scheme, get_version
    state = make_cluster(64, seed=1)
    forces = get_version("A").pipeline(state, "dp")
    state.m[0] *= 2.0
    with pytest.raises(ValueError, match=r"forces was built for N = 64, .*\(other masses\)"):
        advance(state, forces, get_scheme("leapfrog"), 1e-3, 1, np.zeros((3, 64)))


def test_a_pipeline_of_another_softening_or_units_is_refused():
    """`advance` refuses a pipeline built for another softening or other units (same N and
    masses): its forces are another cluster's (a mutation hunt: either comparison dropped from
    `built_for` passed every test)."""
    import dataclasses

    from nbsymple_versions import Units, advance, get_scheme, get_version
    a = make_cluster(64, seed=1)
    for other in (dataclasses.replace(a.copy(), eps=2 * a.eps), dataclasses.replace(a.copy(), units=Units(5.0))):
        with pytest.raises(ValueError, match=r"forces was built for N = 64, eps = "):
            advance(other, get_version("A").pipeline(a, "dp"), get_scheme("leapfrog"), 1e-3, 1, np.zeros((3, 64)))


def test_a_scratch_array_that_is_the_positions_is_refused_after_a_plain_call():
    """`advance` remembers the last x, v, m and scratch it found apart, to skip the check on the
    next call; a call with the same x, v, m and x itself as the scratch is refused all the same
    (a mutation hunt: remembering x, v and m only let the forces overwrite the positions)."""
    from nbsymple_versions import advance, get_scheme, get_version
    state = make_cluster(16, seed=1)
    forces, scheme = get_version("A").pipeline(state, "dp"), get_scheme("leapfrog")
    advance(state, forces, scheme, 1e-3, 1, np.zeros_like(state.x))
    x = state.x.copy()
    with pytest.raises(ValueError, match="state.x and acc share memory"):
        advance(state, forces, scheme, 1e-3, 1, state.x)
    assert np.array_equal(state.x, x)


def test_units_records_and_seeds_are_plain_values():
    """Units of NumPy float32 computed their scales in float32 (equal to Units() all the same);
    a record's options aliased the simulation's own and kept the caller's spelling; RunSpec took
    a NumPy Generator as seed and failed late; `dataclasses.replace(RunSpec(resume=...),
    steps=40)` kept the first `given` and stopped at the checkpoint's step."""
    import dataclasses
    import json
    from nbsymple_versions import Units
    from nbsymple_versions.runs.errors import RunStop
    from nbsymple_versions.runs.spec import RunSpec
    u = Units(np.float32(10), np.float32(15360))
    assert type(u.r_cl_pc) is float and u.velocity_kms == Units().velocity_kms
    sim = Simulation(make_cluster(16, seed=1), "F", diagnostics=False, node_version="b")
    record = sim.record()
    assert record["options"] == {"node_version": "B"} and json.dumps(record)
    record["options"]["node_version"] = "E"
    assert sim.options == {"node_version": "B"}
    with pytest.raises(RunStop, match="--seed must be a whole number a run can record"):
        RunSpec(seed=np.random.default_rng(1))
    assert "steps" in dataclasses.replace(RunSpec(resume="a.ck"), steps=40).given


def test_a_lone_body_has_no_internal_energy_error_and_errors_need_diagnostics():
    """A lone body's internal energy error was 4e15 (its mean velocity m v / m rounded), not
    undefined; `undefined_reasons` of a simulation without diagnostics gave a false reason."""
    from nbsymple_versions import State
    b = make_cluster(40, seed=9)
    for i in range(10):
        s = State.from_arrays(b.positions[i:i + 1], b.velocities[i:i + 1], b.m[i:i + 1], eps=b.eps)
        sim = Simulation(s)
        sim.step(3)
        errors = sim.errors()
        assert errors["internal_energy_error"] is None, errors
        assert sim.undefined_reasons(errors)["internal_energy_error"] == "K_int0 + W0 = 0"
    quiet = Simulation(make_cluster(16, seed=1), diagnostics=False)
    with pytest.raises(ValueError, match="diagnostics=False"):
        quiet.undefined_reasons({"energy_error": None})


def test_a_restored_simulation_keeps_its_whole_clock_and_its_time_origin():
    """`Simulation.restore` carries the seconds and the calls of every task (per-call figures of a
    resumed run are its whole run's), and its time origin: a run started at t = 2.5 (from a
    snapshot) and restored after 2 steps goes on as the uninterrupted one, bit for bit (a mutation
    hunt: neither was checked; every resume test started at t = 0)."""
    state = make_cluster(32, seed=1)
    state.t = 2.5
    whole = Simulation(state.copy(), "A", "leapfrog", "dp", 1e-3)
    whole.step(3)
    part = Simulation(state.copy(), "A", "leapfrog", "dp", 1e-3)
    part.step(2)
    record = part.record()
    again = Simulation.restore(part.state.copy(), record)
    assert again.record()["clock"] == record["clock"]
    assert again.clock.calls == part.clock.calls and again.clock.seconds == part.clock.seconds
    again.step(1)
    assert again.state.t == whole.state.t == 2.5 + 3 * 1e-3
    assert np.array_equal(again.state.x, whole.state.x) and np.array_equal(again.state.v, whole.state.v)
