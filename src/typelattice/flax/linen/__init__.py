"""``typelattice.flax.linen``: Flax's linen API, the layers, activations and
initialisers of :mod:`typelattice.nn` under the name a Flax program imports
(``import flax.linen as nn`` becomes ``import typelattice.flax.linen as
nn``). The names are those of :mod:`typelattice.nn`, the same objects.

>>> import typelattice.flax.linen as nn
>>> from typelattice import nn as tl_nn
>>> nn.Dense is tl_nn.Dense, nn.initializers.zeros is tl_nn.initializers.zeros
(True, True)
"""

from typelattice import nn as _nn
from typelattice.flax.linen import initializers as initializers
from typelattice.flax.linen import meta as meta
from typelattice.flax.linen import module as module
from typelattice.flax.linen import partitioning as partitioning
from typelattice.flax.linen import recurrent as recurrent
from typelattice.flax.linen import spmd as spmd
from typelattice.flax.linen import transforms as transforms
from typelattice.nn import *  # noqa: F403

__all__: list[str] = []
__all__ += _nn.__all__

del _nn
