"""Collectives over the named axis of a ``vmap``: ``psum``, ``pmean``,
``pmax``, ``pmin`` and ``axis_index``, as ``jax.lax``'s.

Under ``typelattice.vmap(f, axis_name='i')`` the examples of the batch are
the members of axis ``'i'``: ``psum(x, 'i')`` is, for every example, the
sum of ``x`` over all of them. Outside a ``vmap`` of that name they raise
``NameError`` (unbound axis name), as in JAX.

Each collective is a primitive whose parameter ``axis_name`` is the tuple
of names it reduces over. Binding one goes to the innermost of the traces
that its operand belongs to and those of the names
(:func:`~typelattice._tracing.batching.bind_collective`): the ``vmap`` of
a name reduces over its batch axis by the rule registered here with
``def_collective`` (an operand the same for every example counts once per
example); any other trace batches it as an elementwise function, or
differentiates it, and binds it again.
"""

# Package-internal: reads the traces' slots by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

import numpy as np

from typelattice import _config, _dtypes
from typelattice._lax import _elementwise as ew
from typelattice._lax import _reductions as red
from typelattice._lax import _structural as st
from typelattice._lax._primitive import (
    Primitive,
    ShapedArray,
    broadcast_batch,
    defjvp_unsupported,
    defjvp_zero,
    reduce_sum_p,
    to_array,
)
from typelattice._tracing import tree
from typelattice._tracing.batching import (
    BatchTrace,
    axis_trace,
    bind_collective,
    def_collective,
)
from typelattice._tracing.primitive import Zero, instantiate

if TYPE_CHECKING:
    from typelattice._basearray import Array

__all__ = ["axis_index", "pmax", "pmean", "pmin", "psum"]

NDArray = np.ndarray[Any, Any]
AxisName = Hashable | tuple[Hashable, ...]
_INT32: Final = np.dtype(np.int32)


def _names(axis_name: AxisName) -> tuple[Hashable, ...]:
    if isinstance(axis_name, tuple | list):
        return tuple(cast("Sequence[Hashable]", axis_name))
    return (axis_name,)


def _unbound(*args: Any, axis_name: tuple[Hashable, ...], **params: Any) -> Any:
    # (Reached only when no vmap of the name runs: binding checks first.)
    for name in axis_name:
        axis_trace(name)
    raise AssertionError(f"collective over {axis_name} bound outside its vmap")


def _reducing(name: str, reduce: Primitive) -> Primitive:
    """A collective that reduces its operand over the named axes with the
    reduction primitive ``reduce``."""
    prim = Primitive(name)

    @prim.def_abstract_eval
    def _abstract(x: ShapedArray, *, axis_name: tuple[Hashable, ...]) -> ShapedArray:
        return x

    prim.def_impl(_unbound)

    # Batched by a vmap of another name: elementwise, bound again.
    @prim.def_batch
    def _batch(
        args: Sequence[Any], dims: Sequence[int | None], **params: Any
    ) -> tuple[Any, int | None]:
        return bind_collective(prim, args, params), dims[0]

    @def_collective(prim)
    def _collective(
        trace: BatchTrace,
        args: Sequence[Any],
        dims: Sequence[int | None],
        *,
        axis_name: tuple[Hashable, ...],
    ) -> tuple[Any, int | None]:
        (x,), (d,) = args, dims
        if d is None:  # the same value for every example
            if reduce is reduce_sum_p:
                x = broadcast_batch(x, trace.size, 0)
                d = 0
            else:
                return _rest(prim, x, axis_name, trace), None
        out = reduce.bind(x, axes=(d,))
        return _rest(prim, out, axis_name, trace), None

    return prim


def _rest(
    prim: Primitive, x: Any, names: tuple[Hashable, ...], trace: BatchTrace
) -> Any:
    """``prim`` over the names other than ``trace``'s."""
    others = tuple(n for n in names if n != trace.axis_name)
    if not others:
        return x
    return bind_collective(prim, [x], {"axis_name": others})


psum_p: Final = _reducing("psum", reduce_sum_p)
pmax_p: Final = _reducing("pmax", red.reduce_max_p)
pmin_p: Final = _reducing("pmin", red.reduce_min_p)


# psum is linear: its tangent is the psum of the tangents, its transpose
# the psum of the cotangent.
@psum_p.def_jvp
def _psum_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], **params: Any
) -> tuple[Any, Any]:
    out = bind_collective(psum_p, primals, params)
    (t,) = tangents
    if type(t) is Zero:
        return out, t
    return out, bind_collective(psum_p, [instantiate(t)], params)


@psum_p.def_transpose
def _psum_transpose(ct: Any, x: Any, **params: Any) -> list[Any]:
    return [bind_collective(psum_p, [ct], params)]


defjvp_unsupported(pmax_p, "pmax is not differentiable (nor in JAX)")
defjvp_unsupported(pmin_p, "pmin is not differentiable (nor in JAX)")


axis_index_p: Final = Primitive("axis_index")


@axis_index_p.def_abstract_eval
def _axis_index_abstract(*, axis_name: tuple[Hashable, ...]) -> ShapedArray:
    return ShapedArray((), _INT32)


axis_index_p.def_impl(_unbound)
defjvp_zero(axis_index_p)


# (No operand: never batched by another trace; the rule stands for
# completeness and binds again.)
@axis_index_p.def_batch
def _axis_index_batch(
    args: Sequence[Any], dims: Sequence[int | None], **params: Any
) -> tuple[Any, None]:
    return bind_collective(axis_index_p, args, params), None


@def_collective(axis_index_p)
def _axis_index_collective(
    trace: BatchTrace,
    args: Sequence[Any],
    dims: Sequence[int | None],
    *,
    axis_name: tuple[Hashable, ...],
) -> tuple[Any, int]:
    return st.iota_p.bind(dtype=_INT32, shape=(trace.size,), dimension=0), 0


# -- the functions ----------------------------------------------------------------


def _each(prim: Primitive, x: Any, axis_name: AxisName, where: str) -> Any:
    names = _names(axis_name)
    for name in names:
        axis_trace(name)  # (NameError when unbound)

    def one(leaf: Any) -> Any:
        return bind_collective(prim, [to_array(leaf, where, 0)], {"axis_name": names})

    return tree.tree_map(one, x)


def psum(x: Any, axis_name: AxisName) -> Any:
    """The sum of ``x`` over the examples of the named ``vmap`` axis (axes).

    Args:
      x: an array, or a pytree of arrays.
      axis_name: the ``axis_name`` of an enclosing ``typelattice.vmap``, or a
        tuple of them.

    Returns:
      The sum, the same for every example, of ``x``'s structure and dtypes.

    Raises:
      NameError: no enclosing ``vmap`` has that axis name.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> from typelattice import lax
    >>> tl.vmap(lambda v: v / lax.psum(v, 'i'), axis_name='i')(tnp.arange(4.0))
    Array([0.        , 0.16666667, 0.33333334, 0.5       ], dtype=float32)
    """
    return _each(psum_p, x, axis_name, "psum")


def pmax(x: Any, axis_name: AxisName) -> Any:
    """The maximum of ``x`` over the examples of the named ``vmap`` axis.

    Args:
      x: an array, or a pytree of arrays.
      axis_name: the ``axis_name`` of an enclosing ``typelattice.vmap`` (or a
        tuple of them).

    Returns:
      The maximum, the same for every example.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> from typelattice import lax
    >>> tl.vmap(lambda v: lax.pmax(v, 'i'), axis_name='i')(tnp.int8([3, 9, 1]))
    Array([9, 9, 9], dtype=int8)
    """
    return _each(pmax_p, x, axis_name, "pmax")


def pmin(x: Any, axis_name: AxisName) -> Any:
    """The minimum of ``x`` over the examples of the named ``vmap`` axis.

    Args:
      x: an array, or a pytree of arrays.
      axis_name: the ``axis_name`` of an enclosing ``typelattice.vmap`` (or a
        tuple of them).

    Returns:
      The minimum, the same for every example.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> from typelattice import lax
    >>> tl.vmap(lambda v: lax.pmin(v, 'i'), axis_name='i')(tnp.int8([3, 9, 1]))
    Array([1, 1, 1], dtype=int8)
    """
    return _each(pmin_p, x, axis_name, "pmin")


def pmean(x: Any, axis_name: AxisName) -> Any:
    """The mean of ``x`` over the examples of the named ``vmap`` axis: its
    ``psum`` divided by the number of examples (integers and bools give the
    default floating dtype, as JAX's true division).

    Args:
      x: an array, or a pytree of arrays.
      axis_name: the ``axis_name`` of an enclosing ``typelattice.vmap`` (or a
        tuple of them).

    Returns:
      The mean, the same for every example.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> from typelattice import lax
    >>> tl.vmap(lambda v: lax.pmean(v, 'i'), axis_name='i')(tnp.float32([1, 2, 6]))
    Array([3., 3., 3.], dtype=float32)
    """
    names = _names(axis_name)
    size = math.prod(axis_trace(n).size for n in names)
    x64 = _config.current().enable_x64
    default = np.dtype(np.float64 if x64 else np.float32)

    def one(leaf: Any) -> Array:
        v = to_array(leaf, "pmean", 0)
        if _dtypes.kind_of(v.dtype) in "biu":
            v = ew.convert_element_type_p.bind(
                v, new_dtype=default, weak_type=v.weak_type
            )
        total = bind_collective(psum_p, [v], {"axis_name": names})
        return ew.div(total, size)

    return tree.tree_map(one, x)


def axis_index(axis_name: Hashable) -> Array:
    """The position of each example along the named ``vmap`` axis.

    Args:
      axis_name: the ``axis_name`` of an enclosing ``typelattice.vmap``.

    Returns:
      An int32 scalar: 0 for the first example, 1 for the next...

    Raises:
      NameError: no enclosing ``vmap`` has that axis name.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> from typelattice import lax
    >>> tl.vmap(lambda v: v * lax.axis_index('i'), axis_name='i')(tnp.ones(3, 'int32'))
    Array([0, 1, 2], dtype=int32)
    """
    names = _names(axis_name)
    axis_trace(names[0])
    out: Array = bind_collective(axis_index_p, [], {"axis_name": names})
    return out
