"""Shape functions, joining and splitting, indexing and functional updates,
sorting. Functions of one array keep its dtype and weak flag; functions that
join several arrays promote them, as in jax.numpy."""

# Package-internal: reads the arrays' underscored slots by design, and defines
# the private helpers of the arrays' indexing (_getitem, _scatter).
# pyright: reportPrivateUsage=false

from __future__ import annotations

import functools
import inspect
import math
import operator
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from typelattice import _array, _config, _core, _dtypes
from typelattice import _lax as lax
from typelattice._array import ArrayImpl, from_numpy, wrap
from typelattice._basearray import Array
from typelattice._lax._indexing import take_along_axis
from typelattice._tracing import abstract, tree
from typelattice._tracing.ad import stop_gradient
from typelattice._tracing.trace import lowering, traced
from typelattice._tracing.tracer import (
    ConcretizationTypeError,
    Placeholder,
    TransformTracer,
)
from typelattice.numpy import _lower
from typelattice.numpy._creation import _requested, convert_to
from typelattice.numpy._elementwise import promote, promotion_op
from typelattice.numpy._lower import constant as _lower_constant
from typelattice.numpy._lower import moves_elements

if TYPE_CHECKING:
    from typelattice.typing import ArrayLike, DTypeLike

_ANY: Final = "biufc"


def _one(a: Any, name: str) -> tuple[np.ndarray[Any, Any], _core.Aval]:
    """The single array argument of a shape function: value and key."""
    if type(a) is ArrayImpl:
        return a._value, a._key
    v, key = _array.operand(a, name, 0)
    if isinstance(key, _core.Aval):
        # Shape functions return views: not of the caller's mutable array.
        return _core.unshared(np.asarray(v), a), key
    x64 = _config.current().enable_x64
    dt = _core.key_dtype(key, x64)
    return _core.python_scalar_to(v, dt, name), _core.aval(dt, _core.key_weak(key))


def _same(
    name: str, fn: Callable[..., Any], a: Any, *args: Any, **kwargs: Any
) -> Array:
    v, key = _one(a, name)
    try:
        out = fn(v, *args, **kwargs)
    except (TypeError, ValueError) as err:
        _core.reraise_named(name, err)
    return wrap(np.asarray(out), key)


@traced(abstract.full_size)
def reshape(
    a: ArrayLike, shape: Any = None, order: str = "C", *, newshape: Any = None
) -> Array:
    """``a`` with a new shape (one axis may be -1); dtype and weak flag kept.

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      shape: an int or a sequence of ints; one may be -1 (inferred).
      order: ``'C'`` (row-major) or ``'F'`` (column-major) element order.
      newshape: the former name of ``shape`` (give one of the two).

    Returns:
      An Array with ``a``'s dtype and weak flag.

    Raises:
      ValueError: a shape with a different number of elements.

    >>> import typelattice.numpy as tnp
    >>> tnp.reshape(tnp.arange(6), (2, -1)).shape
    (2, 3)
    """
    if shape is None:
        shape = newshape
    if shape is None:
        raise TypeError("reshape: missing the shape argument, e.g. reshape(a, (2, -1))")
    if isinstance(shape, int | np.integer):
        shape = (int(shape),)  # pyright: ignore[reportUnknownArgumentType]
    return _same("reshape", np.reshape, a, shape, order=order)


@traced(abstract.ravel)
def ravel(a: ArrayLike, order: str = "C") -> Array:
    """``a`` flattened to one axis.

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      order: ``'C'`` (row-major) or ``'F'`` (column-major) element order.

    Returns:
      An Array with ``a``'s dtype and weak flag.

    >>> import typelattice.numpy as tnp
    >>> tnp.ravel(tnp.arange(6).reshape(2, 3))
    Array([0, 1, 2, 3, 4, 5], dtype=int32)
    """
    return _same("ravel", np.ravel, a, order=order)


@traced(abstract.full_size)
def transpose(a: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    """``a`` with its axes permuted (reversed by default).

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      axes: a permutation of the axes, or None to reverse them.

    Returns:
      An Array with ``a``'s dtype and weak flag.

    >>> import typelattice.numpy as tnp
    >>> tnp.transpose(tnp.zeros((2, 3, 4), 'int8'), (1, 0, 2)).shape
    (3, 2, 4)
    """
    return _same("transpose", np.transpose, a, axes)


@traced(abstract.full_size)
def permute_dims(a: ArrayLike, /, axes: Sequence[int]) -> Array:
    """Array API name of :func:`transpose` (the axes are required).

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      axes: a permutation of the axes.

    Returns:
      An Array with ``a``'s dtype and weak flag.

    >>> import typelattice.numpy as tnp
    >>> tnp.permute_dims(tnp.zeros((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    return transpose(a, axes)


@traced(abstract.full_size)
def matrix_transpose(x: ArrayLike, /) -> Array:
    """Swap the last two axes (transpose a stack of matrices).

    Args:
      x: an array of at least two dimensions.

    Returns:
      An Array with ``x``'s dtype and weak flag.

    Raises:
      ValueError: fewer than two dimensions.

    >>> import typelattice.numpy as tnp
    >>> tnp.matrix_transpose(tnp.zeros((5, 2, 3))).shape
    (5, 3, 2)
    """
    v, key = _one(x, "matrix_transpose")
    if v.ndim < 2:
        raise ValueError(
            f"matrix_transpose: needs at least 2 dimensions, got shape {v.shape}"
        )
    return wrap(np.swapaxes(v, -1, -2), key)


@traced(abstract.full_size)
def moveaxis(a: ArrayLike, source: Any, destination: Any) -> Array:
    """Move axes to new positions; the others keep their order.

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      source: an axis or a sequence of axes to move.
      destination: their new positions, as many.

    Returns:
      An Array with ``a``'s dtype and weak flag.

    >>> import typelattice.numpy as tnp
    >>> tnp.moveaxis(tnp.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    return _same("moveaxis", np.moveaxis, a, source, destination)


@traced(abstract.full_size)
def swapaxes(a: ArrayLike, axis1: int, axis2: int) -> Array:
    """Swap two axes.

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      axis1: an axis.
      axis2: another axis.

    Returns:
      An Array with ``a``'s dtype and weak flag.

    >>> import typelattice.numpy as tnp
    >>> tnp.swapaxes(tnp.zeros((2, 3, 4)), 0, 2).shape
    (4, 3, 2)
    """
    return _same("swapaxes", np.swapaxes, a, axis1, axis2)


@traced(abstract.full_size)
def expand_dims(a: ArrayLike, axis: int | Sequence[int] | None) -> Array:
    """Insert axes of length 1.

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      axis: the positions of the new axes in the result.

    Returns:
      An Array with ``a``'s dtype and weak flag.

    >>> import typelattice.numpy as tnp
    >>> tnp.expand_dims(tnp.asarray([1, 2], dtype='int8'), 0)
    Array([[1, 2]], dtype=int8)
    """
    return _same("expand_dims", np.expand_dims, a, axis)


@traced(abstract.full_size)
def squeeze(a: ArrayLike, axis: int | Sequence[int] | None = None) -> Array:
    """Remove axes of length 1.

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      axis: the axes to remove (each of length 1), or None for all of length 1.

    Returns:
      An Array with ``a``'s dtype and weak flag.

    Raises:
      ValueError: an axis whose length is not 1.

    >>> import typelattice.numpy as tnp
    >>> tnp.squeeze(tnp.zeros((1, 3, 1))).shape
    (3,)
    """
    return _same("squeeze", np.squeeze, a, axis)


@traced(abstract.full_size)
def broadcast_to(array: ArrayLike, shape: Any) -> Array:
    """``array`` broadcast to ``shape``; dtype and weak flag kept.

    Args:
      array: an Array, a NumPy array or a scalar (not a list).
      shape: the shape to broadcast to.

    Returns:
      An Array with ``array``'s dtype and weak flag.

    Raises:
      ValueError: shapes that do not broadcast.

    >>> import typelattice.numpy as tnp
    >>> tnp.broadcast_to(tnp.asarray(2), (3,))
    Array([2, 2, 2], dtype=int32, weak_type=True)
    """
    v, key = _one(array, "broadcast_to")
    shape = _core.shape_of(shape, "broadcast_to")
    try:
        out = np.broadcast_to(v, shape)
    except ValueError:
        _core.broadcast_error("broadcast_to", [v.shape, shape])
    return wrap(out, key)


@traced(abstract.full_size)
def broadcast_arrays(*args: ArrayLike) -> list[Array]:
    """The arguments broadcast to one shape, each keeping its dtype.

    Args:
      *args: Arrays, NumPy arrays or scalars.

    Returns:
      A list of Arrays, each with its argument's dtype and weak flag.

    Raises:
      ValueError: shapes that do not broadcast.

    >>> import typelattice.numpy as tnp
    >>> i8 = tnp.asarray([1, 2], dtype='int8')
    >>> x, y = tnp.broadcast_arrays(i8, tnp.zeros((2, 1)))
    >>> x.shape, x.dtype, y.shape, y.dtype
    ((2, 2), dtype('int8'), (2, 2), dtype('float32'))
    """
    parts = [_one(a, "broadcast_arrays") for a in args]
    shapes = [v.shape for v, _ in parts]
    state = _config.current()
    _core.check_rank("broadcast_arrays", shapes, state.rank_promotion)
    try:
        # broadcast_to, not np.broadcast_arrays: its views are read-only
        # (broadcast_arrays' warn on any use of their writeable flag).
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        _core.broadcast_error("broadcast_arrays", shapes)
    outs = [np.broadcast_to(v, shape) for v, _ in parts]
    return [wrap(o, k) for o, (_, k) in zip(outs, parts, strict=True)]


@traced(abstract.full_size)
def broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    """The shape the given shapes broadcast to.

    Args:
      *shapes: shapes (tuples of ints, or ints).

    Returns:
      The broadcast shape, a tuple.

    Raises:
      ValueError: shapes that do not broadcast.

    >>> import typelattice.numpy as tnp
    >>> tnp.broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    dims = [_core.shape_of(s, "broadcast_shapes") for s in shapes]
    try:
        return tuple(np.broadcast_shapes(*dims))
    except ValueError:
        _core.broadcast_error("broadcast_shapes", dims)


@traced(abstract.full_size)
def atleast_1d(*arys: ArrayLike) -> Any:
    """Each argument with at least one axis.

    Args:
      *arys: Arrays, NumPy arrays or scalars.

    Returns:
      One Array for one argument, else a list; dtypes and weak flags kept.

    >>> import typelattice.numpy as tnp
    >>> tnp.atleast_1d(tnp.asarray(1.5))
    Array([1.5], dtype=float32, weak_type=True)
    """
    outs = [_same("atleast_1d", np.atleast_1d, a) for a in arys]
    return outs[0] if len(outs) == 1 else outs


@traced(abstract.full_size)
def atleast_2d(*arys: ArrayLike) -> Any:
    """Each argument with at least two axes (a 1-d array becomes a row).

    Args:
      *arys: Arrays, NumPy arrays or scalars.

    Returns:
      One Array for one argument, else a list; dtypes and weak flags kept.

    >>> import typelattice.numpy as tnp
    >>> tnp.atleast_2d(tnp.asarray([1, 2], dtype='int8'))
    Array([[1, 2]], dtype=int8)
    """
    outs = [_same("atleast_2d", np.atleast_2d, a) for a in arys]
    return outs[0] if len(outs) == 1 else outs


@traced(abstract.full_size)
def atleast_3d(*arys: ArrayLike) -> Any:
    """Each argument with at least three axes.

    Args:
      *arys: Arrays, NumPy arrays or scalars.

    Returns:
      One Array for one argument, else a list; dtypes and weak flags kept.

    >>> import typelattice.numpy as tnp
    >>> tnp.atleast_3d(tnp.zeros(2)).shape
    (1, 2, 1)
    """
    outs = [_same("atleast_3d", np.atleast_3d, a) for a in arys]
    return outs[0] if len(outs) == 1 else outs


@traced(abstract.full_size)
def flip(m: ArrayLike, axis: int | Sequence[int] | None = None) -> Array:
    """Reverse the order of elements along axes.

    Args:
      m: an Array, a NumPy array or a scalar (not a list).
      axis: an axis or a sequence of axes; None for every axis.

    Returns:
      An Array with ``m``'s dtype and weak flag.

    >>> import typelattice.numpy as tnp
    >>> tnp.flip(tnp.asarray([1, 2, 3], dtype='int8'))
    Array([3, 2, 1], dtype=int8)
    """
    return _same("flip", np.flip, m, axis)


@traced(abstract.copying)
def roll(a: ArrayLike, shift: Any, axis: int | Sequence[int] | None = None) -> Array:
    """Shift elements cyclically along axes.

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      shift: how far, an int or one per axis.
      axis: an axis or a sequence of axes; None rolls the flattened array.

    Returns:
      An Array with ``a``'s dtype and weak flag.

    >>> import typelattice.numpy as tnp
    >>> tnp.roll(tnp.asarray([1, 2, 3], dtype='int8'), 1)
    Array([3, 1, 2], dtype=int8)
    """
    return _same("roll", np.roll, a, shift, axis)


@traced(abstract.tile)
def tile(A: ArrayLike, reps: int | Sequence[int]) -> Array:
    """Repeat the whole array ``reps`` times.

    Args:
      A: an Array, a NumPy array or a scalar (not a list).
      reps: the repetitions, an int or one per axis.

    Returns:
      An Array with ``A``'s dtype and weak flag.

    >>> import typelattice.numpy as tnp
    >>> tnp.tile(tnp.asarray([1, 2], dtype='int8'), 2)
    Array([1, 2, 1, 2], dtype=int8)
    """
    return _same("tile", np.tile, A, reps)


@traced(abstract.repeat)
def repeat(
    a: ArrayLike,
    repeats: Any,
    axis: int | None = None,
    *,
    total_repeat_length: int | None = None,
) -> Array:
    """Repeat each element ``repeats`` times.

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      repeats: an int, or one count per element along ``axis``.
      axis: the axis (default: the flattened array).
      total_repeat_length: the result's length along the axis, checked (JAX
        needs it under jit).

    Returns:
      An Array with ``a``'s dtype and weak flag.

    Raises:
      ValueError: a ``total_repeat_length`` that differs from the result's.

    >>> import typelattice.numpy as tnp
    >>> tnp.repeat(tnp.asarray([1, 2], dtype='int8'), 2)
    Array([1, 1, 2, 2], dtype=int8)
    """
    if isinstance(repeats, Array):
        repeats = np.asarray(repeats)
    out = _same("repeat", np.repeat, a, repeats, axis)
    if total_repeat_length is not None and out.shape[axis or 0] != total_repeat_length:
        raise ValueError(
            f"repeat: the result has length {out.shape[axis or 0]}, not "
            f"total_repeat_length={total_repeat_length}"
        )
    return out


# -- joining ----------------------------------------------------------------


def _joined(
    name: str,
    arrays: Any,
    fn: Callable[[list[np.ndarray[Any, Any]]], Any],
    min_ndim: int = 0,
) -> Array:
    # Narrowed by isinstance from Any, the arrays' NumPy types are unknown.
    if isinstance(arrays, Array | np.ndarray) and np.ndim(arrays):  # pyright: ignore[reportUnknownArgumentType]
        # An array joins its rows, as in NumPy and JAX.
        arrays = list(arrays)  # pyright: ignore[reportUnknownArgumentType]
    if not isinstance(arrays, Sequence):
        raise TypeError(
            f"{name}: expects a sequence of arrays, got {type(arrays).__name__}"  # pyright: ignore[reportUnknownArgumentType]
        )
    elements: Sequence[Any] = arrays  # pyright: ignore[reportUnknownVariableType]
    if not elements:
        raise ValueError(f"{name}: need at least one array")
    for i, a in enumerate(elements):
        if isinstance(a, list | tuple):
            raise TypeError(
                f"{name}: element {i} is a {type(a).__name__}; convert it with "  # pyright: ignore[reportUnknownArgumentType]
                "typelattice.numpy.asarray first"
            )
    if min_ndim and not np.ndim(elements[0]):
        # Checked before promotion, as JAX does.
        raise ValueError(
            f"{name}: zero-dimensional arrays cannot be concatenated; use "
            "stack, or atleast_1d first"
        )
    conv, plan = promote(promotion_op(name), tuple(elements))
    values = [np.asarray(v, dtype=plan.cd) for v in conv]
    if min_ndim and len({v.ndim for v in values}) > 1:
        raise TypeError(
            f"{name}: cannot join arrays with different numbers of dimensions "
            f"(shapes {', '.join(str(v.shape) for v in values)})"
        )
    try:
        out = fn(values)
    except (TypeError, ValueError) as err:
        _core.reraise_named(name, err)
    return wrap(np.asarray(out), plan.out_key)


@traced(abstract.concatenate)
def concatenate(
    arrays: Sequence[ArrayLike], axis: int | None = 0, dtype: DTypeLike | None = None
) -> Array:
    """Join arrays along an existing axis; their dtypes are promoted.

    Args:
      arrays: a sequence of Arrays, NumPy arrays or scalars; the lattice
        joins their dtypes (weak ones defer, as in operations).
      axis: the axis, or None to flatten them first.
      dtype: the result's dtype instead of the promoted one.

    Returns:
      An Array, weak only when every input is weak.

    Raises:
      TypePromotionError: dtypes without a join in the current mode.

    >>> import typelattice.numpy as tnp
    >>> i8 = tnp.asarray([1], dtype='int8')
    >>> tnp.concatenate([i8, tnp.asarray([2], dtype='uint8')])
    Array([1, 2], dtype=int16)
    """
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    out = _joined("concatenate", arrays, lambda vs: np.concatenate(vs, axis=axis), 1)
    return out if dtype is None else _astype(out, dtype, "concatenate")


@traced(abstract.concatenate)
def concat(arrays: Sequence[ArrayLike], /, *, axis: int | None = 0) -> Array:
    """Array API name of :func:`concatenate`.

    Args:
      arrays: a sequence of Arrays, NumPy arrays or scalars; their dtypes are promoted.
      axis: the axis, or None to flatten them first.

    Returns:
      An Array of the promoted dtype.

    >>> import typelattice.numpy as tnp
    >>> i8, f16 = tnp.asarray([1], dtype='int8'), tnp.asarray([2.5], dtype='float16')
    >>> tnp.concat([i8, f16])
    Array([1. , 2.5], dtype=float16)
    """
    return concatenate(arrays, axis=axis)


@traced(abstract.stack)
def stack(
    arrays: Sequence[ArrayLike],
    axis: int = 0,
    out: None = None,
    dtype: DTypeLike | None = None,
) -> Array:
    """Join arrays along a new axis; their dtypes are promoted.

    Args:
      arrays: a sequence of Arrays, NumPy arrays or scalars of one shape.
      axis: where the new axis goes.
      out: not supported (arrays are immutable); must be None.
      dtype: the result's dtype instead of the promoted one.

    Returns:
      An Array of the promoted dtype.

    Raises:
      TypePromotionError: dtypes without a join in the current mode.

    >>> import typelattice.numpy as tnp
    >>> i8, u8 = tnp.asarray([1, 2], dtype='int8'), tnp.asarray([3, 4], dtype='uint8')
    >>> tnp.stack([i8, u8])
    Array([[1, 2],
           [3, 4]], dtype=int16)
    """
    res = _joined("stack", arrays, lambda vs: np.stack(vs, axis=axis))
    return res if dtype is None else _astype(res, dtype, "stack")


@traced(abstract.hstack)
def hstack(tup: Sequence[ArrayLike], dtype: DTypeLike | None = None) -> Array:
    """Join horizontally (along axis 1, or 0 for 1-d arrays); dtypes are promoted.

    Args:
      tup: a sequence of Arrays, NumPy arrays or scalars.
      dtype: the result's dtype instead of the promoted one.

    Returns:
      An Array of the promoted dtype.

    >>> import typelattice.numpy as tnp
    >>> tnp.hstack([tnp.asarray([1], dtype='int8'), tnp.asarray([2], dtype='int16')])
    Array([1, 2], dtype=int16)
    """
    res = _joined("hstack", tup, np.hstack)
    return res if dtype is None else _astype(res, dtype, "hstack")


@traced(abstract.vstack)
def vstack(tup: Sequence[ArrayLike], dtype: DTypeLike | None = None) -> Array:
    """Join vertically (along axis 0, 1-d arrays as rows); dtypes are promoted.

    Args:
      tup: a sequence of Arrays, NumPy arrays or scalars.
      dtype: the result's dtype instead of the promoted one.

    Returns:
      An Array of the promoted dtype.

    >>> import typelattice.numpy as tnp
    >>> tnp.vstack([tnp.asarray([1, 2], dtype='int8'), tnp.asarray([3, 4])])
    Array([[1, 2],
           [3, 4]], dtype=int32)
    """
    res = _joined("vstack", tup, np.vstack)
    return res if dtype is None else _astype(res, dtype, "vstack")


def _astype(x: Array, dtype: Any, where: str) -> Array:
    return convert_to(x, dtype, where)


@traced(abstract.full_size)
def split(ary: ArrayLike, indices_or_sections: Any, axis: int = 0) -> list[Array]:
    """Split into sub-arrays along an axis; each keeps dtype and weak flag.

    Args:
      ary: an Array or a NumPy array.
      indices_or_sections: a number of equal parts, or the indices where parts start.
      axis: the axis to split.

    Returns:
      A list of Arrays.

    Raises:
      ValueError: a number of parts that does not divide the axis.

    >>> import typelattice.numpy as tnp
    >>> tnp.split(tnp.arange(4), 2)
    [Array([0, 1], dtype=int32), Array([2, 3], dtype=int32)]
    """
    v, key = _one(ary, "split")
    if isinstance(indices_or_sections, Array):
        indices_or_sections = np.asarray(indices_or_sections)
    try:
        parts = np.split(v, indices_or_sections, axis=axis)
    except (TypeError, ValueError, IndexError, ZeroDivisionError) as err:
        _core.reraise_named("split", err)
    return [wrap(p, key) for p in parts]


# -- indexing ---------------------------------------------------------------


def _index(key: Any) -> Any:
    if isinstance(key, tuple):
        return tuple(_index(k) for k in key)  # pyright: ignore[reportUnknownVariableType]
    if isinstance(key, Array):
        if not _dtypes.isdtype(key.dtype, ("integral", "bool")):
            raise IndexError(
                "arrays used as indices must be of integer or bool type, "
                f"got {key.dtype}"
            )
        if isinstance(key, Placeholder):
            if key.dtype == bool:
                raise ConcretizationTypeError(
                    f"indexing with a traced boolean mask {key!r}: the result's "
                    "shape would depend on its values. Use "
                    "typelattice.numpy.where(mask, x, fill) to keep the shape, "
                    "or nonzero(mask, size=n) for a fixed number of indices."
                )
            return key._value
        return np.asarray(key)
    return key


@traced(abstract.getitem)
def _getitem(a: Any, key: Any) -> Array:  # pyright: ignore[reportUnusedFunction]
    v, k = _one(a, "getitem")
    return wrap(np.asarray(v[_index(key)]), k)


_GATHER_MODES: Final = ("promise_in_bounds", "clip", "fill", "drop")


def _default_fill(dt: np.dtype[Any], where: str) -> Any:
    """What JAX puts at out-of-bounds positions: NaN for inexact types, the
    smallest signed, the largest unsigned integer, True for bool."""
    kind = _dtypes.kind_of(dt)
    if kind == "b":
        return np.asarray(True)
    if kind in "iu":
        info = _dtypes.iinfo(dt)
        return np.asarray(int(info.min) if kind == "i" else int(info.max), dt)
    value = _core.ignore_fp_errors(np.asarray(np.nan).astype, dt)
    if kind != "c" and not np.isnan(value.astype(np.float32)):
        raise ValueError(
            f"{where}: {dt} has no NaN to mark out-of-bounds positions with; "
            "pass fill_value=... explicitly"
        )
    return value


def _fill_for(fill_value: Any, dt: np.dtype[Any], where: str) -> Any:
    if fill_value is None:
        return _default_fill(dt, where)
    if np.ndim(fill_value):
        raise ValueError(f"{where}: fill_value must be a scalar")
    return np.asarray(_fitting(fill_value, dt, where, "fill with"))


def _part(p: Any) -> Any:
    """One part of an index, a list made an array (as NumPy reads it)."""
    if isinstance(p, list):
        items: list[Any] = p  # pyright: ignore[reportUnknownVariableType]
        return np.asarray(items)
    return p


def _is_mask(a: Any) -> bool:
    dtype: Any = getattr(a, "dtype", None)
    return isinstance(a, np.ndarray) and dtype == np.dtype(bool)


def _resolve(
    shape: tuple[int, ...],
    index: Any,
    mode: str | None,
    wrap_negative: bool,
    where: str,
) -> tuple[Any, list[int]]:
    """``index`` with its integer parts checked or adjusted for ``mode``.

    Returns the index for NumPy and the axes that need one extra slot at
    their end: with ``'fill'``/``'drop'``, out-of-bounds integers point
    there (filled for a get, dropped for an update).
    """
    if mode is not None and mode not in _GATHER_MODES:
        raise ValueError(
            f"{where}: mode={mode!r} is not one of "
            f"{', '.join(map(repr, _GATHER_MODES))}"
        )
    parts: list[Any] = (
        list(_index(index)) if isinstance(index, tuple) else [_index(index)]  # pyright: ignore[reportUnknownArgumentType]
    )
    consumed = 0
    for p in parts:
        if p is None or p is Ellipsis or isinstance(p, bool):
            continue
        a = _part(p)
        if _is_mask(a):
            consumed += np.ndim(a)
        else:
            consumed += 1
    out: list[Any] = []
    pad: list[int] = []
    axis = 0
    for p in parts:
        if p is Ellipsis:
            out.append(p)
            axis += len(shape) - consumed
            continue
        if p is None or isinstance(p, bool):
            out.append(p)
            continue
        a = _part(p)
        if isinstance(a, slice) or _is_mask(a):
            out.append(a)
            axis += 1 if isinstance(a, slice) else np.ndim(a)
            continue
        if axis >= len(shape):
            raise IndexError(
                f"{where}: too many indices for an array of dimension {len(shape)}"
            )
        n = shape[axis]
        ints: np.ndarray[Any, Any] = np.asarray(a)
        if ints.dtype.kind not in "iu":
            raise IndexError(
                f"{where}: indices must be integers, slices, None, ... or bool "
                f"arrays, got {ints.dtype}"
            )
        ints = ints.astype(np.int64)
        if wrap_negative:
            ints = np.where(ints < 0, ints + n, ints)
        bad = (ints < 0) | (ints >= n)
        if mode in (None, "promise_in_bounds"):
            if bad.any():
                value = int(np.asarray(a).reshape(-1)[np.flatnonzero(bad)[0]])
                raise IndexError(
                    f"{where}: index {value} is out of bounds for axis {axis} "
                    f"with size {n}; pass mode='clip' to clamp indices, or "
                    "mode='fill' (mode='drop') to fill (skip) those positions"
                )
        elif mode == "clip":
            if n == 0:
                raise IndexError(
                    f"{where}: cannot clip indices to an empty axis {axis}"
                )
            ints = np.clip(ints, 0, n - 1)
        else:
            ints = np.where(bad, n, ints)
            pad.append(axis)
        out.append(ints if ints.ndim else int(ints))
        axis += 1
    return tuple(out), pad


def _padded(v: np.ndarray[Any, Any], pad: list[int], fill: Any) -> np.ndarray[Any, Any]:
    """``v`` with one more slot, holding ``fill``, at the end of each of ``pad``."""
    for axis in pad:
        slab = list(v.shape)
        slab[axis] = 1
        v = np.concatenate([v, np.broadcast_to(np.asarray(fill, v.dtype), slab)], axis)
    return v


@traced(abstract.full_size)
def _gather(  # pyright: ignore[reportUnusedFunction]
    a: Any,
    index: Any,
    mode: str | None,
    fill_value: Any,
    wrap_negative: bool,
) -> Array:
    """``x.at[index].get(mode=..., fill_value=...)``."""
    where = "x.at[...].get"
    v, k = _one(a, where)
    idx, pad = _resolve(v.shape, index, mode, wrap_negative, where)
    if pad:
        v = _padded(v, pad, _fill_for(fill_value, k[0], where))
    return wrap(np.array(v[idx]), k)


@traced(abstract.take)
def take(
    a: ArrayLike,
    indices: ArrayLike,
    axis: int | None = None,
    out: None = None,
    mode: str | None = None,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    fill_value: ArrayLike | None = None,
) -> Array:
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened
    array by default), as jax.numpy's ``take``.

    ``mode`` says what an out-of-bounds index gives: ``'fill'``
    ``fill_value``, by default NaN for inexact types, the smallest signed
    or largest unsigned integer, True for bool (negative indices count from
    the end); ``'clip'`` the nearest element; ``'wrap'`` the element at the
    index modulo the length; ``'raise'`` an IndexError. The default
    (``None``) is ``'raise'``: jax.numpy's default is ``'fill'``, which
    would turn a wrong index into a NaN or a sentinel value without a word,
    so here that must be asked for (docs/semantics.md, "Differences from
    JAX"). ``unique_indices`` and ``indices_are_sorted`` are hints that do
    not change the result.

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      indices: an integer array or scalar.
      axis: the axis to take along, or None for the flattened array.
      out: not supported (arrays are immutable); must be None.
      mode: ``'fill'``, ``'clip'``, ``'wrap'`` or ``'raise'`` (default).
      unique_indices: a hint; ignored.
      indices_are_sorted: a hint; ignored.
      fill_value: the value for out-of-bounds indices with ``'fill'``; it
        must fit ``a``'s dtype unchanged.

    Returns:
      An Array with ``a``'s dtype and weak flag.

    Raises:
      IndexError: an out-of-bounds index without a ``mode`` saying what it
        gives.

    >>> import typelattice.numpy as tnp
    >>> x = tnp.asarray([1.0, 2.0, 3.0])
    >>> tnp.take(x, tnp.asarray([0, -1, 3]), mode='fill')
    Array([ 1.,  3., nan], dtype=float32)
    >>> tnp.take(x, tnp.asarray([0, 3]), mode='clip')
    Array([1., 3.], dtype=float32)
    """
    if out is not None:
        raise TypeError(
            "take: the out argument is not supported (arrays are immutable)"
        )
    v, key = _one(a, "take")
    if isinstance(indices, list | tuple):
        raise TypeError("take: indices must be an array, not a list; use asarray")
    iv, _ = _array.operand(indices, "take", 1)
    idx = np.asarray(iv)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"take: indices must be integers, got {idx.dtype}")
    if axis is None:
        v = v.reshape(-1)
        ax = 0
    else:
        ax = _core.index_of(axis, "take: axis")
        if not -v.ndim <= ax < v.ndim:
            raise ValueError(
                f"take: axis {ax} is out of bounds for an array of dimension {v.ndim}"
            )
        ax %= v.ndim
    n = v.shape[ax]
    idx = idx.astype(np.int64)
    if mode is None or mode == "raise":
        bad = (idx < -n) | (idx >= n)
        if bad.any():
            raise IndexError(
                f"take: index {int(idx[bad].flat[0])} is out of bounds for axis "
                f"{ax} with size {n}; pass mode='fill' (with fill_value=), "
                "'clip' or 'wrap' to say what an out-of-bounds index gives"
            )
        return wrap(np.take(v, idx, axis=ax), key)
    if mode in ("clip", "wrap"):
        if n == 0:
            raise IndexError(f"take: cannot {mode} indices to an empty axis {ax}")
        safe = np.clip(idx, 0, n - 1) if mode == "clip" else idx % n
        return wrap(np.take(v, safe, axis=ax), key)
    if mode != "fill":
        raise ValueError(
            f"take: mode={mode!r} is not one of 'fill', 'clip', 'wrap' "
            "(or 'raise', to raise IndexError for an out-of-bounds index)"
        )
    fill = _fill_for(fill_value, key[0], "take")
    idx = np.where(idx < 0, idx + n, idx)
    bad = (idx < 0) | (idx >= n)
    padded = _padded(v, [ax], fill)
    return wrap(np.take(padded, np.where(bad, n, idx), axis=ax), key)


@traced(abstract.scatter(_getitem))
def _scatter(  # pyright: ignore[reportUnusedFunction]
    x: Any,
    index: Any,
    values: Any,
    ufunc: np.ufunc | None,
    name: str,
    mode: str | None = None,
    wrap_negative: bool = True,
    label: str | None = None,
) -> Array:
    """``x.at[index].<name>(values)``: a copy of ``x`` updated at ``index``.

    The values must fit ``x``'s dtype without changing (their promotion with
    ``x`` is ``x``'s dtype); otherwise a TypeError names the explicit cast.
    Out-of-bounds indices raise IndexError unless ``mode`` is ``'clip'``
    (clamped) or ``'drop'``/``'fill'`` (those updates are skipped).
    """
    where = label or f"x.at[...].{name}"
    target, key = _one(x, where)
    dt = key[0]
    if name == "divide" and _dtypes.kind_of(dt) not in "fc":
        raise TypeError(
            f"{where}: dividing an {dt} array in place would need a float "
            "result; convert first with x.astype('float32')"
        )
    update = _fitting(values, dt, where, "store")
    idx, pad = _resolve(target.shape, index, mode, wrap_negative, where)
    out = _padded(target, pad, 0) if pad else target.copy()
    if ufunc is None:
        out[idx] = update
    else:
        _core.ignore_fp_errors(ufunc.at, out, idx, update)
    if pad:
        out = np.array(out[tuple(slice(0, n) for n in target.shape)])
    return wrap(out, key)


@traced(abstract.full_size)
def _scatter_apply(  # pyright: ignore[reportUnusedFunction]
    x: Any,
    index: Any,
    func: Callable[[Array], Array],
    mode: str | None = None,
    wrap_negative: bool = True,
) -> Array:
    """``x.at[index].apply(func)``: ``func`` applied to the elements at
    ``index``, once per occurrence of a position in the index."""
    where = "x.at[...].apply"
    target, key = _one(x, where)
    idx, pad = _resolve(target.shape, index, mode, wrap_negative, where)
    positions: np.ndarray[Any, Any] = np.arange(target.size, dtype=np.int64)
    positions = positions.reshape(target.shape)
    if pad:
        positions = _padded(positions, pad, -1)
    chosen: np.ndarray[Any, Any] = np.asarray(positions[idx]).reshape(-1)
    chosen = chosen[chosen >= 0]
    flat = target.reshape(-1).copy()
    unique, counts = np.unique(chosen, return_counts=True)
    for round_ in range(int(counts.max()) if counts.size else 0):
        at = unique[counts > round_]
        result: Any = func(wrap(flat[at], key))
        if not isinstance(result, Array) or result.dtype != key[0]:
            got = getattr(result, "dtype", type(result).__name__)
            raise TypeError(
                f"{where}: {getattr(func, '__name__', 'the function')} turned "
                f"{key[0]} values into {got}; it must keep the dtype (cast x "
                "first, e.g. x.astype('float32'))"
            )
        flat[at] = np.asarray(result).reshape(-1)
    return wrap(flat.reshape(target.shape), key)


def _fitting(value: Any, dt: np.dtype[Any], where: str, verb: str) -> Any:
    """``value`` converted to ``dt``, which must not change it: its promotion
    with a strong ``dt`` must be ``dt`` (a float into an integer array is
    refused), and a Python scalar must fit (range checked)."""
    v, vkey = _array.operand(value, where, 1)
    state = _config.current()
    joined, _ = _core.result_of([_core.aval(dt, False), vkey], state)
    if joined != dt:
        shown = _core.key_dtype(vkey, state.enable_x64)
        raise TypeError(
            f"{where}: cannot {verb} {shown} values in a {dt} array without "
            f"changing them (they promote to {joined}); cast them explicitly, "
            f"e.g. values.astype('{dt}')"
        )
    return _core.convert(v, dt, where, use="array")


# -- sorting ----------------------------------------------------------------


def _sort_operand(
    a: Any, axis: int | None, name: str, kind: Any, order: Any
) -> tuple[np.ndarray[Any, Any], _core.Aval, int]:
    """The value to sort, its key, and the axis (None: the flattened array)."""
    if kind is not None:
        raise TypeError(
            f"{name}: the kind argument is not supported (as in jax.numpy); "
            "say stable=True or stable=False instead"
        )
    if order is not None:
        raise TypeError(f"{name}: the order argument is not supported (no fields)")
    v, key = _one(a, name)
    if axis is None:
        return v.reshape(-1), key, 0
    if not v.ndim:
        raise ValueError(f"{name}: a 0-d array has no axis to sort along")
    axis = _core.index_of(axis, f"{name}: axis")
    if not -v.ndim <= axis < v.ndim:
        raise ValueError(
            f"{name}: axis {axis} is out of bounds for an array of dimension {v.ndim}"
        )
    return v, key, axis % v.ndim


@traced(abstract.flat_or_copying)
def sort(
    a: ArrayLike,
    axis: int | None = -1,
    *,
    kind: None = None,
    order: None = None,
    stable: bool = True,
    descending: bool = False,
) -> Array:
    """Sorted copy (NaNs last, first when ``descending``); dtype and weak
    flag kept. The sort is always stable (``stable=False`` allows any order
    of equal elements, and this one is allowed).

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      axis: the axis to sort along, or None for the flattened array.
      kind: not supported (NumPy's sort algorithm); must be None.
      order: not supported (structured arrays); must be None.
      stable: accepted; the sort is always stable.
      descending: sort from largest to smallest.

    Returns:
      An Array with ``a``'s dtype and weak flag.

    >>> import typelattice.numpy as tnp
    >>> tnp.sort(tnp.asarray([3, 1, 2], dtype='int8'))
    Array([1, 2, 3], dtype=int8)
    >>> tnp.sort(tnp.asarray([3.0, float('nan'), 1.0]), descending=True)
    Array([nan,  3.,  1.], dtype=float32)
    """
    v, key, axis = _sort_operand(a, axis, "sort", kind, order)
    out = np.sort(v, axis=axis, kind="stable")
    if descending:
        out = np.flip(out, axis=axis)
    return wrap(out, key)


@traced(abstract.flat_or_copying)
def argsort(
    a: ArrayLike,
    axis: int | None = -1,
    *,
    kind: None = None,
    order: None = None,
    stable: bool = True,
    descending: bool = False,
    dtype: DTypeLike | None = None,
) -> Array:
    """Indices that sort ``a``: the default integer type, or ``dtype`` (an
    integer type that can hold every index). Equal elements keep their
    order (descending too), as JAX's stable sort.

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      axis: the axis to sort along, or None for the flattened array.
      kind: not supported; must be None.
      order: not supported; must be None.
      stable: accepted; the sort is always stable.
      descending: sort from largest to smallest.
      dtype: an integer dtype for the indices.

    Returns:
      A strong integer Array of ``a``'s shape (flattened for ``axis=None``).

    >>> import typelattice.numpy as tnp
    >>> tnp.argsort(tnp.asarray([3, 1, 2], dtype='int8'))
    Array([1, 2, 0], dtype=int32)
    """
    v, _, axis = _sort_operand(a, axis, "argsort", kind, order)
    if descending:
        out = np.flip(
            np.argsort(np.flip(v, axis=axis), axis=axis, kind="stable"), axis=axis
        )
        out = v.shape[axis] - 1 - out
    else:
        out = np.argsort(v, axis=axis, kind="stable")
    x64 = _config.current().enable_x64
    if dtype is None:
        dt = _dtypes.default_dtype("i", x64)
    else:
        dt = _astype_dtype(dtype, "argsort")
        if _dtypes.kind_of(dt) not in "iu":
            raise TypeError(f"argsort: dtype must be an integer type, got {dt}")
        size = v.shape[axis] if v.ndim else 1
        if size - 1 > int(_dtypes.iinfo(dt).max):
            raise OverflowError(
                f"argsort: indices up to {size - 1} do not fit in {dt}; give a "
                "wider dtype"
            )
    return from_numpy(out.astype(dt))


def _astype_dtype(dtype: Any, where: str) -> np.dtype[Any]:
    return _requested(dtype, where)


def _result_size(size: Any, name: str) -> int:
    """``size=``, the fixed length of a result: a non-negative integer.

    TypeError otherwise, as jax.numpy raises for nonzero's family.
    """
    try:
        n = operator.index(size)
    except TypeError:
        raise TypeError(
            f"{name}: size must be a non-negative integer (the number of "
            f"indices to return) or None, got {size!r:.60}"
        ) from None
    if n < 0:
        raise TypeError(
            f"{name}: size must be a non-negative integer (the number of "
            f"indices to return), got {n}; give size=0 or more, or None for "
            "all of them (not under jit)"
        )
    return n


def _checked_size(a: object, size: object, name: str) -> int | None:
    """``size=`` of nonzero's family, checked; None only outside tracing."""
    if size is None:
        if isinstance(a, Placeholder):
            raise ConcretizationTypeError(
                f"{name} of a traced array {a!r}: the number of nonzero "
                "elements is not known while tracing. Give size= (and "
                "fill_value=) for a fixed-size result."
            )
        return None
    return _result_size(size, name)


def _nonzero(
    a: ArrayLike,
    size: int | None,
    fill_value: ArrayLike | tuple[ArrayLike, ...] | None,
    name: str,
) -> tuple[Array, ...]:
    """:func:`nonzero`, with ``name`` in its messages (its family calls it)."""
    size = _checked_size(a, size, name)
    v, _ = _one(a, name)
    if not v.ndim:
        raise ValueError(
            f"{name}: a 0-d array has no indices; use atleast_1d(x) first, as "
            "jax.numpy requires"
        )
    state = _config.current()
    dt = _dtypes.default_dtype("i", state.enable_x64)
    found = np.nonzero(v)
    if size is None:
        if fill_value is not None:
            raise ValueError(f"{name}: fill_value needs size=")
        return tuple(from_numpy(i.astype(dt)) for i in found)
    fills: tuple[Any, ...]
    if isinstance(fill_value, tuple):
        fills = fill_value
        if len(fills) != v.ndim:
            raise ValueError(
                f"{name}: fill_value has {len(fills)} values for an array of "
                f"{v.ndim} dimensions; give one per dimension, or a scalar"
            )
    else:
        fills = (0 if fill_value is None else fill_value,) * v.ndim
    out: list[Array] = []
    for i, fill in zip(found, fills, strict=True):
        if np.ndim(fill):
            raise ValueError(
                f"{name}: fill_value must be a scalar (or a tuple of them)"
            )
        fv, fkey = _array.operand(fill, name, 1)
        out_dt, weak = _core.result_of([_core.aval(dt, False), fkey], state)
        head = i[:size].astype(out_dt)
        pad = np.full(max(0, size - len(i)), _core.convert(fv, out_dt, name))
        out.append(
            wrap(np.concatenate([head, pad.astype(out_dt)]), _core.aval(out_dt, weak))
        )
    return tuple(out)


@traced(abstract.nonzero)
def nonzero(
    a: ArrayLike,
    *,
    size: int | None = None,
    fill_value: ArrayLike | tuple[ArrayLike, ...] | None = None,
) -> tuple[Array, ...]:
    """Indices of the nonzero elements, one array per axis (the default
    integer type).

    With ``size``, exactly that many: the first ``size`` ones, padded with
    ``fill_value`` (0 by default; a tuple gives one per axis), as in
    jax.numpy: the result's dtype is the default integer promoted with the
    fill value's (a Python float gives weak floats, as in JAX).

    Args:
      a: an Array, a NumPy array or a scalar (not a list), of at least one
        dimension.
      size: the number of indices per axis, a non-negative integer (needed
        under ``jit``); None for all of them.
      fill_value: the padding, one value or a tuple with one per axis.

    Returns:
      A tuple of 1-d Arrays, one per axis of ``a``.

    Raises:
      TypeError: a ``size`` that is not a non-negative integer (as
        jax.numpy).
      ValueError: a 0-d ``a``, or a ``fill_value`` without ``size``.

    >>> import typelattice.numpy as tnp
    >>> tnp.nonzero(tnp.asarray([0, 5, 0, 7]), size=3, fill_value=-1)
    (Array([ 1,  3, -1], dtype=int32),)
    """
    return _nonzero(a, size, fill_value, "nonzero")


@traced(abstract.nonzero)
def argwhere(
    a: ArrayLike,
    *,
    size: int | None = None,
    fill_value: ArrayLike | tuple[ArrayLike, ...] | None = None,
) -> Array:
    """The indices of the nonzero elements, one row per element: the
    columns of :func:`nonzero` stacked, of shape ``(count, a.ndim)``.

    A 0-d ``a`` gives shape ``(1, 0)`` when it is nonzero, ``(0, 0)``
    otherwise (``(size, 0)`` with ``size``), as jax.numpy.

    Args:
      a: an array.
      size, fill_value: as :func:`nonzero`'s (the number of rows, and the
        padding; a tuple gives one value per column).

    Returns:
      An array of shape ``(count, a.ndim)``.

    >>> import typelattice.numpy as tnp
    >>> tnp.argwhere(tnp.asarray([[0, 1], [2, 0]]), size=3, fill_value=-1)
    Array([[ 0,  1],
           [ 1,  0],
           [-1, -1]], dtype=int32)
    """
    size = _checked_size(a, size, "argwhere")
    v, key = _one(a, "argwhere")
    columns = _nonzero(wrap(np.atleast_1d(v), key), size, fill_value, "argwhere")
    values: list[np.ndarray[Any, Any]] = [np.asarray(c) for c in columns]
    rows = np.stack(values, axis=1)
    if v.ndim == 0:
        rows = rows[:, :0]
    return wrap(rows, _core.aval(columns[0].dtype, columns[0].weak_type))


@traced(abstract.nonzero)
def flatnonzero(
    a: ArrayLike,
    *,
    size: int | None = None,
    fill_value: ArrayLike | tuple[ArrayLike, ...] | None = None,
) -> Array:
    """The indices of the nonzero elements of the flattened ``a``:
    ``nonzero(ravel(a))[0]``.

    Args:
      a: an array.
      size, fill_value: as :func:`nonzero`'s.

    Returns:
      A 1-d array of indices.

    >>> import typelattice.numpy as tnp
    >>> tnp.flatnonzero(tnp.asarray([[0, 1], [2, 0]]))
    Array([1, 2], dtype=int32)
    """
    size = _checked_size(a, size, "flatnonzero")
    v, key = _one(a, "flatnonzero")
    return _nonzero(wrap(v.reshape(-1), key), size, fill_value, "flatnonzero")[0]


@traced(abstract.diagonal)
def diagonal(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    """The ``offset``-th diagonal over ``axis1`` and ``axis2`` (moved last).

    Args:
      a: an array of at least two dimensions.
      offset: the diagonal: 0 the main one, positive above, negative below.
      axis1: the first axis of the 2-d planes.
      axis2: the second axis.

    Returns:
      A strong Array of ``a``'s dtype, as in jax.numpy.

    >>> import typelattice.numpy as tnp
    >>> tnp.diagonal(tnp.arange(9).reshape(3, 3), offset=1)
    Array([1, 5], dtype=int32)
    """
    v, _ = _one(a, "diagonal")
    if v.ndim < 2:
        raise ValueError(f"diagonal: needs at least 2 dimensions, got shape {v.shape}")
    offset = _core.index_of(offset, "diagonal: offset")
    try:
        out = np.diagonal(v, offset, axis1, axis2)
    except (TypeError, ValueError) as err:
        _core.reraise_named("diagonal", err)
    return from_numpy(np.array(out))


@traced(abstract.copying)
def searchsorted(
    a: ArrayLike,
    v: ArrayLike,
    side: str = "left",
    sorter: ArrayLike | None = None,
    *,
    method: str = "scan",
) -> Array:
    """Where ``v``'s elements would be inserted into the sorted 1-d ``a``
    (the default integer type). ``a`` and ``v`` are compared in their
    promoted type; NaNs sort last. ``method`` is accepted for jax.numpy
    compatibility (every method gives the same result).

    Args:
      a: a sorted 1-d Array or NumPy array.
      v: the values to place.
      side: ``'left'`` (the first suitable index) or ``'right'`` (the last).
      sorter: indices that sort ``a``, if ``a`` itself is not sorted.
      method: ``'scan'``, ``'scan_unrolled'``, ``'sort'`` or
        ``'compare_all'``; all give the same result.

    Returns:
      A strong Array of the default integer type, of ``v``'s shape.

    >>> import typelattice.numpy as tnp
    >>> tnp.searchsorted(tnp.asarray([1, 2, 3]), tnp.asarray([2, 5]), side='right')
    Array([2, 3], dtype=int32)
    """
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side={side!r}; expected 'left' or 'right'")
    if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
        raise ValueError(
            f"searchsorted: method={method!r}; expected 'scan', 'scan_unrolled', "
            "'sort' or 'compare_all'"
        )
    conv, plan = promote(promotion_op("searchsorted"), (a, v))
    cd = plan.cd
    sorted_, values = (np.asarray(x, dtype=cd) for x in conv)
    if sorted_.ndim != 1:
        raise ValueError(
            f"searchsorted: a must be 1-dimensional, got shape {sorted_.shape}"
        )
    order = None
    if sorter is not None:
        sv, _ = _array.operand(sorter, "searchsorted", 2)
        order = np.asarray(sv)
        if order.dtype.kind not in "iu" or order.shape != sorted_.shape:
            raise ValueError(
                "searchsorted: sorter must be integer indices of a's length"
            )
    if _dtypes.kind_of(cd) == "c":
        raise TypeError("searchsorted: complex values have no order")
    out = np.searchsorted(sorted_, values, side=side, sorter=order)  # type: ignore[call-overload]
    x64 = _config.current().enable_x64
    return from_numpy(np.asarray(out).astype(_dtypes.default_dtype("i", x64)))


@traced(abstract.full_size)
def compress(
    condition: ArrayLike,
    a: ArrayLike,
    axis: int | None = None,
    *,
    size: int | None = None,
    fill_value: ArrayLike = 0,
    out: None = None,
) -> Array:
    """The slices of ``a`` along ``axis`` (of the flattened ``a`` by
    default) where ``condition`` is true; with ``size``, exactly that many,
    padded with ``fill_value``. ``a``'s dtype and weak flag are kept.

    Args:
      condition: a 1-d bool (or truth-valued) array.
      a: an Array, a NumPy array or a scalar (not a list).
      axis: the axis to select along, or None for the flattened ``a``.
      size: the number of slices to return, a non-negative integer
        (needed under ``jit``; ValueError for a negative one, as jax.numpy).
      fill_value: the padding with ``size``; it must fit ``a``'s dtype.
      out: not supported (arrays are immutable); must be None.

    Returns:
      An Array with ``a``'s dtype and weak flag.

    >>> import typelattice.numpy as tnp
    >>> tnp.compress(tnp.asarray([True, False, True]), tnp.asarray([1, 2, 3]))
    Array([1, 3], dtype=int32)
    """
    if out is not None:
        raise TypeError("compress: the out argument is not supported")
    if size is None and isinstance(condition, Placeholder):
        raise ConcretizationTypeError(
            f"compress with a traced condition {condition!r}: the result's "
            "length is not known while tracing; give size= (and fill_value=)"
        )
    cv, _ = _array.operand(condition, "compress", 0)
    cond = np.asarray(cv).astype(bool)
    if cond.ndim != 1:
        raise ValueError(f"compress: condition must be 1-d, got shape {cond.shape}")
    v, key = _one(a, "compress")
    if axis is None:
        v, axis = v.reshape(-1), 0
    ax = _core.index_of(axis, "compress: axis") % max(v.ndim, 1)
    n = v.shape[ax]
    if cond.size > n:
        cond, extra = cond[:n], cond[n:]
        if extra.any():
            raise ValueError(
                f"compress: condition has true values beyond the axis length {n}"
            )
    picked = np.compress(cond, v, axis=ax)
    if size is not None:
        size = _core.index_of(size, "compress: size")
        if size < 0:
            # ValueError here, as jax.numpy's compress.
            raise ValueError(
                f"compress: size must be a non-negative integer (the length of "
                f"the result along the axis), got {size}"
            )
        fill = _fitting(fill_value, key[0], "compress", "fill with")
        picked = np.take(picked, np.arange(min(size, picked.shape[ax])), axis=ax)
        missing = size - picked.shape[ax]
        if missing:
            slab = list(picked.shape)
            slab[ax] = missing
            picked = np.concatenate([picked, np.full(slab, fill, key[0])], axis=ax)
    return wrap(np.array(picked), key)


@traced(abstract.full_size)
def _view(x: Any, dtype: Any = None) -> Array:  # pyright: ignore[reportUnusedFunction]
    """``x.view(dtype)``: the same bytes read as ``dtype`` (a strong array;
    the last axis changes length when the item sizes differ)."""
    v, _ = _one(x, "view")
    if dtype is None:
        return from_numpy(np.array(v))
    dt = _astype_dtype(dtype, "view")
    if v.ndim == 0 and dt.itemsize != v.dtype.itemsize:
        raise ValueError(
            f"view: a 0-d array can only be viewed as a type of the same item "
            f"size ({v.dtype.itemsize} bytes), not {dt}; reshape it to 1-d first"
        )
    try:
        out = np.ascontiguousarray(v).view(dt)
    except ValueError as err:
        _core.reraise_named("view", err)
    if dt == np.dtype(bool):
        out = out.view(np.uint8) != 0  # any nonzero byte is True, as JAX
    return from_numpy(np.array(out))


# -- lowerings (for differentiation) --------------------------------------------
# Each of these functions moves elements of its data arguments (the first
# argument; compress: the second; all of them for the variadic ones).
lowering(reshape)(moves_elements(reshape, 0))
lowering(ravel)(moves_elements(ravel, 0))
lowering(transpose)(moves_elements(transpose, 0))
lowering(permute_dims)(moves_elements(permute_dims, 0))
lowering(matrix_transpose)(moves_elements(matrix_transpose, 0))
lowering(moveaxis)(moves_elements(moveaxis, 0))
lowering(swapaxes)(moves_elements(swapaxes, 0))
lowering(expand_dims)(moves_elements(expand_dims, 0))
lowering(squeeze)(moves_elements(squeeze, 0))
lowering(broadcast_to)(moves_elements(broadcast_to, 0))
lowering(flip)(moves_elements(flip, 0))
lowering(roll)(moves_elements(roll, 0))
lowering(tile)(moves_elements(tile, 0))
lowering(repeat)(moves_elements(repeat, 0))
lowering(concatenate)(moves_elements(concatenate, 0))
lowering(concat)(moves_elements(concat, 0))
lowering(stack)(moves_elements(stack, 0))
lowering(hstack)(moves_elements(hstack, 0))
lowering(vstack)(moves_elements(vstack, 0))
lowering(split)(moves_elements(split, 0))
lowering(diagonal)(moves_elements(diagonal, 0))
lowering(compress)(moves_elements(compress, 1))
lowering(atleast_1d)(moves_elements(atleast_1d))
lowering(atleast_2d)(moves_elements(atleast_2d))
lowering(atleast_3d)(moves_elements(atleast_3d))
lowering(broadcast_arrays)(moves_elements(broadcast_arrays))


# Indexing with arrays (x[idx], take, x.at[idx].get) gathers at positions
# that depend on the index's values, which jit and remembered calls know
# only when they run: moves_elements, which reads the values, cannot
# differentiate them there. Instead the function itself, applied to arrays
# of each element's coordinate along one axis (broadcast views of an
# arange: memory of the axis's length, not the data's; take along the
# flattened array numbers every element), gives the coordinates each result
# element comes from, as a namespace call on the index (recorded by jit and
# replayed with its checks: an index out of bounds raises when it runs, as
# without differentiation); a gather takes the elements there, with a
# scatter-add as its transpose.


_DATA_ARGUMENT: Final = "a"
_INDEX_ARGUMENT: Final = {"_getitem": "key", "take": "indices", "_gather": "index"}


@functools.cache
def _signature(function: Any) -> inspect.Signature:
    return inspect.signature(function._traced)


def _arguments(function: Any, args: Any, kwargs: Any) -> dict[str, Any]:
    """``function``'s arguments by name, defaults included."""
    bound = _signature(function).bind(*args, **kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


def _indexing_lower(function: Any, a: Any, *args: Any, **kwargs: Any) -> Any:
    """The lowering of ``function`` (``_getitem``, ``take`` or ``_gather``)
    on data ``a``: a gather at the positions an index with arrays selects
    (else by :func:`moves_elements`)."""

    given = _arguments(function, (a, *args), kwargs)
    index = given[_INDEX_ARGUMENT[function.__name__]]
    mode = given.get("mode")
    fills = mode == "fill" if function is take else mode in ("fill", "drop")
    fill_value = given.get("fill_value")
    if (
        not isinstance(a, Array)
        or not any(isinstance(x, Array | np.ndarray) for x in tree.leaves(index))
        or isinstance(fill_value, TransformTracer)
        or (a.ndim == 0 and function is not take)
    ):
        return moves_elements(function, 0)(a, *args, **kwargs)
    flat = function is take and given["axis"] is None
    source = (math.prod(a.shape),) if flat else tuple(a.shape)
    size = math.prod(source)
    if size >= 2**31:
        raise NotImplementedError(
            f"typelattice.numpy.{function.__name__.lstrip('_')}: differentiating "
            f"it on {size} elements is not supported (2**31 at most)"
        )
    coordinate = _core.aval(np.dtype(np.int32), False)
    position: Any = None
    outside: Any = None
    for d, n in enumerate(source):
        axis = [1] * len(source)
        axis[d] = n
        numbers = np.arange(n, dtype=np.int32).reshape(axis)
        along = wrap(np.broadcast_to(numbers, source), coordinate)
        # Out of bounds, 'fill' and 'drop' put -1 at every coordinate.
        call = given | {_DATA_ARGUMENT: along}
        if "fill_value" in call:
            call["fill_value"] = -1 if fills else None
        c = function(**call)
        if fills and outside is None:
            outside = lax.eq(c, -1)
        stride = math.prod(source[d + 1 :])
        term = c if stride == 1 else lax.mul(c, stride)
        position = term if position is None else lax.add(position, term)
    shape = tuple(position.shape)
    data = lax.reshape(a, (size,))
    out = _lower._take_flat(data, lax.reshape(position, (math.prod(shape),)))
    out = lax.reshape(out, shape)
    if fills:
        where = "take" if function is take else "x.at[...].get"
        fill = _fill_for(fill_value, a.dtype, where)
        out = lax.select(outside, lax.full(shape, fill, a.dtype), out)
    return _lower._cast(out, a.dtype, a.weak_type)


def _getitem_lower(a: Any, key: Any) -> Any:
    return _indexing_lower(_getitem, a, key)


def _take_lower(*args: Any, **kwargs: Any) -> Any:
    return _indexing_lower(take, *args, **kwargs)


def _gather_lower(*args: Any, **kwargs: Any) -> Any:
    return _indexing_lower(_gather, *args, **kwargs)


def _sort_lower(
    a: Any,
    axis: int | None = -1,
    *,
    kind: None = None,
    order: None = None,
    stable: bool = True,
    descending: bool = False,
) -> Any:
    """The elements gathered in the order of their values' argsort."""

    result = _lower.expected(
        sort, a, axis, kind=kind, order=order, stable=stable, descending=descending
    )
    x = a if axis is not None else ravel(a)
    ax = -1 if axis is None else axis
    order_ = argsort(stop_gradient(x), axis=ax, stable=stable, descending=descending)
    return _lower.finish(take_along_axis(x, order_, ax % x.ndim), result)


def _scatter_lower(
    x: Any,
    index: Any,
    values: Any,
    ufunc: np.ufunc | None,
    name: str,
    mode: str | None = None,
    wrap_negative: bool = True,
    label: str | None = None,
) -> Any:
    """``.at[index].set``: a function that moves elements of ``x`` and
    ``values``. ``.add``, ``.subtract``, ``.multiply``, ``.min``, ``.max``:
    a scatter of the values at the flat positions ``index`` selects (found
    by indexing an array of element numbers), with the primitive that
    combines them (its rules differentiate it)."""

    args = (x, index, values, ufunc, name, mode, wrap_negative, label)
    if ufunc is None:
        return _lower.moves_elements(_scatter, 0, 2)(*args)
    scatter = _SCATTERS.get(ufunc.__name__)
    if scatter is None:
        raise NotImplementedError(
            f"x.at[...].{name} cannot be differentiated; .set, .add, .subtract, "
            ".multiply, .min and .max can"
        )
    result = _lower.expected(_scatter, *args)
    size = math.prod(result.shape)
    numbers = wrap(
        np.arange(size, dtype=np.int32).reshape(result.shape),
        _core.aval(np.dtype(np.int32), False),
    )
    dropping = mode in ("drop", "fill")
    positions = _gather(numbers, index, mode, -1 if dropping else None, wrap_negative)
    updates = _lower.broadcast(_lower.like(values, result), tuple(positions.shape))
    if name == "subtract":
        updates = lax.neg(updates)
    # Dropped updates go to one extra element, cut off after.
    flat_pos = np.asarray(positions).ravel()
    flat_pos = np.where(flat_pos >= 0, flat_pos, size).astype(np.int32)
    target = lax.concatenate(
        [lax.reshape(_lower.like(x, result), (size,)), lax.full((1,), 0, result.dtype)],
        0,
    )
    dn = lax.ScatterDimensionNumbers(
        update_window_dims=(),
        inserted_window_dims=(0,),
        scatter_dims_to_operand_dims=(0,),
    )
    column = wrap(flat_pos.reshape(-1, 1), _core.aval(np.dtype(np.int32), False))
    flat_updates = lax.reshape(updates, (flat_pos.size,))
    if scatter == "scatter_mul" and np.unique(flat_pos).size == flat_pos.size:
        # Each element multiplied once at most: by a scatter of the factors
        # into ones, which differentiates in the factors too.
        ones = lax.full((size + 1,), 1, result.dtype)
        factors = lax.scatter(ones, column, flat_updates, dn)
        done = lax.mul(target, factors)
    else:
        done = getattr(lax, scatter)(target, column, flat_updates, dn)
    return _lower.finish(lax.slice(done, (0,), (size,)), result)


# The primitive combining each update with the array (subtract: add the
# negated values).
_SCATTERS: Final = {
    "add": "scatter_add",
    "subtract": "scatter_add",
    "multiply": "scatter_mul",
    "minimum": "scatter_min",
    "maximum": "scatter_max",
}


lowering(sort)(_sort_lower)
lowering(_scatter)(_scatter_lower)
lowering(_getitem)(_getitem_lower)
lowering(take)(_take_lower)
lowering(_gather)(_gather_lower)
for _fn in (argsort, nonzero, argwhere, flatnonzero, searchsorted):
    lowering(_fn)(_lower_constant(_fn))
del _fn
