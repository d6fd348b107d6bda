"""How a run ends early: `RunStop` (one sentence and an exit status), and the checks that
turn a user's mistake into one."""
import argparse
from contextlib import contextmanager
from pathlib import Path
import tempfile

from ..core.ranks import launcher_rank


def speaks() -> bool:
    """Whether this process says why a command stopped: outside an MPI launcher always; under
    `mpiexec -n K` rank 0 alone, so that a refusal every rank makes alike is printed once (before
    the ranks are joined the launcher's environment tells the rank: `core.ranks.launcher_rank`)."""
    return launcher_rank() == 0


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


def writable(folder: Path, what: str, error=RunStop) -> Path:
    """`folder`, created if needed, once a file could be made in it; else `error` in one sentence."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as e:
        raise error(f"cannot write {what} into {folder}: {e.strerror or e}") from None
    return folder


def path_argument(text) -> Path:
    """argparse type of every path option: a file or folder name; an empty one (an unset shell
    variable) is refused, never read as "none" or as the current folder."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"needs a file or folder name, got {text!r}")
    return Path(text)
