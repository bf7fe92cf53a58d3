"""typelattice.nn: neural-network building blocks whose dtypes follow the
promotion lattice.

So far: :mod:`typelattice.nn.initializers`, the parameter initialisers of
``jax.nn.initializers`` (and Flax), which create parameters directly in the
dtype asked for.

>>> from typelattice import nn, random
>>> w = nn.initializers.lecun_normal()(random.key(0), (4, 3), 'bfloat16')
>>> w.shape, w.dtype
((4, 3), dtype(bfloat16))
"""

from typelattice.nn import initializers as initializers

__all__: list[str] = []
