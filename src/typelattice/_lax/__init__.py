"""The primitives of :mod:`typelattice.lax`, one module per family.

Each primitive is a :class:`~typelattice._lax._primitive.Primitive` defined
once, with its rules registered at the definition: the eager implementation
on NumPy (``def_impl``), the abstract evaluation (``def_abstract_eval``:
shapes, dtypes and weak flags in, the same out), and the differentiation
rules (``def_jvp``, ``def_transpose``, or the helpers of ``_primitive``:
``defjvp``, ``deflinear``...). The public module ``typelattice.lax`` only
re-exports.

Layers import one way: ``_primitive`` (the type, the operand conversion,
the shared checks and the conventions of the differentiation rules) is
imported by the family modules, in the order ``_elementwise``,
``_structural``, ``_indexing``, ``_reductions``, ``_dot``: each imports the
ones before it where its functions or rules are written with their
primitives. A few rules need a later family (elementwise rules broadcast
tangents and sum cotangents over broadcast axes; the transposes of
``broadcast_in_dim`` and ``pad`` sum): they import it inside the function.
"""
