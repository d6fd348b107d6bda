"""CPU host kernels (versions A, B): the galactic field and the drifts, against the reference.

The checks every version passes (pairwise forces against the float64 reference per precision,
a single body, dsp vs sp far out, agreement with version A, the clock) are the battery of
`tests/test_versions.py`.
"""
import numpy as np
import pytest

from nbsymple_versions import get_version, make_cluster
from nbsymple_versions.core import reference
from nbsymple_versions.versions import CPU_LETTERS


@pytest.mark.parametrize("letter", CPU_LETTERS)
def test_galactic_and_integrate_kernels(letter):
    s = make_cluster(100, seed=None)
    forces = get_version(letter).pipeline(s, "dp")
    out = np.zeros_like(s.x)
    forces.galactic(s.x, out)
    np.testing.assert_allclose(out.T, reference.galactic_acceleration(s.positions, s.units), rtol=1e-13)
    x, v = s.x.copy(), s.v.copy()
    forces.drift(x, v, 0.25)
    np.testing.assert_allclose(x, s.x + 0.25 * s.v, rtol=1e-15)
