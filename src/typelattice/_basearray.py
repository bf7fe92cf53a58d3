"""The array type's base: :class:`Array`, every operator and method declared.

``typelattice.numpy.Array`` (also ``typelattice.Array`` and
``typelattice.typing.Array``): the class of every array, concrete
(:class:`~typelattice._array.ArrayImpl`) or traced
(:class:`~typelattice._tracing.tracer.Tracer`). It holds no values; its
subclasses give ``dtype``, ``shape`` and ``weak_type``.

``weak_type`` is True when the array's dtype was not asked for, but
inferred from a Python scalar, so that it defers to the other operand's width
in promotion (``Array(2, dtype=int32, weak_type=True)`` times an int8 array
is int8).

This module is a leaf: it imports nothing of the array code, so that
``import typelattice.typing`` is cheap. It declares the operators and
methods (their signatures and documentation, for type checkers and
``help``); those computed by the namespace's functions are implemented in
one table, :mod:`typelattice.numpy._array_methods`, which sets them on the
concrete array and on the tracers when ``typelattice.numpy`` loads (as
``jax.Array``'s are set by ``jax.numpy``). What needs no namespace function
(``ndim``, ``len()``, ``int()``, ``item()``...) is implemented here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from typelattice import _devices, _dtypes

if TYPE_CHECKING:
    from collections.abc import Sequence

    from typelattice.numpy._array_methods import _IndexUpdateHelper  # pyright: ignore[reportPrivateUsage]
    from typelattice.typing import ArrayLike, DTypeLike

__all__ = ["Array"]


def _unset(x: Array, name: str) -> NotImplementedError:
    """The error of a declared operator or method called on an array whose
    class did not get it from the namespace's table."""
    return NotImplementedError(
        f"{type(x).__name__}.{name} is not implemented: typelattice.numpy sets "
        "Array's operators and methods on typelattice's own arrays and "
        "tracers when it loads (import typelattice.numpy); another class "
        f"deriving from Array must define {name} itself"
    )


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
        raise _unset(self, "T")

    @property
    def mT(self) -> Array:
        """The array with its last two axes swapped (a stack of transposed
        matrices)."""
        raise _unset(self, "mT")

    @property
    def real(self) -> Array:
        """The real part (see :func:`typelattice.numpy.real`)."""
        raise _unset(self, "real")

    @property
    def imag(self) -> Array:
        """The imaginary part (see :func:`typelattice.numpy.imag`)."""
        raise _unset(self, "imag")

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
        raise _unset(self, "at")

    # -- operators -----------------------------------------------------------
    # Python operators on arrays and scalars, both orders (NumPy's names).
    # An operand of a type they do not know gets NotImplemented, so that its
    # own reflected method runs, or Python's TypeError (see
    # typelattice.numpy._array_methods._OPERANDS).

    def __add__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__add__")

    def __radd__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__radd__")

    def __sub__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__sub__")

    def __rsub__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__rsub__")

    def __mul__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__mul__")

    def __rmul__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__rmul__")

    def __truediv__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__truediv__")

    def __rtruediv__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__rtruediv__")

    def __floordiv__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__floordiv__")

    def __rfloordiv__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__rfloordiv__")

    def __mod__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__mod__")

    def __rmod__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__rmod__")

    def __divmod__(self, other: ArrayLike) -> tuple[Array, Array]:
        raise _unset(self, "__divmod__")

    def __rdivmod__(self, other: ArrayLike) -> tuple[Array, Array]:
        raise _unset(self, "__rdivmod__")

    def __pow__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__pow__")

    def __rpow__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__rpow__")

    def __matmul__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__matmul__")

    def __rmatmul__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__rmatmul__")

    def __and__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__and__")

    def __rand__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__rand__")

    def __or__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__or__")

    def __ror__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__ror__")

    def __xor__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__xor__")

    def __rxor__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__rxor__")

    def __lshift__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__lshift__")

    def __rlshift__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__rlshift__")

    def __rshift__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__rshift__")

    def __rrshift__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__rrshift__")

    def __lt__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__lt__")

    def __le__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__le__")

    def __gt__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__gt__")

    def __ge__(self, other: ArrayLike) -> Array:
        raise _unset(self, "__ge__")

    def __eq__(self, other: ArrayLike) -> Array:  # type: ignore[override]
        raise _unset(self, "__eq__")

    def __ne__(self, other: ArrayLike) -> Array:  # type: ignore[override]
        raise _unset(self, "__ne__")

    def __neg__(self) -> Array:
        raise _unset(self, "__neg__")

    def __pos__(self) -> Array:
        raise _unset(self, "__pos__")

    def __abs__(self) -> Array:
        raise _unset(self, "__abs__")

    def __invert__(self) -> Array:
        raise _unset(self, "__invert__")

    def __round__(self, ndigits: int | None = None) -> Array:
        raise _unset(self, "__round__")

    # Arrays are mutable-looking but immutable values: not hashable.
    __hash__ = None  # type: ignore[assignment]

    def __setitem__(self, key: Any, value: Any) -> None:
        raise TypeError(
            f"{type(self).__name__} is immutable, so item assignment is not "
            "supported. Use x = x.at[idx].set(value) (or .add, .multiply, ...), "
            "which returns an updated copy."
        )

    def __getitem__(self, key: Any) -> Array:
        raise _unset(self, "__getitem__")

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
        raise _unset(self, "astype")

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
        raise _unset(self, "reshape")

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
        raise _unset(self, "transpose")

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
        raise _unset(self, "flatten")

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
        raise _unset(self, "ravel")

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
        raise _unset(self, "squeeze")

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
        raise _unset(self, "swapaxes")

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
        raise _unset(self, "sum")

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
        raise _unset(self, "prod")

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
        raise _unset(self, "mean")

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
        raise _unset(self, "var")

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
        raise _unset(self, "std")

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
        raise _unset(self, "max")

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
        raise _unset(self, "min")

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
        raise _unset(self, "argmax")

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
        raise _unset(self, "argmin")

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
        raise _unset(self, "any")

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
        raise _unset(self, "all")

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
        raise _unset(self, "cumsum")

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
        raise _unset(self, "cumprod")

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
        raise _unset(self, "clip")

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
        raise _unset(self, "round")

    def conj(self) -> Array:
        """The complex conjugate; see :func:`typelattice.numpy.conj`.

        Returns:
          An Array with this array's dtype and weak flag.

        >>> import typelattice.numpy as tnp
        >>> c = tnp.asarray([1+2j, 3-1j], dtype='complex64')
        >>> c.conj()
        Array([1.-2.j, 3.+1.j], dtype=complex64)
        """
        raise _unset(self, "conj")

    def conjugate(self) -> Array:
        """The complex conjugate (as :meth:`conj`).

        Returns:
          An Array with this array's dtype and weak flag.

        >>> import typelattice.numpy as tnp
        >>> c = tnp.asarray([1+2j, 3-1j], dtype='complex64')
        >>> c.conjugate()
        Array([1.-2.j, 3.+1.j], dtype=complex64)
        """
        raise _unset(self, "conjugate")

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
        raise _unset(self, "dot")

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
        raise _unset(self, "take")

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
        raise _unset(self, "repeat")

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
        raise _unset(self, "sort")

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
        raise _unset(self, "argsort")

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
        raise _unset(self, "nonzero")

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
        raise _unset(self, "ptp")

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
        raise _unset(self, "searchsorted")

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
        raise _unset(self, "diagonal")

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
        raise _unset(self, "trace")

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
        raise _unset(self, "compress")

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
        raise _unset(self, "view")

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
        raise _unset(self, "copy")

    def __array_namespace__(self, /, *, api_version: str | None = None) -> Any:
        """The array namespace of the Array API standard:
        ``typelattice.numpy`` (on every backend).

        Args:
          api_version: accepted for the standard; any version gives the
            namespace.

        Returns:
          The module ``typelattice.numpy``.

        >>> import typelattice.numpy as tnp
        >>> tnp.ones(2).__array_namespace__() is tnp
        True
        """
        raise _unset(self, "__array_namespace__")

    def block_until_ready(self) -> Array:
        """This array, once computed (every array is computed when it is
        made: it returns at once), as ``jax.Array.block_until_ready``.

        Returns:
          This array.

        >>> import typelattice.numpy as tnp
        >>> tnp.ones(2).block_until_ready()
        Array([1., 1.], dtype=float32)
        """
        return self

    def devices(self) -> set[_devices.Device]:
        """The devices holding this array's data, as ``jax.Array.devices``.

        Returns:
          ``{CpuDevice(id=0)}``.

        >>> import typelattice.numpy as tnp
        >>> tnp.ones(2).devices()
        {CpuDevice(id=0)}
        """
        return {_devices.CPU}

    @property
    def device(self) -> _devices.Device:
        """The device holding this array's data (the CPU)."""
        return _devices.CPU

    @property
    def backend(self) -> str:
        """The library holding this array's data: ``'numpy'``, ``'torch'``,
        ``'cupy'`` or ``'dask'`` (docs/backends.md).

        >>> import typelattice.numpy as tnp
        >>> tnp.ones(2).backend
        'numpy'
        """
        raise NotImplementedError(
            f"{type(self).__name__} has no backend: a traced value is computed "
            "where the transformation's arrays are"
        )

    def to_device(self, device: Any, /, *, stream: Any = None) -> Array:
        """This array on ``device`` (the Array API's ``to_device``): a
        device of its backend (docs/backends.md).

        Args:
          device: ``'cpu'``, ``'cuda:1'``, a ``torch.device``...
          stream: must be None.

        Returns:
          The array on that device.

        >>> import typelattice.numpy as tnp
        >>> tnp.ones(2).to_device('cpu')
        Array([1., 1.], dtype=float32)
        """
        raise NotImplementedError(
            f"{type(self).__name__}.to_device: a traced value is computed where "
            "the transformation's arrays are"
        )

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
        raise _unset(self, "__array_ufunc__")
