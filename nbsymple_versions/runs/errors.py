"""How a run ends early: `RunStop` (one sentence and an exit status), and the checks that
turn a user's mistake into one."""
from contextlib import contextmanager
import errno
import os
from pathlib import Path
import tempfile

from ..entry import FAULT, speaks                           # FAULT: exit status of a fault of the machine
from ..environment import os_reason
from .paths import blocking, written_name

MACHINE_FAULTS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO})   # a full disk, a quota, a failing device


class RunStop(Exception):
    """The run ends early: one sentence for stderr and an exit status."""

    def __init__(self, message: str, status: int = 2):
        super().__init__(message)
        self.status = status
        self.speak = speaks()      # False on the MPI ranks other than 0, which stop silently


@contextmanager
def user_values(error=RunStop):
    """Set-up from the user's values (N, seed, a file, options): a ValueError there is their
    mistake and becomes `error` (one sentence, status 2); a ValueError anywhere else is a bug
    and keeps its traceback."""
    try:
        yield
    except ValueError as e:
        raise error(str(e)) from None


def fault_status(error: OSError, started: bool = False) -> int:
    """The exit status of a failed write: FAULT after the start or for a fault of the machine (a
    full disk) at any time, else 2 (a path the user gave that cannot be written)."""
    return FAULT if started or error.errno in MACHINE_FAULTS else 2


@contextmanager
def stop_on_write_fault(kept, started: bool = False):
    """An OSError in the block (a full disk, a folder made read-only, a lock file that cannot be
    written) becomes a RunStop naming the file and what is `kept` (words, or a function that
    says them as the block failed), with `fault_status`."""
    try:
        yield
    except OSError as e:
        name = written_name(e)
        what = f"cannot write {name}" if name else "a write failed"
        raise RunStop(f"{what}: {os_reason(e)}; {kept() if callable(kept) else kept}", fault_status(e, started)) \
            from None


def in_the_way_of(folder) -> str | None:
    """What stands where `folder` is to be made ("it is a file, not a folder", "a folder on its path
    is a FIFO (named pipe) (NAME)": what it is, a FIFO or a dangling link too), or None; nothing is made."""
    if (found := blocking(folder)) is None:
        return None
    name, kind = found
    return f"it is {kind}, not a folder" if name == Path(folder) else f"a folder on its path is {kind} ({name})"


def writable(folder: Path, what: str, error=RunStop) -> Path:
    """`folder`, created if needed, once a file could be made in it and its names listed (a
    folder this user may write but not read hides what it holds: another run's snapshots were
    written over, unseen); else `error` in one sentence (a RunStop with `fault_status`)."""
    listing = False
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
        listing = True
        os.listdir(folder)
    except OSError as e:
        virtual = isinstance(e, FileNotFoundError) and folder.parent.is_dir()    # /proc makes nothing: ENOENT
        in_the_way = isinstance(e, (FileExistsError, NotADirectoryError)) or e.errno == errno.ELOOP   # mkdir's EEXIST
        why = ((in_the_way_of(folder) or "it is a file, not a folder") if in_the_way
               else f"it cannot be read ({os_reason(e)}), so what it holds cannot be checked" if listing
               else f"its file system makes no new file or folder there ({os_reason(e)}, in a folder that exists: "
                    f"a virtual file system, such as /proc)" if virtual
               else os_reason(e))
        message = f"cannot write {what} into {folder}: {why}"
        raise (RunStop(message, fault_status(e)) if error is RunStop else error(message)) from None
    return folder
