"""``typelattice.flax.linen.transforms``: :mod:`typelattice.nn.transforms`
under the name a Flax program imports.

>>> from typelattice.flax.linen import transforms
>>> from typelattice.nn import transforms as home
>>> transforms.__all__ == home.__all__
True
"""

from typelattice.nn import transforms as _home
from typelattice.nn.transforms import *  # noqa: F403

__all__: list[str] = []
__all__ += _home.__all__

del _home
