"""`Simulation`: one cluster, one version, one scheme, in the spirit of REBOUND's API.

    sim = Simulation(make_cluster(1024, seed=1), version="B", scheme="si6a", precision="dp", dt=5e-4)
    sim.step(100)
    sim.energy_error(), sim.internal_energy_error(), sim.angular_momentum_error(), sim.clock.shares()

The same class drives all six versions. Version F runs it on every MPI rank (`mpiexec -n K
python script.py`: every rank makes the same calls); its pipeline's `world` carries the
collectives, which do nothing on one process: rank 0's bodies go to every rank first, steps
touch each rank's slice only, `gather()` makes the state whole, the diagnostics gather first
and share out the O(N^2) W sum, and a non-finite value anywhere stops every rank together.

The user's values are checked where they come in (`core.checks`: version, scheme and precision
in any case, dt and steps) and bodies whose energies float64 cannot represent are refused
(`core.diagnostics.energy_problem`), each with a ValueError in one sentence. An error figure
is a float, or None where it is undefined (a zero reference: L0 of bodies at rest);
`undefined_reasons` says why. A step that leaves a non-finite position, velocity or
acceleration raises `NonFiniteState` at once (an O(N) check on the host arrays). `record()`
and `Simulation.restore` carry everything but the arrays through a checkpoint, so a restored
run continues bit for bit.
"""
import hashlib
import math
import signal
import threading

import numpy as np

from .core.checks import (COUNT_LIMIT, callable_or_none, finite_number, flag, instance, named, one_of,
                          positive_number, whole_number, writable)
from .core.clock import TaskClock
from .core.diagnostics import (EnergyParts, angular_momentum, angular_momentum_error, energy_parts, energy_problem,
                               internal_energy_error, potential_energy, relative_error, undefined_reason)
from .core.ics import State
from .core.integrator import advance, c_ordered
from .core.schemes import get_scheme
from .core.work import check_time
from .core.vocabulary import precision_name
from .versions import get_version, simulated

ACCELERATION_KINDS = ("total", "pairwise", "galactic")   # what `Simulation.accelerations` returns
# each error's reference, as the report names it where the error is undefined
ERROR_REFERENCES = {"energy_error": "E0", "internal_energy_error": "K_int0 + W0", "angular_momentum_error": "L0"}


def _plain(value):
    """A NumPy scalar as the Python number it holds (a record is plain JSON values)."""
    return value.item() if isinstance(value, np.generic) else value


def _json_floats(values):
    """A list of floats for JSON: a non-finite one (an L0 beyond float64's range) as None."""
    return [v if math.isfinite(v) else None for v in map(float, values)]


class NonFiniteState(RuntimeError):
    """A step produced a non-finite position, velocity or acceleration; `step` and `bodies`
    (0-based indices) say where."""

    def __init__(self, step: int, bodies, kinds):
        self.step, self.bodies = step, [int(b) for b in bodies]
        shown = ", ".join(map(str, self.bodies[:8])) + (f" and {len(self.bodies) - 8} more"
                                                        if len(self.bodies) > 8 else "")
        noun = "body" if len(self.bodies) == 1 else "bodies"
        what = " and ".join([", ".join(kinds[:-1]), kinds[-1]] if len(kinds) > 1 else kinds)
        super().__init__(f"step {step} left a non-finite {what} in {noun} {shown}")


def share_state(state, world):
    """Rank 0's bodies, time, softening and units to every rank, in place (nothing on one)."""
    for a in (state.x, state.v, state.m):
        world.broadcast(a)
    state.t, state.eps, state.units = world.broadcast_object((state.t, state.eps, state.units))


FLOAT32 = np.finfo(np.float32)


def least_softening(precision: str, heaviest: float = 1.0) -> float:
    """The smallest softening the pairwise kernels take in `precision` for masses up to
    `heaviest` (0.1 % above the edge). sp and dsp compute a body's own term, m r^-3 at r = eps
    (times a zero separation), in float32: max(1, m) eps^-3 must stay below float32's largest
    number (eps >= 1.43e-13 for m <= 1). dp computes in float64 from a float32 estimate of 1/r
    (both GPU backends, and the CPUs without AVX-512 but those of `serial.kernels.DIVIDER_CPUS`,
    where the AVX2 row takes half its lanes that way):
    eps^2 must be a normal float32 (eps >= 1.09e-19), else the estimate is of a zero, to which a
    float32 denormal flushes, and infinite. One bound for every version, whatever its kernel."""
    if precision == "dp":
        return 1.001 * float(FLOAT32.tiny) ** 0.5
    return 1.001 * (max(1.0, heaviest) / float(FLOAT32.max)) ** (1 / 3)


def softening_problem(eps: float, precision: str, heaviest: float = 1.0) -> str | None:
    """One sentence when `eps` is below `least_softening(precision, heaviest)`, or sp's or dsp's
    masses are beyond float32, else None: every body would be NaN (0 x inf) at the first step."""
    if precision != "dp" and heaviest >= float(FLOAT32.max) / 1.001:
        return (f"a body's mass of {heaviest:.3g} is beyond the range of float32, which {precision} computes in: "
                "use precision dp")
    least = least_softening(precision, heaviest)
    if eps >= least:
        return None
    term = "m r^-3" if heaviest > 1 else "r^-3"
    why = ("eps^2 is below the smallest normal float32, where dp's float32 estimate of 1/r starts"
           if precision == "dp" else f"{term} at r = eps exceeds the range of float32, which {precision} computes in")
    other = " or precision dp" if precision != "dp" and eps >= least_softening("dp") else ""
    mass = f" (masses up to {heaviest:.3g})" if heaviest > 1 else ""
    return f"the softening eps = {eps:.3g} is below {least:.3g}{mass}, under which {why}: use a larger eps{other}"


FARTHEST = float(FLOAT32.max) ** 0.5 / 1.001       # 1.84e19 / 1.001


def position_problem(state, precision: str) -> str | None:
    """One sentence when the pairwise kernels cannot take the bodies' positions, else None:
    - sp and dsp hold every coordinate in float32 (dsp's high word), so each must stay below
      float32's largest number (3.4e38);
    - every precision takes r^-3 from r^2 + eps^2 in float32 (sp, dsp) or from a float32 estimate
      of 1/r (dp: see `least_softening`), so it must stay below float32's largest number: no two
      bodies farther apart than 1.84e19. Checked in O(N) on the diagonal of the bodies' bounding
      box, at most sqrt(3) times their largest separation.
    Beyond either, the pairwise terms are NaN at the first step. One bound for every version."""
    x = state.x
    if precision != "dp" and (far := float(np.abs(x).max())) >= float(FLOAT32.max) / 1.001:
        body = int(np.abs(x).max(axis=0).argmax())
        return (f"body {body}'s position has a component of {far:.3g}, beyond the range of float32, which "
                f"{precision} computes in: use precision dp")
    diagonal = float(np.sqrt(((x.max(axis=1) - x.min(axis=1)) ** 2).sum()))
    if math.hypot(diagonal, state.eps) < FARTHEST:
        return None
    return (f"the bodies span {diagonal:.3g} (their bounding box's diagonal) with softening eps = {state.eps:.3g}, "
            f"beyond {FARTHEST:.3g}, where r^2 leaves the range of float32, from which every precision's "
            "r^-3 starts: keep the bodies closer together")


_MARKING = threading.Lock()          # `step`'s check and mark of the thread stepping a Simulation


class Simulation:
    """Integrates `state` in place with a version's force pipeline.

    `options` go to the version (e.g. `tile`, `devices` for GPU versions). `version`, `scheme`
    and `precision` are taken in any case and kept in the code's spelling ("B", "si6a", "dp").
    Bodies whose energies cannot be represented in float64 are refused (ValueError). The
    pipeline is compiled and warmed before the first step; `clock` then holds warm per-task
    times. With `diagnostics=False` the O(N^2) initial energy is not computed (for timing
    runs); `progress(done, total)` reports on that O(N^2) sum otherwise."""

    def __init__(self, state, version="A", scheme="leapfrog", precision="dp", dt=5e-4,
                 diagnostics=True, progress=None, **options):
        instance(state, State, "state", "a State (make_cluster, State.from_arrays)")
        writable(state.check().x, "state.x")
        writable(state.v, "state.v")
        dt = positive_number(dt, "dt (the time step)")
        diagnostics = flag(diagnostics, "diagnostics")
        callable_or_none(progress, "progress")
        self.state = state
        self.version = get_version(version)
        self.scheme = get_scheme(scheme)
        self.precision = precision_name(precision)
        self._dt = dt
        self.options = dict(options)
        self.clock = TaskClock()
        self.world = self.version.world()
        share_state(state, self.world)
        self._same_on_every_rank(diagnostics=diagnostics)
        heaviest = float(state.m.max())
        if problem := (energy_problem(state) or softening_problem(state.eps, self.precision, heaviest)
                       or position_problem(state, self.precision)):
            raise ValueError(problem)              # every rank holds rank 0's bodies: all refuse alike
        self.forces = self.version.pipeline(state, self.precision, self.clock, **options)
        self.options.update(self.forces.chosen)     # in the record: a resumed run takes them again
        typed = self.version.options_from(self.options)          # as plain JSON values, in the code's spelling
        self.options = {name: _plain(getattr(typed, name)) for name in self.options}    # (np.int64(64): a hunt)
        self.compile_seconds = self.forces.warm_up(state.x)
        self.steps_done, self._stepping, self._cut_short = 0, None, None      # (_stepping: the stepping thread)
        self.t0 = state.t                 # time at step 0: t = t0 + steps_done * dt, exactly
        self._built_for = self._cluster()
        self._acc = np.zeros_like(state.x)
        self.energy_parts0 = self.energy_parts(progress) if diagnostics else None
        if diagnostics and not self.energy_parts0.finite:
            raise ValueError(f"the bodies' energies cannot be represented in float64 "
                             f"(W = {self.energy_parts0.potential:g}, E = {self.energy_parts0.total:g})")
        self.energy0 = self.energy_parts0.total if diagnostics else None
        self.angular_momentum0 = self.angular_momentum() if diagnostics else None

    def __reduce_ex__(self, protocol):
        """A Simulation holds compiled kernels, devices and MPI's world: no copy or pickle of it (a
        hunt: "cannot pickle 'module' object")."""
        raise TypeError("a Simulation cannot be copied or pickled (it holds compiled kernels and devices): keep a "
                        "copy of its state (state.copy()) and its record(), and Simulation.restore(state, record) "
                        "makes it again")

    def step(self, steps: int = 1, on_step=None):
        """Advance by `steps` steps of dt; `on_step(k)` after each (k counts from 1 in this
        call; `steps_done` already counts step k). Raises `NonFiniteState` after the first
        step that leaves a non-finite value, before `on_step` sees it. A Ctrl-C (in the main
        thread) waits for the end of the step under way and of its `on_step`, and raises
        KeyboardInterrupt there; one that cuts a step short (a second Ctrl-C, an error) leaves
        the bodies partway through it, and `step` then refuses to go on (ValueError). Steps
        beyond `core.work`'s limit (more than the fastest machine ends within it, or the CUDA
        simulator for a GPU version there) are refused (ValueError)."""
        steps = whole_number(steps, "steps", 0)
        check_time(self.state.n, steps, "Simulation.step", "fewer steps",
                   simulated(self.version.letter, self.options))
        callable_or_none(on_step, "on_step")
        with _MARKING:                   # checked and marked at once: two threads cannot both pass
            if self._stepping is not None:     # the bodies would move on while steps_done and t did not
                raise RuntimeError("Simulation.step was called from its own on_step; step again after it returns"
                                   if self._stepping == threading.get_ident() else
                                   "Simulation.step was called from another thread while this Simulation steps; "
                                   "step one Simulation from one thread at a time")     # (a hunt: "its own on_step")
            self._stepping = threading.get_ident()
        try:
            self._steps(steps, on_step)
        finally:
            self._stepping = None

    def _steps(self, steps: int, on_step):
        """`step`'s work, this thread marked as the one stepping."""
        self._check_state()
        self._same_on_every_rank(steps=steps)
        base = self.steps_done
        # a Ctrl-C lands at the end of the step under way, so that the bodies are always a whole
        # step's (a hunt: in a notebook they were left partway through one, and the next step went
        # on from there); a second stops at once, and a step so cut short is refused to go on
        asked, between = [], [True]

        def after(k):
            between[0] = True
            self.steps_done = base + k
            self._check_finite()
            if on_step is not None:           # step k is whole: its on_step too, before a Ctrl-C lands
                x, v = self.state.x, self.state.v            # (a hunt: on_step never saw that step)
                on_step(k)
                if self.state.x is not x or self.state.v is not v:    # checked between steps, not inside
                    self._check_state()             # the next (a hunt: x = v marked a step cut short)
            if asked:
                raise KeyboardInterrupt
            between[0] = False

        def held(signum, frame):
            if asked:
                raise KeyboardInterrupt
            asked.append(signum)
        hold = threading.current_thread() is threading.main_thread() \
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler     # (not a command's own)
        previous = signal.signal(signal.SIGINT, held) if hold else None
        try:
            between[0] = False
            advance(self.state, self.forces, self.scheme, self.dt, steps, self._acc, after, base, self.t0)
        except BaseException:
            if not between[0]:
                self._cut_short = self.steps_done + 1
            raise
        finally:
            if hold:
                signal.signal(signal.SIGINT, previous)
        if asked:          # during the last step, or after it until `previous` was back (a hunt: it was lost there)
            raise KeyboardInterrupt

    def _same_on_every_rank(self, **more):
        """ValueError on every rank together where a rank was given settings other than rank 0's
        (`share_state` gives every rank rank 0's bodies): its scheme, precision, dt, the version's
        options and `more` (a hunt: F's ranks given different dt stepped a wrong trajectory in
        silence, different precisions mixed them, different schemes hung). Collective."""
        if self.world.size == 1:
            return
        ours = {"scheme": self.scheme.name, "precision": self.precision, "dt": self._dt,
                "options": sorted(self.options.items(), key=lambda kv: str(kv[0])), **more}    # (in any order given)
        root = self.world.broadcast_object(ours)
        differ = [name for name in ours if repr(ours[name]) != repr(root.get(name))]
        same, reason = self.world.agree(not differ, f"its {' and '.join(differ)} "
                                                    f"{'differs' if len(differ) == 1 else 'differ'} from rank 0's")
        if not same:
            raise ValueError(f"the ranks were given different settings ({reason}): give every rank the same "
                             f"Simulation arguments and steps")

    def _cluster(self) -> tuple:
        """What the force pipeline was built for, beside the bodies' positions: N, the masses'
        digest, the softening and the units (a pipeline keeps copies of them)."""
        s = self.state
        return s.n, _masses_digest(s.m), s.eps, s.units

    def _check_state(self):
        """ValueError in one sentence where the state was changed since the pipeline was built
        (the forces would use the old masses, softening or units: in silence, differently per
        precision) or moved by another simulation (its t then says fewer steps than its bodies made);
        arrays assigned since are made C-ordered float64 (a transposed view assigned to x was
        stepped as a copy in sp: the positions stood still). O(N) per call of `step`."""
        s = self.state
        self._not_cut_short("the run cannot go on")
        s.check()
        for name, a in zip(("x", "v"), c_ordered(s)):
            writable(a, f"state.{name}")
        self._check_cluster()
        self._check_time()

    def _check_cluster(self):
        """ValueError in one sentence where N, the masses, eps or the units changed since the
        pipeline was built: its forces, and the errors against E0 and L0, would be of another
        cluster (a hunt: `accelerations`, `errors` and `record` took them in silence, dp's forces
        with the new masses, sp's with the old)."""
        if (now := self._cluster()) != self._built_for:
            changed = [name for name, a, b in zip(("N", "masses", "eps", "units"), now, self._built_for) if a != b]
            raise ValueError(f"state.{'/'.join(changed)} changed since the Simulation was built for it, which its "
                             f"forces do not follow: make a new Simulation of the state")

    def _check_time(self):
        """ValueError in one sentence where state.t is not t0 + steps_done * dt."""
        s = self.state
        if s.t != self.t0 + self.steps_done * self.dt:
            raise ValueError(f"state.t = {s.t!r} is not this simulation's t0 + steps_done * dt = "
                             f"{self.t0 + self.steps_done * self.dt!r}: another Simulation stepped the state, or t "
                             f"was set; give each Simulation a state of its own (state.copy())")

    @property
    def cut_short(self) -> int | None:
        """The step a second Ctrl-C or an error cut short (the bodies stand partway through it), or None."""
        return self._cut_short

    def _not_cut_short(self, what: str):
        """ValueError in one sentence where a step was cut short: the bodies stand partway through it."""
        if self._cut_short is not None:
            raise ValueError(f"step {self._cut_short} was cut short (a second Ctrl-C, or an error inside it): the "
                             f"bodies stand partway through it, so {what}; restore a record or a "
                             f"checkpoint taken before, or make a new Simulation")

    def _check_finite(self):
        """O(N): one sum per array of this rank's slice; only a non-finite sum looks for the
        bodies. Across ranks one `MPI_Allreduce` (timed as communicate) tells every rank, and
        all raise the same `NonFiniteState` together."""
        n, world = self.state.n, self.world
        a, b = world.slice(n)
        mine = [arr[:, a:b] for arr in (self.state.x, self.state.v, self._acc)]
        with np.errstate(over="ignore", invalid="ignore"):       # inf + -inf: bad, without a warning
            bad = not math.isfinite(sum(float(arr.sum()) for arr in mine))
        if world.size > 1:
            with self.clock.task("communicate"):
                bad = world.any(bad)
        if not bad:
            return
        flags = np.zeros((3, n))                   # per kind, per body: summed over ranks
        for k, arr in enumerate(mine):
            flags[k, a:b] = ~np.isfinite(arr).all(axis=0)
        flags = world.sum(flags) > 0
        bodies = np.flatnonzero(flags.any(axis=0))
        if len(bodies):                  # else: finite values whose sum overflowed
            kinds = [kind for kind, f in zip(("position", "velocity", "acceleration"), flags) if f.any()]
            raise NonFiniteState(self.steps_done, bodies, kinds)

    def gather(self):
        """Make this rank's copy of the state whole and return it (collective under MPI: every
        rank calls it; A-E hold the whole state anyway)."""
        self.world.exchange(self.state.x)
        self.world.exchange(self.state.v)
        return self.state

    @property
    def is_root(self) -> bool:
        """True on the process that prints and writes files (rank 0; always, outside MPI)."""
        return self.world.is_root

    def accelerations(self, kind: str = "total") -> np.ndarray:
        """Accelerations (N, 3) float64 of the current state, in the simulation's precision,
        on the version's devices: 'total', 'pairwise' or 'galactic' (E's fused kernel makes its
        'pairwise' include the Galaxy)."""
        compute = {"total": self.forces.accelerations, "pairwise": self.forces.pairwise,
                   "galactic": self.forces.galactic}[one_of(kind, ACCELERATION_KINDS, "acceleration kind")]
        self._check_cluster()
        out = np.zeros_like(self.state.x)
        with self.forces.off_the_clock():     # not a step: keep seconds_per_step honest
            compute(self.state.x, out)
        return out.T

    def energy_parts(self, progress=None) -> EnergyParts:
        """`core.diagnostics.energy_parts` of the whole state (collective: W shared out between
        the ranks; `progress(done, total)` on its O(N^2) sum)."""
        s = self.gather()
        return energy_parts(s, w=potential_energy(s.positions, s.m, s.eps, progress, self.world))

    def energy(self) -> float:
        """E = K + W + sum_i m_i Phi_gal(x_i), cluster + Galaxy (the paper's total)."""
        return self.energy_parts().total

    def angular_momentum(self) -> np.ndarray:
        return angular_momentum(self.gather())

    def energy_error(self) -> float | None:
        """|E - E0| / |E0| since the simulation was created: the paper's figure, dominated by
        the orbital energy (see `core.diagnostics`); None where E0 = 0 (`undefined_reasons`)."""
        self._has_initial()
        return relative_error(self.energy(), self.energy0)

    def _has_initial(self):
        """ValueError where the simulation was made with diagnostics=False: no E0 or L0 to compare
        with (the errors said that an argument the caller never passed was None)."""
        if self.energy_parts0 is None:
            raise ValueError("this Simulation was made with diagnostics=False, so it has no initial energy and "
                             "angular momentum to compare with; make it with diagnostics=True")
        self._check_cluster()

    def internal_energy_error(self) -> float | None:
        """|E - E0| / |K_int0 + W0|: the change of the same total in units of the cluster's
        internal energy, computed below float64 rounding of the orbital term; None where
        K_int0 + W0 = 0 (a lone body)."""
        self._has_initial()
        return internal_energy_error(self.energy_parts(), self.energy_parts0)

    def errors(self) -> dict:
        """All three errors from one O(N^2) evaluation: energy_error, internal_energy_error,
        angular_momentum_error, each a float or None where undefined (`undefined_reasons`)."""
        self._has_initial()
        parts = self.energy_parts()
        return {"energy_error": relative_error(parts.total, self.energy0),
                "internal_energy_error": internal_energy_error(parts, self.energy_parts0),
                "angular_momentum_error": self.angular_momentum_error()}

    def angular_momentum_error(self) -> float | None:
        """|L_z - L_z0| / |L0| since the simulation was created (see `diagnostics`); None where
        L0 = 0 (bodies at rest)."""
        self._has_initial()
        return angular_momentum_error(self.angular_momentum(), self.angular_momentum0)

    def undefined_reasons(self, errors: dict) -> dict:
        """For each None in `errors` (as `errors()` returns them), why, in words: "L0 = 0",
        "E0 is not representable in float64", ..."""
        instance(errors, dict, "errors", "a dict as errors() returns it")
        if unknown := sorted(map(named, set(errors) - set(ERROR_REFERENCES))):
            raise ValueError(f"errors holds {', '.join(unknown)}, not an error; errors() returns "
                             f"{', '.join(ERROR_REFERENCES)}")
        self._has_initial()              # (without diagnostics every error is None, for that reason alone)
        references = {"energy_error": self.energy0, "angular_momentum_error": self.angular_momentum0,
                      "internal_energy_error": None if self.energy_parts0 is None else self.energy_parts0.internal}
        return {name: undefined_reason(references[name], ERROR_REFERENCES[name])
                for name, value in errors.items() if value is None}

    def record(self) -> dict:
        """What a checkpoint needs besides the state's arrays: plain JSON values, with the number
        of bodies and digests of their masses and of the whole state (`State.digest`), by which
        `restore` knows the cluster and the moment again. Refused (ValueError) after a step cut
        short: its bodies are partway through a step its count omits."""
        self._not_cut_short("no record of a whole step can be taken")     # (a hunt: restore went on from there)
        self._check_cluster()            # (a hunt: a record of a cluster the forces were not of, or of a time its
        self._check_time()               # own `restore` refused)
        return {"n": self.state.n, "masses_sha256": _masses_digest(self.state.m), "bodies_sha256": self.state.digest(),
                "version": self.version.letter, "eps": self.state.eps, "units": self.state.units.as_dict(),
                "scheme": self.scheme.name, "precision": self.precision, "dt": self.dt, "options": dict(self.options),
                "steps_done": self.steps_done, "t0": self.t0,
                "clock": {"seconds": dict(self.clock.seconds), "calls": dict(self.clock.calls)},
                "energy0": self.energy0, "angular_momentum0": None if self.angular_momentum0 is None
                else _json_floats(self.angular_momentum0),
                "energy_parts0": None if self.energy_parts0 is None else self.energy_parts0.as_dict()}

    @classmethod
    def restore(cls, state, record: dict) -> "Simulation":
        """The simulation `record()` described, continuing from `state`: its step count, time
        origin, accumulated clock and initial diagnostics come from the record, not recomputed.
        A record that is not one, or that was taken of another cluster (other N, other masses, a
        state at another time), is a ValueError in one sentence (`check_record`)."""
        check_record(state, record)
        sim = cls(state, record["version"], record["scheme"], record["precision"], record["dt"],
                  diagnostics=False, **record["options"])
        sim.steps_done, sim.t0 = int(record["steps_done"]), float(record["t0"])
        sim.clock.seconds.update(record["clock"]["seconds"])
        sim.clock.calls.update(record["clock"]["calls"])
        if record["energy0"] is not None:
            sim.energy0 = float(record["energy0"])
            sim.angular_momentum0 = np.array([math.nan if c is None else float(c) for c in record["angular_momentum0"]])
            sim.energy_parts0 = EnergyParts.from_dict(record["energy_parts0"], state.units)
        return sim

    @property
    def dt(self) -> float:
        """The time step in T. It may be set before the first step; after it, the times of the
        run (t = t0 + steps_done * dt) hold only for the step they were made with."""
        return self._dt

    @dt.setter
    def dt(self, value):
        value = positive_number(value, "dt (the time step)")      # (NaN was taken, and blamed on state.t)
        if self.steps_done and value != self._dt:
            raise ValueError(f"dt cannot change once the run has stepped ({self.steps_done} done at dt = {self._dt!r}; "
                             f"its times are t0 + steps_done * dt): "
                             f"make a new Simulation of the state for the new step")
        self._dt = value

    @property
    def seconds_per_step(self) -> float:
        return self.clock.total / self.steps_done if self.steps_done else math.nan

    @property
    def threads(self) -> int:
        return self.clock.threads

    @property
    def device(self) -> str:
        return self.clock.device


def _masses_digest(m: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(m, dtype=np.float64).tobytes()).hexdigest()


ENERGY_PARTS = tuple(f for f in EnergyParts.__dataclass_fields__ if f != "units")


def _check_numbers(value, name: str, none: bool = False):
    """ValueError unless `value` is a list of 3 finite numbers (or None where `none`)."""
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise ValueError(f"{name} must be a list of 3 components")
    for k, component in enumerate(value):
        if not (none and component is None):
            finite_number(component, f"{name}[{k}]")


RECORD_KEYS = ("version", "scheme", "precision", "dt", "options", "steps_done", "t0", "clock", "energy0",
               "angular_momentum0", "energy_parts0")


def check_record(state, record):
    """ValueError in one sentence unless `record` is a `Simulation.record()` that `state` can
    continue: its version, scheme, precision, time step, options, step count, time origin and
    clock are ones this code takes, and `state` is the cluster it was taken of (its N and the
    digest of its masses, where the record holds them, an older one does not) at the record's time
    t0 + steps_done * dt, exactly as the stepping loop sets it, with the positions and velocities
    it had then (`State.digest`, where the record holds it: equal-mass clusters of two seeds share
    N, masses and time). TypeError where `state` is not a State or `record` not a dict."""
    instance(state, State, "state", "a State (make_cluster, State.from_arrays)")
    instance(record, dict, "record", "a dict as Simulation.record() returns it")
    if missing := [k for k in RECORD_KEYS if k not in record]:
        raise ValueError(f"record lacks {', '.join(missing)}: it is not one Simulation.record() returned")
    get_version(record["version"]).options_from(instance(record["options"], dict, "record['options']", "a dict"))
    get_scheme(record["scheme"])
    precision_name(record["precision"])
    dt = positive_number(record["dt"], "record['dt']")
    done = whole_number(record["steps_done"], "record['steps_done']", 0, below=COUNT_LIMIT)
    t0 = finite_number(record["t0"], "record['t0']")
    clock = instance(record["clock"], dict, "record['clock']", "a dict of seconds and calls")
    for part in ("seconds", "calls"):
        times = instance(clock.get(part), dict, f"record['clock']['{part}']", "a dict of tasks")
        for task, value in times.items():
            if task not in TaskClock().seconds:
                raise ValueError(f"record['clock']['{part}'] names {task!r}, not a task")
            finite_number(value, f"record['clock']['{part}']['{task}']", 0)
    if record["energy0"] is not None:
        finite_number(record["energy0"], "record['energy0']")
        _check_numbers(record["angular_momentum0"], "record['angular_momentum0']", none=True)
        parts = instance(record["energy_parts0"], dict, "record['energy_parts0']", "a dict (EnergyParts.as_dict)")
        if set(parts) != set(ENERGY_PARTS):
            raise ValueError(f"record['energy_parts0'] must hold {', '.join(ENERGY_PARTS)}: it is not one "
                             f"EnergyParts.as_dict() returned")
        for key, value in parts.items():
            if key in ("base", "velocity"):
                _check_numbers(value, f"record['energy_parts0']['{key}']")
            else:
                finite_number(value, f"record['energy_parts0']['{key}']")
    state.check()
    if "n" in record and record["n"] != state.n:
        raise ValueError(f"the record was taken of {record['n']!r} bodies, not the state's {state.n}: "
                         f"it belongs to another cluster")
    if "masses_sha256" in record and record["masses_sha256"] != _masses_digest(state.m):
        raise ValueError("the record was taken of bodies with other masses than the state's: it belongs to "
                         "another cluster")
    if "eps" in record and record["eps"] != state.eps:
        raise ValueError(f"the record was taken with the softening eps = {record['eps']!r}, not the state's "
                         f"{state.eps!r}: it belongs to another cluster")
    if "units" in record and record["units"] != state.units.as_dict():
        raise ValueError(f"the record was taken in the units {record['units']!r}, not the state's "
                         f"{state.units.as_dict()!r}: it belongs to another cluster")
    if state.t != t0 + done * dt:
        raise ValueError(f"the state's time t = {state.t!r} is not the record's t0 + steps_done * dt = "
                         f"{t0 + done * dt!r}: the state is not the one the record was taken with")
    if "bodies_sha256" in record and record["bodies_sha256"] != state.digest():
        raise ValueError("the record was taken of bodies at other positions or velocities than the state's (the "
                         "same N, masses and time): the state is another cluster's, or was changed since")
