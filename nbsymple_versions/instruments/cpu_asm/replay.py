"""Costs measured on the host: a kernel's hot loop and each instruction class, replayed in a loop
of their own and timed in core cycles.

A replay is a block of AT&T instructions assembled by LLVM (llvmlite, the JIT numba itself uses)
as the body of a `decq; jnz` loop, every vector register and every 32-bit float of a small buffer
set to 1.0 first, denormals flushed (MXCSR, restored after), and timed in the thread's own CPU
time over enough turns for `TURN_SECONDS`, best of `REPEATS`; `frequency.core_frequency_hz`,
measured in the same run, turns seconds into cycles. Three replays explain where a loop's
cycles go:

- `class_costs`: each class of the mix alone (`SAMPLES`: a 512-, 256- and 128-bit FMA,
  multiply, add, reciprocal square root estimate, divide, square root, conversion to float32,
  widening to float64, shuffle, load, store), `BLOCK` independent copies: the reciprocal
  throughput of the class on this core, cycles per instruction. A class of the mix that holds
  instructions of different costs is sampled per kind (`cost_class`): its divides and square
  roots, its narrowing and widening conversions (a hunt: their mean, charged to each, put a
  bound's part at 109 % of it).
- `independent`: the hot loop's own vector instructions, with every dependency between them
  removed (sources renamed to registers that are never written, destinations rotated over the
  others, memory operands moved into the buffer): what the core's pipes allow for this mix of
  instructions, sharing and register-file ports included, whatever a table says. This is the
  pipe bound `nbsymple cpu-asm` predicts for the host.
- `as_compiled`: the hot loop as it is, its dependency chains included, its memory operands in
  the buffer (L1): above the independent replay by what latency costs.

Integer and branch instructions (the loop's own counter) and instructions that write a general
register are left out of a replay; calls cannot be replayed (galactic's `pow`): its figure is a
lower bound, as the table's is.
"""
from dataclasses import dataclass
import ctypes
from functools import cache
import platform
import re
import signal
import time

from .x86 import Instruction, classify

TURN_SECONDS = 0.01
TIMEOUT = 600               # s, for the whole replay child (it takes a few seconds)
REPEATS = 5
BLOCK = 24                  # copies of one instruction in a class sample
BUFFER_FLOATS = 4096        # 16 KiB: loads read the first half, stores write the second
_LOADS, _STORES = 0, 8192   # byte offsets of the two halves
_MXCSR = 16384              # two 32-bit words after the buffer: the saved and the flushing MXCSR

# one instruction per class and width, sources first (AT&T); {d} a destination, {s0} {s1}
# sources, {m} a memory operand; the register letter is the width's
SAMPLES = {
    "fma": ["vfmadd231ps {s0}, {s1}, {d}"],
    "mul": ["vmulps {s0}, {s1}, {d}"],
    "add": ["vaddps {s0}, {s1}, {d}"],
    "rsqrt": ["vrsqrtps {s0}, {d}"],                      # 512-bit: vrsqrt14ps
    "div": ["vdivpd {s0}, {s1}, {d}"],                   # the mix's sqrt_div: `cost_class`
    "sqrt": ["vsqrtpd {s0}, {d}"],
    "convert": ["vcvtpd2ps {s0}, {dh}"],                  # half-width operand: {h} {dh}
    "widen": ["vcvtps2pd {h}, {d}"],                      # the mix's convert, to a wider element
    "shuffle": ["vshufps $27, {s0}, {s1}, {d}"],
    "load": ["vmovups {m}, {d}"],
    "store": ["vmovups {s0}, {m}"],
}
_LETTER = {128: "x", 256: "y", 512: "z"}
_VECTOR = re.compile(r"%([xyz])mm(\d+)")
_GENERAL = re.compile(r"%(r\w+|e\w\w|[abcd][lhx]|[sd]il?|[sb]pl?)\b")
_MEMORY = re.compile(r"-?\w*\([^)]*\)")
_MASK = re.compile(r"\{%k\d\}|\{z\}")
# VEX-only instructions (no EVEX form): registers 0..15 only
_VEX_ONLY = re.compile(r"v(rsqrt|rcp)(ps|ss)|vp?blendv?(p[sd]|b|d)|vdpp[sd]|vp?maskmov\w*|vp?test\w*"
                       r"|vh(add|sub)p[sd]|vround\w+|vaddsubp[sd]|v(insert|extract|perm2|broadcast)[fi]128"
                       r"|vp?cmp\w*")


_WIDENING = re.compile(r"vcvt(ps2pd|ss2sd|ph2ps)")


def cost_class(ins: Instruction) -> str:
    """The `SAMPLES` class whose measured cost is `ins`'s: its mix class (`x86.classify`), its
    divide or square root apart, its widening conversion apart."""
    kind = classify(ins)
    if kind == "sqrt_div":
        return "sqrt" if "sqrt" in ins.mnemonic else "div"
    if kind == "convert" and _WIDENING.match(ins.mnemonic):
        return "widen"
    return kind


def runs_here() -> bool:
    """Replays are x86-64 assembly: they run on an x86-64 host only."""
    return platform.machine().lower() in ("x86_64", "amd64")


@dataclass(frozen=True)
class Host:
    """What a replay may use on this CPU: 32 vector registers and 512-bit ones with AVX-512F."""
    registers: int
    widths: tuple[int, ...]


@cache
def host() -> Host:
    from ...serial import avx512
    return Host(32, (128, 256, 512)) if avx512.on_host() else Host(16, (128, 256))


def _operands(text: str) -> list[str]:
    """AT&T operands split at the commas outside parentheses and braces."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "({" and 1 or ch in ")}" and -1 or 0
        if ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    tail = text[start:].strip()
    return parts + [tail] if tail else parts


def replayable(ins: Instruction) -> bool:
    """A vector instruction that writes no general register and calls nothing."""
    ops = _operands(ins.operands)
    if not ops or classify(ins) in ("integer", "call") or not _VECTOR.search(ins.operands):
        return False
    return not _GENERAL.search(_MEMORY.sub("", ops[-1]))      # its destination is not a general register


def _step(bits: int) -> int:
    return max(8, bits // 8)


class _Memory:
    """Memory operands moved into the buffer, addressed from %rdi: loads one after the other
    through its first half, stores through its second (a load never reads what a store wrote),
    each advancing by its register's width."""

    def __init__(self):
        self.offset = {False: 0, True: 0}

    def __call__(self, operand: str, store: bool, bits: int) -> str:
        suffix = operand[operand.index(")") + 1:]            # {1to16}
        step = 8 if suffix else _step(bits)
        at = self.offset[store] % (_STORES - _LOADS - 64)
        self.offset[store] = at + step
        return f"{(_STORES if store else _LOADS) + at}(%rdi){suffix}"


def as_compiled(body: list[Instruction]) -> list[str]:
    """The loop's replayable instructions as they are, memory operands moved into the buffer."""
    memory, lines = _Memory(), []
    for ins in filter(replayable, body):
        ops = [_MASK.sub("", op) for op in _operands(ins.operands)]
        ops = [memory(op, i == len(ops) - 1, ins.bits) if _MEMORY.fullmatch(op.split("{")[0]) else op
               for i, op in enumerate(ops)]
        lines.append(f"{ins.mnemonic} {', '.join(ops)}")
    return lines


def independent(body: list[Instruction], registers: int | None = None) -> list[str]:
    """The loop's replayable instructions with no dependency between them: every source register
    renamed to one of three that nothing writes (0, 1, 2, by position), every destination rotated
    over the others (an instruction that reads its destination, as an FMA does, reads what was
    written `registers - 3` destinations earlier), memory operands moved into the buffer."""
    registers = registers or host().registers
    memory, lines, turn = _Memory(), [], 0
    for ins in filter(replayable, body):
        ops = [_MASK.sub("", op) for op in _operands(ins.operands)]
        rotate = min(registers, 16) if _VEX_ONLY.fullmatch(ins.mnemonic) else registers
        out = []
        for i, op in enumerate(ops):
            last = i == len(ops) - 1
            if _MEMORY.fullmatch(op.split("{")[0]):
                out.append(memory(op, last, ins.bits))
            elif (v := _VECTOR.fullmatch(op)) and last:
                out.append(f"%{v.group(1)}mm{3 + turn % (rotate - 3)}")
                turn += 1
            elif v := _VECTOR.fullmatch(op):
                out.append(f"%{v.group(1)}mm{i % 3}")
            else:
                out.append(op)
        lines.append(f"{ins.mnemonic} {', '.join(out)}")
    return lines


def sample(kind: str, bits: int, registers: int | None = None) -> list[str]:
    """`BLOCK` independent instructions of class `kind` at `bits` (its `SAMPLES`, in turn)."""
    registers = registers or host().registers
    letter, half = _LETTER[bits], _LETTER.get(bits // 2, "x")
    lines = []
    for k in range(BLOCK):
        form = SAMPLES[kind][k % len(SAMPLES[kind])]
        if kind == "rsqrt" and bits == 512:
            form = form.replace("vrsqrtps", "vrsqrt14ps")
        vex_only = _VEX_ONLY.fullmatch(form.split()[0])
        d = 3 + k % ((min(registers, 16) if vex_only else registers) - 3)
        m = f"{(_STORES if kind == 'store' else _LOADS) + _step(bits) * k}(%rdi)"
        lines.append(form.format(d=f"%{letter}mm{d}", s0=f"%{letter}mm0", s1=f"%{letter}mm1", m=m,
                                 h=f"%{half}mm1", dh=f"%{half}mm{d}"))
    return lines


def _program(lines: list[str], registers: int, widest: int) -> str:
    """The replay's assembly: registers and buffer set, MXCSR flushing denormals, the loop, MXCSR
    restored. Count in %rsi, buffer in %rdi."""
    letter = _LETTER[widest]
    setup = [f"vbroadcastss {_LOADS}(%rdi), %{letter}mm{r}" for r in range(registers)]
    mxcsr = [f"vstmxcsr {_MXCSR}(%rdi)", f"movl {_MXCSR}(%rdi), %eax", "orl $0x8040, %eax",
             f"movl %eax, {_MXCSR + 4}(%rdi)", f"vldmxcsr {_MXCSR + 4}(%rdi)"]
    return "\n".join([*setup, *mxcsr, "movq %rsi, %r11", "1:", *lines, "decq %r11", "jnz 1b",
                      f"vldmxcsr {_MXCSR}(%rdi)", "vzeroupper"])


class _Compiled:
    """A replay, assembled and loaded: `turns(n)` runs its loop n times."""
    _engines: list = []           # kept alive: the code lives as long as its engine

    def __init__(self, lines: tuple[str, ...]):
        import llvmlite.binding as llvm
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        llvm.initialize_native_asmparser()
        h = host()
        asm = _program(list(lines), h.registers, max(h.widths))
        escaped = asm.replace("\\", "\\5C").replace('"', "\\22").replace("\n", "\\0A").replace("$", "$$")
        clobbers = ",".join([f"~{{xmm{r}}}" for r in range(h.registers)]
                            + ["~{rax}", "~{r11}", "~{memory}", "~{flags}", "~{dirflag}", "~{fpsr}"])
        ir = (f'define void @replay(i64 %n, ptr %buf) {{\n'
              f'  call void asm sideeffect "{escaped}", "{{rsi}},{{rdi}},{clobbers}"(i64 %n, ptr %buf)\n'
              f'  ret void\n}}\n')
        module = llvm.parse_assembly(ir)
        module.verify()
        target = llvm.Target.from_default_triple().create_target_machine(
            cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten())
        engine = llvm.create_mcjit_compiler(module, target)
        engine.finalize_object()
        self._engines.append(engine)
        self._function = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p)(
            engine.get_function_address("replay"))
        self._buffer = (ctypes.c_float * (BUFFER_FLOATS + 8 + 16))(*([1.0] * (BUFFER_FLOATS + 16)))
        self._address = -(-ctypes.addressof(self._buffer) // 64) * 64       # aligned to a cache line

    def seconds(self, turns: int) -> float:
        start = time.thread_time()
        self._function(turns, self._address)
        return time.thread_time() - start


@cache
def _compiled(lines: tuple[str, ...]) -> _Compiled:
    return _Compiled(lines)


def cycles_per_turn(lines: list[str], frequency_hz: float) -> float:
    """Core cycles one pass over `lines` takes, in a loop of their own (best of `REPEATS`)."""
    replay = _compiled(tuple(lines))
    turns = 64
    while (spent := replay.seconds(turns)) < TURN_SECONDS / 4:        # calibrate: about TURN_SECONDS a run
        turns *= 4
    turns = max(1, int(turns * TURN_SECONDS / max(spent, 1e-9)))
    return min(replay.seconds(turns) for _ in range(REPEATS)) * frequency_hz / turns


def class_costs(frequency_hz: float) -> dict[tuple[str, int], float]:
    """{(class, bits): cycles per instruction} of every class of `SAMPLES` at every width this
    host runs, each alone (its reciprocal throughput)."""
    return {(kind, bits): cycles_per_turn(sample(kind, bits), frequency_hz) / BLOCK
            for kind in SAMPLES for bits in host().widths}


@dataclass
class Measured:
    """What one replay child measured: the core clock (Hz), `class_costs`, and per loop (name)
    (cycles per turn of its `independent` replay, of its `as_compiled` one)."""
    frequency_hz: float
    costs: dict
    loops: dict


class ReplayFailed(RuntimeError):
    """The replay child failed (LLVM could not assemble a block, or the child died): its last
    line says why."""


def measure(loops: dict[str, list[Instruction]]) -> Measured:
    """Replay every loop of `loops` ({name: hot-loop body}) and every class on this core, in a
    child process of its own: LLVM ends the process that asked it to assemble what it cannot, so
    a loop this module rewrites wrongly costs the child, never the caller (`ReplayFailed`)."""
    import json
    import subprocess
    import sys
    from ...entry import child_process
    from .toolchain import HOST, environment
    blocks = {name: (independent(body), as_compiled(body)) for name, body in loops.items()}
    command = [sys.executable, "-c", f"from {__name__} import _serve; _serve()"]
    try:                # the host's environment, none of the caller's NUMBA_* settings (the clock is numba's)
        with child_process(command, env=environment(HOST), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, errors="replace") as child:
            out, err = child.communicate(json.dumps(blocks), timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise ReplayFailed(f"the replay child took more than {TIMEOUT} s") from None
    if child.returncode != 0:
        lines = [line for line in err.strip().splitlines() if line.strip()]
        ended = (f"was killed by {signal.Signals(-child.returncode).name}"     # SIGXCPU: a CPU-time limit
                 if -child.returncode in signal.valid_signals() else f"ended with status {child.returncode}")
        raise ReplayFailed(next((line for line in lines if "error" in line.lower()), lines[-1] if lines else
                                f"the replay child {ended}"))
    done = json.loads(out)
    return Measured(done["frequency_hz"], {(k, b): c for k, b, c in done["costs"]},
                    {name: tuple(v) for name, v in done["loops"].items()})


def _serve():
    """In the child: read {name: [independent lines, as-compiled lines]} on stdin, measure the
    clock, every class and every loop, print the result as JSON."""
    import json
    import sys
    from .frequency import core_frequency_hz
    blocks = json.load(sys.stdin)
    hz = core_frequency_hz()
    costs = class_costs(hz)
    loops = {name: [cycles_per_turn(lines, hz) for lines in pair] for name, pair in blocks.items()}
    json.dump({"frequency_hz": hz, "costs": [[k, b, c] for (k, b), c in costs.items()], "loops": loops}, sys.stdout)
