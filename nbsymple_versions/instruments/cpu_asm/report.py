"""Count every CPU kernel for each target and print the table (`nbsymple cpu-asm`) or JSON."""
from dataclasses import asdict, dataclass
import json
from pathlib import Path
import sys

from ...entry import printable
from ...runs.paths import write_file
from ...serial import avx512
from . import replay
from .model import CPUS, mca, predict
from .toolchain import HOST, KERNELS, TARGETS, compile_targets, llvm_mca
from .x86 import MIX, classify, element_loop, memory_reads, mix, pairwise_loop

_ELEMENT_BITS = {"sp": 32, "dsp": 32, "dp": 64}


@dataclass
class KernelCount:
    """One kernel's hot loop on one target; "per interaction" is per element for galactic and
    axpy."""
    target: str             # "host" or one of FIXED_TARGETS
    cpu: str                # LLVM's name of the CPU compiled for (the host's own name for "host")
    kernel: str             # pairwise, galactic, axpy
    precision: str          # sp, dp, dsp (galactic and axpy: dp)
    instructions_per_interaction: float
    mix_per_interaction: dict           # MIX class -> instructions
    memory_reads_per_interaction: float  # loads and folded memory operands
    loop_instructions: int
    interactions_per_loop: int
    lanes: int              # of the precision's floats in the widest arithmetic instruction
    vector_bits: int        # widest vector register in the loop
    predicted_cycles_per_interaction: float | None    # None: no figures for this CPU
    bound: str | None       # what bounds the prediction: a group of pipes (table), a class (measured)
    mca_cycles_per_interaction: float | None
    mca_note: str | None    # why there is no llvm-mca figure
    costs: str | None = None    # "measured" (the host: `replay`), "table" (`model.CPUS`), None: no figures
    compiled_cycles_per_interaction: float | None = None   # the host: the loop as compiled, replayed in L1
    costs_note: str | None = None   # why the host's costs are the table's: its loops could not be replayed
    measured_costs: dict | None = None  # the host: {"<class> <bits>": cycles per instruction}, measured

    def as_dict(self) -> dict:
        return asdict(self)


def hot_loop(kernel: str, asm: str):
    """(the kernel's hot loop, interactions per iteration: per element for galactic and axpy)."""
    if kernel == "pairwise":
        loop = pairwise_loop(asm)
        return loop, loop.root_lanes()           # one root per interaction
    loop = element_loop(asm, 8)
    return loop, loop.elements(8)


def count(target: str, cpu: str, kernel: str, precision: str, asm: str, tool,
          measured: "replay.Measured | str | None" = None) -> KernelCount:
    """Count one kernel's assembly (`tool`: `toolchain.llvm_mca()`). `measured`: the host's
    replays (`replay.measure`, its loops named `<kernel>_<precision>`), whose bound then replaces
    the table's, or why there are none (a sentence: the table's bound, with it as a note)."""
    loop, n = hot_loop(kernel, asm)
    arithmetic = [i for i in loop.body if classify(i) in ("fma", "mul", "add")]
    lanes = max((i.lanes(_ELEMENT_BITS[precision]) for i in arithmetic), default=1)
    compiled = costs = None
    if isinstance(measured, replay.Measured):
        independent, compiled = (c / n for c in measured.loops[f"{kernel}_{precision}"])
        cycles, bound = independent, explained_by(_charges(loop, measured.costs, n), independent)
        costs = {f"{k} {b}": round(c, 4) for (k, b), c in measured.costs.items()}
    else:
        cycles, bound = predict(loop, n, CPUS.get(cpu))
    mca_cycles, note = mca(loop, n, cpu, tool)
    return KernelCount(target, cpu, kernel, precision, round(len(loop.body) / n, 4),
                       {k: round(v / n, 4) for k, v in mix(loop.body).items()},
                       round(len(memory_reads(loop.body)) / n, 4), len(loop.body), n, lanes,
                       max((i.bits for i in loop.body), default=0),
                       None if cycles is None else round(cycles, 4), bound,
                       None if mca_cycles is None else round(mca_cycles, 4), note,
                       "measured" if costs else None if cycles is None else "table",
                       None if compiled is None else round(compiled, 4),
                       measured if isinstance(measured, str) else None, costs)


def _charges(loop, costs: dict, n: int) -> dict[str, float]:
    """Cycles per interaction each class of the loop costs, each instruction at the measured cost
    of its kind (`replay.cost_class`) and width."""
    charge: dict[str, float] = {}
    for i in filter(replay.replayable, loop.body):
        key = (replay.cost_class(i), max(i.bits, 128))
        if key in costs:
            charge[classify(i)] = charge.get(classify(i), 0.0) + costs[key] / n
    return charge


def explained_by(charge: dict[str, float], cycles: float) -> str:
    """The class whose measured charge is the largest part of `cycles`, and that part ("fma 78%");
    "mix" where none is charged. The replay times each class alone, so it cannot tell which
    classes share pipes (whose charges add) and which run beside each other (whose do not): a
    sum of classes was once printed here, and any of several sets fitted within the noise (a hunt)."""
    if not charge or cycles <= 0:
        return "mix"
    top = max(sorted(charge), key=charge.get)
    return f"{top} {charge[top] / cycles:.0%}"


def count_all(targets=TARGETS, keep: Path | None = None, host_cpu: dict[str, str] | None = None) -> list[KernelCount]:
    """Compile every kernel for each target (`"host"` and `FIXED_TARGETS`) and count it; with
    `keep`, write each kernel's assembly as keep/<target>_<kernel>_<precision>.s; with `host_cpu`
    (NUMBA_CPU_NAME, NUMBA_CPU_FEATURES), the host's as numba compiles for that CPU, replayed on
    this core."""
    targets = tuple(dict.fromkeys(targets))
    unknown = [t for t in targets if t not in TARGETS]
    if unknown:
        raise ValueError(f"unknown target {unknown[0]!r}; choose from {', '.join(TARGETS)}")
    tool = llvm_mca()
    compiled = compile_targets(targets, host_cpu)
    measured = _host_replays(compiled[HOST][1]) if HOST in targets else None
    rows = []
    for target in targets:
        cpu, assembly = compiled[target]
        for kernel, precision in KERNELS:
            asm = assembly[f"{kernel}_{precision}"]
            rows.append(count(target, cpu, kernel, precision, asm, tool, measured if target == HOST else None))
            if keep is not None:
                keep.mkdir(parents=True, exist_ok=True)
                write_file(keep / f"{target}_{kernel}_{precision}.s", asm)
    return rows


def _host_replays(assembly: dict) -> "replay.Measured | str | None":
    """The host's loops and classes replayed on this core (`replay.measure`), or why not."""
    if not replay.runs_here():
        return None
    try:
        return replay.measure({name: hot_loop(name.split("_")[0], asm)[0].body for name, asm in assembly.items()})
    except replay.ReplayFailed as e:
        return f"its loops could not be replayed on this core ({e})"


_SHORT = {"sqrt_div": "sq/dv", "convert": "cvt", "shuffle": "shuf", "integer": "int"}


def table(rows: list[KernelCount]) -> str:
    """One line per kernel and target: instructions per interaction, the mix, the predictions."""
    wide = max([14, *(len(r.bound) + 1 for r in rows if r.bound)])       # a label never runs into `costs`
    head = (f"{'target':15}{'cpu':15}{'kernel':9}{'prec':5}{'lanes':>5}{'instr':>7}"
            + "".join(f"{_SHORT.get(c, c):>6}" for c in MIX)
            + f"{'predicted':>10}  {'bound':{wide}}{'costs':9}{'mca':>7}{'as comp':>8}")
    lines = [head]
    for r in rows:
        m = r.mix_per_interaction
        predicted = (f"{r.predicted_cycles_per_interaction:10.3f}  {r.bound:{wide}}{r.costs:9}" if r.bound
                     else f"{'-':>10}  {'-':{wide}}{'-':9}")
        lines.append(f"{r.target:15}{r.cpu:15}{r.kernel:9}{r.precision:5}{r.lanes:5d}"
                     f"{r.instructions_per_interaction:7.3f}" + "".join(f"{m[c]:6.3f}" for c in MIX)
                     + predicted + (f"{r.mca_cycles_per_interaction:7.3f}" if r.mca_note is None else f"{'-':>7}")
                     + (f"{r.compiled_cycles_per_interaction:8.3f}" if r.compiled_cycles_per_interaction else
                        f"{'-':>8}"))
    return "\n".join(lines)


def notes(rows: list[KernelCount]) -> list[str]:
    """What the columns mean and why a figure is missing, one line each."""
    lines = ["instructions per pair interaction in the hot loop (galactic, axpy: per element), by class; "
             "predicted, mca, as comp: core cycles per interaction (the pipe bound; llvm-mca on the loop alone; "
             "the loop as compiled, replayed on this core with its operands in L1)",
             "costs: measured = the loop's instructions replayed on this core without their dependencies "
             "(bound: the class whose measured cost takes the largest part of it, and that part); "
             "table = the pipe model's figures for that CPU (bound: its busiest group of pipes)"]
    measured = next((r for r in rows if r.measured_costs), None)
    if measured:
        by_class: dict[str, list[str]] = {}
        for name, c in measured.measured_costs.items():
            kind, bits = name.split()
            by_class.setdefault(kind, []).append((int(bits), f"{c:.2f}"))
        widths = "/".join(str(b) for b, _ in next(iter(by_class.values())))
        lines.append(f"{measured.target} ({measured.cpu}): cycles per instruction of each class alone "
                     f"({widths}-bit), measured: " + ", ".join(f"{k} {'/'.join(c for _, c in v)}"
                                                              for k, v in by_class.items()))
    seen = set()
    for r in rows:
        if r.costs_note and ("replay", r.target) not in seen:
            seen.add(("replay", r.target))
            lines.append(f"{r.target} ({r.cpu}): {r.costs_note}; its bounds are the table's")
        if r.bound is None and ("figures", r.cpu) not in seen:
            seen.add(("figures", r.cpu))
            lines.append(f"{r.target} ({r.cpu}): no figures for this CPU, counted only (figures for "
                         f"{', '.join(CPUS)})")
        if r.mca_note and ("mca", r.cpu, r.mca_note) not in seen:
            seen.add(("mca", r.cpu, r.mca_note))
            lines.append(f"llvm-mca, {r.target} ({r.cpu}): {r.mca_note}")
    host = [r for r in rows if r.target == HOST]
    model = CPUS.get(host[0].cpu) if host else None
    if model is not None and "512-bit" in model.description and not avx512.on_host():
        lines.append(f"{HOST} ({host[0].cpu}): this CPU's flags list no AVX-512 (a virtual machine may hide it): its "
                     f"code is at most {max(r.vector_bits for r in host)}-bit, and its model line's 512-bit operations "
                     "are none of this host's")
    calls = sorted({r.mix_per_interaction["call"] for r in rows if r.kernel == "galactic"})
    if any(calls):
        lines.append(f"galactic: what its {' or '.join(f'{c:g}' for c in calls)} calls per element (pow) run is "
                     "not counted; its prediction is a lower bound")
    return lines


def main(targets=TARGETS, as_json: bool = False, keep: Path | None = None, out=None) -> int:
    """`nbsymple cpu-asm`: count every CPU kernel for `targets` and print the table (or JSON)."""
    out = out or sys.stdout
    rows = count_all(targets, keep=keep)
    if as_json:
        out.write(json.dumps([dict(r.as_dict(), model=CPUS[r.cpu].as_dict() if r.cpu in CPUS else None)
                              for r in rows], allow_nan=False) + "\n")
        return 0
    for cpu in dict.fromkeys(r.cpu for r in rows):
        if cpu in CPUS:
            c = CPUS[cpu]
            print(f"{cpu}: {c.description}; issue {c.issue} per cycle", file=out)
    print(table(rows), file=out)
    print("\n".join(notes(rows)), file=out)
    if keep is not None:
        print(f"assembly of each kernel in {printable(keep)}/<target>_<kernel>_<precision>.s", file=out)
    return 0

