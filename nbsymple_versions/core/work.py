"""What a piece of work costs before it starts, and the work refused as impossible: one
estimate shared by `nbsymple run`, `check` and `profile`, `nbsymple paper`'s science runs and
the Python API (`make_cluster`), checked before anything is allocated or stepped.

- **Memory.** A run of N bodies needs `BYTES_PER_BODY` per body (state, scratch, kernel copies,
  initial conditions, diagnostics) plus `BYTES_FIXED`; the initial conditions alone
  `IC_BYTES_PER_BODY`. More than this process may still allocate (free memory, the cgroup's
  limit, the address-space limit) is refused: it would fail late, or not at all but swap.
- **Time.** A step of N bodies is N^2 pair interactions. No machine this suite runs on does
  more than `FASTEST_RATE` of them per second (an H200 is predicted at 1.05e12 in dp and 2.35e12
  in sp, measured at 1.85e12: docs/gpu.md) nor a step in less than `FASTEST_STEP` seconds, so
  steps x (N^2 / FASTEST_RATE + FASTEST_STEP) is the least time the work can take. Work whose
  least time is beyond the limit, `MAX_DAYS_VARIABLE` days (default `DEFAULT_MAX_DAYS`), is
  refused; the user raises the limit by setting it. A GPU version in numba's CUDA simulator
  (NUMBA_ENABLE_CUDASIM=1, each GPU thread a Python thread) does no more than `SIMULATOR_RATE`
  (`versions.simulated` says which runs are there).

Each refusal is a `WorkRefused` (a ValueError): one sentence stating the estimate and naming
the option or argument that asked for the work.
"""
import math
import os
from pathlib import Path
import resource
from typing import NamedTuple

BYTES_PER_BODY = 1000        # a run: state, scratch, kernel copies, initial conditions, diagnostics (~700 measured)
BYTES_FIXED = 400 << 20      # interpreter, numba, a chunk of the O(N^2) sums
IC_BYTES_PER_BODY = 160      # initial conditions: x, v (3, N) and m, the draws and the centre-of-mass terms
FASTEST_RATE = 1e13          # pair interactions per second: ten times an H200's predicted dp rate, four its sp rate
FASTEST_STEP = 1e-6          # seconds: the least a step costs in Python, whatever N
SIMULATOR_RATE = 1e6         # pair interactions per second in the CUDA simulator: ~1e5 measured (Zen 1), x 10
MAX_DAYS_VARIABLE = "NBSYMPLE_MAX_DAYS"
DEFAULT_MAX_DAYS = 30.0


class WorkRefused(ValueError):
    """Work that cannot be done here: one sentence with the estimate."""


def memory_needed(n: int, bytes_per_body: int = BYTES_PER_BODY) -> int:
    """Bytes a run of n bodies needs at its peak (initial conditions, diagnostics, stepping);
    with `bytes_per_body=IC_BYTES_PER_BODY`, its initial conditions alone."""
    return bytes_per_body * n + BYTES_FIXED + (72 * n if n > 1 << 21 else 0)


def memory_available() -> int | None:
    """Bytes this process may still allocate: the least of the free memory, the cgroup's
    limit, the address-space limit and the data limit, or None where none of them can be read."""
    return min((limit.left for limit in _memory_limits()), default=None)


OTHER_PROGRAMS = "close other programs"      # what frees the machine's memory


class _Limit(NamedTuple):
    left: int           # bytes this process may still allocate under it
    words: str          # what is left, in words
    limit: str          # the limit met, in words (a MemoryError)
    remedy: str         # what raises it; "" for the free memory, where N is the thing to change


def _memory_limits() -> list[_Limit]:
    """Each limit on this process's memory that can be read: the free memory, the cgroup's
    limit, the address-space limit (`ulimit -v`), the data limit (`ulimit -d`)."""
    found = []
    try:
        with open("/proc/meminfo") as f:
            free = next((int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:")), None)
        if free is not None:
            found.append(_Limit(free, f"this machine has {size(free)} available",
                                f"the machine's free memory ran out ({size(free)} free now)", ""))
    except OSError:
        pass
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit.isdigit():
            left = int(limit) - int(Path("/sys/fs/cgroup/memory.current").read_text())
            found.append(_Limit(left, f"this process's cgroup leaves {size(max(left, 0))} (its memory.max)",
                                f"its cgroup's limit of {size(int(limit))} (memory.max) was reached",
                                "raise that limit"))
    except (OSError, ValueError):
        pass
    for which, option, counted, verb, what in ((resource.RLIMIT_AS, "-v", "VmSize:", "map", "address-space"),
                                               (resource.RLIMIT_DATA, "-d", "VmData:", "allocate", "data")):
        soft, _ = resource.getrlimit(which)
        if soft != resource.RLIM_INFINITY:
            try:
                with open("/proc/self/status") as f:
                    used = next(int(line.split()[1]) * 1024 for line in f if line.startswith(counted))
            except (OSError, StopIteration):
                used = 0
            ulimit = f"ulimit {option} {soft // 1024}"
            found.append(_Limit(soft - used, f"this process may {verb} {size(max(soft - used, 0))} more ({ulimit})",
                                f"its {what} limit of {size(soft)} ({ulimit}) was reached", "raise that limit"))
    return found


def memory_problem(n: int, option: str = "--n", bytes_per_body: int = BYTES_PER_BODY) -> str | None:
    """A sentence refusing n bodies (asked for by `option`) if they cannot fit in memory, else
    None. It names the limit that binds, and asks for a smaller N only where the fewest bodies
    would fit (BYTES_FIXED, whatever N, may not)."""
    need, limits = memory_needed(n, bytes_per_body), _memory_limits()
    if not limits or need <= (least := min(limits)).left:
        return None
    if memory_needed(2, bytes_per_body) > least.left:
        return (f"N = {bodies(n)} needs about {size(need)} of memory ({size(BYTES_FIXED)} of it whatever N: the "
                f"interpreter and numba) and {least.words}; {least.remedy or OTHER_PROGRAMS} and run the command again")
    return (f"N = {bodies(n)} needs about {size(need)} of memory and {least.words}; "
            f"{least.remedy + ' or ' if least.remedy else ''}choose a smaller {option}")


def out_of_memory() -> str:
    """What a MemoryError met after the checks ran into, and what raises it (`entry.command`):
    the limit with the least left now."""
    if not (limits := _memory_limits()):
        return f"{OTHER_PROGRAMS} and run the command again"
    least = min(limits)
    return f"{least.limit}; {least.remedy or OTHER_PROGRAMS} and run the command again"


def check_memory(n: int, option: str = "--n", bytes_per_body: int = BYTES_PER_BODY):
    """WorkRefused where n bodies cannot fit in memory (`memory_problem`)."""
    if (problem := memory_problem(n, option, bytes_per_body)) is not None:
        raise WorkRefused(problem)


def max_days() -> float:
    """The limit on the least time of the work, in days: `NBSYMPLE_MAX_DAYS` (checked at start-up
    by `environment`), else `DEFAULT_MAX_DAYS`."""
    text = os.environ.get(MAX_DAYS_VARIABLE, "")
    try:
        days = float(text)
    except ValueError:
        return DEFAULT_MAX_DAYS
    return days if days > 0 and not math.isnan(days) else DEFAULT_MAX_DAYS


def least_seconds(n: int, steps, simulated: bool = False) -> float:
    """The least time `steps` steps of n bodies take on any machine (see the module's docstring),
    or in the CUDA simulator (`simulated`)."""
    try:
        return float(steps) * (float(n) ** 2 / (SIMULATOR_RATE if simulated else FASTEST_RATE) + FASTEST_STEP)
    except OverflowError:                # more steps than float64 holds
        return math.inf


def check_time(n: int, steps, asked: str, option: str, simulated: bool = False):
    """WorkRefused where `steps` steps of n bodies (`asked`: what asked for them, in words) cannot
    end within the limit even on the fastest machine, or in the CUDA simulator (`simulated`);
    `option` is what to change."""
    seconds, limit = least_seconds(n, steps, simulated), max_days() * 86400.0
    if seconds > limit:
        rate = (f"{SIMULATOR_RATE:.0e} pair interactions per second, more than numba's CUDA simulator "
                f"(NUMBA_ENABLE_CUDASIM=1) does" if simulated else f"{FASTEST_RATE:.0e} pair interactions per second")
        raise WorkRefused(f"{asked}: {count(steps)} steps of N = {bodies(n)}, at least {duration(seconds)} "
                          f"even at {rate}, "
                          f"beyond the limit of {duration(limit)} (set {MAX_DAYS_VARIABLE}, in days, to raise it); "
                          f"choose {option}")


def bodies(n: int) -> str:
    """N in words: as given, or in powers of ten beyond 18 digits (an N of 400 digits)."""
    return str(n) if n < 10**18 else count(n)


def count(k: int) -> str:
    """A count in words: 1200, 9.36e+301."""
    if k < 10**6:
        return str(k)
    try:
        return f"{float(k):.3g}"
    except OverflowError:
        return "more than 1.8e+308"


def size(b: float) -> str:
    """Bytes in words: 1.2 GB."""
    try:
        b = float(b)
    except OverflowError:                # more bytes than float64 holds
        return "1.8e+308 B or more"
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if b < 1000 or unit == "PB":
            return f"{b:.3g} {unit}"
        b /= 1000


def duration(s: float) -> str:
    """Seconds in words: 40 s, 12 minutes, 3 days, 9.5e+295 years."""
    for unit, length in (("years", 3.15e7), ("days", 86400), ("hours", 3600), ("minutes", 60)):
        if s >= 2 * length:
            value = s / length
            return "forever" if math.isinf(value) else f"{value:.3g} {unit}" if value >= 1e4 else f"{value:.0f} {unit}"
    return f"{s:.0f} s" if s >= 10 else f"{s:.2g} s"        # a limit of 0.0864 s is no "0 s"
