"""Version A's dp pairwise row on AVX-512: one target against all sources, written in LLVM IR on
`<8 x double>`, with no float32 detour.

LLVM has no float64 reciprocal-square-root estimate of its own (it refuses one for doubles), so
numba's dp loop seeds 1/sqrt in float32 and converts both ways. AVX-512's `vrsqrt14pd` gives a
float64 seed s with relative error below 2^-14; with e = 1 - r2 s^2 (|e| < 1.3e-4),

    r^-3 = s^3 (1 - e)^(-3/2) = s^3 (1 + 3/2 e + 15/8 e^2 + 35/16 e^3 + 315/128 e^4 + O(e^5)),

whose first neglected term, 693/256 e^5 < 1e-19, is far below float64 rounding (stopping at e^3
would leave 2.5 e^4 ~ 6e-16, too near the 1e-15 the reference comparison resolves). Per 8
interactions: 4 loads, 3 subtractions, 15 FMA-pipe operations (r2: 3 fma; s^2, e: 1 mul, 1 fma;
the series: 4 fma; s^3 m p: 3 mul; the sums: 3 fma) and one `vrsqrt14pd`. Flops per interaction as
`core/vocabulary.py` counts them. The sources past the last full vector are read with masked
loads: padding lanes get mass 0 and the target's own position (a zero separation, r2 = eps^2),
so they add exactly 0 (eps > 0, as every pairwise kernel requires).

`pairwise_row(x, y, z, m, n, xi, yi, zi, eps2)` is a numba intrinsic for a kernel to call (it
returns the sums (ax, ay, az)); its IR is linked into the kernel and inlined there, so numba's
on-disk cache keeps it and `nbsymple cpu-asm` counts it in the kernel. `available()` says whether
the CPU numba compiles for has 512-bit registers (AVX-512F): elsewhere the kernels keep numba's
loop (`serial/kernels.py`).
"""
from functools import lru_cache
import struct

from llvmlite import ir
from numba.core import types
from numba.core.extending import intrinsic

from . import ir_row

_V = "<8 x double>"
_FMA = f"{_V} @llvm.fma.v8f64"


def _constant(*values: float) -> str:
    """An 8-lane float64 constant (`values` repeated) in LLVM's exact hexadecimal form."""
    lanes = [struct.unpack("<Q", struct.pack("<d", v))[0] for v in values] * (8 // len(values))
    return "<" + ", ".join(f"double 0x{bits:016X}" for bits in lanes) + ">"


ESTIMATE_ERROR = 2.0 ** -14     # vrsqrt14pd's largest relative error (Intel's manual)


def _seed(tag: str, error: float | None) -> str:
    """The line(s) setting the seed %s ~ r2^(-1/2): AVX-512's estimate (`error` None, the kernels'
    own), or, to test the rest of the row on any x86-64 CPU, the exact value off by `error`
    relative, up in even lanes and down in odd ones."""
    if error is None:
        return f"  %s.{tag} = call {_V} @llvm.x86.avx512.rsqrt14.pd.512({_V} %r2.{tag}, {_V} zeroinitializer, i8 -1)"
    return (f"  %root.{tag} = call {_V} @llvm.sqrt.v8f64({_V} %r2.{tag})\n"
            f"  %exact.{tag} = fdiv {_V} {_constant(1.0)}, %root.{tag}\n"
            f"  %s.{tag} = fmul {_V} %exact.{tag}, {_constant(1 + error, 1 - error)}")


def row_name(error: float | None) -> str:
    return "nbsymple_pairwise_dp_row" + ("_avx512" if error is None else f"_seed_error_{error.hex().replace('+', '')}")


def _interactions(tag: str, mask: str | None, error: float | None) -> str:
    """The body for one vector of 8 sources at index %j: loads (masked where `mask`), the forces
    added to the accumulators %ax.<in>.. into %ax.<tag>.."""
    lines = []
    for name, target in (("x", "%xi8"), ("y", "%yi8"), ("z", "%zi8"), ("m", "zeroinitializer")):
        lines.append(f"  %p{name}.{tag} = getelementptr inbounds double, ptr %{name}, i64 %j.{tag}")
        if mask is None:
            lines.append(f"  %{name}.{tag} = load {_V}, ptr %p{name}.{tag}, align 8")
        else:
            lines.append(f"  %{name}.{tag} = call {_V} @llvm.masked.load.v8f64.p0(ptr align 8 %p{name}.{tag}, "
                         f"<8 x i1> {mask}, {_V} {target})")
    lines += [
        f"  %dx.{tag} = fsub {_V} %x.{tag}, %xi8",
        f"  %dy.{tag} = fsub {_V} %y.{tag}, %yi8",
        f"  %dz.{tag} = fsub {_V} %z.{tag}, %zi8",
        *ir_row.squared_distance(_V, _FMA, tag),
        _seed(tag, error),
        f"  %s2.{tag} = fmul {_V} %s.{tag}, %s.{tag}",
        f"  %nr2.{tag} = fneg {_V} %r2.{tag}",
        f"  %e.{tag} = call {_FMA}({_V} %nr2.{tag}, {_V} %s2.{tag}, {_V} {_constant(1.0)})",
        *ir_row.series(_V, _FMA, tag, _constant, 4),
        f"  %s3.{tag} = fmul {_V} %s2.{tag}, %s.{tag}",
        f"  %ms3.{tag} = fmul {_V} %m.{tag}, %s3.{tag}",
        f"  %f.{tag} = fmul {_V} %ms3.{tag}, %p.{tag}",
    ]
    return "\n".join(lines + ir_row.accumulated(_V, _FMA, tag))


def row_ir(error: float | None = None) -> str:
    """The LLVM IR module of the row, seeded as `_seed(error)` says: `{double, double, double}
    <row_name(error)>(x*, y*, z*, m*, n, xi, yi, zi, eps2)`, the sums over sources j < n of
    m_j (x_j - x_i) r^-3 (the loops: `ir_row`)."""
    defined, _ = ir_row.parameters(("x", "y", "z", "m"), "double", ("xi", "yi", "zi", "eps2"))
    body = [f"define {{double, double, double}} @{row_name(error)}({defined}) #0 {{", "entry:"]
    for name, scalar in (("xi8", "xi"), ("yi8", "yi"), ("zi8", "zi"), ("eps8", "eps2")):
        body += ir_row.splat(_V, "double", name, scalar)
    body += ir_row.loops(_V, lambda tag, mask: _interactions(tag, mask, error))
    body += ir_row.returned(_V, "double", "v8f64")
    body += [
        f"declare {_FMA}({_V}, {_V}, {_V})",
        f"declare {_V} @llvm.x86.avx512.rsqrt14.pd.512({_V}, {_V}, i8)" if error is None else
        f"declare {_V} @llvm.sqrt.v8f64({_V})",
        f"declare {_V} @llvm.masked.load.v8f64.p0(ptr, <8 x i1>, {_V})",
        'attributes #0 = { alwaysinline nounwind "min-legal-vector-width"="512" }',
    ]
    return "\n".join(body) + "\n"


_PROBE = """define <8 x double> @probe(<8 x double> %a, <8 x double> %b) #0 {
  %c = fadd <8 x double> %a, %b
  ret <8 x double> %c
}
attributes #0 = { "min-legal-vector-width"="512" }
"""


@lru_cache(maxsize=None)
def available() -> bool:
    """Whether the CPU numba compiles for (the host, or NUMBA_CPU_NAME with NUMBA_CPU_FEATURES)
    has AVX-512F: LLVM, asked to add two `<8 x double>` for it, uses a 512-bit register."""
    return "zmm" in ir_row.assembly(_PROBE)


def on_host() -> bool:
    """Whether this machine's own CPU has AVX-512F (LLVM's reading of its features), whatever
    NUMBA_CPU_NAME and NUMBA_CPU_FEATURES tell numba to compile for: the CPU of `nbsymple
    cpu-asm`'s host target and of a child process started without them."""
    import llvmlite.binding as llvm
    return bool(llvm.get_host_cpu_features().get("avx512f"))


def row_intrinsic(error: float | None = None):
    """A numba intrinsic `row(x, y, z, m, n, xi, yi, zi, eps2)` -> (sum_j m_j dx r^-3, ... dy ...,
    ... dz ...) over sources j < n for the target at (xi, yi, zi): x, y, z, m contiguous float64
    rows, eps2 the softening squared (> 0); `row_ir(error)` linked in and inlined."""

    @intrinsic
    def row(typingctx, x, y, z, m, n, xi, yi, zi, eps2):
        if not all(ir_row.contiguous(a, types.float64) for a in (x, y, z, m)) or not isinstance(n, types.Integer) \
                or any(s != types.float64 for s in (xi, yi, zi, eps2)):
            return None
        signature = types.UniTuple(types.float64, 3)(x, y, z, m, n, xi, yi, zi, eps2)
        return signature, ir_row.call_row(row_name(error), row_ir(error), 4, ir.DoubleType())
    return row


pairwise_row = row_intrinsic()
"""The kernels' row: AVX-512's seed (call it only where `available()`)."""
