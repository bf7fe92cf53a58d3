"""``dot_general``: contractions with batch dimensions.

The one primitive of ``jax.lax`` that takes operands of different dtypes:
as XLA, the result is the operand type of higher precision (complex over
real; then the larger exponent range, the longer mantissa, the wider
integer, signed over unsigned), not a promotion on the lattice: int8 with
float32 gives float32, uint8 with int8 gives int8. ``preferred_element_type``
then asks for a result type, which for integers must not be narrower.

``dot_general`` is linear in each operand. The transpose for one operand
contracts the cotangent with the other operand (never conjugated) and
converts the result to the operand's dtype and weak flag: a bfloat16
operand of a float32 product gets a bfloat16 cotangent, a real operand of a
complex product the real part.
"""

# Package-internal: the arrays' underscored slots are read by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from typelattice import _dtypes
from typelattice._lax import _elementwise as ew
from typelattice._lax import _structural as st
from typelattice._lax._primitive import (
    Primitive,
    ShapedArray,
    UndefinedPrimal,
    defbilinear,
    ints_of,
    moveaxis,
    to_array,
)
from typelattice._tracing.jaxpr import def_pp_params

if TYPE_CHECKING:
    from typelattice._basearray import Array
    from typelattice.typing import ArrayLike, DTypeLike

__all__ = ["dot_general"]

NDArray = np.ndarray[Any, Any]
DType = np.dtype[Any]
Shape = tuple[int, ...]
DimensionNumbers = tuple[tuple[Shape, Shape], tuple[Shape, Shape]]
_F32: Final = np.dtype(np.float32)


def _bits(dt: DType) -> int:
    kind = _dtypes.kind_of(dt)
    if kind == "b":
        return 1
    if kind in "iu":
        return int(_dtypes.iinfo(dt).bits)
    return int(_dtypes.finfo(dt).bits)  # of the real part for complex types


def _precision(dt: DType) -> tuple[bool, int, int, int, bool]:
    """The order XLA ranks operand types by (``HigherPrecisionType``)."""
    kind = _dtypes.kind_of(dt)
    real = ew._real_dtype(dt)
    floating = kind in "fc"
    info = _dtypes.finfo(real) if floating else None
    return (
        kind == "c",
        int(info.maxexp) if info is not None else -1,
        int(info.nmant) if info is not None else -1,
        _bits(dt),
        kind != "u",
    )


@functools.cache
def result_dtype(lhs: DType, rhs: DType, preferred: DType | None) -> DType:
    """The dtype of ``dot_general`` of operands of these dtypes."""
    left, right = _precision(lhs), _precision(rhs)
    if left == right and lhs != rhs:
        raise TypeError(
            f"lax.dot_general argument type error: {lhs.name}, {rhs.name}. "
            "Convert one with lax.convert_element_type."
        )
    out = lhs if left >= right else rhs
    if preferred is None or preferred == out:
        return out
    if _dtypes.kind_of(out) != "f" and _bits(preferred) < _bits(out):
        raise TypeError(
            "`preferred_element_type` must not be narrower than the original "
            f"type, got preferred_element_type of {preferred.name} for result "
            f"type of {out.name}."
        )
    return preferred


def _check_dims(side: str, aval: ShapedArray, batch: Shape, contracting: Shape) -> None:
    dims = (*batch, *contracting)
    if any(not 0 <= d < aval.ndim for d in dims):
        raise TypeError(
            f"dot_general requires {side} dimension numbers to be nonnegative "
            f"and less than the number of axes of the {side} value, got "
            f"{side}_batch of {batch} and {side}_contracting of {contracting} "
            f"for {side} of rank {aval.ndim}"
        )
    if len(set(dims)) != len(dims):
        raise TypeError(
            f"dot_general requires {side} batch and contracting dimensions to be "
            f"distinct, got {side}_batch {batch} and {side}_contracting "
            f"{contracting}."
        )


dot_general_p = Primitive("dot_general")


def _up(axes: Sequence[int], d: int) -> Shape:
    """Axes of one example renumbered around a batch axis at ``d``."""
    return tuple(a + (a >= d) for a in axes)


# Both operands batched: the batch axes are one more batch dimension, first
# in the result. One operand batched: its batch axis is one of its free
# axes, whose place in the result (batch axes, then the free axes of lhs,
# then those of rhs, each in order) is the result's batch axis.
@dot_general_p.def_batch
def _dot_general_batch(
    args: Sequence[Any], dims: Sequence[int | None], **params: Any
) -> tuple[Any, Any]:
    (lhs, rhs), (ld, rd) = args, dims
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    if ld is not None and rd is not None:
        lhs, rhs = moveaxis(lhs, ld, 0), moveaxis(rhs, rd, 0)
        dn = ((_up(lc, 0), _up(rc, 0)), ((0, *_up(lb, 0)), (0, *_up(rb, 0))))
        out_dim = 0
    elif ld is not None:
        lc, lb = _up(lc, ld), _up(lb, ld)
        free = [a for a in range(len(lhs.shape)) if a not in lc and a not in lb]
        out_dim = len(lb) + free.index(ld)
        dn = ((lc, rc), (lb, rb))
    else:
        assert rd is not None
        rc, rb = _up(rc, rd), _up(rb, rd)
        free = [a for a in range(len(rhs.shape)) if a not in rc and a not in rb]
        lhs_free = len(lhs.shape) - len(lc) - len(lb)
        out_dim = len(lb) + lhs_free + free.index(rd)
        dn = ((lc, rc), (lb, rb))
    out = dot_general_p.bind(lhs, rhs, **{**params, "dimension_numbers": dn})
    return out, out_dim


@def_pp_params(dot_general_p)
def _dot_general_pp(params: dict[str, Any], outs: Any) -> dict[str, Any]:
    # As JAX shows it: no None parameters, the dimension numbers as lists.
    shown = {k: v for k, v in params.items() if v is not None}
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    shown["dimension_numbers"] = ((list(lc), list(rc)), (list(lb), list(rb)))
    return shown


@dot_general_p.def_abstract_eval
def _dot_general_abstract(
    lhs: ShapedArray,
    rhs: ShapedArray,
    *,
    dimension_numbers: DimensionNumbers,
    preferred_element_type: DType | None,
) -> ShapedArray:
    (lc, rc), (lb, rb) = dimension_numbers
    if len(lb) != len(rb):
        raise TypeError(
            f"dot_general requires equal numbers of lhs_batch and rhs_batch "
            f"dimensions, got lhs_batch {lb} and rhs_batch {rb}."
        )
    if len(lc) != len(rc):
        raise TypeError(
            f"dot_general requires equal numbers of lhs and rhs contracting "
            f"dimensions, got {lc} and {rc}."
        )
    _check_dims("lhs", lhs, lb, lc)
    _check_dims("rhs", rhs, rb, rc)
    for what, ldims, rdims in (("batch", lb, rb), ("contracting", lc, rc)):
        lsizes = tuple(lhs.shape[d] for d in ldims)
        rsizes = tuple(rhs.shape[d] for d in rdims)
        if lsizes != rsizes:
            raise TypeError(
                f"dot_general requires {what} dimensions to have the same shape, "
                f"got {lsizes} and {rsizes}."
            )
    free_l = tuple(d for i, d in enumerate(lhs.shape) if i not in (*lb, *lc))
    free_r = tuple(d for i, d in enumerate(rhs.shape) if i not in (*rb, *rc))
    shape = (*(lhs.shape[d] for d in lb), *free_l, *free_r)
    dt = result_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    return ShapedArray(shape, dt, lhs.weak_type and rhs.weak_type)


@functools.cache
def _compute_dtype(operand_dtype: DType, out: DType) -> DType:
    """The dtype to multiply in: the result's, unless it is of a lower kind
    than the operands' (complex to real, float to int), then the operands'.
    Narrow floats multiply in float32 (as XLA)."""
    level = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}
    if level[_dtypes.kind_of(out)] < level[_dtypes.kind_of(operand_dtype)]:
        out = operand_dtype
    if _dtypes.kind_of(out) == "f" and out.itemsize < 4:
        return _F32
    return out


@dot_general_p.def_impl
def _dot_general_impl(
    lhs: NDArray,
    rhs: NDArray,
    *,
    dimension_numbers: DimensionNumbers,
    preferred_element_type: DType | None,
) -> NDArray:
    (lc, rc), (lb, rb) = dimension_numbers
    out_dt = result_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    common = result_dtype(lhs.dtype, rhs.dtype, None)
    compute = _compute_dtype(common, out_dt)
    free_l = [i for i in range(lhs.ndim) if i not in (*lb, *lc)]
    free_r = [i for i in range(rhs.ndim) if i not in (*rb, *rc)]
    # (batch, free, contracting) @ (batch, contracting, free), as 3-d stacks.
    a = np.transpose(lhs.astype(compute, copy=False), (*lb, *free_l, *lc))
    b = np.transpose(rhs.astype(compute, copy=False), (*rb, *rc, *free_r))
    nb = math.prod(lhs.shape[d] for d in lb)
    nk = math.prod(lhs.shape[d] for d in lc)
    nl = math.prod(lhs.shape[d] for d in free_l)
    nr = math.prod(rhs.shape[d] for d in free_r)
    if lb:
        product = np.matmul(a.reshape(nb, nl, nk), b.reshape(nb, nk, nr))
    else:  # 2-d: a transposed matrix stays a view, which BLAS takes as is
        product = np.matmul(a.reshape(nl, nk), b.reshape(nk, nr))
    shape = (
        *(lhs.shape[d] for d in lb),
        *(lhs.shape[d] for d in free_l),
        *(rhs.shape[d] for d in free_r),
    )
    product = product.reshape(shape)
    if product.dtype.kind == "c" and _dtypes.kind_of(out_dt) != "c":
        product = product.real
    if _dtypes.kind_of(product.dtype) == "f" and _dtypes.kind_of(out_dt) in "iu":
        info = _dtypes.iinfo(out_dt)
        product = np.clip(np.nan_to_num(product, nan=0.0), int(info.min), int(info.max))
    return _as_dtype(product, out_dt)


def _as_dtype(value: Any, dt: DType) -> NDArray:
    out: NDArray = np.asarray(value).astype(dt)
    return out


def _dot_transpose(
    ct: Any,
    x: UndefinedPrimal,
    y: Any,
    x_dims: tuple[Shape, Shape],
    y_dims: tuple[Shape, Shape],
    x_is_lhs: bool,
) -> Any:
    """The cotangent of the operand ``x`` of a dot_general with ``y``, whose
    (contracting, batch) axes are ``x_dims`` and ``y_dims``."""
    (xc, xb), (yc, yb) = x_dims, y_dims
    x_free = [d for d in range(x.aval.ndim) if d not in (*xc, *xb)]
    y_free = [d for d in range(y.ndim) if d not in (*yc, *yb)]
    nb = len(xb)
    # The result's axes: batch, then lhs's free axes, then rhs's.
    first = nb + (0 if x_is_lhs else len(y_free))
    ct_x = tuple(range(first, first + len(x_free)))
    ct_y = tuple(i for i in range(nb, ct.ndim) if i not in ct_x)
    # Contract ct's y axes with y's free axes: (batch, x_free, y's
    # contracting axes in increasing order).
    numbers = ((ct_y, tuple(y_free)), (tuple(range(nb)), yb))
    back = dot_general_p.bind(
        ct, y, dimension_numbers=numbers, preferred_element_type=None
    )
    position = {d: i for i, d in enumerate(xb)}
    position.update({d: nb + i for i, d in enumerate(x_free)})
    for i, d in enumerate(sorted(yc)):
        position[xc[yc.index(d)]] = nb + len(x_free) + i
    order = tuple(position[d] for d in range(x.aval.ndim))
    back = st.transpose_p.bind(back, permutation=order)
    return ew._cast(back, x.aval.dtype, x.aval.weak_type)


def _dot_lhs(
    ct: Any,
    x: UndefinedPrimal,
    y: Any,
    *,
    dimension_numbers: Any,
    preferred_element_type: Any,
) -> Any:
    (xc, yc), (xb, yb) = dimension_numbers
    return _dot_transpose(ct, x, y, (xc, xb), (yc, yb), True)


def _dot_rhs(
    ct: Any,
    x: Any,
    y: UndefinedPrimal,
    *,
    dimension_numbers: Any,
    preferred_element_type: Any,
) -> Any:
    (xc, yc), (xb, yb) = dimension_numbers
    return _dot_transpose(ct, y, x, (yc, yb), (xc, xb), False)


defbilinear(dot_general_p, _dot_lhs, _dot_rhs)


def dot_general(
    lhs: ArrayLike,
    rhs: ArrayLike,
    dimension_numbers: Any,
    precision: Any = None,
    preferred_element_type: DTypeLike | None = None,
) -> Array:
    """A general contraction: sum of products over the contracting axes,
    one product per index of the batch axes.

    Args:
      lhs, rhs: arrays (their dtypes may differ: see the module's notes; a
        Python scalar has the default dtype of its kind, weak).
      dimension_numbers: ``((lhs_contracting, rhs_contracting), (lhs_batch,
        rhs_batch))``, sequences of axes.
      precision: accepted for compatibility; NumPy computes at full
        precision.
      preferred_element_type: the result's dtype (for integers, not
        narrower than the operands').

    Returns:
      An array of shape ``(*batch, *lhs_free, *rhs_free)``, weak when both
      operands are.

    >>> x = np.int8([[1, 2], [3, 4]])
    >>> dot_general(x, x, (((1,), (0,)), ((), ())))
    Array([[ 7, 10],
           [15, 22]], dtype=int8)
    >>> dot_general(x, x, (((1,), (1,)), ((0,), (0,))), preferred_element_type='int32')
    Array([ 5, 25], dtype=int32)
    """
    try:
        (lc, rc), (lb, rb) = dimension_numbers
    except (TypeError, ValueError):
        raise TypeError(
            "lax.dot_general: dimension_numbers must be ((lhs_contracting, "
            "rhs_contracting), (lhs_batch, rhs_batch)), got "
            f"{dimension_numbers!r}"
        ) from None
    numbers = (
        (
            ints_of("dot_general", "lhs_contracting", lc),
            ints_of("dot_general", "rhs_contracting", rc),
        ),
        (
            ints_of("dot_general", "lhs_batch", lb),
            ints_of("dot_general", "rhs_batch", rb),
        ),
    )
    preferred = (
        None
        if preferred_element_type is None
        else ew._new_dtype("dot_general", preferred_element_type)
    )
    # The operands' dtypes may differ here: a Python scalar has the default
    # dtype of its kind, as in jax.lax, rather than the other operand's.
    x, y = to_array(lhs, "dot_general", 0), to_array(rhs, "dot_general", 1)
    return dot_general_p.bind(  # type: ignore[no-any-return]
        x, y, dimension_numbers=numbers, preferred_element_type=preferred
    )


# Programs (jit) multiply matrices of one builtin inexact dtype with one
# matmul on views: the operands transposed as the contraction needs.
def _matmul_tn(a: NDArray, b: NDArray) -> Any:
    return np.matmul(a.T, b)


def _matmul_nt(a: NDArray, b: NDArray) -> Any:
    return np.matmul(a, b.T)


def _matmul_tt(a: NDArray, b: NDArray) -> Any:
    return np.matmul(a.T, b.T)


_MATMULS: Final[dict[tuple[int, int], Any]] = {
    (1, 0): np.matmul,
    (0, 0): _matmul_tn,
    (1, 1): _matmul_nt,
    (0, 1): _matmul_tt,
}
_PLAIN_DTYPES: Final = frozenset(
    np.dtype(t) for t in ("float32", "float64", "complex64", "complex128")
)


@dot_general_p.def_fast
def _dot_general_fast(
    lhs: ShapedArray,
    rhs: ShapedArray,
    *,
    dimension_numbers: DimensionNumbers,
    preferred_element_type: DType | None,
) -> Any:
    (lc, rc), (lb, _) = dimension_numbers
    if lb or len(lc) != 1:
        return None
    if lhs.dtype != rhs.dtype or lhs.dtype not in _PLAIN_DTYPES:
        return None
    # (Not `not in (None, lhs.dtype)`: NumPy reads None as float64, so a
    # preferred float64 would compare equal to None.)
    if preferred_element_type is not None and preferred_element_type != lhs.dtype:
        return None
    if lhs.ndim + rhs.ndim == 3:
        # A matrix times a vector (the step of a recurrent cell), either
        # way round, contracted as matmul contracts: one matmul call, which
        # takes a 1-d operand as the matrix of one column (or row) that the
        # implementation builds by reshaping: the same product.
        if (lhs.ndim, lc[0], rc[0]) in ((2, 1, 0), (1, 0, 0)):
            return np.matmul
        return None
    if lhs.ndim != 2 or rhs.ndim != 2:
        return None
    return _MATMULS[(lc[0], rc[0])]
