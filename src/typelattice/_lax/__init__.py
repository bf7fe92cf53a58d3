"""The primitives of :mod:`typelattice.lax`, one module per family.

Each primitive is a :class:`~typelattice._lax._primitive.Primitive` defined
once, with its rules registered at the definition: the eager implementation
on NumPy (``def_impl``) and the abstract evaluation (``def_abstract_eval``:
shapes, dtypes and weak flags in, the same out). Differentiation rules are
registered the same way (``def_jvp``, ``def_transpose``); none is defined
yet. The public module ``typelattice.lax`` only re-exports.

Layers import one way: ``_primitive`` (the type, the operand conversion and
the shared checks) is imported by the family modules, which import nothing
of each other except where a function is written in terms of another
family's primitive.
"""
