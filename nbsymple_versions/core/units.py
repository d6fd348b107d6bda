"""Cluster units (G = 1, cluster mass M = 1, cluster radius r_cl = 1) and their physical values.

The authors' code reads r_cl and M from its `input.txt`: their README suggests "Cluster Radius"
10 (pc) and "Total mass of the sys." 15369 (Msun); the `input.txt` in their repository holds 10 pc
and 480 Msun, for the N = 480 of its `const.h`. This suite uses r_cl = 10 pc and M = 15360 Msun,
15360 stars of 1 Msun at the paper's N = 15360 (its tidal-tail runs, Figs. 6-8; 0.06 % below the
README's 15369), *whatever N*: a run with fewer bodies models the same cluster with heavier stars
(at 1 Msun per star a small-N cluster would lie outside its own tidal radius and dissolve at
once). The authors' own files at their scale and with their constants are read with
`Units(10, 480, "authors")` (`nbsymple run --ics FILE --ics-mass 480 --constants authors`).

Two sets of constants (`Units.constants`, `nbsymple run --constants`) turn cluster units into
physical ones and evaluate the Galaxy:

- `exact` (the default): G = 4.300917e-3 pc (km/s)^2 / Msun and Allen & Santillan's own units,
  G = 1, 1 kpc, 10 km/s, so their mass unit is (10 km/s)^2 kpc / G = 2.3251e7 Msun.
- `authors`: the constants of the authors' code (particle.cu, nbody.h): G = 6.67259e-11 with
  Msun = 1.989e30 kg and pc = 3.086e16 m (4.30065e-3 pc (km/s)^2 / Msun, 6e-5 below ours: the
  velocity unit 3e-5 lower), and the Galaxy's masses as AS91's times 2.32e7 Msun (1.40592e10,
  8.5608e10, 10.7068e10 Msun), 0.22 % lighter than ours: 219.75 km/s at 8.5 kpc instead of 220.
  In cluster units their Galaxy depends on that mass unit alone (G cancels), which is why a run
  from their files needs it to land where their code lands (tests/data/authors).
"""
from dataclasses import dataclass
import math
import numbers

from .checks import as_float, short_repr

G_PC_KMS2_PER_MSUN = 4.300917e-3   # gravitational constant in pc (km/s)^2 / Msun
MYR_PER_PC_PER_KMS = 0.9777922216807891  # 1 pc / (1 km/s) in Myr
AS91_VELOCITY_KMS = 10.0           # Allen & Santillan (1991) velocity unit
AS91_LENGTH_PC = 1000.0            # Allen & Santillan (1991) length unit (1 kpc)
JULIAN_MYR_S = 3.15576e13          # seconds in a Myr of Julian years


@dataclass(frozen=True)
class Constants:
    """G in pc (km/s)^2 / Msun, 1 pc / (1 km/s) in Myr, and the mass unit in Msun that the
    Galaxy's AS91 masses are multiplied by (None: their own, (10 km/s)^2 kpc / G)."""

    name: str
    g_pc_kms2_per_msun: float
    myr_per_pc_per_kms: float
    galaxy_mass_unit_msun: float | None = None


_AUTHORS_PC_KM = 3.086e13          # their pc, 3.086e16 m
CONSTANTS = {c.name: c for c in (
    Constants("exact", G_PC_KMS2_PER_MSUN, MYR_PER_PC_PER_KMS),
    Constants("authors", 6.67259e-11 * 1.989e30 / (_AUTHORS_PC_KM * 1e3) / 1e6, _AUTHORS_PC_KM / JULIAN_MYR_S, 2.32e7),
)}


@dataclass(frozen=True)
class Units:
    """Physical scale of the cluster units: radius in pc, total cluster mass in Msun and the
    name of the constants (`CONSTANTS`: "exact" or "authors") that turn them into km/s and Myr
    and evaluate the Galaxy. A scale whose velocity or time unit or Galaxy scales are zero or
    not finite is refused (ValueError in one sentence), whether given or read from a file."""

    r_cl_pc: float = 10.0
    mass_msun: float = 15360.0
    constants: str = "exact"

    def __post_init__(self):
        if not isinstance(self.constants, str) or self.constants not in CONSTANTS:
            raise ValueError(f"unknown constants {self.constants!r}; choose one of {', '.join(CONSTANTS)}")
        for name in ("r_cl_pc", "mass_msun"):
            value = getattr(self, name)
            if not isinstance(value, numbers.Real) or isinstance(value, bool):
                raise ValueError(f"{name} must be a positive finite number, got {short_repr(value)}")
        r_cl, mass = as_float(self.r_cl_pc), as_float(self.mass_msun)       # NaN beyond float64's range
        if not (r_cl > 0 and mass > 0 and math.isfinite(r_cl * mass)):
            raise ValueError(f"cluster radius and mass must be positive and finite, got "
                             f"r_cl = {short_repr(self.r_cl_pc)} pc, M = {short_repr(self.mass_msun)} Msun")
        object.__setattr__(self, "r_cl_pc", r_cl)          # float64, as given in any Real type (a hunt: np.float32
        object.__setattr__(self, "mass_msun", mass)        # scales in float32, a Fraction's record not JSON)
        derived = ("velocity_kms", "time_myr", "galaxy_length_scale", "galaxy_potential_scale",
                   "galaxy_acceleration_scale")
        # 1e-300 pc and 1e300 Msun give a zero time unit, 5e-324 Msun a zero velocity unit, 1e-200 pc and
        # 1 Msun a zero Galaxy acceleration scale (a review: the Galaxy's pull vanished, its potential stayed)
        try:
            usable = all(math.isfinite(v) and v > 0 for v in (getattr(self, name) for name in derived))
        except (ZeroDivisionError, OverflowError):
            usable = False
        if not usable:
            raise ValueError(f"cluster radius and mass of {short_repr(self.r_cl_pc)} pc and "
                             f"{short_repr(self.mass_msun)} Msun give "
                             f"a velocity, time or Galaxy scale that is zero or not finite")

    @property
    def physical_constants(self) -> Constants:
        """The constants this scale is evaluated with."""
        return CONSTANTS[self.constants]

    @property
    def velocity_kms(self) -> float:
        """Velocity unit v_u = sqrt(G M / r_cl) in km/s (2.570 for the defaults)."""
        return math.sqrt(self.physical_constants.g_pc_kms2_per_msun * self.mass_msun / self.r_cl_pc)

    @property
    def time_myr(self) -> float:
        """Time unit T = sqrt(r_cl^3 / G M), the paper's internal crossing time, in Myr (3.80)."""
        return self.r_cl_pc / self.velocity_kms * self.physical_constants.myr_per_pc_per_kms

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
    def galaxy_mass_unit_msun(self) -> float:
        """The Msun of one AS91 mass unit: (10 km/s)^2 kpc / G = 2.3251e7 (exact), 2.32e7 (authors)."""
        c = self.physical_constants
        if c.galaxy_mass_unit_msun is None:
            return AS91_VELOCITY_KMS ** 2 * AS91_LENGTH_PC / c.g_pc_kms2_per_msun
        return c.galaxy_mass_unit_msun

    @property
    def galaxy_potential_scale(self) -> float:
        """(10 km/s)^2 -> v_u^2; with a Galaxy mass unit of its own (the authors'), an AS91
        mass's potential at 1 kpc in cluster units: mass unit (Msun) * (r_cl / kpc) / M."""
        unit = self.physical_constants.galaxy_mass_unit_msun
        if unit is None:
            return (AS91_VELOCITY_KMS / self.velocity_kms) ** 2
        return unit * self.galaxy_length_scale / self.mass_msun

    @property
    def galaxy_acceleration_scale(self) -> float:
        """(10 km/s)^2 / kpc -> v_u^2 / r_cl."""
        return self.galaxy_potential_scale * self.galaxy_length_scale

    def as_dict(self) -> dict:
        return {"r_cl_pc": self.r_cl_pc, "mass_msun": self.mass_msun, "constants": self.constants,
                "velocity_kms": self.velocity_kms, "time_myr": self.time_myr}
