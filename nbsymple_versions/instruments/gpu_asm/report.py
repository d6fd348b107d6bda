"""Count every kernel of both backends and print the table (`nbsymple gpu-asm`) or JSON."""
import json
from pathlib import Path
import sys
import tempfile

from ...core.vocabulary import PRECISIONS
from ...entry import printable
from ...gpu_pairwise.options import BACKENDS
from ...runs.paths import write_file
from .model import DEFAULT_ARCH, DEVICES, KernelCount, count
from .toolchain import KINDS, assemble_modules, check_arch, compute_capability, cuda_c_ptx, entry_of, numba_ptx, tool


def count_all(arch: str = DEFAULT_ARCH, tile: int = 256, backends=BACKENDS, precisions=PRECISIONS,
              kinds=tuple(KINDS), keep: Path | None = None) -> list[KernelCount]:
    """Compile, assemble, disassemble and count every kernel asked for: the kernels are compiled
    to PTX one after the other (numba-cuda compiles under one lock), then assembled and
    disassembled together (`assemble_modules`)."""
    if arch not in DEVICES:
        compute_capability(arch)    # a well-formed name outside DEVICES is counted without a prediction
    tool("ptxas"), tool("nvdisasm")     # before minutes of compiling: say at once what is missing
    check_arch(arch)                    # a target the compilers cannot generate code for
    modules = []                        # (backend, precision, the kinds it holds, its PTX)
    for backend in backends:
        for precision in precisions:
            if backend == "cupy":       # one CUDA C module holds every kind
                modules.append((backend, precision, tuple(kinds), cuda_c_ptx(precision, tile, arch)))
            else:
                modules += [(backend, precision, (kind,), numba_ptx(precision, kind, tile, arch)) for kind in kinds]
    rows = []
    with tempfile.TemporaryDirectory(prefix="nbsymple-gpu-asm-") as tmp:
        assembled = assemble_modules([module[3] for module in modules], arch, Path(tmp))
    for (backend, precision, module_kinds, _), (resources, sass) in zip(modules, assembled):
        for kind in module_kinds:
            if backend == "numba":
                (name, text), = sass.items()
            else:
                name = entry_of(kind)
                text = sass[name]
            rows.append(count(backend, precision, kind, arch, tile, resources[name], text))
            if keep is not None:
                keep.mkdir(parents=True, exist_ok=True)
                write_file(keep / f"{backend}_{precision}_{kind}.sass", text)
    return rows


def ratios(rows: list[KernelCount]) -> dict[tuple[str, str], float]:
    """(precision, kind) -> numba / CUDA C instructions per interaction, where both were counted."""
    by = {(r.backend, r.precision, r.kernel): r.instructions_per_interaction for r in rows}
    return {(p, k): by["numba", p, k] / by["cupy", p, k]
            for (b, p, k) in by if b == "numba" and ("cupy", p, k) in by}


def model_lines(arch: str, tile: int) -> list[str]:
    d = DEVICES.get(arch)
    head = f"target {arch}"
    if d is None:
        return [head + " (no device figures: instructions, registers and spills only)"]
    return [f"{head}: {d.name}, {d.sms} SMs at {d.clock_ghz:g} GHz; per SM and clock: {d.issue} instructions "
            f"issued, {d.fp32} FP32, {d.fp64} FP64, {d.mufu} MUFU (also float<->double conversions), "
            f"{d.lsu} load/store lanes; {d.registers} registers, {d.max_threads} threads, {d.shared_kib} KiB shared",
            f"tile {tile}; per interaction = instructions of the innermost source loop / its MUFU.RSQ; model: "
            "SMs x clock / max(instructions/issue, FP32/lanes, FP64/lanes, (MUFU+cvt)/lanes, loads/LSU lanes)",
            "plain kernels: global loads counted like shared ones (L1 hits, latency hidden): an upper bound"]


def table(rows: list[KernelCount]) -> str:
    head = (f"{'backend':8}{'prec':5}{'kernel':12}{'instr':>7}{'FP32':>6}{'FP64':>6}{'MUFU':>5}{'cvt':>5}{'LDS':>5}"
            f"{'LDG':>5}{'branch':>7}{'int':>6}{'regs':>5}{'spill':>6}{'smem':>6}{'occ':>5}  {'bound':6}"
            f"{'predicted/s':>12}")
    lines = [head]
    for r in rows:
        m = r.mix_per_interaction
        lines.append(f"{r.backend:8}{r.precision:5}{r.kernel:12}{r.instructions_per_interaction:7.2f}{m['fp32']:6.2f}"
                     f"{m['fp64']:6.2f}{m['mufu']:5.2f}{m['convert']:5.2f}{m['shared_load']:5.2f}"
                     f"{m['global_load']:5.2f}{m['branch']:7.3f}{m['integer_other'] + m['store']:6.2f}"
                     f"{r.registers:5d}{r.spills:6d}{r.shared_bytes:6d}"
                     + (f"{r.occupancy:5.2f}  {r.bound:6}{r.predicted_interactions_per_second:12.3e}"
                        if r.bound else f"{'-':>5}  {'-':6}{'-':>12}"))
    return "\n".join(lines)


def main(arch: str = DEFAULT_ARCH, tile: int = 256, as_json: bool = False, keep: Path | None = None,
         out=None) -> int:
    """`nbsymple gpu-asm`: count every kernel of both backends and print the table (or JSON)."""
    out = out or sys.stdout
    rows = count_all(arch, tile, keep=keep)
    if as_json:
        device = DEVICES.get(arch)
        out.write(json.dumps([dict(r.as_dict(), device=device.as_dict() if device else None) for r in rows],
                             allow_nan=False) + "\n")
        return 0
    print("\n".join(model_lines(arch, tile)), file=out)
    print(table(rows), file=out)
    parts = [f"{p} {v:.2f}x" for (p, k), v in ratios(rows).items() if k == "tiled"]
    print("numba / CUDA C instructions per interaction, tiled: " + ", ".join(parts), file=out)
    if keep is not None:
        print(f"SASS of each kernel in {printable(keep)}/<backend>_<precision>_<kernel>.sass", file=out)
    return 0
