"""numba's on-disk cache of the CPU kernels, and one compile of each per machine.

Compiled code is kept only where NUMBA_CACHE_DIR names a folder (`on_disk`; the asv suite and the
test suite name one): an entry is keyed by the kernel's build (its name, serial or threaded, the
digest of the sources it compiles from) beside numba's own key (signature, target CPU), so that a
kernel compiles once per machine rather than in every process. A process that compiles a kernel
holds that kernel's lock (`compile_lock.compiled_once`): another that needs it at the same time
(an xdist worker, an MPI rank, an asv benchmark process) waits, then loads what the first kept,
instead of compiling it a second time beside it. Files that are not numba's (cut short, a FIFO,
a folder at a name) are taken as absent: the kernel is compiled again, and kept where it can be
written.
"""
import errno
from functools import lru_cache
import hashlib
import inspect
import os
from pathlib import Path
import stat

import numba
from numba.core.caching import CompileResultCacheImpl, FunctionCache, IndexDataCacheFile, UserProvidedCacheLocator

from .compile_lock import compiled_once


@lru_cache(maxsize=None)
def _sources_digest(source: str) -> str:
    """SHA-256 of the sources a CPU kernel compiles from: `core/`, the serial and threaded
    packages (the staircase keeps their imports there; tests/test_structure.py) and `source`,
    the file that defines it."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    files = sorted({*(p for d in ("core", "serial", "threaded") for p in (package / d).glob("*.py")), Path(source)})
    for path in files:
        digest.update(bytes(path) + b"\0" + path.read_bytes())      # a folder's name need not be UTF-8
    return digest.hexdigest()


class _CacheFolder(UserProvidedCacheLocator):
    """numba's locator of NUMBA_CACHE_DIR, for sources in a folder whose name is not UTF-8 too
    (numba hashes the sources' folder as UTF-8 text, a UnicodeEncodeError there)."""

    @classmethod
    def get_suitable_cache_subpath(cls, py_file):
        folder = os.path.dirname(os.path.abspath(py_file))
        return f"{os.path.basename(folder)}_{hashlib.sha1(os.fsencode(folder)).hexdigest()}"


class _InCacheFolder(CompileResultCacheImpl):
    """The folder NUMBA_CACHE_DIR names, and no other: where it cannot be written, numba's next
    choice would be beside these sources (inside a checkout, or site-packages)."""
    _locator_classes = [_CacheFolder]


def _regular(path) -> bool:
    """Whether `path` is a regular file (links followed)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


class _CacheFile(IndexDataCacheFile):
    """numba's index and data files of one kernel, each read only where it is a regular file, and
    taken as absent where it cannot be read back (cut short, written by no numba: a FIFO at its name
    hung numba's open, a file cut short or a folder there ended the command in numba's traceback):
    the kernel is compiled again, and kept where it can be written."""

    def _load_index(self):
        try:
            return super()._load_index() if _regular(self._index_path) else {}
        except Exception:               # noqa: BLE001 - whatever unpickling a damaged file raises
            return {}

    def _load_data(self, name):
        if not _regular(path := self._data_path(name)):
            raise FileNotFoundError(errno.ENOENT, "no regular file", path)   # `load`: as removed, a miss
        try:
            return super()._load_data(name)
        except Exception as e:          # noqa: BLE001 - as above
            raise OSError(f"{path} cannot be read back ({type(e).__name__})") from None

    def save(self, key, data):
        try:
            super().save(key, data)
        except OSError:                 # a folder at its name: not kept, as a cache that cannot be written
            pass


class _BuildCache(FunctionCache):
    """numba's on-disk cache of one kernel, keyed by its build (name, serial or threaded, the
    sources' digest) beside the signature and the target CPU. numba's own key hashes the
    closure's cells, whose dispatchers pickle with a fresh uuid in every process (it would never
    match again), and leaves out the flags (the serial and threaded builds of one source would
    share entries)."""
    _impl_class = _InCacheFolder

    def __init__(self, py_func, build: str):
        super().__init__(py_func)
        self._build = build
        self._cache_file = _CacheFile(self._cache_path, self._impl.filename_base, self._impl.locator.get_source_stamp())

    def _index_key(self, sig, codegen):
        return sig, codegen.magic_tuple(), self._build


def on_disk(dispatcher, name: str, parallel: bool):
    """`dispatcher`, compiled once per machine where NUMBA_CACHE_DIR names a folder for numba's
    on-disk cache (the asv suite names one outside the checkout), else in every process: numba's
    default folder is beside these sources, inside a checkout. A folder that cannot be written
    (the command has refused it already, `environment.problem`) caches nothing."""
    if numba.config.CACHE_DIR:
        source = inspect.getsourcefile(dispatcher.py_func)
        build = f"{name} {'threaded' if parallel else 'serial'} {_sources_digest(source)}"
        try:
            cache = _BuildCache(dispatcher.py_func, build)
        except RuntimeError:             # numba: "no locator available"
            return dispatcher
        dispatcher._cache = cache
        lock = os.path.join(cache._cache_path, f".{cache._impl.filename_base}.lock")
        compile_here = dispatcher.compile             # numba's, on a call of types not compiled yet
        dispatcher.compile = lambda sig: compiled_once(lock, compile_here, sig)
    return dispatcher

