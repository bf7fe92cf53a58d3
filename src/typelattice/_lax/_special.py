"""Special functions that NumPy lacks, on float64 NumPy arrays.

``erf``, ``erfc`` and ``lgamma`` evaluate Python's ``math`` functions per
element (correctly rounded to double, slower than a ufunc: these are not hot
paths); ``erf_inv`` refines a rational first guess with Newton steps on
``erf``; ``digamma`` uses the recurrence and the asymptotic series. Callers
round the float64 results to the operand's dtype, which is at least as
accurate as XLA's float32 approximations.
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np

__all__ = ["digamma", "erf", "erf_inv", "erfc", "lgamma", "polygamma"]

Float64 = np.ndarray[Any, np.dtype[np.float64]]

_erf: Final = np.frompyfunc(math.erf, 1, 1)
_erfc: Final = np.frompyfunc(math.erfc, 1, 1)


def erf(x: Float64) -> Float64:
    return np.asarray(_erf(x), dtype=np.float64)


def erfc(x: Float64) -> Float64:
    return np.asarray(_erfc(x), dtype=np.float64)


def _lgamma_scalar(v: float) -> float:
    try:
        return math.lgamma(v)
    except ValueError:  # a pole: 0, -1, -2, ... where |gamma| is infinite
        return math.inf


_lgamma: Final = np.frompyfunc(_lgamma_scalar, 1, 1)


def lgamma(x: Float64) -> Float64:
    """``log |gamma(x)|``; ``inf`` at the poles, as JAX."""
    return np.asarray(_lgamma(x), dtype=np.float64)


def erf_inv(x: Float64) -> Float64:
    """The inverse of ``erf`` on ``[-1, 1]`` (``±inf`` at ``±1``, NaN
    outside)."""
    inside = np.abs(x) < 1
    t = np.where(inside, x, 0.0)
    # First guess: the logarithmic approximation of Winitzki (2008),
    # erf_inv(t) ~ sign(t) sqrt(sqrt((2/(pi a) + l/2)^2 - l/a) - (2/(pi a) + l/2))
    # with l = log(1 - t^2), a = 0.147; relative error below 2e-3.
    a = 0.147
    log1m = np.log1p(-t * t)
    head = 2 / (math.pi * a) + log1m / 2
    y = np.sign(t) * np.sqrt(np.sqrt(head * head - log1m / a) - head)
    # Newton on erf(y) = t: erf'(y) = 2/sqrt(pi) exp(-y^2). Each step
    # squares the relative error; three take 2e-3 below double precision.
    for _ in range(3):
        step = (erf(y) - t) / (2 / math.sqrt(math.pi) * np.exp(-y * y))
        y = y - step
    y = np.where(inside, y, np.nan)
    y = np.where(x == 1, np.inf, y)
    return np.where(x == -1, -np.inf, y)


# Asymptotic series of digamma: log x - 1/(2x) - sum B_2k / (2k x^2k), with
# the Bernoulli numbers B_2 .. B_12; accurate to double precision for x >= 10
# (the first term left out is below 1e-16 there).
_DIGAMMA_SERIES: Final = (
    1 / 12,
    -1 / 120,
    1 / 252,
    -1 / 240,
    1 / 132,
    -691 / 32760,
)


def digamma(x: Float64) -> Float64:
    """``d/dx log gamma(x)``; NaN at the poles 0, -1, -2, ..., as JAX."""
    pole = (x <= 0) & (x == np.floor(x))
    # Reflection for x < 0: psi(x) = psi(1 - x) - pi / tan(pi x).
    negative = x < 0
    z = np.where(negative, 1 - x, x)
    z = np.where(pole | ~np.isfinite(z), 1.0, z)
    shift = np.zeros_like(z)
    while True:  # psi(z) = psi(z + 1) - 1/z until z >= 10
        small = z < 10
        if not small.any():
            break
        shift = shift - np.where(small, 1 / z, 0.0)
        z = np.where(small, z + 1, z)
    inv2 = 1 / (z * z)
    series = np.zeros_like(z)
    for coefficient in reversed(_DIGAMMA_SERIES):
        series = (series + coefficient) * inv2
    psi = np.log(z) - 0.5 / z - series + shift
    reflected = psi - math.pi / np.tan(math.pi * np.where(negative, x, 0.5))
    out = np.where(negative, reflected, psi)
    out = np.where(x == np.inf, np.inf, out)
    return np.where(pole | np.isnan(x) | (x == -np.inf), np.nan, out)


# Bernoulli numbers B_2 .. B_12, for the asymptotic series of the Hurwitz
# zeta function below.
_BERNOULLI: Final = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730)


def _cot_derivative(m: int) -> np.ndarray[Any, Any]:
    """The coefficients (lowest degree first) of the polynomial ``P_m`` with
    ``d^m/du^m cot(u) = P_m(cot(u))``: ``P_0(c) = c`` and, as ``cot' = -(1 +
    cot^2)``, ``P_{k+1}(c) = -P_k'(c) (1 + c^2)``."""
    coefficients = np.array([0.0, 1.0])
    for _ in range(m):
        coefficients = -np.polynomial.polynomial.polymul(
            np.polynomial.polynomial.polyder(coefficients), [1.0, 0.0, 1.0]
        )
    return coefficients


def polygamma(m: int, x: Float64) -> Float64:
    """The ``m``-th derivative of digamma (``m >= 1``); at the poles 0, -1,
    ... ``inf`` for odd ``m`` and NaN for even ``m``, as JAX.

    For ``x > 0``: ``psi^(m)(x) = (-1)^(m+1) m! zeta(m+1, x)``, the Hurwitz
    zeta function summed term by term until ``x >= 10 + m``, then by its
    asymptotic series. For ``x < 0`` the reflection formula, the ``m``-th
    derivative of ``psi(1 - x) - psi(x) = pi cot(pi x)``.
    """
    pole = (x <= 0) & (x == np.floor(x))
    negative = (x < 0) & ~pole
    z = np.where(negative, 1 - x, x)
    z = np.where(pole | ~np.isfinite(z), 1.0, z)
    s = m + 1
    total = np.zeros_like(z)
    while True:  # zeta(s, z) = z^-s + zeta(s, z + 1)
        small = z < 10 + m
        if not small.any():
            break
        total = total + np.where(small, z**-s, 0.0)
        z = np.where(small, z + 1, z)
    # zeta(s, z) ~ z^(1-s)/(s-1) + z^-s/2 + sum B_2k/(2k)! (s)_(2k-1) z^(1-s-2k)
    total = total + z ** (1 - s) / (s - 1) + z**-s / 2
    rising = float(s)  # (s)_(2k-1), the rising factorial
    for k, bernoulli in enumerate(_BERNOULLI, start=1):
        term = bernoulli / math.factorial(2 * k) * rising * z ** (1 - s - 2 * k)
        total = total + term
        rising *= (s + 2 * k - 1) * (s + 2 * k)
    odd = m % 2 == 1  # (-1)^(m+1) is 1
    psi = (1.0 if odd else -1.0) * math.factorial(m) * total
    # Reflection: psi^(m)(x) = (-1)^m psi^(m)(1 - x) - pi^(m+1) P_m(cot(pi x)).
    cot = 1 / np.tan(math.pi * np.where(negative, x, 0.5))
    slope = np.asarray(
        np.polynomial.polynomial.polyval(cot, _cot_derivative(m)), np.float64
    )
    reflected = (-psi if odd else psi) - math.pi ** (m + 1) * slope
    out = np.where(negative, reflected, psi)
    out = np.where(x == np.inf, 0.0, out)
    out = np.where(pole, np.inf if odd else np.nan, out)
    return np.where(np.isnan(x) | (x == -np.inf), np.nan, out)
