"""``typelattice.flax.linen.recurrent``: :mod:`typelattice.nn.recurrent`
under the name a Flax program imports.

>>> from typelattice.flax.linen import recurrent
>>> from typelattice.nn import recurrent as home
>>> recurrent.LSTMCell is home.LSTMCell
True
"""

from typelattice.nn import recurrent as _home
from typelattice.nn.recurrent import *  # noqa: F403

__all__: list[str] = []
__all__ += _home.__all__

del _home
