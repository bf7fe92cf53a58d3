"""Reductions: sum, prod, mean, var, std, max, min, argmax, argmin, cumsum,
cumprod, any, all. Their results are strong arrays, with jax.numpy's dtype
rules: sum and prod widen narrow integers to the default integer, mean/var/std
are inexact, and float16/bfloat16 accumulate in float32."""

from __future__ import annotations

import builtins
import functools
import inspect
import math
import operator
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from typelattice import _array, _config, _core, _dtypes
from typelattice import _lax as lax
from typelattice._array import from_numpy
from typelattice._basearray import Array
from typelattice._tracing import abstract
from typelattice._tracing.ad import stop_gradient
from typelattice._tracing.trace import lowering, traced
from typelattice.numpy import _lower
from typelattice.numpy._creation import _requested, asarray  # pyright: ignore[reportPrivateUsage]
from typelattice.numpy._shape import diagonal

if TYPE_CHECKING:
    from collections.abc import Sequence

    from typelattice.typing import ArrayLike, DTypeLike

_F32: Final = np.dtype("float32")
_BOOL: Final = np.dtype(bool)
# Types that accumulate in float32, as JAX does on every backend.
_UPCAST: Final = frozenset(
    [np.dtype("float16"), np.dtype("bfloat16"), *_dtypes.SMALL_FLOATS.values()]
)


def _input(a: Any, name: str) -> tuple[np.ndarray[Any, Any], np.dtype[Any]]:
    v, key = _array.operand(a, name, 0)
    dt = _core.key_dtype(key, _config.current().enable_x64)
    if not isinstance(v, np.ndarray):
        v = _core.python_scalar_to(v, dt, name)
    return v, dt  # pyright: ignore[reportUnknownVariableType]


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


def _where(where: Any, name: str) -> Any:
    if where is None:
        return True
    v, _ = _array.operand(where, name, 0)
    return np.asarray(v, dtype=bool)


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


def _converted(
    v: np.ndarray[Any, Any], dt: np.dtype[Any], compute: np.dtype[Any], name: str
) -> np.ndarray[Any, Any]:
    """The input of a reduction asked for ``dt``, in ``compute``: refused
    where ``dt`` cannot hold a value (see docs/semantics.md, "Data safety";
    ``dtype=int8`` for values up to 300 raises instead of wrapping)."""
    _core.check_fits(v, dt, name)
    return _core.ignore_fp_errors(v.astype, compute)  # type: ignore[no-any-return]


def _accumulating(
    name: str,
    ufunc: np.ufunc,
    a: Any,
    axis: Any,
    dtype: Any,
    keepdims: bool,
    initial: Any,
    where: Any,
    promote_integers: bool,
) -> Array:
    v, dt = _input(a, name)
    x64 = _config.current().enable_x64
    if dtype is not None:
        out_dt = _explicit(dtype, name)
    elif promote_integers or dt == _BOOL:  # bool is counted even so (JAX)
        out_dt = _promote_integer(dt, x64)
    else:
        out_dt = dt
    compute = _F32 if out_dt in _UPCAST else out_dt
    kwargs: dict[str, Any] = {"keepdims": keepdims, "where": _where(where, name)}
    if initial is not None:
        kwargs["initial"] = initial
    axes = _axis(axis, v.ndim, name)
    out = _core.ignore_fp_errors(
        ufunc.reduce, _converted(v, out_dt, compute, name), axis=axes, **kwargs
    )
    return from_numpy(_core.ignore_fp_errors(np.asarray(out).astype, out_dt))


@traced(abstract.copying)
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
        "sum", np.add, a, axis, dtype, keepdims, initial, where, promote_integers
    )


@traced(abstract.copying)
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
        "prod", np.multiply, a, axis, dtype, keepdims, initial, where, promote_integers
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


@traced(abstract.copying)
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
    v, dt = _input(a, "mean")
    x64 = _config.current().enable_x64
    out_dt = _explicit(dtype, "mean") if dtype is not None else _inexact(dt, x64)
    axes = _axis(axis, v.ndim, "mean")
    mask = _where(where, "mean")
    kind = _dtypes.kind_of(out_dt)
    if kind == "b":
        raise TypeError(
            "mean: dtype=bool is not supported (a mean is a number); give an "
            "integer or floating dtype"
        )
    if kind in "iu":
        total = _int_sum(_to_int(v, out_dt, "mean"), axes, keepdims, mask)
        return from_numpy(_int_div(total, _count(v.shape, axes, keepdims, mask)))
    compute = _F32 if out_dt in _UPCAST else out_dt
    values = _converted(v, out_dt, compute, "mean")
    res = _core.ignore_fp_errors(
        np.mean, values, axis=axes, keepdims=keepdims, where=mask
    )
    return from_numpy(_core.ignore_fp_errors(np.asarray(res).astype, out_dt))


def _to_int(
    v: np.ndarray[Any, Any], dt: np.dtype[Any], name: str
) -> np.ndarray[Any, Any]:
    """``v`` converted to the integer dtype asked for (floats truncated, as
    JAX), refusing values it cannot hold (JAX saturates them)."""
    return _core.checked_cast(v, dt, name)


def _int_sum(
    v: np.ndarray[Any, Any], axes: Any, keepdims: bool, mask: Any
) -> np.ndarray[Any, Any]:
    """Sum in ``v``'s integer dtype, wrapping on overflow (as JAX)."""
    add: Any = np.add  # NumPy's stubs have no overload for a runtime keepdims
    return np.asarray(
        add.reduce(v, axis=axes, dtype=v.dtype, keepdims=keepdims, where=mask)
    )


def _count(
    shape: tuple[int, ...], axes: Any, keepdims: bool, mask: Any
) -> np.ndarray[Any, Any]:
    """How many elements each reduction counts (``where`` applied)."""
    selected = np.broadcast_to(np.asarray(mask, dtype=bool), shape)
    return np.asarray(np.sum(selected, axis=axes, keepdims=keepdims))


def _int_div(total: np.ndarray[Any, Any], count: Any) -> np.ndarray[Any, Any]:
    """``total / count`` in ``total``'s integer dtype, rounded toward zero as
    JAX's integer division; a count of 0 gives 0 (NumPy's value)."""
    dt = total.dtype
    signed = dt.kind == "i"
    num = total.astype(np.int64 if signed else np.uint64)
    den = np.asarray(count).astype(num.dtype)
    safe = np.where(den == 0, 1, den)
    if signed:
        q = np.abs(num) // np.abs(safe)
        q = np.where((num < 0) != (safe < 0), -q, q)
    else:
        q = num // safe
    q = np.where(den == 0, 0, q)
    out: np.ndarray[Any, Any] = _core.ignore_fp_errors(np.asarray(q).astype, dt)
    return out


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
    v, dt = _input(a, name)
    state = _config.current()
    axes = _axis(axis, v.ndim, name)
    mask = _where(where, name)
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
        if kind in "iu":
            return _int_var(v, out_dt, axes, ddof, keepdims, mask, mean, state)
        compute = _F32 if out_dt in _UPCAST else out_dt
        requested = out_dt
    else:
        compute = _inexact(dt, state.enable_x64)
        requested = compute
        out_dt = compute
        if _dtypes.kind_of(out_dt) == "c":  # the variance of complex numbers is real
            out_dt = _real_of(out_dt)
        if compute in _UPCAST:
            compute = _F32
    values = _converted(v, requested, compute, name)
    if mean is None:
        with warnings.catch_warnings():
            # The mean of nothing: nan, and the result is nan below.
            warnings.simplefilter("ignore", RuntimeWarning)
            center = _core.ignore_fp_errors(
                np.mean, values, axis=axes, keepdims=True, where=mask
            )
    else:
        center = _given_mean(mean, v.shape, compute, name)
    res = _core.ignore_fp_errors(
        _divided_squares, values, center, axes, keepdims, mask, ddof, name
    )
    return from_numpy(_core.ignore_fp_errors(np.asarray(res).astype, out_dt))


def _divided_squares(
    values: Any, center: Any, axes: Any, keepdims: bool, mask: Any, ddof: Any, name: str
) -> Any:
    centered = values - center
    if values.dtype.kind == "c":
        squares = (centered * centered.conj()).real
    else:
        squares = centered * centered
    total = np.sum(squares, axis=axes, keepdims=keepdims, where=mask)
    divisor = _count(values.shape, axes, keepdims, mask) - ddof
    # No degrees of freedom left: nan, as JAX (NumPy divides by zero).
    res = np.where(divisor > 0, total / np.where(divisor > 0, divisor, 1), np.nan)
    return np.sqrt(res) if name == "std" else res


def _real_of(dt: np.dtype[Any]) -> np.dtype[Any]:
    return np.dtype("float32") if dt == np.complex64 else np.dtype("float64")


def _given_mean(
    mean: Any, shape: tuple[int, ...], compute: np.dtype[Any], name: str
) -> np.ndarray[Any, Any]:
    """The ``mean=`` argument in the computation dtype, checked to line up
    with the input (the reduced axes kept, with length 1)."""
    m, mdt = _input(mean, name)
    fits = m.ndim in (0, len(shape))
    if fits:
        try:
            fits = np.broadcast_shapes(m.shape, shape) == shape
        except ValueError:
            fits = False
    if not fits:
        raise ValueError(
            f"{name}: mean= has shape {m.shape}, which does not line up with the "
            f"input's shape {shape}; give it the shape of the mean with the "
            "reduced axes kept: tnp.mean(x, axis=..., keepdims=True)"
        )
    if _dtypes.kind_of(mdt) == "c" and _dtypes.kind_of(compute) != "c":
        raise ValueError(
            f"{name}: mean= is complex ({mdt}) but the computation is real "
            f"({compute}); pass tnp.real(mean) if that is what you mean"
        )
    return _core.checked_cast(m, compute, f"{name} (mean=)")


def _int_var(
    v: np.ndarray[Any, Any],
    dt: np.dtype[Any],
    axes: Any,
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
    values = _to_int(v, dt, "var")
    if mean is None:
        center = _int_div(
            _int_sum(values, axes, True, mask), _count(v.shape, axes, True, mask)
        )
    else:
        given = _given_mean(mean, v.shape, np.dtype("float64"), "var")
        center = _to_int(given, dt, "var (mean=)")
    with np.errstate(all="ignore"):
        centered = values - center
        squares = centered * centered
    total = _int_sum(squares, axes, keepdims, mask)
    divisor = _count(v.shape, axes, keepdims, mask) - int(ddof)
    quotient = _int_div(total, np.where(divisor > 0, divisor, 0))
    out_dt, weak = _core.result_of([_core.aval(dt, False), float], state)
    res = np.where(divisor > 0, quotient.astype(out_dt), np.nan).astype(out_dt)
    return from_numpy(res, weak=weak)


@traced(abstract.copying)
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


@traced(abstract.copying)
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
    ufunc: np.ufunc,
    a: Any,
    axis: Any,
    out: None,
    keepdims: bool,
    initial: Any,
    where: Any,
) -> Array:
    _no_out(out, name)
    v, dt = _input(a, name)
    axes = _axis(axis, v.ndim, name)
    kwargs: dict[str, Any] = {"keepdims": keepdims}
    if where is not None:
        if initial is None:
            raise ValueError(
                f"{name}: reducing with where= needs an initial value "
                "(what to return where nothing is selected)"
            )
        kwargs["where"] = _where(where, name)
    if initial is not None:
        start, _ = _array.operand(initial, name, 1)
        kwargs["initial"] = _core.convert(start, dt, f"{name} (initial=)")
    try:
        res = _core.ignore_fp_errors(ufunc.reduce, v, axis=axes, **kwargs)
    except ValueError as err:
        if "zero-size" not in str(err):
            raise
        raise ValueError(
            f"{name}: reducing an axis of length 0 has no {name}imum; pass "
            "initial=... to choose the result"
        ) from None
    return from_numpy(np.asarray(res).astype(dt))


@traced(abstract.copying)
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
    return _extreme("max", np.maximum, a, axis, out, keepdims, initial, where)


@traced(abstract.copying)
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
    return _extreme("min", np.minimum, a, axis, out, keepdims, initial, where)


amax, amin = max, min


def _arg(
    name: str, fn: Callable[..., Any], a: Any, axis: Any, keepdims: bool | None
) -> Array:
    v, dt = _input(a, name)
    if _dtypes.kind_of(dt) == "c":
        raise TypeError(f"{name} does not accept complex input (no ordering)")
    if axis is not None:
        axis = _axis(axis, v.ndim, name)
    try:
        res = fn(v, axis=axis, keepdims=bool(keepdims))
    except ValueError as err:
        raise ValueError(
            f"{_core.prefixed(name, err)} (the axis has length 0)"
        ) from None
    x64 = _config.current().enable_x64
    return from_numpy(np.asarray(res).astype(_dtypes.default_dtype("i", x64)))


@traced(abstract.copying)
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
    return _arg("argmax", np.argmax, a, axis, keepdims)


@traced(abstract.copying)
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
    return _arg("argmin", np.argmin, a, axis, keepdims)


def _cumulative(name: str, ufunc: np.ufunc, a: Any, axis: Any, dtype: Any) -> Array:
    v, dt = _input(a, name)
    x64 = _config.current().enable_x64
    if dtype is not None:
        out_dt = _explicit(dtype, name)
    else:  # as JAX: only bool widens (integers keep their width here)
        out_dt = _dtypes.default_dtype("i", x64) if dt == _BOOL else dt
    compute = _F32 if out_dt in _UPCAST else out_dt
    if v.ndim == 0:
        v = v.reshape(1)
    if axis is None:
        v = v.reshape(-1)
        ax = 0
    else:
        ax = operator.index(_axis(axis, v.ndim, name))  # type: ignore[arg-type]
    values = _converted(v, out_dt, compute, name)
    res = _core.ignore_fp_errors(ufunc.accumulate, values, axis=ax)
    return from_numpy(_core.ignore_fp_errors(np.asarray(res).astype, out_dt))


@traced(abstract.flat_or_copying)
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
    return _cumulative("cumsum", np.add, a, axis, dtype)


@traced(abstract.flat_or_copying)
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
    return _cumulative("cumprod", np.multiply, a, axis, dtype)


def _logical(
    name: str, ufunc: np.ufunc, a: Any, axis: Any, keepdims: bool, where: Any
) -> Array:
    v, _ = _input(a, name)
    res = ufunc.reduce(
        v.astype(bool),
        axis=_axis(axis, v.ndim, name),
        keepdims=keepdims,
        where=_where(where, name),
    )
    return from_numpy(np.asarray(res, dtype=bool))


@traced(abstract.copying)
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
    return _logical("any", np.logical_or, a, axis, keepdims, where)


@traced(abstract.copying)
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
    return _logical("all", np.logical_and, a, axis, keepdims, where)


@traced(abstract.copying)
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
    _, dt = _input(a, "ptp")
    if dt == _BOOL:
        raise TypeError(
            "ptp does not accept dtype bool (max - min is a subtraction); cast "
            "first, e.g. x.astype('int32')"
        )
    top = max(a, axis, keepdims=keepdims)
    bottom = min(a, axis, keepdims=keepdims)
    with np.errstate(all="ignore"):
        res = np.asarray(top) - np.asarray(bottom)
    return from_numpy(np.asarray(res).astype(dt))


@traced(abstract.copying)
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


# -- lowerings (for differentiation) --------------------------------------------


@functools.cache
def _signature(function: Any) -> inspect.Signature:
    return inspect.signature(function._traced)


def _lowered_arguments(function: Any, args: Any, kwargs: Any) -> dict[str, Any]:
    bound = _signature(function).bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.arguments


def _lowered_masked(x: Any, where: Any, fill: Any) -> Any:
    """``x`` where ``where`` holds, ``fill`` elsewhere."""

    mask = _lower.broadcast(asarray(stop_gradient(where), dtype=bool), tuple(x.shape))
    return lax.select(mask, x, lax.full(x.shape, fill, x.dtype))


def _lowered_count(x: Any, axes: tuple[int, ...], where: Any) -> Any:
    """The number of elements reduced, as an array of ``x``'s dtype."""

    if where is None:
        n = math.prod(x.shape[a] for a in axes)
        # (as a float: a count past the default integer's range still
        # converts, exactly below 2**53, to the floating dtype)
        return lax.full(
            (), float(n) if _dtypes.kind_of(x.dtype) in "fc" else n, x.dtype
        )
    ones = _lowered_masked(lax.full(x.shape, 1, x.dtype), where, 0)
    return lax.reduce_sum(ones, axes)


def _lowered_extreme(dt: np.dtype[Any], largest: bool) -> Any:
    if _dtypes.kind_of(dt) in "fc":
        return -np.inf if largest else np.inf
    info = _dtypes.iinfo(dt)
    return info.min if largest else info.max


def _reduction(function: Any, kind: str) -> Callable[..., Any]:
    """The lowering of sum, prod, max or min (``kind``)."""

    reduce = {
        "sum": lax.reduce_sum,
        "prod": lax.reduce_prod,
        "max": lax.reduce_max,
        "min": lax.reduce_min,
    }[kind]
    combine = {"sum": lax.add, "prod": lax.mul, "max": lax.max, "min": lax.min}[kind]

    def lower(*args: Any, **kwargs: Any) -> Any:
        result = _lower.expected(function, *args, **kwargs)
        given = _lowered_arguments(function, args, kwargs)
        x = _lower.like(given["a"], result)
        axes = _lower.axes_of(given["axis"], x.ndim)
        if given["where"] is not None:
            fill = {"sum": 0, "prod": 1}.get(kind)
            if fill is None:
                fill = _lowered_extreme(x.dtype, kind == "max")
            x = _lowered_masked(x, given["where"], fill)
        out = reduce(x, axes)
        if given["initial"] is not None:
            out = combine(out, _lower.like(given["initial"], result))
        return _lower.finish(out, result)

    return lower


def _mean_lower(*args: Any, **kwargs: Any) -> Any:
    result = _lower.expected(mean, *args, **kwargs)
    given = _lowered_arguments(mean, args, kwargs)
    # float16 and bfloat16 accumulate and divide in float32, as mean does
    # (their count, 65505 elements or more, may not even fit float16).
    x = _lower.like(given["a"], _Aval(_F32) if result.dtype in _UPCAST else result)
    axes = _lower.axes_of(given["axis"], x.ndim)
    where = given["where"]
    total = lax.reduce_sum(x if where is None else _lowered_masked(x, where, 0), axes)
    return _lower.finish(lax.div(total, _lowered_count(x, axes, where)), result)


def _variance(function: Any, root: bool) -> Callable[..., Any]:
    """The lowering of var (std with ``root``)."""

    def lower(*args: Any, **kwargs: Any) -> Any:
        result = _lower.expected(function, *args, **kwargs)
        given = _lowered_arguments(function, args, kwargs)
        a = given["a"]
        complex_input = _dtypes.kind_of(_dtypes.dtype_of(a)) == "c"
        dt = _F32 if result.dtype in _UPCAST else result.dtype  # (as mean)
        if complex_input:
            dt = np.dtype(np.complex128 if dt == np.float64 else np.complex64)
        x = _lower.like(a, _Aval(dt))
        axes = _lower.axes_of(given["axis"], x.ndim)
        where = given["where"]
        n = _lowered_count(x, axes, where)
        kept = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
        if given["mean"] is not None:
            centre = _lower.like(given["mean"], _Aval(dt))
        else:
            total = lax.reduce_sum(
                x if where is None else _lowered_masked(x, where, 0), axes
            )
            centre = lax.div(total, n)
        d = lax.sub(x, _lower.broadcast(lax.reshape(centre, kept), tuple(x.shape)))
        sq = lax.real(lax.mul(d, lax.conj(d))) if complex_input else lax.mul(d, d)
        if where is not None:
            sq = _lowered_masked(sq, where, 0)
        ddof = given["ddof"] if given["correction"] is None else given["correction"]
        n = lax.real(n) if complex_input else n
        out = lax.div(lax.reduce_sum(sq, axes), lax.sub(n, lax.full((), ddof, n.dtype)))
        if root:
            out = lax.sqrt(out)
        return _lower.finish(out, result)

    return lower


class _Aval:
    """A dtype alone, where :func:`_lower.like` wants a result."""

    def __init__(self, dtype: np.dtype[Any]) -> None:
        self.dtype = dtype


def _lowered_cumulative(function: Any, prim: Callable[..., Any]) -> Callable[..., Any]:
    def lower(*args: Any, **kwargs: Any) -> Any:
        result = _lower.expected(function, *args, **kwargs)
        given = _lowered_arguments(function, args, kwargs)
        x = _lower.like(given["a"], result)
        axis = given["axis"]
        if axis is None or x.ndim == 0:
            x, axis = lax.reshape(x, (math.prod(x.shape),)), 0
        return _lower.finish(prim(x, int(axis) % x.ndim), result)

    return lower


def _ptp_lower(
    a: Any, axis: Any = None, out: None = None, keepdims: bool = False
) -> Any:
    result = _lower.expected(ptp, a, axis, out, keepdims)
    spread = max(a, axis, keepdims=keepdims) - min(a, axis, keepdims=keepdims)
    return _lower.finish(spread, result)


def _trace_lower(*args: Any, **kwargs: Any) -> Any:
    result = _lower.expected(trace, *args, **kwargs)
    given = _lowered_arguments(trace, args, kwargs)
    diag = diagonal(given["a"], given["offset"], given["axis1"], given["axis2"])
    return _lower.finish(sum(diag, axis=-1, dtype=result.dtype), result)


def _register() -> None:
    lowering(sum)(_reduction(sum, "sum"))
    lowering(prod)(_reduction(prod, "prod"))
    lowering(max)(_reduction(max, "max"))
    lowering(min)(_reduction(min, "min"))
    lowering(mean)(_mean_lower)
    lowering(var)(_variance(var, root=False))
    lowering(std)(_variance(std, root=True))
    lowering(cumsum)(_lowered_cumulative(cumsum, lax.cumsum))
    lowering(cumprod)(_lowered_cumulative(cumprod, lax.cumprod))
    lowering(ptp)(_ptp_lower)
    lowering(trace)(_trace_lower)
    for fn in (argmax, argmin, any, all):
        lowering(fn)(_lower.constant(fn))


_register()
