"""Version A's rows on AVX2 (`serial/avx2.py`), on any x86-64 machine with AVX2 and FMA (every
machine this suite runs on), whether or not the kernels take them on this CPU.

The row's one step on r^-3 from the raw estimate leaves a relative error per pair term below
15/8 (2 x 1.5 2^-12)^2 = 1e-6; a wrong constant or a lost term would be far above it. It is held
to the float64 reference on the bodies it is given (float32 words: `given`): rounding the
positions to float32 alone moves a close pair's term by up to ~1e-5 of the largest force, as the
draw has it (a seed found 1.1e-5 at N = 1031, with the row 1.6e-7 from the forces on its inputs),
which is the inputs' error, not the row's. dsp's separation keeps its low words (three IR
instructions without fast-math flags), so far from the origin dsp stays far more accurate than sp.
"""
import llvmlite.binding as llvm
import numba
import numpy as np
import pytest
from numba import njit

from nbsymple_versions.core import reference
from nbsymple_versions.instruments.cpu_asm import x86
from nbsymple_versions.instruments.cpu_asm.toolchain import _signature
from nbsymple_versions.serial import avx2, avx512, ir_row, kernels

EPS = 0.01
STEP_ERROR = {8: 15 / 8 * (2 * avx2.ESTIMATE_ERROR) ** 2,            # 1.0e-6
              avx2.WIDE: 15 / 8 * (2 * avx2.WIDE_ESTIMATE_ERROR) ** 2}  # 2.8e-8: AVX-512's estimate

_kernels = {}


def row_kernel(precision, fused=True, lanes=8):
    """The kernels' own source (`serial.kernels`) around the `precision` row (`fused=False`: r2
    and the sums in multiplies and adds) on `lanes` lanes: 16 with AVX-512's estimate where the
    code has AVX-512, else with the exact 1/sqrt off by that estimate's worst error."""
    error = avx2.WIDE_ESTIMATE_ERROR if lanes == avx2.WIDE and not avx512.available() else None
    if (precision, fused, lanes) not in _kernels:
        _kernels[precision, fused, lanes] = njit(fastmath=True, error_model="numpy")(
            kernels._pairwise_words_source(avx2.pairwise_row(precision, fused, lanes, error)))
    return _kernels[precision, fused, lanes]


def words(precision, x64, m64):
    """The words the row is given: high and low position words (sp and dp: the high words twice,
    their low words unread) and the masses, float32 (dp: float64)."""
    if precision == "dp":
        return x64, x64, m64
    x = x64.astype(np.float32)
    return x, (x64 - x).astype(np.float32) if precision == "dsp" else x, m64.astype(np.float32)


def forces(precision, x64, m64, start=0, stop=None, fused=True, lanes=8):
    """The row's accelerations of targets start..stop, from its words (dsp: high and low)."""
    stop = x64.shape[1] if stop is None else stop
    x, low, m = words(precision, x64, m64)
    out = np.full((3, stop - start), np.nan)
    row_kernel(precision, fused, lanes)(*x, *low, m, m.dtype.type(EPS * EPS), start, *out)
    return out


def bodies(rng, n, offset=0.0):
    return rng.normal(size=(3, n)) + offset, rng.uniform(0.5, 1.5, size=n) / n


def given(precision, x64, m64):
    """The positions and masses the row is given (`words`), in float64 (dsp: high + low)."""
    x, low, m = words(precision, x64, m64)
    return x.astype(np.float64) + (low.astype(np.float64) if precision == "dsp" else 0.0), m.astype(np.float64)


def relative_error(precision, a, x, m, start=0, stop=None):
    """The row's accelerations `a` against the float64 reference on the bodies it is given."""
    x, m = given(precision, x, m)
    want = reference.pairwise_acceleration(x.T, m, EPS).T[:, start:stop]
    return np.abs(a - want).max() / max(np.abs(want).max(), 1e-300)


# float32 rounding of one term's own arithmetic (r2, the estimate's step, the products), relative to the
# largest force: a few ulps whatever n (a random draw at n = 2 reached 6 ulps, 1.25x the bound that
# scaled with sqrt(n) alone, on a Zen 4 whose VM hides AVX-512: 300 draws there, sp and dsp, 16 lanes)
TERM_ROUNDING = 4 * float(np.finfo(np.float32).eps)


def tolerance(precision, n, lanes=8):
    """sp, dsp: the step's error, float32 rounding of a term (`TERM_ROUNDING`) and of the sums;
    dp: float64 rounding of sums of n terms taken in another order (about sqrt(n) ulps, never
    below 2e-15)."""
    if precision == "dp":
        return max(2e-15, np.sqrt(n) * np.finfo(np.float64).eps)
    return 2 * STEP_ERROR[lanes] + TERM_ROUNDING + 2e-7 * np.sqrt(n)


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("precision, lanes", [("sp", 8), ("dsp", 8), ("dp", 8), ("sp", 16), ("dsp", 16)])
@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 15, 16, 17, 33, 64, 1031])
def test_the_row_matches_the_reference_at_every_tail_length(rng, precision, lanes, n, fused):
    """Tails of 0, 1, 2 and 7 sources, and on AVX-512's 16 lanes (sp and dsp, `row_kernel`) of 8,
    9 and 15 too (masked lanes add exactly nothing), and one body (no force); for dp both halves
    of every vector, the divider's and the estimate's; r2 and the sums in FMAs or in multiplies
    and adds."""
    x, m = bodies(rng, n)
    a = forces(precision, x, m, fused=fused, lanes=lanes)
    if n == 1:
        assert np.array_equal(a, np.zeros((3, 1)))
    else:
        error = relative_error(precision, a, x, m)
        assert error < tolerance(precision, n, lanes), error


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "unfused"])
def test_each_half_of_the_dp_row_is_float64_exact(rng, fused):
    """Two bodies 8 apart (the rest massless, far away): the pair sits in lanes 0 of two vectors
    (the divider's half), or in lanes 4 (the estimate's), and the force matches either way."""
    for lane in (0, 4):
        x, m = bodies(rng, 16)
        x[:, [i for i in range(16) if i not in (lane, lane + 8)]] += 1e3
        m[[i for i in range(16) if i not in (lane, lane + 8)]] = 0.0
        a = forces("dp", x, m, fused=fused)
        want = reference.pairwise_acceleration(x.T, m, EPS).T
        assert np.abs(a - want).max() <= 4 * np.finfo(np.float64).eps * np.abs(want).max(), lane


def test_the_dp_series_is_the_binomial_one_and_long_enough():
    """(1 - e)^(-3/2)'s coefficients C_k = prod (2i + 1) / (2i), and the first left out, at the
    estimate's worst |e| = 2 delta + delta^2, below float64's resolution by a wide margin."""
    want = [float(np.prod([(2 * i + 1) / (2 * i) for i in range(1, k + 1)])) for k in range(1, 7)]
    assert list(ir_row.INVERSE_CUBE_SERIES) == want[:5]
    worst = 2 * avx2.ESTIMATE_ERROR + avx2.ESTIMATE_ERROR ** 2
    assert want[avx2.DP_SERIES_TERMS] * worst ** (avx2.DP_SERIES_TERMS + 1) < 1e-18


def test_a_slice_of_targets_reads_all_sources(rng):
    x, m = bodies(rng, 100)
    assert relative_error("sp", forces("sp", x, m, 37, 61), x, m, 37, 61) < 3e-6


def test_dsp_keeps_its_low_words_far_from_the_origin(rng):
    """At 850 length units from the origin float32 positions are ~6e-5 apart: sp's separations
    lose most of a cluster of radius 1e-3, dsp's do not."""
    x = rng.normal(size=(3, 64)) * 1e-3 + 850.0
    m = np.full(64, 1 / 64)
    want = reference.pairwise_acceleration(x.T, m, EPS).T
    errors = {p: np.abs(forces(p, x, m) - want).max() / np.abs(want).max() for p in ("sp", "dsp")}
    assert errors["dsp"] < 1e-5 and errors["sp"] > 1e-3, errors


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("precision, adds, reads", [("sp", 3, 4), ("dsp", 9, 7)])
def test_the_row_is_eleven_fma_pipe_operations_and_one_estimate_per_vector(precision, adds, reads, fused):
    """Per 8 interactions, one vector per trip (not unrolled, on AVX2 and AVX-512 hosts alike; the
    16-lane row's loop: `tests/test_cpu_asm.py`, compiled for a Zen 4, whatever the host): the
    separations (sp: 3 subtractions; dsp: 6 and 3 additions), r2 in 3 FMAs, the raw `vrsqrtps`,
    the step in 4 multiplies and 1 FMA, the sums in 3 FMAs (numba's loop: 13 after the estimate),
    and no load of its own: every source word is read by its subtraction, the mass by a multiply
    (dsp may read a spilled constant too). Unfused, r2's and the sums' 6 FMAs are 6 multiplies
    and 6 adds: still 11 FMA-pipe operations, 6 of them multiplies, and 6 more for the add pipes.
    At most 2 register moves: with its masked vector in the row's function, LLVM rotated dsp's
    values through AVX2's registers every trip (13 moves of 37 instructions; `ir_row.masked_tail`)."""
    kernel = row_kernel(precision, fused)
    signature = _signature("pairwise", precision)
    kernel.compile(signature)
    loop = x86.pairwise_loop(kernel.inspect_asm(signature.args))
    mix = {k: v for k, v in x86.mix(loop.body).items() if v and k not in ("integer", "move")}
    want = {"add": adds, "fma": 7, "mul": 4, "rsqrt": 1} if fused else \
        {"add": adds + 6, "fma": 1, "mul": 10, "rsqrt": 1}
    assert loop.root_lanes() == 8 and mix == want, (loop.root_lanes(), mix)
    assert x86.mix(loop.body)["move"] <= 2, x86.mix(loop.body)
    sources = [i for i in x86.memory_reads(loop.body) if "%rsp" not in i.operands]
    assert len(sources) == reads, [i.mnemonic for i in x86.memory_reads(loop.body)]


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "unfused"])
def test_the_dp_row_takes_half_its_lanes_through_the_divider_and_half_through_the_estimate(fused):
    """Per 8 interactions, one trip (not unrolled): a 256-bit square root and division (lanes 0-3),
    a 128-bit `vrsqrtps` between two conversions (lanes 4-7), float64 FMAs only (r2: 6; e and
    the series: 6; the sums: 6; unfused, r2's and the sums' are 12 multiplies and 12 adds), 6
    subtractions that read the source positions, and no spill (unfused, AVX2's 16 registers do not
    hold the products: LLVM spills 3 vectors a trip); counted in 256-bit operations (compiled for
    an AVX-512 host, LLVM joins the halves' separations and r2 in 512-bit ones)."""
    kernel = row_kernel("dp", fused)
    signature = _signature("pairwise", "dp")
    kernel.compile(signature)
    loop = x86.pairwise_loop(kernel.inspect_asm(signature.args))
    assert loop.root_lanes() == 8 and loop.elements(8) == 8, (loop.root_lanes(), loop.elements(8))
    assert {(i.mnemonic, i.bits) for i in loop.body if x86.classify(i) in ("rsqrt", "sqrt_div")} == {
        ("vrsqrtps", 128), ("vsqrtpd", 256), ("vdivpd", 256)}

    def operations(kind):
        return sum(max(i.bits, 256) // 256 for i in loop.body if x86.classify(i) == kind)
    assert all(i.mnemonic.endswith("pd") for i in loop.body if x86.classify(i) == "fma")
    assert {k: operations(k) for k in ("fma", "add", "sqrt_div", "convert")} == {
        "fma": 18 if fused else 6, "add": 6 if fused else 18, "sqrt_div": 2, "convert": 2}, x86.mix(loop.body)
    assert operations("store") == 0 or not fused, x86.mix(loop.body)    # unfused, 16 registers: a few spills


@pytest.mark.parametrize("cpu, rows", [("znver1", ("sp",)), ("haswell", ()), ("znver3", ("sp", "dp", "dsp")),
                                       ("znver4", ("sp",)), ("znver5", ()), ("host", None)])
def test_the_kernels_take_the_row_on_the_cpus_measured_faster_so(monkeypatch, cpu, rows):
    """By default a precision takes the row where `ROW_CPUS` gives it to the CPU numba
    compiles for (NUMBA_CPU_NAME, else the host), numba's loop otherwise (dp: AVX-512's row where
    the code has AVX-512, as on an AVX-512 host here, whose features numba keeps); explicit `rows`
    win."""
    monkeypatch.setattr(numba.config, "CPU_NAME", cpu)
    if rows is None:
        rows = kernels.ROW_CPUS.get(kernels.choosing_for(), ())
    elif cpu in kernels.WITHOUT_AVX512 and not avx512.available():     # a VM hiding this CPU's AVX-512
        rows = kernels.ROW_CPUS[kernels.WITHOUT_AVX512[cpu]]
    rows = tuple(p for p in rows if p != "dp" or not avx512.available())
    for parallel in (False, True):
        built = kernels.CpuKernels(parallel=parallel)
        assert built.rows == rows
        for precision in ("sp", "dp", "dsp"):
            on_row = "_pairwise_words_source" in built.pairwise[precision].py_func.__qualname__
            assert on_row == (precision in rows)
    assert kernels.CpuKernels(parallel=False, rows=("dsp", "sp")).rows == ("sp", "dsp")
    assert kernels.CpuKernels(parallel=False, rows=("dp",)).rows == (() if avx512.available() else ("dp",))
    assert kernels.CpuKernels(parallel=False, rows=()).rows == ()


def test_available_follows_the_cpu_numba_compiles_for():
    features = llvm.get_host_cpu_features()
    assert avx2.available() == bool(features.get("avx2") and features.get("fma"))


def test_the_kernels_take_the_unfused_row_when_asked(monkeypatch):
    """`CpuKernels(fused=False)` with a row: the row with multiplies and adds (`A-row-unfused`),
    its one FMA the step's (compiled here, not loaded from the session's cache: numba shows no
    assembly of loaded code)."""
    monkeypatch.setattr(kernels, "on_disk", lambda dispatcher, name, parallel: dispatcher)
    built = kernels.CpuKernels(parallel=False, fused=False, rows=("sp",))
    assert built.rows == ("sp",)
    signature = _signature("pairwise", "sp")
    built.pairwise["sp"].compile(signature)
    loop = x86.pairwise_loop(built.pairwise["sp"].inspect_asm(signature.args))
    assert x86.mix(loop.body)["fma"] == 1 and x86.mix(loop.body)["mul"] == 10, x86.mix(loop.body)
