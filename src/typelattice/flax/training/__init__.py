"""``typelattice.flax.training``: Flax's training helpers, as
``flax.training``: :mod:`~typelattice.flax.training.train_state`,
:mod:`~typelattice.flax.training.checkpoints`,
:mod:`~typelattice.flax.training.common_utils` and
:mod:`~typelattice.flax.training.dynamic_scale`.

>>> from typelattice.flax.training import train_state
>>> train_state.TrainState.__name__
'TrainState'
"""

from typelattice.flax.training import checkpoints as checkpoints
from typelattice.flax.training import common_utils as common_utils
from typelattice.flax.training import dynamic_scale as dynamic_scale
from typelattice.flax.training import train_state as train_state

__all__: list[str] = []
