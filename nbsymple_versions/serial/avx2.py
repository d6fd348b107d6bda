"""Version A's sp and dsp pairwise rows on AVX2: one target against all sources, written in LLVM
IR on `<8 x float>`, r^-3 from the raw reciprocal-square-root estimate and one step on r^-3.

numba's `1/sqrt` under fastmath is LLVM's estimate plus its Newton step on 1/r, and r^-3 is then
two more multiplies. From the raw estimate s (`vrsqrtps`, relative error below 1.5 2^-12), with
e = 1 - r2 s^2,

    m r^-3 = m s^3 (1 - e)^(-3/2) ~ m s^3 (1 + 3/2 e) = 3/2 m s^3 (5/3 - r2 s^2),

whose first neglected term, 15/8 e^2 <= 1.0e-6, is below float32 summation noise over a cluster.
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
1.05-1.1x the row without them (docs/how_fast.md).

dsp's separation (hi_j - hi_i) + (lo_j - lo_i) is three IR instructions without fast-math
flags, so LLVM keeps it as written. The sources past the last full vector are read with masked
loads: padding lanes get mass 0 and the target's own position (a zero separation), so they add
exactly 0 (eps > 0).

`pairwise_row(precision)` is a numba intrinsic for a kernel to call, linked in and inlined as
`avx512.py`'s row is (both on `ir_row.py`'s skeleton). The kernels take it only on the CPUs of
`serial.kernels.AVX2_ROW_CPUS` (measured faster there); `available()` says whether the CPU
numba compiles for can run it.
"""
from functools import lru_cache
import struct

from llvmlite import ir
from numba.core import types
from numba.core.extending import intrinsic

from . import ir_row

_V = "<8 x float>"
_FMA = f"{_V} @llvm.fma.v8f32"
STEP = 5.0 / 3.0            # m r^-3 = SCALE m s^3 (STEP - r2 s^2)
SCALE = 1.5
ESTIMATE_ERROR = 1.5 * 2.0 ** -12      # vrsqrtps's largest relative error (Intel's manual)


def _hex(value: float) -> str:
    """`value` rounded to float32, in LLVM's hexadecimal form for a float (its value as a double)."""
    single = struct.unpack("<f", struct.pack("<f", value))[0]
    return f"0x{struct.unpack('<Q', struct.pack('<d', single))[0]:016X}"


def _constant(value: float) -> str:
    """An 8-lane float32 constant."""
    return "<" + ", ".join([f"float {_hex(value)}"] * 8) + ">"


def row_name(precision: str) -> str:
    return f"nbsymple_pairwise_{precision}_row_avx2"


def _load(tag: str, name: str, mask: str | None, padding: str) -> list[str]:
    lines = [f"  %p{name}.{tag} = getelementptr inbounds float, ptr %{name}, i64 %j.{tag}"]
    if mask is None:
        return lines + [f"  %{name}.{tag} = load {_V}, ptr %p{name}.{tag}, align 4"]
    return lines + [f"  %{name}.{tag} = call {_V} @llvm.masked.load.v8f32.p0(ptr align 4 %p{name}.{tag}, "
                    f"<8 x i1> {mask}, {_V} {padding})"]


def _interactions(tag: str, mask: str | None, dsp: bool) -> str:
    """The body for one vector of 8 sources at index %j: loads (masked where `mask`), the
    forces added to the accumulators %ax.in.<tag>.. into %ax.<tag>.. (before the 3/2), from
    the separations x_i - x_j and the negated step (see the module)."""
    lines = []
    for axis in "xyz":
        lines += _load(tag, axis, mask, f"%{axis}i8")
        if dsp:
            lines += _load(tag, f"{axis}l", mask, f"%{axis}li8")
            lines += [f"  %h{axis}.{tag} = fsub {_V} %{axis}i8, %{axis}.{tag}",
                      f"  %l{axis}.{tag} = fsub {_V} %{axis}li8, %{axis}l.{tag}",
                      f"  %d{axis}.{tag} = fadd {_V} %h{axis}.{tag}, %l{axis}.{tag}"]
        else:
            lines.append(f"  %d{axis}.{tag} = fsub {_V} %{axis}i8, %{axis}.{tag}")
    lines += _load(tag, "m", mask, "zeroinitializer")
    lines += [
        f"  %r2c.{tag} = call {_FMA}({_V} %dz.{tag}, {_V} %dz.{tag}, {_V} %eps8)",
        f"  %r2b.{tag} = call {_FMA}({_V} %dy.{tag}, {_V} %dy.{tag}, {_V} %r2c.{tag})",
        f"  %r2.{tag} = call {_FMA}({_V} %dx.{tag}, {_V} %dx.{tag}, {_V} %r2b.{tag})",
        f"  %s.{tag} = call {_V} @llvm.x86.avx.rsqrt.ps.256({_V} %r2.{tag})",
        f"  %s2.{tag} = fmul {_V} %s.{tag}, %s.{tag}",
        f"  %c.{tag} = call {_FMA}({_V} %r2.{tag}, {_V} %s2.{tag}, {_V} {_constant(-STEP)})",
        f"  %ms.{tag} = fmul {_V} %m.{tag}, %s.{tag}",
        f"  %ms3.{tag} = fmul {_V} %ms.{tag}, %s2.{tag}",
        f"  %f.{tag} = fmul {_V} %ms3.{tag}, %c.{tag}",
    ]
    return "\n".join(lines + ir_row.accumulated(_V, _FMA, tag))


def row_ir(precision: str) -> str:
    """The LLVM IR module of the `precision` ("sp" or "dsp") row: `{float, float, float}
    <row_name>(x*, y*, z*, xl*, yl*, zl*, m*, n, xi, yi, zi, xli, yli, zli, eps2)`, the sums over
    sources j < n of m_j (x_j - x_i) r^-3 (sp reads no low words; the loops: `ir_row`)."""
    dsp = precision == "dsp"
    rows = ", ".join(f"ptr noalias nocapture readonly %{r}" for r in ("x", "y", "z", "xl", "yl", "zl", "m"))
    body = [f"define {{float, float, float}} @{row_name(precision)}({rows}, i64 %n, float %xi, float %yi, "
            "float %zi, float %xli, float %yli, float %zli, float %eps2) #0 {", "entry:"]
    for name in ("xi", "yi", "zi", "xli", "yli", "zli", "eps"):
        body += ir_row.splat(_V, "float", f"{name}8", "eps2" if name == "eps" else name)
    body += ir_row.loops(_V, lambda tag, mask: _interactions(tag, mask, dsp), unrolled=False)
    body += ir_row.returned(_V, "float", "v8f32", scale=_hex(SCALE))
    body += [
        f"declare {_FMA}({_V}, {_V}, {_V})",
        f"declare {_V} @llvm.x86.avx.rsqrt.ps.256({_V})",
        f"declare {_V} @llvm.masked.load.v8f32.p0(ptr, <8 x i1>, {_V})",
        'attributes #0 = { alwaysinline nounwind "min-legal-vector-width"="256" }',
        *ir_row.NOT_UNROLLED,
    ]
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
def pairwise_row(precision: str):
    """A numba intrinsic `row(x, y, z, xl, yl, zl, m, n, xi, yi, zi, xli, yli, zli, eps2)` ->
    (sum_j m_j dx r^-3, ... dy ..., ... dz ...) over sources j < n for one target: contiguous
    float32 rows (the low words: dsp's, read by dsp only), float32 scalars, eps2 > 0."""

    @intrinsic
    def row(typingctx, x, y, z, xl, yl, zl, m, n, xi, yi, zi, xli, yli, zli, eps2):
        arrays, scalars = (x, y, z, xl, yl, zl, m), (xi, yi, zi, xli, yli, zli, eps2)
        if not all(ir_row.contiguous(a, types.float32) for a in arrays) or not isinstance(n, types.Integer) \
                or any(s != types.float32 for s in scalars):
            return None
        signature = types.UniTuple(types.float32, 3)(*arrays, n, *scalars)
        return signature, ir_row.call_row(row_name(precision), row_ir(precision), 7, ir.FloatType())
    return row
