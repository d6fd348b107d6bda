"""`State.from_arrays` owns its arrays: stepping never writes into the caller's (issue 11, item 8)."""
import numpy as np
import pytest

from nbsymple_versions import Simulation, Units
from nbsymple_versions.core.ics import State


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("n", [1, 2, 7])
def test_from_arrays_copies_whatever_the_order_or_n(order, n, rng):
    u = Units()
    pos = np.asarray(rng.normal(size=(n, 3)) + [8.5 * u.kpc, 0, 0], order=order)
    vel = np.asarray(rng.normal(size=(n, 3)) + [0, u.from_kms(220), 0], order=order)
    mass = np.full(n, 1.0 / n)
    before = pos.copy(), vel.copy(), mass.copy()
    s = State.from_arrays(pos, vel, mass, eps=1e-3)
    assert not np.shares_memory(s.x, pos) and not np.shares_memory(s.v, vel) and not np.shares_memory(s.m, mass)
    assert s.x.flags.c_contiguous and s.x.shape == (3, n)
    np.testing.assert_array_equal(s.positions, pos)
    sim = Simulation(s, "A", "leapfrog", "dp", 0.1, diagnostics=False)
    sim.step(3)
    assert np.abs(sim.state.positions - pos).max() > 0                  # the state moved ...
    for after, original in zip((pos, vel, mass), before):
        np.testing.assert_array_equal(after, original)                  # ... the caller's arrays did not
