"""Lowerings: namespace functions written with ``typelattice.lax``
primitives, for the differentiation transformations.

Elementwise functions name theirs in their :class:`Op` (``lower=``): a
primitive, or one of the compositions below, called on operands already
promoted to the compute dtype and broadcast to one shape. Other functions
register theirs with :func:`~typelattice._tracing.trace.lowering` next to
their definitions. Every composition here computes what NumPy computes
(the same formula); the tests compare them with the eager functions.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from typelattice import _dtypes, lax

Array = Any


def identity(x: Array) -> Array:
    return x


def _is_complex(x: Array) -> bool:
    return _dtypes.kind_of(x.dtype) == "c"


def floor_mod(x: Array, y: Array) -> Array:
    """``x - floor(x / y) * y`` as NumPy's ``remainder``: the remainder of
    truncated division, moved by ``y`` when the signs differ."""
    r = lax.rem(x, y)
    fix = lax.bitwise_and(lax.ne(r, 0), lax.ne(lax.lt(r, 0), lax.lt(y, 0)))
    return lax.select(fix, lax.add(r, y), r)


def logaddexp(x: Array, y: Array) -> Array:
    """``max(x, y) + log1p(exp(-|x - y|))``; NaN where ``x - y`` is (two
    infinities of one sign give that infinity)."""
    amax = lax.max(x, y)
    delta = lax.sub(x, y)
    safe = lax.select(lax.ne(delta, delta), _full_like(delta, 0), delta)
    out = lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(safe)))))
    equal_inf = lax.bitwise_and(lax.eq(x, y), lax.bitwise_not(lax.is_finite(x)))
    nan = lax.ne(delta, delta)
    return lax.select(equal_inf, x, lax.select(nan, delta, out))


def logaddexp2(x: Array, y: Array) -> Array:
    """``max(x, y) + log2(1 + 2**-|x - y|)``."""
    amax = lax.max(x, y)
    delta = lax.sub(x, y)
    safe = lax.select(lax.ne(delta, delta), _full_like(delta, 0), delta)
    tail = lax.mul(lax.log1p(lax.exp2(lax.neg(lax.abs(safe)))), 1 / math.log(2))
    out = lax.add(amax, tail)
    equal_inf = lax.bitwise_and(lax.eq(x, y), lax.bitwise_not(lax.is_finite(x)))
    nan = lax.ne(delta, delta)
    return lax.select(equal_inf, x, lax.select(nan, delta, out))


def hypot(x: Array, y: Array) -> Array:
    """``sqrt(x**2 + y**2)``, scaled by the larger magnitude so that the
    squares cannot overflow."""
    ax, ay = lax.abs(x), lax.abs(y)
    big, small = lax.max(ax, ay), lax.min(ax, ay)
    zero = lax.eq(big, 0)
    safe = lax.select(zero, _full_like(big, 1), big)
    ratio = lax.div(small, safe)
    out = lax.mul(big, lax.sqrt(lax.add(lax.mul(ratio, ratio), 1)))
    inf = lax.bitwise_or(lax.eq(ax, np.inf), lax.eq(ay, np.inf))
    return lax.select(inf, _full_like(big, np.inf), out)


def copysign(x: Array, y: Array) -> Array:
    """``|x|`` with the sign bit of ``y`` (a constant of the derivative)."""
    from typelattice._tracing.ad import stop_gradient
    from typelattice.numpy._ufuncs import copysign as signed

    ax = lax.abs(x)
    negative = lax.lt(signed(_full_like(ax, 1), stop_gradient(y)), 0)
    return lax.select(negative, lax.neg(ax), ax)


def fmax(x: Array, y: Array) -> Array:
    """The larger of ``x`` and ``y``, ignoring NaN."""
    return lax.select(lax.ne(y, y), x, lax.select(lax.ne(x, x), y, lax.max(x, y)))


def fmin(x: Array, y: Array) -> Array:
    """The smaller of ``x`` and ``y``, ignoring NaN."""
    return lax.select(lax.ne(y, y), x, lax.select(lax.ne(x, x), y, lax.min(x, y)))


def reciprocal(x: Array) -> Array:
    return lax.div(_full_like(x, 1), x)


def square(x: Array) -> Array:
    return lax.mul(x, x)


def log2(x: Array) -> Array:
    """``log(x) / log(2)``."""
    return lax.div(lax.log(x), _full_like(x, math.log(2)))


def log10(x: Array) -> Array:
    """``log(x) / log(10)``."""
    return lax.div(lax.log(x), _full_like(x, math.log(10)))


def conj(x: Array) -> Array:
    return lax.conj(x) if _is_complex(x) else x


def real(x: Array) -> Array:
    return lax.real(x) if _is_complex(x) else x


def imag(x: Array) -> Array:
    return lax.imag(x) if _is_complex(x) else _full_like(x, 0)


def angle(x: Array) -> Array:
    """The angle of a complex number: ``atan2(imag, real)``."""
    if _is_complex(x):
        return lax.atan2(lax.imag(x), lax.real(x))
    return lax.atan2(_full_like(x, 0), x)


def _full_like(x: Array, value: Any) -> Array:
    """A constant of ``x``'s shape and dtype."""
    return lax.full(x.shape, value, x.dtype)
