"""Version E, `gpu_full`: the pairwise and the galactic force in one GPU kernel, on 1..n GPUs;
the integration on all CPU cores (B's host kernels).

E adds the Galaxy inside the kernel (the Allen & Santillan field of `core/as91.py`, float64,
at each target), handed to C's engine as `fused.GALAXY`, and `devices`: the targets split
into that many slices, round-robin over the GPUs present, each slice with its own stream and
buffers (C's engine slices). Files:
  __init__.py     `Options` (C's and `devices`), the pipeline
  fused.py        `GALAXY`: E's fused kernels for both backends, their arguments and constants
  fused_numba.py  the fused kernel for numba-cuda (imported when one is built)
  fused.cu        the fused kernels in CUDA C, compiled after C's `nbody.cu` (package data)
"""
from dataclasses import dataclass

import numpy as np

from ..core.options import option
from ..gpu_pairwise import availability, gpu_pipeline  # noqa: F401  (C's GPUs)
from ..gpu_pairwise.options import GpuOptions
from .fused import GALAXY

GPU = True
HOST_KERNELS = "threaded"
GALAXY_IN_KERNEL = True


DEVICES_LIMIT = 1024        # slices: far more than the GPUs of any node (each has a stream and buffers)


def check_devices(devices) -> int:
    if isinstance(devices, bool) or not isinstance(devices, (int, np.integer)) or not 1 <= devices <= DEVICES_LIMIT:
        raise ValueError(f"devices must be a whole number from 1 to {DEVICES_LIMIT} (slices of targets, one per "
                         f"device), got {devices!r}")
    return int(devices)


@dataclass(frozen=True)
class Options(GpuOptions):
    """C's options and the number of device slices."""

    devices: int = option(1, "--devices", "slices of the targets, one per GPU, round-robin over the "
                          "GPUs present (default 1)", check_devices)


def build_pipeline(state, precision, clock, options: Options):
    from ..threaded.kernels import THREADED
    return gpu_pipeline(state, precision, clock, options, THREADED, galaxy=GALAXY, devices=options.devices)
