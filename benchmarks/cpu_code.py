"""The CPU kernels' machine code, counted for fixed targets (`nbsymple cpu-asm`).

- `CpuCode.track_instructions_per_interaction`: x86 instructions the hot loop of each CPU
  kernel (pairwise sp, dp, dsp; galactic; axpy) executes per interaction (per element for the
  O(N) kernels), compiled by numba for an AVX2 (haswell), an AVX-512 (skylake-avx512) and a
  Zen 4 (znver4) target whatever this machine is: the same code gives the same figure on every
  machine and under any load, so a change in the generated code shows on the dashboard (and
  fails the gate's counts tier) where a timing would drown it in noise. Lower is better.
"""
from .common import Benchmark
from .package import SkipNotImplemented, public

# literal, so that the parameters (and the history they key) stay the same on every commit;
# tests/test_benchmarks.py checks them against cpu_asm's FIXED_TARGETS and KERNELS
TARGETS = ("haswell", "skylake-avx512", "znver4")
KERNELS = ("pairwise sp", "pairwise dp", "pairwise dsp", "galactic dp", "axpy dp")


class CpuCode(Benchmark):
    """Instructions per interaction of every CPU kernel, counted once for all (setup_cache)."""

    version = "1"
    params = [list(TARGETS), list(KERNELS)]
    param_names = ["target", "kernel"]
    timeout = 300

    def setup_cache(self):
        try:
            cpu_asm = public.cpu_asm
        except SkipNotImplemented as e:           # a commit from before cpu-asm was public
            return {"skip": str(e)}
        try:
            rows = cpu_asm.count_all(TARGETS)
        except cpu_asm.CompileFailed as e:      # numba needs no other tool: a failure (it was a skip: a hunt)
            return {"error": f"the CPU kernels could not be compiled for the fixed targets: {e}"}
        return {(r.target, f"{r.kernel} {r.precision}"): r.instructions_per_interaction for r in rows}

    setup_cache.timeout = 300

    def setup(self, counts, target, kernel):
        if "skip" in counts:
            raise NotImplementedError(counts["skip"])
        if "error" in counts:
            raise RuntimeError(counts["error"])
        self.count = counts[target, kernel]

    def track_instructions_per_interaction(self, counts, target, kernel):
        """x86 instructions per interaction (per element: galactic, axpy) in the hot loop."""
        return self.count

    track_instructions_per_interaction.unit = "instructions"
