"""`MpiSimulation`: a `Simulation` of version F across MPI ranks, and rank-0 snapshots.

Every rank builds the same `MpiSimulation` (collective: every rank makes the same calls in
the same order). Rank 0's initial state is broadcast first, so a random seed, or none, gives
one cluster. Stepping touches only each rank's slice; `gather()` makes every rank's copy of
the state whole again (one `MPI_Allgatherv` each of x and v), and the diagnostics gather
first. The O(N^2) part of the energy, W, is shared out: each rank sums whole chunks of target
rows exactly as `core.diagnostics.potential_energy` does, one `MPI_Allreduce` of the vector of
chunk sums (one non-zero term per entry, so exact) and `math.fsum` give W, and hence E, L and
every error, bit for bit as on one process. `write_snapshot` gathers, then rank 0 alone writes.

    from nbsymple_versions import make_cluster
    from nbsymple_versions.mpi import MpiSimulation      # mpiexec -n 4 python this.py

    sim = MpiSimulation(make_cluster(16384, seed=1), scheme="si6a", precision="dp")
    sim.step(100)
    errors = sim.errors()                                # on every rank (collective)
    if sim.is_root:
        print(errors, sim.seconds_per_step, sim.clock.shares())
"""
import math

import numpy as np

from .. import snapshots
from ..core import diagnostics
from ..core.diagnostics import angular_momentum, energy_parts, internal_energy_error, relative_error
from ..simulation import NonFiniteState, Simulation
from ..versions import get_version
from .comm import world as _world
from .pipeline import OWNED


def broadcast_state(state, world):
    """Rank 0's bodies, time, softening and units to every rank, in place."""
    for a in (state.x, state.v, state.m):
        world.broadcast(a)
    state.t, state.eps, state.units = world.broadcast_object((state.t, state.eps, state.units))


def gather_state(state, world=None):
    """Every rank's slice of x and v to every rank (collective): each copy is whole again."""
    world = world or _world()
    world.exchange(state.x)
    world.exchange(state.v)
    return state


def write_snapshot(folder, state, step: int, run_id: str = ""):
    """`snapshots.write_snapshot` for F: gathers the state (collective), then rank 0 alone
    writes; returns the path on rank 0, None elsewhere."""
    w = _world()
    gather_state(state, w)
    return snapshots.write_snapshot(folder, state, step, run_id) if w.is_root else None


def potential_energy(positions, m, eps, world, progress=None) -> float:
    """`core.diagnostics.potential_energy` with its chunks of target rows shared out round-robin
    between the ranks: each chunk is summed by one rank with the same rows and operations, the
    chunk sums are summed over ranks (each has one non-zero term: exact) and added with
    `math.fsum` in one go, so W is bit for bit the one-process value on every rank."""
    pos = np.asarray(positions, dtype=np.float64)
    n = len(pos)
    step = max(1, diagnostics._CHUNK_PAIRS // max(n, 1))
    starts = range(0, n, step)
    sums = np.zeros(len(starts))
    for c, start in enumerate(starts):
        if c % world.size != world.rank:
            continue
        rows = slice(start, min(n, start + step))
        d = pos[None, :, :] - pos[rows, None, :]                 # as in core.diagnostics
        r2 = np.einsum("ijk,ijk->ij", d, d) + eps * eps
        phi = m[None, :] / np.sqrt(r2)
        k = np.arange(rows.stop - rows.start)
        phi[k, k + start] = 0.0
        sums[c] = float(m[rows] @ phi.sum(axis=1))
        if progress is not None and world.is_root:
            progress(min(n, rows.stop * world.size), n)
    return -0.5 * math.fsum(world.sum(sums).tolist())


class MpiSimulation(Simulation):
    """A `Simulation` of a distributed version (F) across the MPI ranks of this job (one rank
    without mpiexec). `rank`, `size`, `is_root` say where this copy runs; `gather()` makes its
    state whole. Checkpoints (`record`, `restore`) are not supported for F yet."""

    def __init__(self, state, version="F", scheme="leapfrog", precision="dp", dt=5e-4,
                 diagnostics=True, progress=None, **options):
        if not get_version(version).distributed:
            raise ValueError(f"MpiSimulation runs a version across MPI ranks (F), not {version!r}: use Simulation")
        self.world = _world()
        broadcast_state(state, self.world)
        token = OWNED.set(True)
        try:
            super().__init__(state, version, scheme, precision, dt, diagnostics=False, **options)
        finally:
            OWNED.reset(token)
        if diagnostics:
            self.energy_parts0 = self.energy_parts(progress)
            self.energy0 = self.energy_parts0.total
            self.angular_momentum0 = self.angular_momentum()

    @property
    def rank(self) -> int:
        return self.world.rank

    @property
    def size(self) -> int:
        return self.world.size

    @property
    def is_root(self) -> bool:
        return self.world.is_root

    def gather(self):
        """Make this rank's copy of the state whole (collective); returns it."""
        return gather_state(self.state, self.world)

    def energy_parts(self, progress=None):
        """`core.diagnostics.energy_parts` of the whole state, W shared out between the ranks."""
        s = self.gather()
        w = potential_energy(s.positions, s.m, s.eps, self.world, progress)
        return energy_parts(s, w=w)

    def energy(self) -> float:
        return self.energy_parts().total

    def angular_momentum(self) -> np.ndarray:
        return angular_momentum(self.gather())

    def internal_energy_error(self) -> float:
        return internal_energy_error(self.energy_parts(), self.energy_parts0, self.state.units)

    def errors(self) -> dict:
        parts = self.energy_parts()
        return {"energy_error": relative_error(parts.total, self.energy0),
                "internal_energy_error": internal_energy_error(parts, self.energy_parts0, self.state.units),
                "angular_momentum_error": self.angular_momentum_error()}

    def _check_finite(self):
        """Collective: every rank checks its own slice, one `MPI_Allreduce` (timed as
        communicate) tells all ranks, and all raise the same `NonFiniteState` together."""
        if self.world.size == 1:
            return super()._check_finite()
        a, b = self.world.slice(self.state.n)
        mine = [arr[:, a:b] for arr in (self.state.x, self.state.v, self._acc)]
        bad = 0.0 if math.isfinite(sum(float(arr.sum()) for arr in mine)) else 1.0
        with self.clock.task("communicate"):
            anywhere = self.world.sum([bad])[0]
        if not anywhere:
            return
        flags = np.zeros((3, self.state.n))            # per kind, per body: summed over ranks
        for k, arr in enumerate(mine):
            flags[k, a:b] = ~np.isfinite(arr).all(axis=0)
        flags = self.world.sum(flags) > 0
        bodies = np.flatnonzero(flags.any(axis=0))
        if len(bodies):
            kinds = [kind for kind, f in zip(("position", "velocity", "acceleration"), flags) if f.any()]
            raise NonFiniteState(self.steps_done, bodies, kinds)

    def record(self) -> dict:
        raise NotImplementedError("version F does not write checkpoints yet")
