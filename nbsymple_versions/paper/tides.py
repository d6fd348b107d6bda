"""The cluster's Jacobi (tidal) radius in the Allen & Santillan (1991) Galaxy, and the share of
stars beyond it."""
from __future__ import annotations

import numpy as np

from ..core.galaxy import SUN_RADIUS_KPC, acceleration_as91, circular_velocity_kms
from ..core.units import AS91_VELOCITY_KMS


def _gm_as91(units) -> float:
    """G M of the cluster in Allen & Santillan units, (10 km/s)^2 kpc: M over the AS91 mass unit
    of the run's constants (exact or the authors')."""
    return units.mass_msun / units.galaxy_mass_unit_msun


def jacobi_radius(units, radius_kpc: float = SUN_RADIUS_KPC) -> float:
    """r_J = (G M / (4 Omega^2 - kappa^2))^(1/3) in cluster radii for a cluster on a circular orbit
    of `radius_kpc` in the disk plane, with Omega^2 = Phi_R / R and kappa^2 = Phi_RR + 3 Omega^2
    from the AS91 potential (so 4 Omega^2 - kappa^2 = Omega^2 - Phi_RR; Phi_RR by a central
    difference of step R/1000: relative error 4e-7 at 8.5 kpc, 7e-8 in r_J). 36.7 pc for 15360 Msun
    at 8.5 kpc."""
    r, h = float(radius_kpc), 1e-3 * float(radius_kpc)
    omega2 = -float(acceleration_as91(r, 0.0, 0.0)[0]) / r
    phi_rr = -(float(acceleration_as91(r + h, 0.0, 0.0)[0]) - float(acceleration_as91(r - h, 0.0, 0.0)[0])) / (2 * h)
    return (_gm_as91(units) / (omega2 - phi_rr)) ** (1.0 / 3.0) * units.kpc


def point_mass_radius(units, radius_kpc: float = SUN_RADIUS_KPC) -> float:
    """The point-mass Galaxy's r_t = R (M / 3 M_gal(<R))^(1/3), M_gal from V_c^2 R / G, in cluster
    radii (32.0 pc for 15360 Msun at 8.5 kpc): for comparison only; it ignores the rising
    enclosed mass of a flat rotation curve."""
    vc = float(circular_velocity_kms(radius_kpc))
    m_gal = (vc / AS91_VELOCITY_KMS) ** 2 * radius_kpc * units.galaxy_mass_unit_msun
    return radius_kpc * units.kpc * (units.mass_msun / (3.0 * m_gal)) ** (1.0 / 3.0)


def fraction_beyond(positions: np.ndarray, centre, radius: float, masses=None) -> float:
    """Share of the stars (by number, or by mass with `masses`) farther than `radius` from `centre`."""
    outside = np.linalg.norm(np.asarray(positions) - np.asarray(centre), axis=1) > radius
    if masses is None:
        return float(np.mean(outside))
    return float(np.sum(np.asarray(masses)[outside]) / np.sum(masses))
