"""Primitives that move, join, pad and cut arrays without changing values:
``broadcast_in_dim``, ``reshape``, ``transpose``, ``squeeze``, ``rev``,
``concatenate``, ``pad``, ``slice``, ``dynamic_slice``,
``dynamic_update_slice`` and ``iota``, and the functions written with them
(``broadcast``, ``expand_dims``, ``full``, ``slice_in_dim``).

Results keep the operand's dtype and weak flag (joins: weak when every
operand is). Axes are counted from 0 and are never negative, as in
``jax.lax``, except where ``jax.lax`` normalizes them itself
(``expand_dims``, ``slice_in_dim``).

All of them are linear in their array operands (``iota`` has none): each
has a transpose rule, which moves the cotangent back (a slice's is a pad, a
pad's a slice, a broadcast's a sum). Cotangents are given the dtype and weak
flag of their operands.
"""

# Package-internal: the arrays' underscored slots are read by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from typelattice import _dtypes
from typelattice._lax import _elementwise as ew
from typelattice._lax._primitive import (
    Primitive,
    ShapedArray,
    UndefinedPrimal,
    Zero,
    aval_of,
    batch_by_looping,
    batch_size,
    bdim_at_front,
    broadcast_in_dim_p,
    check_accepts,
    check_same_dtypes,
    defbatch_axes,
    defjvp_zero,
    deflinear,
    instantiate,
    ints_of,
    is_undefined,
    moveaxis,
    reduce_sum_p,
    reshape_p,
    to_array,
    to_arrays,
    zeros,
)
from typelattice._tracing.jaxpr import def_pp_params
from typelattice._tracing.primitive import full as full_of_aval

if TYPE_CHECKING:
    from typelattice._array import ArrayImpl
    from typelattice._basearray import Array
    from typelattice.typing import ArrayLike, DTypeLike

__all__ = [
    "broadcast",
    "broadcast_in_dim",
    "concatenate",
    "dynamic_slice",
    "dynamic_slice_in_dim",
    "dynamic_update_slice",
    "expand_dims",
    "full",
    "iota",
    "pad",
    "reshape",
    "rev",
    "slice",
    "slice_in_dim",
    "squeeze",
    "transpose",
]

NDArray = np.ndarray[Any, Any]
Shape = tuple[int, ...]
_INT_KINDS: Final = "iu"


def _shape_of(fname: str, what: str, shape: Any) -> Shape:
    dims = ints_of(fname, what, shape)
    if any(d < 0 for d in dims):
        raise TypeError(
            f"lax.{fname}: {what} must have every element be nonnegative, got {dims}."
        )
    return dims


# -- broadcast_in_dim -------------------------------------------------------

# broadcast_in_dim_p, reshape_p and reduce_sum_p are declared in _primitive
# (the elementwise rules bind them); their rules are registered here and in
# _reductions.


@broadcast_in_dim_p.def_noop
def _broadcast_in_dim_noop(
    x: ShapedArray, *, shape: Shape, broadcast_dimensions: Shape
) -> bool:
    return tuple(shape) == x.shape and tuple(broadcast_dimensions) == tuple(
        range(x.ndim)
    )


@broadcast_in_dim_p.def_batch
def _broadcast_in_dim_batch(
    args: Sequence[Any], dims: Sequence[int | None], **params: Any
) -> tuple[Any, int]:
    (x,), (d,) = args, dims
    assert d is not None
    size = x.shape[d]
    shape, bdims = params["shape"], params["broadcast_dimensions"]
    out = broadcast_in_dim_p.bind(
        moveaxis(x, d, 0),
        shape=(size, *shape),
        broadcast_dimensions=(0, *(b + 1 for b in bdims)),
    )
    return out, 0


@broadcast_in_dim_p.def_abstract_eval
def _broadcast_in_dim_abstract(
    x: ShapedArray, *, shape: Shape, broadcast_dimensions: Shape
) -> ShapedArray:
    dims = broadcast_dimensions
    if len(dims) != x.ndim:
        raise TypeError(
            f"broadcast_in_dim broadcast_dimensions must have length equal to "
            f"operand ndim; got broadcast_dimensions {dims} for operand ndim "
            f"{x.ndim}."
        )
    if any(not 0 <= d < len(shape) for d in dims) or list(dims) != sorted(set(dims)):
        raise TypeError(
            f"broadcast_in_dim broadcast_dimensions must be strictly increasing "
            f"axes of the result (rank {len(shape)}); got {dims}."
        )
    if any(x.shape[i] not in (1, shape[d]) for i, d in enumerate(dims)):
        raise TypeError(
            "broadcast_in_dim operand dimension sizes must either be 1, or be "
            "equal to their corresponding dimensions in the target broadcast "
            f"shape; got operand of shape {x.shape}, target broadcast shape "
            f"{shape}, broadcast_dimensions {dims}."
        )
    return x.update(shape=shape)


@def_pp_params(broadcast_in_dim_p)
def _broadcast_in_dim_pp(params: dict[str, Any], outs: Any) -> dict[str, Any]:
    # As JAX shows it: the shape is the result's; no trivial dimensions.
    shown = {k: v for k, v in params.items() if k != "shape"}
    if not shown.get("broadcast_dimensions", True):
        del shown["broadcast_dimensions"]
    return shown


def _expanded(operand: Shape, shape: Shape, broadcast_dimensions: Shape) -> Shape:
    """The operand's shape with the result's rank: its sizes at
    ``broadcast_dimensions``, 1 elsewhere."""
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = operand[i]
    return tuple(expanded)


@broadcast_in_dim_p.def_impl
def _broadcast_in_dim_impl(
    x: NDArray, *, shape: Shape, broadcast_dimensions: Shape
) -> NDArray:
    return np.broadcast_to(
        x.reshape(_expanded(x.shape, shape, broadcast_dimensions)), shape
    )


@broadcast_in_dim_p.def_fast
def _broadcast_in_dim_fast(
    x: ShapedArray, *, shape: Shape, broadcast_dimensions: Shape
) -> Callable[[NDArray], NDArray]:
    """A read-only view, made directly on a C-contiguous operand (its
    strides known here: zero along the new and stretched axes)."""
    into = _expanded(x.shape, shape, broadcast_dimensions)
    strides: list[int] = []
    step = x.dtype.itemsize
    for size, have in zip(reversed(shape), reversed(into), strict=True):
        strides.append(step if have == size else 0)
        step *= have
    strides.reverse()
    dt, full, grid = x.dtype, tuple(shape), tuple(strides)

    def fast(v: NDArray) -> NDArray:
        if v.flags.c_contiguous:
            out: NDArray = np.ndarray(full, dt, v, 0, grid)
            out.flags.writeable = False
            return out
        return np.broadcast_to(v.reshape(into), full)

    return fast


def _as_aval(ct: Any, aval: ShapedArray) -> Any:
    """A cotangent with ``aval``'s dtype and weak flag (operands of joins
    and updates may differ from the result in their weak flag)."""
    return ew._cast(ct, aval.dtype, aval.weak_type)


def _broadcast_in_dim_transpose(
    ct: Any, x: UndefinedPrimal, *, shape: Shape, broadcast_dimensions: Shape
) -> list[Any]:
    # Sum over the new axes and the axes of size 1 that were stretched.
    dims = broadcast_dimensions
    stretched = [d for i, d in enumerate(dims) if x.aval.shape[i] != shape[d]]
    axes = tuple(sorted({*(d for d in range(len(shape)) if d not in dims), *stretched}))
    summed = reduce_sum_p.bind(ct, axes=axes) if axes else ct
    out = reshape_p.bind(summed, new_sizes=x.aval.shape, dimensions=None)
    return [_as_aval(out, x.aval)]


deflinear(broadcast_in_dim_p, _broadcast_in_dim_transpose)


def broadcast_in_dim(
    operand: ArrayLike, shape: Sequence[int], broadcast_dimensions: Sequence[int]
) -> Array:
    """``operand`` broadcast to ``shape``, its axis ``i`` becoming axis
    ``broadcast_dimensions[i]`` of the result.

    Args:
      operand: an array.
      shape: the result's shape.
      broadcast_dimensions: for each axis of ``operand``, in increasing
        order, the result's axis it maps to (of equal size, or size 1).

    Returns:
      An array of ``operand``'s dtype and weak flag.

    >>> broadcast_in_dim(np.int8([1, 2]), (3, 2), (1,))
    Array([[1, 2],
           [1, 2],
           [1, 2]], dtype=int8)
    """
    x = to_array(operand, "broadcast_in_dim", 0)
    return broadcast_in_dim_p.bind(  # type: ignore[no-any-return]
        x,
        shape=_shape_of("broadcast_in_dim", "shape", shape),
        broadcast_dimensions=ints_of(
            "broadcast_in_dim", "broadcast_dimensions", broadcast_dimensions
        ),
    )


def broadcast(operand: ArrayLike, sizes: Sequence[int]) -> Array:
    """``operand`` with new leading axes of ``sizes``.

    Args:
      operand: an array.
      sizes: the sizes of the leading axes to add.

    Returns:
      An array of shape ``(*sizes, *operand.shape)``, dtype and weak flag
      kept.

    >>> broadcast(np.int8([1, 2]), (2,)).shape
    (2, 2)
    """
    x = to_array(operand, "broadcast", 0)
    dims = _shape_of("broadcast", "sizes", sizes)
    return broadcast_in_dim_p.bind(  # type: ignore[no-any-return]
        x,
        shape=(*dims, *x.shape),
        broadcast_dimensions=tuple(range(len(dims), len(dims) + x.ndim)),
    )


# -- reshape, transpose, squeeze, rev ---------------------------------------


@reshape_p.def_noop
def _reshape_noop(
    x: ShapedArray, *, new_sizes: Shape, dimensions: Shape | None
) -> bool:
    return dimensions is None and tuple(new_sizes) == x.shape


@reshape_p.def_batch
def _reshape_batch(
    args: Sequence[Any], dims: Sequence[int | None], **params: Any
) -> tuple[Any, int]:
    (x,), (d,) = args, dims
    assert d is not None
    size = x.shape[d]
    perm = params["dimensions"]
    out = reshape_p.bind(
        moveaxis(x, d, 0),
        new_sizes=(size, *params["new_sizes"]),
        dimensions=None if perm is None else (0, *(p + 1 for p in perm)),
    )
    return out, 0


@reshape_p.def_abstract_eval
def _reshape_abstract(
    x: ShapedArray, *, new_sizes: Shape, dimensions: Shape | None
) -> ShapedArray:
    if any(d < 0 for d in new_sizes):
        raise TypeError(
            f"reshape new_sizes must all be positive, got {new_sizes}. lax takes "
            "no -1: give every size (typelattice.numpy.reshape infers one)."
        )
    if math.prod(new_sizes) != math.prod(x.shape):
        raise ValueError(
            f"reshape total size must be unchanged, got new_sizes {new_sizes} "
            f"({math.prod(new_sizes)} elements) for shape {x.shape} "
            f"({math.prod(x.shape)} elements)."
        )
    if dimensions is not None and sorted(dimensions) != list(range(x.ndim)):
        raise TypeError(
            f"reshape dimensions must be a permutation of operand dimensions, "
            f"got dimensions {dimensions} for shape {x.shape}."
        )
    return x.update(shape=new_sizes)


@reshape_p.def_impl
def _reshape_impl(x: NDArray, *, new_sizes: Shape, dimensions: Shape | None) -> NDArray:
    if dimensions is not None:
        x = np.transpose(x, dimensions)
    return np.reshape(x, new_sizes)


@reshape_p.def_fast
def _reshape_fast(
    x: ShapedArray, *, new_sizes: Shape, dimensions: Shape | None
) -> Callable[[NDArray], NDArray] | None:
    """``ndarray.reshape`` itself (a view where one exists)."""
    if dimensions is not None:
        return None
    return operator.methodcaller("reshape", tuple(new_sizes))


def _reshape_transpose(
    ct: Any, x: UndefinedPrimal, *, new_sizes: Shape, dimensions: Shape | None
) -> list[Any]:
    if dimensions is None:
        return [reshape_p.bind(ct, new_sizes=x.aval.shape, dimensions=None)]
    permuted = tuple(x.aval.shape[d] for d in dimensions)
    back = reshape_p.bind(ct, new_sizes=permuted, dimensions=None)
    inverse = tuple(int(i) for i in np.argsort(dimensions))
    return [transpose_p.bind(back, permutation=inverse)]


deflinear(reshape_p, _reshape_transpose)


def reshape(
    operand: ArrayLike,
    new_sizes: Sequence[int],
    dimensions: Sequence[int] | None = None,
) -> Array:
    """``operand``'s elements in row-major order, in the shape ``new_sizes``.

    Args:
      operand: an array.
      new_sizes: the new shape, of the same total size (no ``-1``).
      dimensions: if given, a permutation of ``operand``'s axes applied
        first (as :func:`transpose`).

    Returns:
      An array of ``operand``'s dtype and weak flag.

    >>> reshape(np.int8([[1, 2, 3], [4, 5, 6]]), (3, 2), (1, 0))
    Array([[1, 4],
           [2, 5],
           [3, 6]], dtype=int8)
    """
    x = to_array(operand, "reshape", 0)
    dims = None if dimensions is None else ints_of("reshape", "dimensions", dimensions)
    return reshape_p.bind(  # type: ignore[no-any-return]
        x, new_sizes=ints_of("reshape", "new_sizes", new_sizes), dimensions=dims
    )


transpose_p = Primitive("transpose")


@transpose_p.def_batch
def _transpose_batch(
    args: Sequence[Any], dims: Sequence[int | None], **params: Any
) -> tuple[Any, int]:
    (x,), (d,) = args, dims
    assert d is not None
    perm = params["permutation"]
    # The batch axis stays where it is; the others are permuted around it.
    full = [p + (p >= d) for p in perm]
    full.insert(d, d)
    return transpose_p.bind(x, permutation=tuple(full)), d


@transpose_p.def_noop
def _transpose_noop(x: ShapedArray, *, permutation: Shape) -> bool:
    return tuple(permutation) == tuple(range(x.ndim))


@transpose_p.def_abstract_eval
def _transpose_abstract(x: ShapedArray, *, permutation: Shape) -> ShapedArray:
    if sorted(permutation) != list(range(x.ndim)):
        raise TypeError(
            f"transpose permutation isn't a permutation of operand dimensions, "
            f"got permutation {permutation} for operand shape {x.shape}."
        )
    return x.update(shape=tuple(x.shape[p] for p in permutation))


@transpose_p.def_impl
def _transpose_impl(x: NDArray, *, permutation: Shape) -> NDArray:
    return np.transpose(x, permutation)


@transpose_p.def_fast
def _transpose_fast(
    x: ShapedArray, *, permutation: Shape
) -> Callable[[NDArray], NDArray]:
    """``ndarray.transpose`` itself (a view)."""
    return operator.methodcaller("transpose", tuple(permutation))


def _transpose_transpose(
    ct: Any, x: UndefinedPrimal, *, permutation: Shape
) -> list[Any]:
    inverse = tuple(int(i) for i in np.argsort(permutation))
    return [transpose_p.bind(ct, permutation=inverse)]


deflinear(transpose_p, _transpose_transpose)


def transpose(operand: ArrayLike, permutation: Sequence[int]) -> Array:
    """``operand`` with its axes permuted: axis ``i`` of the result is axis
    ``permutation[i]`` of ``operand``.

    Args:
      operand: an array.
      permutation: a permutation of ``range(operand.ndim)``.

    Returns:
      An array of ``operand``'s dtype and weak flag.

    >>> transpose(np.zeros((2, 3, 4), np.int8), (2, 0, 1)).shape
    (4, 2, 3)
    """
    x = to_array(operand, "transpose", 0)
    return transpose_p.bind(  # type: ignore[no-any-return]
        x, permutation=ints_of("transpose", "permutation", permutation)
    )


squeeze_p = Primitive("squeeze")
defbatch_axes(squeeze_p, "dimensions", kept=False)


@squeeze_p.def_abstract_eval
def _squeeze_abstract(x: ShapedArray, *, dimensions: Shape) -> ShapedArray:
    if any(x.shape[d] != 1 for d in dimensions):
        raise ValueError(
            "cannot select an axis to squeeze out which has size not equal to "
            f"one, got shape={x.shape} and dimensions={dimensions}"
        )
    return x.update(
        shape=tuple(s for i, s in enumerate(x.shape) if i not in dimensions)
    )


@squeeze_p.def_impl
def _squeeze_impl(x: NDArray, *, dimensions: Shape) -> NDArray:
    return np.squeeze(x, axis=dimensions)


@squeeze_p.def_fast
def _squeeze_fast(x: ShapedArray, *, dimensions: Shape) -> Callable[[NDArray], NDArray]:
    """``ndarray.squeeze`` itself (a view)."""
    return operator.methodcaller("squeeze", tuple(dimensions))


def _squeeze_transpose(ct: Any, x: UndefinedPrimal, *, dimensions: Shape) -> list[Any]:
    return [reshape_p.bind(ct, new_sizes=x.aval.shape, dimensions=None)]


deflinear(squeeze_p, _squeeze_transpose)


def _axis(fname: str, axis: Any, ndim: int) -> int:
    """An axis that may count from the end (where jax.lax allows it)."""
    a = operator.index(axis)
    if not -ndim <= a < ndim:
        raise ValueError(
            f"lax.{fname}: axis {a} is out of bounds for array of dimension {ndim}"
        )
    return a % ndim


def squeeze(array: ArrayLike, dimensions: Sequence[int]) -> Array:
    """``array`` without the axes ``dimensions``, which have size 1.

    Args:
      array: an array.
      dimensions: the axes to remove (negative ones count from the end).

    Returns:
      An array of ``array``'s dtype and weak flag.

    >>> squeeze(np.zeros((1, 3, 1)), (0, 2)).shape
    (3,)
    """
    x = to_array(array, "squeeze", 0)
    dims = [
        _axis("squeeze", d, x.ndim)
        for d in ints_of("squeeze", "dimensions", dimensions)
    ]
    if len(set(dims)) != len(dims):
        raise ValueError(f"lax.squeeze: dimensions are not unique: {tuple(dimensions)}")
    return squeeze_p.bind(x, dimensions=tuple(sorted(dims)))  # type: ignore[no-any-return]


def expand_dims(array: ArrayLike, dimensions: Sequence[int]) -> Array:
    """``array`` with new axes of size 1 at ``dimensions`` (axes of the
    result; negative ones count from its end).

    Args:
      array: an array.
      dimensions: where the new axes are in the result.

    Returns:
      An array of ``array``'s dtype and weak flag.

    >>> expand_dims(np.zeros((2, 3)), (0, -1)).shape
    (1, 2, 3, 1)
    """
    x = to_array(array, "expand_dims", 0)
    dims = ints_of("expand_dims", "dimensions", dimensions)
    ndim = x.ndim + len(dims)
    where = [_axis("expand_dims", d, ndim) for d in dims]
    if len(set(where)) != len(where):
        raise ValueError(f"repeated axis in lax.expand_dims: {dims}")
    kept = [i for i in range(ndim) if i not in where]
    shape = [1] * ndim
    for i, d in zip(kept, x.shape, strict=True):
        shape[i] = d
    return broadcast_in_dim_p.bind(  # type: ignore[no-any-return]
        x, shape=tuple(shape), broadcast_dimensions=tuple(kept)
    )


rev_p = Primitive("rev")
defbatch_axes(rev_p, "dimensions", kept=True)


@rev_p.def_abstract_eval
def _rev_abstract(x: ShapedArray, *, dimensions: Shape) -> ShapedArray:
    if len(set(dimensions)) != len(dimensions):
        raise TypeError(f"rev dimensions must be unique, got {dimensions}.")
    if any(not 0 <= d < x.ndim for d in dimensions):
        raise TypeError(
            f"rev dimensions must all be in the range [0, {x.ndim}), got "
            f"{dimensions}. lax takes no negative axes."
        )
    return x


@rev_p.def_impl
def _rev_impl(x: NDArray, *, dimensions: Shape) -> NDArray:
    return np.flip(x, dimensions) if dimensions else x


def _rev_transpose(ct: Any, x: UndefinedPrimal, *, dimensions: Shape) -> list[Any]:
    return [rev_p.bind(ct, dimensions=dimensions)]


deflinear(rev_p, _rev_transpose)


def rev(operand: ArrayLike, dimensions: Sequence[int]) -> Array:
    """``operand`` reversed along ``dimensions``.

    Args:
      operand: an array.
      dimensions: distinct axes, not negative.

    Returns:
      An array of ``operand``'s dtype, shape and weak flag.

    >>> rev(np.int8([1, 2, 3]), (0,))
    Array([3, 2, 1], dtype=int8)
    """
    x = to_array(operand, "rev", 0)
    return rev_p.bind(x, dimensions=ints_of("rev", "dimensions", dimensions))  # type: ignore[no-any-return]


# -- concatenate and pad ----------------------------------------------------

concatenate_p = Primitive("concatenate")


@concatenate_p.def_batch
def _concatenate_batch(
    args: Sequence[Any], dims: Sequence[int | None], **params: Any
) -> tuple[Any, int]:
    size = batch_size(args, dims)
    xs = [bdim_at_front(x, d, size) for x, d in zip(args, dims, strict=True)]
    return concatenate_p.bind(*xs, dimension=params["dimension"] + 1), 0


@concatenate_p.def_abstract_eval
def _concatenate_abstract(*xs: ShapedArray, dimension: int) -> ShapedArray:
    if not xs:
        raise ValueError("concatenate requires a non-empty sequences of arrays")
    check_same_dtypes(
        "concatenate",
        xs,
        [f"operands[{i}]" for i in range(len(xs))],
        "concatenate",
    )
    shapes = [x.shape for x in xs]
    if len({len(s) for s in shapes}) != 1:
        raise TypeError(
            "Cannot concatenate arrays with different numbers of dimensions: "
            f"got {', '.join(str(s) for s in shapes)}."
        )
    if not 0 <= dimension < len(shapes[0]):
        raise TypeError(
            f"concatenate dimension out of bounds: dimension {dimension} for "
            f"shapes {', '.join(str(s) for s in shapes)}."
        )
    rest = {s[:dimension] + s[dimension + 1 :] for s in shapes}
    if len(rest) != 1:
        raise TypeError(
            "Cannot concatenate arrays with shapes that differ in dimensions "
            f"other than the one being concatenated: concatenating along "
            f"dimension {dimension} for shapes "
            f"{', '.join(str(s) for s in shapes)}."
        )
    size = sum(s[dimension] for s in shapes)
    shape = (*shapes[0][:dimension], size, *shapes[0][dimension + 1 :])
    return ShapedArray(shape, xs[0].dtype, all(x.weak_type for x in xs))


@concatenate_p.def_impl
def _concatenate_impl(*xs: NDArray, dimension: int) -> NDArray:
    return np.concatenate(xs, axis=dimension)


def _concatenate_transpose(ct: Any, *xs: Any, dimension: int) -> list[Any]:
    # Each operand's cotangent is its slice of the result's.
    out: list[Any] = []
    start = 0
    for x in xs:
        aval = aval_of(x)
        size = aval.shape[dimension]
        if is_undefined(x):
            starts = [0] * ct.ndim
            limits = list(ct.shape)
            starts[dimension], limits[dimension] = start, start + size
            part = slice_p.bind(
                ct,
                start_indices=tuple(starts),
                limit_indices=tuple(limits),
                strides=(1,) * ct.ndim,
            )
            out.append(_as_aval(part, aval))
        else:
            out.append(None)
        start += size
    return out


deflinear(concatenate_p, _concatenate_transpose)


def concatenate(operands: Sequence[ArrayLike], dimension: int) -> Array:
    """The arrays joined along ``dimension``, without promotion.

    Args:
      operands: arrays of one dtype and rank, equal in every other axis.
      dimension: the axis to join along (not negative).

    Returns:
      An array of their dtype, weak when every operand is.

    >>> concatenate([np.int8([1, 2]), np.int8([3])], 0)
    Array([1, 2, 3], dtype=int8)
    """
    arrays = to_arrays("concatenate", list(operands))
    return concatenate_p.bind(*arrays, dimension=operator.index(dimension))  # type: ignore[no-any-return]


pad_p = Primitive("pad")
_pad_looping = batch_by_looping(pad_p, register=False)


@pad_p.def_batch
def _pad_batch(
    args: Sequence[Any], dims: Sequence[int | None], **params: Any
) -> tuple[Any, int]:
    (x, value), (d, value_dim) = args, dims
    if d is None or value_dim is not None:  # a padding value per example
        return _pad_looping(args, dims, **params)  # type: ignore[no-any-return]
    config = list(params["padding_config"])
    config.insert(d, (0, 0, 0))
    return pad_p.bind(x, value, padding_config=tuple(config)), d


@pad_p.def_abstract_eval
def _pad_abstract(
    x: ShapedArray,
    padding_value: ShapedArray,
    *,
    padding_config: tuple[tuple[int, int, int], ...],
) -> ShapedArray:
    if padding_value.shape:
        raise ValueError(
            f"padding_value must be a scalar; got shape {padding_value.shape}"
        )
    if x.dtype != padding_value.dtype:
        raise TypeError(
            f"pad operand and padding_value must be same dtype: got "
            f"{x.dtype.name} and {padding_value.dtype.name}. Convert it, e.g. "
            f"lax.convert_element_type(padding_value, '{x.dtype.name}')."
        )
    if len(padding_config) != x.ndim:
        raise ValueError(
            "length of padding_config must equal the number of axes of operand, "
            f"got padding_config {padding_config} for operand shape {x.shape}"
        )
    if any(interior < 0 for _, _, interior in padding_config):
        raise ValueError(
            "interior padding in padding_config must be nonnegative, got "
            f"padding_config {padding_config}"
        )
    shape = tuple(
        lo + hi + d + max(d - 1, 0) * interior
        for d, (lo, hi, interior) in zip(x.shape, padding_config, strict=True)
    )
    if any(s < 0 for s in shape):
        raise ValueError(
            f"Dimension size after padding is not at least 0, got result shape "
            f"{shape}, for padding_config {padding_config} and operand shape "
            f"{x.shape}"
        )
    return x.update(shape=shape, weak_type=x.weak_type and padding_value.weak_type)


@pad_p.def_impl
def _pad_impl(
    x: NDArray,
    padding_value: NDArray,
    *,
    padding_config: tuple[tuple[int, int, int], ...],
) -> NDArray:
    # Interior padding first (spread the elements), then the edges: negative
    # edge padding cuts, positive pads.
    spread_shape = tuple(
        d + max(d - 1, 0) * interior
        for d, (_, _, interior) in zip(x.shape, padding_config, strict=True)
    )
    spread = np.full(spread_shape, padding_value, x.dtype)
    spread[tuple(np.s_[:: interior + 1] for _, _, interior in padding_config)] = x
    cut = tuple(
        np.s_[max(-lo, 0) : n - max(-hi, 0)]
        for n, (lo, hi, _) in zip(spread_shape, padding_config, strict=True)
    )
    kept = spread[cut]
    widths = [(max(lo, 0), max(hi, 0)) for lo, hi, _ in padding_config]
    return np.pad(kept, widths, constant_values=padding_value)


def _pad_transpose(
    ct: Any,
    x: Any,
    padding_value: Any,
    *,
    padding_config: tuple[tuple[int, int, int], ...],
) -> list[Any]:
    # The operand's elements are every (interior + 1)-th of the result's,
    # once the edges are undone (cut elements get zeros); the padding
    # value's cotangent is the rest of the sum.
    x_aval = aval_of(x)
    unpad = tuple((-lo, -hi, 0) for lo, hi, _ in padding_config)
    zero = ew._like(ShapedArray((), ct.dtype, ct.weak_type), 0)
    edges = pad_p.bind(ct, zero, padding_config=unpad)
    t_x = slice_p.bind(
        edges,
        start_indices=(0,) * ct.ndim,
        limit_indices=tuple(edges.shape),
        strides=tuple(interior + 1 for _, _, interior in padding_config),
    )
    out: list[Any] = [_as_aval(t_x, x_aval) if is_undefined(x) else None, None]
    if is_undefined(padding_value):
        every = tuple(range(ct.ndim))
        rest = ew.sub(
            reduce_sum_p.bind(ct, axes=every), reduce_sum_p.bind(t_x, axes=every)
        )
        out[1] = _as_aval(rest, padding_value.aval)
    return out


deflinear(pad_p, _pad_transpose)


def pad(
    operand: ArrayLike,
    padding_value: ArrayLike,
    padding_config: Sequence[tuple[int, int, int]],
) -> Array:
    """``operand`` padded with ``padding_value``: per axis ``(low, high,
    interior)`` elements before, after and between its elements; negative
    ``low``/``high`` remove elements.

    Args:
      operand: an array.
      padding_value: a scalar of ``operand``'s dtype (a Python scalar takes
        it).
      padding_config: one ``(low, high, interior)`` per axis; ``interior``
        is not negative.

    Returns:
      An array of ``operand``'s dtype, weak when both arguments are.

    >>> pad(np.int8([1, 2, 3]), 0, [(1, -1, 1)])
    Array([0, 1, 0, 2, 0], dtype=int8)
    """
    x, value = to_arrays("pad", (operand, padding_value))
    config: list[tuple[int, ...]] = []
    for item in padding_config:
        triple = ints_of("pad", "padding_config", item)
        if len(triple) != 3:
            raise TypeError(
                f"lax.pad: each padding_config entry is (low, high, interior), "
                f"got {item!r}"
            )
        config.append(triple)
    return pad_p.bind(x, value, padding_config=tuple(config))  # type: ignore[no-any-return]


# -- iota and full ----------------------------------------------------------

iota_p = Primitive("iota")
# (No operand: never batched; the looping rule stands for completeness.)
batch_by_looping(iota_p)


@iota_p.def_abstract_eval
def _iota_abstract(
    *, dtype: np.dtype[Any], shape: Shape, dimension: int
) -> ShapedArray:
    check_accepts("iota", ShapedArray(shape, dtype), "iufc")
    return ShapedArray(shape, dtype, False)


@iota_p.def_impl
def _iota_impl(*, dtype: np.dtype[Any], shape: Shape, dimension: int) -> NDArray:
    counts = np.arange(shape[dimension]).astype(dtype)  # integers wrap, as XLA
    view = [1] * len(shape)
    view[dimension] = shape[dimension]
    return np.broadcast_to(counts.reshape(view), shape)


defjvp_zero(iota_p)


def iota(dtype: DTypeLike, size: int) -> Array:
    """``0, 1, ..., size - 1`` in ``dtype``.

    Args:
      dtype: an integer, floating or complex dtype.
      size: the number of elements.

    Returns:
      A strong 1-d array of ``dtype``.

    >>> iota('int8', 4)
    Array([0, 1, 2, 3], dtype=int8)
    """
    dt = ew._new_dtype("iota", dtype)
    n = operator.index(size)
    if n < 0:
        raise TypeError(
            f"iota shape must have every element be nonnegative, got ({n},)."
        )
    return iota_p.bind(dtype=dt, shape=(n,), dimension=0)  # type: ignore[no-any-return]


def full(
    shape: Sequence[int] | int, fill_value: ArrayLike, dtype: DTypeLike | None = None
) -> Array:
    """An array of ``shape`` filled with ``fill_value``.

    Args:
      shape: the shape (an int for one axis).
      fill_value: a scalar.
      dtype: the dtype; by default ``fill_value``'s (a Python scalar gives a
        weak array of the default dtype of its kind).

    Returns:
      An array, weak when ``fill_value`` is and ``dtype`` is not given.

    >>> full((2,), 1.5)
    Array([1.5, 1.5], dtype=float32, weak_type=True)
    >>> full((2,), 3, 'int8')
    Array([3, 3], dtype=int8)
    """
    dims = _shape_of("full", "shape", (shape,) if isinstance(shape, int) else shape)
    if dtype is None:
        value = to_array(fill_value, "full", 1)
    else:
        value = ew._convert(fill_value, ew._new_dtype("full", dtype), "full", "dtype")
    if value.shape:
        raise TypeError(
            f"full must be called with scalar fill_value, got fill_value.shape "
            f"{value.shape}."
        )
    return broadcast_in_dim_p.bind(value, shape=dims, broadcast_dimensions=())  # type: ignore[no-any-return]


# -- slicing ----------------------------------------------------------------

slice_p = Primitive("slice")


@slice_p.def_batch
def _slice_batch(
    args: Sequence[Any], dims: Sequence[int | None], **params: Any
) -> tuple[Any, int]:
    (x,), (d,) = args, dims
    assert d is not None
    start, limit, strides = (
        list(params[k]) for k in ("start_indices", "limit_indices", "strides")
    )
    start.insert(d, 0)
    limit.insert(d, x.shape[d])
    strides.insert(d, 1)
    out = slice_p.bind(
        x,
        start_indices=tuple(start),
        limit_indices=tuple(limit),
        strides=tuple(strides),
    )
    return out, d


@slice_p.def_abstract_eval
def _slice_abstract(
    x: ShapedArray, *, start_indices: Shape, limit_indices: Shape, strides: Shape
) -> ShapedArray:
    for what, seq in (
        ("start_indices", start_indices),
        ("limit_indices", limit_indices),
        ("strides", strides),
    ):
        if len(seq) != x.ndim:
            raise TypeError(
                f"slice {what} must have length equal to the number of "
                f"dimensions of the operand, got {what} {seq} for operand "
                f"shape {x.shape}."
            )
    if any(s < 0 for s in start_indices):
        raise TypeError(
            f"slice start_indices must be greater than or equal to zero, got "
            f"start_indices of {start_indices}."
        )
    if any(lim > d for lim, d in zip(limit_indices, x.shape, strict=True)):
        raise TypeError(
            f"slice limit_indices must be less than or equal to operand shape, "
            f"got limit_indices {limit_indices} for operand shape {x.shape}."
        )
    if any(lim < s for s, lim in zip(start_indices, limit_indices, strict=True)):
        raise TypeError(
            f"slice limit_indices must be greater than or equal to start_indices, "
            f"got start_indices {start_indices} and limit_indices {limit_indices}."
        )
    if any(st <= 0 for st in strides):
        raise TypeError(f"slice strides must be positive, got {strides}")
    shape = tuple(
        -(-(lim - s) // st)
        for s, lim, st in zip(start_indices, limit_indices, strides, strict=True)
    )
    return x.update(shape=shape)


def _slice_index(
    start_indices: Shape, limit_indices: Shape, strides: Shape
) -> tuple[Any, ...]:
    """The basic index (slices) of a ``slice`` primitive."""
    index: tuple[Any, ...] = tuple(
        np.s_[s:lim:st]
        for s, lim, st in zip(start_indices, limit_indices, strides, strict=True)
    )
    return index


@slice_p.def_impl
def _slice_impl(
    x: NDArray, *, start_indices: Shape, limit_indices: Shape, strides: Shape
) -> NDArray:
    out: NDArray = x[_slice_index(start_indices, limit_indices, strides)]
    return out


@slice_p.def_fast
def _slice_fast(
    x: ShapedArray, *, start_indices: Shape, limit_indices: Shape, strides: Shape
) -> Callable[[NDArray], NDArray]:
    """Basic indexing with the slices made once: a view of the operand."""
    return operator.itemgetter(_slice_index(start_indices, limit_indices, strides))


def _slice_transpose(
    ct: Any,
    x: UndefinedPrimal,
    *,
    start_indices: Shape,
    limit_indices: Shape,
    strides: Shape,
) -> list[Any]:
    # Zeros around and between the sliced elements: a pad.
    config: list[tuple[int, int, int]] = []
    for start, step, size, n in zip(
        start_indices, strides, x.aval.shape, ct.shape, strict=True
    ):
        end = start + (n - 1) * step + 1 if n else start
        config.append((start, size - end, step - 1))
    zero = ew._like(ShapedArray((), ct.dtype, ct.weak_type), 0)
    return [pad_p.bind(ct, zero, padding_config=tuple(config))]


deflinear(slice_p, _slice_transpose)


def slice(  # noqa: A001 - jax.lax's name
    operand: ArrayLike,
    start_indices: Sequence[int],
    limit_indices: Sequence[int],
    strides: Sequence[int] | None = None,
) -> Array:
    """The elements of ``operand`` from ``start_indices`` up to (not
    including) ``limit_indices``, every ``strides``-th.

    Args:
      operand: an array.
      start_indices: per axis, the first index (``0 <= start``).
      limit_indices: per axis, the end (``start <= limit <= size``).
      strides: per axis, the step (positive); by default 1.

    Returns:
      An array of ``operand``'s dtype and weak flag.

    >>> slice(np.arange(10, dtype=np.int8), (1,), (9,), (3,))
    Array([1, 4, 7], dtype=int8)
    """
    x = to_array(operand, "slice", 0)
    starts = ints_of("slice", "start_indices", start_indices)
    limits = ints_of("slice", "limit_indices", limit_indices)
    steps = (
        (1,) * len(starts) if strides is None else ints_of("slice", "strides", strides)
    )
    return slice_p.bind(  # type: ignore[no-any-return]
        x, start_indices=starts, limit_indices=limits, strides=steps
    )


def slice_in_dim(
    operand: ArrayLike,
    start_index: int | None,
    limit_index: int | None,
    stride: int = 1,
    axis: int = 0,
) -> Array:
    """:func:`slice` along one axis; ``start_index``, ``limit_index`` and
    ``axis`` may be negative (counted from the end) or None.

    Args:
      operand: an array.
      start_index: the first index (None: 0).
      limit_index: the end (None: the axis' size).
      stride: the step (positive).
      axis: the axis to slice.

    Returns:
      An array of ``operand``'s dtype and weak flag.

    >>> slice_in_dim(np.arange(6, dtype=np.int8), -4, None, 2)
    Array([2, 4], dtype=int8)
    """
    x = to_array(operand, "slice_in_dim", 0)
    ax = _axis("slice_in_dim", axis, x.ndim)
    size = x.shape[ax]
    start = 0 if start_index is None else operator.index(start_index)
    limit = size if limit_index is None else operator.index(limit_index)
    start = start + size if start < 0 else start
    limit = limit + size if limit < 0 else limit
    starts = [0] * x.ndim
    limits = list(x.shape)
    steps = [1] * x.ndim
    starts[ax], limits[ax], steps[ax] = start, limit, operator.index(stride)
    return slice_p.bind(  # type: ignore[no-any-return]
        x,
        start_indices=tuple(starts),
        limit_indices=tuple(limits),
        strides=tuple(steps),
    )


def _start_indices(
    fname: str, x: ArrayImpl, start_indices: Any, allow_negative: Any
) -> list[ArrayImpl]:
    """The start indices as strong integer scalars, negative ones counted
    from the end where allowed (with lax primitives, as ``jax.lax``)."""
    if isinstance(start_indices, Sequence):
        items: list[Any] = list(start_indices)  # pyright: ignore[reportUnknownArgumentType]
    else:
        whole = to_array(start_indices, fname, 1)
        if whole.ndim != 1:
            raise ValueError(f"Slice indices must be a 1D sequence, got {whole.shape}")
        items = [
            slice_p.bind(
                whole, start_indices=(i,), limit_indices=(i + 1,), strides=(1,)
            )
            for i in range(whole.shape[0])
        ]
        items = [reshape_p.bind(i, new_sizes=(), dimensions=None) for i in items]
    if len(items) != x.ndim:
        raise ValueError(
            f"Length of slice indices must match number of operand dimensions "
            f"({len(items)} vs {x.shape})"
        )
    allowed = (
        [allow_negative] * x.ndim
        if isinstance(allow_negative, bool)
        else list(allow_negative)
    )
    indices = to_arrays(fname, items, first=1)
    out: list[ArrayImpl] = []
    for i, (index, size, ok) in enumerate(zip(indices, x.shape, allowed, strict=True)):
        if index.shape:
            raise TypeError(
                f"lax.{fname}: start index {i} must be a scalar, got shape "
                f"{index.shape}"
            )
        if _dtypes.kind_of(index.dtype) not in _INT_KINDS:
            names = ", ".join(j.dtype.name for j in indices)
            raise TypeError(
                f"index arguments to {fname} must be integers of the same type, "
                f"got: {names}"
            )
        strong = ew.convert_element_type_p.bind(
            index, new_dtype=index.dtype, weak_type=False
        )
        if _dtypes.kind_of(index.dtype) == "i":
            if ok:
                wrapped = ew.add_p.bind(strong, to_array(size, fname, 1, index.dtype))
                strong = ew.select_n_p.bind(
                    ew.lt_p.bind(strong, to_array(0, fname, 1, index.dtype)),
                    strong,
                    wrapped,
                )
            elif int(strong) < 0:
                raise ValueError(
                    f"Index {int(strong)} is out of bounds for dimension {size} if "
                    "allow_negative_indices=False"
                )
        out.append(strong)
    return out


def _check_index_dtypes(fname: str, indices: Sequence[ShapedArray]) -> None:
    if len({i.dtype for i in indices}) > 1 or any(
        _dtypes.kind_of(i.dtype) not in _INT_KINDS for i in indices
    ):
        raise TypeError(
            f"index arguments to {fname} must be integers of the same type, got "
            f"{', '.join(i.dtype.name for i in indices)}"
        )


def _clamped_starts(starts: Sequence[NDArray], shape: Shape, sizes: Shape) -> list[int]:
    """Start indices moved into range so the whole window fits, as XLA."""
    return [
        max(0, min(int(s), d - n)) for s, d, n in zip(starts, shape, sizes, strict=True)
    ]


dynamic_slice_p = Primitive("dynamic_slice")
_dynamic_slice_looping = batch_by_looping(dynamic_slice_p, register=False)


# Starts the same for every example: the batch axis is sliced whole, from
# 0. Starts per example: a slice per example (a gather would do it at once).
@dynamic_slice_p.def_batch
def _dynamic_slice_batch(
    args: Sequence[Any], dims: Sequence[int | None], **params: Any
) -> tuple[Any, int]:
    x, *starts = args
    d, *start_dims = dims
    if d is None or any(e is not None for e in start_dims):
        return _dynamic_slice_looping(args, dims, **params)  # type: ignore[no-any-return]
    zero = _start_zero(starts)
    sizes = list(params["slice_sizes"])
    sizes.insert(d, x.shape[d])
    starts.insert(d, zero)
    return dynamic_slice_p.bind(x, *starts, slice_sizes=tuple(sizes)), d


def _start_zero(starts: Sequence[Any]) -> Any:
    """A start of 0 of the starts' dtype (int32 when there is none), weak
    when they all are (a weak result stays weak)."""
    dtype = np.dtype(starts[0].dtype) if starts else np.dtype(np.int32)
    weak = all(s.weak_type for s in starts)
    return full_of_aval(ShapedArray((), dtype, weak), 0)


@dynamic_slice_p.def_abstract_eval
def _dynamic_slice_abstract(
    x: ShapedArray, *starts: ShapedArray, slice_sizes: Shape
) -> ShapedArray:
    _check_index_dtypes("dynamic_slice", starts)
    if len(slice_sizes) != x.ndim:
        raise TypeError(
            f"dynamic_slice slice_sizes must have the same length as the operand "
            f"rank, got slice_sizes {slice_sizes} for operand shape {x.shape}."
        )
    if any(n < 0 for n in slice_sizes):
        raise TypeError(
            f"dynamic_slice slice_sizes must be nonnegative, got {slice_sizes}."
        )
    if any(n > d for n, d in zip(slice_sizes, x.shape, strict=True)):
        raise TypeError(
            f"slice slice_sizes must be less than or equal to operand shape, got "
            f"slice_sizes {slice_sizes} for operand shape {x.shape}."
        )
    return x.update(shape=slice_sizes)


@dynamic_slice_p.def_impl
def _dynamic_slice_impl(x: NDArray, *starts: NDArray, slice_sizes: Shape) -> NDArray:
    begin = _clamped_starts(starts, x.shape, slice_sizes)
    return x[tuple(np.s_[b : b + n] for b, n in zip(begin, slice_sizes, strict=True))]


def _dynamic_slice_jvp(
    primals: Any, tangents: Any, *, slice_sizes: Shape
) -> tuple[Any, Any]:
    x, *starts = primals
    out = dynamic_slice_p.bind(x, *starts, slice_sizes=slice_sizes)
    if type(tangents[0]) is Zero:
        return out, Zero.of(out)
    return out, dynamic_slice_p.bind(tangents[0], *starts, slice_sizes=slice_sizes)


def _dynamic_slice_transpose(
    ct: Any, x: Any, *starts: Any, slice_sizes: Shape
) -> list[Any]:
    # The window written into zeros, at the same (clamped) start.
    if any(is_undefined(s) for s in starts):
        raise ValueError("dynamic_slice is not linear in its start indices")
    written = dynamic_update_slice_p.bind(zeros(x.aval), ct, *starts)
    return [_as_aval(written, x.aval), *(None for _ in starts)]


dynamic_slice_p.def_jvp(_dynamic_slice_jvp)
dynamic_slice_p.def_transpose(_dynamic_slice_transpose)


def dynamic_slice(
    operand: ArrayLike,
    start_indices: Sequence[ArrayLike] | ArrayLike,
    slice_sizes: Sequence[int],
    *,
    allow_negative_indices: bool | Sequence[bool] = True,
) -> Array:
    """The window of ``slice_sizes`` of ``operand`` at ``start_indices``,
    which are values (arrays allowed): a start that would run past the end
    is moved back so the window fits, as in ``jax.lax``.

    Args:
      operand: an array.
      start_indices: one integer scalar per axis (or a 1-d integer array),
        of one integer type; negative ones count from the end unless
        ``allow_negative_indices`` says otherwise.
      slice_sizes: the window's shape.
      allow_negative_indices: for all axes or per axis.

    Returns:
      An array of ``operand``'s dtype and weak flag.

    >>> dynamic_slice(np.arange(6, dtype=np.int8), (-2,), (2,))
    Array([4, 5], dtype=int8)
    >>> dynamic_slice(np.arange(6, dtype=np.int8), (5,), (3,))
    Array([3, 4, 5], dtype=int8)
    """
    x = to_array(operand, "dynamic_slice", 0)
    starts = _start_indices("dynamic_slice", x, start_indices, allow_negative_indices)
    sizes = ints_of("dynamic_slice", "slice_sizes", slice_sizes)
    return dynamic_slice_p.bind(x, *starts, slice_sizes=sizes)  # type: ignore[no-any-return]


def dynamic_slice_in_dim(
    operand: ArrayLike,
    start_index: ArrayLike,
    slice_size: int,
    axis: int = 0,
    *,
    allow_negative_indices: bool = True,
) -> Array:
    """The window of ``slice_size`` entries along ``axis`` at
    ``start_index`` (a value), whole along the other axes: a
    :func:`dynamic_slice` with starts 0 elsewhere, as in ``jax.lax``.

    Args:
      operand: an array.
      start_index: an integer scalar (an array allowed).
      slice_size: the window's length along ``axis``.
      axis: the axis (negative counts from the end).
      allow_negative_indices: a negative start counts from the end.

    Returns:
      An array of ``operand``'s dtype and weak flag.

    Raises:
      ValueError: ``axis`` out of range.

    >>> dynamic_slice_in_dim(np.arange(6, dtype=np.int8).reshape(2, 3), 1, 2, 1)
    Array([[1, 2],
           [4, 5]], dtype=int8)
    """
    x = to_array(operand, "dynamic_slice_in_dim", 0)
    ax = _axis_in_dim("dynamic_slice_in_dim", axis, x.ndim)
    starts: list[ArrayLike] = [0] * x.ndim
    starts[ax] = start_index
    sizes = list(x.shape)
    sizes[ax] = slice_size
    return dynamic_slice(
        x, starts, sizes, allow_negative_indices=allow_negative_indices
    )


def _axis_in_dim(where: str, axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(
            f"{where}: axis {axis} is out of range for an array of {ndim} axes"
        )
    return axis % ndim


dynamic_update_slice_p = Primitive("dynamic_update_slice")
_dynamic_update_slice_looping = batch_by_looping(dynamic_update_slice_p, register=False)


# JAX batches dynamic_update_slice as a scatter, whose result has the
# operand's weak flag (not the starts' too): so does this rule.
@dynamic_update_slice_p.def_batch
def _dynamic_update_slice_batch(
    args: Sequence[Any], dims: Sequence[int | None], **params: Any
) -> tuple[Any, Any]:
    x, update, *starts = args
    d, update_dim, *start_dims = dims
    if any(e is not None for e in start_dims):
        out, out_dim = _dynamic_update_slice_looping(args, dims, **params)
    else:
        size = batch_size(args, dims)
        x = bdim_at_front(x, d, size)
        update = bdim_at_front(update, update_dim, size)
        zero = _start_zero(starts)
        out, out_dim = dynamic_update_slice_p.bind(x, update, zero, *starts), 0
    if x.weak_type and not out.weak_type:
        out = ew.convert_element_type_p.bind(out, new_dtype=out.dtype, weak_type=True)
    return out, out_dim


@dynamic_update_slice_p.def_abstract_eval
def _dynamic_update_slice_abstract(
    x: ShapedArray, update: ShapedArray, *starts: ShapedArray
) -> ShapedArray:
    check_same_dtypes("dynamic_update_slice", (x, update), ("operand", "update"))
    _check_index_dtypes("dynamic_update_slice", starts)
    if update.ndim != x.ndim:
        raise TypeError(
            f"dynamic_update_slice update must have the same rank as operand, got "
            f"update shape {update.shape} for operand shape {x.shape}."
        )
    if any(u > d for u, d in zip(update.shape, x.shape, strict=True)):
        raise TypeError(
            f"dynamic_update_slice update shape must be smaller than operand "
            f"shape, got update shape {update.shape} for operand shape {x.shape}."
        )
    weak = x.weak_type and update.weak_type and all(s.weak_type for s in starts)
    return x.update(weak_type=weak)


@dynamic_update_slice_p.def_impl
def _dynamic_update_slice_impl(
    x: NDArray, update: NDArray, *starts: NDArray
) -> NDArray:
    begin = _clamped_starts(starts, x.shape, update.shape)
    out = x.copy()
    out[tuple(np.s_[b : b + n] for b, n in zip(begin, update.shape, strict=True))] = (
        update
    )
    return out


def _dynamic_update_slice_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    x, update, *starts = primals
    tx, tu = tangents[:2]
    out = dynamic_update_slice_p.bind(x, update, *starts)
    if type(tx) is Zero and type(tu) is Zero:
        return out, Zero.of(out)
    written = dynamic_update_slice_p.bind(instantiate(tx), instantiate(tu), *starts)
    return out, written


def _dynamic_update_slice_transpose(
    ct: Any, x: Any, update: Any, *starts: Any
) -> list[Any]:
    # The operand's cotangent is zero under the update; the update's is the
    # window of the cotangent.
    if any(is_undefined(s) for s in starts):
        raise ValueError("dynamic_update_slice is not linear in its start indices")
    u_aval = aval_of(update)
    out: list[Any] = [None, None, *(None for _ in starts)]
    if is_undefined(x):
        hole = dynamic_update_slice_p.bind(
            ct, zeros(u_aval.update(dtype=ct.dtype)), *starts
        )
        out[0] = _as_aval(hole, x.aval)
    if is_undefined(update):
        window = dynamic_slice_p.bind(ct, *starts, slice_sizes=u_aval.shape)
        out[1] = _as_aval(window, u_aval)
    return out


dynamic_update_slice_p.def_jvp(_dynamic_update_slice_jvp)
dynamic_update_slice_p.def_transpose(_dynamic_update_slice_transpose)


def dynamic_update_slice(
    operand: ArrayLike,
    update: ArrayLike,
    start_indices: Sequence[ArrayLike] | ArrayLike,
    *,
    allow_negative_indices: bool | Sequence[bool] = True,
) -> Array:
    """``operand`` with ``update`` written at ``start_indices`` (moved back
    so the whole update fits, as in ``jax.lax``); ``operand`` is unchanged.

    Args:
      operand: an array.
      update: an array of ``operand``'s dtype and rank, no larger.
      start_indices: as for :func:`dynamic_slice`.
      allow_negative_indices: for all axes or per axis.

    Returns:
      A new array of ``operand``'s dtype (strong: the start indices are).

    >>> dynamic_update_slice(np.zeros(4, np.int8), np.int8([7, 8]), (1,))
    Array([0, 7, 8, 0], dtype=int8)
    """
    x, new = to_arrays("dynamic_update_slice", (operand, update))
    starts = _start_indices(
        "dynamic_update_slice", x, start_indices, allow_negative_indices
    )
    return dynamic_update_slice_p.bind(x, new, *starts)  # type: ignore[no-any-return]
