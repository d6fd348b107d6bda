"""The skeleton the LLVM IR rows share (`avx512.py`: dp on AVX-512; `avx2.py`: sp, dsp and dp on
AVX2, and sp and dsp on AVX-512's 16 lanes): one target against all n sources, 8 lanes a vector
(16 where a row says), the full vectors in a loop, the last n mod 8 (16) sources once with masked
loads, the three sums reduced and returned as a struct.

A row's own part is `interactions(tag, mask)`: the lines for one vector of sources at index
%j.<tag> (masked loads where `mask`), from the accumulators %ax.in.<tag>, %ay.in.<tag>,
%az.in.<tag> to %ax.<tag>, %ay.<tag>, %az.<tag>. The masked vector may be a function of its
own (`masked_tail`), never inlined: in the row's function, LLVM allocates the loop's registers
for it too, and in AVX2's 16 registers it rotated AVX2 dsp's values through each other every
trip (in the kernel compiled for a Zen 3: 37 instructions a trip instead of 25, 13 of them
moves; AVX-512's 32 registers lose nothing to it, and AVX2 dp's row keeps it inline: `avx2.py`).
On numba's side, `call_row` is a row's intrinsic codegen: the IR linked into the kernel and the
row called (and inlined) there.
"""
from functools import lru_cache

import llvmlite.binding as llvm
from llvmlite import ir
from numba.core import cgutils, types

LANES = 8          # sources a trip reads, where a row does not say


def lanes_of(vector: str) -> int:
    """The lanes of an IR vector type: 8 for "<8 x float>"."""
    return int(vector[1:].split(" x ")[0])


def splat(vector: str, scalar_type: str, name: str, scalar: str) -> list[str]:
    """%<name>: the scalar %<scalar> in every lane."""
    return [f"  %{name}.0 = insertelement {vector} undef, {scalar_type} %{scalar}, i32 0",
            f"  %{name} = shufflevector {vector} %{name}.0, {vector} undef, <{lanes_of(vector)} x i32> zeroinitializer"]


# (1 - e)^(-3/2) = 1 + C1 e + C2 e^2 + ...: 3/2, 15/8, 35/16, 315/128, 693/256 (exact in binary)
INVERSE_CUBE_SERIES = (1.5, 1.875, 2.1875, 2.4609375, 2.70703125)


def series(vector: str, fma: str, tag: str, constant, terms: int) -> list[str]:
    """%p.<tag> = 1 + C1 e + ... + C<terms> e^terms (`INVERSE_CUBE_SERIES`) from %e.<tag>, in
    Horner's form: `terms` FMAs on `vector` (`fma`: the intrinsic's return type and name;
    `constant(value)`: a constant of that type). r^-3 = s^3 times it, for an estimate s of 1/r with
    e = 1 - r2 s^2."""
    lines, inner = [], constant(INVERSE_CUBE_SERIES[terms - 1])
    for k in range(terms - 1, -1, -1):
        name = f"%p{k or ''}.{tag}"
        addend = constant(INVERSE_CUBE_SERIES[k - 1] if k else 1.0)
        lines.append(f"  {name} = call {fma}({vector} %e.{tag}, {vector} {inner}, {vector} {addend})")
        inner = name
    return lines


def multiply_add(vector: str, fma: str, result: str, a: str, b: str, c: str, fused: bool = True) -> list[str]:
    """%<result> = a b + c: one FMA (`fma`: the intrinsic's return type and name), or, `fused=False`,
    a multiply and an add (IR without fast-math flags, which LLVM keeps apart): on a core whose FMA
    costs a multiply's and an add's pipe time together, the add then runs on an add pipe."""
    if fused:
        return [f"  %{result} = call {fma}({vector} {a}, {vector} {b}, {vector} {c})"]
    return [f"  %{result}.product = fmul {vector} {a}, {b}", f"  %{result} = fadd {vector} %{result}.product, {c}"]


def squared_distance(vector: str, fma: str, tag: str, fused: bool = True) -> list[str]:
    """%r2.<tag> = dx^2 + dy^2 + dz^2 + eps^2 from %dx.<tag>, %dy.<tag>, %dz.<tag> and %eps8, in
    three FMAs (`fused=False`: multiplies and adds; `multiply_add`)."""
    return [*multiply_add(vector, fma, f"r2c.{tag}", f"%dz.{tag}", f"%dz.{tag}", "%eps8", fused),
            *multiply_add(vector, fma, f"r2b.{tag}", f"%dy.{tag}", f"%dy.{tag}", f"%r2c.{tag}", fused),
            *multiply_add(vector, fma, f"r2.{tag}", f"%dx.{tag}", f"%dx.{tag}", f"%r2b.{tag}", fused)]


def accumulated(vector: str, fma: str, tag: str, fused: bool = True) -> list[str]:
    """The sums of one vector: %a?.<tag> = %f.<tag> %d?.<tag> + %a?.in.<tag>, as FMAs
    (`fused=False`: multiplies and adds; `multiply_add`)."""
    return [line for a in "xyz"
            for line in multiply_add(vector, fma, f"a{a}.{tag}", f"%f.{tag}", f"%d{a}.{tag}", f"%a{a}.in.{tag}", fused)]


NOT_UNROLLED = ['!90 = distinct !{!90, !91}', '!91 = !{!"llvm.loop.unroll.disable"}']
"""The metadata `loops(..., unrolled=False)` names, for the end of the module."""


def parameters(pointers: tuple[str, ...], scalar_type: str, scalars: tuple[str, ...]) -> tuple[str, str]:
    """A row's parameters, (`pointers`..., n, `scalars`...): as its definition lists them, and as
    a call passes the same values on (`masked_tail`)."""
    def listed(pointer: str) -> str:
        return ", ".join([*(f"{pointer}%{p}" for p in pointers), "i64 %n", *(f"{scalar_type} %{s}" for s in scalars)])
    return listed("ptr noalias nocapture readonly "), listed("ptr ")


def _sums(vector: str) -> str:
    return f"{{{vector}, {vector}, {vector}}}"


def _sums_in(vector: str) -> str:
    """The masked vector's accumulators, as a call passes them and its function takes them."""
    return ", ".join(f"{vector} %a{a}.in.tail" for a in "xyz")


def _mask(lanes: int) -> list[str]:
    """%mask: lane k is one of the %left sources still to add."""
    indices = ", ".join(f"i64 {k}" for k in range(lanes))
    return [f"  %left.0 = insertelement <{lanes} x i64> undef, i64 %left, i32 0",
            f"  %left8 = shufflevector <{lanes} x i64> %left.0, <{lanes} x i64> undef, <{lanes} x i32> zeroinitializer",
            f"  %mask = icmp slt <{lanes} x i64> <{indices}>, %left8"]


def loops(vector: str, interactions, unrolled: bool = True, lanes: int = LANES,
          tail: tuple[str, str] | None = None) -> list[str]:
    """The blocks after `entry`'s set-up, ending in block `done` with the summed vectors %ax.v,
    %ay.v, %az.v (of type `vector`, which may hold fewer lanes than the `lanes` sources a trip
    reads): `loop` over the full vectors, then `masked` for the rest (%mask: lanes < n - j), or,
    `tail` given (`masked_tail`'s name and the row's parameters as a call passes them,
    `parameters`), a call of that function. `unrolled=False` asks LLVM to keep one vector per trip
    (the module ends with `NOT_UNROLLED`): where one body already holds most of the registers, a
    second copy spills them."""
    if tail is None:
        masked = [*_mask(lanes), interactions("tail", "%mask")]
    else:
        name, passed = tail
        masked = [f"  %tail.sums = call {_sums(vector)} @{name}({passed}, i64 %j.tail, {_sums_in(vector)})",
                  *(f"  %a{a}.tail = extractvalue {_sums(vector)} %tail.sums, {k}" for k, a in enumerate("xyz"))]
    again = "  br i1 %again, label %loop, label %tail" + ("" if unrolled else ", !llvm.loop !90")
    return [
        f"  %full = and i64 %n, -{lanes}",
        "  %any = icmp sgt i64 %full, 0",
        "  br i1 %any, label %loop, label %tail",
        "loop:",
        "  %j.loop = phi i64 [0, %entry], [%next, %loop]",
        *(f"  %a{a}.in.loop = phi {vector} [zeroinitializer, %entry], [%a{a}.loop, %loop]" for a in "xyz"),
        interactions("loop", None),
        f"  %next = add nuw nsw i64 %j.loop, {lanes}",
        "  %again = icmp slt i64 %next, %full",
        again,
        "tail:",
        "  %j.tail = phi i64 [0, %entry], [%next, %loop]",
        *(f"  %a{a}.in.tail = phi {vector} [zeroinitializer, %entry], [%a{a}.loop, %loop]" for a in "xyz"),
        "  %left = sub i64 %n, %j.tail",
        "  %some = icmp sgt i64 %left, 0",
        "  br i1 %some, label %masked, label %done",
        "masked:",
        *masked,
        "  br label %done",
        "done:",
        *(f"  %a{a}.v = phi {vector} [%a{a}.in.tail, %tail], [%a{a}.tail, %masked]" for a in "xyz"),
    ]


def masked_tail(name: str, defined: str, setup: list[str], vector: str, interactions, lanes: int = LANES,
                width: int = 256) -> list[str]:
    """The function `loops` calls for the last n - j < `lanes` sources: `interactions` with masked
    loads, from the sums it is given to the sums it returns; `defined`, the row's parameters
    (`parameters`), then j and the three sums; `setup`, the row's `entry` lines it needs (its
    splats); `width`, the row's "min-legal-vector-width". Never inlined (see the module)."""
    returned_sums = [f"  %r.{k} = insertvalue {_sums(vector)} {'undef' if k == 0 else f'%r.{k - 1}'}, "
                     f"{vector} %a{a}.tail, {k}" for k, a in enumerate("xyz")]
    return [f"define internal {_sums(vector)} @{name}({defined}, i64 %j.tail, {_sums_in(vector)}) #1 {{",
            "entry:", *setup,
            "  %left = sub i64 %n, %j.tail", *_mask(lanes), interactions("tail", "%mask"), *returned_sums,
            f"  ret {_sums(vector)} %r.2", "}",
            f'attributes #1 = {{ noinline nounwind "min-legal-vector-width"="{width}" }}']


def returned(vector: str, scalar_type: str, suffix: str, scale: str | None = None) -> list[str]:
    """The three vectors' sums (`llvm.vector.reduce.fadd.<suffix>`, in any order), times the
    constant `scale` where given, returned as {s, s, s}; closes the function."""
    struct = f"{{{scalar_type}, {scalar_type}, {scalar_type}}}"
    lines = [f"  %a{a}.sum = call reassoc {scalar_type} @llvm.vector.reduce.fadd.{suffix}({scalar_type} 0.0, "
             f"{vector} %a{a}.v)" for a in "xyz"]
    if scale:
        lines += [f"  %a{a} = fmul {scalar_type} %a{a}.sum, {scale}" for a in "xyz"]
    value = "" if scale else ".sum"
    return lines + [
        f"  %r.0 = insertvalue {struct} undef, {scalar_type} %ax{value}, 0",
        f"  %r.1 = insertvalue {struct} %r.0, {scalar_type} %ay{value}, 1",
        f"  %r.2 = insertvalue {struct} %r.1, {scalar_type} %az{value}, 2",
        f"  ret {struct} %r.2",
        "}",
        f"declare {scalar_type} @llvm.vector.reduce.fadd.{suffix}({scalar_type}, {vector})",
    ]


def codegen():
    """numba's CPU code generator: its target machine is the CPU numba compiles for."""
    from numba.core.registry import cpu_target
    return cpu_target.target_context.codegen()


def assembly(module: str) -> str:
    """The assembly LLVM emits for the IR `module` on the CPU numba compiles for (probes)."""
    return codegen()._tm.emit_assembly(llvm.parse_assembly(module))


@lru_cache(maxsize=None)
def _library(code_generator, name: str, module: str):
    """The IR `module` as a numba code library of `code_generator`, for kernels to link in."""
    library = code_generator.create_library(name)
    parsed = llvm.parse_assembly(module)
    parsed.triple = llvm.get_process_triple()
    library.add_llvm_module(parsed)
    library.finalize()
    return library


def contiguous(a, dtype) -> bool:
    return isinstance(a, types.Array) and a.dtype == dtype and a.ndim == 1 and a.layout == "C"


def call_row(name: str, module: str, arrays: int, scalar: ir.Type):
    """An intrinsic's codegen calling row `name` of IR `module`, whose arguments are `arrays`
    contiguous rows (their data pointers), the count n (int64) and scalars of type `scalar`,
    and which returns three of them as a struct: a UniTuple of three."""
    def generate(context, builder, sig, args):
        context.active_code_library.add_linking_library(_library(context.codegen(), name, module))
        pointers = [context.make_array(t)(context, builder, v).data for t, v in zip(sig.args[:arrays], args[:arrays])]
        count = context.cast(builder, args[arrays], sig.args[arrays], types.int64)
        function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(
            ir.LiteralStructType([scalar] * 3),
            [p.type for p in pointers] + [ir.IntType(64)] + [scalar] * (len(args) - arrays - 1)), name)
        sums = builder.call(function, [*pointers, count, *args[arrays + 1:]])
        return context.make_tuple(builder, sig.return_type, [builder.extract_value(sums, k) for k in range(3)])
    return generate
