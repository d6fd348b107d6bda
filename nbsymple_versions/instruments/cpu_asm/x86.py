"""x86-64 assembly as LLVM prints it (AT&T syntax): instructions, loops, the hot loop of a kernel
and its mix of instruction classes.

The hot loop of a pairwise kernel is the backward branch whose body holds the reciprocal square
root estimates (`vrsqrtps`, `vrsqrt14ps`, ...) with the most lanes: the vectorised main loop
over sources rather than its remainder loops. Each lane of an estimate is one pair interaction.
The hot loop of an O(N) kernel (galactic, axpy) is the innermost loop that advances over the
most elements per iteration, read off its induction variable (the register that indexes its
memory operands and that the loop increments by an immediate).
"""
from dataclasses import dataclass, field
import re

_LABEL = re.compile(r"^([.\w$]+):")
_MEMORY = re.compile(r"(-?\w*)\((%\w+)?(?:,(%\w+)(?:,(\d))?)?\)")
_STEP = re.compile(r"(-?\w+)\((%\w+)\),(%\w+)")     # leaq k(%r), %r
_VECTOR_BITS = {"x": 128, "y": 256, "z": 512}
_REGISTER = re.compile(r"%([xyz])mm\d+")

# the classes of the mix, in the order the table prints them; an instruction counts in one
#   load, store       moves between memory and a register (a broadcast from memory is a load)
#   fma .. convert    floating-point arithmetic (sub, min, max count as add; rcp as rsqrt)
#   shuffle           shuffles, permutes, broadcasts from a register, inserts, extracts, blends
#   move              vector register copies;  integer: integer ALU, address and branch
#   call              calls (the callee is not counted);  other: vector logic, compares, masks
MIX = ("load", "store", "fma", "mul", "add", "rsqrt", "sqrt_div", "convert", "shuffle", "move", "integer", "call",
       "other")

_FMA = re.compile(r"vf(n?m(add|sub)|maddsub|msubadd)\d{3}[ps][sd]")
_ARITHMETIC = {"mul": "mul", "add": "add", "sub": "add", "min": "add", "max": "add", "hadd": "add", "hsub": "add",
               "sqrt": "sqrt_div", "div": "sqrt_div", "rsqrt": "rsqrt", "rsqrt14": "rsqrt", "rsqrt28": "rsqrt",
               "rcp": "rsqrt", "rcp14": "rsqrt", "rcp28": "rsqrt"}
_FLOAT = re.compile(r"v?(" + "|".join(sorted(_ARITHMETIC, key=len, reverse=True)) + r")([ps][sd])")
_SHUFFLE = re.compile(r"v?(p?shuf|perm|vperm|unpck|punpck|broadcast|pbroadcast|extract|insert|movddup|movshdup"
                      r"|movsldup|movlhps|movhlps|align|palignr|expand|compress|blend|pblend)")
_MOVE = re.compile(r"v?mov(aps|apd|ups|upd|ss|sd|dqa|dqu|dqa32|dqa64|dqu8|dqu16|dqu32|dqu64|q|d|lps|hps|lpd|hpd"
                   r"|ntps|ntpd|ntdq)?|mov[bwlq]?|movabsq|movs[bw][lqw]|movz[bw][lqw]|movslq")


@dataclass(frozen=True)
class Instruction:
    mnemonic: str
    operands: str       # AT&T: sources first, destination last

    @property
    def memory(self) -> list[re.Match]:
        return list(_MEMORY.finditer(self.operands))

    @property
    def bits(self) -> int:
        """Width of the widest vector register operand (0: none)."""
        return max((_VECTOR_BITS[m.group(1)] for m in _REGISTER.finditer(self.operands)), default=0)

    @property
    def scalar(self) -> bool:
        """A scalar floating-point operation (`ss`/`sd` forms) on the low lane of a vector register."""
        return self.mnemonic.endswith(("ss", "sd", "2si")) and not self.mnemonic.startswith(("vbroadcast",
                                                                                          "vpbroadcast"))

    @property
    def destination_in_memory(self) -> bool:
        return bool(self.memory) and self.operands.rstrip().endswith(")")

    def lanes(self, element_bits: int) -> int:
        """Lanes of `element_bits` that the instruction computes (1 for a scalar one)."""
        if self.scalar or not self.bits:
            return 1
        return self.bits // element_bits


def classify(ins: Instruction) -> str:
    """The class of the mix one instruction counts in. An operation with a folded memory operand
    counts in its operation's class (`memory_reads` counts its read)."""
    m = ins.mnemonic
    if m.startswith("call"):
        return "call"
    if _FMA.fullmatch(m):
        return "fma"
    if (f := _FLOAT.fullmatch(m)) and (m.startswith("v") or f.group(1) in ("mul", "add", "sub", "div", "sqrt")):
        return _ARITHMETIC[f.group(1)]
    if "cvt" in m:
        return "convert"
    if _MOVE.fullmatch(m) or (m.startswith(("vbroadcast", "vpbroadcast")) and ins.memory):
        if ins.memory:
            return "store" if ins.destination_in_memory else "load"
        if m.startswith(("vbroadcast", "vpbroadcast")):
            return "shuffle"
        return "move" if ins.bits else "integer"
    if _SHUFFLE.match(m):
        return "shuffle"
    if not m.startswith(("v", "k")) and not ins.bits:
        return "integer"
    return "other"


def parse(asm: str) -> tuple[list[Instruction], dict[str, int]]:
    """(instructions in order, label -> index of the instruction it stands before) of assembly
    text; directives and comments are left out."""
    code, labels = [], {}
    for raw in asm.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if m := _LABEL.match(line):
            labels[m.group(1)] = len(code)
            continue
        if line.startswith("."):
            continue
        mnemonic, *operands = line.split(None, 1)
        code.append(Instruction(mnemonic, re.sub(r"\s", "", operands[0]) if operands else ""))
    return code, labels


def kernel_function(asm: str) -> str:
    """The first function of a module's assembly (numba prints the kernel itself first, then its
    Python and C wrappers)."""
    end = asm.find(".Lfunc_end0:")
    return asm if end < 0 else asm[:end]


@dataclass
class Loop:
    start: int      # index of the first instruction of the body
    end: int        # index of the backward branch
    body: list[Instruction] = field(repr=False)

    def root_lanes(self) -> int:
        """Interactions per iteration of a pairwise loop, one root each: the lanes of its reciprocal
        square root estimates (of float64 for a `pd`/`sd` one, AVX-512's `vrsqrt14pd`, else of
        float32) and of its square roots (dp's divider route has only these; the AVX2 dp row takes
        half its lanes each way)."""
        def lanes(wanted):
            return sum(i.lanes(64 if i.mnemonic.endswith(("pd", "sd")) else 32) for i in self.body if wanted(i))
        return lanes(lambda i: classify(i) == "rsqrt") + lanes(lambda i: i.mnemonic.startswith("vsqrt"))

    def elements(self, element_bytes: int) -> int:
        """Array elements of `element_bytes` advanced per iteration, from the induction variable:
        a register that indexes (or is the base of) a memory operand and that the loop increments
        by an immediate (`add $k`, `sub $-k`, `inc`, `lea k(%r), %r`). 0: none found."""
        steps = {}
        for ins in self.body:
            ops = ins.operands.split(",")
            if ins.mnemonic in ("addq", "subq") and ops[0].startswith("$") and len(ops) == 2:
                k = int(ops[0][1:], 0)
                steps[ops[1]] = -k if ins.mnemonic == "subq" else k
            elif ins.mnemonic == "incq":
                steps[ops[0]] = 1
            elif ins.mnemonic == "leaq" and (m := _STEP.fullmatch(ins.operands)) and m.group(2) == m.group(3):
                steps[m.group(3)] = int(m.group(1), 0)
        for ins in self.body:
            for m in ins.memory:
                base, index, scale = m.group(2), m.group(3), int(m.group(4) or 1)
                if index in steps and steps[index] > 0:
                    return steps[index] * scale // element_bytes
                if base in steps and steps[base] > 0:
                    return steps[base] // element_bytes
        return 0


def loops(code: list[Instruction], labels: dict[str, int]) -> list[Loop]:
    """Every backward jump as a loop [its target, the jump] with its body."""
    found = []
    for k, ins in enumerate(code):
        if ins.mnemonic.startswith("j") and ins.operands in labels and labels[ins.operands] <= k:
            start = labels[ins.operands]
            found.append(Loop(start, k, code[start:k + 1]))
    return found


def innermost(found: list[Loop]) -> list[Loop]:
    return [a for a in found if not any(b is not a and a.start <= b.start and b.end <= a.end for b in found)]


def pairwise_loop(asm: str) -> Loop:
    """The loop over sources of a pairwise kernel: of the innermost loops with a (reciprocal)
    square root, the one with the most lanes of them (the vectorised main loop, not a remainder)."""
    candidates = [lp for lp in innermost(loops(*parse(kernel_function(asm)))) if lp.root_lanes()]
    if not candidates:
        raise ValueError("no loop with a square root or its reciprocal in this function: not a pairwise kernel")
    return max(candidates, key=lambda lp: (lp.root_lanes(), -len(lp.body)))


def element_loop(asm: str, element_bytes: int = 8) -> Loop:
    """The hot loop of an O(N) kernel: of the innermost loops, the one that advances over the
    most elements per iteration (the vectorised, unrolled main loop)."""
    candidates = [lp for lp in innermost(loops(*parse(kernel_function(asm)))) if lp.elements(element_bytes) > 0]
    if not candidates:
        raise ValueError("no loop over array elements in this function")
    return max(candidates, key=lambda lp: (lp.elements(element_bytes), -len(lp.body)))


def mix(body: list[Instruction]) -> dict[str, int]:
    """Instructions of each class of `MIX`."""
    counts = dict.fromkeys(MIX, 0)
    for ins in body:
        counts[classify(ins)] += 1
    return counts


def memory_reads(body: list[Instruction]) -> list[Instruction]:
    """The instructions that read memory: loads and operations with a folded memory operand."""
    return [i for i in body if i.memory and not i.destination_in_memory and i.mnemonic != "leaq"
            and not i.mnemonic.startswith(("call", "j", "nop", "prefetch"))]
