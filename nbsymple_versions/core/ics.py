"""Initial conditions: a uniform-sphere cluster in virial ratio Q, placed on its Galactic orbit.

The state lives on the host in float64 as structure-of-arrays: `x` and `v` are (3, N) (one
contiguous row per coordinate, what vectorising CPU kernels and coalesced GPU loads want);
`positions` and `velocities` are the familiar (N, 3) views of the same memory.
"""
from dataclasses import dataclass, field, replace
import math

import numpy as np

from .reference import pairwise_potential_energy
from .units import Units


def default_softening(n: int) -> float:
    """Plummer softening of the authors' code: 0.005 times the mean interparticle distance
    2 (3N / 4 pi)^(-1/3) in a unit sphere (6.5e-4 for N = 15360)."""
    return 0.005 * 2.0 * (3.0 * n / (4.0 * math.pi)) ** (-1.0 / 3.0)


@dataclass
class State:
    """Bodies in cluster units (G = 1, M = 1, r_cl = 1): positions x (3, N), velocities v (3, N),
    masses m (N,), time t, softening eps and the physical scale `units`."""

    x: np.ndarray
    v: np.ndarray
    m: np.ndarray
    eps: float
    t: float = 0.0
    units: Units = field(default_factory=Units)

    def __post_init__(self):
        self.x = np.ascontiguousarray(self.x, dtype=np.float64)
        self.v = np.ascontiguousarray(self.v, dtype=np.float64)
        self.m = np.ascontiguousarray(self.m, dtype=np.float64)
        n = self.m.shape[0]
        if self.m.ndim != 1 or self.x.shape != (3, n) or self.v.shape != (3, n):
            raise ValueError(f"state needs x, v of shape (3, N) and m of shape (N,), got "
                             f"{self.x.shape}, {self.v.shape}, {self.m.shape}")
        if not self.eps > 0:
            raise ValueError(f"softening must be positive, got {self.eps}")

    @classmethod
    def from_arrays(cls, positions, velocities, masses, eps=None, t=0.0, units=Units()):
        """Build a state from (N, 3) positions and velocities and (N,) masses."""
        masses = np.asarray(masses, dtype=np.float64)
        eps = default_softening(len(masses)) if eps is None else float(eps)
        return cls(np.asarray(positions, dtype=np.float64).T, np.asarray(velocities, dtype=np.float64).T,
                   masses, eps, t, units)

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

    def center_of_mass(self):
        """(position, velocity) of the centre of mass, each (3,)."""
        mtot = self.m.sum()
        return self.x @ self.m / mtot, self.v @ self.m / mtot


def _uniform_ball(rng, n):
    """n points uniform in the unit ball, (3, n)."""
    d = rng.normal(size=(3, n))
    d /= np.linalg.norm(d, axis=0)
    return d * rng.random(n) ** (1.0 / 3.0)


def uniform_sphere(n: int, seed=None, virial_ratio: float = 0.3, eps=None, units: Units = Units(),
                   exact_potential: bool = True) -> State:
    """A cluster of n equal masses (total 1) uniform in the unit sphere, velocities uniform in a
    sphere scaled so that K / |W| = virial_ratio with the softened W; centre of mass at rest at
    the origin. Reproducible from `seed`. `exact_potential=False` scales with the continuous
    uniform sphere's W = -3/5 instead of the O(N^2) sum (for timing states at large N)."""
    n = int(n)
    if n < 2:
        raise ValueError(f"a cluster needs at least 2 bodies, got n = {n}")
    if not 0 < virial_ratio < math.inf:
        raise ValueError(f"virial ratio must be positive, got {virial_ratio}")
    rng = np.random.default_rng(seed)
    eps = default_softening(n) if eps is None else float(eps)
    m = np.full(n, 1.0 / n)
    x = _uniform_ball(rng, n)
    v = _uniform_ball(rng, n)
    x -= (x @ m)[:, None]
    v -= (v @ m)[:, None]
    w = pairwise_potential_energy(x.T, m, eps) if exact_potential else -0.6
    k = 0.5 * float(m @ (v * v).sum(axis=0))
    v *= math.sqrt(virial_ratio * abs(w) / k)
    return State(x, v, m, eps, 0.0, units)


def place_on_orbit(state: State, radius_kpc: float = 8.5, speed_kms: float = 220.0) -> State:
    """Move the cluster to (radius, 0, 0) with velocity (0, speed, 0): a quasi-circular orbit in
    the disk plane (defaults: the Sun's radius and circular speed of the paper)."""
    out = state.copy()
    out.x[0] += radius_kpc * state.units.kpc
    out.v[1] += state.units.from_kms(speed_kms)
    return out


def add_black_hole(state: State, mass: float, position=(0.0, 0.0, 0.0), velocity=(0.0, 0.0, 0.0)) -> State:
    """Append one massive body (cluster units) as body N; the softening is unchanged."""
    if not mass > 0:
        raise ValueError(f"black-hole mass must be positive, got {mass}")
    x = np.concatenate([state.x, np.asarray(position, dtype=np.float64).reshape(3, 1)], axis=1)
    v = np.concatenate([state.v, np.asarray(velocity, dtype=np.float64).reshape(3, 1)], axis=1)
    return replace(state, x=x, v=v, m=np.append(state.m, mass))


def make_cluster(n: int, seed=None, *, virial_ratio: float = 0.3, eps=None, units: Units = Units(),
                 radius_kpc=8.5, speed_kms=220.0, exact_potential: bool = True) -> State:
    """The paper's set-up: `uniform_sphere` placed on its orbit (radius_kpc=None keeps it at the
    origin, at rest)."""
    state = uniform_sphere(n, seed, virial_ratio, eps, units, exact_potential)
    return state if radius_kpc is None else place_on_orbit(state, radius_kpc, speed_kms)
