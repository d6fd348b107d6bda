"""numba-cuda's CUDA simulator (NUMBA_ENABLE_CUDASIM=1): when it is on, the fix its shared
arrays need for the tiled kernels, and the pace of its threads. Nothing here imports numba-cuda
at import time."""
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


def prepare():
    """Apply both fixes below, once per process (the kernels call this where the simulator is on)."""
    lock_shared_arrays()
    pace_blocks()


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


# the thread-switch interval during a simulated block, per CUDA thread of the block, and the
# least (seconds): the best of those tried (0.2-10 ms; the simulator test children, blocks of 32
# to 256 threads) on a 2-core AMD EPYC Zen 5
SWITCH_PER_THREAD_S, SWITCH_MIN_S = 1e-5, 5e-4


def pace_blocks():
    """Run every simulated block with a thread-switch interval to suit its size.

    The simulator runs a block as one Python thread per CUDA thread, and the launching thread
    polls them, holding the GIL, until all wait at a barrier or have ended. With Python's
    default 5 ms switch interval a block of 32 threads spends most of its time in that poll
    (58 us per pair interaction, 15 at 0.5 ms); a block of 256 threads, whose poll is 8x as
    long, is best at 1-5 ms. During a block the interval is `SWITCH_PER_THREAD_S` per thread,
    at least `SWITCH_MIN_S`; the caller's interval is restored after it. The simulator test
    children took 30 % less time than at a fixed 0.5 ms. Simulator only; applied once. (The
    simulator runs one launch at a time: launches from several threads fail inside it.)
    """
    from numba.cuda.simulator.kernel import BlockManager
    if getattr(BlockManager.run, "paced", False):
        return
    unpaced = BlockManager.run

    def run(self, grid_point, *args):
        previous = sys.getswitchinterval()
        sys.setswitchinterval(max(SWITCH_MIN_S, SWITCH_PER_THREAD_S * int(np.prod(self._block_dim))))
        try:
            return unpaced(self, grid_point, *args)
        finally:
            sys.setswitchinterval(previous)
    run.paced = True
    BlockManager.run = run
