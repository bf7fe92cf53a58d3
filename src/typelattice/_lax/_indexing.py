"""``gather`` and the ``scatter`` family, with XLA's dimension numbers.

A gather reads, for each index vector in ``start_indices`` (the last axis
holds the vectors), a window of ``slice_sizes`` of the operand starting
there; ``offset_dims`` say where the window's axes go in the result,
``collapsed_slice_dims`` which window axes (of size 1) are dropped, and
``start_index_map`` which operand axis each component of the vector starts.
A scatter writes (or adds, multiplies...) windows of ``updates`` at such
positions. Basic indexing and ``x.at[...]`` updates are gathers and
scatters.

Out-of-range windows follow ``mode``: ``'clip'`` moves them back in range;
``'fill'``/``'drop'`` give ``fill_value`` for gathers and skip the update for
scatters. As in ``jax.lax``, gathers default to ``'promise_in_bounds'``
(computed as ``'clip'``) and scatters to ``'fill'``/``'drop'``. Results keep
the operand's dtype and weak flag; updates must have the operand's dtype.

Differentiation: a gather is linear in its operand, and its transpose is a
``scatter_add`` of the cotangent (in ``'clip'`` mode where the gather
clipped, so the two agree even on indices out of range); ``scatter_add``
and ``scatter`` are linear in the operand and the updates together (for
``scatter``, only the update written last at an element gets its
cotangent, as the implementation writes it last); ``scatter_mul`` is linear
in the operand, and has no derivative in its updates (as ``jax.lax``
without ``unique_indices``); ``scatter_min``/``scatter_max`` share the
tangents of the values that tie for an element equally, as JAX's.
"""

# Package-internal: the arrays' underscored slots are read by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from typelattice import _dtypes
from typelattice._lax import _elementwise as ew
from typelattice._lax import _structural as st
from typelattice._lax._primitive import (
    Primitive,
    ShapedArray,
    Zero,
    aval_of,
    batch_size,
    bdim_at_front,
    check_accepts,
    check_same_dtypes,
    defbatch_elementwise,
    defjvp,
    defjvp_zero,
    instantiate,
    ints_of,
    is_undefined,
    moveaxis,
    reshape_p,
    to_array,
    to_arrays,
    zeros,
)

if TYPE_CHECKING:
    from typelattice._basearray import Array
    from typelattice.typing import ArrayLike

__all__ = [
    "GatherDimensionNumbers",
    "GatherScatterMode",
    "ScatterDimensionNumbers",
    "gather",
    "scatter",
    "scatter_add",
    "scatter_max",
    "scatter_min",
    "scatter_mul",
]

NDArray = np.ndarray[Any, Any]
Shape = tuple[int, ...]


class GatherDimensionNumbers(NamedTuple):
    """How a :func:`gather` maps index vectors and windows to axes.

    Attributes:
      offset_dims: the result's axes that hold the window's (kept) axes,
        increasing.
      collapsed_slice_dims: operand axes whose window size is 1 and that
        the result leaves out, increasing.
      start_index_map: for each component of an index vector, the operand
        axis it starts.
      operand_batching_dims: operand axes indexed by the batch position
        (of size-1 windows, left out of the result).
      start_indices_batching_dims: the ``start_indices`` axes that give
        those positions, one per ``operand_batching_dims`` entry.
    """

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """How a scatter maps ``updates``' axes to windows of the operand.

    Attributes:
      update_window_dims: the axes of ``updates`` that are window axes,
        increasing; the others are indexed like ``scatter_indices``'
        leading axes.
      inserted_window_dims: operand axes where the window has size 1 and
        no axis in ``updates``, increasing.
      scatter_dims_to_operand_dims: for each component of an index vector,
        the operand axis it starts.
      operand_batching_dims: operand axes indexed by the batch position.
      scatter_indices_batching_dims: the ``scatter_indices`` axes that give
        those positions.
    """

    update_window_dims: Sequence[int]
    inserted_window_dims: Sequence[int]
    scatter_dims_to_operand_dims: Sequence[int]
    operand_batching_dims: Sequence[int] = ()
    scatter_indices_batching_dims: Sequence[int] = ()


class GatherScatterMode(enum.Enum):
    """What out-of-range windows do (see the module's notes).

    ``PROMISE_IN_BOUNDS`` promises there are none; if there are, gathers
    clip and scatters drop them, as ``CLIP`` and ``FILL_OR_DROP`` would.
    """

    CLIP = 0
    FILL_OR_DROP = 1
    PROMISE_IN_BOUNDS = 2

    @staticmethod
    def from_any(mode: str | GatherScatterMode | None) -> GatherScatterMode:
        """A mode from its name (``'clip'``, ``'fill'``, ``'drop'``,
        ``'promise_in_bounds'``) or None (``FILL_OR_DROP``)."""
        if isinstance(mode, GatherScatterMode):
            return mode
        if mode is None or mode in ("fill", "drop"):
            return GatherScatterMode.FILL_OR_DROP
        if mode == "clip":
            return GatherScatterMode.CLIP
        if mode == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        raise ValueError(
            f'Unknown gather mode "{mode}"; use "clip", "fill", "drop" or '
            '"promise_in_bounds" (a GatherScatterMode)'
        )


def _normal_gather_dims(dn: Any) -> GatherDimensionNumbers:
    if not isinstance(dn, GatherDimensionNumbers):
        raise TypeError(
            f"lax.gather: dimension_numbers must be a GatherDimensionNumbers, got "
            f"{dn!r}"
        )
    return GatherDimensionNumbers(
        *(ints_of("gather", name, getattr(dn, name)) for name in dn._fields)
    )


def _normal_scatter_dims(fname: str, dn: Any) -> ScatterDimensionNumbers:
    if not isinstance(dn, ScatterDimensionNumbers):
        raise TypeError(
            f"lax.{fname}: dimension_numbers must be a ScatterDimensionNumbers, "
            f"got {dn!r}"
        )
    return ScatterDimensionNumbers(
        *(ints_of(fname, name, getattr(dn, name)) for name in dn._fields)
    )


def _check_sorted_axes(fname: str, what: str, axes: Shape, rank: int) -> None:
    if list(axes) != sorted(set(axes)) or any(not 0 <= a < rank for a in axes):
        raise TypeError(
            f"{fname}: {what} must be distinct, increasing and in the range "
            f"[0, {rank}), got {axes}."
        )


def _check_indices(fname: str, indices: ShapedArray, components: int) -> None:
    if _dtypes.kind_of(indices.dtype) not in "iu":
        raise TypeError(
            f"{fname}: indices must have an integer type, got {indices.dtype.name}"
        )
    if not indices.shape or indices.shape[-1] != components:
        raise TypeError(
            f"{fname}: the last axis of the indices holds the index vectors and "
            f"must have {components} elements (one per mapped operand axis), "
            f"got indices of shape {indices.shape}."
        )


def _starts(
    idx: NDArray,
    rank: int,
    index_map: Shape,
    operand_batching: Shape,
    indices_batching: Shape,
) -> NDArray:
    """Each window's start in the operand: shape ``(*batch, rank)``."""
    batch = idx.shape[:-1]
    starts = np.zeros((*batch, rank), np.int64)
    for k, d in enumerate(index_map):
        starts[..., d] = idx[..., k]
    for d, axis in zip(operand_batching, indices_batching, strict=True):
        view = [1] * len(batch)
        view[axis] = batch[axis]
        counts = np.arange(int(batch[axis]), dtype=np.int64)
        starts[..., d] = counts.reshape(view)
    return starts


def _positions(starts: NDArray, window: list[int], sizes: Shape) -> tuple[NDArray, ...]:
    """Operand indices of every window element: one array per operand axis,
    of shape ``(*batch, *window sizes)``."""
    nb = starts.ndim - 1
    nw = len(window)
    full = (*starts.shape[:-1], *(sizes[d] for d in window))
    out: list[NDArray] = []
    for d in range(starts.shape[-1]):
        pos: NDArray = np.reshape(starts[..., d], (*starts.shape[:-1], *([1] * nw)))
        if d in window:
            view = [1] * (nb + nw)
            view[nb + window.index(d)] = sizes[d]
            pos = pos + np.arange(sizes[d]).reshape(view)
        out.append(np.broadcast_to(pos, full))
    return tuple(out)


# -- gather -----------------------------------------------------------------

gather_p = Primitive("gather")


def _shifted(axes: Sequence[int]) -> tuple[int, ...]:
    return tuple(a + 1 for a in axes)


# Batched operand, indices or both: the batch axis goes first in each; an
# operand batch axis is a window axis of the whole batch (indices the same
# for every example), or, with batched indices, an axis indexed by the
# batch position (operand_batching_dims); a batch axis of the indices is a
# batch axis of the result. The result's batch axis is first.
@gather_p.def_batch
def _gather_batch(
    args: Sequence[Any], dims: Sequence[int | None], **params: Any
) -> tuple[Any, int]:
    (x, indices), (d, index_dim) = args, dims
    dn: GatherDimensionNumbers = params["dimension_numbers"]
    sizes = tuple(params["slice_sizes"])
    if index_dim is None:
        assert d is not None
        dn = GatherDimensionNumbers(
            offset_dims=(0, *_shifted(dn.offset_dims)),
            collapsed_slice_dims=_shifted(dn.collapsed_slice_dims),
            start_index_map=_shifted(dn.start_index_map),
            operand_batching_dims=_shifted(dn.operand_batching_dims),
            start_indices_batching_dims=tuple(dn.start_indices_batching_dims),
        )
        sizes = (x.shape[d], *sizes)
        x = moveaxis(x, d, 0)
    elif d is None:
        indices = moveaxis(indices, index_dim, 0)
        dn = dn._replace(
            offset_dims=_shifted(dn.offset_dims),
            start_indices_batching_dims=_shifted(dn.start_indices_batching_dims),
        )
    else:
        x, indices = moveaxis(x, d, 0), moveaxis(indices, index_dim, 0)
        dn = GatherDimensionNumbers(
            offset_dims=_shifted(dn.offset_dims),
            collapsed_slice_dims=_shifted(dn.collapsed_slice_dims),
            start_index_map=_shifted(dn.start_index_map),
            operand_batching_dims=(0, *_shifted(dn.operand_batching_dims)),
            start_indices_batching_dims=(
                0,
                *_shifted(dn.start_indices_batching_dims),
            ),
        )
        sizes = (1, *sizes)
    params = {**params, "dimension_numbers": dn, "slice_sizes": sizes}
    return gather_p.bind(x, indices, **params), 0


def _default_fill(dt: np.dtype[Any]) -> Any:
    kind = _dtypes.kind_of(dt)
    if kind == "b":
        return True
    if kind == "i":
        return _dtypes.iinfo(dt).min
    if kind == "u":
        return _dtypes.iinfo(dt).max
    return np.nan


@gather_p.def_abstract_eval
def _gather_abstract(
    x: ShapedArray,
    indices: ShapedArray,
    *,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Shape,
    mode: GatherScatterMode,
    fill_value: Any,
) -> ShapedArray:
    dn = dimension_numbers
    _check_indices("gather", indices, len(dn.start_index_map))
    if len(slice_sizes) != x.ndim:
        raise TypeError(
            f"gather: slice_sizes must have one entry per operand axis, got "
            f"slice_sizes {slice_sizes} for operand shape {x.shape}."
        )
    if any(not 0 <= n <= d for n, d in zip(slice_sizes, x.shape, strict=True)):
        raise TypeError(
            f"gather: slice_sizes must be between 0 and the operand's sizes, got "
            f"slice_sizes {slice_sizes} for operand shape {x.shape}."
        )
    dropped = (*dn.collapsed_slice_dims, *dn.operand_batching_dims)
    if len(set(dropped)) != len(dropped):
        raise TypeError(
            "gather: collapsed_slice_dims and operand_batching_dims must not "
            f"share an axis, got {dn.collapsed_slice_dims} and "
            f"{dn.operand_batching_dims}."
        )
    if any(slice_sizes[d] > 1 for d in dropped):
        raise TypeError(
            f"gather: collapsed and batching axes must have slice size 0 or 1, "
            f"got slice_sizes {slice_sizes} for axes {dropped}."
        )
    if sorted(set(dn.start_index_map)) != sorted(dn.start_index_map) or any(
        not 0 <= d < x.ndim for d in dn.start_index_map
    ):
        raise TypeError(
            f"gather: start_index_map must name distinct operand axes, got "
            f"{dn.start_index_map} for operand shape {x.shape}."
        )
    window = [d for d in range(x.ndim) if d not in dropped]
    batch = indices.shape[:-1]
    rank = len(batch) + len(window)
    _check_sorted_axes("gather", "offset_dims", dn.offset_dims, rank)
    _check_sorted_axes(
        "gather", "collapsed_slice_dims", dn.collapsed_slice_dims, x.ndim
    )
    _check_sorted_axes(
        "gather", "operand_batching_dims", dn.operand_batching_dims, x.ndim
    )
    if len(dn.offset_dims) != len(window):
        raise TypeError(
            f"gather: offset_dims must have one axis per kept window axis "
            f"({len(window)}), got {dn.offset_dims}."
        )
    if len(dn.operand_batching_dims) != len(dn.start_indices_batching_dims) or any(
        not 0 <= a < len(batch) for a in dn.start_indices_batching_dims
    ):
        raise TypeError(
            "gather: start_indices_batching_dims must name one leading axis of "
            "the indices per operand_batching_dims entry, got "
            f"{dn.start_indices_batching_dims} for {dn.operand_batching_dims}."
        )
    shape: list[int] = []
    batch_iter = iter(batch)
    window_iter = iter(slice_sizes[d] for d in window)
    for pos in range(rank):
        shape.append(next(window_iter) if pos in dn.offset_dims else next(batch_iter))
    return x.update(shape=tuple(shape))


@gather_p.def_impl
def _gather_impl(
    x: NDArray,
    indices: NDArray,
    *,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Shape,
    mode: GatherScatterMode,
    fill_value: Any,
) -> NDArray:
    dn = dimension_numbers
    taken = _take_axis(x, indices, dn, slice_sizes)
    if taken is not None:
        # One axis indexed, whole slices of the others, in np.take's layout.
        out = np.take(x, indices[..., 0], axis=taken, mode="clip")
        if mode is GatherScatterMode.FILL_OR_DROP:
            i = indices[..., 0]
            bad = (i < 0) | (i >= x.shape[taken])
            if bad.any():
                fill = _default_fill(x.dtype) if fill_value is None else fill_value
                view = (1,) * taken + bad.shape + (1,) * (x.ndim - taken - 1)
                out = np.where(bad.reshape(view), np.asarray(fill).astype(x.dtype), out)
        return out
    idx = indices.astype(np.int64)
    starts = _starts(
        idx,
        x.ndim,
        dn.start_index_map,
        dn.operand_batching_dims,
        dn.start_indices_batching_dims,
    )
    hi = np.array(x.shape, np.int64) - np.array(slice_sizes, np.int64)
    mapped = list(dn.start_index_map)
    ok = np.all(
        (starts[..., mapped] >= 0) & (starts[..., mapped] <= hi[mapped]), axis=-1
    )
    starts = np.clip(starts, 0, np.maximum(hi, 0))
    window = _window_dims(x.ndim, dn)
    positions = _positions(starts, window, slice_sizes)
    full = (*idx.shape[:-1], *(slice_sizes[d] for d in window))
    if x.size == 0 or 0 in full:
        out = np.zeros(full, x.dtype)
    else:
        out = (
            np.broadcast_to(x[positions], full)
            if positions
            else np.broadcast_to(x, full)
        )
    if mode is GatherScatterMode.FILL_OR_DROP:
        fill = _default_fill(x.dtype) if fill_value is None else fill_value
        keep = np.reshape(ok, (*np.shape(ok), *([1] * len(window))))
        out = np.where(keep, out, np.asarray(fill).astype(x.dtype))
    return np.transpose(out, _offset_perm(idx.ndim - 1, len(window), dn))


def _scatter_layout(
    ndim: int, update_shape: Sequence[int], nb: int, dn: ScatterDimensionNumbers
) -> tuple[tuple[int, ...], list[int], list[int]]:
    """A scatter's layout: the transposition of the updates putting their
    ``nb`` scatter axes first, the operand's window axes, and the size of
    each update slice along every operand axis."""
    scatter_axes = [
        a for a in range(len(update_shape)) if a not in dn.update_window_dims
    ]
    perm = (*scatter_axes, *dn.update_window_dims)
    inserted = (*dn.inserted_window_dims, *dn.operand_batching_dims)
    window = [d for d in range(ndim) if d not in inserted]
    sizes = [1] * ndim
    for d, a in zip(window, perm[nb:], strict=True):
        sizes[d] = update_shape[a]
    return perm, window, sizes


def _window_dims(ndim: int, dn: GatherDimensionNumbers) -> list[int]:
    """The operand's axes a gather keeps in each slice (neither collapsed
    nor batching)."""
    dropped = (*dn.collapsed_slice_dims, *dn.operand_batching_dims)
    return [d for d in range(ndim) if d not in dropped]


def _offset_perm(nb: int, nw: int, dn: GatherDimensionNumbers) -> list[int]:
    """The transposition from a gather's ``(*batch, *window)`` layout (``nb``
    batch axes, ``nw`` window axes) to its result's, where the window axes
    stand at ``offset_dims``."""
    perm: list[int] = []
    b = w = 0
    for pos in range(nb + nw):
        if pos in dn.offset_dims:
            perm.append(nb + w)
            w += 1
        else:
            perm.append(b)
            b += 1
    return perm


def _take_axis(
    x: NDArray, indices: NDArray, dn: GatherDimensionNumbers, sizes: Shape
) -> int | None:
    """The axis ``d`` when a gather is ``numpy.take(x, indices[..., 0],
    axis=d)`` (clipped): one index component, collapsing a non-empty axis
    ``d``, whole slices of the others, laid out as ``take`` lays them."""
    if len(dn.start_index_map) != 1 or dn.operand_batching_dims:
        return None
    (d,) = dn.start_index_map
    if dn.collapsed_slice_dims != (d,) or not x.shape[d] or sizes[d] != 1:
        return None
    if any(sizes[j] != x.shape[j] for j in range(x.ndim) if j != d):
        return None
    b = indices.ndim - 1
    if dn.offset_dims != (*range(d), *range(d + b, x.ndim - 1 + b)):
        return None
    return d


def _scatter_numbers(dn: GatherDimensionNumbers) -> ScatterDimensionNumbers:
    """The scatter that writes back where a gather of ``dn`` reads."""
    return ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims,
        inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map,
        operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims,
    )


def _gather_jvp(
    g: Any,
    x: Any,
    indices: Any,
    *,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Shape,
    mode: GatherScatterMode,
    fill_value: Any,
) -> Any:
    # Filled elements are constants: their tangent is 0, not fill_value.
    return gather_p.bind(
        g,
        indices,
        dimension_numbers=dimension_numbers,
        slice_sizes=slice_sizes,
        mode=mode,
        fill_value=np.zeros((), g.dtype)[()],
    )


def _gather_transpose(
    ct: Any,
    x: Any,
    indices: Any,
    *,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Shape,
    mode: GatherScatterMode,
    fill_value: Any,
) -> list[Any]:
    # A gather that clipped (or promised, and clips) adds back at the clipped
    # windows: a CLIP scatter. jax.lax scatters in the promised mode, which
    # drops out-of-range windows instead.
    if is_undefined(indices):
        raise ValueError("gather is not linear in its indices")
    back = GatherScatterMode.FILL_OR_DROP
    if mode is not GatherScatterMode.FILL_OR_DROP:
        back = GatherScatterMode.CLIP
    added = scatter_add_p.bind(
        zeros(x.aval.update(weak_type=ct.weak_type)),
        indices,
        ct,
        dimension_numbers=_scatter_numbers(dimension_numbers),
        mode=back,
    )
    return [ew._cast(added, x.aval.dtype, x.aval.weak_type), None]


defjvp(gather_p, _gather_jvp, None)
gather_p.def_transpose(_gather_transpose)


def gather(
    operand: ArrayLike,
    start_indices: ArrayLike,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Sequence[int],
    *,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    mode: str | GatherScatterMode | None = None,
    fill_value: Any = None,
) -> Array:
    """Windows of ``operand`` at the index vectors of ``start_indices``.

    Args:
      operand: an array.
      start_indices: an integer array whose last axis holds index vectors.
      dimension_numbers: a :class:`GatherDimensionNumbers`.
      slice_sizes: the window's size along each operand axis.
      unique_indices, indices_are_sorted: hints; the result is the same.
      mode: ``'promise_in_bounds'`` (the default: out-of-range windows are
        moved into range, as ``'clip'``), ``'clip'``, or ``'fill'``/``'drop'``
        (they give ``fill_value``).
      fill_value: the value of out-of-range windows in fill mode (default
        NaN; for integers the smallest signed / largest unsigned value; True
        for bools).

    Returns:
      An array of ``operand``'s dtype and weak flag.

    >>> x = np.int8([10, 11, 12, 13])
    >>> dn = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,),
    ...                             start_index_map=(0,))
    >>> gather(x, np.int32([[2], [0], [9]]), dn, (1,))
    Array([12, 10, 13], dtype=int8)
    >>> gather(x, np.int32([[2], [0], [9]]), dn, (1,), mode='fill')
    Array([  12,   10, -128], dtype=int8)
    """
    x = to_array(operand, "gather", 0)
    indices = to_array(start_indices, "gather", 1)
    # jax.lax.gather's default; scatters default to FILL_OR_DROP.
    parsed = (
        GatherScatterMode.PROMISE_IN_BOUNDS
        if mode is None
        else (GatherScatterMode.from_any(mode))
    )
    if fill_value is not None:
        fill_value = np.asarray(fill_value).astype(x.dtype)[()]
    return gather_p.bind(  # type: ignore[no-any-return]
        x,
        indices,
        dimension_numbers=_normal_gather_dims(dimension_numbers),
        slice_sizes=ints_of("gather", "slice_sizes", slice_sizes),
        mode=parsed,
        fill_value=fill_value,
    )


# -- scatter ----------------------------------------------------------------


def _replace(out: NDArray, where: tuple[NDArray, ...], values: NDArray) -> None:
    out[where] = values  # for repeated indices the last update wins


def _scatter_batch(
    prim: Primitive,
    args: Sequence[Any],
    dims: Sequence[int | None],
    params: dict[str, Any],
) -> Any:
    """A scatter's batching rule: the batch axis first in each operand (the
    operand and the updates broadcast when not batched). Indices the same
    for every example: the batch axis is a window axis of the updates;
    indices per example: an axis indexed by the batch position
    (operand_batching_dims). The result's batch axis is first."""
    (x, indices, updates), (d, index_dim, update_dim) = args, dims
    size = batch_size(args, dims)
    dn: ScatterDimensionNumbers = params["dimension_numbers"]
    x = bdim_at_front(x, d, size)
    updates = bdim_at_front(updates, update_dim, size)
    common = {
        "inserted_window_dims": _shifted(dn.inserted_window_dims),
        "scatter_dims_to_operand_dims": _shifted(dn.scatter_dims_to_operand_dims),
    }
    if index_dim is None:
        dn = ScatterDimensionNumbers(
            update_window_dims=(0, *_shifted(dn.update_window_dims)),
            operand_batching_dims=_shifted(dn.operand_batching_dims),
            scatter_indices_batching_dims=tuple(dn.scatter_indices_batching_dims),
            **common,
        )
    else:
        indices = moveaxis(indices, index_dim, 0)
        dn = ScatterDimensionNumbers(
            update_window_dims=_shifted(dn.update_window_dims),
            operand_batching_dims=(0, *_shifted(dn.operand_batching_dims)),
            scatter_indices_batching_dims=(
                0,
                *_shifted(dn.scatter_indices_batching_dims),
            ),
            **common,
        )
    return prim.bind(x, indices, updates, **{**params, "dimension_numbers": dn})


def _scatter_primitive(
    name: str,
    combine: Callable[[NDArray, tuple[NDArray, ...], NDArray], None],
    kinds: str = "biufc",
) -> Primitive:
    """A scatter that combines old and new values with ``combine`` and
    accepts operands of ``kinds``."""
    prim = Primitive(name)

    @prim.def_abstract_eval
    def _abstract(
        x: ShapedArray,
        indices: ShapedArray,
        updates: ShapedArray,
        *,
        dimension_numbers: ScatterDimensionNumbers,
        mode: GatherScatterMode,
    ) -> ShapedArray:
        dn = dimension_numbers
        check_accepts(name, x, kinds)
        check_same_dtypes(name, (x, updates), ("operand", "updates"))
        _check_indices(name, indices, len(dn.scatter_dims_to_operand_dims))
        inserted = (*dn.inserted_window_dims, *dn.operand_batching_dims)
        window = [d for d in range(x.ndim) if d not in inserted]
        batch = indices.shape[:-1]
        _check_sorted_axes(
            name, "update_window_dims", tuple(dn.update_window_dims), updates.ndim
        )
        _check_sorted_axes(
            name, "inserted_window_dims", tuple(dn.inserted_window_dims), x.ndim
        )
        if updates.ndim != len(batch) + len(dn.update_window_dims) or len(
            dn.update_window_dims
        ) != len(window):
            raise TypeError(
                f"{name}: updates of shape {updates.shape} do not match: expected "
                f"{len(batch)} scatter axes (the indices' leading axes "
                f"{batch}) and {len(window)} window axes"
            )
        scatter_sizes = tuple(
            d for i, d in enumerate(updates.shape) if i not in dn.update_window_dims
        )
        if scatter_sizes != batch:
            raise TypeError(
                f"{name}: the scatter axes of updates {scatter_sizes} must equal "
                f"the indices' leading axes {batch}."
            )
        sizes = [updates.shape[a] for a in dn.update_window_dims]
        if any(n > x.shape[d] for n, d in zip(sizes, window, strict=True)):
            raise TypeError(
                f"{name}: update windows {tuple(sizes)} are larger than the "
                f"operand's axes {tuple(x.shape[d] for d in window)}."
            )
        return x

    @prim.def_batch
    def _batch(
        args: Sequence[Any], dims: Sequence[int | None], **params: Any
    ) -> tuple[Any, int]:
        return _scatter_batch(prim, args, dims, params), 0

    @prim.def_impl
    def _impl(
        x: NDArray,
        indices: NDArray,
        updates: NDArray,
        *,
        dimension_numbers: ScatterDimensionNumbers,
        mode: GatherScatterMode,
    ) -> NDArray:
        dn = dimension_numbers
        if x.ndim == 1 and _elementwise_numbers(dn) and indices.shape[-1:] == (1,):
            # Elements of a 1-d operand, one per index: the ufunc at them.
            i = indices.reshape(-1)
            values = updates.reshape(-1)
            if mode is GatherScatterMode.CLIP:
                i = np.clip(i, 0, max(x.shape[0] - 1, 0))
            else:
                keep = (i >= 0) & (i < x.shape[0])
                if not keep.all():
                    i, values = i[keep], values[keep]
            out = x.copy()
            combine(out, (i,), values)
            return out
        idx = indices.astype(np.int64)
        nb = idx.ndim - 1
        perm, window, sizes = _scatter_layout(x.ndim, updates.shape, nb, dn)
        values = np.transpose(updates, perm)
        starts = _starts(
            idx,
            x.ndim,
            tuple(dn.scatter_dims_to_operand_dims),
            tuple(dn.operand_batching_dims),
            tuple(dn.scatter_indices_batching_dims),
        )
        hi = np.array(x.shape, np.int64) - np.array(sizes, np.int64)
        if mode is GatherScatterMode.CLIP:
            starts = np.clip(starts, 0, np.maximum(hi, 0))
        ok = np.all((starts >= 0) & (starts <= hi), axis=-1)
        positions = _positions(starts, window, tuple(sizes))
        keep = np.broadcast_to(
            ok.reshape(*ok.shape, *([1] * len(window))), values.shape
        )
        out = x.copy()
        if x.ndim == 0:
            if keep.all() and values.size:
                combine(
                    out, (), values.reshape(-1)[-1] if combine is _replace else values
                )
            return out
        combine(out, tuple(p[keep] for p in positions), values[keep])
        return out

    return prim


def _elementwise_numbers(dn: ScatterDimensionNumbers) -> bool:
    """Whether ``dn`` scatters single elements along operand axis 0 (no
    window axes, no batching)."""
    return (
        not dn.update_window_dims
        and tuple(dn.inserted_window_dims) == (0,)
        and tuple(dn.scatter_dims_to_operand_dims) == (0,)
        and not dn.operand_batching_dims
    )


def _at(ufunc: np.ufunc) -> Callable[[NDArray, tuple[NDArray, ...], NDArray], None]:
    def combine(out: NDArray, where: tuple[NDArray, ...], values: NDArray) -> None:
        if not where:  # a 0-d operand
            for v in values.reshape(-1):
                out[()] = ufunc(out[()], v)
            return
        ufunc.at(out, where, values)

    return combine


scatter_p = _scatter_primitive("scatter", _replace)
scatter_add_p = _scatter_primitive("scatter-add", _at(np.add), "iufc")
scatter_mul_p = _scatter_primitive("scatter-mul", _at(np.multiply), "iufc")
scatter_min_p = _scatter_primitive("scatter-min", _at(np.minimum))
scatter_max_p = _scatter_primitive("scatter-max", _at(np.maximum))


def _gather_back(
    x: Any,
    indices: Any,
    updates_shape: Shape,
    dn: ScatterDimensionNumbers,
    mode: GatherScatterMode,
    fill: Any = 0,
) -> Any:
    """Read, for each element of the updates, the element of ``x`` (of the
    operand's shape) that the scatter of ``dn`` writes it to; the windows a
    scatter drops read ``fill``."""
    inserted = (*dn.inserted_window_dims, *dn.operand_batching_dims)
    sizes = iter(updates_shape[a] for a in dn.update_window_dims)
    slice_sizes = tuple(
        1 if d in inserted else next(sizes) for d in range(len(x.shape))
    )
    gather_dn = GatherDimensionNumbers(
        offset_dims=tuple(dn.update_window_dims),
        collapsed_slice_dims=tuple(dn.inserted_window_dims),
        start_index_map=tuple(dn.scatter_dims_to_operand_dims),
        operand_batching_dims=tuple(dn.operand_batching_dims),
        start_indices_batching_dims=tuple(dn.scatter_indices_batching_dims),
    )
    read = GatherScatterMode.CLIP
    if mode is not GatherScatterMode.CLIP:  # the scatter dropped them
        read = GatherScatterMode.FILL_OR_DROP
    return gather_p.bind(
        x,
        indices,
        dimension_numbers=gather_dn,
        slice_sizes=slice_sizes,
        mode=read,
        fill_value=np.asarray(fill).astype(x.dtype)[()],
    )


def _scatter_linear_jvp(prim: Primitive) -> Any:
    """The JVP of a scatter linear in the operand and updates together."""

    def jvp(primals: Any, tangents: Any, **params: Any) -> tuple[Any, Any]:
        x, indices, updates = primals
        tx, _, tu = tangents
        out = prim.bind(x, indices, updates, **params)
        if type(tx) is Zero and type(tu) is Zero:
            return out, Zero.of(out)
        t = prim.bind(instantiate(tx), indices, instantiate(tu), **params)
        return out, t

    return jvp


def _scatter_add_transpose(
    ct: Any,
    x: Any,
    indices: Any,
    updates: Any,
    *,
    dimension_numbers: ScatterDimensionNumbers,
    mode: GatherScatterMode,
) -> list[Any]:
    if is_undefined(indices):
        raise ValueError("scatter_add is not linear in its indices")
    out: list[Any] = [None, None, None]
    if is_undefined(x):
        out[0] = ew._cast(ct, x.aval.dtype, x.aval.weak_type)
    if is_undefined(updates):
        aval = updates.aval
        read = _gather_back(ct, indices, aval.shape, dimension_numbers, mode)
        out[2] = ew._cast(read, aval.dtype, aval.weak_type)
    return out


scatter_add_p.def_jvp(_scatter_linear_jvp(scatter_add_p))
scatter_add_p.def_transpose(_scatter_add_transpose)


def _scatter_transpose(
    ct: Any,
    x: Any,
    indices: Any,
    updates: Any,
    *,
    dimension_numbers: ScatterDimensionNumbers,
    mode: GatherScatterMode,
) -> list[Any]:
    # The operand's cotangent is zero where an update was written; an
    # update's is the cotangent at its element if it was written last there
    # (found by scattering the updates' positions and reading them back).
    if is_undefined(indices):
        raise ValueError("scatter is not linear in its indices")
    u_aval = aval_of(updates)
    dn = dimension_numbers
    out: list[Any] = [None, None, None]
    if is_undefined(x):
        holes = scatter_p.bind(
            ct,
            indices,
            zeros(u_aval.update(dtype=ct.dtype)),
            dimension_numbers=dn,
            mode=mode,
        )
        out[0] = ew._cast(holes, x.aval.dtype, x.aval.weak_type)
    if is_undefined(updates):
        i32 = np.dtype(np.int32)
        count = int(np.prod(u_aval.shape))
        ids = st.iota_p.bind(dtype=i32, shape=(count,), dimension=0)
        ids = reshape_p.bind(ids, new_sizes=u_aval.shape, dimensions=None)
        nobody = ew._like(ShapedArray(tuple(ct.shape), i32), -1)
        last = scatter_p.bind(nobody, indices, ids, dimension_numbers=dn, mode=mode)
        won = ew.eq(_gather_back(last, indices, u_aval.shape, dn, mode, -1), ids)
        read = _gather_back(ct, indices, u_aval.shape, dn, mode)
        picked = ew.select(won, read, ew._like(read, 0))
        out[2] = ew._cast(picked, u_aval.dtype, u_aval.weak_type)
    return out


scatter_p.def_jvp(_scatter_linear_jvp(scatter_p))
scatter_p.def_transpose(_scatter_transpose)


def _scatter_mul_jvp_updates(
    g: Any, x: Any, indices: Any, updates: Any, **params: Any
) -> Any:
    raise NotImplementedError(
        "scatter_mul has no derivative with respect to its updates (jax.lax has "
        "one only with unique_indices=True, which typelattice.lax does not "
        "take); multiply instead by a scatter of the factors into ones: "
        "lax.mul(operand, lax.scatter(ones, indices, updates, ...))"
    )


def _scatter_mul_jvp_operand(
    g: Any, x: Any, indices: Any, updates: Any, **params: Any
) -> Any:
    return scatter_mul_p.bind(g, indices, updates, **params)


defjvp(scatter_mul_p, _scatter_mul_jvp_operand, None, _scatter_mul_jvp_updates)


def _scatter_mul_transpose(
    ct: Any,
    x: Any,
    indices: Any,
    updates: Any,
    *,
    dimension_numbers: ScatterDimensionNumbers,
    mode: GatherScatterMode,
) -> list[Any]:
    if is_undefined(indices) or is_undefined(updates):
        raise ValueError("scatter_mul is linear in its operand only")
    scaled = scatter_mul_p.bind(
        ct, indices, updates, dimension_numbers=dimension_numbers, mode=mode
    )
    return [ew._cast(scaled, x.aval.dtype, x.aval.weak_type), None, None]


scatter_mul_p.def_transpose(_scatter_mul_transpose)


def _scatter_extremum_jvp(prim: Primitive) -> Any:
    """scatter_min/max: the tangent of each element is the mean of the
    tangents of the values (operand and updates) equal to the result."""

    def jvp(primals: Any, tangents: Any, **params: Any) -> tuple[Any, Any]:
        x, indices, updates = primals
        tx, _, tu = tangents
        out = prim.bind(x, indices, updates, **params)
        if type(tx) is Zero and type(tu) is Zero:
            return out, Zero.of(out)
        tx, tu = instantiate(tx), instantiate(tu)
        dn, mode = params["dimension_numbers"], params["mode"]
        kept = ew._mask(ew.eq(x, out), tx)
        reached = _gather_back(out, indices, updates.shape, dn, mode)
        won = ew._mask(ew.eq(updates, reached), tu)
        nothing = zeros(aval_of(tx))
        count = ew.add(kept, scatter_add_p.bind(nothing, indices, won, **params))
        total = ew.add(
            ew.mul(tx, kept),
            scatter_add_p.bind(nothing, indices, ew.mul(tu, won), **params),
        )
        return out, ew.div(total, count)

    return jvp


scatter_min_p.def_jvp(_scatter_extremum_jvp(scatter_min_p))
scatter_max_p.def_jvp(_scatter_extremum_jvp(scatter_max_p))


# -- index bounds ------------------------------------------------------------
# An index given to typelattice.numpy's indexing (x[i], take, x.at[i]) must
# be in bounds unless a mode says what an index out of bounds gives: the
# values are checked where they are known, eagerly, when a program (jit)
# runs, on the primal values of a differentiated function. jax.lax has no
# such primitive: jax.numpy clamps or fills silently.

check_index_p = Primitive("check_index")
defbatch_elementwise(check_index_p)


class IndexCheck(NamedTuple):
    """The parameter of ``check_index``: the axis the indices select along
    and its size, whether negative indices count from the end, what an
    index out of bounds gives (``mode``: ``'raise'`` an IndexError,
    ``'clip'`` the nearest index, ``'wrap'`` the index modulo the size,
    ``'fill'`` the index ``size``, which gathers the fill value and drops an
    update), and the words of the error (``where`` before, ``hint`` after).

    >>> IndexCheck(0, 3, True, "raise", "take: ", "")
    IndexCheck(axis=0, size=3, negative=True, mode='raise', where='take: ', hint='')
    """

    axis: int
    size: int
    negative: bool
    mode: str
    where: str
    hint: str


def _index_dtype(size: int) -> np.dtype[Any]:
    return np.dtype(np.int32 if size < 2**31 - 1 else np.int64)


@check_index_p.def_abstract_eval
def _check_index_abstract(i: ShapedArray, *, check: IndexCheck) -> ShapedArray:
    if _dtypes.kind_of(i.dtype) not in "iu":
        raise TypeError(f"check_index: indices must be integers, got {i.dtype}")
    return ShapedArray(i.shape, _index_dtype(check.size), False)


@check_index_p.def_impl
def _check_index_impl(i: NDArray, *, check: IndexCheck) -> NDArray:
    n = check.size
    dt = _index_dtype(n)
    if check.mode == "raise" and i.size:
        # The common case, in two reductions: every index in bounds.
        lo, hi = int(i.min()), int(i.max())
        if (-n if check.negative else 0) <= lo and hi < n:
            if lo >= 0:
                return i.astype(dt, copy=False)
            return np.where(i < 0, i.astype(dt) + n, i.astype(dt))
    wide = i.astype(np.int64)
    if check.mode == "wrap":
        return (wide % max(n, 1)).astype(_index_dtype(n))
    if check.negative:
        wide = np.where(wide < 0, wide + n, wide)
    if check.mode == "clip":
        return np.clip(wide, 0, max(n - 1, 0)).astype(_index_dtype(n))
    bad = (wide < 0) | (wide >= n)
    if check.mode == "fill":
        return np.where(bad, n, wide).astype(_index_dtype(n))
    if bad.any():
        value = int(i.reshape(-1)[np.flatnonzero(bad)[0]])
        raise IndexError(
            f"{check.where}index {value} is out of bounds for axis {check.axis} "
            f"with size {n}{check.hint}"
        )
    return wide.astype(_index_dtype(n))


# Indices have no derivative.
defjvp_zero(check_index_p)


def check_index(indices: ArrayLike, check: IndexCheck) -> Array:
    """``indices`` along an axis of ``check.size``, as ``check.mode`` says
    (``'raise'``: IndexError naming the first index out of bounds): int32
    indices (int64 for an axis of 2**31 elements or more).

    >>> check_index(np.int8([0, -1]), IndexCheck(0, 200, True, "raise", "", ""))
    Array([  0, 199], dtype=int32)
    """
    i = to_array(indices, "check_index", 0)
    return check_index_p.bind(i, check=check)  # type: ignore[no-any-return]


def take_along_axis(x: Any, indices: Any, axis: int) -> Any:
    """``x``'s elements at ``indices`` (of ``x``'s shape, integers) along
    ``axis``: a gather, so that rules written with it (``sort``,
    ``cummax``) differentiate again."""
    others = tuple(d for d in range(x.ndim) if d != axis)
    dn = GatherDimensionNumbers(
        offset_dims=(),
        collapsed_slice_dims=(axis,),
        start_index_map=(axis,),
        operand_batching_dims=others,
        start_indices_batching_dims=others,
    )
    column = reshape_p.bind(indices, new_sizes=(*indices.shape, 1), dimensions=None)
    return gather_p.bind(
        x,
        column,
        dimension_numbers=dn,
        slice_sizes=(1,) * x.ndim,
        mode=GatherScatterMode.PROMISE_IN_BOUNDS,
        fill_value=None,
    )


def _scatter_call(
    prim: Primitive,
    fname: str,
    operand: ArrayLike,
    scatter_indices: ArrayLike,
    updates: ArrayLike,
    dimension_numbers: ScatterDimensionNumbers,
    mode: str | GatherScatterMode | None,
) -> Array:
    x, new = to_arrays(fname, (operand, updates))
    indices = to_array(scatter_indices, fname, 1)
    return prim.bind(  # type: ignore[no-any-return]
        x,
        indices,
        new,
        dimension_numbers=_normal_scatter_dims(fname, dimension_numbers),
        mode=GatherScatterMode.from_any(mode),
    )


def scatter(
    operand: ArrayLike,
    scatter_indices: ArrayLike,
    updates: ArrayLike,
    dimension_numbers: ScatterDimensionNumbers,
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | GatherScatterMode | None = None,
) -> Array:
    """``operand`` with windows of ``updates`` written at the index vectors
    (for repeated ones the last update wins).

    Args:
      operand: an array.
      scatter_indices: an integer array whose last axis holds index vectors.
      updates: an array of ``operand``'s dtype (a Python scalar takes it).
      dimension_numbers: a :class:`ScatterDimensionNumbers`.
      indices_are_sorted, unique_indices: hints; the result is the same.
      mode: ``'fill'``/``'drop'`` (default: out-of-range windows are
        skipped), ``'clip'`` or ``'promise_in_bounds'``.

    Returns:
      A new array of ``operand``'s dtype, shape and weak flag.

    >>> dn = ScatterDimensionNumbers(update_window_dims=(),
    ...     inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    >>> scatter(np.zeros(4, np.int8), np.int32([[1], [3]]), np.int8([5, 6]), dn)
    Array([0, 5, 0, 6], dtype=int8)
    """
    return _scatter_call(
        scatter_p, "scatter", operand, scatter_indices, updates, dimension_numbers, mode
    )


def scatter_add(
    operand: ArrayLike,
    scatter_indices: ArrayLike,
    updates: ArrayLike,
    dimension_numbers: ScatterDimensionNumbers,
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | GatherScatterMode | None = None,
) -> Array:
    """``operand`` with windows of ``updates`` added at the index vectors
    (repeated ones accumulate), in ``operand``'s dtype.

    Args:
      operand: an array.
      scatter_indices: an integer array whose last axis holds index vectors.
      updates: an array of ``operand``'s dtype (a Python scalar takes it).
      dimension_numbers: a :class:`ScatterDimensionNumbers`.
      indices_are_sorted, unique_indices: hints; the result is the same.
      mode: ``'fill'``/``'drop'`` (default: out-of-range windows are
        skipped), ``'clip'`` or ``'promise_in_bounds'``.

    Returns:
      A new array of ``operand``'s dtype, shape and weak flag.

    >>> dn = ScatterDimensionNumbers(update_window_dims=(),
    ...     inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    >>> scatter_add(np.ones(3, np.int8), np.int32([[1], [1]]), np.int8([2, 3]), dn)
    Array([1, 6, 1], dtype=int8)
    """
    return _scatter_call(
        scatter_add_p,
        "scatter_add",
        operand,
        scatter_indices,
        updates,
        dimension_numbers,
        mode,
    )


def scatter_mul(
    operand: ArrayLike,
    scatter_indices: ArrayLike,
    updates: ArrayLike,
    dimension_numbers: ScatterDimensionNumbers,
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | GatherScatterMode | None = None,
) -> Array:
    """``operand`` with its windows multiplied by ``updates`` (repeated
    index vectors multiply again).

    Args:
      operand: an array.
      scatter_indices: an integer array whose last axis holds index vectors.
      updates: an array of ``operand``'s dtype.
      dimension_numbers: a :class:`ScatterDimensionNumbers`.
      indices_are_sorted, unique_indices: hints; the result is the same.
      mode: as for :func:`scatter`.

    Returns:
      A new array of ``operand``'s dtype, shape and weak flag.

    >>> dn = ScatterDimensionNumbers((), (0,), (0,))
    >>> scatter_mul(np.int8([1, 2, 3]), np.int32([[2]]), np.int8([5]), dn)
    Array([ 1,  2, 15], dtype=int8)
    """
    return _scatter_call(
        scatter_mul_p,
        "scatter_mul",
        operand,
        scatter_indices,
        updates,
        dimension_numbers,
        mode,
    )


def scatter_min(
    operand: ArrayLike,
    scatter_indices: ArrayLike,
    updates: ArrayLike,
    dimension_numbers: ScatterDimensionNumbers,
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | GatherScatterMode | None = None,
) -> Array:
    """``operand`` with each window the elementwise minimum of itself and
    ``updates``.

    Args:
      operand: an array.
      scatter_indices: an integer array whose last axis holds index vectors.
      updates: an array of ``operand``'s dtype.
      dimension_numbers: a :class:`ScatterDimensionNumbers`.
      indices_are_sorted, unique_indices: hints; the result is the same.
      mode: as for :func:`scatter`.

    Returns:
      A new array of ``operand``'s dtype, shape and weak flag.

    >>> dn = ScatterDimensionNumbers((), (0,), (0,))
    >>> scatter_min(np.int8([1, 2, 3]), np.int32([[2]]), np.int8([0]), dn)
    Array([1, 2, 0], dtype=int8)
    """
    return _scatter_call(
        scatter_min_p,
        "scatter_min",
        operand,
        scatter_indices,
        updates,
        dimension_numbers,
        mode,
    )


def scatter_max(
    operand: ArrayLike,
    scatter_indices: ArrayLike,
    updates: ArrayLike,
    dimension_numbers: ScatterDimensionNumbers,
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | GatherScatterMode | None = None,
) -> Array:
    """``operand`` with each window the elementwise maximum of itself and
    ``updates``.

    Args:
      operand: an array.
      scatter_indices: an integer array whose last axis holds index vectors.
      updates: an array of ``operand``'s dtype.
      dimension_numbers: a :class:`ScatterDimensionNumbers`.
      indices_are_sorted, unique_indices: hints; the result is the same.
      mode: as for :func:`scatter`.

    Returns:
      A new array of ``operand``'s dtype, shape and weak flag.

    >>> dn = ScatterDimensionNumbers((), (0,), (0,))
    >>> scatter_max(np.int8([1, 2, 3]), np.int32([[0]]), np.int8([9]), dn)
    Array([9, 2, 3], dtype=int8)
    """
    return _scatter_call(
        scatter_max_p,
        "scatter_max",
        operand,
        scatter_indices,
        updates,
        dimension_numbers,
        mode,
    )
