"""Backends: what computes the primitives of :mod:`typelattice.lax`.

A backend implements primitives and converts its arrays from and to NumPy,
nothing else: every function of the package reaches the primitives, so a
backend that implements them all runs all of it. :data:`NUMPY` is the first
backend and the default one; the rules a primitive registers with
``Primitive.def_impl`` and ``Primitive.def_fast`` are the NumPy backend's.
:func:`use` makes another backend compute, in a scope (see
:mod:`typelattice._backends._backend`).
"""

from typelattice._backends._backend import (
    IN_USE,
    LIBRARIES,
    MODULES,
    NUMPY,
    Backend,
    current,
    named,
    of_native,
    use,
)

__all__ = [
    "IN_USE",
    "LIBRARIES",
    "MODULES",
    "NUMPY",
    "Backend",
    "current",
    "named",
    "of_native",
    "use",
]
