"""The authors' N = 480 example, like for like: started from their own `sixth0.txt` with their
constants (`--constants authors`), nbsymple ends after 100 SI6A steps where their code, run in
double, ends (tests/data/authors: the fixture and how it was made)."""
import json
from pathlib import Path

import numpy as np
import pytest

from cli_call import call
from nbsymple_versions.core.units import Units
from nbsymple_versions.runs.authors_format import read_nbsymple
from nbsymple_versions.runs.snapshots import read_snapshot

DATA = Path(__file__).parent / "data" / "authors"
STEPS, DT = 100, 1e-3
POSITION_TOLERANCE = 1e-9                   # cluster radii
VELOCITY_TOLERANCE = POSITION_TOLERANCE / (STEPS * DT)   # velocity units: 1e-9 r_cl over the run's 0.1 T


def _run(tmp_path, constants):
    """The command of the issue, with `constants`: (JSON report, last state)."""
    folder = tmp_path / constants
    rc, out, err = call(["run", "--ics", DATA / "sixth0.txt", "--ics-mass", "480", "--constants", constants,
                         "--scheme", "si6a", "--precision", "dp", "--dt", DT, "--steps", STEPS, "--json",
                         "--snapshots", folder, "--every", STEPS])
    assert rc == 0, err
    state, step = read_snapshot(folder / f"snap_{STEPS:08d}.npz")
    assert step == STEPS
    return json.loads(out), state


def _deviation(state, theirs):
    return (float(np.abs(state.positions - theirs.positions).max()),
            float(np.abs(state.velocities - theirs.velocities).max()))


def test_with_their_constants_nbsymple_ends_where_their_code_ends(tmp_path):
    theirs = read_nbsymple(DATA / "after_100_steps.txt", Units(10.0, 480.0, "authors"))
    report, state = _run(tmp_path, "authors")
    assert report["constants"] == "authors" and state.units == Units(10.0, 480.0, "authors")
    assert np.array_equal(state.m, theirs.m)
    dx, dv = _deviation(state, theirs)
    print(f"after {STEPS} steps: max |dx| = {dx:.2e} r_cl, max |dv| = {dv:.2e} v_u (authors' constants)")
    assert dx < POSITION_TOLERANCE and dv < VELOCITY_TOLERANCE
    # the run moved the cluster 48 r_cl along its orbit: the agreement is not that of a state at rest
    start = read_nbsymple(DATA / "sixth0.txt", Units(10.0, 480.0))
    assert np.abs(theirs.positions - start.positions).max() > 10.0


def test_the_python_api_path_ends_there_too():
    """The same run from Python: the constants live in the state's units."""
    from nbsymple_versions import Simulation
    theirs = read_nbsymple(DATA / "after_100_steps.txt", Units(10.0, 480.0, "authors"))
    sim = Simulation(read_nbsymple(DATA / "sixth0.txt", Units(10.0, 480.0, constants="authors")), "B", "si6a", "dp",
                     dt=DT, diagnostics=False)
    sim.step(STEPS)
    dx, dv = _deviation(sim.state, theirs)
    assert dx < POSITION_TOLERANCE and dv < VELOCITY_TOLERANCE


def test_with_the_exact_constants_the_galaxy_is_heavier_and_the_run_ends_elsewhere(tmp_path):
    """Allen & Santillan's mass unit (10 km/s)^2 kpc / G = 2.3251e7 Msun against their code's
    2.32e7: the Galaxy 0.22 % heavier pulls the cluster 3e-3 r_cl away in 0.1 T."""
    theirs = read_nbsymple(DATA / "after_100_steps.txt", Units(10.0, 480.0, "authors"))
    report, state = _run(tmp_path, "exact")
    assert report["constants"] == "exact"
    dx, _ = _deviation(state, theirs)
    print(f"after {STEPS} steps: max |dx| = {dx:.2e} r_cl (exact constants)")
    assert dx == pytest.approx(3.0e-3, rel=0.05)


# ============================================================================== the constants, recorded

def test_the_two_sets_of_constants():
    exact, authors = Units(10.0, 480.0), Units(10.0, 480.0, "authors")
    assert exact.galaxy_mass_unit_msun == pytest.approx(2.3251e7, rel=1e-4) and authors.galaxy_mass_unit_msun == 2.32e7
    assert authors.velocity_kms / exact.velocity_kms == pytest.approx(1 - 3.2e-5, abs=1e-6)     # their G, 6e-5 lower
    # their kernel's bulge mass in cluster units, 1.40592e10 Msun / M, from AS91's 606 mass units
    assert 606.0 * authors.galaxy_acceleration_scale / authors.galaxy_length_scale ** 2 == pytest.approx(
        1.40592e10 / 480.0, rel=1e-14)
    from nbsymple_versions.core.galaxy import SUN_RADIUS_KPC, acceleration
    for units, speed in ((exact, 220.0), (authors, 219.753)):
        ax = acceleration(np.array([[SUN_RADIUS_KPC * units.kpc, 0.0, 0.0]]), units)[0, 0]
        assert np.sqrt(-ax * SUN_RADIUS_KPC * units.kpc) * units.velocity_kms == pytest.approx(speed, abs=1e-3)
    with pytest.raises(ValueError, match="unknown constants 'theirs'; choose one of exact, authors"):
        Units(constants="theirs")


def test_snapshots_and_checkpoints_record_the_constants_and_resume_refuses_others(tmp_path):
    ck, snaps, text = tmp_path / "run.ck", tmp_path / "snaps", tmp_path / "text"
    rc, _, err = call(["run", "--n", 16, "--seed", 3, "--steps", 2, "--constants", "authors", "--checkpoint", ck,
                       "--snapshots", snaps])
    assert rc == 0, err
    from nbsymple_versions.runs.checkpoint import load
    assert load(ck)[2].units == Units(constants="authors")
    assert read_snapshot(snaps / "snap_00000002.npz")[0].units.constants == "authors"
    rc, out, err = call(["run", "--resume", ck, "--steps", 4, "--constants", "exact"])
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert f"{ck} runs with the authors constants, so it cannot go on with --constants exact" in err
    assert load(ck)[1]["steps_done"] == 2                                # nothing written
    for steps, again in ((3, ["--constants", "authors"]), (4, [])):        # its own constants, or none given
        rc, _, err = call(["run", "--resume", ck, "--steps", steps, *again, "--json"])
        assert rc == 0, err
    assert read_snapshot(snaps / "snap_00000004.npz")[0].units.constants == "authors"
    # the authors' layout: the sidecar says which constants, and a run from such a snapshot takes them
    rc, _, err = call(["run", "--n", 16, "--seed", 3, "--steps", 1, "--constants", "authors", "--snapshots", text,
                       "--snapshot-format", "nbsymple"])
    assert rc == 0, err
    assert json.loads((text / "snapshots.json").read_text())["constants"] == "authors"
    rc, out, err = call(["run", "--ics", text / "snap_00000001.txt", "--steps", 1, "--json"])
    assert rc == 0 and json.loads(out)["constants"] == "authors", err
    for flag, value in (("--constants", "exact"), ("--ics-mass", "480")):
        rc, out, err = call(["run", "--ics", text / "snap_00000001.txt", flag, value, "--steps", 1])
        assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1, err
        assert "with the authors constants, as the snapshots.json beside it states" in err, err
        assert f"so {flag} {float(value) if flag == '--ics-mass' else value} cannot be given with it" in err, err
