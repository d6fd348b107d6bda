"""numba-cuda's CUDA simulator (NUMBA_ENABLE_CUDASIM=1): when it is on, and the one fix its
shared arrays need for the tiled kernels. Nothing here imports numba-cuda at import time."""
import os
import sys
import threading

import numpy as np


def cuda_simulator() -> bool:
    """True when NUMBA_ENABLE_CUDASIM asks for numba-cuda's simulator, read as numba reads it
    (a whole number, non-zero means on; anything else means off)."""
    try:
        return int(os.environ.get("NUMBA_ENABLE_CUDASIM", "0")) != 0
    except ValueError:
        return False


def gpu_name(gpu) -> str:
    """A numba-cuda device's name as text (older numba-cuda gives bytes)."""
    name = gpu.name
    return name.decode() if isinstance(name, bytes) else str(name)


def lock_shared_arrays():
    """Make the simulator's `cuda.shared.array` hand every thread of a block the same array.

    numba-cuda's simulator runs each CUDA thread as a Python thread, and `FakeCUDAShared.array`
    looks up its per-call-site array and creates it when missing without a lock; a thread switch
    between the two lets two threads each create their own "shared" array, and the tile loop
    then reads uninitialised memory (garbage forces, now and then a NaN). Serialising the lookup
    fixes it. The simulator's version also lacks the `alignment` keyword (meaningless for its
    NumPy arrays): accepted and ignored here. Simulator only; applied once.
    """
    from numba.cuda import types
    from numba.cuda.np import numpy_support
    from numba.cuda.simulator.kernelapi import FakeCUDAShared
    if getattr(FakeCUDAShared.array, "locked", False):
        return
    unlocked, lock = FakeCUDAShared.array, threading.Lock()

    def array(self, shape, dtype, alignment=None):
        if shape == 0:                              # dynamic shared memory has no lookup
            return unlocked(self, shape, dtype)
        caller = sys._getframe(1)                   # keyed by call site, as the simulator does
        key = (caller.f_code.co_filename, caller.f_lineno)
        with lock:
            if key not in self._allocations:
                self._allocations[key] = np.empty(shape, numpy_support.as_dtype(dtype)
                                                  if isinstance(dtype, types.Type) else dtype)
            return self._allocations[key]
    array.locked = True
    FakeCUDAShared.array = array
