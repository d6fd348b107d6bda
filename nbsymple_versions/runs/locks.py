"""Exclusive locks on the paths a run writes: its snapshot folder and its checkpoint.

`fcntl.flock` on a small lock file (`DIR/.lock` for a folder, `.NAME.lock` beside a file),
held for the life of the run and released however the process ends, `kill -9` included. The
file holds the holder's process id, so a refusal can name it. `nbsymple paper`'s science runs
take the same lock on their folders. The path is resolved first (two names of one file take
one lock), and the lock file is opened by `paths.open_lock`: never through a symbolic link, and
a folder or a link in its place is refused in one sentence. On a file system that takes no
locks (`NO_LOCKS`) the block runs unlocked, and the caller says so.
"""
from contextlib import contextmanager
import errno
import fcntl
import os
from pathlib import Path

from .paths import FileRefused, open_lock, resolved


# flock's errors on a file system without locks: an NFS mount with `nolock`, Lustre without `flock`, some FUSE ones
NO_LOCKS = (errno.ENOLCK, errno.ENOSYS, errno.EOPNOTSUPP)
HOLDER_BYTES = 64           # the most a lock file of nbsymple's holds: a process id and a line feed


class PathBusy(RuntimeError):
    """The lock cannot be taken: another process holds it (one sentence names the path and the
    holder, whose process id is `holder`), or its lock file is not one (a folder, a symbolic
    link; `holder` None)."""

    def __init__(self, sentence: str, holder: str | None = None):
        super().__init__(sentence)
        self.holder = holder


def lock_file(path: Path, folder: bool) -> Path:
    """The lock file of a folder (inside it) or of a file (beside it)."""
    return path / ".lock" if folder else path.parent / f".{path.name}.lock"


def identity(path: Path, folder: bool) -> tuple | None:
    """((device, inode) of `path`'s lock file, of the folder holding it), or None where either is
    gone: held, neither changes under its name unless the folder was renamed, removed or
    replaced, or its lock file removed (`moved`)."""
    lock = lock_file(Path(path), folder)
    try:
        own, home = os.stat(lock), os.stat(lock.parent)
    except OSError:
        return None
    return (own.st_dev, own.st_ino), (home.st_dev, home.st_ino)


def moved(path, folder: bool, held: tuple | None) -> bool:
    """Whether the lock of `path` taken with `identity` `held` is no longer under its name: the
    folder renamed, or another made in its place, while a run held it (a hunt: the run went on
    writing into whatever folder took the name, another run's locked one included)."""
    return identity(Path(path), folder) != held


def how_moved(path, folder: bool, held: tuple | None) -> tuple[str, bool]:
    """What `moved` found, in words ("was renamed or removed", ...), and whether the folder went
    (False where the folder is the one locked and only its lock file was removed or replaced)."""
    home = lock_file(Path(path), folder).parent
    try:
        st = os.stat(home)
    except OSError:
        return "was renamed or removed", True
    if held is not None and (st.st_dev, st.st_ino) == held[1]:
        return "lost its lock file (removed or replaced by another process)", False
    return "was renamed or replaced", True


@contextmanager
def hold(path, what: str, folder: bool = False):
    """Hold the exclusive lock of `path` (a folder when `folder`), resolved, for the `with`
    block; a second holder is refused with PathBusy naming `what` and the holder's process id.
    Yields None, or, where the file system takes no locks (a cluster's shared one may not: it
    refused every checkpoint there as "cannot write"), the sentence that says so: the block
    runs unlocked, and the caller says it."""
    lock = lock_file(resolved(path, what), folder)
    try:
        fd = open_lock(lock)
    except FileRefused as e:
        raise PathBusy(str(e)) from None
    with os.fdopen(fd, "r+b", buffering=0) as f:     # unbuffered: a failed write is not tried again at close
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = f.read(HOLDER_BYTES).decode("ascii", "replace").strip()
            holder = holder if holder.isdigit() else "unknown"
            raise PathBusy(f"{what} {path} is in use by another run (process {holder}); wait for it to end, "
                           f"or choose another", holder) from None
        except OSError as e:
            if e.errno not in NO_LOCKS:
                raise
            yield (f"{what} {path} is on a file system that takes no locks ({e.strerror}), so nothing stops "
                   f"another process from writing it at the same time")
            return
        held = f.read(HOLDER_BYTES + 1)
        if (held.strip() and not held.strip().isdigit()) or len(held) > HOLDER_BYTES:   # a user's file (a hunt:
            raise PathBusy(f"{what} {path} holds {lock.name}, which is not a lock file of nbsymple's (it holds "
                           f"no process id) and would be replaced; move it away")       # replaced in silence)
        try:
            f.seek(0)
            f.truncate()
            f.write(f"{os.getpid()}\n".encode())
            f.flush()
        except OSError:                     # another user's lock file, open for reading: no holder's name
            pass
        yield None
