"""Version A's dp row on AVX-512 (`serial/avx512.py`), on any x86-64 machine.

The row's IR runs here with its seed replaced by the exact 1/sqrt off by a chosen relative
error (AVX-512's estimate itself needs AVX-512; where the host has it, the kernels run it and
are checked too). With the estimate's worst error 2^-14 the row matches the float64 reference to
float64 rounding, every tail length included; with larger seed errors its error is the first
neglected term of the series, 693/256 (2 delta)^5, and falls 32-fold per halving: a fifth-order
step. The instructions are counted in `tests/test_cpu_asm.py`.
"""
import llvmlite.binding as llvm
import numba
import numpy as np
import pytest
from numba import njit

from nbsymple_versions.core import reference
from nbsymple_versions.serial import avx512
from nbsymple_versions.serial.kernels import SERIAL, _pairwise_rows_source
from nbsymple_versions.threaded.kernels import THREADED

EPS = 0.01


def bodies(rng, n):
    x = rng.normal(size=(3, n))
    m = rng.uniform(0.5, 1.5, size=n) / n
    return x, m


def relative_error(a, x, m):
    want = reference.pairwise_acceleration(x.T, m, EPS).T
    return np.abs(a - want).max() / max(np.abs(want).max(), 1e-300)


def rounding(n: int) -> float:
    """What float64 rounding alone leaves between two sums of n pair terms taken in different
    orders (the kernel's reassociated lanes, the reference's loop), relative to the largest
    acceleration: up to about 2 sqrt(n) ulps, never below 4e-15. The row at the estimate's worst
    error came to at most 0.43 of it in 200 000 draws at each N below up to 64 and at 100 (10 000
    at 1031; to 0.80 of half of it, the bound until then, and a slice of 24 targets held to 2e-15
    of its own largest force to 1.12)."""
    return max(4e-15, 2 * np.sqrt(n) * np.finfo(np.float64).eps)


def term_scale(x, m):
    """max_i sum_j m_j |r_ij| / (r_ij^2 + eps^2)^1.5: the largest sum of pair-term magnitudes.
    A relative error delta of every pair term moves an acceleration by at most delta times this,
    however much its terms cancel."""
    d = x.T[None, :, :] - x.T[:, None, :]
    r2 = (d ** 2).sum(axis=2) + EPS * EPS
    return float((m[None, :] * np.sqrt((d ** 2).sum(axis=2)) / r2 ** 1.5).sum(axis=1).max())


_kernels = {}


def row_kernel(error):
    """The kernels' own dp source (`serial.kernels`) around the row seeded with `error`."""
    if error not in _kernels:
        _kernels[error] = njit(fastmath=True, error_model="numpy")(_pairwise_rows_source(avx512.row_intrinsic(error)))
    return _kernels[error]


def forces(kernel, x, m, start=0, stop=None):
    stop = x.shape[1] if stop is None else stop
    out = np.full((3, stop - start), np.nan)
    kernel(x[0], x[1], x[2], x[0], x[1], x[2], m, EPS * EPS, start, out[0], out[1], out[2])
    return out


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 15, 16, 17, 64, 1031])
def test_the_row_at_the_estimates_worst_error_is_float64_exact(rng, n):
    """Every tail length 0..7 (masked lanes add exactly nothing) and one body (no force)."""
    x, m = bodies(rng, n)
    a = forces(row_kernel(avx512.ESTIMATE_ERROR), x, m)
    if n == 1:
        assert np.array_equal(a, np.zeros((3, 1)))
    else:
        assert relative_error(a, x, m) < rounding(n)


def test_a_slice_of_targets_reads_all_sources(rng):
    """Targets 37 .. 60 are the whole row's, bit for bit (each target's sum runs over all sources
    in the same order wherever the slice starts), and the whole row is the reference's."""
    x, m = bodies(rng, 100)
    whole = forces(row_kernel(avx512.ESTIMATE_ERROR), x, m)
    np.testing.assert_array_equal(forces(row_kernel(avx512.ESTIMATE_ERROR), x, m, 37, 61), whole[:, 37:61])
    assert relative_error(whole, x, m) < rounding(100)


def test_the_step_is_fifth_order_in_the_seed_error(rng):
    """Seed error delta: e ~ -2 delta, and the error is bounded by the first neglected term
    693/256 e^5 of each pair term, falling 32-fold per halving of delta. The seed is off up in
    even lanes and down in odd ones, so a body's errors partly cancel: in 100 000 draws the error
    at 2^-9 was at least 190x `rounding(64)` of the largest force, and the floor is 30x (until
    then 100x the halved rounding in units of the term scale, which a draw in 10 000 came to 0.59
    of); a row with an exact seed, float64 rounding alone, stays 100x below it."""
    x, m = bodies(rng, 64)
    deltas = (2.0 ** -7, 2.0 ** -8, 2.0 ** -9)
    want = reference.pairwise_acceleration(x.T, m, EPS).T
    errors = [np.abs(forces(row_kernel(d), x, m) - want).max() / term_scale(x, m) for d in deltas]
    floor = 30 * rounding(64) * np.abs(want).max() / term_scale(x, m)     # 30x rounding, in e's units
    for d, e in zip(deltas, errors):
        # each pair term is off by at most the first neglected one (terms' errors partly cancel; two
        # bodies, whose error does not, reach 0.68 of the bound), and far above rounding, so that the
        # halvings below measure the step's order
        assert floor < e < 1.5 * (693 / 256 * (2 * d) ** 5), (d, e)
    for coarse, fine in zip(errors, errors[1:]):
        assert 26 < coarse / fine < 38, errors


def test_the_kernels_take_the_row_exactly_where_the_cpu_has_avx512(rng):
    """`available()` follows the host's AVX-512F (where NUMBA_CPU_NAME and NUMBA_CPU_FEATURES name
    no other CPU); A's and B's dp kernels are the row where it is, numba's loop elsewhere, and
    agree with the reference either way."""
    has_it = avx512.available()
    if not (numba.config.CPU_NAME or numba.config.CPU_FEATURES):
        assert has_it == ("+avx512f" in llvm.get_host_cpu_features().flatten().split(","))
    for kernels in (SERIAL, THREADED):
        dp = kernels.pairwise["dp"]
        assert ("_pairwise_rows_source" in dp.py_func.__qualname__) == has_it
        x, m = bodies(rng, 1031)
        assert relative_error(forces(dp, x, m), x, m) < rounding(1031)


def test_the_row_ir_names_each_seed_apart():
    assert "rsqrt14" in avx512.row_ir() and "rsqrt14" not in avx512.row_ir(2.0 ** -14)
    names = {avx512.row_name(e) for e in (None, 2.0 ** -7, 2.0 ** -14)}
    assert len(names) == 3 and all(n.replace("_", "").replace(".", "").replace("-", "").isalnum() for n in names)
