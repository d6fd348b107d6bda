"""The package as the suite reaches it: its public names (`public`), numba's on-disk cache of
the kernels, the timing state and a version's force pipeline.

The package through its public names
------------------------------------
The suite reaches the package only through `public`, which looks a name of
`nbsymple_versions.__all__` up when it is used: a name the measured commit does not make public
is asv's skip (SkipNotImplemented) saying so, not an import error that loses the whole module.
Where the commit predates a name but had the same thing under another (validation, the stepping
loop), the fallback below keeps the pairwise and step benchmarks measurable back to 2528594a.
Importing the suite loads nothing that touches a GPU (a test checks): asv's fork server imports
it once, with the package's modules the benchmarks use and numba's CPU target set up, and forks
every benchmark from it, each to initialise CUDA itself. The CPU kernels compile once per machine
into numba's on-disk cache (`kernel_cache_folder`); validation still runs in every `setup`.
"""
import os
from pathlib import Path

import numba

import nbsymple_versions  # reached through `public` only

try:                                    # asv_runner (with asv) skips a combination on this
    from asv_runner.benchmarks.mark import SkipNotImplemented
except ImportError:                     # pragma: no cover - asv not installed
    class SkipNotImplemented(NotImplementedError):
        pass

CHECKOUT = Path(__file__).resolve().parents[1]


def kernel_cache_folder() -> str:
    """numba's on-disk cache for the suite's kernels: NUMBA_CACHE_DIR if set, else
    ~/.cache/nbsymple-versions/numba (XDG_CACHE_HOME), per user and machine; "" (no cache: every
    process compiles) where that folder lies inside this checkout."""
    given = numba.config.CACHE_DIR
    base = Path(given or os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser().resolve()
    folder = base if given else base / "nbsymple-versions" / "numba"
    return "" if folder.is_relative_to(CHECKOUT) else str(folder)


# every process of the suite compiles each kernel once per machine, not once per process: the
# package's CPU kernels take numba's cache folder when they load (after this, in setup)
numba.config.CACHE_DIR = kernel_cache_folder()


class _Public:
    """The package's public names (`nbsymple_versions.__all__`), looked up when used."""

    def has(self, name: str) -> bool:
        """Whether the measured commit's package makes `name` public."""
        return name in getattr(nbsymple_versions, "__all__", ())

    def __getattr__(self, name: str):
        if not self.has(name):
            raise SkipNotImplemented(f"this commit's nbsymple_versions has no public {name}")
        return getattr(nbsymple_versions, name)

    def load(self, *names):
        """Import now the modules of those of `names` the measured commit makes public."""
        for name in filter(self.has, names):
            getattr(self, name)


public = _Public()

# Done once here, in the process asv forks every benchmark from, rather than in each: loading the
# package's modules that the benchmarks use (none touches a GPU, nor compiles) and numba's one-time
# set-up of its CPU target (0.3 s). The compile benchmark times a fresh interpreter of its own.
public.load("get_version", "make_cluster", "TaskClock", "check_pipeline", "advance", "get_scheme", "energy_parts")
numba.njit(lambda: 0)()

# the timing state at commits whose package does not make `timing_state` public (validation
# inputs are fresh: no seed)
LEGACY_TIMING = {"seed": 2011, "exact_max_n": 4096}


def timing_state(n: int):
    """The package's public `timing_state` (the paper's set-up, seed 2011, the exact potential up
    to N = 4096); at a commit from before it was public, the same state from `make_cluster`."""
    if public.has("timing_state"):
        return public.timing_state(int(n))
    return public.make_cluster(int(n), seed=LEGACY_TIMING["seed"],
                               exact_potential=int(n) <= LEGACY_TIMING["exact_max_n"])


def build_pipeline(letter: str, state, precision: str, clock=None, **options):
    """`get_version(letter).pipeline(...)`, with 'unavailable here' turned into an asv skip."""
    version = public.get_version(letter)
    ok, reason = version.available(options["backend"]) if "backend" in options else version.available()
    if not ok:
        raise NotImplementedError(f"version {letter} is not available: {reason}")
    try:
        return version.pipeline(state, precision, clock, **options)
    except public.VersionUnavailable as e:
        raise NotImplementedError(str(e)) from None
