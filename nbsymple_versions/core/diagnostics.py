"""Conserved quantities: total energy (cluster + Galaxy) and angular momentum about the
Galactic centre, in cluster units, and relative errors. Float64 NumPy, O(N^2) for W."""
import numpy as np

from . import galaxy
from .reference import pairwise_potential_energy


def kinetic_energy(state) -> float:
    return 0.5 * float(state.m @ (state.v * state.v).sum(axis=0))


def energy(state) -> float:
    """E = K + W + sum_i m_i Phi_gal(x_i). Conserved by the dynamics."""
    w = pairwise_potential_energy(state.positions, state.m, state.eps)
    phi = galaxy.potential(state.positions, state.units)
    return kinetic_energy(state) + w + float(state.m @ phi)


def angular_momentum(state) -> np.ndarray:
    """L = sum_i m_i x_i x v_i (3,), about the Galactic centre. Not exactly conserved: the
    Galaxy exerts a torque (L_z is for an axisymmetric field)."""
    return np.cross(state.positions, state.velocities).T @ state.m


def relative_error(value, initial) -> float:
    """|value - initial| / |initial| (Euclidean norms for vectors)."""
    value, initial = np.asarray(value, dtype=np.float64), np.asarray(initial, dtype=np.float64)
    return float(np.linalg.norm(value - initial) / np.linalg.norm(initial))


def angular_momentum_error(value, initial) -> float:
    """|L_z - L_z0| / |L0|: the axisymmetric Galaxy conserves L_z exactly, while its torque
    changes L_x and L_y for real (so they are no error)."""
    value, initial = np.asarray(value, dtype=np.float64), np.asarray(initial, dtype=np.float64)
    return float(abs(value[2] - initial[2]) / np.linalg.norm(initial))
