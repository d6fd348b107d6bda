"""Initial conditions: a uniform-sphere cluster in virial ratio Q, placed on its Galactic orbit;
equal masses, or a Salpeter mass function in a few mass classes as the authors' code offers.

The state lives on the host in float64 as structure-of-arrays: `x` and `v` are (3, N) (one
contiguous row per coordinate, what vectorising CPU kernels and coalesced GPU loads want);
`positions` and `velocities` are the familiar (N, 3) views of the same memory.
"""
from dataclasses import dataclass, field, replace
import hashlib
import math

import numpy as np

from .checks import (finite_array, finite_number, flag, instance, positive_number, seed as checked_seed, separate,
                     whole_number)
from .diagnostics import potential_energy
from .galaxy import SUN_RADIUS_KPC, SUN_SPEED_KMS
from .units import Units
from .work import IC_BYTES_PER_BODY, check_memory


def default_softening(n: int) -> float:
    """Plummer softening of the authors' code: 0.005 times the mean interparticle distance
    2 (3N / 4 pi)^(-1/3) in a unit sphere (6.5e-4 for N = 15360)."""
    return 0.005 * 2.0 * (3.0 * n / (4.0 * math.pi)) ** (-1.0 / 3.0)


@dataclass
class State:
    """Bodies in cluster units (G = 1, M = 1, r_cl = 1): positions x (3, N), velocities v (3, N),
    masses m (N,), time t, softening eps and the physical scale `units`. At least one body;
    positions, velocities and t finite, masses and eps positive and finite (ValueError in one
    sentence naming the argument and the first bad entry otherwise)."""

    x: np.ndarray
    v: np.ndarray
    m: np.ndarray
    eps: float
    t: float = 0.0
    units: Units = field(default_factory=Units)

    def __post_init__(self):
        self.check()

    def check(self) -> "State":
        """Check the bodies again (whatever was assigned to them since) and return the state: what
        `Simulation` does before it integrates one."""
        self.m = _masses(self.m, "m")
        n = self.m.shape[0]
        self.x = finite_array(self.x, "x", (3, n))
        self.v = finite_array(self.v, "v", (3, n))
        separate({"x": self.x, "v": self.v, "m": self.m})
        self.eps = positive_number(self.eps, "eps (the softening)")
        self.t = finite_number(self.t, "t")
        if not isinstance(self.units, Units):
            raise ValueError(f"units must be a Units(r_cl_pc, mass_msun), got {type(self.units).__name__}")
        return self

    @classmethod
    def from_arrays(cls, positions, velocities, masses, eps=None, t=0.0, units=Units()):
        """Build a state from (N, 3) positions and velocities and (N,) masses. The state owns
        copies (whatever the inputs' order or N): stepping never writes into the caller's arrays."""
        masses = np.array(_masses(masses, "masses"), copy=True)
        n = len(masses)
        eps = default_softening(n) if eps is None else eps

        def rows(a, name):               # (N, 3) -> a fresh C-ordered (3, N)
            return np.array(finite_array(a, name, (n, 3)).T, order="C", copy=True)
        return cls(rows(positions, "positions"), rows(velocities, "velocities"), masses, eps, t, units)

    @property
    def n(self) -> int:
        return self.m.shape[0]

    @property
    def positions(self) -> np.ndarray:
        """(N, 3) view of x."""
        return self.x.T

    @property
    def velocities(self) -> np.ndarray:
        """(N, 3) view of v."""
        return self.v.T

    def copy(self) -> "State":
        return replace(self, x=self.x.copy(), v=self.v.copy(), m=self.m.copy())

    def digest(self) -> str:
        """SHA-256 of the bodies (positions, velocities, masses as float64), softening, time and
        scale: equal for two states only where they are the same cluster at the same moment."""
        h = hashlib.sha256()
        for a in (self.x, self.v, self.m):
            h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
        h.update(repr((self.eps, self.t, self.units)).encode())
        return h.hexdigest()

    def center_of_mass(self):
        """(position, velocity) of the centre of mass, each (3,)."""
        mtot = self.m.sum()
        return self.x @ self.m / mtot, self.v @ self.m / mtot


def _masses(m, name: str) -> np.ndarray:
    """Masses (N,) for a state: at least one, each positive and finite."""
    m = finite_array(m, name, (None,), positive=True)
    if m.shape[0] == 0:
        raise ValueError(f"{name} is empty; a state needs at least one body")
    return m


SALPETER_EXPONENT = 2.35
SALPETER_RANGE = (0.1, 15.0)    # Msun: the authors' code's mMin and mMax (only their ratio matters)


def _power_integral(a, b, p):
    """Integral of m^p dm from a to b (arrays)."""
    return np.log(b / a) if abs(p + 1.0) < 1e-12 else (b ** (p + 1.0) - a ** (p + 1.0)) / (p + 1.0)


def salpeter_masses(n: int, classes: int, exponent: float = SALPETER_EXPONENT,
                    mass_range=SALPETER_RANGE) -> np.ndarray:
    """n masses summing to 1 from dN/dm ~ m^-exponent on `mass_range`, in `classes` classes of
    equal width in log m (the authors' code: CLASS_N = 5, exponent S_M = 2.35, 0.1 to 15 Msun).
    Class k holds n times its share of dN, rounded to whole stars by largest remainders, each
    star of the class's mean mass; ascending. (The authors draw masses uniformly inside each
    class and round the counts differently; the spectrum is the same.)"""
    n = whole_number(n, "n", 1)
    classes = whole_number(classes, "mass_classes (the number of mass classes)", 1)
    if classes > n:
        raise ValueError(f"mass_classes (the number of mass classes) must be at most n = {n}, got {classes}")
    exponent = positive_number(exponent, "exponent (of the mass function)")
    lo, hi = (finite_number(v, "mass_range") for v in mass_range)
    if not 0 < lo < hi < math.inf:
        raise ValueError(f"mass range must be 0 < low < high, got {lo} to {hi}")
    edges = np.geomspace(lo, hi, classes + 1)
    a, b = edges[:-1], edges[1:]
    number = _power_integral(a, b, -exponent)
    share = number / number.sum()
    counts = np.floor(n * share).astype(np.int64)
    counts[np.argsort(-(n * share - counts), kind="stable")[: n - counts.sum()]] += 1
    mean = _power_integral(a, b, 1.0 - exponent) / number
    m = np.repeat(mean, counts)
    return m / m.sum()


def _uniform_ball(rng, n):
    """n points uniform in the unit ball, (3, n)."""
    d = rng.normal(size=(3, n))
    d /= np.linalg.norm(d, axis=0)
    return d * rng.random(n) ** (1.0 / 3.0)


def uniform_sphere(n: int, seed=None, virial_ratio: float = 0.3, eps=None, units: Units = Units(),
                   exact_potential: bool = True, mass_classes=None) -> State:
    """A cluster of n bodies of total mass 1 uniform in the unit sphere, velocities uniform in a
    sphere scaled so that K / |W| = virial_ratio (0: at rest, a cold collapse) with the softened
    W; centre of mass at rest at the origin. Equal masses, or with `mass_classes` = k a Salpeter spectrum in k classes
    (`salpeter_masses`, independent of position and velocity). Reproducible from `seed` (the
    positions and velocities drawn do not depend on the masses). `exact_potential=False` scales
    with the continuous uniform sphere's W = -3/5 instead of the O(N^2) sum (for timing states
    at large N). More bodies than this machine's memory holds are refused with the estimate
    (`core.work`: ValueError), before anything is allocated."""
    n = whole_number(n, "n (the number of bodies)", 2)
    check_memory(n, "n (the number of bodies)", IC_BYTES_PER_BODY)
    seed = checked_seed(seed)
    exact_potential = flag(exact_potential, "exact_potential")
    virial_ratio = finite_number(virial_ratio, "virial_ratio", 0.0)        # 0: a cold collapse (a hunt: refused)
    eps = default_softening(n) if eps is None else positive_number(eps, "eps (the softening)")
    rng = np.random.default_rng(seed)
    m = np.full(n, 1.0 / n) if mass_classes is None else salpeter_masses(n, mass_classes)
    x = _uniform_ball(rng, n)
    v = _uniform_ball(rng, n)
    x -= (x @ m)[:, None]
    v -= (v @ m)[:, None]
    w = potential_energy(x.T, m, eps) if exact_potential else -0.6
    k = 0.5 * float(m @ (v * v).sum(axis=0))
    with np.errstate(over="ignore", invalid="ignore"):
        v *= math.sqrt(virial_ratio * abs(w) / k)
    if not np.isfinite(v).all():
        raise ValueError(f"virial_ratio = {virial_ratio:g} gives velocities beyond float64's range")
    return State(x, v, m, eps, 0.0, units)


def place_on_orbit(state: State, radius_kpc: float = SUN_RADIUS_KPC, speed_kms: float = SUN_SPEED_KMS) -> State:
    """A copy of the cluster shifted by (radius, 0, 0) in position and (0, speed, 0) in velocity:
    a cluster centred at rest (as `uniform_sphere` and `make_cluster` build it) is then at (radius,
    0, 0) with velocity (0, speed, 0), a quasi-circular orbit in the disk plane (defaults: the
    Sun's radius and circular speed of the paper). The shift is added to every body (a black hole
    added at the origin moves with them); a cluster not centred at rest keeps its offset."""
    instance(state, State, "state", "a State (make_cluster, State.from_arrays)")
    radius_kpc = finite_number(radius_kpc, "radius_kpc", minimum=0.0)
    speed_kms = finite_number(speed_kms, "speed_kms")
    out = state.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        out.x[0] += radius_kpc * state.units.kpc
        out.v[1] += state.units.from_kms(speed_kms)
    for name, value, unit, moved in (("radius_kpc", radius_kpc, "kpc", out.x[0]),
                                     ("speed_kms", speed_kms, "km/s", out.v[1])):
        if not np.isfinite(moved).all():
            raise ValueError(f"{name} = {value:g} {unit} is beyond float64's range in cluster units "
                             f"(r_cl = {state.units.r_cl_pc:g} pc, M = {state.units.mass_msun:g} Msun)")
    return State(out.x, out.v, out.m, out.eps, out.t, out.units)       # checked again: still finite


def add_black_hole(state: State, mass: float, position=(0.0, 0.0, 0.0), velocity=(0.0, 0.0, 0.0)) -> State:
    """Append one massive body (cluster units) as body N; the softening is unchanged."""
    instance(state, State, "state", "a State (make_cluster, State.from_arrays)")
    mass = positive_number(mass, "mass (of the black hole)")
    position = finite_array(position, "position (of the black hole)", (3,))
    velocity = finite_array(velocity, "velocity (of the black hole)", (3,))
    x = np.concatenate([state.x, position.reshape(3, 1)], axis=1)
    v = np.concatenate([state.v, velocity.reshape(3, 1)], axis=1)
    return replace(state, x=x, v=v, m=np.append(state.m, mass))


TIMING_SEED = 2011          # every timed state is this one: the asv suite, F's timing job, gpu_report
EXACT_IC_MAX_N = 4096       # above this N a timed state's velocities use the continuous sphere's W


def timing_state(n: int, radius_kpc=SUN_RADIUS_KPC) -> State:
    """The state every timing uses: the paper's set-up (`make_cluster`) with seed TIMING_SEED.
    Above EXACT_IC_MAX_N bodies the O(N^2) NumPy potential energy would dominate the set-up (2 s
    at N = 16384, ~9 min at 2^18), so velocities are scaled with the continuous sphere's W
    instead (same positions, masses and softening; timings do not depend on the velocity scale)."""
    n = whole_number(n, "n (the number of bodies)", 2)
    return make_cluster(n, seed=TIMING_SEED, radius_kpc=radius_kpc, exact_potential=n <= EXACT_IC_MAX_N)


def make_cluster(n: int, seed=None, *, virial_ratio: float = 0.3, eps=None, units: Units = Units(),
                 radius_kpc=SUN_RADIUS_KPC, speed_kms=SUN_SPEED_KMS, exact_potential: bool = True,
                 mass_classes=None) -> State:
    """The paper's set-up: `uniform_sphere` placed on its orbit (radius_kpc=None keeps it at the
    origin, at rest); `mass_classes` = k gives a Salpeter mass function in k classes (default:
    equal masses)."""
    state = uniform_sphere(n, seed, virial_ratio, eps, units, exact_potential, mass_classes)
    return state if radius_kpc is None else place_on_orbit(state, radius_kpc, speed_kms)
