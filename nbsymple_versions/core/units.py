"""Cluster units (G = 1, cluster mass M = 1, cluster radius r_cl = 1) and their physical values.

The defaults follow the authors' README: r_cl = 10 pc and M = 15360 Msun *whatever N*, so a
run with fewer bodies models the same cluster with heavier stars (at 1 Msun per star a
small-N cluster would lie outside its own tidal radius and dissolve at once).
"""
from dataclasses import dataclass
import math

G_PC_KMS2_PER_MSUN = 4.300917e-3   # gravitational constant in pc (km/s)^2 / Msun
MYR_PER_PC_PER_KMS = 0.9777922216807891  # 1 pc / (1 km/s) in Myr
AS91_VELOCITY_KMS = 10.0           # Allen & Santillan (1991) velocity unit
AS91_LENGTH_PC = 1000.0            # Allen & Santillan (1991) length unit (1 kpc)


@dataclass(frozen=True)
class Units:
    """Physical scale of the cluster units: radius in pc and total cluster mass in Msun."""

    r_cl_pc: float = 10.0
    mass_msun: float = 15360.0

    def __post_init__(self):
        if not (self.r_cl_pc > 0 and self.mass_msun > 0 and math.isfinite(self.r_cl_pc * self.mass_msun)):
            raise ValueError(f"cluster radius and mass must be positive and finite, got "
                             f"r_cl = {self.r_cl_pc} pc, M = {self.mass_msun} Msun")

    @property
    def velocity_kms(self) -> float:
        """Velocity unit v_u = sqrt(G M / r_cl) in km/s (2.570 for the defaults)."""
        return math.sqrt(G_PC_KMS2_PER_MSUN * self.mass_msun / self.r_cl_pc)

    @property
    def time_myr(self) -> float:
        """Time unit T = sqrt(r_cl^3 / G M), the paper's internal crossing time, in Myr (3.80)."""
        return self.r_cl_pc / self.velocity_kms * MYR_PER_PC_PER_KMS

    @property
    def kpc(self) -> float:
        """One kiloparsec in cluster radii (100 for the defaults)."""
        return AS91_LENGTH_PC / self.r_cl_pc

    def from_kms(self, v_kms):
        return v_kms / self.velocity_kms

    def to_myr(self, t):
        return t * self.time_myr

    # Allen & Santillan (1991) formulas are evaluated in their own units (G = 1, kpc, 10 km/s);
    # these factors carry their results into cluster units.
    @property
    def galaxy_length_scale(self) -> float:
        """Cluster radii -> kpc."""
        return self.r_cl_pc / AS91_LENGTH_PC

    @property
    def galaxy_potential_scale(self) -> float:
        """(10 km/s)^2 -> v_u^2."""
        return (AS91_VELOCITY_KMS / self.velocity_kms) ** 2

    @property
    def galaxy_acceleration_scale(self) -> float:
        """(10 km/s)^2 / kpc -> v_u^2 / r_cl."""
        return self.galaxy_potential_scale * self.galaxy_length_scale

    def as_dict(self) -> dict:
        return {"r_cl_pc": self.r_cl_pc, "mass_msun": self.mass_msun,
                "velocity_kms": self.velocity_kms, "time_myr": self.time_myr}
