"""One progress line on stderr for long work: redrawn in place on a terminal, cut to its width
(a line that wraps cannot be redrawn: each redraw would leave one behind), one line per 10 %
otherwise and on a terminal that cannot redraw (TERM=dumb), so logs of batch jobs show it too,
without flooding them. Runs show it where `launcher_on_terminal` (a person watches, through
mpiexec too) or when asked (`--progress`)."""
import math
import os
import sys
import time

from ..core.ranks import RANK_VARIABLES


def _stderr_of(pid) -> str:
    try:
        return os.readlink(f"/proc/{pid}/fd/2")
    except OSError:
        return ""


def _parent(pid) -> int:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def launcher_on_terminal() -> bool:
    """True where a person watches: stderr is a terminal, or, in a rank an MPI launcher started
    (`mpiexec`, whose ranks write into pipes it reads; its rank variables set), the first process
    up the line whose stderr is not a pipe, the launcher itself, writes to a terminal (Linux's
    /proc; False without)."""
    stream = sys.stderr
    if hasattr(stream, "isatty") and stream.isatty():
        return True
    if not any(k in os.environ for k in RANK_VARIABLES):
        return False
    pid = os.getpid()
    for _ in range(8):
        target = _stderr_of(pid)
        if not target.startswith(("pipe:", "socket:")):
            return target.startswith(("/dev/pts/", "/dev/tty"))
        pid = _parent(pid)
        if pid <= 1:
            return False
    return False


def _columns(stream) -> int:
    """The width of the terminal `stream` writes to, in columns; 80 where it says none."""
    try:
        return os.get_terminal_size(stream.fileno()).columns or 80
    except (AttributeError, OSError, ValueError):
        return 80


class Progress:
    """`update(done)` after each unit of work (steps) out of `total`."""

    def __init__(self, label: str, total: int, stream=None, enabled: bool = True, unit: str = "step"):
        self.label, self.total, self.unit = label, max(int(total), 1), unit
        stream = stream or sys.stderr
        self.stream, self.enabled = getattr(stream, "unescaped", stream), enabled   # its own \r redraws
        self.start = time.perf_counter()
        self.last = -1.0
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty() and os.environ.get("TERM") != "dumb"
        self.done = 0

    def __call__(self, done: int):
        self.update(done)

    def update(self, done: int):
        self.done = done
        if not self.enabled:
            return
        now = time.perf_counter()
        frac = done / self.total
        if self.tty:
            if now - self.last < 0.5 and done < self.total:
                return
        elif int(frac * 10) == int(self.last) and done < self.total:
            return
        self.last = now if self.tty else int(frac * 10)
        elapsed = now - self.start
        eta = elapsed / frac - elapsed if frac > 0 else math.nan
        left = f", ~{eta:.0f} s left" if done < self.total and math.isfinite(eta) else ""
        count = f"{done}/{self.total} ({100 * frac:3.0f} %)"
        forms = (f"{self.label}: {self.unit} {count}, {elapsed:6.1f} s elapsed{left}", f"{self.label}: {count}{left}",
                 f"{count}{left}")
        if not self.tty:
            self.stream.write(forms[0] + "\n")
        else:                               # the longest form that fits, short of the last column
            width = _columns(self.stream) - 1
            self.stream.write("\r" + next((f for f in forms if len(f) <= width), forms[-1][:width]) + "\033[K")
        if self.tty and done >= self.total:
            self.stream.write("\n")
        self.stream.flush()
