"""The plain GPU kernels against the tiled ones, under numba-cuda's simulator (NUMBA_ENABLE_CUDASIM=1).

Not collected by the normal test run (the name does not start with test_): `tests/test_gpu_asm.py`
runs it with pytest in a child process where the variable is set before numba.cuda is imported.
Alone: `NUMBA_ENABLE_CUDASIM=1 python -m pytest tests/gpu_plain_sim_checks.py`.
N = 97, 100 and 300 are no multiples of the tiles (32, 64, 256): the last block is part padding, the
sources are padded with zero-mass bodies. The simulator costs ~10 us per pair interaction.
"""

import numpy as np
import pytest

from numba.cuda.core import config

from nbsymple_versions.core import reference
from nbsymple_versions.core.clock import TaskClock
from nbsymple_versions.core.ics import make_cluster
from nbsymple_versions.core.vocabulary import PRECISIONS
from nbsymple_versions.gpu_full.fused import GALAXY
from nbsymple_versions.gpu_pairwise import numba_cuda as kc
from nbsymple_versions.gpu_pairwise.cupy_cuda import SIMULATOR as CUPY_UNAVAILABLE
from nbsymple_versions.validation import FRAME_KPC, TOLERANCE, max_relative_error, validate
from nbsymple_versions.versions import VersionUnavailable, get_version

if not config.ENABLE_CUDASIM:    # not a test module of its own: tests/test_gpu_asm.py runs it
    raise ImportError("tests/gpu_plain_sim_checks.py runs under NUMBA_ENABLE_CUDASIM=1 only")


def forces(state, precision, kernel, galactic, **options):
    backend = kc.CudaPairwise(state.m, state.eps, precision, galaxy=GALAXY if galactic else None,
                              units=state.units, kernel=kernel, **options)
    assert backend.kernel_kind == kernel and backend.backend == "numba"
    out = np.full_like(state.x, np.nan)
    backend.forces(state.x, out, TaskClock())
    return out


@pytest.mark.parametrize("galactic", [False, True], ids=["pairwise", "fused"])
@pytest.mark.parametrize("precision", PRECISIONS)
def test_plain_agrees_with_tiled(precision, galactic):
    """Same sources in the same order: identical accelerations in the simulator, within the
    precision's tolerance of the float64 reference (E: after the Galaxy is taken off)."""
    state = make_cluster(97, seed=5, radius_kpc=FRAME_KPC[precision])
    tiled = forces(state, precision, "tiled", galactic, tile=32, devices=2 if galactic else 1)
    plain = forces(state, precision, "plain", galactic, tile=32, devices=2 if galactic else 1)
    np.testing.assert_array_equal(plain, tiled)
    ref = reference.pairwise_acceleration(state.positions, state.m, state.eps)
    acc = plain.T - (reference.galactic_acceleration(state.positions, state.units) if galactic else 0)
    assert max_relative_error(acc, ref) <= TOLERANCE[precision]


def test_plain_with_the_default_tile():
    state = make_cluster(300, seed=6, radius_kpc=FRAME_KPC["dsp"])
    plain = forces(state, "dsp", "plain", False)              # tile 256: 512 padded sources
    ref = reference.pairwise_acceleration(state.positions, state.m, state.eps)
    assert max_relative_error(plain.T, ref) <= TOLERANCE["dsp"]


@pytest.mark.parametrize("letter", ["C", "D", "E"])
def test_versions_take_the_plain_kernel(letter):
    for precision in PRECISIONS:
        check = validate(letter, precision, n=100, tile=64, kernel="plain")
        assert check.passed, check
    state = make_cluster(40, seed=1)
    assert get_version(letter).pipeline(state, "dp", tile=32, kernel="plain").backend.kernel_kind == "plain"
    with pytest.raises(ValueError, match="unknown GPU kernel 'shared'; choose one of tiled, plain"):
        get_version(letter).pipeline(state, "dp", kernel="shared")


def test_the_cupy_backend_has_no_simulator():
    state = make_cluster(16, seed=1)
    with pytest.raises(VersionUnavailable) as e:
        get_version("C").pipeline(state, "dp", backend="cupy")
    assert str(e.value) == f"version C is not available: {CUPY_UNAVAILABLE}"
    assert get_version("C").available("cupy") == (False, CUPY_UNAVAILABLE)
    with pytest.raises(ValueError, match="unknown GPU backend 'opencl'; choose one of numba, cupy"):
        get_version("C").pipeline(state, "dp", backend="opencl")
