"""The one door for the files the tools read and write (issue 32, classes 1 and 10).

Reading: every file a user can hand the tools (a checkpoint, an initial-condition file, a
snapshot and its sidecar, a run record, asv results and machine files) is opened by
`open_file`, `read_bytes` or `read_json`. The path must name a regular file: a FIFO, a device,
a socket, a folder or a symbolic-link loop is refused by `stat` before any call that could
block, and the file is then opened with O_NONBLOCK and checked again (a file swapped in between
is refused too). Reads are bounded: a file larger than `LIMITS[kind]` is refused before it is
read (a sparse file of a terabyte, a /proc file that never ends), and JSON nested deeper than
`MAX_DEPTH` levels is refused instead of exhausting the interpreter's stack.

Writing: `write_atomically` and `write_file` write a file through a temporary one made with
O_EXCL beside it and renamed over it: a link in its place is replaced, never followed.
`resolved` gives the one real name of a path a run writes (two names of one checkpoint share
one lock; a symbolic-link loop is refused), `inside` says whether an output lands inside
another, and `open_lock` opens a lock file without ever following a symbolic link (O_NOFOLLOW;
created with O_EXCL), refusing one that is a folder, a link (symbolic or hard) or no regular file.

Every refusal is `FileRefused`, a ValueError whose message is one sentence naming the file.
"""
from __future__ import annotations

import errno
import json
import math
import os
from pathlib import Path
import re
import stat
import sys
import tempfile
import time

from ..environment import (LINK_LOOP, blocking, dead_link, failed_write, on_its_path,  # noqa: F401
                           not_a_folder, odd_kind, odd_mode, other_form, umask)   # (read from here too)

# The most bytes a file of each kind may hold; what is larger is no file the tools wrote. A
# checkpoint or snapshot holds 56 bytes a body (x, v, m in float64): 16 GiB is 3e8 bodies, far
# beyond a direct-summation run (1e17 pair forces a step); an initial-condition file, read
# whole into memory, about 180 bytes a body: 2 GiB is 1e7 bodies.
LIMITS = {
    "checkpoint": 16 << 30,
    "snapshot": 16 << 30,
    "initial-condition file": 2 << 30,
    "snapshot sidecar": 256 << 20,        # a time per snapshot: millions of snapshots
    "run record": 16 << 20,
    "asv results file": 256 << 20,
    "asv machine file": 1 << 20,
    "asv configuration": 1 << 20,         # asv.conf.json: 2 kB
    "asv benchmarks file": 64 << 20,
    "measured-runs file": 64 << 20,       # a JSON line of 1 kB per timed MPI job
    "published dashboard file": 256 << 20,    # asv publish's index.html, index.json, graphs, scripts
    "code cache entry": 64 << 20,         # a target's assembly or a kernel's PTX: a few hundred kB
    "Markdown table": 16 << 20,           # a table `nbsymple paper --full` wrote: kilobytes
}
MAX_DEPTH = 64                # JSON nesting: the deepest file the tools write has 5 levels



class FileRefused(ValueError):
    """A path that cannot be read or written as asked; the message is one sentence naming it."""


class KeyTwice(FileRefused):
    """JSON in which an object gives a key twice: json (asv's reader too) takes the last value in silence, where
    the writer meant one (`_one_value_per_key`)."""


class _KeyGivenTwice(ValueError):
    pass


class Unbounded(FileRefused):
    """A file beyond what any reader takes: larger than its kind's limit, or JSON nested deeper than
    MAX_DEPTH levels (a reader that passes over a malformed file, as asv does, ends in MemoryError
    or RecursionError on these)."""


def _os_error(e: OSError, kind: str, name, path=None) -> FileRefused:
    """The refusal of file `path` (default `name`), which could not be opened or read (`e`)."""
    if (found := on_its_path(e, name if path is None else path)) is not None:
        return FileRefused(f"{kind} {name} cannot be read: a folder on its path is {found[1]} ({found[0]})")
    if isinstance(e, FileNotFoundError):
        if (other := other_form(name if path is None else path)) is not None:   # not opened: the user chooses
            return FileRefused(f"{kind} {name} does not exist, but {other} does, its name in another Unicode form "
                               f"(as macOS writes names): give its name as written there (Tab completion types "
                               f"it) or rename it")
        return FileRefused(f"{kind} {name} does not exist")
    if e.errno == errno.ELOOP:               # (a loop on its path: that folder named, above; a hunt)
        return FileRefused(f"{kind} {name} is a symbolic-link loop, not a file")
    return FileRefused(f"{kind} {name} cannot be read ({e.strerror or e})")


def _size(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.3g} {unit}"
        n /= 1024


def _too_large(kind: str, name, size: int | None = None) -> FileRefused:
    held = _size(size) if size is not None else f"more than {_size(LIMITS[kind])}"
    return Unbounded(f"{kind} {name} holds {held}; no {kind} is larger than {_size(LIMITS[kind])}")


def open_file(path, kind: str, name=None):
    """`path` opened for binary reading once it is a regular file of at most LIMITS[kind] bytes
    (`kind` also names it in a refusal, with `name`, default the path, as its name)."""
    name = path if name is None else name
    try:
        before = os.stat(path)
        if not stat.S_ISREG(before.st_mode):
            raise FileRefused(f"{kind} {name} is {odd_mode(before.st_mode)}, not a file")
        if before.st_size > LIMITS[kind]:
            raise _too_large(kind, name, before.st_size)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as e:
        raise _os_error(e, kind, name, path) from None
    now = os.fstat(fd)                   # the file opened: one a writer renamed onto `path` meanwhile is taken
    if not stat.S_ISREG(now.st_mode) or now.st_size > LIMITS[kind]:
        os.close(fd)
        raise (_too_large(kind, name, now.st_size) if stat.S_ISREG(now.st_mode) else
               FileRefused(f"{kind} {name} was replaced by {odd_mode(now.st_mode)} while it was opened"))
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_bytes(path, kind: str, name=None) -> bytes:
    """The bytes of regular file `path` (`open_file`), never more than LIMITS[kind]: a file that
    grows past it while read (or a /proc file of size 0 that never ends) is refused."""
    name, limit = path if name is None else name, LIMITS[kind]
    try:
        with open_file(path, kind, name) as f:
            size = os.fstat(f.fileno()).st_size      # not read(limit): its buffer is mapped whole, 2 GB for
            chunks = [f.read(min(size, limit) + 1)]  # two bodies of --ics, beyond a `ulimit -v` that suffices
            held = len(chunks[0])
            while held <= limit and (more := f.read(min(16 << 20, limit + 1 - held))):
                chunks.append(more)                  # grown while read, or a /proc file of size 0; joined once
                held += len(more)                    # (`data += more` copied it all per chunk: /proc/self/pagemap
    except OSError as e:                             # as --ics read for 90 s and 4 GiB before its refusal)
        raise _os_error(e, kind, name, path) from None
    if held > limit:
        raise _too_large(kind, name)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


LINE_END = re.compile(r"\r\n|\r|\n")
LINES_CHUNK = 1 << 20        # characters split into lines at a time


def text_lines(text: str):
    """The lines of a file's `text`, split about LINES_CHUNK characters at a time (`str.splitlines` made a list
    of them all: a file of 2 GB of line ends took 19 GB); they end at a line feed, a carriage return or both
    (splitlines also ended one at a form feed, a vertical tab, U+2028 or U+0085: inside a JSON string, or
    between two numbers of the authors' layout, whose reader takes them as blanks)."""
    start = 0
    while start < len(text):
        end = text.find("\n", start + LINES_CHUNK)     # a chunk ends after a line feed: never inside "\r\n"
        end = len(text) if end < 0 else end + 1
        lines = LINE_END.split(text[start:end])
        if text[end - 1] in "\r\n":               # the empty text after its last line end
            lines.pop()
        yield from lines
        start = end


FLOAT64_DIGITS = len(str(int(sys.float_info.max)))         # 309: an integer of more is beyond float64


def _integer(text: str, base: int = 10):
    """A JSON integer: an int where float64 holds it, +-inf beyond, as json reads 1e400. An integer
    of 400 digits then fails the checks of a finite number or of a count (`core/checks.py`), where
    as an int it would overflow wherever it met a float. One of more than FLOAT64_DIGITS digits (JSON
    has no leading zeros) is not converted: beyond Python's int-string limit (4300) int() raises
    ValueError, a valid document was "not valid JSON" with the advice to raise that limit."""
    if base == 10 and len(text.lstrip("+-")) > FLOAT64_DIGITS:       # (JSON5's hexadecimal ones: no such limit)
        return -math.inf if text.startswith("-") else math.inf
    value = int(text, base)
    return value if abs(value) <= sys.float_info.max else math.inf if value > 0 else -math.inf


def _one_value_per_key(pairs) -> dict:
    """A JSON object whose keys are each given once: json keeps the last value of a key given twice, in
    silence (a sidecar's `"4": 0.002, "4": 7` read snapshot 4 at t = 7), where the writer meant one."""
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise _KeyGivenTwice(f"the key {json.dumps(key)[:40]} is given twice in one object, so which value "
                                 f"is meant is unknown")
        obj[key] = value
    return obj


def parse_json(data: bytes | str, kind: str, name, loads=json.loads, **options):
    """A JSON document (`loads`, json's or json5's for asv.conf.json, with `options`; integers by
    `_integer`; each key of an object once: `_one_value_per_key`), refused as FileRefused when it
    is no JSON or nested deeper than MAX_DEPTH levels."""
    try:
        document = loads(data, **{"parse_int": _integer, "object_pairs_hook": _one_value_per_key, **options})
    except RecursionError:
        document = None
        deep = True
    except _KeyGivenTwice as e:
        raise KeyTwice(f"{kind} {name} is not valid JSON ({e})") from None
    except ValueError as e:
        raise FileRefused(f"{kind} {name} is not valid JSON ({' '.join(str(e).split())[:120]})") from None
    else:
        deep = depth(document) > MAX_DEPTH
    if deep:
        raise Unbounded(f"{kind} {name} is nested more than {MAX_DEPTH} levels deep, deeper than any {kind}")
    return document


def read_json(path, kind: str, name=None, **options):
    """The JSON document in regular file `path`, bounded in size (`read_bytes`) and depth (`parse_json`)."""
    name = path if name is None else name
    return decode_json(read_bytes(path, kind, name), kind, name, **options)


def decode_json(data: bytes, kind: str, name, **options):
    """`parse_json` of UTF-8 bytes read from `name`."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FileRefused(f"{kind} {name} is not UTF-8 text (byte {e.start} cannot be decoded), so not JSON") from None
    return parse_json(text, kind, name, **options)


def depth(value) -> int:
    """How deeply lists and dicts nest in `value` (0 for a number or a string), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        value, level = stack.pop()
        if isinstance(value, (list, dict)):
            deepest = max(deepest, level)
            if level > MAX_DEPTH:
                break
            stack.extend((v, level + 1) for v in (value.values() if isinstance(value, dict) else value))
    return deepest


# ------------------------------------------------------------------------------ writing

def resolved(path, what: str) -> Path:
    """The real, absolute name of `path` (symbolic links followed, the last one too, so that
    two names of one file are one name); a symbolic-link loop is refused naming `what`."""
    try:
        return Path(path).resolve()
    except (RuntimeError, OSError):                     # Python < 3.13 raises RuntimeError on a loop
        raise FileRefused(f"{what} {path} is a symbolic-link loop, not a path that can be written") from None


def inside(path, folder) -> bool:
    """Whether `path` is `folder` or lies below it (both resolved; a symbolic-link loop, which
    Path.resolve raises on, as far as it resolves)."""
    path, folder = Path(os.path.realpath(path)), Path(os.path.realpath(folder))
    return path == folder or folder in path.parents


def write_atomically(path, write, prefix: str, suffix: str = ".tmp") -> Path:
    """Call `write(file)` on a temporary file `prefix<pid>.<random>suffix` in `path`'s folder (the
    writer's process id in its name), give it the usual permissions (0666 less the umask), fsync
    it (each where the file system does it: `_where_done`), rename it to `path` and fsync the
    folder; the temporary is removed if anything fails. A kill at any moment leaves the old file
    or the new. An OSError raised carries `path` (`failed_write`)."""
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f"{prefix}{os.getpid()}.", suffix=suffix, dir=path.parent)
    except OSError as e:
        e.written = path
        raise
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            _where_done(os.fchmod, f.fileno(), 0o666 & ~umask())
            _where_done(os.fsync, f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(e, OSError):
            e.written = path             # `failed_write` names it
        raise
    try:                                   # make the rename itself durable
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
    except OSError:
        pass
    return path


def written_name(error: OSError):
    """The file a failed write or rename named by `error` was writing: `failed_write`'s (a write or a
    flush names none: "a write failed", "(None)" were said of a full disk), else the name a rename was
    to take, else the error's file; None where none is known."""
    return failed_write(error) or error.filename2 or error.filename


STALE_S = 60          # a temporary of a writer that is gone, this old, is what a kill left
# `write_file`'s temporary of a file paper writes: .<name>.<pid>.<mkstemp's 8 characters>.tmp
WRITERS_TEMPORARY = re.compile(r"\.[^/]+\.(?:png|md|csv|json)\.(\d+)\.[a-z0-9_]{8}\.tmp")


def remove_stale_temporaries(folder, name: str | None = None) -> list[Path]:
    """Remove from `folder` the temporaries `write_atomically` left when its writer was killed: a
    `.<name>.<pid>.<random>.tmp` whose process is gone from this machine and that is more than
    STALE_S seconds old (a writer on another machine sharing the folder is never that slow): those
    of every file paper writes (`paper --out`, where `--full` writes beside the holder of its lock:
    a kill left them for good, a hunt), or, given `name`, those of file `name` alone (what
    `write_file` writes: results/, html/, caches). Returns them."""
    form = WRITERS_TEMPORARY if name is None else re.compile(rf"\.{re.escape(name)}\.(\d+)\.[a-z0-9_]{{8}}\.tmp")
    gone = []
    try:
        found = list(Path(folder).glob(".*.tmp"))
    except OSError:                      # a folder that cannot be listed: nothing to remove
        return gone
    for path in found:
        match = form.fullmatch(path.name)      # that form alone: a user's `.draft.2024.tmp` stays
        try:
            if match is None or time.time() - path.lstat().st_mtime < STALE_S:
                continue
            os.kill(int(match.group(1)), 0)
            continue                     # its writer lives
        except (ProcessLookupError, OverflowError):     # OverflowError: an id beyond any process's (an
            pass                                        # OverflowError traceback of `paper` where 20 digits
        except OSError:                  # stood in the name); another user's live process (EPERM), or the file gone
            continue
        try:
            path.unlink(missing_ok=True)
            gone.append(path)
        except OSError:                  # a folder made read-only since: left for a later write
            continue
    return gone


# what a file system says to a call it does not do: vfat, SMB and some FUSE mounts keep no Unix
# modes (fchmod: EPERM) or cannot sync (EINVAL, ENOSYS); a file written there is written all the same
NOT_DONE_HERE = (errno.EPERM, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP)


def _where_done(call, *args):
    """`call(*args)`, skipped where the file system does not do it (NOT_DONE_HERE: every write to a
    USB stick's vfat, a checkpoint or `paper --out`, was a fault, "Operation not permitted");
    any other error, an I/O error above all, is raised."""
    try:
        call(*args)
    except OSError as e:
        if e.errno not in NOT_DONE_HERE:
            raise


def write_file(path, data: bytes | str) -> Path:
    """Write `data` (text as UTF-8) to `path` by `write_atomically`: a link at `path` is
    replaced, never written through, and a kill leaves the old file or the new one (and its
    temporary, removed by the next write of `path`: `remove_stale_temporaries`). A character
    UTF-8 cannot hold (the undecodable byte of a path the user named, as Python reads it) is
    written as its escape, \\udcff (stderr shows that byte as \\xff: `entry.escaped`)."""
    body = data.encode("utf-8", "backslashreplace") if isinstance(data, str) else bytes(data)
    written = write_atomically(path, lambda f: f.write(body), f".{Path(path).name}.")
    remove_stale_temporaries(written.parent, written.name)     # a killed writer's of this name: left for good
    return written


def open_lock(path) -> int:
    """A descriptor of lock file `path`, opened for reading and writing and never through a
    symbolic link: created if absent (O_EXCL), else opened with O_NOFOLLOW and checked to be a
    regular file of one name. A folder, a link (symbolic, or hard: the process id written would
    replace the text of the file's other names) or anything else there is refused in one sentence. A lock
    file this user may read but not write (another user's run made it, in a folder both may
    write; or one on a read-only file system, which was said to be "not a regular file") is opened
    for reading: `flock` takes it all the same."""
    flags = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY
    try:
        return os.open(path, flags | os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:
        pass
    except OSError as e:
        raise FileRefused(f"lock file {path} cannot be created ({e.strerror or e})") from None
    try:
        try:
            fd = os.open(path, flags | os.O_RDWR | os.O_NONBLOCK)
        except OSError as e:             # not writable here: another user's, or on a read-only file system
            if not isinstance(e, PermissionError) and e.errno != errno.EROFS:
                raise
            fd = os.open(path, flags | os.O_RDONLY | os.O_NONBLOCK)
    except PermissionError:                  # neither: another user's file, unreadable to this one
        raise FileRefused(f"lock file {path} cannot be read by this user (it belongs to {_owner(path)}); remove "
                          f"it where no run of theirs holds it, or choose another path") from None
    except OSError as e:
        kind = _lock_kind(path) or e.strerror or str(e)
        raise FileRefused(f"lock file {path} is {kind}, not a lock file; remove it, or choose another path") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise FileRefused(f"lock file {path} is {odd_mode(st.st_mode)}, not a lock file; remove it, or choose another "
                          f"path")
    if st.st_nlink > 1:                  # a hard link: the holder's process id replaced the file's other names' text
        os.close(fd)
        raise FileRefused(f"lock file {path} is a hard link, one of {st.st_nlink} names of one file, not a lock file; "
                          f"remove it (the other names keep the file), or choose another path")
    os.set_blocking(fd, True)
    return fd


def _owner(path) -> str:
    """The name of the user who owns `path` (its number where the system has no name for it)."""
    import pwd
    try:
        uid = os.lstat(path).st_uid
    except OSError:
        return "another user"
    try:
        return f"user {pwd.getpwuid(uid).pw_name}"
    except KeyError:
        return f"user {uid}"


def _lock_kind(path) -> str | None:
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    return "a symbolic link" if stat.S_ISLNK(mode) else odd_mode(mode)
