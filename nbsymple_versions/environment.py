"""The environment variables nbsymple, its libraries and its tools read, checked once at the
start of every command (`entry.command`), before numba, matplotlib or MPI is imported: a value
that is empty or that the reader cannot use is the user's mistake, named in one sentence (exit
status 2), never a library's warning, traceback or error stack later on.

- this suite's own (`OWN`): NBSYMPLE_MAX_DAYS (`core.work`), the asv tooling's NBSYMPLE_BENCH_*
  and BENCH_MACHINE (benchmarks/grid.py, `instruments.provenance`);
- thread counts read by numba, OpenMP and the BLAS libraries, and numba's threading layer and
  its order of preference (`THREADS`), and those the machine cannot give (`_threads_problem`:
  numba's pool above the threads a process may start, OpenMP stacks beyond the memory,
  NBSYMPLE_BENCH_THREADS above numba's threads; `_threading_layer_problem`: a layer numba cannot
  load here, such as tbb without Intel TBB installed, asked of numba in a child process);
- the ranks an MPI launcher gives (`RANKS`): PMI_*, OMPI_COMM_WORLD_*, PMIX_RANK;
- every NUMBA_* variable numba reads, parsed by numba itself (its warning for a value it
  cannot parse becomes the sentence), and MPLBACKEND, checked by matplotlib; each library is
  imported here only when one of its variables is set;
- NUMBA_CACHE_DIR and MPLCONFIGDIR, folders their library must be able to make and write in
  (`FOLDERS`: where it cannot, numba falls back, silently, to a folder beside the package's
  sources, and matplotlib to a temporary one, with a warning), and where MPLCONFIGDIR is not set,
  the folders matplotlib takes instead: under XDG_CONFIG_HOME and XDG_CACHE_HOME, or, for the
  commands that draw (`draws`), under the home folder (HOME) where those are not set: a default
  the user did not choose, which the commands that never import matplotlib leave alone;
  NUMBA_DISABLE_JIT, which this
  suite's compiled kernels cannot run under; NUMBA_CPU_NAME and NUMBA_CPU_FEATURES, asked of
  LLVM (a name or feature it does not know, it ignores with a warning at every compile), and the
  code they make numba compile held against this machine's CPU (a feature it lacks: SIGILL);
- OpenMP's OMP_* and GOMP_* variables, read by libgomp when it loads (numba's omp threading
  layer: version B's threads), which reports a value it cannot use on stderr and goes on without it;
- MPICH's MPIR_CVAR_* and MPICH_* variables and those of its network layers (UCX_*, FI_*), read
  at MPI_Init (version F), where a value MPICH cannot use aborts the start with MPI's error stack
  or crashes it: asked of MPICH in a child process, only where one of them is set.

`process_problem` checks what the process itself was started in, the same way: a current folder
that no longer exists, and limits on open files (`ulimit -n`), the address space (`ulimit -v`),
the data segment (`ulimit -d`), the stack (`ulimit -s`) and a file's size (`ulimit -f`) below
what numba, matplotlib and MPI need. `os_reason` words an OSError, naming the file-size limit
where a write met it; `mode_kind`, `not_a_folder`, `dead_link` and `blocking` say what stands at a
path (for these folders, the command lines' and `runs.paths`' files).
"""
import errno
import json
import math
import os
from pathlib import Path
import re
import signal
import stat
import subprocess
import sys
import tempfile
import unicodedata
import warnings

from .core import work      # sizes in words; imports no numba
from .core.ranks import WHOLE_DIGITS, whole_value      # reads the environment alone

BENCH_GRIDS = ("smoke", "default", "large")       # benchmarks/grid.py's GRIDS (a test compares)
VERSION_LETTERS = "ABCDEF"                        # versions.LETTERS (a test compares)
THREADING_LAYERS = ("default", "safe", "forksafe", "threadsafe", "tbb", "omp", "workqueue")
LAYER_LIBRARIES = ("tbb", "omp", "workqueue")      # the layers themselves, in numba's default order
OPENMP_PREFIXES = ("OMP_", "GOMP_")               # libgomp's
# MPICH's, its network layers' (UCX, libfabric) and mpi4py's (MPI4PY_RC_*, read as it loads: a value it cannot use
# is a warning and its default, MPI4PY_RC_INITIALIZE=false leaves MPI unstarted, MPI4PY_PICKLE_PROTOCOL=abc a traceback)
MPI_PREFIXES = ("MPIR_CVAR_", "MPICH_", "UCX_", "FI_", "MPI4PY_")
MPI_START_SECONDS = 60                            # the child that starts MPI alone: a hang guard
LAYER_START_SECONDS = 60                          # the child that starts numba's threads: a hang guard
OPENMP_START_SECONDS = 60                         # the child that loads libgomp: a hang guard
# files a command may need open at once: an MPI rank took up to 40 (MPICH and UCX at MPI_Init, 1 to 16
# ranks on one node), `paper` and `peers` up to 12; below this numba, MPI or a folder's scan fails
OPEN_FILES = 64
# bytes of address space a command may need mapped (`ulimit -v`): `check`, and F's ranks, ran in 1 GB; below
# 700 MB numba's library could not be loaded or matplotlib ran out of memory
ADDRESS_SPACE = 2 * 10**9
# bytes of private memory (`ulimit -d`, Linux's data limit, mmap included): at 400 MB `paper` ran out of
# memory, at 100 MB an import did, at 50 MB OpenBLAS aborted; `paper`, `check`, F and `peers` ran in 600 MB
DATA_MEMORY = 2 * 10**9
# bytes in one file (`ulimit -f`): numba's cache files (up to 60 KB each; a larger limit than that ended in
# numba's traceback) and MPICH's shared memory for the ranks of a node, a file of about SHARED_MEMORY_PER_RANK
# per rank (below 6 MB, F's start on 4 ranks aborted with MPI's error stack)
FILE_SIZE = 64 * 10**6
SHARED_MEMORY_PER_RANK = 1_060_000
# bytes of stack (`ulimit -s`; also the default stack of a thread): at 128 KB every rank of F under mpiexec
# crashed in MPI's start (SIGSEGV, and mpiexec's "BAD TERMINATION" banner); at 64 KB Python itself crashes
# importing numpy, before any check can run; everything ran at 192 KB
STACK = 10**6


def _whole(minimum: int):
    def test(text: str) -> bool:
        return (value := whole_value(text)) is not None and value >= minimum    # ASCII digits, as atoi reads
    return test, f"a whole number of at least {minimum}"


def _too_many_digits(name: str, value: str) -> str | None:
    """The sentence refusing variable `name` where its `value` holds a number of more than
    WHOLE_DIGITS digits, else None."""
    longest = max((len(run.lstrip("0")) for run in re.findall(r"[0-9]+", value)), default=0)
    if longest <= WHOLE_DIGITS:
        return None
    return (f"{name}={_shown(value)} holds a number of {longest} digits, more than the {WHOLE_DIGITS} its readers "
            f"take; unset it or correct it")


def _positive_number(text: str) -> bool:
    """A positive finite number in ASCII, as C's strtod reads one (a hunt: Python's float read '1_0',
    '١٠' and '１０' as 10, which `core.work.max_days` then took)."""
    if not text.isascii() or "_" in text:
        return False
    try:
        value = float(text)
    except ValueError:
        return False
    return value > 0 and math.isfinite(value)


def _letters(text: str) -> bool:
    chosen = set(text.strip().upper()) - set(", ")
    return bool(chosen) and chosen <= set(VERSION_LETTERS)


MACHINE_NAME_CHARS = 128         # a folder name under results/ and in the dashboard (at most 255 bytes)


def _machine_name(text: str) -> bool:              # a folder name under results/, beside benchmarks.json
    name = text.strip()
    return re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]*", name) is not None and len(name) <= MACHINE_NAME_CHARS \
        and name != "benchmarks.json"


def _thread_list(text: str) -> bool:               # OpenMP: "4" or a nested "4,2"
    return all(_whole(1)[0](part) for part in text.split(","))


OWN = {
    "NBSYMPLE_MAX_DAYS": (_positive_number, "a positive number of days (the limit on the least time of the work "
                                            "asked for)"),
    "NBSYMPLE_BENCH_GRID": (lambda t: t.strip().lower() in BENCH_GRIDS, f"one of {', '.join(BENCH_GRIDS)}"),
    "NBSYMPLE_BENCH_VERSIONS": (_letters, f"letters of {VERSION_LETTERS}, e.g. AB"),
    "NBSYMPLE_BENCH_THREADS": _whole(1),
    "BENCH_MACHINE": (_machine_name, f"a machine name of letters, digits, '.', '_', '+' and '-', at most "
                                     f"{MACHINE_NAME_CHARS} of them, not benchmarks.json (a file of results/)"),
}
THREADS = {
    "NUMBA_NUM_THREADS": _whole(1),
    "OMP_NUM_THREADS": (_thread_list, "a whole number of at least 1 (or a comma-separated list of them)"),
    "OPENBLAS_NUM_THREADS": _whole(1),
    "MKL_NUM_THREADS": _whole(1),
    "NUMBA_THREADING_LAYER": (lambda t: t.lower() in THREADING_LAYERS, f"one of {', '.join(THREADING_LAYERS)}"),
    "NUMBA_THREADING_LAYER_PRIORITY": (lambda t: sorted(t.split()) == sorted(LAYER_LIBRARIES),
                                       f"the three layers {', '.join(LAYER_LIBRARIES)} in the order numba tries them, "
                                       f"separated by spaces, e.g. '{' '.join(LAYER_LIBRARIES)}'"),
}
RANKS = {
    "PMI_SIZE": _whole(1), "PMI_RANK": _whole(0), "PMI_LOCAL_SIZE": _whole(1), "PMI_LOCAL_RANK": _whole(0),
    "OMPI_COMM_WORLD_SIZE": _whole(1), "OMPI_COMM_WORLD_RANK": _whole(0), "PMIX_RANK": _whole(0),
}
RANK_OF_SIZE = {"PMI_RANK": "PMI_SIZE", "OMPI_COMM_WORLD_RANK": "OMPI_COMM_WORLD_SIZE"}
# folders a library writes in, and falls back from (numba: beside the package's sources, in
# silence; matplotlib: a temporary folder, its font cache built again at every start, and two
# lines of warning)
FOLDERS = {"NUMBA_CACHE_DIR": "numba can keep its cache in",
           "MPLCONFIGDIR": "matplotlib can keep its settings and cache in",
           "NBSYMPLE_WARP_CACHE": "Warp (peers) can keep its kernel cache in"}     # a file: the Warp rows lost
# where MPLCONFIGDIR is not set, matplotlib keeps them in a folder `matplotlib` under these (Linux),
# and where one of them is not set either, under its default in the home folder
XDG_FOLDERS = {"XDG_CONFIG_HOME": "under which matplotlib can keep its settings",
               "XDG_CACHE_HOME": "under which matplotlib can keep its cache"}
XDG_DEFAULTS = {"XDG_CONFIG_HOME": ".config", "XDG_CACHE_HOME": ".cache"}


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


def process_problem() -> str | None:
    """One sentence naming what this process was started in that no command can work in, else
    None: a current folder that no longer exists (removed while a shell stayed in it: every
    relative path, and Python's own, is resolved in it) or cannot be read; a soft limit below
    what numba, matplotlib and MPI need (each constant above says what failed under it): open
    files (OPEN_FILES), address space (ADDRESS_SPACE), data (DATA_MEMORY), stack (STACK), a
    file's size (FILE_SIZE, or twice MPICH's shared memory for the ranks on this node); a umask
    that takes from the owner the right to read, write or enter what the command writes."""
    try:
        os.getcwd()
    except OSError as e:
        why = ("no longer exists (it was removed or moved while this shell stayed in it)" if e.errno == errno.ENOENT
               else f"cannot be read ({e.strerror})")
        return f"the current folder {why}; cd into another folder and run the command again"
    if taken := [right for bit, right in ((0o400, "read"), (0o200, "write"), (0o100, "enter")) if umask() & bit]:
        rights = " and ".join([", ".join(taken[:-1]), taken[-1]] if len(taken) > 1 else taken)
        return (f"this process's umask {umask():04o} would write every file and folder (numba's cache, checkpoints, "
                f"snapshots, figures) without its owner's right to {rights} it, so the next command could not use "
                "them; set one that leaves those rights, e.g. umask 022")
    import resource
    ranks = whole_value(os.environ.get("MPI_LOCALNRANKS")) or 1        # mpiexec's ranks on this node
    return (_limit_problem(resource.RLIMIT_NOFILE, "-n", OPEN_FILES, 1, "files open at once",
                           "MPI's start takes up to 40, numba's compiler and a folder's scan more than 10")
            or _limit_problem(resource.RLIMIT_AS, "-v", ADDRESS_SPACE, 1024, "of memory mapped",
                              "`check` and MPI's start map up to 1 GB")
            or _limit_problem(resource.RLIMIT_DATA, "-d", DATA_MEMORY, 1024, "of data memory",
                              "`paper` allocates up to 600 MB")
            or _limit_problem(resource.RLIMIT_STACK, "-s", STACK, 1024, "of stack",
                              "F's ranks crashed in MPI's start under ulimit -s 128")
            or _limit_problem(resource.RLIMIT_FSIZE, "-f", max(FILE_SIZE, 2 * SHARED_MEMORY_PER_RANK * ranks), 1024,
                              "in a file it writes", "numba's cache files, and MPICH's shared memory for the ranks "
                              f"of a node, about {work.size(SHARED_MEMORY_PER_RANK)} a rank"))


def umask() -> int:
    """This process's umask (read by setting it: Python has no getter)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _limit_problem(which: int, option: str, least: int, unit: int, what: str, why: str) -> str | None:
    """A sentence where the soft limit `which` (`ulimit OPTION`, counted there in `unit`s) is
    below `least`, saying how to raise it: with `ulimit` where the hard limit allows, else from
    another shell."""
    import resource
    soft = resource.getrlimit(which)[0]
    if soft == resource.RLIM_INFINITY or soft >= least:
        return None
    shown = work.size if unit > 1 else str
    return (f"this process may have only {shown(soft)} {what} (ulimit {option} {soft // unit}), fewer than the "
            f"{shown(least)} nbsymple asks for ({why}); {_raise_limit(which, option, least, unit)}")


def _raise_limit(which: int, option: str, least: int, unit: int) -> str:
    """How to raise the soft limit `which` to at least `least`: with `ulimit` where the hard limit
    allows, else from another shell."""
    import resource
    hard = resource.getrlimit(which)[1]
    if hard == resource.RLIM_INFINITY or hard >= least:
        return f"raise it, e.g. ulimit {option} {'unlimited' if hard == resource.RLIM_INFINITY else hard // unit}"
    shown = work.size if unit > 1 else str
    return f"its hard limit is {shown(hard)} too: start the command from a shell without that limit"


def os_reason(error: OSError) -> str:
    """The system's words for `error` (its strerror); where a write met this process's limit on a
    file's size (EFBIG under `ulimit -f`), that limit and how to raise it: "File too large" alone
    does not say that the file system would have taken it."""
    import resource
    words = error.strerror or str(error)
    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if error.errno != errno.EFBIG or soft == resource.RLIM_INFINITY:
        return words
    return (f"{words}: over this process's limit on a file's size, {work.size(soft)} (ulimit -f {soft // 1024}); "
            f"{_raise_limit(resource.RLIMIT_FSIZE, '-f', soft + 1, 1024)}")


PATH_MAX = os.pathconf("/", "PC_PATH_MAX") if hasattr(os, "pathconf") else 4096     # a whole path's bytes
FOLDER_MARGIN = 256    # bytes a command adds below a folder it writes into: paper's runs/<run>/.<snapshot>.<pid>...tmp

# What stands at a path, in words for a sentence (runs.paths' readers and writers, the folders of `FOLDERS`,
# the command lines' folders), and the file a failed atomic write was writing.
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def odd_mode(mode: int) -> str:
    """What a file of `mode` that is no regular file is ("a folder", "a FIFO (named pipe)", ...)."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def mode_kind(mode: int) -> str:
    """What a file of `mode` is, a regular one included ("a file", "a folder", "a FIFO (named pipe)", ...)."""
    return "a file" if stat.S_ISREG(mode) else odd_mode(mode)


def odd_kind(path) -> str | None:
    """What `path` is when it is there and no regular file ("a folder", "a FIFO (named pipe)",
    ...; links followed), else None."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) else odd_mode(mode)


def other_form(path) -> Path | None:
    """The one file beside `path` (which is not there) whose name is `path`'s in another Unicode form: é
    typed as one character (NFC), written as e and its accent (NFD, as macOS writes names); else None."""
    path = Path(path)
    name = unicodedata.normalize("NFC", path.name)
    if name == unicodedata.normalize("NFD", path.name):   # one form only (an ASCII name): its folder, a code
        return None         # cache's or a run's of 100000 snapshots, is not listed on each miss (a review)
    try:
        names = os.listdir(path.parent)
    except OSError:
        return None
    same = [n for n in names if unicodedata.normalize("NFC", n) == name]
    return path.parent / same[0] if len(same) == 1 and same[0] != path.name else None


def not_a_folder(path) -> str | None:
    """Why `path` is no folder to read, to follow its name in a sentence ("does not exist", "is a
    file, not a folder", "is a FIFO (named pipe), not a folder", "cannot be read (Permission
    denied)": another user's that this one may not list; links followed), else None."""
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISDIR(mode):
            os.listdir(path)
    except OSError as e:
        if (link := dead_link(path)) is not None:       # "does not exist" of a name that is there
            return f"is {link}, not a folder"
        if (found := on_its_path(e, path)) is not None:
            return f"cannot be read: a folder on its path is {found[1]} ({found[0]})"
        return "does not exist" if isinstance(e, FileNotFoundError) else f"cannot be read ({e.strerror})"
    return None if stat.S_ISDIR(mode) else f"is {mode_kind(mode)}, not a folder"


LINK_LOOP = "a symbolic-link loop"


def dead_link(path) -> str | None:
    """What `path` is where it is a symbolic link that leads to no file ("a dangling symbolic link
    to TARGET", "a symbolic-link loop"), else None: a name that is there, which `os.stat`, following
    it, says is not (a hunt: `paper --out` of a dangling link said "it is a file, not a folder")."""
    try:
        if not stat.S_ISLNK(os.lstat(path).st_mode):
            return None
    except OSError:                      # not there, or a loop on its path (not itself a link)
        return None
    try:
        os.stat(path)
    except OSError as e:
        if e.errno == errno.ELOOP:
            return LINK_LOOP
        try:
            return f"a dangling symbolic link to {os.readlink(path)}"
        except OSError:
            return None
    return None


def blocking(path) -> tuple[Path, str] | None:
    """(the first name on `path`, itself included, that is there and no folder; what it is: "a file", "a FIFO
    (named pipe)", ..., "a dangling symbolic link to TARGET"; links followed), or None: where a folder must be
    made, what stands in its place."""
    for name in (*reversed(Path(path).parents), Path(path)):
        try:
            mode = os.stat(name).st_mode
        except OSError:
            link = dead_link(name)
            return None if link is None else (name, link)
        if not stat.S_ISDIR(mode):
            return name, mode_kind(mode)
    return None


def on_its_path(error: OSError, path) -> tuple[Path, str] | None:
    """(a name on `path`'s folders, what it is: `blocking`) where it is why `path` could not be opened
    (`error`): a file or a link loop there, or a dangling link (a disk not mounted here: `data/c.ck` was
    said not to exist, `data` unnamed); else None."""
    if error.errno not in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
        return None
    return blocking(Path(path).parent)


def failed_write(error: OSError) -> Path | None:
    """The file whose `write_atomically` failed with `error` (left as it was before), else None."""
    return getattr(error, "written", None)         # (`runs.paths.write_atomically` sets it)


NUMBA_CONFIG_FILE = ".numba_config.yaml"          # numba reads its settings from it, in the current folder
NUMBA_CONFIG_BYTES = 10**6


def problem(environ=None, draws: bool = False) -> str | None:
    """One sentence naming the first variable of `environ` (default `os.environ`) that is set to
    a value its reader cannot use, else None; `draws`: the command draws with matplotlib, whose
    folders under the home folder are checked too. numba's settings file in the current folder
    (NUMBA_CONFIG_FILE) is read as numba reads it, as NUMBA_* variables below those set
    (`_numba_config`), and a setting of it that is refused is said to be its. Which NUMBA_*,
    OMP_*/GOMP_* and MPI variables are set is read from `environ`, but their values are read by
    numba's own import (`_numba_problem`) and by libgomp's and MPICH's children from this
    process's environment (os.environ), and shown from it (`_settings`): a value given in another
    `environ` alone is not checked there."""
    env = os.environ if environ is None else environ
    settings, found = _numba_config()
    if found is not None:
        return found
    found = _problem({**{name: str(value) for name, value in settings.items()}, **env}, draws)
    from_file = [name for name in settings if name not in env and found is not None and name in found]
    if not from_file:
        return found
    name, key = from_file[0], from_file[0][6:].lower()
    value = settings[name]          # a hunt: `opt: 3`, which numba passes on as the number 3, refused as '3'
    typed = (f", a YAML {type(value).__name__}, which numba reads here only as text: quote it, {key}: '{value}'"
             if "numba can read" in found and not isinstance(value, str) else "")
    return f"{found} ({name} is set as {key} in {NUMBA_CONFIG_FILE} in the current folder, which numba reads{typed})"


def _numba_config() -> tuple[dict, str | None]:
    """({NUMBA_NAME: value} that numba's settings file in the current folder sets, as numba reads
    it: each key upper-cased after NUMBA_, each value as YAML typed it; None) where it is a
    regular file (numba reads no other), or ({}, a sentence) where it cannot be read as YAML of
    such settings (a hunt: `disable_jit: 1` there ended `run --precision dsp` in numba's
    NotImplementedError, and YAML cut short every command in yaml's traceback, as neither was
    checked)."""
    try:
        mode = os.stat(NUMBA_CONFIG_FILE)
    except OSError:
        return {}, None
    if not stat.S_ISREG(mode.st_mode):
        return {}, None
    where = f"{NUMBA_CONFIG_FILE} in the current folder, which numba reads its settings from,"
    if mode.st_size > NUMBA_CONFIG_BYTES:
        return {}, f"{where} holds {work.size(mode.st_size)}, more than any settings file; remove it or correct it"
    try:
        import yaml
    except ImportError:                         # numba warns that it cannot read it, and goes on without it
        return {}, None
    try:
        with open(NUMBA_CONFIG_FILE, "rb") as f:
            settings = yaml.safe_load(f.read().decode("utf-8"))
    except OSError as e:
        return {}, f"{where} cannot be read ({os_reason(e)}); remove it or correct it"
    except (UnicodeDecodeError, yaml.YAMLError, RecursionError) as e:
        said = " ".join(str(e).split())[:200]
        return {}, f"{where} is not YAML text ({said}); remove it or correct it"
    if settings is None:
        return {}, None
    if not isinstance(settings, dict) or not all(isinstance(k, str) for k in settings):
        return {}, f"{where} is not a mapping of setting names to values; remove it or correct it"
    return {"NUMBA_" + k.upper(): v for k, v in settings.items()}, None


def _problem(env, draws: bool) -> str | None:
    """`problem` of the variables `env`."""
    for table in (OWN, THREADS, RANKS):
        for name, (test, wanted) in table.items():
            if name not in env:
                continue
            value = env[name]
            if not value.strip():
                return f"{name} is set but empty; unset it or set it to {wanted}"
            if not test(value):
                return (_too_many_digits(name, value)
                        or f"{name}={_shown(value)} is not {wanted}; unset it or correct it")
    if (found := _threads_problem(env)) is not None:
        return found
    if (found := _threading_layer_problem(env)) is not None:
        return found
    for rank, size in RANK_OF_SIZE.items():
        if rank in env and size in env and int(env[rank]) >= int(env[size]):
            return f"{rank}={env[rank]} is not below {size}={env[size]}; an MPI launcher sets both, rank < size"
    for name, keeps in FOLDERS.items():
        if env.get(name, ""):                        # empty: as unset, to numba and matplotlib
            if (found := misread_folder(name, env[name], keeps.split()[0])) is not None:
                return found
            if (found := _folder_problem(name, env[name], keeps)) is not None:
                return found
    if not env.get("MPLCONFIGDIR", ""):
        for name, keeps in XDG_FOLDERS.items():
            if env.get(name, ""):
                found = (misread_folder(name, env[name], "matplotlib")
                         or _folder_problem(name, env[name], keeps, inside="matplotlib"))
            else:
                found = _home_problem(env, XDG_DEFAULTS[name], keeps) if draws else None
            if found is not None:
                return found
    if any(name.startswith("NUMBA_") and name not in FOLDERS for name in env):
        if (found := _numba_problem()) is not None:
            return found
    openmp = lambda names: _openmp_problem(names, env)        # under numba's settings, its file's too
    for prefixes, asked in ((OPENMP_PREFIXES, openmp), (MPI_PREFIXES, _mpi_problem)):
        if names := sorted(n for n in env if n.startswith(prefixes)):
            if (found := asked(names)) is not None:
                return found
    if draws or "MPLBACKEND" in env:            # matplotlib is imported: it reads its settings file
        if (found := _matplotlibrc_problem(env)) is not None:
            return found
    if "MPLBACKEND" in env:
        return _matplotlib_problem(env["MPLBACKEND"])
    return None


MATPLOTLIBRC_BYTES = 10**6                        # matplotlib's own settings file, every line: 40 KB


def _matplotlibrc_candidates(env):
    """(where it is said, path) of each settings file matplotlib looks for as it is imported, in
    its order (`matplotlib.matplotlib_fname`); it reads the first that exists and is no folder."""
    yield "the file matplotlibrc in the current folder", "matplotlibrc"
    if "MATPLOTLIBRC" in env:
        yield "MATPLOTLIBRC", env["MATPLOTLIBRC"]
        yield "MATPLOTLIBRC", os.path.join(env["MATPLOTLIBRC"], "matplotlibrc")
    if env.get("MPLCONFIGDIR", ""):
        yield "MPLCONFIGDIR's matplotlibrc", os.path.join(env["MPLCONFIGDIR"], "matplotlibrc")
    elif env.get("XDG_CONFIG_HOME", ""):
        yield "XDG_CONFIG_HOME's matplotlib/matplotlibrc", os.path.join(env["XDG_CONFIG_HOME"], "matplotlib",
                                                                         "matplotlibrc")
    else:
        yield ("the home folder's .config/matplotlib/matplotlibrc",
               os.path.expanduser(os.path.join("~", ".config", "matplotlib", "matplotlibrc")))


def _matplotlibrc_problem(env) -> str | None:
    """The settings file matplotlib would read at its import (`_matplotlibrc_candidates`) where it
    cannot be read as one (`_settings_file_problem`: a hunt, MATPLOTLIBRC naming a FIFO, or
    /dev/zero, hung `paper` for ever); then the other files it reads as it starts
    (`_matplotlib_files_problem`)."""
    for where, path in _matplotlibrc_candidates(env):
        if not os.path.exists(path) or os.path.isdir(path):
            continue
        if (why := _settings_file_problem(path)) is not None:
            return (f"{where} ({_shown(path)}), which matplotlib reads its settings from when it starts, is {why}; "
                    f"remove it, or point MATPLOTLIBRC at a settings file")
        break
    return _matplotlib_files_problem(env)


def _settings_file_problem(path: str) -> str | None:
    """Why matplotlib cannot read the file at `path` as a settings file, else None: a FIFO or a
    device, larger than any settings file, or not UTF-8 (matplotlib's UnicodeDecodeError)."""
    try:
        mode = os.stat(path)
        if not stat.S_ISREG(mode.st_mode):
            return "not a regular file (a FIFO or a device, which it would wait on or read for ever)"
        if mode.st_size > MATPLOTLIBRC_BYTES:
            return f"{work.size(mode.st_size)}, larger than any settings file"
        with open(path, "rb") as f:
            f.read().decode("utf-8")
        return None
    except UnicodeDecodeError:
        return "not UTF-8 text"
    except OSError as e:
        return f"unreadable ({os_reason(e)})"


def _matplotlib_files_problem(env) -> str | None:
    """The styles of matplotlib's stylelib folder, all read as `matplotlib.style` loads, and its
    font cache, read as its fonts load, where matplotlib cannot read them (a hunt: a FIFO for a
    style or the font cache hung `paper` and `mpi_model --plot`, a style not UTF-8 ended them in a
    traceback): in MPLCONFIGDIR, else in matplotlib/ under XDG_CONFIG_HOME and XDG_CACHE_HOME or
    their defaults in the home folder."""
    def folder(variable):
        if env.get("MPLCONFIGDIR", ""):
            return env["MPLCONFIGDIR"]
        base = env.get(variable, "") or os.path.join(env.get("HOME") or os.path.expanduser("~"),
                                                     XDG_DEFAULTS[variable])
        return os.path.join(base, "matplotlib")
    styles = os.path.join(folder("XDG_CONFIG_HOME"), "stylelib")
    cache = folder("XDG_CACHE_HOME")
    try:
        names = sorted(os.listdir(styles)) if os.path.isdir(styles) else []
    except OSError:
        names = []                       # matplotlib finds none there either
    for name in (n for n in names if n.endswith(".mplstyle")):
        if (why := _settings_file_problem(os.path.join(styles, name))) is not None:
            return f"the style {os.path.join(styles, name)}, which matplotlib reads when it starts, is {why}; remove it"
    try:
        caches = sorted(n for n in os.listdir(cache) if n.startswith("fontlist-v") and n.endswith(".json"))
    except OSError:
        caches = []
    for name in caches:
        path = os.path.join(cache, name)
        try:
            mode = os.stat(path).st_mode
        except OSError:                  # a dangling link: read as no cache, built again
            continue
        if not stat.S_ISREG(mode):
            return (f"matplotlib's font cache {path} is {mode_kind(mode)}, not a file it can read and write; "
                    f"remove it (matplotlib builds the cache again)")
    return None


def said_on_stderr(action) -> str:
    """What `action()` writes on descriptor 2 (a C library's words: LLVM's, libgomp's), caught
    in memory and returned instead of shown."""
    try:
        said = os.memfd_create("said")
    except (AttributeError, OSError):             # no memfd: an unlinked temporary file
        import tempfile
        said, name = tempfile.mkstemp()
        os.unlink(name)
    saved = os.dup(2)
    try:
        os.dup2(said, 2)
        try:
            action()
        finally:
            os.dup2(saved, 2)
        os.lseek(said, 0, os.SEEK_SET)
        chunks = []
        while chunk := os.read(said, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks).decode(errors="replace")
    finally:
        os.close(saved)
        os.close(said)


def _openmp_problem(names: list[str], env) -> str | None:
    """The OMP_* and GOMP_* variables `names` (their values this process's, os.environ, which the
    child inherits) as libgomp reads them when it loads (it parses
    them once, then reports what it cannot use on stderr, e.g. `libgomp: Invalid value for
    environment variable OMP_WAIT_POLICY`, and goes on without it), and the CPUs it binds its
    threads to (`_bound_to_fewer_cpus`, under numba's settings `env`). Asked of libgomp in a
    child, its words caught: loaded here, libgomp binds this process to its first place at once
    (OMP_PROC_BIND, OMP_PLACES: a hunt, the machine then named "1of2cores", numba starting one
    thread, and asv's children inheriting the one CPU). Where libgomp cannot be loaded, numba's threads do not use it
    (another layer), and nothing is read; what it prints on request (OMP_DISPLAY_ENV) it prints
    when the command loads it."""
    try:
        p = subprocess.run([sys.executable, "-c", _OPENMP_CHECK], stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, errors="replace", timeout=OPENMP_START_SECONDS)
    except subprocess.TimeoutExpired:
        return None
    complaints = [line.removeprefix("libgomp:").strip() for line in p.stderr.splitlines()
                  if line.startswith("libgomp:")]
    if not complaints:
        try:
            binding = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 and p.stdout.strip() else None
        except ValueError:
            binding = None
        return _bound_to_fewer_cpus(binding, names, env) if binding else None
    named = [n for n in names if re.search(rf"\b{n}\b", complaints[0])] or names
    return (f"{_settings(named)} is not a value OpenMP can use (libgomp, the threads of version B, says: "
            f"{complaints[0].rstrip('.')}); unset it or correct it")


# libgomp loaded, and how it binds threads: {"bind": omp_get_proc_bind(), "places": [[CPU, ...], ...],
# "place": the initial thread's place}, or nothing where it cannot be loaded
_OPENMP_CHECK = """
import ctypes, json
try:
    gomp = ctypes.CDLL("libgomp.so.1")
except OSError:
    raise SystemExit(0)
places = []
for place in range(gomp.omp_get_num_places()):
    count = gomp.omp_get_place_num_procs(place)
    ids = (ctypes.c_int * max(count, 1))()
    gomp.omp_get_place_proc_ids(place, ids)
    places.append(list(ids[:count]))
print(json.dumps({"bind": gomp.omp_get_proc_bind(), "places": places, "place": gomp.omp_get_place_num()}))
"""
BINDING = ("OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY")      # libgomp's: which CPUs its threads run on
PROC_BIND_FALSE, PROC_BIND_PRIMARY = 0, 2                            # omp_get_proc_bind's omp_proc_bind_false, _primary


def _bound_to_fewer_cpus(binding: dict, names: list[str], env) -> str | None:
    """libgomp's `binding` of its threads (`_OPENMP_CHECK`'s, with `names` set) where it puts the
    threads numba starts under `env` (the variables and numba's settings file: a hunt, its
    `threading_layer: workqueue` or `num_threads: 1` were not read, and such a binding refused),
    where they are OpenMP's (`_may_use_openmp`), on fewer CPUs than there are threads (a hunt:
    OMP_PROC_BIND=primary, or GOMP_CPU_AFFINITY=0, ran version B's two threads on one core, its
    times recorded as two cores'): the union of OpenMP's places, or under primary binding the
    initial thread's place alone."""
    bind, places = binding.get("bind"), binding.get("places") or []
    if bind == PROC_BIND_FALSE or not _may_use_openmp(env):
        return None
    if bind == PROC_BIND_PRIMARY and places:
        places = [places[max(binding.get("place", 0), 0) % len(places)]]
    cpus = set().union(*map(set, places))
    started = _numba_threads(env)
    if not cpus or len(cpus) >= started:
        return None
    named = [n for n in names if n in BINDING] or names
    shown, them = ", ".join(map(str, sorted(cpus))), "them" if len(cpus) > 1 else "it"
    return (f"{_settings(named)} binds the {started} threads numba starts and reports (version B's) to "
            f"{len(cpus)} CPU{'s' * (len(cpus) > 1)} ({shown}), where they would share {them}: B's times would be "
            f"those of fewer cores; unset {'it' if len(named) == 1 else 'them'}, bind to at least {started} CPUs, "
            f"or set NUMBA_NUM_THREADS={len(cpus)}")


def _settings(names: list[str]) -> str:
    """'A='x'' or 'one of A='x', B='y'' (at most 4 named, then how many more)."""
    shown = ", ".join(f"{n}={_shown(os.environ.get(n, ''))}" for n in names[:4])
    more = f" and {len(names) - 4} more" if len(names) > 4 else ""
    return shown if len(names) == 1 else f"one of {shown}{more}"


class MpiProblem(str):
    """A problem sentence about MPI's own start: a rank that found it cannot join the job's MPI to
    end it (`entry.command`)."""


def _mpi_problem(names: list[str]) -> str | None:
    """MPICH's variables `names` as MPICH reads them at MPI_Init, where a value it cannot use
    ends the process with MPI's error stack (`Abort(...): Fatal error in internal_Init_thread`) or
    a crash, and mpi4py's as it reads them when it loads (`MPI_PREFIXES`). Asked of MPICH in a
    child that starts MPI alone (a singleton: the launcher's PMI_* variables left out, so that it
    never joins a job), where mpi4py is installed; mpi4py's warning there is an error."""
    from importlib.util import find_spec
    if find_spec("mpi4py") is None:              # no MPI here: version F runs as one rank, without it
        return None
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "PMIX_", "OMPI_", "HYDRA_"))}

    def start(env):
        return subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c",
                               "from mpi4py import MPI; MPI.COMM_WORLD.Get_size()"], env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace",
                              timeout=MPI_START_SECONDS)
    try:
        p = start(env)
        if p.returncode != 0 and start({k: v for k, v in env.items() if k not in names}).returncode != 0:
            return None                          # MPI cannot start here at all: F says why, not these settings
    except subprocess.TimeoutExpired:
        return MpiProblem(f"{_settings(names)}: MPICH did not start within {MPI_START_SECONDS} s with these "
                          f"settings; unset them or correct them")
    if p.returncode == 0:
        return None
    lines = [line.strip() for line in (p.stdout + "\n" + p.stderr).splitlines() if line.strip()]
    patterns = (r"UCX\s+(WARN|ERROR)", r"^\w+(Error|Warning): ", r"[Ee]rror|failed")   # UCX's, Python's, MPICH's
    said = next((line for pattern in patterns for line in lines if re.search(pattern, line)), "")
    said = re.sub(r"^\[[^]]*\]\s*\[[^]]*\]\s*\S+\s+UCX\s+\w+\s+", "UCX: ", said)     # UCX's time and place
    said = re.sub(r"^Abort\(\d+\):\s*|,? error stack:$", "", said)[:200]
    ended = (f"was killed by {signal.Signals(-p.returncode).name}" if -p.returncode in signal.valid_signals()
             else f"ended with status {p.returncode}")
    this, it = ("this setting", "it") if len(names) == 1 else ("these settings", "them")
    reader = "mpi4py" if all(name.startswith("MPI4PY_") for name in names) else "MPICH"
    return MpiProblem(f"{_settings(names)}: {reader} cannot start with {this} (MPI's start {ended}"
                      f"{': ' + said if said else ''}); unset {it} or correct {it}")


def _affinity() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


_STARTED_ON = _affinity()       # before any parallel kernel ran: see `usable_cores`


def usable_cores() -> int:
    """The logical CPUs this process may run on (its affinity: `taskset`, a batch system's cpuset,
    which gives a job some of a node's cores): numba's default thread count. Counted as the
    process started (when this module loaded): under OMP_PROC_BIND or OMP_PLACES, libgomp, loaded
    by B's first kernel, binds the main thread to its first place, while B's threads run on all
    of them (a hunt: `peers --only A B` under OMP_PROC_BIND=close said "1 of 2 logical CPUs")."""
    return _STARTED_ON


def _thread_limit() -> tuple[int, str]:
    """(the threads the kernel lets one process start, what sets it): the system's thread limit,
    the user's process limit, and the memory maps (a thread's stack and its guard: two maps each)."""
    import resource
    limits = []
    for path, why, per_thread in (("/proc/sys/kernel/threads-max", "kernel.threads-max", 1),
                                  ("/proc/sys/vm/max_map_count", "vm.max_map_count, two maps per thread", 2)):
        try:
            with open(path) as f:
                limits.append((int(f.read()) // per_thread, why))
        except (OSError, ValueError):
            pass
    nproc = resource.getrlimit(resource.RLIMIT_NPROC)[0]
    if nproc != resource.RLIM_INFINITY:
        limits.append((nproc, "ulimit -u"))
    return min(limits) if limits else (10**6, "")


def _threads_problem(env) -> str | None:
    """NUMBA_NUM_THREADS above the threads this machine lets a process start (numba's pool
    then crashes the process: SIGSEGV), an OpenMP stack size those threads cannot all have (the
    same crash), NBSYMPLE_BENCH_THREADS above the threads numba starts (numba.set_num_threads
    would raise in every benchmark), and OpenMP settings under which libgomp runs fewer of
    numba's threads than numba starts and reports (`_fewer_openmp_threads`)."""
    numba_threads = env.get("NUMBA_NUM_THREADS", "").strip()
    if numba_threads:
        limit, why = _thread_limit()
        if int(numba_threads) > limit:
            return (f"NUMBA_NUM_THREADS={_shown(numba_threads)} is more threads than this machine lets a process "
                    f"start (at most {limit}: {why}); unset it (numba then starts one per core, {usable_cores()} here) "
                    f"or set fewer")
    bench_threads = env.get("NBSYMPLE_BENCH_THREADS", "").strip()
    started = _numba_threads(env)
    memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    for name in ("OMP_STACKSIZE", "GOMP_STACKSIZE"):
        if (found := _too_many_digits(name, env.get(name, ""))) is not None:   # a hunt: int's ValueError at 5000
            return found
        size = _stack_bytes(env.get(name, ""))
        if size is not None and size * started > memory:
            return (f"{name}={_shown(env[name])} asks a stack of {work.size(size)} for each of numba's {started} "
                    f"threads, more than this machine's {work.size(memory)} of memory (libgomp could not start "
                    f"them: the process would crash); unset it or ask less (e.g. 64M)")
    if (found := _fewer_openmp_threads(env, started)) is not None:
        return found
    if bench_threads and int(bench_threads) > started:
        where = f"NUMBA_NUM_THREADS={numba_threads}" if numba_threads else "one per core"
        return (f"NBSYMPLE_BENCH_THREADS={_shown(bench_threads)} is more threads than numba starts here ({started}: "
                f"{where}); set it to at most {started}, or raise NUMBA_NUM_THREADS with it")
    return None


def _numba_threads(env) -> int:
    """The threads numba's pool starts under `env` (NUMBA_NUM_THREADS, checked: one per usable core
    where it is not set)."""
    return whole_value(env.get("NUMBA_NUM_THREADS")) or usable_cores()


def _fewer_openmp_threads(env, started: int) -> str | None:
    """OMP_THREAD_LIMIT below the `started` threads of numba's pool, or OMP_DYNAMIC=true, where
    numba's threads are OpenMP's (the omp layer: `_may_use_openmp`): libgomp then runs fewer of
    them than numba reports (a hunt: version B said "threads: 2" and ran one, its times recorded
    as two threads' times; under OMP_DYNAMIC as many as the machine's load left it). A value
    libgomp cannot read is its own check's (`_openmp_problem`)."""
    if not _may_use_openmp(env):
        return None
    limit = whole_value(env.get("OMP_THREAD_LIMIT"))
    if limit is not None and 0 < limit < started:
        return (f"OMP_THREAD_LIMIT={_shown(env['OMP_THREAD_LIMIT'])} lets OpenMP run {limit} of the {started} threads "
                f"numba starts and reports (version B's threads); unset it, or set NUMBA_NUM_THREADS={limit} with it")
    if env.get("OMP_DYNAMIC", "").strip().lower() == "true" and started > 1:
        return (f"OMP_DYNAMIC={_shown(env['OMP_DYNAMIC'])} lets OpenMP run fewer of the {started} threads numba starts "
                f"and reports (version B's threads) as the machine's load varies; unset it or set it to false")
    return None


def _may_use_openmp(env) -> bool:
    """Whether numba's threads may be OpenMP's (libgomp's) under NUMBA_THREADING_LAYER: the omp
    layer named; the default choice, which tries the layers in NUMBA_THREADING_LAYER_PRIORITY's
    order, where omp comes before workqueue (and before tbb where Intel TBB is installed); or
    threadsafe, which numba takes as tbb, else omp, whatever that order (it never falls back on
    workqueue)."""
    layer = env.get("NUMBA_THREADING_LAYER", "").strip().lower() or "default"
    if layer != "default" and layer != "threadsafe":
        return layer == "omp"
    order = (["tbb", "omp"] if layer == "threadsafe"          # numba's own choice for threadsafe, not the priority's
             else env.get("NUMBA_THREADING_LAYER_PRIORITY", "").split() or list(LAYER_LIBRARIES))
    from importlib.util import find_spec
    tried = [name for name in order if name != "tbb" or find_spec("tbb") is not None]
    return "omp" in tried and (tried.index("omp") < tried.index("workqueue") if "workqueue" in tried else True)


def _stack_bytes(text: str) -> int | None:
    """A stack size as libgomp reads OMP_STACKSIZE: a number and a unit B, K, M or G (K if none);
    None where it is not one (libgomp's own check names it)."""
    m = re.fullmatch(r"\s*([0-9]+)\s*([bkmgBKMG]?)\s*", text)      # ASCII digits, as libgomp's strtoul
    return None if m is None else int(m[1]) * 1024 ** "bkmg".index((m[2] or "k").lower())


def misread_folder(name: str, value: str, reader: str, remedy: str = "unset it or name a folder") -> str | None:
    """The sentence refusing the folder variable `name` where its `value` is not the folder the
    user meant, though `reader` (numba, matplotlib, asv, Warp) takes it, as written, for a folder of
    that name in the current folder and makes it there in silence: blanks alone (' '; a hunt:
    NUMBA_CACHE_DIR=' ' kept numba's cache in a folder ' ' of each folder a run started in), or a
    '~' that no shell expanded ('~/cache', quoted in a job script: a folder named '~' made, which
    `rm -rf ~` then takes for the home folder; a hunt); None otherwise."""
    if value and not value.strip():
        return (f"{name}={_shown(value)} is blanks alone, which {reader} would take as a folder of that name in the "
                f"current folder; {remedy}")
    if value.startswith("~"):
        return f"{unexpanded_home(value, name)}, or {remedy}"
    return None


def unexpanded_home(text: str, name: str = "") -> str:
    """The sentence refusing a path `text` (variable `name`'s value, where given) that starts with '~',
    which no shell expanded (it was quoted, or set by a program): taken as written it names a folder
    '~' (or '~user') in the current folder, made there in silence (a hunt: `--out '~/plots'`)."""
    head, _, rest = text.partition("/")
    given = f"{name}={_shown(text)}" if name else repr(text)
    fix = ("give the home folder's full path" if name == "HOME" else f"write $HOME{'/' * bool(rest)}{rest}"
           if head == "~" else f"write the full path of {head[1:]}'s home folder" + (f", then /{rest}" * bool(rest)))
    return (f"{given} starts with {head!r}, which no shell expanded (it was quoted), so it would name a folder "
            f"{head!r} in the current folder; {fix}" + (f", or ./{text} for a name that starts with '~'" * (not name)))


def _folder_problem(name: str, value: str, keeps: str, inside: str = "",
                    remedy: str = "unset it or name a writable folder") -> str | None:
    """A folder of `FOLDERS` (relative to the current folder, as its reader takes it), or the
    folder `inside` it that its reader uses: a folder, or one that can be made in the nearest
    folder above it that exists, writable either way."""
    named = probe = os.path.abspath(os.path.join(value, inside))
    try:
        os.lstat(named)
    except OSError as e:     # a hunt: a name too long for the file system passed (numba then cached nothing,
        if e.errno == errno.ENAMETOOLONG:     # matplotlib fell back on a temporary folder, with its warning)
            return f"{name}={_shown(value)} is not a folder {keeps} (its name is too long: {e.strerror}); {remedy}"
    if (size := len(os.fsencode(named))) + FOLDER_MARGIN > PATH_MAX:     # a hunt: the files in it did not fit
        return (f"{name}={_shown(value)} is not a folder {keeps} (its path is {size} bytes long, and the files kept "
                f"in it would pass the system's {PATH_MAX}: at most {PATH_MAX - FOLDER_MARGIN}); {remedy}")
    while not os.path.lexists(probe) and os.path.dirname(probe) != probe:
        probe = os.path.dirname(probe)
    where = "it" if probe == named else probe
    if not os.path.isdir(probe):
        found = blocking(probe)                    # a file, a FIFO, a dangling link (it was "not a folder")
        why = f"{where} is {found[1]}, not a folder" if found else f"{where} is not a folder"
    elif not _writable(probe):
        why = f"{where} cannot be written"
    else:
        return None
    return f"{name}={_shown(value)} is not a folder {keeps} ({why}); {remedy}"


def _home_problem(env, default: str, keeps: str) -> str | None:
    """The home folder, where matplotlib keeps its settings or cache (`default`/matplotlib under
    it) when neither MPLCONFIGDIR nor the XDG variable names a folder: HOME (relative to the
    current folder, as matplotlib takes it), or the account's home folder where HOME is not set."""
    remedy = "set MPLCONFIGDIR to a writable folder"
    if "HOME" not in env:
        import pwd
        try:
            home = pwd.getpwuid(os.getuid()).pw_dir
        except KeyError:                         # no account: matplotlib fails the same way
            return f"HOME is not set and this user has no home folder {keeps}; set HOME or {remedy}"
        found = _folder_problem("HOME", home, keeps, inside=os.path.join(default, "matplotlib"), remedy=remedy)
        return None if found is None else found.replace("HOME=", "HOME is not set, and the home folder ", 1)
    if not env["HOME"]:
        return f"HOME is set but empty, and matplotlib would keep its settings and cache under / instead; {remedy}"
    if (found := misread_folder("HOME", env["HOME"], "matplotlib", f"correct it or {remedy}")) is not None:
        return found
    return _folder_problem("HOME", env["HOME"], keeps, inside=os.path.join(default, "matplotlib"),
                           remedy=f"correct it or {remedy}")


def _threading_layer_problem(env) -> str | None:
    """NUMBA_THREADING_LAYER as numba reads it when it starts its threads (version B's first
    parallel loop, `nbsymple info`), where a layer it cannot load (tbb without Intel TBB, `safe`
    too) raises its error with a hint to install it. Asked of numba in a child that starts its
    threads, only where the layer named needs a library (the others, and any order of
    preference, can fall back on the workqueue layer, numba's own code); the layers that load
    here are named in the sentence."""
    if env.get("NUMBA_THREADING_LAYER", "").lower() not in ("tbb", "omp", "safe", "threadsafe"):
        return None
    try:
        p = subprocess.run([sys.executable, "-c", _LAYER_CHECK], env=dict(env), stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, errors="replace", timeout=LAYER_START_SECONDS)
        said = p.stdout.strip().splitlines()[-1].split("\t") if p.returncode == 0 and p.stdout.strip() else []
    except subprocess.TimeoutExpired:
        said = []
    if len(said) != 2 or not said[1]:
        return None                              # started, or the child could not say: numba tells later
    loads, error = said
    return (f"NUMBA_THREADING_LAYER={_shown(env.get('NUMBA_THREADING_LAYER', 'default'))} asks for a threading layer "
            f"numba cannot load here ({error}); unset it or name one that loads here: {loads or 'none'}")


# numba's layers that load, and its error where its threads cannot start: "loads<TAB>error"
_LAYER_CHECK = """
import importlib, warnings
from numba.np.ufunc import parallel
loads = []
for name in ("tbb", "omp", "workqueue"):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if name == "tbb":
                parallel._check_tbb_version_compatible()
            importlib.import_module("numba.np.ufunc." + (name if name == "workqueue" else name + "pool"))
        loads.append(name)
    except ImportError:
        pass
try:
    parallel._launch_threads()
    error = ""
except ValueError as e:             # "No threading layer could be loaded. HINT: Intel TBB is required, try: ..."
    error = " ".join(str(e).split())
    error = error.split("HINT:", 1)[1].split(", try:")[0].strip() if "HINT:" in error else error
print(", ".join(loads) + "\t" + error.replace("\t", " "))
"""


def _writable(folder: str) -> bool:
    """Whether a folder can be made in `folder`: tried (an empty one, removed at once), since
    `os.access` says yes to root everywhere, /proc and a read-only mount included."""
    if not os.access(folder, os.W_OK | os.X_OK):
        return False
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".nbsymple-probe-", dir=folder))
    except OSError:
        return False
    return True


def _numba_problem() -> str | None:
    """numba's own reading of its NUMBA_* variables (at its import): a value it cannot parse,
    which it would report as a warning with a traceback and then ignore. Not asked where the only
    one set is NUMBA_CACHE_DIR, which numba reads as text and `FOLDERS` checks: numba's import
    costs a command that never needs it (a refused option) 0.15 s, and every test's child paid it."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import numba.core.config  # noqa: F401 - reads the NUMBA_* variables
    for w in caught:
        m = re.match(r"Environment variable '(\w+)' is defined but its associated value '(.*?)' could not be parsed",
                     str(w.message), re.S)
        if m:
            return f"{m[1]}={_shown(m[2])} is not a value numba can read; unset it or correct it"
    for w in caught:                     # numba's other warnings at import, as they would have been shown
        warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    from numba.core import config
    if config.DISABLE_JIT:
        value = os.environ.get("NUMBA_DISABLE_JIT", str(int(config.DISABLE_JIT)))     # (or numba's settings file's)
        return (f"NUMBA_DISABLE_JIT={_shown(value)} runs numba's functions as plain "
                f"Python, which this suite's kernels cannot (dsp's separation is a compiled intrinsic) and whose "
                f"timings would be Python's; unset it")
    if config.CPU_NAME is not None or config.CPU_FEATURES is not None:     # (set empty too: "" is a value)
        return _llvm_cpu_problem(config.CPU_NAME, config.CPU_FEATURES)
    return None


def _llvm_cpu_problem(name: str | None, features: str | None, host: dict | None = None) -> str | None:
    """NUMBA_CPU_NAME and NUMBA_CPU_FEATURES (None: unset) as LLVM reads them: a name or a
    feature it does not know, it ignores (a generic x86-64 for a name: slow code), saying so on
    stderr at every compile (asked of LLVM itself, its words caught on descriptor 2); then the
    code they make numba compile, against `host`'s features (default this machine's CPU's:
    `_beyond_the_host`)."""
    for variable, value in (("NUMBA_CPU_NAME", name or ""), ("NUMBA_CPU_FEATURES", features or "")):
        # a hunt: bytes that are not UTF-8 (held as surrogates) ended every command in llvmlite's error
        if not value.isascii():
            return (f"{variable}={_shown(value)} holds characters other than ASCII letters, digits and signs, "
                    f"which no CPU or feature of LLVM's has; unset it or correct it")
    if bad := [f for f in (features or "").split(",") if f and f[0] not in "+-"]:    # LLVM asserts: the process aborts
        return (f"NUMBA_CPU_FEATURES={_shown(features)} holds {bad[0]!r}, which is not +FEATURE or -FEATURE; "
                f"unset it or give features such as +avx2,+fma")
    import llvmlite.binding as llvm
    llvm.initialize_native_target()
    text = said_on_stderr(lambda: llvm.Target.from_default_triple().create_target_machine(cpu=name or "",
                                                                                          features=features or ""))
    if "not a recognized processor" in text:
        return (f"NUMBA_CPU_NAME={_shown(name)} is not a CPU LLVM knows (it would compile for a generic x86-64); "
                f"unset it (numba then compiles for this machine's CPU) or name one, e.g. znver3 or skylake-avx512")
    if m := re.search(r"'(.*?)' is not a recognized feature", text):
        return (f"NUMBA_CPU_FEATURES={_shown(features)} holds {m[1]!r}, a feature LLVM does not know; unset it or "
                f"give features such as +avx2,+fma")
    return _beyond_the_host(name, features, dict(llvm.get_host_cpu_features()) if host is None else host)


# x86-64's baseline, which LLVM's code for this machine needs (hunts: without SSE2 LLVM asserts and the
# process aborts, without SSE it errs, without 64bit or CX8 it stops with "LLVM ERROR")
X86_64_BASELINE = ("64bit", "cmov", "cx8", "fxsr", "mmx", "sse", "sse2", "x87")
# features of no CPU that make code this process cannot run (hunts: LLVM's error, a segfault)
UNRUNNABLE = {"soft-float": "floating point in integer registers, in which LLVM cannot compile numba's code",
              "16bit-mode": "16-bit code", "retpoline-external-thunk": "calls to thunks that no library here defines"}
# what numba's code may use, each feature with IR whose code uses it where the target has it, and
# the instructions that show it (`_beyond_the_host`)
_SUM = "(<{0}> %a, <{0}> %b) {{ %r = {1} <{0}> %a, %b\n ret <{0}> %r }}"
_FMA = ("<2 x double> @f(<2 x double> %a, <2 x double> %b, <2 x double> %c) { %r = call <2 x double> "
        "@llvm.fma.v2f64(<2 x double> %a, <2 x double> %b, <2 x double> %c)\n ret <2 x double> %r }")
ISA_PROBES = {
    "avx512f": ("<8 x double> @f" + _SUM.format("8 x double", "fadd").replace(") {", ") #0 {", 1), r"%zmm"),
    "avx": ("<4 x double> @f" + _SUM.format("4 x double", "fadd"), r"%ymm"),
    "avx2": ("<8 x i32> @f" + _SUM.format("8 x i32", "add"), r"vpaddd\s+%ymm"),
    "fma": (_FMA, r"vfn?m(add|sub)\d{3}"),
    "fma4": (_FMA, r"vfn?m(add|sub)p[sd]\s"),
    "xop": ("<4 x i32> @f(<4 x i32> %a, <4 x i32> %b) { %r = call <4 x i32> @llvm.fshl.v4i32(<4 x i32> %a, "
            "<4 x i32> %a, <4 x i32> %b)\n ret <4 x i32> %r }", r"vprotd"),
    "f16c": ("<4 x float> @f(<4 x half> %a) { %r = fpext <4 x half> %a to <4 x float>\n ret <4 x float> %r }",
             r"vcvtph2ps"),
    "sse4.1": ("<2 x double> @f(<2 x double> %a) { %r = call <2 x double> @llvm.floor.v2f64(<2 x double> %a)\n"
               " ret <2 x double> %r }", r"roundpd"),
    "sse4.2": ("<2 x i1> @f(<2 x i64> %a, <2 x i64> %b) { %r = icmp sgt <2 x i64> %a, %b\n ret <2 x i1> %r }",
               r"pcmpgtq"),
    "ssse3": ("<4 x i32> @f(<4 x i32> %a) { %r = call <4 x i32> @llvm.abs.v4i32(<4 x i32> %a, i1 false)\n"
              " ret <4 x i32> %r }", r"pabsd"),
    "popcnt": ("i64 @f(i64 %a) { %r = call i64 @llvm.ctpop.i64(i64 %a)\n ret i64 %r }", r"popcnt"),
    "lzcnt": ("i64 @f(i64 %a) { %r = call i64 @llvm.ctlz.i64(i64 %a, i1 false)\n ret i64 %r }", r"lzcnt"),
    "bmi": ("i64 @f(i64 %a) { %r = call i64 @llvm.cttz.i64(i64 %a, i1 false)\n ret i64 %r }", r"tzcnt"),
    "bmi2": ("i64 @f(i64 %a, i64 %b) { %r = shl i64 %a, %b\n ret i64 %r }", r"shlx"),
    "movbe": ("i64 @f(ptr %p) { %a = load i64, ptr %p\n %r = call i64 @llvm.bswap.i64(i64 %a)\n ret i64 %r }",
              r"movbe"),
}


def _beyond_the_host(name: str | None, features: str | None, host: dict) -> str | None:
    """Code numba would compile for CPU `name` (None: this one's) with `features` (None: this
    CPU's, as numba takes them where NUMBA_CPU_FEATURES is unset) that this process cannot run:
    a feature of x86-64's baseline removed, one of UNRUNNABLE asked for, or one that `host` (LLVM's
    reading of this CPU) lacks, asked for by name or brought by the CPU's own (with
    NUMBA_CPU_FEATURES set, even empty, LLVM starts from the named CPU's features: a hunt's
    NUMBA_CPU_NAME=skylake-avx512 NUMBA_CPU_FEATURES="" on an AVX2 machine, and NUMBA_CPU_FEATURES=""
    alone on a virtual machine that hides its Zen 4's AVX-512, ended by SIGILL, nothing said).
    What the CPU brings is read from the code LLVM emits for ISA_PROBES."""
    given = ", ".join(f"{v}={_shown(x)}" for v, x in (("NUMBA_CPU_NAME", name), ("NUMBA_CPU_FEATURES", features))
                      if x is not None)
    for item in filter(None, (features or "").split(",")):
        sign, feature = item[0], item[1:]
        if sign == "-" and feature in X86_64_BASELINE:
            return (f"{given} removes {feature}, which every x86-64 CPU has and LLVM's code for one needs; "
                    f"leave -{feature} out")
        if sign == "+" and feature in UNRUNNABLE:
            return (f"{given} asks for {feature} ({UNRUNNABLE[feature]}), code this process cannot run; "
                    f"leave +{feature} out")
        if sign == "+" and host.get(feature) is False:
            return (f"{given} asks for {feature}, which this machine's CPU does not have: numba's code would stop "
                    f"at its first {feature} instruction (SIGILL); leave +{feature} out")
    lacking = [f for f in ISA_PROBES if not host.get(f)]
    if features is None or not lacking:
        return None
    import llvmlite.binding as llvm
    llvm.initialize_native_asmprinter()
    cpu = llvm.get_host_cpu_name() if name is None else name
    functions = [ISA_PROBES[f][0].replace("@f(", f'@"probe {f}"(', 1) for f in lacking]
    module = "".join(f"define {f}\n" for f in functions) + 'attributes #0 = { "min-legal-vector-width"="512" }\n'
    machine = llvm.Target.from_default_triple().create_target_machine(cpu=cpu, features=features, opt=2)
    code = machine.emit_assembly(llvm.parse_assembly(module))
    for part in re.split(r'^"probe ', code, flags=re.M)[1:]:
        feature, _, body = part.partition("\n")
        feature = feature.split('"', 1)[0]
        if re.search(ISA_PROBES[feature][1], body.split(".Lfunc_end", 1)[0]):
            hidden = (f" (LLVM names this CPU {cpu}, whose {feature} this machine does not offer: a virtual "
                      f"machine may hide it)" if name is None else "")
            return (f"{given} has numba compile for {cpu or 'a generic x86-64'} with its own features, {feature} "
                    f"among them, which this machine's CPU does not have{hidden}: numba's code would stop at its "
                    f"first {feature} instruction (SIGILL); unset NUMBA_CPU_FEATURES (numba then keeps this CPU's "
                    f"features) or add -{feature} to it")
    return None


def _matplotlib_problem(value: str) -> str | None:
    """MPLBACKEND as matplotlib reads it (at its import, where a name it does not know raises)."""
    if not value.strip():
        return "MPLBACKEND is set but empty; unset it (nbsymple paper draws with Agg) or name a matplotlib backend"
    try:
        import matplotlib  # noqa: F401 - reads MPLBACKEND
    except ValueError:
        return (f"MPLBACKEND={_shown(value)} is not a matplotlib backend; unset it (nbsymple paper draws with Agg) "
                f"or name one, e.g. agg")
    return None
