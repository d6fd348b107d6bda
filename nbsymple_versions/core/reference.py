"""Float64 NumPy reference forces, for validation only (never timed); the potential energy W
is `diagnostics.potential_energy`, the one W of the project.

Positions are (N, 3) arrays in cluster units (G = 1); work is chunked over targets so that
N = 16384 needs only tens of MB.
"""
import numpy as np

from . import galaxy
from .units import Units

_CHUNK_ELEMENTS = 1 << 21   # target x source pairs per chunk


def _chunks(n):
    step = max(1, _CHUNK_ELEMENTS // max(n, 1))
    for start in range(0, n, step):
        yield slice(start, min(n, start + step))


def pairwise_acceleration(pos, mass, eps):
    """a_i = sum_j m_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^(3/2), all N sources (j = i adds 0)."""
    pos = np.asarray(pos, dtype=np.float64)
    mass = np.asarray(mass, dtype=np.float64)
    acc = np.empty_like(pos)
    for rows in _chunks(len(pos)):
        d = pos[None, :, :] - pos[rows, None, :]                  # (chunk, N, 3): x_j - x_i
        r2 = np.einsum("ijk,ijk->ij", d, d) + eps * eps
        w = mass[None, :] / (r2 * np.sqrt(r2))
        acc[rows] = np.einsum("ij,ijk->ik", w, d)
    return acc


def galactic_acceleration(pos, units: Units = Units()):
    """Allen & Santillan (1991) acceleration in cluster units at positions (N, 3)."""
    return galaxy.acceleration(np.asarray(pos, dtype=np.float64), units)

