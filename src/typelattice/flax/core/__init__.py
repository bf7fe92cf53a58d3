"""``typelattice.flax.core``: FrozenDict and its functions, as ``flax.core``.

>>> from typelattice.flax.core import freeze, unfreeze
>>> variables = freeze({'params': {'w': 1.0}})
>>> unfreeze(variables)
{'params': {'w': 1.0}}
"""

from typelattice.flax._frozen_dict import (
    FrozenDict,
    copy,
    freeze,
    pop,
    pretty_repr,
    unfreeze,
)
from typelattice.flax.core import frozen_dict as frozen_dict

__all__ = ["FrozenDict", "copy", "freeze", "pop", "pretty_repr", "unfreeze"]
