"""Array's operators and methods: one table, set on the concrete array and
on the tracers from above.

:class:`~typelattice._basearray.Array` declares the operators and methods
(signatures and documentation); :data:`ARRAY_METHODS` implements those that
the namespace's functions compute, each once, and
:func:`register_array_methods` sets them on
:class:`~typelattice._array.ArrayImpl` and on the tracers
(:class:`~typelattice._tracing.tracer.Tracer`, the base of every tracer)
when ``typelattice.numpy`` loads, as JAX's
``register_jax_array_methods`` does. Nothing below the namespace refers to
it: the arrays and tracers are defined without their methods, and no
module of theirs imports the namespace.

ArrayImpl's elementwise operators are the C extension's versions of their
functions, when it is built (``_elementwise.fast_operator``): ``x + 2``
runs with no Python frame, and anything else reaches the Python operator of
the table, so every answer and error is the Python one.
"""

# Package-internal: the arrays' underscored slots and the namespace modules'
# private helpers are read here by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import numpy as np

from typelattice import _array, _core
from typelattice import numpy as _namespace
from typelattice._array import ArrayImpl, BackendArray
from typelattice._basearray import Array
from typelattice._tracing.tracer import Tracer
from typelattice.numpy import (
    _creation,
    _elementwise,
    _linalg,
    _reductions,
    _shape,
    _ufuncs,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from typelattice.typing import ArrayLike, DTypeLike

__all__ = ["ARRAY_METHODS", "register_array_methods"]

_INT32: Final = np.dtype("int32")

# The operand types Array's binary operators compute with, as jax.Array's:
# arrays (tracers too), NumPy's arrays and scalars, Python's numbers (a bool
# is an int). Lists, tuples, sets and dicts go to the function, whose
# TypeError says how to convert them (JAX raises too; NotImplemented would
# let Python repeat a list by an integer array's __index__). Any other type
# gets NotImplemented: its reflected method runs, or Python raises
# "unsupported operand type(s)".
_OPERANDS: Final = (Array, int, float, complex, np.generic, np.ndarray)
_REFUSED: Final = (list, tuple, set, dict)
# (type(other) in _REFUSED, not isinstance: a subclass of tuple, a
# NamedTuple, may define operators of its own.)


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


# -- methods ---------------------------------------------------------------------


def _transposed(self: Array) -> Array:
    return _shape.transpose(self)


def _matrix_transposed(self: Array) -> Array:
    return _shape.matrix_transpose(self)


def _real_part(self: Array) -> Array:
    return _ufuncs.real(self)


def _imag_part(self: Array) -> Array:
    return _ufuncs.imag(self)


def _index_update(self: Array) -> _IndexUpdateHelper:
    return _IndexUpdateHelper(self)


def _python_round(self: Array, ndigits: int | None = None) -> Array:
    if ndigits is None:  # Python's round(x): an integer result, as JAX
        rounded = np.asarray(_ufuncs.round(self, 0))
        fix = f"Fix: round(x, 0) keeps x's dtype ({self.dtype}), which holds it."
        return _array.from_numpy(_core.checked_cast(rounded, _INT32, "round", fix))
    return _ufuncs.round(self, ndigits)


def _getitem(self: Array, key: Any) -> Array:
    return _shape._getitem(self, key)


def _astype(self: Array, dtype: Any, copy: bool = False) -> Array:
    return _creation.astype(self, dtype)


def _reshape(self: Array, *shape: Any, order: str = "C") -> Array:
    if len(shape) == 1 and isinstance(shape[0], list | tuple):
        shape = tuple(shape[0])  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    return _shape.reshape(self, shape, order=order)


def _transpose(self: Array, *axes: Any) -> Array:
    if len(axes) == 1 and not isinstance(axes[0], int):
        axes = tuple(axes[0]) if axes[0] is not None else ()
    return _shape.transpose(self, axes or None)


def _flatten(self: Array, order: str = "C") -> Array:
    return _shape.ravel(self, order=order)


def _ravel(self: Array, order: str = "C") -> Array:
    return _shape.ravel(self, order=order)


def _squeeze(self: Array, axis: Any = None) -> Array:
    return _shape.squeeze(self, axis)


def _swapaxes(self: Array, axis1: int, axis2: int) -> Array:
    return _shape.swapaxes(self, axis1, axis2)


def _sum(self: Array, axis: Any = None, dtype: Any = None, **kw: Any) -> Array:
    return _reductions.sum(self, axis=axis, dtype=dtype, **kw)


def _prod(self: Array, axis: Any = None, dtype: Any = None, **kw: Any) -> Array:
    return _reductions.prod(self, axis=axis, dtype=dtype, **kw)


def _mean(self: Array, axis: Any = None, dtype: Any = None, **kw: Any) -> Array:
    return _reductions.mean(self, axis=axis, dtype=dtype, **kw)


def _var(self: Array, axis: Any = None, dtype: Any = None, **kw: Any) -> Array:
    return _reductions.var(self, axis=axis, dtype=dtype, **kw)


def _std(self: Array, axis: Any = None, dtype: Any = None, **kw: Any) -> Array:
    return _reductions.std(self, axis=axis, dtype=dtype, **kw)


def _max(self: Array, axis: Any = None, **kw: Any) -> Array:
    return _reductions.max(self, axis=axis, **kw)


def _min(self: Array, axis: Any = None, **kw: Any) -> Array:
    return _reductions.min(self, axis=axis, **kw)


def _argmax(self: Array, axis: Any = None, **kw: Any) -> Array:
    return _reductions.argmax(self, axis=axis, **kw)


def _argmin(self: Array, axis: Any = None, **kw: Any) -> Array:
    return _reductions.argmin(self, axis=axis, **kw)


def _any(self: Array, axis: Any = None, **kw: Any) -> Array:
    return _reductions.any(self, axis=axis, **kw)


def _all(self: Array, axis: Any = None, **kw: Any) -> Array:
    return _reductions.all(self, axis=axis, **kw)


def _cumsum(self: Array, axis: Any = None, dtype: Any = None) -> Array:
    return _reductions.cumsum(self, axis=axis, dtype=dtype)


def _cumprod(self: Array, axis: Any = None, dtype: Any = None) -> Array:
    return _reductions.cumprod(self, axis=axis, dtype=dtype)


def _clip(self: Array, min: Any = None, max: Any = None) -> Array:
    return _ufuncs.clip(self, min=min, max=max)


def _round(self: Array, decimals: int = 0) -> Array:
    return _ufuncs.round(self, decimals)


def _conj(self: Array) -> Array:
    return _ufuncs.conj(self)


def _conjugate(self: Array) -> Array:
    return _ufuncs.conj(self)


def _dot(self: Array, other: ArrayLike) -> Array:
    return _linalg.dot(self, other)


def _take(
    self: Array,
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


def _repeat(self: Array, repeats: Any, axis: int | None = None) -> Array:
    return _shape.repeat(self, repeats, axis=axis)


def _sort(
    self: Array,
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


def _argsort(
    self: Array,
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


def _nonzero(
    self: Array,
    *,
    fill_value: ArrayLike | tuple[ArrayLike, ...] | None = None,
    size: int | None = None,
) -> tuple[Array, ...]:
    return _shape.nonzero(self, size=size, fill_value=fill_value)


def _ptp(
    self: Array,
    axis: int | Sequence[int] | None = None,
    out: None = None,
    keepdims: bool = False,
) -> Array:
    return _reductions.ptp(self, axis=axis, out=out, keepdims=keepdims)


def _searchsorted(
    self: Array,
    v: ArrayLike,
    side: str = "left",
    sorter: ArrayLike | None = None,
    *,
    method: str = "scan",
) -> Array:
    return _shape.searchsorted(self, v, side=side, sorter=sorter, method=method)


def _diagonal(self: Array, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    return _shape.diagonal(self, offset, axis1, axis2)


def _trace(
    self: Array,
    offset: int = 0,
    axis1: int = 0,
    axis2: int = 1,
    dtype: DTypeLike | None = None,
    out: None = None,
) -> Array:
    return _reductions.trace(self, offset, axis1, axis2, dtype=dtype, out=out)


def _compress(
    self: Array,
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


def _view(self: Array, dtype: DTypeLike | None = None, type: None = None) -> Array:  # noqa: A002
    if type is not None:
        raise TypeError("view: the type argument is not supported")
    return _shape._view(self, dtype)


def _copy(self: Array) -> Array:
    return _creation.array(self, copy=True)


def _array_namespace(self: Array, /, *, api_version: str | None = None) -> Any:
    # (loaded: this table is set on the arrays when typelattice.numpy loads)
    return sys.modules["typelattice.numpy"]


def _array_ufunc(
    self: Array, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any
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


class _IndexUpdateHelper:
    """``x.at``: index it to get an :class:`_IndexUpdateRef`."""

    __slots__ = ("array",)

    def __init__(self, array: Array) -> None:
        self.array = array

    def __getitem__(self, index: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


def _index_parts(index: Any) -> tuple[Any, ...]:
    """The entries of an index (one, unless it is a tuple)."""
    return index if index.__class__ is tuple else (index,)


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
        # (Another library's index arrays count too: the updated array would
        # move to their backend.)
        natives = [i for i in _index_parts(self.index) if type(i) is BackendArray]
        _array.check_mixed(f"at[].{name}", (self.array, values, *natives))
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


# -- the table --------------------------------------------------------------------


class _Operator(NamedTuple):
    """A Python operator computed by a namespace function: ``function(self,
    other)``, ``function(other, self)`` when ``reflected``, or
    ``function(self)`` when ``unary``."""

    function: Callable[..., Any]
    reflected: bool = False
    unary: bool = False

    def python(self) -> Callable[..., Any]:
        """The operator as a Python function (an operand of a type it does
        not know gets NotImplemented, see :data:`_OPERANDS`)."""
        fn = self.function
        if self.unary:

            def unary(self: Array) -> Any:
                return fn(self)

            return unary
        if self.reflected:

            def reflected(self: Array, other: Any) -> Any:
                if not isinstance(other, _OPERANDS) and type(other) not in _REFUSED:
                    return NotImplemented
                return fn(other, self)

            return reflected

        def forward(self: Array, other: Any) -> Any:
            if not isinstance(other, _OPERANDS) and type(other) not in _REFUSED:
                # None, a string: for == and !=, Python then says False (as JAX)
                return NotImplemented
            return fn(self, other)

        return forward


def _binary(fn: Callable[..., Any]) -> tuple[_Operator, _Operator]:
    """An operator and its reflected form (``__add__``, ``__radd__``)."""
    return _Operator(fn), _Operator(fn, reflected=True)


ARRAY_METHODS: Final[Mapping[str, Any]] = {
    # properties
    "T": property(_transposed),
    "mT": property(_matrix_transposed),
    "real": property(_real_part),
    "imag": property(_imag_part),
    "at": property(_index_update),
    # operators: NumPy's names, both orders
    **dict(zip(("__add__", "__radd__"), _binary(_ufuncs.add), strict=True)),
    **dict(zip(("__sub__", "__rsub__"), _binary(_ufuncs.subtract), strict=True)),
    **dict(zip(("__mul__", "__rmul__"), _binary(_ufuncs.multiply), strict=True)),
    **dict(
        zip(("__truediv__", "__rtruediv__"), _binary(_ufuncs.true_divide), strict=True)
    ),
    **dict(
        zip(
            ("__floordiv__", "__rfloordiv__"),
            _binary(_ufuncs.floor_divide),
            strict=True,
        )
    ),
    **dict(zip(("__mod__", "__rmod__"), _binary(_ufuncs.remainder), strict=True)),
    **dict(zip(("__divmod__", "__rdivmod__"), _binary(_ufuncs.divmod), strict=True)),
    **dict(zip(("__pow__", "__rpow__"), _binary(_ufuncs.power), strict=True)),
    **dict(zip(("__matmul__", "__rmatmul__"), _binary(_linalg.matmul), strict=True)),
    **dict(zip(("__and__", "__rand__"), _binary(_ufuncs.bitwise_and), strict=True)),
    **dict(zip(("__or__", "__ror__"), _binary(_ufuncs.bitwise_or), strict=True)),
    **dict(zip(("__xor__", "__rxor__"), _binary(_ufuncs.bitwise_xor), strict=True)),
    **dict(
        zip(("__lshift__", "__rlshift__"), _binary(_ufuncs.left_shift), strict=True)
    ),
    **dict(
        zip(("__rshift__", "__rrshift__"), _binary(_ufuncs.right_shift), strict=True)
    ),
    "__lt__": _Operator(_ufuncs.less),
    "__le__": _Operator(_ufuncs.less_equal),
    "__gt__": _Operator(_ufuncs.greater),
    "__ge__": _Operator(_ufuncs.greater_equal),
    "__eq__": _Operator(_ufuncs.equal),
    "__ne__": _Operator(_ufuncs.not_equal),
    "__neg__": _Operator(_ufuncs.negative, unary=True),
    "__pos__": _Operator(_ufuncs.positive, unary=True),
    "__abs__": _Operator(_ufuncs.abs, unary=True),
    "__invert__": _Operator(_ufuncs.invert, unary=True),
    "__round__": _python_round,
    "__getitem__": _getitem,
    "__array_ufunc__": _array_ufunc,
    # methods
    "astype": _astype,
    "reshape": _reshape,
    "transpose": _transpose,
    "flatten": _flatten,
    "ravel": _ravel,
    "squeeze": _squeeze,
    "swapaxes": _swapaxes,
    "sum": _sum,
    "prod": _prod,
    "mean": _mean,
    "var": _var,
    "std": _std,
    "max": _max,
    "min": _min,
    "argmax": _argmax,
    "argmin": _argmin,
    "any": _any,
    "all": _all,
    "cumsum": _cumsum,
    "cumprod": _cumprod,
    "clip": _clip,
    "round": _round,
    "conj": _conj,
    "conjugate": _conjugate,
    "dot": _dot,
    "take": _take,
    "repeat": _repeat,
    "sort": _sort,
    "argsort": _argsort,
    "nonzero": _nonzero,
    "ptp": _ptp,
    "searchsorted": _searchsorted,
    "diagonal": _diagonal,
    "trace": _trace,
    "compress": _compress,
    "view": _view,
    "__array_namespace__": _array_namespace,
    "copy": _copy,
}
"""Array's operators and methods that the namespace computes, by name: a
function, a property, or an :class:`_Operator`. Each is declared (with its
signature and documentation) on :class:`~typelattice._basearray.Array`."""

# The classes the table is set on: the concrete arrays (NumPy's, and so its
# placeholders; other libraries') and the base of every tracer.
ARRAY_CLASSES: Final = (ArrayImpl, BackendArray, Tracer)


def _documented(name: str, entry: Any) -> Any:
    """The table's ``entry`` as set on a class: a copy of its function with
    the name and documentation of Array's declaration (the function itself
    keeps none, so that its examples run once, as the declaration's)."""
    declared = vars(Array)[name]
    if isinstance(entry, property):
        return property(_documented(name, entry.fget), doc=declared.__doc__)
    fn: Any = entry
    copy = type(fn)(fn.__code__, fn.__globals__, name, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__annotations__ = fn.__annotations__
    copy.__doc__ = declared.__doc__
    copy.__qualname__ = f"Array.{name}"
    copy.__module__ = "typelattice.numpy"
    return copy


def register_array_methods() -> None:
    """Set :data:`ARRAY_METHODS` on :data:`ARRAY_CLASSES` (``typelattice.numpy``
    does, once, as it loads). ArrayImpl's elementwise operators are the C
    extension's, when built; their fallback is the table's Python operator."""
    for name, entry in ARRAY_METHODS.items():
        impl = _documented(
            name, entry.python() if isinstance(entry, _Operator) else entry
        )
        for cls in ARRAY_CLASSES:
            setattr(cls, name, impl)
        if isinstance(entry, _Operator):
            fast = _elementwise.fast_operator(entry.function, impl, entry.reflected)
            if fast is not None:
                setattr(ArrayImpl, name, fast)
