"""``linear_transpose``: the transpose of a linear function, with JAX's API.

The function runs once, on variables of a :class:`~.ad.LinearTrace` (the
record reverse mode keeps of its tangents), which records the primitives
applied to them; the transposed function runs that record backwards
through the primitives' transpose rules (:func:`~.ad.backward_pass`), as
``vjp``'s does. A primitive applied to two of the inputs' variables (a
product of them: not linear) has no transpose for them and raises.
"""

# Package-internal: reads the tracers' underscored slots by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from typelattice import _dtypes
from typelattice._tracing import tree
from typelattice._tracing.ad import (
    LinearTrace,
    LinearTracer,
    _ct_like,
    _depth,
    _Level,
    backward_pass,
)
from typelattice._tracing.primitive import ShapedArray, add_tangents, zeros

__all__ = ["linear_transpose"]


def linear_transpose(fun: Callable[..., Any], *primals: Any) -> Callable[..., Any]:
    """The transpose of the linear function ``fun`` at arguments of the
    shapes and dtypes of ``primals``.

    Args:
      fun: a function linear in its arguments (pytrees of floating arrays).
      *primals: arrays (or ``ShapeDtypeStruct`` values) of its arguments'
        structure, shapes and dtypes; their values are not used.

    Returns:
      A function of one cotangent of ``fun``'s output (its structure,
      shapes and dtypes) returning a tuple of the arguments' cotangents.

    Raises:
      TypeError: an argument that is not of a floating or complex dtype.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> f = lambda x, y: 2.0 * x + y.sum()
    >>> x = tnp.ones(3, dtype='float32')
    >>> tl.linear_transpose(f, x, tnp.float32(0.0))(tnp.asarray([1.0, 2.0, 3.0]))
    (Array([2., 4., 6.], dtype=float32), Array(6., dtype=float32))
    """
    name = f"linear_transpose({getattr(fun, '__name__', 'fun')})"
    leaves, in_tree = tree.flatten(list(primals))
    avals: list[ShapedArray] = []
    for leaf in leaves:
        dtype = _dtypes.canonicalize_dtype(leaf.dtype)
        if _dtypes.kind_of(dtype) not in "fc":
            raise TypeError(
                f"{name}: linear_transpose only supports [float or complex] -> "
                f"[float or complex], got an argument of dtype {dtype}; pass "
                "floating arrays (the transpose of an integer map is not defined)"
            )
        avals.append(
            ShapedArray(
                tuple(leaf.shape), dtype, bool(getattr(leaf, "weak_type", False))
            )
        )
    record = LinearTrace(name)
    with _Level((record,)):
        record.level = _depth.get()  # (the innermost trace while fun runs)
        ins = [record.new(a) for a in avals]
        out = fun(*in_tree.unflatten(ins))
        out_leaves, out_tree = tree.flatten(out)
    in_vars: list[int | None] = [t.ref for t in ins]

    def transposed(ct: Any) -> tuple[Any, ...]:
        ct_leaves, ct_tree = tree.flatten(ct)
        if ct_tree != out_tree:
            raise TypeError(
                f"{name}: the cotangent has structure {ct_tree}, the function's "
                f"output {out_tree}; they must be equal"
            )
        out_cts: dict[int, Any] = {}
        for o, c in zip(out_leaves, ct_leaves, strict=True):
            if isinstance(o, LinearTracer) and o._trace is record:
                c = _ct_like(c, o.aval, name)
                out_cts[o.ref] = (
                    c if o.ref not in out_cts else add_tangents(out_cts[o.ref], c)
                )
        cts = backward_pass(record, in_vars, out_cts)
        return tuple(
            in_tree.unflatten(
                [zeros(a) if c is None else c for c, a in zip(cts, avals, strict=True)]
            )
        )

    return transposed
