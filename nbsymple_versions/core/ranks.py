"""The processes a run is spread over, and the few collectives the driver needs.

Versions A-E run in one process: `ONE_RANK`, whose collectives do nothing (an exchange leaves
the array as it is, a sum over ranks is the value itself). Version F's `mpi.comm.World` is the
same interface over MPI ranks; the driver (`Simulation`, `nbsymple run`) calls these hooks
everywhere, so one code path serves all six versions.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

# where MPI launchers (MPICH/Hydra and PMI, Open MPI, PMIx) put each process's rank, and the count
RANK_VARIABLES = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK")
SIZE_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE")


# the most digits a whole number in a variable may have: an int64's, as the C libraries that read them take
# (a hunt: 5000 digits passed to Python's int, which reads at most 4300, ended every command in its ValueError)
WHOLE_DIGITS = 18


def whole_value(text: str | None) -> int | None:
    """The whole number a variable's `text` holds, written in ASCII digits (a '+' before them and
    spaces around allowed, as C's atoi and the check of `environment` take them; at most
    WHOLE_DIGITS digits: an int64's), else None: the one reading of every such variable, so that
    '+2' and '02' are 2 wherever they are read (a hunt: NBSYMPLE_BENCH_THREADS=+2 named the
    machine '...-+2threads'). (`str.isdigit` also takes digits
    `int` cannot read, '²' or '①', and `int` reads at most 4300: a hunt, a traceback at every
    command's start from MPI_LOCALNRANKS='²' or a PMI_FD of 5000 digits.)"""
    text = (text or "").strip().removeprefix("+")
    return int(text) if text.isascii() and text.isdigit() and len(text.lstrip("0")) <= WHOLE_DIGITS else None


def launcher_present() -> bool:
    """True where an MPI launcher started this very process: Hydra's PMI descriptor open here
    (PMI_FD) or its port (PMI_PORT), or a PMIx server (PMIX_SERVER_URI*: Open MPI, Slurm). A
    process a rank started inherits the rank variables, not the descriptor (a hunt: a refusal
    there was silent, as if it were rank 1's). Reads the environment alone (no NumPy)."""
    if (fd := whole_value(os.environ.get("PMI_FD"))) is not None:
        try:
            os.fstat(fd)
            return True
        except (OSError, OverflowError):
            pass
    return "PMI_PORT" in os.environ or any(k.startswith("PMIX_SERVER_URI") for k in os.environ)


def launcher_rank() -> int:
    """The rank an MPI launcher gave this process, read from its environment before MPI is
    initialised (0 outside a launcher, or where the variable is not a number): a refusal made
    before the ranks are joined (a flag, a checkpoint that cannot be read) is printed by rank 0
    alone, as every later one is."""
    for name in RANK_VARIABLES if launcher_present() else ():
        if (rank := whole_value(os.environ.get(name))) is not None:
            return rank
    return 0


def launcher_size() -> int:
    """How many processes the MPI launcher that started this one started (1 outside a launcher,
    or where it does not say): more than one runs a command that is no job of ranks once each."""
    for name in SIZE_VARIABLES if launcher_present() else ():
        if (size := whole_value(os.environ.get(name))) is not None:
            return size
    return 1


def one_process_problem(what: str, resume: str | None = None) -> str | None:
    """The sentence refusing `what` (a command, a version), which runs in one process, under a
    launcher of more than one: each rank would run all of it, writing the same files. `resume`:
    the command that goes on with the checkpoint being resumed, whose version cannot change to F."""
    if (size := launcher_size()) <= 1:
        return None
    instead = (f": {resume} (a checkpoint goes on with its own version)" if resume else
               f" (version F runs the pipeline across ranks: mpiexec -n {size} nbsymple run --version F)")
    return (f"{what} runs in one process: under an MPI launcher of {size} ranks each would run all of it, the "
            f"same work {size} times over (into the same files); run it without mpiexec{instead}")


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
        import numpy as np               # (not at import: `entry` reads the launcher's variables first)
        return np.array(values, dtype=np.float64)

    def broadcast(self, a: np.ndarray):
        """Rank 0's array to every rank, in place."""

    def broadcast_object(self, obj):
        """Rank 0's picklable object, on every rank."""
        return obj

    def agree(self, ok: bool, reason: str = "") -> tuple[bool, str]:
        """(all ranks ok, the first failing rank's reason): the same answer on every rank."""
        return (True, "") if ok else (False, f"rank {self.rank}: {reason}")

    def first(self, value):
        """The value of the first rank (in rank order) whose `value` is not None, on every rank;
        None if none has one (the signal that stopped the job, whichever rank caught it)."""
        return value

    def max(self, value: float) -> float:
        """The largest of the ranks' `value`, on every rank."""
        return value

    def any(self, flag: bool) -> bool:
        """True on every rank if `flag` is true on any (a signal caught by one rank, say)."""
        return bool(self.sum([1.0 if flag else 0.0])[0])


ONE_RANK = OneRank()
