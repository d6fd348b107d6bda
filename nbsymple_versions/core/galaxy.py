"""Allen & Santillan (1991) Milky Way: bulge + disk + halo, vectorised with NumPy.

Formulas are in AS91 units (G = 1, length 1 kpc, velocity 10 km/s, so the mass unit is
(10 km/s)^2 kpc / G = 2.3251e7 Msun). `acceleration` and `potential` take cluster-unit
positions and return cluster-unit values through the scale factors of `Units`.
The same formulas for one point, in plain `math`, are the kernels' source
(`nbsymple_versions/core/as91.py`); this module is the reference they are checked against.
"""
import numpy as np

from .units import Units

# Table 1 of Allen & Santillan (1991), in their units
M1, B1 = 606.0, 0.3873                 # bulge (Plummer)
M2, A2, B2 = 3690.0, 5.3178, 0.25      # disk (Miyamoto-Nagai)
M3, A3 = 4615.0, 12.0                  # halo
HALO_GAMMA = 1.02
HALO_CUTOFF = 100.0                    # kpc; beyond it the halo mass stops growing
HALO_PHI_CONST = 3.186322775           # ln(1 + (100/a3)^1.02) + 1.02 a3 M(100) / (100 M3)

# The solar circle of the AS91 model: the paper's cluster orbit (radius and circular speed).
SUN_RADIUS_KPC = 8.5
SUN_SPEED_KMS = 220.0


def halo_mass(r):
    """Halo mass inside radius r (kpc), M(r) = M3 (r/a3)^2.02 / (1 + (r/a3)^1.02), frozen beyond 100 kpc."""
    u = np.minimum(r, HALO_CUTOFF) / A3
    return M3 * u ** (1.0 + HALO_GAMMA) / (1.0 + u ** HALO_GAMMA)


def potential_as91(x, y, z):
    """Potential in (10 km/s)^2 at a position in kpc (arrays or scalars)."""
    x, y, z = (np.asarray(c, dtype=np.float64) for c in (x, y, z))
    r2 = x * x + y * y + z * z
    r = np.sqrt(r2)
    bulge = -M1 / np.sqrt(r2 + B1 * B1)
    disk = -M2 / np.sqrt(x * x + y * y + (A2 + np.sqrt(z * z + B2 * B2)) ** 2)
    rc = np.minimum(r, HALO_CUTOFF)
    u = rc / A3
    # inside 100 kpc: (M3 / 1.02 a3) [ln(1 + u^1.02) - C]; outside: -M(100)/r (the last term)
    with np.errstate(divide="ignore", invalid="ignore"):
        outside = np.where(r > rc, halo_mass(r) * (1.0 / rc - 1.0 / r), 0.0)
    halo = M3 / (HALO_GAMMA * A3) * (np.log1p(u ** HALO_GAMMA) - HALO_PHI_CONST) + outside
    return bulge + disk + halo


def acceleration_as91(x, y, z):
    """Acceleration (ax, ay, az) in (10 km/s)^2 / kpc at a position in kpc."""
    x, y, z = (np.asarray(c, dtype=np.float64) for c in (x, y, z))
    r2 = x * x + y * y + z * z
    bulge = -M1 / (r2 + B1 * B1) ** 1.5
    zb = np.sqrt(z * z + B2 * B2)
    s = A2 + zb
    disk = -M2 / (x * x + y * y + s * s) ** 1.5
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.sqrt(r2)
        u = np.minimum(r, HALO_CUTOFF) / A3              # M(r) / r^3 = M3 (u/r)^3 u^-0.98 / (1 + u^1.02):
        halo = np.where(r > 0, -M3 * (u / r) ** 3 * u ** (HALO_GAMMA - 2.0) / (1.0 + u ** HALO_GAMMA), 0.0)
        # no r^3, which underflows within 1e-108 kpc; the force M(r)/r^2 ~ r^0.02 has the finite limit 0
    fxy = bulge + disk + halo
    fz = bulge + disk * s / zb + halo
    return fxy * x, fxy * y, fz * z


def circular_velocity_kms(R_kpc):
    """Circular velocity in the disk plane, km/s, at galactocentric radius R (kpc)."""
    ax, _, _ = acceleration_as91(R_kpc, 0.0, 0.0)
    return 10.0 * np.sqrt(np.asarray(R_kpc) * -ax)


def acceleration(pos, units: Units = Units()):
    """Galactic acceleration in cluster units at cluster-unit positions pos (N, 3)."""
    s = units.galaxy_length_scale
    a = acceleration_as91(pos[:, 0] * s, pos[:, 1] * s, pos[:, 2] * s)
    return np.stack(a, axis=1) * units.galaxy_acceleration_scale


def potential(pos, units: Units = Units()):
    """Galactic potential (per unit mass) in cluster units at positions pos (N, 3)."""
    s = units.galaxy_length_scale
    return potential_as91(pos[:, 0] * s, pos[:, 1] * s, pos[:, 2] * s) * units.galaxy_potential_scale
