"""Shape functions, joining and splitting, indexing and functional updates,
sorting. Functions of one array keep its dtype and weak flag; functions that
join several arrays promote them, as in jax.numpy."""

# Package-internal: reads the arrays' underscored slots by design, and defines
# the private helpers of the arrays' indexing (_getitem, _scatter).
# pyright: reportPrivateUsage=false

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, NamedTuple, TypeVar

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from typelattice import _array, _config, _core, _dtypes
from typelattice import _lax as lax
from typelattice._array import ArrayImpl, BackendArray, from_numpy, wrap
from typelattice._backends import NUMPY
from typelattice._basearray import Array
from typelattice._lax._elementwise import (
    Check,
    bitcast_convert_type_p,
    convert_element_type_p,
)
from typelattice._lax._fold import (
    Applied,
    Computation,
    scatter_apply_p,
    scatter_combine_p,
)
from typelattice._lax._indexing import (
    IndexCheck,
    check_index,
    gather_p,
    scatter_add_p,
    scatter_max_p,
    scatter_min_p,
    scatter_mul_p,
    scatter_p,
)
from typelattice._lax._primitive import reshape_p
from typelattice._lax._structural import iota_p, transpose_p
from typelattice._tracing import tracer
from typelattice._tracing.ad import stop_gradient
from typelattice._tracing.jit import ShapeDtypeStruct, eval_shape
from typelattice._tracing.tracer import ConcretizationTypeError, Placeholder
from typelattice.numpy._creation import _requested
from typelattice.numpy._elementwise import (
    lax_function,
    promoted,
)

if TYPE_CHECKING:
    from typelattice.typing import ArrayLike, DTypeLike

_ANY: Final = "biufc"
_F = TypeVar("_F", bound=Callable[..., Any])


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


def _arr(a: Any, name: str) -> Any:
    """The single array argument of a shape function, as an array (a
    tracer as it is); the primitives' results never share its memory."""
    if isinstance(a, Array):
        return _plain(a)
    v, key = _one(a, name)
    return wrap(np.asarray(v), key)


def _plain(a: Any) -> Any:
    """A placeholder (the array another function's shape rule or replay
    gives, standing for a traced one) as the array of its values."""
    if isinstance(a, Placeholder):
        return wrap(a._value, a._key)
    return a


# The stand-in of a shape: an array of no bytes, on which NumPy's own shape
# arithmetic runs, with its own errors, at no cost whatever the shape.
_NO_BYTES: Final = np.dtype([])


def _stand_in(shape: Sequence[int]) -> np.ndarray[Any, Any]:
    return np.empty(tuple(shape), _NO_BYTES)


def _probe(
    name: str, fn: Callable[..., Any], shape: Sequence[int], *args: Any, **kw: Any
) -> Any:
    """What NumPy's ``fn`` gives for an array of ``shape`` (a stand-in; a
    shape, or a list of shapes), or its error, naming ``name``; remembered
    for hashable arguments."""
    # (The types too: True and 1 are equal keys, not equal arguments.)
    key = (fn, tuple(shape), args, tuple(map(type, args)), *kw.items())
    try:
        return _PROBED[key]
    except KeyError:
        found = _PROBED[key] = _run_probe(name, fn, shape, *args, **kw)
        if len(_PROBED) > _PROBED_MAX:
            _PROBED.clear()
        return found
    except TypeError:  # (an unhashable argument)
        return _run_probe(name, fn, shape, *args, **kw)


_PROBED: dict[tuple[Any, ...], Any] = {}
_PROBED_MAX: Final = 4096


def _run_probe(
    name: str, fn: Callable[..., Any], shape: Sequence[int], *args: Any, **kw: Any
) -> Any:
    try:
        out = fn(_stand_in(shape), *args, **kw)
    except (TypeError, ValueError, IndexError, ZeroDivisionError) as err:
        _core.reraise_named(name, err)
    if isinstance(out, list | tuple):
        parts: list[Any] = list(out)  # pyright: ignore[reportUnknownArgumentType]
        return [tuple(p.shape) for p in parts]
    return tuple(np.shape(out))


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """Axes (an int or a sequence; checked by a probe before) in ``[0, ndim)``."""
    return tuple(normalize_axis_tuple(axis, ndim))


def _checked_axes(
    name: str, axis: Any, ndim: int, what: str | None = None, repeats: bool = False
) -> tuple[int, ...]:
    """Axes (an int or a sequence of ints; negative ones counted from the
    end) in ``[0, ndim)``, with NumPy's errors naming ``name``: an axis out
    of bounds, a repeated one (unless ``repeats``), one that is no integer.
    ``what`` names the argument in the message."""
    try:
        return tuple(normalize_axis_tuple(axis, ndim, what, allow_duplicate=repeats))
    except (TypeError, ValueError) as err:
        _core.reraise_named(name, err)


def _order(name: str, order: Any) -> str:
    """NumPy's ``order`` argument checked, as ``'C'``, ``'F'``, ``'A'`` or
    ``'K'`` (None: ``'C'``)."""
    if order is None:
        return "C"
    if isinstance(order, bytes):
        order = order.decode("latin-1")
    if not isinstance(order, str):
        raise TypeError(f"{name}: order must be str, not {type(order).__name__}")
    letter = order.upper()
    if letter not in ("C", "F", "A", "K"):
        raise ValueError(
            f"{name}: order must be one of 'C', 'F', 'A', or 'K' (got {order!r})"
        )
    return letter


def _new_shape(name: str, old: tuple[int, ...], shape: Any) -> tuple[int, ...]:
    """The shape ``shape`` (a sequence of ints, one of them may be negative:
    the length left) for the elements of an array of shape ``old``."""
    try:
        dims = [operator.index(d) for d in shape]
    except TypeError as err:
        _core.reraise_named(name, err)
    size = math.prod(old)
    unknown = [i for i, d in enumerate(dims) if d < 0]
    if len(unknown) > 1:
        raise ValueError(f"{name}: can only specify one unknown dimension")
    known = math.prod(d for d in dims if d >= 0)
    if unknown and known and size % known == 0:
        dims[unknown[0]] = size // known
    elif unknown or known != size:
        raise ValueError(
            f"{name}: cannot reshape array of size {size} into shape {tuple(dims)}"
        )
    return tuple(dims)


# Reshaping and permuting axes bind lax.reshape / lax.transpose on every
# path; eagerly their results are views of the operand's memory, as in
# NumPy (an Array's memory never changes, so a view is as good as a copy).


def _reshaped(x: Any, shape: tuple[int, ...]) -> Any:
    """``x`` (an array) in ``shape`` (checked before: a tuple of ints)."""
    if tuple(x.shape) == shape:
        return x
    return reshape_p.bind(x, new_sizes=shape, dimensions=None)


def _permuted(x: Any, perm: Sequence[int]) -> Any:
    """``x`` (an array) with its axes permuted (checked before)."""
    perm = tuple(perm)
    if perm == tuple(range(len(perm))):
        return x
    return transpose_p.bind(x, permutation=perm)


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
    return _reshape("reshape", _arr(a, "reshape"), shape, order)  # type: ignore[no-any-return]


def _reshape(name: str, x: Any, shape: Any, order: Any) -> Any:
    order = _order(name, order)
    new = _new_shape(name, tuple(x.shape), shape)
    if order == "K":
        raise ValueError(f"{name}: order 'K' is not permitted for reshaping")
    # ('A' and 'K' read an Array in row-major order, its logical order.)
    if order == "F":
        # Column-major: the row-major order of the reversed axes.
        flipped = _permuted(x, tuple(reversed(range(x.ndim))))
        return _permuted(
            _reshaped(flipped, new[::-1]), tuple(reversed(range(len(new))))
        )
    return _reshaped(x, new)


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
    x = _arr(a, "ravel")
    order = _order("ravel", order)
    return _reshape("ravel", x, (-1,), "F" if order == "F" else "C")  # type: ignore[no-any-return]


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
    x = _arr(a, "transpose")
    nd = x.ndim
    if axes is None:
        return _permuted(x, tuple(reversed(range(nd))))  # type: ignore[no-any-return]
    given = (axes,) if isinstance(axes, int | np.integer) else axes
    try:
        items = [operator.index(ax) for ax in given]
    except TypeError as err:
        _core.reraise_named("transpose", err)
    if len(items) != nd:
        raise ValueError(f"transpose: axes don't match array: {axes} for {nd} axes")
    perm = _checked_axes("transpose", items, nd, repeats=True)
    if len(set(perm)) != nd:
        raise ValueError(f"transpose: repeated axis in transpose: {axes}")
    return _permuted(x, perm)  # type: ignore[no-any-return]


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
    v = _arr(x, "matrix_transpose")
    if v.ndim < 2:
        raise ValueError(
            f"matrix_transpose: needs at least 2 dimensions, got shape {v.shape}"
        )
    nd = v.ndim
    return _permuted(v, (*range(nd - 2), nd - 1, nd - 2))  # type: ignore[no-any-return]


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
    x = _arr(a, "moveaxis")
    nd = x.ndim
    src = _checked_axes("moveaxis", source, nd, "source")
    dst = _checked_axes("moveaxis", destination, nd, "destination")
    if len(src) != len(dst):
        raise ValueError(
            "moveaxis: `source` and `destination` arguments must have the same "
            f"number of elements, got {len(src)} and {len(dst)}"
        )
    order = [n for n in range(nd) if n not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return _permuted(x, order)  # type: ignore[no-any-return]


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
    x = _arr(a, "swapaxes")
    first = _core.index_of(axis1, "swapaxes: axis1")
    second = _core.index_of(axis2, "swapaxes: axis2")
    (i,) = _checked_axes("swapaxes", first, x.ndim, "axis1")
    (j,) = _checked_axes("swapaxes", second, x.ndim, "axis2")
    perm = list(range(x.ndim))
    perm[i], perm[j] = j, i
    return _permuted(x, perm)  # type: ignore[no-any-return]


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
    x = _arr(a, "expand_dims")
    given = axis if isinstance(axis, tuple | list) else (axis,)
    nd = x.ndim + len(given)
    new = _checked_axes("expand_dims", given, nd)
    lengths = iter(x.shape)
    shape = tuple(1 if d in new else next(lengths) for d in range(nd))
    return _reshaped(x, shape)  # type: ignore[no-any-return]


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
    x = _arr(a, "squeeze")
    if axis is None:
        gone = tuple(d for d, n in enumerate(x.shape) if n == 1)
    elif x.ndim == 0 and not isinstance(axis, tuple) and axis in (0, -1):
        gone = ()  # (NumPy's exception for a 0-d array)
    else:
        try:
            one: Any = axis
            given = axis if isinstance(axis, tuple) else (operator.index(one),)
        except TypeError as err:
            _core.reraise_named("squeeze", err)
        gone = _checked_axes("squeeze", given, x.ndim, repeats=True)
        if len(set(gone)) != len(gone):
            raise ValueError(f"squeeze: duplicate value in 'axis': {axis}")
        if any(x.shape[d] != 1 for d in gone):
            raise ValueError(
                "squeeze: cannot select an axis to squeeze out which has size not "
                f"equal to one: axis {axis} of shape {tuple(x.shape)}"
            )
    shape = tuple(n for d, n in enumerate(x.shape) if d not in gone)
    return _reshaped(x, shape)  # type: ignore[no-any-return]


def _at_least(nd: int, a: Any) -> Any:
    """``a`` with axes of length 1 added, as NumPy's ``atleast_{nd}d``: in
    front for one dimension, around a vector's axis for three."""
    x = _arr(a, f"atleast_{nd}d")
    shape = tuple(x.shape)
    if len(shape) < nd:
        if len(shape) == 0:
            shape = (1,) * nd
        elif nd == 3:
            shape = (1, *shape, 1) if len(shape) == 1 else (*shape, 1)
        else:
            shape = (1,) * (nd - len(shape)) + shape
    return _reshaped(x, shape)


def _broadcast(x: Any, shape: tuple[int, ...]) -> Any:
    """``x`` broadcast to ``shape`` (checked before), trailing axes aligned."""
    if tuple(x.shape) == shape:
        return x
    n = len(shape)
    return lax.broadcast_in_dim(x, shape, tuple(range(n - x.ndim, n)))


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
    x = _arr(array, "broadcast_to")
    shape = _core.shape_of(shape, "broadcast_to")
    lead = len(shape) - x.ndim
    if lead < 0 or any(
        n not in (1, m) for n, m in zip(x.shape, shape[lead:], strict=True)
    ):
        _core.broadcast_error("broadcast_to", [tuple(x.shape), shape])
    return _broadcast(x, shape)  # type: ignore[no-any-return]


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
    arrays = [_arr(a, "broadcast_arrays") for a in args]
    shapes = [tuple(x.shape) for x in arrays]
    state = _config.current()
    _core.check_rank("broadcast_arrays", shapes, state.rank_promotion)
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        _core.broadcast_error("broadcast_arrays", shapes)
    return [_broadcast(x, shape) for x in arrays]


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
    outs = [_at_least(1, a) for a in arys]
    return outs[0] if len(outs) == 1 else outs


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
    outs = [_at_least(2, a) for a in arys]
    return outs[0] if len(outs) == 1 else outs


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
    outs = [_at_least(3, a) for a in arys]
    return outs[0] if len(outs) == 1 else outs


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
    x = _arr(m, "flip")
    dims = tuple(range(x.ndim)) if axis is None else _checked_axes("flip", axis, x.ndim)
    return lax.rev(x, dims) if dims else x


def _static(value: Any) -> Any:
    """A concrete Array argument that sets a shape (repeats, split points)
    as a NumPy value; a tracer raises its ConcretizationTypeError."""
    return np.asarray(value) if isinstance(value, Array) else value


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
    x = _arr(a, "roll")
    try:
        shift = _static(shift)
    except ConcretizationTypeError:  # a traced shift: sliced where it says
        return _roll_traced(x, shift, axis)  # type: ignore[no-any-return]
    _probe("roll", np.roll, x.shape, shift, axis)
    if axis is None:
        flat = _roll_axes(_reshaped(x, (math.prod(x.shape),)), {0: int(np.sum(shift))})
        return _reshaped(flat, tuple(x.shape))  # type: ignore[no-any-return]
    shifts: dict[int, int] = {}
    for sh, ax in np.broadcast(np.asarray(shift), np.asarray(axis)):
        (d,) = _axes(int(ax), x.ndim)
        shifts[d] = shifts.get(d, 0) + int(sh)
    return _roll_axes(x, shifts)  # type: ignore[no-any-return]


def _roll_traced(x: Any, shift: Any, axis: int | Sequence[int] | None) -> Any:
    """``x`` rolled by a traced ``shift`` (an integer scalar, or one per
    axis): along each axis, the window of ``x`` joined to itself that
    starts ``n - shift mod n`` in (as JAX does for such shifts)."""
    s = _arr(shift, "roll")
    if not _dtypes.isdtype(s.dtype, "integral") or s.ndim > 1:
        raise TypeError(
            f"roll: a traced shift must be an integer scalar or one per axis, "
            f"got {s.dtype.name}{list(s.shape)}"
        )
    if axis is None:
        flat = _roll_traced(_reshaped(x, (math.prod(x.shape),)), s.sum(), 0)
        return _reshaped(flat, tuple(x.shape))
    axes = [axis] if isinstance(axis, int) else list(axis)
    shifts = [s] * len(axes) if s.ndim == 0 else [s[i] for i in range(s.shape[0])]
    if len(shifts) != len(axes):
        raise ValueError(
            f"roll: {len(shifts)} shifts for {len(axes)} axes; give one per axis"
        )
    for sh, ax in zip(shifts, axes, strict=True):
        (d,) = _axes(int(ax), x.ndim)
        n = x.shape[d]
        if n:
            start = n - (sh % n)
            x = lax.dynamic_slice_in_dim(lax.concatenate([x, x], d), start, n, d)
    return x


def _roll_axes(x: Any, shifts: dict[int, int]) -> Any:
    """``x`` rolled by ``shifts[axis]`` along each axis: two slices joined."""
    for ax, sh in shifts.items():
        n = x.shape[ax]
        k = sh % n if n else 0
        if k:
            head = lax.slice_in_dim(x, n - k, n, axis=ax)
            tail = lax.slice_in_dim(x, 0, n - k, axis=ax)
            x = lax.concatenate([head, tail], ax)
    return x


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
    x = _arr(A, "tile")
    reps = _static(reps)
    out = _probe("tile", np.tile, x.shape, reps)
    counts = tuple(int(r) for r in np.atleast_1d(np.asarray(reps)).reshape(-1))
    nd = max(x.ndim, len(counts))
    counts = (1,) * (nd - len(counts)) + counts
    x = _reshaped(x, (1,) * (nd - x.ndim) + tuple(x.shape))
    # Each axis of size s becomes (count, s), then the pairs merge.
    pairs = tuple(v for c, s in zip(counts, x.shape, strict=True) for v in (c, s))
    spread = lax.broadcast_in_dim(x, pairs, tuple(range(1, 2 * nd, 2)))
    return _reshaped(spread, out)  # type: ignore[no-any-return]


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
    x = _arr(a, "repeat")
    repeats = _static(repeats)
    shape = _probe("repeat", np.repeat, x.shape, repeats, axis)
    if axis is None:
        x, ax = _reshaped(x, (math.prod(x.shape),)), 0
    else:
        (ax,) = _axes(axis, x.ndim)
    counts = np.asarray(repeats)
    if counts.size == 1:
        # Each element spread over a new axis of ``count``, merged after it.
        s = tuple(x.shape)
        spread = (*s[: ax + 1], int(counts.reshape(-1)[0]), *s[ax + 1 :])
        dims = (*range(ax + 1), *range(ax + 2, x.ndim + 1))
        out = _reshaped(lax.broadcast_in_dim(x, spread, dims), shape)
    else:
        positions = np.repeat(np.arange(x.shape[ax], dtype=np.int32), counts)
        out = _take_along(x, _int32(positions), ax)
    if total_repeat_length is not None and shape[ax] != total_repeat_length:
        raise ValueError(
            f"repeat: the result has length {shape[ax]}, not "
            f"total_repeat_length={total_repeat_length}"
        )
    return out  # type: ignore[no-any-return]


def _int32(values: Any) -> ArrayImpl:
    return wrap(np.asarray(values, np.int32), _core.aval(np.dtype(np.int32), False))


def _counting(shape: tuple[int, ...], axis: int, dt: Any) -> Any:
    """``0, 1, ...`` along ``axis`` of an integer array of ``shape``: a
    running sum of ones (integers wrap, so the counts are right wherever
    they fit ``dt``). Not ``iota``, which is made whole even while a trace
    records (under eval_shape): ones are a broadcast, recorded there."""
    dt = np.dtype(dt)
    ones = lax.full(shape, 1, dt)
    return lax.sub(lax.cumsum(ones, axis), lax.full((), 1, dt))


@functools.cache
def _along(ax: int, b: int, nd: int) -> lax.GatherDimensionNumbers:
    """The gather of slices along axis ``ax`` of ``nd`` at ``b``-d indices."""
    return lax.GatherDimensionNumbers(
        offset_dims=(*range(ax), *range(ax + b, nd - 1 + b)),
        collapsed_slice_dims=(ax,),
        start_index_map=(ax,),
    )


def _iota(shape: tuple[int, ...], axis: int, dt: Any) -> Any:
    """``0, 1, ...`` along ``axis`` of an integer array of ``shape``:
    ``iota`` when no trace runs; while one does, the running sum of
    :func:`_counting`, which a trace records without making it."""
    if tracer.current_trace() is None:
        return iota_p.bind(dtype=np.dtype(dt), shape=shape, dimension=axis)
    return _counting(shape, axis, dt)


def _take_along(x: Any, idx: Any, ax: int, fill: Any = None) -> Any:
    """``x``'s slices at integer indices ``idx`` (in range, or out of range
    to give ``fill`` when it is given) along axis ``ax``: the result's axis
    ``ax`` is replaced by ``idx``'s axes. One gather (bound directly: the
    dimension numbers are known good)."""
    shape = tuple(x.shape)
    if fill is not None and not shape[ax]:
        out = (*shape[:ax], *idx.shape, *shape[ax + 1 :])
        return _weak_as(lax.full(out, fill, x.dtype), x)
    column = reshape_p.bind(idx, new_sizes=(*idx.shape, 1), dimensions=None)
    return gather_p.bind(
        x,
        column,
        dimension_numbers=_along(ax, idx.ndim, len(shape)),
        # (An empty axis: windows of none; its indices are out of bounds.)
        slice_sizes=(*shape[:ax], min(1, shape[ax]), *shape[ax + 1 :]),
        mode=_PROMISED if fill is None else _FILLED,
        fill_value=None if fill is None else np.asarray(fill).astype(x.dtype)[()],
    )


_PROMISED: Final = lax.GatherScatterMode.PROMISE_IN_BOUNDS
_FILLED: Final = lax.GatherScatterMode.FILL_OR_DROP


def _weak_as(out: Any, x: Any) -> Any:
    """``out`` (of ``x``'s dtype) with ``x``'s weak flag."""
    if out.weak_type == x.weak_type:
        return out
    return convert_element_type_p.bind(out, new_dtype=x.dtype, weak_type=x.weak_type)


# -- joining ----------------------------------------------------------------


def _joined(name: str, arrays: Any, min_ndim: int = 0) -> tuple[list[Any], bool]:
    """The arrays to join, promoted to one dtype (and weak flag)."""
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
    operands = _promoted(name, elements)
    if min_ndim and len({x.ndim for x in operands}) > 1:
        raise TypeError(
            f"{name}: cannot join arrays with different numbers of dimensions "
            f"(shapes {', '.join(str(tuple(x.shape)) for x in operands)})"
        )
    return operands, bool(operands[0].weak_type)


def _promoted(name: str, args: Sequence[Any]) -> list[Any]:
    """``args`` converted as the plan of ``name`` says: to its dtype and
    weak flag, arrays whose values could change checked where they run
    (``convert_element_type``'s check), Python scalars checked now."""
    plain = [_plain(a) if isinstance(a, Array) else a for a in args]
    return promoted(name, plain, keep_weak=True)[0]


def _join(name: str, operands: list[Any], axis: int) -> Any:
    """``operands`` (one dtype) joined along ``axis``, with NumPy's shape
    errors, named."""
    first = tuple(operands[0].shape)
    if not first:
        raise ValueError(f"{name}: zero-dimensional arrays cannot be concatenated")
    (ax,) = _checked_axes(name, axis, len(first))
    for i, x in enumerate(operands[1:], 1):
        shape = tuple(x.shape)
        if len(shape) != len(first):
            raise ValueError(
                f"{name}: all the input arrays must have same number of "
                f"dimensions, but the array at index 0 has {len(first)} "
                f"dimension(s) and the array at index {i} has {len(shape)} "
                "dimension(s)"
            )
        for d, (n, m) in enumerate(zip(first, shape, strict=True)):
            if d != ax and n != m:
                raise ValueError(
                    f"{name}: all the input array dimensions except for the "
                    f"concatenation axis must match exactly, but along dimension "
                    f"{d}, the array at index 0 has size {n} and the array at "
                    f"index {i} has size {m}"
                )
    return operands[0] if len(operands) == 1 else lax.concatenate(operands, ax)


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
    operands, _ = _joined("concatenate", arrays, 1)
    out = _join("concatenate", operands, _core.index_of(axis, "concatenate: axis"))
    if len(operands) == 1:
        out = lax.reshape(out, tuple(out.shape))  # (a new array, as always)
    return out if dtype is None else _astype(out, dtype, "concatenate")


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
    operands, _ = _joined("stack", arrays)
    if len({tuple(x.shape) for x in operands}) != 1:
        shapes = ", ".join(str(tuple(x.shape)) for x in operands)
        raise ValueError(
            f"stack: all input arrays must have the same shape, got {shapes}"
        )
    index = _core.index_of(axis, "stack: axis")
    (ax,) = _checked_axes("stack", index, operands[0].ndim + 1)
    rows = [lax.expand_dims(x, (ax,)) for x in operands]
    res = rows[0] if len(rows) == 1 else lax.concatenate(rows, ax)
    return res if dtype is None else _astype(res, dtype, "stack")


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
    operands, _ = _joined("hstack", tup)
    rows = [_reshaped(x, (1,)) if x.ndim == 0 else x for x in operands]
    res = _join("hstack", rows, 0 if rows[0].ndim == 1 else 1)
    if len(rows) == 1 and res is operands[0]:
        res = lax.reshape(res, tuple(res.shape))
    return res if dtype is None else _astype(res, dtype, "hstack")


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
    operands, _ = _joined("vstack", tup)
    rows = [_reshaped(x, (1, *x.shape)) if x.ndim < 2 else x for x in operands]
    rows = [
        _reshaped(x, (1, 1)) if x.ndim == 1 and x.shape == (1,) else x for x in rows
    ]
    res = _join("vstack", rows, 0)
    if len(rows) == 1 and res is operands[0]:
        res = lax.reshape(res, tuple(res.shape))
    return res if dtype is None else _astype(res, dtype, "vstack")


def _astype(x: Any, dtype: Any, where: str) -> Array:
    """``x`` in the ``dtype=`` of ``where``: values that would change
    refused, where they are known."""
    dt = _requested(dtype, where)
    if dt == x.dtype and not x.weak_type:
        return x  # type: ignore[no-any-return]
    check = Check("operand", where, 0)
    return convert_element_type_p.bind(x, new_dtype=dt, weak_type=False, check=check)  # type: ignore[no-any-return]


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
    x = _arr(ary, "split")
    cuts = _static(indices_or_sections)
    _probe("split", np.split, x.shape, cuts, axis=axis)
    (ax,) = _axes(axis, x.ndim)
    n = x.shape[ax]
    bounds: list[tuple[int, int]] = []
    if np.ndim(cuts) == 0:
        step = n // int(cuts)
        bounds = [(i * step, (i + 1) * step) for i in range(int(cuts))]
    else:
        edges = [int(c) for c in np.asarray(cuts).reshape(-1)]
        starts, stops = [0, *edges], [*edges, n]
        for lo, hi in zip(starts, stops, strict=True):
            lo, hi, _ = slice(lo, hi).indices(n)
            bounds.append((lo, max(lo, hi)))
    return [lax.slice_in_dim(x, lo, hi, axis=ax) for lo, hi in bounds]


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
    """``a[key]``: basic indexing (ints, slices, None, ...) by slicing and
    reshaping, indexing with integer arrays (and bool masks whose values
    are known) by one gather; an index out of bounds raises IndexError."""
    x = _arr(a, "getitem")
    t = type(key)  # pyright: ignore[reportUnknownVariableType]
    if (t is int or t is slice) and x.ndim:
        return _sliced(x, key)  # type: ignore[no-any-return]
    return _indexed(x, key, _NUMPY_WORDS)  # type: ignore[no-any-return]


def _sliced(x: Any, key: int | slice) -> Any:
    """``x[key]`` for an int or a slice along the first axis (the commonest
    indexing, kept short): one ``lax.slice`` (after ``rev`` for a negative
    step), then a reshape dropping the axis of an int."""
    n = x.shape[0]
    if type(key) is int:
        k = key + n if key < 0 else key
        if not 0 <= k < n:
            raise IndexError(f"index {key} is out of bounds for axis 0 with size {n}")
        row = lax.slice_in_dim(x, k, k + 1)
        return _reshaped(row, tuple(x.shape[1:]))
    assert isinstance(key, slice)
    lo, hi, step = key.indices(n)
    m = len(range(lo, hi, step))
    if step < 0:
        x, lo, step = lax.rev(x, (0,)), n - 1 - lo, -step
    if lo == 0 and step == 1 and m == n:
        return x
    return lax.slice_in_dim(x, lo, lo + (m - 1) * step + 1 if m else lo, step)


class _Words(NamedTuple):
    """How an indexing function reads its index and speaks of it."""

    where: str  # the prefix of messages ("" for x[...], NumPy's messages)
    mode: str | None  # what an index out of bounds gives (None: IndexError)
    negative: bool  # negative indices count from the end
    hint: str  # said after "index i is out of bounds ..."
    fill: Any = None  # the fill value of mode 'fill'/'drop'


_NUMPY_WORDS: Final = _Words("", None, True, "")


class _Entry(NamedTuple):
    """One part of an index: ``kind`` is ``'none'`` (a new axis),
    ``'slice'``, ``'int'``, ``'array'`` (integers, along axis ``axis``) or
    ``'bool0'`` (a 0-d bool: a new axis of length 1 or 0)."""

    kind: str
    axis: int
    value: Any


def _int_position(e: _Entry, n: int, words: _Words) -> int:
    """The position an integer entry ``e`` picks on its axis of length
    ``n`` (a negative one counted from the end where ``words`` say so).

    Raises:
      IndexError: the position is out of bounds.
    """
    k: int = e.value + n if e.value < 0 and words.negative else e.value
    if not 0 <= k < n:
        raise IndexError(
            f"{words.where + ': ' if words.where else ''}index "
            f"{e.value} is out of bounds for axis {e.axis} with size "
            f"{n}{words.hint}"
        )
    return k


def _index_entries(shape: tuple[int, ...], key: Any, words: _Words) -> list[_Entry]:
    """``key`` read against an array of ``shape``: the ellipsis expanded,
    masks (whose values are known) turned into their integer indices."""
    raw: list[Any] = list(key) if isinstance(key, tuple) else [key]  # pyright: ignore[reportUnknownArgumentType]
    parts: list[Any] = []
    for p in raw:
        if isinstance(p, list):
            items: list[Any] = p  # pyright: ignore[reportUnknownVariableType]
            p = np.asarray(items)
        if isinstance(p, Array):
            if not _dtypes.isdtype(p.dtype, ("integral", "bool")):
                raise IndexError(
                    "arrays used as indices must be of integer or bool type, "
                    f"got {p.dtype}"
                )
            if p.dtype == bool:
                if type(p) is BackendArray:
                    # Its values decide the shape: read from its device.
                    p = _array.placed(p, NUMPY, None)
                if type(p) is not ArrayImpl:
                    raise ConcretizationTypeError(
                        f"indexing with a traced boolean mask {p!r}: the result's "
                        "shape would depend on its values. Use "
                        "typelattice.numpy.where(mask, x, fill) to keep the shape, "
                        "or nonzero(mask, size=n) for a fixed number of indices."
                    )
                p = p._value
            else:
                p = _plain(p)
        elif isinstance(p, np.ndarray | np.bool_) or type(p) is bool:
            p = np.asarray(p)
            if p.dtype.kind not in "biu":
                if words.where:
                    raise IndexError(
                        f"{words.where}: indices must be integers, slices, None, "
                        f"... or bool arrays, got {p.dtype}"
                    )
                raise IndexError(_VALID_INDICES)
        elif not (p is None or p is Ellipsis or isinstance(p, slice)):
            try:
                p = operator.index(p)
            except TypeError:
                raise IndexError(_VALID_INDICES) from None
        parts.append(p)
    if sum(p is Ellipsis for p in parts) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(_consumes(p) for p in parts)
    if consumed > len(shape):
        if words.where:
            raise IndexError(
                f"{words.where}: too many indices for an array of dimension "
                f"{len(shape)}"
            )
        raise IndexError(
            f"too many indices for array: array is {len(shape)}-dimensional, "
            f"but {consumed} were indexed"
        )
    if not any(p is Ellipsis for p in parts):
        parts.append(Ellipsis)
    entries: list[_Entry] = []
    axis = 0
    for p in parts:
        if p is None:
            entries.append(_Entry("none", -1, None))
        elif p is Ellipsis:
            for _ in range(len(shape) - consumed):
                entries.append(_Entry("slice", axis, slice(None)))
                axis += 1
        elif isinstance(p, slice):
            entries.append(_Entry("slice", axis, p))
            axis += 1
        elif isinstance(p, int):
            entries.append(_Entry("int", axis, p))
            axis += 1
        elif _is_mask(p):
            mask: np.ndarray[Any, Any] = p
            if mask.ndim == 0:
                entries.append(_Entry("bool0", -1, bool(mask)))
                continue
            for j, (n, m) in enumerate(zip(shape[axis:], mask.shape, strict=False)):
                if n != m:
                    raise IndexError(
                        f"{words.where + ': ' if words.where else ''}boolean index "
                        f"did not match indexed array along axis {axis + j}; size "
                        f"of axis is {n} but size of corresponding boolean axis is {m}"
                    )
            for j, found in enumerate(np.nonzero(mask)):
                entries.append(_Entry("array", axis + j, _int32(found)))
            axis += mask.ndim
        else:
            value = p if isinstance(p, Array) else from_numpy(p)
            entries.append(_Entry("array", axis, value))
            axis += 1
    return entries


def _consumes(p: Any) -> int:
    """How many axes of the indexed array a part of an index reads."""
    if p is None or p is Ellipsis:
        return 0
    return int(np.ndim(p)) if _is_mask(p) else 1


_VALID_INDICES: Final = (
    "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
    "integer or boolean arrays are valid indices"
)


def _slices(x: Any, entries: list[_Entry]) -> Any:
    """``x`` sliced by the slice entries (negative steps by ``rev``)."""
    nd = x.ndim
    starts, stops, steps = [0] * nd, list(x.shape), [1] * nd
    flipped: list[int] = []
    for e in entries:
        if e.kind != "slice":
            continue
        n = x.shape[e.axis]
        try:
            lo, hi, step = e.value.indices(n)
        except (TypeError, ValueError) as err:
            _core.reraise_named("getitem", err)
        m = len(range(lo, hi, step))
        if step < 0:
            flipped.append(e.axis)
            lo, step = n - 1 - lo, -step
        starts[e.axis] = lo
        stops[e.axis] = lo + (m - 1) * step + 1 if m else lo
        steps[e.axis] = step
    if flipped:
        x = lax.rev(x, tuple(flipped))
    if starts != [0] * nd or stops != list(x.shape) or steps != [1] * nd:
        x = lax.slice(x, starts, stops, steps)
    return x


def _indexed(x: Any, key: Any, words: _Words) -> Any:
    """``x[key]`` with ``words``' mode: NumPy's basic and advanced indexing
    on primitives (slices, reshapes, one gather)."""
    if isinstance(key, Array) and x.ndim and _dtypes.kind_of(key.dtype) in "iu":
        # One array of integers: a gather along the first axis.
        checked = _checked_index(_plain(key), x.shape[0], 0, words)
        fills = words.mode in ("fill", "drop")
        return _take_along(x, checked, 0, words.fill if fills else None)
    shape = tuple(x.shape)
    entries = _index_entries(shape, key, words)
    advanced = any(e.kind in ("array", "bool0") for e in entries)
    if not advanced and words.mode is None:
        # Basic indexing: ints are slices of one, their axes removed.
        for i, e in enumerate(entries):
            if e.kind == "int":
                k = _int_position(e, shape[e.axis], words)
                entries[i] = _Entry("slice", e.axis, slice(k, k + 1))
                entries.append(_Entry("drop", e.axis, None))
        y = _slices(x, entries)
        out: list[int] = []
        for e in entries:
            if e.kind == "none":
                out.append(1)
            elif e.kind == "slice" and not any(
                d.kind == "drop" and d.axis == e.axis for d in entries
            ):
                out.append(y.shape[e.axis])
        return _reshaped(y, tuple(out))
    y = _slices(x, entries)
    picks = [e for e in entries if e.kind in ("array", "int")]
    # The static checks first (the shapes), then the values (the indices).
    shapes = [tuple(np.shape(e.value)) for e in picks]
    shapes += [(1,) if e.value else (0,) for e in entries if e.kind == "bool0"]
    try:
        batch = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        shown = " ".join(str(s) for s in shapes)
        raise IndexError(
            f"{words.where + ': ' if words.where else ''}shape mismatch: indexing "
            f"arrays could not be broadcast together with shapes {shown}"
        ) from None
    indices: list[Any] = []
    for e in picks:
        index: Any = e.value if e.kind == "array" else _int32(e.value)
        indices.append(_checked_index(index, x.shape[e.axis], e.axis, words))
    taken = [e.axis for e in picks]
    rest = [e.axis for e in entries if e.kind == "slice"]
    kept = tuple(y.shape[d] for d in rest)
    nb = len(batch)
    if taken:
        y = _permuted(y, taken + rest)
        columns = [
            lax.broadcast_in_dim(i, (*batch, 1), tuple(range(nb - i.ndim, nb)))
            for i in indices
        ]
        starts = columns[0] if len(columns) == 1 else lax.concatenate(columns, nb)
        k = len(taken)
        dn = lax.GatherDimensionNumbers(
            offset_dims=tuple(range(nb, nb + len(rest))),
            collapsed_slice_dims=tuple(range(k)),
            start_index_map=tuple(range(k)),
        )
        # (An empty axis: windows of none; its indices are out of bounds.)
        sizes = tuple(min(1, y.shape[i]) for i in range(k)) + kept
        if words.mode in ("fill", "drop") and 0 in sizes[:k]:
            g = _weak_as(lax.full((*batch, *kept), words.fill, y.dtype), y)
        elif words.mode in ("fill", "drop"):
            g = lax.gather(y, starts, dn, sizes, mode="fill", fill_value=words.fill)
        else:
            g = lax.gather(y, starts, dn, sizes)
    else:  # 0-d bools only: a new axis of length 1 or 0
        g = lax.broadcast_in_dim(y, (*batch, *kept), tuple(range(nb, nb + len(rest))))
    # The basic axes (slices, new axes) in order; the advanced ones where the
    # first of them is when no slice separates them, else first (NumPy's rule).
    kinds = [e.kind for e in entries if e.kind != "none"]
    first = next(
        i for i, e in enumerate(entries) if e.kind in ("array", "int", "bool0")
    )
    last = max(i for i, e in enumerate(entries) if e.kind in ("array", "int", "bool0"))
    together = all(e.kind != "slice" for e in entries[first:last])
    at = sum(e.kind in ("none", "slice") for e in entries[:first]) if together else 0
    basic = [
        1 if e.kind == "none" else 0 for e in entries if e.kind in ("none", "slice")
    ]
    sizes_out: list[int] = []
    it = iter(kept)
    for new in basic:
        sizes_out.append(1 if new else next(it))
    del kinds
    g = _reshaped(g, (*batch, *sizes_out))
    if at:
        perm = [*range(nb, nb + at), *range(nb), *range(nb + at, nb + len(sizes_out))]
        g = lax.transpose(g, tuple(perm))
    return g


def _checked_index(i: Any, n: int, axis: int, words: _Words) -> Any:
    """Integer indices along an axis of ``n``, as ``words.mode`` says: int32
    positions in ``[0, n)`` (``n`` for the positions to fill or drop)."""
    if _dtypes.kind_of(i.dtype) not in "iu":
        raise IndexError(
            f"{words.where}: indices must be integers, slices, None, ... or bool "
            f"arrays, got {i.dtype}"
        )
    mode = words.mode
    if mode == "clip" and n == 0:
        raise IndexError(f"{words.where}: cannot clip indices to an empty axis {axis}")
    how = {"clip": "clip", "fill": "fill", "drop": "fill", "wrap": "wrap"}.get(
        mode or "", "raise"
    )
    where = words.where + ": " if words.where else ""
    check = IndexCheck(axis, n, words.negative, how, where, words.hint)
    return check_index(i, check)


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


def _is_mask(a: Any) -> bool:
    dtype: Any = getattr(a, "dtype", None)
    return isinstance(a, np.ndarray) and dtype == np.dtype(bool)


def _gather(  # pyright: ignore[reportUnusedFunction]
    a: Any,
    index: Any,
    mode: str | None,
    fill_value: Any,
    wrap_negative: bool,
) -> Array:
    """``x.at[index].get(mode=..., fill_value=...)``."""
    where = "x.at[...].get"
    if mode is not None and mode not in _GATHER_MODES:
        raise ValueError(
            f"{where}: mode={mode!r} is not one of "
            f"{', '.join(map(repr, _GATHER_MODES))}"
        )
    x = _arr(a, where)
    fill = None
    if mode in ("fill", "drop"):
        fill = _fill_for(fill_value, x.dtype, where)[()]
    words = _Words(where, mode, wrap_negative, _AT_HINT, fill)
    if mode == "promise_in_bounds":
        words = words._replace(mode=None)
    return _indexed(x, index, words)  # type: ignore[no-any-return]


_AT_HINT: Final = (
    "; pass mode='clip' to clamp indices, or mode='fill' (mode='drop') to fill "
    "(skip) those positions"
)


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
    x = _arr(a, "take")
    if isinstance(indices, list | tuple):
        raise TypeError("take: indices must be an array, not a list; use asarray")
    if isinstance(indices, Array):
        idx = _plain(indices)
    else:
        iv, _ = _array.operand(indices, "take", 1)
        value = np.asarray(iv)
        idx = wrap(value, _core.aval(value.dtype, False))
    if _dtypes.kind_of(idx.dtype) not in "iu":
        raise TypeError(f"take: indices must be integers, got {idx.dtype}")
    if axis is None:
        x = _reshaped(x, (math.prod(x.shape),))
        ax = 0
    else:
        ax = _core.index_of(axis, "take: axis")
        if not -x.ndim <= ax < x.ndim:
            raise ValueError(
                f"take: axis {ax} is out of bounds for an array of dimension {x.ndim}"
            )
        ax %= x.ndim
    n = x.shape[ax]
    if mode is None or mode == "raise":
        hint = (
            "; pass mode='fill' (with fill_value=), 'clip' or 'wrap' to say what "
            "an out-of-bounds index gives"
        )
        check = IndexCheck(ax, n, True, "raise", "take: ", hint)
        return _take_along(x, check_index(idx, check), ax)  # type: ignore[no-any-return]
    if mode in ("clip", "wrap"):
        if n == 0:
            raise IndexError(f"take: cannot {mode} indices to an empty axis {ax}")
        check = IndexCheck(ax, n, False, mode, "take: ", "")
        return _take_along(x, check_index(idx, check), ax)  # type: ignore[no-any-return]
    if mode != "fill":
        raise ValueError(
            f"take: mode={mode!r} is not one of 'fill', 'clip', 'wrap' "
            "(or 'raise', to raise IndexError for an out-of-bounds index)"
        )
    fill = _fill_for(fill_value, x.dtype, "take")[()]
    check = IndexCheck(ax, n, True, "fill", "take: ", "")
    return _take_along(x, check_index(idx, check), ax, fill)  # type: ignore[no-any-return]


@lax_function
def take_along_axis(
    arr: ArrayLike,
    indices: ArrayLike,
    axis: int | None,
    mode: str | None = None,
    fill_value: ArrayLike | None = None,
) -> Array:
    """Elements of ``arr`` at ``indices`` along ``axis``, matched position
    by position along the other axes, as jax.numpy's ``take_along_axis``.

    ``indices`` has ``arr``'s number of dimensions; along the other axes
    the two broadcast. Negative indices count from the end. ``mode`` says
    what an out-of-bounds index gives, as for :func:`take`: ``'fill'``
    (``fill_value``, by default NaN for inexact types), ``'clip'``,
    ``'wrap'``, or ``'raise'`` (the default: jax.numpy's default ``'fill'``
    would hide a wrong index, so it must be asked for).

    Args:
      arr: an array.
      indices: an integer array of ``arr``'s rank (1-d for ``axis=None``).
      axis: the axis to take along, or None for the flattened array.
      mode: ``'fill'``, ``'clip'``, ``'wrap'`` or ``'raise'`` (default).
      fill_value: the value for out-of-bounds indices with ``'fill'``.

    Returns:
      An Array with ``arr``'s dtype and weak flag, of the broadcast shape
      with ``indices``' length along ``axis``.

    Raises:
      IndexError: an out-of-bounds index without a ``mode`` saying what it
        gives.
      ValueError: ``indices`` of another rank, or shapes that do not
        broadcast.

    >>> import typelattice.numpy as tnp
    >>> x = tnp.asarray([[10, 30, 20], [60, 40, 50]])
    >>> tnp.take_along_axis(x, tnp.argsort(x, axis=1), axis=1)
    Array([[10, 20, 30],
           [40, 50, 60]], dtype=int32)
    >>> tnp.take_along_axis(x, tnp.asarray([[-1], [3]]), 1, mode='fill', fill_value=0)
    Array([[20],
           [ 0]], dtype=int32)
    """
    where = "take_along_axis: "
    x = _arr(arr, "take_along_axis")
    if isinstance(indices, list | tuple):
        raise TypeError(f"{where}indices must be an array, not a list; use asarray")
    if isinstance(indices, Array):
        idx = _plain(indices)
    else:
        iv, _ = _array.operand(indices, "take_along_axis", 1)
        value = np.asarray(iv)
        idx = wrap(value, _core.aval(value.dtype, False))
    if _dtypes.kind_of(idx.dtype) not in "iu":
        raise TypeError(f"{where}indices must be integers, got {idx.dtype}")
    if axis is None:
        if idx.ndim != 1:
            raise ValueError(
                f"{where}with axis=None, indices must be 1-d, got shape {idx.shape}"
            )
        x = _reshaped(x, (math.prod(x.shape),))
        ax = 0
    else:
        ax = _core.index_of(axis, "take_along_axis: axis")
        if not -x.ndim <= ax < x.ndim:
            raise ValueError(
                f"{where}axis {ax} is out of bounds for an array of dimension {x.ndim}"
            )
        ax %= x.ndim
    if idx.ndim != x.ndim:
        raise ValueError(
            f"{where}indices and arr must have the same number of dimensions; "
            f"got indices of shape {idx.shape} for arr of shape {x.shape}"
        )
    others = [
        (a, b)
        for d, (a, b) in enumerate(zip(x.shape, idx.shape, strict=True))
        if d != ax
    ]
    try:
        common = [np.broadcast_shapes((a,), (b,))[0] for a, b in others]
    except ValueError:
        raise ValueError(
            f"{where}arr of shape {x.shape} and indices of shape {idx.shape} do "
            f"not broadcast along the axes other than {ax}"
        ) from None
    x = broadcast_to(x, (*common[:ax], x.shape[ax], *common[ax:]))
    idx = broadcast_to(idx, (*common[:ax], idx.shape[ax], *common[ax:]))
    n = x.shape[ax]
    fill = None
    if mode is None or mode == "raise":
        hint = (
            "; pass mode='fill' (with fill_value=), 'clip' or 'wrap' to say what "
            "an out-of-bounds index gives"
        )
        check = IndexCheck(ax, n, True, "raise", where, hint)
    elif mode in ("clip", "wrap"):
        if n == 0:
            raise IndexError(f"{where}cannot {mode} indices to an empty axis {ax}")
        check = IndexCheck(ax, n, True, mode, where, "")
    elif mode == "fill":
        fill = _fill_for(fill_value, x.dtype, "take_along_axis")[()]
        check = IndexCheck(ax, n, True, "fill", where, "")
    else:
        raise ValueError(
            f"{where}mode={mode!r} is not one of 'fill', 'clip', 'wrap' "
            "(or 'raise', to raise IndexError for an out-of-bounds index)"
        )
    if fill is not None and n == 0:
        return _weak_as(lax.full(idx.shape, fill, x.dtype), x)  # type: ignore[no-any-return]
    positions = check_index(idx, check)
    rest = tuple(d for d in range(x.ndim) if d != ax)
    dn = lax.GatherDimensionNumbers(
        offset_dims=(),
        collapsed_slice_dims=(ax,),
        start_index_map=(ax,),
        operand_batching_dims=rest,
        start_indices_batching_dims=rest,
    )
    column = reshape_p.bind(positions, new_sizes=(*idx.shape, 1), dimensions=None)
    return gather_p.bind(  # type: ignore[no-any-return]
        x,
        column,
        dimension_numbers=dn,
        slice_sizes=(1,) * x.ndim,
        mode=_PROMISED if fill is None else _FILLED,
        fill_value=None if fill is None else np.asarray(fill).astype(x.dtype)[()],
    )


def _fitted_update(update: Any, shape: tuple[int, ...], where: str) -> Any:
    """The values of an ``.at[]`` update (or ``ufunc.at``) for an indexed
    part of ``shape``: checked to broadcast to it, their leading axes of
    length 1 beyond its rank dropped."""
    vshape = tuple(update.shape)
    try:
        if np.broadcast_shapes(shape, vshape) != shape:
            raise ValueError
    except ValueError:
        raise ValueError(
            f"{where}: values of shape {vshape} do not broadcast to the shape "
            f"{shape} of the indexed part"
        ) from None
    if update.ndim > len(shape):  # leading axes of length 1
        return _reshaped(update, vshape[update.ndim - len(shape) :])
    return update


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

    The positions ``index`` selects are found by indexing the numbers of
    ``x``'s elements (an iota, as ``x[index]`` would index ``x``); the values
    are scattered there into the flattened ``x`` by the primitive that
    combines them, whose rules differentiate it.
    """
    scatter = _SCATTERS.get(ufunc.__name__ if ufunc is not None else "set")
    if scatter is None:
        return _scatter_at(x, index, values, ufunc, name, mode, wrap_negative, label)
    where = label or f"x.at[...].{name}"
    target = _arr(x, where)
    dt, weak = target.dtype, target.weak_type
    update = _fitting_array(values, dt, weak, where, "store")
    if mode is not None and mode not in _GATHER_MODES:
        raise ValueError(
            f"{where}: mode={mode!r} is not one of "
            f"{', '.join(map(repr, _GATHER_MODES))}"
        )
    size = math.prod(target.shape)
    dropping = mode in ("drop", "fill")
    words = _Words(where, "fill" if dropping else mode, wrap_negative, _AT_HINT, -1)
    if mode == "promise_in_bounds":
        words = words._replace(mode=None)
    positions = _basic_positions(tuple(target.shape), index, words)
    if positions is None:
        numbers = _reshaped(_iota((size,), 0, np.int32), tuple(target.shape))
        positions = _indexed(numbers, index, words)
    shape = tuple(positions.shape)
    update = _fitted_update(update, shape, where)
    m = math.prod(shape)
    flat_updates = _reshaped(_broadcast(update, shape), (m,))
    column = _reshaped(positions, (m, 1))
    flat = _reshaped(target, (size,))
    if scatter == "scatter_sub":
        done = _scatter_flat(scatter_add_p, flat, column, lax.neg(flat_updates))
    elif scatter == "scatter_mul" and _unique(positions):
        # Each element multiplied once at most: by a scatter of the factors
        # into ones, which differentiates in the factors too.
        ones = _weak_as(lax.full((size,), 1, dt), target)
        done = lax.mul(flat, _scatter_flat(scatter_p, ones, column, flat_updates))
    else:
        done = _scatter_flat(_SCATTER_PRIMITIVES[scatter], flat, column, flat_updates)
    return _reshaped(done, tuple(target.shape))  # type: ignore[no-any-return]


def _basic_positions(
    shape: tuple[int, ...], index: Any, words: _Words
) -> ArrayImpl | None:
    """The numbers of the elements a basic index (ints, slices, None, ...)
    selects in an array of ``shape``, computed from the index alone; None
    for an index with arrays, or a mode other than raising."""
    if words.mode is not None:
        return None
    parts = index if isinstance(index, tuple) else (index,)  # pyright: ignore[reportUnknownVariableType]
    if any(isinstance(p, Array | np.ndarray | list) for p in parts):  # pyright: ignore[reportUnknownVariableType]
        return None
    entries = _index_entries(shape, index, words)
    if any(e.kind in ("array", "bool0") for e in entries):
        return None
    strides = [math.prod(shape[d + 1 :]) for d in range(len(shape))]
    total: Any = np.zeros((), np.int64)
    for e in entries:
        if e.kind == "none":
            total = total[..., None]
        elif e.kind == "slice":
            along = np.arange(shape[e.axis], dtype=np.int64)[e.value]
            total = total[..., None] + along * strides[e.axis]
        else:
            total = total + _int_position(e, shape[e.axis], words) * strides[e.axis]
    return _int32(total) if math.prod(shape) < 2**31 else from_numpy(total)


# Elements of a 1-d operand, one per index (bound directly: the dimension
# numbers and dtypes are known good).
_ELEMENTS: Final = lax.ScatterDimensionNumbers(
    update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
)


def _scatter_flat(prim: Any, flat: Any, column: Any, updates: Any) -> Any:
    """``prim`` combining ``updates`` into the 1-d ``flat`` at the positions
    ``column`` (positions out of range skipped)."""
    return prim.bind(flat, column, updates, dimension_numbers=_ELEMENTS, mode=_FILLED)


def _unique(positions: Any) -> bool:
    """Whether known positions (a concrete array) name each element once."""
    if type(positions) is not ArrayImpl:
        return False
    found = positions._value[positions._value >= 0]
    return bool(np.unique(found).size == found.size)


_SCATTER_PRIMITIVES: Final = {
    "scatter": scatter_p,
    "scatter_add": scatter_add_p,
    "scatter_mul": scatter_mul_p,
    "scatter_min": scatter_min_p,
    "scatter_max": scatter_max_p,
}

# The primitive combining each update with the array (subtract: add the
# negated values).
_SCATTERS: Final = {
    "set": "scatter",
    "add": "scatter_add",
    "subtract": "scatter_sub",
    "multiply": "scatter_mul",
    "minimum": "scatter_min",
    "maximum": "scatter_max",
}


def _fitting_array(
    value: Any, dt: np.dtype[Any], weak: bool, where: str, verb: str
) -> Any:
    """``value`` as an array of ``dt`` (and the weak flag ``weak``), which
    must not change it: :func:`_fitting`'s checks, an array's values
    checked where they are known (``convert_element_type``'s check)."""
    value = _plain(value)
    if not isinstance(value, Array):
        fitted = np.asarray(_fitting(value, dt, where, verb), dt)
        return wrap(fitted, _core.aval(dt, weak))
    state = _config.current()
    key = _core.aval(value.dtype, value.weak_type)
    joined, _ = _core.result_of([_core.aval(dt, False), key], state)
    if joined != dt:
        raise TypeError(
            f"{where}: cannot {verb} {value.dtype} values in a {dt} array without "
            f"changing them (they promote to {joined}); cast them explicitly, "
            f"e.g. values.astype('{dt}')"
        )
    if value.dtype == dt:
        if value.weak_type == weak:
            return value
        return convert_element_type_p.bind(value, new_dtype=dt, weak_type=weak)
    how = "weak" if value.weak_type else "operand"
    check = Check(how, where, 1)
    return convert_element_type_p.bind(value, new_dtype=dt, weak_type=weak, check=check)


def _at_positions(shape: tuple[int, ...], index: Any, words: _Words) -> Any:
    """The numbers of the elements of an array of ``shape`` that ``index``
    selects, as :func:`_scatter` finds them (an iota indexed by ``index``,
    which may be traced); ``words.mode`` says what an index out of bounds
    gives (positions out of range for ``'drop'``/``'fill'``)."""
    mode = words.mode
    if mode is not None and mode not in _GATHER_MODES:
        raise ValueError(
            f"{words.where}: mode={mode!r} is not one of "
            f"{', '.join(map(repr, _GATHER_MODES))}"
        )
    if mode in ("drop", "fill"):
        words = words._replace(mode="fill")
    elif mode == "promise_in_bounds":
        words = words._replace(mode=None)
    positions = _basic_positions(shape, index, words)
    if positions is None:
        numbers = _reshaped(_iota((math.prod(shape),), 0, np.int32), shape)
        positions = _indexed(numbers, index, words)
    return positions


def _scatter_at(
    x: Any,
    index: Any,
    values: Any,
    ufunc: np.ufunc | Computation | None,
    name: str,
    mode: str | None = None,
    wrap_negative: bool = True,
    label: str | None = None,
    hint: str = _AT_HINT,
) -> Array:
    """``x.at[index].divide(values)`` and ``.power``, and ``ufunc.at`` of the
    functions no scatter primitive computes: NumPy's ``ufunc.at`` (an element
    indexed twice is updated twice), the ``scatter_combine`` primitive with
    the function as its computation; not differentiable.

    The positions are found as :func:`_scatter` finds them (an iota indexed
    by ``index``), so indices may be traced and out-of-bounds ones follow
    ``mode``."""
    where = label or f"x.at[...].{name}"
    target = _arr(x, where)
    dt, weak = target.dtype, target.weak_type
    if name == "divide" and _dtypes.kind_of(dt) not in "fc":
        raise TypeError(
            f"{where}: dividing an {dt} array in place would need a float "
            "result; convert first with x.astype('float32')"
        )
    update = _fitting_array(values, dt, weak, where, "store")
    words = _Words(where, mode, wrap_negative, hint, -1)
    positions = _at_positions(tuple(target.shape), index, words)
    size = math.prod(target.shape)
    shape = tuple(positions.shape)
    update = _fitted_update(update, shape, where)
    m = math.prod(shape)
    if ufunc is None:  # (a plain store is a scatter, which _scatter binds)
        raise TypeError(f"{where}: no function combines the values")
    computation = (
        ufunc if isinstance(ufunc, Computation) else Computation(ufunc.__name__, ufunc)
    )
    done = scatter_combine_p.bind(
        _reshaped(target, (size,)),
        _reshaped(positions, (m,)),
        _reshaped(_broadcast(update, shape), (m,)),
        computation=computation,
    )
    return _reshaped(done, tuple(target.shape))  # type: ignore[no-any-return]


@lax_function
def _scatter_apply(  # pyright: ignore[reportUnusedFunction]
    x: Any,
    index: Any,
    func: Callable[[Array], Array],
    mode: str | None = None,
    wrap_negative: bool = True,
) -> Array:
    """``x.at[index].apply(func)``: ``func`` applied to the elements at
    ``index``, once per occurrence of a position in the index (the
    ``scatter_apply`` primitive, with the positions :func:`_scatter` finds);
    not differentiable."""
    where = "x.at[...].apply"
    target = _arr(x, where)
    key = _core.aval(target.dtype, target.weak_type)
    words = _Words(where, mode, wrap_negative, _AT_HINT, -1)
    positions = _at_positions(tuple(target.shape), index, words)
    name = getattr(func, "__name__", "the function")

    def on_values(values: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        result: Any = func(wrap(values, key))
        if not isinstance(result, Array) or result.dtype != key[0]:
            got = getattr(result, "dtype", type(result).__name__)
            raise TypeError(
                f"{where}: {name} turned {key[0]} values into {got}; it must "
                "keep the dtype (cast x first, e.g. x.astype('float32'))"
            )
        return np.asarray(result).reshape(-1)

    size, m = math.prod(target.shape), math.prod(positions.shape)
    if type(target) is not ArrayImpl or type(positions) is not ArrayImpl:
        # Traced: the dtype func gives is checked now, on m values' shape.
        out = eval_shape(func, ShapeDtypeStruct((m,), key[0], key.weak_type))
        if getattr(out, "dtype", None) != key[0]:
            got = getattr(out, "dtype", type(out).__name__)
            raise TypeError(
                f"{where}: {name} turned {key[0]} values into {got}; it must "
                "keep the dtype (cast x first, e.g. x.astype('float32'))"
            )
    done = scatter_apply_p.bind(
        _reshaped(target, (size,)),
        _reshaped(positions, (m,)),
        func=Applied(name, on_values, (func, key)),
    )
    return _reshaped(done, tuple(target.shape))  # type: ignore[no-any-return]


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
) -> tuple[Any, int]:
    """The array to sort and the axis (None: the flattened array)."""
    if kind is not None:
        raise TypeError(
            f"{name}: the kind argument is not supported (as in jax.numpy); "
            "say stable=True or stable=False instead"
        )
    if order is not None:
        raise TypeError(f"{name}: the order argument is not supported (no fields)")
    x = _arr(a, name)
    if axis is None:
        return _reshaped(x, (math.prod(x.shape),)), 0
    if not x.ndim:
        raise ValueError(f"{name}: a 0-d array has no axis to sort along")
    axis = _core.index_of(axis, f"{name}: axis")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(
            f"{name}: axis {axis} is out of bounds for an array of dimension {x.ndim}"
        )
    return x, axis % x.ndim


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
    x, axis = _sort_operand(a, axis, "sort", kind, order)
    out = lax.sort(x, dimension=axis)
    return lax.rev(out, (axis,)) if descending else out


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
    x, axis = _sort_operand(a, axis, "argsort", kind, order)
    x = stop_gradient(x)  # (the indices have no derivative)
    x64 = _config.current().enable_x64
    n = x.shape[axis] if x.ndim else 1
    if dtype is None:
        dt = _dtypes.default_dtype("i", x64)
    else:
        dt = _astype_dtype(dtype, "argsort")
        if _dtypes.kind_of(dt) not in "iu":
            raise TypeError(f"argsort: dtype must be an integer type, got {dt}")
        if n - 1 > int(_dtypes.iinfo(dt).max):
            raise OverflowError(
                f"argsort: indices up to {n - 1} do not fit in {dt}; give a wider dtype"
            )
    positions = _iota(tuple(x.shape), axis, dt)
    if not descending:
        return lax.sort((x, positions), dimension=axis, num_keys=1)[1]  # type: ignore[no-any-return]
    # Descending and stable: the ascending order of the reversed array, read
    # backwards, counts positions from the end.
    backwards = lax.sort((lax.rev(x, (axis,)), positions), dimension=axis, num_keys=1)[
        1
    ]
    return lax.sub(lax.full((), n - 1, dt), lax.rev(backwards, (axis,)))


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


def _nonzero_operand(a: Any, size: object, name: str) -> tuple[Any, int | None]:
    """The array of nonzero's family (its derivative stripped: the results
    are indices) and its checked ``size=``, None only for an array whose
    values are known (not while jit or eval_shape traces)."""
    if isinstance(a, Array):
        a = stop_gradient(a)
    if size is None:
        if type(a) is BackendArray:
            # Its values decide the shape: read from its device.
            a = _array.placed(a, NUMPY, None)
        if isinstance(a, Array) and type(a) is not ArrayImpl:
            raise ConcretizationTypeError(
                f"{name} of a traced array {a!r}: the number of nonzero "
                "elements is not known while tracing. Give size= (and "
                "fill_value=) for a fixed-size result."
            )
        return _arr(a, name), None
    n = _result_size(size, name)
    return _arr(a, name), n


def _nonzero(
    x: Any,
    size: int | None,
    fill_value: ArrayLike | tuple[ArrayLike, ...] | None,
    name: str,
) -> tuple[Array, ...]:
    """:func:`nonzero` of the array ``x`` (from :func:`_nonzero_operand`),
    with ``name`` in its messages (its family calls it).

    The positions of the first ``size`` nonzero elements of the flattened
    ``x`` (:func:`_first_true`: ranks by a running sum, then a scatter), cut
    into one index per axis by integer division; where there are fewer,
    ``fill_value``. Without ``size``, the count is computed and read first.
    """
    shape = tuple(x.shape)
    if not shape:
        raise ValueError(
            f"{name}: a 0-d array has no indices; use atleast_1d(x) first, as "
            "jax.numpy requires"
        )
    fills: tuple[Any, ...] | None = None
    if size is None:
        if fill_value is not None:
            raise ValueError(f"{name}: fill_value needs size=")
    elif isinstance(fill_value, tuple):
        fills = fill_value
        if len(fills) != len(shape):
            raise ValueError(
                f"{name}: fill_value has {len(fills)} values for an array of "
                f"{len(shape)} dimensions; give one per dimension, or a scalar"
            )
    else:
        fills = (0 if fill_value is None else fill_value,) * len(shape)
    n = math.prod(shape)
    flat = reshape_p.bind(x, new_sizes=(n,), dimensions=None)
    if flat.dtype != np.dtype(bool):
        flat = lax.ne(flat, 0)
    if size is None:
        # Only an array with values gets here: the count is read.
        ones = lax.convert_element_type(flat, np.dtype(np.int32))
        size = int(lax.reduce_sum(ones, (0,)))
    dt = _dtypes.default_dtype("i", _config.current().enable_x64)
    positions = _first_true(flat, n, size)  # (n where there are fewer)
    found: Any = None
    if fills is not None:
        found = lax.lt(positions, n)
    out: list[Array] = []
    stride = n
    for axis, length in enumerate(shape):
        stride //= max(length, 1)
        index = positions
        if n and stride > 1:
            index = lax.div(index, stride)
        if n and axis:
            index = lax.rem(index, length)
        if fills is None:
            out.append(
                convert_element_type_p.bind(index, new_dtype=dt, weak_type=False)
            )
            continue
        fill, out_dt, weak = _index_fill(fills[axis], dt, name)
        index = convert_element_type_p.bind(index, new_dtype=out_dt, weak_type=weak)
        padding = lax.broadcast_in_dim(fill, (size,), ())
        out.append(lax.select(found, index, padding))
    return tuple(out)


def _index_fill(
    fill: Any, dt: np.dtype[Any], name: str
) -> tuple[Any, np.dtype[Any], bool]:
    """The padding of nonzero's family: a scalar, as a 0-d array of the
    result's dtype (``dt``, the default integer, promoted with the fill's
    type) and weak flag, its value checked to fit."""
    if isinstance(fill, Array):
        fill = stop_gradient(_plain(fill))
    if np.ndim(fill):  # pyright: ignore[reportUnknownArgumentType]
        raise ValueError(f"{name}: fill_value must be a scalar (or a tuple of them)")
    state = _config.current()
    if isinstance(fill, Array) and type(fill) is not ArrayImpl:
        key = _core.aval(fill.dtype, fill.weak_type)
        out_dt, weak = _core.result_of([_core.aval(dt, False), key], state)
        check = Check("weak" if fill.weak_type else "operand", name, 1)
        converted = convert_element_type_p.bind(
            fill, new_dtype=out_dt, weak_type=weak, check=check
        )
        return converted, out_dt, weak
    fv, fkey = _array.operand(fill, name, 1)
    out_dt, weak = _core.result_of([_core.aval(dt, False), fkey], state)
    value = np.asarray(_core.convert(fv, out_dt, name), out_dt)
    return wrap(value, _core.aval(out_dt, weak)), out_dt, weak


@lax_function
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
    x, n = _nonzero_operand(a, size, "nonzero")
    return _nonzero(x, n, fill_value, "nonzero")


@lax_function
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
    x, n = _nonzero_operand(a, size, "argwhere")
    ndim = x.ndim
    if not ndim:
        x = reshape_p.bind(x, new_sizes=(1,), dimensions=None)
    columns = _nonzero(x, n, fill_value, "argwhere")
    rows = lax.concatenate(
        [
            reshape_p.bind(c, new_sizes=(c.shape[0], 1), dimensions=None)
            for c in columns
        ],
        1,
    )
    return rows if ndim else lax.slice_in_dim(rows, 0, 0, axis=1)


@lax_function
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
    x, n = _nonzero_operand(a, size, "flatnonzero")
    flat = reshape_p.bind(x, new_sizes=(math.prod(x.shape),), dimensions=None)
    return _nonzero(flat, n, fill_value, "flatnonzero")[0]


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
    x = _arr(a, "diagonal")
    if x.ndim < 2:
        raise ValueError(f"diagonal: needs at least 2 dimensions, got shape {x.shape}")
    offset = _core.index_of(offset, "diagonal: offset")
    k = _probe("diagonal", np.diagonal, x.shape, offset, axis1, axis2)[-1]
    (i,), (j,) = _axes(axis1, x.ndim), _axes(axis2, x.ndim)
    nd = x.ndim
    y = _permuted(x, [d for d in range(nd) if d not in (i, j)] + [i, j])
    # One gather of the k elements (r + t, c + t) of each plane.
    rows_cols = np.empty((k, 2), np.int32)
    rows_cols[:, 0] = np.arange(max(-offset, 0), max(-offset, 0) + k, dtype=np.int32)
    rows_cols[:, 1] = np.arange(max(offset, 0), max(offset, 0) + k, dtype=np.int32)
    starts = _int32(rows_cols)
    dn = lax.GatherDimensionNumbers(
        offset_dims=tuple(range(nd - 2)),
        collapsed_slice_dims=(nd - 2, nd - 1),
        start_index_map=(nd - 2, nd - 1),
    )
    out = lax.gather(y, starts, dn, (*y.shape[:-2], 1, 1))
    if out.weak_type:
        out = convert_element_type_p.bind(out, new_dtype=out.dtype, weak_type=False)
    return out


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

    Each index is the count of ``a``'s elements that sort before the value
    (``'left'``) or not after it (``'right'``): every element of ``a`` is
    compared with every value, which takes memory of ``a.size * v.size``
    booleans.

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
    (sorted_, values), plan = promoted("searchsorted", (a, v), keep_weak=False)
    cd = plan.cd
    if sorted_.ndim != 1:
        raise ValueError(
            f"searchsorted: a must be 1-dimensional, got shape {sorted_.shape}"
        )
    n = sorted_.shape[0]
    if sorter is not None:
        order: Any = sorter
        if not isinstance(sorter, Array):
            sv, _ = _array.operand(sorter, "searchsorted", 2)
            order = wrap(np.array(sv), _core.aval(np.asarray(sv).dtype, False))
        if _dtypes.kind_of(order.dtype) not in "iu" or tuple(order.shape) != (n,):
            raise ValueError(
                "searchsorted: sorter must be integer indices of a's length"
            )
        if isinstance(order, ArrayImpl) and n:
            known = order._value
            if known.min() < -n or known.max() >= n:
                raise ValueError(
                    f"searchsorted: sorter holds indices out of range for a's "
                    f"length {n}: give indices that sort a, e.g. argsort(a)"
                )
            if known.min() < 0:  # negative indices count from the end
                order = wrap(known % n, _core.aval(known.dtype, False))
        sorted_ = _take_along(sorted_, order, 0)
    if _dtypes.kind_of(cd) == "c":
        raise TypeError("searchsorted: complex values have no order")
    # Every value against every element: a grid of (*v.shape, n).
    grid = (*values.shape, n)
    each = lax.broadcast_in_dim(sorted_, grid, (values.ndim,))
    value = lax.broadcast_in_dim(values, grid, tuple(range(values.ndim)))
    # NaNs sort last: every element is before a NaN value, or not after it.
    if side == "left":
        before = lax.lt(each, value)
        if _dtypes.kind_of(cd) == "f":
            nan = lax.ne(value, value)
            before = lax.bitwise_or(before, lax.bitwise_and(nan, lax.eq(each, each)))
    else:
        before = lax.le(each, value)
        if _dtypes.kind_of(cd) == "f":
            before = lax.bitwise_or(before, lax.ne(value, value))
    x64 = _config.current().enable_x64
    counts = convert_element_type_p.bind(
        before, new_dtype=_dtypes.default_dtype("i", x64), weak_type=False
    )
    return lax.reduce_sum(counts, (values.ndim,))


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
    if type(condition) is BackendArray and size is None:
        # Its values decide the length: read from its device.
        condition = _array.placed(condition, NUMPY, None)
    traced_condition = isinstance(condition, Array) and type(condition) is not ArrayImpl
    if size is not None and isinstance(condition, Placeholder):
        condition, traced_condition = _plain(condition), False
    if size is None and traced_condition:
        raise ConcretizationTypeError(
            f"compress with a traced condition {condition!r}: the result's "
            "length is not known while tracing; give size= (and fill_value=)"
        )
    if traced_condition:
        cond: Any = condition
    else:
        cv, _ = _array.operand(condition, "compress", 0)
        cond = np.asarray(cv).astype(bool)
    if cond.ndim != 1:
        raise ValueError(f"compress: condition must be 1-d, got shape {cond.shape}")
    x = _arr(a, "compress")
    if axis is None:
        x, axis = _reshaped(x, (math.prod(x.shape),)), 0
    ax = _core.index_of(axis, "compress: axis") % max(x.ndim, 1)
    n = x.shape[ax]
    if not traced_condition and cond.size > n:
        cond, extra = cond[:n], cond[n:]
        if extra.any():
            raise ValueError(
                f"compress: condition has true values beyond the axis length {n}"
            )
    if size is None:
        return _take_along(x, _int32(np.flatnonzero(cond)), ax)  # type: ignore[no-any-return]
    size = _core.index_of(size, "compress: size")
    if size < 0:
        # ValueError here, as jax.numpy's compress.
        raise ValueError(
            f"compress: size must be a non-negative integer (the length of "
            f"the result along the axis), got {size}"
        )
    fill = np.asarray(_fitting(fill_value, x.dtype, "compress", "fill with"), x.dtype)
    if traced_condition:
        positions = _first_true(cond, n, size)
    else:
        # The first ``size`` true positions; ``n`` (out of range) fills.
        found = np.flatnonzero(cond)[:size]
        positions = _int32(np.concatenate([found, np.full(size - found.size, n)]))
    return _take_along(x, positions, ax, fill[()])  # type: ignore[no-any-return]


def _first_true(cond: Any, n: int, size: int) -> Any:
    """The positions of the first ``size`` true elements of the 1-d
    ``cond`` (its first ``n``; ``n`` where there are fewer): each true
    element's rank among them (a cumulative sum) scatters its position."""
    m = cond.shape[0]
    if m > n:
        cond = lax.slice_in_dim(cond, 0, n)
    if cond.dtype != np.dtype(bool):
        cond = lax.ne(cond, lax.full((), 0, cond.dtype))
    elif m < n:
        cond = lax.pad(cond, False, [(0, n - m, 0)])
    int32 = np.dtype(np.int32)
    ones = lax.convert_element_type(cond, int32)
    ranks = lax.sub(lax.cumsum(ones), 1)
    target = lax.select(cond, ranks, lax.full((n,), size, int32))
    dn = lax.ScatterDimensionNumbers(
        update_window_dims=(),
        inserted_window_dims=(0,),
        scatter_dims_to_operand_dims=(0,),
    )
    column = lax.reshape(target, (n, 1))
    return lax.scatter(lax.full((size,), n, int32), column, lax.iota(int32, n), dn)


@lax_function
def _view(x: Any, dtype: Any = None) -> Array:  # pyright: ignore[reportUnusedFunction]
    """``x.view(dtype)``: the same bytes read as ``dtype`` (a strong array;
    the last axis changes length when the item sizes differ), with
    ``bitcast_convert_type``. Bytes have no derivative.

    Bool bytes are read through uint8 (to bool: any nonzero byte is True, as
    JAX); complex numbers as their two parts, real first."""
    if isinstance(x, Array):
        x = stop_gradient(x)
    x = _arr(x, "view")
    old = np.dtype(x.dtype)
    dt = old if dtype is None else _astype_dtype(dtype, "view")
    shape = tuple(x.shape)
    if old == dt:
        return bitcast_convert_type_p.bind(x, new_dtype=dt)  # type: ignore[no-any-return]
    size, new_size = old.itemsize, dt.itemsize
    if not shape and size != new_size:
        raise ValueError(
            f"view: a 0-d array can only be viewed as a type of the same item "
            f"size ({size} bytes), not {dt}; reshape it to 1-d first"
        )
    last = shape[-1] if shape else 1
    if last * size % new_size:
        raise ValueError(
            "view: When changing to a larger dtype, its size must be a divisor "
            "of the total size in bytes of the last axis of the array "
            f"({last} x {size} bytes of {old}, {new_size} bytes per {dt}); "
            "slice or pad the last axis to a multiple first"
        )
    out_shape = (*shape[:-1], last * size // new_size) if shape else ()
    lead = shape[:-1]
    bits = reshape_p.bind(x, new_sizes=(*lead, last), dimensions=None)
    kind = _dtypes.kind_of(old)
    if kind == "b":
        bits = lax.convert_element_type(bits, np.dtype(np.uint8))
    elif kind == "c":
        parts = [
            reshape_p.bind(part(bits), new_sizes=(*lead, last, 1), dimensions=None)
            for part in (lax.real, lax.imag)
        ]
        last *= 2
        pair = lax.concatenate(parts, len(lead) + 1)
        bits = reshape_p.bind(pair, new_sizes=(*lead, last), dimensions=None)
    target = _dtypes.kind_of(dt)
    read_as = np.dtype(np.uint8) if target == "b" else dt
    if target == "c":
        read_as = np.dtype(np.float32 if dt == np.dtype(np.complex64) else np.float64)
    out = _bitcast_last(bits, read_as)
    if target == "b":
        out = lax.ne(out, lax.full((), 0, read_as))
    elif target == "c":
        n = out.shape[-1] // 2
        pair = reshape_p.bind(out, new_sizes=(*lead, n, 2), dimensions=None)
        re, im = (
            reshape_p.bind(
                lax.slice_in_dim(pair, i, i + 1, axis=len(lead) + 1),
                new_sizes=(*lead, n),
                dimensions=None,
            )
            for i in (0, 1)
        )
        out = lax.complex(re, im)
    return reshape_p.bind(out, new_sizes=out_shape, dimensions=None)  # type: ignore[no-any-return]


def _bitcast_last(x: Any, dt: np.dtype[Any]) -> Any:
    """The bytes of the last axis of ``x`` (a bitcastable type, at least
    1-d, whose last axis holds a whole number of ``dt`` items) read as
    ``dt``: the last axis changes length."""
    *lead, last = x.shape
    size, new_size = np.dtype(x.dtype).itemsize, dt.itemsize
    if size == new_size:
        return bitcast_convert_type_p.bind(x, new_dtype=dt)
    if size > new_size:
        out = bitcast_convert_type_p.bind(x, new_dtype=dt)
        return reshape_p.bind(
            out, new_sizes=(*lead, last * size // new_size), dimensions=None
        )
    ratio = new_size // size
    grouped = reshape_p.bind(
        x, new_sizes=(*lead, last // ratio, ratio), dimensions=None
    )
    return bitcast_convert_type_p.bind(grouped, new_dtype=dt)
