"""The core's clock frequency, measured: what turns `cpu-asm`'s cycles per interaction into the
rate this core can reach.

A chain of dependent one-cycle integer operations, x = rotate(x, 13) + k on 64-bit words (one
`rorx` or `ror`, then one `add`, each waiting for the one before), costs `CHAIN_CYCLES` per
step on every x86 core since Haswell and Zen. Timing `STEPS` of them in the thread's own CPU
time (so that time the thread spent descheduled on a loaded machine does not count) gives the
cycles per second the core ran at meanwhile, boost included; a virtual machine's `cpu MHz` only
says the nominal clock. The best of `REPEATS` runs is taken. `tests/test_cpu_asm.py` checks
that the compiled loop is that chain.
"""
import time

import numpy as np
from numba import njit

CHAIN_CYCLES = 2
STEPS = 30_000_000          # 60 M cycles: about 20 ms at 3 GHz
REPEATS = 7
_RIGHT, _LEFT = np.uint64(13), np.uint64(51)


@njit(cache=False)
def chain(steps, x, k):
    """`steps` dependent steps x = rotate_right(x, 13) + k (uint64)."""
    for _ in range(steps):
        x = ((x >> _RIGHT) | (x << _LEFT)) + k
    return x


def core_frequency_hz(steps: int = STEPS, repeats: int = REPEATS) -> float:
    """Cycles per second of the core this runs on (x86), from the fastest of `repeats` chains."""
    one, k = np.uint64(1), np.uint64(0x9E3779B97F4A7C15)
    chain(10, one, k)                   # compile
    best = float("inf")
    for _ in range(repeats):
        t = time.thread_time()
        chain(steps, one, k)
        best = min(best, time.thread_time() - t)
    return CHAIN_CYCLES * steps / best
