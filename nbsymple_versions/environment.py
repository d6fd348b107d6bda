"""The environment variables nbsymple, its libraries and its tools read, checked once at the
start of every command (`entry.command`), before numba, matplotlib or MPI is imported: a value
that is empty or that the reader cannot use is the user's mistake, named in one sentence (exit
status 2), never a library's warning, traceback or error stack later on.

- this suite's own (`OWN`): NBSYMPLE_MAX_DAYS (`core.work`), the asv tooling's NBSYMPLE_BENCH_*
  and BENCH_MACHINE (benchmarks/grid.py, `instruments.provenance`);
- thread counts read by numba, OpenMP and the BLAS libraries, and numba's threading layer (`THREADS`);
- the ranks an MPI launcher gives (`RANKS`): PMI_*, OMPI_COMM_WORLD_*, PMIX_RANK;
- every NUMBA_* variable numba reads, parsed by numba itself (its warning for a value it
  cannot parse becomes the sentence), and MPLBACKEND, checked by matplotlib; each library is
  imported here only when one of its variables is set;
- NUMBA_CACHE_DIR, a folder numba must be able to make and write in (where it cannot, numba
  falls back, silently, to a folder beside the package's sources).
"""
import math
import os
import re
import warnings

BENCH_GRIDS = ("smoke", "default", "large")       # benchmarks/grid.py's GRIDS (a test compares)
VERSION_LETTERS = "ABCDEF"                        # versions.LETTERS (a test compares)
THREADING_LAYERS = ("default", "safe", "forksafe", "threadsafe", "tbb", "omp", "workqueue")


def _whole(minimum: int):
    def test(text: str) -> bool:
        return re.fullmatch(r"\s*\+?\d+\s*", text) is not None and int(text) >= minimum
    return test, f"a whole number of at least {minimum}"


def _positive_number(text: str) -> bool:
    try:
        value = float(text)
    except ValueError:
        return False
    return value > 0 and math.isfinite(value)


def _letters(text: str) -> bool:
    chosen = set(text.strip().upper()) - set(", ")
    return bool(chosen) and chosen <= set(VERSION_LETTERS)


def _machine_name(text: str) -> bool:              # a folder name under results/
    return re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]*", text.strip()) is not None


def _thread_list(text: str) -> bool:               # OpenMP: "4" or a nested "4,2"
    return all(_whole(1)[0](part) for part in text.split(","))


OWN = {
    "NBSYMPLE_MAX_DAYS": (_positive_number, "a positive number of days (the limit on the least time of the work "
                                            "asked for)"),
    "NBSYMPLE_BENCH_GRID": (lambda t: t.strip().lower() in BENCH_GRIDS, f"one of {', '.join(BENCH_GRIDS)}"),
    "NBSYMPLE_BENCH_VERSIONS": (_letters, f"letters of {VERSION_LETTERS}, e.g. AB"),
    "NBSYMPLE_BENCH_THREADS": _whole(1),
    "BENCH_MACHINE": (_machine_name, "a machine name of letters, digits, '.', '_', '+' and '-'"),
}
THREADS = {
    "NUMBA_NUM_THREADS": _whole(1),
    "OMP_NUM_THREADS": (_thread_list, "a whole number of at least 1 (or a comma-separated list of them)"),
    "OPENBLAS_NUM_THREADS": _whole(1),
    "MKL_NUM_THREADS": _whole(1),
    "NUMBA_THREADING_LAYER": (lambda t: t in THREADING_LAYERS, f"one of {', '.join(THREADING_LAYERS)}"),
}
RANKS = {
    "PMI_SIZE": _whole(1), "PMI_RANK": _whole(0), "PMI_LOCAL_SIZE": _whole(1), "PMI_LOCAL_RANK": _whole(0),
    "OMPI_COMM_WORLD_SIZE": _whole(1), "OMPI_COMM_WORLD_RANK": _whole(0), "PMIX_RANK": _whole(0),
}
RANK_OF_SIZE = {"PMI_RANK": "PMI_SIZE", "OMPI_COMM_WORLD_RANK": "OMPI_COMM_WORLD_SIZE"}


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


def problem(environ=None) -> str | None:
    """One sentence naming the first variable of `environ` (default `os.environ`) that is set to
    a value its reader cannot use, else None."""
    env = os.environ if environ is None else environ
    for table in (OWN, THREADS, RANKS):
        for name, (test, wanted) in table.items():
            if name not in env:
                continue
            value = env[name]
            if not value.strip():
                return f"{name} is set but empty; unset it or set it to {wanted}"
            if not test(value):
                return f"{name}={_shown(value)} is not {wanted}; unset it or correct it"
    for rank, size in RANK_OF_SIZE.items():
        if rank in env and size in env and int(env[rank]) >= int(env[size]):
            return f"{rank}={env[rank]} is not below {size}={env[size]}; an MPI launcher sets both, rank < size"
    if env.get("NUMBA_CACHE_DIR", "").strip():      # empty: no cache, as numba reads it
        if (found := _cache_folder_problem(env["NUMBA_CACHE_DIR"])) is not None:
            return found
    if any(name.startswith("NUMBA_") for name in env):
        if (found := _numba_problem()) is not None:
            return found
    if "MPLBACKEND" in env:
        return _matplotlib_problem(env["MPLBACKEND"])
    return None


def _cache_folder_problem(value: str) -> str | None:
    """NUMBA_CACHE_DIR (relative to the current folder, as numba takes it): a folder, or one that
    can be made in the nearest folder above it that exists, writable either way."""
    named = probe = os.path.abspath(value)
    while not os.path.lexists(probe) and os.path.dirname(probe) != probe:
        probe = os.path.dirname(probe)
    where = "it" if probe == named else probe
    if not os.path.isdir(probe):
        why = f"{where} is not a folder"
    elif not os.access(probe, os.W_OK | os.X_OK):
        why = f"{where} cannot be written"
    else:
        return None
    return f"NUMBA_CACHE_DIR={_shown(value)} is not a folder numba can keep its cache in ({why}); unset it or name " \
           f"a writable folder"


def _numba_problem() -> str | None:
    """numba's own reading of its NUMBA_* variables (at its import): a value it cannot parse,
    which it would report as a warning with a traceback and then ignore."""
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
