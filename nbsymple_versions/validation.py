"""Validation of a version x precision against the float64 NumPy reference, on fresh inputs.

The error measure is max_i |a_i - a_ref_i| / max_i |a_ref_i| over the pairwise accelerations
(vector norms). dp and dsp are checked on a cluster placed 850 cluster radii from the origin
(8.5 kpc), where float32 positions lose the cluster; sp near the origin, where it is fine.
For version E, whose kernel fuses the Galaxy, the float64 reference galactic acceleration is
subtracted first, so the same pairwise tolerance applies. The host tasks (`check_host_tasks`): the
galactic acceleration of the host kernels against the reference, a drift and a kick against
NumPy's y + h x, each by the same measure, to `HOST_TOLERANCE` in every precision (float64 all).
"""
from dataclasses import asdict, dataclass
import numbers

import numpy as np

from .core import reference
from .core.galaxy import SUN_RADIUS_KPC
from .core.checks import instance, positive_number
from .core.integrator import built_for, pipeline_mismatch
from .core.ics import State, make_cluster
from .core.pipeline import ForcePipeline
from .core.vocabulary import precision_name
from .versions import get_version

# float32 sums over close pairs (softening 6.5e-4) carry terms far larger than the net force, so
# the float32 error grows with N: measured max over seeds, N = 256 .. 16384, sp 4e-6 .. 2e-5,
# dsp 5e-7 .. 3e-6 (and sp at 8.5 kpc: 7e-3). A wrong kernel is off by 1e-2 or more.
TOLERANCE = {"dp": 1e-12, "dsp": 1e-5, "sp": 1e-4}
# the galactic force, the drifts and the kicks are float64 in every version and precision: measured
# 3e-16 to 4e-16 (A, B, F; N = 100 and 1000; at the origin and at 8.5 kpc)
HOST_TOLERANCE = TOLERANCE["dp"]
FRAME_KPC = {"dp": SUN_RADIUS_KPC, "dsp": SUN_RADIUS_KPC, "sp": None}   # where each precision is checked


@dataclass
class Check:
    version: str
    precision: str
    n: int
    max_relative_error: float
    tolerance: float
    passed: bool
    seed: int | None = None        # the cluster's, where a whole number made it (None: one NumPy drew)
    host_tasks_error: float | None = None       # `check_host_tasks`' (to `HOST_TOLERANCE`); None: not checked

    def as_dict(self) -> dict:
        d = asdict(self)
        d["pass"] = d.pop("passed")
        return d


def max_relative_error(acc, ref) -> float:
    """max_i |acc_i - ref_i| / max_i |ref_i| for (N, 3) arrays."""
    scale = np.linalg.norm(ref, axis=1).max()
    return float(np.linalg.norm(acc - ref, axis=1).max() / scale)


def _checked(forces, state, tolerance) -> float:
    """The checks' arguments as given, TypeError or ValueError in one sentence (a hunt: AttributeError)."""
    instance(forces, ForcePipeline, "forces", "a force pipeline (Version.pipeline)")
    instance(state, State, "state", "a State (make_cluster, State.from_arrays)")
    return positive_number(tolerance, "tolerance")


def check_pipeline(forces, state, tolerance) -> tuple[float, bool]:
    """Compare a force pipeline's pairwise accelerations of `state` with the reference."""
    tolerance = _checked(forces, state, tolerance)
    if (built := getattr(forces, "built_for", None)) is not None and not built_for(built, state, masses=False):
        raise ValueError(pipeline_mismatch(built, state))        # a right kernel said to fail, or a traceback
    out = np.zeros_like(state.x)
    forces.pairwise(state.x, out)
    acc = out.T
    if forces.backend.includes_galactic:
        acc = acc - reference.galactic_acceleration(state.positions, state.units)
    err = max_relative_error(acc, reference.pairwise_acceleration(state.positions, state.m, state.eps))
    return err, bool(np.isfinite(err) and err <= tolerance)


HOST_STEP = 0.375         # the h of the drift and the kick checked (any: h = 0 would check nothing)


def check_host_tasks(forces, state, tolerance=HOST_TOLERANCE) -> tuple[float, bool]:
    """Compare a force pipeline's host tasks on `state` with float64 NumPy: its galactic
    acceleration (where its kernel does not add it, E) with the reference's, and a drift
    x += h v and a kick v += h a with NumPy's (a hunt: the asv suite timed a galactic kernel
    off by 2x, the pairwise forces alone checked). The largest error of the three, and whether
    it is within `tolerance`."""
    tolerance = _checked(forces, state, tolerance)
    errors = []
    if not forces.backend.includes_galactic:
        out = np.zeros_like(state.x)
        forces.galactic(state.x, out)
        errors.append(max_relative_error(out.T, reference.galactic_acceleration(state.positions, state.units)))
    for step in (forces.drift, forces.kick):         # y += h x on (3, N) arrays, float64 on the host
        y, x = state.x.copy(), state.v.copy()
        step(y, x, HOST_STEP)
        errors.append(max_relative_error(y.T, (state.x + HOST_STEP * state.v).T))
    err = max(errors)
    return err, bool(np.isfinite(err) and err <= tolerance)


def validate(letter: str, precision: str, n: int = 1000, seed=None, **options) -> Check:
    """Build `letter`'s pipeline for a fresh random cluster of n bodies and check its pairwise
    forces and its host tasks; `letter` and `precision` in any case, as `Version.pipeline` takes them."""
    version = get_version(letter)
    precision = precision_name(precision)      # (a review: 'DP' checked at the origin, then a KeyError)
    state = make_cluster(n, seed=seed, radius_kpc=FRAME_KPC.get(precision))
    forces = version.pipeline(state, precision, **options)
    tol = TOLERANCE[precision]
    err, ok = check_pipeline(forces, state, tol)
    host, host_ok = check_host_tasks(forces, state)
    return Check(version.letter, precision, n, err, tol, ok and host_ok,
                 int(seed) if isinstance(seed, numbers.Integral) else None, host)
