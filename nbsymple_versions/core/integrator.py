"""The one stepping loop: drifts and kicks of a coefficient table over a force pipeline.

Time advancing always happens on the host in float64 (the paper's "time advancing on the
CPU in DP"); only the forces depend on the version and precision.
"""
import itertools
import math
import weakref

import numpy as np

from .checks import callable_or_none, finite_number, instance, positive_number, separate, whole_number, writable
from .schemes import Scheme


def advance(state, forces, scheme, dt, steps, acc, on_step=None, step0=0, t0=None):
    """Advance `state` in place by `steps` steps of size `dt` with `scheme`:
    for each l, x += C[l] v dt, then (if D[l] != 0) a = F(x) and v += D[l] a dt.
    `acc` (3, N) float64 is scratch for the accelerations; `on_step(k)` is called after step k
    (k counts from 1 in this call). The time after step k is t0 + (step0 + k) dt, with t0 the
    time at step 0 of the run (default: `state.t`, step0 = 0): never a running sum, so a run
    split into several calls (or resumed from a checkpoint) lands on the same bits."""
    if not _plain_arguments(state, scheme, dt, steps, acc, on_step):     # else one sentence on what is wrong
        dt, steps = _checked_arguments(state, scheme, dt, steps, acc, on_step)
    if type(step0) is not int or step0 < 0 or not (t0 is None or type(t0) is float and math.isfinite(t0)):
        step0 = whole_number(step0, "step0", 0)                 # (t0 nan made state.t nan; step0 "3" a TypeError)
        t0 = None if t0 is None else finite_number(t0, "t0")
    if (built := getattr(forces, "built_for", None)) is not None and not built_for(built, state):
        raise ValueError(pipeline_mismatch(built, state))        # it read masses out of bounds, in silence
    x, v = c_ordered(state)
    t0 = state.t if t0 is None else t0
    for k in range(1, steps + 1):
        for c, d in zip(scheme.drift, scheme.kick):
            forces.drift(x, v, c * dt)
            if d != 0.0:
                forces.accelerations(x, acc)
                forces.kick(v, acc, d * dt)
        state.t = t0 + (step0 + k) * dt
        if on_step is not None:
            on_step(k)
            if state.x is not x or state.v is not v:     # arrays `on_step` assigned are stepped on (a hunt:
                x, v = c_ordered(state)                   # the old ones were, while t went on)
                separate({"state.x": x, "state.v": v, "state.m": state.m, "acc": acc})


def c_ordered(state):
    """The state's x and v, each made C-ordered float64 where it is not (assigned to the state):
    the drifts and kicks write through a flat view, and of any other array that is a copy (a
    hunt: a Fortran-ordered x stood still in sp while t advanced)."""
    for name in ("x", "v"):
        a = getattr(state, name)
        if not (a.flags.c_contiguous and a.dtype == np.float64):
            setattr(state, name, np.ascontiguousarray(a, dtype=np.float64))
    return state.x, state.v


def built_for(built: tuple, state, masses: bool = True) -> bool:
    """Whether a pipeline's `built_for` (N, eps, units and, with `masses`, the masses) is
    `state`'s (a memory compare of the masses, microseconds at N = 16384: a hunt found `advance`
    take a pipeline of other masses; `check_pipeline` compares such a one's forces, to fail it)."""
    return (built[0] == state.n and built[1] == state.eps and (built[2] is state.units or built[2] == state.units)
            and (not masses or len(built) < 4 or np.array_equal(built[3], state.m)))


def pipeline_mismatch(built: tuple, state) -> str:
    """The sentence for a force pipeline built for another cluster than `state`."""
    masses = "" if len(built) < 4 or built[0] != state.n or np.array_equal(built[3], state.m) else " (other masses)"
    return (f"forces was built for N = {built[0]}, eps = {built[1]!r}, {built[2]}{masses}, not this state's N = "
            f"{state.n}, eps = {state.eps!r}, {state.units}: build it for the state "
            f"(get_version(v).pipeline(state, ...))")


def _plain_arguments(state, scheme, dt, steps, acc, on_step) -> bool:
    """Whether the arguments are what every caller in the suite passes (a float step, an int
    count, a writable float64 scratch of the positions' shape, x, v, m and it apart in memory):
    then nothing more is checked, so that the stepping loop timed step by step (benchmarks/) pays
    almost nothing for it."""
    return (type(dt) is float and 0.0 < dt < float("inf") and type(steps) is int and steps >= 0
            and type(acc) is np.ndarray and acc.dtype == np.float64 and acc.shape == state.x.shape
            and acc.flags.writeable and isinstance(scheme, Scheme) and (on_step is None or callable(on_step))
            and _apart(state.x, state.v, state.m, acc))


_APART = [lambda: None] * 4        # weak references to the last x, v, m and acc `_apart` found apart


def _apart(x, v, m, acc) -> bool:
    """Whether no two of the arrays' memory ranges meet (their bounds only; `separate` then
    decides exactly). The last four found apart are known again by identity (an array keeps its
    memory), so that the loop timed step by step pays a tenth of a microsecond for it, not 1.7."""
    last = _APART
    if last[0]() is x and last[1]() is v and last[2]() is m and last[3]() is acc:
        return True
    if any(np.may_share_memory(a, b) for a, b in itertools.combinations((x, v, m, acc), 2)):
        return False
    try:
        _APART[:] = [weakref.ref(a) for a in (x, v, m, acc)]
    except TypeError:                  # an array of another library, which takes no weak reference: not kept
        pass
    return True


def _checked_arguments(state, scheme, dt, steps, acc, on_step):
    """(dt, steps) once every argument is checked; else TypeError or ValueError in one sentence
    naming the argument."""
    dt = positive_number(dt, "dt (the time step)")
    steps = whole_number(steps, "steps", 0)
    instance(scheme, Scheme, "scheme", "a Scheme (get_scheme(name))")
    instance(acc, np.ndarray, "acc", "a (3, N) float64 array")
    if acc.dtype != np.float64 or acc.shape != state.x.shape:
        raise ValueError(f"acc must be a float64 array of the positions' shape {state.x.shape}, got {acc.dtype} "
                         f"{acc.shape}")
    writable(acc, "acc")
    separate({"state.x": state.x, "state.v": state.v, "state.m": state.m, "acc": acc})
    callable_or_none(on_step, "on_step")
    return dt, steps
