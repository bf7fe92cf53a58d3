"""Jacobians and Hessians: ``jacfwd``, ``jacrev``, ``hessian``.

Each is a composition of the transformations: ``jacfwd`` maps ``jvp`` over
the standard basis of each input with ``vmap``, ``jacrev`` maps the
pullback of ``vjp`` over the standard basis of each output. The basis of an
input of shape ``s`` is the identity reshaped to ``s + s``, mapped over
once per axis of ``s``, so that each block comes out with shape
``output.shape + input.shape`` (``jacfwd``) without any reshaping. Results
are pytrees: the output's structure, each leaf replaced by the inputs'
structure (a tuple of them for several ``argnums``), as in JAX.
"""

# Package-internal: shares the differentiation transformations' argument
# checks.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from typelattice import _config, _core, _dtypes
from typelattice._array import wrap
from typelattice._tracing import tree
from typelattice._tracing.ad import _argnums, _check_inputs, jvp, vjp
from typelattice._tracing.batching import vmap
from typelattice._tracing.jit import argument_value
from typelattice._tracing.primitive import aval_of

__all__ = ["hessian", "jacfwd", "jacrev"]


def _basis(aval: Any) -> Any:
    """The standard basis of a value of ``aval``: shape ``s + s``, its
    dtype and weak flag."""
    n = int(np.prod(aval.shape, dtype=np.int64))
    eye: np.ndarray[Any, Any] = np.eye(n, dtype=aval.dtype)
    eye = eye.reshape(aval.shape + aval.shape)
    return wrap(eye, _core.aval(aval.dtype, aval.weak_type))


def _zeros(aval: Any) -> Any:
    return wrap(
        np.zeros(aval.shape, aval.dtype), _core.aval(aval.dtype, aval.weak_type)
    )


def _over_basis(
    fn: Callable[[Any], Any], ndim: int, out_axis: Callable[[int], int]
) -> Callable[[Any], Any]:
    """``fn`` of one basis vector, mapped over the ``ndim`` leading axes of
    a basis; the axis ``out_axis(k)`` of the result is the ``k``-th axis of
    the basis (counted from the outside)."""
    for k in reversed(range(ndim)):
        fn = vmap(fn, in_axes=0, out_axes=out_axis(k))
    return fn


def _from_end(ndim: int, j: int) -> int:
    """Where the ``j``-th axis of an ``ndim``-axis basis goes: after the
    output's axes."""
    return -(ndim - j)


def _prepare(
    fun: Callable[..., Any],
    argnums: int | Sequence[int],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    where: str,
) -> tuple[Callable[..., Any], list[Any], tuple[int, ...]]:
    """The function of the differentiated arguments alone, and those
    arguments (Python scalars and NumPy values as arrays)."""
    nums = _argnums(argnums, len(args), where)
    dyn = [tree.tree_map(lambda x, i=i: _as_array(x, where, i), args[i]) for i in nums]

    def partial(*values: Any) -> Any:
        full = list(args)
        for i, v in zip(nums, values, strict=True):
            full[i] = v
        return fun(*full, **kwargs)

    return partial, dyn, nums


def _as_array(x: Any, where: str, position: int) -> Any:
    return argument_value(x, where, position, _config.current().enable_x64)


def _packed(argnums: int | Sequence[int], per_arg: list[Any]) -> Any:
    return per_arg[0] if isinstance(argnums, int) else tuple(per_arg)


def jacfwd(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable[..., Any]:
    """The Jacobian of ``fun`` by forward mode: one ``jvp`` per input
    element, vectorised with ``vmap``.

    Args:
      fun: a function of arrays (pytrees of arrays).
      argnums: the positional argument (or arguments, a tuple) to
        differentiate with respect to.
      has_aux: ``fun`` returns ``(output, aux)``; aux is returned as is.
      holomorphic: ``fun`` is holomorphic (complex inputs).

    Returns:
      A function of ``fun``'s arguments giving the Jacobian: for each
      output leaf, the inputs' structure with blocks of shape
      ``output.shape + input.shape``, in the output's dtype.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> tl.jacfwd(lambda x: x ** 2)(tnp.arange(3.0))
    Array([[0., 0., 0.],
           [0., 2., 0.],
           [0., 0., 4.]], dtype=float32)
    """
    where = f"jacfwd({getattr(fun, '__name__', 'fun')})"

    def jacobian(*args: Any, **kwargs: Any) -> Any:
        partial, dyn, _ = _prepare(fun, argnums, args, kwargs, where)
        leaves, in_tree = tree.flatten(dyn)
        _check_inputs(leaves, holomorphic, False, where)
        avals = [aval_of(x) for x in leaves]

        def push(k: int) -> Callable[[Any], Any]:
            def one(t: Any) -> Any:
                tangents = [_zeros(a) for a in avals]
                tangents[k] = t
                out = jvp(
                    partial,
                    in_tree.unflatten(leaves),
                    in_tree.unflatten(tangents),
                    has_aux=has_aux,
                )
                return out[1]

            return one

        blocks: list[Any] = []
        for k, aval in enumerate(avals):
            n = len(aval.shape)
            mapped = _over_basis(push(k), n, functools.partial(_from_end, n))
            blocks.append(mapped(_basis(aval)))
        # (blocks[k] is a tree of the output's structure, per input leaf)
        first = jvp(
            partial,
            in_tree.unflatten(leaves),
            in_tree.unflatten([_zeros(a) for a in avals]),
            has_aux=has_aux,
        )
        out_tree = tree.flatten(first[1])[1]
        per_out = [tree.flatten(b)[0] for b in blocks]
        jac = out_tree.unflatten(
            [
                _packed(
                    argnums,
                    list(in_tree.unflatten([col[i] for col in per_out])),
                )
                for i in range(out_tree.num_leaves)
            ]
        )
        return (jac, first[2]) if has_aux else jac

    return jacobian


def jacrev(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """The Jacobian of ``fun`` by reverse mode: one pullback per output
    element, vectorised with ``vmap``.

    Args:
      fun: a function of arrays (pytrees of arrays).
      argnums: the positional argument (or arguments, a tuple) to
        differentiate with respect to.
      has_aux: ``fun`` returns ``(output, aux)``; aux is returned as is.
      holomorphic: ``fun`` is holomorphic (complex inputs and outputs).
      allow_int: accept integer inputs (their blocks are float0 zeros).

    Returns:
      A function of ``fun``'s arguments giving the Jacobian: for each
      output leaf, the inputs' structure with blocks of shape
      ``output.shape + input.shape``, in the input's dtype.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> tl.jacrev(lambda x: tnp.sum(x ** 2))(tnp.arange(3.0))
    Array([0., 2., 4.], dtype=float32)
    """
    where = f"jacrev({getattr(fun, '__name__', 'fun')})"

    def jacobian(*args: Any, **kwargs: Any) -> Any:
        partial, dyn, _ = _prepare(fun, argnums, args, kwargs, where)
        leaves, in_tree = tree.flatten(dyn)
        _check_inputs(leaves, holomorphic, allow_int, where)
        result = vjp(partial, *in_tree.unflatten(leaves), has_aux=has_aux)
        out, pullback = result[0], result[1]
        out_leaves, out_tree = tree.flatten(out)
        out_avals = [aval_of(y) for y in out_leaves]
        for a in out_avals:
            if _dtypes.kind_of(a.dtype) != ("c" if holomorphic else "f"):
                raise TypeError(
                    f"{where} requires real-valued outputs (output dtype that is "
                    f"a sub-dtype of np.floating), but got {a.dtype.name}. For "
                    "holomorphic differentiation, pass holomorphic=True. For "
                    "differentiation of non-holomorphic functions involving "
                    "complex outputs, use vjp directly."
                )

        def pull(k: int) -> Callable[[Any], Any]:
            def one(ct: Any) -> Any:
                cts = [_zeros(a) for a in out_avals]
                cts[k] = ct
                return list(pullback(out_tree.unflatten(cts)))

            return one

        rows: list[Any] = []
        for k, aval in enumerate(out_avals):
            mapped = _over_basis(pull(k), len(aval.shape), lambda j: 0)
            rows.append(_packed(argnums, mapped(_basis(aval))))
        jac = out_tree.unflatten(rows)
        return (jac, result[2]) if has_aux else jac

    return jacobian


def hessian(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable[..., Any]:
    """The Hessian of a scalar function: ``jacfwd(jacrev(fun))``.

    Args:
      fun: a function of arrays with a scalar output.
      argnums: the positional argument (or arguments) to differentiate.
      has_aux: ``fun`` returns ``(output, aux)``.
      holomorphic: ``fun`` is holomorphic.

    Returns:
      A function of ``fun``'s arguments giving its second derivatives,
      blocks of shape ``input.shape + input.shape``.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> tl.hessian(lambda x: tnp.sum(x * x * x))(tnp.array([1.0, 2.0]))
    Array([[ 6.,  0.],
           [ 0., 12.]], dtype=float32)
    """
    return jacfwd(
        jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic),
        argnums,
        has_aux=has_aux,
        holomorphic=holomorphic,
    )
