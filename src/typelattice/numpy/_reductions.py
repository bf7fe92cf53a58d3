"""Reductions: sum, prod, mean, var, std, max, min, argmax, argmin, cumsum,
cumprod, any, all. Their results are strong arrays, with jax.numpy's dtype
rules: sum and prod widen narrow integers to the default integer, mean/var/std
are inexact, and float16/bfloat16 accumulate in float32."""

from __future__ import annotations

import builtins
import operator
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from typelattice import _config, _dtypes
from typelattice.numpy import _core
from typelattice.numpy._array import Array, from_numpy

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
    v, key = _core.operand(a, name, 0)
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
    v, _ = _core.operand(where, name, 0)
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
    from typelattice.numpy._creation import (
        _requested,  # pyright: ignore[reportPrivateUsage]
    )

    return _requested(dtype, name)


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
        ufunc.reduce, _core.ignore_fp_errors(v.astype, compute), axis=axes, **kwargs
    )
    return from_numpy(_core.ignore_fp_errors(np.asarray(out).astype, out_dt))


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

    >>> import typelattice.numpy as tnp
    >>> tnp.sum(tnp.asarray([100, 100], dtype='int8'))
    Array(200, dtype=int32)
    """
    _no_out(out, "sum")
    return _accumulating(
        "sum", np.add, a, axis, dtype, keepdims, initial, where, promote_integers
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
    """Product of elements, widened like :func:`sum`."""
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

    >>> import typelattice.numpy as tnp
    >>> tnp.mean(tnp.asarray([1, 2], dtype='int8'))
    Array(1.5, dtype=float32)
    """
    _no_out(out, "mean")
    v, dt = _input(a, "mean")
    x64 = _config.current().enable_x64
    out_dt = _explicit(dtype, "mean") if dtype is not None else _inexact(dt, x64)
    compute = _F32 if out_dt in _UPCAST else out_dt
    if _dtypes.kind_of(compute) not in "fc":
        compute = _dtypes.default_dtype("f", x64)
    res = _core.ignore_fp_errors(
        np.mean,
        v.astype(compute),
        axis=_axis(axis, v.ndim, "mean"),
        keepdims=keepdims,
        where=_where(where, "mean"),
    )
    return from_numpy(_core.ignore_fp_errors(np.asarray(res).astype, out_dt))


def _moment(
    name: str,
    fn: Callable[..., Any],
    a: Any,
    axis: Any,
    dtype: Any,
    ddof: Any,
    keepdims: bool,
    where: Any,
    correction: Any,
) -> Array:
    if correction is not None:
        if ddof != 0:
            raise ValueError(f"{name}: give ddof or correction, not both")
        ddof = correction
    v, dt = _input(a, name)
    x64 = _config.current().enable_x64
    if dtype is not None:
        out_dt = _explicit(dtype, name)
    else:
        out_dt = _inexact(dt, x64)
        if _dtypes.kind_of(out_dt) == "c":  # the variance of complex numbers is real
            out_dt = (
                np.dtype("float32") if out_dt == np.complex64 else np.dtype("float64")
            )
    compute = _F32 if out_dt in _UPCAST else _inexact(dt, x64)
    if _dtypes.kind_of(compute) == "f" and compute in _UPCAST:
        compute = _F32
    with warnings.catch_warnings():
        # "Degrees of freedom <= 0": handled below.
        warnings.simplefilter("ignore", RuntimeWarning)
        res = _core.ignore_fp_errors(
            fn,
            v.astype(compute),
            axis=_axis(axis, v.ndim, name),
            ddof=ddof,
            keepdims=keepdims,
            where=_where(where, name),
        )
    res = np.asarray(res)
    count = np.sum(
        np.broadcast_to(np.asarray(_where(where, name)), v.shape),
        axis=_axis(axis, v.ndim, name),
        keepdims=keepdims,
    )
    if np.any(count <= ddof):
        # No degrees of freedom left: nan, as JAX (NumPy divides by zero).
        res = np.where(count <= ddof, np.nan, res)
    return from_numpy(_core.ignore_fp_errors(res.astype, out_dt))


def var(
    a: ArrayLike,
    axis: int | Sequence[int] | None = None,
    dtype: DTypeLike | None = None,
    out: None = None,
    ddof: int = 0,
    keepdims: bool = False,
    *,
    where: ArrayLike | None = None,
    correction: Any = None,
) -> Array:
    """Variance (``ddof`` or ``correction`` for the divisor ``N - ddof``)."""
    _no_out(out, "var")
    return _moment("var", np.var, a, axis, dtype, ddof, keepdims, where, correction)


def std(
    a: ArrayLike,
    axis: int | Sequence[int] | None = None,
    dtype: DTypeLike | None = None,
    out: None = None,
    ddof: int = 0,
    keepdims: bool = False,
    *,
    where: ArrayLike | None = None,
    correction: Any = None,
) -> Array:
    """Standard deviation (the square root of :func:`var`)."""
    _no_out(out, "std")
    return _moment("std", np.std, a, axis, dtype, ddof, keepdims, where, correction)


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
        kwargs["initial"] = (
            _core.python_scalar_to(initial, dt, name)
            if isinstance(initial, int | float | complex)
            else initial
        )
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


def max(  # noqa: A001
    a: ArrayLike,
    axis: int | Sequence[int] | None = None,
    out: None = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
) -> Array:
    """Largest element (NaN propagates); the input's dtype, strong."""
    return _extreme("max", np.maximum, a, axis, out, keepdims, initial, where)


def min(  # noqa: A001
    a: ArrayLike,
    axis: int | Sequence[int] | None = None,
    out: None = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
) -> Array:
    """Smallest element (NaN propagates); the input's dtype, strong."""
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
        raise ValueError(f"{name}: {err} (the axis has length 0)") from None
    x64 = _config.current().enable_x64
    return from_numpy(np.asarray(res).astype(_dtypes.default_dtype("i", x64)))


def argmax(
    a: ArrayLike,
    axis: int | None = None,
    out: None = None,
    keepdims: bool | None = None,
) -> Array:
    """Index of the largest element (the default integer type)."""
    _no_out(out, "argmax")
    return _arg("argmax", np.argmax, a, axis, keepdims)


def argmin(
    a: ArrayLike,
    axis: int | None = None,
    out: None = None,
    keepdims: bool | None = None,
) -> Array:
    """Index of the smallest element (the default integer type)."""
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
    res = _core.ignore_fp_errors(ufunc.accumulate, v.astype(compute), axis=ax)
    return from_numpy(_core.ignore_fp_errors(np.asarray(res).astype, out_dt))


def cumsum(
    a: ArrayLike,
    axis: int | None = None,
    dtype: DTypeLike | None = None,
    out: None = None,
) -> Array:
    """Running sum along an axis (the flattened array by default)."""
    _no_out(out, "cumsum")
    return _cumulative("cumsum", np.add, a, axis, dtype)


def cumprod(
    a: ArrayLike,
    axis: int | None = None,
    dtype: DTypeLike | None = None,
    out: None = None,
) -> Array:
    """Running product along an axis (the flattened array by default)."""
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


def any(  # noqa: A001
    a: ArrayLike,
    axis: int | Sequence[int] | None = None,
    out: None = None,
    keepdims: bool = False,
    *,
    where: ArrayLike | None = None,
) -> Array:
    """Whether any element is true (nonzero)."""
    _no_out(out, "any")
    return _logical("any", np.logical_or, a, axis, keepdims, where)


def all(  # noqa: A001
    a: ArrayLike,
    axis: int | Sequence[int] | None = None,
    out: None = None,
    keepdims: bool = False,
    *,
    where: ArrayLike | None = None,
) -> Array:
    """Whether every element is true (nonzero)."""
    _no_out(out, "all")
    return _logical("all", np.logical_and, a, axis, keepdims, where)
