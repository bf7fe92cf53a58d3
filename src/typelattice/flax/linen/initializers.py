"""``typelattice.flax.linen.initializers``: :mod:`typelattice.nn.initializers`
under the name a Flax program imports.

>>> from typelattice.flax.linen import initializers
>>> from typelattice.nn import initializers as home
>>> initializers.lecun_normal is home.lecun_normal
True
"""

from typelattice.nn import initializers as _home
from typelattice.nn.initializers import *  # noqa: F403

__all__: list[str] = []
__all__ += _home.__all__

del _home
