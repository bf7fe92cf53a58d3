"""The samplers: uniform, normal, truncated_normal, bernoulli, randint,
categorical, permutation and choice.

Dtypes follow jax.random: the default dtype of the mode (float32 or
int32; float64 or int64 under ``enable_x64``), results strong, and the same
refusals (an integer dtype for ``uniform`` is a ValueError, a float dtype
for ``randint`` a TypeError). The values are not JAX's: the generator and
the ways of turning bits into values are this package's own (see
docs/random.md).

Floats narrower than float32 (bfloat16, float16, the 8-bit floats) are
sampled in float32 and rounded once to the dtype; float64 is sampled from
53 random bits.
"""

# Package-internal: uses the dtype and configuration modules' helpers, and
# the namespace's shape check.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

import typelattice.numpy as tnp
from typelattice import _config, _dtypes
from typelattice.numpy import Array
from typelattice.numpy._creation import _shape
from typelattice.random import _special, _threefry
from typelattice.random._keys import KeyLike, check_key, python_integer

__all__ = [
    "bernoulli",
    "categorical",
    "choice",
    "normal",
    "permutation",
    "randint",
    "truncated_normal",
    "uniform",
]

_FLOAT32: Final = np.dtype("float32")
_FLOAT64: Final = np.dtype("float64")
_INT32: Final = np.dtype("int32")
_SQRT2: Final = math.sqrt(2)
_SQRT_HALF: Final = math.sqrt(0.5)


# -- arguments ------------------------------------------------------------------


def _requested(dtype: Any, default_kind: str, where: str) -> np.dtype[Any]:
    """The dtype argument: the mode's default of ``default_kind`` for None;
    an explicitly named 64-bit dtype follows ``explicit_x64_dtypes``."""
    if dtype is None:
        return _dtypes.default_dtype(default_kind)
    dt = _dtypes.dtype(dtype, canonicalize=False)
    state = _config.current()
    if dt in _dtypes.TO_32 and not state.enable_x64:
        if not _dtypes.is_explicit(dtype):  # Python's float, int: the defaults
            return _dtypes.TO_32[dt]
        return _dtypes.explicit_x64(dt, state.explicit_x64_dtypes, where)
    return dt


def _float_dtype(dtype: Any, where: str, complex_ok: bool = False) -> np.dtype[Any]:
    dt = _requested(dtype, "f", where)
    kinds = ("real floating", "complex floating") if complex_ok else "real floating"
    if not _dtypes.isdtype(dt, kinds):
        wanted = "a float or complex dtype" if complex_ok else "a float dtype"
        raise ValueError(
            f"dtype argument to `{where}` must be {wanted}, got {dt}; e.g. "
            f"dtype='float32' (typelattice.random.randint draws integers)"
        )
    return dt


def _compute_dtype(dt: np.dtype[Any]) -> np.dtype[Any]:
    """The float dtype values of ``dt`` are computed in: float64 for 64-bit
    (and complex128), float32 for everything narrower."""
    return _FLOAT64 if dt in (_FLOAT64, np.dtype("complex128")) else _FLOAT32


def _operand(x: object, where: str, name: str) -> Array:
    """An array argument as an Array: Arrays (tracers too) as they are,
    NumPy arrays and Python or NumPy scalars converted as by ``asarray``."""
    if isinstance(x, Array):
        return x
    if isinstance(x, np.ndarray | np.generic | bool | int | float | complex):
        return tnp.asarray(x)
    raise TypeError(
        f"{where}: {name} must be an array or a scalar, got "
        f"{type(x).__name__} {x!r}; convert it with typelattice.numpy.asarray"
    )


def _real_bound(x: object, dt: np.dtype[Any], where: str, name: str) -> Array:
    """A float parameter converted to ``dt`` (JAX converts it likewise).

    A Python number is converted as a Python scalar is anywhere: one that
    ``dt`` cannot represent (a float that would become inf) is an
    OverflowError, where JAX gives inf (docs/semantics.md, "Data safety")."""
    if isinstance(x, bool | int | float):
        return tnp.asarray(x, dtype=dt)
    a = _operand(x, where, name)
    if _dtypes.isdtype(a.dtype, "complex floating"):
        raise TypeError(
            f"{where}: {name} must be real, got a {a.dtype} value; take its "
            f"real part (typelattice.numpy.real) if the imaginary part is zero"
        )
    return a.astype(dt)


def _check_shapes(where: str, shape: tuple[int, ...], **params: Array) -> None:
    """The parameters must broadcast to ``shape`` (not beyond it)."""
    shapes = [p.shape for p in params.values()]
    try:
        joined = np.broadcast_shapes(shape, *shapes)
    except ValueError:
        joined = None
    if joined != shape:
        described = ", ".join(f"{name} {p.shape}" for name, p in params.items())
        raise ValueError(
            f"{where}: the parameters' shapes ({described}) must broadcast to "
            f"the shape argument {shape}"
        )


def _to_rank(x: Array, ndim: int) -> Array:
    """``x`` with leading axes of length 1 up to ``ndim`` axes: it then
    broadcasts against the samples without rank promotion, and without
    being expanded to their size (parameters are often scalars)."""
    return x.reshape((1,) * (ndim - x.ndim) + x.shape) if x.ndim < ndim else x


def _axis(axis: int, ndim: int, where: str) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(
            f"{where}: axis {axis} is out of bounds for an array of {ndim} "
            f"dimension{'s' if ndim != 1 else ''}"
        )
    return axis % ndim


# -- bits to values -------------------------------------------------------------


def _unit(key: Array, shape: tuple[int, ...], cd: np.dtype[Any]) -> Array:
    """Uniform values in [0, 1) of ``shape`` in ``cd`` (float32 or float64):
    multiples of 2**-24 (float32) or 2**-53 (float64), all equally likely."""
    n = math.prod(shape)
    if cd == _FLOAT64:
        w = _threefry.words(key, 2 * n)
        high = (w[:n] >> 5).astype(cd)  # 27 bits
        low = (w[n:] >> 6).astype(cd)  # 26 bits
        u = (high * 2.0**26 + low) * 2.0**-53
    else:
        u = (_threefry.words(key, n) >> 8).astype(cd) * 2.0**-24
    return u.reshape(shape)


def _scaled_below(u: Array, lo: Array, hi: Array, dt: np.dtype[Any]) -> Array:
    """``lo + u * (hi - lo)`` in ``dt``, for ``u`` in [0, 1) and ``lo``,
    ``hi`` of ``dt`` and of ``u``'s rank: within [lo, hi).

    Note: rounding (of the product, or to a narrow dtype) can reach ``hi``;
    JAX then returns ``hi``, here the largest value of ``dt`` below it."""
    cd = u.dtype
    lo_c, hi_c = lo.astype(cd), hi.astype(cd)
    x = (u * (hi_c - lo_c) + lo_c).astype(dt)
    # (Towards lo, not -inf: the 8-bit floats without infinities have none.)
    x = tnp.where(x < hi, x, tnp.nextafter(hi, lo))
    return tnp.maximum(lo, x)


def _gumbel(key: Array, shape: tuple[int, ...], cd: np.dtype[Any]) -> Array:
    """Standard Gumbel values, ``-log(-log(u))``, u in (0, 1)."""
    u = tnp.maximum(_unit(key, shape, cd), float(_dtypes.finfo(cd).tiny))
    return -tnp.log(-tnp.log(u))


# -- floats ---------------------------------------------------------------------


def uniform(
    key: KeyLike,
    shape: Sequence[int] | int = (),
    dtype: Any = None,
    minval: Any = 0.0,
    maxval: Any = 1.0,
) -> Array:
    """Uniform random floats in [minval, maxval).

    Args:
      key: a key (see :func:`typelattice.random.key`).
      shape: the result's shape, an int or a tuple of ints. Default ().
      dtype: a real float dtype (default float32, float64 under
        ``enable_x64``); bfloat16, float16 and the 8-bit floats are
        sampled in float32 and rounded.
      minval: the lower bound (inclusive): a scalar or an array that
        broadcasts to ``shape``, converted to ``dtype``.
      maxval: the upper bound (exclusive), likewise.

    Returns:
      A strong Array of ``shape`` and ``dtype``. Every value is below
      ``maxval``, also where rounding would reach it (JAX can return
      ``maxval`` then).

    Raises:
      ValueError: a dtype that is not a real float (as JAX); bounds that do
        not broadcast to ``shape``.
      TypeError: a bad key; complex bounds.

    >>> from typelattice import random
    >>> random.uniform(random.key(0), (3,))
    Array([0.4184571 , 0.3146817 , 0.60049903], dtype=float32)
    >>> random.uniform(random.key(0), (2,), 'bfloat16', minval=-1.0).dtype
    dtype(bfloat16)
    """
    k = check_key(key, "uniform")
    dt = _float_dtype(dtype, "uniform")
    dims = _shape(shape, "uniform")
    lo = _real_bound(minval, dt, "uniform", "minval")
    hi = _real_bound(maxval, dt, "uniform", "maxval")
    _check_shapes("uniform", dims, minval=lo, maxval=hi)
    u = _unit(k, dims, _compute_dtype(dt))
    rank = len(dims)
    return _scaled_below(u, _to_rank(lo, rank), _to_rank(hi, rank), dt)


def normal(key: KeyLike, shape: Sequence[int] | int = (), dtype: Any = None) -> Array:
    """Standard normal random values (mean 0, variance 1).

    Args:
      key: a key.
      shape: the result's shape, an int or a tuple of ints. Default ().
      dtype: a float or complex dtype (default float32, float64 under
        ``enable_x64``). A complex value has independent real and imaginary
        parts of variance 1/2 each, as in JAX.

    Returns:
      A strong Array of ``shape`` and ``dtype``.

    Raises:
      ValueError: an integer or bool dtype (as JAX).
      TypeError: a bad key.

    >>> from typelattice import random
    >>> x = random.normal(random.key(0), (10000,))
    >>> x.dtype, bool(abs(x.mean()) < 0.05), bool(abs(x.std() - 1) < 0.05)
    (dtype('float32'), True, True)
    >>> random.normal(random.key(0), (2,), 'complex64').dtype
    dtype('complex64')
    """
    k = check_key(key, "normal")
    dt = _float_dtype(dtype, "normal", complex_ok=True)
    dims = _shape(shape, "normal")
    n = math.prod(dims)
    is_complex = _dtypes.isdtype(dt, "complex floating")
    pairs = n if is_complex else (n + 1) // 2
    u = _unit(k, (2 * pairs,), _compute_dtype(dt))
    # Box-Muller: for u1 in (0, 1] and u2 in [0, 1), sqrt(-2 log u1) times
    # cos and sin of 2 pi u2 are two independent standard normal values.
    radius = tnp.sqrt(-2 * tnp.log(1 - u[:pairs]))
    angle = (2 * math.pi) * u[pairs:]
    re, im = radius * tnp.cos(angle), radius * tnp.sin(angle)
    if is_complex:
        z = (re * _SQRT_HALF).astype(dt) + (im * _SQRT_HALF).astype(dt) * 1j
        return z.reshape(dims)
    return tnp.concatenate([re, im])[:n].reshape(dims).astype(dt)


def truncated_normal(
    key: KeyLike,
    lower: Any,
    upper: Any,
    shape: Sequence[int] | int | None = None,
    dtype: Any = None,
) -> Array:
    """Standard normal random values truncated to the open interval
    (lower, upper).

    Args:
      key: a key.
      lower: the lower bound: a scalar or an array, converted to ``dtype``.
      upper: the upper bound, likewise.
      shape: the result's shape; the bounds must broadcast to it. Default:
        the shape the bounds broadcast to.
      dtype: a real float dtype (default float32, float64 under
        ``enable_x64``).

    Returns:
      A strong Array of ``dtype``; every value lies strictly between the
      bounds (in ``dtype``).

    Raises:
      ValueError: a dtype that is not a real float (as JAX); bounds that do
        not broadcast to ``shape``.
      TypeError: a bad key; complex bounds.

    >>> from typelattice import random
    >>> x = random.truncated_normal(random.key(0), -2.0, 2.0, (10000,))
    >>> bool(x.min() > -2.0), bool(x.max() < 2.0), bool(abs(x.std() - 0.88) < 0.02)
    (True, True, True)
    """
    k = check_key(key, "truncated_normal")
    dt = _float_dtype(dtype, "truncated_normal")
    lo = _real_bound(lower, dt, "truncated_normal", "lower")
    hi = _real_bound(upper, dt, "truncated_normal", "upper")
    if shape is None:
        dims = np.broadcast_shapes(lo.shape, hi.shape)
    else:
        dims = _shape(shape, "truncated_normal")
        _check_shapes("truncated_normal", dims, lower=lo, upper=hi)
    lo, hi = _to_rank(lo, len(dims)), _to_rank(hi, len(dims))
    cd = _compute_dtype(dt)
    # The inverse of the normal distribution function, applied to uniform
    # values between the bounds' images: Phi(x) = (1 + erf(x / sqrt 2)) / 2.
    a = _special.erf(lo.astype(cd) / _SQRT2)
    b = _special.erf(hi.astype(cd) / _SQRT2)
    u = _unit(k, dims, cd)
    x = (_SQRT2 * _special.erfinv(a + u * (b - a))).astype(dt)
    # Rounding (or u at a bound) can reach a bound: keep strictly inside.
    return tnp.clip(x, tnp.nextafter(lo, hi), tnp.nextafter(hi, lo))


def bernoulli(
    key: KeyLike, p: Any = 0.5, shape: Sequence[int] | int | None = None
) -> Array:
    """Random booleans, True with probability ``p``.

    Args:
      key: a key.
      p: the probability of True: a float scalar or a float array (an
        integer ``p`` is refused, as in JAX).
      shape: the result's shape; ``p`` must broadcast to it. Default:
        ``p``'s shape.

    Returns:
      A strong bool Array.

    Raises:
      TypeError: ``p`` of a non-float dtype (as JAX); a bad key.
      ValueError: ``p`` that does not broadcast to ``shape``.

    >>> from typelattice import random
    >>> x = random.bernoulli(random.key(0), 0.25, (10000,))
    >>> x.dtype, bool(abs(x.mean() - 0.25) < 0.02)
    (dtype('bool'), True)
    """
    k = check_key(key, "bernoulli")
    pa = _operand(p, "bernoulli", "p")
    if not _dtypes.isdtype(pa.dtype, "real floating"):
        raise TypeError(
            f"bernoulli probability `p` must have a floating dtype, got "
            f"{pa.dtype}; e.g. p=0.5, or p.astype('float32')"
        )
    if shape is None:
        dims = pa.shape
    else:
        dims = _shape(shape, "bernoulli")
        _check_shapes("bernoulli", dims, p=pa)
    cd = _compute_dtype(pa.dtype)
    return _unit(k, dims, cd) < _to_rank(pa, len(dims)).astype(cd)


# -- integers ---------------------------------------------------------------------


def _integer_bound(
    x: object, dt: np.dtype[Any], lo: int, hi: int, name: str
) -> tuple[Array, Array | bool]:
    """A randint bound as a ``dt`` array clipped into [lo, hi], and whether
    it was above ``dt``'s largest value (where it was)."""
    top = int(_dtypes.iinfo(dt).max)
    v = python_integer(x)
    if v is not None:
        return tnp.asarray(min(max(v, lo), hi), dtype=dt), v > top
    a = _operand(x, "randint", name)
    if not _dtypes.isdtype(a.dtype, "integral"):
        # Note: JAX truncates a float bound to an integer; here that is
        # refused, as it would change the value silently.
        raise TypeError(
            f"randint: {name} must be an integer or an integer array, got a "
            f"{a.dtype} value; round it explicitly, e.g. "
            f"{name}.astype('int32') or int({name})"
        )
    info = _dtypes.iinfo(a.dtype)
    above: Array | bool = a > top if int(info.max) > top else False
    clipped = tnp.clip(a, max(lo, int(info.min)), min(hi, int(info.max)))
    return clipped.astype(dt), above


def _multiply_wide(a: Array, b: Array, bits: int) -> tuple[Array, Array]:
    """The high and low halves of the full product of two unsigned arrays of
    ``bits`` bits, from products of their half-width digits."""
    h = bits // 2
    mask = (1 << h) - 1
    a1, a0, b1, b0 = a >> h, a & mask, b >> h, b & mask
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    middle = (p00 >> h) + (p01 & mask) + (p10 & mask)
    return p11 + (p01 >> h) + (p10 >> h) + (middle >> h), a * b


def _randint(
    key: Array,
    dims: tuple[int, ...],
    lo: Array,
    hi: Array,
    above: Array | bool,
    dt: np.dtype[Any],
) -> Array:
    """Integers in [lo, hi) of the 32- or 64-bit integer dtype ``dt`` (and
    ``hi`` itself where ``above``: hi was clipped down to dt's maximum)."""
    bits = _dtypes.iinfo(dt).bits
    unsigned = np.dtype(f"uint{bits}")
    n = math.prod(dims)
    w = _threefry.words(key, 2 * n * (bits // 32))
    if bits == 64:
        w = w.astype(unsigned)
        w = (w[: 2 * n] << 32) | w[2 * n :]
    r1, r0 = w[:n].reshape(dims), w[n:].reshape(dims)
    lo, hi = _to_rank(lo, len(dims)), _to_rank(hi, len(dims))
    start = lo.astype(unsigned)
    # The span in unsigned arithmetic (exact modulo 2**bits); 1 for an empty
    # range (lo is returned, as in JAX); one more where the maximum of dt is
    # to be drawn too, which wraps to 0 for the whole range of dt.
    empty = hi <= lo
    span = tnp.where(empty, 1, hi.astype(unsigned) - start)
    if above is not False:
        if isinstance(above, Array):
            above = _to_rank(above, len(dims))
        span = tnp.where(tnp.logical_and(above, ~empty), span + 1, span)
    # floor((r1 * 2**bits + r0) * span / 2**(2 bits)): a multiply-shift on
    # 2 * bits random bits, whose bias is below span / 2**(2 bits).
    high1, low1 = _multiply_wide(r1, span, bits)
    high0, _ = _multiply_wide(r0, span, bits)
    total = low1 + high0
    offset = high1 + (total < low1).astype(unsigned)  # the carry
    offset = tnp.where(span == 0, r1, offset)
    return (start + offset).astype(dt)


def randint(
    key: KeyLike,
    shape: Sequence[int] | int,
    minval: Any,
    maxval: Any,
    dtype: Any = None,
) -> Array:
    """Uniform random integers in [minval, maxval).

    Bounds outside the dtype's range are clipped to it, as in JAX; a
    ``maxval`` above the dtype's maximum makes the maximum itself possible
    (``randint(key, shape, 0, 256, 'uint8')`` draws from 0..255).

    Args:
      key: a key.
      shape: the result's shape, an int or a tuple of ints.
      minval: the lower bound (inclusive): an int or an integer array that
        broadcasts to ``shape``.
      maxval: the upper bound (exclusive), likewise. Where
        ``maxval <= minval`` the result is ``minval``.
      dtype: an integer dtype (default int32, int64 under ``enable_x64``).
        Types narrower than 32 bits are drawn as int32, then converted.

    Returns:
      A strong Array of ``shape`` and ``dtype``.

    Raises:
      TypeError: a dtype that is not an integer (as JAX); a float or bool
        bound (JAX truncates a float bound: here that is refused); a bad
        key.
      ValueError: bounds that do not broadcast to ``shape``.

    >>> from typelattice import random
    >>> x = random.randint(random.key(0), (8,), 0, 10)
    >>> x.dtype, bool((x >= 0).all() and (x < 10).all())
    (dtype('int32'), True)
    >>> random.randint(random.key(0), (3,), 0, 256, 'uint8').dtype
    dtype('uint8')
    """
    k = check_key(key, "randint")
    dims = _shape(shape, "randint")
    dt = _requested(dtype, "i", "randint")
    if not _dtypes.isdtype(dt, "integral"):
        raise TypeError(
            f"randint only accepts integer dtypes, got {dt}; e.g. "
            f"dtype='int32' (typelattice.random.uniform draws floats)"
        )
    info = _dtypes.iinfo(dt)
    lowest, highest = int(info.min), int(info.max)
    # Narrow types are drawn as int32 (as JAX does), their bounds clipped
    # to the narrow range, maxval to one past its maximum.
    drawn = dt if info.bits >= 32 else _INT32
    past = 0 if drawn is dt else 1
    lo, _ = _integer_bound(minval, drawn, lowest, highest, "minval")
    hi, above = _integer_bound(maxval, drawn, lowest, highest + past, "maxval")
    _check_shapes("randint", dims, minval=lo, maxval=hi)
    return _randint(k, dims, lo, hi, above, drawn).astype(dt)


def categorical(
    key: KeyLike,
    logits: Any,
    axis: int = -1,
    shape: Sequence[int] | int | None = None,
    replace: bool = True,
) -> Array:
    """Random categories, drawn with the probabilities ``softmax(logits)``.

    Args:
      key: a key.
      logits: unnormalised log-probabilities, a float array; the categories
        lie along ``axis``, and the other axes are a batch of distributions.
      axis: the axis of the categories. Default -1.
      shape: the result's shape: leading axes of extra draws, then axes to
        which the batch shape broadcasts. Default: the batch shape.
      replace: draw with replacement (True, the default); False draws
        distinct categories for each distribution (the leading axes of
        ``shape`` count the draws).

    Returns:
      A strong Array of category indices, of the default integer dtype
      (int32, int64 under ``enable_x64``); int32 in both modes with
      ``replace=False``, as in JAX.

    Raises:
      ValueError: integer logits (as JAX); a ``shape`` the batch does not
        broadcast to; more draws without replacement than categories.
      TypeError: a bad key; logits that are not an array.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import random
    >>> logits = tnp.log(tnp.asarray([0.2, 0.8]))
    >>> x = random.categorical(random.key(0), logits, shape=(10000,))
    >>> x.dtype, bool(abs(x.mean() - 0.8) < 0.02)
    (dtype('int32'), True)
    """
    k = check_key(key, "categorical")
    lg = _operand(logits, "categorical", "logits")
    if not _dtypes.isdtype(lg.dtype, "real floating"):
        raise ValueError(
            f"categorical: logits must have a float dtype, got {lg.dtype}; "
            f"convert them with logits.astype('float32')"
        )
    if lg.ndim == 0:
        raise ValueError("categorical: logits must have an axis of categories")
    ax = _axis(axis, lg.ndim, "categorical")
    batch = lg.shape[:ax] + lg.shape[ax + 1 :]
    if shape is None:
        dims = batch
    else:
        dims = _shape(shape, "categorical")
        try:
            joined = np.broadcast_shapes(dims, batch)
        except ValueError:
            joined = None
        if joined != dims:
            raise ValueError(
                f"categorical: the batch shape {batch} of logits of shape "
                f"{lg.shape} (axis {axis}) must broadcast to shape {dims}"
            )
    lead = dims[: len(dims) - len(batch)]
    cd = _compute_dtype(lg.dtype)
    index_dtype = _dtypes.default_dtype("i")
    if replace:
        # The Gumbel-max trick: argmax(logits + Gumbel noise) is distributed
        # as softmax(logits).
        tail = dims[len(lead) :]
        noise_shape = (*lead, *tail[:ax], lg.shape[ax], *tail[ax:])
        expanded = lg.astype(cd).reshape((1,) * len(lead) + lg.shape)
        scores = _gumbel(k, noise_shape, cd) + expanded
        return tnp.argmax(scores, axis=len(lead) + ax).astype(index_dtype)
    draws = math.prod(lead)
    if dims[len(lead) :] != batch:
        raise ValueError(
            f"categorical: without replacement, shape must be the draws' "
            f"shape followed by the batch shape {batch}, got {dims}"
        )
    if draws > lg.shape[ax]:
        raise ValueError(
            f"categorical: cannot draw {draws} distinct categories out of "
            f"{lg.shape[ax]} without replacement"
        )
    # The Gumbel-top-k trick: the k largest perturbed logits are k draws
    # without replacement.
    scores = _gumbel(k, lg.shape, cd) + lg.astype(cd)
    top = tnp.argsort(tnp.moveaxis(scores, ax, -1), axis=-1, descending=True)
    top = tnp.moveaxis(top[..., :draws], -1, 0)
    # int32 in both modes, as JAX's (whose top_k gives int32).
    return top.reshape(dims).astype(_INT32)


# -- orderings --------------------------------------------------------------------


def _take_along(a: Array, indices: Array, axis: int) -> Array:
    """``a``'s elements at ``indices`` along ``axis`` (indices of a's shape)."""
    grids: list[Array] = []
    for d, n in enumerate(a.shape):
        if d == axis:
            grids.append(indices)
        else:
            dims = [1] * a.ndim
            dims[d] = n
            grids.append(tnp.arange(n).reshape(dims))
    return a[tuple(grids)]


def _random_order(key: Array, shape: tuple[int, ...], axis: int) -> Array:
    """Indices that put random 64-bit keys of ``shape`` in order along
    ``axis``: a uniformly random permutation of each line (64-bit keys
    practically never tie, so no order is favoured)."""
    n = math.prod(shape)
    w = _threefry.words(key, 2 * n)
    high, low = w[:n].reshape(shape), w[n:].reshape(shape)
    # By the low words, then stably by the high words: by (high, low).
    order = tnp.argsort(low, axis=axis)
    by_high = tnp.argsort(_take_along(high, order, axis), axis=axis, stable=True)
    return _take_along(order, by_high, axis)


def _integer_scalar(x: object) -> int | None:
    """``x`` as an int when it is an integer scalar (a 0-d integer array
    included), else None."""
    if isinstance(x, np.ndarray):
        x = tnp.asarray(x)
    if isinstance(x, Array):
        if x.ndim == 0 and _dtypes.isdtype(x.dtype, "integral"):
            return operator.index(x)  # raises for a traced value
        return None
    return python_integer(x)


def permutation(
    key: KeyLike, x: int | Any, axis: int = 0, independent: bool = False
) -> Array:
    """A random permutation of ``range(x)``, or of an array along an axis.

    Args:
      key: a key.
      x: an int n (permute ``arange(n)``), or an array with at least one
        axis.
      axis: the axis along which to permute. Default 0.
      independent: permute every line along ``axis`` with its own
        permutation (default False: the same for all).

    Returns:
      An Array: strong, of the default integer dtype for an int ``x``;
      else of ``x``'s dtype, weak flag and shape.

    Raises:
      TypeError: a 0-d float, a list (as JAX), a bad key.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import random
    >>> p = random.permutation(random.key(0), 10)
    >>> p.dtype, sorted(p.tolist()) == list(range(10))
    (dtype('int32'), True)
    """
    k = check_key(key, "permutation")
    n = _integer_scalar(x)
    if n is not None:
        if n < 0:
            raise ValueError(f"permutation: x must not be negative, got {n}")
        a = tnp.arange(n, dtype=_dtypes.default_dtype("i"))
    else:
        a = _operand(x, "permutation", "x")
        if a.ndim == 0:
            raise TypeError(
                f"permutation: x must be an integer or at least 1-dimensional, "
                f"got a 0-d {a.dtype} array"
            )
    ax = _axis(axis, a.ndim, "permutation")
    if independent and a.ndim > 1:
        out = _take_along(a, _random_order(k, a.shape, ax), ax)
    else:
        out = tnp.take(a, _random_order(k, (a.shape[ax],), 0), axis=ax)
    return out


def choice(
    key: KeyLike,
    a: int | Any,
    shape: Sequence[int] = (),
    replace: bool = True,
    p: Any = None,
    axis: int = 0,
) -> Array:
    """Random draws from ``range(a)`` or from an array's entries along an axis.

    Args:
      key: a key.
      a: an int n (draw from ``arange(n)``), or an array (draw its entries
        along ``axis``).
      shape: the shape of the draws, a tuple of ints (an int is refused, as
        in JAX). Default ().
      replace: draw with replacement (default True); False draws distinct
        entries.
      p: the probabilities of the entries, a 1-d array of length n
        (default: equally likely). They are normalised by their sum.
      axis: the axis of ``a`` to draw along. Default 0.

    Returns:
      An Array: strong, of the default integer dtype, for an int ``a``; of
      ``a``'s dtype and weak flag otherwise. Of shape ``shape``, or ``a``'s
      shape with ``axis`` replaced by ``shape``.

    Raises:
      ValueError: an empty population with draws to make; more draws than
        entries without replacement; ``p`` of the wrong shape.
      TypeError: ``shape`` not a sequence; a bad key.

    >>> from typelattice import random
    >>> x = random.choice(random.key(0), 10, (5,), replace=False)
    >>> x.dtype, len(set(x.tolist()))
    (dtype('int32'), 5)
    """
    k = check_key(key, "choice")
    # An int shape is refused, as in JAX (the annotation says why).
    if not isinstance(shape, Sequence):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise TypeError(
            f"shape argument of choice must be a sequence, got {shape!r}; "
            f"e.g. shape=({shape!r},)"
        )
    dims = _shape(shape, "choice")
    index_dtype = _dtypes.default_dtype("i")
    count = _integer_scalar(a)
    arr: Array | None = None
    if count is None:
        arr = _operand(a, "choice", "a")
        if arr.ndim == 0:
            raise TypeError(
                f"choice: a must be an integer or at least 1-dimensional, got "
                f"a 0-d {arr.dtype} array"
            )
        ax = _axis(axis, arr.ndim, "choice")
        count = arr.shape[ax]
        out_shape = arr.shape[:ax] + dims + arr.shape[ax + 1 :]
        out_dtype = arr.dtype
    else:
        ax = 0
        out_shape = dims
        out_dtype = index_dtype
    draws = math.prod(dims)
    if draws == 0:
        return tnp.zeros(out_shape, dtype=out_dtype)
    if count <= 0:
        raise ValueError(
            f"choice: a must be greater than 0 unless no samples are taken, got "
            f"a population of {count}"
        )
    if not replace and draws > count:
        raise ValueError(
            f"choice: cannot take a larger sample (size {draws}) than the "
            f"population (size {count}) when replace=False"
        )
    if p is None:
        if replace:
            ind = randint(k, (draws,), 0, count, dtype=index_dtype)
        else:
            ind = _random_order(k, (count,), 0)[:draws]
    else:
        pa = _operand(p, "choice", "p")
        if pa.shape != (count,):
            raise ValueError(
                f"choice: p must be None or a 1-d array with the same size as "
                f"a.shape[axis]; p has shape {pa.shape} and a.shape[axis] is "
                f"{count}"
            )
        if _dtypes.isdtype(pa.dtype, "complex floating"):
            raise TypeError(f"choice: p must be real, got a {pa.dtype} array")
        cd = _compute_dtype(pa.dtype)
        weights = pa.astype(cd)
        if replace:
            # The first entry whose cumulative weight reaches a uniform value
            # in (0, total].
            cumulative = tnp.cumsum(weights)
            targets = cumulative[-1] * (1 - _unit(k, (draws,), cd))
            ind = tnp.searchsorted(cumulative, targets)
        else:
            # The Gumbel-top-k trick (see categorical).
            scores = _gumbel(k, (count,), cd) + tnp.log(weights)
            ind = tnp.argsort(scores, descending=True)[:draws]
    ind = ind.astype(index_dtype)
    if arr is None:
        return ind.reshape(dims)
    return tnp.take(arr, ind, axis=ax).reshape(out_shape)
