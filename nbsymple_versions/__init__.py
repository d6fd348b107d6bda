"""nbsymple-versions: the five code versions of NBSymple (Capuzzo-Dolcetta,
Mastrobuono-Battisti & Maschietti 2011) on one symplectic N-body core, and a sixth across MPI
ranks. The public names below load on first use, so that `nbsymple` starts (and answers a
Ctrl-C) before numba is imported."""
from importlib import import_module

_PUBLIC = {"TaskClock": ".core.clock", "State": ".core.ics", "add_black_hole": ".core.ics",
           "make_cluster": ".core.ics", "place_on_orbit": ".core.ics", "uniform_sphere": ".core.ics",
           "Units": ".core.units", "Simulation": ".simulation", "VersionUnavailable": ".versions",
           "all_versions": ".versions", "get_version": ".versions"}
__all__ = sorted(_PUBLIC)
__version__ = "0.1.0"


def __getattr__(name):
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_PUBLIC[name], __name__), name)


def __dir__():
    return sorted(set(globals()) | set(_PUBLIC))
