"""Products: matmul, dot, vdot, inner, outer, tensordot, einsum.

Operands are promoted like any binary operation; ``preferred_element_type``
chooses the result (and accumulation) dtype instead. The types NumPy has no
fast product for (float16, bfloat16, float8...) accumulate in float32.
"""

from __future__ import annotations

import builtins
import functools
import math
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from typelattice import _core, _dtypes
from typelattice import _lax as lax
from typelattice._array import ArrayImpl
from typelattice._array import wrap as wrap_array
from typelattice._basearray import Array
from typelattice._core import Conversion, Plan
from typelattice._lax._dot import dot_general_p
from typelattice._lax._elementwise import Check, convert_element_type_p
from typelattice._lax._indexing import take_along_axis
from typelattice._lax._primitive import broadcast_in_dim_p, reduce_sum_p
from typelattice._lax._structural import transpose_p
from typelattice.numpy._creation import _requested  # pyright: ignore[reportPrivateUsage]
from typelattice.numpy._elementwise import promoted
from typelattice.numpy._reductions import accumulation_dtype

if TYPE_CHECKING:
    from typelattice.typing import ArrayLike, DTypeLike

_F32: Final = np.dtype("float32")
_C128: Final = np.dtype("complex128")
_UPCAST: Final = frozenset(
    [np.dtype("float16"), np.dtype("bfloat16"), *_dtypes.SMALL_FLOATS.values()]
)
_STRONG_CONVERSIONS: Final = (Conversion.CAST, Conversion.CHECK)


def _promoted(name: str, args: tuple[Any, ...]) -> tuple[list[Any], Plan]:
    """The operands in the promoted dtype (strong), and the promotion plan:
    as a binary operation promotes, the values checked where the plan's
    conversion could change them (see docs/semantics.md, "Data safety")."""
    return promoted(name, args, keep_weak=False)


def _to(x: Any, dt: np.dtype[Any], check: Check | None = None) -> Any:
    """``x`` in ``dt``, strong (values checked by ``check``)."""
    if x.dtype == dt and not x.weak_type:
        return x
    return convert_element_type_p.bind(x, new_dtype=dt, weak_type=False, check=check)


def _requested_to(x: Any, dt: np.dtype[Any], name: str) -> Any:
    """An operand converted to a ``preferred_element_type``: its values must
    fit (a conversion that holds every value is not checked)."""
    if x.dtype == dt or np.can_cast(x.dtype, dt, "safe"):
        return _to(x, dt)
    return _to(x, dt, Check("preferred_element_type", name, 0))


def _product(
    name: str,
    args: tuple[Any, ...],
    contract: Callable[..., Any],
    preferred_element_type: Any,
    min_ndim: int = 0,
) -> Array:
    """A product: the operands promoted, the dtype plan (``preferred_element_type``
    and the narrow floats), then ``contract`` on the converted operands."""
    values, plan = _promoted(name, args)
    cd, out_key = plan.cd, plan.out_key
    # Operands already of one type (Python scalars defer to it).
    one_type = all(c.how not in _STRONG_CONVERSIONS for c in plan.convs)
    for i, v in enumerate(values):
        if v.ndim < min_ndim:
            raise ValueError(
                f"{name}: operand {i} must have at least {min_ndim} dimension(s), "
                f"got shape {tuple(v.shape)}"
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
        compute = _C128 if out_dt.itemsize == 8 else cd
        values = [_to(v, compute) for v in values]
    elif from_float:
        # As JAX: floats of one type give their product, then converted
        # toward zero (a product the type cannot hold raises below, where
        # JAX saturates). Operands of different types are converted to the
        # preferred type first.
        compute = accumulation_dtype(cd)
        values = [_to(v, compute) for v in values]
    else:
        # Otherwise the operands are converted to the preferred type first
        # (computing in float32 for the narrow floats): values it cannot
        # hold are refused (see docs/semantics.md, "Data safety").
        compute = accumulation_dtype(out_dt if cd not in _UPCAST else cd)
        if out_dt != cd:
            values = [_requested_to(v, out_dt, name) for v in values]
        values = [_to(v, compute) for v in values]
    out = contract(*values)
    if any(out is v for v in values):
        # No product at all ("ij->ij"): the result must not be an operand's
        # array (a caller's NumPy array, which may change).
        out = convert_element_type_p.bind(out, new_dtype=out.dtype, weak_type=False)
    if from_float:
        check = Check("preferred_element_type", name, 0)
        return _to(out, out_dt, check)  # type: ignore[no-any-return]
    if from_complex:
        warnings.warn(
            f"casting {compute} to {out_dt} discards the imaginary part; take "
            "typelattice.numpy.real(x) first to say so",
            np.exceptions.ComplexWarning,
            stacklevel=3,
        )
    res = _to(out, out_dt)
    if out_key[1]:
        res = convert_element_type_p.bind(res, new_dtype=out_dt, weak_type=True)
    return res  # type: ignore[no-any-return]


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
    return _product(
        "matmul", (a, b), _by_spec("matmul", _matmul_spec), preferred_element_type, 1
    )


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
    return _product("dot", (a, b), _by_spec("dot", _dot_spec), preferred_element_type)


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
    return _product("vdot", (a, b), _vdot, preferred_element_type)


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
    return _product(
        "inner", (a, b), _by_spec("inner", _inner_spec), preferred_element_type
    )


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
    if out is not None:
        raise TypeError(
            "outer: the out argument is not supported (arrays are immutable)"
        )
    return _product("outer", (a, b), _outer, None)


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
        lambda x, y: _tensordot(x, y, axes),  # pyright: ignore[reportUnknownArgumentType, reportUnknownLambdaType]
        preferred_element_type,
    )


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
      optimize: accepted for NumPy compatibility; the operands are
        contracted pairwise, left to right.
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
    if out is not None:
        raise TypeError(
            "einsum: the out argument is not supported (arrays are immutable)"
        )
    return _product(
        "einsum",
        operands,
        lambda *xs: _einsum(subscripts, list(xs)),
        preferred_element_type,
    )


# -- lowerings (for differentiation) --------------------------------------------
# Every product is an Einstein summation: the operands are converted to the
# result's dtype, then contracted pairwise with lax.dot_general.

_LETTERS: Final = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _contract(terms: list[str], output: str, arrays: list[Any]) -> Any:
    """``einsum('terms->output', *arrays)`` with primitives (arrays of one
    dtype), contracted pairwise left to right as :func:`_plan` says."""
    terms = list(terms)
    arrays = list(arrays)
    for i, term in enumerate(terms):
        if len(set(term)) != len(term):
            terms[i], arrays[i] = _diagonal(term, arrays[i])
    shapes = tuple(tuple(x.shape) for x in arrays)
    broadcasts, first, steps, last, order = _plan(tuple(terms), output, shapes)
    xs = [
        x
        if shape is None
        else broadcast_in_dim_p.bind(
            x, shape=shape, broadcast_dimensions=tuple(range(len(shape)))
        )
        for x, shape in zip(arrays, broadcasts, strict=True)
    ]
    acc = _summed(xs[0], first)
    for (drop_acc, drop_y, numbers), y in zip(steps, xs[1:], strict=True):
        acc = dot_general_p.bind(
            _summed(acc, drop_acc),
            _summed(y, drop_y),
            dimension_numbers=numbers,
            preferred_element_type=None,
        )
    acc = _summed(acc, last)
    if order is not None:
        acc = transpose_p.bind(acc, permutation=order)
    return acc


def _summed(x: Any, axes: tuple[int, ...]) -> Any:
    return reduce_sum_p.bind(x, axes=axes) if axes else x


_Numbers = tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]


@functools.lru_cache(maxsize=512)
def _plan(
    terms: tuple[str, ...], output: str, shapes: tuple[tuple[int, ...], ...]
) -> tuple[
    tuple[tuple[int, ...] | None, ...],
    tuple[int, ...],
    tuple[tuple[tuple[int, ...], tuple[int, ...], _Numbers], ...],
    tuple[int, ...],
    tuple[int, ...] | None,
]:
    """How :func:`_contract` contracts operands of these shapes (no label
    repeated within a term): each operand's broadcast shape (its axes of
    size 1 to their labels' sizes) or None; the axes of the first operand
    summed at once (needed by no later operand nor the output); per later
    operand, the axes summed out of the accumulated product and out of the
    operand, and the dot_general dimension numbers (shared labels still
    needed are batch axes, the others contracted); the axes summed at the
    end; the final transposition, or None."""
    sizes: dict[str, int] = {}
    for term, shape in zip(terms, shapes, strict=True):
        for label, n in zip(term, shape, strict=True):
            sizes[label] = n if n != 1 else sizes.get(label, 1)
    broadcasts = tuple(
        None if full == shape else full
        for full, shape in (
            (tuple(sizes[lab] for lab in term), shape)
            for term, shape in zip(terms, shapes, strict=True)
        )
    )

    def needed_after(k: int) -> set[str]:
        return set(output).union(*terms[k + 1 :])

    labels, first = _unneeded(terms[0], needed_after(0) | set().union(*terms[1:2]))
    steps: list[tuple[tuple[int, ...], tuple[int, ...], _Numbers]] = []
    for k in range(1, len(terms)):
        keep = needed_after(k)
        labels, drop_acc = _unneeded(labels, keep | set(terms[k]))
        term, drop_y = _unneeded(terms[k], keep | set(labels))
        batch = [lab for lab in labels if lab in term and lab in keep]
        summed = [lab for lab in labels if lab in term and lab not in keep]
        numbers = (
            (
                tuple(labels.index(c) for c in summed),
                tuple(term.index(c) for c in summed),
            ),
            (
                tuple(labels.index(b) for b in batch),
                tuple(term.index(b) for b in batch),
            ),
        )
        steps.append((drop_acc, drop_y, numbers))
        free_x = [lab for lab in labels if lab not in batch and lab not in summed]
        free_y = [lab for lab in term if lab not in batch and lab not in summed]
        labels = "".join(batch + free_x + free_y)
    labels, last = _unneeded(labels, set(output))
    order = None if labels == output else tuple(labels.index(c) for c in output)
    return broadcasts, first, tuple(steps), last, order


def _unneeded(term: str, keep: set[str]) -> tuple[str, tuple[int, ...]]:
    """``term`` without the labels not in ``keep``, and their axes."""
    drop = tuple(i for i, lab in enumerate(term) if lab not in keep)
    return "".join(c for c in term if c in keep), drop


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


def _parse(subscripts: str, shapes: list[tuple[int, ...]]) -> tuple[list[str], str]:
    """Explicit terms and output of an einsum (see :func:`_parsed`)."""
    terms, output = _parsed(subscripts, tuple(shapes))
    return list(terms), output


@functools.lru_cache(maxsize=512)
def _parsed(
    subscripts: str, shapes: tuple[tuple[int, ...], ...]
) -> tuple[tuple[str, ...], str]:
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
    return tuple(expanded), output


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


def _check_sizes(name: str, terms: list[str], arrays: list[Any]) -> None:
    """Each label's axes of one size (or 1, broadcast), each term one label
    per axis."""
    sizes: dict[str, int] = {}
    if len(terms) != len(arrays):
        raise ValueError(
            f"{name}: the subscripts have {len(terms)} operand terms for "
            f"{len(arrays)} operands"
        )
    for term, x in zip(terms, arrays, strict=True):
        shape = tuple(x.shape)
        if len(term) != len(shape):
            raise ValueError(
                f"{name}: the term '{term}' has {len(term)} labels for an operand "
                f"of shape {shape}"
            )
        for label, n in zip(term, shape, strict=True):
            seen = sizes.setdefault(label, n)
            if n != seen and 1 not in (n, seen):
                raise ValueError(
                    f"{name}: the operands' shapes "
                    f"{', '.join(str(tuple(a.shape)) for a in arrays)} do not "
                    f"match: an axis of size {seen} meets one of size {n}"
                )
            sizes[label] = builtins.max(seen, n)


def _by_spec(name: str, spec: Callable[[int, int], str]) -> Callable[[Any, Any], Any]:
    """A product of two arrays whose einsum subscripts depend on their ranks."""

    def contract(x: Any, y: Any) -> Any:
        if 1 <= x.ndim <= 2 and 1 <= y.ndim <= 2 and name != "inner":
            # matmul and dot of vectors and matrices: one contraction of the
            # last axis of x with the first (or only) axis of y.
            k, j = x.shape[-1], y.shape[0]
            if k != j:
                raise ValueError(
                    f"{name}: shapes {tuple(x.shape)} and {tuple(y.shape)} are "
                    f"not aligned: the contracted dimension has size {k} in "
                    f"one and {j} in the other"
                )
            numbers = (((x.ndim - 1,), (0,)), ((), ()))
            return dot_general_p.bind(
                x, y, dimension_numbers=numbers, preferred_element_type=None
            )
        terms, output = _parse(spec(x.ndim, y.ndim), [tuple(x.shape), tuple(y.shape)])
        if name != "dot" or (x.ndim and y.ndim):
            # The contracted axes must agree exactly (NumPy does not
            # broadcast them); batch axes broadcast.
            contracted = [c for c in terms[0] if c in terms[1] and c not in output]
            for c in contracted:
                n, m = x.shape[terms[0].index(c)], y.shape[terms[1].index(c)]
                if n != m:
                    raise ValueError(
                        f"{name}: shapes {tuple(x.shape)} and {tuple(y.shape)} "
                        f"are not aligned: the contracted dimension has size "
                        f"{n} in one and {m} in the other"
                    )
        _check_sizes(name, terms, [x, y])
        return _contract(terms, output, [x, y])

    return contract


def _vdot(x: Any, y: Any) -> Any:
    if x.size != y.size:
        raise TypeError(
            f"vdot: the operands have {x.size} and {y.size} elements; "
            "vdot needs the same number in both"
        )
    x = lax.reshape(x, (x.size,))
    y = lax.reshape(y, (y.size,))
    if _dtypes.kind_of(x.dtype) == "c":
        x = lax.conj(x)
    return _contract(["k", "k"], "", [x, y])


def _outer(x: Any, y: Any) -> Any:
    x = lax.reshape(x, (x.size,))
    y = lax.reshape(y, (y.size,))
    return _contract(["i", "j"], "ij", [x, y])


def _tensordot(x: Any, y: Any, axes: Any) -> Any:
    try:
        if isinstance(axes, int | np.integer):
            n = _core.index_of(axes, "tensordot: axes")
            if not 0 <= n <= builtins.min(x.ndim, y.ndim):
                raise ValueError(
                    f"tensordot: axes={n} needs that many axes in both operands, "
                    f"of shapes {tuple(x.shape)} and {tuple(y.shape)}"
                )
            ax = list(range(x.ndim - n, x.ndim))
            bx = list(range(n))
        else:
            first, second = axes
            ax = [_core.index_of(i, "tensordot: axes") for i in _listed(first)]
            bx = [_core.index_of(i, "tensordot: axes") for i in _listed(second)]
    except (TypeError, ValueError) as err:
        if type(err) is ValueError and str(err).startswith("tensordot"):
            raise
        raise TypeError(
            "tensordot: axes must be an int or a pair of sequences of axes, got "
            f"{axes!r}"
        ) from None
    if len(ax) != len(bx):
        raise ValueError(
            f"tensordot: axes {axes!r} pair {len(ax)} axes of the first operand "
            f"with {len(bx)} of the second"
        )
    for i, j in zip(ax, bx, strict=True):
        if not (-x.ndim <= i < x.ndim and -y.ndim <= j < y.ndim):
            raise ValueError(f"tensordot: axes {axes!r} are out of bounds")
        if x.shape[i] != y.shape[j]:
            raise ValueError(
                f"tensordot: shape-mismatch for sum: axis {i} of the first "
                f"operand has size {x.shape[i]}, axis {j} of the second "
                f"{y.shape[j]}"
            )
    ax = [i % x.ndim for i in ax]
    bx = [i % y.ndim for i in bx]
    ta = list(_LETTERS[: x.ndim])
    tb = list(_LETTERS[x.ndim : x.ndim + y.ndim])
    for i, j in zip(ax, bx, strict=True):
        tb[j] = ta[i]
    output = [c for i, c in enumerate(ta) if i not in ax] + [
        c for j, c in enumerate(tb) if j not in bx
    ]
    return _contract(["".join(ta), "".join(tb)], "".join(output), [x, y])


def _listed(axes: Any) -> list[Any]:
    """One axis or a sequence of them, as a list."""
    return [axes] if isinstance(axes, int | np.integer) else list(axes)


def _einsum(subscripts: str, arrays: list[Any]) -> Any:
    shapes = [tuple(x.shape) for x in arrays]
    spec = subscripts.replace(" ", "")
    if len(spec.partition("->")[0].split(",")) != len(arrays):
        raise ValueError(
            f"einsum: the subscripts {subscripts!r} have "
            f"{len(spec.partition('->')[0].split(','))} operand terms for "
            f"{len(arrays)} operands"
        )
    bad = set(spec) - set(_LETTERS) - set(".,->")
    if bad or spec.count("->") > 1:
        raise ValueError(
            f"einsum: the subscripts {subscripts!r} may hold letters, ',', '->' "
            "and '...' only"
        )
    terms, output = _parse(subscripts, shapes)
    _check_sizes("einsum", terms, arrays)
    for c in output:
        if output.count(c) > 1 or not any(c in t for t in terms):
            raise ValueError(
                f"einsum: the output subscript {c!r} of {subscripts!r} must appear "
                "once, and in an input term"
            )
    return _contract(terms, output, arrays)
