"""Version A's CPU kernels with numba: pairwise (sp, dp, dsp), galactic, and y += h x for drifts
and kicks.

One Python source per kernel, written here once and compiled twice: `njit` (serial: `SERIAL`,
versions A and C) and `njit(parallel=True)`, whose `prange` loops then run over targets on all
cores (`threaded.kernels.THREADED`, versions B, D and E).

Pairwise kernels take positions as separate x, y, z rows and write float64 accelerations;
the inner loop over sources is written so that LLVM vectorises it to full-width SIMD
(512-bit on AVX-512 machines): separate rows, `error_model='numpy'` (no division check in
the loop) and `fastmath=True`, whose reassociation lets the `s += f dx` sums run in vector
lanes (it only reorders the sum over sources).

- sp: float32 throughout; 1/sqrt(r2) compiles to the hardware reciprocal-square-root
  estimate plus one Newton step (relative error ~1e-7, below float32 summation noise). On the
  CPUs of `ROW_CPUS` the loop over sources is `avx2.pairwise_row`: LLVM IR on 8 float32
  lanes (16 on AVX-512), the raw estimate and one step on r^-3 itself (relative error < 1.01e-6;
  AVX-512's estimate, < 3e-8), fewer operations and a shorter chain.
- dp: float64 throughout, but with no square root or division. On AVX-512 (`avx512.available()`)
  the loop over sources is `avx512.pairwise_row`: LLVM IR on 8 float64 lanes from AVX-512's
  float64 estimate `vrsqrt14pd` (relative error < 2^-14) and a fifth-order step on r^-3 (see
  `avx512.py`). Elsewhere a float32 1/sqrt seed (hardware estimate plus Newton, relative error
  ~1e-7) is refined in float64 by one third-order step on r^-3 directly,
  r^-3 = s^3 (1 - e)^(-3/2) ~ s^3 (1 + 3/2 e + 15/8 e^2) with e = 1 - r2 s^2, which leaves a
  relative error ~e^3 ~ 1e-21, i.e. float64 rounding (measured: same max error vs the NumPy
  reference as an exact 1/sqrt; ~1.4x faster). The float32 seed requires r2 in float32 range
  (1.2e-38 .. 3.4e38), where `simulation.least_softening` and `position_problem` keep it.
  On the CPUs of `DIVIDER_CPUS` (measured: a float64 square root and a division there beat the
  seed's chain, which the core cannot overlap) r^-3 = 1 / (r2 sqrt(r2)) instead, and on those
  `ROW_CPUS` gives dp the loop over sources is `avx2.pairwise_row("dp")`, LLVM IR that takes
  half its lanes each way, so that the divider and the FMA pipes work at once.
- dsp: float32 hi/lo positions (see `core/dsp.py`), float32 terms and accumulators. The
  separation (hi_j - hi_i) + (lo_j - lo_i) is emitted by `ds_diff`, an intrinsic whose three
  instructions carry the fastmath flags without `reassoc` (`FASTMATH_NO_REASSOC`); numba's
  fastmath pass only flags instructions that have none, so the rest of the kernel keeps
  full fastmath and vectorises like sp, while LLVM cannot fold the separation back into
  (hi_j + lo_j) - (hi_i + lo_i) and lose the low word. (Kernel-wide flags without `reassoc`
  kept the sums scalar: dsp was 14x slower than sp; now 0.85-1x.)
The r^-3 helpers are inlined at numba-IR level, so they take their kernel's flags.

Compiled code is kept in numba's on-disk cache only where NUMBA_CACHE_DIR names its folder
(`kernel_cache.on_disk`).
"""
import math

import numba
import numpy as np
from numba import njit, prange
from numba.core import types
from numba.core.extending import intrinsic

from ..core.as91 import as91_acceleration
from . import avx2, avx512
from .kernel_cache import on_disk

FASTMATH_ALL = True
FASTMATH_NO_REASSOC = {"nnan", "ninf", "nsz", "arcp", "contract", "afn"}
JIT_OPTIONS = dict(error_model="numpy", cache=False)
_EXACT_FLAGS = tuple(sorted(FASTMATH_NO_REASSOC))
_UNFUSED_FLAGS = tuple(sorted(FASTMATH_NO_REASSOC - {"contract"} | {"reassoc"}))


@intrinsic
def ds_diff(typingctx, hj, hi, lj, li):
    """(hj - hi) + (lj - li) as three floating-point instructions flagged without `reassoc`,
    so that they survive inside a `fastmath=True` kernel exactly as written."""
    if not all(isinstance(t, types.Float) for t in (hj, hi, lj, li)) or len({hj, hi, lj, li}) != 1:
        return None

    def codegen(context, builder, signature, args):
        a, b, c, d = args
        high = builder.fsub(a, b, flags=_EXACT_FLAGS)
        low = builder.fsub(c, d, flags=_EXACT_FLAGS)
        return builder.fadd(high, low, flags=_EXACT_FLAGS)

    return hj(hj, hi, lj, li), codegen


@intrinsic
def product_apart(typingctx, a, b):
    """a * b as one multiply flagged without `contract`: LLVM cannot fuse it with the addition
    that takes it into an FMA, so the addition runs on an add pipe (`CpuKernels(fused=False)`)."""
    if not (isinstance(a, types.Float) and a == b):
        return None

    def codegen(context, builder, signature, args):
        return builder.fmul(args[0], args[1], flags=_UNFUSED_FLAGS)

    return a(a, b), codegen


def _times(a, b):
    """a * b under the kernel's flags: fused with the addition that takes it into an FMA."""
    return a * b


def _inverse_cube_sp(r2):
    """r2^(-3/2) in float32: rsqrt estimate + Newton under fastmath."""
    rinv = np.float32(1.0) / math.sqrt(r2)
    return rinv * rinv * rinv


def _inverse_cube_dp(r2):
    """r2^(-3/2) in float64 from a float32 1/sqrt seed and one third-order step (see module)."""
    s = np.float64(np.float32(1.0) / math.sqrt(np.float32(r2)))
    s2 = s * s
    e = 1.0 - r2 * s2
    return (s2 * s) * (1.0 + e * (1.5 + 1.875 * e))


def _inverse_cube_dp_sqrt(r2):
    """r2^(-3/2) in float64 from a square root and a division, each correctly rounded: the
    divider's route instead of the float32 seed (`CpuKernels(dp_seed=False)`)."""
    return 1.0 / (r2 * math.sqrt(r2))


def _separation(hj, hi, lj, li):
    """x_j - x_i of sp and dp: one subtraction (the low words are not read)."""
    return hj - hi


def _pairwise_source(ftype, separation, inverse_cube, times):
    """The pairwise kernel of one precision: positions as hi rows (x, y, z) and lo rows (xl, yl,
    zl; dsp's low words, the hi rows again for sp and dp, whose `separation` ignores them).
    `times` makes the products of r2 and of the sums (`_times`: FMAs; `product_apart`: a
    multiply and an add)."""
    zero = ftype(0.0)

    def pairwise(x, y, z, xl, yl, zl, m, eps2, start, ax, ay, az):
        n = x.shape[0]
        for t in prange(ax.shape[0]):   # targets start .. start + len(ax), sources all n
            i = start + t
            xi, yi, zi = x[i], y[i], z[i]
            xli, yli, zli = xl[i], yl[i], zl[i]
            sx, sy, sz = zero, zero, zero
            for j in range(n):        # flops per interaction: core/vocabulary.py FLOPS_PER_LINE
                dx = separation(x[j], xi, xl[j], xli)     # 3 (with dy, dz)
                dy = separation(y[j], yi, yl[j], yli)
                dz = separation(z[j], zi, zl[j], zli)
                # r2: 6; r^-3: 4; f = m r^-3: 1
                f = m[j] * inverse_cube(times(dx, dx) + times(dy, dy) + times(dz, dz) + eps2)
                sx += times(f, dx)        # 6 (with sy, sz)
                sy += times(f, dy)
                sz += times(f, dz)
            ax[t] = sx
            ay[t] = sy
            az[t] = sz
    return pairwise


def _pairwise_rows_source(row):
    """The dp pairwise kernel on AVX-512: `row` (`avx512.pairwise_row`) sums one target's
    interactions with all sources; the arguments are `_pairwise_source`'s (xl, yl, zl unread)."""
    def pairwise(x, y, z, xl, yl, zl, m, eps2, start, ax, ay, az):
        n = x.shape[0]
        for t in prange(ax.shape[0]):   # targets start .. start + len(ax), sources all n
            i = start + t
            ax[t], ay[t], az[t] = row(x, y, z, m, n, x[i], y[i], z[i], eps2)
    return pairwise


def _pairwise_words_source(row):
    """A pairwise kernel on the AVX2 row (`avx2.pairwise_row`): `row` sums one target's
    interactions with all sources; the arguments are `_pairwise_source`'s."""
    def pairwise(x, y, z, xl, yl, zl, m, eps2, start, ax, ay, az):
        n = x.shape[0]
        for t in prange(ax.shape[0]):   # targets start .. start + len(ax), sources all n
            i = start + t
            ax[t], ay[t], az[t] = row(x, y, z, xl, yl, zl, m, n, x[i], y[i], z[i], xl[i], yl[i], zl[i], eps2)
    return pairwise


def _galactic_source(as91):
    def galactic(x, y, z, ax, ay, az, length_scale, accel_scale):
        for i in prange(x.shape[0]):
            gx, gy, gz = as91(x[i], y[i], z[i], length_scale, accel_scale)
            ax[i] += gx
            ay[i] += gy
            az[i] += gz
    return galactic


def _axpy(y, x, h):
    """y += h x: a drift (x += h v) or a kick (v += h a) on flat float64 arrays."""
    for i in prange(y.shape[0]):
        y[i] += h * x[i]


def _device_function(fn):
    # Inlined into the kernel at numba-IR level, so it takes the kernel's fastmath flags.
    return njit(inline="always", **JIT_OPTIONS)(fn)


# dp's r^-3 without AVX-512, by the LLVM name of the CPU numba compiles for: the divider's route
# (`dp_seed=False`) where `peers --only A-dp-seed A-dp-sqrt` measured it faster than the float32
# seed's, on a quiet machine; the seed's elsewhere (docs/how_fast.md). znver3's entries here and
# below were measured on a Zen 4 (same 256-bit pipes) with NUMBA_CPU_NAME=znver3 NUMBA_CPU_FEATURES=""
# (with the name alone numba keeps the host's AVX-512), then confirmed on a Zen 3 itself
DIVIDER_CPUS = frozenset({
    "znver1",       # AMD EPYC Zen 1, N = 16384: 6.6 cycles per interaction against the seed's 9.3
    "znver3",       # a Zen 4 running code compiled for znver3 (AVX2), N = 16384: 3.55 against 3.94;
                    # AMD EPYC Zen 3, three runs: 1.12-1.17x the seed
})


# the precisions that take the row (`avx2.py`; sp and dsp: the raw estimate and one step on r^-3,
# on 8 lanes, or 16 where the code has AVX-512; dp, on AVX2 only: half the lanes through the
# divider, half a float32 estimate and a series) instead of numba's loop, by the LLVM name of the
# CPU numba compiles for, where `peers --only A-row A-loop A-dp-row A-dp-seed A-dp-sqrt` measured
# it faster on a quiet machine (docs/how_fast.md)
ROW_CPUS = {
    "znver1": ("sp",),  # AMD EPYC Zen 1, N = 16384: sp 1.27x numba's loop; dsp 0.96-0.99x, kept on the loop
    # a Zen 4 running znver3 code, N = 16384: sp 1.33x, dsp 1.37x, dp 1.29x the divider; AMD EPYC Zen 3,
    # three runs: sp 1.32-1.42x, dsp 1.28-1.30x (two of them), dp 1.14-1.23x
    "znver3": ("sp", "dp", "dsp"),
    "znver4": ("sp",),  # AMD EPYC Zen 4, N = 16384, 16 lanes: sp 1.17-1.22x; dsp 1.03-1.11x, kept on the loop
}


# a CPU whose code has no AVX-512 though LLVM's name of it has (a virtual machine that hides it: numba
# compiles AVX2 for it) runs AVX2 code on its own pipes, and takes the choices measured for that
WITHOUT_AVX512 = {
    # a 2-core AMD EPYC Zen 4 VM hiding AVX-512 (LLVM: znver4), N = 16384, three quiet runs: dsp's row 1.34-1.53x
    # numba's loop, dp's row 1.30-1.37x the seed (the divider 1.03-1.08x), sp's row 1.27-1.29x: znver3's choices,
    # which were measured as AVX2 code on a Zen 4's pipes
    "znver4": "znver3",
}


def compiled_for() -> str:
    """LLVM's name of the CPU numba compiles for: NUMBA_CPU_NAME, else the host's."""
    import llvmlite.binding as llvm
    name = numba.config.CPU_NAME
    return llvm.get_host_cpu_name() if name in (None, "", "host") else name


def choosing_for() -> str:
    """The CPU whose measured choices (`ROW_CPUS`, `DIVIDER_CPUS`) the kernels take: the one
    numba compiles for, or WITHOUT_AVX512's AVX2 CPU where its code has no AVX-512."""
    name = compiled_for()
    return WITHOUT_AVX512[name] if name in WITHOUT_AVX512 and not avx512.available() else name


class CpuKernels:
    """The CPU kernels, serial (`parallel=False`) or threaded (`parallel=True`).

    `fused=False` keeps the products of r2 = dx^2 + dy^2 + dz^2 + eps^2 and of the sums
    s += f dx apart from their additions (`product_apart`; in the AVX2 rows, IR multiplies and
    adds): six FMAs per interaction vector become six multiplies and six adds, which moves work
    from the FMA pipes to the add pipes where a core runs an FMA at a multiply's and an add's cost
    together (the AVX-512 dp row, `avx512.py`, keeps its FMAs). `peers` times both shapes side by
    side (`A` and `A-unfused` for numba's loops, `A-row` and `A-row-unfused`, `A-dp-row` and
    `A-dp-row-unfused` for the AVX2 rows) and `nbsymple cpu-asm` measures the classes' costs on
    the host; the versions use the fused shape on every CPU.

    `dp_seed=False` takes dp's r^-3 from a float64 square root and a division
    (`_inverse_cube_dp_sqrt`) instead of the float32 seed and its third-order step: the divider
    instead of two conversions, a float32 estimate and five multiply-adds (AVX2 and older; an
    AVX-512 host's dp loop is the IR row either way). By default (None) the divider's route is
    taken where the CPU compiled for is one of `DIVIDER_CPUS` (`choosing_for`). `peers` times both routes as
    `A-dp-seed` and `A-dp-sqrt`.

    `rows` names the precisions ("sp", "dp", "dsp") whose kernel is the row (`avx2.pairwise_row`;
    sp's and dsp's on 16 lanes where the CPU compiled for has AVX-512) instead of numba's loop,
    where that CPU runs it (`avx2.available()`; dp's only without AVX-512, whose own row it
    keeps); by default (None) those `ROW_CPUS` gives for that CPU (`choosing_for`). `peers` times sp's and dsp's
    as `A-row` and `A-loop`, dp's row as `A-dp-row`."""

    def __init__(self, parallel: bool, fused: bool = True, dp_seed: bool | None = None,
                 rows: tuple[str, ...] | None = None):
        dp_seed = choosing_for() not in DIVIDER_CPUS if dp_seed is None else dp_seed
        rows = ROW_CPUS.get(choosing_for(), ()) if rows is None else tuple(rows)
        rows = tuple(p for p in ("sp", "dp", "dsp") if p in rows and not (p == "dp" and avx512.available())) \
            if rows and avx2.available() else ()
        self.parallel, self.fused, self.dp_seed, self.rows = parallel, fused, dp_seed, rows
        shape = ("" if fused else " unfused") + ("" if dp_seed else " sqrt")

        def jit(name, fastmath, source):
            return on_disk(njit(parallel=parallel, fastmath=fastmath, **JIT_OPTIONS)(source), name, parallel)
        cube_sp = _device_function(_inverse_cube_sp)
        cube_dp = _device_function(_inverse_cube_dp if dp_seed else _inverse_cube_dp_sqrt)
        separation = _device_function(_separation)
        times = _device_function(_times) if fused else product_apart
        def pairwise(precision, ftype, words, cube):
            if precision in rows:
                lanes = avx2.WIDE if avx512.available() else 8     # (dp's AVX2 row is not taken on AVX-512)
                return jit(f"pairwise {precision} row {lanes}" + ("" if fused else " unfused"), FASTMATH_ALL,
                           _pairwise_words_source(avx2.pairwise_row(precision, fused, lanes)))
            if precision == "dp" and avx512.available():
                return jit("pairwise dp" + shape, FASTMATH_ALL, _pairwise_rows_source(avx512.pairwise_row))
            return jit(f"pairwise {precision}{shape}", FASTMATH_ALL, _pairwise_source(ftype, words, cube, times))
        self.pairwise = {"sp": pairwise("sp", np.float32, separation, cube_sp),
                         "dp": pairwise("dp", np.float64, separation, cube_dp),
                         "dsp": pairwise("dsp", np.float32, ds_diff, cube_sp)}
        self.galactic = jit("galactic", False, _galactic_source(njit(as91_acceleration)))
        self.axpy = jit("axpy", FASTMATH_ALL, _axpy)

    @property
    def threads(self) -> int:
        return numba.get_num_threads() if self.parallel else 1

    @property
    def device(self) -> str:
        return f"CPU, {self.threads} thread{'s' if self.threads > 1 else ''}"


SERIAL = CpuKernels(parallel=False)
