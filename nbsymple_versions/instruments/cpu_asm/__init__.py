"""`nbsymple cpu-asm`: the CPU kernels' machine code, counted for the host and for fixed targets.

Every CPU kernel of `serial/kernels.py` (pairwise sp, dp, dsp; galactic; axpy, the drifts and
kicks) is compiled by numba for the host CPU and for each of `FIXED_TARGETS`, each in a child
process with numba's target CPU pinned, so that a fixed target's code is the same on every
machine with the same numba and llvmlite. In the x86 assembly, the hot loop (pairwise: the loop
over sources that holds the reciprocal square root estimates, one lane per interaction;
galactic, axpy: the vectorised loop over elements) is counted by instruction class, and a
pipe-bound model (for the host, from costs measured on it: `replay.py`), with llvm-mca beside it
where LLVM 14 models the CPU, predicts cycles per interaction. Files:
  toolchain.py  the targets, the child process that compiles them, llvm-mca on PATH
  x86.py        AT&T assembly: instructions, their classes (`MIX`), loops, the hot loop
  model.py      per-CPU pipe figures (`CPUS`), the pipe-bound model, llvm-mca's figure
  report.py     every kernel counted (`count_all`, rows of `KernelCount`), the table and JSON (`main`)
  frequency.py  the core clock, measured (`core_frequency_hz`), to turn cycles into rates
  replay.py     the host's costs, measured: each class and each hot loop replayed on this core
"""
from importlib import import_module

# the package's names, each loaded with its module when first asked for: `nbsymple`'s parser names
# the targets (`toolchain`) without importing numba (`report` compiles kernels), so that a command
# refused for its arguments does not wait for numba to load
_NAMES = {"model": ("CPUS", "Cpu", "Pipes", "cycles_per_iteration"),
          "report": ("KernelCount", "count", "count_all", "main", "table"),
          "toolchain": ("FIXED_TARGETS", "HOST", "KERNELS", "TARGETS", "CompileFailed", "llvm_mca"),
          "x86": ("MIX", "classify", "element_loop", "pairwise_loop", "parse")}
_MODULE_OF = {name: module for module, names in _NAMES.items() for name in names}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str):
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{_MODULE_OF[name]}", __name__), name)
    globals()[name] = value
    return value
