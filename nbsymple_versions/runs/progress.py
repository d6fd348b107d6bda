"""One progress line on stderr for long work: redrawn in place on a terminal, one line per
10 % otherwise (so logs of batch jobs show it too, without flooding them)."""
import math
import sys
import time


class Progress:
    """`update(done)` after each unit of work (steps) out of `total`."""

    def __init__(self, label: str, total: int, stream=None, enabled: bool = True, unit: str = "step"):
        self.label, self.total, self.unit = label, max(int(total), 1), unit
        self.stream, self.enabled = stream or sys.stderr, enabled
        self.start = time.perf_counter()
        self.last = -1.0
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
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
        msg = (f"{self.label}: {self.unit} {done}/{self.total} ({100 * frac:3.0f} %), {elapsed:6.1f} s elapsed"
               + (f", ~{eta:.0f} s left" if done < self.total and math.isfinite(eta) else ""))
        self.stream.write(("\r" + msg + "\033[K") if self.tty else msg + "\n")
        if self.tty and done >= self.total:
            self.stream.write("\n")
        self.stream.flush()
