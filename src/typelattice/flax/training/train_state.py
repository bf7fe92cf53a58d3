"""``typelattice.flax.training.train_state``: as Flax's.

>>> from typelattice.flax.training.train_state import TrainState
>>> sorted(TrainState.__dataclass_fields__)
['apply_fn', 'opt_state', 'params', 'step', 'tx']
"""

from typelattice.flax._train_state import TrainState

__all__ = ["TrainState"]
