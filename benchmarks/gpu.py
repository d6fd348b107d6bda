"""The GPU kernels themselves, per backend (numba-cuda, CuPy) and kind (tiled, plain).

- `GpuCode.track_instructions_per_interaction`: SASS instructions the innermost loop of each
  kernel issues per pair interaction on the H200 (sm_90), counted by `nbsymple gpu-asm` without
  a GPU (ptxas and nvdisasm from the test extra's wheels). A direct N-body kernel is
  issue-bound, so this predicts its speed; lower is better, and a regression in generated code
  shows on the dashboard of a CPU-only machine.
- `GpuKernel.time_kernel`: one pairwise evaluation of C's kernel (E's fused kernel for
  `fused`) alone, positions already on the device, ending synchronised; a GPU only.
Both are new classes over the GPU axes, so the history of Tasks and Step stays as it is.
"""
import importlib.util

from .common import Benchmark
from .grid import AXES, grid_reason
from .package import SkipNotImplemented, build_pipeline, public

# literal, so that the parameters (and the history they key) stay the same on every commit;
# tests/test_benchmarks.py checks them against gpu_pairwise.options and gpu_asm.KINDS
GPU_BACKENDS = ("numba", "cupy")
GPU_KERNELS = ("tiled", "plain")                          # a GPU engine's kernel kinds
COUNTED_KERNELS = ("tiled", "plain", "fused", "fused_plain")   # E's fused ones too
ARCH = "sm_90"


class GpuCode(Benchmark):
    """Instructions per interaction of every GPU kernel, counted once for all (setup_cache)."""

    version = "1"
    params = [list(GPU_BACKENDS), list(AXES["precision"]), list(COUNTED_KERNELS)]
    param_names = ["backend", "precision", "kernel"]
    timeout = 900

    def setup_cache(self):
        try:
            gpu_asm = public.gpu_asm
        except SkipNotImplemented as e:           # a commit from before gpu-asm was public
            return {"skip": str(e)}
        try:
            rows = gpu_asm.count_all(ARCH)
        except (gpu_asm.ToolMissing, ImportError) as e:
            if (getattr(e, "name", None) or "").startswith("nbsymple_versions"):    # the package's own import
                return {"error": f"the GPU kernels could not be imported: {e}"}    # failed (a skip: a hunt)
            return {"skip": f"the CUDA assembler and disassembler are needed to count instructions: {e}"}
        except gpu_asm.CompileFailed as e:      # the commit's kernels (or this arch) do not compile: a failure
            return {"error": f"the GPU kernels could not be compiled: {e}"}      # (it was a skip: a hunt)
        return {(r.backend, r.precision, r.kernel): r.instructions_per_interaction for r in rows}

    setup_cache.timeout = 900

    def setup(self, counts, backend, precision, kernel):
        if "skip" in counts:
            raise NotImplementedError(counts["skip"])
        if "error" in counts:
            raise RuntimeError(counts["error"])
        self.count = counts[backend, precision, kernel]

    def track_instructions_per_interaction(self, counts, backend, precision, kernel):
        """SASS instructions per pair interaction in the innermost loop, for the H200."""
        return self.count

    track_instructions_per_interaction.unit = "instructions"


class GpuKernel(Benchmark):
    """One kernel launch over all N targets, per backend and kernel kind (GPU machines only):
    C's pairwise kernel, or E's fused pairwise + galactic kernel (`fused`)."""

    version = "1"
    params = [list(GPU_BACKENDS), list(GPU_KERNELS), [False, True], list(AXES["n"]), list(AXES["precision"])]
    param_names = ["backend", "kernel", "fused", "n", "precision"]

    def skip_reason(self, backend, kernel, fused, n, precision):
        reason = grid_reason("E" if fused else "C", n)
        if reason is None and backend == "cupy" and importlib.util.find_spec("cupy") is None:
            reason = "the CuPy backend needs CuPy (pip install 'nbsymple-versions[gpu]')"
        return reason

    def setup(self, backend, kernel, fused, n, precision):
        self.check_params(backend, kernel, fused, n, precision)
        self.options = dict(backend=backend, kernel=kernel)
        forces = self.prepare("E" if fused else "C", n, precision)    # validates this very kernel
        self.backend = forces.backend
        self.backend.upload(self.state.x)

    def make_pipeline(self, letter, state, precision, clock=None):
        return build_pipeline(letter, state, precision, clock, **self.options)

    def time_kernel(self, backend, kernel, fused, n, precision):
        """The kernel alone, positions already on the device, ending with a device synchronise."""
        self.backend.compute()
