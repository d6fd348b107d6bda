"""Degenerate but finite bodies (issue 17): every figure is a number or an explicit undefined
(None in Python, null in JSON, "undefined (L0 = 0)" in the text), the diagnostics do not
overflow on any state whose float64 energies are finite, bodies whose energies cannot be
represented are refused in one sentence, and a checkpoint header is strict JSON."""
from fractions import Fraction
import hashlib
import json
import math
import re
import warnings

from hypothesis import given, strategies as st
from numba import njit
import numpy as np
import pytest

from nbsymple_versions import Simulation, State, Units, make_cluster
from nbsymple_versions.runs import checkpoint
from nbsymple_versions.core import diagnostics as dg, reference
from nbsymple_versions.serial import avx2, kernels
from nbsymple_versions.simulation import least_softening, softening_problem

from cli_call import call
from drawn import hostile

AT_REST = ([[850.0, 0, 0], [851.0, 0, 0]], [[0, 0, 0], [0, 0, 0]], [0.5, 0.5])


def strict_json(text: str):
    return json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} is not JSON"))


def ics(tmp_path, rows, name="bodies.txt"):
    path = tmp_path / name
    path.write_text("".join(" ".join(map(str, r)) + "\n" for r in rows))
    return path


# ---------------------------------------------------------------------------- zero references

def test_bodies_at_rest_have_no_angular_momentum_error():
    sim = Simulation(State.from_arrays(*AT_REST), "A", dt=1e-3)
    sim.step(3)
    errors = sim.errors()
    assert errors["angular_momentum_error"] is None and sim.angular_momentum_error() is None
    assert all(isinstance(errors[k], float) and math.isfinite(errors[k])
               for k in ("energy_error", "internal_energy_error"))
    assert sim.undefined_reasons(errors) == {"angular_momentum_error": "L0 = 0"}


def test_a_lone_body_has_no_internal_energy_error():
    sim = Simulation(State.from_arrays([[850.0, 1, 2]], [[0, 0.3, 0]], [1.0], eps=1e-3), "A", dt=1e-3)
    sim.step(2)
    errors = sim.errors()
    assert errors["internal_energy_error"] is None and isinstance(errors["energy_error"], float)
    assert sim.undefined_reasons(errors) == {"internal_energy_error": "K_int0 + W0 = 0"}


def test_relative_errors_with_a_zero_or_unrepresentable_reference_are_none():
    assert dg.relative_error(1.0, 0.0) is None
    assert dg.relative_error([1.0, 2.0, 3.0], [0.0, 0.0, 0.0]) is None
    assert dg.relative_error(1.0, math.inf) is None and dg.relative_error(math.nan, 1.0) is None
    assert dg.relative_error(1e300, 1e-300) is None                   # the quotient overflows
    assert dg.angular_momentum_error([0, 0, 1.0], [0, 0, 0]) is None
    assert dg.undefined_reason([0.0, 0.0, 0.0], "L0") == "L0 = 0"
    assert dg.undefined_reason([0.0, math.nan, 1.0], "L0") == "L0 is not representable in float64"
    assert dg.undefined_reason(1.0, "E0") == "the change is not representable in float64"


def test_the_ordinary_figures_are_numpys_bit_for_bit(rng):
    """Where squares stay normal float64 the errors are the old formula's, bit for bit."""
    for _ in range(200):
        scale = 10.0 ** rng.uniform(-100, 100)
        v, i = rng.normal(size=3) * scale, rng.normal(size=3) * scale
        assert dg.relative_error(v, i) == float(np.linalg.norm(v - i) / np.linalg.norm(i))
        assert dg.angular_momentum_error(v, i) == float(abs(v[2] - i[2]) / np.linalg.norm(i))
        assert dg.relative_error(v[0], i[0]) == float(np.linalg.norm(v[0] - i[0]) / np.linalg.norm(i[0]))


def test_tiny_masses_give_numbers_not_nan():
    """Masses of 1e-200: |E0| ~ 1e-197, whose square underflows; the error is |E - E0| / |E0|
    exactly as the floats give it."""
    s = State.from_arrays([[850.0, 0, 0], [851.0, 0, 0]], [[0, 85.0, 0], [0, 86.0, 0]], [1e-200, 1e-200])
    sim = Simulation(s, "A", dt=0.05)
    sim.step(50)
    e = sim.energy()
    want = float(abs(Fraction(e) - Fraction(sim.energy0)) / abs(Fraction(sim.energy0)))
    assert sim.energy_error() == pytest.approx(want, rel=1e-15, abs=0) and want > 0
    assert all(isinstance(v, float) and math.isfinite(v) for v in sim.errors().values())


# ---------------------------------------------------------------------------- refused up front

@pytest.mark.parametrize("rows, words", [
    ([[1e300, 0, 0, 0, 85, 0, 0.5], [851, 0, 0, 0, 86, 0, 0.5]], "body 0's position has a component of 1e+300"),
    ([[850, 0, 0, 0, 85, 0, 0.5], [851, 0, 0, 0, 1e200, 0, 0.5]], "body 1's velocity has a component of 1e+200"),
    ([[850, 0, 0, 0, 85, 0, 1e200], [851, 0, 0, 0, 86, 0, 1e200]],
     "energies cannot be represented in float64 (W = -inf"),
    ([[850, 0, 0, 0, 1e150, 0, 1e10], [851, 0, 0, 0, 86, 0, 0.5]], "kinetic energy is beyond float64's range (body 0"),
    ([[0, 0, 0, 0, 85, 0, 0.5], [2e19, 0, 0, 0, 86, 0, 0.5]], "the bodies span 2e+19 (their bounding box's diagonal)"),
    ([[0, 0, 0, 0, 85, 0, 0.5], [1.5e19, 1.5e19, 0, 0, 86, 0, 0.5]], "the bodies span 2.12e+19 (their bounding box's"),
])
def test_bodies_whose_energies_cannot_be_represented_are_refused(tmp_path, rows, words):
    """Energies beyond float64, and bodies farther apart than float32's r^2 reaches (1.84e19,
    for every precision: found on a Zen 1, where two bodies 1e20 apart gave NaN at step 1)."""
    x, v, m = (np.array(rows, dtype=float)[:, k] for k in (slice(0, 3), slice(3, 6), 6))
    with pytest.raises(ValueError, match=re.escape(words)) as info:
        Simulation(State.from_arrays(x, v, m), "A")
    assert "\n" not in str(info.value)
    for steps in ("0", "3"):                                # even at --steps 0; nothing written
        rc, out, err = call(["run", "--ics", ics(tmp_path, rows), "--ics-mass", "15360", "--steps", steps, "--json",
                             "--checkpoint", tmp_path / "c.ck"])
        lines = [ln for ln in err.splitlines() if "masses in" not in ln]      # the sum-to-1 warning
        assert rc == 2 and out == "" and len(lines) == 1 and words in lines[0], err
        assert not (tmp_path / "c.ck").exists()


# ---------------------------------------------------------------------------- the diagnostics never raise

LIMIT = dg.COMPONENT_LIMIT
component = st.sampled_from([0.0, 1e-300, 1e-150, 1e-3, 1.0, 850.0, 1e50, 1e150, LIMIT / 2, LIMIT]).flatmap(
    lambda a: st.sampled_from([a, -a, 0.7 * a]))
mass = st.sampled_from([1e-300, 1e-200, 1e-30, 0.5, 1.0, 1e30, 1e150, 1e300])


@pytest.mark.parametrize("precision, heaviest", [("sp", 1 / 16), ("dsp", 1 / 16), ("dp", 1 / 16), ("sp", 1e33),
                                                ("dsp", 1e36), ("dp", 1e36)])
def test_a_softening_too_small_for_the_precision_is_refused(precision, heaviest):
    """Below `least_softening` (for masses <= 1: 1.43e-13 for sp and dsp, whose r^-3 at r = eps
    would exceed float32, and for heavier ones m^(1/3) times that; 1.09e-19 for dp, whose eps^2
    would be below the float32 estimate's range) every body would be NaN at the first step.
    Such an eps is refused in one sentence naming it and the bound; 2 % above the bound, the
    steps are finite."""
    least = least_softening(precision, heaviest)
    term = "m r^-3" if heaviest > 1 else "r^-3"
    edge = ("eps^2 is below the smallest normal float32" if precision == "dp" else
            f"{term} at r = eps exceeds the range of float32, which {precision} computes in")
    x, v = make_cluster(16, seed=1).x.T, make_cluster(16, seed=1).v.T
    for version in "AB":
        for eps, refused in ((0.98 * least / 1.001, True), (1.02 * least / 1.001, False)):
            state = State.from_arrays(x, v, np.full(16, heaviest), eps=eps)
            if refused:
                words = rf"softening eps = .* is below {least:.3g}.*, under which {re.escape(edge)}"
                with pytest.raises(ValueError, match=words):
                    Simulation(state, version, precision=precision, dt=1e-30)
                continue
            sim = Simulation(state, version, precision=precision, dt=1e-30)
            sim.step(2)
            assert np.isfinite(sim.state.x).all() and np.isfinite(sim.state.v).all()
    if precision != "dp":
        assert "mass of 1e+39 is beyond the range of float32" in softening_problem(1.0, precision, 1e39)


def test_a_position_whose_square_in_kpc_leaves_float64_is_refused_in_large_cluster_units():
    """With r_cl = 10 kpc a coordinate in kpc is 10 in cluster radii, and the Galaxy's terms
    square it: bodies at 2e154 cluster radii are refused at a tenth of the limit (2.4e152), in
    one sentence; at 1e152 every error is a number (a mutation hunt: the limit scaled the wrong
    way took the bodies, and their internal energy error was None for no reason it could name)."""
    units = Units(1e4, 15360.0)
    for x0, refused in ((2e154, True), (1e152, False)):
        state = State.from_arrays([[x0, 0, 0], [x0, 1.0, 0]], [[0, 0, 0], [0, 0.1, 0]], [0.5, 0.5], eps=1e-3,
                                  units=units)
        if refused:
            with pytest.raises(ValueError, match=r"^body 0's position has a component of 2e\+154, beyond the "
                                                 r"2\.4e\+152 up to which float64 holds the squares"):
                Simulation(state, "A", dt=1e-3)
            continue
        sim = Simulation(state, "A", dt=1e-3)
        sim.step(2)
        assert all(isinstance(v, float) and math.isfinite(v) for v in sim.errors().values()), sim.errors()


def test_heavy_bodies_far_out_whose_mass_weighted_sum_overflows_have_finite_energies():
    """Two bodies of mass 1e155 at x = 2e153, one apart (eps = 1e10): sum_i m_i x_i overflows
    float64, but their mean position, W = -1e300 and E are finite; the simulation takes them and
    its errors are numbers (a mutation hunt: the mean as sum_i m_i x_i / M alone, inf, passed
    every test and refused the bodies as having energies float64 cannot represent)."""
    state = State.from_arrays([[2e153, 0, 0], [2e153, 1.0, 0]], [[0, 0, 0], [0, 0, 0]], [1e155, 1e155], eps=1e10)
    parts = dg.energy_parts(state)
    assert parts.finite and parts.base == (2e153, 0.5, 0.0) and parts.potential == pytest.approx(-1e300, rel=1e-15)
    sim = Simulation(state, "A", dt=1e-70)
    sim.step(2)
    errors = sim.errors()
    assert errors["energy_error"] == 0.0 and 0 <= errors["internal_energy_error"] < 1e-30, errors


@pytest.mark.parametrize("precision", ["sp", "dsp", "dp"])
def test_a_softening_beyond_float32s_r2_is_refused_however_close_the_bodies(precision):
    """Every precision takes r^-3 from r^2 + eps^2 in float32 (dp: its float32 estimate of 1/r):
    bodies 1 apart with eps = 2e19, whose eps^2 leaves float32's range, are refused in one
    sentence naming the softening, as bodies that far apart are; at eps = 1e19 they step (a
    mutation hunt: the bodies' span alone compared with the bound passed every test)."""
    x, v, m = [[0.0, 0, 0], [1.0, 0, 0]], [[0.0, 0, 0], [0, 0, 0]], [0.5, 0.5]
    with pytest.raises(ValueError, match=r"^the bodies span 1 \(their bounding box's diagonal\) with softening "
                                         r"eps = 2e\+19, beyond 1\.84e\+19"):
        Simulation(State.from_arrays(x, v, m, eps=2e19), "A", precision=precision)
    sim = Simulation(State.from_arrays(x, v, m, eps=1e19), "A", precision=precision)
    sim.step(1)
    assert np.isfinite(sim.state.x).all() and np.isfinite(sim.state.v).all()


@pytest.mark.parametrize("precision", ["sp", "dsp", "dp"])
def test_positions_beyond_float32_are_refused_where_the_precision_holds_them_in_float32(precision):
    """sp and dsp hold positions in float32 (dsp its high word): a cluster 1e39 from the Galactic
    centre gave NaN at step 1 in both. Such bodies are refused in one sentence naming a body and
    the way out; dp steps them."""
    c = make_cluster(16, seed=1)
    x = c.x.T.copy()
    x[:, 0] += 1e39
    state = State.from_arrays(x, c.v.T, c.m, eps=c.eps)
    if precision == "dp":
        sim = Simulation(state, "A", precision=precision)
        sim.step(1)
        assert np.isfinite(sim.state.x).all() and np.isfinite(sim.state.v).all()
        return
    with pytest.raises(ValueError, match=rf"^body \d+'s position has a component of 1e\+39, beyond the range of "
                                         rf"float32, which {precision} computes in: use precision dp$"):
        Simulation(state, "A", precision=precision)


@pytest.mark.parametrize("kernel", ["numba's loop", "the AVX2 row"])
def test_dp_from_a_float32_estimate_needs_the_dp_bound(kernel):
    """The float32-seeded dp loop (A's and B's without AVX-512, but on `DIVIDER_CPUS`; the GPUs'
    route too) and the AVX2 row (half its lanes), compiled here whatever the host: at eps = 1e-30,
    which float64's range alone would allow, r^2 = eps^2 flushes to a float32 zero and the
    accelerations are NaN; 2 % above `least_softening("dp")` they match the float64 reference.
    Found on a Zen 1 (AVX2), where A and B took eps = 1.8e-103 and gave NaN at the first step."""
    if kernel == "the AVX2 row":
        source = kernels._pairwise_words_source(avx2.pairwise_row("dp"))
    else:
        source = kernels._pairwise_source(np.float64, *map(kernels._device_function, (
            kernels._separation, kernels._inverse_cube_dp, kernels._times)))
    loop = njit(fastmath=True, error_model="numpy")(source)
    x = make_cluster(16, seed=1).x
    for eps, finite in ((1e-30, False), (1.02 * least_softening("dp") / 1.001, True)):
        a = np.zeros((3, 16))
        loop(*x, *x, np.full(16, 1 / 16), eps * eps, 0, *a)
        assert np.isfinite(a).all() == finite, (eps, a)
    want = reference.pairwise_acceleration(x.T, np.full(16, 1 / 16), eps).T
    assert np.abs(a - want).max() < 1e-12 * np.abs(want).max()
    assert "dp" in softening_problem(1e-30, "dp") and softening_problem(1.1e-19, "dp") is None


@hostile(300, commands=False)
@given(st.integers(1, 3).flatmap(lambda n: st.tuples(st.lists(component, min_size=3 * n, max_size=3 * n),
                                                     st.lists(component, min_size=3 * n, max_size=3 * n),
                                                     st.lists(mass, min_size=n, max_size=n))))
def test_the_diagnostics_never_raise_or_warn_and_give_numbers_or_none(bodies):
    x, v, m = bodies
    n = len(m)
    state = State.from_arrays(np.reshape(x, (n, 3)), np.reshape(v, (n, 3)), m, eps=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        problem = dg.energy_problem(state)
        parts0 = dg.energy_parts(state)
        moved = state.copy()
        moved.v *= 0.5
        parts = dg.energy_parts(moved)
        if problem is None and parts0.finite:
            assert parts.finite, parts
        figures = [dg.relative_error(parts.total, parts0.total), dg.internal_energy_error(parts, parts0, state.units),
                   dg.angular_momentum_error(dg.angular_momentum(moved), dg.angular_momentum(state))]
    for f in figures:
        assert f is None or (isinstance(f, float) and math.isfinite(f)), figures


# ---------------------------------------------------------------------------- the command and checkpoints

def test_the_command_prints_undefined_and_null(tmp_path):
    rows = [[850, 0, 0, 0, 0, 0, 0.5], [851, 0, 0, 0, 0, 0, 0.5]]
    rc, out, err = call(["run", "--ics", ics(tmp_path, rows), "--ics-mass", "15360", "--steps", "3", "--dt", "0.01"])
    assert rc == 0, err
    assert "angular momentum error  undefined (L0 = 0)" in out and "nan" not in out
    rc, out, err = call(["run", "--ics", ics(tmp_path, rows), "--ics-mass", "15360", "--steps", "3", "--dt", "0.01",
                         "--json"])
    assert rc == 0, err
    result = strict_json(out)
    assert result["angular_momentum_error"] is None and result["undefined"] == {"angular_momentum_error": "L0 = 0"}
    assert isinstance(result["energy_error"], float) and isinstance(result["internal_energy_error"], float)


def test_ordinary_runs_have_no_undefined_figures():
    rc, out, err = call(["run", "--n", "16", "--steps", "2", "--seed", "1", "--json"])
    result = strict_json(out)
    assert rc == 0 and result["undefined"] == {} and all(
        isinstance(result[k], float) for k in ("energy_error", "internal_energy_error", "angular_momentum_error"))


def test_an_angular_momentum_beyond_float64_is_checkpointed_as_null_and_resumed(tmp_path):
    """A heavy body far out and a light one beside it: energies finite, L0 = inf (4e308). The
    checkpoint holds null for it; the resumed run reports the same undefined figure."""
    rows = [[4e34, 0, 0, 0, 1e34, 0, 1e240], [4.000000000000001e34, 0, 0, 0, 0, 0, 1e-300]]
    ck = tmp_path / "big.ck"
    rc, out, err = call(["run", "--ics", ics(tmp_path, rows), "--ics-mass", "15360", "--steps", "0", "--checkpoint", ck,
                         "--json"])
    assert rc == 0, err
    first = strict_json(out)
    assert first["angular_momentum_error"] is None
    assert first["undefined"] == {"angular_momentum_error": "L0 is not representable in float64"}
    _, record, _ = checkpoint.load(ck)
    assert record["angular_momentum0"] == [0.0, 0.0, None]
    rc, out, err = call(["run", "--resume", ck, "--json"])
    assert rc == 0, err
    again = strict_json(out)
    assert {k: again[k] for k in ("energy_error", "internal_energy_error", "angular_momentum_error", "undefined")} == \
           {k: first[k] for k in ("energy_error", "internal_energy_error", "angular_momentum_error", "undefined")}


def test_a_checkpoint_header_with_nan_is_refused(tmp_path):
    sim = Simulation(make_cluster(8, seed=1), "A", dt=1e-3)
    path = checkpoint.save(tmp_path / "c.ck", {"n": 8}, sim)
    data = path.read_bytes()
    start = len(checkpoint.MAGIC) + checkpoint._PREFIX.size
    _, head_len = checkpoint._PREFIX.unpack(data[len(checkpoint.MAGIC):start])
    header = json.loads(data[start:start + head_len])
    header["state"]["t"] = math.nan
    head = json.dumps(header).encode()
    assert b"NaN" in head
    body = checkpoint.MAGIC + checkpoint._PREFIX.pack(checkpoint.FORMAT, len(head)) + head + data[start + head_len:-32]
    bad = tmp_path / "nan.ck"
    bad.write_bytes(body + hashlib.sha256(body).digest())
    with pytest.raises(checkpoint.CheckpointError, match="holds NaN, which JSON does not allow"):
        checkpoint.load(bad)
    rc, out, err = call(["run", "--resume", bad])
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "nan.ck" in err


def test_a_lone_body_whose_mean_velocity_rounds_has_no_internal_energy():
    """One body of a mass (0.1) whose m v / m rounds (v = 0.7, 86.7): it is its own centre, so
    K_int = W = 0 exactly and the internal energy error is undefined (None), never a number (a
    mutation hunt: the lone-body branch off passed the tests, whose bodies' m v / m was exact)."""
    from nbsymple_versions.core import diagnostics
    from nbsymple_versions.core.ics import State
    s = State.from_arrays([[850.1, 0.1, 0.7]], [[0.7, 86.7, 0.1]], [0.1], eps=1e-3)
    parts = diagnostics.energy_parts(s)
    assert parts.base == tuple(s.x[:, 0]) and parts.velocity == tuple(s.v[:, 0])
    assert parts.kinetic_internal == 0.0 and parts.potential == 0.0 and parts.internal == 0.0
    assert diagnostics.internal_energy_error(parts, parts) is None
