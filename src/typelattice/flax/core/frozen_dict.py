"""``typelattice.flax.core.frozen_dict``: as ``flax.core.frozen_dict``.

>>> from typelattice.flax.core.frozen_dict import FrozenDict
>>> len(FrozenDict(a=1))
1
"""

from typelattice.flax._frozen_dict import (
    FrozenDict,
    copy,
    freeze,
    pop,
    pretty_repr,
    unfreeze,
)

__all__ = ["FrozenDict", "copy", "freeze", "pop", "pretty_repr", "unfreeze"]
