"""Tail probabilities of the chi^2 and F distributions (numpy has neither, scipy is not a
dependency): the p-values of the dt-series test (`dt_series.share_test`). Regularised
incomplete gamma and beta functions by their series and continued fractions (Numerical
Recipes, 3rd ed., sections 6.2 and 6.4), to ~1e-12 relative."""
from __future__ import annotations

import math

_EPS = 1e-15
_TINY = 1e-300
_ITER = 500


def _gamma_series(a: float, x: float) -> float:
    """P(a, x), the regularised lower incomplete gamma function, for x < a + 1."""
    term = total = 1.0 / a
    ap = a
    for _ in range(_ITER):
        ap += 1.0
        term *= x / ap
        total += term
        if abs(term) < abs(total) * _EPS:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _gamma_fraction(a: float, x: float) -> float:
    """Q(a, x) = 1 - P(a, x), by Lentz's continued fraction, for x >= a + 1."""
    b = x + 1.0 - a
    c, d = 1.0 / _TINY, 1.0 / b
    h = d
    for i in range(1, _ITER):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = _TINY if abs(d) < _TINY else d
        c = b + an / c
        c = _TINY if abs(c) < _TINY else c
        d = 1.0 / d
        h *= d * c
        if abs(d * c - 1.0) < _EPS:
            break
    return math.exp(-x + a * math.log(x) - math.lgamma(a)) * h


def chi2_sf(chi2: float, dof: int) -> float:
    """P(X >= chi2) for X ~ chi^2 with `dof` degrees of freedom."""
    if dof < 1:
        raise ValueError(f"a chi^2 test needs at least 1 degree of freedom, got {dof}")
    if chi2 <= 0.0:
        return 1.0
    a, x = 0.5 * dof, 0.5 * chi2
    return 1.0 - _gamma_series(a, x) if x < a + 1.0 else _gamma_fraction(a, x)


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (_TINY if abs(d) < _TINY else d)
    h = d
    for m in range(1, _ITER):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (_TINY if abs(d) < _TINY else d)
            c = 1.0 + aa / c
            c = _TINY if abs(c) < _TINY else c
            h *= d * c
        if abs(d * c - 1.0) < _EPS:
            break
    return h


def beta_regularised(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularised incomplete beta function, 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def f_sf(f: float, dof1: int, dof2: int) -> float:
    """P(X >= f) for X ~ F(dof1, dof2): the one-way analysis of variance's p-value, a chi^2 test
    whose variance is itself estimated from `dof2` degrees of freedom."""
    if dof1 < 1 or dof2 < 1:
        raise ValueError(f"an F test needs at least 1 degree of freedom on each side, got {dof1} and {dof2}")
    if f <= 0.0:
        return 1.0
    return beta_regularised(0.5 * dof2, 0.5 * dof1, dof2 / (dof2 + dof1 * f))
