"""Reductions: sum, prod, mean, var, std, max, min, argmax, argmin, cumsum,
cumprod, any, all. Their results are strong arrays, with jax.numpy's dtype
rules: sum and prod widen narrow integers to the default integer, mean/var/std
are inexact, and float16/bfloat16 accumulate in float32."""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from typelattice import _array, _config, _core, _dtypes
from typelattice import _lax as lax
from typelattice._array import wrap
from typelattice._basearray import Array
from typelattice._lax._elementwise import Check, convert_element_type_p
from typelattice._lax._indexing import take_along_axis
from typelattice._lax._primitive import (
    Primitive,
    broadcast_in_dim_p,
    reduce_sum_p,
    reshape_p,
)
from typelattice._lax._reductions import (
    argmax_p,
    argmin_p,
    cumprod_p,
    cumsum_p,
    reduce_and_p,
    reduce_max_p,
    reduce_min_p,
    reduce_or_p,
    reduce_prod_p,
)
from typelattice.numpy._creation import _requested  # pyright: ignore[reportPrivateUsage]
from typelattice.numpy._shape import diagonal

if TYPE_CHECKING:
    from collections.abc import Sequence

    from typelattice.typing import ArrayLike, DTypeLike

_F32: Final = np.dtype("float32")
_F64: Final = np.dtype("float64")
_BOOL: Final = np.dtype(bool)
# Types that accumulate in float32, as JAX does on every backend.
_UPCAST: Final = frozenset(
    [np.dtype("float16"), np.dtype("bfloat16"), *_dtypes.SMALL_FLOATS.values()]
)


def accumulation_dtype(dt: np.dtype[Any]) -> np.dtype[Any]:
    """The dtype a reduction to ``dt`` accumulates in: narrow floats
    (float16, bfloat16, the float8s) accumulate in float32 and the result is
    rounded to ``dt`` once, as JAX does on every backend; other types in
    themselves."""
    return _F32 if dt in _UPCAST else dt


# (_input and _where are the NumPy-valued helpers of the ufunc methods.)
def _input(  # pyright: ignore[reportUnusedFunction]
    a: Any, name: str
) -> tuple[np.ndarray[Any, Any], np.dtype[Any]]:
    """``a``'s value as an ndarray and its dtype (a Python scalar in its
    kind's default dtype)."""
    v, key = _array.operand(a, name, 0)
    dt = _core.key_dtype(key, _config.current().enable_x64)
    if not isinstance(v, np.ndarray):
        v = _core.python_scalar_to(v, dt, name)
    return v, dt  # pyright: ignore[reportUnknownVariableType]


def _where(where: Any, name: str) -> Any:  # pyright: ignore[reportUnusedFunction]
    """The ``where=`` argument's values as a bool ndarray (True for None)."""
    if where is None:
        return True
    v, _ = _array.operand(where, name, 0)
    return np.asarray(v, dtype=bool)


def _operand(a: Any, name: str) -> Any:
    """``a`` as an array (or the tracer it is): NumPy input strong, a Python
    scalar weak, of its kind's default dtype."""
    if isinstance(a, Array):
        return a
    v, key = _array.operand(a, name, 0)
    dt = _core.key_dtype(key, _config.current().enable_x64)
    value: Any = v
    if not isinstance(v, np.ndarray):
        value = _core.python_scalar_to(v, dt, name)
    return wrap(value, _core.aval(dt, _core.key_weak(key)))


def _to(x: Any, dt: np.dtype[Any], check: Check | None = None) -> Any:
    """``x`` in ``dt``, strong; its values checked by ``check`` (a value the
    dtype cannot hold raises, eagerly, in a program or under grad)."""
    if x.dtype == dt and not x.weak_type:
        return x
    return convert_element_type_p.bind(x, new_dtype=dt, weak_type=False, check=check)


def _requested_input(x: Any, dt: np.dtype[Any], name: str, how: str = "dtype") -> Any:
    """The input of a reduction asked for ``dt``: refused where ``dt``
    cannot hold a value (see docs/semantics.md, "Data safety"; ``dtype=int8``
    for values up to 300 raises instead of wrapping)."""
    if x.dtype == dt:
        return _to(x, dt)
    return _to(x, dt, Check(how, name, 0))


def _axes_of(axis: Any, ndim: int, name: str) -> tuple[int, ...]:
    """The reduced axes, in increasing order (every axis for None)."""
    ax = _axis(axis, ndim, name)
    if ax is None:
        return tuple(range(ndim))
    return tuple(sorted(ax)) if isinstance(ax, tuple) else (ax,)


def _kept(
    out: Any, shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool
) -> Any:
    """A reduction's result with the reduced axes kept (length 1) when
    ``keepdims`` asks for them."""
    if not keepdims or not axes:
        return out
    kept = tuple(1 if i in axes else d for i, d in enumerate(shape))
    return reshape_p.bind(out, new_sizes=kept, dimensions=None)


def _filled(shape: tuple[int, ...], value: Any, dt: np.dtype[Any]) -> Any:
    """An array of ``shape`` filled with ``value`` (exact in ``dt``)."""
    scalar = wrap(np.asarray(value, dt), _core.aval(dt, False))
    return broadcast_in_dim_p.bind(scalar, shape=shape, broadcast_dimensions=())


def _broadcast(x: Any, shape: tuple[int, ...]) -> Any:
    """``x`` broadcast to ``shape`` as NumPy broadcasts (trailing axes)."""
    if tuple(x.shape) == shape:
        return x
    dims = tuple(range(len(shape) - x.ndim, len(shape)))
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=dims)


def _axis(axis: Any, ndim: int, name: str) -> int | tuple[int, ...] | None:
    if axis is None:
        return None
    axes = axis if isinstance(axis, tuple | list) else (axis,)  # pyright: ignore[reportUnknownVariableType]
    out: list[int] = []
    for ax in axes:  # pyright: ignore[reportUnknownVariableType]
        i = _core.index_of(ax, f"{name}: axis")
        if not -ndim <= i < builtins.max(ndim, 1) or (ndim == 0 and i not in (0, -1)):
            raise ValueError(
                f"{name}: axis {i} is out of bounds for an array of dimension {ndim}"
            )
        out.append(i % builtins.max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: repeated axis in {axis!r}")
    if ndim == 0:
        return None
    return tuple(out) if isinstance(axis, tuple | list) else out[0]


def _mask(where: Any, shape: tuple[int, ...], name: str) -> Any:
    """The ``where=`` argument as a bool array of ``shape`` (nonzero values
    select), or None when everything is selected."""
    if where is None:
        return None
    m = _operand(where, name)
    if m.dtype != _BOOL:
        m = _truth(m)
    try:
        fits = np.broadcast_shapes(tuple(m.shape), shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"{name}: where= has shape {tuple(m.shape)}, which does not broadcast "
            f"to the input's shape {shape}"
        )
    return _broadcast(_to(m, _BOOL), shape)


def _truth(x: Any) -> Any:
    """``x != 0`` as bool (a complex number is true by either part)."""
    if _dtypes.kind_of(x.dtype) == "c":
        return lax.ne(x, lax.full((), 0, x.dtype))
    return convert_element_type_p.bind(x, new_dtype=_BOOL, weak_type=False, check=None)


def _selected(x: Any, mask: Any, fill: Any) -> Any:
    """``x`` where ``mask`` holds, ``fill`` (a scalar) elsewhere."""
    if mask is None:
        return x
    return lax.select(mask, x, _filled(tuple(x.shape), fill, x.dtype))


def _count(
    shape: tuple[int, ...], axes: tuple[int, ...], mask: Any, dt: np.dtype[Any]
) -> Any:
    """How many elements each reduction counts (``where`` applied), as an
    array of ``dt``: a constant without a mask."""
    if mask is None:
        n = math.prod(shape[a] for a in axes)
        # (as a float: a count past the default integer's range still
        # converts, exactly below 2**53, to the floating dtype)
        return float(n) if _dtypes.kind_of(dt) in "fc" else n
    wide = np.dtype(np.int64)
    counted = reduce_sum_p.bind(_to(mask, wide), axes=axes)
    return _to(counted, dt)


def _promote_integer(dt: np.dtype[Any], x64: bool) -> np.dtype[Any]:
    """sum/prod's widening: bool and narrow integers become the default int
    (unsigned ones the default unsigned int)."""
    kind = _dtypes.kind_of(dt)
    if kind == "b":
        return _dtypes.default_dtype("i", x64)
    if kind in "iu":
        default = _dtypes.default_dtype(kind, x64)
        if _dtypes.iinfo(dt).bits < default.itemsize * 8:
            return default
    return dt


def _explicit(dtype: Any, name: str) -> np.dtype[Any]:
    return _requested(dtype, name)


def _initial(initial: Any, dt: np.dtype[Any], name: str) -> Any:
    """The ``initial=`` argument in ``dt``: it must fit."""
    where = f"{name} (initial=)"
    if isinstance(initial, Array):
        return _to(initial, dt, Check("operands", where, 1))
    start, _ = _array.operand(initial, name, 1)
    value = _core.convert(start, dt, where)
    return wrap(np.asarray(value), _core.aval(dt, False))


def _accumulating(
    name: str,
    reduce: Primitive,
    combine: Callable[[Any, Any], Any],
    a: Any,
    axis: Any,
    dtype: Any,
    keepdims: bool,
    initial: Any,
    where: Any,
    promote_integers: bool,
) -> Array:
    x = _operand(a, name)
    dt = x.dtype
    x64 = _config.current().enable_x64
    if dtype is not None:
        out_dt = _explicit(dtype, name)
    elif promote_integers or dt == _BOOL:  # bool is counted even so (JAX)
        out_dt = _promote_integer(dt, x64)
    else:
        out_dt = dt
    shape = tuple(x.shape)
    axes = _axes_of(axis, len(shape), name)
    mask = _mask(where, shape, name)
    if dtype is not None:
        x = _requested_input(x, out_dt, name)
    compute = accumulation_dtype(out_dt)
    x = _to(x, compute)
    x = _selected(x, mask, 0 if reduce is reduce_sum_p else 1)
    out = reduce.bind(x, axes=axes)
    if initial is not None:
        start = _initial(initial, out_dt, name)
        out = combine(out, _broadcast(_to(start, compute), tuple(out.shape)))
    return _kept(_to(out, out_dt), shape, axes, keepdims)  # type: ignore[no-any-return]


def sum(  # noqa: A001
    a: ArrayLike,
    axis: int | Sequence[int] | None = None,
    dtype: DTypeLike | None = None,
    out: None = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
    promote_integers: bool = True,
) -> Array:
    """Sum of elements. Bool and integers narrower than the default integer
    are summed in the default integer (int32 in 32-bit mode), as in JAX;
    float16/bfloat16 accumulate in float32.

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      axis: an axis, a tuple of axes, or None for every axis.
      dtype: the dtype to sum in and return, instead of the rule above.
      out: not supported (arrays are immutable); must be None.
      keepdims: keep the reduced axes, with length 1.
      initial: a value to start from; it must fit the result's dtype.
      where: a bool mask of the elements to include.
      promote_integers: widen narrow integers as above (False: keep the
        input's dtype).

    Returns:
      A strong Array.

    >>> import typelattice.numpy as tnp
    >>> tnp.sum(tnp.asarray([100, 100], dtype='int8'))
    Array(200, dtype=int32)
    """
    _no_out(out, "sum")
    return _accumulating(
        "sum",
        reduce_sum_p,
        lax.add,
        a,
        axis,
        dtype,
        keepdims,
        initial,
        where,
        promote_integers,
    )


def prod(
    a: ArrayLike,
    axis: int | Sequence[int] | None = None,
    dtype: DTypeLike | None = None,
    out: None = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
    promote_integers: bool = True,
) -> Array:
    """Product of elements, widened like :func:`sum`.

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      axis: an axis, a tuple of axes, or None for every axis.
      dtype: the dtype to multiply in and return.
      out: not supported (arrays are immutable); must be None.
      keepdims: keep the reduced axes, with length 1.
      initial: a value to start from; it must fit the result's dtype.
      where: a bool mask of the elements to include.
      promote_integers: widen narrow integers as :func:`sum` does.

    Returns:
      A strong Array.

    >>> import typelattice.numpy as tnp
    >>> tnp.prod(tnp.asarray([[1, 2], [3, 4]], dtype='int8'), axis=0)
    Array([3, 8], dtype=int32)
    """
    _no_out(out, "prod")
    return _accumulating(
        "prod",
        reduce_prod_p,
        lax.mul,
        a,
        axis,
        dtype,
        keepdims,
        initial,
        where,
        promote_integers,
    )


def _no_out(out: object, name: str) -> None:
    if out is not None:
        raise TypeError(
            f"{name}: the out argument is not supported (arrays are immutable)"
        )


def _inexact(dt: np.dtype[Any], x64: bool) -> np.dtype[Any]:
    # As JAX: bool and integers give float32, 64-bit integers float64.
    if _dtypes.kind_of(dt) in "fc":
        return dt
    return np.dtype("float64") if dt.itemsize == 8 else _F32


def mean(
    a: ArrayLike,
    axis: int | Sequence[int] | None = None,
    dtype: DTypeLike | None = None,
    out: None = None,
    keepdims: bool = False,
    *,
    where: ArrayLike | None = None,
) -> Array:
    """Arithmetic mean, in an inexact type: integers give the default float,
    float16/bfloat16 are accumulated in float32 and returned as themselves.

    An integer ``dtype`` computes as jax.numpy does: the values are
    converted to it, summed in it (wrapping on overflow, as integer
    arithmetic does) and divided by the count rounding toward zero.

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      axis: an axis, a tuple of axes, or None for every axis.
      dtype: the dtype to compute in and return.
      out: not supported (arrays are immutable); must be None.
      keepdims: keep the reduced axes, with length 1.
      where: a bool mask of the elements to include.

    Returns:
      A strong Array.

    >>> import typelattice.numpy as tnp
    >>> tnp.mean(tnp.asarray([1, 2], dtype='int8'))
    Array(1.5, dtype=float32)
    >>> tnp.mean(tnp.asarray([1, 2, 4], dtype='int8'), dtype='int32')
    Array(2, dtype=int32)
    """
    _no_out(out, "mean")
    x = _operand(a, "mean")
    x64 = _config.current().enable_x64
    out_dt = _explicit(dtype, "mean") if dtype is not None else _inexact(x.dtype, x64)
    shape = tuple(x.shape)
    axes = _axes_of(axis, len(shape), "mean")
    mask = _mask(where, shape, "mean")
    kind = _dtypes.kind_of(out_dt)
    if kind == "b":
        raise TypeError(
            "mean: dtype=bool is not supported (a mean is a number); give an "
            "integer or floating dtype"
        )
    if dtype is not None:
        x = _requested_input(x, out_dt, "mean")
    if kind in "iu":
        total = reduce_sum_p.bind(_selected(_to(x, out_dt), mask, 0), axes=axes)
        res = _int_div(total, shape, axes, mask)
        return _kept(res, shape, axes, keepdims)  # type: ignore[no-any-return]
    compute = accumulation_dtype(out_dt)
    total = reduce_sum_p.bind(_selected(_to(x, compute), mask, 0), axes=axes)
    res = lax.div(total, _count(shape, axes, mask, compute))
    return _kept(_to(res, out_dt), shape, axes, keepdims)  # type: ignore[no-any-return]


def _wide_int(dt: np.dtype[Any]) -> np.dtype[Any]:
    return np.dtype(np.int64 if _dtypes.kind_of(dt) == "i" else np.uint64)


def _int_div(
    total: Any, shape: tuple[int, ...], axes: tuple[int, ...], mask: Any
) -> Any:
    """``total / count`` in ``total``'s integer dtype, rounded toward zero as
    JAX's integer division (computed in 64 bits: the count may not fit
    ``total``'s dtype); a count of 0 gives 0 (NumPy's value)."""
    dt = total.dtype
    wide = _wide_int(dt)
    count = _count(shape, axes, mask, wide)
    if not isinstance(count, int):
        safe = lax.select(lax.eq(count, _zeros_of(count)), _ones_of(count), count)
        q = lax.div(_to(total, wide), safe)
        q = lax.select(lax.eq(count, _zeros_of(count)), _zeros_of(q), q)
    elif count == 0:
        q = _zeros_of(_to(total, wide))
    else:
        q = lax.div(_to(total, wide), _filled(tuple(total.shape), count, wide))
    # (the quotient's magnitude is at most the total's: it fits)
    return convert_element_type_p.bind(q, new_dtype=dt, weak_type=False, check=None)


def _zeros_of(x: Any) -> Any:
    return _filled(tuple(x.shape), 0, x.dtype)


def _ones_of(x: Any) -> Any:
    return _filled(tuple(x.shape), 1, x.dtype)


def _moment(
    name: str,
    a: Any,
    axis: Any,
    dtype: Any,
    ddof: Any,
    keepdims: bool,
    where: Any,
    correction: Any,
    mean: Any,
) -> Array:
    if correction is not None:
        if ddof != 0:
            raise ValueError(f"{name}: give ddof or correction, not both")
        ddof = correction
    x = _operand(a, name)
    dt = x.dtype
    state = _config.current()
    shape = tuple(x.shape)
    axes = _axes_of(axis, len(shape), name)
    mask = _mask(where, shape, name)
    if dtype is not None:
        out_dt = _explicit(dtype, name)
        kind = _dtypes.kind_of(out_dt)
        if _dtypes.kind_of(dt) == "c" and kind != "c":
            raise ValueError(
                f"{name}: dtype={out_dt} is real but the input is {dt}; as in "
                "jax.numpy, a real computation type is refused for complex "
                "input (it would drop the imaginary parts). Omit dtype (the "
                "result is real), or give a complex dtype such as 'complex64'."
            )
        if kind == "b" or (name == "std" and kind in "iu"):
            raise (ValueError if name == "std" else TypeError)(
                f"{name}: dtype={out_dt} is not supported; give an inexact "
                "dtype such as 'float32'"
            )
        x = _requested_input(x, out_dt, name)
        if kind in "iu":
            return _int_var(x, out_dt, axes, ddof, keepdims, mask, mean, state)
        compute = accumulation_dtype(out_dt)
    else:
        compute = _inexact(dt, state.enable_x64)
        out_dt = compute
        if _dtypes.kind_of(out_dt) == "c":  # the variance of complex numbers is real
            out_dt = _real_of(out_dt)
        compute = accumulation_dtype(compute)
    values = _to(x, compute)
    if mean is None:
        total = reduce_sum_p.bind(_selected(values, mask, 0), axes=axes)
        # The mean of nothing: nan, and the result is nan below.
        center = lax.div(total, _count(shape, axes, mask, compute))
        center = _kept(center, shape, axes, True)
    else:
        center = _given_mean(mean, shape, compute, name)
    centered = lax.sub(values, _broadcast(center, shape))
    if _dtypes.kind_of(compute) == "c":
        squares = lax.real(lax.mul(centered, lax.conj(centered)))
    else:
        squares = lax.mul(centered, centered)
    total = reduce_sum_p.bind(_selected(squares, mask, 0), axes=axes)
    # Divided (and its root taken) in float64, the count being an integer
    # of up to 64 bits; then rounded once to the result's dtype.
    total = _to(total, _F64) if total.dtype.itemsize < 8 else total
    res = _divided(total, _count(shape, axes, mask, np.dtype(np.int64)), ddof)
    if name == "std":
        res = lax.sqrt(res)
    return _kept(_to(res, out_dt), shape, axes, keepdims)  # type: ignore[no-any-return]


def _divided(total: Any, count: Any, ddof: Any) -> Any:
    """``total / (count - ddof)``; nan where no degrees of freedom are left,
    as JAX (NumPy divides by zero)."""
    dt = total.dtype
    if isinstance(count, int):
        divisor = count - ddof
        if divisor > 0:
            return lax.div(total, _filled(tuple(total.shape), divisor, dt))
        return _filled(tuple(total.shape), np.nan, dt)
    divisor = lax.sub(_to(count, dt), _filled(tuple(count.shape), ddof, dt))
    positive = lax.gt(divisor, _zeros_of(divisor))
    safe = lax.select(positive, divisor, _ones_of(divisor))
    nan = _filled(tuple(total.shape), np.nan, dt)
    return lax.select(positive, lax.div(total, safe), nan)


def _real_of(dt: np.dtype[Any]) -> np.dtype[Any]:
    return np.dtype("float32") if dt == np.complex64 else np.dtype("float64")


def _given_mean(
    mean: Any, shape: tuple[int, ...], compute: np.dtype[Any], name: str
) -> Any:
    """The ``mean=`` argument in the computation dtype, checked to line up
    with the input (the reduced axes kept, with length 1)."""
    m = _operand(mean, name)
    mshape = tuple(m.shape)
    fits = len(mshape) in (0, len(shape))
    if fits:
        try:
            fits = np.broadcast_shapes(mshape, shape) == shape
        except ValueError:
            fits = False
    if not fits:
        raise ValueError(
            f"{name}: mean= has shape {mshape}, which does not line up with the "
            f"input's shape {shape}; give it the shape of the mean with the "
            "reduced axes kept: tnp.mean(x, axis=..., keepdims=True)"
        )
    if _dtypes.kind_of(m.dtype) == "c" and _dtypes.kind_of(compute) != "c":
        raise ValueError(
            f"{name}: mean= is complex ({m.dtype}) but the computation is real "
            f"({compute}); pass tnp.real(mean) if that is what you mean"
        )
    return _requested_input(m, compute, f"{name} (mean=)")


def _int_var(
    x: Any,
    dt: np.dtype[Any],
    axes: tuple[int, ...],
    ddof: Any,
    keepdims: bool,
    mask: Any,
    mean: Any,
    state: _config.State,
) -> Array:
    """``var`` with an integer ``dtype`` as jax.numpy computes it: integer
    arithmetic throughout (the mean and the quotient rounded toward zero,
    sums wrapping), then a weak float with nan where no degrees of freedom
    are left."""
    shape = tuple(x.shape)
    values = _to(x, dt)
    if mean is None:
        total = reduce_sum_p.bind(_selected(values, mask, 0), axes=axes)
        center = _kept(_int_div(total, shape, axes, mask), shape, axes, True)
    else:
        given = _given_mean(mean, shape, np.dtype("float64"), "var")
        center = _requested_input(given, dt, "var (mean=)")
    centered = lax.sub(values, _broadcast(center, shape))
    squares = lax.mul(centered, centered)
    total = reduce_sum_p.bind(_selected(squares, mask, 0), axes=axes)
    wide = _wide_int(dt)
    count = _count(shape, axes, mask, np.dtype(np.int64))
    out_dt, weak = _core.result_of([_core.aval(dt, False), float], state)
    if isinstance(count, int):
        divisor = count - int(ddof)
        if divisor <= 0:
            res = _filled(tuple(total.shape), np.nan, out_dt)
        else:
            q = lax.div(_to(total, wide), _filled(tuple(total.shape), divisor, wide))
            res = _to(_to(q, dt), out_dt)
    else:
        left = lax.sub(count, _filled(tuple(count.shape), int(ddof), count.dtype))
        positive = lax.gt(left, _zeros_of(left))
        safe = _to(lax.select(positive, left, _ones_of(left)), wide)
        q = _to(_to(lax.div(_to(total, wide), safe), dt), out_dt)
        res = lax.select(positive, q, _filled(tuple(q.shape), np.nan, out_dt))
    res = convert_element_type_p.bind(res, new_dtype=out_dt, weak_type=weak)
    return _kept(res, shape, axes, keepdims)  # type: ignore[no-any-return]


def var(
    a: ArrayLike,
    axis: int | Sequence[int] | None = None,
    dtype: DTypeLike | None = None,
    out: None = None,
    ddof: int = 0,
    keepdims: bool = False,
    *,
    where: ArrayLike | None = None,
    mean: ArrayLike | None = None,
    correction: int | float | None = None,
) -> Array:
    """Variance (``ddof`` or ``correction`` for the divisor ``N - ddof``).

    ``mean`` is a precomputed mean with the reduced axes kept (length 1), as
    ``mean(a, axis, keepdims=True)`` returns it. An integer ``dtype``
    computes in integer arithmetic, as jax.numpy does.

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      axis: an axis, a tuple of axes, or None for every axis.
      dtype: the dtype to compute in and return (inexact by default, as
        :func:`mean`).
      out: not supported (arrays are immutable); must be None.
      ddof: delta degrees of freedom: the divisor is ``N - ddof``.
      keepdims: keep the reduced axes, with length 1.
      where: a bool mask of the elements to include.
      mean: a precomputed mean, as described above.
      correction: the Array API's name for ``ddof`` (give one of the two).

    Returns:
      A strong Array.

    >>> import typelattice.numpy as tnp
    >>> x = tnp.asarray([[1.0, 3.0], [2.0, 6.0]])
    >>> tnp.var(x, axis=1, mean=tnp.mean(x, axis=1, keepdims=True))
    Array([1., 4.], dtype=float32)
    """
    _no_out(out, "var")
    return _moment("var", a, axis, dtype, ddof, keepdims, where, correction, mean)


def std(
    a: ArrayLike,
    axis: int | Sequence[int] | None = None,
    dtype: DTypeLike | None = None,
    out: None = None,
    ddof: int = 0,
    keepdims: bool = False,
    *,
    where: ArrayLike | None = None,
    mean: ArrayLike | None = None,
    correction: int | float | None = None,
) -> Array:
    """Standard deviation (the square root of :func:`var`); ``dtype``, if
    given, must be inexact, as in jax.numpy.

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      axis: an axis, a tuple of axes, or None for every axis.
      dtype: an inexact dtype to compute in and return.
      out: not supported (arrays are immutable); must be None.
      ddof: delta degrees of freedom: the divisor is ``N - ddof``.
      keepdims: keep the reduced axes, with length 1.
      where: a bool mask of the elements to include.
      mean: a precomputed mean with the reduced axes kept (length 1).
      correction: the Array API's name for ``ddof``.

    Returns:
      A strong Array; float16/bfloat16 input is computed in float32 and
      returned as itself.

    >>> import typelattice.numpy as tnp
    >>> tnp.std(tnp.asarray([1.0, 3.0], dtype='float16'))
    Array(1., dtype=float16)
    """
    _no_out(out, "std")
    return _moment("std", a, axis, dtype, ddof, keepdims, where, correction, mean)


def _extreme(
    name: str,
    reduce: Primitive,
    combine: Callable[[Any, Any], Any],
    a: Any,
    axis: Any,
    out: None,
    keepdims: bool,
    initial: Any,
    where: Any,
) -> Array:
    _no_out(out, name)
    x = _operand(a, name)
    dt = x.dtype
    shape = tuple(x.shape)
    axes = _axes_of(axis, len(shape), name)
    if where is not None and initial is None:
        raise ValueError(
            f"{name}: reducing with where= needs an initial value "
            "(what to return where nothing is selected)"
        )
    mask = _mask(where, shape, name)
    start = None if initial is None else _initial(initial, dt, name)
    if start is None and builtins.any(shape[i] == 0 for i in axes):
        raise ValueError(
            f"{name}: reducing an axis of length 0 has no {name}imum; pass "
            "initial=... to choose the result"
        )
    x = _to(x, dt)
    if mask is not None:
        x = lax.select(mask, x, _broadcast(start, shape))
    res = reduce.bind(x, axes=axes)
    if _dtypes.kind_of(dt) == "c" and math.prod(shape[i] for i in axes):
        res = _first_nan_or(res, x, axes)
    if start is not None:
        res = combine(res, _broadcast(start, tuple(res.shape)))
    return _kept(res, shape, axes, keepdims)  # type: ignore[no-any-return]


def _first_nan_or(res: Any, x: Any, axes: tuple[int, ...]) -> Any:
    """``res``, or where the reduced elements hold a NaN (in either part),
    the first of them: complex max and min propagate NaN as NumPy's do
    (comparisons alone, as lax's, would skip it)."""
    kept = tuple(d for d in range(x.ndim) if d not in axes)
    n = math.prod(x.shape[d] for d in axes)
    flat = reshape_p.bind(
        x, new_sizes=(*(x.shape[d] for d in kept), n), dimensions=(*kept, *axes)
    )
    nan = lax.ne(flat, flat)
    last = len(kept)
    index = argmax_p.bind(nan, axes=(last,), index_dtype=np.dtype(np.int32))
    column = reshape_p.bind(index, new_sizes=(*index.shape, 1), dimensions=None)
    first = reshape_p.bind(
        take_along_axis(flat, column, last), new_sizes=tuple(res.shape), dimensions=None
    )
    return lax.select(reduce_or_p.bind(nan, axes=(last,)), first, res)


def max(  # noqa: A001
    a: ArrayLike,
    axis: int | Sequence[int] | None = None,
    out: None = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
) -> Array:
    """Largest element (NaN propagates); the input's dtype, strong.

    ``amax`` is the same function.

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      axis: an axis, a tuple of axes, or None for every axis.
      out: not supported (arrays are immutable); must be None.
      keepdims: keep the reduced axes, with length 1.
      initial: a lower bound for the result (needed for empty
        reductions); it must fit the dtype.
      where: a bool mask of the elements to include.

    Returns:
      A strong Array of ``a``'s dtype.

    >>> import typelattice.numpy as tnp
    >>> tnp.max(tnp.asarray([[1, 2], [3, 4]], dtype='int8'))
    Array(4, dtype=int8)
    """
    return _extreme(
        "max", reduce_max_p, lax.max, a, axis, out, keepdims, initial, where
    )


def min(  # noqa: A001
    a: ArrayLike,
    axis: int | Sequence[int] | None = None,
    out: None = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
) -> Array:
    """Smallest element (NaN propagates); the input's dtype, strong.

    ``amin`` is the same function.

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      axis: an axis, a tuple of axes, or None for every axis.
      out: not supported (arrays are immutable); must be None.
      keepdims: keep the reduced axes, with length 1.
      initial: an upper bound for the result (needed for empty
        reductions); it must fit the dtype.
      where: a bool mask of the elements to include.

    Returns:
      A strong Array of ``a``'s dtype.

    >>> import typelattice.numpy as tnp
    >>> tnp.min(tnp.asarray([[1, 2], [3, 4]], dtype='int8'), axis=1)
    Array([1, 3], dtype=int8)
    """
    return _extreme(
        "min", reduce_min_p, lax.min, a, axis, out, keepdims, initial, where
    )


amax, amin = max, min


def _arg(name: str, prim: Primitive, a: Any, axis: Any, keepdims: bool | None) -> Array:
    x = _operand(a, name)
    if _dtypes.kind_of(x.dtype) == "c":
        raise TypeError(f"{name} does not accept complex input (no ordering)")
    shape = tuple(x.shape)
    if axis is None:
        ax = 0
        if len(shape) != 1:
            x = reshape_p.bind(x, new_sizes=(math.prod(shape),), dimensions=None)
    else:
        ax = operator.index(_axis(axis, len(shape), name) or 0)  # type: ignore[arg-type]
        if not shape:
            x = reshape_p.bind(x, new_sizes=(1,), dimensions=None)
    if x.shape[ax] == 0:
        raise ValueError(
            f"{name}: attempt to get {name} of an empty sequence (the axis has "
            "length 0)"
        )
    index = _dtypes.default_dtype("i", _config.current().enable_x64)
    res = prim.bind(x, axes=(ax,), index_dtype=index)
    if keepdims:
        kept = tuple(1 if axis is None or i == ax else d for i, d in enumerate(shape))
        res = reshape_p.bind(res, new_sizes=kept, dimensions=None)
    return res  # type: ignore[no-any-return]


def argmax(
    a: ArrayLike,
    axis: int | None = None,
    out: None = None,
    keepdims: bool | None = None,
) -> Array:
    """Index of the largest element (the first one on ties).

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      axis: an axis, or None for the flattened array.
      out: not supported (arrays are immutable); must be None.
      keepdims: keep the reduced axes, with length 1.

    Returns:
      A strong Array of the default integer type (int32; int64 with
      ``enable_x64``); indices into the flattened array for ``axis=None``.

    >>> import typelattice.numpy as tnp
    >>> tnp.argmax(tnp.asarray([[1, 2], [3, 4]], dtype='int8'))
    Array(3, dtype=int32)
    """
    _no_out(out, "argmax")
    return _arg("argmax", argmax_p, a, axis, keepdims)


def argmin(
    a: ArrayLike,
    axis: int | None = None,
    out: None = None,
    keepdims: bool | None = None,
) -> Array:
    """Index of the smallest element (the first one on ties).

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      axis: an axis, or None for the flattened array.
      out: not supported (arrays are immutable); must be None.
      keepdims: keep the reduced axes, with length 1.

    Returns:
      A strong Array of the default integer type (int32; int64 with
      ``enable_x64``); indices into the flattened array for ``axis=None``.

    >>> import typelattice.numpy as tnp
    >>> tnp.argmin(tnp.asarray([[1, 2], [3, 0]], dtype='int8'), axis=0)
    Array([0, 1], dtype=int32)
    """
    _no_out(out, "argmin")
    return _arg("argmin", argmin_p, a, axis, keepdims)


def _cumulative(name: str, prim: Primitive, a: Any, axis: Any, dtype: Any) -> Array:
    x = _operand(a, name)
    x64 = _config.current().enable_x64
    if dtype is not None:
        out_dt = _explicit(dtype, name)
        x = _requested_input(x, out_dt, name)
    else:  # as JAX: only bool widens (integers keep their width here)
        out_dt = _dtypes.default_dtype("i", x64) if x.dtype == _BOOL else x.dtype
    if axis is None or not x.shape:
        if x.ndim != 1:
            x = reshape_p.bind(x, new_sizes=(math.prod(x.shape),), dimensions=None)
        ax = 0
    else:
        ax = operator.index(_axis(axis, x.ndim, name))  # type: ignore[arg-type]
    res = prim.bind(_to(x, accumulation_dtype(out_dt)), axis=ax, reverse=False)
    return _to(res, out_dt)  # type: ignore[no-any-return]


def cumsum(
    a: ArrayLike,
    axis: int | None = None,
    dtype: DTypeLike | None = None,
    out: None = None,
) -> Array:
    """Running sum along an axis (the flattened array by default).

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      axis: an axis, or None for the flattened array.
      dtype: the dtype to accumulate in and return (default: ``a``'s).
      out: not supported (arrays are immutable); must be None.

    Returns:
      A strong Array.

    >>> import typelattice.numpy as tnp
    >>> tnp.cumsum(tnp.asarray([[1, 2], [3, 4]], dtype='int8'))
    Array([ 1,  3,  6, 10], dtype=int8)
    """
    _no_out(out, "cumsum")
    return _cumulative("cumsum", cumsum_p, a, axis, dtype)


def cumprod(
    a: ArrayLike,
    axis: int | None = None,
    dtype: DTypeLike | None = None,
    out: None = None,
) -> Array:
    """Running product along an axis (the flattened array by default).

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      axis: an axis, or None for the flattened array.
      dtype: the dtype to accumulate in and return (default: ``a``'s).
      out: not supported (arrays are immutable); must be None.

    Returns:
      A strong Array.

    >>> import typelattice.numpy as tnp
    >>> tnp.cumprod(tnp.asarray([[1, 2], [3, 4]], dtype='int8'), axis=1)
    Array([[ 1,  2],
           [ 3, 12]], dtype=int8)
    """
    _no_out(out, "cumprod")
    return _cumulative("cumprod", cumprod_p, a, axis, dtype)


def _logical(
    name: str, prim: Primitive, a: Any, axis: Any, keepdims: bool, where: Any
) -> Array:
    x = _operand(a, name)
    shape = tuple(x.shape)
    axes = _axes_of(axis, len(shape), name)
    mask = _mask(where, shape, name)
    x = _to(x, _BOOL) if x.dtype == _BOOL else _truth(x)
    res = prim.bind(_selected(x, mask, prim is reduce_and_p), axes=axes)
    return _kept(res, shape, axes, keepdims)  # type: ignore[no-any-return]


def any(  # noqa: A001
    a: ArrayLike,
    axis: int | Sequence[int] | None = None,
    out: None = None,
    keepdims: bool = False,
    *,
    where: ArrayLike | None = None,
) -> Array:
    """Whether any element is true (nonzero).

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      axis: an axis, a tuple of axes, or None for every axis.
      out: not supported (arrays are immutable); must be None.
      keepdims: keep the reduced axes, with length 1.
      where: a bool mask of the elements to include.

    Returns:
      A strong bool Array.

    >>> import typelattice.numpy as tnp
    >>> tnp.any(tnp.asarray([0, 0, 3], dtype='int8'))
    Array(True, dtype=bool)
    """
    _no_out(out, "any")
    return _logical("any", reduce_or_p, a, axis, keepdims, where)


def all(  # noqa: A001
    a: ArrayLike,
    axis: int | Sequence[int] | None = None,
    out: None = None,
    keepdims: bool = False,
    *,
    where: ArrayLike | None = None,
) -> Array:
    """Whether every element is true (nonzero).

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      axis: an axis, a tuple of axes, or None for every axis.
      out: not supported (arrays are immutable); must be None.
      keepdims: keep the reduced axes, with length 1.
      where: a bool mask of the elements to include.

    Returns:
      A strong bool Array.

    >>> import typelattice.numpy as tnp
    >>> tnp.all(tnp.asarray([[1, 2], [0, 4]], dtype='int8'), axis=1)
    Array([ True, False], dtype=bool)
    """
    _no_out(out, "all")
    return _logical("all", reduce_and_p, a, axis, keepdims, where)


def ptp(
    a: ArrayLike,
    axis: int | Sequence[int] | None = None,
    out: None = None,
    keepdims: bool = False,
) -> Array:
    """Range of values (``max - min``) along ``axis``: ``a``'s dtype, strong,
    as jax.numpy (integers wrap as integer subtraction does; bool is
    refused).

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      axis: an axis, a tuple of axes, or None for every axis.
      out: not supported (arrays are immutable); must be None.
      keepdims: keep the reduced axes, with length 1.

    Returns:
      A strong Array of ``a``'s dtype.

    Raises:
      TypeError: a bool array.

    >>> import typelattice.numpy as tnp
    >>> tnp.ptp(tnp.asarray([[1, 5], [2, 9]]), axis=1)
    Array([4, 7], dtype=int32)
    """
    _no_out(out, "ptp")
    if _operand(a, "ptp").dtype == _BOOL:
        raise TypeError(
            "ptp does not accept dtype bool (max - min is a subtraction); cast "
            "first, e.g. x.astype('int32')"
        )
    return lax.sub(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


def trace(
    a: ArrayLike,
    offset: int = 0,
    axis1: int = 0,
    axis2: int = 1,
    dtype: DTypeLike | None = None,
    out: None = None,
) -> Array:
    """Sum along a diagonal, with :func:`sum`'s dtype rules (narrow integers
    widen to the default integer).

    Args:
      a: an array of at least two dimensions.
      offset: the diagonal: 0 the main one, positive above, negative below.
      axis1: the first axis of the 2-d planes.
      axis2: the second axis.
      dtype: the dtype to sum in and return.
      out: not supported (arrays are immutable); must be None.

    Returns:
      A strong Array with ``axis1`` and ``axis2`` removed.

    >>> import typelattice.numpy as tnp
    >>> tnp.trace(tnp.ones((3, 3), dtype='int8'))
    Array(3, dtype=int32)
    """
    _no_out(out, "trace")

    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)
