"""The ranks of version F: mpi4py's COMM_WORLD, or a single rank where no MPI launcher ran us.

Nothing here imports mpi4py at import time (importing `mpi4py.MPI` initialises MPI): `world()`
does, once. Outside `mpiexec`, F runs as one rank, through MPI's singleton start when mpi4py
and an MPI library are installed and without MPI at all when they are not.

Failure handling: with more than one rank, `world()` installs a `sys.excepthook` that prints
the exception with its rank and calls `MPI_Abort`, so one rank's error ends the whole job with
a non-zero status instead of leaving the other ranks blocked in a collective. Checks whose
outcome may differ between ranks (is the node version available here?) go through `agree`, so
that every rank fails together with the failing rank's reason.
"""
import fcntl
from importlib.util import find_spec
import os
import signal
import stat
import struct
import sys
import termios
import time
import traceback

import numpy as np

from ..core.ranks import OneRank

# environment variables that MPI launchers (MPICH/Hydra, Open MPI, PMIx) set in each rank
LAUNCHER_VARIABLES = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK")
STOP_GRACE = 0.05   # seconds rank 0 waits, its sentence read (`_flush`), before a stopped job's MPI_Abort
READ_LIMIT_S = 2.0   # the longest a rank waits for the launcher to read its last output (`_flush`)
JOIN_LIMIT_S = 60    # the longest a refusing rank waits in MPI_Init for the others (`refuse_the_job`)
SHARED_MEMORY = "/dev/shm/mpich_shm_"   # MPICH's shared segment of a node's ranks (Linux): no other file is touched
INSTALL = "pip install 'nbsymple-versions[mpi]' (mpi4py and MPICH)"


def launched() -> bool:
    """True when an MPI launcher (mpiexec, mpirun, srun with PMI) started this process."""
    return any(v in os.environ for v in LAUNCHER_VARIABLES)


def have_mpi4py() -> bool:
    """mpi4py is installed (and not blocked); it is not imported here."""
    if "mpi4py" in sys.modules:
        return sys.modules["mpi4py"] is not None
    try:
        return find_spec("mpi4py") is not None
    except (ImportError, ValueError):
        return False


def availability() -> tuple[bool, str]:
    """(True, '') where F can run: mpi4py is installed, or no launcher started this process
    (then F is one rank without MPI). Cheap: MPI is not initialised here."""
    if not have_mpi4py() and launched():
        return False, f"this process was started by an MPI launcher but mpi4py is not installed: {INSTALL}"
    return True, ""


def bounds(n: int, size: int) -> list[int]:
    """Slice boundaries: rank r owns bodies [b[r], b[r+1]); any n and size, slices differ by
    at most one body (n // size or n // size + 1), rank order = body order."""
    return [n * r // size for r in range(size + 1)]


class World(OneRank):
    """This rank's view of the job: rank, size, ranks on this node, and the collectives of
    `core.ranks.OneRank` over MPI. `comm` is an mpi4py communicator, or None for one rank
    without MPI (then every collective is OneRank's)."""

    def __init__(self, comm=None):
        self.comm = comm
        if comm is None:
            return
        from mpi4py import MPI
        self.MPI = MPI
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=self.rank)
        self.local_rank, self.local_size = node.Get_rank(), node.Get_size()
        node.Free()
        self.library = MPI.Get_library_version().splitlines()[0].strip()
        self._layouts = {}

    def slice(self, n: int) -> tuple[int, int]:
        """[start, stop) of the bodies this rank owns."""
        b = bounds(n, self.size)
        return b[self.rank], b[self.rank + 1]

    def _layout(self, n):
        """Counts and displacements of every rank's slice, and an MPI datatype for one column
        (x_i, y_i, z_i) of a (3, n) float64 array, resized to 8 bytes so that displacements
        count bodies: the exchange then works in place on the (3, n) rows, no packing."""
        if n not in self._layouts:
            b = bounds(n, self.size)
            counts = [b[r + 1] - b[r] for r in range(self.size)]
            column = self.MPI.DOUBLE.Create_vector(3, 1, n).Create_resized(0, 8)
            column.Commit()
            self._layouts[n] = (counts, b[:-1], column)
        return self._layouts[n]

    def exchange(self, a: np.ndarray):
        """Every rank's slice of the (3, N) float64 array `a` to every rank, in place
        (`MPI_Allgatherv` with MPI_IN_PLACE): afterwards all ranks hold the same array."""
        if self.size == 1:
            return
        if a.dtype != np.float64 or not a.flags.c_contiguous or a.ndim != 2 or a.shape[0] != 3:
            raise ValueError(f"exchange needs a C-contiguous (3, N) float64 array, got {a.dtype} {a.shape}")
        counts, displs, column = self._layout(a.shape[1])
        self.comm.Allgatherv(self.MPI.IN_PLACE, [a, (counts, displs), column])

    def sum(self, values) -> np.ndarray:
        """Element-wise sum over ranks (`MPI_Allreduce`) of a float64 array; every rank gets it."""
        if self.size == 1:
            return super().sum(values)
        values = np.ascontiguousarray(values, dtype=np.float64)
        out = np.empty_like(values)
        self.comm.Allreduce(values, out, op=self.MPI.SUM)
        return out

    def broadcast(self, a: np.ndarray):
        """Rank 0's array to every rank, in place."""
        if self.size > 1:
            self.comm.Bcast(a, root=0)

    def broadcast_object(self, obj):
        return obj if self.size == 1 else self.comm.bcast(obj, root=0)

    def agree(self, ok: bool, reason: str = "") -> tuple[bool, str]:
        """(all ranks ok, the first failing rank's reason, with its rank): the same answer on
        every rank, so that every rank raises (or goes on) together."""
        if self.size == 1:
            return super().agree(ok, reason)
        answers = self.comm.allgather((bool(ok), reason))
        for r, (good, why) in enumerate(answers):
            if not good:
                return False, f"rank {r}: {why}"
        return True, ""

    def first(self, value):
        if self.size == 1:
            return value
        return next((v for v in self.comm.allgather(value) if v is not None), None)

    def max(self, value: float) -> float:
        return value if self.size == 1 else max(self.comm.allgather(value))

    def abort(self, status: int = 1):
        """End the whole job at once with `status` (`MPI_Abort`), this rank's output flushed first,
        its node's shared memory released and MPICH's own line about the abort left out (what
        stopped the job is said already)."""
        _flush()
        release_shared_memory()
        if self.comm is not None:
            os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
            self.comm.Abort(status)
        os._exit(status)


def release_shared_memory():
    """Unlink MPICH's shared-memory files this process maps that still have a name: its segment
    for the ranks of one node (/dev/shm/mpich_shm_*), which MPI_Finalize unlinks and MPI_Abort
    leaves behind, 2 MB of the machine's memory for every stopped job until a reboot. The pages
    stay mapped until the ranks end; a rank that comes to it after another rank of its node
    finds the name gone. Before a rank waits for the abort that ends it, and in `abort`."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {fields[5] for fields in map(str.split, maps) if len(fields) == 6}
    except OSError:                      # no /proc (not Linux): nothing to find
        return
    for path in paths:
        if path.startswith(SHARED_MEMORY):
            try:
                os.unlink(path)
            except OSError:
                pass


def _flush():
    """Flush this rank's stdout and stderr before it ends the job, and wait (at most READ_LIMIT_S)
    until the launcher has read them: MPI_Abort ends mpiexec's forwarding with the job, and what
    was still in a rank's pipe was lost (the suite beside a busy core: a refusing rank's only
    sentence; 500 lines written just before a bare abort arrived whole in 12 of 20 jobs). A
    stream that cannot take it (closed, full, a reader gone: `entry.OutputFailed` from the
    command's guarded stdout) is passed over, so that the job still ends (a review: OutputFailed
    escaped the abort)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:   # noqa: BLE001 - whatever a stream that cannot be written raises
            pass
    deadline = time.monotonic() + READ_LIMIT_S
    for fd in (1, 2):
        while _unread(fd) and time.monotonic() < deadline:
            time.sleep(0.001)


def _unread(fd: int) -> int:
    """What was written to `fd` and its reader has not read yet: a pipe's bytes (FIONREAD), or the
    memory a socket's sent and unread data hold (TIOCOUTQ); 0 for any other file, a closed
    descriptor or one that cannot tell."""
    try:
        mode = os.fstat(fd).st_mode
        request = termios.FIONREAD if stat.S_ISFIFO(mode) else termios.TIOCOUTQ if stat.S_ISSOCK(mode) else None
        return 0 if request is None else struct.unpack("i", fcntl.ioctl(fd, request, b"\0" * 4))[0]
    except OSError:
        return 0


_WORLD = None


def world() -> World:
    """The job's World, created on first call (MPI initialised here, or one rank without it)."""
    global _WORLD
    if _WORLD is None:
        ok, reason = availability()
        if not ok:
            raise RuntimeError(reason)
        comm = None
        if have_mpi4py():
            try:
                from mpi4py import MPI
                comm = MPI.COMM_WORLD
            except (ImportError, RuntimeError) as e:   # mpi4py without a loadable MPI library
                if launched():
                    raise RuntimeError(f"mpi4py cannot load an MPI library ({e}): {INSTALL}") from None
        _WORLD = World(comm)
        if _WORLD.size > 1:
            _abort_on_uncaught_exceptions(_WORLD)
    return _WORLD


def end_stopped_job(status: int):
    """End a job of several ranks that stopped (a signal, a refusal: every rank stops together)
    at once with `status`, this rank's output flushed (nothing outside an MPI launcher). Left to
    the interpreter, the end takes a few tenths of a second (numba's threads, MPI_Finalize),
    long enough for a second Ctrl-C to reach mpiexec, which then kills the ranks itself and exits
    with 255 and its own error lines. Once the ranks are joined rank 0, which has said why,
    calls `MPI_Abort` a moment later (once mpiexec has read the sentence), the others wait for it
    (and abort themselves should it never come, after the longest the root may wait for the read);
    before (a refusal of the command line), each rank ends alone, never finalising MPI (the others
    would wait for it in `MPI_Init`)."""
    if _WORLD is not None and _WORLD.size > 1:
        _flush()
        release_shared_memory()          # on every node, before its ranks wait for the abort
        time.sleep(STOP_GRACE if _WORLD.is_root else READ_LIMIT_S + 40 * STOP_GRACE)   # the root's read included
        _WORLD.abort(status)
    if launched():
        _flush()
        os._exit(status)


def refuse_the_job(say, status: int):
    """End a job of several ranks that this rank refuses at its start, before MPI is up (its
    environment or its limits, which can differ between nodes): the ranks that passed would wait
    for it in `MPI_Init` for good (a hunt). It joins MPI and ends the job with `MPI_Abort`; rank 0
    at once, having said why (`say`, a callable), the others a moment later, saying why with their
    rank (`say`) unless rank 0's abort ended them first, as it does where every rank refuses."""
    from ..core.ranks import launcher_rank
    rank = launcher_rank()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)          # nothing to keep: a signal ends the wait
    signal.signal(signal.SIGALRM, signal.SIG_DFL)   # and a rank that refused before MPI too (a review:
    signal.alarm(JOIN_LIMIT_S)                      # this one waited in MPI_Init for good) is not waited for
    try:
        from mpi4py import MPI           # MPI_Init: the ranks that passed are waiting in theirs
    except Exception:   # noqa: BLE001 - no MPI to join: this rank ends alone, saying why (a review:
        if rank > 0:                     # it ended silent, where rank 0 had said its own reason)
            say()
        _flush()
        os._exit(status)
    signal.alarm(0)
    if rank > 0:
        time.sleep(40 * STOP_GRACE)
        say()
    _flush()
    release_shared_memory()
    os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
    MPI.COMM_WORLD.Abort(status)
    os._exit(status)


def _abort_on_uncaught_exceptions(w: World):
    """An exception that reaches the top of one rank prints with its rank and aborts the job."""
    previous = sys.excepthook

    def hook(kind, value, tb):
        if issubclass(kind, KeyboardInterrupt):
            previous(kind, value, tb)
        else:
            text = "".join(traceback.format_exception(kind, value, tb))
            sys.stderr.write(f"nbsymple: rank {w.rank} of {w.size} failed, aborting the job:\n{text}")
            sys.stderr.write(f"nbsymple: rank {w.rank}: {kind.__name__}: {value}\n")
        w.abort(1)                       # which waits for mpiexec to have read the message

    sys.excepthook = hook
