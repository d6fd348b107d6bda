"""CPU kernels x precision against the float64 reference, fresh random inputs."""
import numpy as np
import pytest

from nbsymple_versions import get_version, make_cluster
from nbsymple_versions.core import reference
from nbsymple_versions.core.ics import State
from nbsymple_versions.validation import TOLERANCE, check_pipeline, max_relative_error, validate


@pytest.mark.parametrize("letter", ["A", "B"])
@pytest.mark.parametrize("precision", ["sp", "dp", "dsp"])
@pytest.mark.parametrize("n", [2, 7, 256, 1000])
def test_pairwise_against_reference(letter, precision, n):
    check = validate(letter, precision, n=n)          # fresh seed every run
    assert check.passed, check


@pytest.mark.parametrize("letter", ["A", "B"])
@pytest.mark.parametrize("precision", ["sp", "dp", "dsp"])
def test_single_body_feels_no_pairwise_force(letter, precision):
    s = State.from_arrays([[850.0, 1.0, 2.0]], [[0, 0, 0]], [1.0], eps=1e-3)
    forces = get_version(letter).pipeline(s, precision)
    out = np.full_like(s.x, np.nan)
    forces.pairwise(s.x, out)
    assert np.array_equal(out, np.zeros_like(out))


@pytest.mark.parametrize("letter", ["A", "B"])
def test_dsp_beats_sp_far_from_origin(letter):
    """At 850 cluster radii float32 spacing (6e-5) is near the softening: sp loses the cluster."""
    s = make_cluster(512, seed=None, radius_kpc=8.5)
    ref = reference.pairwise_acceleration(s.positions, s.m, s.eps)
    errs = {}
    for precision in ("sp", "dsp"):
        out = np.zeros_like(s.x)
        get_version(letter).pipeline(s, precision).pairwise(s.x, out)
        errs[precision] = max_relative_error(out.T, ref)
    assert errs["dsp"] * 100 < errs["sp"], errs


@pytest.mark.parametrize("precision", ["sp", "dp", "dsp"])
def test_serial_and_threaded_agree(precision):
    s = make_cluster(777, seed=None, radius_kpc=8.5 if precision != "sp" else None)
    outs = []
    for letter in "AB":
        out = np.zeros_like(s.x)
        get_version(letter).pipeline(s, precision).accelerations(s.x, out)
        outs.append(out)
    scale = np.abs(outs[0]).max()
    assert np.abs(outs[0] - outs[1]).max() / scale < TOLERANCE[precision]


@pytest.mark.parametrize("letter", ["A", "B"])
def test_galactic_and_integrate_kernels(letter):
    s = make_cluster(100, seed=None)
    forces = get_version(letter).pipeline(s, "dp")
    out = np.zeros_like(s.x)
    forces.galactic(s.x, out)
    np.testing.assert_allclose(out.T, reference.galactic_acceleration(s.positions, s.units), rtol=1e-13)
    x, v = s.x.copy(), s.v.copy()
    forces.drift(x, v, 0.25)
    np.testing.assert_allclose(x, s.x + 0.25 * s.v, rtol=1e-15)


def test_a_wrong_kernel_fails_validation():
    """The check can fail: a pipeline whose pairwise force is 1 % off is rejected."""
    s = make_cluster(200, seed=1)
    forces = get_version("A").pipeline(s, "dp")
    real = forces.backend.forces

    def off_by_one_percent(x, out, clock):
        real(x, out, clock)
        out *= 1.01
    forces.backend.forces = off_by_one_percent
    err, ok = check_pipeline(forces, s, TOLERANCE["sp"])
    assert not ok and err > 5e-3
