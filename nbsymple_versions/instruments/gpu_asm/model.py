"""The issue model of an all-pairs kernel and the device figures it needs.

An all-pairs kernel is bound by instruction issue or by one of its pipes, not by memory: each
source body is read once per tile from shared memory, or for the plain kernel from L1, and
reused by a whole block. One interaction per thread costs, in clocks of one SM,

    max(all instructions / issue rate, FP32 / FP32 lanes, FP64 / FP64 lanes,
        (MUFU + conversions) / MUFU lanes, (shared + global loads) / load-store lanes)

and the SMs x clock of the device divide by it: predicted interactions/s. Global loads of the
plain kernel are counted like shared loads (issue slots and load-store lanes at the L1-hit
rate): the model assumes they hit in L1 and that their latency is hidden by other warps, so
for the plain kernel it is an upper bound, which only a GPU measurement can confirm.
Instructions outside the innermost loop (tile loads, barriers, the Galaxy of E: O(N) per
thread against O(N^2)) are left out. Occupancy is the theoretical one at the chosen tile, from
registers, shared memory and threads per block.
"""
from dataclasses import asdict, dataclass

from .sass import classify, innermost_loop, instructions, mix
from .toolchain import Resources


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
