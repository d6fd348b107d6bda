"""The processes a run is spread over, and the few collectives the driver needs.

Versions A-E run in one process: `ONE_RANK`, whose collectives do nothing (an exchange leaves
the array as it is, a sum over ranks is the value itself). Version F's `mpi.comm.World` is the
same interface over MPI ranks; the driver (`Simulation`, `nbsymple run`) calls these hooks
everywhere, so one code path serves all six versions.
"""
import numpy as np


class OneRank:
    """Rank 0 of 1: the single process of versions A-E (and of F without mpiexec)."""

    rank, size, local_rank, local_size = 0, 1, 0, 1
    library = "no MPI (one rank)"

    @property
    def is_root(self) -> bool:
        """The rank that prints and writes files."""
        return self.rank == 0

    def slice(self, n: int) -> tuple[int, int]:
        """[start, stop) of the bodies this rank owns: all of them."""
        return 0, n

    def exchange(self, a: np.ndarray):
        """Every rank's slice of the (3, N) array `a` to every rank, in place: nothing to send."""

    def sum(self, values) -> np.ndarray:
        """Element-wise sum over ranks of a float64 array (a copy, on every rank)."""
        return np.array(values, dtype=np.float64)

    def broadcast(self, a: np.ndarray):
        """Rank 0's array to every rank, in place."""

    def broadcast_object(self, obj):
        """Rank 0's picklable object, on every rank."""
        return obj

    def agree(self, ok: bool, reason: str = "") -> tuple[bool, str]:
        """(all ranks ok, the first failing rank's reason): the same answer on every rank."""
        return (True, "") if ok else (False, f"rank {self.rank}: {reason}")

    def any(self, flag: bool) -> bool:
        """True on every rank if `flag` is true on any (a signal caught by one rank, say)."""
        return bool(self.sum([1.0 if flag else 0.0])[0])


ONE_RANK = OneRank()
