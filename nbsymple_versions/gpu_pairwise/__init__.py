"""Version C, `gpu_pairwise`: the pairwise forces on a GPU, the O(N) work on one CPU core.

C introduces the GPU: the device records, the tiled (GPU Gems 3 ch. 31) and plain kernels of
both backends, transfers and the simulator support. Files:
  options.py      `GpuOptions` (tile, kernel, backend) and their checks
  records.py      the body records the kernels read, zero-mass padding
  engine.py       the host side of a GPU engine: slices of targets, upload / launch / download
  backends.py     the two backends by name: availability and engine class
  numba_cuda.py   the kernels in Python for numba-cuda, and its engine
  cupy_cuda.py    the CUDA C kernels (`nbody.cu`) compiled by NVRTC and launched by CuPy
  simulator.py    numba-cuda's CUDA simulator: when it is on, and its shared-array fix
Nothing here imports numba-cuda or CuPy, or touches a GPU, before an engine is built.
"""
from .options import GpuOptions as Options

GPU = True
HOST = "serial"


def availability(options: Options) -> tuple[bool, str]:
    from .backends import availability as backend_availability
    return backend_availability(options.backend)


def gpu_pipeline(state, precision, clock, options: Options, host, galactic=False, devices=1):
    """A GPU engine of `options.backend` for the pairwise forces (with the Galaxy in the same
    kernel when `galactic`, over `devices` slices) and `host` kernels for the O(N) work."""
    from ..core.pipeline import ForcePipeline
    from .backends import engine_class
    engine = engine_class(options.backend)(state.m, state.eps, precision, tile=options.tile, devices=devices,
                                           galactic=galactic, units=state.units, kernel=options.kernel)
    return ForcePipeline(engine, host, state.units, clock)


def build_pipeline(state, precision, clock, options: Options):
    from ..serial.kernels import SERIAL
    return gpu_pipeline(state, precision, clock, options, SERIAL)
