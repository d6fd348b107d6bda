"""nbsymple-versions: the five code versions of NBSymple (Capuzzo-Dolcetta,
Mastrobuono-Battisti & Maschietti 2011) on one symplectic N-body core, and a sixth across MPI
ranks. The public names below load on first use, so that `nbsymple` starts (and answers a
Ctrl-C) before numba is imported. They are also all the asv suite (benchmarks/) reaches: asv
measures older commits with today's benchmarks, so what they use must stay public. A name
that is a module of its own (`peers`, `cpu_asm`, `gpu_asm`, `mpi_timing`, wherever it
lives) is that module."""
from importlib import import_module

from .loading import located_by_python_m, quiet_while_loading

if located_by_python_m(__name__):     # `python -m nbsymple_versions....`: a Ctrl-C while it loads, quietly
    quiet_while_loading()

_PUBLIC = {"TaskClock": ".core.clock", "State": ".core.ics", "add_black_hole": ".core.ics",
           "make_cluster": ".core.ics", "place_on_orbit": ".core.ics", "timing_state": ".core.ics",
           "uniform_sphere": ".core.ics",
           "Units": ".core.units", "Simulation": ".simulation", "VersionUnavailable": ".versions",
           "all_versions": ".versions", "get_version": ".versions",
           # the stepping loop and the diagnostics, as `Simulation` uses them
           "advance": ".core.integrator", "get_scheme": ".core.schemes", "energy_parts": ".core.diagnostics",
           "angular_momentum": ".core.diagnostics", "angular_momentum_error": ".core.diagnostics",
           "internal_energy_error": ".core.diagnostics", "relative_error": ".core.diagnostics",
           # validation against the float64 reference (`nbsymple check`)
           "check_pipeline": ".validation", "check_host_tasks": ".validation", "TOLERANCE": ".validation",
           "HOST_TOLERANCE": ".validation", "FRAME_KPC": ".validation",
           # the kernels' machine code counted for fixed targets, and the peer codes side by side
           "cpu_asm": ".instruments.cpu_asm", "gpu_asm": ".instruments.gpu_asm", "peers": ".instruments.peers",
           "mpi_timing": ".instruments.mpi_timing"}
__all__ = sorted(_PUBLIC)
__version__ = "0.1.0"


def __getattr__(name):
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = import_module(_PUBLIC[name], __name__)
    return module if module.__name__.rsplit(".", 1)[-1] == name else getattr(module, name)


def __dir__():
    return sorted(set(globals()) | set(_PUBLIC))
