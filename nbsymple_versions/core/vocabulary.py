"""The suite's words, each declared once: precisions, tasks, and the flops of one interaction.

Version letters live with the versions themselves (`nbsymple_versions/versions.py`, the
paper's Table 1); physical constants with the units (`units.py`) and the Galaxy (`galaxy.py`).
"""
from .checks import one_of

# Precision of the pairwise (and, for version E, the galactic) force; integration is always dp.
#   sp   float32 positions, pair terms and sums
#   dp   float64 throughout
#   dsp  double-single: float32 hi + lo positions, float32 pair terms (the paper's Sapporo mode)
PRECISIONS = ("sp", "dp", "dsp")

# The paper's four tasks (Fig. 1, Tables 4-6) and F's fifth, timed by `clock.TaskClock`.
#   pairwise     O(N^2) mutual forces
#   galactic     O(N) external field of the Galaxy
#   integrate    O(N) drifts and kicks on the host
#   transfer     host <-> device copies (zero on CPU versions)
#   communicate  exchanges between MPI ranks (version F only; zero on A-E)
TASKS = ("pairwise", "galactic", "integrate", "transfer", "communicate")

# Floating-point operations of one pair interaction, counted line by line as GPU Gems 3, ch. 31
# (and the CUDA samples' nbody) count them; the kernels carry the same counts in comments.
FLOPS_PER_LINE = {
    "dx, dy, dz = x_j - x_i": 3,
    "r2 = dx^2 + dy^2 + dz^2 + eps^2": 6,
    "r^-3 = rsqrt(r2)^3": 4,            # 1 rsqrt (counted as 2: sqrt and divide) + 2 multiplies
    "f = m_j r^-3": 1,
    "a += f (dx, dy, dz)": 6,
}
FLOPS_PER_INTERACTION = sum(FLOPS_PER_LINE.values())   # 20, the field's convention


def precision_name(precision) -> str:
    """The entry of PRECISIONS that `precision` names in any case ('DP' -> 'dp'), else a
    ValueError that lists them (what the Python API takes from a user)."""
    return one_of(precision, PRECISIONS, "precision")


def check_precision(precision: str) -> str:
    """`precision` if it is exactly one of PRECISIONS (the code's own spelling, as the
    pipelines compare it), else a ValueError that lists them."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}")
    return precision
