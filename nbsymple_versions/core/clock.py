"""TaskClock: cumulative wall time of the paper's four tasks (Fig. 1, Tables 4-6) and a fifth.

pairwise (O(N^2) mutual forces), galactic (external field), integrate (drifts and kicks on
the host), transfer (host <-> device copies; zero on CPU versions), communicate (exchanges
between MPI ranks, version F: the wall time of each blocking collective on this rank, with no
barrier before it, so the wait for a slower rank counts here; zero on A-E). A timed region ends
with the task's `sync` (a device synchronise for GPU work), so asynchronous launches are
never under-counted. The clock records the device and thread count with its numbers.
"""
from contextlib import contextmanager
from time import perf_counter

from .checks import instance, whole_number
from .vocabulary import TASKS


class TaskClock:
    def __init__(self, device: str = "cpu", threads: int = 1):
        self.device = instance(device, str, "device", "a string naming where the clock runs")
        self.threads = whole_number(threads, "threads", 1)
        self.reset()

    def reset(self):
        self.seconds = dict.fromkeys(TASKS, 0.0)
        self.calls = dict.fromkeys(TASKS, 0)

    @contextmanager
    def task(self, name: str, sync=None):
        """Time the body as task `name` (one of TASKS); `sync()` runs before the clock stops."""
        if name not in self.seconds:
            raise ValueError(f"unknown task {name!r}; choose one of {', '.join(TASKS)}")
        start = perf_counter()
        try:
            yield
        finally:
            if sync is not None:
                sync()
            self.seconds[name] += perf_counter() - start
            self.calls[name] += 1

    @property
    def total(self) -> float:
        return sum(self.seconds.values())

    def shares(self) -> dict:
        """Percentage of the timed total spent in each task."""
        total = self.total
        return {k: (100.0 * s / total if total > 0 else 0.0) for k, s in self.seconds.items()}

    def as_dict(self) -> dict:
        return {"task_seconds": dict(self.seconds), "task_calls": dict(self.calls),
                "device": self.device, "threads": self.threads}
