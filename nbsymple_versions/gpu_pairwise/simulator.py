"""numba-cuda's CUDA simulator (NUMBA_ENABLE_CUDASIM=1): when it is on, the fix its shared
arrays need for the tiled kernels, and its blocks' barriers without a poll. Nothing here
imports numba-cuda at import time."""
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
    wait_at_barriers()


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


def wait_at_barriers():
    """Run every simulated block without polling its threads.

    The simulator runs a block as one Python thread per CUDA thread. numba-cuda's launching
    thread polls them, holding the GIL, until all wait at a barrier or have ended: a block of 32
    threads spent most of its time in that poll (58 us per pair interaction at Python's 5 ms
    switch interval). Here each thread says so instead, under a condition variable, when it
    reaches a barrier and when it ends, and the launching thread sleeps until every thread of
    the block has done one or the other; it then releases the barrier or, where a thread raised,
    ends the others and raises that exception (numba-cuda's rule: an ended thread does not wait
    at later barriers). The simulator test children took a third less time than with the poll
    at the best switch interval. Simulator only; applied once. (The simulator runs one launch at
    a time: launches from several threads fail inside it.)
    """
    from numba.cuda.simulator.kernel import BlockManager, BlockThread
    if getattr(BlockManager.run, "waits", False):
        return
    thread_run = BlockThread.run

    def syncthreads(self):
        if self.abort:
            raise RuntimeError("abort flag set on syncthreads call")
        block = self._manager
        with block.arrived:
            self.syncthreads_blocked = True
            block.waiting += 1
            block.arrived.notify()
        self.syncthreads_event.wait()
        self.syncthreads_event.clear()
        if self.abort:
            raise RuntimeError("abort flag set on syncthreads clear")

    def run_thread(self):
        try:
            thread_run(self)                    # keeps an exception in self.exception
        finally:
            block = self._manager
            with block.arrived:
                block.ended += 1
                block.arrived.notify()

    def run(self, grid_point, *args):
        self.arrived, self.waiting, self.ended = threading.Condition(), 0, 0
        threads = [BlockThread(lambda: self._f(*args), self, grid_point, block_point, self._debug)
                   for block_point in np.ndindex(*self._block_dim)]
        with self.arrived:                      # a thread reports only once this waits
            for t in threads:
                t.start()
            while True:
                self.arrived.wait_for(lambda: self.waiting + self.ended == len(threads))
                failed = next((t for t in threads if t.exception), None)
                if failed is not None:
                    for t in threads:
                        t.abort, t.syncthreads_blocked = True, False
                        t.syncthreads_event.set()
                    raise failed.exception[0].with_traceback(failed.exception[1])
                if self.ended == len(threads):
                    return
                self.waiting = 0                # all that have not ended wait: release them
                for t in threads:
                    if t.syncthreads_blocked:
                        t.syncthreads_blocked = False
                        t.syncthreads_event.set()
    run.waits = True
    BlockThread.syncthreads, BlockThread.run, BlockManager.run = syncthreads, run_thread, run
