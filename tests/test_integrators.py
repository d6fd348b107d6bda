"""Integrators: convergence order, time reversibility, bounded energy error, precision."""
import numpy as np
import pytest

from nbsymple_versions import Simulation, Units, make_cluster
from nbsymple_versions.core.ics import State
from nbsymple_versions.core.schemes import LEAPFROG, SI6A

ORBIT = 62.0   # orbital period at 8.5 kpc, cluster time units


def star():
    """One test star on an inclined, eccentric orbit through the Galaxy near 8.5 kpc: a smooth
    problem (no close encounters, a force field with bounded derivatives) where each scheme
    shows its asymptotic order and the symplectic theory holds (bounded energy error)."""
    u = Units()
    return State.from_arrays([[8.5 * u.kpc, 0, 0.3 * u.kpc]], [[0, u.from_kms(150), u.from_kms(20)]],
                             [1e-10], eps=1e-3)


def final_position(scheme, dt, t_end=ORBIT):
    sim = Simulation(star(), "A", scheme, "dp", dt, diagnostics=False)
    sim.step(int(round(t_end / dt)))
    return sim.state.x[:, 0].copy()


def test_coefficient_tables():
    assert sum(LEAPFROG.drift) == 1 and sum(LEAPFROG.kick) == 1 and LEAPFROG.force_evaluations == 1
    assert abs(sum(SI6A.drift) - 1) < 1e-15 and abs(sum(SI6A.kick) - 1) < 1e-15
    assert SI6A.force_evaluations == 7 and SI6A.kick[7] == 0
    assert SI6A.drift[0] == pytest.approx(0.392256805238780, abs=1e-14)
    assert SI6A.kick[3] == pytest.approx(1.31518632068391, abs=1e-14)


@pytest.mark.parametrize("scheme, dt, expected, lo, hi", [("leapfrog", 0.2, 4, 3.8, 4.2),
                                                           ("si6a", 0.5, 64, 56, 72)])
def test_convergence_order(scheme, dt, expected, lo, hi):
    """Self-convergence over one orbit: |x(h) - x(h/2)| / |x(h/2) - x(h/4)| = 2^order.
    Step sizes keep the errors in the asymptotic range and far above rounding."""
    x = [final_position(scheme, dt / 2**k) for k in range(3)]
    ratio = np.linalg.norm(x[0] - x[1]) / np.linalg.norm(x[1] - x[2])
    assert lo < ratio < hi, ratio


@pytest.mark.parametrize("scheme", ["leapfrog", "si6a"])
def test_time_reversibility(scheme):
    """Symmetric compositions are time-reversible: forward k steps, flip velocities, k steps back.
    A soft cluster (eps = 0.05) keeps the run regular, so rounding is not amplified by chaos."""
    s = make_cluster(64, seed=3, radius_kpc=None, eps=0.05)
    x0, v0 = s.x.copy(), s.v.copy()
    sim = Simulation(s, "B", scheme, "dp", 5e-3, diagnostics=False)
    sim.step(100)
    assert np.abs(sim.state.x - x0).max() > 1e-3          # it did move
    sim.state.v *= -1
    sim.step(100)
    assert np.abs(sim.state.x - x0).max() / np.abs(x0).max() < 1e-12
    assert np.abs(-sim.state.v - v0).max() / np.abs(v0).max() < 1e-12


def test_energy_bounded_without_drift_and_si6a_far_better():
    """20 orbits at dt = 1 (62 steps per orbit): the energy error of a symplectic scheme
    oscillates without secular growth; SI6A's is orders of magnitude below leapfrog's."""
    peaks = {}
    for scheme in ("leapfrog", "si6a"):
        sim = Simulation(star(), "A", scheme, "dp", 1.0)
        errs = []
        sim.step(20 * 62, lambda k: errs.append(sim.energy()))
        e = np.abs(np.array(errs) / sim.energy0 - 1)
        quarter = len(e) // 4
        first, last = e[:quarter].max(), e[-quarter:].max()
        assert last < 1.5 * first, (scheme, first, last)          # no secular drift
        peaks[scheme] = e.max()
    assert peaks["si6a"] * 100 < peaks["leapfrog"], peaks


def test_sp_conserves_energy_worse_than_dp_on_the_cluster():
    """The paper: SI6A in dp conserves energy orders of magnitude better than in sp (here the
    cluster at 8.5 kpc, where float32 positions are too coarse for the softening)."""
    errs = {}
    for precision in ("sp", "dp"):
        sim = Simulation(make_cluster(256, seed=1), "B", "si6a", precision, 5e-4)
        sim.step(100)
        errs[precision] = sim.energy_error()
    assert errs["dp"] * 1e3 < errs["sp"], errs
    assert errs["dp"] < 1e-13


def test_simulation_rejects_bad_input():
    with pytest.raises(ValueError, match="time step"):
        Simulation(star(), "A", "leapfrog", "dp", -1.0)
    with pytest.raises(ValueError, match="unknown scheme"):
        Simulation(star(), "A", "rk4", "dp", 1.0)
    with pytest.raises(ValueError, match="unknown version"):
        Simulation(star(), "Q", "leapfrog", "dp", 1.0)


def test_angular_momentum_error_is_that_of_lz():
    """The Galaxy's torque changes L_x, L_y for real; L_z is conserved and is the error measured."""
    sim = Simulation(make_cluster(128, seed=4), "B", "si6a", "dp", 5e-4)
    sim.step(50)
    from nbsymple_versions.core.diagnostics import relative_error
    assert relative_error(sim.angular_momentum(), sim.angular_momentum0) > 1e-10     # physical torque
    assert sim.angular_momentum_error() < 1e-14
