"""Exclusive locks on the paths a run writes: its snapshot folder and its checkpoint.

`fcntl.flock` on a small lock file (`DIR/.lock` for a folder, `.NAME.lock` beside a file),
held for the life of the run and released however the process ends, `kill -9` included. The
file holds the holder's process id, so a refusal can name it. `nbsymple paper`'s science runs
take the same lock on their folders.
"""
from contextlib import contextmanager
import fcntl
import os
from pathlib import Path


class PathBusy(RuntimeError):
    """Another process holds the lock; one sentence names the path and the holder."""


def lock_file(path: Path, folder: bool) -> Path:
    """The lock file of a folder (inside it) or of a file (beside it)."""
    return path / ".lock" if folder else path.parent / f".{path.name}.lock"


@contextmanager
def hold(path, what: str, folder: bool = False):
    """Hold the exclusive lock of `path` (a folder when `folder`) for the `with` block; a second
    holder is refused with PathBusy naming `what` and the holder's process id."""
    f = open(lock_file(Path(path), folder), "a+")
    try:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            holder = f.read().strip() or "unknown"
            raise PathBusy(f"{what} {path} is in use by another run (process {holder}); wait for it to end, "
                           f"or choose another") from None
        f.seek(0)
        f.truncate()
        f.write(f"{os.getpid()}\n")
        f.flush()
        yield
    finally:
        f.close()
