"""The counted kernels' machine code kept on disk, so that the same sources are compiled once per
machine: `cpu-asm`'s assembly for a fixed target, `gpu-asm`'s PTX of a numba-cuda kernel and the
SASS that ptxas and nvdisasm make of a set of PTX modules.

An entry is kept only where NUMBA_CACHE_DIR names a folder (as for the CPU kernels themselves,
`serial/kernel_cache.py`), in its `nbsymple-code/`; elsewhere every count compiles. Its key holds all
that the code depends on: the digest of the sources it compiles from (their paths relative to the
package, so that two trees of the same code, the gate's BASE and HEAD, share it), the target,
the compilers' versions and files. An entry that cannot be read, or whose key differs, is
compiled again; one that cannot be written is not kept. A process that compiles an entry holds
its lock (`serial.compile_lock.held_waiting`), so one beside it asking for the same entry waits
and loads it instead of compiling it a second time (the gate counts two trees at once).
"""
from contextlib import contextmanager
from functools import lru_cache
import hashlib
import json
import os
from pathlib import Path

from ..runs.paths import FileRefused, open_lock, read_json, write_file
from ..serial.compile_lock import held_waiting

PACKAGE = Path(__file__).resolve().parents[1]
FOLDER = "nbsymple-code"
KIND = "code cache entry"
WAIT_S = 900            # the longest wait for another process's compile (a guard, not a timing)
SAY_AFTER_S = 5         # a wait this long is said on stderr


@lru_cache(maxsize=None)
def sources_digest(*names: str) -> str:
    """SHA-256 of the package's files under `names` (folders or files, relative to the package),
    each with its path relative to the package."""
    digest = hashlib.sha256()
    files = sorted({f for name in names for f in ((PACKAGE / name).rglob("*") if (PACKAGE / name).is_dir()
                                                   else [PACKAGE / name])
                    if f.is_file() and f.suffix in (".py", ".cu")})
    for path in files:
        digest.update(path.relative_to(PACKAGE).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def file_identity(path) -> list:
    """A compiler's file as part of a key: its real path, size and modification time."""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError:
        return [real, None, None]
    return [real, st.st_size, st.st_mtime_ns]


def _folder() -> Path | None:
    from numba.core import config
    return Path(config.CACHE_DIR) / FOLDER if config.CACHE_DIR else None


class Entry:
    """One entry: `value` (None where none was kept), and `keep(value)` to keep one (JSON)."""

    def __init__(self, path: Path | None, key: dict):
        self.path, self.key, self.value = path, key, None
        if path is not None:
            try:
                kept = read_json(path, KIND)
            except FileRefused:
                kept = None
            if isinstance(kept, dict) and kept.get("key") == key:
                self.value = kept.get("value")

    def keep(self, value):
        self.value = value
        if self.path is not None:
            try:
                write_file(self.path, json.dumps({"key": self.key, "value": value}))
            except OSError:
                pass


@contextmanager
def entry(kind: str, key: dict):
    """The entry of `kind` (a file name's prefix) under `key`, its lock held for the block."""
    folder = _folder()
    if folder is None:
        yield Entry(None, key)
        return
    name = f"{kind}-{hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:40]}.json"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = open_lock(folder / f".{name}.lock")
    except (OSError, FileRefused):
        yield Entry(None, key)          # not kept, and compiled here
        return
    with os.fdopen(fd, "r+b") as lock:
        if held_waiting(lock.fileno(), folder / f".{name}.lock", WAIT_S, SAY_AFTER_S, "code"):
            yield Entry(folder / name, key)
        else:                            # the other process hangs, or no locks here: compile here, keep nothing
            yield Entry(None, key)
