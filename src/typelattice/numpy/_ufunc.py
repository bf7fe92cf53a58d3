"""The ufunc methods of the binary elementwise functions, as jax.numpy's.

``tnp.add.reduce``, ``.accumulate``, ``.outer``, ``.at`` and ``.reduceat``
(and ``nin``, ``nout``, ``nargs``, ``identity``) are attributes set on the
functions themselves by :func:`attach`, so the functions stay what
``make_binary`` made. :class:`ufunc` is the protocol they satisfy, for type
checkers and ``isinstance``.

The dtype rules are jax.numpy's: ``add.reduce`` is ``sum`` (narrow integers
widen), ``multiply.reduce`` is ``prod``, ``maximum``/``minimum`` are
``max``/``min``, ``logical_and``/``logical_or`` are ``all``/``any``; the
other functions reduce in the dtype the function gives for the input with
itself (``subtract.reduce`` of int8 is int8, ``logaddexp.reduce`` of int32
is float32). Reductions and accumulations are strong; ``outer`` follows the
function's own weak-type rule.
"""

# Package-internal: reads the arrays' underscored slots and the namespace
# modules' private helpers by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

import numpy as np

from typelattice import _array, _core, _dtypes
from typelattice._array import wrap
from typelattice._basearray import Array
from typelattice._lax._elementwise import convert_element_type_p
from typelattice._lax._fold import (
    Computation,
    cumulative_reduce_p,
    reduce_p,
    reduce_segments_p,
)
from typelattice._lax._indexing import IndexCheck, check_index
from typelattice._lax._primitive import Primitive
from typelattice._lax._reductions import cummax_p, cummin_p
from typelattice.numpy import _creation, _elementwise, _reductions
from typelattice.numpy._reductions import _axis, _explicit
from typelattice.numpy._shape import (
    _fitting,
    _fitting_array,
    _one,
    _scatter,
    _scatter_at,
    reshape,
)

if TYPE_CHECKING:
    from typelattice.typing import ArrayLike, DTypeLike

__all__ = ["attach", "ufunc"]


@runtime_checkable
class ufunc(Protocol):  # noqa: N801 - jax.numpy's name
    """A binary elementwise function with NumPy's ufunc methods.

    ``tnp.add``, ``tnp.multiply``, ``tnp.subtract``, ``tnp.maximum``,
    ``tnp.minimum``, ``tnp.logaddexp``, ``tnp.logaddexp2`` and the logical
    and bitwise functions are ufuncs, as in jax.numpy:

    >>> import typelattice.numpy as tnp
    >>> isinstance(tnp.add, tnp.ufunc)
    True
    >>> tnp.add.reduce(tnp.asarray([100, 100], dtype='int8'))
    Array(200, dtype=int32)
    >>> tnp.subtract.outer(tnp.arange(3), tnp.arange(2))
    Array([[ 0, -1],
           [ 1,  0],
           [ 2,  1]], dtype=int32)
    """

    __name__: str
    nin: int
    nout: int
    nargs: int
    identity: bool | int | float | None

    def __call__(self, x: ArrayLike, y: ArrayLike, /) -> Array: ...

    def reduce(
        self,
        a: ArrayLike,
        axis: int | Sequence[int] | None = 0,
        dtype: DTypeLike | None = None,
        out: None = None,
        keepdims: bool = False,
        initial: ArrayLike | None = None,
        where: ArrayLike | None = None,
    ) -> Array:
        """Reduce ``a`` along ``axis`` by applying the function repeatedly.

        ``add.reduce`` is :func:`~typelattice.numpy.sum` (narrow integers
        widen to the default integer), ``multiply.reduce`` is ``prod``,
        ``maximum``/``minimum`` are ``max``/``min`` and ``logical_and``/
        ``logical_or`` are ``all``/``any``; the other functions reduce in the
        dtype the function gives for ``a`` with itself (``subtract.reduce``
        of int8 is int8). The result is strong.

        Args:
          a: the array to reduce.
          axis: an axis, a tuple of axes, or None for every axis (default 0).
          dtype: the dtype to reduce in, instead of the rule above.
          out: not supported (arrays are immutable); must be None.
          keepdims: keep the reduced axes with length 1.
          initial: the starting value; it must fit the result's dtype
            unchanged.
          where: a bool mask of the elements to include (functions without
            an identity need ``initial`` with it).

        Returns:
          The reduced Array.

        Raises:
          ValueError: an empty reduction of a function without identity and
            no ``initial``; a bad axis.
          OverflowError: an ``initial`` the result's dtype cannot hold.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.asarray([[1, 2], [3, 4]], dtype='int8')
        >>> tnp.add.reduce(x)
        Array([4, 6], dtype=int32)
        >>> tnp.subtract.reduce(x, axis=1)
        Array([-1, -1], dtype=int8)
        """
        ...

    def accumulate(
        self,
        a: ArrayLike,
        axis: int | None = 0,
        dtype: DTypeLike | None = None,
        out: None = None,
    ) -> Array:
        """The running reduction of ``a`` along ``axis``.

        ``add.accumulate`` is :func:`~typelattice.numpy.cumsum` and
        ``multiply.accumulate`` is ``cumprod``; the other functions
        accumulate in the dtype the function gives for ``a`` with itself.

        Args:
          a: the array.
          axis: the axis (default 0), or None for the flattened array.
          dtype: the dtype to accumulate in.
          out: not supported (arrays are immutable); must be None.

        Returns:
          A strong Array of ``a``'s shape (flattened for ``axis=None``).

        >>> import typelattice.numpy as tnp
        >>> tnp.subtract.accumulate(tnp.asarray([10, 2, 3], dtype='int8'))
        Array([10,  8,  5], dtype=int8)
        """
        ...

    def outer(self, A: ArrayLike, B: ArrayLike, /) -> Array:
        """The function of every pair: ``result[i..., j...] = f(A[i...], B[j...])``.

        Promoted as the function itself promotes ``A`` with ``B``.

        Args:
          A: the first operand; its axes come first in the result.
          B: the second operand; its axes come last.

        Returns:
          An Array of shape ``A.shape + B.shape``.

        >>> import typelattice.numpy as tnp
        >>> tnp.multiply.outer(tnp.asarray([1, 2], dtype='int8'), tnp.arange(3))
        Array([[0, 1, 2],
               [0, 2, 4]], dtype=int32)
        """
        ...

    def at(
        self,
        a: ArrayLike,
        indices: Any,
        b: ArrayLike | None = None,
        /,
        *,
        inplace: bool = True,
    ) -> Array:
        """``a`` with the function applied at ``indices`` with ``b``.

        Repeated indices apply it repeatedly. Arrays are immutable: pass
        ``inplace=False`` and use the result, as in jax.numpy. ``add``,
        ``multiply`` and ``subtract`` keep ``a``'s dtype and weak flag, as
        ``a.at[indices].add(b)`` does; the others give the function's dtype
        for ``a`` with ``b`` (strong).

        Args:
          a: the array to update.
          indices: an index, as for ``a[indices]``.
          b: the values, broadcast to the indexed elements; they must fit
            the result's dtype unchanged.
          inplace: must be False.

        Returns:
          The updated Array; ``a`` is unchanged.

        Raises:
          NotImplementedError: without ``inplace=False``.
          TypeError, OverflowError: values that would change in the dtype.

        >>> import typelattice.numpy as tnp
        >>> x = tnp.zeros(3, 'int8')
        >>> tnp.add.at(x, tnp.asarray([0, 0, 2]), 5, inplace=False)
        Array([10,  0,  5], dtype=int8)
        """
        ...

    def reduceat(
        self,
        a: ArrayLike,
        indices: ArrayLike,
        axis: int = 0,
        dtype: DTypeLike | None = None,
        out: None = None,
    ) -> Array:
        """Reductions over the slices ``indices[i]:indices[i + 1]`` along ``axis``.

        The last slice runs to the end; where ``indices[i] >= indices[i +
        1]`` the result is the element at ``indices[i]`` (NumPy's rule).

        Args:
          a: the array (at least one dimension).
          indices: a 1-d integer array of slice starts, each within the axis.
          axis: the axis to reduce along.
          dtype: the result's dtype (default: ``a``'s), honoured also for
            ``logaddexp`` (JAX ignores it).
          out: not supported (arrays are immutable); must be None.

        Returns:
          An Array with ``a``'s dtype and weak flag (``dtype`` if given),
          ``len(indices)`` long along ``axis``.

        Raises:
          IndexError: an index outside the axis (JAX gives unspecified
            values).

        >>> import typelattice.numpy as tnp
        >>> tnp.add.reduceat(tnp.arange(6), tnp.asarray([0, 2, 5]))
        Array([1, 9, 5], dtype=int32)
        """
        ...


# Functions whose methods are other namespace functions, as in jax.numpy.
_REDUCERS: Final = {
    "add": "sum",
    "multiply": "prod",
    "maximum": "max",
    "minimum": "min",
    "logical_and": "all",
    "logical_or": "any",
}
_ACCUMULATORS: Final = {"add": "cumsum", "multiply": "cumprod"}
# The functions whose accumulate is a running extreme (lax.cummax, cummin).
_RUNNING: Final = {"maximum": cummax_p, "minimum": cummin_p}
# The functions whose .at keeps the array's dtype and weak flag (x.at[i].op).
_AT_UPDATES: Final = {"add": np.add, "multiply": np.multiply, "subtract": np.subtract}
_BOOL: Final = np.dtype(bool)


def _no_out(out: object, where: str) -> None:
    if out is not None:
        raise TypeError(
            f"{where}: the out argument is not supported (arrays are immutable)"
        )


def _plan(op: _elementwise.Op, key: _core.Aval) -> _core.Plan:
    return _elementwise.build_plan(op, (key, key), _elementwise._state())


def _result_dtype(op: _elementwise.Op, key: _core.Aval) -> np.dtype[Any]:
    """The dtype ``op`` gives for an array of ``key`` with itself."""
    return _plan(op, key).out_key[0]


def _in_dtype(op: _elementwise.Op, x: Any, dt: np.dtype[Any], where: str) -> Any:
    """``x`` converted to ``dt``, in which ``op`` of two arrays must give
    ``dt`` again, its values checked (see docs/semantics.md, "Data
    safety")."""
    plan = _plan(op, _core.aval(dt, False))
    if plan.out_key[0] != dt:
        raise TypeError(
            f"{where}: {op.name} of two {dt} arrays gives {plan.out_key[0]}, so "
            f"it cannot be carried out in {dt}; choose dtype={plan.out_key[0]}"
        )
    if plan.cd != dt:  # logical_xor computes in the operands' type, gives bool
        x = _reductions._to(x, _BOOL)
    return _reductions._requested_input(x, dt, where)


def _initial(initial: Any, dt: np.dtype[Any], where: str) -> Any:
    if np.ndim(initial):
        raise ValueError(f"{where}: initial must be a scalar")
    return np.asarray(_fitting(initial, dt, where, "start from"))[()]


def _logsumexp(base2: bool) -> Callable[[np.ndarray[Any, Any], int, Any], Any]:
    """``logaddexp`` (``base2``: ``logaddexp2``) folded over one axis where
    NumPy has no ufunc (complex): shifted by the largest real part, exact
    for large values."""

    def fold(values: np.ndarray[Any, Any], axis: int, mask: Any) -> Any:
        x = values * np.log(2).astype(values.dtype) if base2 else values
        real = x.real if x.dtype.kind == "c" else x
        top = np.max(real, axis=axis, keepdims=True, where=mask, initial=-np.inf)
        top = np.where(np.isfinite(top), top, 0)
        total = np.sum(np.exp(x - top), axis=axis, keepdims=True, where=mask)
        res = np.log(total) + top
        if base2:
            res = res / np.log(2).astype(values.dtype)
        return np.squeeze(res, axis)

    return fold


def computation(op: _elementwise.Op, identity: Any) -> Computation:
    """``op`` as the computation parameter of the fold primitives (its
    NumPy function; a function without identity folds one axis at a time)."""
    loop = None
    if op.name in ("logaddexp", "logaddexp2"):
        loop = _logsumexp(op.name == "logaddexp2")
    return Computation(
        op.name, op.fn, reduce_loop=loop, reorderable=identity is not None
    )


def _reduce_axis(ndim: int, axis: Any, where: str) -> Any:
    """``axis`` checked: an int, a tuple of ints, or None (every axis)."""
    if axis is not None and ndim == 0:
        raise ValueError(
            f"{where}: axis {axis!r} is out of bounds for a 0-d array; pass axis=None"
        )
    return _axis(axis, ndim, where)


def _ndim(a: Any, where: str) -> int:
    """The number of dimensions of an operand (a tracer's too; other values
    checked as the reductions check them)."""
    if isinstance(a, Array):
        return a.ndim
    return int(_reductions._input(a, where)[0].ndim)


def _fold_input(
    op: _elementwise.Op, a: Any, dtype: Any, where: str
) -> tuple[Any, np.dtype[Any]]:
    """The operand of a fold: ``a`` in the dtype it is folded in (``dtype``,
    else the dtype ``op`` gives for ``a`` with itself), its values checked
    (see docs/semantics.md, "Data safety")."""
    x = _reductions._operand(a, where)
    key = _core.aval(x.dtype, x.weak_type if isinstance(a, Array) else False)
    dt = _explicit(dtype, where) if dtype is not None else _result_dtype(op, key)
    return _in_dtype(op, x, dt, where), dt


def _generic_reduce(
    op: _elementwise.Op,
    comp: Computation,
    identity: Any,
    a: Any,
    axis: Any,
    dtype: Any,
    keepdims: bool,
    initial: Any,
    where: Any,
) -> Array:
    name = f"{op.name}.reduce"
    x, dt = _fold_input(op, a, dtype, name)
    shape = tuple(x.shape)
    axes = _reduce_axis(len(shape), axis, name)
    if where is not None and initial is None and identity is None:
        raise ValueError(
            f"{name}: {op.name} has no identity, so reducing with where= needs "
            "initial= (the result where nothing is selected)"
        )
    mask = _reductions._mask(where, shape, name)
    if axes is None:  # the flattened array, folded in its order
        x = reshape(x, (-1,))
        mask = None if mask is None else reshape(mask, (-1,))
        dims: tuple[int, ...] = (0,)
    else:
        listed: list[int] = list(axes) if isinstance(axes, tuple) else [axes]  # pyright: ignore[reportUnknownArgumentType]
        dims = tuple(sorted(listed))
    if len(dims) > 1 and not comp.reorderable:
        raise ValueError(
            f"{name}: reduction operation '{op.name}' is not reorderable, so at "
            "most one axis may be specified"
        )
    operands = [x]
    if initial is not None:
        start = _initial(initial, dt, name)
        operands.append(wrap(np.asarray(start, dt), _core.aval(dt, False)))
    elif math.prod(shape) == 0 and identity is None:
        raise ValueError(
            f"{name}: reducing an axis of length 0 has no result ({op.name} has "
            "no identity); pass initial=..."
        )
    if mask is not None:
        operands.append(mask)
    res = reduce_p.bind(
        *operands,
        computation=comp,
        dimensions=dims,
        initial=initial is not None,
        masked=mask is not None,
    )
    if keepdims:
        kept = dims if axes is not None else tuple(range(len(shape)))
        res = reshape(res, tuple(1 if i in kept else d for i, d in enumerate(shape)))
    return res  # type: ignore[no-any-return]


def _make_reduce(
    fn: Any, op: _elementwise.Op, comp: Computation, identity: Any
) -> Callable[..., Array]:
    name = op.name
    delegate = _REDUCERS.get(name)

    def reduce(
        a: ArrayLike,
        axis: int | Sequence[int] | None = 0,
        dtype: DTypeLike | None = None,
        out: None = None,
        keepdims: bool = False,
        initial: ArrayLike | None = None,
        where: ArrayLike | None = None,
    ) -> Array:
        where_ = f"{name}.reduce"
        _no_out(out, where_)
        if delegate is None:
            return _generic_reduce(
                op, comp, identity, a, axis, dtype, keepdims, initial, where
            )

        _reduce_axis(_ndim(a, where_), axis, where_)
        target = getattr(_reductions, delegate)
        if delegate in ("sum", "prod"):
            return target(  # type: ignore[no-any-return]
                a, axis, dtype, keepdims=keepdims, initial=initial, where=where
            )
        if delegate in ("max", "min"):
            if dtype is not None:
                a = _creation.convert_to(a, dtype, where_)
            return target(  # type: ignore[no-any-return]
                a, axis, keepdims=keepdims, initial=initial, where=where
            )
        res: Array = target(a, axis, keepdims=keepdims, where=where)
        if initial is not None:  # both strong bool: the result is strong
            res = fn(res, _creation.astype(initial, bool))
        return res if dtype is None else _creation.convert_to(res, dtype, where_)

    return reduce


def _make_accumulate(op: _elementwise.Op, comp: Computation) -> Callable[..., Array]:
    name = op.name
    delegate = _ACCUMULATORS.get(name)
    running = _RUNNING.get(name)

    def accumulate(
        a: ArrayLike,
        axis: int | None = 0,
        dtype: DTypeLike | None = None,
        out: None = None,
    ) -> Array:
        where_ = f"{name}.accumulate"
        _no_out(out, where_)

        if delegate is not None:
            return getattr(_reductions, delegate)(a, axis, dtype)  # type: ignore[no-any-return]
        if running is not None:
            return _running_extreme(running, a, axis, dtype, where_)
        x, _ = _fold_input(op, a, dtype, where_)
        x, ax = _accumulated(x, axis, where_)
        return cumulative_reduce_p.bind(x, computation=comp, axis=ax)  # type: ignore[no-any-return]

    return accumulate


def _accumulated(x: Any, axis: Any, where: str) -> tuple[Any, int]:
    """The operand of an ``accumulate`` and the axis it runs along: a 0-d
    array accumulates as one element (as NumPy), ``axis=None`` along the
    flattened array."""
    if x.ndim == 0:
        x = reshape(x, (1,))
    if axis is None:
        return reshape(x, (-1,)), 0
    return x, _core.index_of(_axis(axis, x.ndim, where), where)


def _running_extreme(
    prim: Primitive, a: Any, axis: Any, dtype: Any, where: str
) -> Array:
    """``maximum.accumulate``/``minimum.accumulate``: the running extreme
    in ``a``'s dtype (or ``dtype``, whose conversion is checked), strong."""
    x = _reductions._operand(a, where)
    dt = _explicit(dtype, where) if dtype is not None else x.dtype
    x = _reductions._requested_input(x, dt, where)
    x, ax = _accumulated(x, axis, where)
    if dt == np.dtype(bool):  # the extreme of bools is that of 0 and 1
        wide = _reductions._to(x, np.dtype(np.uint8))
        return _reductions._to(prim.bind(wide, axis=ax, reverse=False), dt)  # type: ignore[no-any-return]
    return prim.bind(x, axis=ax, reverse=False)  # type: ignore[no-any-return]


def _shape_of(x: Any, where: str) -> tuple[int, ...]:
    """The shape of an operand (a tracer's too; other values checked)."""
    if isinstance(x, Array):
        return tuple(x.shape)
    value: np.ndarray[Any, Any] = _one(x, where)[0]
    return tuple(value.shape)


def _make_outer(fn: Any, name: str) -> Callable[..., Array]:
    def outer(A: ArrayLike, B: ArrayLike, /) -> Array:
        # The function itself on A with B's axes added: on every path.
        shape_a = _shape_of(A, f"{name}.outer")
        ndim_b = len(_shape_of(B, f"{name}.outer"))
        first = reshape(A, shape_a + (1,) * ndim_b)
        return fn(first, B)  # type: ignore[no-any-return]

    return outer


def _make_at(op: _elementwise.Op, comp: Computation) -> Callable[..., Array]:
    name = op.name
    update = _AT_UPDATES.get(name)

    def at(
        a: ArrayLike,
        indices: Any,
        b: ArrayLike | None = None,
        /,
        *,
        inplace: bool = True,
    ) -> Array:
        where_ = f"{name}.at"
        if inplace:
            raise NotImplementedError(
                f"{where_}: arrays are immutable, so the update cannot be made "
                f"in place; pass inplace=False and use the result: "
                f"a = tnp.{name}.at(a, indices, b, inplace=False)"
            )
        if b is None:
            raise TypeError(
                f"{where_}: {name} takes two operands; give the values: "
                f"tnp.{name}.at(a, indices, b, inplace=False)"
            )

        if update is not None:
            return _scatter(a, indices, b, update, name, label=where_)
        # Other functions, as JAX: the result has the function's dtype for
        # a and b (strong); both are converted to it first.
        x = _reductions._operand(a, where_)
        key = _core.aval(x.dtype, x.weak_type if isinstance(a, Array) else False)
        bkey = (
            _core.aval(b.dtype, b.weak_type)
            if isinstance(b, Array)
            else _array.operand(b, where_, 1)[1]
        )
        plan = _elementwise.build_plan(op, (key, bkey), _elementwise._state())
        cd, dt = plan.cd, plan.out_key[0]
        x = _in_dtype(op, x, dt, where_)
        if cd != dt:  # logical_xor: b's truth value
            values = _fitting_array(b, cd, False, where_, "use")
            values = _reductions._to(values, _BOOL)
        else:
            values = _fitting_array(b, dt, False, where_, "use")
        return _scatter_at(x, indices, values, comp, name, label=where_, hint="")

    return at


def _make_reduceat(op: _elementwise.Op, comp: Computation) -> Callable[..., Array]:
    name = op.name

    def reduceat(
        a: ArrayLike,
        indices: ArrayLike,
        axis: int = 0,
        dtype: DTypeLike | None = None,
        out: None = None,
    ) -> Array:
        where_ = f"{name}.reduceat"
        _no_out(out, where_)

        x = _reductions._operand(a, where_)
        key = _core.aval(x.dtype, x.weak_type)
        if isinstance(indices, list | tuple):
            raise TypeError(
                f"{where_}: indices must be an array, not a list; use asarray"
            )
        starts = _reductions._operand(indices, where_)
        if _dtypes.kind_of(starts.dtype) not in "iu":
            raise TypeError(f"{where_}: indices must be integers, got {starts.dtype}")
        if x.ndim == 0:
            raise ValueError(f"{where_}: a must have at least one dimension")
        if starts.ndim != 1:
            raise ValueError(
                f"{where_}: indices must be one-dimensional, got shape "
                f"{tuple(starts.shape)}"
            )
        if axis is None or isinstance(axis, tuple | list):  # pyright: ignore[reportUnnecessaryComparison]
            raise ValueError(f"{where_}: needs a single integer axis, got {axis!r}")
        ax = _core.index_of(axis, f"{where_}: axis")
        if not -x.ndim <= ax < x.ndim:
            raise ValueError(
                f"{where_}: axis {ax} is out of bounds for an array of "
                f"dimension {x.ndim}"
            )
        ax %= x.ndim
        n = x.shape[ax]
        # (an index outside the axis raises, eagerly or when a program runs)
        hint = f" (indices must be in [0, {n}))"
        starts = check_index(
            starts, IndexCheck(ax, n, False, "raise", f"{where_}: ", hint)
        )
        if dtype is not None:
            dt = _explicit(dtype, where_)
            out_key = _core.aval(dt, False)
        else:
            dt, out_key = key[0], key
        plan = _plan(op, _core.aval(dt, False))
        op_dt, cd = plan.out_key[0], plan.cd
        if op_dt != dt and op.out != "bool":
            raise TypeError(
                f"{where_}: {name} of {dt} values gives {op_dt}, which the "
                f"result dtype {dt} cannot hold; pass dtype='{op_dt}'"
            )
        values = _reductions._requested_input(x, cd, where_)
        if op.out == "bool":  # the logical functions fold truth values
            values = _reductions._to(values, _BOOL)
        res = reduce_segments_p.bind(values, starts, computation=comp, axis=ax)
        # (the function's result in the result's dtype, as NumPy's astype)
        return convert_element_type_p.bind(  # type: ignore[no-any-return]
            res, new_dtype=dt, weak_type=out_key.weak_type, check=None
        )

    return reduceat


def attach(fn: Any, identity: bool | int | float | None) -> None:
    """Give the binary elementwise function ``fn`` its ufunc methods and
    attributes (``fn`` itself is unchanged otherwise)."""
    op: _elementwise.Op = fn._op
    name = op.name
    # Every method is written with lax (the primitives whose parameter is
    # the function itself, see typelattice._lax._fold) and the namespace
    # functions written on it: the same code on every path.
    comp = computation(op, identity)
    methods: dict[str, Callable[..., Array]] = {
        "reduce": _make_reduce(fn, op, comp, identity),
        "accumulate": _make_accumulate(op, comp),
        "outer": _make_outer(fn, name),
        "at": _make_at(op, comp),
        "reduceat": _make_reduceat(op, comp),
    }
    for method, impl in methods.items():
        impl.__name__ = method
        impl.__qualname__ = f"{name}.{method}"
        # One text for every function's method: the protocol's.
        impl.__doc__ = getattr(ufunc, method).__doc__
        setattr(fn, method, _elementwise.lax_function(impl))
    fn.nin = 2
    fn.nout = 1
    fn.nargs = 2
    fn.identity = identity
