"""SASS as `nvdisasm -c` prints it: functions, instructions, loops, the innermost source loop
(the backward branch whose body holds the reciprocal square roots, `MUFU.RSQ`, one per pair
interaction) and its mix of instruction classes."""
from dataclasses import dataclass, field
import re

_FUNCTION_HEADER = re.compile(r"^//-+ \.text\.(\S+)\s+-+\s*$", re.M)
_INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);")
_LABEL = re.compile(r"^(\.L_x_\d+):", re.M)
_TARGET = re.compile(r"`\((\.L_x_\d+)\)")

# opcode (before the first '.') -> class of the mix
_CLASSES = {
    "fp32": {"FADD", "FMUL", "FFMA", "FADD32I", "FMUL32I", "FFMA32I", "FMNMX", "FSETP", "FSEL", "FSET",
             "FCHK", "FSWZADD"},
    "fp64": {"DADD", "DMUL", "DFMA", "DSETP", "DMNMX", "DSET"},
    "mufu": {"MUFU"},
    "convert": {"F2F", "F2I", "I2F", "F2FP", "I2FP", "F2IP", "FRND"},
    "shared_load": {"LDS", "LDSM"},
    "global_load": {"LDG", "LD", "LDL"},
    "store": {"STS", "STG", "ST", "STL"},
    "branch": {"BRA", "BRX", "JMP", "JMX", "CALL", "RET", "EXIT", "BSSY", "BSYNC", "BREAK", "WARPSYNC", "BAR",
               "NOP", "YIELD"},
}
MIX = ("fp32", "fp64", "mufu", "convert", "shared_load", "global_load", "store", "branch", "integer_other")


def split_functions(sass: str) -> dict[str, str]:
    """nvdisasm's output, one entry per `//--- .text.NAME ---` block."""
    heads = list(_FUNCTION_HEADER.finditer(sass))
    return {h.group(1): sass[h.end(): heads[k + 1].start() if k + 1 < len(heads) else len(sass)]
            for k, h in enumerate(heads)}


def classify(opcode: str) -> str:
    base = opcode.split(".")[0]
    for name, ops in _CLASSES.items():
        if base in ops:
            return name
    return "integer_other"


@dataclass
class Instruction:
    address: int
    opcode: str
    operands: str
    predicate: str = ""


def instructions(sass_function: str) -> tuple[list[Instruction], dict[str, int]]:
    """(instructions in address order, label -> address) of one function's SASS."""
    code, labels, pending = [], {}, []
    for line in sass_function.splitlines():
        if m := _LABEL.match(line.strip()):
            pending.append(m.group(1))
            continue
        if m := _INSTRUCTION.search(line):
            address = int(m.group(1), 16)
            for label in pending:
                labels[label] = address
            pending = []
            code.append(Instruction(address, m.group(3), m.group(4).strip(), (m.group(2) or "").strip()))
    return code, labels


def is_rsqrt(ins: Instruction) -> bool:
    return ins.opcode.startswith("MUFU.RSQ")


@dataclass
class Loop:
    start: int      # address of the first instruction of the body
    end: int        # address of the backward branch
    body: list[Instruction] = field(repr=False)

    @property
    def rsqrts(self) -> int:
        return sum(is_rsqrt(i) for i in self.body)


def loops(code: list[Instruction], labels: dict[str, int]) -> list[Loop]:
    """Every backward branch as a loop [target, branch] with its body."""
    found = []
    for ins in code:
        if ins.opcode.split(".")[0] != "BRA":
            continue
        m = _TARGET.search(ins.operands)
        if not m or m.group(1) not in labels or labels[m.group(1)] > ins.address:
            continue
        start = labels[m.group(1)]
        found.append(Loop(start, ins.address, [i for i in code if start <= i.address <= ins.address]))
    return found


def innermost_loop(sass_function: str) -> Loop:
    """The inner source loop: of the loops that hold a reciprocal square root and contain no
    other such loop, the one with the most (an unrolled main loop rather than its remainder)."""
    code, labels = instructions(sass_function)
    candidates = [lp for lp in loops(code, labels) if lp.rsqrts]
    inner = [a for a in candidates
             if not any(b is not a and a.start <= b.start and b.end <= a.end for b in candidates)]
    if not inner:
        raise ValueError("no loop with a MUFU.RSQ in this function: not a pairwise kernel, or fully unrolled")
    return max(inner, key=lambda lp: (lp.rsqrts, -len(lp.body)))


def mix(body: list[Instruction]) -> dict[str, int]:
    counts = dict.fromkeys(MIX, 0)
    for ins in body:
        counts[classify(ins.opcode)] += 1
    return counts
