"""Will N bodies fit, and how long will the O(N^2) set-up take: checked before anything is
allocated."""
from pathlib import Path
import resource
import sys
import time

import numpy as np

from ..core.diagnostics import potential_energy

BYTES_PER_BODY = 1000        # state, scratch, kernel copies, initial conditions, diagnostics (~700 measured)
BYTES_FIXED = 400 << 20      # interpreter, numba, a chunk of the O(N^2) sums


def memory_needed(n: int) -> int:
    """Bytes a run of n bodies needs at its peak (initial conditions, diagnostics, stepping)."""
    return BYTES_PER_BODY * n + BYTES_FIXED + (72 * n if n > 1 << 21 else 0)


def memory_available() -> int | None:
    """Bytes this process may still allocate: the least of the free memory, the cgroup's
    limit and the address-space limit, or None where none of them can be read."""
    found = []
    try:
        with open("/proc/meminfo") as f:
            found += [int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:")]
    except OSError:
        pass
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit.isdigit():
            found.append(int(limit) - int(Path("/sys/fs/cgroup/memory.current").read_text()))
    except (OSError, ValueError):
        pass
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        try:
            with open("/proc/self/status") as f:
                used = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
        except (OSError, StopIteration):
            used = 0
        found.append(soft - used)
    return min(found) if found else None


def memory_problem(n: int) -> str | None:
    """A sentence refusing n bodies if they cannot fit in memory, else None."""
    need, have = memory_needed(n), memory_available()
    if have is not None and need > have:
        return (f"N = {n} needs about {_bytes(need)} of memory and this machine has {_bytes(max(have, 0))} "
                f"available; choose a smaller --n")
    return None


def _bytes(b: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if b < 1000 or unit == "PB":
            return f"{b:.3g} {unit}"
        b /= 1000


def _duration(s: float) -> str:
    for unit, size in (("years", 3.15e7), ("days", 86400), ("hours", 3600), ("minutes", 60)):
        if s >= 2 * size:
            return f"{s / size:.0f} {unit}"
    return f"{s:.0f} s"


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
          f"{_duration(seconds)} here, the initial energy diagnostics as long again", file=sys.stderr, flush=True)
