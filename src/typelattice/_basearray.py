"""The array type's base: :class:`Array`, with every operator and method.

``typelattice.numpy.Array`` (also ``typelattice.Array`` and
``typelattice.typing.Array``): the class of every array, concrete
(:class:`~typelattice._array.ArrayImpl`) or traced
(:class:`~typelattice._tracing.tracer.Tracer`). It holds no values; its
subclasses give ``dtype``, ``shape`` and ``weak_type``.

``weak_type`` is True when the array's dtype was not asked for, but
inferred from a Python scalar, so that it defers to the other operand's width
in promotion (``Array(2, dtype=int32, weak_type=True)`` times an int8 array
is int8).

The operators and methods are defined here, once, in terms of the
namespace's functions, so every array-like class deriving from it behaves
alike. This module is a leaf: it imports nothing of the array code, so that
``import typelattice.typing`` is cheap. The modules the methods call are
bound by ``typelattice.numpy`` when it loads (:func:`bind_namespace`); a
method used before that loads it.
"""

# Package-internal: the arrays' underscored slots and the namespace modules'
# private helpers are read here by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from typelattice import _dtypes

if TYPE_CHECKING:
    from collections.abc import Sequence

    import typelattice.numpy as _namespace
    from typelattice import _array, _core
    from typelattice.numpy import _creation, _linalg, _reductions, _shape, _ufuncs
    from typelattice.typing import ArrayLike, DTypeLike

__all__ = ["Array", "bind_namespace"]

_COMPLEX_KINDS: Final = _dtypes.CATEGORIES["complex floating"]
_INT32: Final = np.dtype("int32")

# The modules Array's methods call, by the names they call them: the array
# layer's and the namespace's. They are globals of this module, set by
# bind_namespace; until then each is an _Unbound, whose first use loads
# typelattice.numpy (which binds them all).
_BOUND: Final = (
    "_array",
    "_core",
    "_creation",
    "_linalg",
    "_namespace",
    "_reductions",
    "_shape",
    "_ufuncs",
)


class _Unbound:
    """Stands for a module of :data:`_BOUND` until the namespace binds it."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):  # introspection (doctest, copy) loads nothing
            raise AttributeError(attr)
        importlib.import_module("typelattice.numpy")  # binds the modules
        module = globals()[self.name]
        if isinstance(module, _Unbound):  # used while typelattice.numpy loads
            raise ImportError(
                f"Array methods need typelattice.numpy, which is still loading "
                f"({self.name}.{attr} was asked for)"
            )
        return getattr(module, attr)


if not TYPE_CHECKING:
    globals().update({name: _Unbound(name) for name in _BOUND})


def bind_namespace(**modules: ModuleType) -> None:
    """Give Array's methods the modules they call (``typelattice.numpy``
    does, as it loads: the namespace implements the methods, and this
    module imports none of it).

    Args:
      **modules: each module of :data:`_BOUND`, by that name.

    Raises:
      ValueError: a name missing or unknown.
    """
    if set(modules) != set(_BOUND):
        raise ValueError(
            f"bind_namespace needs exactly {sorted(_BOUND)}, got {sorted(modules)}"
        )
    globals().update(modules)


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
        """The element type, an ``np.dtype``."""
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int, ...]:
        """The length of each axis, a tuple of ints."""
        raise NotImplementedError

    @property
    def weak_type(self) -> bool:
        """Whether the array is weak: its dtype came from a Python scalar, so it
        defers to other operands' (docs/semantics.md, "Weak types")."""
        raise NotImplementedError

    @property
    def ndim(self) -> int:
        """The number of axes."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of elements."""
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def itemsize(self) -> int:
        """The size of one element in bytes."""
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """The size of the elements in bytes."""
        return self.size * self.dtype.itemsize

    @property
    def T(self) -> Array:
        """The array with its axes reversed (see
        :func:`typelattice.numpy.transpose`)."""
        return _shape.transpose(self)

    @property
    def mT(self) -> Array:
        """The array with its last two axes swapped (a stack of transposed
        matrices)."""
        return _shape.matrix_transpose(self)

    @property
    def real(self) -> Array:
        """The real part (see :func:`typelattice.numpy.real`)."""
        return _ufuncs.real(self)

    @property
    def imag(self) -> Array:
        """The imaginary part (see :func:`typelattice.numpy.imag`)."""
        return _ufuncs.imag(self)

    @property
    def at(self) -> _IndexUpdateHelper:
        """Functional updates: ``x.at[idx].set(v)``, ``.add(v)``, ``.get()``...

        Arrays are immutable; each update returns a new array (see
        docs/semantics.md, "Immutability").

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([1, 2, 3], dtype='int8')
        >>> x.at[0].set(9), x
        (Array([9, 2, 3], dtype=int8), Array([1, 2, 3], dtype=int8))
        """
        return _IndexUpdateHelper(self)

    # -- operators -----------------------------------------------------------
    # Python operators on arrays and scalars, both orders (NumPy's names).
    # An operand of a type they do not know gets NotImplemented, so that its
    # own reflected method runs, or Python's TypeError (see _defers_to).

    def __add__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.add(self, other)

    def __radd__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.add(other, self)

    def __sub__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.subtract(self, other)

    def __rsub__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.subtract(other, self)

    def __mul__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.multiply(self, other)

    def __rmul__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.multiply(other, self)

    def __truediv__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.true_divide(self, other)

    def __rtruediv__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.true_divide(other, self)

    def __floordiv__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.floor_divide(self, other)

    def __rfloordiv__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.floor_divide(other, self)

    def __mod__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.remainder(self, other)

    def __rmod__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.remainder(other, self)

    def __divmod__(self, other: ArrayLike) -> tuple[Array, Array]:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.divmod(self, other)

    def __rdivmod__(self, other: ArrayLike) -> tuple[Array, Array]:
        if _defers_to(other):
            # mypy accepts NotImplemented from __divmod__, not from this one.
            return NotImplemented  # type: ignore[no-any-return]
        return _ufuncs.divmod(other, self)

    def __pow__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.power(self, other)

    def __rpow__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.power(other, self)

    def __matmul__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _linalg.matmul(self, other)

    def __rmatmul__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _linalg.matmul(other, self)

    def __and__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.bitwise_and(self, other)

    def __rand__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.bitwise_and(other, self)

    def __or__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.bitwise_or(self, other)

    def __ror__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.bitwise_or(other, self)

    def __xor__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.bitwise_xor(self, other)

    def __rxor__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.bitwise_xor(other, self)

    def __lshift__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.left_shift(self, other)

    def __rlshift__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.left_shift(other, self)

    def __rshift__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.right_shift(self, other)

    def __rrshift__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.right_shift(other, self)

    def __lt__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.less(self, other)

    def __le__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.less_equal(self, other)

    def __gt__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.greater(self, other)

    def __ge__(self, other: ArrayLike) -> Array:
        if _defers_to(other):
            return NotImplemented
        return _ufuncs.greater_equal(self, other)

    def __eq__(self, other: ArrayLike) -> Array:  # type: ignore[override]
        if _defers_to(other):  # None, a string: Python then says False, as JAX
            return NotImplemented
        return _ufuncs.equal(self, other)

    def __ne__(self, other: ArrayLike) -> Array:  # type: ignore[override]
        if _defers_to(other):
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
            fix = f"Fix: round(x, 0) keeps x's dtype ({self.dtype}), which holds it."
            return _array.from_numpy(_core.checked_cast(rounded, _INT32, "round", fix))
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
        """This array converted to ``dtype``: an explicit cast, so a strong
        result, not checked for loss of data (see
        :func:`typelattice.numpy.astype`).

        Args:
          dtype: the dtype to convert to.
          copy: accepted for the Array API; not observable.

        Returns:
          A strong Array of ``dtype``.

        >>> import typelattice.numpy as tnp
        >>> tnp.asarray(2).astype('int8')
        Array(2, dtype=int8)
        """
        return _creation.astype(self, dtype)

    def reshape(self, *shape: Any, order: str = "C") -> Array:
        """This array with a new shape; see :func:`typelattice.numpy.reshape`.

        Args:
          *shape: the new shape, as ints or one sequence; one entry may be -1.
          order: ``'C'`` or ``'F'`` element order.

        Returns:
          An Array with this array's dtype and weak flag.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.reshape(4)
        Array([1, 2, 3, 4], dtype=int8)
        """
        if len(shape) == 1 and isinstance(shape[0], list | tuple):
            shape = tuple(shape[0])  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
        return _shape.reshape(self, shape, order=order)

    def transpose(self, *axes: Any) -> Array:
        """This array with its axes permuted (reversed by default); see
        :func:`typelattice.numpy.transpose`.

        Args:
          *axes: a permutation, as ints or one sequence; none to reverse.

        Returns:
          An Array with this array's dtype and weak flag.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.transpose()
        Array([[1, 3],
               [2, 4]], dtype=int8)
        """
        if len(axes) == 1 and not isinstance(axes[0], int):
            axes = tuple(axes[0]) if axes[0] is not None else ()
        return _shape.transpose(self, axes or None)

    def flatten(self, order: str = "C") -> Array:
        """This array as one axis (a copy, as every result); see
        :func:`typelattice.numpy.ravel`.

        Args:
          order: ``'C'`` or ``'F'`` element order.

        Returns:
          A 1-d Array with this array's dtype and weak flag.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.flatten()
        Array([1, 2, 3, 4], dtype=int8)
        """
        return _shape.ravel(self, order=order)

    def ravel(self, order: str = "C") -> Array:
        """This array as one axis; see :func:`typelattice.numpy.ravel`.

        Args:
          order: ``'C'`` or ``'F'`` element order.

        Returns:
          A 1-d Array with this array's dtype and weak flag.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.ravel()
        Array([1, 2, 3, 4], dtype=int8)
        """
        return _shape.ravel(self, order=order)

    def squeeze(self, axis: Any = None) -> Array:
        """This array without axes of length 1; see
        :func:`typelattice.numpy.squeeze`.

        Args:
          axis: the axes to remove, or None for all of length 1.

        Returns:
          An Array with this array's dtype and weak flag.

        >>> import typelattice.numpy as tnp
        >>> tnp.zeros((1, 2)).squeeze().shape
        (2,)
        """
        return _shape.squeeze(self, axis)

    def swapaxes(self, axis1: int, axis2: int) -> Array:
        """This array with two axes swapped; see
        :func:`typelattice.numpy.swapaxes`.

        Args:
          axis1: an axis.
          axis2: another axis.

        Returns:
          An Array with this array's dtype and weak flag.

        >>> import typelattice.numpy as tnp
        >>> tnp.zeros((2, 3)).swapaxes(0, 1).shape
        (3, 2)
        """
        return _shape.swapaxes(self, axis1, axis2)

    def sum(self, axis: Any = None, dtype: Any = None, **kw: Any) -> Array:
        """Sum of elements; see :func:`typelattice.numpy.sum` (narrow integers
        widen to the default integer).

        Args:
          axis: an axis, a tuple of axes, or None for every axis.
          dtype: the dtype to compute in and return.
          **kw: the other keyword arguments of :func:`typelattice.numpy.sum`
            (``keepdims``, ``where``...).

        Returns:
          A strong Array.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.sum()
        Array(10, dtype=int32)
        """
        return _reductions.sum(self, axis=axis, dtype=dtype, **kw)

    def prod(self, axis: Any = None, dtype: Any = None, **kw: Any) -> Array:
        """Product of elements; see :func:`typelattice.numpy.prod`.

        Args:
          axis: an axis, a tuple of axes, or None for every axis.
          dtype: the dtype to compute in and return.
          **kw: the other keyword arguments of :func:`typelattice.numpy.prod`
            (``keepdims``, ``where``...).

        Returns:
          A strong Array.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.prod(axis=1)
        Array([ 2, 12], dtype=int32)
        """
        return _reductions.prod(self, axis=axis, dtype=dtype, **kw)

    def mean(self, axis: Any = None, dtype: Any = None, **kw: Any) -> Array:
        """Arithmetic mean, in an inexact type; see
        :func:`typelattice.numpy.mean`.

        Args:
          axis: an axis, a tuple of axes, or None for every axis.
          dtype: the dtype to compute in and return.
          **kw: the other keyword arguments of :func:`typelattice.numpy.mean`
            (``keepdims``, ``where``...).

        Returns:
          A strong Array.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.mean()
        Array(2.5, dtype=float32)
        """
        return _reductions.mean(self, axis=axis, dtype=dtype, **kw)

    def var(self, axis: Any = None, dtype: Any = None, **kw: Any) -> Array:
        """Variance; see :func:`typelattice.numpy.var`.

        Args:
          axis: an axis, a tuple of axes, or None for every axis.
          dtype: the dtype to compute in and return.
          **kw: the other keyword arguments of :func:`typelattice.numpy.var`
            (``ddof``, ``keepdims``...).

        Returns:
          A strong Array.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.var()
        Array(1.25, dtype=float32)
        """
        return _reductions.var(self, axis=axis, dtype=dtype, **kw)

    def std(self, axis: Any = None, dtype: Any = None, **kw: Any) -> Array:
        """Standard deviation; see :func:`typelattice.numpy.std`.

        Args:
          axis: an axis, a tuple of axes, or None for every axis.
          dtype: the dtype to compute in and return.
          **kw: the other keyword arguments of :func:`typelattice.numpy.std`
            (``ddof``, ``keepdims``...).

        Returns:
          A strong Array.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.std()
        Array(1.118034, dtype=float32)
        """
        return _reductions.std(self, axis=axis, dtype=dtype, **kw)

    def max(self, axis: Any = None, **kw: Any) -> Array:
        """Largest element; see :func:`typelattice.numpy.max`.

        Args:
          axis: an axis, a tuple of axes, or None for every axis.
          **kw: the other keyword arguments of :func:`typelattice.numpy.max`
            (``keepdims``, ``where``...).

        Returns:
          A strong Array of this array's dtype.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.max()
        Array(4, dtype=int8)
        """
        return _reductions.max(self, axis=axis, **kw)

    def min(self, axis: Any = None, **kw: Any) -> Array:
        """Smallest element; see :func:`typelattice.numpy.min`.

        Args:
          axis: an axis, a tuple of axes, or None for every axis.
          **kw: the other keyword arguments of :func:`typelattice.numpy.min`
            (``keepdims``, ``where``...).

        Returns:
          A strong Array of this array's dtype.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.min(axis=0)
        Array([1, 2], dtype=int8)
        """
        return _reductions.min(self, axis=axis, **kw)

    def argmax(self, axis: Any = None, **kw: Any) -> Array:
        """Index of the largest element; see :func:`typelattice.numpy.argmax`.

        Args:
          axis: an axis, or None for the flattened array.
          **kw: ``keepdims``.

        Returns:
          A strong Array of the default integer type.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.argmax()
        Array(3, dtype=int32)
        """
        return _reductions.argmax(self, axis=axis, **kw)

    def argmin(self, axis: Any = None, **kw: Any) -> Array:
        """Index of the smallest element; see :func:`typelattice.numpy.argmin`.

        Args:
          axis: an axis, or None for the flattened array.
          **kw: ``keepdims``.

        Returns:
          A strong Array of the default integer type.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.argmin(axis=1)
        Array([0, 0], dtype=int32)
        """
        return _reductions.argmin(self, axis=axis, **kw)

    def any(self, axis: Any = None, **kw: Any) -> Array:
        """Whether any element is true; see :func:`typelattice.numpy.any`.

        Args:
          axis: an axis, a tuple of axes, or None for every axis.
          **kw: the other keyword arguments of :func:`typelattice.numpy.any`
            (``keepdims``, ``where``...).

        Returns:
          A strong bool Array.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> (x > 2).any()
        Array(True, dtype=bool)
        """
        return _reductions.any(self, axis=axis, **kw)

    def all(self, axis: Any = None, **kw: Any) -> Array:
        """Whether every element is true; see :func:`typelattice.numpy.all`.

        Args:
          axis: an axis, a tuple of axes, or None for every axis.
          **kw: the other keyword arguments of :func:`typelattice.numpy.all`
            (``keepdims``, ``where``...).

        Returns:
          A strong bool Array.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.all()
        Array(True, dtype=bool)
        """
        return _reductions.all(self, axis=axis, **kw)

    def cumsum(self, axis: Any = None, dtype: Any = None) -> Array:
        """Running sum; see :func:`typelattice.numpy.cumsum`.

        Args:
          axis: an axis, or None for the flattened array.
          dtype: the dtype to compute in and return.

        Returns:
          A strong Array.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.cumsum()
        Array([ 1,  3,  6, 10], dtype=int8)
        """
        return _reductions.cumsum(self, axis=axis, dtype=dtype)

    def cumprod(self, axis: Any = None, dtype: Any = None) -> Array:
        """Running product; see :func:`typelattice.numpy.cumprod`.

        Args:
          axis: an axis, or None for the flattened array.
          dtype: the dtype to compute in and return.

        Returns:
          A strong Array.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.cumprod(axis=0)
        Array([[1, 2],
               [3, 8]], dtype=int8)
        """
        return _reductions.cumprod(self, axis=axis, dtype=dtype)

    def clip(self, min: Any = None, max: Any = None) -> Array:
        """Values limited to ``[min, max]``; see :func:`typelattice.numpy.clip`.

        Args:
          min: the lower bound, or None.
          max: the upper bound, or None.

        Returns:
          An Array of this array's dtype promoted with the bounds'.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.clip(2, 3)
        Array([[2, 2],
               [3, 3]], dtype=int8)
        """
        return _ufuncs.clip(self, min=min, max=max)

    def round(self, decimals: int = 0) -> Array:
        """Values rounded to ``decimals`` places; see
        :func:`typelattice.numpy.round`.

        Args:
          decimals: the number of decimal places.

        Returns:
          An Array with this array's dtype and weak flag.

        >>> import typelattice.numpy as tnp
        >>> tnp.asarray([1.25, 2.5]).round(1)
        Array([1.2, 2.5], dtype=float32)
        """
        return _ufuncs.round(self, decimals)

    def conj(self) -> Array:
        """The complex conjugate; see :func:`typelattice.numpy.conj`.

        Returns:
          An Array with this array's dtype and weak flag.

        >>> import typelattice.numpy as tnp
        >>> c = tnp.asarray([1+2j, 3-1j], dtype='complex64')
        >>> c.conj()
        Array([1.-2.j, 3.+1.j], dtype=complex64)
        """
        return _ufuncs.conj(self)

    def conjugate(self) -> Array:
        """The complex conjugate (as :meth:`conj`).

        Returns:
          An Array with this array's dtype and weak flag.

        >>> import typelattice.numpy as tnp
        >>> c = tnp.asarray([1+2j, 3-1j], dtype='complex64')
        >>> c.conjugate()
        Array([1.-2.j, 3.+1.j], dtype=complex64)
        """
        return _ufuncs.conj(self)

    def dot(self, other: ArrayLike) -> Array:
        """Dot product with ``other``; see :func:`typelattice.numpy.dot`.

        Args:
          other: an Array, a NumPy array or a scalar.

        Returns:
          An Array of the promoted dtype.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.dot(x)
        Array([[ 7, 10],
               [15, 22]], dtype=int8)
        """
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
        """Elements at ``indices``; see :func:`typelattice.numpy.take` (out-of-
        bounds indices raise unless ``mode`` says otherwise).

        Args:
          indices: an integer array or scalar.
          axis: the axis, or None for the flattened array.
          out: must be None.
          mode: ``'fill'``, ``'clip'``, ``'wrap'`` or ``'raise'``.
          unique_indices: a hint; ignored.
          indices_are_sorted: a hint; ignored.
          fill_value: the value for out-of-bounds indices with ``'fill'``.

        Returns:
          An Array with this array's dtype and weak flag.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.take(tnp.asarray([0, 3]))
        Array([1, 4], dtype=int8)
        """
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
        """Each element repeated; see :func:`typelattice.numpy.repeat`.

        Args:
          repeats: an int, or one count per element along ``axis``.
          axis: the axis (default: the flattened array).

        Returns:
          An Array with this array's dtype and weak flag.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.repeat(2, axis=0).shape
        (4, 2)
        """
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
        """A sorted copy; see :func:`typelattice.numpy.sort`.

        Args:
          axis: the axis, or None for the flattened array.
          kind: must be None.
          order: must be None.
          stable: accepted; the sort is always stable.
          descending: from largest to smallest.

        Returns:
          An Array with this array's dtype and weak flag.

        >>> import typelattice.numpy as tnp
        >>> tnp.asarray([3, 1, 2], dtype='int8').sort()
        Array([1, 2, 3], dtype=int8)
        """
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
        """Indices that sort this array; see :func:`typelattice.numpy.argsort`.

        Args:
          axis: the axis, or None for the flattened array.
          kind: must be None.
          order: must be None.
          stable: accepted; the sort is always stable.
          descending: from largest to smallest.

        Returns:
          A strong Array of the default integer type.

        >>> import typelattice.numpy as tnp
        >>> tnp.asarray([3, 1, 2], dtype='int8').argsort()
        Array([1, 2, 0], dtype=int32)
        """
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
        """Indices of the nonzero elements, one array per axis; see
        :func:`typelattice.numpy.nonzero`.

        Args:
          fill_value: the padding with ``size``.
          size: the number of indices to return.

        Returns:
          A tuple of 1-d Arrays.

        >>> import typelattice.numpy as tnp
        >>> tnp.asarray([0, 5, 0, 7]).nonzero()
        (Array([1, 3], dtype=int32),)
        """
        return _shape.nonzero(self, size=size, fill_value=fill_value)

    def ptp(
        self,
        axis: int | Sequence[int] | None = None,
        out: None = None,
        keepdims: bool = False,
    ) -> Array:
        """Range of values (``max - min``); see :func:`typelattice.numpy.ptp`.

        Args:
          axis: an axis, a tuple of axes, or None for every axis.
          out: must be None.
          keepdims: keep the reduced axes, with length 1.

        Returns:
          A strong Array of this array's dtype.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.ptp()
        Array(3, dtype=int8)
        """
        return _reductions.ptp(self, axis=axis, out=out, keepdims=keepdims)

    def searchsorted(
        self,
        v: ArrayLike,
        side: str = "left",
        sorter: ArrayLike | None = None,
        *,
        method: str = "scan",
    ) -> Array:
        """Where ``v``'s elements would go in this sorted 1-d array; see
        :func:`typelattice.numpy.searchsorted`.

        Args:
          v: the values to place.
          side: ``'left'`` or ``'right'``.
          sorter: indices that sort this array, if it is not sorted.
          method: accepted for jax.numpy compatibility.

        Returns:
          A strong Array of the default integer type.

        >>> import typelattice.numpy as tnp
        >>> tnp.asarray([1, 2, 3]).searchsorted(tnp.asarray(2))
        Array(1, dtype=int32)
        """
        return _shape.searchsorted(self, v, side=side, sorter=sorter, method=method)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
        """A diagonal; see :func:`typelattice.numpy.diagonal`.

        Args:
          offset: 0 the main diagonal, positive above, negative below.
          axis1: the first axis of the 2-d planes.
          axis2: the second axis.

        Returns:
          A strong Array of this array's dtype.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.diagonal()
        Array([1, 4], dtype=int8)
        """
        return _shape.diagonal(self, offset, axis1, axis2)

    def trace(
        self,
        offset: int = 0,
        axis1: int = 0,
        axis2: int = 1,
        dtype: DTypeLike | None = None,
        out: None = None,
    ) -> Array:
        """Sum along a diagonal; see :func:`typelattice.numpy.trace`.

        Args:
          offset: 0 the main diagonal, positive above, negative below.
          axis1: the first axis of the 2-d planes.
          axis2: the second axis.
          dtype: the dtype to sum in.
          out: must be None.

        Returns:
          A strong Array.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.trace()
        Array(5, dtype=int32)
        """
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
        """The slices where ``condition`` is true; see
        :func:`typelattice.numpy.compress`.

        Args:
          condition: a 1-d truth-valued array.
          axis: the axis, or None for the flattened array.
          out: must be None.
          size: the number of slices to return.
          fill_value: the padding with ``size``.

        Returns:
          An Array with this array's dtype and weak flag.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.compress(tnp.asarray([False, True]), axis=0)
        Array([[3, 4]], dtype=int8)
        """
        return _shape.compress(
            condition, self, axis, size=size, fill_value=fill_value, out=out
        )

    def view(self, dtype: DTypeLike | None = None, type: None = None) -> Array:  # noqa: A002
        """The same bytes read as ``dtype`` (the last axis changes length when
        the item sizes differ), as ``jax.Array.view``.

        Args:
          dtype: the dtype to read the bytes as (None: this array's).
          type: not supported; must be None.

        Returns:
          A strong Array of ``dtype``.

        >>> import typelattice.numpy as tnp
        >>> tnp.asarray([1.0], dtype='float32').view('int32')
        Array([1065353216], dtype=int32)
        """
        if type is not None:
            raise TypeError("view: the type argument is not supported")
        return _shape._view(self, dtype)

    def tobytes(self, order: str = "C") -> bytes:
        """The raw bytes of the elements.

        Args:
          order: ``'C'`` or ``'F'`` element order.

        Returns:
          A bytes object.

        >>> import typelattice.numpy as tnp
        >>> tnp.asarray([1, 2], dtype='uint8').tobytes()
        b'\\x01\\x02'
        """
        return np.asarray(self).tobytes(order=order)  # type: ignore[arg-type]

    def copy(self) -> Array:
        """A copy (arrays are immutable, so it behaves as this array).

        Returns:
          An Array with this array's dtype and weak flag.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.copy()
        Array([[1, 2],
               [3, 4]], dtype=int8)
        """
        return _creation.array(self, copy=True)

    def item(self, *args: int) -> bool | int | float | complex:
        """One element as a Python scalar.

        Args:
          *args: an index (flat, or one per axis); none for a 1-element array.

        Returns:
          A Python bool, int, float or complex.

        >>> import typelattice.numpy as tnp
        >>> tnp.asarray(2.5).item()
        2.5
        """
        return np.asarray(self).item(*args)  # type: ignore[no-any-return]

    def tolist(self) -> Any:
        """The elements as nested Python lists of Python scalars.

        Returns:
          A list (a scalar for a 0-d array).

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> x.tolist()
        [[1, 2], [3, 4]]
        """
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
        # read-only arrays. Nothing else: ufunc.at writes into its first
        # operand whatever its read-only flag says (NumPy 2.4), and out=
        # writes too, so NumPy never gets an Array's memory with either.
        if method != "__call__":
            raise _refused_method(ufunc, method, inputs[0] if inputs else None)
        given: Any = kwargs.pop("out", None)
        outs: tuple[Any, ...] = given if isinstance(given, tuple) else (given,)  # pyright: ignore[reportUnknownVariableType]
        outs += inputs[ufunc.nin :]  # NumPy passes them as out=; in case
        if any(o is not None for o in outs):
            raise _refused_out(ufunc, outs)
        inputs = inputs[: ufunc.nin]
        fn = getattr(_namespace, ufunc.__name__, None)
        if fn is not None and not kwargs:
            return fn(*inputs)
        plain = [np.asarray(x) if isinstance(x, Array) else x for x in inputs]
        return ufunc(*plain, **kwargs)


# The operand types Array's binary operators compute with, as jax.Array's:
# arrays (tracers too), NumPy's arrays and scalars, Python's numbers (a bool
# is an int). Lists, tuples, sets and dicts go to the function, whose
# TypeError says how to convert them (JAX raises too; NotImplemented would
# let Python repeat a list by an integer array's __index__). Any other type
# gets NotImplemented: its reflected method runs, or Python raises
# "unsupported operand type(s)".
_OPERANDS: Final = (Array, int, float, complex, np.generic, np.ndarray)
_REFUSED: Final = (list, tuple, set, dict)


def _defers_to(other: object) -> bool:
    """Whether an operator returns NotImplemented for ``other``."""
    # type(), not isinstance: a subclass of tuple (a NamedTuple) may define
    # operators of its own.
    return not isinstance(other, _OPERANDS) and type(other) not in _REFUSED


# NumPy's ufuncs whose ufunc.at has a functional update on x.at[idx].
AT_UPDATES: Final = {
    "add": "add",
    "subtract": "subtract",
    "multiply": "multiply",
    "divide": "divide",
    "power": "power",
    "minimum": "min",
    "maximum": "max",
}


def _namespace_has(name: str, method: str | None = None) -> bool:
    fn = getattr(_namespace, name, None)
    return fn is not None and (method is None or hasattr(fn, method))


def _refused_method(ufunc: np.ufunc, method: str, x: Any = None) -> TypeError:
    """The error of ``np.<ufunc>.<method>`` on an Array (anything but a call);
    ``x`` is the first operand, the array ``ufunc.at`` would update."""
    name = ufunc.__name__
    head = (
        f"np.{name}.{method} is not applied to typelattice arrays: they are "
        "immutable, and NumPy's ufunc methods are refused so that none can "
        "write into one (ufunc.at writes even into read-only memory)."
    )
    if method == "at":
        update = AT_UPDATES.get(name)
        if update is not None:
            fix = f"x = x.at[idx].{update}(v)"
        elif ufunc.nin == 1 and _namespace_has(name):
            fix = f"x = x.at[idx].apply(tnp.{name})"
        elif _namespace_has(name, "at"):
            fix = f"x = tnp.{name}.at(x, idx, v, inplace=False)"
        else:
            fix = "x = x.at[idx].set(new_values)"
        if fix.startswith("x = x.at") and isinstance(x, Array):
            # An update keeps x's dtype: where the function gives another
            # (divide or sqrt of integers), x must be converted first.
            dt = _at_result_dtype(ufunc, x)
            if dt is not None and dt != x.dtype:
                fix = fix.replace("x = x.at", f"x = x.astype('{dt}').at", 1)
        return TypeError(
            f"{head} Use a functional update, which returns a new array: {fix} "
            "(x.at[idx] has .set, .add, .multiply, .min, .max, .apply, ...)."
        )
    if _namespace_has(name, method):
        fix = (
            f"typelattice.numpy's own, which returns an Array: tnp.{name}.{method}(...)"
        )
    else:
        fix = f"NumPy on a NumPy array: np.{name}.{method}(np.asarray(x), ...)"
    return TypeError(
        f"{head} Use {fix}; to change elements, x = x.at[idx].set(v) (or .add(v), ...)."
    )


def _at_result_dtype(ufunc: np.ufunc, x: Array) -> np.dtype[Any] | None:
    """The dtype typelattice.numpy's function of ``ufunc``'s name gives for
    operands of ``x``'s dtype, or None where it has none or refuses them."""
    fn = getattr(_namespace, ufunc.__name__, None)
    if fn is None:
        return None
    operand = _namespace.zeros((0,), x.dtype)
    try:
        out = fn(*[operand] * ufunc.nin)
    except (TypeError, ValueError):
        return None
    return out.dtype if isinstance(out, Array) else None


def _refused_out(ufunc: np.ufunc, outs: tuple[Any, ...]) -> TypeError:
    """The error of ``np.<ufunc>(..., out=...)`` with an Array among the
    operands or the outputs."""
    name = ufunc.__name__
    call = f"tnp.{name}(...)" if _namespace_has(name) else f"np.{name}(...)"
    if any(isinstance(o, Array) for o in outs):
        return TypeError(
            f"np.{name}: out= would write into a typelattice array, and they "
            f"are immutable. Use the result instead: y = {call}; to change "
            "some elements, x = x.at[idx].set(v) (or .add(v), .multiply(v), ...)."
        )
    return TypeError(
        f"np.{name}: out= is not supported with typelattice arrays among the "
        "operands (they are immutable, and their own rules give the result's "
        f"dtype). Compute, then store: out[...] = {call}; an Array is updated "
        "with x = x.at[idx].set(v)."
    )


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
    clamps or drops it silently; see docs/semantics.md, "Differences from
    JAX"). Negative indices count from the end unless
    ``wrap_negative_indices=False``. ``indices_are_sorted`` and
    ``unique_indices`` are hints that do not change the result.

    Args:
      array: the array to update.
      index: the index, as for ``array[index]``.

    >>> import typelattice.numpy as tnp
    >>> x = tnp.asarray([1, 2, 3], dtype='int8')
    >>> x.at[tnp.asarray([0, 0, 2])].add(1)
    Array([3, 2, 4], dtype=int8)
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
        """The elements at the index, as ``x[index]`` (with ``mode``, out of
        bounds too).

        Args:
          indices_are_sorted: a hint; ignored.
          unique_indices: a hint; ignored.
          mode: what an out-of-bounds index gives: ``'clip'`` the nearest
            element, ``'fill'`` (or ``'drop'``) ``fill_value``; by default
            (and ``'promise_in_bounds'``) IndexError.
          fill_value: the value for out-of-bounds indices (default: NaN, the
            smallest signed or largest unsigned integer, or True).
          wrap_negative_indices: count negative indices from the end.

        Returns:
          An Array of ``x``'s dtype and weak flag.

        Raises:
          IndexError: an out-of-bounds index without a ``mode``.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([1, 2, 3], dtype='int8')
        >>> x.at[1].get(), x.at[5].get(mode='fill', fill_value=-1)
        (Array(2, dtype=int8), Array(-1, dtype=int8))
        """
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
        """``x`` with ``values`` at the index (for a repeated index, the last wins).

        Args:
          values: the new values, broadcast to the indexed elements.
          indices_are_sorted: a hint; ignored.
          unique_indices: a hint; ignored.
          mode: what an out-of-bounds index does: ``'clip'``, ``'drop'``,
            ``'fill'``, or by default (and ``'promise_in_bounds'``) raise.
          wrap_negative_indices: count negative indices from the end.

        Returns:
          A new Array of ``x``'s dtype and weak flag; ``x`` is unchanged.

        Raises:
          IndexError: an out-of-bounds index without a ``mode``.
          TypeError, OverflowError: values that would change in the array's
            dtype (cast them explicitly first).

        >>> import typelattice.numpy as tnp
        >>> tnp.asarray([1, 2, 3], dtype='int8').at[0].set(9)
        Array([9, 2, 3], dtype=int8)
        """
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
        """``x`` with ``values`` added at the index (repeated indices add repeatedly).

        Args:
          values: the values to add, broadcast to the indexed elements.
          indices_are_sorted: a hint; ignored.
          unique_indices: a hint; ignored.
          mode: what an out-of-bounds index does: ``'clip'``, ``'drop'``,
            ``'fill'``, or by default (and ``'promise_in_bounds'``) raise.
          wrap_negative_indices: count negative indices from the end.

        Returns:
          A new Array of ``x``'s dtype and weak flag; ``x`` is unchanged.

        Raises:
          IndexError: an out-of-bounds index without a ``mode``.
          TypeError, OverflowError: values that would change in the array's
            dtype (cast them explicitly first).

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([1, 2, 3], dtype='int8')
        >>> x.at[tnp.asarray([0, 0, 2])].add(1)
        Array([3, 2, 4], dtype=int8)
        """
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
        """``x`` with ``values`` subtracted at the index.

        Args:
          values: the values to subtract, broadcast to the indexed elements.
          indices_are_sorted: a hint; ignored.
          unique_indices: a hint; ignored.
          mode: what an out-of-bounds index does: ``'clip'``, ``'drop'``,
            ``'fill'``, or by default (and ``'promise_in_bounds'``) raise.
          wrap_negative_indices: count negative indices from the end.

        Returns:
          A new Array of ``x``'s dtype and weak flag; ``x`` is unchanged.

        Raises:
          IndexError: an out-of-bounds index without a ``mode``.
          TypeError, OverflowError: values that would change in the array's
            dtype (cast them explicitly first).

        >>> import typelattice.numpy as tnp
        >>> tnp.asarray([1, 2, 3], dtype='int8').at[1:].subtract(1)
        Array([1, 1, 2], dtype=int8)
        """
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
        """``x`` multiplied by ``values`` at the index (``mul`` is the same).

        Args:
          values: the factors, broadcast to the indexed elements.
          indices_are_sorted: a hint; ignored.
          unique_indices: a hint; ignored.
          mode: what an out-of-bounds index does: ``'clip'``, ``'drop'``,
            ``'fill'``, or by default (and ``'promise_in_bounds'``) raise.
          wrap_negative_indices: count negative indices from the end.

        Returns:
          A new Array of ``x``'s dtype and weak flag; ``x`` is unchanged.

        Raises:
          IndexError: an out-of-bounds index without a ``mode``.
          TypeError, OverflowError: values that would change in the array's
            dtype (cast them explicitly first).

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([1, 2, 3], dtype='int8')
        >>> x.at[tnp.asarray([0, 0, 2])].multiply(2)
        Array([4, 2, 6], dtype=int8)
        """
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
        """``x`` divided by ``values`` at the index (inexact arrays only).

        Args:
          values: the divisors, broadcast to the indexed elements.
          indices_are_sorted: a hint; ignored.
          unique_indices: a hint; ignored.
          mode: what an out-of-bounds index does: ``'clip'``, ``'drop'``,
            ``'fill'``, or by default (and ``'promise_in_bounds'``) raise.
          wrap_negative_indices: count negative indices from the end.

        Returns:
          A new Array of ``x``'s dtype and weak flag; ``x`` is unchanged.

        Raises:
          IndexError: an out-of-bounds index without a ``mode``.
          TypeError, OverflowError: values that would change in the array's
            dtype (cast them explicitly first).
          TypeError: an integer array (the quotient would not fit).

        >>> import typelattice.numpy as tnp
        >>> tnp.asarray([1.0, 2.0]).at[0].divide(4)
        Array([0.25, 2.  ], dtype=float32)
        """
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
        """``x`` raised to the power ``values`` at the index.

        Args:
          values: the exponents, broadcast to the indexed elements.
          indices_are_sorted: a hint; ignored.
          unique_indices: a hint; ignored.
          mode: what an out-of-bounds index does: ``'clip'``, ``'drop'``,
            ``'fill'``, or by default (and ``'promise_in_bounds'``) raise.
          wrap_negative_indices: count negative indices from the end.

        Returns:
          A new Array of ``x``'s dtype and weak flag; ``x`` is unchanged.

        Raises:
          IndexError: an out-of-bounds index without a ``mode``.
          TypeError, OverflowError: values that would change in the array's
            dtype (cast them explicitly first).

        >>> import typelattice.numpy as tnp
        >>> tnp.asarray([1, 2, 3], dtype='int8').at[1].power(2)
        Array([1, 4, 3], dtype=int8)
        """
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
        """``x`` with the smaller of each element and ``values`` at the index.

        Args:
          values: the values to compare with, broadcast to the indexed elements.
          indices_are_sorted: a hint; ignored.
          unique_indices: a hint; ignored.
          mode: what an out-of-bounds index does: ``'clip'``, ``'drop'``,
            ``'fill'``, or by default (and ``'promise_in_bounds'``) raise.
          wrap_negative_indices: count negative indices from the end.

        Returns:
          A new Array of ``x``'s dtype and weak flag; ``x`` is unchanged.

        Raises:
          IndexError: an out-of-bounds index without a ``mode``.
          TypeError, OverflowError: values that would change in the array's
            dtype (cast them explicitly first).

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([1, 2, 3], dtype='int8')
        >>> x.at[tnp.asarray([0, 2])].min(0)
        Array([0, 2, 0], dtype=int8)
        """
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
        """``x`` with the larger of each element and ``values`` at the index.

        Args:
          values: the values to compare with, broadcast to the indexed elements.
          indices_are_sorted: a hint; ignored.
          unique_indices: a hint; ignored.
          mode: what an out-of-bounds index does: ``'clip'``, ``'drop'``,
            ``'fill'``, or by default (and ``'promise_in_bounds'``) raise.
          wrap_negative_indices: count negative indices from the end.

        Returns:
          A new Array of ``x``'s dtype and weak flag; ``x`` is unchanged.

        Raises:
          IndexError: an out-of-bounds index without a ``mode``.
          TypeError, OverflowError: values that would change in the array's
            dtype (cast them explicitly first).

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([1, 2, 3], dtype='int8')
        >>> x.at[tnp.asarray([0, 2])].max(5)
        Array([5, 2, 5], dtype=int8)
        """
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
        index, once per occurrence; it must keep the dtype.

        Args:
          func: a function of an Array returning an Array of the same dtype.
          indices_are_sorted: a hint; ignored.
          unique_indices: a hint; ignored.
          mode: what an out-of-bounds index does: ``'clip'``, ``'drop'``,
            ``'fill'``, or by default (and ``'promise_in_bounds'``) raise.
          wrap_negative_indices: count negative indices from the end.

        Returns:
          A new Array of ``x``'s dtype and weak flag; ``x`` is unchanged.

        Raises:
          IndexError: an out-of-bounds index without a ``mode``.

        >>> import typelattice.numpy as tnp
        >>> tnp.asarray([1, 2, 3], dtype='int8').at[0].apply(tnp.negative)
        Array([-1,  2,  3], dtype=int8)
        """
        return _shape._scatter_apply(
            self.array, self.index, func, mode, wrap_negative_indices
        )

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"
