"""SIGINT, SIGTERM, SIGHUP (a closed terminal, a dropped ssh session), SIGXCPU (a CPU-time
limit's soft limit: `ulimit -St`, a batch system's; repeated by the kernel every CPU second, a
repeat is not a second signal) and SIGUSR1 or SIGUSR2 (a batch system's warning that the job's
time is nearly up: Slurm's `--signal=USR1@SECONDS`) and SIGALRM (`timeout -s ALRM`, a scheduler's end
of time) during a run: during a
checkpointed run (or any run across MPI ranks, which must stop after the same step) finish the
step under way, then stop; during the set-up, or a run without a checkpoint, stop at once. A
signal the process was started ignoring (SIGHUP under `nohup`, SIGINT in a background job of a
script) stays ignored, as `entry.command` leaves it."""
import signal
import threading
import time

from .. import entry
from ..entry import HELD as STOPPING, repeated     # SIGINT, SIGTERM, SIGHUP, SIGXCPU, SIGUSR1, SIGUSR2, SIGALRM

SPEAK_DELAY = 1.0       # seconds a rank other than 0 waits before it says why the job stopped


def _answered() -> list[int]:
    """The signals of `STOPPING` this process was not started ignoring, SIGALRM only where no code of this
    process set its own handler for it (its own timeout around a run in Python, a test's hang guard: taken
    over, a hang while a step writes was waited out for ever, a review)."""
    return [sig for sig in STOPPING if signal.getsignal(sig) is not signal.SIG_IGN and
            (sig != signal.SIGALRM or signal.getsignal(sig) in (signal.SIG_DFL, entry.raise_terminated, _hold))]


def wait_for_rank_0(rank: int):
    """Before a rank of an MPI job says why a signal it caught ends the job: rank 0 goes on at
    once, any other waits SPEAK_DELAY first. Where the signal reached every rank (Ctrl-C in a
    terminal, mpiexec forwarding it) rank 0 speaks and ends the job, this rank with it, before
    this rank speaks: one sentence; where it reached this rank alone, this rank says it."""
    if rank != 0:
        time.sleep(SPEAK_DELAY)


_HELD = []              # signals `hold_signals` recorded before a `StopSignals` took over


def hold_signals():
    """From the first line of `nbsymple run` under an MPI launcher: the signals of STOPPING are
    recorded, not acted on, until the run's `StopSignals` takes them over (and the first one with
    them). A rank that ended alone before the ranks are joined would leave the others waiting
    in `MPI_Init` for ever. Main thread only."""
    if threading.current_thread() is threading.main_thread():
        for sig in _answered():
            signal.signal(sig, _hold)


def _hold(signum, frame):
    _HELD.append(signum)


class StopNow(KeyboardInterrupt):
    """A signal during the set-up (before the first step), when stopping at once loses nothing."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


class StopSignals:
    """A signal of STOPPING sets `signum` (the run stops after the step under way); a second one
    stops at once (`at_once(signum)`, by default raising `StopNow`), and so does the first while
    `immediate` (the driver's set-up, and a run that cannot stop after a step: not `catching`).
    Installed only in the main thread."""

    def __init__(self, at_once=None, immediate: bool = False):
        self.catching = True
        self.signum, self.previous, self.immediate = None, {}, immediate
        self.done = None                 # what the run finished, once its steps are: said if a signal stops its report
        self.at_once = at_once or self._raise

    @staticmethod
    def _raise(signum):
        raise StopNow(signum)

    def __enter__(self):
        if _HELD:                        # caught while `hold_signals` held them
            self.signum = _HELD[0]
        if threading.current_thread() is threading.main_thread():
            for sig in _answered():
                self.previous[sig] = signal.signal(sig, self._handle)
        return self

    def reclaim(self):
        """This run's handlers again, after a library took a signal over: under MPICH, UCX takes
        SIGHUP for its debug mode in `MPI_Init` (behind Python's back: `signal.getsignal` does
        not see it), and a SIGHUP to a rank then stopped nothing."""
        for sig in self.previous:
            signal.signal(sig, self._handle)

    def _handle(self, signum, frame):
        if repeated(signum, [self.signum]):
            return
        at_once = self.immediate or self.signum is not None
        self.signum = signum             # before `at_once` raises: a repeat while it unwinds is known as one
        if at_once:
            self.at_once(signum)

    def __exit__(self, *exc):
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)
