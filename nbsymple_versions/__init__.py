"""nbsymple-versions: the five code versions of NBSymple (Capuzzo-Dolcetta,
Mastrobuono-Battisti & Maschietti 2011) on one symplectic N-body core."""
from .core.clock import TaskClock
from .core.ics import State, add_black_hole, make_cluster, place_on_orbit, uniform_sphere
from .core.units import Units
from .simulation import Simulation
from .versions import VersionUnavailable, all_versions, get_version

__all__ = ["Simulation", "State", "TaskClock", "Units", "VersionUnavailable", "add_black_hole",
           "all_versions", "get_version", "make_cluster", "place_on_orbit", "uniform_sphere"]
__version__ = "0.1.0"
