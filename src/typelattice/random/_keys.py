"""Keys: making them from seeds, splitting, folding data in, checking them.

A key holds the two uint32 words of the Threefry generator
(:mod:`typelattice.random._threefry`), in one of JAX's two forms:

- a typed key (:func:`key`, :func:`wrap_key_data`): a :class:`KeyArray`
  of shape ``()`` whose dtype prints ``key<fry>``; :func:`split` of it gives
  a key array of shape ``(num,)``;
- a raw key (:func:`PRNGKey`): a uint32 Array of shape ``(2,)``; several
  are a uint32 array of shape ``(..., 2)``.

Every function takes both, and the same words give the same numbers in
either form. Decision: a :class:`KeyArray` is a pytree node over its uint32
words (JAX makes key arrays leaves of their own dtype). So ``jit``,
``vmap`` (over a batch of keys), ``grad`` (a key argument is not
differentiated) and ``eval_shape`` take key arrays with no rule of their
own; the one difference a user sees is that ``tree_util.tree_leaves`` of a
key array gives its uint32 words, not the key.
"""

# Package-internal: reads an Array's dtype from NumPy arrays before
# conversion, and uses the dtype module's helpers.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import math
import operator
from collections.abc import Iterator, Sequence
from typing import Any, Final, cast, overload

import numpy as np

import typelattice.numpy as tnp
from typelattice import _dtypes, tree_util
from typelattice.numpy import Array
from typelattice.random import _threefry

__all__ = [
    "KeyArray",
    "KeyLike",
    "PRNGKey",
    "check_key",
    "key_impl",
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


#: The name of the one generator (``jax.random.key_impl``'s answer).
IMPL: Final = "threefry2x32"


class KeyDtype:
    """The dtype of typed keys: prints ``key<fry>``, as JAX's."""

    __slots__ = ()
    name: Final = "key<fry>"

    def __repr__(self) -> str:
        return self.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KeyDtype) or other == self.name

    def __hash__(self) -> int:
        return hash(self.name)


KEY_DTYPE: Final = KeyDtype()


class KeyArray:
    """An array of typed keys, as JAX's ``key<fry>`` arrays.

    Made by :func:`key`, :func:`split` of a typed key, :func:`fold_in` and
    :func:`wrap_key_data`; :func:`key_data` gives its uint32 words (one
    axis of length 2 more than its shape). It has a shape, indexes and
    iterates over its first axis as an array does, and compares with
    ``==``; arithmetic on keys is refused.

    Attributes:
      shape: the shape of the array of keys.
      ndim: its number of axes.
      size: its number of keys.
      dtype: ``key<fry>``.

    >>> from typelattice import random
    >>> k = random.key(0)
    >>> k.shape, k.dtype
    ((), key<fry>)
    >>> k1, k2 = random.split(k)
    >>> random.split(k, (2, 3)).shape
    (2, 3)
    """

    __slots__ = ("_data",)
    __array_priority__ = 100  # NumPy defers ``np_array == key`` to us

    def __init__(self, data: Any) -> None:
        # No checks: the pytree rebuilds key arrays around whatever the
        # transformations put in (tracers, axis specifications).
        self._data = data

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the array of keys (without the words' axis)."""
        return tuple(self._data.shape[:-1])

    @property
    def ndim(self) -> int:
        """The number of axes."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of keys."""
        return math.prod(self.shape)

    @property
    def dtype(self) -> KeyDtype:
        """``key<fry>``."""
        return KEY_DTYPE

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a key array of shape (): it is one key")
        return self.shape[0]

    def __iter__(self) -> Iterator[KeyArray]:
        if not self.shape:
            raise TypeError(
                "iteration over a key array of shape (): it is one key; split "
                "it first: k1, k2 = random.split(key)"
            )
        return (KeyArray(self._data[i]) for i in range(self.shape[0]))

    def __getitem__(self, index: Any) -> KeyArray:
        items: tuple[Any, ...] = (
            tuple(cast("tuple[object, ...]", index))
            if isinstance(index, tuple)
            else (index,)
        )
        used = sum(1 for i in items if i is not None and i is not Ellipsis)
        if used > self.ndim:
            raise IndexError(
                f"too many indices for a key array of shape {self.shape}: {used} given"
            )
        if Ellipsis not in items:
            items = (*items, Ellipsis)
        return KeyArray(self._data[(*items, slice(None))])

    def reshape(self, *shape: Any) -> KeyArray:
        """The keys in another shape, as ``Array.reshape``.

        Args:
          shape: the new shape (a tuple, or its entries; -1 once for the
            rest).

        Returns:
          A key array of that shape, holding the same keys in order.

        >>> from typelattice import random
        >>> random.split(random.key(0), 6).reshape(2, 3).shape
        (2, 3)
        """
        dims: tuple[Any, ...] = (
            tuple(cast("tuple[object, ...]", shape[0]))
            if len(shape) == 1 and isinstance(shape[0], tuple)
            else shape
        )
        return KeyArray(self._data.reshape(*dims, 2))

    def __eq__(self, other: object) -> Any:
        if not isinstance(other, KeyArray):
            return NotImplemented
        return (self._data == other._data).all(axis=-1)

    def __ne__(self, other: object) -> Any:
        if not isinstance(other, KeyArray):
            return NotImplemented
        return (self._data != other._data).any(axis=-1)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        try:
            words = str(np.asarray(self._data))
        except Exception:  # a traced key: its words are not known
            words = repr(self._data)
        return f"Array({self.shape}, dtype={KEY_DTYPE}) overlaying:\n{words}"


#: A typed key array or a raw key (a uint32 array of shape (..., 2)).
KeyLike = Array | KeyArray

tree_util.register_pytree_node(
    KeyArray,
    lambda k: ((k._data,), None),
    lambda _, children: KeyArray(next(iter(children))),
)


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
    if isinstance(key, KeyArray):
        if key.ndim != 0:
            raise ValueError(
                f"{where} accepts a single key, but was given a key array of "
                f"shape {key.shape}; pick one key (e.g. keys[0]) or loop over "
                "them (or vmap)"
            )
        return _key_array(key._data, where)
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


def key(seed: int | Array) -> KeyArray:
    """A new typed key made from an integer seed, as ``jax.random.key``.

    The key holds the seed's high and low 32-bit words, as a 64-bit
    two's-complement integer: ``key_data(key(s))`` equals ``PRNGKey(s)``,
    and both give the same random numbers.

    Args:
      seed: a Python int in [-2**63, 2**63), a NumPy integer, or a 0-d
        integer Array (also a traced one).

    Returns:
      The key: a :class:`KeyArray` of shape ``()``.

    Raises:
      TypeError: a seed that is not an integer scalar (a float, an array
        with axes).
      OverflowError: an int outside the 64-bit range.

    Note: in 32-bit mode JAX keeps only the low 32 bits of a seed (2**32
    gives the same key as 0); here all 64 bits are kept, in both modes.

    >>> from typelattice import random
    >>> random.key(42)
    Array((), dtype=key<fry>) overlaying:
    [ 0 42]
    >>> random.key_data(random.key(2**40))
    Array([256,   0], dtype=uint32)
    """
    high, low = _integer_words(seed, "key", "seed")
    return KeyArray(_pair(high, low))


def PRNGKey(seed: int | Array) -> Array:
    """A new raw key made from an integer seed, as ``jax.random.PRNGKey``:
    the words of :func:`key` as a uint32 array.

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


@overload
def split(key: KeyArray, num: int | Sequence[int] = 2) -> KeyArray: ...
@overload
def split(key: Array, num: int | Sequence[int] = 2) -> Array: ...
@overload
def split(key: KeyLike, num: int | Sequence[int] = 2) -> KeyLike: ...


def split(key: KeyLike, num: int | Sequence[int] = 2) -> KeyLike:
    """New keys derived from a key, independent of each other and of it.

    Use one key for each purpose (and never a key again after splitting
    it): ``key, sub = split(key)``, then sample with ``sub``.

    Args:
      key: a key (from :func:`key`, :func:`split` or :func:`fold_in`).
      num: how many keys (an int), or the shape of the array of keys (a
        tuple of ints). Default 2.

    Returns:
      For a typed key, a :class:`KeyArray` of shape ``(num,)`` (``num``
      for a tuple); for a raw key, a uint32 Array of shape ``(num, 2)``
      (``(*num, 2)``). Either way ``keys[i]`` is a key, and the words are
      the same.

    Raises:
      TypeError: ``key`` is not a key, or ``num`` is not an int or a tuple
        of ints.
      ValueError: several keys given, or a negative ``num``.

    >>> from typelattice import random
    >>> keys = random.split(random.key(0), 3)
    >>> keys.shape, keys.dtype
    ((3,), key<fry>)
    >>> bool(keys[0] == keys[1])
    False
    >>> random.split(random.PRNGKey(0), 3).shape
    (3, 2)
    """
    k = check_key(key, "split")
    shape = _num_shape(num)
    n = math.prod(shape)
    x0, x1 = _threefry.threefry2x32(k, _threefry.counter(n, k), _threefry.SPLIT)
    keys = tnp.stack([x0, x1], axis=-1).reshape(*shape, 2)
    return KeyArray(keys) if isinstance(key, KeyArray) else keys


@overload
def fold_in(key: KeyArray, data: int | Array) -> KeyArray: ...
@overload
def fold_in(key: Array, data: int | Array) -> Array: ...
@overload
def fold_in(key: KeyLike, data: int | Array) -> KeyLike: ...


def fold_in(key: KeyLike, data: int | Array) -> KeyLike:
    """A new key derived from a key and an integer (a step number, an index).

    Different data give independent keys; the same key and data always give
    the same key.

    Args:
      key: a key.
      data: a Python int in [-2**63, 2**63), a NumPy integer, or a 0-d
        integer Array (also a traced one). Equal values give equal keys,
        whatever their dtype.

    Returns:
      The new key, in the form of ``key`` (typed, or a raw uint32 Array of
      shape (2,)).

    Raises:
      TypeError: ``key`` is not a key; ``data`` is not an integer scalar.
        (JAX converts a float to uint32; here it is refused, as converting
        would change its value.)
      OverflowError: an int outside the 64-bit range.

    >>> from typelattice import random
    >>> k = random.key(0)
    >>> bool(random.fold_in(k, 1) == random.fold_in(k, 1))
    True
    >>> bool(random.fold_in(k, 1) == random.fold_in(k, 2))
    False
    """
    k = check_key(key, "fold_in")
    high, low = _integer_words(data, "fold_in", "data")
    k = tnp.stack(_threefry.threefry2x32(k, high, _threefry.FOLD_HIGH))
    k = tnp.stack(_threefry.threefry2x32(k, low, _threefry.FOLD_LOW))
    return KeyArray(k) if isinstance(key, KeyArray) else k


def key_data(keys: Any) -> Array:
    """The uint32 words of a key or an array of keys, as
    ``jax.random.key_data``.

    Args:
      keys: a typed key array, or raw keys (a uint32 array of shape
        ``(..., 2)``, returned as they are after checking).

    Returns:
      A uint32 Array of shape ``(*keys.shape, 2)`` for typed keys.

    Raises:
      TypeError: not keys.

    >>> from typelattice import random
    >>> random.key_data(random.key(7))
    Array([0, 7], dtype=uint32)
    >>> random.key_data(random.split(random.key(7))).shape
    (2, 2)
    """
    if isinstance(keys, KeyArray):
        return _key_array(keys._data, "key_data")
    return _key_array(keys, "key_data")


def wrap_key_data(key_bits_array: Any, *, impl: str | None = None) -> KeyArray:
    """Typed keys from their uint32 words: the inverse of :func:`key_data`,
    as ``jax.random.wrap_key_data``.

    Args:
      key_bits_array: a uint32 array of shape ``(..., 2)`` (an Array or a
        NumPy array).
      impl: None or ``'threefry2x32'`` (the one generator).

    Returns:
      A :class:`KeyArray` of shape ``key_bits_array.shape[:-1]``.

    Raises:
      TypeError: not a uint32 array whose last axis has length 2.
      ValueError: another generator named by ``impl``.

    >>> import numpy as np
    >>> from typelattice import random
    >>> random.wrap_key_data(np.array([0, 7], dtype=np.uint32))
    Array((), dtype=key<fry>) overlaying:
    [0 7]
    """
    if impl is not None and impl != IMPL:
        raise ValueError(
            f"wrap_key_data: impl={impl!r} is not available: the generator is "
            f"{IMPL!r}; pass impl=None"
        )
    return KeyArray(_key_array(key_bits_array, "wrap_key_data"))


def key_impl(keys: Any) -> str:
    """The name of the generator of keys, as ``jax.random.key_impl``:
    ``'threefry2x32'`` (the one there is).

    Args:
      keys: typed or raw keys.

    Returns:
      ``'threefry2x32'``.

    Raises:
      TypeError: not keys.

    >>> from typelattice import random
    >>> random.key_impl(random.key(0))
    'threefry2x32'
    """
    key_data(keys)
    return IMPL
