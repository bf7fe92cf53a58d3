"""Products: matmul, dot, vdot, inner, outer, tensordot, einsum.

Operands are promoted like any binary operation; ``preferred_element_type``
chooses the result (and accumulation) dtype instead. The types NumPy has no
fast product for (float16, bfloat16, float8...) accumulate in float32.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from typelattice import _core, _dtypes
from typelattice._array import ArrayImpl, wrap
from typelattice._basearray import Array
from typelattice._core import Conversion
from typelattice._tracing import abstract
from typelattice._tracing.trace import traced
from typelattice.numpy._elementwise import promote, promotion_op

if TYPE_CHECKING:
    from typelattice.typing import ArrayLike, DTypeLike

_F32: Final = np.dtype("float32")
_UPCAST: Final = frozenset(
    [np.dtype("float16"), np.dtype("bfloat16"), *_dtypes.SMALL_FLOATS.values()]
)


def _product(
    name: str,
    args: tuple[Any, ...],
    fn: Callable[..., Any],
    preferred_element_type: Any,
    min_ndim: int = 0,
) -> Array:
    conv, plan = promote(promotion_op(name), args)
    cd, out_key = plan.cd, plan.out_key
    values = [np.asarray(v, dtype=cd) for v in conv]
    # Operands already of one type (Python scalars defer to it).
    converted = (Conversion.CAST, Conversion.CHECK)
    one_type = all(c.how not in converted for c in plan.convs)
    for i, v in enumerate(values):
        if v.ndim < min_ndim:
            raise ValueError(
                f"{name}: operand {i} must have at least {min_ndim} dimension(s), "
                f"got shape {v.shape}"
            )
    if preferred_element_type is not None:
        from typelattice.numpy._creation import (
            _requested,  # pyright: ignore[reportPrivateUsage]
        )

        out_dt = _requested(preferred_element_type, name)
        _check_preferred(name, cd, out_dt)
        out_key = _core.aval(out_dt, False)
    out_dt = out_key[0]
    from_complex = _dtypes.kind_of(cd) == "c" and _dtypes.kind_of(out_dt) != "c"
    from_float = (
        one_type and _dtypes.kind_of(cd) == "f" and _dtypes.kind_of(out_dt) in "biu"
    )
    if from_complex:
        # As JAX: the complex product, then its real part in the requested
        # type (discarding the imaginary part, which astype warns about).
        compute = np.dtype("complex128") if out_dt.itemsize == 8 else cd
    elif from_float:
        # As JAX: floats of one type give their product, then converted
        # toward zero (a product the type cannot hold raises below, where
        # JAX saturates). Operands of different types are converted to the
        # preferred type first.
        compute = _F32 if cd in _UPCAST else cd
    else:
        compute = _F32 if out_dt in _UPCAST or cd in _UPCAST else out_dt
        # Otherwise the operands are converted to the preferred type first
        # (computing in float32 for the narrow floats): values it cannot
        # hold are refused (see docs/semantics.md, "Data safety").
        for v in values:
            _core.check_fits(v, out_dt, name, use="preferred_element_type")
    # copy=False: operands already in the compute type are used as they are
    # (a copy of each matmul operand costs a tenth of the product).
    values = [_core.ignore_fp_errors(v.astype, compute, copy=False) for v in values]
    try:
        out = _core.ignore_fp_errors(fn, *values)
    except (TypeError, ValueError, IndexError) as err:  # NumPy's: no name
        _core.reraise_named(name, err)
    if any(np.may_share_memory(out, v) for v in values):
        # A view of an operand (einsum('ij->ji', a)): the operands are no
        # longer copied above, so the result must be, to stay immutable.
        out = np.array(out)
    if from_float:
        use = "preferred_element_type"
        return wrap(_core.checked_cast(np.asarray(out), out_dt, name, use=use), out_key)
    if from_complex:
        from typelattice.numpy._creation import (
            _cast,  # pyright: ignore[reportPrivateUsage]
        )

        return wrap(_cast(np.asarray(out), out_dt), out_key)
    return wrap(
        np.asarray(_core.ignore_fp_errors(np.asarray(out).astype, out_dt, copy=False)),
        out_key,
    )


_FAMILY = {"b": "b", "i": "int", "u": "int", "f": "float", "c": "complex"}


def _check_preferred(name: str, cd: np.dtype[Any], out: np.dtype[Any]) -> None:
    """``preferred_element_type`` may widen the result, never narrow it
    (JAX raises too): a narrower type would silently lose values."""
    src, dst = _dtypes.kind_of(cd), _dtypes.kind_of(out)
    narrower = _FAMILY[src] == _FAMILY[dst] and out.itemsize < cd.itemsize
    # A real type from complex operands takes the real part (as JAX), in a
    # type at least as wide as its components.
    if src == "c" and dst != "c":
        narrower = out.itemsize < cd.itemsize // 2
    if narrower:
        raise TypeError(
            f"{name}: preferred_element_type={out} is narrower than the "
            f"operands' type {cd}; ask for {cd} or wider, or cast the operands "
            "explicitly"
        )


@traced(abstract.copying)
def matmul(
    a: ArrayLike, b: ArrayLike, *, preferred_element_type: DTypeLike | None = None
) -> Array:
    """Matrix product with broadcasting of leading axes (``a @ b``).

    Args:
      a: an array of at least one dimension.
      b: the same; promoted with ``a`` as a binary operation promotes.
      preferred_element_type: the dtype to accumulate in and return,
        instead of the promoted one; it may widen, not narrow.

    Returns:
      An Array of the promoted dtype (or ``preferred_element_type``); weak
      when both operands are weak.

    Raises:
      ValueError: a 0-d operand, or shapes that do not match.
      TypePromotionError: operands without a join in the current mode.

    >>> import typelattice.numpy as tnp
    >>> tnp.matmul(tnp.ones((2, 3), 'int8'), tnp.ones(3, 'int8'))
    Array([3, 3], dtype=int8)
    """
    return _product("matmul", (a, b), np.matmul, preferred_element_type, 1)


@traced(abstract.copying)
def dot(
    a: ArrayLike, b: ArrayLike, *, preferred_element_type: DTypeLike | None = None
) -> Array:
    """Dot product (NumPy's ``dot``: scalars multiply, the last axis of ``a``
    with the second-to-last of ``b`` otherwise).

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      b: the same; promoted with ``a`` as a binary operation promotes.
      preferred_element_type: the dtype to accumulate in and return,
        instead of the promoted one; it may widen, not narrow.

    Returns:
      An Array of the promoted dtype (or ``preferred_element_type``); weak
      when both operands are weak.

    Raises:
      TypePromotionError: operands without a join in the current mode.

    >>> import typelattice.numpy as tnp
    >>> a, b = tnp.asarray([1, 2], dtype='int8'), tnp.asarray([3, 4], dtype='int8')
    >>> tnp.dot(a, b), tnp.dot(a, b, preferred_element_type='int32')
    (Array(11, dtype=int8), Array(11, dtype=int32))
    """
    return _product("dot", (a, b), np.dot, preferred_element_type)


@traced(abstract.vdot)
def vdot(
    a: ArrayLike, b: ArrayLike, *, preferred_element_type: DTypeLike | None = None
) -> Array:
    """Dot product of the flattened arrays, conjugating ``a``.

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      b: the same; promoted with ``a`` as a binary operation promotes.
      preferred_element_type: the dtype to accumulate in and return,
        instead of the promoted one; it may widen, not narrow.

    Returns:
      An Array of the promoted dtype (or ``preferred_element_type``); weak
      when both operands are weak.

    Raises:
      TypeError: operands with different numbers of elements.
      TypePromotionError: operands without a join in the current mode.

    >>> import typelattice.numpy as tnp
    >>> tnp.vdot(tnp.asarray([1j, 2]), tnp.asarray([1j, 1]))
    Array(3.+0.j, dtype=complex64)
    """
    if np.size(a) != np.size(b):
        raise TypeError(
            f"vdot: the operands have {np.size(a)} and {np.size(b)} elements; "
            "vdot needs the same number in both"
        )
    return _product("vdot", (a, b), np.vdot, preferred_element_type)


@traced(abstract.copying)
def inner(
    a: ArrayLike, b: ArrayLike, *, preferred_element_type: DTypeLike | None = None
) -> Array:
    """Sum of products over the last axes.

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      b: the same; promoted with ``a`` as a binary operation promotes.
      preferred_element_type: the dtype to accumulate in and return,
        instead of the promoted one; it may widen, not narrow.

    Returns:
      An Array of the promoted dtype (or ``preferred_element_type``); weak
      when both operands are weak.

    Raises:
      TypePromotionError: operands without a join in the current mode.

    >>> import typelattice.numpy as tnp
    >>> tnp.inner(tnp.asarray([1, 2], dtype='int8'), tnp.asarray([3, 4], dtype='uint8'))
    Array(11, dtype=int16)
    """
    return _product("inner", (a, b), np.inner, preferred_element_type)


@traced(abstract.outer)
def outer(a: ArrayLike, b: ArrayLike, out: None = None) -> Array:
    """Outer product of the flattened arrays.

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      b: the same; promoted with ``a`` as a binary operation promotes.
      out: not supported (arrays are immutable); must be None.

    Returns:
      A 2-d Array of the promoted dtype, ``(a.size, b.size)``.

    Raises:
      TypePromotionError: operands without a join in the current mode.

    >>> import typelattice.numpy as tnp
    >>> tnp.outer(tnp.asarray([1, 2], dtype='int8'), tnp.asarray([1.0, 2.0]))
    Array([[1., 2.],
           [2., 4.]], dtype=float32)
    """
    return _product("outer", (a, b), np.outer, None)


@traced(abstract.copying)
def tensordot(
    a: ArrayLike,
    b: ArrayLike,
    axes: Any = 2,
    *,
    preferred_element_type: DTypeLike | None = None,
) -> Array:
    """Sum of products over the given axes.

    Args:
      a: an Array, a NumPy array or a scalar (not a list).
      b: the same; promoted with ``a`` as a binary operation promotes.
      axes: an int ``n`` (the last ``n`` axes of ``a`` with the first ``n``
        of ``b``) or a pair of axis sequences.
      preferred_element_type: the dtype to accumulate in and return,
        instead of the promoted one; it may widen, not narrow.

    Returns:
      An Array of the promoted dtype (or ``preferred_element_type``); weak
      when both operands are weak.

    Raises:
      TypePromotionError: operands without a join in the current mode.

    >>> import typelattice.numpy as tnp
    >>> tnp.tensordot(tnp.ones((2, 3), 'int8'), tnp.ones((3, 2), 'int8'), axes=1)
    Array([[3, 3],
           [3, 3]], dtype=int8)
    """
    if isinstance(axes, ArrayImpl):
        axes = axes.tolist()
    return _product(
        "tensordot",
        (a, b),
        lambda x, y: np.tensordot(x, y, axes=axes),  # pyright: ignore[reportUnknownArgumentType, reportUnknownLambdaType]
        preferred_element_type,
    )


@traced(abstract.copying)
def einsum(
    subscripts: str,
    /,
    *operands: Any,
    out: None = None,
    optimize: Any = "auto",
    precision: Any = None,
    preferred_element_type: DTypeLike | None = None,
) -> Array:
    """Einstein summation over the operands, promoted together.

    Args:
      subscripts: the subscripts, e.g. ``'ij,jk->ik'``.
      *operands: Arrays, NumPy arrays or scalars, one per subscript term.
      out: not supported (arrays are immutable); must be None.
      optimize: NumPy's contraction-order option (``'auto'``: none).
      precision: accepted for jax.numpy compatibility; ignored.
      preferred_element_type: the dtype to accumulate in and return,
        instead of the promoted one; it may widen, not narrow.

    Returns:
      An Array of the operands' promoted dtype (or
      ``preferred_element_type``).

    Raises:
      TypePromotionError: operands without a join in the current mode.

    >>> import typelattice.numpy as tnp
    >>> tnp.einsum('i,i->', tnp.arange(3), tnp.arange(3))
    Array(5, dtype=int32)
    """
    if not isinstance(subscripts, str):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise TypeError("einsum: the first argument must be a subscripts string")
    opt = False if optimize == "auto" else optimize
    return _product(
        "einsum",
        operands,
        lambda *vs: np.einsum(subscripts, *vs, optimize=opt),
        preferred_element_type,
    )
