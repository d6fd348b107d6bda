"""One compile per machine: the exclusive lock a process holds while it compiles something that
it keeps on disk for the next (a CPU kernel in numba's cache, `kernel_cache`; a count's machine
code, `instruments.code_cache`). Another process that needs the same thing at the same time (an
xdist worker, an MPI rank, an asv benchmark process, the gate's other tree) waits, then loads
what the first kept instead of compiling it beside it. A lock that cannot be had never stops the
work: the caller compiles all the same. No numba here: the command line imports it at its start.
"""
import fcntl
import os
import stat
import sys
import threading
import time

COMPILE_WAIT_S = 600    # the longest wait for another process's compile of a kernel (a guard: a stopped one)
SAY_AFTER_S = 60        # a wait this long is said on stderr (a kernel compiles in seconds)
LOCK_POLL_S = 0.02


def held_waiting(fd: int, path, wait_s: float, say_after_s: float, what: str) -> bool:
    """Whether flock's exclusive lock on `fd` (the lock file `path`) is had: waited for while
    another process holds it (it compiles the same `what`) for up to `wait_s`, a guard against one
    that has stopped, the wait said once on stderr after `say_after_s`. False where it is not had
    in time, or the file system takes no locks."""
    start, said = time.monotonic(), False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            waited = time.monotonic() - start
            if waited > wait_s:
                return False
            if waited > say_after_s and not said:      # (a hunt: 15 min without a word, the other stopped)
                said = True
                print(f"nbsymple: waiting for another process that compiles the same {what} (lock "
                      f"{os.fspath(path)!r}); after {wait_s / 60:g} min it is compiled here",
                      file=sys.stderr, flush=True)
            time.sleep(LOCK_POLL_S)
        except OSError:                  # a file system that takes no locks
            return False


_compiling = threading.local()          # whether this thread holds a kernel's lock (`compiled_once`)


def compiled_once(lock: str, compile_here, sig):
    """`compile_here(sig)` (numba's compile: a load from the cache, else a compile that keeps
    its code there) holding the exclusive lock `lock` of the kernel, so that a process beside
    this one that needs the same kernel waits and loads it. Where the lock cannot be had (no
    regular file there, a file system without locks, COMPILE_WAIT_S passed) it compiles all the
    same; a compile inside this thread's own takes no second lock."""
    if getattr(_compiling, "held", False):
        return compile_here(sig)
    fd = _exclusive(lock, COMPILE_WAIT_S)
    _compiling.held = True
    try:
        return compile_here(sig)
    finally:
        _compiling.held = False
        if fd is not None:
            os.close(fd)                 # the lock goes with it (and with the process, however it ends)


def _exclusive(path: str, wait_s: float) -> int | None:
    """A descriptor of `path` (made where absent) holding flock's exclusive lock (`held_waiting`);
    None where there is no regular file to lock (a folder, a FIFO, a symbolic link: never
    followed, never blocked on) or the lock cannot be had."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)
    except OSError:
        return None
    if stat.S_ISREG(os.fstat(fd).st_mode) and held_waiting(fd, path, wait_s, SAY_AFTER_S, "kernel"):
        return fd
    os.close(fd)
    return None
