"""Reductions (``reduce_sum`` ... ``reduce_xor``, ``argmax``, ``argmin``),
cumulative reductions (``cumsum`` ... ``cummin``) and ``sort``.

Unlike ``typelattice.numpy.sum``, a reduction keeps the operand's dtype:
int8 sums wrap in int8, as ``jax.lax``. Sums and products keep the weak flag,
logical reductions and ``argmax``/``argmin`` give strong results. Float16,
bfloat16 and the smaller floats are accumulated in float32 and rounded once.

Derivatives: sums are linear (``reduce_sum``'s transpose broadcasts,
``cumsum``'s accumulates the other way); products use the products of the
other elements, computed with running products so that zeros are exact;
the maximum and minimum share the tangent equally among the elements equal
to the result (``reduce_max`` as JAX; ``cummax``/``cummin`` the same way
for each prefix, where JAX's split depends on its scan's tree); ``sort``
moves tangents with the permutation it applies.
"""

# Package-internal: the arrays' underscored slots are read by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

import numpy as np

from typelattice import _dtypes
from typelattice._lax import _elementwise as ew
from typelattice._lax import _structural as st
from typelattice._lax._indexing import take_along_axis
from typelattice._lax._primitive import (
    Primitive,
    ShapedArray,
    UndefinedPrimal,
    Zero,
    batch_size,
    bdim_at_front,
    broadcast_in_dim_p,
    check_accepts,
    defbatch_axes,
    defjvp,
    defjvp2,
    defjvp_zero,
    deflinear,
    ints_of,
    reduce_sum_p,
    reshape_p,
    to_array,
)

if TYPE_CHECKING:
    from typelattice._basearray import Array
    from typelattice.typing import ArrayLike, DTypeLike

__all__ = [
    "argmax",
    "argmin",
    "cummax",
    "cummin",
    "cumprod",
    "cumsum",
    "reduce_and",
    "reduce_max",
    "reduce_min",
    "reduce_or",
    "reduce_prod",
    "reduce_sum",
    "reduce_xor",
    "sort",
]

NDArray = np.ndarray[Any, Any]
Shape = tuple[int, ...]
_F32: Final = np.dtype(np.float32)


def _widens(dt: np.dtype[Any]) -> bool:
    """Whether values of ``dt`` accumulate in float32: narrow floats do
    (XLA does the same)."""
    return _dtypes.kind_of(dt) == "f" and dt.itemsize < 4


def _accumulating(x: NDArray) -> NDArray:
    """``x`` in the dtype it accumulates in (see :func:`_widens`)."""
    return x.astype(_F32) if _widens(x.dtype) else x


def _check_axes(fname: str, x: ShapedArray, axes: Shape) -> None:
    if any(not 0 <= a < x.ndim for a in axes):
        dims = ",".join(str(d) for d in x.shape)
        raise ValueError(
            f"reduction axes {axes} contains out-of-bounds indices for "
            f"{x.dtype.name}[{dims}]. lax takes no negative axes."
        )
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axes' of reduction: {axes}")


# -- reduce_* ---------------------------------------------------------------


def _identity(kind: str, dt: np.dtype[Any]) -> Any:
    """The value of an empty max (``kind='max'``) or min reduction."""
    k = _dtypes.kind_of(dt)
    if k == "b":
        return kind == "min"
    if k in "iu":
        info = _dtypes.iinfo(dt)
        return info.min if kind == "max" else info.max
    return -np.inf if kind == "max" else np.inf


def _reduce(
    prim: Primitive, kinds: str, fn: Callable[..., Any], *, keep_weak: bool
) -> Primitive:
    """``prim`` made a reduction over ``axes``, result of the operand's
    dtype: its abstract evaluation and implementation registered."""
    name = prim.name

    @prim.def_abstract_eval
    def _abstract(x: ShapedArray, *, axes: Shape) -> ShapedArray:
        if kinds == "biu" and _dtypes.kind_of(x.dtype) not in kinds:
            raise TypeError(
                f"logical reduction requires operand dtype bool or int, got "
                f"{x.dtype.name}."
            )
        check_accepts(name, x, kinds)
        _check_axes(name, x, axes)
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return ShapedArray(shape, x.dtype, x.weak_type and keep_weak)

    @prim.def_impl
    def _impl(x: NDArray, *, axes: Shape) -> NDArray:
        return ew._as(fn(x, axes), x.dtype)

    defbatch_axes(prim, "axes", kept=False)
    return prim


def _sum(x: NDArray, axes: Shape) -> Any:
    return np.sum(_accumulating(x), axis=axes, dtype=_accumulating(x).dtype)


def _prod(x: NDArray, axes: Shape) -> Any:
    return np.prod(_accumulating(x), axis=axes, dtype=_accumulating(x).dtype)


def _extreme(kind: str) -> Callable[[NDArray, Shape], Any]:
    def fn(x: NDArray, axes: Shape) -> Any:
        if x.dtype.kind == "c":  # by real part, then imaginary part
            pick = ew._lexicographic(np.greater if kind == "max" else np.less)
            moved = np.moveaxis(x, axes, tuple(range(len(axes))))
            flat = moved.reshape(-1, *moved.shape[len(axes) :])
            if not flat.shape[0]:  # empty: -inf or inf, as the real types
                return np.full(flat.shape[1:], _identity(kind, _F32) + 0j)
            out = flat[0]
            for row in flat[1:]:
                out = pick(out, row)
            return out
        ufunc = np.maximum if kind == "max" else np.minimum
        return ufunc.reduce(
            _accumulating(x), axis=axes, initial=_identity(kind, x.dtype)
        )

    return fn


def _logical(ufunc: np.ufunc) -> Callable[[NDArray, Shape], Any]:
    def fn(x: NDArray, axes: Shape) -> Any:
        return ufunc.reduce(x, axis=axes, dtype=x.dtype)

    return fn


def _kept_axes(ndim: int, axes: Shape) -> Shape:
    return tuple(d for d in range(ndim) if d not in axes)


def _shifted(x: Any, by: int, axis: int, fill: Any) -> Any:
    """``x`` moved ``by`` places along ``axis`` (to higher indices when
    positive), ``fill`` coming in: a pad that cuts what goes out."""
    config = [(0, 0, 0)] * x.ndim
    config[axis] = (by, -by, 0)
    return st.pad(x, fill, config)


def _products_of_others(x: Any, axis: int) -> Any:
    """For each element, the product of the others along ``axis``: running
    products from both sides, exact where ``x`` has zeros (dividing the
    product by the element would not be)."""
    before = _shifted(cumprod(x, axis), 1, axis, 1)
    after = _shifted(cumprod(x, axis, reverse=True), -1, axis, 1)
    return ew.mul(before, after)


# reduce_sum_p is declared in _primitive: the elementwise and structural
# rules sum cotangents with it.
_reduce(reduce_sum_p, "iufc", _sum, keep_weak=True)


@reduce_sum_p.def_fast
def _reduce_sum_fast(x: ShapedArray, *, axes: Shape) -> Callable[..., Any] | None:
    """The ufunc's reduction itself, where ``_sum`` needs no widening (what
    ``np.sum`` calls, without its Python layers)."""
    if _widens(x.dtype):
        return None
    return functools.partial(np.add.reduce, axis=axes, dtype=x.dtype)


def _reduce_sum_transpose(ct: Any, x: UndefinedPrimal, *, axes: Shape) -> list[Any]:
    shape = x.aval.shape
    return [
        broadcast_in_dim_p.bind(
            ct, shape=shape, broadcast_dimensions=_kept_axes(len(shape), axes)
        )
    ]


deflinear(reduce_sum_p, _reduce_sum_transpose)
reduce_prod_p = _reduce(Primitive("reduce_prod"), "iufc", _prod, keep_weak=True)


def _reduce_prod_jvp(g: Any, x: Any, *, axes: Shape) -> Any:
    # d prod(x) = sum_i g_i prod_(j != i) x_j, over the reduced axes laid
    # out as one last axis.
    kept = _kept_axes(x.ndim, axes)
    flat_shape = (*(x.shape[d] for d in kept), math.prod(x.shape[d] for d in axes))
    order = (*kept, *axes)
    flat_x = reshape_p.bind(x, new_sizes=flat_shape, dimensions=order)
    flat_g = reshape_p.bind(g, new_sizes=flat_shape, dimensions=order)
    others = _products_of_others(flat_x, len(kept))
    return reduce_sum_p.bind(ew.mul(flat_g, others), axes=(len(kept),))


defjvp(reduce_prod_p, _reduce_prod_jvp)


def _reduce_chooser_jvp(g: Any, ans: Any, x: Any, *, axes: Shape) -> Any:
    # The mean of the tangents of the elements equal to the result, as JAX.
    at = broadcast_in_dim_p.bind(
        ans, shape=tuple(x.shape), broadcast_dimensions=_kept_axes(x.ndim, axes)
    )
    chosen = ew._mask(ew.eq(x, at), g)
    total = reduce_sum_p.bind(ew.mul(g, chosen), axes=axes)
    return ew.div(total, reduce_sum_p.bind(chosen, axes=axes))


reduce_max_p = _reduce(
    Primitive("reduce_max"), "biufc", _extreme("max"), keep_weak=True
)
defjvp2(reduce_max_p, _reduce_chooser_jvp)
reduce_min_p = _reduce(
    Primitive("reduce_min"), "biufc", _extreme("min"), keep_weak=True
)
defjvp2(reduce_min_p, _reduce_chooser_jvp)


def _extreme_fast(kind: str, ufunc: np.ufunc) -> Callable[..., Any]:
    def fast(x: ShapedArray, *, axes: Shape) -> Callable[..., Any] | None:
        """The ufunc's reduction itself, for real dtypes that need no
        widening (``_extreme`` without its Python layer)."""
        if _dtypes.kind_of(x.dtype) not in "iuf" or _widens(x.dtype):
            return None
        return functools.partial(
            ufunc.reduce, axis=axes, initial=_identity(kind, x.dtype)
        )

    return fast


reduce_max_p.def_fast(_extreme_fast("max", np.maximum))
reduce_min_p.def_fast(_extreme_fast("min", np.minimum))
reduce_and_p = _reduce(
    Primitive("reduce_and"), "biu", _logical(np.bitwise_and), keep_weak=False
)
defjvp_zero(reduce_and_p)
reduce_or_p = _reduce(
    Primitive("reduce_or"), "biu", _logical(np.bitwise_or), keep_weak=False
)
defjvp_zero(reduce_or_p)
reduce_xor_p = _reduce(
    Primitive("reduce_xor"), "biu", _logical(np.bitwise_xor), keep_weak=False
)
defjvp_zero(reduce_xor_p)


def _reduce_call(prim: Primitive, x: ArrayLike, axes: Sequence[int]) -> Array:
    return prim.bind(  # type: ignore[no-any-return]
        to_array(x, prim.name, 0), axes=ints_of(prim.name, "axes", axes)
    )


def reduce_sum(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """The sum over ``axes``, in ``operand``'s dtype (integers wrap).

    Args:
      operand: an integer, floating or complex array.
      axes: distinct axes, not negative.

    Returns:
      An array of ``operand``'s dtype and weak flag, without ``axes``.

    >>> reduce_sum(np.int8([[100, 100], [1, 2]]), (1,))
    Array([-56,   3], dtype=int8)
    """
    return _reduce_call(reduce_sum_p, operand, axes)


def reduce_prod(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """The product over ``axes``, in ``operand``'s dtype.

    Args:
      operand: an integer, floating or complex array.
      axes: distinct axes, not negative.

    Returns:
      An array of ``operand``'s dtype and weak flag, without ``axes``.

    >>> reduce_prod(np.float32([[1.0, 2.0], [3.0, 4.0]]), (0, 1))
    Array(24., dtype=float32)
    """
    return _reduce_call(reduce_prod_p, operand, axes)


def reduce_max(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """The maximum over ``axes`` (NaN wins; an empty one is the dtype's
    smallest value, ``-inf`` for floats).

    Args:
      operand: an array.
      axes: distinct axes, not negative.

    Returns:
      An array of ``operand``'s dtype and weak flag, without ``axes``.

    >>> reduce_max(np.int8([[1, 5], [7, 2]]), (1,))
    Array([5, 7], dtype=int8)
    """
    return _reduce_call(reduce_max_p, operand, axes)


def reduce_min(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """The minimum over ``axes`` (NaN wins; an empty one is the dtype's
    largest value, ``inf`` for floats).

    Args:
      operand: an array.
      axes: distinct axes, not negative.

    Returns:
      An array of ``operand``'s dtype and weak flag, without ``axes``.

    >>> reduce_min(np.int8([[1, 5], [7, 2]]), (1,))
    Array([1, 2], dtype=int8)
    """
    return _reduce_call(reduce_min_p, operand, axes)


def reduce_and(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Bitwise (logical, for bools) and over ``axes``.

    Args:
      operand: a bool or integer array.
      axes: distinct axes, not negative.

    Returns:
      A strong array of ``operand``'s dtype, without ``axes``.

    >>> reduce_and(np.array([True, False]), (0,))
    Array(False, dtype=bool)
    """
    return _reduce_call(reduce_and_p, operand, axes)


def reduce_or(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Bitwise (logical, for bools) or over ``axes``.

    Args:
      operand: a bool or integer array.
      axes: distinct axes, not negative.

    Returns:
      A strong array of ``operand``'s dtype, without ``axes``.

    >>> reduce_or(np.array([True, False]), (0,))
    Array(True, dtype=bool)
    """
    return _reduce_call(reduce_or_p, operand, axes)


def reduce_xor(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Bitwise exclusive or over ``axes``.

    Args:
      operand: a bool or integer array.
      axes: distinct axes, not negative.

    Returns:
      A strong array of ``operand``'s dtype, without ``axes``.

    >>> reduce_xor(np.uint8([12, 10]), (0,))
    Array(6, dtype=uint8)
    """
    return _reduce_call(reduce_xor_p, operand, axes)


# -- argmax, argmin ---------------------------------------------------------


def _arg(name: str, fn: Callable[..., Any]) -> Primitive:
    prim = Primitive(name)

    @prim.def_abstract_eval
    def _abstract(
        x: ShapedArray, *, axes: Shape, index_dtype: np.dtype[Any]
    ) -> ShapedArray:
        check_accepts(name, x, "biuf")
        (axis,) = axes
        if not 0 <= axis < x.ndim:
            raise ValueError(f"Invalid axis {axis} for operand shape {x.shape}")
        if x.shape[axis] == 0:
            raise ValueError(
                f"argmin and argmax require non-empty reduced dimension. "
                f"operand.shape={x.shape} axis={axis}"
            )
        if _dtypes.kind_of(index_dtype) not in "iu":
            raise TypeError(
                f"index_dtype must be an integer type, but got {index_dtype.name}"
            )
        shape = tuple(d for i, d in enumerate(x.shape) if i != axis)
        return ShapedArray(shape, index_dtype, False)

    @prim.def_impl
    def _impl(x: NDArray, *, axes: Shape, index_dtype: np.dtype[Any]) -> NDArray:
        # NumPy's argmax and argmin give the first NaN's index, as XLA's do.
        return np.asarray(fn(_accumulating(x), axis=axes[0])).astype(index_dtype)

    defbatch_axes(prim, "axes", kept=False)
    return prim


argmax_p = _arg("argmax", np.argmax)
defjvp_zero(argmax_p)
argmin_p = _arg("argmin", np.argmin)
defjvp_zero(argmin_p)


def argmax(operand: ArrayLike, axis: int, index_dtype: DTypeLike) -> Array:
    """The index of the largest element along ``axis`` (the first one; a
    NaN counts as largest).

    Args:
      operand: a bool, integer or floating array.
      axis: the axis (not negative), which must not be empty.
      index_dtype: the integer dtype of the result.

    Returns:
      A strong array of ``index_dtype``, without ``axis``.

    >>> argmax(np.float32([[1.0, 3.0], [4.0, 2.0]]), 1, 'int32')
    Array([1, 0], dtype=int32)
    """
    dt = ew._new_dtype("argmax", index_dtype)
    return argmax_p.bind(  # type: ignore[no-any-return]
        to_array(operand, "argmax", 0), axes=(operator.index(axis),), index_dtype=dt
    )


def argmin(operand: ArrayLike, axis: int, index_dtype: DTypeLike) -> Array:
    """The index of the smallest element along ``axis`` (the first one; a
    NaN counts as smallest).

    Args:
      operand: a bool, integer or floating array.
      axis: the axis (not negative), which must not be empty.
      index_dtype: the integer dtype of the result.

    Returns:
      A strong array of ``index_dtype``, without ``axis``.

    >>> argmin(np.float32([[1.0, 3.0], [4.0, 2.0]]), 1, 'int32')
    Array([0, 1], dtype=int32)
    """
    dt = ew._new_dtype("argmin", index_dtype)
    return argmin_p.bind(  # type: ignore[no-any-return]
        to_array(operand, "argmin", 0), axes=(operator.index(axis),), index_dtype=dt
    )


# -- cumulative reductions --------------------------------------------------


def _cumulative(name: str, fn: Callable[[NDArray, int], NDArray]) -> Primitive:
    prim = Primitive(name)

    @prim.def_abstract_eval
    def _abstract(x: ShapedArray, *, axis: int, reverse: bool) -> ShapedArray:
        check_accepts(name, x, "iufc")
        if not 0 <= axis < x.ndim:
            raise ValueError(
                f"{name}: axis {axis} is out of range for an operand of rank "
                f"{x.ndim}; lax takes no negative axes"
            )
        return x

    @prim.def_impl
    def _impl(x: NDArray, *, axis: int, reverse: bool) -> NDArray:
        data = np.flip(x, axis) if reverse else x
        out = np.asarray(fn(_accumulating(data), axis)).astype(x.dtype, copy=False)
        return np.flip(out, axis) if reverse else out

    defbatch_axes(prim, "axis", kept=True)
    return prim


def _accumulate_lexicographic(kind: str) -> Callable[[NDArray, int], NDArray]:
    ufunc = np.maximum if kind == "max" else np.minimum

    def fn(x: NDArray, axis: int) -> NDArray:
        if x.dtype.kind != "c":
            return ufunc.accumulate(x, axis=axis)
        pick = ew._lexicographic(np.greater if kind == "max" else np.less)
        moved = np.moveaxis(x, axis, 0).copy()
        for i in range(1, moved.shape[0]):
            moved[i] = pick(moved[i - 1], moved[i])
        return np.moveaxis(moved, 0, axis)

    return fn


def _cumsum(x: NDArray, axis: int) -> NDArray:
    return np.cumsum(x, axis=axis, dtype=x.dtype)


def _cumprod(x: NDArray, axis: int) -> NDArray:
    # NumPy's stubs leave cumprod's result type unknown.
    return cast("NDArray", np.cumprod(x, axis=axis, dtype=x.dtype))


cumsum_p = _cumulative("cumsum", _cumsum)


def _cumsum_transpose(ct: Any, x: Any, *, axis: int, reverse: bool) -> list[Any]:
    return [cumsum_p.bind(ct, axis=axis, reverse=not reverse)]


deflinear(cumsum_p, _cumsum_transpose)
cumprod_p = _cumulative("cumprod", _cumprod)


def _linear_recurrence(a: Any, b: Any, axis: int) -> Any:
    """``h`` with ``h[i] = a[i] h[i-1] + b[i]`` along ``axis`` (``h[-1] =
    0``), in log2(n) steps: each step composes every element's map with
    the one ``shift`` places before, ``(a, b)`` after ``(a', b')`` being
    ``(a a', a b' + b)`` (a Hillis-Steele scan)."""
    shift = 1
    while shift < a.shape[axis]:
        b = ew.add(ew.mul(a, _shifted(b, shift, axis, 0)), b)
        a = ew.mul(a, _shifted(a, shift, axis, 1))
        shift *= 2
    return b


def _cumprod_jvp(g: Any, x: Any, *, axis: int, reverse: bool) -> Any:
    # y[i] = y[i-1] x[i], so dy[i] = x[i] dy[i-1] + y[i-1] g[i]: exact where
    # x has zeros, unlike y * cumsum(g / x).
    if reverse:
        x, g = (
            st.rev_p.bind(x, dimensions=(axis,)),
            st.rev_p.bind(g, dimensions=(axis,)),
        )
    before = _shifted(cumprod_p.bind(x, axis=axis, reverse=False), 1, axis, 1)
    out = _linear_recurrence(x, ew.mul(before, g), axis)
    return st.rev_p.bind(out, dimensions=(axis,)) if reverse else out


defjvp(cumprod_p, _cumprod_jvp)


def _cumulative_chooser_jvp(
    g: Any, ans: Any, x: Any, *, axis: int, reverse: bool
) -> Any:
    """cummax/cummin: at each position, the mean of the tangents of the
    elements so far equal to the running extreme (as reduce_max's rule on
    that prefix). Those elements are the ones that equalled the running
    extreme when they came, since the last change of it: sums over runs of
    equal running extremes, from running sums and the runs' starts."""
    if reverse:
        x, ans, g = (st.rev_p.bind(v, dimensions=(axis,)) for v in (x, ans, g))
    came = ew._mask(ew.eq(x, ans), g)
    index = st.iota_p.bind(
        dtype=np.dtype(np.int32), shape=tuple(x.shape), dimension=axis
    )
    starts = ew.bitwise_or(ew.ne(ans, _shifted(ans, 1, axis, 0)), ew.eq(index, 0))
    run = cummax_p.bind(
        ew.select(starts, index, ew._like(index, 0)), axis=axis, reverse=False
    )

    def run_sum(v: Any) -> Any:
        total = cumsum_p.bind(v, axis=axis, reverse=False)
        earlier = take_along_axis(_shifted(total, 1, axis, 0), run, axis)
        return ew.sub(total, earlier)

    out = ew.div(run_sum(ew.mul(g, came)), run_sum(came))
    return st.rev_p.bind(out, dimensions=(axis,)) if reverse else out


cummax_p = _cumulative("cummax", _accumulate_lexicographic("max"))
defjvp2(cummax_p, _cumulative_chooser_jvp)
cummin_p = _cumulative("cummin", _accumulate_lexicographic("min"))
defjvp2(cummin_p, _cumulative_chooser_jvp)


def _cumulative_call(prim: Primitive, x: ArrayLike, axis: int, reverse: bool) -> Array:
    return prim.bind(  # type: ignore[no-any-return]
        to_array(x, prim.name, 0), axis=operator.index(axis), reverse=bool(reverse)
    )


def cumsum(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
    """Running sums along ``axis``, in ``operand``'s dtype.

    Args:
      operand: an integer, floating or complex array.
      axis: the axis (not negative).
      reverse: accumulate from the end.

    Returns:
      An array of ``operand``'s dtype, shape and weak flag.

    >>> cumsum(np.int8([1, 2, 3]), 0, reverse=True)
    Array([6, 5, 3], dtype=int8)
    """
    return _cumulative_call(cumsum_p, operand, axis, reverse)


def cumprod(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
    """Running products along ``axis``, in ``operand``'s dtype.

    Args:
      operand: an integer, floating or complex array.
      axis: the axis (not negative).
      reverse: accumulate from the end.

    Returns:
      An array of ``operand``'s dtype, shape and weak flag.

    >>> cumprod(np.int8([1, 2, 3]))
    Array([1, 2, 6], dtype=int8)
    """
    return _cumulative_call(cumprod_p, operand, axis, reverse)


def cummax(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
    """Running maxima along ``axis`` (a NaN stays).

    Args:
      operand: an integer, floating or complex array.
      axis: the axis (not negative).
      reverse: accumulate from the end.

    Returns:
      An array of ``operand``'s dtype, shape and weak flag.

    >>> cummax(np.int8([1, 3, 2]))
    Array([1, 3, 3], dtype=int8)
    """
    return _cumulative_call(cummax_p, operand, axis, reverse)


def cummin(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
    """Running minima along ``axis`` (a NaN stays).

    Args:
      operand: an integer, floating or complex array.
      axis: the axis (not negative).
      reverse: accumulate from the end.

    Returns:
      An array of ``operand``'s dtype, shape and weak flag.

    >>> cummin(np.int8([3, 1, 2]))
    Array([3, 1, 1], dtype=int8)
    """
    return _cumulative_call(cummin_p, operand, axis, reverse)


# -- sort -------------------------------------------------------------------


def _sort_keys(x: NDArray) -> list[NDArray]:
    """Keys that order ``x`` as XLA's total order does, most significant
    first: -inf < ... < -0.0 < 0.0 < ... < inf < NaN; complex numbers by
    real part, then imaginary part."""
    if x.dtype.kind == "c":
        return [*_sort_keys(x.real), *_sort_keys(x.imag)]
    if _dtypes.kind_of(x.dtype) != "f":
        return [x]
    wide = x.astype(np.float64)
    nan = np.isnan(wide)
    return [nan, np.where(nan, 0.0, wide), ~np.signbit(wide)]


sort_p = Primitive("sort", multiple_results=True)


@sort_p.def_batch
def _sort_batch(
    args: Sequence[Any], dims: Sequence[int | None], **params: Any
) -> tuple[Any, Any]:
    size = batch_size(args, dims)
    xs = [bdim_at_front(x, d, size) for x, d in zip(args, dims, strict=True)]
    out = sort_p.bind(*xs, **{**params, "dimension": params["dimension"] + 1})
    return out, (0,) * len(out)


@sort_p.def_abstract_eval
def _sort_abstract(
    *xs: ShapedArray, dimension: int, is_stable: bool, num_keys: int
) -> tuple[ShapedArray, ...]:
    shapes = {x.shape for x in xs}
    if len(shapes) != 1:
        raise TypeError(
            f"Arguments to sort must have equal shapes, got: "
            f"{' '.join(str(x.shape) for x in xs)}"
        )
    if not 1 <= num_keys <= len(xs):
        raise ValueError(
            f"num_keys={num_keys} must be between 1 and len(operand)={len(xs)}"
        )
    if not 0 <= dimension < xs[0].ndim:
        raise ValueError(
            f"axis {dimension} is out of bounds for array of dimension {xs[0].ndim}"
        )
    return xs


def _plain_order(key: NDArray) -> bool:
    """Whether NumPy's own comparison orders ``key`` as :func:`_sort_keys`
    does: integers and booleans; NumPy floats with no zero (-0.0 goes
    before 0.0) and no NaN (NaNs go last, those with the sign bit first)."""
    kind = key.dtype.kind
    if kind in "biu":
        return True
    if kind != "f":  # complex, and the narrow floats NumPy does not order
        return False
    return not (np.isnan(key).any() or (key == 0).any())


@sort_p.def_impl
def _sort_impl(
    *xs: NDArray, dimension: int, is_stable: bool, num_keys: int
) -> tuple[NDArray, ...]:
    # Where NumPy's comparison is the total order, its sorts give the same
    # result as the keys below (one operand: the same values; several: the
    # same permutation, as both are stable): the common case, 5-10x faster.
    if num_keys == 1 and _plain_order(xs[0]):
        if len(xs) == 1:
            return (np.sort(xs[0], axis=dimension),)
        order = np.argsort(xs[0], axis=dimension, kind="stable")
        return tuple(np.take_along_axis(x, order, axis=dimension) for x in xs)
    moved = [np.moveaxis(x, dimension, -1) for x in xs]
    keys = [k for x in moved[:num_keys] for k in _sort_keys(x)]
    # lexsort sorts by its last key first, and is stable.
    order = np.lexsort(keys[::-1], axis=-1)
    return tuple(
        np.moveaxis(np.take_along_axis(x, order, axis=-1), -1, dimension) for x in moved
    )


def _sort_jvp(
    primals: Any, tangents: Any, *, dimension: int, is_stable: bool, num_keys: int
) -> tuple[Any, Any]:
    # Sort the positions along with the operands, then move each tangent by
    # that permutation.
    shape = tuple(primals[0].shape)
    index = st.iota_p.bind(dtype=np.dtype(np.int32), shape=shape, dimension=dimension)
    *out, order = sort_p.bind(
        *primals, index, dimension=dimension, is_stable=is_stable, num_keys=num_keys
    )
    moved = tuple(
        Zero.of(o) if type(t) is Zero else take_along_axis(t, order, dimension)
        for o, t in zip(out, tangents, strict=True)
    )
    return tuple(out), moved


sort_p.def_jvp(_sort_jvp)


def sort(
    operand: ArrayLike | Sequence[ArrayLike],
    dimension: int = -1,
    is_stable: bool = True,
    num_keys: int = 1,
) -> Any:
    """Sort along ``dimension``; several operands are sorted together by
    their first ``num_keys`` (lexicographically).

    The order is XLA's total order: ``-0.0`` before ``0.0``, NaN last;
    complex numbers by real part, then imaginary part. The sort is always
    stable.

    Args:
      operand: an array, or a sequence of arrays of one shape.
      dimension: the axis (negative ones count from the end).
      is_stable: accepted for compatibility (the sort is stable).
      num_keys: how many of the operands are keys.

    Returns:
      The sorted array, or a tuple of them for a sequence; each keeps its
      dtype and weak flag.

    >>> sort(np.float32([3.0, np.nan, -1.0]))
    Array([-1.,  3., nan], dtype=float32)
    >>> sort((np.int8([2, 1]), np.int8([20, 10])))
    (Array([1, 2], dtype=int8), Array([10, 20], dtype=int8))
    """
    single = not isinstance(operand, Sequence)
    items: list[Any] = [operand] if single else list(cast("Sequence[Any]", operand))
    arrays = [to_array(x, "sort", 0) for x in items]
    ndim = arrays[0].ndim if arrays else 0
    d = operator.index(dimension)
    if not -ndim <= d < ndim:
        raise ValueError(f"axis {d} is out of bounds for array of dimension {ndim}")
    out = sort_p.bind(
        *arrays,
        dimension=d % ndim,
        is_stable=bool(is_stable),
        num_keys=operator.index(num_keys),
    )
    return out[0] if single else out
