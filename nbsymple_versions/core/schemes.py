"""Symplectic schemes as drift/kick coefficient tables, run by one loop in `integrator.py`:
for l: x += C[l] v h; if D[l] != 0: a = F(x); v += D[l] a h.
"""
from dataclasses import dataclass
from decimal import Decimal, localcontext

from .checks import one_of


@dataclass(frozen=True)
class Scheme:
    name: str
    order: int
    drift: tuple   # C[l]
    kick: tuple    # D[l]; a zero entry means no force evaluation

    @property
    def force_evaluations(self) -> int:
        return sum(1 for d in self.kick if d != 0.0)

    @property
    def drift_kick_pairs(self) -> float:
        """A step's drifts and kicks in pairs of one drift and one kick, what the host's integrate
        task is timed over (`tasks.HostTasks.time_integrate`): leapfrog 1.5, SI6A 7.5."""
        return (len(self.drift) + self.force_evaluations) / 2


# Leapfrog, drift-kick-drift: 2nd order, one force evaluation per step.
LEAPFROG = Scheme("leapfrog", 2, (0.5, 0.5), (1.0, 0.0))


def _si6a() -> Scheme:
    """Yoshida (1990) solution A (Kinoshita, Yoshida & Nakai 1991, Table 1): 6th order,
    8 drifts and 7 kicks. Built from the weights at 30 digits so that the order conditions
    hold to rounding (the printed 15-digit table leaves 1e-14)."""
    with localcontext(prec=40):      # the caller's decimal context stays as it was
        w1 = Decimal("-1.17767998417887100694641568096")
        w2 = Decimal("0.235573213359358133684793182979")
        w3 = Decimal("0.784513610477557263819497633866")
        w0 = 1 - 2 * (w1 + w2 + w3)
        half = (w3 / 2, (w3 + w2) / 2, (w2 + w1) / 2, (w1 + w0) / 2)
    drift = tuple(float(c) for c in half + half[::-1])
    kick = tuple(float(d) for d in (w3, w2, w1, w0, w1, w2, w3)) + (0.0,)
    return Scheme("si6a", 6, drift, kick)


SI6A = _si6a()
SCHEMES = {s.name: s for s in (LEAPFROG, SI6A)}


def get_scheme(name: str) -> Scheme:
    """The scheme `name` names in any case ('SI6A' -> si6a); a ValueError lists them."""
    return SCHEMES[one_of(name, tuple(SCHEMES), "scheme")]
