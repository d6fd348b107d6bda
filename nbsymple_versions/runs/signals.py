"""SIGINT and SIGTERM during a checkpointed run: finish the step under way, then stop."""
import signal
import threading


class StopSignals:
    """SIGINT and SIGTERM set `signum` (the run stops after the step under way); a second one
    stops at once. Installed only in the main thread."""

    def __init__(self):
        self.signum, self.previous = None, {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, frame):
        if self.signum is not None:
            raise KeyboardInterrupt
        self.signum = signum

    def __exit__(self, *exc):
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)


class NoSignals:
    """No handlers: a run without a checkpoint stops at once on SIGINT (status 130)."""

    signum = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass
