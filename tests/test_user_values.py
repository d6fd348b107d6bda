"""The Python API checks the user's values in one place (`core.checks`) and refuses a bad one
with one sentence that names the argument (issue 17); the commands keep the exit statuses their
docs promise (`profile` with nothing that can run: 2; `paper` with an artefact not written: 1)."""
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from nbsymple_versions import Simulation, State, add_black_hole, make_cluster, paper, place_on_orbit, uniform_sphere
from nbsymple_versions.core import checks
from nbsymple_versions.core.ics import salpeter_masses
from nbsymple_versions.versions import Version, get_version

from cli_call import call

FIXTURE = Path(__file__).parent / "data" / "asv_fixture"
REST = ([[850.0, 0, 0], [851.0, 0, 0]], [[0, 0, 0], [0, 0, 0]], [0.5, 0.5])


def refused(call_, *words):
    """`call_()` raises one ValueError sentence holding every word (and no leak from fractions)."""
    with pytest.raises(ValueError) as info:
        call_()
    text = str(info.value)
    assert "\n" not in text and "integer ratio" not in text, text
    for word in words:
        assert word in text, (word, text)
    return text


# ---------------------------------------------------------------------------- core.checks

@pytest.mark.parametrize("value", [2.7, True, "3", None, math.nan, math.inf, 1 + 0j, [3]])
def test_whole_number_refuses_what_is_not_one(value):
    refused(lambda: checks.whole_number(value, "n", 2), "n must be a whole number of at least 2")


@pytest.mark.parametrize("value, expected", [(3, 3), (np.int64(7), 7), (3.0, 3), (1e3, 1000), (np.float32(4), 4)])
def test_whole_number_takes_integers_and_integral_floats(value, expected):
    got = checks.whole_number(value, "n", 2)
    assert got == expected and type(got) is int


def test_whole_number_minimum():
    assert checks.whole_number(0, "steps", 0) == 0
    refused(lambda: checks.whole_number(-1, "steps", 0), "steps", "at least 0", "got -1")


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, "1.0", True, None])
def test_numbers_must_be_finite_real_numbers(value):
    refused(lambda: checks.finite_number(value, "t"), "t must be a finite number")
    refused(lambda: checks.positive_number(value, "dt"), "dt must be a positive finite number")


def test_positive_and_minimum():
    refused(lambda: checks.positive_number(0.0, "dt"), "dt", "positive")
    refused(lambda: checks.finite_number(-1.0, "radius_kpc", minimum=0.0), "radius_kpc", "at least 0")
    assert checks.positive_number(np.float64(2.5), "dt") == 2.5 and checks.finite_number(-3, "v") == -3.0


def test_finite_array_names_the_first_bad_entry():
    refused(lambda: checks.finite_array([[1.0, 2.0], [3.0, math.nan]], "x"), "x must be finite", "x[1, 1] is nan")
    refused(lambda: checks.finite_array([1.0, -2.0, 0.0], "m", positive=True), "positive and finite", "m[1] is -2.0")
    refused(lambda: checks.finite_array(np.zeros((2, 3)), "x", (3, None)), "x must have shape (3, N), got (2, 3)")
    refused(lambda: checks.finite_array([[1.0], [2.0, 3.0]], "x"), "real numbers", "ragged")
    refused(lambda: checks.finite_array(["a", "b"], "m"), "real numbers")
    refused(lambda: checks.finite_array([1 + 1j], "m"), "real numbers")


def test_finite_array_keeps_a_float64_array_as_it_is():
    a = np.arange(6.0).reshape(3, 2)
    assert checks.finite_array(a, "x", (3, None)) is a


def test_names_in_any_case_come_back_spelled_as_the_code_spells_them():
    assert checks.one_of("DP", ("sp", "dp", "dsp"), "precision") == "dp"
    assert checks.one_of("b", ("A", "B"), "version") == "B"
    refused(lambda: checks.one_of("hp", ("sp", "dp"), "precision"), "unknown precision 'hp'; choose one of sp, dp")
    refused(lambda: checks.one_of(3, ("A", "B"), "version"), "unknown version 3")


# ---------------------------------------------------------------------------- State

@pytest.mark.parametrize("where, words", [
    ("position", ("positions must be finite", "positions[0, 0] is nan")),
    ("velocity", ("velocities must be finite", "velocities[1, 2] is nan")),
    ("mass", ("masses must be positive and finite", "masses[0] is nan")),
])
def test_a_nan_is_refused_naming_its_argument(where, words):
    x, v, m = (np.array(a, dtype=float) for a in REST)
    {"position": lambda: x.__setitem__((0, 0), math.nan), "velocity": lambda: v.__setitem__((1, 2), math.nan),
     "mass": lambda: m.__setitem__(0, math.nan)}[where]()
    refused(lambda: State.from_arrays(x, v, m), *words)
    refused(lambda: State(np.array(x.T), np.array(v.T), m, 0.01), "must be")      # the (3, N) constructor too


@pytest.mark.parametrize("masses, words", [([0.0, 0.0], ("masses[0] is 0.0",)), ([-0.5, 1.5], ("masses[0] is -0.5",)),
                                           ([0.5, math.inf], ("masses[1] is inf",))])
def test_masses_must_be_positive(masses, words):
    refused(lambda: State.from_arrays(REST[0], REST[1], masses), "masses must be positive and finite", *words)


def test_no_bodies_and_bad_shapes():
    refused(lambda: State.from_arrays(np.zeros((0, 3)), np.zeros((0, 3)), []), "masses is empty", "at least one body")
    refused(lambda: State.from_arrays([[0, 0, 0]], REST[1], REST[2]), "positions must have shape (2, 3), got (1, 3)")
    refused(lambda: State(np.zeros((2, 3)), np.zeros((3, 2)), [1.0, 1.0], 0.1), "x must have shape (3, 2)")


@pytest.mark.parametrize("t", [math.nan, math.inf, "0"])
def test_time_must_be_finite(t):
    refused(lambda: State.from_arrays(*REST, t=t), "t must be a finite number")


@pytest.mark.parametrize("eps", [0.0, -1e-3, math.nan, "0.1"])
def test_softening_must_be_positive(eps):
    refused(lambda: State.from_arrays(*REST, eps=eps), "eps (the softening) must be a positive finite number")


def test_units_must_be_units():
    refused(lambda: State.from_arrays(*REST, units=(10.0, 15360.0)), "units must be a Units")


@pytest.mark.parametrize("r_cl_pc, mass_msun", [(10.0, 5e-324), (1e-300, 1e300), (1e300, 1e-300),
                                               (1e-200, 1.0), (1e150, 1e-150)])   # Galaxy acceleration scale 0, inf
def test_units_without_a_usable_scale_are_refused(r_cl_pc, mass_msun):
    """Positive and finite, but a velocity or time unit or a Galaxy scale of 0 or inf."""
    from nbsymple_versions import Units
    refused(lambda: Units(r_cl_pc, mass_msun), "zero or not finite", f"{mass_msun!r} Msun")
    refused(lambda: Units(10 ** 400, mass_msun), "cluster radius and mass must be positive and finite")   # no float


def test_a_lone_body_is_still_a_state():
    s = State.from_arrays([[850.0, 1, 2]], [[0, 0.3, 0]], [1.0], eps=1e-3)
    assert s.n == 1 and s.t == 0.0


# ---------------------------------------------------------------------------- initial conditions

@pytest.mark.parametrize("n", [2.7, True, "3", 1, math.nan])
def test_make_cluster_refuses_what_is_not_a_number_of_bodies(n):
    refused(lambda: make_cluster(n, seed=1), "n (the number of bodies) must be a whole number of at least 2")


def test_make_cluster_takes_an_integral_float():
    assert np.array_equal(make_cluster(16.0, seed=3).x, make_cluster(16, seed=3).x)


@pytest.mark.parametrize("kwargs, words", [
    ({"radius_kpc": math.nan}, ("radius_kpc must be a finite number of at least 0", "nan")),
    ({"radius_kpc": -1.0}, ("radius_kpc", "at least 0")),
    ({"speed_kms": math.inf}, ("speed_kms must be a finite number",)),
    ({"virial_ratio": math.nan}, ("virial_ratio must be a finite number of at least 0",)),
    ({"virial_ratio": -0.1}, ("virial_ratio",)),          # 0 is taken: a cold collapse (a hunt)
    ({"eps": -1.0}, ("eps (the softening) must be a positive finite number",)),
    ({"mass_classes": 2.7}, ("mass_classes (the number of mass classes) must be a whole number of at least 1",)),
    ({"radius_kpc": 1e308}, ("radius_kpc = 1e+308 kpc is beyond float64's range",)),   # placed beyond float64
])
def test_make_cluster_refuses_bad_arguments(kwargs, words):
    refused(lambda: make_cluster(10, seed=1, **kwargs), *words)


def test_a_cold_collapse_starts_at_rest():
    """A hunt: `virial_ratio=0`, a cold collapse, a standard start, was refused."""
    state = make_cluster(16, seed=1, radius_kpc=None, virial_ratio=0)
    assert not state.v.any() and state.x.any()


def test_the_other_builders_check_their_arguments():
    refused(lambda: uniform_sphere(10, 1, virial_ratio="0.3"), "virial_ratio")
    refused(lambda: place_on_orbit(uniform_sphere(10, 1), None), "radius_kpc")
    s = make_cluster(10, seed=1)
    refused(lambda: add_black_hole(s, math.nan), "mass (of the black hole) must be a positive finite number")
    refused(lambda: add_black_hole(s, -1.0), "mass (of the black hole)")
    refused(lambda: add_black_hole(s, 1.0, position=(1, 2)), "position (of the black hole) must have shape (3,)")
    refused(lambda: add_black_hole(s, 1.0, velocity=(0, math.inf, 0)), "velocity (of the black hole) must be finite")
    refused(lambda: salpeter_masses(100, True), "mass_classes")


# ---------------------------------------------------------------------------- Simulation

def test_names_are_taken_in_any_case_and_kept_in_the_codes_spelling():
    sim = Simulation(make_cluster(8, seed=1), version="b", scheme="SI6A", precision="DP", diagnostics=False)
    assert (sim.version.letter, sim.scheme.name, sim.precision) == ("B", "si6a", "dp")
    record = sim.record()
    assert (record["version"], record["scheme"], record["precision"]) == ("B", "si6a", "dp")
    assert get_version("e").letter == "E"


def test_same_numbers_whatever_the_case():
    a = Simulation(make_cluster(16, seed=2), "A", "si6a", "dsp", 1e-3)
    b = Simulation(make_cluster(16, seed=2), "a", "Si6A", "DSP", 1e-3)
    a.step(5)
    b.step(5)
    assert np.array_equal(a.state.x, b.state.x) and a.errors() == b.errors()


@pytest.mark.parametrize("kwargs, words", [
    ({"precision": "hp"}, ("unknown precision 'hp'; choose one of sp, dp, dsp",)),
    ({"scheme": "rk4"}, ("unknown scheme 'rk4'; choose one of leapfrog, si6a",)),
    ({"version": "Q"}, ("unknown version 'Q'; choose one of A, B, C, D, E, F",)),
    ({"dt": "0.01"}, ("dt (the time step) must be a positive finite number",)),
    ({"dt": math.nan}, ("dt (the time step)",)),
    ({"dt": 0.0}, ("dt (the time step)",)),
])
def test_simulation_refuses_bad_settings(kwargs, words):
    refused(lambda: Simulation(make_cluster(8, seed=1), diagnostics=False, **kwargs), *words)


@pytest.mark.parametrize("steps", [2.7, True, -1, "3"])
def test_steps_must_be_a_whole_number(steps):
    sim = Simulation(make_cluster(8, seed=1), diagnostics=False)
    refused(lambda: sim.step(steps), "steps must be a whole number of at least 0")
    assert sim.steps_done == 0


# ---------------------------------------------------------------------------- the commands' statuses

def test_profile_with_nothing_that_can_run_is_one_sentence_status_2(monkeypatch):
    monkeypatch.setattr(Version, "available", lambda self, backend=None: (False, "not on this test's machine"))
    rc, out, err = call(["profile", "--versions", "AB", "--n", "32", "--steps", "1"])
    assert rc == 2 and out == "", (out, err)
    assert err.strip().splitlines() == ["nbsymple profile: none of the versions asked for can run here "
                                        "(A, B: not on this test's machine)"]


def test_profile_with_one_that_can_run_still_profiles_it(monkeypatch):
    real = Version.available
    monkeypatch.setattr(Version, "available",
                        lambda self, backend=None: (False, "not here") if self.letter == "B" else real(self, backend))
    rc, out, err = call(["profile", "--versions", "AB", "--n", "32", "--steps", "1", "--json"])
    assert rc == 0, err
    assert [r["version"] for r in json.loads(out)] == ["A"] and "B: not available: not here" in err


def test_profile_needs_a_letter():
    rc, out, err = call(["profile", "--versions", ""])
    assert rc == 2 and "--versions needs at least one letter" in err


def test_paper_exits_1_naming_what_it_did_not_write(tmp_path, capsys):
    """Results without the conservation benchmarks: conservation.md cannot be made; the rest is
    written, and the last line names it with status 1 (docs/paper.md)."""
    results = tmp_path / "results"
    shutil.copytree(FIXTURE, results)
    path = next(p for p in results.glob("*/*.json") if p.name != "machine.json")
    d = json.loads(path.read_text())
    d["results"] = {k: v for k, v in d["results"].items() if not k.startswith("accuracy.Conservation")}
    path.write_text(json.dumps(d))
    out = tmp_path / "plots"
    rc = paper.main(["--results", str(results), "--out", str(out), "--no-science", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1, err
    assert err[-1] == ("nbsymple paper: 1 of the artefacts asked for was not written (conservation.md; "
                       "REPORT.md's notes say why), so the status is 1.")
    assert not (out / "conservation.md").exists() and (out / "time_per_step.png").exists()
    assert "conservation.md not written" in (out / "REPORT.md").read_text()


def test_validate_takes_the_precision_in_any_case():
    """As `Version.pipeline` does: 'DP' is dp, checked at 8.5 kpc to dp's tolerance (a review: it was a
    cluster at the origin, then a KeyError); an unknown one is one sentence."""
    from nbsymple_versions.validation import TOLERANCE, validate
    check = validate("a", "DP", n=64, seed=1)
    assert (check.version, check.precision, check.tolerance, check.passed) == ("A", "dp", TOLERANCE["dp"], True)
    refused(lambda: validate("A", "qp", n=64, seed=1), "unknown precision")


def test_a_version_options_refusal_names_its_flag():
    """A version's own option refused by its check names the flag that gave it (a mutation hunt)."""
    rc, out, err = call(["run", "--version", "C", "--tile", "33", "--n", "16", "--steps", "1"])
    assert rc == 2 and out == "" and err == ("nbsymple run: tile must be a power of two between 32 and 1024 (threads "
                                             "per block), got 33 (--tile)\n"), err


def test_profile_of_one_version_that_cannot_run_is_status_2(monkeypatch):
    """One version asked for, none that can run: status 2, as for several (a mutation hunt)."""
    monkeypatch.setattr(Version, "available", lambda self, backend=None: (False, "not on this test's machine"))
    rc, out, err = call(["profile", "--versions", "A", "--n", "32", "--steps", "1"])
    assert rc == 2 and out == "" and err == ("nbsymple profile: none of the versions asked for can run here "
                                             "(A: not on this test's machine)\n"), err


def test_check_gives_each_version_only_its_own_options_and_fails_with_status_1(monkeypatch):
    """`check --gpu-kernel plain` checks the CPU versions too, which take no such option; a check
    that fails is status 1, counted on stderr; without --n, N is 1000 (a mutation hunt)."""
    from nbsymple_versions import validation
    rc, out, err = call(["check", "--n", "16", "--seed", "1", "--gpu-kernel", "plain", "--json"])
    assert rc == 0 and {"A", "B"} <= {r["version"] for r in json.loads(out)}, err
    monkeypatch.setitem(validation.TOLERANCE, "sp", 1e-300)
    rc, out, err = call(["check", "--seed", "1", "--json"])
    rows = json.loads(out)
    failed = [r for r in rows if not r["pass"]]
    assert rc == 1 and {r["precision"] for r in failed} == {"sp"} and {r["n"] for r in rows} == {1000}, err
    assert err == f"nbsymple check: {len(failed)} of {len(rows)} checks failed\n"


def test_a_zero_scale_is_refused_as_it_is_parsed():
    """--dt 0 and --ics-mass 0 are refused by their flags' parsing, which points to --help (a
    mutation hunt: a bound that let 0 through left it to the run's later sentence)."""
    for flag in ("--dt", "--ics-mass"):
        assert call(["run", flag, "0"]) == (2, "", f"nbsymple run: argument {flag}: must be positive and finite, got 0 "
                                                   "(see nbsymple run --help)\n")
