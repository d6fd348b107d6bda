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
