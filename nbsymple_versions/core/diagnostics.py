"""Conserved quantities in cluster units (G = M = r_cl = 1): energy and angular momentum about
the Galactic centre, and their errors. Float64 NumPy; O(N^2) for the mutual potential W.

Two energy errors, of the same conserved total E = K + W + sum_i m_i Phi_gal(x_i):

- `relative_error(E, E0)` = |E - E0| / |E0|, as the paper's code defines it. E is dominated by
  the cluster's orbital energy in the Galaxy (-1.8e4 against an internal energy of -0.4 at
  8.5 kpc), so one float64 ulp of E is ~1e-11 of the cluster's own energy: this figure cannot
  see the cluster's errors below that.
- `internal_energy_error(parts, parts0)` = |E - E0| / |K_int0 + W0|, the change of the same
  total in units of the cluster's internal energy (K_int in the centre-of-mass frame). E is
  split exactly as

      E = [1/2 M |V|^2 + M Phi(B)]  +  [K_int + W]  +  V . sum_i m_i u_i  +  sum_i m_i [Phi(x_i) - Phi(B)]
          orbital                      internal       cross (~0)             tidal

  with V the float64 mass-weighted mean velocity, u_i = v_i - V, B the mean position; the
  identity holds for any V and B, so their rounding costs nothing. Each part is summed with
  `math.fsum`; the tidal differences Phi(x_i) - Phi(B) come from differences of R^2 and z^2
  (`galaxy_potential_difference`), the orbital Phi(B) - Phi(B0) from 40-digit decimals and
  |V|^2 - |V0|^2 from exact fractions, so E - E0 is accurate to ~1e-15 of the internal
  energy, where |E - E0| / |E0| rounds at ~1e-11 of it.

Every error is a number or None: a relative error whose reference is zero (L0 of bodies at
rest, the internal energy of a lone body) or not representable in float64, or whose value is
not, is None, and `undefined_reason` says which in words. Nothing here raises on a state whose
float64 energies are finite: `energy_problem` names the states that are not (bodies so far out
or so fast that the squares their energies sum leave float64's range), which `Simulation`
refuses before it starts.
"""
from dataclasses import asdict, dataclass, field
from decimal import Decimal, localcontext
from fractions import Fraction
import math
import numbers
import sys

import numpy as np

from . import galaxy
from .galaxy import A2, A3, B1, B2, HALO_CUTOFF, HALO_GAMMA, HALO_PHI_CONST, M1, M2, M3
from .checks import callable_or_none, instance, real_array
from .ranks import ONE_RANK
from .units import Units

CHUNK_PAIRS = 1 << 21          # target x source pairs per chunk of the W sum
# Largest |coordinate| (cluster radii and kpc) and |velocity component| of a state whose energies
# can be represented: the parts of E sum squares and products of differences of such numbers (at
# most 16 times the largest square, in `energy_parts`; 32 leaves room for rounding), which then
# stay below float64's maximum.
COMPONENT_LIMIT = math.sqrt(sys.float_info.max / 32)          # 2.4e153
PLAIN_NORM = (1e-140, 1e140)   # entries whose squares are normal float64: np.linalg.norm as it is
# One rounding of a float64 E is at most 2^-52 of |E|: a total error |E - E0| / |E0| of up to two of
# them is E's rounding, not a measured change (SI6A dp after 1000 steps: 2.01e-16, one rounding of
# E0 = -1.8e4, where the internal error gives 2.2e-17 in the committed Zen 3 results, 2.9e-17 at
# 9a1bce3 on AVX-512); the internal error measures it.
E_RESOLUTION = 2 * 2.0 ** -52


def at_resolution(total_error) -> bool:
    """Whether a total energy error |E - E0| / |E0| is within two float64 roundings of E (0 too)."""
    return total_error is not None and math.isfinite(total_error) and 0 <= total_error <= E_RESOLUTION


def _sum(values) -> float:
    """`math.fsum`, or where the terms are not finite or their sum overflows, the float sum
    (inf or NaN) instead of an exception."""
    try:
        return math.fsum(values)
    except (OverflowError, ValueError):
        with np.errstate(all="ignore"):
            return float(np.sum(np.asarray(values, dtype=np.float64)))


def _norm(a) -> float:
    """The Euclidean norm of a float64 array: NumPy's where the largest |entry| lies in
    PLAIN_NORM (the figures of every ordinary run, bit for bit), else scaled by that entry,
    so that squares below or above float64's range do not make it 0 or inf."""
    a = np.asarray(a, dtype=np.float64)
    big = float(np.abs(a).max(initial=0.0))
    with np.errstate(all="ignore"):
        if big == 0 or not math.isfinite(big) or PLAIN_NORM[0] <= big <= PLAIN_NORM[1]:
            return float(np.linalg.norm(a))
        return big * float(np.linalg.norm(a / big))


def _ratio(numerator: float, reference: float) -> float | None:
    """numerator / reference, or None where the reference is zero or either is not finite, or
    the quotient overflows."""
    if reference == 0 or not (math.isfinite(reference) and math.isfinite(numerator)):
        return None
    ratio = numerator / reference
    return ratio if math.isfinite(ratio) else None


def undefined_reason(reference, symbol: str) -> str:
    """Why a relative error against `reference` (called `symbol`, e.g. "L0") is None, in words
    for the report: "L0 = 0", "L0 is not representable in float64", or that the error itself is not."""
    norm = _norm(reference)
    if norm == 0:
        return f"{symbol} = 0"
    if not math.isfinite(norm):
        return f"{symbol} is not representable in float64"
    return "the change is not representable in float64"


def energy_problem(state) -> str | None:
    """One sentence when the float64 energies of `state` cannot be represented, else None (O(N)):
    a |coordinate| (in cluster radii or kpc) or |velocity component| above COMPONENT_LIMIT, whose
    squares the energies sum, or a kinetic energy or energy in the Galaxy that is not finite."""
    s = max(1.0, state.units.galaxy_length_scale)
    for what, a, limit in (("position", state.x, COMPONENT_LIMIT / s), ("velocity", state.v, COMPONENT_LIMIT)):
        big = np.abs(a).max(axis=0, initial=0.0)
        if (big > limit).any():
            i = int(np.argmax(big))
            return (f"body {i}'s {what} has a component of {big[i]:.3g}, beyond the {limit:.2g} up to which "
                    f"float64 holds the squares its energy sums, so the bodies' energies cannot be represented")
    with np.errstate(all="ignore"):
        energies = {"kinetic energy": 0.5 * state.m * (state.v * state.v).sum(axis=0),
                    "energy in the Galaxy": state.m * galaxy.potential(state.positions, state.units)}
    for what, e in energies.items():
        bad = np.flatnonzero(~np.isfinite(e))
        if len(bad) or not math.isfinite(_sum(e)):
            i = int(bad[0]) if len(bad) else int(np.argmax(np.abs(e)))
            return (f"the bodies' {what} is beyond float64's range (body {i} has mass {state.m[i]:.3g}), "
                    f"so it cannot be represented")
    return None


def cluster_problem(state) -> str | None:
    """One sentence when `state` holds bodies no run steps to, else None (O(N)): energies float64
    cannot represent (`energy_problem`), or every body at one point, which is no cluster (an
    initial-condition file, a checkpoint, a snapshot `paper` reads)."""
    if (problem := energy_problem(state)) is not None:
        return problem
    if state.n > 1 and (state.x == state.x[:, :1]).all():
        return f"all {state.n} bodies stand at one point, which is no cluster"
    return None


def kinetic_energy(state) -> float:
    return 0.5 * float(state.m @ (state.v * state.v).sum(axis=0))


def potential_energy(positions, m, eps, progress=None, world=ONE_RANK) -> float:
    """W = -sum_{i<j} m_i m_j / sqrt(|x_i - x_j|^2 + eps^2) for (N, 3) positions: rows of targets
    in chunks, each chunk's sum rounded once and the chunks added with `math.fsum`.

    The one W of the project: the initial conditions, the diagnostics and version F use it.
    Across ranks (`world`, version F) chunk c is summed by rank c mod K with the same rows and
    operations, and the vector of chunk sums is summed over ranks (one non-zero term per entry:
    exact), so W is bit for bit the one-process value on every rank.
    `progress(done, total)` is called after each chunk of targets (on rank 0)."""
    pos = np.asarray(positions, dtype=np.float64)
    n = len(pos)
    step = max(1, CHUNK_PAIRS // max(n, 1))
    starts = range(0, n, step)
    sums = np.zeros(len(starts))
    # heavy bodies: W = -inf, refused by `Simulation`; a softening whose square underflows (eps
    # below 1e-154) divides by zero in the self terms, set to 0 below
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for c, start in enumerate(starts):
            if c % world.size != world.rank:
                continue
            rows = slice(start, min(n, start + step))
            d = pos[None, :, :] - pos[rows, None, :]
            r2 = np.einsum("ijk,ijk->ij", d, d) + eps * eps
            phi = m[None, :] / np.sqrt(r2)
            k = np.arange(rows.stop - rows.start)
            phi[k, k + start] = 0.0                                   # no self term
            sums[c] = float(m[rows] @ phi.sum(axis=1))
            if progress is not None and world.is_root:
                progress(min(n, rows.stop * world.size), n)
    return -0.5 * _sum(world.sum(sums).tolist())


def energy(state, w=None) -> float:
    """E = K + W + sum_i m_i Phi_gal(x_i), the paper's total. Conserved by the dynamics.
    `w` reuses an already computed W."""
    w = potential_energy(state.positions, state.m, state.eps) if w is None else w
    phi = galaxy.potential(state.positions, state.units)
    return kinetic_energy(state) + w + float(state.m @ phi)


def galaxy_potential_difference(R2, z2, dR2, dz2, R2_new=None, z2_new=None):
    """Phi(R^2 + dR^2, z^2 + dz^2) - Phi(R^2, z^2) of Allen & Santillan (1991), in their units,
    for cylindrical R^2 = x^2 + y^2 and z^2 (arrays broadcast). Each component is written in
    the differences (sqrt(a + d) - sqrt(a) = d / (sqrt(a + d) + sqrt(a)), log1p, expm1), so the
    result is accurate relative to itself, not to |Phi| ~ 1400: this is what lets the tidal and
    orbital parts of E be differenced below float64 rounding of Phi. `R2_new`, `z2_new`: the
    displaced points' own R^2 and z^2 where known (default R2 + dR2, z2 + dz2, whose rounding
    of R2 swamps a point near the centre, where the halo's r^1.02 cusp is steep)."""
    R2, z2, dR2, dz2 = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (R2, z2, dR2, dz2)))
    R2_new = np.maximum(R2 + dR2, 0.0) if R2_new is None else np.asarray(R2_new, dtype=np.float64)
    z2_new = np.maximum(z2 + dz2, 0.0) if z2_new is None else np.asarray(z2_new, dtype=np.float64)
    r2, dr2 = R2 + z2, dR2 + dz2
    sb0, sb1 = np.sqrt(r2 + B1 * B1), np.sqrt(r2 + dr2 + B1 * B1)
    bulge = M1 * (dr2 / (sb0 + sb1)) / (sb0 * sb1)
    q0, q1 = np.sqrt(z2 + B2 * B2), np.sqrt(z2 + dz2 + B2 * B2)
    dq = dz2 / (q0 + q1)
    s2 = R2 + (A2 + q0) ** 2
    ds2 = dR2 + dq * (2.0 * A2 + q0 + q1)
    sd0, sd1 = np.sqrt(s2), np.sqrt(s2 + ds2)
    disk = M2 * (ds2 / (sd0 + sd1)) / (sd0 * sd1)
    r0, r1 = np.sqrt(r2), np.sqrt(R2_new + z2_new)
    # the halo: its log form up to the cut-off c = 100 kpc, at radii held to c; beyond c, the
    # point mass M(c): M(c) (1/c - 1/r) = M(c) (r^2 - c^2) / ((r + c) c r). Each distance to or
    # between radii is taken from differences of squares, never of rounded radii (the plain
    # difference of two Phi beyond c kept ~1e-12 of a cluster's E_int: a hunt)
    c = HALO_CUTOFF
    e0 = r2 - c * c                             # r0^2 - c^2 and r1^2 - c^2
    e1 = e0 + dr2
    rc0, rc1 = np.minimum(r0, c), np.minimum(r1, c)
    with np.errstate(divide="ignore", invalid="ignore"):
        dr = np.where(r0 + r1 > 0, dr2 / (r0 + r1), 0.0)
        drc = np.where((e0 <= 0) & (e1 <= 0), dr, (np.minimum(e1, 0.0) - np.minimum(e0, 0.0)) / (rc0 + rc1))
        near = np.abs(drc) < 0.5 * rc0
        u0g = (rc0 / A3) ** HALO_GAMMA
        dug = np.where(near, u0g * np.expm1(HALO_GAMMA * np.log1p(np.where(near, drc / rc0, 0.0))),
                       (rc1 / A3) ** HALO_GAMMA - u0g)
        outside = galaxy.halo_mass(c) * np.where(
            (e0 > 0) & (e1 > 0), dr / (r0 * r1),
            np.where(e1 > 0, e1 / ((r1 + c) * c * r1), 0.0) - np.where(e0 > 0, e0 / ((r0 + c) * c * r0), 0.0))
    halo = M3 / (HALO_GAMMA * A3) * np.log1p(dug / (1.0 + u0g)) + outside
    return bulge + disk + halo


@dataclass(frozen=True)
class EnergyParts:
    """E split into parts that can be differenced exactly (see the module docstring)."""

    mass: float                  # M = sum_i m_i
    base: tuple                  # B, the reference point (mean position), cluster units
    velocity: tuple              # V, the reference velocity (mean velocity), cluster units
    kinetic_internal: float      # K_int = 1/2 sum_i m_i |v_i - V|^2
    potential: float             # W
    cross: float                 # V . sum_i m_i (v_i - V): ~0, kept so the split is exact
    tidal: float                 # sum_i m_i [Phi(x_i) - Phi(B)]
    total: float                 # E as the paper's code sums it (for the paper's error)
    units: Units | None = field(default=None, compare=False)    # those they were computed in; a
    # record keeps them beside its parts (`as_dict` leaves them out, `from_dict` takes them)

    @property
    def finite(self) -> bool:
        """Every part is a finite float64 (false for a state beyond float64's range)."""
        return all(math.isfinite(v) for v in (self.mass, *self.base, *self.velocity, self.kinetic_internal,
                                               self.potential, self.cross, self.tidal, self.total))

    @property
    def internal(self) -> float:
        """K_int + W, the cluster's own (binding) energy."""
        return self.kinetic_internal + self.potential

    def as_dict(self) -> dict:
        """The parts as plain numbers, without the units."""
        return {k: v for k, v in asdict(self).items() if k != "units"}

    @classmethod
    def from_dict(cls, d: dict, units: Units | None = None) -> "EnergyParts":
        d = dict(d)
        return cls(**{**d, "base": tuple(d["base"]), "velocity": tuple(d["velocity"]), "units": units})


def _scaled_square(a, s) -> tuple[float, float]:
    """(s^2 sum_k a_k^2 rounded once, the exact remainder rounded) for floats a_k, s; (inf, 0)
    or (NaN, 0) where that square is not a finite float64."""
    if not all(math.isfinite(x) for x in (*a, s)):
        return math.nan, 0.0
    exact = Fraction(s) ** 2 * sum(Fraction(x) ** 2 for x in a)
    try:
        rounded = float(exact)
    except OverflowError:
        return math.inf, 0.0
    return rounded, float(exact - Fraction(rounded))


def _mean(a, m, mass):
    """The mass-weighted mean a @ m / mass (3,); a @ (m / mass) where a @ m overflows (heavy
    bodies far out)."""
    mean = a @ m / mass
    return mean if np.isfinite(mean).all() else a @ (m / mass)


def _state(state):
    """TypeError unless `state` looks like a `core.ics.State` (which imports this module)."""
    if not all(hasattr(state, a) for a in ("x", "v", "m", "eps", "units")):
        raise TypeError(f"state must be a State (make_cluster, State.from_arrays), got {type(state).__name__}")


def _units(units):
    instance(units, Units, "units", "a Units(r_cl_pc, mass_msun)")


def energy_parts(state, progress=None, w=None) -> EnergyParts:
    """The parts of E for `state` (one O(N^2) sum for W; `progress` as for `potential_energy`).
    The Galaxy is evaluated at squared radii R^2 = R_B^2 + dR_i^2 (AS91 units) whose base R_B^2
    is one float and whose offsets carry the base's rounding remainder, so that the tidal sum
    and the orbital term (`energy_change`) refer to exactly the same points."""
    _state(state)
    callable_or_none(progress, "progress")
    if w is not None and (isinstance(w, bool) or not isinstance(w, numbers.Real) or math.isnan(w)):
        raise ValueError(f"w (the potential energy) must be a real number, got {w!r}")   # inf: a sum beyond float64
    with np.errstate(all="ignore"):          # a state beyond float64's range gives inf or NaN parts
        return _energy_parts(state, progress, w)


def _energy_parts(state, progress, w) -> EnergyParts:
    m, u = state.m, state.units
    mass = _sum(m)
    if state.n == 1:         # a lone body is its own mean: K_int = W = 0 exactly (a hunt: m x / m rounded,
        base, vel = state.x[:, 0].copy(), state.v[:, 0].copy()      # and its error was 4e15, not undefined)
    else:
        base, vel = _mean(state.x, m, mass), _mean(state.v, m, mass)
    d = state.x - base[:, None]                          # exact where |x_i| ~ |B| (Sterbenz)
    dv = state.v - vel[:, None]
    w = potential_energy(state.positions, m, state.eps, progress) if w is None else w   # w: W computed elsewhere (F)
    s = u.galaxy_length_scale
    (R2, cR), (z2, cz) = _scaled_square(base[:2], s), _scaled_square(base[2:], s)
    s2 = float(Fraction(s) ** 2)
    dR2 = s2 * (2.0 * (base[0] * d[0] + base[1] * d[1]) + d[0] * d[0] + d[1] * d[1]) + cR
    dz2 = s2 * (2.0 * base[2] * d[2] + d[2] * d[2]) + cz
    dphi = galaxy_potential_difference(R2, z2, dR2, dz2, s2 * (state.x[0] ** 2 + state.x[1] ** 2),
                                       s2 * state.x[2] ** 2)
    return EnergyParts(
        mass=mass, base=tuple(base.tolist()), velocity=tuple(vel.tolist()),
        kinetic_internal=0.5 * _sum(m * (dv * dv).sum(axis=0)), potential=w,
        cross=float(vel @ np.array([_sum(m * dv[k]) for k in range(3)])),
        tidal=_sum(m * dphi) * u.galaxy_potential_scale, total=energy(state, w), units=u)


def _potential_decimal(R2: float, z2: float) -> Decimal:
    """Allen & Santillan's Phi at cylindrical R^2, z^2 (AS91 units) to 40 digits."""
    with localcontext() as ctx:
        ctx.prec = 40
        D = Decimal
        R2, z2, gamma, a3 = D(R2), D(z2), D(HALO_GAMMA), D(A3)
        r = (R2 + z2).sqrt()
        bulge = -D(M1) / (R2 + z2 + D(B1) ** 2).sqrt()
        disk = -D(M2) / (R2 + (D(A2) + (z2 + D(B2) ** 2).sqrt()) ** 2).sqrt()
        rc = min(r, D(HALO_CUTOFF))
        uc = (rc / a3) ** gamma
        halo = D(M3) / (gamma * a3) * ((1 + uc).ln() - D(HALO_PHI_CONST))
        if r > rc:
            halo += D(M3) * (rc / a3) * uc / (1 + uc) * (1 / rc - 1 / r)
        return +(bulge + disk + halo)


def _square_difference(a, b) -> float:
    """sum_k a_k^2 - sum_k b_k^2 for floats, rounded once (+-inf beyond float64's range)."""
    exact = sum(Fraction(x) ** 2 for x in a) - sum(Fraction(x) ** 2 for x in b)
    try:
        return float(exact)
    except OverflowError:
        return math.inf if exact > 0 else -math.inf      # (copysign would take `exact` as a float)


def common_units(parts: EnergyParts, parts0: EnergyParts, units=None) -> Units:
    """The units that `parts` and `parts0` were computed in and `units` names, where given; a
    ValueError in one sentence where they differ (the Galaxy's terms would be scaled by the
    wrong ones) or none is known (parts from `from_dict` without units, and no `units`)."""
    instance(parts, EnergyParts, "parts", "EnergyParts (energy_parts(state))")
    instance(parts0, EnergyParts, "parts0", "EnergyParts (energy_parts(state))")
    if units is not None:
        _units(units)
    named = {}              # units -> the arguments in them, in order
    for name, u in (("parts", parts.units), ("parts0", parts0.units), ("units", units)):
        if u is not None:
            named.setdefault(u, []).append(name)
    if len(named) > 1:
        raise ValueError("the energies compared are in other units: " + "; ".join(
            f"{' and '.join(names)} in r_cl = {u.r_cl_pc:g} pc, M = {u.mass_msun:g} Msun ({u.constants} constants)"
            for u, names in named.items()))
    if not named:
        raise ValueError("the units of the energies are not known: give units (the State's)")
    return next(iter(named))


def energy_change(parts: EnergyParts, parts0: EnergyParts, units=None) -> float:
    """E - E0 from the differences of the parts: the orbital term M [Phi(B) - Phi(B0)] in
    40-digit decimals at the parts' own base points, 1/2 M (|V|^2 - |V0|^2) exactly. NaN where
    a part is not finite. The units are the parts' own (`common_units`: `units`, where given,
    must be those)."""
    units = common_units(parts, parts0, units)
    s = units.galaxy_length_scale

    def phi(p):
        R2, z2 = _scaled_square(p.base[:2], s)[0], _scaled_square(p.base[2:], s)[0]
        return _potential_decimal(R2, z2) if math.isfinite(R2 + z2) else None
    if not (parts.finite and parts0.finite):
        return math.nan
    phi1, phi0 = phi(parts), phi(parts0)
    if phi1 is None or phi0 is None:
        return math.nan
    dphi_orbit = float(phi1 - phi0)
    orbital = parts.mass * (0.5 * _square_difference(parts.velocity, parts0.velocity)
                            + dphi_orbit * units.galaxy_potential_scale)
    return _sum([orbital, parts.kinetic_internal, -parts0.kinetic_internal, parts.potential,
                 -parts0.potential, parts.cross, -parts0.cross, parts.tidal, -parts0.tidal])


def internal_energy_error(parts: EnergyParts, parts0: EnergyParts, units=None) -> float | None:
    """|E - E0| / |K_int0 + W0|: the change of the total energy (cluster + Galaxy) in units of
    the cluster's initial internal energy; None where that is 0 (a lone body has none) or a
    value is not representable (`undefined_reason(parts0.internal, "K_int0 + W0")` says which).
    `units`, where given, must be those the parts were computed in (`common_units`)."""
    return _ratio(abs(energy_change(parts, parts0, units)), abs(parts0.internal))


def angular_momentum(state) -> np.ndarray:
    """L = sum_i m_i x_i x v_i (3,), about the Galactic centre. Not exactly conserved: the
    Galaxy exerts a torque (L_z is for an axisymmetric field). A component beyond float64's
    range is inf."""
    _state(state)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.cross(state.positions, state.velocities).T @ state.m


def relative_error(value, initial) -> float | None:
    """|value - initial| / |initial| (Euclidean norms for vectors); None where |initial| is 0 or
    a norm or the quotient is not representable in float64 (`undefined_reason`)."""
    value, initial = real_array(value, "value"), real_array(initial, "initial")
    if value.shape != initial.shape:
        raise ValueError(f"value and initial must have one shape, got {value.shape} and {initial.shape}")
    with np.errstate(over="ignore", invalid="ignore"):
        change = value - initial
    return _ratio(_norm(change), _norm(initial))


def angular_momentum_error(value, initial) -> float | None:
    """|L_z - L_z0| / |L0|: the axisymmetric Galaxy conserves L_z exactly, while its torque
    changes L_x and L_y for real (so they are no error). None as for `relative_error` (bodies
    at rest have L0 = 0)."""
    value, initial = real_array(value, "value"), real_array(initial, "initial")
    for name, a in (("value", value), ("initial", initial)):
        if a.shape != (3,):
            raise ValueError(f"{name} must be an angular momentum vector of shape (3,), got shape {a.shape}")
    return _ratio(abs(float(value[2]) - float(initial[2])), _norm(initial))
