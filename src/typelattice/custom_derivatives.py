"""Functions with derivative rules of their own, as ``jax.custom_derivatives``.

>>> import typelattice as tl
>>> from typelattice.custom_derivatives import custom_jvp
>>> custom_jvp is tl.custom_jvp
True
"""

from typelattice._tracing.custom import (
    CustomVJPPrimal,
    SymbolicZero,
    custom_jvp,
    custom_vjp,
    zero_from_primal,
)
from typelattice._tracing.linear import linear_transpose

__all__ = [
    "CustomVJPPrimal",
    "SymbolicZero",
    "custom_jvp",
    "custom_vjp",
    "linear_transpose",
    "zero_from_primal",
]
