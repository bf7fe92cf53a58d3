"""``typelattice.flax.linen.meta``: :mod:`typelattice.nn.meta`
under the name a Flax program imports.

>>> from typelattice.flax.linen import meta
>>> from typelattice.nn import meta as home
>>> meta.__all__ == home.__all__
True
"""

from typelattice.nn import meta as _home
from typelattice.nn.meta import *  # noqa: F403

__all__: list[str] = []
__all__ += _home.__all__

del _home
