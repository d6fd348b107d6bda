"""When a science run is converged: its internal-energy error |E - E0| / |K_int,0 + W_0| (the
change of the total energy in units of the cluster's own binding energy, `core.diagnostics`)
stays at or below INTERNAL_LIMIT at every snapshot; and the sentence that says so. No
matplotlib: the Markdown writers and the command line use it without drawing."""
from __future__ import annotations

INTERNAL_LIMIT = 1e-2     # internal-energy error above which a science run is "not converged"


def largest(errors) -> float | None:
    """The largest of a run's internal-energy errors; None where there is none or one is unknown."""
    errors = list(errors)
    return None if not errors or any(e is None for e in errors) else max(errors)


def not_converged(internal: float | None) -> bool:
    """True where the internal-energy error exceeds INTERNAL_LIMIT (or is unknown): the time step
    heated the cluster by more than 1 % of its binding energy, so its tails, escapes and passage
    are shaped by the integration, not only by the physics."""
    return internal is None or not internal <= INTERNAL_LIMIT


def internal_sentence(internal: float | None, most: float | None) -> str:
    """'internal energy error 3.1e-03 at the end (largest 3.2e-03; converged: <= 0.01)' or its
    not-converged form; `most`: the largest over the run's snapshots, which decides."""
    value = "unknown" if internal is None else f"{internal:.1e}"
    worst = "unknown" if most is None else f"{most:.1e}"
    if not_converged(most):
        return (f"internal energy error {value} at the end, largest {worst} > {INTERNAL_LIMIT:g}: NOT CONVERGED (the "
                f"step heated the cluster; what follows is shaped by numerical heating and is not a physical result)")
    return f"internal energy error {value} at the end (largest {worst}; converged: <= {INTERNAL_LIMIT:g})"
