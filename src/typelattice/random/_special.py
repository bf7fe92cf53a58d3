"""erf and its inverse, as typelattice.numpy operations (so that they trace).

The truncated normal distribution needs them, and neither NumPy nor the
namespace has them. Both take float32 or float64 arrays and compute in that
dtype.
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np

import typelattice.numpy as tnp
from typelattice.numpy import Array

__all__ = ["erf", "erfinv"]

_SQRT_PI: Final = math.sqrt(math.pi)

# Below _SPLIT, erf is summed as a series; above, erfc is evaluated as a
# continued fraction. With these term counts both are within a few ulp of
# float64 over the whole line (checked against math.erf in the tests).
_SPLIT: Final = 2.0
_SERIES_TERMS: Final = 30
_FRACTION_TERMS: Final = 50

# Giles, "Approximating the erfinv function" (GPU Computing Gems Jade
# Edition, 2011): the single-precision polynomials in w = -log(1 - y**2),
# highest degree first, for w < 5 (in w - 2.5) and beyond (in sqrt(w) - 3).
_CENTRAL: Final = (
    2.81022636e-08,
    3.43273939e-07,
    -3.5233877e-06,
    -4.39150654e-06,
    0.00021858087,
    -0.00125372503,
    -0.00417768164,
    0.246640727,
    1.50140941,
)
_TAIL: Final = (
    -0.000200214257,
    0.000100950558,
    0.00134934322,
    -0.00367342844,
    0.00573950773,
    -0.0076224613,
    0.00943887047,
    1.00167406,
    2.83297682,
)
# Newton steps on erf(x) = y that take the float32 approximation to the
# precision float64 allows.
_NEWTON_STEPS: Final = 2
_FLOAT64: Final = np.dtype("float64")


def erf(x: Array) -> Array:
    """The error function of a float32 or float64 array, elementwise."""
    ax = tnp.abs(x)
    # erf(x) = 2/sqrt(pi) exp(-x**2) sum_n (2 x**2)**n x / (1*3*...*(2n+1)):
    # every term is positive, so nothing cancels.
    s = tnp.minimum(ax, _SPLIT)
    ratio = 2 * s * s
    term = s
    total = s
    for n in range(1, _SERIES_TERMS + 1):
        term = term * ratio / (2 * n + 1)
        total = total + term
    series = (2 / _SQRT_PI) * tnp.exp(-s * s) * total
    # erfc(x) = exp(-x**2) / sqrt(pi) / (x + (1/2) / (x + 1 / (x + (3/2) /
    # (x + ...)))), evaluated from the bottom; x = inf gives erfc = 0.
    t = tnp.maximum(ax, _SPLIT)
    fraction = t
    for k in range(_FRACTION_TERMS, 0, -1):
        fraction = t + (k / 2) / fraction
    tail = 1 - tnp.exp(-t * t) / (_SQRT_PI * fraction)
    return tnp.copysign(tnp.where(ax < _SPLIT, series, tail), x)


def _polynomial(coefficients: tuple[float, ...], x: Array) -> Array:
    p = coefficients[0] * x + coefficients[1]
    for c in coefficients[2:]:
        p = p * x + c
    return p


def erfinv(y: Array) -> Array:
    """The inverse error function of a float32 or float64 array in [-1, 1]."""
    w = -tnp.log((1 - y) * (1 + y))
    central = _polynomial(_CENTRAL, w - 2.5)
    tail = _polynomial(_TAIL, tnp.sqrt(w) - 3)
    x = tnp.where(w < 5, central, tail) * y
    if y.dtype == _FLOAT64:
        for _ in range(_NEWTON_STEPS):
            x = x - (erf(x) - y) / ((2 / _SQRT_PI) * tnp.exp(-x * x))
    return tnp.where(tnp.abs(y) == 1, tnp.copysign(math.inf, y), x)
