"""The array type: :class:`Array` (the base) and :class:`ArrayImpl` (NumPy-backed).

An ``ArrayImpl`` holds a NumPy array that is never handed out writable, and a
``weak_type`` flag: True when the array's dtype was not asked for, but
inferred from a Python scalar, so that it defers to the other operand's width
in promotion (``Array(2, dtype=int32, weak_type=True)`` times an int8 array
is int8).

The operators and methods are defined on :class:`Array` in terms of the
namespace's functions, so every array-like class deriving from it behaves
alike.
"""

# Package-internal: the arrays' underscored slots and the namespace modules'
# private helpers are read here by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from typelattice import _dtypes
from typelattice.numpy import _core

if TYPE_CHECKING:
    from collections.abc import Sequence

    from typelattice.typing import ArrayLike, DTypeLike

__all__ = ["Array", "ArrayImpl"]

_COMPLEX_KINDS: Final = _dtypes.CATEGORIES["complex floating"]
_INT32: Final = np.dtype("int32")


class Array:
    """An immutable array with a dtype, a shape and a weak-type flag.

    The base class of the namespace's arrays; use it in annotations and
    ``isinstance`` checks.

    >>> import typelattice.numpy as tnp
    >>> x = tnp.asarray([0, 1, 2], dtype='int8')
    >>> isinstance(x, tnp.Array)
    True
    >>> x * 2
    Array([0, 2, 4], dtype=int8)
    """

    __slots__ = ()
    # NumPy calls __array_ufunc__ for `ndarray + Array`: we take over there.
    __array_priority__ = 100

    # -- abstract value ------------------------------------------------------

    @property
    def dtype(self) -> np.dtype[Any]:
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int, ...]:
        raise NotImplementedError

    @property
    def weak_type(self) -> bool:
        raise NotImplementedError

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def T(self) -> Array:
        return _shape.transpose(self)

    @property
    def mT(self) -> Array:
        return _shape.matrix_transpose(self)

    @property
    def real(self) -> Array:
        return _ufuncs.real(self)

    @property
    def imag(self) -> Array:
        return _ufuncs.imag(self)

    @property
    def at(self) -> _IndexUpdateHelper:
        """Functional updates: ``x.at[idx].set(v)``, ``.add(v)``, ``.get()``..."""
        return _IndexUpdateHelper(self)

    # -- operators -----------------------------------------------------------
    # Python operators on arrays and scalars, both orders (NumPy's names).

    def __add__(self, other: ArrayLike) -> Array:
        return _ufuncs.add(self, other)

    def __radd__(self, other: ArrayLike) -> Array:
        return _ufuncs.add(other, self)

    def __sub__(self, other: ArrayLike) -> Array:
        return _ufuncs.subtract(self, other)

    def __rsub__(self, other: ArrayLike) -> Array:
        return _ufuncs.subtract(other, self)

    def __mul__(self, other: ArrayLike) -> Array:
        return _ufuncs.multiply(self, other)

    def __rmul__(self, other: ArrayLike) -> Array:
        return _ufuncs.multiply(other, self)

    def __truediv__(self, other: ArrayLike) -> Array:
        return _ufuncs.true_divide(self, other)

    def __rtruediv__(self, other: ArrayLike) -> Array:
        return _ufuncs.true_divide(other, self)

    def __floordiv__(self, other: ArrayLike) -> Array:
        return _ufuncs.floor_divide(self, other)

    def __rfloordiv__(self, other: ArrayLike) -> Array:
        return _ufuncs.floor_divide(other, self)

    def __mod__(self, other: ArrayLike) -> Array:
        return _ufuncs.remainder(self, other)

    def __rmod__(self, other: ArrayLike) -> Array:
        return _ufuncs.remainder(other, self)

    def __divmod__(self, other: ArrayLike) -> tuple[Array, Array]:
        return _ufuncs.divmod(self, other)

    def __rdivmod__(self, other: ArrayLike) -> tuple[Array, Array]:
        return _ufuncs.divmod(other, self)

    def __pow__(self, other: ArrayLike) -> Array:
        return _ufuncs.power(self, other)

    def __rpow__(self, other: ArrayLike) -> Array:
        return _ufuncs.power(other, self)

    def __matmul__(self, other: ArrayLike) -> Array:
        return _linalg.matmul(self, other)

    def __rmatmul__(self, other: ArrayLike) -> Array:
        return _linalg.matmul(other, self)

    def __and__(self, other: ArrayLike) -> Array:
        return _ufuncs.bitwise_and(self, other)

    def __rand__(self, other: ArrayLike) -> Array:
        return _ufuncs.bitwise_and(other, self)

    def __or__(self, other: ArrayLike) -> Array:
        return _ufuncs.bitwise_or(self, other)

    def __ror__(self, other: ArrayLike) -> Array:
        return _ufuncs.bitwise_or(other, self)

    def __xor__(self, other: ArrayLike) -> Array:
        return _ufuncs.bitwise_xor(self, other)

    def __rxor__(self, other: ArrayLike) -> Array:
        return _ufuncs.bitwise_xor(other, self)

    def __lshift__(self, other: ArrayLike) -> Array:
        return _ufuncs.left_shift(self, other)

    def __rlshift__(self, other: ArrayLike) -> Array:
        return _ufuncs.left_shift(other, self)

    def __rshift__(self, other: ArrayLike) -> Array:
        return _ufuncs.right_shift(self, other)

    def __rrshift__(self, other: ArrayLike) -> Array:
        return _ufuncs.right_shift(other, self)

    def __lt__(self, other: ArrayLike) -> Array:
        return _ufuncs.less(self, other)

    def __le__(self, other: ArrayLike) -> Array:
        return _ufuncs.less_equal(self, other)

    def __gt__(self, other: ArrayLike) -> Array:
        return _ufuncs.greater(self, other)

    def __ge__(self, other: ArrayLike) -> Array:
        return _ufuncs.greater_equal(self, other)

    def __eq__(self, other: ArrayLike) -> Array:  # type: ignore[override]
        if other is None or isinstance(other, str):  # pyright: ignore[reportUnnecessaryComparison]
            return NotImplemented  # Python then says False, as JAX does
        return _ufuncs.equal(self, other)

    def __ne__(self, other: ArrayLike) -> Array:  # type: ignore[override]
        if other is None or isinstance(other, str):  # pyright: ignore[reportUnnecessaryComparison]
            return NotImplemented
        return _ufuncs.not_equal(self, other)

    def __neg__(self) -> Array:
        return _ufuncs.negative(self)

    def __pos__(self) -> Array:
        return _ufuncs.positive(self)

    def __abs__(self) -> Array:
        return _ufuncs.abs(self)

    def __invert__(self) -> Array:
        return _ufuncs.invert(self)

    def __round__(self, ndigits: int | None = None) -> Array:
        if ndigits is None:  # Python's round(x): an integer result, as JAX
            rounded = np.asarray(_ufuncs.round(self, 0))
            fix = "Fix: round(x, 0) keeps the float dtype, which holds it."
            return from_numpy(_core.checked_cast(rounded, _INT32, "round", fix))
        return _ufuncs.round(self, ndigits)

    # Arrays are mutable-looking but immutable values: not hashable.
    __hash__ = None  # type: ignore[assignment]

    def __setitem__(self, key: Any, value: Any) -> None:
        raise TypeError(
            f"{type(self).__name__} is immutable, so item assignment is not "
            "supported. Use x = x.at[idx].set(value) (or .add, .multiply, ...), "
            "which returns an updated copy."
        )

    def __getitem__(self, key: Any) -> Array:
        return _shape._getitem(self, key)

    # -- methods -------------------------------------------------------------

    def astype(self, dtype: Any, copy: bool = False) -> Array:
        """This array converted to ``dtype`` (a strong result)."""
        return _creation.astype(self, dtype)

    def reshape(self, *shape: Any, order: str = "C") -> Array:
        if len(shape) == 1 and isinstance(shape[0], list | tuple):
            shape = tuple(shape[0])  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
        return _shape.reshape(self, shape, order=order)

    def transpose(self, *axes: Any) -> Array:
        if len(axes) == 1 and not isinstance(axes[0], int):
            axes = tuple(axes[0]) if axes[0] is not None else ()
        return _shape.transpose(self, axes or None)

    def flatten(self, order: str = "C") -> Array:
        return _shape.ravel(self, order=order)

    def ravel(self, order: str = "C") -> Array:
        return _shape.ravel(self, order=order)

    def squeeze(self, axis: Any = None) -> Array:
        return _shape.squeeze(self, axis)

    def swapaxes(self, axis1: int, axis2: int) -> Array:
        return _shape.swapaxes(self, axis1, axis2)

    def sum(self, axis: Any = None, dtype: Any = None, **kw: Any) -> Array:
        return _reductions.sum(self, axis=axis, dtype=dtype, **kw)

    def prod(self, axis: Any = None, dtype: Any = None, **kw: Any) -> Array:
        return _reductions.prod(self, axis=axis, dtype=dtype, **kw)

    def mean(self, axis: Any = None, dtype: Any = None, **kw: Any) -> Array:
        return _reductions.mean(self, axis=axis, dtype=dtype, **kw)

    def var(self, axis: Any = None, dtype: Any = None, **kw: Any) -> Array:
        return _reductions.var(self, axis=axis, dtype=dtype, **kw)

    def std(self, axis: Any = None, dtype: Any = None, **kw: Any) -> Array:
        return _reductions.std(self, axis=axis, dtype=dtype, **kw)

    def max(self, axis: Any = None, **kw: Any) -> Array:
        return _reductions.max(self, axis=axis, **kw)

    def min(self, axis: Any = None, **kw: Any) -> Array:
        return _reductions.min(self, axis=axis, **kw)

    def argmax(self, axis: Any = None, **kw: Any) -> Array:
        return _reductions.argmax(self, axis=axis, **kw)

    def argmin(self, axis: Any = None, **kw: Any) -> Array:
        return _reductions.argmin(self, axis=axis, **kw)

    def any(self, axis: Any = None, **kw: Any) -> Array:
        return _reductions.any(self, axis=axis, **kw)

    def all(self, axis: Any = None, **kw: Any) -> Array:
        return _reductions.all(self, axis=axis, **kw)

    def cumsum(self, axis: Any = None, dtype: Any = None) -> Array:
        return _reductions.cumsum(self, axis=axis, dtype=dtype)

    def cumprod(self, axis: Any = None, dtype: Any = None) -> Array:
        return _reductions.cumprod(self, axis=axis, dtype=dtype)

    def clip(self, min: Any = None, max: Any = None) -> Array:
        return _ufuncs.clip(self, min=min, max=max)

    def round(self, decimals: int = 0) -> Array:
        return _ufuncs.round(self, decimals)

    def conj(self) -> Array:
        return _ufuncs.conj(self)

    def conjugate(self) -> Array:
        return _ufuncs.conj(self)

    def dot(self, other: ArrayLike) -> Array:
        return _linalg.dot(self, other)

    def take(
        self,
        indices: ArrayLike,
        axis: int | None = None,
        out: None = None,
        mode: str | None = None,
        unique_indices: bool = False,
        indices_are_sorted: bool = False,
        fill_value: ArrayLike | None = None,
    ) -> Array:
        return _shape.take(
            self,
            indices,
            axis=axis,
            out=out,
            mode=mode,
            unique_indices=unique_indices,
            indices_are_sorted=indices_are_sorted,
            fill_value=fill_value,
        )

    def repeat(self, repeats: Any, axis: int | None = None) -> Array:
        return _shape.repeat(self, repeats, axis=axis)

    def sort(
        self,
        axis: int | None = -1,
        *,
        kind: None = None,
        order: None = None,
        stable: bool = True,
        descending: bool = False,
    ) -> Array:
        return _shape.sort(
            self,
            axis=axis,
            kind=kind,
            order=order,
            stable=stable,
            descending=descending,
        )

    def argsort(
        self,
        axis: int | None = -1,
        *,
        kind: None = None,
        order: None = None,
        stable: bool = True,
        descending: bool = False,
    ) -> Array:
        return _shape.argsort(
            self,
            axis=axis,
            kind=kind,
            order=order,
            stable=stable,
            descending=descending,
        )

    def nonzero(
        self,
        *,
        fill_value: ArrayLike | tuple[ArrayLike, ...] | None = None,
        size: int | None = None,
    ) -> tuple[Array, ...]:
        return _shape.nonzero(self, size=size, fill_value=fill_value)

    def ptp(
        self,
        axis: int | Sequence[int] | None = None,
        out: None = None,
        keepdims: bool = False,
    ) -> Array:
        return _reductions.ptp(self, axis=axis, out=out, keepdims=keepdims)

    def searchsorted(
        self,
        v: ArrayLike,
        side: str = "left",
        sorter: ArrayLike | None = None,
        *,
        method: str = "scan",
    ) -> Array:
        return _shape.searchsorted(self, v, side=side, sorter=sorter, method=method)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
        return _shape.diagonal(self, offset, axis1, axis2)

    def trace(
        self,
        offset: int = 0,
        axis1: int = 0,
        axis2: int = 1,
        dtype: DTypeLike | None = None,
        out: None = None,
    ) -> Array:
        return _reductions.trace(self, offset, axis1, axis2, dtype=dtype, out=out)

    def compress(
        self,
        condition: ArrayLike,
        axis: int | None = None,
        *,
        out: None = None,
        size: int | None = None,
        fill_value: ArrayLike = 0,
    ) -> Array:
        return _shape.compress(
            condition, self, axis, size=size, fill_value=fill_value, out=out
        )

    def view(self, dtype: DTypeLike | None = None, type: None = None) -> Array:  # noqa: A002
        """The same bytes read as ``dtype`` (the last axis changes length
        when the item sizes differ), as ``jax.Array.view``."""
        if type is not None:
            raise TypeError("view: the type argument is not supported")
        return _shape._view(self, dtype)

    def tobytes(self, order: str = "C") -> bytes:
        return np.asarray(self).tobytes(order=order)  # type: ignore[arg-type]

    def copy(self) -> Array:
        return _creation.array(self, copy=True)

    def item(self, *args: int) -> bool | int | float | complex:
        return np.asarray(self).item(*args)  # type: ignore[no-any-return]

    def tolist(self) -> Any:
        return np.asarray(self).tolist()

    # -- Python protocols ----------------------------------------------------

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of an unsized (0-d) array")
        return self.shape[0]

    def __iter__(self) -> Iterator[Array]:
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        for i in range(self.shape[0]):
            yield self[i]

    def __bool__(self) -> bool:
        return bool(np.asarray(self))

    def __int__(self) -> int:
        return int(np.asarray(self))

    def __float__(self) -> float:
        return float(np.asarray(self))

    def __complex__(self) -> complex:
        return complex(np.asarray(self))

    def __index__(self) -> int:
        if not _dtypes.isdtype(self.dtype, ("integral", "bool")) or self.shape:
            raise TypeError(
                f"only integer scalar arrays can be used as an index, got "
                f"an array of dtype {self.dtype} and shape {self.shape}"
            )
        return int(np.asarray(self))

    def __array__(
        self, dtype: Any = None, copy: bool | None = None
    ) -> np.ndarray[Any, Any]:
        raise NotImplementedError

    def __array_ufunc__(
        self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any
    ) -> Any:
        # `ndarray + Array` (and np.add(ndarray, Array)) come here: computed
        # with our rules when the namespace has the ufunc, else by NumPy on
        # plain arrays.
        import typelattice.numpy as ns

        fn = getattr(ns, ufunc.__name__, None)
        if method == "__call__" and fn is not None and not kwargs:
            return fn(*inputs)
        plain = [np.asarray(x) if isinstance(x, Array) else x for x in inputs]
        return getattr(ufunc, method)(*plain, **kwargs)


class ArrayImpl(Array):
    """The NumPy-backed concrete :class:`Array`."""

    __slots__ = ("_key", "_value")

    _value: np.ndarray[Any, Any]
    _key: _core.Aval

    def __init__(self, value: np.ndarray[Any, Any], weak_type: bool = False) -> None:
        value = np.asarray(value)
        if value.dtype not in _dtypes.ALL_SET:
            raise TypeError(f"unsupported dtype {value.dtype} for an Array")
        self._value = value
        self._key = _core.aval(value.dtype, bool(weak_type))

    @property
    def dtype(self) -> np.dtype[Any]:
        return self._key[0]

    @property
    def shape(self) -> tuple[int, ...]:
        shape: tuple[int, ...] = self._value.shape
        return shape

    @property
    def weak_type(self) -> bool:
        return self._key[1]

    @property
    def ndim(self) -> int:
        return self._value.ndim

    @property
    def size(self) -> int:
        return self._value.size

    @property
    def nbytes(self) -> int:
        return self._value.nbytes

    @property
    def _promotion_key(self) -> _core.Aval:
        # Lets typelattice.result_type cache answers for these arrays.
        return self._key

    def __array__(
        self, dtype: Any = None, copy: bool | None = None
    ) -> np.ndarray[Any, Any]:
        value = self._value
        if dtype is not None and np.dtype(dtype) != value.dtype:
            return value.astype(dtype)
        if copy:
            return value.copy()
        view = value.view()
        view.flags.writeable = False
        return view

    def __dlpack__(self, **kwargs: Any) -> Any:
        # Exported read-only: consumers must not change an immutable array.
        view = self._value.view()
        view.flags.writeable = False
        return view.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._value.__dlpack_device__()

    def __bool__(self) -> bool:
        return bool(self._value)

    def __float__(self) -> float:
        return float(self._value)

    def __int__(self) -> int:
        return int(self._value)

    def __complex__(self) -> complex:
        return complex(self._value)

    def __len__(self) -> int:
        if not self._value.ndim:
            raise TypeError("len() of an unsized (0-d) array")
        return len(self._value)

    def __repr__(self) -> str:
        value = self._value
        name = value.dtype.name
        body = np.array2string(value, separator=", ", prefix="Array(")
        weak = ", weak_type=True" if self._key[1] else ""
        if value.size == 0:  # "[]" alone would hide the shape
            return f"Array([], shape={value.shape}, dtype={name}{weak})"
        return f"Array({body}, dtype={name}{weak})"

    def __str__(self) -> str:
        return str(self._value)

    def __format__(self, spec: str) -> str:
        if not self._value.ndim:
            return format(self._value.item(), spec)
        return format(str(self), spec)

    def __reduce__(self) -> Any:
        return (_rebuild, (self._value, self._key[1]))

    def __copy__(self) -> ArrayImpl:
        return self

    def __deepcopy__(self, memo: Any) -> ArrayImpl:
        return self


def _rebuild(value: np.ndarray[Any, Any], weak: bool) -> ArrayImpl:
    return ArrayImpl(value, weak)


_new_object = object.__new__


def wrap(value: Any, key: _core.Aval) -> ArrayImpl:
    """An ArrayImpl from a NumPy result already in ``key``'s dtype."""
    if type(value) is not np.ndarray:
        value = np.asarray(value)
    out: ArrayImpl = _new_object(ArrayImpl)
    out._value = value
    out._key = key
    return out


def from_numpy(value: np.ndarray[Any, Any], weak: bool = False) -> ArrayImpl:
    """Wrap an ndarray whose dtype is in the universe (any weak flag)."""
    if type(value) is not np.ndarray:
        value = np.asarray(value)
    return wrap(value, _core.aval(value.dtype, weak))


class _IndexUpdateHelper:
    """``x.at``: index it to get an :class:`_IndexUpdateRef`."""

    __slots__ = ("array",)

    def __init__(self, array: Array) -> None:
        self.array = array

    def __getitem__(self, index: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
    """``x.at[idx]``: the functional updates of the elements at ``idx``.

    Each method returns a new array of ``x``'s dtype and weak flag; ``x`` is
    unchanged. Repeated indices accumulate for ``add``, ``multiply``, ``min``
    and ``max`` (and ``apply`` runs once per occurrence); for ``set`` the
    last one wins.

    ``mode`` says what an out-of-bounds index does, as in JAX: ``'clip'``
    clamps it; ``'drop'`` and ``'fill'`` skip that update (``get`` returns
    ``fill_value`` there: NaN, the smallest signed or largest unsigned
    integer, or True, by default). By default, and with
    ``'promise_in_bounds'``, an out-of-bounds index raises IndexError (JAX
    clamps or drops it silently). Negative indices count from the end unless
    ``wrap_negative_indices=False``. ``indices_are_sorted`` and
    ``unique_indices`` are hints that do not change the result.
    """

    __slots__ = ("array", "index")

    def __init__(self, array: Array, index: Any) -> None:
        self.array = array
        self.index = index

    def get(
        self,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: str | None = None,
        fill_value: ArrayLike | None = None,
        wrap_negative_indices: bool = True,
    ) -> Array:
        if mode is None and wrap_negative_indices:
            return self.array[self.index]
        return _shape._gather(
            self.array, self.index, mode, fill_value, wrap_negative_indices
        )

    def _update(
        self,
        values: Any,
        ufunc: np.ufunc | None,
        name: str,
        mode: str | None,
        wrap_negative: bool,
    ) -> Array:
        return _shape._scatter(
            self.array, self.index, values, ufunc, name, mode, wrap_negative
        )

    def set(
        self,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: str | None = None,
        wrap_negative_indices: bool = True,
    ) -> Array:
        return self._update(values, None, "set", mode, wrap_negative_indices)

    def add(
        self,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: str | None = None,
        wrap_negative_indices: bool = True,
    ) -> Array:
        return self._update(values, np.add, "add", mode, wrap_negative_indices)

    def subtract(
        self,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: str | None = None,
        wrap_negative_indices: bool = True,
    ) -> Array:
        return self._update(
            values, np.subtract, "subtract", mode, wrap_negative_indices
        )

    def multiply(
        self,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: str | None = None,
        wrap_negative_indices: bool = True,
    ) -> Array:
        return self._update(
            values, np.multiply, "multiply", mode, wrap_negative_indices
        )

    mul = multiply

    def divide(
        self,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: str | None = None,
        wrap_negative_indices: bool = True,
    ) -> Array:
        return self._update(
            values, np.true_divide, "divide", mode, wrap_negative_indices
        )

    def power(
        self,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: str | None = None,
        wrap_negative_indices: bool = True,
    ) -> Array:
        return self._update(values, np.power, "power", mode, wrap_negative_indices)

    def min(
        self,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: str | None = None,
        wrap_negative_indices: bool = True,
    ) -> Array:
        return self._update(values, np.minimum, "min", mode, wrap_negative_indices)

    def max(
        self,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: str | None = None,
        wrap_negative_indices: bool = True,
    ) -> Array:
        return self._update(values, np.maximum, "max", mode, wrap_negative_indices)

    def apply(
        self,
        func: Callable[[Array], Array],
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: str | None = None,
        wrap_negative_indices: bool = True,
    ) -> Array:
        """``func`` (e.g. ``tnp.negative``) applied to the elements at the
        index, once per occurrence; it must keep the dtype."""
        return _shape._scatter_apply(
            self.array, self.index, func, mode, wrap_negative_indices
        )

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"


_core._ArrayImpl.append(ArrayImpl)

# The namespace's modules import this one: they come last.
from typelattice.numpy import (  # noqa: E402
    _creation,
    _linalg,
    _reductions,
    _shape,
    _ufuncs,
)
