"""Shape functions, joining and splitting, indexing and functional updates,
sorting. Functions of one array keep its dtype and weak flag; functions that
join several arrays promote them, as in jax.numpy."""

# Package-internal: reads the arrays' underscored slots by design, and defines
# the private helpers of the arrays' indexing (_getitem, _scatter).
# pyright: reportPrivateUsage=false

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from typelattice import _config, _dtypes
from typelattice.numpy import _core
from typelattice.numpy._array import Array, ArrayImpl, from_numpy, wrap
from typelattice.numpy._elementwise import promote, promotion_op
from typelattice.numpy._tracer import ConcretizationTypeError, Placeholder

if TYPE_CHECKING:
    from typelattice.typing import ArrayLike, DTypeLike

_ANY: Final = "biufc"


def _one(a: Any, name: str) -> tuple[np.ndarray[Any, Any], _core.Aval]:
    """The single array argument of a shape function: value and key."""
    if type(a) is ArrayImpl:
        return a._value, a._key
    v, key = _core.operand(a, name, 0)
    if isinstance(key, _core.Aval):
        if isinstance(a, np.ndarray) and np.shares_memory(v, a):  # pyright: ignore[reportUnknownArgumentType]
            # Shape functions return views: not of the caller's mutable array.
            v = v.copy()
        return np.asarray(v), key
    x64 = _config.current().enable_x64
    dt = _core.key_dtype(key, x64)
    return _core.python_scalar_to(v, dt, name), _core.aval(dt, _core.key_weak(key))


def _same(
    name: str, fn: Callable[..., Any], a: Any, *args: Any, **kwargs: Any
) -> Array:
    v, key = _one(a, name)
    return wrap(np.asarray(fn(v, *args, **kwargs)), key)


def reshape(
    a: ArrayLike, shape: Any = None, order: str = "C", *, newshape: Any = None
) -> Array:
    """``a`` with a new shape (one axis may be -1); dtype and weak flag kept.

    >>> import typelattice.numpy as tnp
    >>> tnp.reshape(tnp.arange(6), (2, -1)).shape
    (2, 3)
    """
    if shape is None:
        shape = newshape
    if isinstance(shape, int | np.integer):
        shape = (int(shape),)  # pyright: ignore[reportUnknownArgumentType]
    return _same("reshape", np.reshape, a, tuple(shape), order=order)


def ravel(a: ArrayLike, order: str = "C") -> Array:
    """``a`` flattened to one axis."""
    return _same("ravel", np.ravel, a, order=order)


def transpose(a: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    """``a`` with its axes permuted (reversed by default)."""
    return _same("transpose", np.transpose, a, axes)


def permute_dims(a: ArrayLike, /, axes: Sequence[int]) -> Array:
    """Array API name of :func:`transpose`."""
    return transpose(a, axes)


def matrix_transpose(x: ArrayLike, /) -> Array:
    """Swap the last two axes."""
    v, key = _one(x, "matrix_transpose")
    if v.ndim < 2:
        raise ValueError(
            f"matrix_transpose: needs at least 2 dimensions, got shape {v.shape}"
        )
    return wrap(np.swapaxes(v, -1, -2), key)


def moveaxis(a: ArrayLike, source: Any, destination: Any) -> Array:
    """Move axes to new positions."""
    return _same("moveaxis", np.moveaxis, a, source, destination)


def swapaxes(a: ArrayLike, axis1: int, axis2: int) -> Array:
    """Swap two axes."""
    return _same("swapaxes", np.swapaxes, a, axis1, axis2)


def expand_dims(a: ArrayLike, axis: int | Sequence[int] | None) -> Array:
    """Insert axes of length 1."""
    return _same("expand_dims", np.expand_dims, a, axis)


def squeeze(a: ArrayLike, axis: int | Sequence[int] | None = None) -> Array:
    """Remove axes of length 1."""
    return _same("squeeze", np.squeeze, a, axis)


def broadcast_to(array: ArrayLike, shape: Any) -> Array:
    """``array`` broadcast to ``shape``; dtype and weak flag kept."""
    if isinstance(shape, int | np.integer):
        shape = (int(shape),)  # pyright: ignore[reportUnknownArgumentType]
    v, key = _one(array, "broadcast_to")
    try:
        out = np.broadcast_to(v, tuple(shape))
    except ValueError:
        _core.broadcast_error("broadcast_to", [v.shape, tuple(shape)])
    return wrap(out, key)


def broadcast_arrays(*args: ArrayLike) -> list[Array]:
    """The arguments broadcast to one shape, each keeping its dtype."""
    parts = [_one(a, "broadcast_arrays") for a in args]
    shapes = [v.shape for v, _ in parts]
    state = _config.current()
    _core.check_rank("broadcast_arrays", shapes, state.rank_promotion)
    try:
        outs = np.broadcast_arrays(*[v for v, _ in parts])
    except ValueError:
        _core.broadcast_error("broadcast_arrays", shapes)
    return [wrap(o, k) for o, (_, k) in zip(outs, parts, strict=True)]


def broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    """The shape the given shapes broadcast to."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        _core.broadcast_error("broadcast_shapes", [tuple(s) for s in shapes])


def atleast_1d(*arys: ArrayLike) -> Any:
    """Each argument with at least one axis."""
    outs = [_same("atleast_1d", np.atleast_1d, a) for a in arys]
    return outs[0] if len(outs) == 1 else outs


def atleast_2d(*arys: ArrayLike) -> Any:
    """Each argument with at least two axes."""
    outs = [_same("atleast_2d", np.atleast_2d, a) for a in arys]
    return outs[0] if len(outs) == 1 else outs


def atleast_3d(*arys: ArrayLike) -> Any:
    """Each argument with at least three axes."""
    outs = [_same("atleast_3d", np.atleast_3d, a) for a in arys]
    return outs[0] if len(outs) == 1 else outs


def flip(m: ArrayLike, axis: int | Sequence[int] | None = None) -> Array:
    """Reverse the order of elements along axes."""
    return _same("flip", np.flip, m, axis)


def roll(a: ArrayLike, shift: Any, axis: int | Sequence[int] | None = None) -> Array:
    """Shift elements cyclically along axes."""
    return _same("roll", np.roll, a, shift, axis)


def tile(A: ArrayLike, reps: int | Sequence[int]) -> Array:
    """Repeat the whole array ``reps`` times."""
    return _same("tile", np.tile, A, reps)


def repeat(
    a: ArrayLike,
    repeats: Any,
    axis: int | None = None,
    *,
    total_repeat_length: int | None = None,
) -> Array:
    """Repeat each element ``repeats`` times."""
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
    conv, (_, _, out_key, _, cd) = promote(promotion_op(name), tuple(elements))
    values = [np.asarray(v, dtype=cd) for v in conv]
    if min_ndim and len({v.ndim for v in values}) > 1:
        raise TypeError(
            f"{name}: cannot join arrays with different numbers of dimensions "
            f"(shapes {', '.join(str(v.shape) for v in values)})"
        )
    try:
        out = fn(values)
    except ValueError as err:
        raise ValueError(f"{name}: {err}") from None
    return wrap(np.asarray(out), out_key)


def concatenate(
    arrays: Sequence[ArrayLike], axis: int | None = 0, dtype: DTypeLike | None = None
) -> Array:
    """Join arrays along an existing axis; their dtypes are promoted.

    >>> import typelattice.numpy as tnp
    >>> i8 = tnp.asarray([1], dtype='int8')
    >>> tnp.concatenate([i8, tnp.asarray([2], dtype='uint8')])
    Array([1, 2], dtype=int16)
    """
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    out = _joined("concatenate", arrays, lambda vs: np.concatenate(vs, axis=axis), 1)
    return out if dtype is None else _astype(out, dtype)


def concat(arrays: Sequence[ArrayLike], /, *, axis: int | None = 0) -> Array:
    """Array API name of :func:`concatenate`."""
    return concatenate(arrays, axis=axis)


def stack(
    arrays: Sequence[ArrayLike],
    axis: int = 0,
    out: None = None,
    dtype: DTypeLike | None = None,
) -> Array:
    """Join arrays along a new axis; their dtypes are promoted."""
    res = _joined("stack", arrays, lambda vs: np.stack(vs, axis=axis))
    return res if dtype is None else _astype(res, dtype)


def hstack(tup: Sequence[ArrayLike], dtype: DTypeLike | None = None) -> Array:
    """Join horizontally (along axis 1, or 0 for 1-d arrays)."""
    res = _joined("hstack", tup, np.hstack)
    return res if dtype is None else _astype(res, dtype)


def vstack(tup: Sequence[ArrayLike], dtype: DTypeLike | None = None) -> Array:
    """Join vertically (along axis 0, 1-d arrays as rows)."""
    res = _joined("vstack", tup, np.vstack)
    return res if dtype is None else _astype(res, dtype)


def _astype(x: Array, dtype: Any) -> Array:
    from typelattice.numpy._creation import astype

    return astype(x, dtype)


def split(ary: ArrayLike, indices_or_sections: Any, axis: int = 0) -> list[Array]:
    """Split into sub-arrays along an axis; each keeps dtype and weak flag."""
    v, key = _one(ary, "split")
    if isinstance(indices_or_sections, Array):
        indices_or_sections = np.asarray(indices_or_sections)
    try:
        parts = np.split(v, indices_or_sections, axis=axis)
    except ValueError as err:
        raise ValueError(f"split: {err}") from None
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


def _getitem(a: Any, key: Any) -> Array:  # pyright: ignore[reportUnusedFunction]
    v, k = _one(a, "getitem")
    return wrap(np.asarray(v[_index(key)]), k)


def take(
    a: ArrayLike,
    indices: ArrayLike,
    axis: int | None = None,
    out: None = None,
    mode: str | None = None,
) -> Array:
    """Elements of ``a`` at ``indices`` (along ``axis``, or of the flattened
    array). Out-of-range indices raise IndexError (JAX fills them)."""
    v, key = _one(a, "take")
    if isinstance(indices, list | tuple):
        raise TypeError("take: indices must be an array, not a list; use asarray")
    idx = np.asarray(indices._value if isinstance(indices, ArrayImpl) else indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"take: indices must be integers, got {idx.dtype}")
    out = np.take(v, idx, axis=axis, mode="raise" if mode is None else mode)  # type: ignore[call-overload]
    return wrap(out, key)


def _scatter(  # pyright: ignore[reportUnusedFunction]
    x: Any, index: Any, values: Any, ufunc: np.ufunc | None, name: str
) -> Array:
    """``x.at[index].<name>(values)``: a copy of ``x`` updated at ``index``.

    The values must fit ``x``'s dtype without changing (their promotion with
    ``x`` is ``x``'s dtype); otherwise a TypeError names the explicit cast.
    """
    where = f"x.at[...].{name}"
    target, key = _one(x, where)
    dt = key[0]
    if name == "divide" and _dtypes.kind_of(dt) not in "fc":
        raise TypeError(
            f"{where}: dividing an {dt} array in place would need a float "
            "result; convert first with x.astype('float32')"
        )
    v, vkey = _core.operand(values, where, 1)
    state = _config.current()
    joined, _ = _core.result_of([_core.aval(dt, False), vkey], state)
    if joined != dt:
        shown = _core.key_dtype(vkey, state.enable_x64)
        raise TypeError(
            f"{where}: cannot store {shown} values in a {dt} array without "
            f"changing them (they promote to {joined}); cast them explicitly, "
            f"e.g. values.astype('{dt}')"
        )
    update = _core.convert(v, dt, where)
    out = target.copy()
    idx = _index(index)
    if ufunc is None:
        out[idx] = update
    else:
        _core.ignore_fp_errors(ufunc.at, out, idx, update)
    return wrap(out, key)


# -- sorting ----------------------------------------------------------------


def _sort_operand(
    a: Any, axis: int | None, name: str
) -> tuple[np.ndarray[Any, Any], _core.Aval, int]:
    """The value to sort, its key, and the axis (None: the flattened array)."""
    v, key = _one(a, name)
    if axis is None:
        return v.reshape(-1), key, 0
    if not v.ndim:
        raise ValueError(f"{name}: a 0-d array has no axis to sort along")
    return v, key, axis


def sort(
    a: ArrayLike,
    axis: int | None = -1,
    *,
    kind: Any = None,
    order: Any = None,
    stable: bool = True,
    descending: bool = False,
) -> Array:
    """Sorted copy (NaNs last); dtype and weak flag kept."""
    v, key, axis = _sort_operand(a, axis, "sort")
    out = np.sort(v, axis=axis, kind="stable")
    if descending:
        out = np.flip(out, axis=axis)
    return wrap(out, key)


def argsort(
    a: ArrayLike,
    axis: int | None = -1,
    *,
    kind: Any = None,
    order: Any = None,
    stable: bool = True,
    descending: bool = False,
) -> Array:
    """Indices that sort ``a`` (the default integer type)."""
    v, _, axis = _sort_operand(a, axis, "argsort")
    if descending:
        out = np.flip(
            np.argsort(np.flip(v, axis=axis), axis=axis, kind="stable"), axis=axis
        )
        out = v.shape[axis] - 1 - out
    else:
        out = np.argsort(v, axis=axis, kind="stable")
    x64 = _config.current().enable_x64
    return from_numpy(out.astype(_dtypes.default_dtype("i", x64)))


def nonzero(
    a: ArrayLike, *, size: int | None = None, fill_value: Any = None
) -> tuple[Array, ...]:
    """Indices of the nonzero elements, one array per axis.

    With ``size``, exactly that many: the first ``size`` ones, padded with
    ``fill_value`` (0 by default), as in jax.numpy.
    """
    if size is None and isinstance(a, Placeholder):
        raise ConcretizationTypeError(
            f"nonzero of a traced array {a!r}: the number of nonzero elements "
            "is not known while tracing. Give size= (and fill_value=) for a "
            "fixed-size result."
        )
    v, _ = _one(a, "nonzero")
    x64 = _config.current().enable_x64
    dt = _dtypes.default_dtype("i", x64)
    found = np.nonzero(np.atleast_1d(v))
    if size is not None:
        size = _core.index_of(size, "nonzero: size")
        fill = 0 if fill_value is None else fill_value
        found = tuple(
            np.concatenate([i[:size], np.full(max(0, size - len(i)), fill, i.dtype)])
            for i in found
        )
    return tuple(from_numpy(i.astype(dt)) for i in found)
