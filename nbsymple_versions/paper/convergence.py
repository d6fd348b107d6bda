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


def error_text(internal: float | None, spec: str = ".1e") -> str:
    """An internal-energy error as the reports write it (`spec`: ".1e", ".2g"), with more digits
    where those would put it at INTERNAL_LIMIT or on its other side: 0.01004 is '1.004e-02', not
    the '1.0e-02' that read "largest 1.0e-02 > 0.01: NOT CONVERGED" (a hunt); 'unknown' for None."""
    if internal is None:
        return "unknown"
    kind, digits = spec[-1], int(spec[1:-1])
    while True:
        text = format(internal, f".{digits}{kind}")
        shown = float(text)
        if digits >= 17 or ((shown <= INTERNAL_LIMIT) == (internal <= INTERNAL_LIMIT)
                            and (shown != INTERNAL_LIMIT or internal == INTERNAL_LIMIT)):
            return text
        digits += 1


def not_converged(internal: float | None) -> bool:
    """True where the internal-energy error exceeds INTERNAL_LIMIT (or is unknown): the time step
    heated the cluster by more than 1 % of its binding energy, so its tails, escapes and passage
    are shaped by the integration, not only by the physics."""
    return internal is None or not internal <= INTERNAL_LIMIT


def internal_sentence(internal: float | None, most: float | None) -> str:
    """'internal energy error 3.1e-03 at the end (largest 3.2e-03; converged: <= 0.01)' or its
    not-converged form; `most`: the largest over the run's snapshots, which decides."""
    value, worst = error_text(internal), error_text(most)
    if not_converged(most):
        return (f"internal energy error {value} at the end, largest {worst} > {INTERNAL_LIMIT:g}: NOT CONVERGED (the "
                f"step heated the cluster; what follows is shaped by numerical heating and is not a physical result)")
    return f"internal energy error {value} at the end (largest {worst}; converged: <= {INTERNAL_LIMIT:g})"
