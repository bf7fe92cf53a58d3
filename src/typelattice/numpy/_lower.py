"""Lowerings: namespace functions written with ``typelattice.lax``
primitives, for the differentiation transformations.

Elementwise functions name theirs in their :class:`Op` (``lower=``): a
primitive, or one of the compositions below, called on operands already
promoted to the compute dtype and broadcast to one shape. Other functions
register theirs with :func:`~typelattice._tracing.trace.lowering` next to
their definitions. Every composition here computes what NumPy computes
(the same formula); the tests compare them with the eager functions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from typelattice import _dtypes
from typelattice import _lax as lax
from typelattice._array import ArrayImpl, wrap
from typelattice._basearray import Array as ArrayType
from typelattice._basearray import Array as BaseArray
from typelattice._config import enable_x64
from typelattice._core import aval
from typelattice._lax import _elementwise
from typelattice._lax._indexing import take_along_axis
from typelattice._tracing import abstract, tree
from typelattice._tracing.ad import stop_gradient
from typelattice._tracing.tracer import (
    ConcretizationTypeError,
    Trace,
    Tracer,
    TransformTracer,
    current_trace,
    dummy,
)

Array = Any


def identity(x: Array) -> Array:
    return x


def _is_complex(x: Array) -> bool:
    return _dtypes.kind_of(x.dtype) == "c"


def floor_mod(x: Array, y: Array) -> Array:
    """``x - floor(x / y) * y`` as NumPy's ``remainder``: the remainder of
    truncated division, moved by ``y`` when the signs differ."""
    r = lax.rem(x, y)
    fix = lax.bitwise_and(lax.ne(r, 0), lax.ne(lax.lt(r, 0), lax.lt(y, 0)))
    return lax.select(fix, lax.add(r, y), r)


def logaddexp(x: Array, y: Array) -> Array:
    """``max(x, y) + log1p(exp(-|x - y|))``; NaN where ``x - y`` is (two
    infinities of one sign give that infinity). Complex operands: the one
    of larger real part plus ``log1p(exp(other - it))``, as computed
    eagerly."""
    if _is_complex(x):
        first = lax.ge(lax.real(x), lax.real(y))
        big, small = lax.select(first, x, y), lax.select(first, y, x)
        return lax.add(big, lax.log1p(lax.exp(lax.sub(small, big))))
    amax = lax.max(x, y)
    delta = lax.sub(x, y)
    safe = lax.select(lax.ne(delta, delta), _full_like(delta, 0), delta)
    out = lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(safe)))))
    equal_inf = lax.bitwise_and(lax.eq(x, y), lax.bitwise_not(lax.is_finite(x)))
    nan = lax.ne(delta, delta)
    return lax.select(equal_inf, x, lax.select(nan, delta, out))


def logaddexp2(x: Array, y: Array) -> Array:
    """``max(x, y) + log2(1 + 2**-|x - y|)``; complex operands: by
    :func:`logaddexp` of ``x * ln 2`` and ``y * ln 2``, divided by ``ln 2``."""
    if _is_complex(x):
        ln2 = _full_like(x, math.log(2))
        return lax.div(logaddexp(lax.mul(x, ln2), lax.mul(y, ln2)), ln2)
    amax = lax.max(x, y)
    delta = lax.sub(x, y)
    safe = lax.select(lax.ne(delta, delta), _full_like(delta, 0), delta)
    tail = lax.mul(lax.log1p(lax.exp2(lax.neg(lax.abs(safe)))), 1 / math.log(2))
    out = lax.add(amax, tail)
    equal_inf = lax.bitwise_and(lax.eq(x, y), lax.bitwise_not(lax.is_finite(x)))
    nan = lax.ne(delta, delta)
    return lax.select(equal_inf, x, lax.select(nan, delta, out))


def hypot(x: Array, y: Array) -> Array:
    """``sqrt(x**2 + y**2)``, scaled by the larger magnitude so that the
    squares cannot overflow."""
    ax, ay = lax.abs(x), lax.abs(y)
    big, small = lax.max(ax, ay), lax.min(ax, ay)
    zero = lax.eq(big, 0)
    safe = lax.select(zero, _full_like(big, 1), big)
    ratio = lax.div(small, safe)
    out = lax.mul(big, lax.sqrt(lax.add(lax.mul(ratio, ratio), 1)))
    inf = lax.bitwise_or(lax.eq(ax, np.inf), lax.eq(ay, np.inf))
    return lax.select(inf, _full_like(big, np.inf), out)


def fmax(x: Array, y: Array) -> Array:
    """The larger of ``x`` and ``y``, ignoring NaN."""
    return lax.select(lax.ne(y, y), x, lax.select(lax.ne(x, x), y, lax.max(x, y)))


def fmin(x: Array, y: Array) -> Array:
    """The smaller of ``x`` and ``y``, ignoring NaN."""
    return lax.select(lax.ne(y, y), x, lax.select(lax.ne(x, x), y, lax.min(x, y)))


def reciprocal(x: Array) -> Array:
    return lax.div(_full_like(x, 1), x)


def square(x: Array) -> Array:
    return lax.mul(x, x)


def log2(x: Array) -> Array:
    """``log(x) / log(2)``."""
    return lax.div(lax.log(x), _full_like(x, math.log(2)))


def log10(x: Array) -> Array:
    """``log(x) / log(10)``."""
    return lax.div(lax.log(x), _full_like(x, math.log(10)))


def conj(x: Array) -> Array:
    return lax.conj(x) if _is_complex(x) else x


def real(x: Array) -> Array:
    return lax.real(x) if _is_complex(x) else x


def imag(x: Array) -> Array:
    return lax.imag(x) if _is_complex(x) else _full_like(x, 0)


def angle(x: Array) -> Array:
    """The angle of a complex number: ``atan2(imag, real)``."""
    if _is_complex(x):
        return lax.atan2(lax.imag(x), lax.real(x))
    return lax.atan2(_full_like(x, 0), x)


def _full_like(x: Array, value: Any) -> Array:
    """A constant of ``x``'s shape and dtype."""
    return lax.full(x.shape, value, x.dtype)


# -- functions that move elements --------------------------------------------
# A function that only moves, copies or drops elements of its data arguments
# (reshape, transpose, indexing, concatenate, tile...) is, on any values, a
# gather from the data's elements laid end to end: the function applied to
# arrays of element numbers says which. Its lowering runs it on such arrays
# (twice, with two numberings: a value that moves with the numbering is an
# element, one that stays is a constant the function wrote, as pad's zeros),
# then gathers with primitives, whose rules differentiate it.


def _number_data(
    args: tuple[Any, ...], kwargs: dict[str, Any], positions: Sequence[int] | None
) -> tuple[list[tuple[int, Any]], list[Any], tree.TreeDef]:
    """The data arrays among the arguments: (leaf position, array) pairs,
    and the flattened arguments."""

    selected = range(len(args)) if positions is None else positions
    leaves, treedef = tree.flatten((args, kwargs))
    data: list[tuple[int, Any]] = []
    start = 0  # the positional arguments' leaves come first, in order
    for i, arg in enumerate(args):
        n = len(tree.leaves(arg))
        if i in selected:
            data += [
                (pos, leaves[pos])
                for pos in range(start, start + n)
                if isinstance(leaves[pos], ArrayType | np.ndarray)
            ]
        start += n
    return data, leaves, treedef


def moves_elements(function: Any, *positions: int) -> Callable[..., Any]:
    """The lowering of a namespace function that moves elements of its
    arguments at ``positions`` (each an array or a sequence of arrays; all
    positional arguments when none are given)."""

    fn = function._traced
    chosen = positions or None

    def lower(*args: Any, **kwargs: Any) -> Any:
        data, leaves, treedef = _number_data(args, kwargs, chosen)
        sizes = [math.prod(x.shape) for _, x in data]
        total = sum(sizes)
        if 2 * total + 2 >= 2**53:
            raise NotImplementedError(
                f"typelattice.numpy.{fn.__name__.lstrip('_')}: differentiating "
                f"it on {total} elements is not supported (2**30 at most)"
            )

        # Element numbers as float64 (exact below 2**53, and any value the
        # function writes can be stored beside them), complex128 where a
        # complex value is written, in 64-bit mode so that nothing narrows
        # them.
        complex_values = any(
            isinstance(leaf, complex)
            or (isinstance(leaf, BaseArray) and _dtypes.kind_of(leaf.dtype) == "c")
            for leaf in leaves
        )
        number_dtype = np.dtype(np.complex128 if complex_values else np.float64)

        def numbered(base: int) -> Any:
            filled = list(leaves)
            start = base
            for (pos, x), n in zip(data, sizes, strict=True):
                numbers: Any = np.arange(start, start + n, dtype=number_dtype)
                numbers = numbers.reshape(x.shape)
                filled[pos] = wrap(numbers, aval(number_dtype, False))
                start += n
            a, k = treedef.unflatten(filled)
            k = {key: v for key, v in k.items() if key != "dtype"}
            with enable_x64():
                return [np.real(o._value) for o in tree.leaves(fn(*a, **k))]

        shaped = expected(function, *args, **kwargs)
        out_leaves, out_tree = tree.flatten(shaped)
        sources: dict[Any, Any] = {}

        def source_in(dt: Any) -> Any:
            """The data's elements end to end, in ``dt``."""
            if dt not in sources:
                parts = [
                    _cast(lax.reshape(x, (n,)), dt)
                    for (_, x), n in zip(data, sizes, strict=True)
                ]
                sources[dt] = parts[0] if len(parts) == 1 else lax.concatenate(parts, 0)
            return sources[dt]

        if _computes_nothing():
            # Under eval_shape nothing runs, and the element numbers (arrays
            # of the data's size) are not needed: a gather of the right
            # shapes, from element 0, has the same abstract values.
            results: list[Any] = []
            for o in out_leaves:
                flat = lax.full((math.prod(o.shape),), 0, "int32")
                taken = _take_flat(source_in(o.dtype), flat) if total else None
                out = lax.full(tuple(o.shape), 0, o.dtype) if taken is None else taken
                out = lax.reshape(out, tuple(o.shape))
                results.append(_cast(out, o.dtype, o.weak_type))
            return out_tree.unflatten(results)
        first, second = numbered(1), numbered(total + 2)
        results = []
        for o, v1, v2 in zip(out_leaves, first, second, strict=True):
            dt = o.dtype
            moved = (v2 - v1) == total + 1
            index = np.where(moved, v1 - 1, 0).astype(np.int64)
            if moved.all() and np.array_equal(index.ravel(), np.arange(total)):
                # A reshape: no gather (none at all for one array kept as is).
                whole = _cast(data[0][1], dt) if len(data) == 1 else source_in(dt)
                out = lax.reshape(whole, tuple(o.shape))
            else:
                flat = wrap(
                    index.ravel().astype(np.int32), aval(np.dtype(np.int32), False)
                )
                out = lax.reshape(_take_flat(source_in(dt), flat), tuple(o.shape))
                if not moved.all():
                    constants = wrap(np.where(moved, 0, v1).astype(dt), aval(dt, False))
                    out = lax.select(
                        wrap(moved, aval(np.dtype(bool), False)), out, constants
                    )
            results.append(_cast(out, dt, o.weak_type))
        return out_tree.unflatten(results)

    return lower


def _computes_nothing() -> bool:
    """Whether the trace running is only evaluated (eval_shape): what is
    recorded in it never runs."""

    trace = current_trace()
    return trace is not None and trace.abstract_only


def _cast(x: Array, dtype: Any, weak: bool = False) -> Array:
    return _elementwise._cast(x, np.dtype(dtype), weak)  # pyright: ignore[reportPrivateUsage]


def _take_flat(source: Array, index: Array) -> Array:
    """``source[index]`` for a 1-d source and 1-d integer index, a gather."""

    return take_along_axis(source, index, 0)


def scatter_add_flat(size: int, index: Array, updates: Array, like: Array) -> Array:
    """Zeros of ``size`` elements (``like``'s dtype) with ``updates`` added
    at the flat positions ``index`` (repeats accumulate)."""
    dn = lax.ScatterDimensionNumbers(
        update_window_dims=(),
        inserted_window_dims=(0,),
        scatter_dims_to_operand_dims=(0,),
    )
    zeros = lax.full((size,), 0, like.dtype)
    column = lax.reshape(index, (*index.shape, 1))
    return lax.scatter_add(zeros, column, updates, dn)


# -- helpers for the lowerings of the other modules ------------------------------


def expected(function: Any, *args: Any, **kwargs: Any) -> Any:
    """What ``function`` (a traced namespace function) gives on these
    arguments, for their abstract values only: the results' dtypes, weak
    flags and shapes, and every error the function raises for them. By the
    function's shape rule, as jit evaluates it (no computation on the
    real sizes), else on stand-ins of full size."""

    rule = function._rule
    if rule is not abstract.full_size:
        # First with every array abstract (no size is kept, so nothing is
        # computed at full size), then with the concrete ones as they are
        # (their values may decide the shape: a boolean mask).
        for every in (True, False):
            scratch = Trace("lowering", None, abstract_only=True)

            def tracer(leaf: Any, every: bool = every, scratch: Trace = scratch) -> Any:
                if isinstance(leaf, TransformTracer) or (
                    every and type(leaf) is ArrayImpl
                ):
                    key = aval(leaf.dtype, leaf.weak_type)
                    return scratch.new_tracer(key, tuple(leaf.shape))
                return leaf

            a, k = tree.tree_map(tracer, (args, kwargs))
            try:
                return rule(function.__name__, function._traced, a, k)
            except (abstract.Fallback, ConcretizationTypeError):
                pass

    def standin(leaf: Any) -> Any:
        if isinstance(leaf, Tracer | TransformTracer):
            return dummy(aval(leaf.dtype, leaf.weak_type), tuple(leaf.shape))
        return leaf

    a, k = tree.tree_map(standin, (args, kwargs))
    try:
        return function._traced(*a, **k)
    except ConcretizationTypeError:  # it reads values: give it zeros

        def zeros(leaf: Any) -> Any:
            if isinstance(leaf, Tracer | TransformTracer):
                value = np.zeros(leaf.shape, leaf.dtype)
                return wrap(value, aval(leaf.dtype, leaf.weak_type))
            return leaf

        a, k = tree.tree_map(zeros, (args, kwargs))
        return function._traced(*a, **k)


def constant(function: Any) -> Callable[..., Any]:
    """The lowering of a function whose derivative is zero (integer or
    bool results, piecewise constant values): the function on the values."""

    def lower(*args: Any, **kwargs: Any) -> Any:
        a, k = stop_gradient((args, kwargs))
        return function(*a, **k)

    return lower


def like(x: Any, result: Any) -> Array:
    """``x`` (an array or value) as an array of ``result``'s dtype, with
    ``result``'s weak flag when it is an array already."""

    if isinstance(x, ArrayType):
        return _cast(x, result.dtype, x.weak_type)
    return wrap(np.asarray(x, result.dtype), aval(result.dtype, False))


def finish(x: Array, result: Any) -> Array:
    """``x`` given ``result``'s dtype, weak flag and shape (a reshape)."""
    if tuple(x.shape) != tuple(result.shape):
        x = lax.reshape(x, tuple(result.shape))
    return _cast(x, result.dtype, result.weak_type)


def broadcast(x: Array, shape: tuple[int, ...]) -> Array:
    """``x`` broadcast to ``shape`` (NumPy's rules: trailing axes align)."""
    if tuple(x.shape) == shape:
        return x
    n = len(shape)
    return lax.broadcast_in_dim(x, shape, tuple(range(n - x.ndim, n)))


def axes_of(axis: Any, ndim: int) -> tuple[int, ...]:
    """A reduction's ``axis`` argument as sorted non-negative axes."""
    if axis is None or ndim == 0:  # (a 0-d array has no axis to reduce)
        return tuple(range(ndim))
    if isinstance(axis, int | np.integer):
        axis = (axis,)
    return tuple(sorted(int(a) % ndim if ndim else 0 for a in axis))
