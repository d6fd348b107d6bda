"""A pipe-bound model of a kernel's hot loop, the CPU figures it needs, and llvm-mca beside it.

One iteration of the loop costs, in core clock cycles, the most that any group of pipes needs:

    max over groups of  sum over its instructions of (turns of one pipe) / pipes in the group

where an instruction wider than one pipe takes `bits / pipe bits` turns (Zen 4 runs a 512-bit
operation as two 256-bit halves) and a narrower or scalar one a single turn, and `issue` is all
instructions over the dispatch width (a compare fused with its conditional jump counted once).
Latency is left out: the loops keep several independent accumulators, and out-of-order cores
overlap iterations. The functions a loop calls (galactic's `pow`) are not counted. Register
moves, integer and other instructions cost issue slots only. A class that shares pipes with
another (Haswell's add on one of its two FMA ports, the rsqrt estimate on an FMA pipe) counts in
both groups. Divide and square root are one class: the divider's figure is the mean of their
float64 reciprocal throughputs.

The figures, per core, from the vendors' optimisation manuals as LLVM's scheduling models encode
them (X86SchedHaswell.td, X86SchedSkylakeServer.td, X86ScheduleZnver3.td, X86ScheduleZnver4.td,
which cite Intel's manual, AMD's Software Optimization Guides for family 19h and Agner Fog's
instruction tables), checked against `llvm-mca -instruction-info` for the cores LLVM 14 models.
LLVM 14's Zen 3 model runs an FMA at one per cycle; AMD's guide and Agner Fog give two (pipes 0
and 1), as here.
"""
from dataclasses import asdict, dataclass
from itertools import pairwise
import math
import re
import subprocess
import tempfile
from pathlib import Path

from .x86 import Instruction, Loop, classify, memory_reads


@dataclass(frozen=True)
class Pipes:
    """`count` pipes (a fraction for a unit that takes one instruction every 1/count cycles),
    each `bits` wide, that run the classes of the mix named in `classes`."""
    count: float
    bits: int
    classes: tuple[str, ...]


@dataclass(frozen=True)
class Cpu:
    name: str               # LLVM's
    description: str
    issue: int              # instructions (macro-ops) dispatched per cycle
    pipes: dict             # group name -> Pipes; "load" counts every memory read, folded ones too

    def as_dict(self) -> dict:
        return asdict(self)


CPUS = {c.name: c for c in (
    Cpu("haswell", "Intel Haswell: ports 0, 1 FMA and multiply, port 1 add, port 5 shuffle", issue=4, pipes={
        "fma": Pipes(2, 256, ("fma", "mul", "add", "rsqrt", "convert")),     # ports 0, 1
        "add": Pipes(1, 256, ("add",)),                                      # port 1
        "rsqrt": Pipes(1, 128, ("rsqrt",)),      # port 0; vrsqrtps ymm: 2 uops, one per 2 cycles
        "shuffle": Pipes(1, 256, ("shuffle", "convert")),                    # port 5
        "divider": Pipes(1 / 14, 128, ("sqrt_div",)),    # vdivsd, vsqrtsd: 14 cycles; ymm 28
        "load": Pipes(2, 256, ("load",)), "store": Pipes(1, 256, ("store",))}),
    Cpu("skylake-avx512", "Intel Skylake-SP (two FMA units: Gold 6000, Platinum): ports 0, 1 FMA, multiply and "
        "add, 512-bit on ports 0+1 and 5; port 5 shuffle", issue=4, pipes={
        "fma": Pipes(2, 512, ("fma", "mul", "add", "rsqrt", "convert")),     # ymm: ports 0, 1; zmm: 0+1, 5
        "rsqrt": Pipes(1, 256, ("rsqrt",)),      # port 0; vrsqrt14ps zmm: one per 2 cycles
        "shuffle": Pipes(1, 512, ("shuffle", "convert")),                    # port 5
        "divider": Pipes(1 / 4.5, 128, ("sqrt_div",)),   # vdivsd 3, vsqrtsd 6; ymm 5, 12
        "load": Pipes(2, 512, ("load",)), "store": Pipes(1, 512, ("store",))}),
    Cpu("znver3", "AMD Zen 3: FP pipes 0, 1 FMA and multiply, 2, 3 add and convert, 1, 2 shuffle", issue=6, pipes={
        "fma": Pipes(2, 256, ("fma", "mul", "rsqrt")),
        "add": Pipes(2, 256, ("add", "convert")),
        "rsqrt": Pipes(1, 256, ("rsqrt",)),
        "shuffle": Pipes(2, 256, ("shuffle",)),
        "divider": Pipes(1 / 7, 256, ("sqrt_div",)),     # float64 divide 5, square root 9 cycles
        "load": Pipes(2, 256, ("load",)), "store": Pipes(1, 256, ("store",))}),
    Cpu("znver4", "AMD Zen 4: FP pipes 0, 1 FMA and multiply, 2, 3 add and convert, 1, 2 shuffle; 512-bit "
        "operations as two 256-bit halves", issue=6, pipes={
        "fma": Pipes(2, 256, ("fma", "mul", "rsqrt")),
        "add": Pipes(2, 256, ("add", "convert")),
        "rsqrt": Pipes(1, 256, ("rsqrt",)),      # pipe 1: vrsqrt14ps zmm one per 2 cycles
        "shuffle": Pipes(2, 256, ("shuffle",)),
        "divider": Pipes(1 / 7, 256, ("sqrt_div",)),     # pipe 1: float64 divide 5, square root 9
        "load": Pipes(2, 256, ("load",)), "store": Pipes(1, 256, ("store",))}),
)}


def _turns(ins: Instruction, bits: int) -> int:
    return 1 if ins.scalar or not ins.bits else max(1, math.ceil(ins.bits / bits))


def _read_bits(ins: Instruction) -> int:
    """Bits one memory read moves: a broadcast or scalar reads one element, else the register."""
    if ins.scalar or "{1to" in ins.operands or ins.mnemonic.startswith(("vbroadcast", "vpbroadcast")) \
            or not ins.bits:
        return 64
    return ins.bits


def cycles_per_iteration(body: list[Instruction], cpu: Cpu) -> dict[str, float]:
    """Cycles one iteration of the loop needs on each group of pipes, and to issue it."""
    fused = sum(1 for a, b in pairwise(body) if a.mnemonic.startswith(("cmp", "test")) and
                b.mnemonic.startswith("j") and b.mnemonic != "jmp")
    cycles = {"issue": (len(body) - fused) / cpu.issue}
    for group, pipes in cpu.pipes.items():
        if group == "load":
            turns = sum(max(1, math.ceil(_read_bits(i) / pipes.bits)) for i in memory_reads(body))
        else:
            turns = sum(_turns(i, pipes.bits) for i in body if classify(i) in pipes.classes)
        cycles[group] = turns / pipes.count
    return cycles


def predict(loop: Loop, interactions: int, cpu: Cpu | None) -> tuple[float | None, str | None]:
    """(cycles per interaction, the group that bounds it), or (None, None) without figures."""
    if cpu is None:
        return None, None
    cycles = cycles_per_iteration(loop.body, cpu)
    bound = max(cycles, key=cycles.get)
    return cycles[bound] / interactions, bound


_TOTAL = re.compile(r"Total Cycles:\s+(\d+)")
_ITERATIONS = re.compile(r"Iterations:\s+(\d+)")


def mca(loop: Loop, interactions: int, cpu_name: str, tool: tuple[str, int] | None) -> tuple[float | None, str | None]:
    """(llvm-mca's cycles per interaction for the loop alone on `cpu_name`, None), or (None, why not)."""
    if tool is None:
        return None, "llvm-mca not found: no llvm-mca figure (install LLVM's llvm-mca, e.g. Debian's llvm-14)"
    path, version = tool
    text = "\n".join(f"{i.mnemonic} {i.operands}" for i in loop.body) + "\n"
    with tempfile.TemporaryDirectory(prefix="nbsymple-cpu-asm-") as tmp:
        source = Path(tmp) / "loop.s"
        source.write_text(text)
        p = subprocess.run([path, f"-mcpu={cpu_name}", "-iterations=100", str(source)], capture_output=True,
                           text=True, errors="replace", timeout=300)
    if "not a recognized processor" in p.stderr:
        return None, f"not modelled by llvm-mca {version}"
    total, iterations = _TOTAL.search(p.stdout), _ITERATIONS.search(p.stdout)
    if p.returncode != 0 or not total or not iterations or int(iterations.group(1)) == 0:    # (a hunt: 0 iterations
        first = (p.stderr.strip().splitlines() or ["no output"])[0]                          # from an llvm-mca on PATH
        return None, f"llvm-mca {version} cannot model this loop for {cpu_name}: {first}"    # divided by zero)
    return int(total.group(1)) / int(iterations.group(1)) / interactions, None
