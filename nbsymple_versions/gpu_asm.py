"""`nbsymple gpu-asm`: the GPU kernels' machine code, counted without a GPU.

Every kernel of both GPU backends (numba-cuda's Python kernels in `kernels/cuda.py`, compiled
with `numba.cuda.compile_ptx`; the CUDA C of `kernels/nbody.cu` that the CuPy backend runs,
compiled by NVRTC) x precision (sp, dp, dsp) x kind (tiled, plain, fused = E's tiled kernel
with the Galaxy, fused_plain) is compiled to PTX for the target, assembled by `ptxas` and
disassembled by `nvdisasm` (the PyPI wheels nvidia-cuda-nvcc and nvidia-cuda-nvdisasm; no
driver and no GPU needed). In the SASS, the innermost source loop is the backward branch whose
body holds the reciprocal square roots (`MUFU.RSQ`, one per pair interaction); its
instructions divided by its `MUFU.RSQ` count are the instructions issued per interaction.

The model (an all-pairs kernel is bound by instruction issue or by one of its pipes, not by
memory: each source body is read once per tile from shared memory, or for the plain kernel
from L1, and reused by a whole block): one interaction per thread costs, in clocks of one SM,

    max(all instructions / issue rate, FP32 / FP32 lanes, FP64 / FP64 lanes,
        (MUFU + conversions) / MUFU lanes, (shared + global loads) / load-store lanes)

and the SMs x clock of the device divide by it: predicted interactions/s. Global loads of the
plain kernel are counted like shared loads (issue slots and load-store lanes at the L1-hit
rate): the model assumes they hit in L1 and that their latency is hidden by other warps, so
for the plain kernel it is an upper bound, which only a GPU measurement can confirm.
Instructions outside the loop (tile loads, barriers, the Galaxy of E: O(N) per thread against
O(N^2)) are left out. Occupancy is the theoretical one at the chosen tile, from registers,
shared memory and threads per block.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
import json
import os
from pathlib import Path
import re
import shutil
import subprocess
import sys
import tempfile

from .core.vocabulary import PRECISIONS

# ---------------------------------------------------------------- device figures


@dataclass(frozen=True)
class Device:
    """Per-SM rates (thread-instructions per clock) and limits of one GPU, from its vendor's
    datasheet and the CUDA programming guide's throughput and occupancy tables."""
    name: str
    sms: int
    clock_ghz: float          # boost clock
    issue: int                # 4 schedulers x 32 lanes
    fp32: int
    fp64: int
    mufu: int                 # special-function unit: rsqrt, also float <-> double conversions
    lsu: int                  # load/store lanes (shared loads; L1-hit global loads)
    max_threads: int = 2048
    max_blocks: int = 32
    registers: int = 65536
    shared_kib: int = 228     # shared memory per SM
    reserved_smem: int = 1024  # per block, reserved by the runtime

    def as_dict(self) -> dict:
        return asdict(self)


DEVICES = {
    "sm_90": Device("NVIDIA H200 (GH100)", sms=132, clock_ghz=1.98, issue=128, fp32=128, fp64=64, mufu=16, lsu=32),
    "sm_80": Device("NVIDIA A100 SXM (GA100)", sms=108, clock_ghz=1.41, issue=128, fp32=64, fp64=32, mufu=16, lsu=32,
                    shared_kib=164),
    "sm_100": Device("NVIDIA B200 (GB100)", sms=148, clock_ghz=1.98, issue=128, fp32=128, fp64=64, mufu=16, lsu=32),
}
DEFAULT_ARCH = "sm_90"
KINDS = ("tiled", "plain", "fused", "fused_plain")   # what `--keep` and `--json` call the kernels

# ---------------------------------------------------------------- the tools


class ToolMissing(RuntimeError):
    """ptxas or nvdisasm (or the CUDA C compiler) is not installed: one sentence says how to get it."""


class CompileFailed(RuntimeError):
    """A compiler or tool refused (e.g. a target it does not support): its first lines say why."""


def tool(name: str) -> str:
    """Path of `ptxas` or `nvdisasm`: from the nvidia-cuda-nvcc / nvidia-cuda-nvdisasm wheels
    (site-packages/nvidia/cu13/bin), else from PATH."""
    try:
        import nvidia
        for root in nvidia.__path__:
            for sub in sorted(Path(root).glob("cu*/bin")):
                if (sub / name).is_file() and os.access(sub / name, os.X_OK):
                    return str(sub / name)
    except ImportError:
        pass
    found = shutil.which(name)
    if found:
        return found
    wheel = "nvidia-cuda-nvcc" if name == "ptxas" else "nvidia-cuda-nvdisasm"
    raise ToolMissing(f"{name} not found: pip install {wheel} (the `test` extra installs it)")


def _run(args: list[str]) -> str:
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise CompileFailed(f"{Path(args[0]).name} failed: {(p.stderr or p.stdout).strip()[:2000]}")
    return p.stdout + p.stderr


@dataclass
class Resources:
    registers: int
    spill_stores: int
    spill_loads: int
    stack: int
    shared: int


_PTXAS_FUNCTION = re.compile(r"Function properties for (\S+)")
_PTXAS_ENTRY = re.compile(r"Compiling entry function '([^']+)'")


def assemble(ptx: str, arch: str, workdir: Path) -> tuple[dict[str, Resources], dict[str, str]]:
    """PTX -> (resources per entry function from `ptxas -v`, SASS text per function)."""
    stem = f"k{len(list(workdir.iterdir()))}"
    src, cubin = workdir / f"{stem}.ptx", workdir / f"{stem}.cubin"
    src.write_text(ptx)
    log = _run([tool("ptxas"), f"-arch={arch}", "-O3", "-v", str(src), "-o", str(cubin)])
    resources, current = {}, None
    for line in log.splitlines():
        if m := _PTXAS_ENTRY.search(line):
            current = m.group(1)
        elif m := _PTXAS_FUNCTION.search(line):
            current = m.group(1)
        elif current and "bytes stack frame" in line:
            nums = [int(v) for v in re.findall(r"(\d+) bytes", line)]
            resources[current] = Resources(0, nums[1], nums[2], nums[0], 0)
        elif current and (m := re.search(r"Used (\d+) registers", line)):
            r = resources.setdefault(current, Resources(0, 0, 0, 0, 0))
            r.registers = int(m.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            r.shared = int(s.group(1)) if s else 0
    sass = _run([tool("nvdisasm"), "-c", str(cubin)])
    return resources, split_functions(sass)


_FUNCTION_HEADER = re.compile(r"^//-+ \.text\.(\S+)\s+-+\s*$", re.M)


def split_functions(sass: str) -> dict[str, str]:
    """nvdisasm's output, one entry per `//--- .text.NAME ---` block."""
    heads = list(_FUNCTION_HEADER.finditer(sass))
    return {h.group(1): sass[h.end(): heads[k + 1].start() if k + 1 < len(heads) else len(sass)]
            for k, h in enumerate(heads)}


# ---------------------------------------------------------------- the innermost loop

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


# ---------------------------------------------------------------- the model

def clocks_per_interaction(per: dict[str, float], device: Device) -> dict[str, float]:
    """SM clocks one interaction per thread costs on each resource (see the module's model)."""
    total = sum(per.values())
    return {
        "issue": total / device.issue,
        "fp32": per["fp32"] / device.fp32,
        "fp64": per["fp64"] / device.fp64,
        "mufu": (per["mufu"] + per["convert"]) / device.mufu,
        "lsu": (per["shared_load"] + per["global_load"]) / device.lsu,
    }


def occupancy(registers: int, shared: int, tile: int, device: Device) -> tuple[int, float]:
    """(blocks per SM, fraction of the SM's warps), the CUDA occupancy calculator's rules:
    registers allocated per warp in units of 256, shared memory plus 1 KiB per block."""
    warps = tile // 32
    per_warp = -(-max(registers, 1) * 32 // 256) * 256
    by_registers = (device.registers // per_warp) // warps
    by_shared = (device.shared_kib * 1024) // (shared + device.reserved_smem) if shared else device.max_blocks
    by_threads = device.max_threads // tile
    blocks = max(0, min(by_registers, by_shared, by_threads, device.max_blocks))
    return blocks, blocks * warps / (device.max_threads // 32)


@dataclass
class KernelCount:
    backend: str
    precision: str
    kernel: str
    arch: str
    tile: int
    instructions_per_interaction: float
    mix_per_interaction: dict
    loop_instructions: int
    interactions_per_loop: int
    registers: int
    spills: int               # bytes, stores + loads
    stack: int
    shared_bytes: int
    blocks_per_sm: int | None        # None: no device figures for the target
    occupancy: float | None
    bound: str | None         # the resource of the model that limits
    clocks_per_interaction: float | None
    predicted_interactions_per_second: float | None
    float64_instructions: int  # in the whole kernel (the sp and dsp pairwise kernels have none)

    def as_dict(self) -> dict:
        return asdict(self)


def count(backend, precision, kernel, arch, tile, resources: Resources, sass: str) -> KernelCount:
    device = DEVICES.get(arch)
    loop = innermost_loop(sass)
    counts = mix(loop.body)
    n = loop.rsqrts
    per = {k: v / n for k, v in counts.items()}
    code, _ = instructions(sass)
    f64 = sum(classify(i.opcode) == "fp64" or ".F64" in i.opcode for i in code)
    if device is not None:
        clocks = clocks_per_interaction(per, device)
        bound = max(clocks, key=clocks.get)
        blocks, occ = occupancy(resources.registers, resources.shared, tile, device)
        rate = device.sms * device.clock_ghz * 1e9 / clocks[bound]
        cost, occ = round(clocks[bound], 4), round(occ, 3)
    else:                       # counted, not predicted
        bound, cost, blocks, occ, rate = None, None, None, None, None
    return KernelCount(backend, precision, kernel, arch, tile, round(len(loop.body) / n, 3),
                       {k: round(v, 3) for k, v in per.items()}, len(loop.body), n, resources.registers,
                       resources.spill_stores + resources.spill_loads, resources.stack, resources.shared,
                       blocks, occ, bound, cost, rate, f64)


# ---------------------------------------------------------------- compiling each backend

def _cc(arch: str) -> tuple[int, int]:
    m = re.fullmatch(r"sm_(\d+)(\d)", arch)
    if not m:
        raise ValueError(f"unknown architecture {arch!r}; expected sm_XY such as {', '.join(DEVICES)}")
    return int(m.group(1)), int(m.group(2))


def cuda_c_ptx(precision: str, tile: int, arch: str) -> str:
    """PTX of the CuPy backend's module (`kernels/nbody.cu`) for one precision, compiled by NVRTC
    with the options the backend gives CuPy. NVRTC needs no driver; `cuda.bindings` (installed
    with numba-cuda[cu13]) loads the same libnvrtc as cupy-cuda13x."""
    from .gpu_pairwise import cupy_cuda as cupy_backend
    try:
        from cuda.bindings import nvrtc
    except ImportError as e:
        raise ToolMissing(f"NVRTC not found: pip install 'numba-cuda[cu13]' (the `test` extra installs it): {e}") \
            from None

    def check(result):
        err, *rest = result
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise CompileFailed(f"NVRTC: {nvrtc.nvrtcGetErrorString(err)[1].decode()}")
        return rest[0] if len(rest) == 1 else rest

    major, minor = _cc(arch)
    program = check(nvrtc.nvrtcCreateProgram(cupy_backend.source().encode(), b"nbody.cu", 0, [], []))
    try:
        opts = [o.encode() for o in (*cupy_backend.options(precision, tile), f"-arch=compute_{major}{minor}")]
        err, = nvrtc.nvrtcCompileProgram(program, len(opts), opts)
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            size = check(nvrtc.nvrtcGetProgramLogSize(program))
            log = b" " * size
            nvrtc.nvrtcGetProgramLog(program, log)
            raise CompileFailed(f"NVRTC could not compile nbody.cu ({precision}, {arch}): "
                                f"{log.decode(errors='replace').strip()[:2000]}")
        size = check(nvrtc.nvrtcGetPTXSize(program))
        ptx = b" " * size
        check((nvrtc.nvrtcGetPTX(program, ptx)[0], None))
    finally:
        nvrtc.nvrtcDestroyProgram(program)
    return ptx.rstrip(b"\0 ").decode()


class _TargetDevice:
    """Stands in for `numba.cuda.get_current_device()` while compiling: without a GPU, compiling
    a kernel that calls a `cuda.jit(device=True)` function asks the current device's compute
    capability (numba-cuda 0.30), although `compile_ptx` is told the target already."""

    def __init__(self, cc):
        self.compute_capability = cc


def numba_ptx(precision: str, kind: str, tile: int, arch: str) -> str:
    """PTX of one numba-cuda kernel (`kernels/cuda.py`) for the target."""
    import numba.cuda.dispatcher as dispatcher
    from numba import cuda

    from .gpu_pairwise import numba_cuda as kc
    cc = _cc(arch)
    saved = dispatcher.get_current_device
    dispatcher.get_current_device = lambda: _TargetDevice(cc)
    try:
        fn, fastmath = kc.python_kernel(precision, tile, galactic=kind.startswith("fused"),
                                        kernel="plain" if kind.endswith("plain") else "tiled")
        ptx, _ = cuda.compile_ptx(fn, kc.signature(precision, kind.startswith("fused")), cc=cc, fastmath=fastmath)
    finally:
        dispatcher.get_current_device = saved
    return ptx


def _entry_of(kind: str, names) -> str:
    """The mangled or plain name of `kind`'s kernel among a module's functions."""
    want = {"tiled": "pairwise_tiled", "plain": "pairwise_plain", "fused": "fused_tiled",
            "fused_plain": "fused_plain"}[kind]
    found = [n for n in names if n == want]
    if len(found) != 1:
        raise RuntimeError(f"kernel {want} not found among {sorted(names)}")
    return found[0]


def count_all(arch: str = DEFAULT_ARCH, tile: int = 256, backends=("numba", "cupy"), precisions=PRECISIONS,
              kinds=KINDS, keep: Path | None = None) -> list[KernelCount]:
    """Compile, assemble, disassemble and count every kernel asked for."""
    if arch not in DEVICES:
        _cc(arch)     # a well-formed name outside DEVICES is counted without a prediction
    tool("ptxas"), tool("nvdisasm")     # before minutes of compiling: say at once what is missing
    rows = []
    with tempfile.TemporaryDirectory(prefix="nbsymple-gpu-asm-") as tmp:
        work = Path(tmp)
        for backend in backends:
            for precision in precisions:
                if backend == "cupy":
                    resources, sass = assemble(cuda_c_ptx(precision, tile, arch), arch, work)
                for kind in kinds:
                    if backend == "numba":
                        resources, sass = assemble(numba_ptx(precision, kind, tile, arch), arch, work)
                        (name, text), = sass.items()
                    else:
                        name = _entry_of(kind, sass)
                        text = sass[name]
                    rows.append(count(backend, precision, kind, arch, tile, resources[name], text))
                    if keep is not None:
                        keep.mkdir(parents=True, exist_ok=True)
                        (keep / f"{backend}_{precision}_{kind}.sass").write_text(text)
    return rows


# ---------------------------------------------------------------- the report

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
        print(f"SASS of each kernel in {keep}/<backend>_<precision>_<kernel>.sass", file=out)
    return 0
