"""`python tests/write_faults.py WHERE NAME K ERRNO ARGS...`: `nbsymple ARGS` on a machine whose
disk fails it from the K-th write (1-based) of a file whose name holds NAME on:

- WHERE = `fsync`: the K-th and every later flush to disk fails with ERRNO (ENOSPC: the disk
  filled up);
- WHERE = `create`: the K-th and every later creation of the file's temporary fails with ERRNO
  (EROFS or EACCES: its folder was made read-only; a test running as root cannot chmod one);
- WHERE = `pause` (ERRNO `-`): the K-th creation of the file's temporary waits until the process
  is killed, so that the run stands still with its (K-1)-th write whole on disk: a kill after a
  checkpoint at a known step, with no race against the run.

Every atomic write (`runs.snapshots.write_atomically`: checkpoints, snapshots, the run record)
creates a temporary with `tempfile.mkstemp` and flushes it with `os.fsync`; other writes are
left alone. Exits with nbsymple's status."""
import errno
import os
import signal
import sys
import tempfile


def _failing(real, where: str, name: str, first: int, code: int, describe):
    seen = [0]

    def wrapper(*args, **kwargs):
        if name in describe(*args, **kwargs):
            seen[0] += 1
            if seen[0] >= first:
                raise OSError(code, os.strerror(code))
        return real(*args, **kwargs)
    return wrapper


def _waiting(real, name: str, first: int):
    seen = [0]

    def wrapper(*args, prefix=None, **kwargs):       # None: mkstemp's own default
        if name in (prefix or ""):
            seen[0] += 1
            while seen[0] >= first:
                signal.pause()           # until a signal ends the process (SIGKILL, SIGTERM)
        return real(*args, prefix=prefix, **kwargs)
    return wrapper


def _fd_name(fd, *_):
    try:
        return os.path.basename(os.readlink(f"/proc/self/fd/{fd}")) if os.path.isfile(f"/proc/self/fd/{fd}") else ""
    except OSError:
        return ""


def main(argv) -> int:
    where, name, first, args = argv[0], argv[1], int(argv[2]), argv[4:]
    if where == "pause":
        tempfile.mkstemp = _waiting(tempfile.mkstemp, name, first)
    elif where == "fsync":
        os.fsync = _failing(os.fsync, where, name, first, getattr(errno, argv[3]), _fd_name)
    else:
        tempfile.mkstemp = _failing(tempfile.mkstemp, where, name, first, getattr(errno, argv[3]),
                                    lambda *a, prefix="", **k: prefix or "")
    from nbsymple_versions.cli import main as nbsymple
    return nbsymple(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
