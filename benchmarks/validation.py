"""Validation before timing. Every `setup` validates the version x precision against the
float64 reference (N = 256, fresh random inputs, the same pipeline factory and hence the same
compiled kernels it then times) before anything is timed; a wrong kernel raises
`ValidationError`, a failure in asv's report. Where the measured commit does not make the
package's validation public, the float64 direct sum below stands in for it.
"""
import numpy as np

from .package import SkipNotImplemented, public

VALIDATION_N = 256


class ValidationError(RuntimeError):
    """The pipeline about to be timed does not reproduce the float64 reference forces."""


# Validation at a commit whose package does not make it public (check_pipeline, TOLERANCE and
# FRAME_KPC became public names with this suite): the float64 direct sum below, with the
# tolerances and frames of that commit's validation.py, the same from 2528594a on
LEGACY_TOLERANCE = {"dp": 1e-12, "dsp": 1e-5, "sp": 1e-4}
LEGACY_FRAME_KPC = {"dp": 8.5, "dsp": 8.5, "sp": None}


def _legacy_check(forces, state, tolerance) -> tuple[float, bool]:
    """`validation.check_pipeline` for a commit that does not make it public."""
    if forces.backend.includes_galactic:
        raise SkipNotImplemented("this commit's nbsymple_versions has no public float64 Galaxy to validate "
                                 "a kernel that adds it")
    out = np.zeros_like(state.x)
    forces.pairwise(state.x, out)
    pos = state.positions
    d = pos[None, :, :] - pos[:, None, :]                      # x_j - x_i
    r2 = (d * d).sum(axis=2) + state.eps * state.eps
    ref = ((state.m[None, :] / (r2 * np.sqrt(r2)))[:, :, None] * d).sum(axis=1)
    err = float(np.linalg.norm(out.T - ref, axis=1).max() / np.linalg.norm(ref, axis=1).max())
    return err, bool(np.isfinite(err) and err <= tolerance)


def validation_rules() -> tuple[dict, dict, object]:
    """(tolerance and frame by precision, check(forces, state, tolerance) -> (error, ok)) of
    the measured commit: its public ones, else the legacy ones above."""
    if public.has("check_pipeline"):
        return public.TOLERANCE, public.FRAME_KPC, public.check_pipeline
    return LEGACY_TOLERANCE, LEGACY_FRAME_KPC, _legacy_check
