"""Primitives whose parameter is a computation: a fold (``reduce``), a
running fold (``cumulative_reduce``), a fold of segments
(``reduce_segments``) and a scatter (``scatter_combine``) with a binary
computation, and a scatter applying a function (``scatter_apply``).

``typelattice.numpy``'s ufunc methods of the functions that have no
namespace function of their own (``subtract.reduce``,
``logaddexp.accumulate``, ``maximum.at``, ``add.reduceat``) and the updates
``x.at[i].divide``, ``.power`` and ``.apply`` bind these. As
``jax.lax.reduce`` and ``jax.lax.scatter_apply`` take the computation as a
callable, the parameter here is a :class:`Computation` (a binary NumPy
function under the name of the namespace function it computes) or an
:class:`Applied` function: hashable (programs are cached by it) and shown
by its name (``computation=subtract``).

Each is NumPy's ufunc method: sequential, left to right (``subtract`` of
``[a, b, c]`` is ``(a - b) - c``, after ``initial`` when there is one; an
index given twice to ``ufunc.at`` is applied twice), in the operand's
dtype. Where NumPy has no ufunc for the dtype (complex ``logaddexp``), the
computation's own loops compute.

Derivatives: none (``jax.numpy`` differentiates none of these methods
either); a zero tangent passes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np

from typelattice import _dtypes
from typelattice._lax._primitive import (
    Primitive,
    ShapedArray,
    batch_by_looping,
    defbatch_axes,
    defjvp_unsupported,
)

__all__ = [
    "Applied",
    "Computation",
    "cumulative_reduce_p",
    "reduce_p",
    "reduce_segments_p",
    "scatter_apply_p",
    "scatter_combine_p",
]

NDArray = np.ndarray[Any, Any]
Shape = tuple[int, ...]
_BOOL: Final = np.dtype(bool)


class Computation:
    """The binary computation of a fold: ``fn`` (NumPy arrays of one dtype
    in, that dtype out) under ``name``.

    ``reduce_loop(values, axis, mask)`` folds one axis where NumPy has no
    ufunc for the dtype (``mask`` selects, ``True`` for every element);
    ``reorderable`` says whether several axes may be folded at once (the
    order of a non-associative computation would be unspecified).

    >>> Computation("subtract", np.subtract)
    subtract
    >>> Computation("subtract", np.subtract).ufunc_for(np.dtype("int8"))
    <ufunc 'subtract'>
    """

    __slots__ = ("fn", "name", "reduce_loop", "reorderable")

    name: str
    fn: Callable[..., Any]
    reduce_loop: Callable[[NDArray, int, Any], Any] | None
    reorderable: bool

    def __init__(
        self,
        name: str,
        fn: Callable[..., Any],
        *,
        reduce_loop: Callable[[NDArray, int, Any], Any] | None = None,
        reorderable: bool = True,
    ) -> None:
        self.name = name
        self.fn = fn
        self.reduce_loop = reduce_loop
        self.reorderable = reorderable

    def __repr__(self) -> str:
        return self.name

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is Computation
            and other.name == self.name
            and other.fn is self.fn
        )

    def __hash__(self) -> int:
        return hash((self.name, id(self.fn)))

    def ufunc_for(self, dt: np.dtype[Any]) -> np.ufunc | None:
        """NumPy's ufunc computing this on ``dt`` (``fn`` itself, or for a
        wrapper adding complex support the ufunc of its name on real
        dtypes), or None: the loops compute."""
        if isinstance(self.fn, np.ufunc):
            return self.fn
        if _dtypes.kind_of(dt) != "c":
            found = getattr(np, self.name, None)
            if isinstance(found, np.ufunc):
                return found
        return None


def _not_reorderable(computation: Computation) -> str:
    return (
        f"reduction operation '{computation}' is not reorderable, so at most "
        "one axis may be specified"
    )


# -- reduce ------------------------------------------------------------------

#: ``reduce(x[, initial][, mask], computation, dimensions, initial, masked)``:
#: ``x`` folded with ``computation`` over ``dimensions`` (starting from the
#: 0-d ``initial`` operand where ``initial=True``, over the elements the bool
#: ``mask`` of ``x``'s shape selects where ``masked=True``).
reduce_p = Primitive("reduce")
defbatch_axes(reduce_p, "dimensions", kept=False)


@reduce_p.def_abstract_eval
def _reduce_abstract(
    x: ShapedArray,
    *rest: ShapedArray,
    computation: Computation,
    dimensions: Shape,
    initial: bool,
    masked: bool,
) -> ShapedArray:
    if len(rest) != initial + masked:
        raise TypeError(
            f"reduce: {1 + initial + masked} operands expected, got {1 + len(rest)}"
        )
    if len(set(dimensions)) != len(dimensions) or not all(
        0 <= d < x.ndim for d in dimensions
    ):
        raise ValueError(
            f"reduce: dimensions {dimensions} are not distinct axes of an "
            f"operand of rank {x.ndim}"
        )
    if len(dimensions) > 1 and not computation.reorderable:
        raise ValueError(f"reduce: {_not_reorderable(computation)}")
    if initial and (rest[0].shape != () or rest[0].dtype != x.dtype):
        raise TypeError(
            f"reduce: initial must be a scalar of the operand's dtype {x.dtype}, "
            f"got {rest[0]}"
        )
    if masked and (rest[-1].shape != x.shape or rest[-1].dtype != _BOOL):
        raise TypeError(
            f"reduce: the mask must be bool of the operand's shape {x.shape}, "
            f"got {rest[-1]}"
        )
    shape = tuple(d for i, d in enumerate(x.shape) if i not in dimensions)
    return ShapedArray(shape, x.dtype, False)


@reduce_p.def_impl
def _reduce_impl(
    x: NDArray,
    *rest: NDArray,
    computation: Computation,
    dimensions: Shape,
    initial: bool,
    masked: bool,
) -> NDArray:
    start = rest[0][()] if initial else None
    mask: Any = rest[-1] if masked else True
    ufunc = computation.ufunc_for(x.dtype)
    if ufunc is not None:
        kwargs: dict[str, Any] = {"where": mask} if masked else {}
        if start is not None:
            kwargs["initial"] = start
        res = ufunc.reduce(x, axis=dimensions, **kwargs)
    else:
        loop = computation.reduce_loop
        if loop is None:
            raise TypeError(f"reduce: {computation} has no loop for {x.dtype}")
        res = x
        for axis in sorted(dimensions, reverse=True):  # (later axes stay put)
            res = loop(res, axis, mask)
            mask = True
        if start is not None:
            res = computation.fn(start, res)
    return np.asarray(res).astype(x.dtype, copy=False)


defjvp_unsupported(reduce_p, "a fold with a computation is not differentiated")


# -- cumulative_reduce -------------------------------------------------------

#: ``cumulative_reduce(x, computation, axis)``: the running fold of ``x``
#: along ``axis`` (NumPy's ``ufunc.accumulate``).
cumulative_reduce_p = Primitive("cumulative_reduce")
defbatch_axes(cumulative_reduce_p, "axis", kept=True)


@cumulative_reduce_p.def_abstract_eval
def _cumulative_abstract(
    x: ShapedArray, *, computation: Computation, axis: int
) -> ShapedArray:
    if not 0 <= axis < x.ndim:
        raise ValueError(
            f"cumulative_reduce: axis {axis} is out of range for an operand of "
            f"rank {x.ndim}"
        )
    return ShapedArray(x.shape, x.dtype, False)


@cumulative_reduce_p.def_impl
def _cumulative_impl(x: NDArray, *, computation: Computation, axis: int) -> NDArray:
    ufunc = computation.ufunc_for(x.dtype)
    if ufunc is not None:
        res = ufunc.accumulate(x, axis=axis)
    else:
        moved = np.moveaxis(x, axis, 0).copy()
        for i in range(1, moved.shape[0]):
            moved[i] = computation.fn(moved[i - 1], moved[i])
        res = np.moveaxis(moved, 0, axis)
    return np.asarray(res).astype(x.dtype, copy=False)


defjvp_unsupported(
    cumulative_reduce_p, "a running fold with a computation is not differentiated"
)


# -- scatter_combine ---------------------------------------------------------

#: ``scatter_combine(operand, positions, updates, computation)``: the 1-d
#: ``operand`` with ``computation(operand[p], u)`` stored at each position
#: ``p`` of ``positions`` in turn, ``u`` the update at the same place: a
#: position named twice is combined twice (NumPy's ``ufunc.at``); positions
#: outside the operand are skipped.
scatter_combine_p = Primitive("scatter_combine")
# (Positions per example: one fold per example.)
batch_by_looping(scatter_combine_p)


@scatter_combine_p.def_abstract_eval
def _scatter_combine_abstract(
    operand: ShapedArray,
    positions: ShapedArray,
    updates: ShapedArray,
    *,
    computation: Computation,
) -> ShapedArray:
    if operand.ndim != 1 or positions.ndim != 1 or updates.shape != positions.shape:
        raise ValueError(
            "scatter_combine: a 1-d operand and one update per position expected, "
            f"got {operand}, {positions} and {updates}"
        )
    if _dtypes.kind_of(positions.dtype) not in "iu":
        raise TypeError(
            f"scatter_combine: positions must be integers, got {positions.dtype}"
        )
    if updates.dtype != operand.dtype:
        raise TypeError(
            f"scatter_combine: updates must have the operand's dtype "
            f"{operand.dtype}, got {updates.dtype}"
        )
    return operand


@scatter_combine_p.def_impl
def _scatter_combine_impl(
    operand: NDArray, positions: NDArray, updates: NDArray, *, computation: Computation
) -> NDArray:
    out = operand.copy()
    inside = (positions >= 0) & (positions < out.shape[0])
    at, values = positions[inside], updates[inside]
    ufunc = computation.ufunc_for(out.dtype)
    if ufunc is not None:
        ufunc.at(out, at, values)
    else:  # in the order given, as ufunc.at
        for p, u in zip(at.tolist(), values, strict=True):
            out[p] = computation.fn(out[p], u)
    return out


defjvp_unsupported(
    scatter_combine_p, "a scatter with a computation is not differentiated"
)


# -- reduce_segments ---------------------------------------------------------

#: ``reduce_segments(x, starts, computation, axis)``: ``x`` folded over the
#: slices ``starts[i]:starts[i + 1]`` along ``axis`` (the last one to the
#: end; where ``starts[i] >= starts[i + 1]``, the element at ``starts[i]``):
#: NumPy's ``ufunc.reduceat``. The starts must be within the axis.
reduce_segments_p = Primitive("reduce_segments")
defbatch_axes(reduce_segments_p, "axis", kept=True)


@reduce_segments_p.def_abstract_eval
def _reduce_segments_abstract(
    x: ShapedArray, starts: ShapedArray, *, computation: Computation, axis: int
) -> ShapedArray:
    if not 0 <= axis < x.ndim:
        raise ValueError(
            f"reduce_segments: axis {axis} is out of range for an operand of "
            f"rank {x.ndim}"
        )
    if starts.ndim != 1 or _dtypes.kind_of(starts.dtype) not in "iu":
        raise TypeError(f"reduce_segments: starts must be 1-d integers, got {starts}")
    shape = list(x.shape)
    shape[axis] = starts.shape[0]
    return ShapedArray(tuple(shape), x.dtype, False)


@reduce_segments_p.def_impl
def _reduce_segments_impl(
    x: NDArray, starts: NDArray, *, computation: Computation, axis: int
) -> NDArray:
    ufunc = computation.ufunc_for(x.dtype)
    if ufunc is not None:
        res = ufunc.reduceat(x, starts, axis=axis)
        return np.asarray(res).astype(x.dtype, copy=False)
    loop = computation.reduce_loop
    if loop is None:
        raise TypeError(f"reduce_segments: {computation} has no loop for {x.dtype}")
    begins: list[int] = starts.tolist()
    ends = [*begins[1:], x.shape[axis]][: len(begins)]
    parts: list[NDArray] = []
    for begin, end in zip(begins, ends, strict=True):
        stop = end if end > begin else begin + 1
        part = np.take(x, np.arange(begin, stop), axis=axis)
        parts.append(np.expand_dims(loop(part, axis, True), axis))
    res = np.concatenate(parts, axis=axis) if parts else np.take(x, starts, axis=axis)
    return np.asarray(res).astype(x.dtype, copy=False)


defjvp_unsupported(
    reduce_segments_p, "a segment fold with a computation is not differentiated"
)


# -- scatter_apply -----------------------------------------------------------


class Applied:
    """The parameter of ``scatter_apply``: ``fn``, a function of a 1-d NumPy
    array giving one of the same shape and dtype, shown as ``name`` and
    equal to another of the same ``key`` (the function it computes, and
    what else decides its results).

    >>> Applied("negative", np.negative, ("negative",))
    negative
    """

    __slots__ = ("fn", "key", "name")

    name: str
    fn: Callable[[NDArray], NDArray]
    key: Any

    def __init__(self, name: str, fn: Callable[[NDArray], NDArray], key: Any) -> None:
        self.name = name
        self.fn = fn
        self.key = key

    def __repr__(self) -> str:
        return self.name

    def __eq__(self, other: object) -> bool:
        return type(other) is Applied and other.key == self.key

    def __hash__(self) -> int:
        return hash(self.key)


#: ``scatter_apply(operand, positions, func)``: the 1-d ``operand`` with
#: ``func`` applied to the element at each position of ``positions``, once
#: per occurrence (a position named twice gets ``func(func(x))``); positions
#: outside the operand are skipped.
scatter_apply_p = Primitive("scatter_apply")
# (1-d operands only: one application per example.)
batch_by_looping(scatter_apply_p)


@scatter_apply_p.def_abstract_eval
def _scatter_apply_abstract(
    operand: ShapedArray, positions: ShapedArray, *, func: Applied
) -> ShapedArray:
    if operand.ndim != 1 or positions.ndim != 1:
        raise ValueError(
            "scatter_apply: a 1-d operand and 1-d positions expected, got "
            f"{operand} and {positions}"
        )
    if _dtypes.kind_of(positions.dtype) not in "iu":
        raise TypeError(
            f"scatter_apply: positions must be integers, got {positions.dtype}"
        )
    return operand


@scatter_apply_p.def_impl
def _scatter_apply_impl(
    operand: NDArray, positions: NDArray, *, func: Applied
) -> NDArray:
    out = operand.copy()
    inside = positions[(positions >= 0) & (positions < out.shape[0])]
    unique, counts = np.unique(inside, return_counts=True)
    # Round r applies func to the positions named more than r times: each
    # element as often as it is named, all of a round in one call.
    for round_ in range(int(counts.max()) if counts.size else 0):
        at = unique[counts > round_]
        out[at] = func.fn(out[at])
    return out


defjvp_unsupported(
    scatter_apply_p, "a scatter applying a function is not differentiated"
)
