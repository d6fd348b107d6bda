"""Will N bodies fit, and how long will the O(N^2) set-up take: checked before anything is
allocated. The estimate is `core.work`'s (shared with `nbsymple paper` and the API)."""
import sys
import time

import numpy as np

from ..core.diagnostics import potential_energy
from ..core.work import duration, memory_available, memory_needed, memory_problem  # noqa: F401 - this module's API

__all__ = ["memory_available", "memory_needed", "memory_problem", "warn_if_slow"]


def warn_if_slow(n: int):
    """Before the initial conditions' O(N^2) potential energy (which cannot report progress),
    say how long it will take when that is more than a few seconds."""
    if n < 20000:
        return
    probe = 2048
    x = np.random.default_rng(0).random((probe, 3))
    start = time.perf_counter()
    potential_energy(x, np.full(probe, 1.0 / probe), 0.01)
    seconds = (time.perf_counter() - start) * (n / probe) ** 2
    print(f"nbsymple run: N = {n}: the initial conditions' O(N^2) potential energy takes about "
          f"{duration(seconds)} here, the initial energy diagnostics as long again", file=sys.stderr, flush=True)
