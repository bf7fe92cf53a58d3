"""Abstract evaluation of the non-elementwise functions while tracing.

The dtype and weak flag that a namespace function gives do not depend on the
sizes of its operands: only on their dtypes, weak flags and ranks, and on
the other arguments. So a function called on tracers is run on *stand-ins*:
placeholders with the tracers' dtypes, weak flags and ranks, whose sizes are
small. Sizes are replaced consistently (:class:`_Dims`): 0 and 1 are kept,
equal sizes stay equal and different sizes different, and sizes of the
concrete arrays among the arguments are kept as they are, so the call on
stand-ins is valid exactly when the call on the real sizes is, and raises
the same errors. The result's shape comes from the rule attached to each
function where it is defined (``@traced(abstract.nonzero)`` in the
namespace's modules, see :func:`typelattice._tracing.trace.traced`); the
rules are the functions of this module, which compute the result's shape
from the real shapes.

Functions whose rule is :func:`full_size`, and those whose stand-in run
raises (the error is then raised by the run on full-size placeholders, with
its exact message, when the operands are of a moderate size), are evaluated
on full-size placeholders: broadcast arrays that take no memory per
element, enough for the views (``reshape``, ``transpose``, basic indexing,
``split``).

Inside :func:`typelattice.eval_shape` (an abstract-only trace), the creation
functions (``zeros``, ``ones``, ``full``, ``arange``, ``eye``...) give
tracers too, as in JAX, instead of arrays allocated at full size: by their
*creation rule* (:func:`filled`, :func:`eye`, :func:`arange`,
:func:`linspace`), attached beside the other.
"""

# Package-internal: reads the arrays' and tracers' underscored slots by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import contextvars
import inspect
import math
import operator
from collections.abc import Callable, Iterator
from typing import Any, Final, cast

import numpy as np

from typelattice._array import ArrayImpl, wrap
from typelattice._basearray import Array
from typelattice._tracing import tree
from typelattice._tracing.tracer import (
    ConcretizationTypeError,
    JitTracer,
    Placeholder,
    RecordingTrace,
    current_trace,
    dummy,
)

__all__ = [
    "RERUN_LIMIT",
    "Fallback",
    "Rule",
    "arange",
    "concatenate",
    "creation_trace",
    "diagonal",
    "eye",
    "filled",
    "full_size",
    "getitem",
    "hstack",
    "linspace",
    "outer",
    "ravel",
    "repeat",
    "run_placeholders",
    "scatter",
    "stack",
    "take",
    "tile",
    "vdot",
    "vstack",
]

Shape = tuple[int, ...]
Rule = Callable[[str, Callable[..., Any], tuple[Any, ...], dict[str, Any]], Any]

# An error of a stand-in run is raised again by the run on full-size
# placeholders (for its exact message) when the traced operands have at
# most this many elements in all; beyond, the stand-in run's error is raised.
RERUN_LIMIT: Final = 1 << 22
# The largest result (in elements) an indexing stand-in run may allocate.
_INDEX_LIMIT: Final = 1 << 20


class Fallback(Exception):
    """A rule cannot answer: evaluate on full-size placeholders instead.

    ``error`` is what the stand-in run raised, if anything.
    """

    def __init__(self, error: Exception | None = None) -> None:
        super().__init__(error)
        self.error = error


# True while a function runs on stand-ins: creation functions it calls are
# then evaluated for real (their arguments are small).
_BUSY: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "typelattice_abstract_busy", default=False
)


# -- arguments ------------------------------------------------------------------


def _shape(x: Any) -> Shape | None:
    """The real shape of an array argument (None for anything else)."""
    if isinstance(x, JitTracer):
        return x._shape
    if isinstance(x, ArrayImpl):
        shape: Shape = x._value.shape
        return shape
    if isinstance(x, np.ndarray | np.generic):
        shape = cast("np.ndarray[Any, Any]", x).shape
        return shape
    return None


def _count(x: Any) -> int | None:
    """``x`` as an int if it is an integer (not a bool), else None."""
    kind: type[Any] = x.__class__
    if kind is int or issubclass(kind, np.integer):
        return operator.index(x)
    return None


def _shape_or_scalar(x: Any) -> Shape:
    shape = _shape(x)
    return () if shape is None else shape


_SIGNATURES: dict[Callable[..., Any], inspect.Signature] = {}


def _bind(fn: Callable[..., Any], args: Any, kwargs: Any) -> inspect.BoundArguments:
    """The call's arguments by parameter name (``.arguments``, defaults
    included), to change some and call again (``.args``, ``.kwargs``)."""
    sig = _SIGNATURES.get(fn)
    if sig is None:
        sig = _SIGNATURES[fn] = inspect.signature(fn)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        raise Fallback from None  # the real call raises it
    bound.apply_defaults()
    return bound


class _Dims:
    """Small stand-in sizes for the real sizes of traced operands.

    0 and 1 are kept, so are the sizes of ``pinned`` shapes (concrete
    arrays); every other size gets its own small number, so that equal sizes
    stay equal and different ones different. The map is one to one, so a
    size of a result that copies an operand's size translates back.
    """

    def __init__(self, shapes: list[Shape], pinned: list[Shape]) -> None:
        fwd = {0: 0, 1: 1}
        for shape in pinned:
            fwd.update((d, d) for d in shape)
        taken = set(fwd.values())
        candidate = 2
        for d in sorted({d for shape in shapes for d in shape} - fwd.keys()):
            while candidate in taken:
                candidate += 1
            fwd[d] = candidate
            taken.add(candidate)
        self.fwd = fwd
        self.back = {v: d for d, v in fwd.items()}

    def small(self, shape: Shape) -> Shape:
        return tuple([self.fwd[d] for d in shape])

    def real(self, shape: Shape) -> Shape:
        try:
            return tuple([self.back[d] for d in shape])
        except KeyError:  # not a copied size: no answer here
            raise Fallback from None


def _dims_of(leaves: list[Any]) -> _Dims:
    """Stand-in sizes for the tracers among the arguments' leaves."""
    traced: list[Shape] = []
    pinned: list[Shape] = []
    for x in leaves:
        if isinstance(x, JitTracer):
            traced.append(x._shape)
        else:
            shape = _shape(x)
            if shape is not None:
                pinned.append(shape)
    return _Dims(traced, pinned)


def _stand_in(x: Any, shape: Shape) -> Any:
    """An operand like ``x`` (dtype, weak flag, kind of array) of ``shape``."""
    if isinstance(x, JitTracer | Placeholder):
        return dummy(x._key, shape)
    if isinstance(x, ArrayImpl):
        return wrap(dummy(x._key, shape)._value, x._key)
    raise TypeError(f"no stand-in for {type(x).__name__}")  # pragma: no cover


def _run(fn: Callable[..., Any], args: Any, kwargs: Any) -> Any:
    """``fn`` on arguments already holding stand-ins (no tracers)."""
    token = _BUSY.set(True)
    try:
        return fn(*args, **kwargs)
    except ConcretizationTypeError:
        raise
    except Exception as err:
        raise Fallback(err) from None
    finally:
        _BUSY.reset(token)


def run_placeholders(fn: Callable[..., Any], args: Any, kwargs: Any) -> Any:
    """``fn`` on arguments holding full-size placeholders (no tracers), with
    the creation functions it calls evaluated for real."""
    token = _BUSY.set(True)
    try:
        return fn(*args, **kwargs)
    finally:
        _BUSY.reset(token)


def _run_small(fn: Callable[..., Any], args: Any, kwargs: Any) -> Any:
    """``fn`` with every tracer replaced by a stand-in of small sizes."""
    leaves, treedef = tree.flatten((args, kwargs))
    return _run_stand_ins(fn, leaves, treedef, _dims_of(leaves))


def _run_stand_ins(
    fn: Callable[..., Any], leaves: list[Any], treedef: tree.TreeDef, dims: _Dims
) -> Any:
    """``fn`` on the arguments ``(args, kwargs)`` flattened to ``leaves``,
    each tracer replaced by a stand-in of its sizes by ``dims``."""
    small = [
        _stand_in(x, dims.small(x._shape)) if isinstance(x, JitTracer) else x
        for x in leaves
    ]
    small_args, small_kwargs = treedef.unflatten(small)
    return _run(fn, small_args, small_kwargs)


def _rebuild(out: Any, shape_of: Callable[[ArrayImpl], Shape]) -> Any:
    """``out`` with each array replaced by a placeholder of its key and
    ``shape_of(array)``, in the same containers."""

    def leaf(x: Any) -> Any:
        return dummy(x._key, shape_of(x)) if isinstance(x, ArrayImpl) else x

    return tree.tree_map(leaf, out)


def _shapes(shapes: list[Shape]) -> Callable[[ArrayImpl], Shape]:
    """A ``shape_of`` for :func:`_rebuild` giving ``shapes`` in order."""
    it: Iterator[Shape] = iter(shapes)

    def shape_of(_: ArrayImpl) -> Shape:
        try:
            return next(it)
        except StopIteration:
            raise Fallback from None

    return shape_of


def _normal_axis(axis: Any, ndim: int) -> int:
    """A valid axis (the stand-in run has checked it) made non-negative."""
    ax = operator.index(axis)
    return ax % ndim if ndim else 0


def diagonal(
    name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """The other axes, then the diagonal, whose length the offset decides."""
    bound = _bind(fn, args, kwargs)
    given = bound.arguments
    out = _run_small(fn, args, kwargs)
    shape = _shape_or_scalar(given["a"])
    ax1 = _normal_axis(given["axis1"], len(shape))
    ax2 = _normal_axis(given["axis2"], len(shape))
    offset = operator.index(given["offset"])
    n1, n2 = shape[ax1], shape[ax2]
    length = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    rest = tuple(d for i, d in enumerate(shape) if i not in (ax1, ax2))
    return _rebuild(out, lambda _: (*rest, length))


# -- flattening and joining -----------------------------------------------------


def ravel(
    name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    size = math.prod(_shape_or_scalar(_bind(fn, args, kwargs).arguments["a"]))
    return _rebuild(_run_small(fn, args, kwargs), lambda _: (size,))


def outer(
    name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    bound = _bind(fn, args, kwargs)
    shape = (
        math.prod(_shape_or_scalar(bound.arguments["a"])),
        math.prod(_shape_or_scalar(bound.arguments["b"])),
    )
    return _rebuild(_run_small(fn, args, kwargs), lambda _: shape)


def vdot(
    name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """vdot flattens both operands, which must have as many elements."""
    bound = _bind(fn, args, kwargs)
    a, b = bound.arguments["a"], bound.arguments["b"]
    size = math.prod(_shape_or_scalar(a))
    if size != math.prod(_shape_or_scalar(b)):
        raise Fallback  # raised before anything is allocated
    traced = [x for x in (a, b) if isinstance(x, JitTracer)]
    flat = (min(size, 1),) if len(traced) == 2 else (size,)

    def sub(x: Any) -> Any:
        return _stand_in(x, flat) if isinstance(x, JitTracer) else x

    out = _run(fn, tree.tree_map(sub, args), tree.tree_map(sub, kwargs))
    return _rebuild(out, lambda _: ())


def _sequence(bound: inspect.BoundArguments, param: str) -> list[Any]:
    arrays = bound.arguments[param]
    if not isinstance(arrays, list | tuple) or not arrays:
        raise Fallback  # an array joins its rows: no rule here
    return list(cast("list[Any]", arrays))


def concatenate(
    name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    bound = _bind(fn, args, kwargs)
    arrays = _sequence(bound, "arrays")
    out = _run_small(fn, args, kwargs)
    shapes = [_shape_or_scalar(a) for a in arrays]
    axis = bound.arguments["axis"]
    if axis is None:
        shape: Shape = (sum(math.prod(s) for s in shapes),)
    else:
        ax = _normal_axis(axis, len(shapes[0]))
        dims = list(shapes[0])
        dims[ax] = sum(s[ax] for s in shapes)
        shape = tuple(dims)
    return _rebuild(out, lambda _: shape)


def stack(
    name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    bound = _bind(fn, args, kwargs)
    arrays = _sequence(bound, "arrays")
    out = _run_small(fn, args, kwargs)
    dims = list(_shape_or_scalar(arrays[0]))
    dims.insert(_normal_axis(bound.arguments["axis"], len(dims) + 1), len(arrays))
    shape = tuple(dims)
    return _rebuild(out, lambda _: shape)


def hstack(
    name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    arrays = _sequence(_bind(fn, args, kwargs), "tup")
    out = _run_small(fn, args, kwargs)
    shapes = [_shape_or_scalar(a) or (1,) for a in arrays]
    ax = 0 if len(shapes[0]) == 1 else 1
    dims = list(shapes[0])
    dims[ax] = sum(s[ax] for s in shapes)
    shape = tuple(dims)
    return _rebuild(out, lambda _: shape)


def vstack(
    name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    arrays = _sequence(_bind(fn, args, kwargs), "tup")
    out = _run_small(fn, args, kwargs)
    shapes = [((1,) * (2 - len(s)) + s) for s in map(_shape_or_scalar, arrays)]
    shape = (sum(s[0] for s in shapes), *shapes[0][1:])
    return _rebuild(out, lambda _: shape)


# -- repeating and taking ---------------------------------------------------------


def _small_count(n: Any) -> Any:
    """A count (of repetitions) for a stand-in run: at most 1, so that the
    run stays small, and invalid counts (negative) kept as they are."""
    count = _count(n)
    return n if count is None else min(count, 1)


def tile(
    name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    bound = _bind(fn, args, kwargs)
    reps = bound.arguments["reps"]
    try:
        tup = tuple(operator.index(r) for r in cast("list[Any]", reps))
        small: Any = tuple(_small_count(r) for r in cast("list[Any]", reps))
    except TypeError:
        try:
            tup = (operator.index(reps),)
        except TypeError:
            raise Fallback from None
        small = _small_count(reps)
    bound.arguments["reps"] = small
    out = _run_small(fn, bound.args, bound.kwargs)
    shape = _shape_or_scalar(bound.arguments["A"])
    d = len(tup)
    tup = (1,) * (len(shape) - d) + tup
    shape = (1,) * (d - len(shape)) + shape
    real = tuple(s * t for s, t in zip(shape, tup, strict=True))
    return _rebuild(out, lambda _: real)


def repeat(
    name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    bound = _bind(fn, args, kwargs)
    repeats = _count(bound.arguments["repeats"])
    if repeats is None:
        raise Fallback  # an array of counts: no rule here
    total = bound.arguments["total_repeat_length"]
    bound.arguments["repeats"] = _small_count(repeats)
    bound.arguments["total_repeat_length"] = None
    out = _run_small(fn, bound.args, bound.kwargs)
    # NumPy repeats a 0-d array along an axis as a 1-d one.
    shape = _shape_or_scalar(bound.arguments["a"]) or (1,)
    axis = bound.arguments["axis"]
    if axis is None:
        real: Shape = (math.prod(shape) * repeats,)
    else:
        ax = _normal_axis(axis, len(shape))
        real = (*shape[:ax], shape[ax] * repeats, *shape[ax + 1 :])
    if total is not None and real[axis or 0] != total:
        raise Fallback  # the real call raises it
    return _rebuild(out, lambda _: real)


def take(
    name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """The other sizes shrink to at most 1; the indexed axis (the flattened
    array when ``axis`` is None) to at most 2 for traced indices (whose
    stand-in values are 1) and to at most 1 for concrete ones within bounds
    (replaced by zeros); out-of-bounds indices are kept, to raise."""
    bound = _bind(fn, args, kwargs)
    given = bound.arguments
    a, indices, axis = given["a"], given["indices"], given["axis"]
    shape = _shape_or_scalar(a)
    ax: int | None = None
    if axis is not None:
        try:
            ax = operator.index(axis)
        except TypeError:
            raise Fallback from None
        ax = ax % len(shape) if -len(shape) <= ax < len(shape) else None
    length = math.prod(shape) if axis is None else (0 if ax is None else shape[ax])
    if isinstance(indices, JitTracer):
        kept = min(length, 2)
        given["indices"] = _stand_in(indices, tuple(min(d, 1) for d in indices._shape))
    elif (
        isinstance(indices, ArrayImpl | np.ndarray | int | np.integer)
        and not isinstance(indices, bool)
        and np.asarray(indices).dtype.kind in "iu"
    ):
        values = cast("np.ndarray[Any, Any]", np.asarray(indices))
        wraps = given["mode"] in ("wrap", "clip")
        if not values.size or wraps or -length <= values.min() <= values.max() < length:
            kept = min(length, 1)
            zeros = np.zeros(values.shape, values.dtype)
            if isinstance(indices, ArrayImpl):
                given["indices"] = wrap(zeros, indices._key)
            else:
                given["indices"] = zeros if isinstance(indices, np.ndarray) else 0
        else:
            kept = length
    else:
        raise Fallback
    if not isinstance(a, Array):
        raise Fallback
    if axis is None:
        given["a"] = _stand_in(a, (kept,))
    else:
        given["a"] = _stand_in(
            a, tuple(kept if i == ax else min(d, 1) for i, d in enumerate(shape))
        )
    out = _run(fn, bound.args, bound.kwargs)
    index_shape = _shape_or_scalar(indices)
    if axis is None:
        real = index_shape
    else:
        assert ax is not None  # else the run has raised
        real = (*shape[:ax], *index_shape, *shape[ax + 1 :])
    return _rebuild(out, lambda _: real)


# -- indexing -------------------------------------------------------------------


def _is_index_bound(x: Any) -> bool:
    return x is None or (
        isinstance(x, int | np.integer) and not isinstance(x, bool | np.bool_)
    )


def _slice_bounds(s: Any) -> tuple[Any, Any, Any]:
    return s.start, s.stop, s.step


def _index_result(
    getitem: Callable[..., Any], x: Any, key: Any
) -> tuple[Any, Shape] | None:
    """``_getitem(x, key)`` evaluated on stand-ins, for keys with index arrays:
    (the stand-in result, the real shape). None for keys without index
    arrays (basic indexing makes views: evaluated on full-size placeholders)
    and for keys this does not handle.

    The indexed array's stand-in keeps the real lengths of the axes indexed
    by integers and arrays (the indices are checked against them); each
    other axis of the result (a slice, a new axis, the axes an ellipsis or
    the end leaves) gets a distinct marker length, which finds it in the
    result. The rest of the result is the broadcast shape of the index
    arrays, where NumPy puts it.
    """
    shape = _shape(x)
    if shape is None:
        return None
    parts: tuple[Any, ...] = key if type(key) is tuple else (key,)  # pyright: ignore[reportUnknownVariableType]
    kinds: list[str] = []
    consumed = 0
    for p in parts:
        if p is None:
            kinds.append("new")
        elif p is Ellipsis:
            kinds.append("ellipsis")
        elif isinstance(p, slice):
            bounds = _slice_bounds(p)
            if not all(map(_is_index_bound, bounds)) or bounds[2] == 0:
                return None
            kinds.append("slice")
            consumed += 1
        elif isinstance(p, bool | np.bool_):
            return None
        elif isinstance(p, int | np.integer):
            kinds.append("int")
            consumed += 1
        elif isinstance(p, JitTracer | ArrayImpl | np.ndarray):
            index = cast("Array | np.ndarray[Any, Any]", p)
            kind = np.dtype(index.dtype).kind
            if kind in "iu":
                kinds.append("array")
                consumed += 1
            elif (
                kind == "b"
                and index.ndim
                and not isinstance(p, JitTracer | Placeholder)
            ):
                kinds.append("mask")
                consumed += index.ndim
            else:
                return None  # raised by the real call, before any allocation
        else:
            return None
    if "array" not in kinds and "mask" not in kinds:
        return None
    if kinds.count("ellipsis") > 1 or consumed > len(shape):
        return None
    # The index arrays' stand-ins, and the broadcast (block) shapes.
    traced = [p._shape for p in parts if isinstance(p, JitTracer)]
    pinned = [
        _shape_or_scalar(p)
        for p, k in zip(parts, kinds, strict=True)
        if k == "array" and not isinstance(p, JitTracer)
    ]
    dims = _Dims(traced, pinned)
    block_real: list[Shape] = []
    block_small: list[Shape] = []
    for p, k in zip(parts, kinds, strict=True):
        if k == "int":
            block_real.append(())
            block_small.append(())
        elif k == "array":
            s = _shape_or_scalar(p)
            block_real.append(s)
            block_small.append(dims.small(s) if isinstance(p, JitTracer) else s)
        elif k == "mask":
            count = (int(np.count_nonzero(np.asarray(p))),)
            block_real.append(count)
            block_small.append(count)
    try:
        small_block = np.broadcast_shapes(*block_small)
    except ValueError:
        return None  # raised by the real call
    taken = set(small_block)

    def marker_values() -> Iterator[int]:
        m = 2
        while True:
            if m not in taken:
                yield m
            m += 1

    markers = marker_values()
    lengths: dict[int, int] = {}  # marker -> real length
    stand_shape: list[int] = []
    stand_key: list[Any] = []
    pos = 0

    def free_axis(real: int) -> None:
        m = next(markers)
        lengths[m] = real
        stand_shape.append(m)

    for p, k in zip(parts, kinds, strict=True):
        if k == "new":
            free_axis(1)
            stand_key.append(slice(None))
        elif k == "ellipsis":
            for d in shape[pos : pos + len(shape) - consumed]:
                free_axis(d)
                stand_key.append(slice(None))
            pos += len(shape) - consumed
        elif k == "slice":
            free_axis(len(range(*cast("slice", p).indices(shape[pos]))))
            stand_key.append(slice(None))
            pos += 1
        elif k == "mask":
            n = cast("np.ndarray[Any, Any]", np.asarray(p)).ndim
            stand_shape.extend(shape[pos : pos + n])
            stand_key.append(p)
            pos += n
        else:  # an integer or an index array: the real length
            stand_shape.append(shape[pos])
            stand_key.append(
                _stand_in(p, dims.small(p._shape)) if isinstance(p, JitTracer) else p
            )
            pos += 1
    for d in shape[pos:]:
        free_axis(d)
    if math.prod(lengths) * math.prod(small_block) > _INDEX_LIMIT:
        return None
    out = _run(getitem, (_stand_in(x, tuple(stand_shape)), tuple(stand_key)), {})
    got: Shape = out._value.shape
    free = [i for i, v in enumerate(got) if v in lengths]
    block_at = [i for i, v in enumerate(got) if v not in lengths]
    if (
        [got[i] for i in free] != list(lengths)
        or len(block_at) != len(small_block)
        or (
            block_at
            and block_at != list(range(block_at[0], block_at[0] + len(block_at)))
        )
    ):
        raise Fallback  # not what was expected: evaluate for real
    try:
        real_block = np.broadcast_shapes(*block_real)
    except ValueError:
        raise Fallback from None
    real = [lengths.get(v, 0) for v in got]
    if block_at:
        real[block_at[0] : block_at[0] + len(block_at)] = real_block
    return out, tuple(real)


def getitem(
    name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    if len(args) != 2 or kwargs:
        raise Fallback
    found = _index_result(fn, args[0], args[1])
    if found is None:
        raise Fallback  # views: free on full-size placeholders
    out, shape = found
    return dummy(out._key, shape)


def scatter(getitem: Callable[..., Any]) -> Rule:
    """``x.at[index].<op>(values)``: the indexed part's shape is found
    abstractly (indexing with ``getitem``); the update is checked on a
    stand-in of that shape indexed whole, with values of small sizes."""

    def rule(
        name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        bound = _bind(fn, args, kwargs)
        x, index, values = (
            bound.arguments["x"],
            bound.arguments["index"],
            bound.arguments["values"],
        )
        shape = _shape(x)
        if shape is None or not isinstance(x, Array):
            raise Fallback
        found = _index_result(getitem, x, index)
        if found is None:
            if any(isinstance(i, Array | np.ndarray) for i in tree.leaves(index)):
                raise Fallback
            part = np.broadcast_to(np.ones((), np.int8), shape)
            try:
                sub: Shape = part[index].shape
            except Exception as err:
                raise Fallback(err) from None
        else:
            sub = found[1]
        values_shape = _shape(values) if isinstance(values, JitTracer) else None
        dims = _Dims(
            [sub] + ([values_shape] if values_shape is not None else []),
            [_shape_or_scalar(values)] if values_shape is None else [],
        )
        bound.arguments["x"] = _stand_in(x, dims.small(sub))
        bound.arguments["index"] = ()
        if values_shape is not None:
            bound.arguments["values"] = _stand_in(values, dims.small(values_shape))
        out = _run(fn, bound.args, bound.kwargs)
        return dummy(out._key, shape)

    return rule


# -- creation -------------------------------------------------------------------


def filled(shape_of: Callable[[Any, str], Shape], *, shape_first: bool = False) -> Rule:
    """zeros, ones, empty, full and the ``_like`` functions given a shape
    (or of a concrete array): run with the fill value's shape.

    ``shape_of(shape, name)`` normalizes the requested shape, raising the
    function's error for a bad one; ``shape_first``: the function checks
    the shape before the dtype and the fill value (zeros, ones and empty
    do), so the rule does too.
    """

    def rule(
        name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        bound = _bind(fn, args, kwargs)
        given = bound.arguments
        fill = given.get("fill_value")
        if fill is not None and not isinstance(
            fill, Array | np.ndarray | np.generic | bool | int | float | complex
        ):
            raise Fallback
        fill_shape = _shape_or_scalar(fill)
        small_fill = fill_shape
        if isinstance(fill, JitTracer):
            small_fill = tuple(min(d, 1) for d in fill_shape)
            given["fill_value"] = _stand_in(fill, small_fill)
        like = given.get("a")
        if "a" in given:
            if not isinstance(like, Array):
                raise Fallback  # converted (and checked) first: evaluated for real
            given["a"] = _stand_in(like, small_fill)
        requested = given["shape"]
        dims = shape_of(requested, name) if shape_first else None
        if requested is not None:
            given["shape"] = small_fill
        out = _run(fn, bound.args, bound.kwargs)
        if dims is None:
            dims = (
                _shape_or_scalar(like)
                if requested is None
                else shape_of(requested, name)
            )
        try:
            fits = np.broadcast_shapes(fill_shape, dims) == dims
        except ValueError:
            fits = False
        if not fits:
            raise Fallback  # raised by the real call, before any allocation
        real = dims
        return _rebuild(out, lambda _: real)

    return rule


def eye(
    name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    bound = _bind(fn, args, kwargs)
    try:
        n = operator.index(bound.arguments["N"])
        m = n if bound.arguments["M"] is None else operator.index(bound.arguments["M"])
        operator.index(bound.arguments["k"])
    except TypeError:
        raise Fallback from None
    if n < 0 or m < 0:
        raise Fallback
    bound.arguments["N"], bound.arguments["M"] = 0, 0
    out = _run(fn, bound.args, bound.kwargs)
    return _rebuild(out, lambda _: (n, m))


def arange(
    name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """Python numbers only. The stand-in range holds two values, the first
    and the last (the dtype checks look at the extremes), and numbers of the
    same types (which decide the dtype)."""
    bound = _bind(fn, args, kwargs)
    given = bound.arguments
    numbers = [given[k] for k in ("start", "stop", "step") if given[k] is not None]
    if given["start"] is None or not all(type(v) in (int, float) for v in numbers):
        raise Fallback  # (arange itself refuses a start of None)
    start, stop, step = given["start"], given["stop"], given["step"]
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    if step == 0:
        raise Fallback
    floats = any(type(v) is float for v in numbers)
    if floats:
        span = (stop - start) / step
        if not math.isfinite(span):
            raise Fallback
        n = max(0, math.ceil(span))
    else:
        n = len(range(start, stop, step))
    if n > 2:
        last = start + (n - 1) * step
        if floats:
            wide = float(last - start)
            given["start"], given["stop"] = start, start + 1.5 * wide
        else:
            wide = last - start
            given["start"], given["stop"] = start, last + (1 if wide > 0 else -1)
        given["step"] = wide
    out = _run(fn, bound.args, bound.kwargs)
    return _rebuild(out, lambda _: (n,))


def linspace(
    name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    bound = _bind(fn, args, kwargs)
    if not all(
        type(bound.arguments[k]) in (bool, int, float, complex)
        for k in ("start", "stop")
    ):
        raise Fallback
    count = _count(bound.arguments["num"])
    if count is None or count < 0:
        raise Fallback
    bound.arguments["num"] = min(count, 2)
    out = _run(fn, bound.args, bound.kwargs)
    return _rebuild(out, _shapes([(count,), ()]))


# -- no stand-ins ------------------------------------------------------------------


def full_size(
    name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """No stand-ins: the function runs on full-size placeholders, which take
    no memory per element. For views (``reshape``, ``transpose``, basic
    indexing, ``split``), functions cheap at any size, and those whose
    result's sizes depend on values (``ufunc.at``, ``reduceat``)."""
    raise Fallback


def creation_trace() -> RecordingTrace | None:
    """The trace in which a creation function called without tracers gives
    tracers (by its creation rule): an abstract-only trace (eval_shape),
    unless the call comes from a function running on stand-ins."""
    if _BUSY.get():
        return None
    trace = current_trace()
    if trace is None or not trace.abstract_only:
        return None
    return trace
