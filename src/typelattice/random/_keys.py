"""Keys: making them from seeds, splitting, folding data in, checking them.

A key is a strong uint32 Array of shape ``(2,)``: the two key words of the
Threefry generator (:mod:`typelattice.random._threefry`). This is the form
of JAX's raw keys (``jax.random.PRNGKey``); ``key`` returns the same form
rather than JAX's typed key scalar, so that keys are ordinary arrays that
``jit``, ``eval_shape`` and pytrees take as they are. Several keys are an
array of shape ``(..., 2)`` (what :func:`split` returns); the samplers take
one key at a time.
"""

# Package-internal: reads an Array's dtype from NumPy arrays before
# conversion, and uses the dtype module's helpers.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any, Final, cast

import numpy as np

import typelattice.numpy as tnp
from typelattice import _dtypes
from typelattice.numpy import Array
from typelattice.random import _threefry

__all__ = [
    "PRNGKey",
    "check_key",
    "python_integer",
    "fold_in",
    "key",
    "key_data",
    "split",
    "wrap_key_data",
]

_UINT32: Final = np.dtype("uint32")
_MASK32: Final = 0xFFFFFFFF
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1

_MAKE_KEY: Final = "make one with typelattice.random.key(seed)"


def _describe(dt: object, shape: tuple[int, ...]) -> str:
    return f"{dt}[{','.join(str(d) for d in shape)}]"


def _key_array(keys: object, where: str) -> Array:
    """``keys`` as a uint32 Array of shape ``(..., 2)``, or a TypeError."""
    dt: np.dtype[Any]
    shape: tuple[int, ...]
    if isinstance(keys, Array):
        dt, shape = keys.dtype, keys.shape
    elif isinstance(keys, np.ndarray):
        # Narrowed by isinstance, the array's type parameters are unknown.
        array = cast(Any, keys)
        dt, shape = array.dtype, array.shape
    else:
        raise TypeError(
            f"{where}: expected a key (a uint32 array of shape (2,)), got "
            f"{type(keys).__name__} {keys!r}; {_MAKE_KEY}"
        )
    if dt != _UINT32 or shape[-1:] != (2,):
        raise TypeError(
            f"{where}: a key is a uint32 array of shape (2,), got "
            f"{_describe(dt, shape)}; {_MAKE_KEY}, or split an existing key"
        )
    return keys if isinstance(keys, Array) else tnp.asarray(keys)


def check_key(key: object, where: str) -> Array:
    """``key`` as an Array, if it is a single key; TypeError or ValueError
    (several keys) naming ``where`` otherwise."""
    arr = _key_array(key, where)
    if arr.ndim != 1:
        raise ValueError(
            f"{where} accepts a single key, but was given a key array of shape "
            f"{arr.shape}; pick one key (e.g. keys[0]) or loop over them"
        )
    return arr


def python_integer(x: object) -> int | None:
    """``x`` as an int if it is a Python or NumPy integer (not a bool)."""
    if isinstance(x, bool):
        return None
    if isinstance(x, int):
        return x
    if isinstance(x, np.integer):
        return int(x)  # pyright: ignore[reportUnknownArgumentType]
    return None


def _words_of_int(value: int, what: str) -> tuple[int, int]:
    """The high and low words of ``value`` as a 64-bit two's-complement
    integer; OverflowError outside the int64 range."""
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise OverflowError(
            f"{what} {value} is outside the range of a 64-bit signed integer "
            f"[{_INT64_MIN}, {_INT64_MAX}]; reduce it, e.g. {what} % 2**63"
        )
    bits = value & ((1 << 64) - 1)
    return bits >> 32, bits & _MASK32


def _words_of_array(x: Array) -> tuple[Array, Array]:
    """The high and low words of an integer array's values as 64-bit
    two's-complement integers (sign-extended), as uint32 arrays."""
    info = _dtypes.iinfo(x.dtype)
    if info.bits == 64:
        # >> is arithmetic on signed types: -1 gives all ones, as it should.
        return (x >> 32).astype(_UINT32), (x & _MASK32).astype(_UINT32)
    low = x.astype(_UINT32)  # wraps negative values: their two's complement
    if int(info.min) < 0:
        return (x < 0).astype(_UINT32) * _MASK32, low
    return tnp.zeros_like(low), low


def _integer_words(value: object, where: str, what: str) -> tuple[Array | int, ...]:
    """The (high, low) words of an integer scalar: a Python int, a NumPy
    integer or a 0-d integer array (possibly traced)."""
    if isinstance(value, bool | np.bool_):
        return (0, 1 if value else 0)  # as JAX: False is 0, True 1
    number = python_integer(value)
    if number is not None:
        return _words_of_int(number, what)
    if isinstance(value, np.ndarray):
        value = tnp.asarray(value)
    if not isinstance(value, Array):
        raise TypeError(
            f"{where}: {what} must be an integer, got {type(value).__name__} {value!r}"
        )
    if value.ndim != 0:
        raise TypeError(
            f"{where}: {what} must be a scalar, got an array of shape "
            f"{value.shape}; take one element, or loop over them"
        )
    if not _dtypes.isdtype(value.dtype, "integral"):
        raise TypeError(
            f"{where}: {what} must be an integer, got a {value.dtype} value; "
            f"convert it with x.astype('int32') if its value is whole"
        )
    return _words_of_array(value)


def _pair(high: Array | int, low: Array | int) -> Array:
    if isinstance(high, int) and isinstance(low, int):
        return tnp.asarray(np.array([high, low], dtype=_UINT32))
    return tnp.stack(
        [tnp.asarray(high, dtype=_UINT32), tnp.asarray(low, dtype=_UINT32)]
    )


def key(seed: int | Array) -> Array:
    """A new key made from an integer seed.

    The key is a uint32 Array of shape (2,): the seed's high and low 32-bit
    words, as a 64-bit two's-complement integer. Unlike ``jax.random.key``,
    which returns a typed key scalar, the key is an ordinary array (JAX's
    raw key form, as :func:`PRNGKey` gives in JAX), in both modes.

    Args:
      seed: a Python int in [-2**63, 2**63), a NumPy integer, or a 0-d
        integer Array (also a traced one).

    Returns:
      The key: a strong uint32 Array of shape (2,).

    Raises:
      TypeError: a seed that is not an integer scalar (a float, an array
        with axes).
      OverflowError: an int outside the 64-bit range.

    Note: in 32-bit mode JAX keeps only the low 32 bits of a seed (2**32
    gives the same key as 0); here all 64 bits are kept, in both modes.

    >>> from typelattice import random
    >>> random.key(42)
    Array([ 0, 42], dtype=uint32)
    >>> random.key(2**40)
    Array([256,   0], dtype=uint32)
    """
    high, low = _integer_words(seed, "key", "seed")
    return _pair(high, low)


def PRNGKey(seed: int | Array) -> Array:
    """A new key made from an integer seed: the same as :func:`key`.

    Args:
      seed: a Python int in [-2**63, 2**63), a NumPy integer, or a 0-d
        integer Array.

    Returns:
      The key: a strong uint32 Array of shape (2,).

    >>> from typelattice import random
    >>> random.PRNGKey(0)
    Array([0, 0], dtype=uint32)
    """
    high, low = _integer_words(seed, "PRNGKey", "seed")
    return _pair(high, low)


def _num_shape(num: int | Sequence[int]) -> tuple[int, ...]:
    if isinstance(num, bool):
        raise TypeError(f"split: num must be an int or a tuple of ints, got {num!r}")
    try:
        shape = (
            (operator.index(num),)
            if not isinstance(num, Sequence)
            else tuple(operator.index(n) for n in num)
        )
    except TypeError:
        raise TypeError(
            f"split: num must be an int or a tuple of ints, got {num!r}"
        ) from None
    if any(n < 0 for n in shape):
        raise ValueError(f"split: num must not be negative, got {num!r}")
    return shape


def split(key: Array, num: int | Sequence[int] = 2) -> Array:
    """New keys derived from a key, independent of each other and of it.

    Use one key for each purpose (and never a key again after splitting
    it): ``key, sub = split(key)``, then sample with ``sub``.

    Args:
      key: a key (from :func:`key`, :func:`split` or :func:`fold_in`).
      num: how many keys (an int), or the shape of the array of keys (a
        tuple of ints). Default 2.

    Returns:
      A uint32 Array of shape ``(num, 2)`` (``(*num, 2)`` for a tuple):
      ``keys[i]`` is a key.

    Raises:
      TypeError: ``key`` is not a key, or ``num`` is not an int or a tuple
        of ints.
      ValueError: several keys given, or a negative ``num``.

    >>> from typelattice import random
    >>> keys = random.split(random.key(0), 3)
    >>> keys.shape, keys.dtype
    ((3, 2), dtype('uint32'))
    >>> bool((keys[0] == keys[1]).all())
    False
    """
    k = check_key(key, "split")
    shape = _num_shape(num)
    n = math.prod(shape)
    x0, x1 = _threefry.threefry2x32(k, _threefry.counter(n, k), _threefry.SPLIT)
    return tnp.stack([x0, x1], axis=-1).reshape(*shape, 2)


def fold_in(key: Array, data: int | Array) -> Array:
    """A new key derived from a key and an integer (a step number, an index).

    Different data give independent keys; the same key and data always give
    the same key.

    Args:
      key: a key.
      data: a Python int in [-2**63, 2**63), a NumPy integer, or a 0-d
        integer Array (also a traced one). Equal values give equal keys,
        whatever their dtype.

    Returns:
      The new key: a strong uint32 Array of shape (2,).

    Raises:
      TypeError: ``key`` is not a key; ``data`` is not an integer scalar.
        (JAX converts a float to uint32; here it is refused, as converting
        would change its value.)
      OverflowError: an int outside the 64-bit range.

    >>> from typelattice import random
    >>> k = random.key(0)
    >>> bool((random.fold_in(k, 1) == random.fold_in(k, 1)).all())
    True
    >>> bool((random.fold_in(k, 1) == random.fold_in(k, 2)).all())
    False
    """
    k = check_key(key, "fold_in")
    high, low = _integer_words(data, "fold_in", "data")
    k = tnp.stack(_threefry.threefry2x32(k, high, _threefry.FOLD_HIGH))
    return tnp.stack(_threefry.threefry2x32(k, low, _threefry.FOLD_LOW))


def key_data(keys: Array) -> Array:
    """The uint32 words of a key or an array of keys.

    Keys here are already their uint32 words (see :func:`key`), so this
    returns them as they are, after checking them; it exists so that code
    written for JAX's typed keys runs unchanged.

    Args:
      keys: a key, or an array of keys of shape ``(..., 2)``.

    Returns:
      ``keys``, a uint32 Array of shape ``(..., 2)``.

    Raises:
      TypeError: not a uint32 array whose last axis has length 2.

    >>> from typelattice import random
    >>> random.key_data(random.key(7))
    Array([0, 7], dtype=uint32)
    """
    return _key_array(keys, "key_data")


def wrap_key_data(key_bits_array: Array) -> Array:
    """Keys from their uint32 words: the inverse of :func:`key_data`.

    Args:
      key_bits_array: a uint32 array of shape ``(..., 2)`` (an Array or a
        NumPy array).

    Returns:
      The keys, a uint32 Array of the same shape.

    Raises:
      TypeError: not a uint32 array whose last axis has length 2.

    >>> import numpy as np
    >>> from typelattice import random
    >>> random.wrap_key_data(np.array([0, 7], dtype=np.uint32))
    Array([0, 7], dtype=uint32)
    """
    return _key_array(key_bits_array, "wrap_key_data")
