"""SIGINT and SIGTERM during a run: during a checkpointed run (or any run across MPI ranks,
which must stop after the same step) finish the step under way, then stop; during the set-up,
or a run without a checkpoint, stop at once."""
import signal
import threading


class StopNow(KeyboardInterrupt):
    """A signal during the set-up (before the first step), when stopping at once loses nothing."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


class StopSignals:
    """SIGINT and SIGTERM set `signum` (the run stops after the step under way); a second one
    stops at once (`at_once(signum)`, by default raising `StopNow`), and so does the first while
    `immediate` (the driver's set-up, and a run that cannot stop after a step: not `catching`).
    Installed only in the main thread."""

    def __init__(self, at_once=None, immediate: bool = False):
        self.catching = True
        self.signum, self.previous, self.immediate = None, {}, immediate
        self.at_once = at_once or self._raise

    @staticmethod
    def _raise(signum):
        raise StopNow(signum)

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, frame):
        if self.immediate or self.signum is not None:
            self.at_once(signum)
        self.signum = signum

    def __exit__(self, *exc):
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)
