"""A Salpeter mass function in mass classes (`make_cluster(..., mass_classes=k)`,
`nbsymple run --mass-classes K`): the counts follow dN/dm ~ m^-2.35, the total mass and the
virial ratio stay exact, and equal masses stay the default."""
import contextlib
import io
import json
import math

import numpy as np
import pytest

from nbsymple_versions import cli, make_cluster
from nbsymple_versions.core.ics import salpeter_masses
from nbsymple_versions.core.diagnostics import potential_energy


def _virial_ratio(state):
    w = potential_energy(state.positions, state.m, state.eps)
    return 0.5 * float(state.m @ (state.v * state.v).sum(axis=0)) / abs(w)


@pytest.mark.parametrize("n, classes", [(15360, 5), (1000, 5), (7, 5), (100, 1), (300, 12)])
def test_counts_follow_salpeter_and_the_total_is_one(n, classes):
    m = salpeter_masses(n, classes)
    assert len(m) == n and abs(math.fsum(m) - 1.0) < 1e-15 and np.all(np.diff(m) >= 0)
    values, counts = np.unique(m, return_counts=True)
    assert len(values) <= classes
    if n == 15360:                        # shares of dN in five log-classes from 0.1 to 15 Msun
        edges = np.geomspace(0.1, 15.0, 6)
        share = -np.diff(edges ** -1.35) / (0.1 ** -1.35 - 15.0 ** -1.35)
        assert np.all(np.abs(counts - n * share) < 1) and counts.tolist() == [11403, 2947, 762, 197, 51]
        # each class's mass is its mean under m^-2.35, so the ratios of mass are fixed
        assert values[-1] / values[0] == pytest.approx(26.534 / 0.48187, rel=1e-4)


@pytest.mark.parametrize("n", [64, 777])
def test_virial_ratio_total_mass_and_centre_stay_exact(n, rng):
    seed = int(rng.integers(2**32))
    state = make_cluster(n, seed=seed, mass_classes=5, radius_kpc=None)
    assert _virial_ratio(state) == pytest.approx(0.3, rel=1e-13)
    assert abs(math.fsum(state.m) - 1.0) < 1e-15
    x, v = state.center_of_mass()
    assert np.abs(x).max() < 1e-15 and np.abs(v).max() < 1e-15
    equal = make_cluster(n, seed=seed, radius_kpc=None)
    assert np.all(equal.m == equal.m[0]) and not np.all(state.m == state.m[0])
    assert _virial_ratio(equal) == pytest.approx(0.3, rel=1e-13)


@pytest.mark.parametrize("exponent", [1.0, 2.0])
def test_exponents_whose_integrals_are_logarithms_give_their_spectrum(exponent):
    """dN/dm ~ m^-1 (its number integral is a logarithm: equal numbers per log-class) and m^-2
    (its mass integral is one): 1000 stars in 3 classes from 0.1 to 15 Msun, each class's mass its
    mean ln(b/a) / (1/a - 1/b) for m^-2, (b - a) / ln(b/a) for m^-1, the total 1 (a mutation
    hunt: the logarithm taken at the wrong exponent gave NaN masses, and passed every test)."""
    m = salpeter_masses(1000, 3, exponent)
    values, counts = np.unique(m, return_counts=True)
    a, b = np.geomspace(0.1, 15.0, 4)[:-1], np.geomspace(0.1, 15.0, 4)[1:]
    number = np.log(b / a) if exponent == 1.0 else 1 / a - 1 / b
    mean = (b - a) / np.log(b / a) if exponent == 1.0 else np.log(b / a) / (1 / a - 1 / b)
    assert abs(math.fsum(m) - 1.0) < 1e-15 and np.all(np.abs(counts - 1000 * number / number.sum()) < 1)
    np.testing.assert_allclose(values / values[0], mean / mean[0], rtol=1e-13)


@pytest.mark.parametrize("classes, exponent, match", [(0, 2.35, "at least 1"), (5, 0.0, "exponent"),
                                                       (5, math.nan, "exponent")])
def test_bad_spectra_are_refused(classes, exponent, match):
    with pytest.raises(ValueError, match=match):
        salpeter_masses(100, classes, exponent)


def test_run_takes_mass_classes():
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(["run", "--n", "50", "--mass-classes", "4", "--steps", "2", "--seed", "1", "--json"])
    assert rc == 0, err.getvalue()
    assert json.loads(out.getvalue())["mass_classes"] == 4
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err := io.StringIO()):
        with pytest.raises(SystemExit) as e:
            cli.main(["run", "--mass-classes", "0"])
    assert e.value.code == 2 and "at least 1" in err.getvalue()
