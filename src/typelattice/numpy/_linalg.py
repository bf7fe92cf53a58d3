"""Products: matmul, dot, vdot, inner, outer, tensordot, einsum.

Operands are promoted like any binary operation; ``preferred_element_type``
chooses the result (and accumulation) dtype instead. The types NumPy has no
fast product for (float16, bfloat16, float8...) accumulate in float32.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from typelattice import _core, _dtypes
from typelattice import _lax as lax
from typelattice._array import ArrayImpl, wrap
from typelattice._array import wrap as wrap_array
from typelattice._basearray import Array
from typelattice._core import Conversion
from typelattice._lax._indexing import take_along_axis
from typelattice._tracing import abstract
from typelattice._tracing.trace import lowering, traced
from typelattice.numpy import _lower
from typelattice.numpy._creation import _cast, _requested  # pyright: ignore[reportPrivateUsage]
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


# -- lowerings (for differentiation) --------------------------------------------
# Every product is an Einstein summation: the operands are converted to the
# result's dtype, then contracted pairwise with lax.dot_general.

_LETTERS: Final = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _contract(terms: list[str], output: str, arrays: list[Any]) -> Any:
    """``einsum('terms->output', *arrays)`` with primitives (arrays of one
    dtype; no label repeated within a term)."""

    terms = list(terms)
    arrays = list(arrays)
    for i, term in enumerate(terms):
        if len(set(term)) != len(term):
            terms[i], arrays[i] = _diagonal(term, arrays[i])
    sizes: dict[str, int] = {}
    for term, x in zip(terms, arrays, strict=True):
        for label, n in zip(term, x.shape, strict=True):
            sizes[label] = n if n != 1 else sizes.get(label, 1)
    pending = [
        (term, _broadcast_labels(x, term, sizes))
        for term, x in zip(terms, arrays, strict=True)
    ]

    def needed_after(k: int) -> set[str]:
        return set(output).union(*(t for t, _ in pending[k + 1 :]))

    labels, acc = _sum_unneeded(
        *pending[0], needed_after(0) | set().union(*(t for t, _ in pending[1:2]))
    )
    for k in range(1, len(pending)):
        term, y = pending[k]
        keep = needed_after(k)
        labels, acc = _sum_unneeded(labels, acc, keep | set(term))
        term, y = _sum_unneeded(term, y, keep | set(labels))
        batch = [lab for lab in labels if lab in term and lab in keep]
        summed = [lab for lab in labels if lab in term and lab not in keep]
        dims = (
            (
                tuple(labels.index(c) for c in summed),
                tuple(term.index(c) for c in summed),
            ),
            (
                tuple(labels.index(b) for b in batch),
                tuple(term.index(b) for b in batch),
            ),
        )
        acc = lax.dot_general(acc, y, dims)
        free_x = [lab for lab in labels if lab not in batch and lab not in summed]
        free_y = [lab for lab in term if lab not in batch and lab not in summed]
        labels = "".join(batch + free_x + free_y)
    labels, acc = _sum_unneeded(labels, acc, set(output))
    if labels != output:
        acc = lax.transpose(acc, tuple(labels.index(c) for c in output))
    return acc


def _diagonal(term: str, x: Any) -> tuple[str, Any]:
    """A term with repeated labels (``'ii'``) reduced to each label once,
    ``x`` to the elements where their indices agree: a gather of the
    elements ``np.einsum`` picks from an array of element numbers."""

    kept = "".join(dict.fromkeys(term))
    size = int(math.prod(x.shape))
    shape: tuple[int, ...] = tuple(x.shape)
    numbers = np.arange(size, dtype=np.int64).reshape(shape)
    picked: np.ndarray[Any, Any] = np.einsum(f"{term}->{kept}", numbers)
    index = wrap_array(
        picked.ravel().astype(np.int32), _core.aval(np.dtype(np.int32), False)
    )
    flat = take_along_axis(lax.reshape(x, (size,)), index, 0)
    return kept, lax.reshape(flat, picked.shape)


def _broadcast_labels(x: Any, term: str, sizes: dict[str, int]) -> Any:
    """``x`` with its axes of size 1 broadcast to their labels' sizes."""

    shape = tuple(sizes[lab] for lab in term)
    if shape == tuple(x.shape):
        return x
    return lax.broadcast_in_dim(x, shape, tuple(range(len(term))))


def _sum_unneeded(term: str, x: Any, keep: set[str]) -> tuple[str, Any]:
    drop = tuple(i for i, lab in enumerate(term) if lab not in keep)
    if not drop:
        return term, x
    kept = "".join(c for c in term if c in keep)
    return kept, lax.reduce_sum(x, drop)


def _parse(subscripts: str, shapes: list[tuple[int, ...]]) -> tuple[list[str], str]:
    """Explicit terms and output of an einsum (ellipses given letters)."""
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    used = set(spec) - set(".,->")
    spare = [c for c in _LETTERS if c not in used]
    most = max(
        (
            len(s) - len(t.replace("...", ""))
            for t, s in zip(terms, shapes, strict=True)
            if "..." in t
        ),
        default=0,
    )
    ellipsis = "".join(spare[:most])
    expanded: list[str] = []
    for t, s in zip(terms, shapes, strict=True):
        if "..." in t:
            n = len(s) - len(t.replace("...", ""))
            t = t.replace("...", ellipsis[most - n :])
        expanded.append(t)
    if not arrow:
        counts: dict[str, int] = {}
        for t in expanded:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        output = ellipsis + "".join(
            sorted(c for c, n in counts.items() if n == 1 and c not in ellipsis)
        )
    else:
        output = output.replace("...", ellipsis)
    return expanded, output


def _einsum_lower(
    subscripts: str,
    /,
    *operands: Any,
    out: None = None,
    optimize: Any = "auto",
    precision: Any = None,
    preferred_element_type: DTypeLike | None = None,
) -> Any:
    result = _lower.expected(
        einsum, subscripts, *operands, preferred_element_type=preferred_element_type
    )
    arrays = [_lower.like(x, result) for x in operands]
    terms, output = _parse(subscripts, [tuple(x.shape) for x in arrays])
    return _lower.finish(_contract(terms, output, arrays), result)


def _product_lower(
    function: Any, spec: Callable[[int, int], str]
) -> Callable[..., Any]:
    """The lowering of a product of two arrays whose einsum subscripts
    depend on their ranks."""

    def lower(
        a: Any, b: Any, *, preferred_element_type: DTypeLike | None = None
    ) -> Any:
        result = _lower.expected(
            function, a, b, preferred_element_type=preferred_element_type
        )
        x, y = _lower.like(a, result), _lower.like(b, result)
        terms, output = _parse(spec(x.ndim, y.ndim), [tuple(x.shape), tuple(y.shape)])
        return _lower.finish(_contract(terms, output, [x, y]), result)

    return lower


def _matmul_spec(na: int, nb: int) -> str:
    if na == 1 and nb == 1:
        return "k,k->"
    if na == 1:
        return "k,...kj->...j"
    if nb == 1:
        return "...ik,k->...i"
    return "...ik,...kj->...ij"


def _dot_spec(na: int, nb: int) -> str:
    if na == 0 or nb == 0:
        a, b = _LETTERS[:na], _LETTERS[na : na + nb]
        return f"{a},{b}->{a}{b}"
    a = _LETTERS[: na - 1]
    if nb == 1:
        return f"{a}Z,Z->{a}"
    b = _LETTERS[na : na + nb - 2]
    return f"{a}Z,{b}ZY->{a}{b}Y"


def _inner_spec(na: int, nb: int) -> str:
    if na == 0 or nb == 0:
        return _dot_spec(na, nb)
    a, b = _LETTERS[: na - 1], _LETTERS[na : na + nb - 1]
    return f"{a}Z,{b}Z->{a}{b}"


def _vdot_lower(
    a: Any, b: Any, *, preferred_element_type: DTypeLike | None = None
) -> Any:
    result = _lower.expected(vdot, a, b, preferred_element_type=preferred_element_type)
    x, y = _lower.like(a, result), _lower.like(b, result)
    x = lax.reshape(x, (x.size,))
    y = lax.reshape(y, (y.size,))
    if _dtypes.kind_of(x.dtype) == "c":
        x = lax.conj(x)
    return _lower.finish(_contract(["k", "k"], "", [x, y]), result)


def _outer_lower(a: Any, b: Any, out: None = None) -> Any:
    result = _lower.expected(outer, a, b)
    x, y = _lower.like(a, result), _lower.like(b, result)
    x = lax.reshape(x, (x.size,))
    y = lax.reshape(y, (y.size,))
    return _lower.finish(_contract(["i", "j"], "ij", [x, y]), result)


def _tensordot_lower(
    a: Any,
    b: Any,
    axes: Any = 2,
    precision: Any = None,
    preferred_element_type: DTypeLike | None = None,
) -> Any:
    result = _lower.expected(
        tensordot, a, b, axes, preferred_element_type=preferred_element_type
    )
    x, y = _lower.like(a, result), _lower.like(b, result)
    if isinstance(axes, int):
        ax = list(range(x.ndim - axes, x.ndim))
        bx = list(range(axes))
    else:
        ax, bx = axes
        ax = [ax] if isinstance(ax, int) else list(ax)
        bx = [bx] if isinstance(bx, int) else list(bx)
    ax = [i % x.ndim for i in ax]
    bx = [i % y.ndim for i in bx]
    ta = list(_LETTERS[: x.ndim])
    tb = list(_LETTERS[x.ndim : x.ndim + y.ndim])
    for i, j in zip(ax, bx, strict=True):
        tb[j] = ta[i]
    output = [c for i, c in enumerate(ta) if i not in ax] + [
        c for j, c in enumerate(tb) if j not in bx
    ]
    return _lower.finish(
        _contract(["".join(ta), "".join(tb)], "".join(output), [x, y]), result
    )


lowering(matmul)(_product_lower(matmul, _matmul_spec))
lowering(dot)(_product_lower(dot, _dot_spec))
lowering(inner)(_product_lower(inner, _inner_spec))
lowering(vdot)(_vdot_lower)
lowering(outer)(_outer_lower)
lowering(tensordot)(_tensordot_lower)
lowering(einsum)(_einsum_lower)
