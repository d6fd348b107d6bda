"""Version C, `gpu_pairwise`: the pairwise forces on a GPU, the O(N) work on one CPU core.

C introduces the GPU: the device records, the tiled (GPU Gems 3 ch. 31) and plain kernels of
both backends, the engine that runs them, and the simulator support. Files:
  options.py      `GpuOptions` (tile, kernel, backend), their checks, the kernels' entry names
  records.py      the body records the kernels read, zero-mass padding
  engine.py       `GpuEngine`: slices of targets (stream, buffers each), upload / launch / download,
                  and `Galaxy`, the hook through which E fuses its field into the kernel
  backends.py     the two backends by name: availability and engine class
  numba_cuda.py   the kernels in Python for numba-cuda, and its engine `CudaPairwise`
  cupy_cuda.py    the CUDA C kernels (`nbody.cu`) compiled by NVRTC, and `CupyPairwise` (CuPy)
  nbody.cu        the CUDA C kernels (package data)
  simulator.py    numba-cuda's CUDA simulator: when it is on, its shared-array fix, its pace
Nothing here imports numba-cuda or CuPy, or touches a GPU, before an engine is built.
"""
from .options import GpuOptions as Options

GPU = True
HOST_KERNELS = "serial"
GALAXY_IN_KERNEL = False


def availability(options: Options) -> tuple[bool, str]:
    from .backends import availability as backend_availability
    return backend_availability(options.backend)


def gpu_pipeline(state, precision, clock, options: Options, host, galaxy=None, devices=1):
    """A GPU engine of `options.backend` for the pairwise forces (with `galaxy`'s field in the
    same kernel: E's `gpu_full.fused.GALAXY`; over `devices` slices) and `host` kernels for the
    O(N) work."""
    from ..core.pipeline import ForcePipeline
    from .backends import engine_class
    engine = engine_class(options.backend)(state.m, state.eps, precision, tile=options.tile, kernel=options.kernel,
                                           galaxy=galaxy, units=state.units, devices=devices)
    return ForcePipeline(engine, host, state.units, clock)


def build_pipeline(state, precision, clock, options: Options):
    from ..serial.kernels import SERIAL
    return gpu_pipeline(state, precision, clock, options, SERIAL)
