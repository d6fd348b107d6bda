"""Version A's pairwise rows on AVX2: one target against all sources, written in LLVM IR. sp and
dsp on `<8 x float>` (on AVX-512, `<16 x float>`), r^-3 from the raw reciprocal-square-root
estimate and one step on r^-3; dp on `<8 x double>`, half its lanes through the divider and half
through a float32 estimate.

numba's `1/sqrt` under fastmath is LLVM's estimate plus its Newton step on 1/r, and r^-3 is then
two more multiplies. From the raw estimate s (`vrsqrtps`, relative error below 1.5 2^-12), with
e = 1 - r2 s^2,

    m r^-3 = m s^3 (1 - e)^(-3/2) ~ m s^3 (1 + 3/2 e) = 3/2 m s^3 (5/3 - r2 s^2),

whose first neglected term, 15/8 e^2 <= 1.01e-6, is below float32 summation noise over a cluster.
The 3/2 is applied once, to the sums. Per 8 interactions: 3 subtractions (dsp: 9 subtractions and
additions), 11 FMA-pipe operations after the estimate where numba's loop takes 13 (r2: 3 fma;
s^2, m s, m s^3, the step's fma and its product: 5; the sums: 3 fma) and one `vrsqrtps`: a
shorter chain, which a core that cannot overlap numba's (a Zen 1) runs faster.

The separations are taken target minus source, x_i - x_j, so that every source load folds into
its subtraction (x86 reads only an operation's second operand from memory; the mass folds into
its multiply), and the step is negated to match, c = r2 s^2 - 5/3: each force term is then
exactly the negative of the other orientation's, and the sums are the same bits. The loop keeps
one vector per trip (`ir_row.loops(unrolled=False)`): dsp's body alone holds 6 target words,
eps^2, the step's constant, 3 sums and its temporaries in AVX2's 16 vector registers, and a
second copy spilled them. Both, on a Zen 4 running code compiled for znver3: dsp 1.3-1.6x, sp
1.05-1.1x the row without them (docs/how_fast.md). sp's and dsp's last n mod 8 sources are a
function of their own (`ir_row.masked_tail`): in the row's function, LLVM rotated dsp's values
through the 16 registers every trip for them (13 moves of 37 instructions; now 25, one move).

dsp's separation, target minus source as above, (hi_i - hi_j) + (lo_i - lo_j), is three IR
instructions without fast-math flags, so LLVM keeps it as written. The sources past the last
full vector are read with masked loads: padding lanes get mass 0 and the target's own position
(a zero separation), so they add exactly 0 (eps > 0).

dp's row takes 8 sources a trip (two 256-bit halves) and r^-3 two ways at once. Lanes 0-3: the
divider, m / (r2 sqrt(r2)) (`vsqrtpd`, `vdivpd`, each correctly rounded). Lanes 4-7: r2 to
float32, the raw `vrsqrtps`, back to float64, and the series of (1 - e)^(-3/2) to e^5
(`ir_row.series`: |e| < 7.4e-4, the first term left out below 5e-19). Alone, the divider's route
waits on the divider (two 256-bit operations per 4 interactions) and the estimate's route on its
chain (two conversions, the estimate, five FMAs), which the core overlaps only in part; half the
lanes each way keeps the divider and the FMA pipes busy together. Both halves add into the same
4-lane sums. Like numba's float32-seeded loop, it needs r2 in float32's range
(`simulation.least_softening`). On a Zen 4 running znver3 code: 1.29x the divider's route, about
2.7 cycles per interaction (docs/how_fast.md).

On AVX-512 the sp and dsp rows run as written on 16 lanes (`lanes=WIDE`): zmm registers and
AVX-512's `vrsqrt14ps`, whose relative error below 2^-14 leaves the step's first neglected term
below 15/8 (2 2^-14)^2 = 2.8e-8. Per 16 interactions the sp loop is 19 instructions (numba's
AVX-512 loop: 22.5); on a Zen 4 it did 1.2x numba's loop (docs/how_fast.md).

`pairwise_row(precision)` is a numba intrinsic for a kernel to call, linked in and inlined as
`avx512.py`'s row is (both on `ir_row.py`'s skeleton); `pairwise_row(precision, fused=False)`
takes r2 and the sums in multiplies and adds instead of FMAs, for a core whose FMA costs more
than a multiply (docs/how_fast.md). The kernels take it only on the CPUs of
`serial.kernels.ROW_CPUS` (measured faster there); `available()` says whether the CPU
numba compiles for can run it.
"""
from functools import lru_cache, partial
import struct

from llvmlite import ir
from numba.core import types
from numba.core.extending import intrinsic

from . import ir_row

STEP = 5.0 / 3.0            # m r^-3 = SCALE m s^3 (STEP - r2 s^2)
SCALE = 1.5
ESTIMATE_ERROR = 1.5 * 2.0 ** -12      # vrsqrtps's largest relative error (Intel's manual)
WIDE = 16                   # the float32 rows' lanes on AVX-512, whose estimate is `vrsqrt14ps`
WIDE_ESTIMATE_ERROR = 2.0 ** -14       # vrsqrt14ps's largest relative error (Intel's manual)


def _vector(lanes: int) -> str:
    return f"<{lanes} x float>"


def _fma(lanes: int) -> str:
    return f"{_vector(lanes)} @llvm.fma.v{lanes}f32"


def _hex(value: float) -> str:
    """`value` rounded to float32, in LLVM's hexadecimal form for a float (its value as a double)."""
    single = struct.unpack("<f", struct.pack("<f", value))[0]
    return f"0x{struct.unpack('<Q', struct.pack('<d', single))[0]:016X}"


def _constant(value: float, lanes: int = 8, other: float | None = None) -> str:
    """A float32 constant of `lanes` lanes (`other`, where given, in the odd ones)."""
    values = [value, value if other is None else other] * (lanes // 2)
    return "<" + ", ".join(f"float {_hex(v)}" for v in values) + ">"


_D = "<8 x double>"
_D_FMA = f"{_D} @llvm.fma.v8f64"
_H = "<4 x double>"          # half of dp's vector: one 256-bit register
_H_FMA = f"{_H} @llvm.fma.v4f64"
_HALVES = ("<4 x i32> <i32 0, i32 1, i32 2, i32 3>", "<4 x i32> <i32 4, i32 5, i32 6, i32 7>")
DP_SERIES_TERMS = 5          # vrsqrtps's estimate: |e| < 7.4e-4, first term left out 2.9 e^6 < 5e-19


def _double(value: float) -> str:
    """A 4-lane float64 constant (half of dp's vector), in LLVM's exact hexadecimal form."""
    return "<" + ", ".join([f"double 0x{struct.unpack('<Q', struct.pack('<d', value))[0]:016X}"] * 4) + ">"


def row_name(precision: str, fused: bool = True, lanes: int = 8, error: float | None = None) -> str:
    return (f"nbsymple_pairwise_{precision}_row_" + ("avx2" if lanes == 8 else "avx512") + ("" if fused else "_unfused")
            + ("" if error is None else f"_seed_error_{error.hex().replace('+', '')}"))


def _load(tag: str, name: str, mask: str | None, padding: str, scalar: str = "float", lanes: int = 8) -> list[str]:
    """%<name>.<tag>: `lanes` words of row %<name> from %j.<tag> (masked where `mask`: `padding`
    in the other lanes)."""
    vector, size = f"<{lanes} x {scalar}>", 4 if scalar == "float" else 8
    lines = [f"  %p{name}.{tag} = getelementptr inbounds {scalar}, ptr %{name}, i64 %j.{tag}"]
    if mask is None:
        return lines + [f"  %{name}.{tag} = load {vector}, ptr %p{name}.{tag}, align {size}"]
    suffix = f"v{lanes}" + ("f32" if scalar == "float" else "f64")
    return lines + [f"  %{name}.{tag} = call {vector} @llvm.masked.load.{suffix}.p0(ptr align {size} "
                    f"%p{name}.{tag}, <{lanes} x i1> {mask}, {vector} {padding})"]


def _estimate(tag: str, lanes: int, error: float | None) -> list[str]:
    """%s.<tag> ~ r2^(-1/2): the hardware's raw estimate (8 lanes: `vrsqrtps`; 16: AVX-512's
    `vrsqrt14ps`), or, `error` given, to test a row on a CPU without that estimate, the exact
    value off by `error` relative, up in even lanes and down in odd ones (as `avx512._seed`)."""
    v = _vector(lanes)
    if error is not None:
        return [f"  %root.{tag} = call {v} @llvm.sqrt.v{lanes}f32({v} %r2.{tag})",
                f"  %exact.{tag} = fdiv {v} {_constant(1.0, lanes)}, %root.{tag}",
                f"  %s.{tag} = fmul {v} %exact.{tag}, {_constant(1 + error, lanes, 1 - error)}"]
    if lanes == 8:
        return [f"  %s.{tag} = call {v} @llvm.x86.avx.rsqrt.ps.256({v} %r2.{tag})"]
    return [f"  %s.{tag} = call {v} @llvm.x86.avx512.rsqrt14.ps.512({v} %r2.{tag}, {v} zeroinitializer, i16 -1)"]


def _interactions(tag: str, mask: str | None, dsp: bool, fused: bool, lanes: int = 8,
                  error: float | None = None) -> str:
    """The body for one vector of `lanes` sources at index %j: loads (masked where `mask`), the
    forces added to the accumulators %ax.in.<tag>.. into %ax.<tag>.. (before the 3/2), from
    the separations x_i - x_j and the negated step (see the module); r2 and the sums in FMAs, or
    (`fused=False`) in multiplies and adds; the estimate `_estimate`'s."""
    v, fma, lines = _vector(lanes), _fma(lanes), []
    for axis in "xyz":
        lines += _load(tag, axis, mask, f"%{axis}i8", lanes=lanes)
        if dsp:
            lines += _load(tag, f"{axis}l", mask, f"%{axis}li8", lanes=lanes)
            lines += [f"  %h{axis}.{tag} = fsub {v} %{axis}i8, %{axis}.{tag}",
                      f"  %l{axis}.{tag} = fsub {v} %{axis}li8, %{axis}l.{tag}",
                      f"  %d{axis}.{tag} = fadd {v} %h{axis}.{tag}, %l{axis}.{tag}"]
        else:
            lines.append(f"  %d{axis}.{tag} = fsub {v} %{axis}i8, %{axis}.{tag}")
    lines += _load(tag, "m", mask, "zeroinitializer", lanes=lanes)
    lines += [
        *ir_row.squared_distance(v, fma, tag, fused),
        *_estimate(tag, lanes, error),
        f"  %s2.{tag} = fmul {v} %s.{tag}, %s.{tag}",
        f"  %c.{tag} = call {fma}({v} %r2.{tag}, {v} %s2.{tag}, {v} {_constant(-STEP, lanes)})",
        f"  %ms.{tag} = fmul {v} %m.{tag}, %s.{tag}",
        f"  %ms3.{tag} = fmul {v} %ms.{tag}, %s2.{tag}",
        f"  %f.{tag} = fmul {v} %ms3.{tag}, %c.{tag}",
    ]
    return "\n".join(lines + ir_row.accumulated(v, fma, tag, fused))


def _dp_interactions(tag: str, mask: str | None, fused: bool) -> str:
    """dp's body for one vector of 8 sources at index %j: loads (masked where `mask`), the forces
    added to the accumulators %ax.in.<tag>.. into %ax.<tag>..: lanes 0-3 through the divider,
    lanes 4-7 through the float32 estimate and the series (see the module); r2 and the sums in
    FMAs, or (`fused=False`) in multiplies and adds (the series keeps its FMAs)."""
    lines = []
    for axis in "xyz":
        lines += _load(tag, axis, mask, f"%{axis}i8", "double")
        lines.append(f"  %d{axis}.{tag} = fsub {_D} %{axis}i8, %{axis}.{tag}")
    lines += _load(tag, "m", mask, "zeroinitializer", "double")
    lines += [
        *ir_row.squared_distance(_D, _D_FMA, tag, fused),
        *(f"  %{v}{k}.{tag} = shufflevector {_D} %{v}.{tag}, {_D} undef, {_HALVES[k]}"
          for v in ("r2", "m", "dx", "dy", "dz") for k in (0, 1)),
        f"  %root.{tag} = call {_H} @llvm.sqrt.v4f64({_H} %r20.{tag})",
        f"  %r3.{tag} = fmul {_H} %r20.{tag}, %root.{tag}",
        f"  %f0.{tag} = fdiv {_H} %m0.{tag}, %r3.{tag}",
        f"  %r2f.{tag} = fptrunc {_H} %r21.{tag} to <4 x float>",
        f"  %sf.{tag} = call <4 x float> @llvm.x86.sse.rsqrt.ps(<4 x float> %r2f.{tag})",
        f"  %s.{tag} = fpext <4 x float> %sf.{tag} to {_H}",
        f"  %s2.{tag} = fmul {_H} %s.{tag}, %s.{tag}",
        f"  %nr2.{tag} = fneg {_H} %r21.{tag}",
        f"  %e.{tag} = call {_H_FMA}({_H} %nr2.{tag}, {_H} %s2.{tag}, {_H} {_double(1.0)})",
        *ir_row.series(_H, _H_FMA, tag, _double, DP_SERIES_TERMS),
        f"  %s3.{tag} = fmul {_H} %s2.{tag}, %s.{tag}",
        f"  %ms3.{tag} = fmul {_H} %m1.{tag}, %s3.{tag}",
        f"  %f1.{tag} = fmul {_H} %ms3.{tag}, %p.{tag}",
    ]
    for k, (start, end) in enumerate((("in.", "half."), ("half.", ""))):   # both halves into one 4-lane sum
        lines += [f"  %nf{k}.{tag} = fneg {_H} %f{k}.{tag}"]                   # -f: the separations are x_i - x_j
        lines += [line for a in "xyz" for line in ir_row.multiply_add(
            _H, _H_FMA, f"a{a}.{end}{tag}", f"%nf{k}.{tag}", f"%d{a}{k}.{tag}", f"%a{a}.{start}{tag}", fused)]
    return "\n".join(lines)


def row_ir(precision: str, fused: bool = True, lanes: int = 8, error: float | None = None) -> str:
    """The LLVM IR module of the `precision` row: `{s, s, s} <row_name>(x*, y*, z*, xl*, yl*, zl*,
    m*, n, xi, yi, zi, xli, yli, zli, eps2)` with s float (sp, dsp) or double (dp), the sums over
    sources j < n of m_j (x_j - x_i) r^-3 (sp and dp read no low words; the loops: `ir_row`);
    sp and dsp on `lanes` 8 or 16 (`WIDE`, AVX-512), their estimate's `error` as `_estimate`."""
    if precision == "dp" and (lanes, error) != (8, None):
        raise ValueError("dp's AVX2 row has 8 lanes and the hardware's estimate")
    scalar = "double" if precision == "dp" else "float"
    vector = f"<{lanes} x {scalar}>"
    defined, passed = ir_row.parameters(("x", "y", "z", "xl", "yl", "zl", "m"), scalar,
                                        ("xi", "yi", "zi", "xli", "yli", "zli", "eps2"))
    function = row_name(precision, fused, lanes, error)
    setup = [line for name in ("xi", "yi", "zi") + (("xli", "yli", "zli") if precision == "dsp" else ()) + ("eps",)
             for line in ir_row.splat(vector, scalar, f"{name}8", "eps2" if name == "eps" else name)]
    body = [f"define {{{scalar}, {scalar}, {scalar}}} @{function}({defined}) #0 {{", "entry:", *setup]
    if precision == "dp":           # its masked vector inline: apart, its loop took 1.03-1.04x as long
        body += ir_row.loops(_H, partial(_dp_interactions, fused=fused), unrolled=False)  # 8 a trip, 4-lane sums
        body += ir_row.returned(_H, "double", "v4f64")
        body += [f"declare {_D_FMA}({_D}, {_D}, {_D})", f"declare {_H_FMA}({_H}, {_H}, {_H})",
                 f"declare {_H} @llvm.sqrt.v4f64({_H})", "declare <4 x float> @llvm.x86.sse.rsqrt.ps(<4 x float>)",
                 f"declare {_D} @llvm.masked.load.v8f64.p0(ptr, <8 x i1>, {_D})"]
    else:
        v, tail = _vector(lanes), function + "_tail"      # the masked vector in a function of its own
        interactions = partial(_interactions, dsp=precision == "dsp", fused=fused, lanes=lanes, error=error)
        body += ir_row.loops(v, interactions, unrolled=False, lanes=lanes, tail=(tail, passed))
        body += ir_row.returned(v, "float", f"v{lanes}f32", scale=_hex(SCALE))
        body += ir_row.masked_tail(tail, defined, setup, v, interactions, lanes, width=32 * lanes)
        estimate = f"declare {v} @llvm.sqrt.v{lanes}f32({v})" if error is not None else \
            f"declare {v} @llvm.x86.avx.rsqrt.ps.256({v})" if lanes == 8 else \
            f"declare {v} @llvm.x86.avx512.rsqrt14.ps.512({v}, {v}, i16)"
        body += [f"declare {_fma(lanes)}({v}, {v}, {v})", estimate,
                 f"declare {v} @llvm.masked.load.v{lanes}f32.p0(ptr, <{lanes} x i1>, {v})"]
    body += [f'attributes #0 = {{ alwaysinline nounwind "min-legal-vector-width"="{32 * lanes}" }}',
             *ir_row.NOT_UNROLLED]
    return "\n".join(body) + "\n"


_PROBE = """define <8 x float> @probe(<8 x float> %a, <8 x float> %b, <8 x float> %c) {
  %d = call <8 x float> @llvm.fma.v8f32(<8 x float> %a, <8 x float> %b, <8 x float> %c)
  ret <8 x float> %d
}
declare <8 x float> @llvm.fma.v8f32(<8 x float>, <8 x float>, <8 x float>)
"""


@lru_cache(maxsize=None)
def available() -> bool:
    """Whether the CPU numba compiles for runs the row: LLVM, asked for an 8-lane float32 FMA,
    emits one 256-bit `vfmadd` (AVX and FMA; the row's estimate is AVX's `vrsqrtps`)."""
    asm = ir_row.assembly(_PROBE)
    return "vfmadd" in asm and "ymm" in asm


@lru_cache(maxsize=None)
def pairwise_row(precision: str, fused: bool = True, lanes: int = 8, error: float | None = None):
    """A numba intrinsic `row(x, y, z, xl, yl, zl, m, n, xi, yi, zi, xli, yli, zli, eps2)` ->
    (sum_j m_j dx r^-3, ... dy ..., ... dz ...) over sources j < n for one target: contiguous rows
    and scalars of float32 (sp, dsp) or float64 (dp), the low words dsp's (read by dsp only),
    eps2 > 0; r2 and the sums in FMAs, or (`fused=False`) in multiplies and adds; sp and dsp on
    `lanes` 8 or 16 (`WIDE`: AVX-512 only, unless `error` stands in for its estimate)."""
    dtype, scalar = (types.float64, ir.DoubleType()) if precision == "dp" else (types.float32, ir.FloatType())

    @intrinsic
    def row(typingctx, x, y, z, xl, yl, zl, m, n, xi, yi, zi, xli, yli, zli, eps2):
        arrays, scalars = (x, y, z, xl, yl, zl, m), (xi, yi, zi, xli, yli, zli, eps2)
        if not all(ir_row.contiguous(a, dtype) for a in arrays) or not isinstance(n, types.Integer) \
                or any(s != dtype for s in scalars):
            return None
        signature = types.UniTuple(dtype, 3)(*arrays, n, *scalars)
        return signature, ir_row.call_row(row_name(precision, fused, lanes, error),
                                          row_ir(precision, fused, lanes, error), 7, scalar)
    return row
