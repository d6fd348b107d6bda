"""Version E's fused kernels: C's pairwise sum and the Allen & Santillan (1991) field at each
target (float64, written as float64) in one kernel, for both of C's backends.

`GALAXY` is what E hands C's engine (`gpu_pairwise.engine.Galaxy`): the numba-cuda kernel
(`fused_numba.py`), the CUDA C kernels (`fused.cu`, compiled after C's `nbody.cu`) with the
field's constants from `core/galaxy.py`, and the kernels' two float64 arguments. Nothing here
imports numba-cuda or CuPy.
"""
from functools import lru_cache
from importlib import resources

import numpy as np

from ..core import galaxy

_CONSTANTS = ("M1", "B1", "M2", "A2", "B2", "M3", "A3", "HALO_GAMMA", "HALO_CUTOFF")


@lru_cache(maxsize=1)
def _fused_cu() -> str:
    return resources.files(__package__).joinpath("fused.cu").read_text(encoding="utf-8")


class FusedGalaxy:
    """The Galaxy inside the kernel (see `gpu_pairwise.engine.Galaxy`)."""

    name = "fused"                                  # kernels fused_tiled, fused_plain
    scalars = ("length_scale", "accel_scale")

    def arguments(self, units) -> tuple:
        """Cluster radii -> kpc, and (10 km/s)^2/kpc -> cluster accelerations."""
        return np.float64(units.galaxy_length_scale), np.float64(units.galaxy_acceleration_scale)

    def numba_kernel(self, record, sources):
        from .fused_numba import fused_source
        return fused_source(record, sources)

    def cuda_c(self) -> str:
        return _fused_cu()

    def cuda_c_options(self) -> tuple[str, ...]:
        """The Allen & Santillan constants as -D options (one definition for every kernel)."""
        return tuple(f"-DAS91_{n}=({float(getattr(galaxy, n))!r})" for n in _CONSTANTS)


GALAXY = FusedGalaxy()
